#!/usr/bin/env bash
# GStreamer 1.26 on the GPU machine (Ubuntu 24.04, glibc 2.39, no GStreamer), from the Debian 13
# root that tests/run-gst-1.26.sh makes and the sm_90 build it leaves there (/var/build-1.26):
# .devbundle-1.26/ (GStreamer 1.26, Debian 13's glibc and loader) and .devbuild/build-1.26-h100/, as
# tools/bundle-debian.sh says. Run from the project root, after tests/run-gst-1.26.sh; then `run`
# with carry [".devbundle-1.26", ".devbuild"]:
#   source .devbundle-1.26/env.sh && ln -sfn .devbuild/build-1.26-h100 build-1.26-h100 && \
#     .devbundle-1.26/gpu-tests -j 6 build-1.26-h100
set -eu
cd "$(dirname "$0")/.."
exec tools/bundle-debian.sh 1.26 "${CUV_TRIXIE_ROOT:-${CUV_CACHE:-/var/cache/gst-cudavision}/trixie}"
