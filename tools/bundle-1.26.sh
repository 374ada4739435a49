#!/usr/bin/env bash
# GStreamer 1.26 on the GPU machine (Ubuntu 24.04, glibc 2.39, no GStreamer), from the Debian 13
# root that tests/run-tests-1.26.sh makes and the sm_90 build it leaves there (/var/build-1.26):
#   .devbundle-1.26/   gst-launch-1.0, gst-inspect-1.0, the plugin scanner, the plugins a test
#                      uses, and every library they and the build link to, Debian 13's glibc and
#                      loader included; env.sh
#   .devbuild/build-1.26-h100/  the build, packed (tools/gpu-pack.sh), its test list's paths moved
#                      from the root's /src and /var/build-1.26 to this checkout
# Debian 13's programs want glibc 2.41, so every executable of both gets the bundled loader as its
# interpreter and every object the bundle's libraries first (patchelf), at this checkout's path,
# which the GPU machine shares. Run from the
# project root, after tests/run-tests-1.26.sh; then `run` with carry [".devbundle-1.26", ".devbuild"]:
#   source .devbundle-1.26/env.sh && ln -sfn .devbuild/build-1.26-h100 build-1.26-h100 && \
#     .devbundle-1.26/gpu-tests -j 6 build-1.26-h100
set -eu
cd "$(dirname "$0")/.."
root=${CUV_TRIXIE_ROOT:-/var/cache/gst-cudavision/trixie}
[ -d "$root/var/build-1.26/meson-info" ] || { echo "no 1.26 build in $root: run tests/run-tests-1.26.sh first" >&2; exit 1; }
command -v patchelf >/dev/null || {
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends patchelf >/dev/null
}
arch=x86_64-linux-gnu
out=$PWD/.devbundle-1.26
loader=$out/lib/ld-linux-x86-64.so.2
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/plugins"
cp "$root/usr/bin/gst-launch-1.0" "$root/usr/bin/gst-inspect-1.0" "$out/bin/"
cp "$root/usr/lib/$arch/gstreamer1.0/gstreamer-1.0/gst-plugin-scanner" "$out/bin/"
# the plugins a test or a demo pipeline uses (as ../shared/device/bundle.sh takes for 1.22)
for p in coreelements coretracers app imagefreeze videotestsrc videoconvertscale videorate videofilter videofiltersbad \
         videosignal nvcodec png multifile isomp4 matroska videoparsersbad debugutilsbad compositor \
         overlaycomposition playback typefindfunctions autodetect openh264 rawparse analyticsoverlay; do
  [ -f "$root/usr/lib/$arch/gstreamer-1.0/libgst$p.so" ] && cp "$root/usr/lib/$arch/gstreamer-1.0/libgst$p.so" "$out/plugins/"
done

# the build, with its test list pointing at this checkout
build=build-1.26-h100
rm -rf "$build"
cp -a "$root/var/build-1.26" "$build"
python3 - "$build" "$PWD" <<'PY'
import json, os, sys
build, here = sys.argv[1], sys.argv[2]
def move(v):
    if isinstance(v, str):
        return v.replace("/var/build-1.26", os.path.join(here, build)).replace("/src/", here + "/")
    if isinstance(v, list):
        return [move(x) for x in v]
    if isinstance(v, dict):
        return {k: move(x) for k, x in v.items()}
    return v
path = os.path.join(build, "meson-info", "intro-tests.json")
json.dump(move(json.load(open(path))), open(path, "w"))
PY
tools/gpu-pack.sh "$build" >/dev/null
packed=.devbuild/$build

# every library the tools, plugins and build link to, resolved inside the root (libcuda excepted:
# the machine's driver provides it)
elves=("$out"/bin/* "$out"/plugins/*)
while IFS= read -r f; do elves+=("$f"); done < <(find "$packed" -type f -exec sh -c 'head -c4 "$1" | grep -q ELF && echo "$1"' _ {} \;)
for f in "${elves[@]}"; do
  cp "$f" "$root/tmp/cuv-ldd"
  chroot "$root" ldd /tmp/cuv-ldd 2>/dev/null | awk '/=>/ && $3 ~ /^\// {print $3} /ld-linux/ && $1 ~ /^\// {print $1}'
done | sort -u | grep -vE '/(libcuda|libnvidia[^/]*)\.so' |
  while read -r l; do [ -e "$out/lib/$(basename "$l")" ] || cp -L "$root$l" "$out/lib/"; done
rm -f "$root/tmp/cuv-ldd"
cp -L "$root/lib64/ld-linux-x86-64.so.2" "$loader"

# Debian 13's loader for every executable, and the bundle's libraries first for every object
# (DT_RUNPATH): no LD_LIBRARY_PATH, which would hand Debian 13's libc to the machine's own programs.
# glibc's own objects find each other.
objects=("$out"/bin/* "$out"/plugins/*)
while IFS= read -r f; do objects+=("$f"); done < <(find "$out/lib" "$packed" -type f -exec sh -c 'head -c4 "$1" | grep -q ELF && echo "$1"' _ {} \;)
for f in "${objects[@]}"; do
  case $(basename "$f") in ld-linux*|libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|libresolv.so*|libmvec.so*) continue ;; esac
  if patchelf --print-interpreter "$f" >/dev/null 2>&1; then
    patchelf --set-interpreter "$loader" "$f"
  fi
  old=$(patchelf --print-rpath "$f" 2>/dev/null || true)
  patchelf --set-rpath "$out/lib${old:+:$old}" "$f"
done
cat > "$out/env.sh" <<'ENV'
B="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export PATH="$B/bin:$PATH"
export GST_PLUGIN_SYSTEM_PATH_1_0="$B/plugins"
export GST_PLUGIN_SCANNER="$B/bin/gst-plugin-scanner"
export GST_REGISTRY_1_0="${TMPDIR:-/tmp}/gst-registry-devbundle-1.26.bin"
export CK_FORK=no
ENV
cp ../shared/device/gpu-tests "$out/gpu-tests"
grep -qx '/.devbundle-1.26/' .git/info/exclude 2>/dev/null || echo '/.devbundle-1.26/' >> .git/info/exclude
echo "bundle-1.26: $(du -sh "$out" | cut -f1) in .devbundle-1.26 ($(ls "$out/plugins" | wc -l) plugins, $(ls "$out/lib" | wc -l) libraries); build: $(du -sh "$packed" | cut -f1) in $packed"
