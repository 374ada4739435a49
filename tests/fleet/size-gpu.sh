#!/usr/bin/env bash
# One runner, N RTSP cameras of one shared 1080p30 H.264 stream (tests/fleet/rtsp-camera, a single
# encoder; H.265 with CUV_CAMERA_ENCODER=x265enc, 10-bit with CUV_CAMERA_FORMAT=I420_10LE as well),
# decoded by nvh264dec (nvh265dec), through a chain of our elements, every result to a Mosquitto
# broker; for the sizing in docs/fleet.md. Prints, after SECONDS of warm-up and SECONDS measured:
# the cameras' frame rates (lowest, median), a frame's age at the sink, frames dropped before the analysis, the results
# published and dropped, the CPU time of the runner and of the camera server, the GPU's and its
# decoders' load.
#   tests/fleet/size-gpu.sh BUILD_DIR N [SECONDS] [PIPELINE]
# CUV_SIZE_WARMUP=S: S seconds of warm-up instead of SECONDS (the cameras' start-up backlog drains).
# Needs mosquitto, rtspsrc and nvh264dec (nvh265dec, x265enc) where it runs (the GPU machine: see docs/fleet.md).
set -eu
build=$(cd "$1" && pwd)
n=${2:?cameras}
seconds=${3:-20}
pipeline=${4:-cudasobel ! cudaenhance contrast=1.4 ! cudahistogram ! cudaheatmap}
dir=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$dir"' EXIT
port=$((21000 + $$ % 1000 * 10))
printf 'listener %s 127.0.0.1\nallow_anonymous true\nuser %s\n' $port "$(id -un)" > "$dir/broker.conf"
mosquitto -c "$dir/broker.conf" > "$dir/broker.log" 2>&1 &
pids+=($!)
CUV_CAMERA_SHARED=1 CUV_CAMERA_ENCODER=${CUV_CAMERA_ENCODER:-openh264enc} "$build/tests/rtsp-camera" $((port + 1)) 1920 1080 30 \
  > "$dir/camera.log" 2>&1 &
server=$!
pids+=($server)
{
  printf '[runner]\nbroker-port=%s\nmetrics-port=%s\nstall-ms=10000\n' $port $((port + 2))
  for i in $(seq 0 $((n - 1))); do
    printf '[camera c%s]\nuri=rtsp://127.0.0.1:%s/cam\npipeline=%s\n' "$i" $((port + 1)) "$pipeline"
  done
} > "$dir/site.conf"
sleep 1
GST_PLUGIN_FEATURE_RANK=${GST_PLUGIN_FEATURE_RANK:-nvh264dec:MAX,nvh265dec:MAX} "$build/runner/cudavision-run" "$dir/site.conf" \
  > "$dir/runner.log" 2>&1 &
runner=$!
pids+=($runner)
metrics () { python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:$((port + 2))/metrics').read().decode())"; }
cpu () { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
sleep "${CUV_SIZE_WARMUP:-$seconds}"
m0=$(metrics)
r0=$(cpu $runner) s0=$(cpu $server) t0=$(date +%s.%N)
nvidia-smi --query-gpu=utilization.gpu,utilization.decoder,memory.used --format=csv,noheader -lms 1000 > "$dir/gpu.csv" 2>&1 &
smi=$!
pids+=($smi)
sleep "$seconds"
m1=$(metrics)
r1=$(cpu $runner) s1=$(cpu $server) t1=$(date +%s.%N)
kill $smi 2>/dev/null || true
hz=$(getconf CLK_TCK)
python3 - "$n" "$seconds" "$hz" "$r0" "$r1" "$s0" "$s1" "$t0" "$t1" "$dir/gpu.csv" <<PY
import re, statistics, sys
n, secs, hz = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
r0, r1, s0, s1 = map(float, sys.argv[4:8])
t0, t1 = float(sys.argv[8]), float(sys.argv[9])
def values(text, name):
    return {m.group(1): float(m.group(2)) for m in re.finditer(r'^%s\{camera="([^"]+)"\} (\S+)' % name, text, re.M)}
def single(text, name):
    m = re.search(r'^%s (\S+)' % name, text, re.M)
    return float(m.group(1)) if m else float('nan')
m0, m1 = """$m0""", """$m1"""
f0, f1 = values(m0, "cudavision_camera_frames_total"), values(m1, "cudavision_camera_frames_total")
d0, d1 = values(m0, "cudavision_camera_dropped_frames_total"), values(m1, "cudavision_camera_dropped_frames_total")
rates = sorted((f1[c] - f0.get(c, 0)) / (t1 - t0) for c in f1)
dropped = sum(d1[c] - d0.get(c, 0) for c in d1)
pub = single(m1, "cudavision_results_published_total") - single(m0, "cudavision_results_published_total")
gpu = [l.split(",") for l in open(sys.argv[10]) if "%" in l]
util = [float(g[0].strip(" %")) for g in gpu]
dec = [float(g[1].strip(" %")) for g in gpu]
import os
codec = "H.265" if os.environ.get("CUV_CAMERA_ENCODER") == "x265enc" else "H.264"
if "10LE" in os.environ.get("CUV_CAMERA_FORMAT", ""):
    codec += " 10-bit"
print(f"{n} cameras of 1920x1080 {codec} at 30 fps, {secs} s measured after {os.environ.get('CUV_SIZE_WARMUP', secs)} s:")
print(f"  frames a second per camera: lowest {rates[0]:.1f}, median {statistics.median(rates):.1f}, all {sum(rates):.0f}")
print(f"  frames dropped before the analysis: {dropped:.0f} ({dropped / max(1, sum(f1[c] - f0.get(c, 0) for c in f1) + dropped) * 100:.2f}%)")
print(f"  results published: {pub / (t1 - t0):.0f} a second; dropped in all: {single(m1, 'cudavision_results_dropped_total'):.0f}; queued now: {single(m1, 'cudavision_results_queued'):.0f}")
frames = sum(f1[c] - f0.get(c, 0) for c in f1)
print(f"  CPU: runner {(r1 - r0) / hz / (t1 - t0) * 100:.0f}% of one core ({(r1 - r0) / hz / max(frames, 1) * 1e3:.2f} ms a frame), camera server {(s1 - s0) / hz / (t1 - t0) * 100:.0f}%")
if util:
    print(f"  GPU: {statistics.mean(util):.0f}% busy, decoders {statistics.mean(dec):.0f}% (nvidia-smi, mean of {len(util)} samples), memory {gpu[-1][2].strip()}")
age = sorted(values(m1, "cudavision_camera_latency_seconds").values())
if age:
    print(f"  a frame's age at the sink (cudavision_camera_latency_seconds, each camera's smoothed): median camera {statistics.median(age) * 1e3:.0f} ms, worst {age[-1] * 1e3:.0f} ms")
# every frame's age in the window, all cameras: the bucket that holds the 99th percentile
def buckets(text):
    out = {}
    for m in re.finditer(r'^cudavision_camera_frame_age_seconds_bucket\{camera="[^"]+",le="([^"]+)"\} (\S+)', text, re.M):
        out[m.group(1)] = out.get(m.group(1), 0) + float(m.group(2))
    return out
b0, b1 = buckets(m0), buckets(m1)
les = sorted(b1, key=lambda le: float("inf") if le == "+Inf" else float(le))
total = b1.get("+Inf", 0) - b0.get("+Inf", 0)
if total:
    p99 = next(le for le in les if b1[le] - b0.get(le, 0) >= 0.99 * total)
    within = (b1["0.1"] - b0.get("0.1", 0)) / total * 100 if "0.1" in b1 else float("nan")
    print(f"  every frame's age at the sink ({total:.0f} frames, cudavision_camera_frame_age_seconds): p99 at most {p99} s, {within:.2f}% within 100 ms")
PY
grep -m3 -i "error\|warn" "$dir/runner.log" || true
