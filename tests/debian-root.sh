# Sourced by the scripts that run something in a Debian root of their own (tests/run-tests-1.26.sh,
# tests/run-deploy-tests.sh). Needs root (debootstrap, chroot, mount).
#   debian_root SUITE ROOT   makes ROOT with debootstrap from the archive apt already uses, unless a
#                            finished one is there (kept for the next run on this machine)
#   enter_root ROOT SRC      bind-mounts /proc, /dev, SRC at /src and the host's /usr/local/cuda,
#                            unmounted when the script exits
#   in_root ROOT CMD [ARG...] runs CMD under bash in ROOT with a clean environment (extra VAR=VALUE
#                            pairs before CMD go into it)
#   suite_in_root SUITE ROOT BUILD [MESON_ARG...]
#                            README's test command in a root of SUITE, this checkout at /src, its
#                            build in BUILD inside the root
sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
debian_root () {
  local suite=$1 root=$2 mirror
  [ -f "$root/.cuv-complete" ] && return 0
  command -v debootstrap >/dev/null || {
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
  }
  # the archive apt uses here (deb822 sources or sources.list), else Debian's own
  mirror=$(grep -hoE '^(URIs:[[:space:]]*|deb[[:space:]]+)https?://[^[:space:]]+/debian/?' \
    /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list /etc/apt/sources.list 2>/dev/null |
    grep -oE 'https?://[^[:space:]]+' | head -n 1)
  mirror=${mirror:-http://deb.debian.org/debian}
  echo "making a Debian $suite root in $root from $mirror"
  $sudo rm -rf "$root"
  $sudo mkdir -p "$root"
  $sudo debootstrap --variant=minbase "$suite" "$root" "$mirror" >/dev/null || return 1
  # a mirror that is a snapshot serves a testing Release past its Valid-Until date
  echo 'Acquire::Check-Valid-Until "false";' | $sudo tee "$root/etc/apt/apt.conf.d/99cuv-snapshot" >/dev/null
  $sudo touch "$root/.cuv-complete"
}
cuv_mounted=()
cuv_unmount () {
  local i
  for ((i = ${#cuv_mounted[@]} - 1; i >= 0; i--)); do $sudo umount -l "${cuv_mounted[$i]}" 2>/dev/null || true; done
}
enter_root () {
  local root=$1 src=$2
  trap cuv_unmount EXIT
  cuv_bind () { $sudo mkdir -p "$root$2"; $sudo mount --bind "$1" "$root$2"; cuv_mounted+=("$root$2"); }
  cuv_bind /proc /proc
  cuv_bind /dev /dev
  cuv_bind "$src" /src
  [ -d /usr/local/cuda ] && cuv_bind "$(readlink -f /usr/local/cuda)" /usr/local/cuda
  $sudo cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
}
in_root () {
  local root=$1
  shift
  local env=()
  while [[ $# -gt 1 && $1 =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; do env+=("$1"); shift; done
  $sudo chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    "${env[@]}" bash -c "$@"
}
suite_in_root () {
  local suite=$1 root=$2 build=$3
  shift 3
  debian_root "$suite" "$root"
  enter_root "$root" "$PWD"
  in_root "$root" CUV_BUILD_DIR="$build" 'cd /src && tests/run-tests.sh "$@"' bash "$@"
}
