#!/usr/bin/env bash
# The pipelines of tests/fleet/size-gpu.sh without the runner: the same N RTSP cameras of one shared
# 1080p30 H.264 stream, the same source, queue and chain as cudavision-run builds for each camera
# (runner/pipeline.cpp), as N branches of one gst-launch-1.0 pipeline, which shares one CUDA
# context; for docs/fleet.md's comparison of the runner's host time with gst-launch's. Prints,
# after SECONDS of warm-up and SECONDS measured: the cameras' frame rates (lowest, median; from
# fpsdisplaysink), the CPU time of gst-launch and of the camera server, the GPU's and its decoders'
# load.
#   tests/fleet/size-launch.sh BUILD_DIR N [SECONDS] [PIPELINE]
# Needs rtspsrc, nvh264dec and fpsdisplaysink where it runs (the GPU machine: see docs/fleet.md).
set -eu
build=$(cd "$1" && pwd)
n=${2:?cameras}
seconds=${3:-20}
pipeline=${4:-cudasobel ! cudaenhance contrast=1.4 ! cudahistogram ! cudaheatmap}
dir=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$dir"' EXIT
port=$((23000 + $$ % 1000 * 10))
CUV_CAMERA_SHARED=1 CUV_CAMERA_ENCODER=${CUV_CAMERA_ENCODER:-openh264enc} "$build/tests/rtsp-camera" $port 1920 1080 30 \
  > "$dir/camera.log" 2>&1 &
server=$!
pids+=($server)
branches=()
for i in $(seq 0 $((n - 1))); do
  branches+=(uridecodebin "uri=rtsp://127.0.0.1:$port/cam" 'caps=video/x-raw(ANY)' expose-all-streams=false !
    queue max-size-buffers=4 max-size-bytes=0 max-size-time=0 ! $pipeline !
    fpsdisplaysink "name=c$i" video-sink=fakesink sync=false text-overlay=false fps-update-interval=1000)
done
sleep 1
GST_PLUGIN_PATH=$build/gst GST_PLUGIN_FEATURE_RANK=${GST_PLUGIN_FEATURE_RANK:-nvh264dec:MAX,nvh265dec:MAX} \
  gst-launch-1.0 -v "${branches[@]}" > "$dir/launch.log" 2>&1 &
launch=$!
pids+=($launch)
cpu () { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# fpsdisplaysink's last message: "rendered: R, dropped: D, current: C, average: A"
rendered () { python3 - "$dir/launch.log" <<'PY'
import re, sys
last = {}
for m in re.finditer(r'GstFPSDisplaySink:(c\d+): last-message = rendered: (\d+)', open(sys.argv[1], errors='replace').read()):
    last[m.group(1)] = int(m.group(2))
print(" ".join(f"{k}={v}" for k, v in last.items()))
PY
}
sleep "$seconds"
f0=$(rendered) l0=$(cpu $launch) s0=$(cpu $server) t0=$(date +%s.%N)
nvidia-smi --query-gpu=utilization.gpu,utilization.decoder,memory.used --format=csv,noheader -lms 1000 > "$dir/gpu.csv" 2>&1 &
smi=$!
pids+=($smi)
sleep "$seconds"
f1=$(rendered) l1=$(cpu $launch) s1=$(cpu $server) t1=$(date +%s.%N)
kill $smi 2>/dev/null || true
python3 - "$n" "$seconds" "$(getconf CLK_TCK)" "$l0" "$l1" "$s0" "$s1" "$t0" "$t1" "$dir/gpu.csv" "$f0" "$f1" <<'PY'
import statistics, sys
n, secs, hz = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
l0, l1, s0, s1, t0, t1 = map(float, sys.argv[4:10])
f0, f1 = (dict((kv.split("=")[0], int(kv.split("=")[1])) for kv in a.split()) for a in sys.argv[11:13])
rates = sorted((f1.get(c, 0) - f0.get(c, 0)) / (t1 - t0) for c in (f"c{i}" for i in range(n)))
frames = sum(rates) * (t1 - t0)
gpu = [l.split(",") for l in open(sys.argv[10]) if "%" in l]
import os
codec = "H.265" if os.environ.get("CUV_CAMERA_ENCODER") == "x265enc" else "H.264"
if "10LE" in os.environ.get("CUV_CAMERA_FORMAT", ""):
    codec += " 10-bit"
print(f"{n} cameras of 1920x1080 {codec} at 30 fps in one gst-launch-1.0, {secs} s measured after {secs} s:")
print(f"  frames a second per camera: lowest {rates[0]:.1f}, median {statistics.median(rates):.1f}, all {sum(rates):.0f}")
cpu = (l1 - l0) / hz
print(f"  CPU: gst-launch {cpu / (t1 - t0) * 100:.0f}% of one core ({cpu / max(frames, 1) * 1e3:.2f} ms a frame), camera server {(s1 - s0) / hz / (t1 - t0) * 100:.0f}%")
if gpu:
    util = [float(g[0].strip(" %")) for g in gpu]
    dec = [float(g[1].strip(" %")) for g in gpu]
    print(f"  GPU: {statistics.mean(util):.0f}% busy, decoders {statistics.mean(dec):.0f}% (nvidia-smi, mean of {len(util)} samples), memory {gpu[-1][2].strip()}")
PY
grep -m3 -i "error\|warn" "$dir/launch.log" || true
