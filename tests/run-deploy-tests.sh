#!/usr/bin/env bash
# CI's deploy checks (docs/fleet.md): the Kubernetes manifests against Kubernetes' schemas
# (kubernetes-validate, in a virtual environment made here), and deploy/container-build.sh run as
# the Containerfile runs it, in a fresh Debian 12 root made with debootstrap (this checkout at /src,
# the host's /usr/local/cuda bind-mounted), then the installed plugin and runner tried there. Ends
# with 'N passed, N failed, N skipped'. Needs root (debootstrap, chroot, mount). The root stays in
# CUV_BOOKWORM_ROOT (default /var/cache/gst-cudavision/bookworm) for the next run on this machine.
set -u
cd "$(dirname "$0")/.."
src=$PWD
cache=/var/cache/gst-cudavision
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
need python3-venv

# the manifests
venv=$cache/kubernetes-validate
if [ ! -x "$venv/bin/kubernetes-validate" ]; then
  $sudo mkdir -p "$cache"
  $sudo python3 -m venv "$venv" && $sudo "$venv/bin/pip" install -q kubernetes-validate==1.37.0
fi
check "manifests validate (Kubernetes 1.37 schemas)" "$venv/bin/kubernetes-validate" --strict deploy/kubernetes/*.yaml

# the container's build steps in a fresh Debian 12
. tests/debian-root.sh
debian_root bookworm "$root"
enter_root "$root" "$src"
check "deploy/container-build.sh runtime, then build / (CUDA for sm_90)" \
  in_root "$root" 'cd /src && deploy/container-build.sh runtime && CUV_CUDA_ARCHS=90 deploy/container-build.sh build /'
check "the installed plugin registers" \
  in_root "$root" 'gst-inspect-1.0 cudasobel >/dev/null && gst-inspect-1.0 cudamotionest >/dev/null'
check "a pipeline runs on the installed plugin" in_root "$root" GST_REGISTRY_1_0=/tmp/registry.bin \
  'gst-launch-1.0 -q videotestsrc num-buffers=10 ! video/x-raw,format=NV12 ! cudasobel ! cudahistogram ! fakesink'
"$venv/bin/python" -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["data"]["site.conf"])' \
  deploy/kubernetes/configmap.yaml | $sudo tee "$root/tmp/site.conf" >/dev/null
check "the manifests' camera list passes cudavision-run --check" in_root "$root" 'cudavision-run --check /tmp/site.conf'
echo "$passed passed, $failed failed, 0 skipped"
[ "$failed" = 0 ]
