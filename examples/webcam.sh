#!/usr/bin/env bash
# Live view of a webcam through cudasobel and cudaenhance (needs a display and /dev/video0).
#   examples/webcam.sh [mode]      mode: color (default) or luma
set -eu
cd "$(dirname "$0")/.."
export GST_PLUGIN_PATH="$PWD/${CUDAVISION_BUILD:-build}/gst${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"
exec gst-launch-1.0 v4l2src device=/dev/video0 ! videoconvert ! video/x-raw,format=BGRx ! \
  cudasobel mode="${1:-color}" scale=2 ! cudaenhance contrast=1.3 saturation=1.4 ! videoconvert ! autovideosink
