#!/usr/bin/env bash
# The whole suite on GStreamer 1.26: inside a Debian 13 (trixie) root made with debootstrap from the
# Debian archive that apt already uses, with this checkout at /src and the host's /usr/local/cuda
# bind-mounted. Ends with 'N passed, N failed, N skipped'. Needs root (debootstrap, chroot, mount).
# The root and its build stay in CUV_TRIXIE_ROOT (default /var/cache/gst-cudavision/trixie) for the
# next run on this machine; a root that was not finished is made again. Extra arguments go to meson
# setup (default: -Dcuda-archs=90: the GPU tests skip in CI, and one architecture builds fastest).
set -eu
cd "$(dirname "$0")/.."
src=$PWD
root=${CUV_TRIXIE_ROOT:-/var/cache/gst-cudavision/trixie}
sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
if [ ! -f "$root/.cuv-complete" ]; then
  command -v debootstrap >/dev/null || {
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
  }
  # the archive apt uses here (deb822 sources or sources.list), else Debian's own
  mirror=$(grep -hoE '^(URIs:[[:space:]]*|deb[[:space:]]+)https?://[^[:space:]]+/debian/?' \
    /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list /etc/apt/sources.list 2>/dev/null |
    grep -oE 'https?://[^[:space:]]+' | head -n 1)
  mirror=${mirror:-http://deb.debian.org/debian}
  echo "making a Debian 13 root in $root from $mirror"
  $sudo rm -rf "$root"
  $sudo mkdir -p "$root"
  $sudo debootstrap --variant=minbase trixie "$root" "$mirror" >/dev/null
  $sudo touch "$root/.cuv-complete"
fi

mounted=()
cleanup () {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do $sudo umount -l "${mounted[$i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
bind () { $sudo mkdir -p "$root$2"; $sudo mount --bind "$1" "$root$2"; mounted+=("$root$2"); }
bind /proc /proc
bind /dev /dev
bind "$src" /src
[ -d /usr/local/cuda ] && bind "$(readlink -f /usr/local/cuda)" /usr/local/cuda
$sudo cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
[ $# -gt 0 ] || set -- -Dcuda-archs=90
$sudo chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
  CUV_BUILD_DIR=/var/build-1.26 bash -c 'cd /src && tests/run-tests.sh "$@"' bash "$@"
