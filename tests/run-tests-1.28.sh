#!/usr/bin/env bash
# The whole suite on GStreamer 1.28: inside a Debian testing (forky) root made with debootstrap from the
# Debian archive that apt already uses, with this checkout at /src and the host's /usr/local/cuda
# bind-mounted. Ends with 'N passed, N failed, N skipped'. Needs root (debootstrap, chroot, mount).
# The root and its build stay in CUV_FORKY_ROOT (default /var/cache/gst-cudavision/forky) for the
# next run on this machine; a root that was not finished is made again. Extra arguments go to meson
# setup (default: -Dcuda=disabled: CUDA 13.0's nvcc does not take forky's GCC 16 as its host
# compiler, and with GCC 14 as its host compiler its crt/math_functions.h still clashes with glibc
# 2.42's C23 rsqrt declarations, which CUDA 13.2 fixes; GStreamer 1.28's CUDA headers still take
# cuda.h from the bind-mounted toolkit, -Dcuda-headers).
set -eu
cd "$(dirname "$0")/.."
root=${CUV_FORKY_ROOT:-/var/cache/gst-cudavision/forky}
. tests/debian-root.sh
[ $# -gt 0 ] || set -- -Dcuda=disabled
suite_in_root testing "$root" /var/build-1.28 "$@"
