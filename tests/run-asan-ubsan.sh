#!/usr/bin/env bash
# The whole suite under AddressSanitizer and UndefinedBehaviorSanitizer, CPU only, in build-asan (or
# CUV_BUILD_DIR): any report fails the test that made it. The plugin is loaded in-process
# (GST_REGISTRY_FORK=no: GStreamer's plugin scanner is not instrumented and would blacklist it) from
# a fresh registry. Ends with 'N passed, N failed, N skipped'.
set -eu
cd "$(dirname "$0")/.."
export CUV_BUILD_DIR=${CUV_BUILD_DIR:-build-asan}
rm -f "$CUV_BUILD_DIR/tests/registry.bin" "$CUV_BUILD_DIR/examples/registry.bin"
export GST_REGISTRY_FORK=no
# full stacks for leaks, so that the suppressions match library frames, not a guess
# the gst-check tests link common/ themselves and load the plugin, which holds the same objects:
# their globals (the debug category) are registered twice by design, which the ODR check reports
# since the plugin exports hooks for tests (cuv_finish_host_frees)
export ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0:exitcode=86:detect_odr_violation=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=87
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:print_suppressions=0
exec tests/run-tests.sh -Dcuda=disabled -Db_sanitize=address,undefined -Db_lundef=false "$@"
