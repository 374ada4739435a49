#!/usr/bin/env bash
# The install test: `meson install` of BUILD_DIR into a temporary root; GStreamer finds the plugin
# there (and only there), and a program built with `pkg-config gst-cudavision-1.0` against the
# installed headers reads every analyser's results.
#   tests/install/test-install.sh BUILD_DIR
set -eu
command -v meson >/dev/null && command -v pkg-config >/dev/null && command -v "${CC:-cc}" >/dev/null ||
  { echo "no meson, pkg-config or C compiler here (the GPU machine has none)"; [ -n "${CUV_TOOLS_INSTALLED:-}" ] && exit 1; exit 77; }
build=$(cd "$1" && pwd)
# a packed build (tools/gpu-pack.sh: the GPU machine's) has no meson state to install from
[ -f "$build/meson-private/coredata.dat" ] || { echo "$build is not a whole meson build: skipped"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

DESTDIR=$tmp meson install -C "$build" --no-rebuild --quiet
pc=$(find "$tmp" -name gst-cudavision-1.0.pc)
[ -n "$pc" ] || { echo "FAIL: no gst-cudavision-1.0.pc installed"; exit 1; }
# the .pc file as the installed tree would have it at its prefix (--define-variable would move
# gstreamer-1.0's prefix too)
mkdir "$tmp/pc"
sed "s|^prefix=\(.*\)|prefix=$tmp\1|" "$pc" > "$tmp/pc/gst-cudavision-1.0.pc"
export PKG_CONFIG_PATH=$tmp/pc${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
plugins=$(pkg-config --variable=pluginsdir gst-cudavision-1.0)
echo "installed: $(cd "$tmp" && find . -type f ! -path ./pc/\* | sort | tr '\n' ' ')"

# the installed plugin, and no other copy of it
export GST_PLUGIN_PATH_1_0=$plugins GST_PLUGIN_PATH=$plugins GST_REGISTRY_1_0=$tmp/registry.bin
file=$(gst-inspect-1.0 cudamotionest | sed -n 's/^ *Filename *//p')
case "$file" in
  "$plugins"/*) echo "gst-inspect-1.0 finds the plugin in the prefix: $file" ;;
  *) echo "FAIL: gst-inspect-1.0 cudamotionest gives '$file', not a file in $plugins"; exit 1 ;;
esac

# an application built against the installed headers only
${CC:-cc} -Wall -Werror -o "$tmp/read_results" "$here/read_results.c" $(pkg-config --cflags --libs gst-cudavision-1.0)
"$tmp/read_results"

# the Python module, whole: every file its package imports, and its C++ part, which loads from the
# installed files alone (the extension is built for Python's stable ABI: any python3 loads it)
init=$(find "$tmp" -path '*/cudavision/__init__.py' | head -n 1)
[ -n "$init" ] || { echo "FAIL: no cudavision/__init__.py installed"; exit 1; }
pydir=$(dirname "$init")
for f in __init__.py _cuda.py _dlpack.py _reader.py _results.py _native.abi3.so; do
  [ -f "$pydir/$f" ] || { echo "FAIL: the cudavision module installed without $f"; exit 1; }
done
for py in python3 /usr/bin/python3 ""; do
  [ -n "$py" ] || { echo "(no python3 with PyGObject and numpy: the installed module's files checked, not imported)"; break; }
  "$py" -c 'import gi, numpy; gi.require_version("Gst", "1.0"); gi.require_version("GstVideo", "1.0")' 2>/dev/null || continue
  PYTHONPATH=$(dirname "$pydir") "$py" -c "
import cudavision, cudavision._native as n
assert cudavision.__file__.startswith('$pydir') and n.__file__.startswith('$pydir'), (cudavision.__file__, n.__file__)
print('the installed module imports, with its C++ part:', n.__file__)" || { echo "FAIL: the installed module does not import"; exit 1; }
  break
done
