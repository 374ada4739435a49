#!/usr/bin/env bash
# The runner's metrics port under siege (docs/fleet.md, "Security"), with a real broker and a file
# camera: tests/fleet/siege.py's slow clients in a process limited to 64 descriptors, 500 idle
# clients, requests it must refuse; the runner plays on through it and stops cleanly.
#   tests/fleet/test-http.sh BUILD_DIR
set -eu
for tool in mosquitto prlimit; do
  command -v $tool >/dev/null || { echo "no $tool here"; [ -n "${CUV_TOOLS_INSTALLED:-}" ] && exit 1; exit 77; }
done
. "$(dirname "$0")/lib.sh" "$1"
metrics=$((base + 10))
cd "$dir"
plain_broker
broker
make_clip
cat > site.conf <<CONF
[runner]
broker-port=$base
broker-host=127.0.0.1
metrics-address=127.0.0.1
metrics-port=$metrics

[camera file]
uri=file://$dir/clip.mkv
loop=true
pipeline=cudahistogram bins=16 interval=1000000000$backend
CONF
"$run" site.conf > runner.log 2>&1 &
runner=$!
pids+=($runner)
for _ in $(seq 60); do curl -sf -o /dev/null http://127.0.0.1:$metrics/healthz && break; sleep 0.5; done
$py "$here/siege.py" $runner $metrics 10 64 || fail "the metrics port under siege"
grep -E 'metrics server' runner.log | head -5 || true

echo "== the least metrics-connections (2), idle connections closed after 1 s"
sed -e "s/^metrics-port=.*/metrics-port=$((base + 11))/" site.conf > small.conf
printf 'metrics-connections=2\nmetrics-idle-timeout-s=1\nclient-id=cudavision-run-small\n' > small-keys.conf
sed -i "/^metrics-address=/r small-keys.conf" small.conf
"$run" small.conf > runner-small.log 2>&1 &
small=$!
pids+=($small)
for _ in $(seq 60); do curl -sf -o /dev/null http://127.0.0.1:$((base + 11))/healthz && break; sleep 0.5; done
$py "$here/siege.py" $small $((base + 11)) 1 2 small || fail "the least metrics-connections under siege"
kill -TERM $small
# a stray SIGUSR1 or SIGUSR2 is logged and ignored
kill -USR1 $runner
kill -USR2 $runner
sleep 1
kill -0 $runner 2>/dev/null || fail "SIGUSR1 or SIGUSR2 ended the runner"
grep -q "SIGUSR1: ignored" "$dir/runner.log" || fail "SIGUSR1 is not logged as ignored"
kill -TERM $runner
rc=0
wait $runner || rc=$?
[ $rc = 0 ] || fail "the runner exited $rc after SIGTERM"
echo "the runner played on and stopped cleanly"
