#!/usr/bin/env bash
# Configures (once) and builds gst-cudavision in ./build. Extra arguments go to meson setup.
set -eu
cd "$(dirname "$0")/.."
. tools/deps.sh
[ -d build ] || meson setup build "$@"
meson compile -C build
