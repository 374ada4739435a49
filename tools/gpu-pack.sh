#!/usr/bin/env bash
# Packs a build directory for the GPU machine, whose working tree may carry 64 MiB in all: the
# programs, the plugin and meson's test list, without objects, static libraries or debug info,
# into .devbuild/BUILD (git-ignored). There, `ln -sfn .devbuild/BUILD BUILD` puts it where meson's
# test list expects it. Usage, from the project root: tools/gpu-pack.sh [BUILD] [tests|bench]
# (default: build-h100 tests). With the GStreamer bundle (.devbundle, 36 MiB) the whole build no
# longer fits one call, so a pack holds what one kind of call needs:
#   tests: the test programs and bench_pipelines (gpu-run.sh suite, live, and bench with --kernels
#          FILE), not bench_kernels and bench_upload, nor the kernels' CPU reference tests
#          (test_reference, test_*_reference), which make no CUDA call and run in CI, nor the
#          fleet's programs (a pack of their own): gpu-run.sh's suite runs the tests whose
#          programs are here;
#   bench: the plugin and the benchmarks (gpu-run.sh bench), no test program;
#   fleet: the plugin, cudavision-run and the fleet tests' programs (gpu-run.sh fleet);
#   python: the plugin alone, for the Python tests and bench_python.py (gpu-run.sh python), which
#          travel with .devpy (tools/gpu-python.sh).
# The benchmark's variant builds (bench_kernels_*) are never packed: carry those by hand.
set -eu
cd "$(dirname "$0")/.."
b=${1:-build-h100}
kind=${2:-tests}
case $kind in
  tests) leave_out=(-name 'bench_kernels*' -o -name bench_upload -o -name test_reference -o -name 'test_*_reference'
           -o -name cudavision-run -o -name rtsp-camera -o -name exposition-sample) ;;
  bench) leave_out=(-name 'bench_kernels_*' -o -name 'test_*' -o -name 'cudavision-*') ;;
  fleet) leave_out=(-name 'bench*' -o -name 'test_*' -o -name 'cudavision-embed') ;;
  python) leave_out=(-name 'bench*' -o -name 'test_*' -o -name 'cudavision-*' -o -name rtsp-camera
           -o -name exposition-sample) ;;
  *) echo "usage: tools/gpu-pack.sh [BUILD] [tests|bench|fleet|python]" >&2; exit 2 ;;
esac
out=.devbuild/$b
rm -rf "$out"
mkdir -p "$out"
# meson's introspection, programs, shared objects, config.h (lint/versions reads its VERSION)
(cd "$b" && find . -path ./meson-private -prune -o -path ./meson-logs -prune -o -name '*.p' -prune -o \
  \( "${leave_out[@]}" \) -prune -o \
  -type f \( -name '*.so' -o -perm -u+x -o -path './meson-info/*' -o -path ./config.h \) -print) |
  while read -r f; do
    mkdir -p "$out/$(dirname "$f")"
    cp -p "$b/$f" "$out/$f"
    # the dynamic symbols stay (the tests find the plugin's hooks with dlsym)
    if head -c4 "$out/$f" | grep -q ELF; then strip --strip-unneeded "$out/$f"; fi
  done
# in a worktree .git is a file: ask git where the ignore list is
exclude=$(git rev-parse --git-path info/exclude)
grep -qx '/.devbuild/' "$exclude" 2>/dev/null || { mkdir -p "$(dirname "$exclude")"; echo '/.devbuild/' >> "$exclude"; }
echo "gpu-pack: $(du -sh "$out" | cut -f1) in $out ($kind)"
if [ -d .devbundle ]; then
  bytes=$(du -sb "$out" .devbundle | awk '{s += $1} END {print s}')
  tracked=$(git ls-files -z | du -cb --files0-from=- | tail -n 1 | cut -f1)
  echo "gpu-pack: with .devbundle and the tracked files, $(( (bytes + tracked) / 1048576 )) MiB of the 64 a call may carry"
fi
