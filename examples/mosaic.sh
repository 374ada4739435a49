#!/usr/bin/env bash
# Several sources analysed at once into one mosaic: every camera (/dev/video*) or, without any,
# four test scenes of different patterns; each goes through cudamotionest (arrows) and
# cudaheatmap (blended over it), into a 2-column grid. In a window where a display exists,
# otherwise into mosaic-sources.webm.
#   examples/mosaic.sh [FRAMES]      (default 300; 0 = until Ctrl-C)
set -eu
. "$(dirname "$0")/lib.sh"
frames=${1:-300}
w=320
h=240
sources=(/dev/video*)
if [ ! -e "${sources[0]}" ]; then
  sources=(test:smpte test:ball test:pinwheel test:zone-plate)
fi
pipeline="compositor name=mosaic"
branches=""
for i in "${!sources[@]}"; do
  s=${sources[$i]}
  pipeline="$pipeline sink_$i::xpos=$(( i % 2 * w )) sink_$i::ypos=$(( i / 2 * h ))"
  case $s in
    test:*) src="$(cuv_scene "$frames" $w $h "${s#test:}")" ;;
    *) src="$(cuv_source "$s" "$frames" $w $h)" ;;
  esac
  # each source's scene compositor needs a name of its own; complete caps, as in demo.sh
  src=${src//scene/scene$i}
  branches="$branches $src ! video/x-raw,format=RGBA,interlace-mode=progressive,pixel-aspect-ratio=1/1 ! cudamotionest draw=arrows search-range=8 ! cudaheatmap blend=0.6 ! videoconvert ! queue ! mosaic.sink_$i"
done
if cuv_have_display; then
  sink="autovideosink"
else
  sink="vp8enc deadline=1 ! webmmux ! filesink location=mosaic-sources.webm"
fi
echo "${#sources[@]} sources: ${sources[*]}"
gst-launch-1.0 $pipeline ! videoconvert ! $sink $branches
cuv_have_display || echo "written: mosaic-sources.webm"
