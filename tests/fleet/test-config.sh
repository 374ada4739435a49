#!/usr/bin/env bash
# The runner's config reader alone (runner/siteconfig.cpp; docs/fleet.md, "Keys"): no broker, no
# camera served. Each config here must be refused by `--check` with exit status 2 and a message
# that names its file, line, group and key, or be taken as valid. What a key means at the run is
# test-fleet.sh's and test-site.sh's; here: every way of writing a key wrong, and that the line
# said is the key's own (a key of the same name in another group, spaces around it, CRLF ends).
#   tests/fleet/test-config.sh BUILD_DIR
set -eu
build=$(cd "$1" && pwd)
run=$build/runner/cudavision-run
[ -x "$run" ] || { echo "no cudavision-run in $build"; exit 77; }
# a camera's URI needs a GStreamer source for its scheme
gst-inspect-1.0 rtspsrc >/dev/null 2>&1 || { echo "no rtspsrc here"; [ -n "${CUV_TOOLS_INSTALLED:-}" ] && exit 1; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export GST_PLUGIN_PATH_1_0=${GST_PLUGIN_PATH_1_0:-$build/gst} GST_REGISTRY_1_0=$dir/registry.bin
unset CUDAVISION_BROKER_PASSWORD CUDAVISION_CAMERA_SECRETS
cd "$dir"
failures=0
fail () { echo "FAIL: $*"; failures=$((failures + 1)); }
cam='uri=rtsp://127.0.0.1:1/cam\npipeline=cudasobel\n'
# rejects NAME MESSAGE TEXT (printf format, then its arguments): --check exits 2 and says MESSAGE
rejects () {
  local name=$1 message=$2 out rc=0
  shift 2
  # shellcheck disable=SC2059
  printf "$@" > "$name"
  out=$(timeout 20 "$run" --check "$name" 2>&1) || rc=$?
  if [ $rc != 2 ] || ! grep -qF -- "$message" <<<"$out"; then
    fail "$name: exit status $rc, not 2 with: $message"
    echo "    got: $out"
  else
    echo "ok: $message"
  fi
}
# accepts NAME TEXT...: --check takes it
accepts () {
  local name=$1 out rc=0
  shift
  # shellcheck disable=SC2059
  printf "$@" > "$name"
  out=$(timeout 20 "$run" --check "$name" 2>&1) || rc=$?
  if [ $rc != 0 ] || ! grep -q "valid" <<<"$out"; then
    fail "$name is refused (exit status $rc): $out"
  else
    echo "ok: $name valid"
  fi
}

echo "== valid: every [runner] key, spaces around keys and values, comments, CRLF line ends"
printf 'secret\n' > pw
printf 'camera secret\n' > cpw
accepts all.conf '# a site\n[runner]\nbroker-host=broker.example\nbroker-port=8883\ntopic-prefix=site/a\nclient-id=r1\nmetrics-address=127.0.0.1\nmetrics-port=0\nmetrics-connections=2\nmetrics-idle-timeout-s=3600\nqueue-limit=10000000\nrestart-min-ms=10\nrestart-max-ms=10\nfailing-after=1000\nstall-ms=100\nusername=u\npassword-file=%s/pw\nmqtt-version=3.1.1\nmax-message-bytes=268435455\ntls=true\ntls-insecure=true\n\n[camera a]\n  uri = rtsp://127.0.0.1:1/cam\n# pipeline=nosuchelement\npipeline=cudasobel\ncuda-device-id=-1\nusername=viewer\npassword-file=%s/cpw\nloop=false\n' "$dir" "$dir"
accepts crlf.conf '[runner]\r\nqueue-limit=5\r\n[camera a]\r\nuri=rtsp://127.0.0.1:1/cam\r\npipeline=cudasobel\r\n'
accepts form-feed.conf '[camera a]\n'"$cam"'\f[camera b]\n'"$cam"
accepts tls-false.conf '[runner]\ntls=false\n[camera a]\n'"$cam"
accepts mqtt5.conf '[runner]\nmqtt-version=5\ntls=1\n[camera a]\n'"$cam"

echo "== the defaults (runner/siteconfig.cpp's key tables), with no [runner] and with an empty one"
for runner in "" '[runner]\n'; do
  printf "$runner"'[camera a]\n'"$cam" > defaults.conf
  out=$(timeout 3 "$run" --metrics-port=0 defaults.conf 2>&1 | head -n 1) || true
  grep -qF "1 of 1 camera, broker 127.0.0.1:1883, no metrics server" <<<"$out" && echo "ok: defaults${runner:+ (an empty [runner])}" ||
    fail "the defaults${runner:+ with an empty [runner]}: $out"
done

echo "== a key: unknown, of the wrong type, out of range, empty, missing"
rejects unknown.conf "unknown.conf:4: [camera x] fps: unknown key" '[camera x]\n'"$cam"'fps=3\n'
rejects unknown-spaces.conf "unknown-spaces.conf:5: [camera x] fps: unknown key" '[camera x]\n'"$cam"'\n  fps = 3\n'
rejects unknown-runner.conf "unknown-runner.conf:3: [runner] broker: unknown key" '[runner]\nbroker-host=h\nbroker=h\n[camera a]\n'"$cam"
rejects group.conf "group.conf:4: [cameras]: unknown group: [runner] and [camera NAME] are known" '[camera a]\n'"$cam"'[cameras]\nuri=x\n'
rejects word.conf "word.conf:3: [runner] queue-limit: 'lots' is not a whole number from 1 to 10000000" '[runner]\n\nqueue-limit=lots\n[camera a]\n'"$cam"
rejects port.conf "port.conf:2: [runner] broker-port: '0' is not a whole number from 1 to 65535" '[runner]\nbroker-port=0\n[camera a]\n'"$cam"
rejects port-big.conf "port-big.conf:2: [runner] metrics-port: '65536' is not a whole number from 0 to 65535" '[runner]\nmetrics-port=65536\n[camera a]\n'"$cam"
rejects trailing.conf "trailing.conf:2: [runner] stall-ms: '5000 ' is not a whole number from 100 to 3600000" '[runner]\nstall-ms=5000 \n[camera a]\n'"$cam"
rejects huge.conf "huge.conf:2: [runner] max-message-bytes: '99999999999999999999' is not a whole number from 0 to 268435455" '[runner]\nmax-message-bytes=99999999999999999999\n[camera a]\n'"$cam"
rejects device.conf "device.conf:3: [camera a] cuda-device-id: '1025' is not a whole number from -1 to 1024" '[camera a]\nuri=rtsp://127.0.0.1:1/cam\ncuda-device-id=1025\npipeline=cudasobel\n'
rejects bool.conf "bool.conf:2: [runner] tls: not true or false" '[runner]\ntls=yes\n[camera a]\n'"$cam"
rejects loop.conf "loop.conf:4: [camera a] loop: not true or false" '[camera a]\n'"$cam"'loop=sometimes\n'
rejects mqtt.conf "mqtt.conf:2: [runner] mqtt-version: '4' is neither 5 nor 3.1.1" '[runner]\nmqtt-version=4\n[camera a]\n'"$cam"
rejects address.conf "address.conf:2: [runner] metrics-address: 'localhost' is not an IP address" '[runner]\nmetrics-address=localhost\n[camera a]\n'"$cam"
rejects empty-value.conf "empty-value.conf:2: [camera a] uri: empty" '[camera a]\nuri=\npipeline=cudasobel\n'
rejects empty-host.conf "empty-host.conf:3: [runner] broker-host: empty" '[runner]\n\nbroker-host=  \n[camera a]\n'"$cam"
rejects no-uri.conf "no-uri.conf:4: [camera z] uri: missing" '[camera a]\n'"$cam"'[camera z]\npipeline=cudasobel\n'
rejects no-pipeline.conf "no-pipeline.conf:1: [camera z] pipeline: missing" '[camera z]\nuri=rtsp://127.0.0.1:1/cam\n'
rejects name.conf "name.conf:4: [camera a b]: a camera's name is one MQTT topic level" '[camera a]\n'"$cam"'[camera a b]\n'"$cam"
rejects prefix.conf "prefix.conf:2: [runner] topic-prefix: '/site' has an empty topic level" '[runner]\ntopic-prefix=/site\n[camera a]\n'"$cam"
rejects client.conf "client.conf:3: [runner] client-id: cannot be an MQTT topic level" '[runner]\nbroker-port=1\nclient-id=a/b\n[camera a]\n'"$cam"

echo "== keys that depend on each other"
rejects restart.conf "restart.conf:3: [runner] restart-max-ms: smaller than restart-min-ms" '[runner]\nrestart-min-ms=1000\nrestart-max-ms=999\n[camera a]\n'"$cam"
rejects tls.conf "tls.conf:3: [runner] tls: false, but a tls-* key asks for TLS: remove one of them" '[runner]\ntls-insecure=true\ntls=false\n[camera a]\n'"$cam"
rejects pair.conf "pair.conf:1: [runner] tls-key-file: missing: a client certificate needs both tls-cert-file and tls-key-file" '[runner]\ntls-cert-file=%s/pw\n[camera a]\n'"$cam" "$dir"
rejects tls-none.conf "tls-none.conf:2: [runner] tls-ca-file: no file '$dir/nothing'" '[runner]\ntls-ca-file=%s/nothing\n[camera a]\n'"$cam" "$dir"
rejects tls-dir.conf "tls-dir.conf:2: [runner] tls-ca-file: '$dir' is not a file here" '[runner]\ntls-ca-file=%s\n[camera a]\n'"$cam" "$dir"

echo "== credentials: from files or the environment, never the config"
rejects inline.conf "inline.conf:5: [camera a] password: a password is never written in the config: use password-file" '[camera a]\n'"$cam"'username=u\npassword=secret\n'
rejects inline-runner.conf "inline-runner.conf:2: [runner] password: a password is never written in the config: use password-file or the environment variable CUDAVISION_BROKER_PASSWORD" '[runner]\npassword=secret\n[camera a]\n'"$cam"
rejects nouser.conf "nouser.conf:1: [runner] username: missing: a password is given (password-file) but no username" '[runner]\npassword-file=%s/pw\n[camera a]\n'"$cam" "$dir"
printf '[runner]\nbroker-port=1884\n[camera a]\n'"$cam" > env.conf
rc=0; out=$(CUDAVISION_BROKER_PASSWORD=x timeout 20 "$run" --check env.conf 2>&1) || rc=$?
[ $rc = 2 ] && grep -qF "env.conf:1: [runner] username: missing: a password is given (CUDAVISION_BROKER_PASSWORD) but no username" <<<"$out" ||
  fail "a password in the environment without a username: exit status $rc: $out"
: > empty-pw
rejects empty-pw.conf "empty-pw.conf:3: [runner] password-file: '$dir/empty-pw' does not hold a password on its first line" '[runner]\nusername=u\npassword-file=%s/empty-pw\n[camera a]\n'"$cam" "$dir"
mkfifo fifo
rejects fifo-pw.conf "fifo-pw.conf:3: [runner] password-file: '$dir/fifo': not a regular file" '[runner]\nusername=u\npassword-file=%s/fifo\n[camera a]\n'"$cam" "$dir"
rejects zero-pw.conf "zero-pw.conf:3: [runner] password-file: '/dev/zero': a file of the kernel's (/proc, /sys, /dev)" '[runner]\nusername=u\npassword-file=/dev/zero\n[camera a]\n'"$cam"
rejects control.conf "control.conf:2: [runner] username: a control character in it" '[runner]\nusername=a\\tb\n[camera a]\n'"$cam"
rejects camera-pw.conf "camera-pw.conf:6: [camera a] password-file: '/etc/hostname' is not in a folder a camera's password file may be in" '[runner]\nusername=u\npassword-file=%s/pw\n[camera a]\nusername=v\npassword-file=/etc/hostname\n'"$cam" "$dir"
rejects camera-runner-pw.conf "camera-runner-pw.conf:6: [camera a] password-file: '$dir/pw' is the runner's [runner] password-file" '[runner]\nusername=u\npassword-file=%s/pw\n[camera a]\nusername=v\npassword-file=%s/pw\n'"$cam" "$dir" "$dir"

echo "== what GLib's key files take silently: a second group, a second value, a localized key"
rejects dup.conf "dup.conf:4: [camera a]: a second group of that name (the first is on line 1)" '[camera a]\n'"$cam"'[camera a]\n'"$cam"
rejects dup-ff.conf "dup-ff.conf:4: [camera a]: a second group of that name (the first is on line 1)" '[camera a]\n'"$cam"'\f[camera a]\n'"$cam"
rejects dup-runner.conf "dup-runner.conf:3: [runner]: a second group of that name (the first is on line 1)" '[runner]\nqueue-limit=5\n[runner]\nqueue-limit=6\n[camera a]\n'"$cam"
rejects dup-key.conf "dup-key.conf:4: [camera a] uri: a second value for that key (the first is on line 2)" '[camera a]\n'"$cam"'uri=rtsp://127.0.0.1:1/other\n'
rejects dup-key-spaces.conf "dup-key-spaces.conf:4: [camera a] uri: a second value for that key (the first is on line 2)" '[camera a]\n'"$cam"'  uri\t= rtsp://127.0.0.1:1/other\n'
# GKeyFile trims a form feed after a key's name as it trims a space
rejects dup-key-ff.conf "dup-key-ff.conf:4: [camera a] uri: a second value for that key (the first is on line 2)" '[camera a]\n'"$cam"'uri\f=rtsp://127.0.0.1:1/other\n'
rejects localized.conf "localized.conf:4: [camera a] uri[de]: a localized key (key[locale]) is not taken: one value a key" '[camera a]\n'"$cam"'uri[de]=rtsp://127.0.0.1:1/other\n'

echo "== the line is the key's own: the same key in another group, CRLF ends, a group's line"
rejects other-group.conf "other-group.conf:8: [camera b] uri: a URI holds no space" '[camera a]\n'"$cam"'\n[camera b]\npipeline=cudasobel\n# uri=x\nuri=rtsp://127.0.0.1:1/a b\n'
rejects crlf-bad.conf "crlf-bad.conf:5: [camera b] uri: a camera is not read from nosuch://" '[camera a]\r\n'"${cam//\\n/\\r\\n}"'[camera b]\r\nuri=nosuch://127.0.0.1:1/a\r\npipeline=cudasobel\r\n'
rejects pipeline.conf "pipeline.conf:6: [camera b] pipeline: no element \"nosuchelement\"" '[camera a]\n'"$cam"'[camera b]\nuri=rtsp://127.0.0.1:1/a\npipeline=nosuchelement\n'
rejects syntax.conf "syntax.conf:4: Key file contains line" '[camera a]\n'"$cam"'noequals\n'

echo "== hostile bytes: control characters, UTF-16, escapes GKeyFile does not know, what a message echoes"
# an ESC before a key's name: it was said as a localized key ('[' of the escape), ESC and all
rejects esc-key.conf "esc-key.conf:4: [camera a]: a control character (0x1B) at column 1" '[camera a]\n'"$cam"'\033[31mfps=3\n'
rejects esc-value.conf "esc-value.conf:2: [runner] queue-limit: a control character (0x1B) at column 14" '[runner]\nqueue-limit=5\033[2J\n[camera a]\n'"$cam"
# GKeyFile does not trim a vertical tab: '\vuri' was 'uri: unknown key', and before '[' a line before the first group
rejects vt-key.conf "vt-key.conf:2: [camera a]: a control character (0x0B) at column 4" '[camera a]\nuri\v=rtsp://127.0.0.1:1/cam\npipeline=cudasobel\n'
rejects vt-group.conf "vt-group.conf:1: a control character (0x0B) at column 1" '\v[camera a]\n'"$cam"
rejects utf16.conf "utf16.conf:1: a UTF-16 byte order mark: save the file as UTF-8" '\377\376[\0c\0'
# GKeyFile kept an escape it does not know as written, and dropped a backslash that ends a value
rejects escape.conf "escape.conf:3: [camera a] pipeline: '\\q' is not an escape the config takes" '[camera a]\nuri=rtsp://127.0.0.1:1/cam\npipeline=cudasobel\\q\n'
rejects backslash.conf "backslash.conf:3: [camera a] pipeline: a backslash ends the value" '[camera a]\nuri=rtsp://127.0.0.1:1/cam\npipeline=cudasobel\\\n'
# a value's \n does not start a line of the log of its own
rejects newline.conf "newline.conf:2: [runner] mqtt-version: '5\\x0Acudavision-run: valid' is neither 5 nor 3.1.1" '[runner]\nmqtt-version=5\\ncudavision-run: valid\n[camera a]\n'"$cam"
[ "$(timeout 20 "$run" --check newline.conf 2>&1 | wc -l)" = 1 ] || fail "a value's \\n made a second line of the log"
# a 1 MiB camera name (or line, or pipeline) is not echoed whole
{ printf '[camera '; head -c 1048576 /dev/zero | tr '\0' 'a'; printf ']\n'"$cam"; } > long-name.conf
rc=0; out=$(timeout 20 "$run" --check long-name.conf 2>&1) || rc=$?
[ $rc = 2 ] && [ ${#out} -lt 2000 ] && grep -qF "bytes left out ...] " <<<"$out" && grep -qF "a camera's name is at most 1024 bytes (this one is 1048576)" <<<"$out" &&
  echo "ok: a 1 MiB camera name is cut in the message" || fail "a 1 MiB camera name: exit status $rc, ${#out} bytes: ${out:0:300}"

echo "== files and URIs: a NUL in a password, a relative path, a file:// host, a server without a host"
printf 'sec\0ret\n' > nul-pw
rejects nul-pw.conf "nul-pw.conf:3: [runner] password-file: '$dir/nul-pw': a NUL byte in the password (at byte 4 of its first line)" '[runner]\nusername=u\npassword-file=%s/nul-pw\n[camera a]\n'"$cam" "$dir"
# a relative path is the config's folder's, whatever the working folder (a camera's password file was
# refused as outside the config's folder when the runner ran elsewhere)
mkdir -p site && printf 'cam\n' > site/cam-pw && printf 'broker\n' > site/broker-pw
printf '[runner]\nusername=u\npassword-file=broker-pw\n[camera a]\n'"$cam"'username=v\npassword-file=cam-pw\n' > site/relative.conf
rc=0; out=$(timeout 20 "$run" --check site/relative.conf 2>&1) || rc=$?
[ $rc = 0 ] && echo "ok: relative password files are the config's folder's" || fail "relative password files: exit status $rc: $out"
rejects host-file.conf "host-file.conf:2: [camera a] uri: a file:// URI names a file of this host, not of 'elsewhere'" '[camera a]\nuri=file://elsewhere/srv/a.mkv\npipeline=cudasobel\n'
rejects hash-file.conf "hash-file.conf:2: [camera a] uri: a '#' in a file URI starts a fragment, which names no file: percent-encode it as %23" '[camera a]\nuri=file:///srv/a.mkv#x\npipeline=cudasobel\n'
rejects upper.conf "upper.conf:2: [camera a] uri: 'RTSP:': write the URI's scheme in lower case" '[camera a]\nuri=RTSP://127.0.0.1/a\npipeline=cudasobel\n'
rejects no-host.conf "no-host.conf:2: [camera a] uri: no host in the URI (rtsp://HOST/...)" '[camera a]\nuri=rtsp:///a\npipeline=cudasobel\n'
rejects data.conf "data.conf:2: [camera a] uri: a camera is not read from data: (" '[camera a]\nuri=data:video/mp4;base64,AAAA\npipeline=cudasobel\n'

echo "== a pipeline GStreamer's parser would take minutes over, caps at an end"
rejects long-pipeline.conf "long-pipeline.conf:3: [camera a] pipeline: longer than 4096 bytes (16009)" '[camera a]\nuri=rtsp://127.0.0.1:1/cam\npipeline=%s\n' "$(printf 'queue ! %.0s' $(seq 2000))cudasobel"
rejects nested.conf "nested.conf:3: [camera a] pipeline: bins ( ) nested deeper than 16 (column 17)" '[camera a]\nuri=rtsp://127.0.0.1:1/cam\npipeline=%s\n' "$(printf '(%.0s' $(seq 100))cudasobel$(printf ')%.0s' $(seq 100))"
accepts nested-caps.conf '[camera a]\nuri=rtsp://127.0.0.1:1/cam\npipeline=((cudasobel ! video/x-raw,format=(string)NV12 ! queue)) ! capsfilter caps="video/x-raw,format=(string)NV12"\n'
rejects caps-last.conf 'caps-last.conf:3: [camera a] pipeline: no element "video" (caps stand between two elements' '[camera a]\nuri=rtsp://127.0.0.1:1/cam\npipeline=cudasobel ! video/x-raw,format=NV12\n'

echo "== the config file itself: a regular file, bounded"
rc=0; out=$(timeout 20 "$run" --check "$dir/fifo" 2>&1) || rc=$?
[ $rc = 2 ] && grep -qF "'$dir/fifo': not a regular file" <<<"$out" || fail "a FIFO as the config: exit status $rc: $out"
rc=0; out=$(timeout 20 "$run" --check "$dir" 2>&1) || rc=$?
[ $rc = 2 ] && grep -qF "'$dir': not a regular file" <<<"$out" || fail "a folder as the config: exit status $rc: $out"
{ printf '[camera a]\n'"$cam"; head -c $((16 * 1024 * 1024)) /dev/zero | tr '\0' '#'; } > big.conf
rc=0; out=$(timeout 20 "$run" --check big.conf 2>&1) || rc=$?
[ $rc = 2 ] && grep -qF "'big.conf': larger than 16777216 bytes" <<<"$out" || fail "a config over 16 MiB: exit status $rc: $out"

[ $failures = 0 ] || { echo "$failures claims failed"; exit 1; }
echo "config: every claim held"
