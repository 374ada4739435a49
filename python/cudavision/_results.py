"""Every meta of ours on a buffer as Python values (docs/python.md, "Results and errors").

The fields are read from each meta's GstStructure as it is, every one of them: the elements that
write them and docs/results.md's tables are their only lists (meson test `results-fields` holds
those two together). What a structure cannot say is kept here: which element type puts each meta
on, and how a bytes field's bytes are typed.

A structure is read through libgstreamer (ctypes) at the address its meta holds, not through
PyGObject, which copies the structure at get_structure () and costs microseconds a call and a
field; a GValue of a type not read here goes through PyGObject's own conversion.
"""

import ctypes

import numpy as np
from gi.repository import Gst

from . import _cuda

# cudamotionest's vector record (gst/gstcudamotionmeta.h, docs/results.md): the block's content
# was at (dx, dy) from it in the previous frame
MOTION_VECTOR = np.dtype([("dx", "i1"), ("dy", "i1"), ("width", "u1"), ("height", "u1"), ("cost", "<u4")])

# each analyser's meta (gst/gstcudaXmeta.h) and the element type that puts it on
METAS = {"CudaHistogramMeta": "cudahistogram", "CudaHeatmapMeta": "cudaheatmap", "CudaNoisemapMeta": "cudanoisemap",
         "CudaMotionMeta": "cudamotionest"}


def _counts(data, fields):
    return np.frombuffer(data, dtype=np.uint64)


def _vectors(data, fields):
    rows, columns = fields.get("rows", 0), fields.get("columns", 0)
    return np.frombuffer(data, dtype=MOTION_VECTOR, count=rows * columns).reshape(rows, columns)


# The bytes fields whose layout a structure cannot say (docs/results.md): meta -> ((field, array
# of its bytes and the meta's other fields), ...). Another bytes field stays Python bytes.
_TYPED = {"CudaHistogramMeta": (("histogram", _counts),), "CudaMotionMeta": (("vectors", _vectors),)}

# A GValue (gobject/gvalue.h): its GType, then the value, from sizeof (GType) on. GLib's
# fundamental types are fixed numbers (G_TYPE_MAKE_FUNDAMENTAL (n), n << 2), GBytes' is not.
_VALUE_AT = ctypes.sizeof(ctypes.c_size_t)
_BOOLEAN, _STRING = 5 << 2, 16 << 2
_NUMBERS = {6 << 2: ctypes.c_int, 7 << 2: ctypes.c_uint, 8 << 2: ctypes.c_long, 9 << 2: ctypes.c_ulong,
            10 << 2: ctypes.c_int64, 11 << 2: ctypes.c_uint64, 14 << 2: ctypes.c_float, 15 << 2: ctypes.c_double}
_glib = ctypes.CDLL("libglib-2.0.so.0")
_glib.g_bytes_get_data.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
_glib.g_bytes_get_data.restype = ctypes.c_void_p
_gobject = ctypes.CDLL("libgobject-2.0.so.0")
_gobject.g_bytes_get_type.restype = ctypes.c_size_t
_BYTES = _gobject.g_bytes_get_type()
_gst = _cuda.gst
_GType, _Pointer, _String = ctypes.c_size_t, ctypes.c_void_p, ctypes.c_char_p
_Buffer, _Sample = Gst.Buffer, Gst.Sample


class _Meta(ctypes.Structure):  # gst/gstmeta.h
    _fields_ = [("flags", ctypes.c_int), ("info", _Pointer)]


class _MetaInfo(ctypes.Structure):  # gst/gstmeta.h, its first fields
    _fields_ = [("api", _GType), ("type", _GType)]


_INFO_AT = _Meta.info.offset
# a GstMetaInfo's address -> the name of the meta of ours it describes, or None (another meta's): a
# meta's info is registered once and kept for the process, so each is looked at once (its type's
# name, a custom meta's or not) rather than at every meta of every frame
_ours = {}


def _ours_of(info):
    name = None
    if _gst.gst_meta_info_is_custom(info):
        name = _cuda.gobject.g_type_name(_MetaInfo.from_address(info).type)
        name = name.decode() if name else None
    name = name if name in METAS else None
    _ours[info] = name
    return name


def _metas(buffer):
    """[(name, GstStructure address)] of our metas on the buffer at @buffer (its address), in the
    buffer's order: one call a meta, and none more for a meta not ours (a GstVideoMeta's)."""
    out, state = [], _Pointer()
    at = ctypes.byref(state)
    while True:
        meta = _gst.gst_buffer_iterate_meta(buffer, at)
        if not meta:
            return out
        info = _Pointer.from_address(meta + _INFO_AT).value
        name = _ours[info] if info in _ours else _ours_of(info)
        if name is not None:
            out.append((name, _gst.gst_custom_meta_get_structure(meta)))


def _by_pygobject(meta, field, value):
    """PyGObject's conversion of the GValue at @value, a field of a type not read here: set on the
    one meta of a buffer of our own (PyGObject reads only the first meta of a name)."""
    own = Gst.Buffer.new()
    own.add_custom_meta(meta)
    _gst.gst_structure_set_value(_cuda.custom_metas(own, (meta,))[0][1], field, value)
    return own.get_custom_meta(meta).get_structure().get_value(field.decode())


def _fields(meta, s):
    """Every field of the GstStructure at @s (the meta @meta's), by name, as Python values: numbers,
    booleans and strings as PyGObject gives them, a GBytes as bytes (a copy)."""
    out = {}
    for i in range(_gst.gst_structure_n_fields(s)):
        field = _gst.gst_structure_nth_field_name(s, i)
        value = _gst.gst_structure_get_value(s, field)
        gtype, at = _GType.from_address(value).value, value + _VALUE_AT
        number = _NUMBERS.get(gtype)
        if number is not None:
            v = number.from_address(at).value
        elif gtype == _BOOLEAN:
            v = ctypes.c_int.from_address(at).value != 0
        elif gtype == _STRING:
            v = _String.from_address(at).value
            v = v.decode() if v is not None else None
        elif gtype == _BYTES:
            v = _Pointer.from_address(at).value
            if v is not None:
                size = ctypes.c_size_t()
                v = ctypes.string_at(_glib.g_bytes_get_data(v, ctypes.byref(size)), size.value)
        else:
            v = _by_pygobject(meta, field, value)
        out[field.decode()] = v
    return out


def results(buffer):
    """Every meta of ours on @buffer (a Gst.Buffer or Gst.Sample), keyed by the name of the
    element that put it there (`cudahistogram name=gate` gives "gate"; an unnamed element
    GStreamer's "cudahistogram0"), each with every field of its structure (docs/results.md lists
    them; "element" is that name) and its element type under "type": numbers as Python numbers,
    the histogram's counts as a uint64 array and the motion vectors as a rows x columns array of
    MOTION_VECTOR (read-only, over a copy of the meta's bytes). Two analysers of one type on a
    frame each have their own. Two metas of one element name (analysers of one name in different
    bins) are both kept: the first on the buffer under the name, a later one under "name#2",
    "name#3", ... ("type" tells them apart). Elements whose meta is not there are left out."""
    if isinstance(buffer, _Sample):
        # its buffer by address, no wrapper made; the sample holds it while this reads
        address = _gst.gst_sample_get_buffer(hash(buffer))
        if not address:
            raise TypeError("results () takes a Gst.Buffer or a Gst.Sample, not NoneType (a sample without a buffer)")
    elif isinstance(buffer, _Buffer):
        address = hash(buffer)
    else:
        raise TypeError(f"results () takes a Gst.Buffer or a Gst.Sample, not {type(buffer).__name__}")
    out = {}
    for meta, s in _metas(address):
        r = _fields(meta, s)
        for field, typed in _TYPED.get(meta, ()):
            if isinstance(r.get(field), bytes):
                r[field] = typed(r[field], r)
        r["type"] = METAS[meta]
        key = name = r.get("element") or METAS[meta]
        n = 1
        while key in out:  # a name already given: numbered, never one meta over another
            n += 1
            key = f"{name}#{n}"
        out[key] = r
    return out
