""".npy files as iree-run-module reads and writes them (runtime/src/iree/tooling/numpy_io.c).

- `load_npy` / `read_npy` (iree_numpy_npy_load_ndarray): versions 1 to 3, the header dict scanned
  as IREE scans it, little-endian C-order data only; `i`/`u`/`b`/`f`/`c`/`V` kinds become
  si/ui/i1/f/cf/x element types (an int32 array comes back as si32, as the tool types it);
- `npy_header` (iree_numpy_npy_save_ndarray): version 1 unless the dict is huge, padded with
  spaces and a newline to 64 bytes.

The stream helpers `read_exactly` / `read_into` / `at_end` are the tool's stream reads (short reads
are OUT_OF_RANGE "end-of-file encountered during read"); an array's contents are read straight into
it (`read_into`), so a large input costs its own size once.
"""
from __future__ import annotations

import os
import stat
import struct
from typing import BinaryIO, Iterator, Sequence

import numpy as np

from ..abi.errors import IreeAbiError
from ..layouts.hal_buffer import ElementType, NumericalType, iree_hal_element_bit_count
from ..hal.buffer_view_util import MAX_SHAPE_RANK, shaped, view_size, zeroed_storage
from ..base.string_view import atoi_uint32, atoi_uint64
from ..hal.string_util import InputParseError, ParseFailure, trim

__all__ = ["OutputError", "read_exactly", "read_into", "at_end", "load_npy", "read_npy", "npy_header"]


class OutputError(IreeAbiError):
    """A value iree-run-module would fail to write to an `--output` target or .npy file (its status
    text)."""


def read_exactly(stream: BinaryIO, n: int, *context: str) -> bytes:
    try:
        data = stream.read(n)
    except (OSError, OverflowError, MemoryError) as e:
        raise ParseFailure("; ".join(("UNKNOWN; read failed",) + context), str(e)) from None
    if len(data) != n:
        raise ParseFailure("; ".join(("OUT_OF_RANGE; end-of-file encountered during read",)
                                     + context), f"the file ends {n - len(data)} byte(s) early")
    return data


def read_into(stream: BinaryIO, out: np.ndarray, *context: str) -> None:
    """Fill the flat `out` with the stream's next bytes, in place (no copy of the contents: an
    input's file is read once, into its array); errors as `read_exactly` words them."""
    view = out.view(np.uint8).data  # a memoryview of its bytes
    n, got = len(view), 0
    try:
        while got < n:
            step = stream.readinto(view[got:])  # type: ignore[attr-defined]  # BinaryIO's stub lacks it; files have it
            if not step:
                break
            got += step
    except (OSError, OverflowError, MemoryError) as e:
        raise ParseFailure("; ".join(("UNKNOWN; read failed",) + context), str(e)) from None
    if got != n:
        raise ParseFailure("; ".join(("OUT_OF_RANGE; end-of-file encountered during read",)
                                     + context), f"the file ends {n - got} byte(s) early")


def at_end(stream: BinaryIO) -> bool:
    st = os.fstat(stream.fileno())
    if not stat.S_ISREG(st.st_mode):  # a pipe or device has no size and no position: look ahead
        return not stream.peek(1)  # type: ignore[attr-defined]
    return stream.tell() >= st.st_size


def _npy_dict(header: str) -> Iterator[tuple[str, str]]:
    """The key/value pairs of an npy header dict, scanned as IREE scans them."""
    header = trim(header)
    header = header[1:] if header.startswith("{") else header
    header = header[:-1] if header.endswith("}") else header
    malformed = ParseFailure("INVALID_ARGUMENT; malformed header dict", f"npy header `{header}`")
    while header:
        key, colon, header = header.partition(":")
        if not colon:
            raise malformed
        key = key[1:] if key.startswith("'") else key
        key = key[:-1] if key.endswith("'") else key
        header = trim(header)
        if header.startswith("True"):
            value, header = "True", header[4:]
        elif header.startswith("False"):
            value, header = "False", header[5:]
        elif header.startswith("'"):
            value, _, header = header[1:].partition("'")
        elif header.startswith("("):
            value, _, header = header[1:].partition(")")
        else:
            raise malformed
        if not header.startswith(","):
            raise malformed
        header = trim(header[1:])
        yield key, value


def _npy_element_type(descr: str) -> int:
    if descr[:1] == ">":
        raise ParseFailure(f"UNIMPLEMENTED; big-endian data type '{descr}' unsupported",
                           "save the array little-endian")
    if descr[:1] in ("|", "=", "<"):
        descr = descr[1:]
    if not descr:
        raise ParseFailure("INVALID_ARGUMENT; descr missing kind", "npy descr has no type")
    numerical = {"b": NumericalType.BOOLEAN, "i": NumericalType.INTEGER_SIGNED,
                 "u": NumericalType.INTEGER_UNSIGNED, "f": NumericalType.FLOAT_IEEE,
                 "c": NumericalType.FLOAT_COMPLEX, "V": NumericalType.UNKNOWN}.get(descr[0])
    if numerical is None:
        raise ParseFailure(f"UNIMPLEMENTED; unsupported data type {descr[0]}",
                           f"npy kind `{descr[0]}` has no IREE element type")
    width = atoi_uint32(descr[1:])
    if width is None:
        raise ParseFailure("INVALID_ARGUMENT; invalid descr byte width", f"npy descr `{descr}`")
    return ((int(numerical) << 24) | (width * 8)) & 0xFFFFFFFF


def _npy_shape(value: str) -> list[int]:
    text = value[:-1] if value.endswith(",") else value
    rank = text.count(",") + 1 if value else 0
    if rank > MAX_SHAPE_RANK:
        raise ParseFailure("INVALID_ARGUMENT; shape rank too large; be reasonable please",
                           f"{rank} dimensions")
    dims, rest = [], value
    for i in range(rank):
        part, _, rest = rest.partition(",")
        part = trim(part)
        dim = atoi_uint64(part)
        if dim is None:
            raise ParseFailure(f"INVALID_ARGUMENT; invalid dimension {i} value {part}",
                               f"npy shape `({value})`")
        dims.append(dim)
    return dims


def load_npy(stream: BinaryIO) -> np.ndarray:
    """One ndarray from an npy stream as iree_numpy_npy_load_ndarray reads it: little-endian,
    C order; `i`/`u`/`b`/`f`/`c`/`V` kinds become si/ui/i1/f/cf/x element types (an int32 array
    comes back as si32, as the tool types it). Raises InputParseError naming the stream."""
    try:
        return read_npy(stream)
    except ParseFailure as f:
        raise InputParseError(getattr(stream, "name", "<stream>"), f.reason, f.detail) from None


def read_npy(stream: BinaryIO, max_bytes: int | None = None) -> np.ndarray:
    if at_end(stream):
        raise ParseFailure("OUT_OF_RANGE; end-of-file", "no more arrays in the file")
    prefix = read_exactly(stream, 8, "unable to read entire header prefix")
    if prefix[:6] != b"\x93NUMPY":
        raise ParseFailure("INVALID_ARGUMENT; npy header magic mismatch", "not an npy file")
    major, minor = prefix[6], prefix[7]
    if major <= 0 or major > 3:
        raise ParseFailure(f"UNIMPLEMENTED; npy version {major}.{minor} not supported",
                           "npy versions 1 to 3 are read")
    if major == 1:
        length = struct.unpack("<H", read_exactly(stream, 2, f"failed to read version "
                                                              f"{major}.{minor} 2-byte header "
                                                              f"length"))[0]
    else:
        length = struct.unpack("<I", read_exactly(stream, 4, f"failed to read version "
                                                              f"{major}.{minor} 4-byte header "
                                                              f"length"))[0]
    header = read_exactly(stream, length, f"failed to read header string of {length} bytes")
    shape: list[int] = []
    element_type = int(ElementType.NONE)
    dense = False
    for key, value in _npy_dict(header.decode("latin-1")):
        if key == "descr":
            element_type = _npy_element_type(value)
        elif key == "fortran_order":
            if value != "False":
                raise ParseFailure("UNIMPLEMENTED; fortran order arrays not supported",
                                   "save the array in C order")
            dense = True
        elif key == "shape":
            shape = _npy_shape(value)
    if not dense:  # the view's size is computed per encoding, and there is none
        raise ParseFailure("UNIMPLEMENTED; unimplemented encoding type size calculation",
                           "the npy header has no fortran_order")
    count, nbytes = view_size(shape, element_type)
    out = zeroed_storage(shape, element_type, count, nbytes, max_bytes)
    read_into(stream, out, f"failed to read npy contents of {nbytes} bytes")
    return shaped(out, shape)


def npy_header(element_type: int, shape: Sequence[int]) -> bytes:
    """The npy header iree_numpy_npy_save_ndarray writes (version 1 unless the dict is huge,
    padded with spaces and a newline to 64 bytes)."""
    size = (iree_hal_element_bit_count(element_type) + 7) // 8
    kinds: dict[int, str] = {
        NumericalType.UNKNOWN: "V", NumericalType.BOOLEAN: "b", NumericalType.INTEGER: "i",
        NumericalType.INTEGER_SIGNED: "i", NumericalType.INTEGER_UNSIGNED: "u",
        NumericalType.FLOAT_IEEE: "f", NumericalType.FLOAT_COMPLEX: "c"}
    kind = kinds.get(element_type >> 24)
    if kind is None:
        raise OutputError("UNIMPLEMENTED; unsupported data encoding")
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    text = (f"{{'descr': '{'|' if size == 1 else '<'}{kind}{size}', 'fortran_order': False, "
            f"'shape': ({dims}), }}").encode()
    v2 = len(text) > 65535
    used = 8 + (4 if v2 else 2) + len(text) + 1
    pad = -used % 64
    length = struct.pack("<I" if v2 else "<H", len(text) + pad + 1)
    return b"\x93NUMPY" + bytes([2 if v2 else 1, 0]) + length + text + b" " * pad + b"\n"
