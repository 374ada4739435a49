#!/usr/bin/env bash
# The whole suite on GStreamer 1.24, the version of Ubuntu 24.04 LTS, with the CUDA kernels: neither
# Debian nor PyPI carries it, so it is built from the source of the monorepo's tag 1.24.13
# (tools/build-gst-1.24.sh) inside a Debian 12 root made with debootstrap from the archive apt
# already uses, installed there to /opt/gst-1.24, and the project is built against it with the
# host's CUDA toolkit (bind-mounted: the root is Debian 12, as the host). Ends with
# 'N passed, N failed, N skipped'. Needs root (debootstrap, chroot, mount).
# The source tarball is CUV_GST_124_SRC, else gstreamer-1.24.13-src.tar.xz in ../shared/gstreamer-src
# beside this checkout or in /work/shared/gstreamer-src; its hash is checked against the one below,
# and it is copied into the root. The root, GStreamer and the build stay in CUV_GST124_ROOT (default
# $CUV_CACHE/gst-1.24, CUV_CACHE's default /var/cache/gst-cudavision) for the next run on this
# machine; GStreamer is built again, whole, when the tarball, tools/build-gst-1.24.sh or meson
# changed, or an earlier build stopped half-way; our build is made again when GStreamer was. Extra
# arguments go to meson setup (default: -Dcuda-archs=90, as the other versions' parts).
set -eu
fail () {
  echo "${0##*/}: $*" >&2
  echo "0 passed, 1 failed, 0 skipped"
  exit 1
}
sha=2fa01e63c6909af97cd302b5efbbc3d05882d796880a675e8b06bf270d853180
name=gstreamer-1.24.13-src.tar.xz
# the tarball: CUV_GST_124_SRC as given (from where the script was started), else the shared copies
if [ "${CUV_GST_124_SRC+set}" = set ]; then
  [ -n "$CUV_GST_124_SRC" ] || fail "CUV_GST_124_SRC is set but empty: name the tarball, or unset it to look in ../shared/gstreamer-src"
  [ -f "$CUV_GST_124_SRC" ] || fail "CUV_GST_124_SRC=$CUV_GST_124_SRC: no such file"
  tarball=$(realpath "$CUV_GST_124_SRC")
fi
cd "$(dirname "$0")/.."
. tests/lib/debian-root.sh
root=${CUV_GST124_ROOT:-$CUV_CACHE/gst-1.24}
case $root in /*) ;; *) fail "CUV_GST124_ROOT=$root: an absolute path, please" ;; esac
if [ -z "${tarball:-}" ]; then
  for d in "$(realpath -m ../shared/gstreamer-src)" /work/shared/gstreamer-src; do
    [ -f "$d/$name" ] && { tarball=$d/$name; break; }
  done
  [ -n "${tarball:-}" ] || fail "no $name in $(realpath -m ../shared/gstreamer-src) or /work/shared/gstreamer-src (CUV_GST_124_SRC names another)"
fi
[ "$(sha256sum < "$tarball" | cut -d' ' -f1)" = "$sha" ] || fail "$tarball is not GStreamer 1.24.13's source as pinned here (sha256 $sha)"
prefix=/opt/gst-1.24
build=/var/build-1.24
meson_ver=1.4.1
meson_sha=d5acc3abae2dad3c70ddcbd10acac92b78b144d34d43f40f5b8ac31dfd8a826a
[ $# -gt 0 ] || set -- -Dcuda-archs=90

# a meson newer than Debian 12's 1.0.1 for GStreamer's own build: the wheel, pure Python, fetched
# by the host's pip (the root's pip may not reach the registry), checked and unpacked into the root
meson_in_root () {
  local dir=$root/opt/meson-$meson_ver cache=$CUV_CACHE/pip whl
  [ "$(in_root "$root" "/opt/meson-$meson_ver/bin/meson --version" 2>/dev/null)" = "$meson_ver" ] && return 0
  whl=$cache/meson-$meson_ver-py3-none-any.whl
  if [ ! -f "$whl" ] || [ "$(sha256sum < "$whl" | cut -d' ' -f1)" != "$meson_sha" ]; then
    python3 -m pip --version >/dev/null 2>&1 || {
      $sudo apt-get update -qq &&
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-pip >/dev/null
    } || return 1
    $sudo mkdir -p "$cache" || return 1
    echo "meson==$meson_ver --hash=sha256:$meson_sha" | $sudo tee "$cache/meson-requirements.txt" >/dev/null || return 1
    $sudo python3 -m pip download -q --no-deps --only-binary=:all: --require-hashes \
      -r "$cache/meson-requirements.txt" -d "$cache" || return 1
  fi
  $sudo rm -rf "$dir" && $sudo mkdir -p "$dir/bin" && $sudo python3 -m zipfile -e "$whl" "$dir/lib" || return 1
  # a script, not `python3 -m`: meson runs its own steps again through the script it was started by
  printf '#!/usr/bin/python3\nimport sys\nsys.path.insert(0, "%s/lib")\nfrom mesonbuild.mesonmain import main\nsys.exit(main())\n' \
    "${dir#"$root"}" | $sudo tee "$dir/bin/meson.new" >/dev/null && $sudo chmod +x "$dir/bin/meson.new" &&
    $sudo mv "$dir/bin/meson.new" "$dir/bin/meson"
}

cuv_step "making the Debian 12 root" debian_root bookworm "$root"
enter_root "$root" "$PWD"
# the verified tarball itself, copied in (nothing of the host's but the checkout and the toolkit is
# mounted there)
if ! cmp -s "$tarball" "$root/var/cache/$name"; then
  $sudo mkdir -p "$root/var/cache" && $sudo cp "$tarball" "$root/var/cache/$name" || fail "copying $tarball into $root failed"
fi
# Debian's own GStreamer must not be in this root: its Python overrides and libraries would be found
# before those of /opt/gst-1.24
in_root "$root" "dpkg -s libgstreamer1.0-0 >/dev/null 2>&1" &&
  fail "$root holds Debian's GStreamer (libgstreamer1.0-0): name another root (CUV_GST124_ROOT), or rm -rf this one"
# GStreamer's build dependencies (Debian 12's GStreamer itself is never installed in this root);
# libgl-dev: 1.24's installed CUDA headers include the toolkit's cudaGL.h, which includes GL/gl.h
# (on Debian and Ubuntu the GStreamer development packages bring it, for GstGL's headers)
cuv_step "GStreamer 1.24's build tools and libraries" root_packages "$root" build-essential ninja-build pkg-config \
  flex bison python3 python3-dev libglib2.0-dev gobject-introspection libgirepository1.0-dev python-gi-dev python3-gi \
  liborc-0.4-dev libpango1.0-dev libpng-dev libvpx-dev libopenh264-dev zlib1g-dev libgl-dev ca-certificates
cuv_step "meson $meson_ver for GStreamer's build" meson_in_root
cuv_step "GStreamer 1.24.13 from source into $prefix" \
  in_root "$root" 'cd /src && tools/build-gst-1.24.sh "/var/cache/$1" "$2" "$3"' bash "$name" "$prefix" "/opt/meson-$meson_ver/bin/meson"
# our build, made from another checkout or against another GStreamer build, is made again (ninja
# compares times, as in the 1.26 part; meson does not look at its dependencies again)
made_from="$PWD $(cat "$root$prefix/.cuv-built")"
[ "$(cat "$root$build/.cuv-checkout" 2>/dev/null)" = "$made_from" ] || $sudo rm -rf "$root$build"
arch=x86_64-linux-gnu
rc=0
cuv_step "the suite on GStreamer 1.24" in_root "$root" CUV_BUILD_DIR="$build" CUV_GST_PREFIX="$prefix" \
  PKG_CONFIG_PATH="$prefix/lib/$arch/pkgconfig" LD_LIBRARY_PATH="$prefix/lib/$arch" \
  GST_PLUGIN_SYSTEM_PATH_1_0="$prefix/lib/$arch/gstreamer-1.0" \
  GST_PLUGIN_SCANNER="$prefix/libexec/gstreamer-1.0/gst-plugin-scanner" \
  GI_TYPELIB_PATH="$prefix/lib/$arch/girepository-1.0" PYTHONPATH="$prefix/lib/python3/dist-packages" \
  'export PATH='"$prefix"'/bin:$PATH; cd /src && tests/run-tests.sh "$@"' bash "$@" || rc=$?
[ -d "$root$build" ] && echo "$made_from" | $sudo tee "$root$build/.cuv-checkout" >/dev/null
exit $rc
