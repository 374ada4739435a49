#!/usr/bin/env bash
# The camera fleet with real parts only, on the CPU backend (docs/fleet.md): a Mosquitto broker on a
# loopback port, eight RTSP cameras (tests/fleet/rtsp-camera, H.264), two cudavision-run with
# --shard 0/2 and 1/2 and a subscriber, and a camera through every analyser the plugin registers (a
# new analyser's results must reach the broker with no change to the runner). Then: a runner killed with SIGKILL and started again, one
# camera's server gone for 3 s, the broker restarted, a camera that does not exist, a config with
# an error. Every camera's results are checked by tests/fleet/check-results.py.
#   tests/fleet/test-fleet.sh BUILD_DIR
set -eu
command -v mosquitto_sub >/dev/null || { echo "no mosquitto_sub here"; [ -n "${CUV_TOOLS_INSTALLED:-}" ] && exit 1; exit 77; }
command -v mosquitto >/dev/null || { echo "no mosquitto here"; [ -n "${CUV_TOOLS_INSTALLED:-}" ] && exit 1; exit 77; }
. "$(dirname "$0")/lib.sh" "$1"
broker_port=$base
cat > "$dir/broker.conf" <<CONF
listener $broker_port 127.0.0.1
allow_anonymous true
persistence true
persistence_location $dir/
# as root it would switch to the user mosquitto, which cannot write the persistence file here
user $(id -un)
log_type all
CONF
broker
cams=()
for i in 0 1 2 3 4 5 6 7; do start_camera $i; cams+=(cam$i); done
# every analyser the plugin registers (its klass says Analyzer), whatever their number
analysers=$(gst-inspect-1.0 cudavision 2>/dev/null | sed -n 's/^ *\(cuda[a-z0-9]*\): .*/\1/p' | while read -r e; do
  if gst-inspect-1.0 "$e" | grep -q '^ *Klass .*Analyzer'; then echo "$e"; fi; done)
[ -n "$analysers" ] || fail "gst-inspect-1.0 found no analyser in the plugin"
every=$(for e in $analysers; do printf '%s interval=200000000%s ! ' "$e" "$backend"; done)
# a persistent session: what is published while the broker restarts reaches it afterwards
mosquitto_sub -h 127.0.0.1 -p $broker_port -t 'cudavision/#' -v -q 1 -c -i cuv-fleet-test > "$dir/results.txt" 2>&1 &
pids+=($!)
{
  echo "[runner]"
  echo "broker-port=$broker_port"
  echo "restart-min-ms=200"
  echo "restart-max-ms=2000"
  echo "stall-ms=1500"
  echo "failing-after=3"
  for i in 0 1 2 3 4 5 6 7; do
    echo "[camera cam$i]"
    echo "uri=rtsp://127.0.0.1:$((base + 1 + i))/cam"
    echo "pipeline=cudahistogram interval=200000000$backend ! cudamotionest interval=200000000$backend"
  done
  # nobody serves this one
  echo "[camera ghost]"
  echo "uri=rtsp://127.0.0.1:$((base + 19))/cam"
  echo "pipeline=cudanoisemap$backend"
  # after ghost, so that the shards keep the cameras the checks below name
  echo "[camera every]"
  echo "uri=rtsp://127.0.0.1:$((base + 1))/cam"
  echo "pipeline=${every% ! }"
} > "$dir/site.conf"
start_runner () {
  sed "s/^\[runner\]$/[runner]\nmetrics-port=$((base + 10 + $1))/" "$dir/site.conf" > "$dir/site$1.conf"
  "$run" --shard $1/2 "$dir/site$1.conf" >> "$dir/runner$1.log" 2>&1 &
  runner_pid[$1]=$!
  pids+=($!)
}
declare -A runner_pid
start_runner 0
start_runner 1

echo "== two runners, eight cameras"
wait_for 30 all "${cams[@]}" || fail "not every camera's results arrived"
wait_for 15 state ghost failing || fail "the camera that does not exist was not reported failing"
wait_for 30 elements every $analysers || fail "not every analyser's results reached the broker"
metrics=$($py -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:$((base + 10))/metrics').read().decode())")
grep -q '^cudavision_camera_up{camera="cam0"} 1' <<<"$metrics" || fail "runner 0's metrics do not show cam0 up"
grep -q '^cudavision_camera_failing{camera="ghost"} 1' <<<"$metrics" || fail "runner 0's metrics do not show ghost failing"
echo "metrics: cam0 up, ghost failing"

echo "== runner 0 killed with SIGKILL and started again"
kill -9 "${runner_pid[0]}"
# a process that held a CUDA context takes a moment to go, its metrics port with it
wait "${runner_pid[0]}" 2>/dev/null || true
t=$(now_us)
start_runner 0
wait_for 5 since "$t" cam0 cam2 cam4 cam6 || fail "runner 0's cameras did not resume within 5 s"

echo "== cam1's server gone for 3 s"
kill -9 "${cam_pid[1]}"
t0=$(now_us)
sleep 3
start_camera 1
t_back=$(now_us)
wait_for 20 since "$t_back" cam1 || fail "cam1 did not come back"
t1=$(now_us)
$check "$dir/results.txt" gaps 1500 "$t0" "$t1" cam0 cam2 cam3 cam4 cam5 cam6 cam7 || fail "other cameras paused"
# "playing again after N restarts" counts the restarts of this outage, not the camera's lifetime
again () { grep -ho "camera cam1: playing again after [0-9]* restart" "$dir"/runner*.log | awk '{print $6}'; }
for _ in $(seq 20); do [ -n "$(again)" ] && break; sleep 0.5; done
first=$(again | tail -n 1)
kill -9 "${cam_pid[1]}"
sleep 1
start_camera 1
for _ in $(seq 40); do [ "$(again | wc -l)" -ge 2 ] && break; sleep 0.5; done
second=$(again | tail -n 1)
echo "cam1 played again after $first restarts, then after $second"
[ -n "$first" ] && [ "$(again | wc -l)" -ge 2 ] || fail "cam1's log does not say it plays again: $(grep cam1 "$dir"/runner*.log | tail -n 3)"
[ "$second" -lt $((first + 1)) ] || [ "$second" -le 3 ] ||
  fail "the second outage's count ($second) carries the first's ($first)"

echo "== cam1 restarted while its runner is short of descriptors"
# runner 1 (cam1's) left no descriptor above what it holds (cam1's pipeline then frees its own):
# too few to start a camera, which waits with its backoff, one line a try, no GLib critical; the
# limit back, cam1 plays again
r1=${runner_pid[1]}
soft=$(awk '/Max open files/ {print $4}' /proc/$r1/limits)
open=$(ls /proc/$r1/fd | wc -l)
prlimit --pid "$r1" --nofile="$open":
kill -9 "${cam_pid[1]}"
sleep 1
start_camera 1
for _ in $(seq 30); do grep -q "camera cam1: too few file descriptors free to start" "$dir/runner1.log" && break; sleep 0.5; done
grep -m 1 "camera cam1: too few file descriptors free to start" "$dir/runner1.log" ||
  fail "cam1 restarted without descriptors and did not say so: $(grep cam1 "$dir/runner1.log" | tail -n 3)"
prlimit --pid "$r1" --nofile="$soft":
for _ in $(seq 40); do [ "$(again | wc -l)" -ge 3 ] && break; sleep 0.5; done
[ "$(again | wc -l)" -ge 3 ] || fail "cam1 did not play again once descriptors were free: $(grep cam1 "$dir/runner1.log" | tail -n 3)"
! grep -q "CRITICAL" "$dir/runner1.log" || fail "GLib criticals in runner 1's log: $(grep -c CRITICAL "$dir/runner1.log")"

echo "== the broker restarted"
echo "broker stopped at $(now_us) us"
kill "$broker_pid"
wait "$broker_pid" 2>/dev/null || true
sleep 2
broker
t=$(now_us)
wait_for 20 since "$t" "${cams[@]}" || fail "results did not resume after the broker's restart"
sleep 2
kill -TERM "${runner_pid[0]}" "${runner_pid[1]}"
wait "${runner_pid[0]}" || fail "runner 0 did not exit 0 on SIGTERM"
wait "${runner_pid[1]}" || fail "runner 1 did not exit 0 on SIGTERM"
sleep 1
$check "$dir/results.txt" seq || fail "results were lost"
grep -h "dropped" "$dir"/runner*.log || true

echo "== a config with an error"
printf '[runner]\nbroker-port=%s\n[camera x]\nuri=rtsp://127.0.0.1:1/cam\npipeline=cudasobel\nfps=3\n' $broker_port > "$dir/bad.conf"
rejects bad.conf "bad.conf:6: [camera x] fps: unknown key"
printf '[camera y]\nuri=rtsp://127.0.0.1:1/cam\npipeline=cudasobel ! nosuchelement\n' > "$dir/bad2.conf"
rejects bad2.conf "bad2.conf:3: [camera y] pipeline:"
printf '[runner]\nqueue-limit=lots\n\n[camera z]\npipeline=cudasobel\n' > "$dir/bad3.conf"
rejects bad3.conf "bad3.conf:2: [runner] queue-limit: 'lots' is not a whole number"
printf '[camera z]\npipeline=cudasobel\n' > "$dir/bad4.conf"
rejects bad4.conf "bad4.conf:1: [camera z] uri: missing"
echo "fleet: every claim held"
