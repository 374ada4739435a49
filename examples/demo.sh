#!/usr/bin/env bash
# The demo: the webcam (/dev/video0) or, without one, videotestsrc, through cudasobel and
# cudaenhance. Writes PNG snapshots of the input and of each stage to snapshots/ and prints the
# frames per second of the chain. Without a GPU the elements run their CPU reference and say so.
#   examples/demo.sh [FRAMES]        (default 300)
# CUDAVISION_BUILD=DIR uses an existing build directory instead of installing and building.
set -eu
cd "$(dirname "$0")/.."
build=${CUDAVISION_BUILD:-}
if [ -z "$build" ]; then
  tools/build.sh >/dev/null
  build=build
fi
export GST_PLUGIN_PATH="$PWD/$build/gst${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"
frames=${1:-300}
if [ -e /dev/video0 ]; then
  src="v4l2src device=/dev/video0"
  echo "source: webcam /dev/video0"
else
  src="videotestsrc pattern=smpte horizontal-speed=4"
  echo "source: videotestsrc (no /dev/video0)"
fi
caps="video/x-raw,format=RGBA,width=1280,height=720"
mkdir -p snapshots

# 1. snapshots of frame 30: the input, after cudasobel, after cudaenhance (max-files=1 keeps the last)
snap() { echo "videoconvert ! pngenc ! multifilesink max-files=1 location=snapshots/$1-%03d.png"; }
gst-launch-1.0 -q $src num-buffers=30 ! videoconvert ! videoscale ! $caps ! tee name=in \
  in. ! queue ! $(snap input) \
  in. ! queue ! cudasobel mode=luma scale=2 ! tee name=edges \
  edges. ! queue ! $(snap sobel) \
  edges. ! queue ! cudaenhance contrast=1.4 saturation=1.3 ! $(snap enhance) >/tmp/cudavision-demo.log 2>&1 ||
  { cat /tmp/cudavision-demo.log; exit 1; }
for f in input sobel enhance; do
  ls snapshots/$f-*.png | tail -n 1 | xargs -I{} mv {} snapshots/$f.png
done
echo "snapshots: snapshots/input.png snapshots/sobel.png snapshots/enhance.png"

# 2. throughput of the chain alone (frames stay in CUDA memory between the two elements)
start=$(date +%s.%N)
gst-launch-1.0 $src num-buffers="$frames" ! videoconvert ! videoscale ! $caps ! \
  cudasobel mode=luma scale=2 ! cudaenhance contrast=1.4 saturation=1.3 ! fakesink sync=false >>/tmp/cudavision-demo.log 2>&1
end=$(date +%s.%N)
grep -E "^(ERROR|WARNING)" -A1 /tmp/cudavision-demo.log | sort -u | head -4 || true
if grep -q "running on the CPU" /tmp/cudavision-demo.log; then
  backend="the CPU backend (no usable CUDA device)"
else
  backend="CUDA"
fi
awk -v n="$frames" -v a="$start" -v b="$end" -v be="$backend" \
  'BEGIN { printf "%d frames of 1280x720 through cudasobel ! cudaenhance on %s: %.1f frames per second (source and conversion included)\n", n, be, n / (b - a) }'
