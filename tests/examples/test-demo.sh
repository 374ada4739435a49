#!/usr/bin/env bash
# README's first command, headless: examples/demo.sh on BUILD_DIR (30 frames, no window) writes a
# 1280x480 mosaic PNG and a WebM file, and prints its frames per second.
#   tests/examples/test-demo.sh BUILD_DIR
set -eu
# where GStreamer's plugins for it are missing (the GPU machine's bundle has few), skip; a failure
# under tests/run-tests.sh, which installed them
for e in compositor textoverlay videoconvert pngenc vp8enc webmmux vp8dec matroskademux; do
  gst-inspect-1.0 "$e" >/dev/null 2>&1 || { echo "no $e here"; [ -n "${CUV_TOOLS_INSTALLED:-}" ] && exit 1; exit 77; }
done
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
log=$(CUDAVISION_BUILD=$build CUDAVISION_DEMO_WINDOW=0 CUDAVISION_DEMO_OUT=$out "$src/examples/demo.sh" 30 2>&1) ||
  { echo "$log"; echo "FAIL: demo.sh failed"; exit 1; }
echo "$log"
grep -q "frames per second" <<<"$log" || { echo "FAIL: no frames per second"; exit 1; }
# a PNG's IHDR: width and height as big-endian 32-bit numbers at bytes 16 and 20
size=$(od -An -tu1 -j16 -N8 "$out/mosaic.png" | awk '{ printf "%dx%d", $3 * 256 + $4, $7 * 256 + $8 }')
[ "$size" = 1280x480 ] || { echo "FAIL: mosaic.png is $size, not 1280x480"; exit 1; }
frames=$(gst-launch-1.0 filesrc location="$out/mosaic.webm" ! matroskademux ! vp8dec ! fakesink silent=false -v 2>&1 |
  grep -c "chain" || true)
[ "$frames" -eq 30 ] || { echo "FAIL: mosaic.webm holds $frames frames, not 30"; exit 1; }
echo "demo: mosaic.png 1280x480, mosaic.webm of 30 frames"
