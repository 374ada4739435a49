# Sourced by the example scripts: puts the plugin on GST_PLUGIN_PATH (building it first when
# there is no build yet; CUDAVISION_BUILD=DIR names another build directory) and gives the test
# scene the examples use where there is no camera.
cuv_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cuv_build=${CUDAVISION_BUILD:-$cuv_root/build}
[ -d "$cuv_build/gst" ] || "$cuv_root/tools/build.sh" >/dev/null
cuv_build=$(cd "$cuv_build" && pwd)
export GST_PLUGIN_PATH="$cuv_build/gst${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"

# cuv_scene FRAMES WIDTH HEIGHT [PATTERN]: a pipeline fragment ending in raw video of that size,
# colour bars (or PATTERN) sliding left under a sweeping ball, with a patch of noise; FRAMES 0 runs
# until stopped.
cuv_scene() {
  local n="" size="width=$2,height=$3,framerate=30/1"
  [ "$1" -gt 0 ] && n="num-buffers=$1"
  echo "videotestsrc $n pattern=${4:-smpte} horizontal-speed=3 ! video/x-raw,$size ! scene.sink_0" \
    "videotestsrc $n pattern=ball motion=sweep background-color=0x00000000 ! video/x-raw,format=BGRA,$size ! scene.sink_1" \
    "videotestsrc $n pattern=snow ! video/x-raw,width=$(($2 * 3 / 10)),height=$(($3 * 3 / 10)),framerate=30/1 ! scene.sink_2" \
    "compositor name=scene sink_2::xpos=$(($2 * 6 / 10)) sink_2::ypos=$(($3 * 6 / 10)) sink_2::alpha=0.5 ! videoconvert"
}

# cuv_source SOURCE FRAMES WIDTH HEIGHT: the test scene ("test"), a camera (/dev/videoN) or a
# file, as raw video of that size; FRAMES 0 runs to the end.
cuv_source() {
  local n=""
  [ "$2" -gt 0 ] && n="num-buffers=$2"
  case $1 in
    test) cuv_scene "$2" "$3" "$4" ;;
    /dev/video*) echo "v4l2src device=$1 $n ! videoconvert ! videoscale ! video/x-raw,width=$3,height=$4" ;;
    *) echo "filesrc location=$1 ! decodebin ! videoconvert ! videoscale ! video/x-raw,width=$3,height=$4" ;;
  esac
}

# cuv_have_display: whether a video window can open
cuv_have_display() {
  [ "${CUDAVISION_DEMO_WINDOW:-1}" != 0 ] && { [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; }
}
