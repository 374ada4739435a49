#!/usr/bin/env bash
# The whole suite on GStreamer 1.26: inside a Debian 13 (trixie) root made with debootstrap from the
# Debian archive that apt already uses, with this checkout at /src and the host's /usr/local/cuda
# bind-mounted. Ends with 'N passed, N failed, N skipped'. Needs root (debootstrap, chroot, mount).
# The root and its build stay in CUV_TRIXIE_ROOT (default $CUV_CACHE/trixie, CUV_CACHE's default
# /var/cache/gst-cudavision) for the next run on this machine; a root that was not finished is made again. Extra arguments go to meson
# setup (default: -Dcuda-archs=90: the GPU tests skip in CI, and one architecture builds fastest).
set -eu
cd "$(dirname "$0")/.."
. tests/lib/debian-root.sh
root=${CUV_TRIXIE_ROOT:-$CUV_CACHE/trixie}
[ $# -gt 0 ] || set -- -Dcuda-archs=90
suite_in_root trixie "$root" /var/build-1.26 "$@"
