#!/usr/bin/env bash
# The whole suite on this system's GStreamer (README's test command; CI's 1.22 part on Debian 12, and
# what tests/run-gst-1.24.sh, run-gst-1.26.sh, run-gst-1.28.sh and run-asan-ubsan.sh run in their
# roots or builds):
# installs what is missing, builds, runs every test and ends with 'N passed, N failed, N skipped'.
# GPU tests exit 77 (skipped) on a machine without a usable CUDA device. CUV_BUILD_DIR names the
# build directory (default: build); extra arguments go to meson setup.
set -eu
cd "$(dirname "$0")/.."
tools/build.sh "$@"
b=${CUV_BUILD_DIR:-build}
# tools/deps.sh installed every tool and plugin the example and install tests use: here a missing
# one is a failure, not a skip (as it is on the GPU machine, whose GStreamer bundle has few)
export CUV_TOOLS_INSTALLED=1
set +e
meson test -C "$b" --print-errorlogs --num-processes 2 2>&1 | tee "$b/test-output.txt"
rc=${PIPESTATUS[0]}
set -e
awk '/^Ok:/ {p=$2} /^Expected Fail:/ {p+=$3} /^Fail:/ {f=$2} /^Unexpected Pass:/ {f+=$3} /^Timeout:/ {f+=$2} /^Skipped:/ {s=$2}
  END { printf "%d passed, %d failed, %d skipped\n", p, f, s }' "$b/test-output.txt"
exit $rc
