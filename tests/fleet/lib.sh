# The fleet tests' shared parts (sourced by tests/fleet/test-*.sh): a scratch directory and the
# processes to kill at the end, loopback ports from the test's process number, RTSP cameras, a
# Mosquitto broker, and waiting for a claim of check-results.py.
#   . tests/fleet/lib.sh BUILD_DIR
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# a tool that is missing: a failure where tools/deps.sh installed them, else a skip (the GPU machine)
need_tool () {
  echo "no $1 here"
  [ -n "${CUV_TOOLS_INSTALLED:-}" ] && exit 1
  exit 77
}
for e in rtspsrc rtph264depay "${CUV_CAMERA_ENCODER:-x264enc}"; do
  gst-inspect-1.0 "$e" >/dev/null 2>&1 || need_tool "$e"
done
# an H.264 decoder for uridecodebin: nvh264dec on the GPU machine, avdec_h264 elsewhere
gst-inspect-1.0 avdec_h264 >/dev/null 2>&1 || gst-inspect-1.0 nvh264dec >/dev/null 2>&1 || need_tool avdec_h264
run=$build/runner/cudavision-run
camera=$build/tests/rtsp-camera
[ -x "$run" ] || need_tool cudavision-run
# the Python that has what a script needs (pyenv's or Debian's)
python_with () {
  for py in python3 /usr/bin/python3; do
    "$py" -c "import $1" 2>/dev/null && { echo "$py"; return 0; }
  done
  return 1
}
py=$(python_with json)
check="$py $here/check-results.py"
dir=$(mktemp -d)
pids=()
cleanup () {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
export GST_PLUGIN_PATH_1_0=$build/gst GST_REGISTRY_1_0=$dir/registry.bin
now_us () { $py -c 'import time; print(int(time.time() * 1e6))'; }
# twenty loopback ports base .. base+19, free now, below the kernel's ephemeral range (from 32768:
# an outgoing connection of another test could take a port there before our listener does)
base=$($py - $$ <<'PY'
import random, socket, sys
random.seed(int(sys.argv[1]))
for _ in range(200):
    base = random.randrange(20000, 32740, 20)
    try:
        held = []
        for p in range(base, base + 20):
            s = socket.socket(); s.bind(("127.0.0.1", p)); held.append(s)
        for s in held: s.close()
        print(base); break
    except OSError:
        for s in held: s.close()
PY
)
[ -n "$base" ] || { echo "no twenty free loopback ports"; exit 1; }
# our elements' backend where CUV_FLEET_BACKEND names one (cuda on the GPU machine)
backend=${CUV_FLEET_BACKEND:+ backend=$CUV_FLEET_BACKEND}
declare -A cam_pid
# start_camera I [ENV...]: an RTSP camera on port base+1+I
start_camera () {
  env "${@:2}" "$camera" $((base + 1 + $1)) > "$dir/camera$1.log" 2>&1 &
  cam_pid[$1]=$!
  pids+=($!)
}
# broker: Mosquitto with $dir/broker.conf
broker () {
  mosquitto -c "$dir/broker.conf" >> "$dir/broker.log" 2>&1 &
  broker_pid=$!
  pids+=($broker_pid)
  sleep 0.5
}
# make_clip: clip.mkv in $dir, 45 frames of H.264 for file cameras
make_clip () {
  gst-launch-1.0 -q videotestsrc num-buffers=45 pattern=ball ! video/x-raw,format=I420,width=160,height=120,framerate=30/1 ! \
    ${CUV_CAMERA_ENCODER:-x264enc} ! h264parse ! matroskamux ! filesink location="$dir/clip.mkv"
}
# plain_broker: $dir/broker.conf for a broker on port base that takes anyone (then `broker`)
plain_broker () {
  printf 'listener %s 127.0.0.1\nallow_anonymous true\n' "$base" > "$dir/broker.conf"
}
fail () {
  echo "FAIL: $*"
  [ -z "${CUV_FLEET_KEEP:-}" ] || cp -r "$dir" "$CUV_FLEET_KEEP"
  for f in "$dir"/runner*.log; do [ -f "$f" ] && { echo "== $f"; tail -n 20 "$f"; }; done
  exit 1
}
# wait_for SECONDS CLAIM...: waits for a check-results.py claim about $dir/results.txt
wait_for () {
  local limit=$1 t=0
  shift
  until $check "$dir/results.txt" "$@" > "$dir/check.txt" 2>&1; do
    t=$((t + 1))
    [ $t -le $((limit * 2)) ] || { cat "$dir/check.txt"; return 1; }
    sleep 0.5
  done
  cat "$dir/check.txt"
}
# rejects CONFIG MESSAGE: the runner, and its --check, exit with 2 and say MESSAGE
rejects () {
  local out rc flag
  for flag in --check ""; do
    rc=0
    out=$(timeout 20 "$run" $flag "$dir/$1" 2>&1) || rc=$?
    echo "$out"
    [ $rc = 2 ] || fail "exit status $rc for ${flag:-a run of} $1, not 2"
    grep -qF -- "$2" <<<"$out" || fail "the message for $1 does not say: $2"
  done
}
