"""IREE's buffer view text (runtime/src/iree/hal/buffer_view_util.c): a view's size, its parsing
from `[shape]x<type>[=<elements>]` and its formatting, byte for byte as iree-run-module 3.13.

- `read_buffer_view` / `parse_tensor` (iree_hal_buffer_view_parse): the text trimmed and one pair of
  `"` stripped; the shape before the last `x`, at most 128 dims (an empty dim ends the list:
  "invalid shape specification"); the size checked for overflow before it is allocated
  (`view_size`, iree_hal_buffer_compute_view_size); the elements parsed by
  hal.string_util.fill_elements; no `=` or no elements zero-fill;
- `format_buffer_view` (iree_hal_buffer_view_format): shape `AxB` + `x` + element type, `=`, the
  elements nested in `[...]` per dimension, at most `max_element_count` then `...`.

Element types numpy lacks (si8..si64, bf16, the f8 types, cf32, opaque `xN`) are numpy arrays of an
integer (or void) dtype of the element's width tagged with the IREE element type in the dtype's
metadata (hal.element_types). Sub-byte types (i4...), ranks above numpy's 64 and tensors larger
than the caller's heap (`max_bytes`) are refused with a clear error.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..layouts.hal_buffer import ElementTypeError, iree_hal_element_bit_count
from ..layouts.hal_buffer import iree_hal_format_element_type as format_element_type
from .element_types import dtype_of, element_type_of
from .string_util import (InputParseError, ParseFailure, fill_elements, format_elements,
                                     read_element_type, read_shape, trim)

__all__ = ["DEFAULT_MAX_ELEMENT_COUNT", "MAX_SHAPE_RANK", "DEVICE_SIZE_MAX", "view_size",
           "zeroed_storage", "shaped", "read_buffer_view", "parse_tensor", "format_buffer_view"]

DEFAULT_MAX_ELEMENT_COUNT = 1024  # iree-run-module --output_max_element_count
MAX_SHAPE_RANK = 128  # buffer views iree-run-module parses
DEVICE_SIZE_MAX = (1 << 64) - 1  # iree_device_size_t


def view_size(shape: Sequence[int], element_type: int) -> tuple[int, int]:
    """(element count, byte length) of a dense view, with iree-run-module's overflow checks."""
    bits = iree_hal_element_bit_count(element_type)
    if bits == 0:
        raise ParseFailure("INVALID_ARGUMENT; opaque element types cannot be indexed",
                           f"{format_element_type(element_type)} elements have no size")
    count = 1
    for i, dim in enumerate(shape):
        count *= dim
        if count > DEVICE_SIZE_MAX:
            raise ParseFailure(f"OUT_OF_RANGE; shape element count overflows device size at "
                               f"dimension {i}", "the shape has more than 2**64 elements")
    nbytes = count * (bits // 8) if bits % 8 == 0 else count * bits
    if nbytes > DEVICE_SIZE_MAX:
        raise ParseFailure("OUT_OF_RANGE; packed byte count overflows device size",
                           "the tensor has more than 2**64 bytes")
    return count, (nbytes if bits % 8 == 0 else (nbytes + 7) // 8)


def zeroed_storage(shape: Sequence[int], element_type: int, count: int, nbytes: int,
                   max_bytes: int | None, dtype: np.dtype | None = None) -> np.ndarray:
    """A zeroed flat array for `count` elements (our limits, then the allocation); `dtype`
    overrides the element type's own (scratch cells of a packed type)."""
    if max_bytes is not None and nbytes > max_bytes:  # refused before numpy fills gigabytes
        raise ParseFailure(f"RESOURCE_EXHAUSTED; {nbytes} bytes requested with {max_bytes} "
                           f"available",
                           "more than the emulated heap, or half the memory the host has available, "
                           "can take")
    if len(shape) > 64:
        raise ParseFailure(f"UNIMPLEMENTED; a shape rank of {len(shape)} is beyond ireeabi's "
                           f"numpy arrays", "numpy arrays have at most 64 dimensions")
    try:
        dtype = dtype_of(element_type) if dtype is None else dtype
    except ElementTypeError as e:
        raise ParseFailure(f"UNIMPLEMENTED; {format_element_type(element_type)} elements are not "
                           f"supported by ireeabi", str(e)) from None
    try:
        return np.zeros(count, dtype=dtype)
    except (MemoryError, ValueError, OverflowError):
        raise ParseFailure("RESOURCE_EXHAUSTED; libc allocator failed the request",
                           f"{count} elements of {format_element_type(element_type)} do not fit in "
                           f"memory") from None


def shaped(flat: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """The flat array `zeroed_storage` made, in its view's shape."""
    try:
        return flat.reshape(shape)
    except ValueError:  # e.g. 0x4294967296x4294967296x4294967296: no elements, but numpy refuses
        raise ParseFailure(f"UNIMPLEMENTED; shape {'x'.join(map(str, shape))} is beyond "
                           f"ireeabi's numpy arrays", "numpy needs the product of the non-zero "
                           "dimensions to fit in 64 bits") from None


def read_buffer_view(text: str, max_bytes: int | None = None, *, long_bits: int = 64) -> np.ndarray:
    """iree_hal_buffer_view_parse: `[shape]x<type>[=<elements>]` (raises ParseFailure); `long_bits`:
    the target's C `long` width (fill_elements)."""
    value = trim(text)
    value = value[1:] if value.startswith('"') else value
    value = value[:-1] if value.endswith('"') else value
    if not value:
        raise ParseFailure("INVALID_ARGUMENT; empty string input", "no shape or element type given")
    eq = value.find("=")  # the elements are read in place: a long input is not copied
    head, data_start = (value, len(value)) if eq < 0 else (value[:eq], eq + 1)
    last_x = head.rfind("x")
    shape_text, type_text = (head[:last_x], head[last_x + 1:]) if last_x >= 0 else ("", head)
    rank = shape_text.count("x") + 1 if shape_text else 0
    if rank > MAX_SHAPE_RANK:
        raise ParseFailure(f"RESOURCE_EXHAUSTED; a shape rank of {rank} is just a little bit "
                           f"excessive, eh?",
                           f"{rank} dimensions; iree-run-module takes at most {MAX_SHAPE_RANK}")
    shape = read_shape(shape_text)
    element_type = read_element_type(type_text)
    count, nbytes = view_size(shape, element_type)
    bits = iree_hal_element_bit_count(element_type)
    if bits % 8:  # packed (i4...): parse as IREE does, so bad text fails alike, then refuse
        # Byte cells of the element's rounded-up width; i249..i255 round to 32 bytes, whose 256
        # bits no element type can name, so the cells are a plain void dtype.
        size = (bits + 7) // 8
        scratch = zeroed_storage([nbytes // size], element_type, nbytes // size, nbytes, max_bytes,
                                 np.dtype(f"V{size}"))
        fill_elements(scratch, value, element_type, data_start, long_bits=long_bits)
        raise ParseFailure(f"UNIMPLEMENTED; {format_element_type(element_type)} elements are not "
                           f"supported by ireeabi", "ireeabi holds whole-byte elements only")
    out = zeroed_storage(shape, element_type, count, nbytes, max_bytes)
    fill_elements(out, value, element_type, data_start, long_bits=long_bits)
    return shaped(out, shape)


def parse_tensor(text: str) -> np.ndarray:
    """A `[shape]x<type>=<elements>` spec as a numpy array (iree_hal_buffer_view_parse)."""
    try:
        return read_buffer_view(text)
    except ParseFailure as f:
        err = InputParseError(text, f.reason, f.detail)
        err.element = f.element
        raise err from None


def format_buffer_view(array: np.ndarray, max_element_count: int = DEFAULT_MAX_ELEMENT_COUNT,
                       element_type: int | None = None, *, canonical_nan: bool = False) -> str:
    """The `4xf32=1 2 3 4` line of a buffer view holding `array` (`canonical_nan`: format_elements)."""
    arr = np.asarray(array)
    et = element_type if element_type is not None else element_type_of(arr.dtype)
    et &= 0xFFFFFFFF
    shape = list(arr.shape)
    head = ("x".join(str(d) for d in shape) + "x" if shape else "") + format_element_type(et)
    budget = [max_element_count if max_element_count >= 0 else arr.size]  # size_t: no limit
    shown = min(budget[0], arr.size)
    texts = format_elements(np.ascontiguousarray(arr).reshape(-1)[:shown].tobytes(), et, shown,
                            canonical_nan=canonical_nan)
    pos = [0]

    def leaf(n: int) -> str:
        k = min(budget[0], n)
        budget[0] -= k
        out = " ".join(texts[pos[0]:pos[0] + k])
        pos[0] += k  # printed texts are consecutive: rows after the budget print none
        return out + ("..." if k < n else "")

    def rec(dims: list[int]) -> str:
        if len(dims) <= 1:
            return leaf(dims[0] if dims else 1)
        return "".join("[" + rec(dims[1:]) + "]" for _ in range(dims[0]))

    return head + "=" + rec(shape)
