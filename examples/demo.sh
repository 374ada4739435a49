#!/usr/bin/env bash
# The demo: all six elements side by side in one mosaic, on moving content: the webcam
# (/dev/video0) or, without one, a test scene of colour bars sliding under a sweeping ball with a
# patch of noise, in YUY2 as a webcam gives it. Eight labelled tiles: the input, cudasobel, cudaenhance, cudahistogram (overlay),
# cudaheatmap, cudanoisemap (overlay), cudamotionest (arrows) and cudamotionest (colour wheel).
# The elements see 640x480 frames; the mosaic shows them at half size. In a window where a
# display exists; otherwise into demo-output/mosaic.webm. Keeps the latest mosaic (two a second,
# off the video's path) in demo-output/mosaic.png and prints the frames per second. Without a GPU
# the elements run their CPU backend and say so.
#   examples/demo.sh [FRAMES]        (default 150: five seconds)
# CUDAVISION_BUILD=DIR uses an existing build directory instead of installing and building;
# CUDAVISION_DEMO_WINDOW=0 writes the video file even where a display exists; CUDAVISION_DEMO_OUT=DIR
# writes into DIR instead of demo-output/.
set -eu
# installs what is missing and builds, unless told which build to use
[ -n "${CUDAVISION_BUILD:-}" ] || "$(dirname "$0")/../tools/build.sh" >/dev/null
. "$(dirname "$0")/lib.sh"
frames=${1:-150}
out=${CUDAVISION_DEMO_OUT:-demo-output}
mkdir -p "$out"
rm -f "$out"/mosaic*.png "$out/mosaic.webm"
w=640
h=480
# complete caps: the mosaic fixes its output from the first tile that negotiates, and a later tile
# whose caps leave interlace-mode or pixel-aspect-ratio open is then refused (textoverlay checks a subset)
tile="video/x-raw,format=I420,width=$((w / 2)),height=$((h / 2)),interlace-mode=progressive,pixel-aspect-ratio=1/1"
# the elements see YUY2, what a webcam gives (the test scene too, converted to it)
frame="video/x-raw,format=YUY2,width=$w,height=$h,interlace-mode=progressive,pixel-aspect-ratio=1/1"

if [ -e /dev/video0 ]; then
  echo "source: webcam /dev/video0 (YUY2)"
  source="$(cuv_source /dev/video0 "$frames" $w $h) ! videoconvert ! $frame ! tee name=in"
else
  echo "source: a test scene in YUY2, as a webcam gives it (no /dev/video0)"
  source="$(cuv_scene "$frames" $w $h) ! $frame ! tee name=in"
fi

# tile i: what it runs and its label; the mosaic is 4 x 2 tiles
elements=("identity" "cudasobel mode=luma scale=2" "cudaenhance contrast=1.5 saturation=1.8 hue=0.15"
  "cudahistogram overlay=true overlay-size=45" "cudaheatmap gain=6 colormap=inferno" "cudanoisemap mode=overlay threshold=24"
  "cudamotionest draw=arrows search-range=8" "cudamotionest draw=color search-range=8")
labels=("input" "cudasobel" "cudaenhance" "cudahistogram" "cudaheatmap" "cudanoisemap" "cudamotionest arrows"
  "cudamotionest color")
pads=""
branches=""
# each tile at half size in the mosaic (the elements see the whole frame), scaled as it is converted
# (one pass over its pixels, and the label drawn on the smaller tile), in I420 as the encoder takes it:
# the mosaic neither scales nor converts, and the encoder's input needs no conversion
tw=$((w / 2))
th=$((h / 2))
for i in "${!elements[@]}"; do
  pads="$pads sink_$i::xpos=$(( i % 4 * tw )) sink_$i::ypos=$(( i / 4 * th )) sink_$i::width=$tw sink_$i::height=$th"
  branches="$branches
    in. ! queue ! ${elements[$i]} ! videoconvertscale ! $tile ! textoverlay text=\"${labels[$i]}\" valignment=top halignment=left shaded-background=true font-desc=\"Sans Bold $((th / 20))\" ! mosaic.sink_$i"
done

if cuv_have_display; then
  show="autovideosink"
  shown="a window"
else
  show="vp8enc deadline=1 cpu-used=16 ! webmmux ! filesink location=$out/mosaic.webm"
  shown="$out/mosaic.webm"
fi

pipeline="$source
  compositor name=mosaic $pads ! video/x-raw,format=I420,width=$((4 * tw)),height=$((2 * th)),framerate=30/1 ! tee name=out
    out. ! queue leaky=downstream max-size-buffers=1 ! videorate drop-only=true max-rate=2 ! videoconvert ! pngenc ! multifilesink max-files=1 location=$out/mosaic-%05d.png
    out. ! queue ! videoconvert ! $show $branches"
log=$(mktemp)
start=$(date +%s.%N)
# one line for eval (a newline would end the command); eval keeps the labels' quotes
if ! eval "gst-launch-1.0 ${pipeline//$'\n'/ }" >"$log" 2>&1; then
  cat "$log"
  exit 1
fi
end=$(date +%s.%N)
ls "$out"/mosaic-*.png | tail -n 1 | xargs -I{} mv {} "$out/mosaic.png"

grep -E "^(ERROR|WARNING)" "$log" | head -1 || true
if grep -q "running on the CPU" "$log"; then
  backend="the CPU backend (no usable CUDA device)"
else
  backend="CUDA"
fi
rm -f "$log"
awk -v n="$frames" -v a="$start" -v b="$end" -v be="$backend" -v w="$w" -v h="$h" \
  'BEGIN { printf "%d frames of %dx%d through all six elements (eight tiles) on %s: %.1f frames per second (source, mosaic and encoding included)\n", n, w, h, be, n / (b - a) }'
echo "mosaic: $out/mosaic.png; video: $shown"
