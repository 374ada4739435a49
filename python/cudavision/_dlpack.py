"""DLPack for a plane of a mapped CUDA frame (docs/python.md, "Frames in CUDA memory"): what
dlpack.h says of a device and a type, and each plane's layout, packed once a geometry for the C++
part (_native.cpp), which makes the capsule. A consumer renames the capsule when it takes the
tensor and calls its deleter when it frees it; a capsule never taken calls it when it is destroyed.
Until then the tensor holds the plane, and with it the mapping and the buffer.
"""

import struct

kDLCUDA = 2

# _native.cpp's Layout: the dimensions, the element's bits, the shape and the strides in elements
_LAYOUT = struct.Struct("=iI3q3q")


def layout(shape, strides, dtype):
    """The packed layout of a plane of @shape, @strides (bytes) and @dtype (an unsigned integer),
    made once a plane of a geometry (_Geometry.dlpack_layout keeps it)."""
    if dtype.kind != "u" or dtype.byteorder == ">":
        raise BufferError(f"no DLPack type for {dtype}")
    itemsize = dtype.itemsize
    if any(s % itemsize for s in strides):
        raise BufferError(f"a stride of {strides} is not a whole number of {dtype} elements")
    ndim = len(shape)
    return _LAYOUT.pack(ndim, itemsize * 8, *shape, *(0,) * (3 - ndim),
                        *(s // itemsize for s in strides), *(0,) * (3 - ndim))
