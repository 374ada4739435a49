#!/usr/bin/env bash
# The container's build steps, as one script that CI also runs in a fresh Debian 12 root
# (tests/run-deploy.sh), so that the recipe is tested where no image can be built.
#   deploy/container-build.sh runtime        the packages the image runs with
#   deploy/container-build.sh build DESTDIR  the build packages, then the plugin and cudavision-run
#                                            built and installed under DESTDIR (prefix /usr)
# CUDA: the kernels are built with the toolkit in /usr/local/cuda where there is one (the build
# stage of deploy/Containerfile installs NVIDIA's for Debian 12); without one the build is
# CPU-only. At run time the image needs no toolkit: the CUDA runtime is linked in statically, and
# NVIDIA's container toolkit brings the host's driver. CUV_CUDA_ARCHS picks the GPU generations
# (default: the build's own default); CUV_VERSION, where given, must be meson.build's project
# version (the image's tag and label say it).
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:?usage: deploy/container-build.sh runtime|build DESTDIR}
export DEBIAN_FRONTEND=noninteractive
install () {
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
case $mode in
  runtime)
    install ca-certificates gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good \
      gstreamer1.0-plugins-bad gstreamer1.0-libav libhwy1 libmosquitto1 libjson-glib-1.0-0 libmicrohttpd12 libssl3
    ;;
  build)
    destdir=${2:?usage: deploy/container-build.sh build DESTDIR}
    install meson ninja-build pkg-config g++ libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev \
      libgstreamer-plugins-bad1.0-dev libhwy-dev libmosquitto-dev libjson-glib-dev libmicrohttpd-dev libssl-dev
    [ -x /usr/local/cuda/bin/nvcc ] && export PATH="/usr/local/cuda/bin:$PATH"
    build=$(mktemp -d)
    args=(--prefix=/usr --buildtype=release -Dtests=disabled -Dexamples=disabled -Drunner=enabled)
    [ -n "${CUV_CUDA_ARCHS:-}" ] && args+=("-Dcuda-archs=$CUV_CUDA_ARCHS")
    meson setup "$build" "$src" "${args[@]}" >/dev/null
    version=$(meson introspect --projectinfo "$build" | python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')
    if [ -n "${CUV_VERSION:-}" ] && [ "$CUV_VERSION" != "$version" ]; then
      echo "deploy/container-build.sh: VERSION $CUV_VERSION is not meson.build's project version $version" >&2
      exit 1
    fi
    meson compile -C "$build" >/dev/null
    DESTDIR=$destdir meson install -C "$build" --no-rebuild >/dev/null
    rm -rf "$build"
    echo "installed under $destdir:"
    (cd "$destdir" && find ./usr -name libgstcudavision.so -o -name cudavision-run -o -name gst-cudavision-1.0.pc | sort)
    ;;
  *)
    echo "usage: deploy/container-build.sh runtime|build DESTDIR" >&2
    exit 2
    ;;
esac
