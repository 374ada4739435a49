#!/usr/bin/env bash
# GStreamer 1.24 on the GPU machine (Ubuntu 24.04, glibc 2.39, no GStreamer), from the Debian 12
# root that tests/run-gst-1.24.sh makes: the GStreamer it built from source in /opt/gst-1.24 and
# the sm_90 build it leaves in /var/build-1.24, as tools/bundle-debian.sh says. Debian 12's glibc
# (2.36) is older than the machine's, so the machine's glibc, libstdc++ and its loader serve, and
# the machine's own Python (with PyTorch and CuPy) loads the bundle's libraries too
# (tools/gpu-python.sh PYINC.tgz 1.24). Run from the project root, after tests/run-gst-1.24.sh;
# then `run` with carry [".devbundle-1.24", ".devbuild/build-1.24-h100", ".devpy-1.24"] where they fit
# beside the tracked files (59 MiB without .devpy-1.24 on 2026-11-28), else the three as one tar:
#   tar -cf - .devbuild/build-1.24-h100 .devbundle-1.24 .devpy-1.24 | xz -T2 > p124.tar.xz   # here
#   python3 -m tarfile -e p124.tar.xz .                                                      # there
#   BUILD=build-1.24-h100 BUNDLE=.devbundle-1.24 DEVPY=.devpy-1.24 tools/gpu-run.sh suite  # or: python
set -eu
cd "$(dirname "$0")/.."
if [ "${CUV_CACHE+set}" = set ] && [ -z "$CUV_CACHE" ]; then
  echo "bundle-1.24.sh: CUV_CACHE is set but empty: give the folder run-gst-1.24.sh used, or unset it" >&2
  exit 2
fi
prefix=/opt/gst-1.24
arch=x86_64-linux-gnu
CUV_GST_BIN=$prefix/bin CUV_GST_PLUGINS=$prefix/lib/$arch/gstreamer-1.0 \
  CUV_GST_SCANNER=$prefix/libexec/gstreamer-1.0/gst-plugin-scanner CUV_BUNDLE_LIBC=machine \
  exec tools/bundle-debian.sh 1.24 "${CUV_GST124_ROOT:-${CUV_CACHE:-/var/cache/gst-cudavision}/gst-1.24}" "$prefix/lib/$arch"
