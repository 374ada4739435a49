"""A buffer's CUDA memory mapped for the device, through ctypes (docs/python.md, "Frames in CUDA
memory").

PyGObject's Gst.Buffer.map keeps only READ and WRITE of the flags it is given, so GStreamer's
GST_MAP_CUDA (which gives the device pointer instead of a copy in system memory) is asked of
libgstreamer directly, on the buffer's GstMemory (a boxed object's hash is its pointer, as
GStreamer's own Python users read it). libcuda tells the allocation's device and context and
orders a consumer's stream after the frame's writer; libgstcuda 1.24+ tells that writer's stream
(on 1.22 a frame is finished before it reaches the application).

Every frame reads its buffer here, through libgstreamer and the structures of its public headers,
rather than through PyGObject, whose every call or field costs microseconds (a frame made some
twenty of them).
"""

import ctypes
import sys
import threading

from gi.repository import Gst

GST_MAP_CUDA = int(Gst.MapFlags.FLAG_LAST) << 1  # gst/cuda/gstcudamemory.h
MAP_READ, MAP_WRITE = int(Gst.MapFlags.READ), int(Gst.MapFlags.WRITE)
_CUDA_MEMORY_TYPE = b"gst.cuda.memory"
_NEED_SYNC = int(Gst.MemoryFlags.LAST) << 2  # GST_CUDA_MEMORY_TRANSFER_NEED_SYNC (1.24+)
_CU_POINTER_ATTRIBUTE_CONTEXT = 1
_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9
_CU_EVENT_DISABLE_TIMING = 2
_CUDA_ERROR_NOT_READY = 600  # cuStreamQuery: work still pending on the stream
CU_STREAM_LEGACY, CU_STREAM_PER_THREAD = 1, 2  # the default streams' handles, as DLPack names them

_c = ctypes.c_void_p


class MapError(ValueError):
    """CUDA memory this module cannot map (its message says why and what to do)."""


class MapInfo(ctypes.Structure):  # gst/gstmemory.h
    _fields_ = [("memory", _c), ("flags", ctypes.c_int), ("data", _c), ("size", ctypes.c_size_t),
                ("maxsize", ctypes.c_size_t), ("user_data", _c * 4), ("_gst_reserved", _c * 4)]


class MiniObject(ctypes.Structure):  # gst/gstminiobject.h
    _fields_ = [("type", ctypes.c_size_t), ("refcount", ctypes.c_int), ("lockstate", ctypes.c_int),
                ("flags", ctypes.c_uint), ("copy", _c), ("dispose", _c), ("free", _c),
                ("priv_uint", ctypes.c_uint), ("priv_pointer", _c)]


class Buffer(ctypes.Structure):  # gst/gstbuffer.h
    _fields_ = [("mini_object", MiniObject), ("pool", _c), ("pts", ctypes.c_uint64), ("dts", ctypes.c_uint64),
                ("duration", ctypes.c_uint64), ("offset", ctypes.c_uint64), ("offset_end", ctypes.c_uint64)]


class _Memory(ctypes.Structure):  # gst/gstmemory.h, its first fields
    _fields_ = [("mini_object", MiniObject), ("allocator", _c)]


class _Object(ctypes.Structure):  # gst/gstobject.h, on GObject's GInitiallyUnowned
    _fields_ = [("g_type_instance", _c), ("ref_count", ctypes.c_uint), ("qdata", _c), ("lock", _c),
                ("name", _c), ("parent", _c), ("flags", ctypes.c_uint32), ("control_bindings", _c),
                ("control_rate", ctypes.c_uint64), ("last_sync", ctypes.c_uint64), ("_gst_reserved", _c)]


class _Allocator(ctypes.Structure):  # gst/gstallocator.h, its first fields
    _fields_ = [("object", _Object), ("mem_type", ctypes.c_char_p)]


class VideoMeta(ctypes.Structure):  # gst/video/gstvideometa.h, its fields up to the strides
    _fields_ = [("meta_flags", ctypes.c_int), ("meta_info", _c), ("buffer", _c), ("flags", ctypes.c_int),
                ("format", ctypes.c_int), ("id", ctypes.c_int), ("width", ctypes.c_uint), ("height", ctypes.c_uint),
                ("n_planes", ctypes.c_uint), ("offset", ctypes.c_size_t * 4), ("stride", ctypes.c_int * 4)]


# libgstreamer, which PyGObject has loaded already: what the module calls in it directly
gst = ctypes.CDLL("libgstreamer-1.0.so.0")
for _name, _args, _res in (("gst_memory_map", [_c, ctypes.POINTER(MapInfo), ctypes.c_int], ctypes.c_int),
                           ("gst_memory_unmap", [_c, ctypes.POINTER(MapInfo)], None),
                           ("gst_buffer_map", [_c, ctypes.POINTER(MapInfo), ctypes.c_int], ctypes.c_int),
                           ("gst_buffer_unmap", [_c, ctypes.POINTER(MapInfo)], None),
                           ("gst_buffer_n_memory", [_c], ctypes.c_uint),
                           ("gst_buffer_peek_memory", [_c, ctypes.c_uint], _c),
                           ("gst_buffer_get_meta", [_c, ctypes.c_size_t], _c),
                           ("gst_sample_get_buffer", [_c], _c), ("gst_sample_get_caps", [_c], _c),
                           ("gst_mini_object_ref", [_c], _c), ("gst_mini_object_unref", [_c], None),
                           ("gst_mini_object_is_writable", [_c], ctypes.c_int),
                           ("gst_buffer_is_all_memory_writable", [_c], ctypes.c_int),
                           ("gst_buffer_iterate_meta", [_c, ctypes.POINTER(_c)], _c),
                           ("gst_meta_info_is_custom", [_c], ctypes.c_int),
                           ("gst_custom_meta_get_structure", [_c], _c),
                           ("gst_structure_n_fields", [_c], ctypes.c_int),
                           ("gst_structure_nth_field_name", [_c, ctypes.c_uint], ctypes.c_char_p),
                           ("gst_structure_get_value", [_c, ctypes.c_char_p], _c),
                           ("gst_structure_set_value", [_c, ctypes.c_char_p, _c], None)):
    getattr(gst, _name).argtypes, getattr(gst, _name).restype = _args, _res


# libgstvideo: its meta's API type, asked once GStreamer is initialised (it registers the type)
video = ctypes.CDLL("libgstvideo-1.0.so.0")
video.gst_video_meta_api_get_type.argtypes, video.gst_video_meta_api_get_type.restype = [], ctypes.c_size_t

gobject = ctypes.CDLL("libgobject-2.0.so.0")
gobject.g_type_name.argtypes, gobject.g_type_name.restype = [ctypes.c_size_t], ctypes.c_char_p


class _GstMeta(ctypes.Structure):  # gst/gstmeta.h
    _fields_ = [("flags", ctypes.c_int), ("info", _c)]


class _GstMetaInfo(ctypes.Structure):  # its first fields
    _fields_ = [("api", ctypes.c_size_t), ("type", ctypes.c_size_t)]


def custom_metas(buffer, names):
    """[(name, GstStructure address)] of the custom metas on @buffer whose name is in @names, in
    the buffer's order (PyGObject's get_custom_meta () gives only the first of a name)."""
    out, state = [], _c()
    while True:
        meta = gst.gst_buffer_iterate_meta(hash(buffer), ctypes.byref(state))
        if not meta:
            return out
        info = _GstMeta.from_address(meta).info
        if not gst.gst_meta_info_is_custom(info):
            continue
        name = gobject.g_type_name(_GstMetaInfo.from_address(info).type)
        name = name.decode() if name else ""
        if name in names:
            out.append((name, gst.gst_custom_meta_get_structure(meta)))


class _Libraries:
    """The CUDA driver and libgstcuda, loaded at the first CUDA frame, with the signatures used here."""

    def __init__(self):
        try:
            self.cuda = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise MapError(f"the CUDA driver (libcuda.so.1) cannot be loaded: {e}") from None
        for name, args in (("cuPointerGetAttributes", [ctypes.c_uint, _c, _c, ctypes.c_uint64]),
                           ("cuDevicePrimaryCtxRetain", [_c, ctypes.c_int]),
                           ("cuDevicePrimaryCtxRelease_v2", [ctypes.c_int]),
                           ("cuCtxPushCurrent_v2", [_c]), ("cuCtxPopCurrent_v2", [_c]),
                           ("cuCtxGetCurrent", [_c]), ("cuEventCreate", [_c, ctypes.c_uint]),
                           ("cuEventRecord", [_c, _c]), ("cuEventSynchronize", [_c]),
                           ("cuEventDestroy_v2", [_c]), ("cuStreamWaitEvent", [_c, _c, ctypes.c_uint]),
                           ("cuStreamQuery", [_c])):
            f = getattr(self.cuda, name)
            f.argtypes, f.restype = args, ctypes.c_int
        try:
            gstcuda = ctypes.CDLL("libgstcuda-1.0.so.0")
            self.memory_get_stream = gstcuda.gst_cuda_memory_get_stream  # 1.24+
            self.stream_get_handle = gstcuda.gst_cuda_stream_get_handle
            self.memory_get_stream.argtypes, self.memory_get_stream.restype = [_c], _c
            self.stream_get_handle.argtypes, self.stream_get_handle.restype = [_c], _c
        except (OSError, AttributeError):
            self.memory_get_stream = None


_libraries = None


def _libs():
    global _libraries
    if _libraries is None:
        _libraries = _Libraries()
    return _libraries


_primary = {}  # device ordinal: its primary context, retained once for the process (as the CUDA runtime holds it)


def _primary_context(device):
    if device not in _primary:
        primary = _c()
        _check(_libs().cuda.cuDevicePrimaryCtxRetain(ctypes.byref(primary), device), "taking the device's primary context")
        _primary[device] = primary.value
    return _primary[device]


# the two attributes asked of every frame's pointer, in one call
_POINTER_ATTRIBUTES = (ctypes.c_int * 2)(_CU_POINTER_ATTRIBUTE_CONTEXT, _CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)


def _check(result, what):
    if result != 0:
        raise MapError(f"{what} failed (CUresult {result})")


def _memory_type(memory):
    allocator = _Memory.from_address(memory).allocator
    mem_type = _Allocator.from_address(allocator).mem_type if allocator else None
    return mem_type.decode(errors="replace") if mem_type else "unknown"


class CudaMapping:
    """The one CUDA memory of the buffer at @buffer (its address) mapped for the device
    (GST_MAP_CUDA), read or also written; the memory is referenced and mapped until nothing refers
    to this object any more. @owner is the buffer's PyGObject wrapper, which keeps it alive; where
    there is none (None), the mapping holds a reference of its own."""

    def __init__(self, buffer, owner, writable):
        n_memory = gst.gst_buffer_n_memory(buffer)
        if n_memory != 1:
            raise MapError(f"the buffer holds {n_memory} memories: a CUDA frame is viewed in one")
        memory = gst.gst_buffer_peek_memory(buffer, 0)  # the buffer's, alive while it is
        allocator = _Memory.from_address(memory).allocator
        if not allocator or _Allocator.from_address(allocator).mem_type != _CUDA_MEMORY_TYPE:
            raise MapError(f"the caps say CUDA memory but the buffer's memory is {_memory_type(memory)}")
        libs = _libs()
        self.buffer, self.owner, self.memory, self.writable = buffer, owner, memory, writable
        self.info = MapInfo()
        flags = MAP_READ | GST_MAP_CUDA | (MAP_WRITE if writable else 0)
        if not gst.gst_memory_map(memory, ctypes.byref(self.info), flags):
            self.info = None
            raise MapError("the CUDA memory could not be mapped")
        # a reference of the mapping's own, dropped with the map (at the interpreter's exit both
        # are left, so that no wrapper freed then drops the last one of mapped memory); and the
        # buffer's where no wrapper holds it, so that its address (the mapping's key) stays its own
        gst.gst_mini_object_ref(memory)
        self._buffer_ref = None
        if owner is None:
            self._buffer_ref = gst.gst_mini_object_ref(buffer)
        self.address, self.size = self.info.data or 0, self.info.size
        context, ordinal = _c(), ctypes.c_int()
        data = (_c * 2)(ctypes.addressof(context), ctypes.addressof(ordinal))
        _check(libs.cuda.cuPointerGetAttributes(2, _POINTER_ATTRIBUTES, data, self.address),
               "asking the CUDA driver for the frame's context and device")
        self.context, self.device = context.value, ordinal.value
        # the writer's end, recorded once a mapping, and the consumers' streams already after it
        self._event, self._ordered = None, set()
        # 1.24+: the stream the frame was written on, while its work may still be pending there
        self.writer = None
        if libs.memory_get_stream is not None and MiniObject.from_address(memory).flags & _NEED_SYNC:
            stream = libs.memory_get_stream(memory)
            self.writer = libs.stream_get_handle(stream) if stream else None
            self.writer = self.writer or CU_STREAM_LEGACY

    def __del__(self):
        info = getattr(self, "info", None)
        if info is not None and not sys.is_finalizing():  # at exit: left to the process's end
            self.info = None
            if getattr(self, "_event", None) is not None:
                _libs().cuda.cuEventDestroy_v2(self._event)
            gst.gst_memory_unmap(self.memory, ctypes.byref(info))
            gst.gst_mini_object_unref(self.memory)
            if getattr(self, "_buffer_ref", None):
                gst.gst_mini_object_unref(self._buffer_ref)

    def _writer_event(self):
        """An event recorded on the writer's stream, in the frame's context: once a mapping, the
        writer's work being queued before the frame reached the application. None where that
        stream is idle by now: the writer is done, and nothing is left to wait for (most frames
        of a pipeline that keeps up, which so cost one query instead of an event and a wait)."""
        if self._event is not None or self.writer is None:
            return self._event
        cuda = _libs().cuda
        # a stream of its own names its context, so it is asked as it is; a default stream only
        # in the frame's context (and a driver that refuses the first way is asked the second)
        named = self.writer not in (CU_STREAM_LEGACY, CU_STREAM_PER_THREAD)
        state = cuda.cuStreamQuery(self.writer) if named else None
        if state == 0:
            self.writer = None
            return None
        _check(cuda.cuCtxPushCurrent_v2(self.context), "making the frame's CUDA context current")
        event = _c()
        try:
            if state != _CUDA_ERROR_NOT_READY and cuda.cuStreamQuery(self.writer) == 0:
                self.writer = None
                return None
            _check(cuda.cuEventCreate(ctypes.byref(event), _CU_EVENT_DISABLE_TIMING), "creating a CUDA event")
            result = cuda.cuEventRecord(event, self.writer)
            if result != 0:
                cuda.cuEventDestroy_v2(event)
                _check(result, "recording the frame's end on its stream")
        finally:
            cuda.cuCtxPopCurrent_v2(ctypes.byref(_c()))
        self._event = event.value
        return self._event

    def order_after_writer(self, stream):
        """Work queued on @stream (a CUstream handle, or CU_STREAM_LEGACY/CU_STREAM_PER_THREAD of
        the calling thread's context) after this runs reads the whole frame: the stream waits on
        the GPU for the frame's writer. Without a writer still pending, nothing."""
        if self.writer is None or stream == self.writer:
            return
        event = self._writer_event()
        if event is None:
            return
        cuda = _libs().cuda
        key, current = stream, None
        if stream in (CU_STREAM_LEGACY, CU_STREAM_PER_THREAD):
            # a default stream names no stream of its own: it is the calling thread's, in the
            # context current there, or with none current the device's primary context's, which
            # the CUDA runtime (PyTorch, CuPy) uses
            current = _c()
            cuda.cuCtxGetCurrent(ctypes.byref(current))
            key = (stream, threading.get_ident(), current.value or _primary_context(self.device))
        if key in self._ordered:
            return
        pushed = current is not None and not current.value
        if pushed:
            _check(cuda.cuCtxPushCurrent_v2(_primary_context(self.device)), "making the primary context current")
        try:
            _check(cuda.cuStreamWaitEvent(stream, event, 0), "ordering the consumer's stream after the frame")
        finally:
            if pushed:
                cuda.cuCtxPopCurrent_v2(ctypes.byref(_c()))
        self._ordered.add(key)

    def finish_on_host(self):
        """The frame's writer is done: the host waits for it (the CUDA array interface, whose
        stream a consumer reads in its own context, gets no stream of another context)."""
        event = self._writer_event()
        if event is not None:
            _check(_libs().cuda.cuEventSynchronize(event), "waiting for the frame's writer")
        self.writer = None
