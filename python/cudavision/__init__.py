"""cudavision: gst-cudavision's frames and results in numpy, PyTorch or CuPy, without a copy
(docs/python.md).

    import cudavision
    with cudavision.frame(sample) as f:        # an appsink's Gst.Sample, or frame(buffer, caps)
        y, uv = f.planes                       # NV12: the mapped planes (numpy views, or CudaPlane)
        t = torch.from_dlpack(y)               # CUDA memory: a tensor on the GPU over the frame
    r = cudavision.results(buffer)             # every meta of ours: numpy arrays and numbers

A frame is mapped once and read in place: each plane with the strides of the buffer's
GstVideoMeta (or of the caps), packed formats H x W x C. In system memory a plane is a numpy
view; in CUDA memory a CudaPlane, which DLPack (`__dlpack__`) and the CUDA array interface hand to
a consumer on the GPU, the consumer's stream ordered after the frame's writer. The mapping lasts
as long as the Frame or anything made of it: closing the Frame drops its own hold, never memory a
view or a tensor still reads.
"""

import sys
import weakref

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstVideo", "1.0")
import numpy as np  # noqa: E402
from gi.repository import Gst, GstVideo  # noqa: E402

from . import _cuda, _dlpack  # noqa: E402

__all__ = ["CudaPlane", "Frame", "Frames", "PipelineError", "Unsupported", "frame", "frames", "results",
           "MOTION_VECTOR"]

# cudamotionest's vector record (gst/gstcudamotionmeta.h, docs/results.md): the block's content
# was at (dx, dy) from it in the previous frame
MOTION_VECTOR = np.dtype([("dx", "i1"), ("dy", "i1"), ("width", "u1"), ("height", "u1"), ("cost", "<u4")])

_CUDA_MEMORY = "memory:CUDAMemory"


class Unsupported(ValueError):
    """A frame this module cannot view: a format it does not know, a buffer that does not hold its
    caps' frame, CUDA memory it cannot map."""


# format: (plane layouts), each (dtype, components a pixel, horizontal and vertical subsampling)
_U8, _U16 = np.dtype("u1"), np.dtype("<u2")
_LAYOUTS = {
    "RGBA": ((_U8, 4, 0, 0),), "BGRA": ((_U8, 4, 0, 0),), "RGBx": ((_U8, 4, 0, 0),),
    "BGRx": ((_U8, 4, 0, 0),), "GRAY8": ((_U8, 1, 0, 0),),
    "NV12": ((_U8, 1, 0, 0), (_U8, 2, 1, 1)),
    "I420": ((_U8, 1, 0, 0), (_U8, 1, 1, 1), (_U8, 1, 1, 1)),
    # packed 4:2:2: each pixel's two bytes (Y and U, or Y and V; UYVY: U or V first)
    "YUY2": ((_U8, 2, 0, 0),), "UYVY": ((_U8, 2, 0, 0),),
    "P010_10LE": ((_U16, 1, 0, 0), (_U16, 2, 1, 1)),
}


def _check_writable(buffer):
    """Writing needs a buffer and memory that only this caller holds, checked here, at every
    writable frame (a mapping kept alive by an old view included), rather than by gst_buffer_map,
    which prints a CRITICAL for a shared buffer and silently copies shared memory, so that the
    write would land in a copy."""
    if not _cuda.gst.gst_mini_object_is_writable(hash(buffer)):
        raise Unsupported("the buffer is not writable: others hold it (an appsink's sample or a probe's buffer "
                          "always is, from Python); map a copy of your own, buffer.copy_deep ()")
    if not _cuda.gst.gst_buffer_is_all_memory_writable(hash(buffer)):
        raise Unsupported("the buffer's memory is not writable: another buffer shares it (buffer.copy () shares "
                          "memory); map a copy of your own, buffer.copy_deep ()")


class _Mapping:
    """A buffer mapped for reading (or writing): unmapped when nothing refers to it any more."""

    def __init__(self, buffer, writable):
        self.buffer = buffer
        ok, self.info = buffer.map(Gst.MapFlags.READ | (Gst.MapFlags.WRITE if writable else 0))
        if not ok:
            self.info = None
            raise Unsupported("the buffer could not be mapped")
        self.data = self.info.data
        self.address = np.frombuffer(self.data, dtype=np.uint8).ctypes.data if self.info.size else 0
        self.size = self.info.size
        self.writable = writable

    def __del__(self):
        # at the interpreter's exit PyGObject can no longer call into GStreamer (it recurses until
        # the stack overflows): the mapping is left to the process's end
        info = getattr(self, "info", None)
        if info is not None and not sys.is_finalizing():
            self.info = None
            self.buffer.unmap(info)


# the mappings alive, one a buffer and mode, shared by every frame of it: GStreamer counts a
# memory's maps in 8 bits (the 257th concurrent map of one buffer would overflow it)
_mappings = weakref.WeakValueDictionary()


def _mapping(buffer, writable, cuda):
    """The buffer's one mapping: a frame to read shares a writable mapping that is open (it then
    reads what is written); a writable frame is refused while a read-only mapping is open, since
    mapping for writing could copy the memory and leave the read views behind, stale."""
    if writable:
        _check_writable(buffer)
        if _mappings.get((hash(buffer), False, cuda)) is not None:
            raise Unsupported("a read-only frame of this buffer, or a view or tensor made of one, is still open: "
                              "close them (and drop their views) before opening it writable")
    else:
        mapping = _mappings.get((hash(buffer), True, cuda))
        if mapping is not None:
            return mapping
    key = (hash(buffer), writable, cuda)  # the buffer's address: its own while the mapping holds it
    mapping = _mappings.get(key)
    if mapping is None:
        try:
            mapping = _cuda.CudaMapping(buffer, writable) if cuda else _Mapping(buffer, writable)
        except _cuda.MapError as e:
            raise Unsupported(str(e)) from None
        _mappings[key] = mapping
    return mapping


class _PlaneView:
    """numpy's view of one plane: its __array_interface__ points into the mapping, which numpy
    keeps alive (the array's base is this object) for as long as the array or a slice lives."""

    def __init__(self, mapping, offset, shape, strides, dtype, writable):
        self.mapping = mapping
        self.__array_interface__ = {
            "version": 3, "shape": shape, "strides": strides, "typestr": dtype.str,
            "data": (mapping.address + offset, not writable),
        }


class CudaPlane:
    """One plane of a frame in CUDA memory: `shape` (rows first; H x W x C for packed formats),
    `strides` (bytes), `dtype`, `device` (the CUDA device's ordinal), `ptr` (the plane's device
    address). A consumer takes it without a copy through DLPack (`torch.from_dlpack (plane)`,
    `cupy.from_dlpack (plane)`) or the CUDA array interface (`cupy.asarray (plane)`,
    `torch.as_tensor (plane, device="cuda")`); what it makes keeps the frame mapped."""

    def __init__(self, mapping, offset, shape, strides, dtype, writable):
        self._mapping = mapping
        self.address, self.offset, self.device = mapping.address, offset, mapping.device
        self.shape, self.strides, self.dtype, self.writable = shape, strides, dtype, writable
        self.ptr = mapping.address + offset

    def __repr__(self):
        return f"<cudavision.CudaPlane {self.shape} {self.dtype} on cuda:{self.device}>"

    def __dlpack_device__(self):
        return (_dlpack.kDLCUDA, self.device)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """DLPack's producer side: the consumer's @stream (None or 1: the legacy default stream,
        2: the per-thread one, -1: none) waits on the GPU for the frame's writer."""
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"the frame is on CUDA device {self.device}, not {tuple(dl_device)}: "
                              "take it there and copy it with the consumer")
        if copy:
            raise BufferError("cudavision hands frames on without a copy: copy the consumer's tensor instead")
        if stream == 0:
            raise BufferError("stream 0 is ambiguous in DLPack: pass 1 (the legacy default stream) or a stream")
        if stream != -1:
            self._mapping.order_after_writer(_cuda.CU_STREAM_LEGACY if stream is None else stream)
        return _dlpack.capsule(self, max_version is not None and max_version[0] >= 1)

    @property
    def __cuda_array_interface__(self):
        """Version 3, with no stream: a frame still in flight on its writer's stream (GStreamer
        1.24+) is waited for on the host first, since that stream is of GStreamer's context."""
        self._mapping.finish_on_host()
        return {"version": 3, "shape": self.shape, "strides": self.strides, "typestr": self.dtype.str,
                "data": (self.ptr, not self.writable), "stream": None}


_parsed = {}  # caps' address -> (the caps, kept so that the address stays theirs, what _parse found)


def _parse(caps):
    """@caps' format, width, height, plane offsets and strides, and whether they are CUDA memory;
    remembered for the few caps a stream has (an appsink gives the same caps every frame)."""
    key = hash(caps)  # the GstCaps' address: theirs while _parsed holds them
    hit = _parsed.get(key)
    if hit is not None:
        return hit[1]
    if caps.is_empty() or not caps.is_fixed():
        raise Unsupported(f"a frame needs fixed video caps, not {caps.to_string()}")
    try:
        info = GstVideo.VideoInfo.new_from_caps(caps)
    except TypeError:  # PyGObject's word for a constructor's NULL
        info = None
    if info is None or info.width <= 0 or info.height <= 0:
        raise Unsupported(f"not caps of a video frame: {caps.to_string()}")
    fmt = GstVideo.VideoFormat.to_string(info.finfo.format)
    if fmt not in _LAYOUTS:
        raise Unsupported(f"format {fmt} is not one cudavision knows ({', '.join(_LAYOUTS)})")
    features = caps.get_features(0)
    cuda = features is not None and features.contains(_CUDA_MEMORY)
    parsed = (fmt, info.width, info.height, tuple(info.offset), tuple(info.stride), cuda)
    if len(_parsed) >= 16:
        _parsed.clear()
    _parsed[key] = (caps, parsed)
    return parsed


class Frame:
    """One mapped video frame: `planes` (one a plane, rows first: numpy views of system memory,
    CudaPlane of CUDA memory), `array` (the first plane: H x W x C for packed formats), `format`,
    `width`, `height`, `device` (None in system memory, else the CUDA device's ordinal), and the
    buffer's `pts` and `duration` in nanoseconds (None where the buffer has none).
    `numpy.asarray (frame)` is the first plane of a frame in system memory."""

    def __init__(self, buffer, caps, writable=False):
        if not isinstance(buffer, Gst.Buffer):
            raise TypeError(f"a frame is of a Gst.Buffer or a Gst.Sample, not {type(buffer).__name__}")
        if caps is None:
            raise TypeError("a frame needs the buffer's caps: frame (buffer, caps), or frame (sample)")
        if not isinstance(caps, Gst.Caps):
            raise TypeError(f"caps are a Gst.Caps, not {type(caps).__name__}" +
                            (" (Gst.Caps.from_string (text) makes them)" if isinstance(caps, str) else ""))
        self.format, self.width, self.height, offsets, strides, cuda = _parse(caps)
        self.pts = buffer.pts if buffer.pts != Gst.CLOCK_TIME_NONE else None
        self.duration = buffer.duration if buffer.duration != Gst.CLOCK_TIME_NONE else None
        layout = _LAYOUTS[self.format]
        meta = GstVideo.buffer_get_video_meta(buffer)
        if meta is not None and GstVideo.VideoFormat.to_string(meta.format) != self.format:
            raise Unsupported(f"the buffer's video meta says {GstVideo.VideoFormat.to_string(meta.format)}, "
                              f"the caps {self.format}")
        if meta is not None:
            if meta.width < self.width or meta.height < self.height or meta.n_planes != len(layout):
                raise Unsupported(f"the buffer's video meta ({meta.width}x{meta.height}, {meta.n_planes} planes) "
                                  f"does not hold the caps' {self.width}x{self.height} frame")
            offsets, strides = list(meta.offset), list(meta.stride)
        self._mapping = _mapping(buffer, writable, cuda)
        self.device = self._mapping.device if cuda else None
        self._planes = []
        for i, (dtype, components, w_sub, h_sub) in enumerate(layout):
            rows = -(-self.height >> h_sub)
            cols = -(-self.width >> w_sub)
            shape = (rows, cols, components) if components > 1 else (rows, cols)
            pixel = dtype.itemsize * components
            if strides[i] < cols * pixel or offsets[i] + (rows - 1) * strides[i] + cols * pixel > self._mapping.size:
                self._mapping = None
                raise Unsupported(f"plane {i} (offset {offsets[i]}, stride {strides[i]}) does not fit the "
                                  f"{self.format} {self.width}x{self.height} frame in the buffer's memory")
            step = (strides[i], pixel, dtype.itemsize) if components > 1 else (strides[i], pixel)
            if self.device is None:
                self._planes.append(np.asarray(_PlaneView(self._mapping, offsets[i], shape, step, dtype, writable)))
            else:
                self._planes.append(CudaPlane(self._mapping, offsets[i], shape, step, dtype, writable))

    @property
    def planes(self):
        if self._mapping is None:
            raise ValueError("the frame is closed: take its planes before close () (or inside `with`)")
        return self._planes

    @property
    def array(self):
        return self.planes[0]

    def close(self):
        """Drops this frame's hold on the mapping; views and tensors still alive keep it mapped."""
        self._planes, self._mapping = [], None

    def __array__(self, dtype=None, copy=None):
        """numpy's view of the first plane (system memory); a frame in CUDA memory goes to the GPU
        consumer by its planes (DLPack, the CUDA array interface), never through the host."""
        if self.device is not None:
            raise TypeError(f"the frame is in CUDA memory (cuda:{self.device}): take its planes with "
                            "torch.from_dlpack () or cupy.asarray (), or download it (cudadownload)")
        if copy:
            return np.array(self.array, dtype=dtype, copy=True)
        return self.array if dtype is None else self.array.astype(dtype, copy=False)

    def __repr__(self):
        where = "system memory" if self.device is None else f"cuda:{self.device}"
        pts = "no pts" if self.pts is None else f"pts {self.pts / 1e9:.6f} s"
        state = ", closed" if self._mapping is None else ""
        return f"<cudavision.Frame {self.format} {self.width}x{self.height} in {where}, {pts}{state}>"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def frame(buffer, caps=None, writable=False):
    """A Frame of @buffer with @caps, or of a Gst.Sample (its buffer and caps: no other caps)."""
    if isinstance(buffer, Gst.Sample):
        own = buffer.get_caps()
        if caps is not None and not (isinstance(caps, Gst.Caps) and own is not None and caps.is_equal(own)):
            raise TypeError("a Gst.Sample brings its own caps: frame (sample), or frame (sample.get_buffer (), caps)")
        buffer, caps = buffer.get_buffer(), own
    return Frame(buffer, caps, writable)


# each analyser's meta (gst/gstcudaXmeta.h) and the element type that puts it on
_METAS = {"CudaHistogramMeta": "cudahistogram", "CudaHeatmapMeta": "cudaheatmap", "CudaNoisemapMeta": "cudanoisemap",
          "CudaMotionMeta": "cudamotionest"}


def _structures(buffer):
    """[(meta name, Gst.Structure)] of every meta of ours on @buffer, in its order. PyGObject reads
    only the first meta of a name: where there are more (two analysers of one type on the frame),
    each is copied, through libgstreamer, into the one custom meta of a buffer of our own."""
    found = _cuda.custom_metas(buffer, _METAS)
    names = [name for name, _ in found]
    if len(set(names)) == len(names):
        return [(name, buffer.get_custom_meta(name).get_structure()) for name in names]
    out = []
    for name, address in found:
        own = Gst.Buffer.new()
        own.add_custom_meta(name)
        _cuda.copy_fields(address, _cuda.custom_metas(own, (name,))[0][1])
        out.append((name, own.get_custom_meta(name).get_structure()))
    return out


def _fields(s, names):
    return {n: s.get_value(n) for n in names if s.has_field(n)}


def _result(name, s):
    if name == "CudaHistogramMeta":
        r = _fields(s, ("bins", "pixels", "luma-mean", "luma-variance", "r-mean", "g-mean", "b-mean",
                        "roi-x", "roi-y", "roi-width", "roi-height"))
        r["histogram"] = np.frombuffer(s.get_value("histogram").get_data(), dtype=np.uint64)
    elif name == "CudaHeatmapMeta":
        r = _fields(s, ("pixels", "mean-difference", "max-difference", "first-frame"))
    elif name == "CudaNoisemapMeta":
        r = _fields(s, ("pixels", "changed-pixels", "changed-ratio", "changed-bytes-estimate", "first-frame"))
    else:
        r = _fields(s, ("block-size", "search-range", "columns", "rows", "unit", "first-frame"))
        rows, cols = r.get("rows", 0), r.get("columns", 0)
        r["vectors"] = np.frombuffer(s.get_value("vectors").get_data(), dtype=MOTION_VECTOR,
                                     count=rows * cols).reshape(rows, cols)
    r["type"] = _METAS[name]
    return r


def results(buffer):
    """Every meta of ours on @buffer (a Gst.Buffer or Gst.Sample), keyed by the name of the
    element that put it there (`cudahistogram name=gate` gives "gate"; an unnamed element
    GStreamer's "cudahistogram0"), each with its element type under "type", as docs/results.md
    lists their fields: numbers as Python numbers, the histogram's counts as a uint64 array and the
    motion vectors as a rows x columns array of MOTION_VECTOR (read-only, over the copy of the
    meta's bytes that PyGObject's GLib.Bytes.get_data () makes). Two analysers of one type on a
    frame each have their own. Elements whose meta is not there are left out."""
    if isinstance(buffer, Gst.Sample):
        buffer = buffer.get_buffer()
    if not isinstance(buffer, Gst.Buffer):
        raise TypeError(f"results () takes a Gst.Buffer or a Gst.Sample, not {type(buffer).__name__}")
    out = {}
    for name, s in _structures(buffer):
        element = s.get_string("element") if s.has_field("element") else None
        out[element or _METAS[name]] = _result(name, s)
    return out

from ._reader import Frames, PipelineError, frames  # noqa: E402
