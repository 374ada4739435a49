#!/usr/bin/env bash
# GStreamer 1.28 on the GPU machine (Ubuntu 24.04, glibc 2.39, no GStreamer), from the Debian
# testing root that tests/run-gst-1.28.sh makes and the sm_90 build it leaves there
# (/var/build-1.28, its kernels built by CUDA 13.5's nvcc from PyPI's wheels, cudart linked
# statically from them): .devbundle-1.28/ (GStreamer 1.28, Debian testing's glibc 2.42, loader and
# GCC 16's libstdc++) and .devbuild/build-1.28-h100/, as tools/bundle-debian.sh says. The wheels'
# lib/ is searched too, so that a library linked from there (libcudart.so.13, were it linked
# dynamically) travels. Run from the project root, after tests/run-gst-1.28.sh; then `run` with
# carry [".devbundle-1.28", ".devbuild"]:
#   source .devbundle-1.28/env.sh && ln -sfn .devbuild/build-1.28-h100 build-1.28-h100 && \
#     .devbundle-1.28/gpu-tests -j 6 build-1.28-h100
set -eu
cd "$(dirname "$0")/.."
exec tools/bundle-debian.sh 1.28 "${CUV_FORKY_ROOT:-${CUV_CACHE:-/var/cache/gst-cudavision}/forky}" /opt/cuda-wheels/nvidia/cu13/lib
