#!/usr/bin/env bash
# Installs what is missing, builds, runs every test and ends with 'N passed, N failed, N skipped'.
# GPU tests exit 77 (skipped) on a machine without a usable CUDA device.
set -eu
cd "$(dirname "$0")/.."
tools/build.sh
set +e
meson test -C build --print-errorlogs --num-processes 2 2>&1 | tee build/test-output.txt
rc=${PIPESTATUS[0]}
set -e
awk '/^Ok:/ {p=$2} /^Expected Fail:/ {p+=$3} /^Fail:/ {f=$2} /^Unexpected Pass:/ {f+=$3} /^Timeout:/ {f+=$2} /^Skipped:/ {s=$2}
  END { printf "%d passed, %d failed, %d skipped\n", p, f, s }' build/test-output.txt
exit $rc
