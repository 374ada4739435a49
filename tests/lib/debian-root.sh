# Sourced by the scripts that run something in a Debian root of their own (tests/run-gst-1.24.sh,
# tests/run-gst-1.26.sh, tests/run-gst-1.28.sh, tests/run-deploy.sh). Needs root (debootstrap, chroot, mount).
# Everything these scripts keep for the next run on this machine (the Debian roots, the CUDA wheels,
# the deploy tools' virtual environment) lies under one folder, CUV_CACHE (default
# /var/cache/gst-cudavision): `CUV_CACHE=/tmp/fresh bash .ci/run` runs as a fresh machine would
# (docs/testing.md, "As a fresh machine").
#   cuv_step WHAT CMD [ARG...] runs CMD; where it fails, says which step failed and the command that
#                            retries it (cuv_retry), and returns its status
#   debian_root SUITE ROOT   makes ROOT with debootstrap from the archive apt already uses, unless a
#                            finished one is there (kept for the next run on this machine); a
#                            folder that holds files and that it did not begin is left alone (an
#                            error). `rm -rf ROOT` throws a root away: the next run makes it again
#   root_packages ROOT PKG... installs in ROOT (entered) the Debian packages it lacks
#   enter_root ROOT SRC [no-host-cuda]
#                            bind-mounts /proc, /dev, SRC at /src and (unless no-host-cuda) the host's
#                            /usr/local/cuda, unmounted when the script exits
#   cuda_wheels ROOT REQUIREMENTS PREFIX
#                            installs the CUDA toolchain wheels that REQUIREMENTS pins (exact versions,
#                            sha256) into PREFIX inside ROOT (their toolkit: PREFIX/nvidia/cu13). The
#                            host's pip downloads them for ROOT's python, as binaries for its machine
#                            (the wheels' manylinux_2_17, older than any root's glibc), into
#                            $CUV_CACHE/cuda-wheels (CUV_CUDA_WHEELS), and installs them from there;
#                            again only when REQUIREMENTS changed. ROOT must be entered: its python3
#                            is installed first where it lacks one
#   in_root ROOT CMD [ARG...] runs CMD under bash in ROOT with a clean environment (extra VAR=VALUE
#                            pairs before CMD go into it)
#   suite_in_root SUITE ROOT BUILD [MESON_ARG...]
#                            README's test command in a root of SUITE, this checkout at /src, its
#                            build in BUILD inside the root
sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
# set but empty (a failed $(mktemp -d)) would silently be the machine's own cache
if [ "${CUV_CACHE+set}" = set ] && [ -z "$CUV_CACHE" ]; then
  echo "${0##*/}: CUV_CACHE is set but empty: give a folder, or unset it for /var/cache/gst-cudavision" >&2
  exit 2
fi
CUV_CACHE=${CUV_CACHE:-/var/cache/gst-cudavision}
case $CUV_CACHE in
  /*) ;;
  *) echo "${0##*/}: CUV_CACHE=$CUV_CACHE: an absolute path, please (the scripts run from the checkout's root)" >&2; exit 2 ;;
esac
# the command that runs this script again as it was run: the cache variables it was given, its
# arguments, each quoted
cuv_retry=""
for cuv_var in CUV_CACHE CUV_GST124_ROOT CUV_GST_124_SRC CUV_TRIXIE_ROOT CUV_FORKY_ROOT CUV_BOOKWORM_ROOT CUV_CUDA_WHEELS; do
  [ -n "${!cuv_var:-}" ] && cuv_retry+="$cuv_var=$(printf '%q' "${!cuv_var}") "
done
cuv_retry+="bash $(printf '%q' "${0#$PWD/}")"
[ $# -gt 0 ] && cuv_retry+=" $(printf '%q ' "$@")"
cuv_step () {
  local what=$1 rc=0
  shift
  "$@" || rc=$?
  [ $rc = 0 ] || echo "${0##*/}: $what failed (exit $rc); retry with: $cuv_retry" >&2
  return $rc
}
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
  # a folder this script did not begin (no "$root.cuv-making" beside it) is never removed
  if [ -n "$(ls -A "$root" 2>/dev/null)" ] && [ ! -e "$root.cuv-making" ]; then
    echo "$root holds files but is no Debian root these scripts began: move it away, or name another root" >&2
    return 1
  fi
  echo "making a Debian $suite root in $root from $mirror"
  $sudo mkdir -p "$(dirname "$root")" && $sudo touch "$root.cuv-making" || return 1
  $sudo rm -rf "$root"
  $sudo mkdir -p "$root"
  $sudo debootstrap --variant=minbase "$suite" "$root" "$mirror" > "$root.debootstrap.log" 2>&1 || {
    tail -n 20 "$root.debootstrap.log"
    return 1
  }
  # a mirror that is a snapshot serves a testing Release past its Valid-Until date
  echo 'Acquire::Check-Valid-Until "false";' | $sudo tee "$root/etc/apt/apt.conf.d/99cuv-snapshot" >/dev/null
  $sudo touch "$root/.cuv-complete"
  $sudo rm -f "$root.cuv-making"
}
cuv_mounted=()
cuv_unmount () {
  local i
  for ((i = ${#cuv_mounted[@]} - 1; i >= 0; i--)); do $sudo umount -l "${cuv_mounted[$i]}" 2>/dev/null || true; done
}
enter_root () {
  local root=$1 src=$2 host_cuda=${3:-}
  trap cuv_unmount EXIT
  cuv_bind () { $sudo mkdir -p "$root$2"; $sudo mount --bind "$1" "$root$2"; cuv_mounted+=("$root$2"); }
  cuv_bind /proc /proc
  cuv_bind /dev /dev
  cuv_bind "$src" /src
  [ -d /usr/local/cuda ] && [ "$host_cuda" != no-host-cuda ] && cuv_bind "$(readlink -f /usr/local/cuda)" /usr/local/cuda
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
root_packages () {
  local root=$1 missing="" p
  shift
  for p in "$@"; do in_root "$root" "dpkg -s $p >/dev/null 2>&1" || missing="$missing $p"; done
  [ -z "$missing" ] && return 0
  echo "installing in $root:$missing"
  # an install that was interrupted (a run stopped mid-way) is finished first
  in_root "$root" "DEBIAN_FRONTEND=noninteractive dpkg --configure -a >/dev/null 2>&1; apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends$missing >/dev/null"
}
cuda_wheels () {
  local root=$1 reqs=$2 prefix=$3 cache=${CUV_CUDA_WHEELS:-$CUV_CACHE/cuda-wheels} py arch
  cmp -s "$reqs" "$root$prefix/.cuv-requirements" && return 0
  # the wheels are picked for the root's Python, which a minbase root does not have yet
  root_packages "$root" python3 || return 1
  python3 -m pip --version >/dev/null 2>&1 || {
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-pip >/dev/null
  }
  py=$(in_root "$root" 'python3 -c "import sys; print(\"%d.%d\" % sys.version_info[:2])"')
  arch=$(uname -m)
  local pick=(--no-deps --only-binary=:all: --require-hashes --implementation cp --python-version "$py"
    --platform "manylinux_2_17_$arch" --platform "manylinux2014_$arch" -r "$reqs")
  echo "CUDA toolchain wheels for python $py on $arch into $root$prefix"
  $sudo mkdir -p "$cache"
  # what the cache already holds needs no index (pip checks the hashes either way)
  $sudo python3 -m pip download -q "${pick[@]}" --no-index --find-links "$cache" -d "$cache" >/dev/null 2>&1 ||
    $sudo python3 -m pip download -q "${pick[@]}" -d "$cache" || return 1
  $sudo rm -rf "$root$prefix"
  $sudo python3 -m pip install -q --root-user-action=ignore "${pick[@]}" --no-index --find-links "$cache" \
    --target "$root$prefix" || return 1
  $sudo cp "$reqs" "$root$prefix/.cuv-requirements"
}
suite_in_root () {
  local suite=$1 root=$2 build=$3
  shift 3
  cuv_step "making the Debian $suite root" debian_root "$suite" "$root" || return
  enter_root "$root" "$PWD"
  # a build made from another checkout (each is /src here) is made again: ninja compares times, and
  # kept the other's newer objects of sources this checkout changed earlier
  [ "$(cat "$root$build/.cuv-checkout" 2>/dev/null)" = "$PWD" ] || $sudo rm -rf "$root$build"
  local rc=0
  cuv_step "the suite in the $suite root" \
    in_root "$root" CUV_BUILD_DIR="$build" 'cd /src && tests/run-tests.sh "$@"' bash "$@" || rc=$?
  [ -d "$root$build" ] && echo "$PWD" | $sudo tee "$root$build/.cuv-checkout" >/dev/null
  return $rc
}
