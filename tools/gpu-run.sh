#!/usr/bin/env bash
# One call's worth of GPU work, as docs/testing.md describes it, with its output in $OUT.
#   tools/gpu-run.sh pack               here: build for the H100, pack the build (.devbuild) and the
#                                       GStreamer runtime (.devbundle); then `run` with
#                                       carry [".devbundle", ".devbuild/build-h100"] and one of:
#                                       (pack-fleet: the fleet's pack and tools, for `fleet`)
#   tools/gpu-run.sh suite [NAME...]    every test whose program is packed (gpu-tests -j 6), or
#                                       those whose name holds NAME
#   tools/gpu-run.sh fleet              (packed with pack-fleet) the fleet tests with backend=cuda
#                                       and openh264enc's cameras
#   tools/gpu-run.sh live [N,... [N,...]]  bench_pipelines --live at 1920x1080 (default
#                                       256,512,1024) and at 3840x2160 (default 32,64,128), 5 s each
#   tools/gpu-run.sh sanitize TOOL      the suite under compute-sanitizer (memcheck, racecheck,
#                                       synccheck or initcheck), small frames (CUV_TEST_QUICK=1)
#   tools/gpu-run.sh bench [ARGS]       (packed with `tools/gpu-pack.sh build-h100 bench`)
#                                       bench_kernels --gpu, then bench_pipelines ARGS (--quick,
#                                       --size WxH, --only TEXT, --seconds S)
#   tools/gpu-run.sh python [ARGS]      (packed with `tools/gpu-pack.sh build-h100 python`, carried
#                                       with .devpy from tools/gpu-python.sh) the Python tests
#                                       (python, python-gpu, frames) with the machine's PyTorch and
#                                       CuPy, then tests/bench/bench_python.py ARGS
# BUILD (default build-h100) names the build, BUNDLE (default .devbundle) the GStreamer runtime:
# BUILD=build-1.26-h100 BUNDLE=.devbundle-1.26 for GStreamer 1.26 (tools/bundle-1.26.sh);
# BUILD=build-1.24-h100 BUNDLE=.devbundle-1.24 DEVPY=.devpy-1.24 for 1.24 (tools/bundle-1.24.sh,
# tools/gpu-python.sh PYINC.tgz 1.24).
set -eu
cd "$(dirname "$0")/.."
b=${BUILD:-build-h100}
bundle=${BUNDLE:-.devbundle}
mode=${1:?usage: tools/gpu-run.sh pack|suite|sanitize TOOL|bench}
shift
if [ "$mode" = pack ] || [ "$mode" = pack-fleet ]; then
  [ -d "$b" ] || meson setup "$b" -Dcuda-archs=90
  meson compile -C "$b"
  tools/gpu-pack.sh "$b" "$([ "$mode" = pack ] && echo tests || echo fleet)"
  # the runtime for what the pack holds, not for the whole build: both must fit one call
  ../shared/device/bundle.sh ".devbuild/$b"
  [ "$mode" = pack ] && exit 0
  # the fleet tests' own tools (tests/fleet/test-site.sh: a subscriber, the broker's password
  # file, certificates, HTTP requests), with the libraries they need that the bundle lacks
  for t in mosquitto_sub mosquitto_passwd openssl curl; do
    p=$(command -v $t) || continue
    cp "$p" "$bundle/bin/"
    ldd "$p" | awk '/=>/ && $3 ~ /^\// {print $3}'
  done | sort -u | grep -vE '/(libc|libm|libdl|libpthread|librt|libresolv|ld-linux[^/]*|libstdc\+\+|libgcc_s)\.so' |
    while read -r l; do [ -e "$bundle/lib/$(basename "$l")" ] || cp -L "$l" "$bundle/lib/"; done
  exit 0
fi
out=${OUT:-/tmp/gpu-run}
mkdir -p "$out"
# shellcheck disable=SC1091
source "$bundle/env.sh"
[ -e "$b/meson-info" ] || ln -sfn ".devbuild/$b" "$b"
export GST_PLUGIN_PATH_1_0=$PWD/$b/gst GST_PLUGIN_PATH=$PWD/$b/gst
# PyGObject for the machine's own Python, where it came (tools/gpu-python.sh; DEVPY=.devpy-1.24 for 1.24)
devpy=${DEVPY:-.devpy}
# shellcheck disable=SC1090
[ -f "$devpy/env.sh" ] && . "$devpy/env.sh"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$out/device.txt" 2>&1 || true
# a GPU test that finds no usable device fails here instead of skipping (tests/common/cuvtest.h)
export CUV_REQUIRE_GPU=1
case $mode in
  suite)
    # every test whose program came (gpu-pack.sh leaves out the CPU reference tests), by its full name
    [ $# -gt 0 ] || set -- $(python3 - "$b" <<'PY'
import json, os, sys
for t in json.load(open(os.path.join(sys.argv[1], "meson-info", "intro-tests.json"))):
    if os.path.exists(t["cmd"][0]):
        print(t["suite"][0].split(":")[-1] + "/" + t["name"])
PY
)
    CUV_TEST_TIMES=$out/times.txt "$bundle/gpu-tests" -j 6 --timeout 300 "$b" "$@" > "$out/suite.log" 2>&1 || true
    tail -n 30 "$out/suite.log"
    ;;
  fleet)
    CUV_FLEET_BACKEND=${CUV_FLEET_BACKEND:-cuda} CUV_CAMERA_ENCODER=${CUV_CAMERA_ENCODER:-openh264enc} CUV_FLEET_KEEP=$out/kept \
      "$bundle/gpu-tests" -j 2 --timeout 300 "$b" fleet/ > "$out/fleet.log" 2>&1 || true
    cat "$out/fleet.log"
    ;;
  sanitize)
    tool=${1:?which compute-sanitizer tool}
    # the tests that make CUDA calls (compute-sanitizer fails a program that never does); racecheck,
    # which looks only at shared memory inside kernels and is the slowest, the kernel tests alone
    # and the frames between elements' streams (docs/design.md, "Synchronisation")
    if [ "$tool" = racecheck ]; then
      set -- kernels-gpu/ check-gpu/stream-model-gpu
    else
      set -- -gpu faults/ stress/ check/ readme embed
    fi
    CUV_TEST_QUICK=1 CUV_STRESS_CYCLES=100 "$bundle/gpu-tests" -j 8 --sanitize "$tool" --timeout 420 "$b" \
      "$@" > "$out/$tool.log" 2>&1 || true
    tail -n 30 "$out/$tool.log"
    ;;
  bench)
    # the pipelines' kernel column reads the kernel run (GPU rows only) instead of running it again
    "$b/tests/bench/bench_kernels" --gpu > "$out/bench_kernels.txt" 2>&1 || true
    stdbuf -oL "$b/tests/bench/bench_pipelines" --kernels "$out/bench_kernels.txt" "$@" \
      > "$out/bench_pipelines.txt" 2>&1 || true
    cat "$out/bench_kernels.txt" "$out/bench_pipelines.txt"
    ;;
  python)
    "$bundle/gpu-tests" -j 3 --timeout 300 "$b" examples/python examples/frames \
      > "$out/python.log" 2>&1 || true
    tail -n 30 "$out/python.log"
    PYTHONPATH=$PWD/python:$PWD/$b/python${PYTHONPATH:+:$PYTHONPATH} python3 -W ignore tests/bench/bench_python.py "$@" \
      > "$out/bench_python.txt" 2>&1 || true
    cat "$out/bench_python.txt"
    ;;
  live)
    counts=${1:-256,512,1024}
    "$b/tests/bench/bench_pipelines" --live "$counts" --seconds 5 > "$out/live-1080p.txt" 2>&1 || true
    "$b/tests/bench/bench_pipelines" --live "${2:-32,64,128}" --size 3840x2160 --seconds 5 > "$out/live-4k.txt" 2>&1 || true
    grep -h -v -e CRITICAL -e '^$' "$out/live-1080p.txt" "$out/live-4k.txt"
    ;;
  *)
    echo "unknown mode $mode" >&2
    exit 2
    ;;
esac
