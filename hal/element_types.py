"""IREE element types and the numpy dtypes that hold them (the HAL's element types as numpy sees
them, for the runtime's buffer views and the tools' inputs and results).

`dtype_of` gives numpy's own dtype where it has one, else an integer (or void) dtype of the
element's width tagged with the element type in its metadata, so `element_type_of` gives the type
back; sub-byte and zero-width types have no dtype here (`layouts.hal_buffer.ElementTypeError`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..layouts.hal_buffer import ElementType, ElementTypeError, NumericalType, iree_hal_element_bit_count
from ..layouts.hal_buffer import iree_hal_format_element_type as format_element_type

_TAG = "iree_element_type"  # dtype metadata key: the IREE element type numpy cannot spell

_NATIVE_DTYPES: dict[int, np.dtype] = {
    ElementType.BOOL_8: np.dtype(np.bool_),
    ElementType.INT_8: np.dtype(np.int8), ElementType.UINT_8: np.dtype(np.uint8),
    ElementType.INT_16: np.dtype(np.int16), ElementType.UINT_16: np.dtype(np.uint16),
    ElementType.INT_32: np.dtype(np.int32), ElementType.UINT_32: np.dtype(np.uint32),
    ElementType.INT_64: np.dtype(np.int64), ElementType.UINT_64: np.dtype(np.uint64),
    ElementType.FLOAT_16: np.dtype(np.float16), ElementType.FLOAT_32: np.dtype(np.float32),
    ElementType.FLOAT_64: np.dtype(np.float64),
    ElementType.COMPLEX_FLOAT_64: np.dtype(np.complex64),
    ElementType.COMPLEX_FLOAT_128: np.dtype(np.complex128),
}
# numpy dtype -> the element type iree-run-module's parser gives that spelling (signless ints).
_ELEMENT_TYPES: dict[np.dtype, int] = {dt: int(et) for et, dt in _NATIVE_DTYPES.items()}
SIGNED_INTS: dict[int, np.dtype] = {1: np.dtype(np.int8), 2: np.dtype(np.int16), 4: np.dtype(np.int32),
               8: np.dtype(np.int64)}
UNSIGNED_INTS: dict[int, np.dtype] = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32),
                 8: np.dtype(np.uint64)}
_tagged: dict[int, np.dtype] = {}


def dtype_of(element_type: int) -> np.dtype:
    """The numpy dtype holding elements of an IREE element type: numpy's own where it has one,
    else an integer (void) dtype of the element's width tagged with the element type."""
    et = element_type & 0xFFFFFFFF
    native = _NATIVE_DTYPES.get(et)
    if native is not None:
        return native
    known = _tagged.get(et)
    if known is not None:
        return known
    bits = iree_hal_element_bit_count(et)
    if bits == 0 or bits % 8:
        raise ElementTypeError(f"element type 0x{et:08X} ({format_element_type(et)}) has no numpy "
                               f"dtype here: ireeabi holds whole-byte elements only")
    size = bits // 8
    signed = et >> 24 == NumericalType.INTEGER_SIGNED
    base = (SIGNED_INTS if signed else UNSIGNED_INTS).get(size) or np.dtype(f"V{size}")
    dt = _tagged[et] = np.dtype(base, metadata={_TAG: et})
    return dt


def element_type_of(dtype: Any) -> int:
    """The IREE element type of a numpy dtype: the tagged one (see `dtype_of`), else numpy's own
    spelling (signless integers, as `i32` parses)."""
    dt = np.dtype(dtype)
    if dt.metadata and _TAG in dt.metadata:
        return int(dt.metadata[_TAG])
    try:
        return int(_ELEMENT_TYPES[dt.newbyteorder("=") if dt.byteorder not in "=|" else dt])
    except KeyError:
        raise ElementTypeError(f"numpy dtype {dt} has no IREE element type here") from None


__all__ = ["dtype_of", "element_type_of", "SIGNED_INTS", "UNSIGNED_INTS"]
