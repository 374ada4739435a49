#!/usr/bin/env bash
# A newer Debian's GStreamer for the GPU machine (Ubuntu 24.04, glibc 2.39, no GStreamer), from the
# root that tests/run-gst-VERSION.sh makes and the sm_90 build it leaves there (/var/build-VERSION).
# Usage, from the project root: tools/bundle-debian.sh VERSION ROOT [LIBDIR...]
# (tools/bundle-1.26.sh and tools/bundle-1.28.sh name theirs). It makes
#   .devbundle-VERSION/  gst-launch-1.0, gst-inspect-1.0, the plugin scanner, the plugins a test
#                      uses, and every library they and the build link to, the root's glibc and
#                      loader included; env.sh
#   .devbuild/build-VERSION-h100/  the build, packed (tools/gpu-pack.sh), its test list's paths moved
#                      from the root's /src and /var/build-VERSION to this checkout
# The root's programs want its glibc, newer than the machine's, so every executable of both gets the
# bundled loader as its interpreter and every object the bundle's libraries first (patchelf), at
# this checkout's path, which the GPU machine shares. LIBDIRs are folders inside the root, beside
# its library path, where the build's libraries may also be (a toolkit's lib/). Last it checks that
# every object resolves inside the bundle (libcuda, the driver's, excepted), through the bundled
# loader, and prints the sizes against the 64 MiB one call may carry; where the two are larger, it
# also packs them into one archive, .devbundle-VERSION.tar.xz, to carry instead.
# A GStreamer installed elsewhere than Debian's own paths in the root names its folders (inside the
# root): CUV_GST_BIN (gst-launch-1.0 and gst-inspect-1.0), CUV_GST_PLUGINS, CUV_GST_SCANNER.
# CUV_BUNDLE_LIBC=machine (a root no newer than the GPU machine's glibc 2.39: Debian 12's) leaves
# glibc, libstdc++ and libgcc_s to the machine, patches no interpreter and has env.sh put the
# bundle's libraries on LD_LIBRARY_PATH, so that the machine's own Python can load them too.
set -eu
cd "$(dirname "$0")/.."
ver=${1:?usage: tools/bundle-debian.sh VERSION ROOT [LIBDIR...]}
root=${2:?usage: tools/bundle-debian.sh VERSION ROOT [LIBDIR...]}
shift 2
libdirs=$(IFS=:; echo "$*")
[ -d "$root/var/build-$ver/meson-info" ] || { echo "no $ver build in $root: run tests/run-gst-$ver.sh first" >&2; exit 1; }
command -v patchelf >/dev/null || {
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends patchelf >/dev/null
}
arch=x86_64-linux-gnu
name=.devbundle-$ver
out=$PWD/$name
loader=$out/lib/ld-linux-x86-64.so.2
# in a worktree .git is a file: ask git where the ignore list is
exclude=$(git rev-parse --git-path info/exclude)
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/plugins"
gst_bin=${CUV_GST_BIN:-/usr/bin}
gst_plugins=${CUV_GST_PLUGINS:-/usr/lib/$arch/gstreamer-1.0}
libc=${CUV_BUNDLE_LIBC:-root}
cp "$root$gst_bin/gst-launch-1.0" "$root$gst_bin/gst-inspect-1.0" "$out/bin/"
cp "$root${CUV_GST_SCANNER:-/usr/lib/$arch/gstreamer1.0/gstreamer-1.0/gst-plugin-scanner}" "$out/bin/"
# the plugins a test or a demo pipeline uses (as ../shared/device/bundle.sh takes for 1.22)
for p in coreelements coretracers app imagefreeze videotestsrc videoconvertscale videorate videofilter videofiltersbad \
         videosignal nvcodec png multifile isomp4 matroska videoparsersbad debugutilsbad compositor \
         overlaycomposition playback typefindfunctions autodetect openh264 rawparse analyticsoverlay; do
  [ -f "$root$gst_plugins/libgst$p.so" ] && cp "$root$gst_plugins/libgst$p.so" "$out/plugins/"
done

# the build, with its test list pointing at this checkout
build=build-$ver-h100
rm -rf "$build"
cp -a "$root/var/build-$ver" "$build"
python3 - "$build" "$PWD" "/var/build-$ver" <<'PY'
import json, os, sys
build, here, inroot = sys.argv[1], sys.argv[2], sys.argv[3]
def move(v):
    if isinstance(v, str):
        if v == "/src":
            return here
        # meson writes a source file as seen from the build folder (/var/build-V/../../src/...)
        v = v.replace(inroot + "/../../src/", here + "/")
        return v.replace(inroot, os.path.join(here, build)).replace("/src/", here + "/")
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
elf_files () { find "$@" -type f -exec sh -c 'head -c4 "$1" | grep -q ELF && echo "$1"' _ {} \;; }

# every library the tools, plugins and build link to, resolved inside the root (libcuda excepted:
# the machine's driver provides it); one that the root cannot resolve stops the bundle
elves=("$out"/bin/* "$out"/plugins/*)
while IFS= read -r f; do elves+=("$f"); done < <(elf_files "$packed")
for f in "${elves[@]}"; do
  cp "$f" "$root/tmp/cuv-ldd"
  chroot "$root" /usr/bin/env -i LD_LIBRARY_PATH="$libdirs" ldd /tmp/cuv-ldd 2>/dev/null |
    awk -v f="$f" '/not found/ && $1 !~ /^lib(cuda|nvidia)/ {print "unresolved: " $1 " (" f ")"}
      /=>/ && $3 ~ /^\// {print $3} /ld-linux/ && $1 ~ /^\// {print $1}'
done | sort -u > "$out/.libs"
rm -f "$root/tmp/cuv-ldd"
if grep '^unresolved: ' "$out/.libs" >&2; then echo "bundle-$ver: the root lacks these libraries" >&2; exit 1; fi
machine_libs='/(libc|libm|libdl|libpthread|librt|libresolv|libmvec|ld-linux[^/]*|libstdc\+\+|libgcc_s)\.so'
grep -vE '/(libcuda|libnvidia[^/]*)\.so' "$out/.libs" | { if [ "$libc" = machine ]; then grep -vE "$machine_libs"; else cat; fi; } |
  while read -r l; do [ -e "$out/lib/$(basename "$l")" ] || cp -L "$root$l" "$out/lib/"; done
rm -f "$out/.libs"
if [ "$libc" = machine ]; then
  # the check below resolves as the machine will: this host's loader and glibc (Debian 12, as the root)
  loader=/lib64/ld-linux-x86-64.so.2
else
  cp -L "$root/lib64/ld-linux-x86-64.so.2" "$loader"
fi

# the root's loader for every executable, and the bundle's libraries first for every object
# (DT_RUNPATH): no LD_LIBRARY_PATH, which would hand the root's libc to the machine's own programs.
# glibc's own objects find each other.
objects=("$out"/bin/* "$out"/plugins/*)
while IFS= read -r f; do objects+=("$f"); done < <(elf_files "$out/lib" "$packed")
for f in "${objects[@]}"; do
  case $(basename "$f") in ld-linux*|libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|libresolv.so*|libmvec.so*) continue ;; esac
  if [ "$libc" = root ] && patchelf --print-interpreter "$f" >/dev/null 2>&1; then
    patchelf --set-interpreter "$loader" "$f"
  fi
  old=$(patchelf --print-rpath "$f" 2>/dev/null || true)
  patchelf --set-rpath "$out/lib${old:+:$old}" "$f"
done

# what the GPU machine's loader will do: every object's libraries from the bundle (the driver's
# libcuda from the machine), as the bundled loader resolves them here
bad=0
for f in "${objects[@]}"; do
  # glibc's own objects are loaded beside the libc that a program's RUNPATH chose
  case $(basename "$f") in ld-linux*|libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|libresolv.so*|libmvec.so*) continue ;; esac
  while read -r lib path; do
    case $lib in libcuda.so*|libnvidia*) continue ;; esac
    [ "$libc" = machine ] && [[ /$lib =~ $machine_libs ]] && continue
    case $path in "$out"/lib/*) ;; *) echo "bundle-$ver: $f: $lib from ${path:-nowhere}" >&2; bad=1 ;; esac
  done < <(env -i "$loader" --list "$f" 2>&1 | awk '/=>/ {print $1, ($3 ~ /^\// ? $3 : "")}')
done
[ "$bad" = 0 ] || { echo "bundle-$ver: objects resolve outside the bundle" >&2; exit 1; }

cat > "$out/env.sh" <<ENV
B="\$(cd "\$(dirname "\${BASH_SOURCE[0]}")" && pwd)"
export PATH="\$B/bin:\$PATH"
export GST_PLUGIN_SYSTEM_PATH_1_0="\$B/plugins"
export GST_PLUGIN_SCANNER="\$B/bin/gst-plugin-scanner"
export GST_REGISTRY_1_0="\${TMPDIR:-/tmp}/gst-registry-devbundle-$ver.bin"
export CK_FORK=no
ENV
[ "$libc" = machine ] && echo 'export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"' >> "$out/env.sh"
cp ../shared/device/gpu-tests "$out/gpu-tests"
grep -qx "/$name/" "$exclude" 2>/dev/null || echo "/$name/" >> "$exclude"
bytes=$(du -sb "$out" "$packed" | awk '{s += $1} END {print s}')
tracked=$(git ls-files -z | du -cb --files0-from=- | tail -n 1 | cut -f1)
echo "bundle-$ver: $(du -sh "$out" | cut -f1) in $name ($(ls "$out/plugins" | wc -l) plugins, $(ls "$out/lib" | wc -l) libraries); build: $(du -sh "$packed" | cut -f1) in $packed"
echo "bundle-$ver: with the tracked files, $(( (bytes + tracked) / 1048576 )) MiB of the 64 a call may carry"
# over that, both travel as one archive (a third of their size), which python3 unpacks there
rm -f "$name.tar.xz"
if [ $((bytes + tracked)) -gt $((64 * 1048576)) ]; then
  tar -cf - "$name" "$packed" | xz -6 -T2 > "$name.tar.xz"
  grep -qx "/$name.tar.xz" "$exclude" 2>/dev/null || echo "/$name.tar.xz" >> "$exclude"
  echo "bundle-$ver: too large to carry as they are; both in $name.tar.xz, $(( ($(stat -c %s "$name.tar.xz") + tracked) / 1048576 )) MiB with the tracked files: carry [\"$name.tar.xz\"] and first 'python3 -m tarfile -e $name.tar.xz .'"
fi
