"""The cudavision Python module (python/cudavision, docs/python.md) on the CPU backend: frames of
system memory as numpy views equal the bytes they were made of, for every format, with padded
strides from a GstVideoMeta and without one; every meta of ours as docs/results.md lists its
fields; views outliving their frame; the errors a user gets.
  test_cudavision.py         (PYTHONPATH: the source's python/; GST_PLUGIN_PATH: the build's plugin)"""
import ctypes
import gc
import os
import sys
import tempfile
import threading
import time

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstVideo", "1.0")
import numpy as np  # noqa: E402
from gi.repository import GLib, Gst, GstVideo  # noqa: E402

import cudavision  # noqa: E402

Gst.init(None)
failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what, flush=True)
    if not ok:
        failures.append(what)


def made_frame(fmt, width, height, pad, seed):
    """A buffer of @fmt with each plane's rows @pad bytes apart more than needed, filled with
    random bytes, its GstVideoMeta saying where the planes are; and the planes as numpy arrays."""
    rng = np.random.default_rng(seed)
    layout = cudavision._LAYOUTS[fmt]
    offsets, strides, planes, size = [], [], [], 0
    for dtype, components, w_sub, h_sub in layout:
        rows, cols = -(-height >> h_sub), -(-width >> w_sub)
        stride = cols * components * dtype.itemsize + pad
        offsets.append(size)
        strides.append(stride)
        size += stride * rows + 32
    raw = rng.integers(0, 256, size, dtype=np.uint8)
    for (dtype, components, w_sub, h_sub), off, stride in zip(layout, offsets, strides):
        rows, cols = -(-height >> h_sub), -(-width >> w_sub)
        shape = (rows, cols, components) if components > 1 else (rows, cols)
        plane = np.lib.stride_tricks.as_strided(raw[off:].view(dtype), shape=shape,
                                                strides=(stride, components * dtype.itemsize, dtype.itemsize)[:len(shape)])
        planes.append(plane.copy())
    buf = Gst.Buffer.new_wrapped(raw.tobytes())
    GstVideo.buffer_add_video_meta_full(buf, GstVideo.VideoFrameFlags.NONE, GstVideo.VideoFormat.from_string(fmt),
                                        width, height, len(layout), offsets + [0] * (4 - len(layout)),
                                        strides + [0] * (4 - len(layout)))
    caps = Gst.Caps.from_string(f"video/x-raw,format={fmt},width={width},height={height},framerate=30/1")
    return buf, caps, planes


# every format, padded strides from the meta, odd and even sizes
for fmt in cudavision._LAYOUTS:
    for width, height in ((64, 48), (50, 30), (17, 9) if fmt not in ("NV12", "I420", "YUY2", "UYVY", "P010_10LE") else (18, 10)):
        buf, caps, planes = made_frame(fmt, width, height, 24, hash((fmt, width)) & 0xffff)
        with cudavision.frame(buf, caps) as f:
            same = len(f.planes) == len(planes) and all(
                a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b) for a, b in zip(f.planes, planes))
            check(same, f"{fmt} {width}x{height}, strides from the meta: every plane's view equals its bytes "
                        f"({[p.shape for p in f.planes]})")
            check(not f.array.flags.writeable, f"{fmt}: a read-only map gives read-only views")

# without a meta: the caps' strides (a frame videotestsrc made), through an analyser in place
pipe = Gst.parse_launch(
    "videotestsrc num-buffers=4 pattern=ball ! video/x-raw,format=NV12,width=96,height=64 ! "
    "cudahistogram backend=cpu bins=16 ! cudaheatmap backend=cpu ! video/x-raw,format=RGBA ! "
    "cudanoisemap backend=cpu mode=overlay ! cudamotionest backend=cpu ! appsink name=sink sync=false")
sink = pipe.get_by_name("sink")
pipe.set_state(Gst.State.PLAYING)
samples = []
while True:
    sample = sink.emit("pull-sample")
    if sample is None:
        break
    samples.append(sample)
pipe.set_state(Gst.State.NULL)
check(len(samples) == 4, f"4 frames through the analysers: {len(samples)}")
for i, sample in enumerate(samples):
    buf = sample.get_buffer()
    ok, info = buf.map(Gst.MapFlags.READ)
    raw = np.frombuffer(info.data, dtype=np.uint8).copy()
    buf.unmap(info)
    with cudavision.frame(sample) as f:
        vinfo = GstVideo.VideoInfo.new_from_caps(sample.get_caps())
        expect = np.lib.stride_tricks.as_strided(raw, shape=(64, 96, 4), strides=(vinfo.stride[0], 4, 1))
        check(f.format == "RGBA" and np.array_equal(f.array, expect), f"frame {i}: the appsink's RGBA frame, caps' strides")
    named = cudavision.results(sample)
    r = {v["type"]: v for v in named.values()}  # the elements are unnamed: GStreamer's names
    check(set(r) == {"cudahistogram", "cudaheatmap", "cudanoisemap", "cudamotionest"} and
          all(key.startswith(v["type"]) and v["element"] == key for key, v in named.items()),
          f"frame {i}: the four metas, each under its element's name: {sorted(named)}")
    structures = {v["type"]: buf.get_custom_meta(name).get_structure() for name, v in
                  zip(("CudaHistogramMeta", "CudaHeatmapMeta", "CudaNoisemapMeta", "CudaMotionMeta"),
                      (r["cudahistogram"], r["cudaheatmap"], r["cudanoisemap"], r["cudamotionest"]))}
    check(all(set(r[t]) == {s.nth_field_name(n) for n in range(s.n_fields())} | {"type"} for t, s in structures.items()),
          f"frame {i}: every field of each meta's structure, and the type")
    hs = buf.get_custom_meta("CudaHistogramMeta").get_structure()
    h = r["cudahistogram"]
    check(h["histogram"].dtype == np.uint64 and h["histogram"].size == 16 and h["histogram"].sum() == h["pixels"] == 96 * 64
          and h["luma-mean"] == hs.get_value("luma-mean") and h["roi-width"] == 96,
          f"frame {i}: cudahistogram's counts (16 uint64 summing to the pixels) and fields")
    ns = buf.get_custom_meta("CudaNoisemapMeta").get_structure()
    check(all(r["cudanoisemap"][k] == ns.get_value(k) for k in ("pixels", "changed-pixels", "changed-ratio",
                                                                  "changed-bytes-estimate", "first-frame")),
          f"frame {i}: cudanoisemap's fields")
    hm = buf.get_custom_meta("CudaHeatmapMeta").get_structure()
    check(all(r["cudaheatmap"][k] == hm.get_value(k) for k in ("pixels", "mean-difference", "max-difference", "first-frame")),
          f"frame {i}: cudaheatmap's fields")
    m = r["cudamotionest"]
    ms = buf.get_custom_meta("CudaMotionMeta").get_structure()
    raw_vectors = ms.get_value("vectors").get_data()
    check(m["vectors"].shape == (m["rows"], m["columns"]) and m["vectors"].tobytes() == raw_vectors
          and m["first-frame"] == (i == 0), f"frame {i}: cudamotionest's {m['rows']}x{m['columns']} vectors, byte for byte")

# lifetimes: a view outlives its frame and its buffer; the buffer is unmapped once the last goes
buf, caps, planes = made_frame("NV12", 64, 48, 8, 7)
f = cudavision.frame(buf, caps)
uv = f.planes[1][2:10]
f.close()
del f, buf
gc.collect()
check(np.array_equal(uv, planes[1][2:10]), "a view read after its frame closed and its buffer was dropped")
del uv
gc.collect()

# a plane of system memory goes on through DLPack as numpy's own view: no copy
buf, caps, planes = made_frame("I420", 33, 17, 4, 9)
# (a frame mapped for writing: numpy before 2.1 exports no read-only array)
with cudavision.frame(buf, caps, writable=True) as f:
    v = np.from_dlpack(f.planes[2])
    check(np.shares_memory(v, f.planes[2]) and np.array_equal(v, planes[2]), "a system-memory plane through DLPack")
del v, buf


# errors a user gets, never a crash
def raises(what, fn, text):
    try:
        fn()
    except cudavision.Unsupported as e:
        check(text in str(e), f"{what}: {e}")
        return
    check(False, f"{what}: no error")


buf, caps, _ = made_frame("NV12", 64, 48, 0, 1)
raises("CUDA caps on a buffer of system memory", lambda: cudavision.frame(buf, Gst.Caps.from_string(
    "video/x-raw(memory:CUDAMemory),format=NV12,width=64,height=48")),
    "the caps say CUDA memory but the buffer's memory is SystemMemory")
raises("a format it does not know", lambda: cudavision.frame(buf, Gst.Caps.from_string(
    "video/x-raw,format=AYUV,width=64,height=48")), "AYUV is not one cudavision knows")
raises("caps of a larger frame than the buffer", lambda: cudavision.frame(buf, Gst.Caps.from_string(
    "video/x-raw,format=NV12,width=128,height=96")), "does not hold")
small = Gst.Buffer.new_wrapped(bytes(100))
raises("a buffer smaller than the caps' frame", lambda: cudavision.frame(small, Gst.Caps.from_string(
    "video/x-raw,format=RGBA,width=64,height=48")), "does not fit")

# argument errors are TypeError, as Python's own
def type_error(what, fn, text):
    try:
        fn()
    except TypeError as e:
        check(text in str(e), f"{what}: {e}")
        return
    except Exception as e:  # noqa: BLE001
        check(False, f"{what}: {type(e).__name__}, not TypeError: {e}")
        return
    check(False, f"{what}: no error")


type_error("no caps", lambda: cudavision.frame(small), "needs the buffer's caps")
type_error("frame (None)", lambda: cudavision.frame(None), "not NoneType")
type_error("caps as a string", lambda: cudavision.frame(small, "video/x-raw,format=RGBA,width=5,height=5"),
           "Gst.Caps.from_string")
sample = Gst.Sample.new(buf, caps, None, None)
type_error("a sample with other caps", lambda: cudavision.frame(sample, Gst.Caps.from_string(
    "video/x-raw,format=GRAY8,width=64,height=48")), "brings its own caps")
with cudavision.frame(sample, caps) as f:
    check(f.format == "NV12", "a sample with its own caps again: taken")
# a video meta of another format than the caps' is refused, never read as the caps' format
bgrx, _, _ = made_frame("BGRx", 16, 8, 0, 5)
raises("a BGRx video meta under RGBA caps", lambda: cudavision.frame(bgrx, Gst.Caps.from_string(
    "video/x-raw,format=RGBA,width=16,height=8")), "video meta says BGRx, the caps RGBA")
check(cudavision.results(small) == {}, "a buffer without our metas: no results")

raises("caps that are not fixed", lambda: cudavision.frame(buf, Gst.Caps.from_string(
    "video/x-raw,format=NV12,width=[1,100],height=48")), "fixed video caps")
raises("caps that are not video", lambda: cudavision.frame(buf, Gst.Caps.from_string("audio/x-raw,rate=48000")),
       "not caps of a video frame")
f = cudavision.frame(buf, caps)
f.close()
try:
    f.planes
    check(False, "a closed frame's planes: no error")
except ValueError as e:
    check("closed" in str(e), f"a closed frame's planes: {e}")
try:
    cudavision.results(None)
    check(False, "results (None): no error")
except TypeError as e:
    check("Gst.Buffer" in str(e), f"results (None): {e}")

# one mapping a buffer, however many frames of it are open (GStreamer counts a memory's maps in 8 bits)
buf, caps, planes = made_frame("RGBA", 16, 8, 0, 3)
frames = [cudavision.frame(buf, caps) for _ in range(300)]
check(len(cudavision._mappings) == 1 and all(np.array_equal(f.array, planes[0]) for f in frames),
      f"300 frames of one buffer open at once: {len(cudavision._mappings)} mapping")
del frames
gc.collect()
check(len(cudavision._mappings) == 0, "the mapping goes with the last frame")

# ... and one a memory: buffers that share one (imagefreeze's, a region's copies) share its mapping,
# so that 300 of them open at once map it once and leave its lock state as it was
buf, caps, planes = made_frame("RGBA", 16, 8, 0, 3)
memory = hash(buf.peek_memory(0))
lockstate = cudavision._cuda.MiniObject.from_address(memory).lockstate
copies = [buf.copy_region(Gst.BufferCopyFlags.MEMORY | Gst.BufferCopyFlags.META, 0, buf.get_size()) for _ in range(300)]
frames = [cudavision.frame(c, caps) for c in copies]
check(len({hash(c) for c in copies}) == 300 and len(cudavision._mappings) == 1 and
      all(np.array_equal(f.array, planes[0]) for f in frames),
      f"300 buffers of one memory open at once: {len(cudavision._mappings)} mapping")
del frames, copies
gc.collect()
after = cudavision._cuda.MiniObject.from_address(memory).lockstate
with cudavision.frame(buf, caps, writable=True) as f:
    f.array[0, 0, 0] = 7
check(after == lockstate and not cudavision._mappings and buf.extract_dup(0, 1) == bytes([7]),
      f"the memory's lock state as it was ({after:#x}, {lockstate:#x}), and it is writable again")

# caps a frame was read with are held: not writable, so what was worked out of them cannot go stale
caps = Gst.Caps.from_string("video/x-raw,format=GRAY8,width=8,height=4")
with cudavision.frame(Gst.Buffer.new_wrapped(bytes(32)), caps) as f:
    pass
check(not cudavision._cuda.gst.gst_mini_object_is_writable(hash(caps)), "the caps a frame was read with are held")

# a writable frame and read-only frames of one buffer in threads: each writable frame is checked
# and mapped in one step, so the write never lands in a copy of the memory (GStreamer copies
# memory mapped for writing while a read mapping is open)
mine = Gst.Buffer.new_allocate(None, 64 * 48, None)
caps = Gst.Caps.from_string("video/x-raw,format=GRAY8,width=64,height=48")
memory, counts, errors = hash(mine.peek_memory(0)), {"w": 0, "refused": 0, "r": 0}, []
stop = time.monotonic() + 1.0


def threaded(write):
    while time.monotonic() < stop:
        try:
            with cudavision.frame(mine, caps, writable=write) as f:
                if write:
                    f.array[:] = 9
                int(f.array[0, 0])
                counts["w" if write else "r"] += 1
        except cudavision.Unsupported:
            counts["refused"] += 1
        except Exception as e:  # noqa: BLE001: any other is the failure
            errors.append(repr(e))


threads = [threading.Thread(target=threaded, args=(w,)) for w in (True, True, False, False)]
for t in threads:
    t.start()
for t in threads:
    t.join()
check(not errors and counts["w"] and counts["r"] and hash(mine.peek_memory(0)) == memory and mine.n_memory() == 1,
      f"writable and read-only frames in four threads: {counts}, the memory the buffer's own, {errors[:2]}")


# a sample's frame reads its buffer and caps by their addresses (no PyGObject wrappers): the same
# planes, for every format, with the meta's strides; what a caps' video meta says is remembered by
# its fields, so that two buffers of one caps with other strides each get their own
for fmt in cudavision._LAYOUTS:
    buf, caps, planes = made_frame(fmt, 18, 10, 40, 11)
    with cudavision.frame(Gst.Sample.new(buf, caps, None, None)) as f:
        check(len(f.planes) == len(planes) and all(a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b)
                                                   for a, b in zip(f.planes, planes)) and not f.array.flags.writeable,
              f"{fmt}: a sample's frame, read-only views equal to its bytes")
one_caps = Gst.Caps.from_string("video/x-raw,format=NV12,width=18,height=10")
for pad in (0, 8, 0, 24):
    buf, _, planes = made_frame("NV12", 18, 10, pad, pad)
    with cudavision.frame(Gst.Sample.new(buf, one_caps, None, None)) as f:
        check(all(np.array_equal(a, b) for a, b in zip(f.planes, planes)) and f.planes[0].strides[0] == 18 + pad,
              f"one caps, a meta with rows {18 + pad} bytes apart: its own strides")
raises("a BGRx video meta under RGBA caps, through a sample", lambda: cudavision.frame(Gst.Sample.new(
    made_frame("BGRx", 16, 8, 0, 5)[0], Gst.Caps.from_string("video/x-raw,format=RGBA,width=16,height=8"), None, None)),
    "video meta says BGRx, the caps RGBA")
raises("a buffer smaller than the caps' frame, through a sample", lambda: cudavision.frame(Gst.Sample.new(
    Gst.Buffer.new_wrapped(bytes(100)), Gst.Caps.from_string("video/x-raw,format=RGBA,width=64,height=48"), None, None)),
    "does not fit")
raises("CUDA caps on system memory, through a sample", lambda: cudavision.frame(Gst.Sample.new(
    made_frame("NV12", 64, 48, 0, 1)[0], Gst.Caps.from_string("video/x-raw(memory:CUDAMemory),format=NV12,width=64,height=48"),
    None, None)), "the caps say CUDA memory but the buffer's memory is SystemMemory")
type_error("a sample without caps", lambda: cudavision.frame(Gst.Sample.new(small, None, None, None)),
           "needs the buffer's caps")
type_error("a sample without a buffer", lambda: cudavision.frame(Gst.Sample.new(None, caps, None, None)), "holds no buffer")


def refcount(address):
    return cudavision._cuda.MiniObject.from_address(address).refcount


# the references a frame takes go with it: a pool's buffer goes back once the last view is gone
buf, caps, planes = made_frame("I420", 20, 12, 4, 12)
sample = Gst.Sample.new(buf, caps, None, None)
memory = hash(buf.peek_memory(0))
counts = refcount(hash(buf)), refcount(memory)
with cudavision.frame(sample) as f:
    during = refcount(hash(buf)), refcount(memory)
    view = f.planes[2]
with cudavision.frame(buf, caps) as f:
    f.planes
del f
check(refcount(hash(buf)) > counts[0] and refcount(memory) > counts[1] and len(cudavision._mappings) == 1,
      f"a view keeps its buffer (a pool reuses a buffer, not a memory) and its memory, mapped once for both "
      f"frames: {during} from {counts}")
del sample, buf
gc.collect()
check(np.array_equal(view, planes[2]), "a view of a sample's frame read after the sample and the buffer were dropped")
del view
gc.collect()
check(len(cudavision._mappings) == 0, "the last view lets the mapping go")
buf, caps, planes = made_frame("I420", 20, 12, 4, 12)
sample = Gst.Sample.new(buf, caps, None, None)
memory = hash(buf.peek_memory(0))
counts = refcount(hash(buf)), refcount(memory)
for _ in range(3):
    with cudavision.frame(sample) as f:
        f.planes
    with cudavision.frame(buf, caps) as f:
        f.planes
del f
gc.collect()
check((refcount(hash(buf)), refcount(memory)) == counts, f"frames closed: the buffer and its memory as they were, {counts}")


# the CUDA route (_cuda.CudaMapping, CudaPlane, DLPack) on the CPU: system memory under CUDA caps,
# mapped as system memory (GST_MAP_CUDA off), a stand-in for libcuda that says the memory is
# context 0x1234's on device 3 and records what is asked of it, and, for GStreamer 1.24+'s frames
# still in flight, a stand-in for libgstcuda's memory stream
_c = ctypes.c_void_p
# the driver's functions the C++ part calls, with their arguments (all return a CUresult)
FAKE_SIGNATURES = {
    "cuPointerGetAttributes": [ctypes.c_uint, _c, _c, ctypes.c_uint64], "cuDevicePrimaryCtxRetain": [_c, ctypes.c_int],
    "cuCtxPushCurrent_v2": [_c], "cuCtxPopCurrent_v2": [_c], "cuCtxGetCurrent": [_c],
    "cuEventCreate": [_c, ctypes.c_uint], "cuEventRecord": [_c, _c], "cuEventSynchronize": [_c],
    "cuEventDestroy_v2": [_c], "cuStreamWaitEvent": [_c, _c, ctypes.c_uint], "cuStreamQuery": [_c],
}


class FakeCuda:
    """The driver's functions as C callbacks that record each call, its arguments as numbers."""

    def __init__(self):
        self.calls, self.writer_done, self.callbacks = [], False, {}
        for name, args in FAKE_SIGNATURES.items():
            self.callbacks[name] = ctypes.CFUNCTYPE(ctypes.c_int, *args)(self._call(name))

    def _call(self, name):
        def call(*args):
            self.calls.append((name,) + tuple(0 if a is None else a for a in args))
            if name == "cuPointerGetAttributes":  # the context, then the device ordinal
                data = (_c * 2).from_address(args[2])
                _c.from_address(data[0]).value = 0x1234
                ctypes.c_int.from_address(data[1]).value = 3
            elif name in ("cuEventCreate", "cuDevicePrimaryCtxRetain"):
                _c.from_address(args[0]).value = 0x77
            elif name in ("cuCtxGetCurrent", "cuCtxPopCurrent_v2"):
                _c.from_address(args[0]).value = None
            elif name == "cuStreamQuery" and not self.writer_done:
                return 600  # CUDA_ERROR_NOT_READY: work still pending on the stream
            return 0
        return call


class FakeLibraries:
    """_cuda._Libraries' stand-in: the fake driver and, for a writer in flight, libgstcuda's memory
    stream (1.24+)."""

    def __init__(self, writer):
        self.cuda, self.streams = FakeCuda(), []
        self.functions = {name: ctypes.cast(f, _c).value for name, f in self.cuda.callbacks.items()}
        if writer:
            stream = ctypes.CFUNCTYPE(_c, _c)
            self.get_stream = stream(lambda memory: self.streams.append(memory) or 0x5000)
            self.get_handle = stream(lambda stream: 0xabc if stream == 0x5000 else None)
            self.functions["gst_cuda_memory_get_stream"] = ctypes.cast(self.get_stream, _c).value
            self.functions["gst_cuda_stream_get_handle"] = ctypes.cast(self.get_handle, _c).value


# dlpack.h's structures, as a consumer reads them
class DLTensor(ctypes.Structure):
    _fields_ = [("data", _c), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", _c), ("deleter", _c)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", _c), ("deleter", _c),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


ctypes.pythonapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
ctypes.pythonapi.PyCapsule_GetPointer.restype = _c


cuda_mod = cudavision._cuda
saved = cuda_mod.GST_MAP_CUDA, cuda_mod._CUDA_MEMORY_TYPE, cuda_mod._libraries
cuda_mod.GST_MAP_CUDA, cuda_mod._CUDA_MEMORY_TYPE = 0, "SystemMemory"
try:
    # DLPack capsules (python/cudavision/_native.cpp), made over host bytes that no consumer reads:
    # what a capsule holds, and that both ends of its life let the plane go
    cuda_mod._libraries = FakeLibraries(writer=False)
    host, _, _ = made_frame("RGBA", 32, 32, 0, 3)
    mapping = cuda_mod.cuda_mapping(hash(host), False)
    layout = cudavision._dlpack.layout((6, 5, 2), (24, 4, 2), np.dtype("<u2"))

    def managed_of(capsule, versioned):
        name = b"dltensor_versioned" if versioned else b"dltensor"
        address = ctypes.pythonapi.PyCapsule_GetPointer(capsule, name)
        if versioned:
            return DLManagedTensorVersioned.from_address(address), address
        return DLManagedTensor.from_address(address), address

    for versioned in (False, True):
        plane = object()
        refs = sys.getrefcount(plane)
        capsule = mapping.export(plane, 96, layout, -1, versioned)
        managed, address = managed_of(capsule, versioned)
        t = managed.dl_tensor
        check(t.data == mapping.address and t.byte_offset == 96 and t.device_type == 2 and t.device_id == 3 and
              t.ndim == 3 and list(t.shape[:3]) == [6, 5, 2] and list(t.strides[:3]) == [12, 2, 1]
              and (t.code, t.bits, t.lanes) == (1, 16, 1) and managed.manager_ctx == id(plane)
              and (not versioned or (managed.major, managed.minor, managed.flags) == (1, 0, 1)),
              f"a {'versioned ' if versioned else ''}DLPack tensor: the mapping's address, the plane's offset, shape, "
              "strides in elements, uint16, read-only")
        check(sys.getrefcount(plane) == refs + 1 and cudavision._native.exported() == 1, "a capsule holds its plane")
        del capsule, managed, t
        gc.collect()
        check(sys.getrefcount(plane) == refs and cudavision._native.exported() == 0,
              "a capsule no consumer took lets its plane go")
        # a consumer takes it: renames the capsule, later calls the deleter
        capsule = mapping.export(plane, 0, layout, -1, versioned)
        managed, address = managed_of(capsule, versioned)
        ctypes.pythonapi.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
        ctypes.pythonapi.PyCapsule_SetName(capsule, b"used_dltensor_versioned" if versioned else b"used_dltensor")
        del capsule
        gc.collect()
        check(sys.getrefcount(plane) == refs + 1 and cudavision._native.exported() == 1,
              "a capsule a consumer took keeps its plane until the consumer deletes it")
        ctypes.CFUNCTYPE(None, _c)(managed.deleter)(address)
        check(sys.getrefcount(plane) == refs and cudavision._native.exported() == 0, "the consumer's delete lets the plane go")
    try:
        cudavision._dlpack.layout((3, 3), (7, 2), np.dtype("<u2"))
        check(False, "an odd stride of uint16: no error")
    except BufferError as e:
        check("whole number" in str(e), f"an odd stride of uint16: {e}")
    for bad, what in ((b"short", "a layout of the wrong size"),
                      (cudavision._dlpack._LAYOUT.pack(4, 8, 1, 1, 1, 1, 1, 1), "a layout of 4 dimensions")):
        try:
            mapping.export(object(), 0, bad, -1, True)
            check(False, f"{what}: no error")
        except ValueError as e:
            check(cudavision._native.exported() == 0, f"{what}: {e}")
    del mapping, host
    gc.collect()

    for fmt, w, h in (("NV12", 20, 12), ("P010_10LE", 18, 10), ("RGBA", 17, 9)):
        buf, _, planes = made_frame(fmt, w, h, 16, 13)
        caps = Gst.Caps.from_string(f"video/x-raw(memory:CUDAMemory),format={fmt},width={w},height={h}")
        memory = hash(buf.peek_memory(0))
        counts = refcount(hash(buf)), refcount(memory)
        for how in ("sample", "buffer"):
            cuda_mod._libraries = FakeLibraries(writer=False)
            f = cudavision.frame(Gst.Sample.new(buf, caps, None, None)) if how == "sample" else cudavision.frame(buf, caps)
            ok, info = buf.map(Gst.MapFlags.READ)
            base = np.frombuffer(info.data, np.uint8).ctypes.data
            buf.unmap(info)
            same = all(isinstance(p, cudavision.CudaPlane) and p.device == 3 and p.shape == q.shape and p.dtype == q.dtype and
                       np.array_equal(np.lib.stride_tricks.as_strided(
                           np.frombuffer((ctypes.c_char * (p.strides[0] * p.shape[0])).from_address(p.ptr), p.dtype),
                           p.shape, p.strides), q) for p, q in zip(f.planes, planes))
            check(same and f.device == 3 and f.planes[0].ptr == base and repr(f).endswith("in cuda:3, no pts>"),
                  f"{fmt} ({how}): CUDA planes over the frame's memory, with the meta's strides, on the driver's device")
            p = f.planes[-1]
            capsule = p.__dlpack__(stream=1, max_version=(1, 0))
            managed = DLManagedTensorVersioned.from_address(ctypes.pythonapi.PyCapsule_GetPointer(capsule, b"dltensor_versioned"))
            t = managed.dl_tensor
            check(t.data == base and t.byte_offset == p.ptr - base and t.device_type == 2 and t.device_id == 3 and
                  (managed.major, managed.minor) == (1, 0) and (t.code, t.bits, t.lanes) == (1, p.dtype.itemsize * 8, 1) and
                  list(t.shape[:t.ndim]) == list(p.shape) and managed.flags == 1 and
                  list(t.strides[:t.ndim]) == [s // p.dtype.itemsize for s in p.strides],
                  f"{fmt} ({how}): the plane's DLPack tensor")
            cai = p.__cuda_array_interface__
            check(cai["data"] == (p.ptr, True) and cai["shape"] == p.shape and cai["strides"] == p.strides,
                  f"{fmt} ({how}): the plane's CUDA array interface")
            check([c[0] for c in cuda_mod._libraries.cuda.calls] == ["cuPointerGetAttributes"],
                  f"{fmt} ({how}): no writer in flight, nothing asked of the driver but the frame's context and device")
            f.close()
            check(len(cudavision._mappings) == 1 and refcount(memory) > counts[1] and
                  (how == "buffer" or refcount(hash(buf)) > counts[0]),
                  f"{fmt} ({how}): a capsule keeps the frame's buffer, and its memory mapped")
            del f, p, capsule, managed, t
            gc.collect()
            check((refcount(hash(buf)), refcount(memory)) == counts and not cudavision._mappings and
                  cudavision._native.exported() == 0, f"{fmt} ({how}): all let go, the buffer and its memory as they were")
    # GStreamer 1.24+: a frame whose memory says its writer's work may still be pending
    buf, _, planes = made_frame("NV12", 20, 12, 0, 14)
    caps = Gst.Caps.from_string("video/x-raw(memory:CUDAMemory),format=NV12,width=20,height=12")
    memory = hash(buf.peek_memory(0))
    cuda_mod.MiniObject.from_address(memory).flags |= cuda_mod._NEED_SYNC
    libs = cuda_mod._libraries = FakeLibraries(writer=True)
    with cudavision.frame(Gst.Sample.new(buf, caps, None, None)) as f:
        capsule = f.planes[0].__dlpack__(stream=0x999)
        waits = [c for c in libs.cuda.calls if c[0] == "cuStreamWaitEvent"]
        check(libs.streams == [memory] and waits == [("cuStreamWaitEvent", 0x999, 0x77, 0)] and
              ("cuEventRecord", 0x77, 0xabc) in libs.cuda.calls,
              f"a writer in flight: the consumer's stream waits for an event on the writer's: {libs.cuda.calls[2:]}")
        libs.cuda.calls.clear()
        again = f.planes[1].__dlpack__(stream=0x999)
        check(libs.cuda.calls == [], f"a writer in flight: a stream already after it is not ordered again: {libs.cuda.calls}")
        f.planes[1].__dlpack__(stream=0x998)
        check([c for c in libs.cuda.calls if c[0] != "cuStreamWaitEvent"] == [] and
              [c for c in libs.cuda.calls if c[0] == "cuStreamWaitEvent"] == [("cuStreamWaitEvent", 0x998, 0x77, 0)],
              f"a writer in flight: another stream waits for the same event, recorded once: {libs.cuda.calls}")
        libs.cuda.calls.clear()
        f.planes[1].__cuda_array_interface__
        check([c[0] for c in libs.cuda.calls if c[0].startswith("cuEvent")] == ["cuEventSynchronize"],
              "a writer in flight: the CUDA array interface waits on the host")
        libs.cuda.calls.clear()
    del capsule, again, f
    gc.collect()
    check([c[0] for c in libs.cuda.calls] == ["cuEventDestroy_v2"],
          f"a writer in flight: the event goes with the mapping: {libs.cuda.calls}")
    # the same, the writer's stream idle by the time the frame is taken: one query, no event, no wait
    libs = cuda_mod._libraries = FakeLibraries(writer=True)
    libs.cuda.writer_done = True
    with cudavision.frame(Gst.Sample.new(buf, caps, None, None)) as f:
        capsule = f.planes[0].__dlpack__(stream=0x999)
        f.planes[1].__cuda_array_interface__
        f.planes[1].__dlpack__(stream=1)
        check([c[0] for c in libs.cuda.calls] == ["cuPointerGetAttributes", "cuStreamQuery"]
              and ("cuStreamQuery", 0xabc) in libs.cuda.calls
              and f._mapping.writer is None,
              f"a writer done by the time its frame is taken: its stream queried once, nothing waits: {libs.cuda.calls}")
    cuda_mod.MiniObject.from_address(memory).flags &= ~cuda_mod._NEED_SYNC
    del capsule, f
    gc.collect()
finally:
    cuda_mod.GST_MAP_CUDA, cuda_mod._CUDA_MEMORY_TYPE, cuda_mod._libraries = saved

# the buffer's timestamps, numpy's own view, a readable repr
stamped, stamped_caps, stamped_planes = made_frame("RGBA", 16, 8, 0, 9)
stamped.pts, stamped.duration = 2 * Gst.SECOND, Gst.SECOND // 30
with cudavision.frame(stamped, stamped_caps) as f:
    check(f.pts == 2 * Gst.SECOND and f.duration == Gst.SECOND // 30, f"pts and duration: {f.pts}, {f.duration}")
    check(np.array_equal(np.asarray(f), stamped_planes[0]) and np.asarray(f).base is not None,
          "numpy.asarray (frame) is the first plane, a view")
    check(repr(f) == "<cudavision.Frame RGBA 16x8 in system memory, pts 2.000000 s>", f"repr: {f!r}")
unstamped, unstamped_caps, _ = made_frame("GRAY8", 8, 4, 0, 10)
with cudavision.frame(unstamped, unstamped_caps) as f:
    check(f.pts is None and f.duration is None and "no pts" in repr(f), f"no timestamps: {f!r}")

# a writable frame is refused wherever its write could land in memory another buffer holds, or leave
# a read view stale: the check runs for every writable frame, a mapping kept by an old view or not
wrapped = Gst.Buffer.new_wrapped(bytes(64))
gray = Gst.Caps.from_string("video/x-raw,format=GRAY8,width=8,height=8")
with cudavision.frame(wrapped, gray, writable=True) as f:
    kept_view = f.array
keep = wrapped.copy()  # shares the memory
raises("writable again once a copy shares the memory (an old view keeps the mapping)",
       lambda: cudavision.frame(wrapped, gray, writable=True), "copy_deep")
# a buffer of its own whose memory another buffer shares
owner = Gst.Buffer.new_wrapped(bytes(64))
solo = Gst.Buffer.new()
solo.append_memory(owner.peek_memory(0))
raises("writable while another buffer shares the memory", lambda: cudavision.frame(solo, gray, writable=True),
       "another buffer shares it")
del solo, owner
check(keep.extract_dup(0, 64) == bytes(64), "the copy is unchanged")
del kept_view, keep
gc.collect()
mine = Gst.Buffer.new_wrapped(bytes(64))
reading = cudavision.frame(mine, gray)
raises("writable while a read-only frame of the buffer is open", lambda: cudavision.frame(mine, gray, writable=True),
       "read-only frame of this buffer")
view = reading.array
reading.close()
raises("writable while a read-only view is alive", lambda: cudavision.frame(mine, gray, writable=True),
       "read-only frame of this buffer")
del view
gc.collect()
with cudavision.frame(mine, gray, writable=True) as w:
    w.array[0, 0] = 7
    with cudavision.frame(mine, gray) as r:
        check(r.array[0, 0] == 7 and not r.array.flags.writeable,
              "a frame to read while a writable one is open reads what it wrote, read-only")
    w.array[0, 1] = 9
check(mine.extract_dup(0, 2) == bytes([7, 9]), "the writes are in the buffer")

# two analysers of one type on a frame: each its own meta, keyed by its element's name
twice = list(cudavision.frames("videotestsrc num-buffers=3 ! video/x-raw,format=GRAY8,width=32,height=16 ! "
                               "cudahistogram backend=cpu name=whole ! cudahistogram backend=cpu name=corner bins=16 "
                               "roi-width=8 roi-height=8 ! cudahistogram backend=cpu name=again"))
check(all(set(f.results) == {"whole", "corner", "again"} and f.results["whole"]["bins"] == 256 and
          f.results["corner"]["bins"] == 16 and f.results["corner"]["pixels"] == 64 and
          f.results["whole"]["pixels"] == 512 and f.results["again"]["type"] == "cudahistogram" and
          all(v["element"] == k for k, v in f.results.items()) for f in twice),
      f"three cudahistograms on one frame, each its own results: {[sorted(f.results) for f in twice]}")

# analysers of one name in different bins (a name is unique within its bin only) on one frame:
# each kept, the first on the buffer under the name, a later one under "name#2", "name#3", with its
# type; a numbered key never takes the place of a name given (metas of a buffer of our own: "h",
# "h", an element named "h#2", then two without an element field)
alike = list(cudavision.frames("videotestsrc num-buffers=3 ! video/x-raw,format=RGBA,width=32,height=16 ! "
                               "cudahistogram backend=cpu name=a ! ( cudamotionest backend=cpu name=a ) ! "
                               "( cudanoisemap backend=cpu name=a )"))
check(len(alike) == 3 and all(
          set(f.results) == {"a", "a#2", "a#3"} and all(v["element"] == "a" for v in f.results.values()) and
          {v["type"] for v in f.results.values()} == {"cudahistogram", "cudamotionest", "cudanoisemap"} for f in alike),
      f"three analysers named a in different bins: a, a#2, a#3, each with its type: "
      f"{[{k: v['type'] for k, v in f.results.items()} for f in alike]}")
numbered = Gst.Buffer.new()
for _ in range(5):
    numbered.add_custom_meta("CudaHistogramMeta")
for (_, at), (element, pixels) in zip(cudavision._cuda.custom_metas(numbered, ("CudaHistogramMeta",)),
                                      (("h", 1), ("h", 2), ("h#2", 3), (None, 4), (None, 5))):
    fields = Gst.Structure.from_string(f"x, pixels=(int){pixels}" + (f', element=(string)"{element}"' if element else ""))[0]
    for n in range(fields.n_fields()):
        field = fields.nth_field_name(n).encode()
        value = cudavision._cuda.gst.gst_structure_get_value(hash(fields), field)
        cudavision._cuda.gst.gst_structure_set_value(at, field, value)
got = {k: v["pixels"] for k, v in cudavision.results(numbered).items()}
check(got == {"h": 1, "h#2": 2, "h#2#2": 3, "cudahistogram": 4, "cudahistogram#2": 5},
      f"five metas of names given twice, in the buffer's order, none lost: {got}")

# a field of a type the module does not read itself: PyGObject's value of it; a bytes field it
# does not type: bytes; a field missing: left out (fields set through libgstreamer, on a meta of a
# buffer of our own, as an element sets them)
own = Gst.Buffer.new()
own.add_custom_meta("CudaHistogramMeta")
fields = Gst.Structure.from_string("x, element=(string)mine, ratio=(fraction)1/2, ints=(int)<1, 2>, "
                                   "nothing=(string)NULL, big=(guint64)18446744073709551615, below=(int)-3, "
                                   "small=(float)0.5")[0]
fields.set_value("raw", GLib.Bytes.new(b"\x01\x02\x03"))
gst = cudavision._cuda.gst
at = cudavision._cuda.custom_metas(own, ("CudaHistogramMeta",))[0][1]
for n in range(fields.n_fields()):
    name = fields.nth_field_name(n).encode()
    gst.gst_structure_set_value(at, name, gst.gst_structure_get_value(hash(fields), name))
mine = cudavision.results(own)
plain = own.get_custom_meta("CudaHistogramMeta").get_structure()
check(set(mine) == {"mine"} and set(mine["mine"]) == {fields.nth_field_name(n) for n in range(fields.n_fields())} | {"type"},
      f"a meta's every field, whatever its name, under its element's: {mine}")
m = mine["mine"]
check(m["ratio"] == plain.get_value("ratio") and isinstance(m["ratio"], Gst.Fraction) and list(m["ints"]) == [1, 2],
      f"a fraction and an array: PyGObject's values ({m['ratio']}, {m['ints']})")
check(m["nothing"] is None and m["big"] == 2 ** 64 - 1 and m["below"] == -3 and m["small"] == 0.5 and m["raw"] == b"\x01\x02\x03",
      f"a NULL string, a 64-bit count, a negative int, a float and untyped bytes: "
      f"{[m[k] for k in ('nothing', 'big', 'below', 'small', 'raw')]}")
check(all(type(m[k]) is type(plain.get_value(k)) and m[k] == plain.get_value(k) for k in ("element", "big", "below", "small")),
      "numbers and strings as PyGObject gives them")
# metas of others around ours (a video meta, a custom meta of another name): ours only, of a
# buffer or of a sample; a sample without a buffer is refused
Gst.meta_register_custom("OtherMeta", [], None)
among = Gst.Buffer.new_allocate(None, 64, None)
GstVideo.buffer_add_video_meta(among, GstVideo.VideoFrameFlags.NONE, GstVideo.VideoFormat.GRAY8, 8, 8)
for name in ("OtherMeta", "CudaHistogramMeta", "OtherMeta"):
    among.add_custom_meta(name)
check(cudavision.results(among) == cudavision.results(Gst.Sample.new(among, None, None, None)) ==
      {"cudahistogram": {"type": "cudahistogram"}}, f"ours among metas of others: {cudavision.results(among)}")
type_error("results () of a sample without a buffer", lambda: cudavision.results(Gst.Sample.new(None, None, None, None)),
           "not NoneType")

# the reader: a pipeline's frames as an iterator, with results, timestamps and their source; the
# pipeline's error as an exception; nothing left running once the loop ends or breaks
got = list(cudavision.frames("videotestsrc num-buffers=12 ! video/x-raw,format=NV12,width=64,height=48 ! "
                             "cudahistogram backend=cpu name=h"))
check(len(got) == 12 and all(f.results["h"]["type"] == "cudahistogram" and f.source for f in got) and
      [f.pts for f in got] == [i * Gst.SECOND // 30 for i in range(12)],
      f"frames (): every frame with its results and pts ({len(got)})")
# a file's path, as PyAV's and decord's users give it: decoded as its URI


def make_clip(clip, frames):
    """A Matroska file of @frames I420 32x16 frames at @clip."""
    made = Gst.parse_launch(f"videotestsrc num-buffers={frames} ! video/x-raw,format=I420,width=32,height=16,"
                            f'framerate=30/1 ! matroskamux ! filesink location="{clip}"')
    made.set_state(Gst.State.PLAYING)
    made.get_bus().timed_pop_filtered(10 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
    made.set_state(Gst.State.NULL)


with tempfile.TemporaryDirectory() as tmp:
    clip = os.path.join(tmp, "clip.mkv")
    make_clip(clip, 6)
    here = os.getcwd()
    os.chdir(tmp)
    try:
        by_path = [(f.format, f.width, f.height) for f in cudavision.frames("clip.mkv")]
    finally:
        os.chdir(here)
    check(by_path == [("I420", 32, 16)] * 6, f"frames () of a file's path: its frames, decoded ({by_path})")
try:
    for f in cudavision.frames("filesrc name=missing location=/nonexistent/clip.mkv ! decodebin ! videoconvert"):
        pass
    check(False, "a pipeline whose source fails: no error")
except cudavision.PipelineError as e:
    check(e.element == "missing" and str(e).startswith("missing: "), f"the pipeline's error raised, naming its element: {e}")
try:
    cudavision.frames("videotestsrc num-buffers=2 ! fakesink")
    check(False, "a description that ends in a sink: no error")
except cudavision.PipelineError as e:
    check("ends in a sink" in str(e), f"a description that ends in a sink: the error says so: {e}")
try:
    with cudavision.frames("videotestsrc num-buffers=2 ! video/x-raw,format=AYUV,width=8,height=8 ! appsink") as reader:
        next(reader)
    check(False, "a format the module does not know, through frames (): no error")
except cudavision.Unsupported as e:
    check("videoconvert" in str(e) and reader.pipeline.get_state(0)[1] == Gst.State.NULL,
          f"a format the module does not know, through frames (): the error says to convert, the pipeline stopped: {e}")
try:
    cudavision.frames("videotestsrc ! nosuchelement")
    check(False, "a pipeline that does not parse: no error")
except cudavision.PipelineError as e:
    check("nosuchelement" in str(e), f"a pipeline that does not parse: {e}")
with cudavision.frames("videotestsrc ! video/x-raw,width=32,height=24 ! cudahistogram backend=cpu", rgb=True) as reader:
    for i, f in enumerate(reader):
        if i == 4:
            break
check(f.format == "RGBA" and reader.pipeline.get_state(0)[1] == Gst.State.NULL,
      f"rgb=True gives RGBA ({f.format}); a break inside `with` leaves the pipeline NULL")
counts = {}
for f in cudavision.frames("videotestsrc num-buffers=5 ! video/x-raw,format=RGBA,width=16,height=16 ! appsink name=left "
                           "videotestsrc num-buffers=7 ! video/x-raw,format=GRAY8,width=16,height=16 ! appsink name=right"):
    counts[f.source] = counts.get(f.source, 0) + 1
check(counts == {"left": 5, "right": 7}, f"two sources in one loop, each frame tagged by its appsink: {counts}")
# an error after frames have flowed (identity fails on its 20th buffer, which it can take only
# once the loop has pulled 14 at least: the appsink holds 4 and one waiting): the frames before
# it, then the error, naming its element, and the pipeline stopped (the bus is looked at before
# each pull, not only at the start)
seen = []
reader = cudavision.frames("videotestsrc num-buffers=50 ! video/x-raw,format=GRAY8,width=16,height=16 ! "
                           "identity name=broken error-after=20")
try:
    for f in reader:
        seen.append(f.pts)
    check(False, f"an error mid-stream: no error after {len(seen)} frames")
except cudavision.PipelineError as e:
    check(e.element == "broken" and 14 <= len(seen) < 20 and reader.pipeline.get_state(0)[1] == Gst.State.NULL,
          f"an error mid-stream: {len(seen)} frames, then {e}, the pipeline stopped")
# a break outside `with` leaves the pipeline playing: the next loop over the reader goes on from there
reader = cudavision.frames("videotestsrc num-buffers=6 ! video/x-raw,format=GRAY8,width=16,height=16 ! appsink name=only")
first = []
for f in reader:
    first.append(f.pts)
    if len(first) == 2:
        break
state = reader.pipeline.get_state(5 * Gst.SECOND)[1]  # the pipeline's own state comes last (its children's first)
rest = [(f.pts, f.source) for f in reader]
check(state == Gst.State.PLAYING and first + [pts for pts, _ in rest] == [i * Gst.SECOND // 30 for i in range(6)] and
      all(source == "only" for _, source in rest) and reader.pipeline.get_state(0)[1] == Gst.State.NULL,
      f"a break outside `with`, then a second loop: {first} then {rest}")
# a frame's results and buffer, made when read (docs/python.md, "Reading frames"): those of its
# buffer, the same object at each read, read after the loop and the pipeline's end too
with cudavision.frames("videotestsrc num-buffers=3 ! video/x-raw,format=GRAY8,width=16,height=16 ! "
                       "cudahistogram backend=cpu name=h") as reader:
    taken = list(reader)
check(all(isinstance(f, cudavision.Frame) and isinstance(f.buffer, Gst.Buffer) and f.buffer is f.buffer and
          f.results is f.results and f.buffer.pts == f.pts and
          f.results["h"]["pixels"] == cudavision.results(f.buffer)["h"]["pixels"] == 256 and
          np.array_equal(f.results["h"]["histogram"], cudavision.results(f.buffer)["h"]["histogram"]) for f in taken),
      "a reader's frame: its results and buffer when read, after the loop, as results () of its buffer gives them")
# the bus: emptied as the loop pulls (no message piles up), those asked for kept in order, an
# interval's last (posted at EOS, after the last frame) among them once the loop ended; the
# frame's buffer for metas of others
with cudavision.frames("videotestsrc num-buffers=40 ! video/x-raw,format=GRAY8,width=16,height=16 ! "
                       "cudahistogram backend=cpu name=h") as reader:
    for i, f in enumerate(reader):
        if i == 30:
            pending = 0
            while reader.bus.pop_filtered(Gst.MessageType.ELEMENT) is not None:
                pending += 1
check(pending <= 8 and reader.messages == [],
      f"messages not asked for are dropped as the loop pulls: {pending} pending at frame 30 of 40")
reader = cudavision.frames("videotestsrc num-buffers=7 ! video/x-raw,format=GRAY8,width=16,height=16 ! "
                           f"cudahistogram backend=cpu name=h interval={3 * Gst.SECOND // 30 + 1}",
                           messages=Gst.MessageType.ELEMENT)
got = list(reader)
counted = [m.get_structure().get_value("frames") for m in reader.messages]
check(len(got) == 7 and len(counted) >= 2 and sum(counted) == 7 and
      all((m.src.get_name(), m.get_structure().get_name()) == ("h", "cudahistogram") for m in reader.messages),
      f"messages=ELEMENT keeps the element messages, the one posted at EOS too: frames {counted}")
check(all(isinstance(f.buffer, Gst.Buffer) and f.buffer.pts == f.pts and f.buffer.get_custom_meta("CudaHistogramMeta")
          for f in got), "each frame's buffer, with its metas")
pipeline = Gst.parse_launch("videotestsrc num-buffers=4 name=src ! video/x-raw,format=GRAY8,width=16,height=16 ! "
                            "cudahistogram backend=cpu ! appsink")


def tell(pad, info):
    src = pad.get_parent_element()
    src.post_message(Gst.Message.new_application(src, Gst.Structure.new_empty(f"at-{info.get_buffer().pts}")))
    return Gst.PadProbeReturn.OK


pipeline.get_by_name("src").get_static_pad("src").add_probe(Gst.PadProbeType.BUFFER, tell)
with cudavision.frames(pipeline, messages=Gst.MessageType.APPLICATION) as reader:
    got = [f.pts for f in reader]
check([m.get_structure().get_name() for m in reader.messages] == [f"at-{t}" for t in got] and len(got) == 4,
      f"messages=APPLICATION keeps those only, in order: {[m.get_structure().get_name() for m in reader.messages]}")
for bad in (None, 3):
    try:
        cudavision.frames(bad)
        check(False, f"frames ({bad!r}): no error")
    except TypeError as e:
        check("frames ()" in str(e), f"frames ({bad!r}): {e}")

# a reader dropped or closed in a pad probe (a streaming thread of its pipeline, which cannot set
# its own pipeline to NULL: GStreamer aborts; its warning made fatal here, so that every run says
# it), 20 times over, each in a process of its own, and the cyclic GC collecting a reader there:
# the pipeline NULL shortly after, the process alive (docs/python.md, "Reading frames")
script = """
import gc, sys, threading, time, gi
gi.require_version("Gst", "1.0")
from gi.repository import Gst
Gst.init(None)
import cudavision
mode = sys.argv[1]
pipeline = Gst.parse_launch("videotestsrc is-live=true ! video/x-raw,format=GRAY8,width=16,height=16,framerate=300/1 ! "
                            "identity name=i ! tee name=t t. ! queue leaky=downstream max-size-buffers=2 ! appsink "
                            "t. ! queue ! fakesink")
app, armed, done = {"reader": cudavision.frames(pipeline)}, [], threading.Event()
def probe(pad, info):
    if armed and not done.is_set():
        done.set()
        if mode == "drop":
            app.clear()               # the reader's last reference
        elif mode == "gc":
            gc.collect()              # the cyclic GC, as it may run at any allocation
        else:
            app["reader"].close()
    return Gst.PadProbeReturn.OK
pipeline.get_by_name("i").get_static_pad("src").add_probe(Gst.PadProbeType.BUFFER, probe)
for i, f in enumerate(app["reader"]):
    if i == 3:
        break                         # outside `with`: it plays on
del f
if mode == "gc":
    app["reader"].cycle = app["reader"]
    gc.disable()
    app.clear()
armed.append(True)
done.wait(5)
end = time.monotonic() + 5
while pipeline.get_state(0)[1] != Gst.State.NULL and time.monotonic() < end:
    time.sleep(0.005)
print(mode, pipeline.get_state(0)[1].value_nick)
"""

import subprocess  # noqa: E402
import time  # noqa: E402

modes = ["drop"] * 20 + ["gc", "close"]
runs = [subprocess.Popen([sys.executable, "-c", script, mode], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, G_DEBUG="fatal-warnings")) for mode in modes]
ended = [(mode, run.communicate(timeout=60), run.returncode) for mode, run in zip(modes, runs)]
bad = [(mode, code, err[-200:]) for mode, (out, err), code in ended if code != 0 or out.strip() != f"{mode} null"]
check(not bad, f"a reader dropped (20 times), collected or closed in a pad probe: the pipeline NULL shortly after, "
      f"{len(bad)} of {len(modes)} runs failed {bad[:2]}")
# an appsink that is not linked (a chain of its own) is refused at once, named, rather than waited
# for forever; one that an element which adds pads as it plays (decodebin) links then is taken
type_error("an appsink not linked", lambda: cudavision.frames(
    "videotestsrc num-buffers=3 ! video/x-raw,format=RGBA ! fakesink  appsink name=alone"), "alone is not linked")
got = [f.format for f in cudavision.frames("videotestsrc num-buffers=3 ! video/x-raw,format=GRAY8,width=16,height=16 ! "
                                           "decodebin ! appsink")]
check(got == ["GRAY8"] * 3, f"an appsink that decodebin links as it plays: taken ({got})")
# a file's path with a "!" in its name: the file, decoded, not a description
with tempfile.TemporaryDirectory() as tmp:
    clip = os.path.join(tmp, "wow!.mkv")
    make_clip(clip, 3)
    try:
        got = [(f.format, f.width) for f in cudavision.frames(clip)]
    except cudavision.PipelineError as e:
        got = e
    check(got == [("I420", 32)] * 3, f"a file's path with a '!': its frames ({got})")
# rgb=True converts before the appsink the reader adds: a description's own appsink, or a
# Gst.Pipeline's, is refused with what to do; "appsink" within another word is no appsink
type_error("rgb=True and an appsink of the description's", lambda: cudavision.frames(
    "videotestsrc num-buffers=3 ! appsink", rgb=True), "leave it out (the reader adds one)")
type_error("rgb=True and a Gst.Pipeline", lambda: cudavision.frames(
    Gst.parse_launch("videotestsrc num-buffers=3 ! appsink"), rgb=True), "convert in it")
got = [[f.format for f in cudavision.frames("videotestsrc num-buffers=3 ! video/x-raw,format=GRAY8,width=16,height=16 ! "
                                            "identity name=notappsink", rgb=rgb)] for rgb in (False, True)]
check(got == [["GRAY8"] * 3, ["RGBA"] * 3], f"a description ending in an element named notappsink: the appsink added, "
      f"rgb=True taken ({got})")
# the appsink the reader adds takes the formats the module reads, in CUDA or system memory, so that
# negotiation picks one (videotestsrc alone: not its ABGR64_LE); a format fixed before it that is
# none of them is refused with what to do; an appsink of the description's own is left as it is
with cudavision.frames("videotestsrc num-buffers=3") as reader:
    try:
        got = [f.format for f in reader]
    except cudavision.Unsupported as e:
        got = e
    added = reader.sinks[0].get_property("caps")
# (caps compared with caps: GStreamer 1.26's Python wraps get_structure ()'s result)
formats = "format={" + ",".join(cudavision._LAYOUTS) + "}"
wanted = Gst.Caps.from_string(f"video/x-raw(memory:CUDAMemory),{formats}; video/x-raw,{formats}")
check(isinstance(got, list) and len(got) == 3 and got[0] in cudavision._LAYOUTS and added is not None and
      added.is_strictly_equal(wanted),
      f"frames (videotestsrc): a format the module reads, through the appsink it adds, CUDA memory first "
      f"({got}, {added.to_string() if added else None})")
try:
    cudavision.frames("videotestsrc num-buffers=3 ! video/x-raw,format=AYUV,width=8,height=8")
    check(False, "a format fixed before the appsink the reader adds, none of those it reads: no error")
except cudavision.PipelineError as e:
    check("formats cudavision reads, RGBA" in str(e) and "rgb=True" in str(e),
          f"a format fixed before the appsink the reader adds, none of those it reads: {e}")
try:
    next(cudavision.frames("videotestsrc num-buffers=3 ! video/x-raw,format=AYUV,width=8,height=8 ! decodebin"))
    check(False, "a format none of those it reads, from decodebin (linked as it plays): no error")
except cudavision.PipelineError as e:
    check("formats cudavision reads" in str(e), f"a format none of those it reads, from decodebin (linked as it plays): {e}")
with cudavision.frames("videotestsrc num-buffers=3 ! video/x-raw,format=GRAY8,width=8,height=8 ! appsink") as reader:
    check(reader.sinks[0].get_property("caps") is None, "an appsink of the description's own: its caps left as they are")
# what to do is said where it helps: audio through an appsink of one's own is refused, no conversion hinted
try:
    # (core elements only: the 1.24 part's GStreamer is built without audiotestsrc)
    next(cudavision.frames("fakesrc num-buffers=3 sizetype=fixed sizemax=16 filltype=zero ! "
                           "audio/x-raw,format=S16LE,rate=8000,channels=1,layout=interleaved ! appsink"))
    check(False, "audio through an appsink of the description's own: no error")
except cudavision.Unsupported as e:
    check("not caps of a video frame" in str(e) and "videoconvert" not in str(e) and "rgb=True" not in str(e),
          f"audio through an appsink of the description's own: no conversion hinted: {e}")
# messages= is a Gst.MessageType mask: anything else is a TypeError that says so, before the pipeline is made
for bad in ("x", None, 1.5):
    type_error(f"messages={bad!r}", lambda: cudavision.frames("videotestsrc num-buffers=3", messages=bad),
               "messages is a Gst.MessageType mask")
# an error is raised at the next pull: frames still queued in the appsink then are dropped (the
# appsink's 4th buffer reached it, so its 2nd at least is queued when the error is posted)
pipeline = Gst.parse_launch("videotestsrc name=src num-buffers=10 ! video/x-raw,format=GRAY8,width=16,height=16 ! "
                            "appsink name=sink")
reached = []
pipeline.get_by_name("sink").get_static_pad("sink").add_probe(Gst.PadProbeType.BUFFER,
                                                               lambda pad, info: reached.append(1) or Gst.PadProbeReturn.OK)
reader = cudavision.frames(pipeline)
seen = [next(reader).pts]
end = time.monotonic() + 5
while len(reached) < 4 and time.monotonic() < end:
    time.sleep(0.005)
src = pipeline.get_by_name("src")
src.post_message(Gst.Message.new_error(src, GLib.Error.new_literal(Gst.CoreError.quark(), "broken on purpose",
                                                                   Gst.CoreError.FAILED), "posted by the test"))
try:
    seen += [f.pts for f in reader]
    check(False, f"an error posted while frames are queued: no error after {seen}")
except cudavision.PipelineError as e:
    check(seen == [0] and len(reached) >= 4 and e.element == "src" and pipeline.get_state(0)[1] == Gst.State.NULL,
          f"an error posted while frames are queued: raised at the next pull, the queued ones dropped ({seen}, {e})")

# in a process of its own, GStreamer's criticals fatal: a frame that is not writable says so
# without a critical; 300 frames of one buffer make none; views alive at the interpreter's exit
# (a class attribute, a cycle) end it cleanly
script = """
import sys, gi
gi.require_version("Gst", "1.0")
from gi.repository import Gst
import numpy as np, cudavision
Gst.init(None)
caps = Gst.Caps.from_string("video/x-raw,format=GRAY8,width=8,height=4")
buf = Gst.Buffer.new_wrapped(bytes(range(32)))
held = buf.copy()  # another reference: not writable
try:
    cudavision.frame(buf, caps, writable=True)
    sys.exit("writable: no error")
except cudavision.Unsupported as e:
    assert "copy_deep" in str(e), e
mine = buf.copy_deep()
with cudavision.frame(mine, caps, writable=True) as f:
    f.array[0, 0] = 200
assert mine.extract_dup(0, 1) == bytes([200])
frames = [cudavision.frame(buf, caps) for _ in range(300)]
class Keep:
    pass
Keep.view = frames[0].array
Keep.sample_view = cudavision.frame(Gst.Sample.new(buf, caps, None, None)).array  # its buffer held by reference
cycle = [frames[1]]
cycle.append(cycle)
print("end")
"""

import subprocess  # noqa: E402

p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                   env=dict(os.environ, G_DEBUG="fatal-criticals"))
check(p.returncode == 0 and p.stdout.strip() == "end" and "CRITICAL" not in p.stderr,
      f"no critical, a clean exit with views alive: exit {p.returncode}, {p.stdout.strip()!r} {p.stderr[-300:]!r}")

# the source's python/ alone, without the build's C++ part: frames in system memory as ever (their
# fields read through ctypes), a frame in CUDA memory refused with what to do
script = """
import sys, gi
gi.require_version("Gst", "1.0")
from gi.repository import Gst
Gst.init(None)
import cudavision
assert cudavision._c_part is None, cudavision._c_part
buf = Gst.Buffer.new_wrapped(bytes(range(64)))
buf.pts, buf.duration = 7, 3
caps = Gst.Caps.from_string("video/x-raw,format=GRAY8,width=8,height=8")
with cudavision.frame(Gst.Sample.new(buf, caps, None, None)) as f:
    assert f.array[1, 2] == 10 and (f.pts, f.duration) == (7, 3), (f.array, f.pts)
try:
    cudavision.frame(buf, Gst.Caps.from_string("video/x-raw(memory:CUDAMemory),format=GRAY8,width=8,height=8"))
    sys.exit("CUDA caps: no error")
except cudavision.Unsupported as e:
    assert "C++ part" in str(e), e
print("end")
"""
source = os.path.dirname(cudavision.__path__[0])
others = [d for d in os.environ.get("PYTHONPATH", "").split(os.pathsep)
          if d and not os.path.isdir(os.path.join(d, "cudavision"))]  # PyGObject's, where it is on the path
p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                   env=dict(os.environ, PYTHONPATH=os.pathsep.join([source] + others)))
check(p.returncode == 0 and p.stdout.strip() == "end",
      f"without the C++ part: system memory read, CUDA memory refused: exit {p.returncode}, {p.stderr[-300:]!r}")

print(f"{len(failures)} failed")
sys.exit(1 if failures else 0)
