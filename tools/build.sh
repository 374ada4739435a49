#!/usr/bin/env bash
# Configures (once) and builds gst-cudavision in ./build, or in CUV_BUILD_DIR. Extra arguments go to
# meson setup.
set -eu
cd "$(dirname "$0")/.."
. tools/deps.sh
b=${CUV_BUILD_DIR:-build}
[ -d "$b" ] || meson setup "$b" "$@"
meson compile -C "$b"
