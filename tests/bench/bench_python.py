#!/usr/bin/env python3
"""Frames a second into a Python consumer (docs/performance.md, "Frames into PyTorch and CuPy"):
cudaenhance's frames in CUDA memory taken without a copy (cudavision.frame, then torch.from_dlpack
or cupy.asarray), against the same frames through cudadownload into numpy and up again with
torch's .to("cuda"), in one run, alternated.

    bench_python.py [--sizes 1920x1080,3840x2160] [--frames N] [--runs R]

Each row: imagefreeze pushes one frame in CUDA memory N times (a source that costs nothing),
cudaenhance contrast=1.4 makes each frame anew, and the consumer sums every plane on the GPU (a
kernel a plane, no host wait a frame; one at the end). Timed from the first sample pulled to the
last one's sum done; the median of R runs. `fakesink` is the pipeline with no consumer; the floors
(torch in the same run): a device-to-device copy of a frame, and a frame up from pageable host
memory plus one down (what the cudadownload path must at least move).
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
        acc += torch.from_dlpack(p).sum(dtype=torch.int64)


def consume_cai(f, acc):
    for p in f.planes:
        acc += torch.as_tensor(cupy.asarray(p).sum(dtype=cupy.int64), device="cuda")


def consume_download(f, acc):
    for p in f.planes:
        acc += torch.from_numpy(p).to("cuda").sum(dtype=torch.int64)


MODES = {
    "zero-copy, DLPack into torch": ("appsink name=sink sync=false max-buffers=4", consume_dlpack),
    "zero-copy, CUDA array interface into CuPy": ("appsink name=sink sync=false max-buffers=4", consume_cai),
    "cudadownload, numpy, torch .to(cuda)": ("cudadownload ! video/x-raw ! appsink name=sink sync=false max-buffers=4",
                                             consume_download),
    "fakesink (no consumer)": ("fakesink sync=false", None),
}


def run(width, height, frames, tail, consume):
    p = Gst.parse_launch(pipeline(width, height, frames, tail))
    acc = torch.zeros((), dtype=torch.int64, device="cuda")
    if consume is None:
        t0 = time.perf_counter()
        p.set_state(Gst.State.PLAYING)
        msg = p.get_bus().timed_pop_filtered(120 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
        elapsed = time.perf_counter() - t0
        p.set_state(Gst.State.NULL)
        if msg is None or msg.type != Gst.MessageType.EOS:
            raise SystemExit(f"the pipeline failed: {msg.parse_error() if msg else 'timeout'}")
        return frames / elapsed, 0
    sink = p.get_by_name("sink")
    p.set_state(Gst.State.PLAYING)
    n, t0 = 0, None
    while True:
        sample = sink.emit("try-pull-sample", 20 * Gst.SECOND)
        if sample is None:
            break
        if t0 is None:
            t0 = time.perf_counter()
        with cudavision.frame(sample) as f:
            consume(f, acc)
        n += 1
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - t0
    err = p.get_bus().pop_filtered(Gst.MessageType.ERROR)
    p.set_state(Gst.State.NULL)
    if err is not None or n != frames:
        raise SystemExit(f"{n} of {frames} frames: {err.parse_error() if err else ''}")
    return (n - 1) / elapsed, int(acc.item())


def floors(width, height):
    """Frames a second of a device-to-device copy of an NV12 frame, and of one up from pageable
    memory plus one down into it (torch, CUDA events, median of 50)."""
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

    return timed(lambda: dev2.copy_(dev)), timed(lambda: (dev.copy_(host), host.copy_(dev2)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1920x1080,3840x2160")
    ap.add_argument("--frames", type=int, default=600)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    Gst.init(None)
    print(f"# {torch.cuda.get_device_name()}, GStreamer {Gst.version_string()}, torch {torch.__version__}, "
          f"CuPy {cupy.__version__}; NV12, {args.frames} frames a run, median of {args.runs}")
    for size in args.sizes.split(","):
        width, height = (int(v) for v in size.split("x"))
        frames = args.frames if width * height <= 1920 * 1080 else args.frames // 2
        rates = {m: [] for m in MODES}
        sums = {}
        for _ in range(args.runs):  # the modes alternate within each round
            for mode, (tail, consume) in MODES.items():
                fps, total = run(width, height, frames, tail, consume)
                rates[mode].append(fps)
                if consume is not None:
                    sums.setdefault(mode, total)
        if len({v for v in sums.values()}) != 1:
            raise SystemExit(f"the consumers summed different bytes: {sums}")
        copy_fps, pcie_fps = floors(width, height)
        down = statistics.median(rates["cudadownload, numpy, torch .to(cuda)"])
        print(f"| {size} | floor: device copy | {copy_fps:,.0f} | |")
        print(f"| {size} | floor: a frame up and one down, pageable | {pcie_fps:,.0f} | |")
        for mode in MODES:
            m = statistics.median(rates[mode])
            runs = ", ".join(f"{r:,.0f}" for r in rates[mode])
            print(f"| {size} | {mode} | {m:,.0f} ({runs}) | {m / down:.1f}x |")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
