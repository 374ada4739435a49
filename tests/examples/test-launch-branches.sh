#!/usr/bin/env bash
# gst-launch-1.0 itself, as users type it, with many cudahistogram branches in one pipeline
# (docs/design.md, "Messages on one bus"): every run ends within its limit with EOS, and `-m`
# printed every one of the analysers' element messages (one a frame a branch). A hang in one run of
# twenty is a hang, so it runs many times.
#   tests/examples/test-launch-branches.sh          CPU backend: CUV_BUS_BRANCHES (128) branches of
#                                                   CUV_BUS_FRAMES (300) NV12 64x48 frames,
#                                                   CUV_BUS_RUNS (20) runs, CUV_BUS_LIMIT (30) s each
#   tests/examples/test-launch-branches.sh --gpu    CUDA memory (cudaupload ! imagefreeze): 64
#                                                   branches x 1000 frames and 256 x 300 of 1080p,
#                                                   5 runs each, 10 s each (77 without a GPU)
set -u
for e in videotestsrc fakesink cudahistogram; do
  gst-inspect-1.0 "$e" >/dev/null 2>&1 || { echo "no $e here"; [ -n "${CUV_TOOLS_INSTALLED:-}" ] && exit 1; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
# one shape: N branches of SOURCE ! ANALYSER (cudahistogram and its properties), FRAMES a branch,
# RUNS runs within LIMIT s
shape () {
  local n=$1 frames=$2 runs=$3 limit=$4 source=$5 analyser=$6 args=() r rc got took slowest=0
  for _ in $(seq "$n"); do
    # shellcheck disable=SC2206
    args+=($source ! $analyser ! fakesink sync=false)
  done
  for r in $(seq "$runs"); do
    local t0=$SECONDS
    timeout -k 5 "$limit" gst-launch-1.0 -m "${args[@]}" > "$tmp/out" 2>&1
    rc=$?
    took=$((SECONDS - t0))
    [ $took -gt $slowest ] && slowest=$took
    got=$(grep -c '^Got message #[0-9]* from element "cudahistogram[0-9]*" (element): cudahistogram,' "$tmp/out")
    if [ $rc != 0 ] || [ "$got" != $((n * frames)) ] || ! grep -q '^Got EOS from element "pipeline0"' "$tmp/out"; then
      echo "FAIL: $n branches x $frames frames, run $r of $runs: exit $rc ($([ $rc = 124 ] && echo "not done in $limit s")), $got of $((n * frames)) messages"
      grep -E 'ERROR|WARNING: ' "$tmp/out" | grep -v 'falls back to the CPU' | head -n 3
      failed=$((failed + 1))
      return
    fi
  done
  echo "PASS: gst-launch-1.0 with $n branches x $frames frames ($source): $runs of $runs runs ended, every message; slowest $slowest s"
}
if [ "${1:-}" = --gpu ]; then
  gst-inspect-1.0 cudaupload >/dev/null 2>&1 && gst-inspect-1.0 imagefreeze >/dev/null 2>&1 ||
    { echo "no cudaupload or imagefreeze here"; exit 77; }
  gst-launch-1.0 -q videotestsrc num-buffers=1 ! cudaupload ! fakesink >/dev/null 2>&1 || { echo "no usable CUDA device"; exit 77; }
  for nf in "64 1000" "256 300"; do
    set -- $nf
    shape "$1" "$2" 5 10 "videotestsrc num-buffers=1 ! video/x-raw,format=NV12,width=1920,height=1080 ! cudaupload ! imagefreeze num-buffers=$2" cudahistogram
  done
else
  frames=${CUV_BUS_FRAMES:-300}
  shape "${CUV_BUS_BRANCHES:-128}" "$frames" "${CUV_BUS_RUNS:-20}" "${CUV_BUS_LIMIT:-30}" \
    "videotestsrc num-buffers=$frames ! video/x-raw,format=NV12,width=64,height=48" "cudahistogram backend=cpu"
fi
[ $failed = 0 ]
