"""The cudavision Python module (python/cudavision, docs/python.md) on a GPU: frames in CUDA memory
taken by PyTorch and CuPy without a copy, through DLPack and through the CUDA array interface,
equal byte for byte what cudadownload copies of the same buffers, from an appsink and from a pad
probe; so do cudaheatmap's map and
cudamotionest's vectors; tensors outlive their frame and pipeline; a consumer on its own stream,
a consumer asking for another device or a copy, and unknown formats get what docs/python.md says.
  test_cudavision_gpu.py     (PYTHONPATH: the source's python/; GST_PLUGIN_PATH: the build's plugin)
Exits 77 without torch, cupy or a GPU; 1 then where CUV_REQUIRE_GPU=1 says a GPU is there."""
import ctypes
import faulthandler
import gc
import os
import subprocess
import sys
import threading
import time

import gi

gi.require_version("Gst", "1.0")
import numpy as np  # noqa: E402
from gi.repository import Gst  # noqa: E402

import cudavision  # noqa: E402

Gst.init(None)


def skip(why):
    print(why + (": FAILED, CUV_REQUIRE_GPU is set" if os.environ.get("CUV_REQUIRE_GPU") == "1" else ": skipped"))
    sys.exit(1 if os.environ.get("CUV_REQUIRE_GPU") == "1" else 77)


try:
    import cupy
    import torch
except ImportError as e:
    skip(f"no consumer to test with ({e})")
if not torch.cuda.is_available() or Gst.ElementFactory.find("cudaupload") is None:
    skip("no usable CUDA device, or no cudaupload")

failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what, flush=True)
    if not ok:
        failures.append(what)


def run(description, frames, each=lambda g, c: (g, c)):
    """@description's pipeline (its appsinks named gpu and cpu: the same buffers, in CUDA memory
    and through cudadownload), and each (@gpu_sample, @cpu_sample) of up to @frames pairs pulled
    from the two, as each () returns it (the samples go back to their pools unless it keeps them)."""
    pipeline = Gst.parse_launch(description)
    gpu, cpu = pipeline.get_by_name("gpu"), pipeline.get_by_name("cpu")
    pipeline.set_state(Gst.State.PLAYING)
    pairs = []
    for _ in range(frames):
        g, c = gpu.emit("try-pull-sample", 10 * Gst.SECOND), cpu.emit("try-pull-sample", 10 * Gst.SECOND)
        if g is None or c is None:
            break
        pairs.append(each(g, c))
    msg = pipeline.get_bus().pop_filtered(Gst.MessageType.ERROR)
    if msg is not None:
        print("pipeline error:", msg.parse_error())
    return pipeline, pairs


def tee(head, caps, n):
    return (f"videotestsrc pattern=ball num-buffers={n} ! video/x-raw,{caps} ! cudaupload ! {head} ! tee name=t "
            "t. ! queue ! appsink name=gpu sync=false max-buffers=200 "
            "t. ! queue ! cudadownload ! video/x-raw ! appsink name=cpu sync=false max-buffers=200")


def host_planes(sample):
    with cudavision.frame(sample) as f:
        return [np.array(p) for p in f.planes]


def same_through_both(gpu_sample, cpu_sample, stream=None):
    """Every plane, through DLPack into torch (on @stream) and through the CUDA array interface
    into CuPy, against the cudadownload copy of the same buffer."""
    want = host_planes(cpu_sample)
    ok = True
    with cudavision.frame(gpu_sample) as f:
        if f.device is None or len(f.planes) != len(want):
            return False
        for plane, w in zip(f.planes, want):
            if stream is not None:
                with torch.cuda.stream(stream):
                    t = torch.from_dlpack(plane)
                    got = t.cpu().numpy()
            else:
                t = torch.from_dlpack(plane)
                got = t.cpu().numpy()
            ok = ok and t.is_cuda and t.data_ptr() == plane.ptr and got.shape == w.shape and np.array_equal(got, w)
            c = cupy.asarray(plane)
            ok = ok and c.data.ptr == plane.ptr and np.array_equal(cupy.asnumpy(c), w)
    return ok


# 100 frames of cudaenhance's output in each format and at odd and even sizes, each plane through
# DLPack and the CUDA array interface against cudadownload's copy
for fmt, w, h in (("NV12", 1920, 1080), ("NV12", 641, 479), ("I420", 320, 241), ("RGBA", 640, 480),
                  ("BGRx", 33, 17), ("YUY2", 640, 360), ("P010_10LE", 640, 360)):
    n = 100 if (w, h) == (1920, 1080) else 30
    pipeline, same = run(tee("cudaenhance contrast=1.4 saturation=1.3 brightness=0.05",
                             f"format={fmt},width={w},height={h}", n), n, same_through_both)
    check(len(same) == n and all(same),
          f"{fmt} {w}x{h}: {sum(same)} of {n} frames of cudaenhance in CUDA memory equal cudadownload's copy, "
          "each plane through DLPack (torch) and the CUDA array interface (CuPy)")
    pipeline.set_state(Gst.State.NULL)

# a consumer on a stream of its own: DLPack orders it after the frame
s = torch.cuda.Stream()
pipeline, same = run(tee("cudaenhance contrast=1.4", "format=NV12,width=1280,height=720", 20), 20,
                     lambda g, c: same_through_both(g, c, stream=s))
check(len(same) == 20 and all(same), f"a torch stream of its own: {sum(same)} of 20 frames equal")
pipeline.set_state(Gst.State.NULL)

# frames read in a pad probe on cudaenhance's source pad (frame (buffer, the pad's caps)), on the
# streaming thread, against the appsinks' copies of the same buffers
seen = {}


def probe(pad, info):
    caps = pad.get_current_caps()
    if caps is not None:
        buf = info.get_buffer()
        with cudavision.frame(buf, caps) as f:
            seen[buf.pts] = [torch.from_dlpack(p).cpu().numpy() for p in f.planes]
    return Gst.PadProbeReturn.OK


pipeline = Gst.parse_launch(tee("cudaenhance name=e contrast=1.4", "format=NV12,width=320,height=240", 20))
pipeline.get_by_name("e").get_static_pad("src").add_probe(Gst.PadProbeType.BUFFER, probe)
gpu_sink, cpu_sink = pipeline.get_by_name("gpu"), pipeline.get_by_name("cpu")
pipeline.set_state(Gst.State.PLAYING)
probed = 0
for _ in range(20):
    g, c = gpu_sink.emit("try-pull-sample", 10 * Gst.SECOND), cpu_sink.emit("try-pull-sample", 10 * Gst.SECOND)
    if g is None or c is None:
        break
    want = host_planes(c)
    got = seen.get(c.get_buffer().pts)
    probed += bool(got is not None and all(np.array_equal(a, b) for a, b in zip(got, want)))
pipeline.set_state(Gst.State.NULL)
check(probed == 20, f"frames taken in a pad probe through DLPack: {probed} of 20 equal cudadownload's copy")

# the wait for a writer still in flight (GStreamer 1.24+, where memory carries its stream and this
# machine's 1.22 does not): a writer stream made here in the frame's context, held back by a flag in
# page-locked host memory, then writing 0x55 over the Y plane, is what the mapping is told of; a
# consumer that did not wait for it would sum the frame as it was
cu = cudavision._cuda._libs().cuda
for name, args in (("cuStreamCreate", [ctypes.c_void_p, ctypes.c_uint]), ("cuStreamDestroy_v2", [ctypes.c_void_p]),
                   ("cuMemHostAlloc", [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint]),
                   ("cuMemFreeHost", [ctypes.c_void_p]),
                   ("cuStreamWaitValue32_v2", [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint]),
                   ("cuMemsetD8Async", [ctypes.c_uint64, ctypes.c_ubyte, ctypes.c_size_t, ctypes.c_void_p])):
    getattr(cu, name).argtypes, getattr(cu, name).restype = args, ctypes.c_int


def held_writer(mapping, plane):
    """A stream of the frame's context that waits for *flag to be 1, then sets @plane's bytes to 0x55."""
    stream, flag = ctypes.c_void_p(), ctypes.c_void_p()
    ok = cu.cuCtxPushCurrent_v2(mapping.context) == 0
    ok = ok and cu.cuStreamCreate(ctypes.byref(stream), 1) == 0  # CU_STREAM_NON_BLOCKING
    ok = ok and cu.cuMemHostAlloc(ctypes.byref(flag), 4, 3) == 0  # PORTABLE | DEVICEMAP
    if ok:
        ctypes.c_uint32.from_address(flag.value).value = 0
        ok = (cu.cuStreamWaitValue32_v2(stream, flag.value, 1, 0) == 0  # CU_STREAM_WAIT_VALUE_GEQ
              and cu.cuMemsetD8Async(plane.ptr, 0x55, plane.strides[0] * plane.shape[0], stream) == 0)
    cu.cuCtxPopCurrent_v2(ctypes.byref(ctypes.c_void_p()))
    return ok, stream, flag


def release(flag):
    ctypes.c_uint32.from_address(flag.value).value = 1


pipeline, samples = run(tee("cudaenhance contrast=1.4", "format=NV12,width=640,height=480", 4), 4)
rows, cols = 480, 640
for i, way in enumerate(("DLPack on torch's stream", "DLPack on a torch stream of its own", "the CUDA array interface",
                         "(control) DLPack, the mapping not told of the writer")):
    f = cudavision.frame(samples[i][0])  # a frame of its own each: the last one's plane is 0x55 now
    y = f.planes[0]
    ok, stream, flag = held_writer(f._mapping, y)
    print(f"      ({way}: a writer stream held back: {ok})", flush=True)
    if "control" not in way:
        f._mapping.writer = stream.value
    if way == "the CUDA array interface":  # the host waits when the interface is read: the flag comes later
        threading.Timer(0.3, release, (flag,)).start()
        total = int(cupy.asarray(y).astype(cupy.int64).sum())
    else:
        s = torch.cuda.Stream() if "own" in way else torch.cuda.current_stream()
        threading.Timer(0.3, release, (flag,)).start()  # from another thread: the consumer may wait itself
        t0 = time.perf_counter()
        with torch.cuda.stream(s):
            t = torch.from_dlpack(y)  # the wait is queued on s, not made on the host
            took = time.perf_counter() - t0
            total = t.sum(dtype=torch.int64)
        check(took < 0.2, f"a writer in flight, {way}: taken without a host wait ({took * 1000:.1f} ms)")
        torch.cuda.synchronize()  # every stream of torch's, its own among them
        total = int(total.item())
    if "control" in way:  # the check above can fail: unordered, the consumer reads the frame as it was
        check(ok and total != 0x55 * rows * cols, f"a writer in flight, {way}: the consumer read the frame before it "
              f"({total}, not {0x55 * rows * cols})")
    else:
        check(ok and total == 0x55 * rows * cols and f._mapping.writer in (None, stream.value),
              f"a writer in flight, {way}: the consumer read what it wrote ({total} of {0x55 * rows * cols})")
    torch.cuda.synchronize()
    cu.cuStreamDestroy_v2(stream)
    cu.cuMemFreeHost(flag)
    f.close()
pipeline.set_state(Gst.State.NULL)
del samples

# ... and on real GStreamer 1.24+ memory, nothing set by hand: the frame's memory carries the stream
# that cudaenhance wrote it on (its pool's), a write map of it there (as any element writing it
# makes one) sets GST_CUDA_MEMORY_TRANSFER_NEED_SYNC, and the held writer is queued on that very
# stream; the module must find the writer from the memory alone
try:  # libgstcuda's own word on the memory's stream (1.24+), asked here apart from the module
    gstcuda = ctypes.CDLL("libgstcuda-1.0.so.0")
    memory_get_stream, stream_get_handle = gstcuda.gst_cuda_memory_get_stream, gstcuda.gst_cuda_stream_get_handle
    memory_get_stream.argtypes, memory_get_stream.restype = [ctypes.c_void_p], ctypes.c_void_p
    stream_get_handle.argtypes, stream_get_handle.restype = [ctypes.c_void_p], ctypes.c_void_p
except AttributeError:
    memory_get_stream = None
if memory_get_stream is None:
    print("      (GStreamer before 1.24: no stream on CUDA memory, the real-memory case is 1.24+)")
else:
    gstlib = cudavision._cuda.gst
    need_sync = cudavision._cuda._NEED_SYNC
    # the frame's stream is the element's, from the stream pool the process shares (docs/design.md,
    # "Data flow"), so the one the cases above wrote their frames on: the last reference to such a
    # frame of their stopped pipeline, dropped while this case holds that stream back (a tensor
    # rebound below), frees its memory, and GStreamer's allocator first waits on the host for the
    # stream it was written on; the cases above let theirs go first
    t = y = None
    gc.collect()
    pipeline, samples = run(tee("cudaenhance contrast=1.4", "format=NV12,width=640,height=480", 2), 2)
    for i, way in enumerate(("DLPack on a torch stream of its own", "the CUDA array interface")):
        sample = samples[i][0]
        with cudavision.frame(sample) as f:
            y_ptr, y_rows, y_pitch, context = f.planes[0].ptr, f.planes[0].shape[0], f.planes[0].strides[0], \
                f._mapping.context
        memory = gstlib.gst_buffer_peek_memory(hash(sample.get_buffer()), 0)
        stream = memory_get_stream(memory)
        handle = stream_get_handle(stream) if stream else None
        check(bool(handle), f"real 1.24 memory, {way}: the frame's memory carries its writer's stream")
        if not handle:
            continue
        info = cudavision._cuda.MapInfo()
        mapped = gstlib.gst_memory_map(memory, ctypes.byref(info), cudavision._cuda.MAP_WRITE |
                                       cudavision._cuda.MAP_READ | cudavision._cuda.GST_MAP_CUDA)
        if mapped:
            gstlib.gst_memory_unmap(memory, ctypes.byref(info))
        flags = cudavision._cuda.MiniObject.from_address(memory).flags
        check(mapped and flags & need_sync, f"real 1.24 memory, {way}: a write map on its stream leaves NEED_SYNC set")
        flag = ctypes.c_void_p()
        ok = cu.cuCtxPushCurrent_v2(context) == 0 and cu.cuMemHostAlloc(ctypes.byref(flag), 4, 3) == 0
        if ok:
            ctypes.c_uint32.from_address(flag.value).value = 0
            ok = (cu.cuStreamWaitValue32_v2(handle, flag.value, 1, 0) == 0
                  and cu.cuMemsetD8Async(y_ptr, 0x55, y_pitch * y_rows, handle) == 0)
        cu.cuCtxPopCurrent_v2(ctypes.byref(ctypes.c_void_p()))
        f = cudavision.frame(sample)
        y = f.planes[0]
        found = f._mapping.writer
        threading.Timer(0.3, release, (flag,)).start()
        if way == "the CUDA array interface":
            total = int(cupy.asarray(y)[:, :cols].astype(cupy.int64).sum())
        else:
            s = torch.cuda.Stream()
            faulthandler.dump_traceback_later(0.15)  # where the host waits, if it does
            t0 = time.perf_counter()
            with torch.cuda.stream(s):
                t = torch.from_dlpack(y)
                took = time.perf_counter() - t0
                faulthandler.cancel_dump_traceback_later()
                total = t[:, :cols].sum(dtype=torch.int64)
            check(took < 0.2, f"real 1.24 memory, {way}: taken without a host wait ({took * 1000:.1f} ms)")
            torch.cuda.synchronize()
            total = int(total.item())
        check(ok and found == handle and total == 0x55 * rows * cols,
              f"real 1.24 memory, {way}: the writer found from the memory ({found == handle}), the consumer read "
              f"what it wrote ({total} of {0x55 * rows * cols})")
        f.close()
        torch.cuda.synchronize()
        cu.cuMemFreeHost(flag)
    pipeline.set_state(Gst.State.NULL)
    del samples

# 1.24+: the writer's end is an event of its context's pool (python/cudavision/_native.cpp), made
# once and recorded again for later frames: 300 frames make no more events than the pool keeps,
# and each frame's tensor still reads what the writer wrote (its sum equals the download's)
if memory_get_stream is not None:
    before = cudavision._native.counters()
    sums, n = [], 0
    desc = ("videotestsrc num-buffers=300 pattern=ball ! video/x-raw,format=NV12,width=1920,height=1080 ! "
            "cudaupload ! cudaenhance contrast=1.4 ! tee name=t ! queue ! appsink name=gpu "
            "t. ! queue ! cudadownload ! video/x-raw ! appsink name=cpu")
    got = {"gpu": [], "cpu": []}
    for f in cudavision.frames(desc):
        if f.source == "gpu":
            got["gpu"].append((f.pts, torch.from_dlpack(f.planes[0])[:, :1920].sum(dtype=torch.int64)))
        else:
            got["cpu"].append((f.pts, int(f.planes[0][:, :1920].sum(dtype=np.int64))))
        f.close()
    torch.cuda.synchronize()
    after = cudavision._native.counters()
    made = after["events_made"] - before["events_made"]
    pooled = after["pooled_records"] - before["pooled_records"]
    same = dict((p, int(t.item())) for p, t in got["gpu"]) == dict(got["cpu"]) and len(got["gpu"]) == 300
    check(same and made <= 20,
          f"300 frames: {made} events made, {pooled} writers' ends recorded with a pooled event "
          f"(without the context current: {not after['record_needs_context']}), every frame's sum the download's")

# cudamotionest's vectors and cudaheatmap's map (RGBA out of NV12 in), taken as above
def map_and_vectors(g, c):
    """cudaheatmap's map as every frame above; cudamotionest's vectors (into a tensor on the GPU)
    and cudaheatmap's fields equal on both branches; whether any vector moves."""
    rg = {v["type"]: v for v in cudavision.results(g).values()}
    rc = {v["type"]: v for v in cudavision.results(c).values()}
    vg, vc = rg["cudamotionest"]["vectors"], rc["cudamotionest"]["vectors"]
    tg = torch.from_numpy(vg.view(np.uint8).reshape(-1).copy()).cuda()
    same = (np.array_equal(vg, vc) and np.array_equal(tg.cpu().numpy(), vc.view(np.uint8).reshape(-1))
            and rg["cudaheatmap"] == rc["cudaheatmap"])
    return same_through_both(g, c), same, bool(((vg["dx"] != 0) | (vg["dy"] != 0)).any())


pipeline, got = run(tee("cudamotionest ! cudaheatmap", "format=NV12,width=640,height=480", 30), 30, map_and_vectors)
maps, vectors_same, moving = (sum(x[i] for x in got) for i in range(3))
check(len(got) == 30 and maps == 30, f"cudaheatmap's map in CUDA memory: {maps} of 30 frames equal cudadownload's")
check(vectors_same == 30 and moving >= 28,
      f"cudamotionest's vectors and cudaheatmap's fields: {vectors_same} of 30 equal on both branches, {moving} with motion")
pipeline.set_state(Gst.State.NULL)

# lifetimes: a tensor outlives its frame, its sample and its pipeline; a capsule never taken lets go
pipeline, pairs = run(tee("cudaenhance contrast=1.4", "format=RGBA,width=320,height=240", 3), 3)
want = host_planes(pairs[-1][1])[0]
f = cudavision.frame(pairs[-1][0])
t = torch.from_dlpack(f.array)
c = cupy.asarray(f.planes[0])
capsule = f.array.__dlpack__()
f.close()
pipeline.set_state(Gst.State.NULL)
del f, pairs, pipeline
gc.collect()
check(np.array_equal(t.cpu().numpy(), want) and np.array_equal(cupy.asnumpy(c), want),
      "a tensor and a CuPy array read after their frame closed and the pipeline went to NULL and was dropped")
check(cudavision._native.exported() == 2, f"the two DLPack tensors alive: {cudavision._native.exported()}")
del capsule
gc.collect()
check(cudavision._native.exported() == 1, "a capsule never taken lets its tensor go")
del t, c
gc.collect()
check(cudavision._native.exported() == 0, "a tensor freed lets go of its frame")


def raises(what, fn, exc, text):
    try:
        fn()
    except exc as e:
        check(text in str(e), f"{what}: {type(e).__name__}: {e}")
        return
    check(False, f"{what}: no exception")


pipeline, pairs = run(tee("cudaenhance", "format=NV12,width=64,height=48", 1), 1)
f = cudavision.frame(pairs[0][0])
raises("a consumer on another device", lambda: f.array.__dlpack__(dl_device=(2, f.device + 1)), BufferError,
       "take it there")
raises("a consumer asking for a copy", lambda: f.array.__dlpack__(copy=True), BufferError, "without a copy")
raises("stream 0", lambda: f.array.__dlpack__(stream=0), BufferError, "ambiguous")
check(f.array.__dlpack_device__() == (2, f.device), f"__dlpack_device__: {f.array.__dlpack_device__()}")
raises("a format the module does not know", lambda: cudavision.frame(
    pairs[0][0].get_buffer(), Gst.Caps.from_string("video/x-raw(memory:CUDAMemory),format=AYUV,width=64,height=48")),
    cudavision.Unsupported, "AYUV is not one cudavision knows")
f.close()
pipeline.set_state(Gst.State.NULL)

# in a process of its own, GStreamer's criticals fatal: a CUDA plane, a tensor and a CuPy array
# alive at the interpreter's exit end it cleanly
script = """
import gi
gi.require_version("Gst", "1.0")
from gi.repository import Gst
import cudavision, cupy, torch
Gst.init(None)
p = Gst.parse_launch("videotestsrc num-buffers=2 ! video/x-raw,format=NV12,width=64,height=48 ! cudaupload ! "
                     "cudaenhance ! appsink name=s")
p.set_state(Gst.State.PLAYING)
f = cudavision.frame(p.get_by_name("s").emit("pull-sample"))
plane, t, a = f.planes[1], torch.from_dlpack(f.planes[0]), cupy.asarray(f.planes[1])
print("end")
"""
proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                      env=dict(os.environ, G_DEBUG="fatal-criticals"))
check(proc.returncode == 0 and proc.stdout.strip() == "end" and "CRITICAL" not in proc.stderr,
      f"CUDA planes and tensors alive at exit: exit {proc.returncode}, {proc.stdout.strip()!r} {proc.stderr[-300:]!r}")

print(f"{len(failures)} failed" if failures else "all passed")
sys.exit(1 if failures else 0)
