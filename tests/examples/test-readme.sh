#!/usr/bin/env bash
# Every gst-launch-1.0 command of README.md and the element pages (docs/elements/*.md) runs,
# headless: autovideosink becomes fakesink, an endless videotestsrc stops after 20 frames, and a
# command continued over lines with a backslash is joined. Commands that need a camera (v4l2src), a
# video file of the user's (filesrc), a shell loop's variable, GStreamer's CUDA elements where
# they are absent (no GPU) or objectdetectionoverlay where it is absent (GStreamer before 1.24; a
# runtime without gst-plugins-bad outside tests/run-tests.sh, which installs it) are listed as
# skipped.
#   tests/examples/test-readme.sh      (GST_PLUGIN_PATH_1_0 or GST_PLUGIN_PATH names the plugin)
set -eu
# where GStreamer's plugins for it are missing (the GPU machine's bundle has few), skip; a failure
# under tests/run-tests.sh, which installed them
for e in videotestsrc videoconvert fakesink; do
  gst-inspect-1.0 "$e" >/dev/null 2>&1 || { echo "no $e here"; [ -n "${CUV_TOOLS_INSTALLED:-}" ] && exit 1; exit 77; }
done
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
have_cuda_elements=1
gst-inspect-1.0 cudaupload >/dev/null 2>&1 || have_cuda_elements=0
have_overlay=1
gst-inspect-1.0 objectdetectionoverlay >/dev/null 2>&1 || have_overlay=0
# GStreamer's minor version (gst-inspect-1.0 --version: "GStreamer 1.22.0")
gst_minor=$(gst-inspect-1.0 --version | sed -n 's/^GStreamer 1\.\([0-9]*\)\..*/\1/p' | head -n 1)
gst_minor=${gst_minor:-0}
ran=0 skipped=0 failed=0
while IFS= read -r line; do
  case $line in
    *v4l2src*) echo "skipped (needs a camera): $line"; skipped=$((skipped + 1)); continue ;;
    *filesrc*) echo "skipped (needs a video file): $line"; skipped=$((skipped + 1)); continue ;;
    *'$'*) echo "skipped (inside a shell loop of its page): $line"; skipped=$((skipped + 1)); continue ;;
  esac
  if [ $have_cuda_elements = 0 ] && grep -qE "cudaupload|cudadownload|nvh264dec" <<<"$line"; then
    echo "skipped (no GStreamer CUDA elements here): $line"
    skipped=$((skipped + 1))
    continue
  fi
  if [ $have_overlay = 0 ] && grep -q objectdetectionoverlay <<<"$line" &&
      { [ "$gst_minor" -lt 24 ] || [ -z "${CUV_TOOLS_INSTALLED:-}" ]; }; then
    echo "skipped (no objectdetectionoverlay here: GStreamer before 1.24, or a runtime without it): $line"
    skipped=$((skipped + 1))
    continue
  fi
  cmd=${line//autovideosink/fakesink}
  grep -q "num-buffers" <<<"$cmd" || cmd=${cmd/videotestsrc/videotestsrc num-buffers=20}
  if out=$(cd "$tmp" && eval "timeout 120 $cmd" 2>&1) && ! grep -q "^ERROR" <<<"$out"; then
    echo "ok: $cmd"
    ran=$((ran + 1))
  else
    echo "FAIL: $cmd"
    echo "$out" | grep -E "ERROR|WARNING" | head -5
    failed=$((failed + 1))
  fi
done < <(cd "$src" && awk '/^(  )?gst-launch-1.0 / || cont { sub(/^  /, ""); if (sub(/ *\\$/, " ")) { buf = buf $0; cont = 1; next }
  print buf $0; buf = ""; cont = 0 }' README.md docs/elements/*.md)
echo "README and element pages' pipelines: $ran ran, $failed failed, $skipped skipped"
[ $failed = 0 ] && [ $ran -gt 0 ]
