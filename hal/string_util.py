"""IREE's HAL string helpers (runtime/src/iree/hal/string_util.c), byte for byte as iree-run-module
3.13 uses them, over the number parsers of IREE's string views (ireeabi.base.string_view) and its
narrow float conversions (ireeabi.base.internal.math):

- iree_hal_parse_element_type / iree_hal_parse_shape;
- iree_hal_parse_buffer_elements (`fill_elements`: C whitespace, `,`, `[`, `]` separate elements;
  one element splats; integers with IREE's range checks, i8 takes -128..255; f16 / bf16 / f8
  through the narrow converter; any other type two hex digits per byte; a long list of plain
  decimal integers or f32 / f64 is checked and read by numpy a slice at a time, the same values
  the C library gives, without an object per element) and
  iree_hal_format_buffer_elements (`format_elements`: `%G` floats, signed or unsigned integers
  per the element type, upper-case hex bytes otherwise).

A rejected text raises `InputParseError` (the status text IREE prints, and in `detail` our words
for what is wrong); inside the parsers a `ParseFailure` carries the status until the caller ties it
to the whole input text.
"""
from __future__ import annotations

import math
import re
from typing import Any, Iterator

import numpy as np

from ..abi.errors import IreeAbiError
from ..layouts.hal_buffer import ElementType, NumericalType, iree_hal_element_bit_count, \
    iree_hal_make_element_type
from ..layouts.hal_buffer import iree_hal_format_element_type as format_element_type
from .element_types import SIGNED_INTS as _SIGNED, UNSIGNED_INTS as _UNSIGNED
from ..base import string_view
from ..base.internal.math import is_narrow_float, narrow_float_bits, widen_float_bits
from ..base.string_view import atod, atof, atoi_int32, atoi_int64, atoi_uint32, atoi_uint64, wrap_int

__all__ = ["InputParseError", "ParseFailure", "read_element_type", "parse_element_type", "read_shape",
           "parse_shape", "trim", "element_problem", "fill_elements", "format_g",
           "format_elements"]


class InputParseError(IreeAbiError):
    """An `--input` value iree-run-module would reject. `str()` is the status text the tool prints;
    `detail` (when set) says in our words which part of the text is wrong and why."""

    def __init__(self, text: str, reason: str, detail: str | None = None) -> None:
        self.text = text
        self.reason = reason
        self.detail = detail
        self.element: str | None = None  # the rejected tensor element, when one was
        super().__init__(f"{reason}; parsing input `{text}`")


class ParseFailure(Exception):
    """An IREE status text (and our explanation) from a parser, not yet tied to the input text
    (the caller raises InputParseError with it)."""

    def __init__(self, reason: str, detail: str | None = None, element: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = detail
        self.element = element


# --------------------------------------------------------------------------------------------------
# Element types and shapes


def read_element_type(text: str) -> int:
    """iree_hal_parse_element_type (raises ParseFailure)."""
    special = {"f8E5M2": ElementType.FLOAT_8_E5M2, "f8E4M3FN": ElementType.FLOAT_8_E4M3_FN,
               "f8E5M2FNUZ": ElementType.FLOAT_8_E5M2_FNUZ,
               "f8E4M3FNUZ": ElementType.FLOAT_8_E4M3_FNUZ,
               "f8E8M0FNU": ElementType.FLOAT_8_E8M0_FNU}
    if text == "i1":
        return int(ElementType.BOOL_8)
    for prefix, numerical in (("i", NumericalType.INTEGER), ("si", NumericalType.INTEGER_SIGNED),
                              ("ui", NumericalType.INTEGER_UNSIGNED)):
        if text.startswith(prefix):
            break
    else:
        if text in special:
            return int(special[text])
        for prefix, numerical in (("f", NumericalType.FLOAT_IEEE),
                                  ("bf", NumericalType.FLOAT_BRAIN),
                                  ("cf", NumericalType.FLOAT_COMPLEX),
                                  ("x", NumericalType.UNKNOWN), ("*", NumericalType.UNKNOWN)):
            if text.startswith(prefix):
                break
        else:
            raise ParseFailure(f"INVALID_ARGUMENT; unhandled element type prefix in '{text}'",
                               f"`{text}` is not an element type (i1, i8..i64, si/ui*, f16, bf16, "
                               f"f32, f64, cf64, f8E4M3FN...)")
    rest = text[len(prefix):]
    bits = atoi_uint32(rest)
    if bits is None or bits > 0xFF:
        raise ParseFailure(f"INVALID_ARGUMENT; out of range bit count in '{text}'",
                           f"the bit count `{rest}` of `{text}` is not a number from 0 to 255")
    return iree_hal_make_element_type(numerical, bits)


def parse_element_type(text: str) -> int:
    """iree_hal_parse_element_type."""
    try:
        return read_element_type(text)
    except ParseFailure as f:
        raise InputParseError(text, f.reason, f.detail) from None


def read_shape(text: str) -> list[int]:
    """iree_hal_parse_shape (raises ParseFailure): dims split on `x`; an empty dim ends the list,
    and a list shorter than the `x`s promise is refused."""
    if not text:
        return []
    rank = text.count("x") + 1
    dims: list[int] = []
    for part in text.split("x"):
        if not part:
            break
        value = atoi_int64(part)
        if value is None or value < 0:
            raise ParseFailure(f"INVALID_ARGUMENT; shape[{len(dims)}] invalid value '{part}' of "
                               f"'{text}'", f"dimension {len(dims)} `{part}` is not a count")
        dims.append(value)
    if len(dims) != rank:
        raise ParseFailure(f"INVALID_ARGUMENT; invalid shape specification: '{text}'",
                           f"dimension {len(dims)} of `{text}` is empty")
    return dims


def parse_shape(text: str) -> list[int]:
    """iree_hal_parse_shape."""
    try:
        return read_shape(text)
    except ParseFailure as f:
        raise InputParseError(text, f.reason, f.detail) from None


# --------------------------------------------------------------------------------------------------
# Buffer elements

_C_SPACE = " \t\n\v\f\r"  # C isspace in the "C" locale
_SEPARATORS = frozenset(_C_SPACE + ",[]")


def trim(text: str) -> str:
    """iree_string_view_trim: C whitespace off both ends."""
    return text.strip(_C_SPACE)


_TOKEN = re.compile(r"[^\t\n\v\f\r ,\[\]]+")  # an element: a run of non-separators
_SEPARATOR = re.compile(r"[\t\n\v\f\r ,\[\]]")


def _tokens(data: str, start: int = 0) -> Iterator[tuple[str, bool]]:
    """Element tokens of data[start:] and whether a separator ended each (one that runs to the end
    did not)."""
    n = len(data)
    for m in _TOKEN.finditer(data, start):
        yield m.group(), m.end() < n


def _int_range(element_type: int) -> tuple[Any, int, int] | None:
    """(parser, low, high) of an integer element type as iree_hal_parse_element checks it."""
    et = ElementType
    ranges: dict[int, tuple[Any, int, int]] = {et.INT_8: (atoi_int32, -128, 255), et.SINT_8: (atoi_int32, -(1 << 31), 127),
            et.UINT_8: (atoi_uint32, 0, 255),
            et.INT_16: (atoi_int32, -32768, 65535), et.SINT_16: (atoi_int32, -(1 << 31), 32767),
            et.UINT_16: (atoi_uint32, 0, 65535),
            et.INT_32: (atoi_int32, -(1 << 31), (1 << 32) - 1),
            et.SINT_32: (atoi_int32, -(1 << 31), (1 << 32) - 1),
            et.UINT_32: (atoi_uint32, 0, (1 << 32) - 1),
            et.INT_64: (atoi_int64, -(1 << 63), (1 << 64) - 1),
            et.SINT_64: (atoi_int64, -(1 << 63), (1 << 64) - 1),
            et.UINT_64: (atoi_uint64, 0, (1 << 64) - 1)}
    return ranges.get(element_type)


def element_problem(token: str, element_type: int, limit: int, *, long_bits: int = 64) -> str:
    """Why a token is not an element of `element_type` (our words for IREE's bare status);
    `long_bits`: the target's C `long` (strtol's range)."""
    name = format_element_type(element_type)
    if len(token.encode()) >= limit:
        return f"`{token}` is longer than the {limit - 1} characters IREE reads for a number"
    rng = _int_range(element_type)
    if rng is not None:
        parser, low, high = rng
        value = parser(token, long_bits=long_bits)
        if value is None:
            parsed = string_view.c_parse("strtoll", token, limit, 0)
            if parsed is not None and parsed[1]:  # a number, but past what C can read
                if parser in (atoi_int32, atoi_uint32) and long_bits < 64:
                    return (f"`{token}` is out of range for {name} (past the {long_bits}-bit `long` "
                            "of this target's strtol)")
                return f"`{token}` is out of range for {name}"
            return f"`{token}` is not an integer"
        if low == -(1 << 31):  # IREE checks only the top (a negative wraps)
            return f"`{token}` is above {high}, the largest {name} IREE takes"
        return f"`{token}` is out of range for {name} ({low}..{high} as IREE reads it)"
    parsed = string_view.c_parse("strtod", token, limit)
    if parsed is not None and parsed[1]:
        return f"`{token}` underflows {name} to zero"
    return f"`{token}` is not a number"


def _element_parser(element_type: int, long_bits: int = 64) -> tuple[Any, np.dtype | None]:
    """(token -> value or None, dtype the values are stored as) for one element type; a None
    dtype means bytes (hex)."""
    rng = _int_range(element_type)
    if rng is not None:
        parser, low, high = rng
        bits = iree_hal_element_bit_count(element_type)
        signed = element_type >> 24 != NumericalType.INTEGER_UNSIGNED

        def parse_int(token: str) -> Any:
            v = parser(token, long_bits=long_bits)
            if v is None or not low <= v <= high:
                return None
            return wrap_int(v, bits, signed)  # i8 takes 255 as -1, as IREE's cast does
        return parse_int, (_SIGNED if signed else _UNSIGNED)[bits // 8]
    if element_type == ElementType.FLOAT_32:
        return atof, np.dtype(np.float32)
    if element_type == ElementType.FLOAT_64:
        return atod, np.dtype(np.float64)
    if is_narrow_float(element_type):
        def parse_narrow(token: str) -> Any:
            v = atof(token)
            return None if v is None else narrow_float_bits(v, element_type)
        return parse_narrow, _UNSIGNED[(iree_hal_element_bit_count(element_type) + 7) // 8]
    size = (iree_hal_element_bit_count(element_type) + 7) // 8

    def parse_hex(token: str) -> Any:
        raw = token.encode()
        if len(raw) != 2 * size:
            raise ParseFailure(f"INVALID_ARGUMENT; binary hex element count mismatch: buffer "
                               f"length={len(raw)} < expected={2 * size}",
                               f"`{token}` is not {2 * size} hex digits ({size} byte(s) of "
                               f"{format_element_type(element_type)})", token)
        # IREE's table reads a non-hex digit as 0
        return bytes((_HEX.get(raw[i], 0) << 4) | _HEX.get(raw[i + 1], 0)
                     for i in range(0, len(raw), 2))
    return parse_hex, None


_HEX = {c: int(chr(c), 16) for c in b"0123456789abcdefABCDEF"}


def fill_elements(out: np.ndarray, data: str, element_type: int, start: int = 0, *,
                  long_bits: int = 64) -> None:
    """iree_hal_parse_buffer_elements of `data[start:]` into the zeroed flat `out` (`start`: the
    elements of a long input are read where they are, not from a copy).

    Plain decimal numbers of the integer and f32 / f64 types are parsed a slice of the text at a
    time by numpy (`_fill_vectorized`); any other text, and any text the vectorized parser is not
    sure of (a hex or octal number, `inf`, trailing junk, an underflow, a count that does not fit),
    goes token by token through the C library as IREE does, which also raises the errors. Either
    way the memory is `out` and a bounded slice, never an object per element. `long_bits` is the
    target's C `long` width, which strtol / strtoul narrow to (64 on LP64, 32 on ILP32)."""
    if start >= len(data):
        return
    if _fill_vectorized(out, data, element_type, start, long_bits):
        return
    capacity = out.size
    parse, dtype = _element_parser(element_type, long_bits)
    limit = _number_limit(element_type)
    size = out.dtype.itemsize
    cells = out.view(np.uint8).reshape(capacity, size)
    batch: list = []  # parsed values not yet in `out`
    n = 0
    for token, separated in _tokens(data, start):
        if n >= capacity:
            if separated:
                raise ParseFailure(f"OUT_OF_RANGE; output data buffer overflow: element_capacity="
                                   f"{capacity} < dst_i={n}+",
                                   f"more than {capacity} element(s) given (from `{token}` on)",
                                   token)
            raise ParseFailure(f"OUT_OF_RANGE; output data overflow: element_capacity={capacity} "
                               f"< dst_i={n}", f"more than {capacity} element(s) given (`{token}`)",
                               token)
        try:
            v = parse(token)
        except ParseFailure as f:
            f.detail = f"element {n} {f.detail}"
            raise
        if v is None:
            raise ParseFailure("INVALID_ARGUMENT",
                               f"element {n} {element_problem(token, element_type, limit, long_bits=long_bits)}",
                               token)
        batch.append(v)
        n += 1
        if len(batch) == _BATCH:
            _store(cells, n - len(batch), batch, dtype)
            batch = []
    _store(cells, n - len(batch), batch, dtype)
    if n == 1 and capacity > 1:
        _splat(out, cells[0].tobytes())
    elif n < capacity:
        raise ParseFailure(f"OUT_OF_RANGE; input data string underflow: dst_i={n} < "
                           f"element_capacity={capacity}",
                           f"{n} element(s) given for {capacity} (one would splat)")


_BATCH = 1 << 16  # values parsed one by one, stored together


def _number_limit(element_type: int) -> int:
    """The scratch buffer IREE copies a number into: 16 bytes for integers up to 32 bits."""
    return 16 if element_type >> 24 in (0x10, 0x11, 0x12) and \
        iree_hal_element_bit_count(element_type) <= 32 else 32


def _store(cells: np.ndarray, at: int, values: list, dtype: np.dtype | None) -> None:
    """Parsed values into cells[at:]: their bytes, not numpy values (an i1 `FF` stays FF, a NaN
    keeps its payload)."""
    if not values:
        return
    raw = b"".join(values) if dtype is None else np.array(values, dtype=dtype).tobytes()
    cells[at:at + len(values)] = np.frombuffer(raw, dtype=np.uint8).reshape(len(values), -1)


def _splat(out: np.ndarray, raw: bytes) -> None:
    """Every element of the flat `out` set to the bytes `raw` (iree_hal_buffer_fill)."""
    if len(raw) in (1, 2, 4, 8):
        out.view(f"<u{len(raw)}").fill(np.frombuffer(raw, dtype=f"<u{len(raw)}")[0])
    else:
        out.view(np.uint8).reshape(out.size, len(raw))[:] = np.frombuffer(raw, dtype=np.uint8)


# --------------------------------------------------------------------------------------------------
# The vectorized parser: plain decimal text, checked byte by byte with numpy, read by numpy.
#
# A token is taken only when the C library would read all of it and numpy reads the same value:
# integers `[+-]?(0|[1-9][0-9]*)` (no leading 0: base 0 reads that as octal) of at most 15
# characters (18 digits for 64-bit types, so no overflow), floats `[+-]?(D+.?D*|.D+)([eE][+-]?D{1,2})?`
# (D a digit) shorter than IREE's 32-character limit: with two exponent digits a nonzero value is
# nonzero and finite in f64. An f32 is the f64 rounded, except where the f64 fell exactly between
# two f32 (a second rounding that strtof does not make: left to the C library).

_SLICE = 1 << 20  # characters of the text checked and parsed at a time
_TO_SPACE = bytes.maketrans(b"\t\n\v\f\r,[]", b" " * 8)
_F32_OVERFLOW = float.fromhex("0x1.ffffffp127")  # halfway between FLT_MAX and 2**128


def _fill_vectorized(out: np.ndarray, data: str, element_type: int, start: int, long_bits: int = 64) -> bool:
    """Parse `data[start:]` into `out` if every token is plain decimal text of `element_type` and the
    count fits (all, or one to splat); False (out partly written) to leave it to the C library."""
    if element_type in (ElementType.FLOAT_32, ElementType.FLOAT_64):
        parse_slice = _floats_of
    elif _int_range(element_type) is not None:
        parse_slice = _ints_of
    else:
        return False
    if not data.isascii():
        return False
    capacity, size = out.size, out.dtype.itemsize
    dst = out.view(np.uint8)
    n, pos, end_of_text = 0, start, len(data)
    while pos < end_of_text:
        end = pos + _SLICE
        if end < end_of_text:  # cut after a separator: no token spans two slices
            m = _SEPARATOR.search(data, end)
            end = m.end() if m is not None else end_of_text
        text = data[pos:end].encode("ascii").translate(_TO_SPACE)
        pos = end
        values = parse_slice(text, element_type, long_bits)
        if values is None or n + values.size > capacity:
            return False
        dst[n * size:(n + values.size) * size] = values.view(np.uint8)
        n += values.size
    if n == 1 and capacity > 1:
        _splat(out, dst[:size].tobytes())
        return True
    return n == capacity


def _token_bounds(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(previous byte, next byte, token starts, token ends) of space-separated bytes `a`."""
    padded = np.full(a.size + 2, 32, dtype=np.uint8)
    padded[1:-1] = a
    prev, nxt = padded[:-2], padded[2:]
    word = a != 32
    return prev, nxt, np.flatnonzero(word & (prev == 32)), np.flatnonzero(word & (nxt == 32)) + 1


def _is_digit(a: np.ndarray) -> np.ndarray:
    return (a - np.uint8(48)) < 10  # uint8 arithmetic: bytes below '0' wrap past 9


def _is_sign(a: np.ndarray) -> np.ndarray:
    return (a == 43) | (a == 45)


def _ints_of(text: bytes, element_type: int, long_bits: int = 64) -> np.ndarray | None:
    """The integers of one slice, as the element type's bytes (None: not all plain decimal, or
    one out of IREE's range, or one past a `long_bits`-bit strtol / strtoul's)."""
    parser, low, high = _int_range(element_type)  # type: ignore[misc]
    bits = iree_hal_element_bit_count(element_type)
    signed = element_type >> 24 != NumericalType.INTEGER_UNSIGNED
    a = np.frombuffer(text, dtype=np.uint8)
    prev, nxt, starts, ends = _token_bounds(a)
    if not starts.size:
        return np.zeros(0, dtype=(_SIGNED if signed else _UNSIGNED)[bits // 8])
    digit, sign = _is_digit(a), _is_sign(a)
    lengths = ends - starts
    if bits <= 32:  # IREE's 16-byte scratch buffer
        if lengths.max() > 15:
            return None
    elif lengths.max() > 19 or not np.all(sign[starts[lengths == 19]]):
        return None  # at most 18 digits: no int64 overflow
    if not np.all(digit | sign | (a == 32)):
        return None
    if np.any(sign & ~((prev == 32) & _is_digit(nxt))):  # a sign starts a token, before a digit
        return None
    if np.any((a == 48) & ((prev == 32) | _is_sign(prev)) & _is_digit(nxt)):  # octal
        return None
    if parser in (atoi_uint32, atoi_uint64) and np.any(a == 45):  # strtoul wraps negatives
        return None
    try:
        values = np.fromstring(text, dtype=np.int64, sep=" ")
    except ValueError:
        return None
    if values.size != starts.size:
        return None
    if long_bits < 64 and parser in (atoi_int32, atoi_uint32):
        low_long = -(1 << (long_bits - 1)) if parser is atoi_int32 else 0
        high_long = (1 << (long_bits - 1)) - 1 if parser is atoi_int32 else (1 << long_bits) - 1
        if np.any(values < low_long) or np.any(values > high_long):  # ERANGE: left to the C path
            return None
    if parser is atoi_int32:  # the long cast to int32_t
        values = ((values + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)
    elif parser is atoi_uint32:
        values &= 0xFFFFFFFF
    if bits <= 32 and (np.any(values < low) or np.any(values > high)):
        return None
    raw = values.view(np.uint64) & np.uint64((1 << bits) - 1)  # two's complement, truncated
    return raw.astype(_UNSIGNED[bits // 8])


def _floats_of(text: bytes, element_type: int, long_bits: int = 64) -> np.ndarray | None:
    """The f32 / f64 values of one slice (None: a token that is not plain decimal, or one whose
    value the C library must decide)."""
    a = np.frombuffer(text, dtype=np.uint8)
    prev, nxt, starts, ends = _token_bounds(a)
    f32 = element_type == ElementType.FLOAT_32
    if not starts.size:
        return np.zeros(0, dtype=np.float32 if f32 else np.float64)
    digit, sign, point = _is_digit(a), _is_sign(a), a == 46
    exponent = (a | 32) == 101  # e or E
    space = a == 32
    if (ends - starts).max() >= 32 or not np.all(digit | sign | point | exponent | space):
        return None
    prev_digit, next_digit = _is_digit(prev), _is_digit(nxt)
    prev_exponent, next_exponent = (prev | 32) == 101, (nxt | 32) == 101
    bad = sign & ~((prev == 32) & (next_digit | (nxt == 46)) | prev_exponent & next_digit)
    bad |= point & ~((prev_digit | _is_sign(prev) | (prev == 32))
                     & (next_digit | next_exponent | (nxt == 32)) & (prev_digit | next_digit))
    bad |= exponent & ~((prev_digit | (prev == 46)) & (next_digit | _is_sign(nxt)))
    if bad.any():
        return None
    points, exponents = np.flatnonzero(point), np.flatnonzero(exponent)
    point_token = np.searchsorted(starts, points, side="right") - 1
    exponent_token = np.searchsorted(starts, exponents, side="right") - 1
    if np.any(np.diff(point_token) == 0) or np.any(np.diff(exponent_token) == 0):
        return None  # two points, or two exponents, in one token
    if points.size and exponents.size:  # a point after the exponent
        i = np.minimum(np.searchsorted(exponent_token, point_token), exponent_token.size - 1)
        if np.any((exponent_token[i] == point_token) & (exponents[i] < points)):
            return None
    if exponents.size:  # at most two exponent digits
        digits = ends[exponent_token] - exponents - 1 - _is_sign(a[exponents + 1])
        if np.any(digits > 2):
            return None
    try:
        values = np.fromstring(text, dtype=np.float64, sep=" ")
    except ValueError:
        return None
    if values.size != starts.size:
        return None
    if not f32:
        return values
    with np.errstate(over="ignore"):
        narrow = values.astype(np.float32)
    if np.any((narrow == 0) & (values != 0)) or np.any(values == _F32_OVERFLOW) \
            or np.any(values == -_F32_OVERFLOW):
        return None  # underflow (IREE refuses it), or the overflow threshold
    inexact = np.flatnonzero(narrow.astype(np.float64) != values)
    if inexact.size:
        wide, near = values[inexact], narrow[inexact]
        toward = np.where(wide > near, np.float32(np.inf), np.float32(-np.inf))
        with np.errstate(over="ignore"):  # FLT_MAX's neighbour upwards is infinity
            other = np.nextafter(near, toward)
        if np.any((near.astype(np.float64) + other.astype(np.float64)) / 2 == wide):
            return None  # exactly between two f32: strtof rounds the decimal text itself
    return narrow


def format_g(value: float, upper: bool, *, canonical_nan: bool = False) -> str:
    """C's %g / %G (Python's formatting agrees with glibc's for every finite value and infinity;
    NaN keeps its sign as glibc prints it, unless `canonical_nan`: the value came through a float ->
    double promotion that makes every NaN positive, fpu_state.promotes_nan_canonically)."""
    if math.isnan(value):
        text = "-nan" if math.copysign(1.0, value) < 0 and not canonical_nan else "nan"
        return text.upper() if upper else text
    return ("%G" if upper else "%g") % value


def format_elements(raw: bytes, element_type: int, count: int, *, canonical_nan: bool = False) -> list[str]:
    """The first `count` elements of `raw` as iree_hal_format_element prints them; `canonical_nan`:
    the target's float -> double promotion makes an f32 (f16, bf16) NaN positive (riscv)."""
    rng = _int_range(element_type)
    size = (iree_hal_element_bit_count(element_type) + 7) // 8
    raw = raw[:count * size]
    if rng is not None:
        signed = element_type >> 24 != NumericalType.INTEGER_UNSIGNED
        dt = (_SIGNED if signed else _UNSIGNED)[size]
        return [str(v) for v in np.frombuffer(raw, dtype=dt).tolist()]
    if element_type == ElementType.FLOAT_32:
        return [format_g(v, True, canonical_nan=canonical_nan) for v in np.frombuffer(raw, dtype=np.float32).tolist()]
    if element_type == ElementType.FLOAT_64:
        return [format_g(v, True) for v in np.frombuffer(raw, dtype=np.float64).tolist()]
    if is_narrow_float(element_type):
        bits = np.frombuffer(raw, dtype=_UNSIGNED[size]).tolist()
        return [format_g(widen_float_bits(b, element_type), True, canonical_nan=canonical_nan) for b in bits]
    return [raw[i:i + size].hex().upper() for i in range(0, len(raw), size)]
