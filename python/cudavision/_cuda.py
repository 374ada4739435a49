"""A buffer read through libgstreamer, and its CUDA memory mapped for the device (docs/python.md,
"Frames in CUDA memory").

PyGObject's Gst.Buffer.map keeps only READ and WRITE of the flags it is given, so GStreamer's
GST_MAP_CUDA (which gives the device pointer instead of a copy in system memory) is asked of
libgstreamer directly, on the buffer's GstMemory (a boxed object's hash is its pointer, as
GStreamer's own Python users read it). libcuda tells the allocation's device and context and
orders a consumer's stream after the frame's writer; libgstcuda 1.24+ tells that writer's stream
(on 1.22 a frame is finished before it reaches the application). Those steps a frame are the C++
part's (_native.cpp, CudaMapping), which calls the driver's functions that this file loads.

Every frame reads its buffer here, through libgstreamer and the structures of its public headers,
rather than through PyGObject, whose every call or field costs microseconds (a frame made some
twenty of them).
"""

import atexit
import ctypes

from gi.repository import Gst

GST_MAP_CUDA = int(Gst.MapFlags.FLAG_LAST) << 1  # gst/cuda/gstcudamemory.h
MAP_READ, MAP_WRITE = int(Gst.MapFlags.READ), int(Gst.MapFlags.WRITE)
_CUDA_MEMORY_TYPE = "gst.cuda.memory"
_NEED_SYNC = int(Gst.MemoryFlags.LAST) << 2  # GST_CUDA_MEMORY_TRANSFER_NEED_SYNC (1.24+)
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
    """The CUDA driver and libgstcuda, loaded at the first CUDA frame, with the signatures used here;
    `functions`: the addresses the C++ part calls (its bind ())."""

    def __init__(self):
        try:
            self.cuda = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise MapError(f"the CUDA driver (libcuda.so.1) cannot be loaded: {e}") from None
        self.functions = {}
        for name, args in (("cuPointerGetAttributes", [ctypes.c_uint, _c, _c, ctypes.c_uint64]),
                           ("cuDevicePrimaryCtxRetain", [_c, ctypes.c_int]),
                           ("cuCtxPushCurrent_v2", [_c]), ("cuCtxPopCurrent_v2", [_c]),
                           ("cuCtxGetCurrent", [_c]), ("cuEventCreate", [_c, ctypes.c_uint]),
                           ("cuEventRecord", [_c, _c]), ("cuEventSynchronize", [_c]),
                           ("cuEventDestroy_v2", [_c]), ("cuStreamWaitEvent", [_c, _c, ctypes.c_uint]),
                           ("cuStreamQuery", [_c])):
            f = getattr(self.cuda, name)
            f.argtypes, f.restype = args, ctypes.c_int
            self.functions[name] = ctypes.cast(f, _c).value
        try:
            gstcuda = ctypes.CDLL("libgstcuda-1.0.so.0")
            for name in ("gst_cuda_memory_get_stream", "gst_cuda_stream_get_handle"):  # 1.24+
                self.functions[name] = ctypes.cast(getattr(gstcuda, name), _c).value
        except (OSError, AttributeError):
            pass


_libraries = None  # the libraries loaded
_bound = None  # the libraries whose functions the C++ part calls


def _native():
    """The C++ part, bound to the libraries loaded (or to the tests' stand-in, set as _libraries)."""
    global _libraries, _bound, _CudaMapping
    try:
        from . import _native as native
        _CudaMapping = native.CudaMapping
    except ImportError as e:
        raise MapError("frames in CUDA memory need the module's C++ part (cudavision/_native), which meson "
                       "builds: install the module (meson install), or put the build's python/ on PYTHONPATH "
                       f"beside the source's (docs/python.md): {e}") from None
    if not _at_exit:
        _at_exit.append(atexit.register(native.at_exit))
    if _libraries is None:
        try:
            _libraries = _Libraries()
        except MapError as e:  # said by the mapping once the buffer holds CUDA memory; tried again then
            native.bind(None, MapError, str(e))
            _bound = None
            return native
    if _bound is not _libraries:
        native.bind(_libraries.functions, MapError, None)
        _bound = _libraries
    return native


_at_exit = []
_CudaMapping = None


def _libs():
    _native()
    return _libraries


def cuda_mapping(buffer, writable):
    """The one CUDA memory of the buffer at @buffer (its address) mapped for the device
    (GST_MAP_CUDA), read or also written; mapped (and the memory referenced) until nothing refers
    to the mapping any more. See _native.cpp."""
    if _bound is None or _bound is not _libraries:
        _native()
    return _CudaMapping(buffer, writable, GST_MAP_CUDA != 0, _CUDA_MEMORY_TYPE)
