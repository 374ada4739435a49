#!/usr/bin/env bash
# Builds, here on Debian 12 (x86-64), a PyGObject for the GPU machine's Python (Ubuntu 24.04's
# CPython 3.12, with numpy and torch but no PyGObject and no GStreamer), into .devpy/ (git-ignored
# through .git/info/exclude). That machine can't reach a network and the device README's wheel
# route has no PyGObject wheel (PyPI has PyGObject as source only), so this compiles one:
#   - PyGObject 3.42.2 (Debian 12's version, from its PyPI sdist): gi/_gi.cpython-312-x86_64-linux-gnu.so,
#     built against the GPU machine's Python headers (first argument: a tar of its
#     /usr/include/python3.12), not this machine's 3.11, and its pure-Python gi package;
#   - gst-python 1.22.0's override module gi/overrides/_gi_gst (gstmodule.c, read at build time
#     from the GStreamer monorepo's mirror) and its Gst, GstVideo, GstAudio, GstPbutils overrides;
#   - the typelibs that gi needs for GLib, Gio, Gst, GstBase, GstVideo, GstApp, GstAudio, GstCuda
#     and the rest, from Debian 12 (GStreamer 1.22);
#   - libgirepository-1.0 and the GLib, libffi and libgstreamer libraries that the two extensions
#     link (Debian 12's, the same builds as .devbundle/lib's).
# The GStreamer libraries the typelibs name (libgstvideo, libgstcuda, ...) and their own needs come
# from .devbundle (tools/bundle-debian.sh). On the GPU machine, from the project root:
#   . .devbundle/env.sh; . .devpy/env.sh; python3 -c 'import gi; gi.require_version("Gst", "1.0"); ...'
# .devpy/env.sh sets PYTHONPATH=.devpy/site, GI_TYPELIB_PATH=.devpy/typelib and puts .devpy/lib
# first on LD_LIBRARY_PATH.
# Usage: tools/gpu-python.sh PYINC.tgz [1.22|1.24]   (a tar holding python3.12/ = /usr/include/python3.12
# there; if it also holds x86_64-linux-gnu/python3.12/pyconfig.h, that is used, else see PYCONFIG_H
# below; pyenv's CPython 3.12 include folder, tarred, serves: the ABI is one across 3.12's releases).
# With 1.24, for the GStreamer that tests/run-gst-1.24.sh builds from source: gst-python's
# overrides come from that source (the verified tarball it keeps in its root), the GStreamer typelibs and the headers
# _gi_gst is compiled against from its root's /opt/gst-1.24, and libgstreamer is left to
# .devbundle-1.24 (tools/bundle-1.24.sh); the result goes to .devpy-1.24. The PyGObject is the same
# for both versions.
# Rebuilds the output from scratch on every run; the PyGObject sdist is kept in ~/.cache/gst-cudavision.
# pkg-config's flags are split on purpose; '$ORIGIN' is for the linker, not the shell.
# shellcheck disable=SC2046,SC2016
set -euo pipefail
cd "$(dirname "$0")/.."

pyinc_tgz=${1:?usage: tools/gpu-python.sh PYINC.tgz (a tar of python3.12/ = /usr/include/python3.12 of the GPU machine)}
pyinc_tgz=$(realpath "$pyinc_tgz")
gst_version=${2:-1.22}
pygobject_version=3.42.2
pygobject_sha256=21524cef33100c8fd59dc135948b703d79d303e368ce71fa60521cc971cd8aa7
gst_python_tag=1.22.0
gst_mirror=${GST_MIRROR:-/work/.mirror/GStreamer+gstreamer/repo}
ext=.cpython-312-x86_64-linux-gnu.so
typelibs="GLib-2.0 GObject-2.0 GModule-2.0 Gio-2.0 Gst-1.0 GstBase-1.0 GstVideo-1.0 GstApp-1.0 GstAudio-1.0
  GstTag-1.0 GstPbutils-1.0 GstGL-1.0 GstCuda-1.0 CudaGst-1.0 GstCheck-1.0"
girdir=/usr/lib/x86_64-linux-gnu/girepository-1.0
gst_girdir=$girdir
out=.devpy
case $gst_version in
  1.22) ;;
  1.24)
    if [ "${CUV_CACHE+set}" = set ] && [ -z "$CUV_CACHE" ]; then
      echo "gpu-python.sh: CUV_CACHE is set but empty: give the folder run-gst-1.24.sh used, or unset it" >&2
      exit 2
    fi
    out=.devpy-1.24
    root=${CUV_GST124_ROOT:-${CUV_CACHE:-/var/cache/gst-cudavision}/gst-1.24}
    gst_prefix=$root/opt/gst-1.24
    gst_girdir=$gst_prefix/lib/x86_64-linux-gnu/girepository-1.0
    # no GstGL in that build (gl disabled); GstAnalytics is new in 1.24
    typelibs="${typelibs/GstGL-1.0 /} GstAnalytics-1.0"
    # the source that GStreamer was built from: the verified copy run-gst-1.24.sh keeps in the root
    gst_tar=$root/var/cache/gstreamer-1.24.13-src.tar.xz
    [ -f "$gst_prefix/.cuv-built" ] && [ -f "$gst_tar" ] ||
      { echo "no GStreamer 1.24 in $root: run tests/run-gst-1.24.sh first" >&2; exit 1; }
    ;;
  *) echo "usage: tools/gpu-python.sh PYINC.tgz [1.22|1.24]" >&2; exit 2 ;;
esac

# What the build needs from Debian, installed with the project's own (tools/deps.sh)
CUV_EXTRA_PKGS="gcc libglib2.0-dev libgirepository1.0-dev libffi-dev gir1.2-gstreamer-1.0
  gir1.2-gst-plugins-base-1.0 gir1.2-gst-plugins-bad-1.0 python3-pip python3-setuptools python3-wheel" bash tools/deps.sh
[ "$gst_version" = 1.24 ] || git --git-dir="$gst_mirror" rev-parse -q --verify "$gst_python_tag^{commit}" >/dev/null ||
  { echo "no tag $gst_python_tag in $gst_mirror (set GST_MIRROR to a GStreamer monorepo git dir)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/gpu-python.XXXXXX")
trap 'rm -rf "$work"' EXIT

# PyGObject's sdist. pip prepares its metadata (running its setup.py), which needs setuptools and
# wheel without build isolation (isolation would build pycairo): Debian's python3 has both.
cache=${XDG_CACHE_HOME:-$HOME/.cache}/gst-cudavision
sdist=$cache/PyGObject-$pygobject_version.tar.gz
if ! echo "$pygobject_sha256  $sdist" | sha256sum -c --status 2>/dev/null; then
  mkdir -p "$cache"
  /usr/bin/python3 -m pip download -q --no-deps --no-binary=:all: --no-build-isolation \
    -d "$work/dl" "PyGObject==$pygobject_version"
  mv "$work/dl/PyGObject-$pygobject_version.tar.gz" "$sdist"
  echo "$pygobject_sha256  $sdist" | sha256sum -c --quiet
fi
tar -xzf "$sdist" -C "$work"
src=$work/PyGObject-$pygobject_version

# The GPU machine's Python headers. Ubuntu's python3.12/pyconfig.h only picks the multiarch one,
# x86_64-linux-gnu/python3.12/pyconfig.h, which lives outside /usr/include/python3.12: taken from
# the tar when it holds it, else from PYCONFIG_H, else from a local CPython 3.12 (pyenv's): a
# release build's pyconfig.h for x86-64 Linux changes nothing an extension's code or ABI sees
# (type sizes, no Py_DEBUG/Py_TRACE_REFS), only which of libc's functions CPython itself uses.
inc=$work/inc
mkdir -p "$inc"
tar -xzf "$pyinc_tgz" -C "$inc"
[ -f "$inc/python3.12/Python.h" ] || { echo "$pyinc_tgz holds no python3.12/Python.h" >&2; exit 1; }
grep -q 'PY_VERSION *"3\.12\.' "$inc/python3.12/patchlevel.h" || { echo "$pyinc_tgz is not Python 3.12's" >&2; exit 1; }
if grep -q '<x86_64-linux-gnu/python3.12/pyconfig.h>' "$inc/python3.12/pyconfig.h"; then
  archcfg=$(find "$inc" -path '*x86_64-linux-gnu/python3.12/pyconfig.h' -print -quit)
  if [ -z "$archcfg" ]; then
    archcfg=${PYCONFIG_H:-}
    if [ -z "$archcfg" ]; then
      for f in "$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"/versions/3.12*/include/python3.12/pyconfig.h \
               /usr/include/x86_64-linux-gnu/python3.12/pyconfig.h; do
        [ -f "$f" ] && grep -q '#define SIZEOF_VOID_P 8' "$f" && { archcfg=$f; break; }
      done
    fi
    [ -n "$archcfg" ] || { echo "no x86_64-linux-gnu/python3.12/pyconfig.h: put it in the tar or set PYCONFIG_H" >&2; exit 1; }
    echo "pyconfig.h: the tar has no x86_64-linux-gnu/python3.12/pyconfig.h, using $archcfg"
  fi
  mkdir -p "$inc/x86_64-linux-gnu/python3.12"
  [ "$archcfg" -ef "$inc/x86_64-linux-gnu/python3.12/pyconfig.h" ] || cp "$archcfg" "$inc/x86_64-linux-gnu/python3.12/pyconfig.h"
fi
# The 3.12 headers come first; nothing else on the command line names a Python include folder,
# and /usr/include holds only 3.11's (python3.11/, x86_64-linux-gnu/python3.11/), never searched.
pyflags=(-I"$inc/python3.12" -I"$inc")

# PyGObject's meson.build makes config.h with its version only (g_memdup2 is there since GLib 2.68).
cat >"$src/gi/config.h" <<EOF
#define PYGOBJECT_MAJOR_VERSION ${pygobject_version%%.*}
#define PYGOBJECT_MINOR_VERSION $(echo $pygobject_version | cut -d. -f2)
#define PYGOBJECT_MICRO_VERSION ${pygobject_version##*.}
EOF
# gi/meson.build's sources for _gi (pygi-foreign-cairo.c is _gi_cairo's: pycairo is left out).
gi_sources=$(sed -n '/^sources = \[/,/\]/p' "$src/gi/meson.build" | grep -o "'[^']*\.c'" | tr -d "'")
cflags=(-O2 -g0 -fPIC -fno-strict-aliasing -fvisibility=hidden -DPY_SSIZE_T_CLEAN -Wall
  -Wno-unused-parameter -Wno-missing-field-initializers -Wno-deprecated-declarations -Wno-cast-function-type
  -Wno-discarded-qualifiers -Wno-int-conversion "${pyflags[@]}")
# Each object built on its own, all cores busy.
mkdir -p "$work/obj"
echo "$gi_sources" | xargs -P "$(nproc)" -I{} gcc "${cflags[@]}" -I"$src/gi" -I"$src" \
  $(pkg-config --cflags gobject-introspection-1.0 glib-2.0 gobject-2.0 gio-2.0 libffi) -c "$src/gi/{}" -o "$work/obj/{}.o"
gcc -shared -o "$work/_gi$ext" "$work"/obj/*.o -Wl,-z,now -Wl,--as-needed -Wl,-rpath,'$ORIGIN/../../lib' \
  $(pkg-config --libs gobject-introspection-1.0 glib-2.0 gobject-2.0 gio-2.0 libffi)

# gst-python's _gi_gst, from the monorepo's 1.22.0 or 1.24.13 (no config.h: it is read only with
# HAVE_CONFIG_H); for 1.24 compiled against that GStreamer's headers, inside its root
ov=subprojects/gst-python/gi/overrides
gst_pc=(pkg-config)
if [ "$gst_version" = 1.24 ]; then
  tar -xJf "$gst_tar" -C "$work" --strip-components=1 "gstreamer-1.24.13/$ov"
  gst_pc=(env PKG_CONFIG_SYSROOT_DIR="$root"
    PKG_CONFIG_LIBDIR="$gst_prefix/lib/x86_64-linux-gnu/pkgconfig:$root/usr/lib/x86_64-linux-gnu/pkgconfig:$root/usr/share/pkgconfig" pkg-config)
else
  mkdir -p "$work/$ov"
  for f in gstmodule.c Gst.py GstVideo.py GstAudio.py GstPbutils.py; do
    git --git-dir="$gst_mirror" show "$gst_python_tag:$ov/$f" >"$work/$ov/$f"
  done
fi
gcc "${cflags[@]}" -I"$src/gi" $("${gst_pc[@]}" --cflags gstreamer-1.0) -shared -o "$work/_gi_gst$ext" \
  "$work/$ov/gstmodule.c" -Wl,-z,now -Wl,--as-needed -Wl,-rpath,'$ORIGIN/../../../lib' $("${gst_pc[@]}" --libs gstreamer-1.0)
strip --strip-unneeded "$work/_gi$ext" "$work/_gi_gst$ext"

# Neither extension may link libpython (the interpreter provides its symbols), and each must
# export its PyInit_ and leave undefined only Python's, libc's and the libraries it links.
for so in "$work/_gi$ext" "$work/_gi_gst$ext"; do
  name=$(basename "$so" "$ext")
  ! readelf -d "$so" | grep -q 'NEEDED.*libpython' || { echo "$so links libpython" >&2; exit 1; }
  nm -D --defined-only "$so" | grep -qw "PyInit_$name" || { echo "$so exports no PyInit_$name" >&2; exit 1; }
  odd=$(nm -D --undefined-only "$so" | awk '{print $NF}' |
    grep -Ev '^(_?Py|__gmon_start__|_ITM_|__cxa_finalize|g_|_g_|gi_|ffi_|gst_|_gst_|GST_|glib_|_glib_)' |
    grep -Ev '@GLIBC_' || true)
  [ -z "$odd" ] || { echo "$so: unexpected undefined symbols: $odd" >&2; exit 1; }
done

# The layout: site/gi (PyGObject's package with both extensions and gst-python's overrides),
# typelib/, lib/, env.sh.
rm -rf "$out"
mkdir -p "$out/site/gi/overrides" "$out/site/gi/repository" "$out/typelib" "$out/lib"
cp "$src"/gi/*.py "$work/_gi$ext" "$out/site/gi/"
rm -f "$out/site/gi/pygtkcompat.py"
cp "$src"/gi/overrides/*.py "$work/_gi_gst$ext" "$out/site/gi/overrides/"
rm -f "$out"/site/gi/overrides/{Gtk,Gdk,GdkPixbuf,Pango,keysyms,GIMarshallingTests}.py
cp "$src"/gi/repository/*.py "$out/site/gi/repository/"
for f in Gst GstVideo GstAudio GstPbutils; do cp "$work/$ov/$f.py" "$out/site/gi/overrides/"; done
for t in $typelibs; do
  case $t in GLib-*|GObject-*|GModule-*|Gio-*) cp "$girdir/$t.typelib" "$out/typelib/" ;; *) cp "$gst_girdir/$t.typelib" "$out/typelib/" ;; esac
done
# libgirepository and what the extensions link from GLib, libffi and GStreamer core; any other
# library they need (libpcre2, libmount, libunwind, libdw, ...) is Ubuntu's or .devbundle's.
ldd "$work/_gi$ext" "$work/_gi_gst$ext" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
  grep -E '/lib(girepository-1\.0|glib-2\.0|gobject-2\.0|gio-2\.0|gmodule-2\.0|ffi|gstreamer-1\.0)\.so' |
  { if [ "$gst_version" = 1.24 ]; then grep -v gstreamer-1.0; else cat; fi; } |
  while read -r l; do cp -L "$l" "$out/lib/"; done
[ -f "$out/lib/libgirepository-1.0.so.1" ] || { echo "libgirepository-1.0.so.1 not copied" >&2; exit 1; }
cat >"$out/env.sh" <<'EOF'
# Source on the GPU machine (after .devbundle/env.sh): PyGObject and gst-python for its Python 3.12.
D="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export PYTHONPATH="$D/site${PYTHONPATH:+:$PYTHONPATH}"
export GI_TYPELIB_PATH="$D/typelib${GI_TYPELIB_PATH:+:$GI_TYPELIB_PATH}"
export LD_LIBRARY_PATH="$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
EOF
excl=$(git rev-parse --git-path info/exclude)
grep -qx "/$out/" "$excl" || echo "/$out/" >>"$excl"
[ "$gst_version" = 1.24 ] && gst_python_tag=1.24.13
echo "built $out (PyGObject $pygobject_version, gst-python $gst_python_tag, for CPython 3.12): $(du -sh "$out" | cut -f1)"
