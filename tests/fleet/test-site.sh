#!/usr/bin/env bash
# The fleet at a site's edges, with real parts only (docs/fleet.md, "Security" and "The broker"):
# a Mosquitto broker that takes only TLS and a password (its CA and certificate made here with
# openssl), started 5 s after the runner; RTSP cameras; a file camera; cameras whose names a
# scraper must escape. Then: every result arrives with no hole in seq; a result the client refuses
# (larger than the broker's maximum packet) is dropped and counted while the others go on; the
# runner's retained state and its will; a wrong password and a wrong CA (a clear error, nothing
# sent, nothing in clear); configs that must not run; scrapes read back by promtool and
# prometheus_client; a 300 MB request; SIGTERM with results queued (exit status 3).
#   tests/fleet/test-site.sh BUILD_DIR       (CUV_FLEET_BACKEND=cuda on a GPU machine)
set -eu
for tool in mosquitto mosquitto_sub mosquitto_passwd openssl curl; do
  command -v $tool >/dev/null || { echo "no $tool here"; [ -n "${CUV_TOOLS_INSTALLED:-}" ] && exit 1; exit 77; }
done
. "$(dirname "$0")/lib.sh" "$1"
port=$base                      # the broker: TLS and a password only
metrics=$((base + 10))
plain=$((base + 11))            # a listener that records what a runner sends it
cd "$dir"

echo "== a CA, the broker's certificate for 127.0.0.1, another CA, a password"
openssl_quiet () { openssl "$@" 2>/dev/null; }
for ca in ca other; do
  openssl_quiet req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=cudavision test $ca" -keyout $ca.key -out $ca.crt
done
openssl_quiet req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout server.key -out server.csr
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' > san.ext
openssl_quiet x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext -out server.crt
password=$(openssl rand -hex 12)
mosquitto_passwd -c -b passwd cudavision "$password"
printf '%s\n' "$password" > broker-password
printf 'not-%s\n' "$password" > wrong-password
chmod 600 broker-password wrong-password passwd
# the largest packet the broker takes: a 16-bin histogram's result fits, a 256-bin one does not
cat > broker.conf <<CONF
per_listener_settings false
allow_anonymous false
password_file $dir/passwd
persistence true
persistence_location $dir/
max_queued_messages 0
max_packet_size 800
# as root it would switch to the user mosquitto, which cannot write the persistence file here
user $(id -un)
log_type error
log_type warning
log_type notice
listener $port 127.0.0.1
cafile $dir/ca.crt
certfile $dir/server.crt
keyfile $dir/server.key
CONF
sub_args=(-h 127.0.0.1 -p $port --cafile ca.crt -u cudavision -P "$password" -q 1 -c -i cuv-site-test)

echo "== a clip of 45 frames for the file cameras"
make_clip
start_camera 0
start_camera 1
# a camera that asks for a password, as cameras do
camera_password=$(openssl rand -hex 8)
printf '%s\n' "$camera_password" > camera-password
start_camera 2 CUV_CAMERA_USER=viewer CUV_CAMERA_PASSWORD="$camera_password"
long=$(printf 'x%.0s' $(seq 600))
runner_conf () { # PREFIX PASSWORD-FILE CA
  cat <<CONF
[runner]
broker-host=127.0.0.1
broker-port=$port
topic-prefix=$1
username=cudavision
password-file=$dir/$2
tls-ca-file=$dir/$3
restart-min-ms=200
restart-max-ms=2000
stall-ms=3000
failing-after=3
metrics-port=0
CONF
}
{
  runner_conf cudavision broker-password ca.crt
  cat <<CONF
metrics-address=127.0.0.1

[camera cam0]
uri=rtsp://127.0.0.1:$((base + 1))/cam
pipeline=cudahistogram bins=16 interval=200000000$backend ! cudamotionest interval=200000000$backend

[camera door]
uri=rtsp://127.0.0.1:$((base + 3))/cam
username=viewer
password-file=$dir/camera-password
pipeline=cudahistogram bins=16 interval=200000000$backend

[camera locked]
uri=rtsp://127.0.0.1:$((base + 3))/cam
pipeline=cudahistogram bins=16 interval=200000000$backend

[camera big]
uri=rtsp://127.0.0.1:$((base + 2))/cam
pipeline=cudahistogram bins=256 interval=200000000$backend

[camera file]
uri=file://$dir/clip.mkv
pipeline=cudahistogram bins=16 interval=0$backend

[camera again]
uri=file://$dir/clip.mkv
loop=true
pipeline=cudahistogram bins=16 interval=1000000000$backend

[camera q"uote]
uri=rtsp://127.0.0.1:$((base + 1))/cam
pipeline=cudanoisemap interval=1000000000$backend

[camera back\\slash]
uri=rtsp://127.0.0.1:$((base + 1))/cam
pipeline=cudanoisemap interval=1000000000$backend

[camera $long]
uri=rtsp://127.0.0.1:$((base + 1))/cam
pipeline=cudanoisemap interval=1000000000$backend
CONF
} > site.conf
sed -i "s/^metrics-port=0$/metrics-port=$metrics/" site.conf
"$run" --check site.conf || fail "--check rejects the site's config"

echo "== the subscriber's session made before the runner starts (the broker keeps what comes for it)"
broker
mosquitto_sub "${sub_args[@]}" -t 'cudavision/#' -v > results.txt 2>&1 &
sub=$!
sleep 1
kill $sub "$broker_pid"
wait "$broker_pid" 2>/dev/null || true

echo "== the runner first, the broker 5 s later"
"$run" site.conf > runner.log 2>&1 &
runner=$!
pids+=($runner)
curl_status () { curl -s -o "$dir/body.txt" -w '%{http_code}' "$@" || true; }
# up once it answers (a fresh registry on a loaded machine takes seconds); the broker 5 s after that
for _ in $(seq 60); do [ "$(curl_status http://127.0.0.1:$metrics/healthz)" = 200 ] && break; sleep 0.5; done
[ "$(curl_status http://127.0.0.1:$metrics/readyz)" = 503 ] || fail "/readyz is not 503 before the broker is up"
grep -q "broker: not connected" body.txt || fail "/readyz does not say it waits for the broker: $(cat body.txt)"
echo "/readyz before the broker: 503, $(head -n 1 body.txt)"
sleep 5
broker
mosquitto_sub "${sub_args[@]}" -t 'cudavision/#' -v >> results.txt 2>&1 &
sub=$!
pids+=($sub)
wait_for 20 all cam0 file again door || fail "results did not arrive once the broker came"
wait_for 10 state locked failing || fail "the camera without its password was not reported failing"
wait_for 20 count file 45 || fail "the file camera did not give one result for each of its 45 frames"
wait_for 10 state file ended || fail "the file camera did not end"
wait_for 10 topic cudavision/runner/cudavision-run-0of1/state online || fail "no retained 'online' from the runner"
grep -q "MQTT broker 127.0.0.1:$port: connected (TLS)" runner.log || fail "the runner did not log its connection"
[ "$(curl_status http://127.0.0.1:$metrics/readyz)" = 200 ] || fail "/readyz is not 200 once connected: $(cat body.txt)"

echo "== a result the client refuses is dropped and counted; the others go on"
t=$(now_us)
sleep 2
wait_for 10 since "$t" cam0 || fail "cam0 stopped while big's results were refused"
$check results.txt none big || fail "big's results reached the broker past its maximum packet"
curl -s http://127.0.0.1:$metrics/metrics > scrape.txt
grep -qE '^cudavision_results_dropped_total\{reason="refused"\} [1-9]' scrape.txt ||
  fail "big's refused results are not counted: $(grep dropped_total scrape.txt)"
grep -q "MQTT client refused a message for 'cudavision/big/cudahistogram'" runner.log || fail "the refusal is not logged"

echo "== the scrape, read back by promtool and prometheus_client"
want_backend=${CUV_FLEET_BACKEND:-cpu}
[ "$want_backend" = auto ] && want_backend=cpu
grep -q "^cudavision_camera_backend{camera=\"cam0\",element=\"cudahistogram\",backend=\"$want_backend\"} 1" scrape.txt ||
  fail "cam0's cudahistogram is not reported on $want_backend: $(grep camera_backend scrape.txt | head -n 3)"
if [ "$want_backend" = cpu ] && [ -z "${CUV_FLEET_BACKEND:-}" ]; then
  grep -q "camera cam0: warning from cudahistogram: .*running on the CPU" runner.log ||
    fail "the CPU fallback's warning is not logged with its camera"
fi
# cam0 is live: its frames' ages are counted, and its +Inf bucket holds them all
age_count=$(sed -n 's/^cudavision_camera_frame_age_seconds_count{camera="cam0"} //p' scrape.txt)
age_inf=$(sed -n 's/^cudavision_camera_frame_age_seconds_bucket{camera="cam0",le="+Inf"} //p' scrape.txt)
[ -n "$age_count" ] && [ "$age_count" -gt 0 ] && [ "$age_count" = "$age_inf" ] ||
  fail "cam0's frame ages are not in the scrape: $(grep frame_age scrape.txt | head -n 3)"
# files have no frame age, looping or not: only a live source's frames are counted
again_count=$(sed -n 's/^cudavision_camera_frame_age_seconds_count{camera="again"} //p' scrape.txt)
file_count=$(sed -n 's/^cudavision_camera_frame_age_seconds_count{camera="file"} //p' scrape.txt)
[ "$again_count" = 0 ] && [ "$file_count" = 0 ] ||
  fail "a file's frames have ages: $(grep -E 'frame_age_seconds_count' scrape.txt | grep -E 'again|file')"
"$build/tests/exposition-sample" > sample.txt
# promtool and prometheus_client are tools/deps.sh's; the GPU machine's bundle has neither
if command -v promtool >/dev/null; then
  promtool check metrics < scrape.txt || fail "promtool rejects the runner's scrape"
  promtool check metrics < sample.txt || fail "promtool rejects the sample exposition"
else
  [ -z "${CUV_TOOLS_INSTALLED:-}" ] || fail "no promtool"
  echo "promtool: not here, skipped"
fi
if prom_py=$(python_with prometheus_client); then
  $prom_py "$here/scrape-check.py" sample.txt --sample || fail "the sample exposition does not read back"
  $prom_py "$here/scrape-check.py" scrape.txt \
    cudavision_camera_cuda_device '{"camera": "q\"uote"}' -1 \
    cudavision_camera_cuda_device '{"camera": "back\\slash"}' -1 \
    cudavision_camera_cuda_device "{\"camera\": \"$long\"}" -1 \
    cudavision_camera_ended '{"camera": "file"}' 1 \
    cudavision_camera_frames_total '{"camera": "file"}' 45 \
    cudavision_camera_dropped_frames_total '{"camera": "file"}' 0 \
    cudavision_camera_live '{"camera": "file"}' 0 \
    cudavision_camera_live '{"camera": "cam0"}' 1 || fail "the runner's scrape does not read back"
else
  [ -z "${CUV_TOOLS_INSTALLED:-}" ] || fail "no python3 with prometheus_client"
  echo "prometheus_client: not here, skipped"
fi
grep -qE '^cudavision_camera_loops_total\{camera="again"\} [1-9]' scrape.txt || fail "the looping file camera is not counted"

$check results.txt seq cam0 door file again 'q"uote' 'back\slash' || fail "a result went missing while the broker came late"

echo "== a 300 MB request"
rss () { awk '/VmRSS/ {print $2}' /proc/$runner/status; }
before=$(rss)
status=$(head -c 300000000 /dev/zero | curl -s -o /dev/null -w '%{http_code}' -X POST --data-binary @- \
  http://127.0.0.1:$metrics/healthz || true)
after=$(rss)
echo "POST of 300 MB: $status, resident $before -> $after kB"
[ "$status" = 413 ] || fail "a 300 MB POST got $status, not 413"
[ $((after - before)) -lt 10240 ] || fail "a 300 MB POST grew the runner by $((after - before)) kB"

echo "== SIGTERM with results queued"
kill $sub "$broker_pid"
wait "$broker_pid" 2>/dev/null || true
sleep 2
queued=$(curl -s http://127.0.0.1:$metrics/metrics | awk '/^cudavision_results_queued / {print $2}')
[ "${queued:-0}" -gt 0 ] || fail "nothing queued while the broker is away"
kill -TERM $runner
rc=0
wait $runner || rc=$?
[ $rc = 3 ] || fail "the runner exited $rc on SIGTERM with results lost, not 3"
grep -E "^cudavision-run: [0-9]+ results were still queued for the broker and are lost" runner.log ||
  fail "the runner did not say how many results it lost"

echo "== the broker again: the runner's will, a wrong password, a wrong CA"
broker
mosquitto_sub "${sub_args[@]/cuv-site-test/cuv-site-test-2}" -t '#' -v >> results.txt 2>&1 &
pids+=($!)
{ runner_conf will broker-password ca.crt; cat <<CONF
[camera cam0]
uri=rtsp://127.0.0.1:$((base + 1))/cam
pipeline=cudahistogram bins=16 interval=200000000$backend
CONF
} > will.conf
"$run" will.conf > runner-will.log 2>&1 &
will=$!
pids+=($will)
wait_for 20 topic will/runner/cudavision-run-0of1/state online || fail "the second runner did not say online"
kill -9 $will
wait $will 2>/dev/null || true
wait_for 10 topic will/runner/cudavision-run-0of1/state offline || fail "the broker sent no will for a runner killed"
for bad in wrongpw:wrong-password:ca.crt wrongca:broker-password:other.crt; do
  IFS=: read -r prefix pw ca <<<"$bad"
  { runner_conf $prefix $pw $ca; grep -A2 '^\[camera cam0\]' will.conf; } > $prefix.conf
  "$run" $prefix.conf > runner-$prefix.log 2>&1 &
  pids+=($!)
done
sleep 5
grep -q "the broker refused the connection: Not authorized" runner-wrongpw.log || fail "a wrong password is not a clear error: $(tail -n 3 runner-wrongpw.log)"
grep -q "certificate verify failed" runner-wrongca.log || fail "a wrong CA is not a clear error: $(tail -n 3 runner-wrongca.log)"
$check results.txt prefix wrongpw || fail "a runner with a wrong password published"
$check results.txt prefix wrongca || fail "a runner that does not trust the broker published"
if grep -qF -e "$password" -e "$camera_password" runner*.log results.txt; then fail "a log or a message holds a password"; fi
echo "wrong password: $(grep -m1 'Not authorized' runner-wrongpw.log)"
echo "wrong CA: $(grep -m1 'verify failed' runner-wrongca.log)"

echo "== MQTT 3.1.1: a broker that cannot say its limit, given to the runner; the others go on"
{ runner_conf old broker-password ca.crt | sed "s/^metrics-port=0$/metrics-port=$((base + 12))/"
  echo "mqtt-version=3.1.1"
  echo "max-message-bytes=800"
  grep -A2 '^\[camera cam0\]' will.conf
  grep -A2 '^\[camera big\]' site.conf; } > old.conf
"$run" old.conf > runner-old.log 2>&1 &
pids+=($!)
t=$(now_us)
sleep 8
wait_for 10 since "$t" cam0 || fail "cam0 stopped behind big's results under MQTT 3.1.1"
grep -qE '^cudavision_results_dropped_total\{reason="refused"\} [1-9]' <(curl -s http://127.0.0.1:$((base + 12))/metrics) ||
  fail "results over max-message-bytes are not dropped as refused: $(tail -n 3 runner-old.log)"
if grep -q "disconnected" runner-old.log; then fail "the 3.1.1 broker closed the connection: $(grep -m1 disconnected runner-old.log)"; fi

echo "== nothing in clear: a runner with TLS against a listener that records what it gets"
$py - "$plain" > plain.txt <<'PY' &
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1); s.settimeout(15)
c, _ = s.accept(); c.settimeout(3); data = b""
try:
    while len(data) < 65536:
        chunk = c.recv(4096)
        if not chunk: break
        data += chunk
except OSError:
    pass
print(data[:2].hex(), b"cudavision" in data, b"MQTT" in data)
PY
listener=$!
sleep 0.5
{ runner_conf clear broker-password ca.crt | sed "s/^broker-port=.*/broker-port=$plain/"; grep -A2 '^\[camera cam0\]' will.conf; } > clear.conf
"$run" clear.conf > runner-clear.log 2>&1 &
pids+=($!)
wait $listener || true
read -r first has_name has_mqtt < plain.txt || true
echo "the listener got: first bytes ${first:-none}, our names in clear: ${has_name:-?}, MQTT in clear: ${has_mqtt:-?}"
[ "${first:-}" = 1603 ] || fail "the runner did not begin with a TLS handshake"
[ "$has_name" = False ] && [ "$has_mqtt" = False ] || fail "the runner sent MQTT in clear"

echo "== a shard without cameras says so"
timeout 2 "$run" --shard 1/2 will.conf > runner-empty.log 2>&1 || true
grep -q "shard 1/2 holds none of the 1 cameras" runner-empty.log || fail "an empty shard is silent: $(cat runner-empty.log)"

echo "== configs that must not run"
printf '[camera door]\nuri=rtsp://127.0.0.1:1/a\npipeline=cudasobel\n\n[camera door]\nuri=rtsp://127.0.0.1:1/b\npipeline=cudasobel\n' > dup.conf
rejects dup.conf "dup.conf:5: [camera door]: a second group of that name (the first is on line 1)"
printf '[camera a]\nuri=rtsp://127.0.0.1:1/a\npipeline=cudahistogram bins=9999\n' > bins.conf
rejects bins.conf "bins.conf:3: [camera a] pipeline: value \"9999\" of type 'guint' is invalid or out of range for property 'bins'"
printf '[camera a]\nuri=rtsp://127.0.0.1:1/a\npipeline=cudanoisemap interval=-1\n' > interval.conf
rejects interval.conf "interval.conf:3: [camera a] pipeline: value \"18446744073709551615\" of type 'guint64' is invalid or out of range for property 'interval'"
printf '[camera a]\nuri=rtsp://127.0.0.1:1/a" ! fakesink videotestsrc name="x\npipeline=cudasobel\n' > quote.conf
rejects quote.conf "quote.conf:2: [camera a] uri: a URI holds no '\"' (percent-encode it)"
# what the run would refuse or trip on, --check refuses, each with its line
printf '[camera\ta]\nuri=rtsp://127.0.0.1:1/a\npipeline=cudasobel\n' > tab.conf
rejects tab.conf "tab.conf:1: a control character (0x09) in a group's name"
printf 'uri=rtsp://127.0.0.1:1/a\n[camera a]\nuri=rtsp://127.0.0.1:1/a\npipeline=cudasobel\n' > before.conf
rejects before.conf "before.conf:1: a line before the first group"
printf '[camera a]\nuri=rtsp://127.0.0.1:1/a\n\357\273\277pipeline=cudasobel\n' > midbom.conf
rejects midbom.conf "midbom.conf:3: a UTF-8 byte order mark at column 1"
printf '[camera a]\ruri=rtsp://127.0.0.1:1/a\rpipeline=cudasobel\r' > cr.conf
rejects cr.conf "cr.conf:1: a carriage return inside a line"
printf '[camera a\377]\nuri=rtsp://127.0.0.1:1/a\npipeline=cudasobel\n' > badhead.conf
rejects badhead.conf "badhead.conf:1: not UTF-8 (byte 0xFF at column 10)"
! grep -q "\[runner\]" <(timeout 20 "$run" --check badhead.conf 2>&1) || fail "a bad byte in a camera's header is reported as [runner]"
$py -c "import sys; sys.stdout.write('[runner]\nusername=' + 'u' * 70000 + '\n[camera a]\nuri=rtsp://127.0.0.1:1/a\npipeline=cudasobel\n')" > longuser.conf
rejects longuser.conf "longuser.conf:2: [runner] username: longer than MQTT's 65,535 bytes (70000)"
$py -c "import sys; sys.stdout.write('[camera ' + 'c' * 65520 + ']\nuri=rtsp://127.0.0.1:1/a\npipeline=cudasobel\n')" > longname.conf
rejects longname.conf "a camera's name is at most 1024 bytes (this one is 65520)"
printf '[camera a]\nuri=fd://0\npipeline=cudasobel\n' > fd.conf
rejects fd.conf "fd.conf:2: [camera a] uri: a camera is not read from fd://"
printf '[camera a]\nuri=file:///etc/passwd\npipeline=cudasobel\n' > passwd.conf
rejects passwd.conf "passwd.conf:2: [camera a] uri: '/etc/passwd' is not a video file (it is text/plain)"
printf '[camera a]\nuri=v4l2:///etc/passwd\npipeline=cudasobel\n' > v4l2.conf
rejects v4l2.conf "v4l2.conf:2: [camera a] uri: a v4l2:// camera is a video device (/dev/videoN, or a link to one), not '/etc/passwd'"
printf '[camera a]\nuri=v4l2:///dev/video0/../../etc/passwd\npipeline=cudasobel\n' > v4l2dots.conf
rejects v4l2dots.conf "not '/dev/video0/../../etc/passwd' ('/etc/passwd')"
printf '[camera a]\nuri=srt://127.0.0.1:9000?mode=caller&passphrase=secret123\npipeline=cudasobel\n' > query.conf
rejects query.conf "query.conf:2: [camera a] uri: 'passphrase' in the URI's query looks like a secret"
printf '[camera a]\nuri=rtsp://127.0.0.1:1/a\nnoequals\npipeline=cudasobel\n' > syntax.conf
rejects syntax.conf "syntax.conf:3: Key file contains line"
# the broker's TLS files as libmosquitto reads them at each connect: a key of another certificate,
# a CA file that holds no certificate, a key that asks for a passphrase
printf '[runner]\ntls-ca-file=%s/ca.crt\ntls-cert-file=%s/server.crt\ntls-key-file=%s/other.key\n[camera a]\nuri=rtsp://127.0.0.1:1/a\npipeline=cudasobel\n' "$dir" "$dir" "$dir" > keypair.conf
rejects keypair.conf "keypair.conf:4: [runner] tls-key-file: '$dir/other.key' is not the key of tls-cert-file's certificate"
printf '[runner]\ntls-ca-file=%s/ca.key\n[camera a]\nuri=rtsp://127.0.0.1:1/a\npipeline=cudasobel\n' "$dir" > cakey.conf
rejects cakey.conf "cakey.conf:2: [runner] tls-ca-file: '$dir/ca.key' is not a file of PEM certificates OpenSSL reads"
openssl_quiet rsa -in server.key -aes128 -passout pass:secret -out sealed.key
printf '[runner]\ntls-cert-file=%s/server.crt\ntls-key-file=%s/sealed.key\n[camera a]\nuri=rtsp://127.0.0.1:1/a\npipeline=cudasobel\n' "$dir" "$dir" > sealed.conf
rejects sealed.conf "sealed.conf:3: [runner] tls-key-file: '$dir/sealed.key' is not a PEM private key that opens without a passphrase" </dev/null
# --check starts each pipeline as the run does: an element that cannot have its device is the
# config's error on this host (the run would start the camera and fail it again and again)
printf '[camera a]\nuri=rtsp://127.0.0.1:1/a\ncuda-device-id=99\npipeline=cudahistogram backend=cuda name=gate\n' > device.conf
rc=0; out=$(timeout 20 "$run" --check device.conf 2>&1) || rc=$?
[ $rc = 2 ] && grep -qF "device.conf:4: [camera a] pipeline: does not start on this host: gate: " <<<"$out" ||
  fail "backend=cuda on device 99 passes --check (exit status $rc): $out"
# ... only the shard's own cameras (the other shard's host may have that device), each pipeline once
printf '[camera b]\nuri=rtsp://127.0.0.1:1/b\npipeline=cudasobel\n[camera c]\nuri=rtsp://127.0.0.1:1/c\npipeline=cudasobel\n' >> device.conf
timeout 20 "$run" --check --shard 1/2 device.conf | grep -q "3 cameras, valid; shard 1/2 runs 1 of them" ||
  fail "--check --shard 1/2 starts another shard's camera: $(timeout 20 "$run" --check --shard 1/2 device.conf 2>&1)"
rc=0; timeout 20 "$run" --check --shard 0/2 device.conf >/dev/null 2>&1 || rc=$?
[ $rc = 2 ] || fail "--check --shard 0/2 passes its camera on device 99 (exit status $rc)"
# a TLS file that would block its reader (the kernel's log, where the runner may open it) is refused at once
# ... as does a CA file that holds no certificate (a CRL alone verifies no broker)
mkdir -p crl-ca && : > crl-ca/index.txt && echo 01 > crl-ca/crlnumber
printf '[ca]\ndefault_ca=d\n[d]\ndatabase=%s/crl-ca/index.txt\ncrlnumber=%s/crl-ca/crlnumber\ndefault_md=sha256\ndefault_crl_days=1\n' "$dir" "$dir" > crl-ca/ca.cnf
openssl_quiet ca -gencrl -keyfile ca.key -cert ca.crt -out crl.pem -config crl-ca/ca.cnf
printf '[runner]\ntls-ca-file=%s/crl.pem\n[camera a]\nuri=rtsp://127.0.0.1:1/a\npipeline=cudasobel\n' "$dir" > crl.conf
rejects crl.conf "crl.conf:2: [runner] tls-ca-file: '$dir/crl.pem' holds no certificate"
if [ -r /proc/kmsg ]; then
  printf '[runner]\ntls-ca-file=/proc/kmsg\n[camera a]\nuri=rtsp://127.0.0.1:1/a\npipeline=cudasobel\n' > kmsg.conf
  rejects kmsg.conf "kmsg.conf:2: [runner] tls-ca-file: '/proc/kmsg': "
fi

# a camera's password goes wherever its URI says: never one of the runner's own secrets, by any path
echo broker-secret > runner-pw
ln -sf "$dir/runner-pw" runner-pw-link
printf '[runner]\nusername=u\npassword-file=%s/runner-pw\n[camera a]\nuri=http://127.0.0.1:1/cam\nusername=x\npassword-file=%s/runner-pw-link\npipeline=cudasobel\n' "$dir" "$dir" > steal.conf
rejects steal.conf "steal.conf:7: [camera a] password-file: '$dir/runner-pw-link' is the runner's [runner] password-file"
# ... nor any file outside the folders the site gave for them (the config's own and
# CUDAVISION_CAMERA_SECRETS), whatever the path
mkdir -p "$dir/conf" "$dir/elsewhere"
echo camera-secret > "$dir/elsewhere/cam-pw"
printf '[camera a]\nuri=http://127.0.0.1:1/cam\nusername=x\npassword-file=/etc/hostname\npipeline=cudasobel\n' > outside.conf
rejects outside.conf "outside.conf:4: [camera a] password-file: '/etc/hostname' is not in a folder a camera's password file may be in"
printf '[camera a]\nuri=http://127.0.0.1:1/cam\nusername=x\npassword-file=%s/conf/../elsewhere/cam-pw\npipeline=cudasobel\n' "$dir" > conf/given.conf
rejects conf/given.conf "is not in a folder a camera's password file may be in ($(realpath "$dir/conf");"
CUDAVISION_CAMERA_SECRETS=$dir/elsewhere timeout 20 "$run" --check conf/given.conf | grep -q "1 camera, valid" ||
  fail "a camera's password file in CUDAVISION_CAMERA_SECRETS is refused"
# a pipeline analyses the camera's frames and nothing else: no element that reads or writes
# elsewhere, whatever the shape that hides it (docs/fleet.md, "What a pipeline may hold")
printf '[camera a]\nuri=rtsp://127.0.0.1:1/a\npipeline=cudahistogram ! tee name=t ! queue ! filesink location=%s/leak t. ! queue\n' "$dir" > filesink.conf
rejects filesink.conf "filesink.conf:3: [camera a] pipeline: element 'filesink' (filesink0) is not allowed in a camera's pipeline"
printf '[camera a]\nuri=rtsp://127.0.0.1:1/a\npipeline=cudahistogram ! tee name=t t. ! queue ! multifilesink location=%s/leak-multi t. ! queue\n' "$dir" > multi.conf
rejects multi.conf "multi.conf:3: [camera a] pipeline: element 'multifilesink' (multifilesink0) is not allowed"
printf '[camera a]\nuri=rtsp://127.0.0.1:1/a\npipeline=cudahistogram ! funnel name=f filesrc location=/etc/passwd ! f.\n' > filesrc.conf
rejects filesrc.conf "filesrc.conf:3: [camera a] pipeline: element 'filesrc' (filesrc0) is not allowed"
printf '[camera a]\nuri=rtsp://127.0.0.1:1/a\npipeline=( cudahistogram ! identity dump=true )\n' > nested.conf
rejects nested.conf "nested.conf:3: [camera a] pipeline: element 'identity' (identity0) is not allowed"
printf '[camera a]\nuri=rtsp://127.0.0.1:1/a\npipeline=cudahistogram ! fakesink dump=true\n' > dump.conf
rejects dump.conf "dump.conf:3: [camera a] pipeline: element 'fakesink' (fakesink0) with dump=true would write every frame to the log"
# a tee to two analysers, a branch ended by fakesink, and conversions stay valid
printf '[camera a]\nuri=rtsp://127.0.0.1:1/a\npipeline=videoconvert ! video/x-raw,format=NV12 ! cudahistogram ! tee name=t t. ! queue ! cudamotionest ! fakesink t. ! queue\n' > tee.conf
timeout 20 "$run" --check tee.conf | grep -q "1 camera, valid" || fail "a tee to two analysers is refused: $(timeout 20 "$run" --check tee.conf 2>&1)"
[ ! -e "$dir/leak" ] && [ ! -e "$dir/leak-multi" ] || fail "a refused pipeline wrote a file"
printf '[camera a]\nuri=rtsp://127.0.0.1:1/a\npipeline=cudahistogram name=h#1\n' > hash.conf
rejects hash.conf "hash.conf:3: [camera a] pipeline: element 'h#1' cannot name an MQTT topic level"
printf '[runner]\ntopic-prefix=site/#\n[camera a]\nuri=rtsp://127.0.0.1:1/a\npipeline=cudasobel\n' > prefix.conf
rejects prefix.conf "prefix.conf:2: [runner] topic-prefix: cannot begin an MQTT topic"
printf '[runner]\nusername=u\npassword=secret\n' > inline.conf
rejects inline.conf "inline.conf:3: [runner] password: a password is never written in the config"
printf '[camera a]\nuri=rtsp://admin:secret@127.0.0.1:1/a\npipeline=cudasobel\n' > uripw.conf
rejects uripw.conf "uripw.conf:2: [camera a] uri: a password in the URI"
printf '[camera a]\nuri=rtsp://127.0.0.1:1/a\npipeline=cudahistogram\000 ! cudanoisemap\n' > nul.conf
rejects nul.conf "nul.conf:3: [camera a] pipeline: a NUL byte at column 23"
printf '[camera a]\nuri=rtsp://127.0.0.1:1/a\npipeline=cudahistogram name=h\377\n' > latin1.conf
rejects latin1.conf "latin1.conf:3: [camera a] pipeline: not UTF-8 (byte 0xFF at column 30)"
printf '\357\273\277[camera a]\nuri=rtsp://127.0.0.1:1/a\npipeline=cudasobel\n' > bom.conf
rejects bom.conf "bom.conf:1: a UTF-8 byte order mark"
: > empty.conf
rejects empty.conf "empty.conf: no camera ([camera NAME] groups)"
timeout 20 "$run" --check --allow-empty empty.conf | grep -q "0 cameras, valid" || fail "--allow-empty refused an empty config"
printf '[camera a]\nuri=file://%s/no-such-clip.mkv\npipeline=cudasobel\n' "$dir" > missing.conf
rejects missing.conf "missing.conf:2: [camera a] uri: no file $dir/no-such-clip.mkv"
printf '[runner]\ntopic-prefix=site//x/\n[camera a]\nuri=file://%s/clip.mkv\npipeline=cudasobel\n' "$dir" > levels.conf
rejects levels.conf "levels.conf:2: [runner] topic-prefix: 'site//x/' has an empty topic level"
$py -c "import sys; print('[runner]\\nclient-id=long\\ntopic-prefix=' + 'x' * 65520 + '\\n[camera a]\\nuri=file://$dir/clip.mkv\\npipeline=cudasobel')" > long.conf
rejects long.conf "long.conf:3: [runner] topic-prefix: with client-id 'long', too long for the runner's state topic"
printf '[camera a]\nuri=file://%s/clip.mkv\npipeline=cudasobel\n' "$dir" > port.conf
for p in -1 65536; do
  rc=0
  out=$(timeout 20 "$run" --check --metrics-port=$p port.conf 2>&1) || rc=$?
  [ $rc = 2 ] && grep -q -- "--metrics-port: 0 to 65535" <<<"$out" || fail "--metrics-port=$p: exit status $rc: $out"
done
# shards past what an int holds are refused, not wrapped around
for s in 0/99999999999 4294967296/2 1/4294967298; do
  rc=0
  out=$(timeout 20 "$run" --check --shard=$s port.conf 2>&1) || rc=$?
  [ $rc = 2 ] && grep -q -- "--shard $s: expected I/N" <<<"$out" || fail "--shard=$s: exit status $rc: $out"
done
if grep -rq secret --include='*.log' .; then fail "a password of a rejected config reached a log"; fi
echo "site: every claim held"
