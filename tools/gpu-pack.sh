#!/usr/bin/env bash
# Packs a build directory for the GPU machine, whose working tree may carry 64 MiB in all: the
# programs, the plugin and meson's test list, without objects, static libraries or debug info,
# into .devbuild/BUILD (git-ignored). There, `ln -sfn .devbuild/BUILD BUILD` puts it where meson's
# test list expects it. Usage, from the project root: tools/gpu-pack.sh [BUILD]  (default: build-h100)
set -eu
cd "$(dirname "$0")/.."
b=${1:-build-h100}
out=.devbuild/$b
rm -rf "$out"
mkdir -p "$out"
# what gpu-tests, the examples and bench_kernels read: meson's introspection, programs, shared objects
# (not the benchmark's variant builds: build and carry those by hand when comparing them)
(cd "$b" && find . -path ./meson-private -prune -o -path ./meson-logs -prune -o -name '*.p' -prune -o \
  -name 'bench_kernels_*' -prune -o \
  -type f \( -name '*.so' -o -perm -u+x -o -path './meson-info/*' \) -print) |
  while read -r f; do
    mkdir -p "$out/$(dirname "$f")"
    cp -p "$b/$f" "$out/$f"
    if head -c4 "$out/$f" | grep -q ELF; then strip --strip-debug "$out/$f"; fi
  done
grep -qx '/.devbuild/' .git/info/exclude 2>/dev/null || { mkdir -p .git/info; echo '/.devbuild/' >> .git/info/exclude; }
echo "gpu-pack: $(du -sh "$out" | cut -f1) in $out"
