#!/usr/bin/env bash
# Installs what gst-cudavision needs to build and run on Debian 12 or 13 / Ubuntu 24.04 (the CUDA
# toolkit is expected in CUDA_PATH, default /usr/local/cuda; without it the build is CPU-only). Sourced by the demo and
# test scripts; safe to run twice. CUV_EXTRA_PKGS names more packages to install the same way
# (tools/gpu-python.sh's).
set -eu
pkgs="${CUV_EXTRA_PKGS:-} meson ninja-build pkg-config g++ libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev
  libgstreamer-plugins-bad1.0-dev libhwy-dev gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  gstreamer1.0-plugins-bad gstreamer1.0-x python3-gst-1.0 python3-numpy python3-matplotlib python3-dev
  libmosquitto-dev libjson-glib-dev libmicrohttpd-dev libssl-dev
  mosquitto mosquitto-clients libgstrtspserver-1.0-dev gstreamer1.0-plugins-ugly gstreamer1.0-libav
  openssl curl prometheus python3-prometheus-client"
# GStreamer built from source into CUV_GST_PREFIX (tests/run-gst-1.24.sh): none of Debian's
# GStreamer packages, which would bring a second GStreamer; PyGObject alone for the Python tests
if [ -n "${CUV_GST_PREFIX:-}" ]; then
  pkgs="$(for p in $pkgs; do case $p in *gst*|gstreamer*) ;; *) echo "$p" ;; esac; done) python3-gi"
fi
missing=""
for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  echo "installing:$missing"
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
cuv_cuda=${CUDA_PATH:-/usr/local/cuda}
[ -d "$cuv_cuda/bin" ] && export PATH="$cuv_cuda/bin:$PATH"
command -v nvcc >/dev/null || echo "note: no nvcc found: building the CPU reference only"
