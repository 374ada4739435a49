#!/usr/bin/env bash
# Decodes a video file into the elements: with NVIDIA's decoder (nvh264dec) where it exists, the
# frames go from the decoder's CUDA memory straight into cudahistogram and cudaheatmap, and only
# the result comes back to the host; elsewhere decodebin picks a software decoder and the
# elements upload for themselves. In a window where a display exists, else as fast as it goes,
# with the frames per second.
#   examples/decode.sh FILE          (H.264 for the nvh264dec path; any format otherwise)
set -eu
. "$(dirname "$0")/lib.sh"
file=${1:?usage: examples/decode.sh FILE}
[ -e "$file" ] || { echo "no such file: $file" >&2; exit 1; }
analyse="cudahistogram overlay=true ! cudaheatmap blend=0.5"
if gst-inspect-1.0 nvh264dec >/dev/null 2>&1; then
  echo "decoder: nvh264dec (CUDA memory into the elements)"
  decode="filesrc location=$file ! parsebin ! h264parse ! nvh264dec ! $analyse ! cudadownload"
else
  echo "decoder: decodebin (no nvh264dec here)"
  decode="filesrc location=$file ! decodebin ! videoconvert ! $analyse"
fi
if cuv_have_display; then
  exec gst-launch-1.0 $decode ! videoconvert ! autovideosink
fi
start=$(date +%s.%N)
frames=$(gst-launch-1.0 -m $decode ! fakesink sync=false 2>&1 | grep -c "cudaheatmap, timestamp" || true)
end=$(date +%s.%N)
awk -v n="$frames" -v a="$start" -v b="$end" 'BEGIN { printf "%d frames decoded and analysed: %.1f frames per second\n", n, n / (b - a) }'
[ "$frames" -gt 0 ]
