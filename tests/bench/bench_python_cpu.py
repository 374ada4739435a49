#!/usr/bin/env python3
"""The cudavision module's own cost a frame in system memory (docs/python.md, "Speed: frames into
PyTorch and CuPy"): `cudavision.frame (sample)`, a read of every plane's view and `close ()`,
timed apart from the pipeline that made the frames. No GPU needed.

    /usr/bin/python3 tests/bench/bench_python_cpu.py [--build DIR] [--formats NV12,RGBA] [--size 1920x1080]
        [--element "cudaenhance backend=cpu"] [--frames N] [--runs R] [--compare REV] [--profile] [--cuda-route]

The measures of a format, each run of them in a process of its own:
- held: `videotestsrc ! FORMAT,SIZE ! ELEMENT ! appsink` makes 8 samples, the pipeline stops, and
  frame + planes + close runs over them in turn N times (us a frame). Only
  the module runs: the figure the docs quote. Timed by blocks of 100 frames, the median block.
- pulled: `videotestsrc num-buffers=1 ! imagefreeze num-buffers=N ! ELEMENT ! appsink`, the
  consumer as an application runs it; the median of the module's time around each frame, and
  of the time spent waiting in pull-sample (the pipeline's).
- reader: the same pipeline through `cudavision.frames ()` (docs/python.md, "Reading frames"),
  `next ()` + planes + close a frame, the median, with the reader's own pulls in it, and the
  median of the same less the time in those pulls (the appsink's try_pull_sample timed where
  PyGObject's class gives it to the reader: the reader's own Python, apart from the wait for the
  pipeline's thread, which a busy machine stretches); "with results", the frame made once with
  two metas of ours (`cudahistogram ! cudamotionest` before imagefreeze, which repeats the buffer
  and its metas at no cost) and `f.results` read too; and `fakesink`: the same pipeline's own
  time a frame (N frames timed against 2N, so that its start and stop cancel), the rate the
  reader is held to.

R runs of each (alternated with --compare's), the median printed with every run's figure.
--compare REV times the module of git revision REV (python/cudavision as committed there) against
the working tree's in the same run, alternated. --profile prints cProfile's top functions of the
held loop and of the reader's two loops (the working tree's module) instead.
--cuda-route times the route of a frame in CUDA memory instead (the held loop only), on this
machine: the same samples under CUDA caps, the module told that system memory is CUDA memory and
mapped as such (GST_MAP_CUDA off), libcuda a stub that answers at once (compiled here with cc), and
each plane's DLPack capsule made and dropped, as bench_python.py's "cudavision.frame and its DLPack
capsules alone" row on the GPU machine. Python's share only: the driver's and GStreamer's CUDA
calls cost nothing here.
SPDX-License-Identifier: LGPL-2.1-or-later
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
HELD = 8  # samples the held loop goes round
READ = 2000  # frames of the reader's loops (at most)
BLOCK = 100  # frames the held loop times at once: the median block, not the mean, so that another
# process taking the CPU for a while does not count


def caps(fmt, size):
    width, height = size.split("x")
    return f"video/x-raw,format={fmt},width={width},height={height}"


def touch(f):
    """What a consumer does at least: each plane's view, read."""
    for p in f.planes:
        p[0, 0]


def touch_cuda(f):
    """Each plane's DLPack capsule, made and dropped."""
    for p in f.planes:
        p.__dlpack__(stream=1)


# libcuda's calls the module makes, answered at once: the frame is in context 1 on device 0
STUB_CUDA = """
int cuPointerGetAttribute (void *data, int attribute, unsigned long long ptr)
{ if (attribute == 1) *(void **) data = (void *) 1; else *(int *) data = 0; return 0; }
int cuPointerGetAttributes (unsigned n, int *attributes, void **data, unsigned long long ptr)
{ for (unsigned i = 0; i < n; i++) cuPointerGetAttribute (data[i], attributes[i], ptr); return 0; }
int cuDevicePrimaryCtxRetain (void **c, int d) { *c = (void *) 1; return 0; }
int cuDevicePrimaryCtxRelease_v2 (int d) { return 0; }
int cuCtxPushCurrent_v2 (void *c) { return 0; }
int cuCtxPopCurrent_v2 (void **c) { return 0; }
int cuCtxGetCurrent (void **c) { *c = 0; return 0; }
int cuEventCreate (void **e, unsigned f) { *e = (void *) 1; return 0; }
int cuEventRecord (void *e, void *s) { return 0; }
int cuEventSynchronize (void *e) { return 0; }
int cuEventDestroy_v2 (void *e) { return 0; }
int cuStreamWaitEvent (void *s, void *e, unsigned f) { return 0; }
int cuStreamQuery (void *s) { return 600; } /* CUDA_ERROR_NOT_READY: the writer still in flight */
"""


def held(cudavision, Gst, fmt, size, element, frames, profile=False, cuda=False):
    p = Gst.parse_launch(f"videotestsrc num-buffers={HELD} ! {caps(fmt, size)} ! {element} ! "
                         f"appsink name=sink sync=false max-buffers={HELD}")
    sink = p.get_by_name("sink")
    p.set_state(Gst.State.PLAYING)
    samples = [sink.emit("pull-sample") for _ in range(HELD)]
    p.set_state(Gst.State.NULL)
    if any(s is None for s in samples):
        raise SystemExit(f"{fmt}: the pipeline gave fewer than {HELD} samples")
    touch_planes = touch
    if cuda:
        c = cudavision._cuda
        c.GST_MAP_CUDA = 0
        c._CUDA_MEMORY_TYPE = b"SystemMemory" if isinstance(c._CUDA_MEMORY_TYPE, bytes) else "SystemMemory"
        on_gpu = Gst.Caps.from_string(samples[0].get_caps().to_string().replace(
            "video/x-raw", "video/x-raw(memory:CUDAMemory)", 1))
        samples = [Gst.Sample.new(s.get_buffer(), on_gpu, None, None) for s in samples]
        touch_planes = touch_cuda
        with cudavision.frame(samples[0]) as f:
            if not isinstance(f.planes[0], cudavision.CudaPlane):
                raise SystemExit(f"{fmt}: not the CUDA route: {f!r}")
    frame = cudavision.frame
    for s in samples:  # warm-up: the caps' parse, numpy's first views
        with frame(s) as f:
            touch_planes(f)
    loop = [samples[i % HELD] for i in range(frames)]
    if profile:
        import cProfile
        import pstats
        pr = cProfile.Profile()
        pr.enable()
    blocks = []
    for b in range(0, frames, BLOCK):
        t = time.perf_counter()
        for s in loop[b:b + BLOCK]:
            f = frame(s)
            touch_planes(f)
            f.close()
        blocks.append((time.perf_counter() - t) / len(loop[b:b + BLOCK]))
    if profile:
        pr.disable()
        pstats.Stats(pr).sort_stats("tottime").print_stats(25)
    return {"held": statistics.median(blocks) * 1e6}


def pulled(cudavision, Gst, fmt, size, element, frames):
    p = Gst.parse_launch(f"videotestsrc num-buffers=1 ! {caps(fmt, size)} ! imagefreeze num-buffers={frames} ! "
                         f"{element} ! appsink name=sink sync=false max-buffers=4")
    sink = p.get_by_name("sink")
    p.set_state(Gst.State.PLAYING)
    frame = cudavision.frame
    module, pull = [], []
    while True:
        t0 = time.perf_counter()
        s = sink.emit("pull-sample")
        t1 = time.perf_counter()
        if s is None:
            break
        f = frame(s)
        touch(f)
        f.close()
        module.append(time.perf_counter() - t1)
        pull.append(t1 - t0)
    p.set_state(Gst.State.NULL)
    if len(module) != frames:
        raise SystemExit(f"{fmt}: {len(module)} of {frames} frames")
    return {"pulled": statistics.median(module[10:]) * 1e6, "pull": statistics.median(pull[10:]) * 1e6}


# what "reader, with results" puts on the one frame imagefreeze repeats: two metas of ours
METAS = "cudahistogram backend=cpu name=h ! cudamotionest backend=cpu name=m"


def reader(cudavision, Gst, fmt, size, element, frames, with_results=False, profile=False):
    if with_results:
        text = f"videotestsrc num-buffers=1 ! {caps(fmt, size)} ! {METAS} ! imagefreeze num-buffers={frames} ! appsink"
    else:
        text = f"videotestsrc num-buffers=1 ! {caps(fmt, size)} ! imagefreeze num-buffers={frames} ! {element} ! appsink"
    from gi.repository import GstApp
    times, own, waits = [], [], []
    # the appsink's pull timed where the reader calls it through PyGObject (the wait for the
    # pipeline's thread, which a busy machine stretches), so that the reader's own time is had
    # apart: next () less its pulls
    plain_pull = GstApp.AppSink.try_pull_sample

    def timed_pull(sink, timeout):
        t = time.perf_counter()
        sample = plain_pull(sink, timeout)
        waits.append(time.perf_counter() - t)
        return sample

    if profile:
        import cProfile
        import pstats
        pr = cProfile.Profile()
        pr.enable()
    GstApp.AppSink.try_pull_sample = timed_pull
    try:
        with cudavision.frames(text) as frames_of:
            it = iter(frames_of)
            while True:
                del waits[:]
                t = time.perf_counter()
                f = next(it, None)
                if f is None:
                    break
                touch(f)
                if with_results and len(f.results) != 2:
                    raise SystemExit(f"{fmt}: results {sorted(f.results)}, not h and m")
                f.close()
                times.append(time.perf_counter() - t)
                own.append(times[-1] - sum(waits) if waits else float("nan"))
    finally:
        GstApp.AppSink.try_pull_sample = plain_pull
    if profile:
        pr.disable()
        pstats.Stats(pr).sort_stats("tottime").print_stats(25)
    if len(times) != frames:
        raise SystemExit(f"{fmt}: the reader gave {len(times)} of {frames} frames")
    return statistics.median(times[10:]) * 1e6, statistics.median(own[10:]) * 1e6


def fakesink(Gst, fmt, size, element, frames):
    """The pipeline's own time a frame: @frames more of them timed apart from its start and stop."""
    def run(n):
        p = Gst.parse_launch(f"videotestsrc num-buffers=1 ! {caps(fmt, size)} ! imagefreeze num-buffers={n} ! "
                             f"{element} ! fakesink sync=false")
        t = time.perf_counter()
        p.set_state(Gst.State.PLAYING)
        msg = p.get_bus().timed_pop_filtered(60 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
        t = time.perf_counter() - t
        p.set_state(Gst.State.NULL)
        if msg is None or msg.type != Gst.MessageType.EOS:
            raise SystemExit(f"{fmt}: the fakesink pipeline did not end")
        return t
    return (run(2 * frames) - run(frames)) / frames * 1e6


def child(args):
    """One run: the module from args.module_path, one format, printed as JSON."""
    sys.path.insert(0, args.module_path)
    sys.path.append(os.path.abspath(os.path.join(args.build, "python")))  # the C++ part (python/meson.build)
    import gi
    gi.require_version("Gst", "1.0")
    from gi.repository import Gst
    import cudavision
    Gst.init(None)
    if not cudavision.__file__.startswith(args.module_path):
        raise SystemExit(f"cudavision from {cudavision.__file__}, not {args.module_path}")
    out = held(cudavision, Gst, args.child, args.size, args.element, args.frames, args.profile, args.cuda_route)
    if args.profile:
        for with_results in (False, True):
            reader(cudavision, Gst, args.child, args.size, args.element, min(args.frames, READ), with_results, True)
    elif not args.cuda_route:
        out.update(pulled(cudavision, Gst, args.child, args.size, args.element, min(args.frames, 300)))
        read = min(args.frames, READ)
        out["reader"], out["own"] = reader(cudavision, Gst, args.child, args.size, args.element, read)
        out["results"], out["results-own"] = reader(cudavision, Gst, args.child, args.size, args.element, read, True)
        out["fakesink"] = fakesink(Gst, args.child, args.size, args.element, 10 * read)
    import numpy
    out["versions"] = (f"GStreamer {Gst.version_string().split()[-1]}, numpy {numpy.__version__}, "
                       f"Python {sys.version.split()[0]}")
    print(json.dumps(out))


def module_of(rev, into):
    """python/cudavision as committed at @rev, under @into."""
    archive = subprocess.run(["git", "-C", ROOT, "archive", rev, "python/cudavision"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", into], input=archive, check=True)
    return os.path.join(into, "python")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build", help="the build directory whose plugin makes the frames")
    ap.add_argument("--formats", default="NV12,RGBA")
    ap.add_argument("--size", default="1920x1080")
    ap.add_argument("--element", default="cudaenhance backend=cpu", help="between the source and the appsink")
    ap.add_argument("--frames", type=int, default=20000, help="frames of the held loop (the pulled one: at most 300)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--compare", metavar="REV", help="also time the module of this git revision, alternated")
    ap.add_argument("--profile", action="store_true", help="cProfile of the held loop, the working tree's module")
    ap.add_argument("--cuda-route", action="store_true",
                    help="the CUDA route, emulated on system memory with a stub libcuda (held loop only)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--module-path", default=os.path.join(ROOT, "python"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)

    env = dict(os.environ, GST_PLUGIN_PATH=os.path.abspath(os.path.join(args.build, "gst")))
    env.setdefault("GST_REGISTRY_1_0", os.path.abspath(os.path.join(args.build, "bench-python-registry.bin")))
    with tempfile.TemporaryDirectory() as tmp:
        modules = {"tree": os.path.join(ROOT, "python")}
        if args.compare:
            modules = {args.compare: module_of(args.compare, tmp), **modules}
        if args.cuda_route:
            with open(os.path.join(tmp, "stub.c"), "w") as f:
                f.write(STUB_CUDA)
            subprocess.run(["cc", "-shared", "-fPIC", "-o", os.path.join(tmp, "libcuda.so.1"),
                            os.path.join(tmp, "stub.c")], check=True)
            env["LD_LIBRARY_PATH"] = tmp + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")

        def one(fmt, path):
            cmd = [sys.executable, __file__, "--child", fmt, "--module-path", path, "--build", args.build, "--size", args.size,
                   "--element", args.element, "--frames", str(args.frames)]
            cmd += ["--profile"] * args.profile + ["--cuda-route"] * args.cuda_route
            r = subprocess.run(cmd, env=env, capture_output=not args.profile, text=True)
            if r.returncode:
                raise SystemExit(f"{fmt} with {path}: exit {r.returncode}\n{r.stderr}")
            return None if args.profile else json.loads(r.stdout.strip().splitlines()[-1])

        if args.profile:
            for fmt in args.formats.split(","):
                one(fmt, modules["tree"])
            return 0
        header = False
        for fmt in args.formats.split(","):
            got = {name: [] for name in modules}
            for _ in range(args.runs):
                for name, path in modules.items():
                    got[name].append(one(fmt, path))
            if not header:
                header = True
                print(f"# {args.size} through `{args.element}`, held loop {args.frames} frames"
                      + (", the CUDA route emulated" if args.cuda_route else
                         f", pulled {min(args.frames, 300)}, the reader {min(args.frames, READ)}")
                      + f"; median of {args.runs} runs (each run's in brackets), alternated; "
                      + got["tree"][0]["versions"])
                if args.cuda_route:
                    print("| format | module | held: frame + DLPack capsules + close, us a frame |")
                    print("|---|---|---:|")
                else:
                    print("| format | module | held: frame + planes + close, us a frame | pulled: the same, us | "
                          "pulled: pull-sample, us | reader: next () + planes + close, us | reader less its pulls, us "
                          "| reader with results, us | the same less its pulls, us | fakesink, us a frame |")
                    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
            for name, runs in got.items():
                cells = []
                for key in ("held",) if args.cuda_route else ("held", "pulled", "pull", "reader", "own", "results",
                                                                   "results-own", "fakesink"):
                    values = [r[key] for r in runs]
                    cells.append(f"{statistics.median(values):.1f} ({', '.join(f'{v:.1f}' for v in values)})")
                print(f"| {fmt} | {name} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
