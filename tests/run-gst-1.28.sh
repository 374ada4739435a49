#!/usr/bin/env bash
# The whole suite on GStreamer 1.28, with the CUDA kernels: inside a Debian testing (forky) root made
# with debootstrap from the Debian archive that apt already uses, with this checkout at /src. Ends
# with 'N passed, N failed, N skipped'. Needs root (debootstrap, chroot, mount).
# The kernels are built by NVIDIA's CUDA toolchain from PyPI (tests/cuda-wheels.txt: exact versions
# and hashes), installed in the root at /opt/cuda-wheels (its toolkit: nvidia/cu13, CUDA_PATH in the
# root): the host's CUDA 13.0 does not take the root's GCC 16, nor its glibc 2.42 with GCC 14 (C23's
# rsqrt against crt/math_functions.h), so it is not bind-mounted; GStreamer 1.28's CUDA headers take
# cuda.h from the wheels too.
# The root, the wheels and the build stay in CUV_FORKY_ROOT (default $CUV_CACHE/forky, CUV_CACHE's
# default /var/cache/gst-cudavision)
# for the next run on this machine; a root that was not finished is made again, and a build that was
# configured otherwise (other meson arguments, other wheels) is made again. Extra arguments go to meson
# setup (default: -Dcuda-archs=90: the GPU tests skip in CI, one architecture builds fastest, and
# tools/bundle-1.28.sh takes this build to the H100).
set -eu
cd "$(dirname "$0")/.."
. tests/lib/debian-root.sh
root=${CUV_FORKY_ROOT:-$CUV_CACHE/forky}
build=/var/build-1.28
wheels=/opt/cuda-wheels
[ $# -gt 0 ] || set -- -Dcuda-archs=90
cuv_step "making the Debian testing root" debian_root testing "$root"
enter_root "$root" "$PWD" no-host-cuda
cuv_step "python3 in the testing root (for the wheels)" root_packages "$root" python3
cuv_step "the CUDA toolchain wheels (tests/cuda-wheels.txt)" cuda_wheels "$root" tests/cuda-wheels.txt "$wheels"
# tools/build.sh configures a build folder only once; a build made from another checkout is made
# again (each is /src in the root, and ninja, comparing times, kept the other's newer objects of
# sources this one changed earlier)
setup="$* $(sha256sum < tests/cuda-wheels.txt | cut -d' ' -f1) $PWD"
[ "$(cat "$root$build/.cuv-setup" 2>/dev/null)" = "$setup" ] || rm -rf "$root$build"
rc=0
cuv_step "the suite in the testing root" in_root "$root" CUV_BUILD_DIR="$build" CUDA_PATH="$wheels/nvidia/cu13" \
  'cd /src && tests/run-tests.sh "$@"' bash "$@" || rc=$?
[ -f "$root$build/meson-info/intro-buildoptions.json" ] && echo "$setup" > "$root$build/.cuv-setup"
exit $rc
