#!/usr/bin/env bash
# gst-launch-1.0 itself, as users type it, with many cudahistogram branches in one pipeline
# (docs/design.md, "Messages on one bus"): every run ends within its limit with EOS, and `-m`
# printed every one of the analysers' element messages (one a frame a branch). A hang in one run of
# twenty is a hang, so it runs many times. On the GPU the timed runs are quiet (-q), as the line is
# typed, and one run before them counts with -m: printing 76,800 histograms on gst-launch-1.0's
# main loop takes longer than the streaming (a message waits in the bus's queue, not in a thread).
#   tests/examples/test-launch-branches.sh          CPU backend: CUV_BUS_BRANCHES (128) branches of
#                                                   CUV_BUS_FRAMES (300) NV12 64x48 frames,
#                                                   CUV_BUS_RUNS (20) runs, CUV_BUS_LIMIT (30) s each
#   tests/examples/test-launch-branches.sh --gpu    CUDA memory (cudaupload ! imagefreeze): 64
#                                                   branches x 1000 frames and 256 x 300 of 1080p,
#                                                   one counted run, then 5 runs within
#                                                   CUV_BUS_LIMIT (20) s each (77 without a GPU).
#                                                   Alone on an H100 they take 4 to 9 s: 20 leaves
#                                                   room for the suite's other tests beside it
#                                                   (nvcodec's plugin_init alone then takes seconds)
set -u
for e in videotestsrc fakesink cudahistogram; do
  gst-inspect-1.0 "$e" >/dev/null 2>&1 || { echo "no $e here"; [ -n "${CUV_TOOLS_INSTALLED:-}" ] && exit 1; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# a registry of its own, made before the first timed run: another test's plugin path in a shared
# one makes gst-launch-1.0 scan again (nvcodec's probe alone takes seconds), inside the limit
[ -n "${GST_REGISTRY_1_0:-}" ] && cp "$GST_REGISTRY_1_0" "$tmp/registry.bin" 2>/dev/null
export GST_REGISTRY_1_0=$tmp/registry.bin GST_REGISTRY=$tmp/registry.bin
gst-inspect-1.0 cudahistogram >/dev/null 2>&1
failed=0
# One run of ARGS within LIMIT s. Counted (-m): gst-launch-1.0 prints every message, and the run
# must show the N x FRAMES analyser messages and EOS; quiet (-q), as the issue's users type it: the
# run ends with status 0 (EOS, no error) in time. Says how long it took in $took.
launch () {
  local mode=$1 limit=$2 want=$3 what=$4 rc got t0=$EPOCHREALTIME
  shift 4
  timeout -k 5 "$limit" gst-launch-1.0 "$mode" "$@" > "$tmp/out" 2>&1
  rc=$?
  took=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
  got=$want
  if [ "$mode" = -m ]; then
    got=$(grep -c '^Got message #[0-9]* from element "cudahistogram[0-9]*" (element): cudahistogram,' "$tmp/out")
    grep -q '^Got EOS from element "pipeline0"' "$tmp/out" || [ $rc != 0 ] || rc=eos
  fi
  [ $rc = 0 ] && [ "$got" = "$want" ] && return 0
  echo "FAIL: $what: exit $rc$([ "$rc" = 124 ] && echo " (not done in $limit s)")$([ "$rc" = eos ] && echo " (no EOS)"), $got of $want messages, $took s"
  grep -E 'ERROR|WARNING: ' "$tmp/out" | grep -v 'falls back to the CPU' | head -n 3
  return 1
}
# N branches of SOURCE ! ANALYSER (cudahistogram and its properties), FRAMES a branch: RUNS runs
# within LIMIT s each; COUNTED: every run with -m ("all"), or one more run with -m before them
# ("first", where printing every message on the main loop would cost more than the limit)
shape () {
  local n=$1 frames=$2 runs=$3 limit=$4 source=$5 analyser=$6 counted=$7 args=() r times="" took
  for _ in $(seq "$n"); do
    # shellcheck disable=SC2206
    args+=($source ! $analyser ! fakesink sync=false)
  done
  local what="gst-launch-1.0 with $n branches x $frames frames ($source ! $analyser)"
  if [ "$counted" = first ]; then
    launch -m 120 $((n * frames)) "$what, counted with -m" "${args[@]}" || { failed=$((failed + 1)); return; }
    echo "PASS: $what: every message and EOS (-m, $took s)"
  fi
  for r in $(seq "$runs"); do
    launch "$([ "$counted" = all ] && echo -m || echo -q)" "$limit" $((n * frames)) "$what, run $r of $runs" "${args[@]}" ||
      { echo "  the runs before took (s):$times"; failed=$((failed + 1)); return; }
    times+=" $took"
  done
  echo "PASS: $what: $runs of $runs runs ended within $limit s$([ "$counted" = all ] && echo ", every message and EOS"); each took (s):$times"
}
if [ "${1:-}" = --gpu ]; then
  gst-inspect-1.0 cudaupload >/dev/null 2>&1 && gst-inspect-1.0 imagefreeze >/dev/null 2>&1 ||
    { echo "no cudaupload or imagefreeze here"; exit 77; }
  gst-launch-1.0 -q videotestsrc num-buffers=1 ! cudaupload ! fakesink >/dev/null 2>&1 || { echo "no usable CUDA device"; exit 77; }
  for nf in "64 1000" "256 300"; do
    set -- $nf
    shape "$1" "$2" 5 "${CUV_BUS_LIMIT:-20}" "videotestsrc num-buffers=1 ! video/x-raw,format=NV12,width=1920,height=1080 ! cudaupload ! imagefreeze num-buffers=$2" cudahistogram first
  done
else
  frames=${CUV_BUS_FRAMES:-300}
  shape "${CUV_BUS_BRANCHES:-128}" "$frames" "${CUV_BUS_RUNS:-20}" "${CUV_BUS_LIMIT:-30}" \
    "videotestsrc num-buffers=$frames ! video/x-raw,format=NV12,width=64,height=48" "cudahistogram backend=cpu" all
fi
[ $failed = 0 ]
