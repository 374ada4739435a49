"""DLPack capsules over a plane of a mapped CUDA frame, in ctypes (docs/python.md, "Frames in CUDA
memory"): the structures of dlpack.h (v1.0, and the unversioned ones for older consumers), the
capsule that carries one to the consumer, and the deleter that lets the frame go once the
consumer is done with it.

A consumer renames the capsule when it takes the tensor and calls the deleter when it frees it;
a capsule never taken calls it when it is destroyed. Until then the plane (and with it the
mapping and the buffer) stays alive in _exported.
"""

import ctypes

kDLCUDA = 2
_DL_UINT = 1
_DLPACK_FLAG_READ_ONLY = 1
_NAME = b"dltensor"
_NAME_VERSIONED = b"dltensor_versioned"


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


# the managed tensors handed out and not yet deleted: address -> (structure, shape, strides, plane)
_exported = {}


def _delete(address):
    _exported.pop(address, None)


_deleter = _DELETER(_delete)

_api = ctypes.pythonapi
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_GetName.argtypes = [ctypes.c_void_p]
_api.PyCapsule_GetName.restype = ctypes.c_char_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p


def _destroy_capsule(capsule):
    """A capsule's destructor: one the consumer never took (still named as made) deletes its tensor."""
    name = _api.PyCapsule_GetName(capsule)
    if name in (_NAME, _NAME_VERSIONED):
        _delete(_api.PyCapsule_GetPointer(capsule, name))


_capsule_destructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(_destroy_capsule)


def _dtype(dtype):
    if dtype.kind != "u" or dtype.byteorder == ">":
        raise BufferError(f"no DLPack type for {dtype}")
    return DLDataType(_DL_UINT, dtype.itemsize * 8, 1)


# a plane's managed tensor as bytes, all but its address and offset, with the shape and strides
# it points at: (shape, strides, dtype, device, writable, versioned) -> (bytes, shape, strides)
_templates = {}


def _template(plane, versioned):
    key = (plane.shape, plane.strides, plane.dtype, plane.device, plane.writable, versioned)
    template = _templates.get(key)
    if template is None:
        ndim = len(plane.shape)
        shape = (ctypes.c_int64 * ndim)(*plane.shape)
        itemsize = plane.dtype.itemsize
        if any(s % itemsize for s in plane.strides):
            raise BufferError(f"a stride of {plane.strides} is not a whole number of {plane.dtype} elements")
        strides = (ctypes.c_int64 * ndim)(*(s // itemsize for s in plane.strides))
        tensor = DLTensor(None, DLDevice(kDLCUDA, plane.device), ndim, _dtype(plane.dtype), shape, strides, 0)
        if versioned:
            managed = DLManagedTensorVersioned(DLPackVersion(1, 0), None, _deleter,
                                               0 if plane.writable else _DLPACK_FLAG_READ_ONLY, tensor)
        else:
            managed = DLManagedTensor(tensor, None, _deleter)
        template = (bytes(managed), shape, strides)
        if len(_templates) >= 64:
            _templates.clear()
        _templates[key] = template
    return template


def capsule(plane, versioned):
    """A capsule holding a DLPack tensor of @plane (address, offset, shape, byte strides, dtype,
    device, writable), versioned (dlpack 1.0, read-only unless writable) or not: a copy of the
    template of its kind, with the plane's address and offset."""
    raw, shape, strides = _template(plane, versioned)
    managed = (DLManagedTensorVersioned if versioned else DLManagedTensor).from_buffer_copy(raw)
    tensor = managed.dl_tensor  # a view into managed
    tensor.data, tensor.byte_offset = plane.address, plane.offset
    address = ctypes.addressof(managed)
    _exported[address] = (managed, shape, strides, plane)
    try:
        return _api.PyCapsule_New(address, _NAME_VERSIONED if versioned else _NAME, _capsule_destructor)
    except BaseException:
        _delete(address)
        raise
