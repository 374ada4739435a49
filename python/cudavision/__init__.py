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

import ctypes
import pkgutil
import struct
import sys
import threading
import weakref

# uninstalled, the C++ part (_native) is the build's python/cudavision, on PYTHONPATH beside this one
__path__ = pkgutil.extend_path(__path__, __name__)

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstVideo", "1.0")
import numpy as np  # noqa: E402
from gi.repository import Gst, GstVideo  # noqa: E402

from . import _cuda, _dlpack  # noqa: E402

try:  # the C++ part: a frame's fields read in one call (frames in CUDA memory need it; _cuda.py)
    from . import _native as _c_part  # noqa: E402
except ImportError:
    _c_part = None
from ._results import MOTION_VECTOR, results  # noqa: E402

__all__ = ["CudaPlane", "Frame", "Frames", "PipelineError", "Unsupported", "frame", "frames", "results",
           "MOTION_VECTOR"]

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


# A frame is read through libgstreamer (ctypes, _cuda.py) rather than PyGObject, whose every call
# or struct field costs microseconds; what the caps and a video meta say is worked out once.
_gst = _cuda.gst
_Buffer, _Caps, _Sample = Gst.Buffer, Gst.Caps, Gst.Sample
_CLOCK_TIME_NONE = Gst.CLOCK_TIME_NONE
_TIMES = ctypes.c_uint64 * 3  # a GstBuffer's pts, dts and duration
_TIMES_AT = _cuda.Buffer.pts.offset
# a GstVideoMeta's fields from its format to its strides: what a frame's planes depend on
_META_AT = _cuda.VideoMeta.format.offset
_META_SIZE = _cuda.VideoMeta.stride.offset + ctypes.sizeof(ctypes.c_int * 4) - _META_AT
_video_meta_api = None  # GST_VIDEO_META_API_TYPE, registered by the first frame (GStreamer is initialised then)
_META_FIELDS = struct.Struct("=iiIII4Q4i")  # those fields, packed: format, id, width, height, planes, offsets, strides
assert _META_FIELDS.size == _META_SIZE and (_c_part is None or _c_part.META_SIZE == _META_SIZE)


def _read_buffer(buffer):
    """(memory, pts, duration, the video meta's fields or None) of the buffer at @buffer, its one
    memory by address (0: it holds several), through ctypes where the C++ part is not built."""
    pts, _, duration = _TIMES.from_address(buffer + _TIMES_AT)
    meta = _gst.gst_buffer_get_meta(buffer, _video_meta_api)
    memory = _gst.gst_buffer_peek_memory(buffer, 0) if _gst.gst_buffer_n_memory(buffer) == 1 else 0
    return (memory, pts if pts != _CLOCK_TIME_NONE else None, duration if duration != _CLOCK_TIME_NONE else None,
            ctypes.string_at(meta + _META_AT, _META_SIZE) if meta else None)


if _c_part is not None:
    def _read_buffer(buffer):  # noqa: F811: the C++ part's, one call
        return _c_part.read_buffer(buffer, _video_meta_api)


def _check_writable(buffer):
    """Writing needs a buffer (@buffer: its address) and memory that only this caller holds,
    checked here, at every writable frame (a mapping kept alive by an old view included), rather
    than by gst_buffer_map, which prints a CRITICAL for a shared buffer and silently copies shared
    memory, so that the write would land in a copy."""
    if not _gst.gst_mini_object_is_writable(buffer):
        raise Unsupported("the buffer is not writable: others hold it (an appsink's sample or a probe's buffer "
                          "always is, from Python, and so is a buffer after PyGObject's buffer.copy (), which gives "
                          "the same buffer with one more reference); map a copy of your own, buffer.copy_deep ()")
    if not _gst.gst_buffer_is_all_memory_writable(buffer):
        raise Unsupported("the buffer's memory is not writable: another buffer shares it (a shallow copy, as "
                          "gst_buffer_copy () or copy_region () makes); map a copy of your own, buffer.copy_deep ()")


class _Mapping:
    """A frame's bytes in system memory mapped for reading (or writing), unmapped when nothing
    refers to it any more: the buffer's one @memory (its address), referenced by the mapping, or,
    where the buffer at @buffer holds several (@memory 0), the buffer, which its wrapper @owner
    keeps alive, else (None: a sample's buffer) a reference of the mapping's own."""

    device = None  # system memory

    def __init__(self, buffer, owner, writable, memory):
        self.writable, self.memory = writable, memory
        self.buffer, self.owner = (None, None) if memory else (buffer, owner)
        info = _cuda.MapInfo()
        flags = _cuda.MAP_READ | (_cuda.MAP_WRITE if writable else 0)
        mapped = (_gst.gst_memory_map(memory, ctypes.byref(info), flags) if memory else
                  _gst.gst_buffer_map(buffer, ctypes.byref(info), flags))
        if not mapped:
            raise Unsupported("the buffer could not be mapped")
        if memory or owner is None:
            _gst.gst_mini_object_ref(memory or buffer)
        self.info = info
        self.address, self.size = info.data or 0, info.size

    def __del__(self):
        # at the interpreter's exit what this calls (and the buffer's wrapper) may be gone already:
        # the mapping (and the reference) is left to the process's end
        info = getattr(self, "info", None)
        if info is not None and not sys.is_finalizing():
            self.info = None
            if self.memory:
                _gst.gst_memory_unmap(self.memory, ctypes.byref(info))
                _gst.gst_mini_object_unref(self.memory)
            else:
                _gst.gst_buffer_unmap(self.buffer, ctypes.byref(info))
                if self.owner is None:
                    _gst.gst_mini_object_unref(self.buffer)


# the mappings alive, one a memory (or a buffer of several memories), shared by every frame of
# it, of every buffer that holds it: GStreamer counts a memory's maps in 8 bits (the 257th
# concurrent map of one memory would overflow it and leave its lock state wrong; buffers that
# share a memory are common: imagefreeze's, a tee's copies); (address, cuda) -> a weak reference
# that leaves the dict with its mapping. The lock makes a writable frame's checks and its mapping
# one step for the threads of the process.
_mappings = {}
_mappings_lock = threading.Lock()


def _forget(key):
    return lambda ref: _mappings.pop(key, None) if _mappings.get(key) is ref else None


def _mapping(buffer, owner, writable, cuda, memory):
    """The one mapping of the memory at @memory (or, where that is 0, of the buffer at @buffer): a
    frame to read shares a writable mapping that is open (it then reads what is written); a
    writable frame is refused while a read-only mapping is open, since mapping for writing could
    copy the memory and leave the read views behind, stale."""
    key = (memory or buffer, cuda)  # its address: its own while the mapping holds it
    with _mappings_lock:
        ref = _mappings.get(key)
        mapping = ref() if ref is not None else None
        if writable:
            _check_writable(buffer)  # a memory's writability is its sharing, not its references (ours)
            if mapping is not None and not mapping.writable:
                raise Unsupported("a read-only frame of this buffer, or a view or tensor made of one, is still open: "
                                  "close them (and drop their views) before opening it writable")
        if mapping is None:
            try:
                if cuda:
                    if not memory:
                        raise _cuda.MapError(f"the buffer holds {_gst.gst_buffer_n_memory(buffer)} memories: "
                                             "a CUDA frame is viewed in one")
                    mapping = _cuda.cuda_mapping(buffer, writable)
                else:
                    mapping = _Mapping(buffer, owner, writable, memory)
            except _cuda.MapError as e:
                raise Unsupported(str(e)) from None
            _mappings[key] = weakref.ref(mapping, _forget(key))
        return mapping


class _BufferRef:
    """A reference to the buffer at @buffer (its address), dropped with this object, through ctypes
    where the C++ part is not built (its BufferRef otherwise). A frame's views and tensors hold it,
    so that the buffer goes back to its pool only once nothing reads its memory: a pool reuses a
    buffer whose memory is not shared, whatever references the memory itself has (a mapping's)."""

    def __init__(self, buffer):
        self.buffer = _gst.gst_mini_object_ref(buffer)

    def __del__(self):
        if not sys.is_finalizing():
            _gst.gst_mini_object_unref(self.buffer)


if _c_part is not None:
    _BufferRef = _c_part.BufferRef  # noqa: F811


class _PlaneView:
    """numpy's view of a mapping's bytes: its __array_interface__ points into the mapping, which
    numpy keeps alive (the array's base is this object) for as long as the array or a view of it
    lives, with the frame's buffer (@hold)."""

    def __init__(self, mapping, hold, offset, shape, strides, dtype, writable):
        self.mapping, self.hold = mapping, hold
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

    def __init__(self, mapping, hold, geometry, index, writable):
        """Plane @index of @geometry in @mapping; @hold: the frame's buffer, kept while this lives."""
        self._mapping, self._hold, self._geometry, self._index = mapping, hold, geometry, index
        self.offset, self.shape, self.strides, self.dtype = geometry.planes[index]
        self.address, self.device, self.writable = mapping.address, mapping.device, writable
        self.ptr = mapping.address + self.offset

    def __repr__(self):
        return f"<cudavision.CudaPlane {self.shape} {self.dtype} on cuda:{self.device}>"

    def __dlpack_device__(self):
        return (_dlpack.kDLCUDA, self.device)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """DLPack's producer side: the consumer's @stream (None or 1: the legacy default stream,
        2: the per-thread one, -1: none) waits on the GPU for the frame's writer."""
        if dl_device is not None and tuple(dl_device) != (_dlpack.kDLCUDA, self.device):
            raise BufferError(f"the frame is on CUDA device {self.device}, not {tuple(dl_device)}: "
                              "take it there and copy it with the consumer")
        if copy:
            raise BufferError("cudavision hands frames on without a copy: copy the consumer's tensor instead")
        if stream == 0:
            raise BufferError("stream 0 is ambiguous in DLPack: pass 1 (the legacy default stream) or a stream")
        layout = self._geometry.layouts[self._index] or self._geometry.dlpack_layout(self._index)
        return self._mapping.export(self, self.offset, layout, _cuda.CU_STREAM_LEGACY if stream is None else stream,
                                    max_version is not None and max_version[0] >= 1)

    @property
    def __cuda_array_interface__(self):
        """Version 3, with no stream: a frame still in flight on its writer's stream (GStreamer
        1.24+) is waited for on the host first, since that stream is of GStreamer's context."""
        self._mapping.finish_on_host()
        return {"version": 3, "shape": self.shape, "strides": self.strides, "typestr": self.dtype.str,
                "data": (self.ptr, not self.writable), "stream": None}


class _Geometry:
    """Where a frame's planes lie in its memory: `planes`, each (offset, shape, strides, dtype),
    and `end`, the bytes the memory must hold."""

    def __init__(self, fmt, offsets, strides):
        self.planes, self.extents = [], []
        for i, (dtype, components, w_sub, h_sub) in enumerate(fmt.layout):
            rows = -(-fmt.height >> h_sub)
            cols = -(-fmt.width >> w_sub)
            shape = (rows, cols, components) if components > 1 else (rows, cols)
            pixel = dtype.itemsize * components
            if strides[i] < cols * pixel:
                raise fmt.no_fit(i, offsets[i], strides[i])
            step = (strides[i], pixel, dtype.itemsize) if components > 1 else (strides[i], pixel)
            self.planes.append((offsets[i], shape, step, dtype))
            self.extents.append(offsets[i] + (rows - 1) * strides[i] + cols * pixel)
        self.end = max(self.extents)
        self.layouts = [None] * len(self.planes)  # DLPack's, packed at a plane's first capsule

    def dlpack_layout(self, i):
        _, shape, strides, dtype = self.planes[i]
        self.layouts[i] = _dlpack.layout(shape, strides, dtype)
        return self.layouts[i]


class _Format:
    """What a frame's caps say, worked out once for the few caps a stream has (an appsink gives
    the same caps every frame): format, size, memory, and the planes' geometry, from the caps and
    from each video meta seen with them."""

    def __init__(self, caps):
        global _video_meta_api
        if caps.is_empty() or not caps.is_fixed():
            raise Unsupported(f"a frame needs fixed video caps, not {caps.to_string()}")
        try:
            info = GstVideo.VideoInfo.new_from_caps(caps)
        except TypeError:  # PyGObject's word for a constructor's NULL
            info = None
        if info is None or info.width <= 0 or info.height <= 0:
            raise Unsupported(f"not caps of a video frame: {caps.to_string()}")
        self.format = GstVideo.VideoFormat.to_string(info.finfo.format)
        if self.format not in _LAYOUTS:
            raise Unsupported(f"format {self.format} is not one cudavision knows ({', '.join(_LAYOUTS)})")
        features = caps.get_features(0)
        # kept, so that their address (the key of _formats) stays theirs, with a reference of
        # libgstreamer's: caps that others hold are not writable (GStreamer refuses set_value on
        # them, loudly), so what was worked out of them cannot go stale
        self.caps, self._caps_ref = caps, _gst.gst_mini_object_ref(hash(caps))
        self.format_id, self.width, self.height = int(info.finfo.format), info.width, info.height
        self.cuda = features is not None and features.contains(_CUDA_MEMORY)
        self.layout = _LAYOUTS[self.format]
        self.plain = _Geometry(self, tuple(info.offset), tuple(info.stride))  # no video meta
        self.by_meta = {}  # a video meta's fields (bytes) -> _Geometry
        if _video_meta_api is None:
            _video_meta_api = _cuda.video.gst_video_meta_api_get_type()

    def __del__(self):
        ref = getattr(self, "_caps_ref", None)
        if ref and not sys.is_finalizing():
            _gst.gst_mini_object_unref(ref)

    def no_fit(self, i, offset, stride):
        return Unsupported(f"plane {i} (offset {offset}, stride {stride}) does not fit the "
                           f"{self.format} {self.width}x{self.height} frame in the buffer's memory")

    def geometry(self, fields):
        """The planes of a buffer whose video meta's @fields (bytes, or None: no video meta) say
        where they lie, else as the caps say."""
        if fields is None:
            return self.plain
        geometry = self.by_meta.get(fields)
        if geometry is None:
            meta = _META_FIELDS.unpack(fields)
            (format_id, _, width, height, n_planes), offsets, strides = meta[:5], meta[5:9], meta[9:]
            if format_id != self.format_id:
                raise Unsupported(f"the buffer's video meta says {GstVideo.VideoFormat.to_string(format_id)}, "
                                  f"the caps {self.format}")
            if width < self.width or height < self.height or n_planes != len(self.layout):
                raise Unsupported(f"the buffer's video meta ({width}x{height}, {n_planes} planes) "
                                  f"does not hold the caps' {self.width}x{self.height} frame")
            geometry = _Geometry(self, offsets, strides)
            if len(self.by_meta) >= 16:
                self.by_meta.clear()
            self.by_meta[fields] = geometry
        return geometry


_formats = {}  # caps' address -> their _Format


def _parse(caps):
    """@caps' _Format, remembered by the caps' address (theirs while the _Format holds them)."""
    key = hash(caps)  # the GstCaps' address
    fmt = _formats.get(key)
    if fmt is None:
        fmt = _Format(caps)
        if len(_formats) >= 16:
            _formats.clear()
        _formats[key] = fmt
    return fmt


class Frame:
    """One mapped video frame: `planes` (one a plane, rows first: numpy views of system memory,
    CudaPlane of CUDA memory), `array` (the first plane: H x W x C for packed formats), `format`,
    `width`, `height`, `device` (None in system memory, else the CUDA device's ordinal), and the
    buffer's `pts` and `duration` in nanoseconds (None where the buffer has none).
    `numpy.asarray (frame)` is the first plane of a frame in system memory."""

    def __init__(self, buffer, caps, writable=False):
        if not isinstance(buffer, _Buffer):
            raise TypeError(f"a frame is of a Gst.Buffer or a Gst.Sample, not {type(buffer).__name__}")
        if caps is None:
            raise TypeError("a frame needs the buffer's caps: frame (buffer, caps), or frame (sample)")
        if not isinstance(caps, _Caps):
            raise TypeError(f"caps are a Gst.Caps, not {type(caps).__name__}" +
                            (" (Gst.Caps.from_string (text) makes them)" if isinstance(caps, str) else ""))
        fmt = _parse(caps)
        address = hash(buffer)
        self._open(address, buffer, fmt, writable, *_read_buffer(address))

    def _open(self, buffer, owner, fmt, writable, memory, pts, duration, fields):
        """Maps the buffer at @buffer (its address; @owner: its wrapper, or None) as @fmt says, with
        its one @memory, @pts, @duration and video meta's @fields (_read_buffer)."""
        self.format, self.width, self.height = fmt.format, fmt.width, fmt.height
        self.pts, self.duration = pts, duration
        geometry = fmt.geometry(fields)
        mapping = _mapping(buffer, owner, writable, fmt.cuda, memory)
        if geometry.end > mapping.size:
            i = next(i for i, end in enumerate(geometry.extents) if end > mapping.size)
            mapping = None  # not kept by the exception's traceback
            raise fmt.no_fit(i, geometry.planes[i][0], geometry.planes[i][2][0])
        self._mapping, self._geometry, self._writable, self._planes = mapping, geometry, writable, None
        # the buffer, held by the frame and what is made of it: its wrapper, or a reference of ours
        self._hold = owner if owner is not None else _BufferRef(buffer)
        self.device = mapping.device

    @property
    def planes(self):
        planes = self._planes
        if planes is None:  # made at the first call: a frame whose planes nobody reads makes none
            mapping = self._mapping
            if mapping is None:
                raise ValueError("the frame is closed: take its planes before close () (or inside `with`)")
            writable = self._writable
            if self.device is None:
                whole = np.asarray(_PlaneView(mapping, self._hold, 0, (mapping.size,), None, _U8, writable))
                planes = [np.ndarray(shape, dtype, whole, offset, strides)
                          for offset, shape, strides, dtype in self._geometry.planes]
            else:
                geometry, hold = self._geometry, self._hold
                planes = [CudaPlane(mapping, hold, geometry, i, writable) for i in range(len(geometry.planes))]
            self._planes = planes
        return planes

    @property
    def array(self):
        return self.planes[0]

    def close(self):
        """Drops this frame's hold on the mapping and the buffer; views and tensors still alive keep
        them."""
        self._planes, self._mapping, self._hold = None, None, None

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


def _read_sample(sample):
    """(buffer, caps, memory, pts, duration, video meta's fields) of the sample at @sample, the
    first three by address; None where it lacks a buffer or caps."""
    global _video_meta_api
    if _video_meta_api is None:
        _video_meta_api = _cuda.video.gst_video_meta_api_get_type()
    if _c_part is not None:
        return _c_part.read_sample(sample, _video_meta_api)
    address, caps_address = _gst.gst_sample_get_buffer(sample), _gst.gst_sample_get_caps(sample)
    if not (address and caps_address):
        return None
    return (address, caps_address) + _read_buffer(address)


def frame(buffer, caps=None, writable=False):
    """A Frame of @buffer with @caps, or of a Gst.Sample (its buffer and caps: no other caps)."""
    if type(buffer) is _Sample and caps is None and not writable:
        # an appsink's sample, to read: its buffer and caps by their addresses, no wrappers made
        read = _read_sample(hash(buffer))
        if read is not None:
            fmt = _formats.get(read[1]) or _parse(buffer.get_caps())
            f = Frame.__new__(Frame)
            f._open(read[0], None, fmt, False, *read[2:])
            return f
    if isinstance(buffer, _Sample):
        own = buffer.get_caps()
        if caps is not None and not (isinstance(caps, _Caps) and own is not None and caps.is_equal(own)):
            raise TypeError("a Gst.Sample brings its own caps: frame (sample), or frame (sample.get_buffer (), caps)")
        buffer, caps = buffer.get_buffer(), own
        if buffer is None:
            raise TypeError("the Gst.Sample holds no buffer")
    return Frame(buffer, caps, writable)


from ._reader import Frames, PipelineError, frames  # noqa: E402
