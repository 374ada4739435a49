#!/usr/bin/env python3
"""Frames a second into a Python consumer (docs/python.md, "Speed: frames into PyTorch and CuPy"):
cudaenhance's frames in CUDA memory taken without a copy (cudavision.frame, then torch.from_dlpack
or cupy.asarray), against the same frames through cudadownload into numpy and up again (torch's
.to("cuda"), cupy.asarray), in one run, alternated.

    bench_python.py [--sizes 1920x1080,3840x2160] [--frames N] [--runs R]

Each row: imagefreeze pushes one frame in CUDA memory N times (a source that costs nothing),
cudaenhance contrast=1.4 makes each frame anew, and the consumer sums every plane on the GPU (a
kernel a plane, no host wait a frame; one at the end). Timed from the first sample pulled to the
last one's sum done (after a warm-up run of each), the median of R runs, with the consumer's host
time a frame (cudavision.frame to the sums queued). `fakesink` is the pipeline with no consumer,
timed between its first and last buffers; the floor of the cudadownload path (torch, same run):
a frame up from pageable memory plus one down into it. Three rows have no kernel: the module alone
(each plane's capsule made and dropped), and the frame into PyTorch and nothing more (a tensor a
plane), from an appsink pulled by hand and through cudavision.frames, the reader docs/python.md
gives first.
"""
import argparse
import statistics
import sys
import time

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

import cudavision  # noqa: E402
import cupy  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402


def pipeline(width, height, frames, tail):
    return (f"videotestsrc num-buffers=1 pattern=smpte ! video/x-raw,format=NV12,width={width},height={height} ! "
            f"cudaupload ! imagefreeze num-buffers={frames} ! cudaenhance contrast=1.4 ! {tail}")


def consume_dlpack(f, acc):
    for p in f.planes:
        acc[0] += torch.from_dlpack(p).sum(dtype=torch.int64)


def consume_download(f, acc):
    for p in f.planes:
        acc[0] += torch.from_numpy(p).to("cuda").sum(dtype=torch.int64)


def rows_first(a):
    """CuPy's sum of a plane, by rows first: a whole-array sum goes through CUB only for a
    contiguous array, and a pitched plane's takes CuPy's one-block kernel (the last row)."""
    return a.reshape(a.shape[0], -1).sum(axis=1, dtype=cupy.int64).sum()


def consume_cupy(f, acc):
    """cupy.asarray of each plane: over a CudaPlane through the CUDA array interface, without a
    copy; of a numpy view, up from pageable memory."""
    for p in f.planes:
        acc[1] += rows_first(cupy.asarray(p))


def consume_cai_whole(f, acc):
    for p in f.planes:
        acc[1] += cupy.asarray(p).sum(dtype=cupy.int64)


def module_only(f, acc):
    for p in f.planes:
        p.__dlpack__(stream=1)  # the capsule, never taken, lets go at once


def tensors_only(f, acc):
    """The frame into PyTorch and nothing more: a tensor a plane, dropped (no kernel)."""
    for p in f.planes:
        torch.from_dlpack(p)


APPSINK = "appsink name=sink sync=false max-buffers=4"
READER = "appsink name=sink"  # cudavision.frames () sets its properties
DOWNLOAD = "cudadownload ! video/x-raw ! " + APPSINK
TORCH_DOWN = "torch: cudadownload, numpy, .to(cuda)"
CUPY_DOWN = "CuPy: cudadownload, numpy, cupy.asarray"
MODES = {  # row: (the pipeline's end, the consumer, the row it is a ratio to)
    "torch: zero-copy, DLPack": (APPSINK, consume_dlpack, TORCH_DOWN),
    TORCH_DOWN: (DOWNLOAD, consume_download, TORCH_DOWN),
    "CuPy: zero-copy, CUDA array interface": (APPSINK, consume_cupy, CUPY_DOWN),
    CUPY_DOWN: (DOWNLOAD, consume_cupy, CUPY_DOWN),
    "CuPy: zero-copy, a whole-plane sum (pitched: no CUB)": (APPSINK, consume_cai_whole, CUPY_DOWN),
    "cudavision.frame and its DLPack capsules alone": (APPSINK, module_only, None),
    "torch: zero-copy, the tensors alone (no kernel)": (APPSINK, tensors_only, None),
    "torch: zero-copy through cudavision.frames, the tensors alone": (READER, tensors_only, None),
    "fakesink (no consumer)": ("fakesink name=sink sync=false", None, None),
}


def run(width, height, frames, tail, consume):
    """Frames a second from the first frame's arrival to the last one consumed; the consumer's
    host time a frame (us); the consumers' sum."""
    p = Gst.parse_launch(pipeline(width, height, frames, tail))
    acc = [torch.zeros((), dtype=torch.int64, device="cuda"), cupy.zeros((), dtype=cupy.int64)]
    if consume is None:  # the same span, between the fakesink's first and last buffers
        stamps = []
        p.get_by_name("sink").get_static_pad("sink").add_probe(
            Gst.PadProbeType.BUFFER, lambda pad, info: stamps.append(time.perf_counter()) or Gst.PadProbeReturn.OK)
        p.set_state(Gst.State.PLAYING)
        msg = p.get_bus().timed_pop_filtered(120 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
        p.set_state(Gst.State.NULL)
        if msg is None or msg.type != Gst.MessageType.EOS or len(stamps) != frames:
            raise SystemExit(f"the pipeline failed: {msg.parse_error() if msg else 'timeout'}")
        return (frames - 1) / (stamps[-1] - stamps[0]), 0, 0
    if tail == READER:  # the reader as docs/python.md gives it: the pipeline's frames in a for loop
        n, t0, host = 0, None, 0.0
        with cudavision.frames(p) as reader:
            for f in reader:
                t = time.perf_counter()
                t0 = t0 or t
                consume(f, acc)
                f.close()
                host += time.perf_counter() - t
                n += 1
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - t0
        if n != frames:
            raise SystemExit(f"{n} of {frames} frames through the reader")
        return (n - 1) / elapsed, host / n * 1e6, 0
    sink = p.get_by_name("sink")
    p.set_state(Gst.State.PLAYING)
    n, t0, host = 0, None, 0.0
    while True:
        sample = sink.emit("try-pull-sample", 20 * Gst.SECOND)
        if sample is None:
            break
        t = time.perf_counter()
        t0 = t0 or t
        with cudavision.frame(sample) as f:
            consume(f, acc)
        host += time.perf_counter() - t
        n += 1
    torch.cuda.synchronize()
    cupy.cuda.runtime.deviceSynchronize()
    elapsed = time.perf_counter() - t0
    err = p.get_bus().pop_filtered(Gst.MessageType.ERROR)
    p.set_state(Gst.State.NULL)
    if err is not None or n != frames:
        raise SystemExit(f"{n} of {frames} frames: {err.parse_error() if err else ''}")
    return (n - 1) / elapsed, host / n * 1e6, int(acc[0].item()) + int(acc[1].item())


def floors(width, height):
    """Frames a second of an NV12 frame up from pageable memory plus one down into it (torch,
    CUDA events, median of 50)."""
    size = width * height * 3 // 2
    dev, dev2 = torch.empty(size, dtype=torch.uint8, device="cuda"), torch.empty(size, dtype=torch.uint8, device="cuda")
    host = torch.from_numpy(np.ones(size, np.uint8))

    def timed(fn):
        times = []
        for i in range(60):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            if i >= 10:
                times.append(a.elapsed_time(b) / 1000)
        return 1 / statistics.median(times)

    return timed(lambda: (dev.copy_(host), host.copy_(dev2)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1920x1080,3840x2160")
    ap.add_argument("--frames", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    Gst.init(None)
    print("| frame | row | frames a second, median (runs) | to its cudadownload row | consumer's host time a frame, us |")
    print("|---|---|---:|---:|---:|")
    print(f"# {torch.cuda.get_device_name()}, GStreamer {Gst.version_string()}, torch {torch.__version__}, "
          f"CuPy {cupy.__version__}; NV12, {args.frames} frames a run, median of {args.runs}")
    for size in args.sizes.split(","):
        width, height = (int(v) for v in size.split("x"))
        frames = args.frames
        rates, hosts = {m: [] for m in MODES}, {m: [] for m in MODES}
        sums = {}
        for mode, (tail, consume, _) in MODES.items():  # a warm-up run of each
            run(width, height, 50, tail, consume)
        for _ in range(args.runs):  # the modes alternate within each round
            for mode, (tail, consume, _) in MODES.items():
                fps, host, total = run(width, height, frames, tail, consume)
                rates[mode].append(fps)
                hosts[mode].append(host)
                if consume not in (None, module_only, tensors_only):
                    sums.setdefault(mode, total)
        if len({v for v in sums.values()}) != 1:
            raise SystemExit(f"the consumers summed different bytes: {sums}")
        pcie_fps = floors(width, height)
        print(f"| {size} | floor: a frame up from pageable memory and one down into it | {pcie_fps:,.0f} | | |")
        for mode, (_, consume, base) in MODES.items():
            m = statistics.median(rates[mode])
            runs = ", ".join(f"{r:,.0f}" for r in rates[mode])
            ratio = f"{m / statistics.median(rates[base]):.1f}x" if base else ""
            host = f"{statistics.median(hosts[mode]):,.0f}" if consume else ""
            print(f"| {size} | {mode} | {m:,.0f} ({runs}) | {ratio} | {host} |")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
