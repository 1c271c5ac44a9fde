"""iree-run-module's value syntax: `--input` parsing and result printing, byte for byte (IREE's
runtime/src/iree/tooling/function_io.c and numpy_io.c: tooling, not the VM).

Parsing follows iree-run-module 3.13 (runtime/src/iree/tooling/function_io.c, hal/string_util.c,
hal/buffer_view_util.c, tooling/numpy_io.c); the installed tool is the reference where they differ:

- each input is trimmed, then: empty is an error; `(null)` / `(ignored)` is zero or a null ref;
  `@f.npy` / `+f.npy` / `*f.npy` read one ndarray from a fresh / continued stream (`*`: every
  remaining ndarray, one argument each); `&spec` is a tensor whose hal.buffer alone is passed; a
  non-ref argument is a scalar; anything else is a tensor. The function's cconv is consumed as
  inputs are parsed ("function expected fewer input values", "expected cconv type `r`");
- a scalar is parsed per its cconv character with IREE's C helpers: `i` strtol (base 0: `0x10`,
  `010`; at most 15 characters; trailing text ignored; the long cast to int32_t wraps), `I` strtoll
  (at most 31 characters), `f` strtof and `F` strtod (at most 31 characters; trailing text ignored;
  a result that underflows to zero is refused). `i32=5` is not a scalar;
- a tensor is `[shape]x<type>=<elements>` (one pair of `"` stripped): dims split on `x` (an empty
  dim ends the list: "invalid shape specification"), at most 128 of them; element types `i1`,
  `[s|u]iN`, `fN`, `bf16`, `cfN`, the f8 names, `xN`/`*N`; the size is checked for overflow before
  it is allocated. Elements are separated by C whitespace, `,`, `[` and `]`, parsed in order (a bad
  element fails before a surplus is noticed); one element splats, none (or no `=`) zero-fills, too
  few or too many is an error with IREE's text. Integers use the C helpers with IREE's range
  checks (i8 takes -128..255); f16, bf16 and the f8 types round the strtof result with IREE's own
  converter (round to nearest even; values below half the narrow format's reach flush to zero; NaN
  becomes an all-ones mantissa); any other type is two hex digits per byte (`i1`: `01`). `4xf32=@f`
  / `=+f` read the raw bytes from a file;
- the C helpers are the C library's own (ctypes), as the IREE runtime calls them.

Element types numpy lacks (si8..si64, bf16, the f8 types, cf32, opaque `xN`) are kept as numpy
arrays of an integer (or void) dtype of the element's width tagged with the IREE element type in
the dtype's metadata (`element_type_of` reads it back), so an `si32` or `bf16` input reaches the
program, and prints back, with its own type. Sub-byte types (i4...), ranks above numpy's 64 and
tensors larger than the caller's heap (`InputFiles(max_bytes)`) are refused with a clear error.

Printing follows iree_tooling_print_variants: `result[i]: ` then `i32=%d`, `i64=%d`, `f32=%g`,
`f64=%g` for scalars (i8/i16 in lists), `(null)`, `vm.list` with one `child_list[j]: ` line per item
and a blank line after, or `hal.buffer_view` and a newline and the view: shape `AxB` + `x` +
element type, `=`, elements with `%G` for floats (`1E+20`, `NAN`, `-NAN`; f16/bf16/f8 widen through
IREE's converter, whose NaN is unsigned), signed or unsigned integers per the element type, two
upper-case hex digits per byte for every other type, nested dimensions in `[...]`, at most
`max_element_count` (1024, `--output_max_element_count`) elements then `...`. `--output=` targets
(`-`, empty, `@f.npy`, `+f.npy`, `@f.bin`) are written as IREE writes them (`write_output`).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import math
import os
import struct
from typing import Any, BinaryIO, Iterator, NamedTuple, Sequence, TextIO, Union

import numpy as np

from ireeabi.abi.errors import IreeAbiError
from ireeabi.layouts.hal_buffer import ElementType, NumericalType, iree_hal_element_bit_count, \
    iree_hal_make_element_type
from ireeabi.layouts.hal_buffer import iree_hal_format_element_type as format_element_type
from ireeabi.hal.element_types import SIGNED_INTS as _SIGNED, UNSIGNED_INTS as _UNSIGNED
from ireeabi.hal.element_types import ElementTypeError, dtype_of, element_type_of

DEFAULT_MAX_ELEMENT_COUNT = 1024  # iree-run-module --output_max_element_count
MAX_SHAPE_RANK = 128  # buffer views iree-run-module parses
_U64_MAX = (1 << 64) - 1  # iree_device_size_t


class InputParseError(IreeAbiError):
    """An `--input` value iree-run-module would reject. `str()` is the status text the tool prints;
    `detail` (when set) says in our words which part of the text is wrong and why."""

    def __init__(self, text: str, reason: str, detail: str | None = None) -> None:
        self.text = text
        self.reason = reason
        self.detail = detail
        self.element: str | None = None  # the rejected tensor element, when one was
        super().__init__(f"{reason}; parsing input `{text}`")


class OutputError(IreeAbiError):
    """An `--output` target iree-run-module would fail to write (its status text)."""


class _Fail(Exception):
    """Internal: an IREE status text (and our explanation) not yet tied to the input text."""

    def __init__(self, reason: str, detail: str | None = None, element: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = detail
        self.element = element


class OpaqueResult(NamedTuple):
    """A ref result with no printer (a vm.buffer, hal.buffer...): only its type name."""

    type_name: str


class ListResult(NamedTuple):
    """A vm.list result: its items converted like results (None for empty or null slots)."""

    items: tuple


class ResultList(list):
    """A vm.list result as `Program.call` returns it: a plain Python list of its items converted
    like results (numpy arrays for buffer views, Python ints / floats for value slots, None for
    empty slots and null refs, ResultLists for nested lists). `value_types[j]` is the VM value type
    of item j (`i32`, `f32`...; None for refs), so `format_value` prints it as iree-run-module
    does; it compares equal to any list with the same items."""

    def __init__(self, items: Any = (), value_types: Sequence[str | None] | None = None) -> None:
        super().__init__(items)
        self.value_types: tuple = tuple(value_types) if value_types is not None else ()


class StorageInput(NamedTuple):
    """An `&spec` input: iree-run-module passes only the hal.buffer of the parsed tensor."""

    array: np.ndarray


Value = Union[np.ndarray, np.generic, int, float, OpaqueResult, ListResult, list, None]

# --------------------------------------------------------------------------------------------------
# The C library's number parsers, as IREE's iree_string_view_atoi_* / atof / atod call them


def _libc() -> Any:
    name = ctypes.util.find_library("c")
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError:  # pragma: no cover - no C library to load
        return None
    for fn, restype, extra in (("strtol", ctypes.c_long, [ctypes.c_int]),
                               ("strtoul", ctypes.c_ulong, [ctypes.c_int]),
                               ("strtoll", ctypes.c_longlong, [ctypes.c_int]),
                               ("strtoull", ctypes.c_ulonglong, [ctypes.c_int]),
                               ("strtof", ctypes.c_float, []), ("strtod", ctypes.c_double, [])):
        f = getattr(lib, fn)
        f.restype = restype
        f.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)] + extra
    return lib


_LIBC = _libc()
_ERANGE = 34
_LONG_BITS = 8 * ctypes.sizeof(ctypes.c_long)


def _c_parse(fn: str, text: str, capacity: int, *base: int) -> "tuple[Any, bool, int] | None":
    """(value, consumed anything, errno) of libc `fn` on `text` copied into a `capacity`-byte
    scratch buffer (None when it does not fit, as IREE's helpers refuse it)."""
    raw = text.encode()
    if len(raw) >= capacity:
        return None
    if _LIBC is None:  # pragma: no cover - pure-Python approximation
        try:
            value = float(text) if fn in ("strtof", "strtod") else int(text, 0)
        except ValueError:
            return 0, False, 0
        return value, True, 0
    buf = ctypes.create_string_buffer(raw, capacity)
    end = ctypes.c_void_p()
    ctypes.set_errno(0)
    value = getattr(_LIBC, fn)(buf, ctypes.byref(end), *base)
    err = ctypes.get_errno()
    return value, (end.value or 0) != ctypes.addressof(buf), err


def _wrap(value: int, bits: int, signed: bool) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if signed and value >> (bits - 1) else value


def atoi_int32(text: str) -> int | None:
    """iree_string_view_atoi_int32: strtol base 0, cast to int32_t (None: not a number)."""
    r = _c_parse("strtol", text, 16, 0)
    if r is None or not r[1]:
        return None
    value, _, err = r
    if value in (-(1 << (_LONG_BITS - 1)), (1 << (_LONG_BITS - 1)) - 1) and err == _ERANGE:
        return None
    return _wrap(value, 32, True) if (value != 0 or err == 0) else None


def atoi_uint32(text: str) -> int | None:
    r = _c_parse("strtoul", text, 16, 0)
    if r is None or not r[1]:
        return None
    value, _, err = r
    if value == (1 << _LONG_BITS) - 1 and err == _ERANGE:
        return None
    return _wrap(value, 32, False) if (value != 0 or err == 0) else None


def atoi_int64(text: str) -> int | None:
    r = _c_parse("strtoll", text, 32, 0)
    if r is None or not r[1]:
        return None
    value, _, err = r
    if value in (-(1 << 63), (1 << 63) - 1) and err == _ERANGE:
        return None
    return value if (value != 0 or err == 0) else None


def atoi_uint64(text: str) -> int | None:
    r = _c_parse("strtoull", text, 32, 0)
    if r is None or not r[1]:
        return None
    value, _, err = r
    if value == (1 << 64) - 1 and err == _ERANGE:
        return None
    return value if (value != 0 or err == 0) else None


def atof(text: str) -> float | None:
    """iree_string_view_atof: strtof on at most 31 characters; trailing text ignored; a result
    that underflowed to zero (ERANGE) is refused (`1e-50`), one that overflowed is infinity."""
    r = _c_parse("strtof", text, 32)
    if r is None or not r[1]:
        return None
    value, _, err = r
    return value if (value != 0 or err == 0) else None


def atod(text: str) -> float | None:
    r = _c_parse("strtod", text, 32)
    if r is None or not r[1]:
        return None
    value, _, err = r
    return value if (value != 0 or err == 0) else None


def c_atof(text: str) -> float:
    """C's atof, as the tool's float flags read their text (strtod on the whole text; nothing
    parsed reads as 0)."""
    r = _c_parse("strtod", text, len(text.encode()) + 1)
    return float(r[0]) if r is not None and r[1] else 0.0


def _c_atoi(text: str) -> int:
    """C's atoi as IREE's int32 flags use it: strtol base 10, cast to int (junk reads as 0)."""
    r = _c_parse("strtol", text, max(len(text.encode()) + 1, 2), 10)
    return _wrap(r[0], 32, True) if r is not None and r[1] else 0


def parse_count_flag(text: str) -> int:
    """An int32 flag value such as --output_max_element_count, read as iree-run-module reads it
    (atoi; empty is 0), then widened to iree_host_size_t: a negative count means no limit."""
    return _c_atoi(text) & _U64_MAX if text else 0


# --------------------------------------------------------------------------------------------------
# Narrow floats: IREE's own f32 <-> f16 / bf16 / f8 conversions (base/internal/math.h semantics)

class _Narrow(NamedTuple):
    exp_bits: int
    mantissa_bits: int
    has_inf: bool
    has_nan: bool
    bias_tweak: int  # FNUZ formats bias their exponent one more than IEEE would
    nan_is_neg_zero: bool  # FNUZ formats spell NaN as the negative-zero pattern


_NARROW: dict[int, _Narrow] = {
    ElementType.FLOAT_16: _Narrow(5, 10, True, True, 0, False),
    ElementType.BFLOAT_16: _Narrow(8, 7, True, True, 0, False),
    ElementType.FLOAT_8_E5M2: _Narrow(5, 2, True, True, 0, False),
    ElementType.FLOAT_8_E4M3_FN: _Narrow(4, 3, False, True, 0, False),
    ElementType.FLOAT_8_E5M2_FNUZ: _Narrow(5, 2, False, True, 1, True),
    ElementType.FLOAT_8_E4M3_FNUZ: _Narrow(4, 3, False, True, 1, True),
}


def _round_half_even_bias(value: int, shift: int) -> int:
    """`value` plus the bias that makes a right shift by `shift` round to nearest, ties to even
    (uint32 arithmetic, as the C helper does)."""
    half = (1 << shift) >> 1
    bias = half if value & (1 << shift) else half - 1
    return (value + bias) & 0xFFFFFFFF


def _f32_bits_of(value: float) -> int:
    return struct.unpack("<I", struct.pack("<f", value))[0]


def narrow_float_bits(value: float, element_type: int) -> int:
    """The bits of the f32 `value` in a narrow float type, rounded as IREE rounds them."""
    if element_type == ElementType.FLOAT_8_E8M0_FNU:
        if not math.isfinite(value):
            return 0xFF
        if value <= 0:
            return 0
        mantissa, exp = math.frexp(value)  # mantissa in [0.5, 1): nearer 0.5 rounds down
        biased = exp - (mantissa < 0.75) + 127
        return min(max(biased, 0), 0xFF)
    fmt = _NARROW[element_type]
    e_bits, m_bits = fmt.exp_bits, fmt.mantissa_bits
    sign_shift = e_bits + m_bits
    exp_mask = ((1 << e_bits) - 1) << m_bits
    mantissa_mask = (1 << m_bits) - 1
    bias = fmt.bias_tweak + (1 << (e_bits - 1)) - 1
    u = _f32_bits_of(value)
    sign = (u >> 31) << sign_shift
    f_exp, f_mant = (u >> 23) & 0xFF, u & 0x7FFFFF
    d_exp = d_mant = 0
    make_nan = make_inf = False
    if f_exp == 0xFF:
        make_nan, make_inf = f_mant != 0, f_mant == 0
    elif f_exp == 0:
        if e_bits == 8:  # only bf16 keeps f32 subnormals
            shift = 23 - m_bits
            d_mant = _round_half_even_bias(f_mant, shift) >> shift
    else:
        exp = f_exp - 127
        if exp > (1 << (e_bits - 1)) - fmt.has_inf:
            make_inf = True
        elif exp + bias <= 0:  # a subnormal of the narrow type, or zero
            shift = 23 - m_bits - exp + (1 - bias)
            if 0 <= shift <= 23:
                d_mant = _round_half_even_bias((1 << 23) + f_mant, shift) >> shift
        else:
            shift = 23 - m_bits
            rounded = _round_half_even_bias(f_mant, shift)
            if rounded > 0x7FFFFF:  # rounding carried into the exponent
                rounded = 0
                exp += 1
            d_exp = (exp + bias) << m_bits
            d_mant = rounded >> shift
            if not fmt.has_inf and d_exp > exp_mask:
                make_nan = True
    if make_inf:
        if fmt.has_inf:
            return sign | exp_mask
        if not fmt.has_nan:
            return sign | exp_mask | mantissa_mask  # the largest finite value
        make_nan = True
    if make_nan:
        if not fmt.has_nan:
            return 0
        if fmt.nan_is_neg_zero:
            return 1 << sign_shift
        return sign | exp_mask | mantissa_mask
    if fmt.nan_is_neg_zero and d_exp == 0 and d_mant == 0:
        return 0  # no negative zero: that pattern is NaN
    return sign | d_exp | d_mant


def widen_float_bits(bits: int, element_type: int) -> float:
    """A narrow float's bits as the f32 IREE prints (its NaN has no sign)."""
    if element_type == ElementType.FLOAT_8_E8M0_FNU:
        return math.nan if bits == 0xFF else math.ldexp(1.0, bits - 127)
    fmt = _NARROW[element_type]
    e_bits, m_bits = fmt.exp_bits, fmt.mantissa_bits
    sign_mask = 1 << (e_bits + m_bits)
    exp_mask = ((1 << e_bits) - 1) << m_bits
    mantissa_mask = (1 << m_bits) - 1
    bias = fmt.bias_tweak + (1 << (e_bits - 1)) - 1
    sign = -1.0 if bits & sign_mask else 1.0
    exp, mant = bits & exp_mask, bits & mantissa_mask
    if exp == exp_mask:
        if fmt.has_inf:
            return math.nan if fmt.has_nan and mant else sign * math.inf
        if fmt.has_nan and mant == mantissa_mask and not fmt.nan_is_neg_zero:
            return math.nan
    elif fmt.has_nan and fmt.nan_is_neg_zero and bits == sign_mask:
        return math.nan
    elif exp == 0:
        return sign * math.ldexp(mant, 1 - bias - m_bits)
    return sign * math.ldexp(mant + (1 << m_bits), (exp >> m_bits) - bias - m_bits)


def _element_type(text: str) -> int:
    """iree_hal_parse_element_type (raises _Fail)."""
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
            raise _Fail(f"INVALID_ARGUMENT; unhandled element type prefix in '{text}'",
                        f"`{text}` is not an element type (i1, i8..i64, si/ui*, f16, bf16, f32, "
                        f"f64, cf64, f8E4M3FN...)")
    rest = text[len(prefix):]
    bits = atoi_uint32(rest)
    if bits is None or bits > 0xFF:
        raise _Fail(f"INVALID_ARGUMENT; out of range bit count in '{text}'",
                    f"the bit count `{rest}` of `{text}` is not a number from 0 to 255")
    return iree_hal_make_element_type(numerical, bits)


def parse_element_type(text: str) -> int:
    """iree_hal_parse_element_type."""
    try:
        return _element_type(text)
    except _Fail as f:
        raise InputParseError(text, f.reason, f.detail) from None


def _shape(text: str) -> list[int]:
    """iree_hal_parse_shape (raises _Fail): dims split on `x`; an empty dim ends the list, and a
    list shorter than the `x`s promise is refused."""
    if not text:
        return []
    rank = text.count("x") + 1
    dims: list[int] = []
    for part in text.split("x"):
        if not part:
            break
        value = atoi_int64(part)
        if value is None or value < 0:
            raise _Fail(f"INVALID_ARGUMENT; shape[{len(dims)}] invalid value '{part}' of '{text}'",
                        f"dimension {len(dims)} `{part}` is not a count")
        dims.append(value)
    if len(dims) != rank:
        raise _Fail(f"INVALID_ARGUMENT; invalid shape specification: '{text}'",
                    f"dimension {len(dims)} of `{text}` is empty")
    return dims


def parse_shape(text: str) -> list[int]:
    """iree_hal_parse_shape."""
    try:
        return _shape(text)
    except _Fail as f:
        raise InputParseError(text, f.reason, f.detail) from None


# --------------------------------------------------------------------------------------------------
# Tensors

_C_SPACE = " \t\n\v\f\r"  # C isspace in the "C" locale
_SEPARATORS = frozenset(_C_SPACE + ",[]")


def _trim(text: str) -> str:
    """iree_string_view_trim: C whitespace off both ends."""
    return text.strip(_C_SPACE)


def _tokens(data: str) -> Iterator[tuple[str, bool]]:
    """Element tokens and whether a separator ended each (one that runs to the end did not)."""
    start = -1
    for i, c in enumerate(data):
        if c in _SEPARATORS:
            if start >= 0:
                yield data[start:i], True
                start = -1
        elif start < 0:
            start = i
    if start >= 0:
        yield data[start:], False


def _view_size(shape: Sequence[int], element_type: int) -> tuple[int, int]:
    """(element count, byte length) of a dense view, with iree-run-module's overflow checks."""
    bits = iree_hal_element_bit_count(element_type)
    if bits == 0:
        raise _Fail("INVALID_ARGUMENT; opaque element types cannot be indexed",
                    f"{format_element_type(element_type)} elements have no size")
    count = 1
    for i, dim in enumerate(shape):
        count *= dim
        if count > _U64_MAX:
            raise _Fail(f"OUT_OF_RANGE; shape element count overflows device size at dimension {i}",
                        "the shape has more than 2**64 elements")
    nbytes = count * (bits // 8) if bits % 8 == 0 else count * bits
    if nbytes > _U64_MAX:
        raise _Fail("OUT_OF_RANGE; packed byte count overflows device size",
                    "the tensor has more than 2**64 bytes")
    return count, (nbytes if bits % 8 == 0 else (nbytes + 7) // 8)


def _storage(shape: Sequence[int], element_type: int, count: int, nbytes: int,
             max_bytes: int | None, dtype: np.dtype | None = None) -> np.ndarray:
    """A zeroed flat array for `count` elements (our limits, then the allocation); `dtype`
    overrides the element type's own (scratch cells of a packed type)."""
    if max_bytes is not None and nbytes > max_bytes:  # refused before numpy fills gigabytes
        raise _Fail(f"RESOURCE_EXHAUSTED; {nbytes} bytes requested with {max_bytes} available",
                    "larger than the emulated heap ireeabi runs the program on")
    if len(shape) > 64:
        raise _Fail(f"UNIMPLEMENTED; a shape rank of {len(shape)} is beyond ireeabi's numpy arrays",
                    "numpy arrays have at most 64 dimensions")
    try:
        dtype = dtype_of(element_type) if dtype is None else dtype
    except ElementTypeError as e:
        raise _Fail(f"UNIMPLEMENTED; {format_element_type(element_type)} elements are not "
                    f"supported by ireeabi", str(e)) from None
    try:
        return np.zeros(count, dtype=dtype)
    except (MemoryError, ValueError, OverflowError):
        raise _Fail("RESOURCE_EXHAUSTED; libc allocator failed the request",
                    f"{count} elements of {format_element_type(element_type)} do not fit in "
                    f"memory") from None


def _shaped(flat: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    try:
        return flat.reshape(shape)
    except ValueError:  # e.g. 0x4294967296x4294967296x4294967296: no elements, but numpy refuses
        raise _Fail(f"UNIMPLEMENTED; shape {'x'.join(map(str, shape))} is beyond ireeabi's numpy "
                    f"arrays", "numpy needs the product of the non-zero dimensions to fit in "
                    "64 bits") from None


def _int_range(element_type: int) -> tuple[Any, int, int] | None:
    """(parser, low, high) of an integer element type as iree_hal_parse_element checks it."""
    et = ElementType
    return {et.INT_8: (atoi_int32, -128, 255), et.SINT_8: (atoi_int32, -(1 << 31), 127),
            et.UINT_8: (atoi_uint32, 0, 255),
            et.INT_16: (atoi_int32, -32768, 65535), et.SINT_16: (atoi_int32, -(1 << 31), 32767),
            et.UINT_16: (atoi_uint32, 0, 65535),
            et.INT_32: (atoi_int32, -(1 << 31), (1 << 32) - 1),
            et.SINT_32: (atoi_int32, -(1 << 31), (1 << 32) - 1),
            et.UINT_32: (atoi_uint32, 0, (1 << 32) - 1),
            et.INT_64: (atoi_int64, -(1 << 63), (1 << 64) - 1),
            et.SINT_64: (atoi_int64, -(1 << 63), (1 << 64) - 1),
            et.UINT_64: (atoi_uint64, 0, (1 << 64) - 1)}.get(element_type)


def _element_problem(token: str, element_type: int, limit: int) -> str:
    """Why a token is not an element of `element_type` (our words for IREE's bare status)."""
    name = format_element_type(element_type)
    if len(token.encode()) >= limit:
        return f"`{token}` is longer than the {limit - 1} characters IREE reads for a number"
    rng = _int_range(element_type)
    if rng is not None:
        parser, low, high = rng
        value = parser(token)
        if value is None:
            parsed = _c_parse("strtoll", token, limit, 0)
            if parsed is not None and parsed[1]:  # a number, but past what C can read
                return f"`{token}` is out of range for {name}"
            return f"`{token}` is not an integer"
        if low == -(1 << 31):  # IREE checks only the top (a negative wraps)
            return f"`{token}` is above {high}, the largest {name} IREE takes"
        return f"`{token}` is out of range for {name} ({low}..{high} as IREE reads it)"
    parsed = _c_parse("strtod", token, limit)
    if parsed is not None and parsed[1]:
        return f"`{token}` underflows {name} to zero"
    return f"`{token}` is not a number"


def _element_parser(element_type: int) -> tuple[Any, np.dtype | None]:
    """(token -> value or None, dtype the values are stored as) for one element type; a None
    dtype means bytes (hex)."""
    rng = _int_range(element_type)
    if rng is not None:
        parser, low, high = rng
        bits = iree_hal_element_bit_count(element_type)
        signed = element_type >> 24 != NumericalType.INTEGER_UNSIGNED

        def parse_int(token: str) -> Any:
            v = parser(token)
            if v is None or not low <= v <= high:
                return None
            return _wrap(v, bits, signed)  # i8 takes 255 as -1, as IREE's cast does
        return parse_int, (_SIGNED if signed else _UNSIGNED)[bits // 8]
    if element_type == ElementType.FLOAT_32:
        return atof, np.dtype(np.float32)
    if element_type == ElementType.FLOAT_64:
        return atod, np.dtype(np.float64)
    if element_type in _NARROW or element_type == ElementType.FLOAT_8_E8M0_FNU:
        def parse_narrow(token: str) -> Any:
            v = atof(token)
            return None if v is None else narrow_float_bits(v, element_type)
        return parse_narrow, _UNSIGNED[(iree_hal_element_bit_count(element_type) + 7) // 8]
    size = (iree_hal_element_bit_count(element_type) + 7) // 8

    def parse_hex(token: str) -> Any:
        raw = token.encode()
        if len(raw) != 2 * size:
            raise _Fail(f"INVALID_ARGUMENT; binary hex element count mismatch: buffer length="
                        f"{len(raw)} < expected={2 * size}",
                        f"`{token}` is not {2 * size} hex digits ({size} byte(s) of "
                        f"{format_element_type(element_type)})", token)
        # IREE's table reads a non-hex digit as 0
        return bytes((_HEX.get(raw[i], 0) << 4) | _HEX.get(raw[i + 1], 0)
                     for i in range(0, len(raw), 2))
    return parse_hex, None


_HEX = {c: int(chr(c), 16) for c in b"0123456789abcdefABCDEF"}


def _fill(out: np.ndarray, data: str, element_type: int) -> None:
    """iree_hal_parse_buffer_elements into the zeroed flat `out`."""
    if not data:
        return
    capacity = out.size
    parse, dtype = _element_parser(element_type)
    limit = 16 if element_type >> 24 in (0x10, 0x11, 0x12) and \
        iree_hal_element_bit_count(element_type) <= 32 else 32
    values: list = []
    for token, separated in _tokens(data):
        n = len(values)
        if n >= capacity:
            if separated:
                raise _Fail(f"OUT_OF_RANGE; output data buffer overflow: element_capacity="
                            f"{capacity} < dst_i={n}+",
                            f"more than {capacity} element(s) given (from `{token}` on)", token)
            raise _Fail(f"OUT_OF_RANGE; output data overflow: element_capacity={capacity} < "
                        f"dst_i={n}", f"more than {capacity} element(s) given (`{token}`)", token)
        try:
            v = parse(token)
        except _Fail as f:
            f.detail = f"element {n} {f.detail}"
            raise
        if v is None:
            raise _Fail("INVALID_ARGUMENT",
                        f"element {n} {_element_problem(token, element_type, limit)}", token)
        values.append(v)
    if len(values) == 1 and capacity > 1:
        pass  # splat
    elif len(values) < capacity:
        raise _Fail(f"OUT_OF_RANGE; input data string underflow: dst_i={len(values)} < "
                    f"element_capacity={capacity}",
                    f"{len(values)} element(s) given for {capacity} (one would splat)")
    if not values:
        return
    # Bytes, not numpy values, go into `out`: an i1 `FF` stays FF, a NaN keeps its payload.
    raw = b"".join(values) if dtype is None else np.array(values, dtype=dtype).tobytes()
    cells = out.view(np.uint8).reshape(capacity, out.dtype.itemsize)
    cells[:] = np.frombuffer(raw, dtype=np.uint8).reshape(len(values), out.dtype.itemsize)


def _buffer_view(text: str, max_bytes: int | None = None) -> np.ndarray:
    """iree_hal_buffer_view_parse: `[shape]x<type>[=<elements>]` (raises _Fail)."""
    value = _trim(text)
    value = value[1:] if value.startswith('"') else value
    value = value[:-1] if value.endswith('"') else value
    if not value:
        raise _Fail("INVALID_ARGUMENT; empty string input", "no shape or element type given")
    head, _, data = value.partition("=")
    last_x = head.rfind("x")
    shape_text, type_text = (head[:last_x], head[last_x + 1:]) if last_x >= 0 else ("", head)
    rank = shape_text.count("x") + 1 if shape_text else 0
    if rank > MAX_SHAPE_RANK:
        raise _Fail(f"RESOURCE_EXHAUSTED; a shape rank of {rank} is just a little bit excessive, "
                    f"eh?", f"{rank} dimensions; iree-run-module takes at most {MAX_SHAPE_RANK}")
    shape = _shape(shape_text)
    element_type = _element_type(type_text)
    count, nbytes = _view_size(shape, element_type)
    bits = iree_hal_element_bit_count(element_type)
    if bits % 8:  # packed (i4...): parse as IREE does, so bad text fails alike, then refuse
        # Byte cells of the element's rounded-up width; i249..i255 round to 32 bytes, whose 256
        # bits no element type can name, so the cells are a plain void dtype.
        size = (bits + 7) // 8
        scratch = _storage([nbytes // size], element_type, nbytes // size, nbytes, max_bytes,
                           np.dtype(f"V{size}"))
        _fill(scratch, data, element_type)
        raise _Fail(f"UNIMPLEMENTED; {format_element_type(element_type)} elements are not "
                    f"supported by ireeabi", "ireeabi holds whole-byte elements only")
    out = _storage(shape, element_type, count, nbytes, max_bytes)
    _fill(out, data, element_type)
    return _shaped(out, shape)


def parse_tensor(text: str) -> np.ndarray:
    """A `[shape]x<type>=<elements>` spec as a numpy array (iree_hal_buffer_view_parse)."""
    try:
        return _buffer_view(text)
    except _Fail as f:
        err = InputParseError(text, f.reason, f.detail)
        err.element = f.element
        raise err from None


# --------------------------------------------------------------------------------------------------
# Files: `@f.npy`, `+f.npy`, `*f.npy`, `4xf32=@f.bin`

# iree_io_stdio_stream_open's mode numbers as the tool prints them
_READ_MODE, _WRITE_MODE, _APPEND_MODE = 2, 5, 12


class InputFiles:
    """The streams one call's inputs read, keyed by their verbatim path: `@` rewinds an open
    stream, `+` and `*` continue where the previous input stopped."""

    def __init__(self, max_bytes: int | None = None) -> None:
        self._streams: dict[str, BinaryIO] = {}
        self.max_bytes = max_bytes  # the largest tensor the caller can take (None: no limit)

    def open(self, path: str, append: bool) -> BinaryIO:
        f = self._streams.get(path)
        if f is not None:
            if not append:
                f.seek(0)
            return f
        try:
            f = open(path, "rb")
        except OSError as e:
            raise _Fail(f"UNKNOWN; unable to open file `{path}` with mode {_READ_MODE}",
                        f"cannot read `{path}`: {e.strerror}") from None
        self._streams[path] = f
        return f

    def close(self) -> None:
        for f in self._streams.values():
            f.close()
        self._streams.clear()

    def __enter__(self) -> "InputFiles":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _read(stream: BinaryIO, n: int, *context: str) -> bytes:
    try:
        data = stream.read(n)
    except (OSError, OverflowError, MemoryError) as e:
        raise _Fail("; ".join(("UNKNOWN; read failed",) + context), str(e)) from None
    if len(data) != n:
        raise _Fail("; ".join(("OUT_OF_RANGE; end-of-file encountered during read",) + context),
                    f"the file ends {n - len(data)} byte(s) early")
    return data


def _at_end(stream: BinaryIO) -> bool:
    here = stream.tell()
    return here >= os.fstat(stream.fileno()).st_size


def _npy_dict(header: str) -> Iterator[tuple[str, str]]:
    """The key/value pairs of an npy header dict, scanned as IREE scans them."""
    header = _trim(header)
    header = header[1:] if header.startswith("{") else header
    header = header[:-1] if header.endswith("}") else header
    malformed = _Fail("INVALID_ARGUMENT; malformed header dict", f"npy header `{header}`")
    while header:
        key, colon, header = header.partition(":")
        if not colon:
            raise malformed
        key = key[1:] if key.startswith("'") else key
        key = key[:-1] if key.endswith("'") else key
        header = _trim(header)
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
        header = _trim(header[1:])
        yield key, value


def _npy_element_type(descr: str) -> int:
    if descr[:1] == ">":
        raise _Fail(f"UNIMPLEMENTED; big-endian data type '{descr}' unsupported",
                    "save the array little-endian")
    if descr[:1] in ("|", "=", "<"):
        descr = descr[1:]
    if not descr:
        raise _Fail("INVALID_ARGUMENT; descr missing kind", "npy descr has no type")
    numerical = {"b": NumericalType.BOOLEAN, "i": NumericalType.INTEGER_SIGNED,
                 "u": NumericalType.INTEGER_UNSIGNED, "f": NumericalType.FLOAT_IEEE,
                 "c": NumericalType.FLOAT_COMPLEX, "V": NumericalType.UNKNOWN}.get(descr[0])
    if numerical is None:
        raise _Fail(f"UNIMPLEMENTED; unsupported data type {descr[0]}",
                    f"npy kind `{descr[0]}` has no IREE element type")
    width = atoi_uint32(descr[1:])
    if width is None:
        raise _Fail("INVALID_ARGUMENT; invalid descr byte width", f"npy descr `{descr}`")
    return ((int(numerical) << 24) | (width * 8)) & 0xFFFFFFFF


def _npy_shape(value: str) -> list[int]:
    text = value[:-1] if value.endswith(",") else value
    rank = text.count(",") + 1 if value else 0
    if rank > MAX_SHAPE_RANK:
        raise _Fail("INVALID_ARGUMENT; shape rank too large; be reasonable please",
                    f"{rank} dimensions")
    dims, rest = [], value
    for i in range(rank):
        part, _, rest = rest.partition(",")
        part = _trim(part)
        dim = atoi_uint64(part)
        if dim is None:
            raise _Fail(f"INVALID_ARGUMENT; invalid dimension {i} value {part}",
                        f"npy shape `({value})`")
        dims.append(dim)
    return dims


def load_npy(stream: BinaryIO) -> np.ndarray:
    """One ndarray from an npy stream as iree_numpy_npy_load_ndarray reads it: little-endian,
    C order; `i`/`u`/`b`/`f`/`c`/`V` kinds become si/ui/i1/f/cf/x element types (an int32 array
    comes back as si32, as the tool types it). Raises InputParseError naming the stream."""
    try:
        return _load_npy(stream)
    except _Fail as f:
        raise InputParseError(getattr(stream, "name", "<stream>"), f.reason, f.detail) from None


def _load_npy(stream: BinaryIO, max_bytes: int | None = None) -> np.ndarray:
    if _at_end(stream):
        raise _Fail("OUT_OF_RANGE; end-of-file", "no more arrays in the file")
    prefix = _read(stream, 8, "unable to read entire header prefix")
    if prefix[:6] != b"\x93NUMPY":
        raise _Fail("INVALID_ARGUMENT; npy header magic mismatch", "not an npy file")
    major, minor = prefix[6], prefix[7]
    if major <= 0 or major > 3:
        raise _Fail(f"UNIMPLEMENTED; npy version {major}.{minor} not supported",
                    "npy versions 1 to 3 are read")
    if major == 1:
        length = struct.unpack("<H", _read(stream, 2, f"failed to read version {major}.{minor} "
                                                      f"2-byte header length"))[0]
    else:
        length = struct.unpack("<I", _read(stream, 4, f"failed to read version {major}.{minor} "
                                                      f"4-byte header length"))[0]
    header = _read(stream, length, f"failed to read header string of {length} bytes")
    shape: list[int] = []
    element_type = int(ElementType.NONE)
    dense = False
    for key, value in _npy_dict(header.decode("latin-1")):
        if key == "descr":
            element_type = _npy_element_type(value)
        elif key == "fortran_order":
            if value != "False":
                raise _Fail("UNIMPLEMENTED; fortran order arrays not supported",
                            "save the array in C order")
            dense = True
        elif key == "shape":
            shape = _npy_shape(value)
    if not dense:  # the view's size is computed per encoding, and there is none
        raise _Fail("UNIMPLEMENTED; unimplemented encoding type size calculation",
                    "the npy header has no fortran_order")
    count, nbytes = _view_size(shape, element_type)
    out = _storage(shape, element_type, count, nbytes, max_bytes)
    data = _read(stream, nbytes, f"failed to read npy contents of {nbytes} bytes")
    out.view(np.uint8)[:] = np.frombuffer(data, dtype=np.uint8)
    return _shaped(out, shape)


def _tensor_from_file(metadata: str, contents: str, files: InputFiles) -> np.ndarray:
    """`<shape>x<type>=@path` / `=+path`: the view's raw bytes from a file."""
    value = _trim(metadata)
    value = value[1:] if value.startswith('"') else value
    value = value[:-1] if value.endswith('"') else value
    if not value:
        raise _Fail("INVALID_ARGUMENT; empty string input", "no shape or element type given")
    head = value.partition("=")[0]
    last_x = head.rfind("x")
    shape_text, type_text = (head[:last_x], head[last_x + 1:]) if last_x >= 0 else ("", head)
    if shape_text and shape_text.count("x") + 1 > MAX_SHAPE_RANK:
        raise _Fail("OUT_OF_RANGE", f"more than {MAX_SHAPE_RANK} dimensions")
    shape = _shape(shape_text)
    element_type = _element_type(type_text)
    stream = files.open(contents[1:], not contents.startswith("@"))
    count, nbytes = _view_size(shape, element_type)
    out = _storage(shape, element_type, count, nbytes, files.max_bytes)
    out.view(np.uint8)[:] = np.frombuffer(_read(stream, nbytes), dtype=np.uint8)
    return _shaped(out, shape)


# --------------------------------------------------------------------------------------------------
# Inputs

_SCALAR_DTYPES = {"i": np.int32, "I": np.int64, "f": np.float32, "F": np.float64}
_SCALAR_NAMES = {"i": "i32", "I": "i64", "f": "f32", "F": "f64"}


def _scalar(text: str, char: str) -> np.generic:
    if char not in _SCALAR_DTYPES:
        raise _Fail(f"UNIMPLEMENTED; unimplemented cconv type `{char}`",
                    f"the function takes a `{char}` argument")
    if text in ("(null)", "(ignored)"):
        return _SCALAR_DTYPES[char](0)
    name = _SCALAR_NAMES[char]
    value = {"i": atoi_int32, "I": atoi_int64, "f": atof, "F": atod}[char](text)
    if value is None:
        limit = 16 if char == "i" else 32
        kind = _element_type(name)
        raise _Fail(f"INVALID_ARGUMENT; parsing value `{text}` as {name}",
                    _element_problem(text, kind, limit))
    return _SCALAR_DTYPES[char](value)


def parse_scalar(text: str, char: str) -> np.generic:
    """A primitive input for cconv character `char` (i, I, f, F), as iree-run-module parses it."""
    try:
        return _scalar(text, char)
    except _Fail as f:
        raise InputParseError(text, f.reason, f.detail) from None


_CCONV_NAMES = {"i": "an i32", "I": "an i64", "f": "an f32", "F": "an f64", "r": "a ref"}


class _Cconv:
    """The argument cconv still to be consumed (None: unknown, values are guessed)."""

    def __init__(self, chars: str | None) -> None:
        self.chars = chars
        self.taken = 0  # arguments consumed so far

    def next_is_ref(self, text: str) -> bool:
        if self.chars is None:
            return "=" in text or "x" in text
        return self.chars.startswith("r")

    def take(self, expected: str | None = None) -> str | None:
        if self.chars is None:
            return expected
        if not self.chars:
            raise _Fail("INVALID_ARGUMENT; function expected fewer input values",
                        "more inputs than the function takes")
        char, self.chars = self.chars[0], self.chars[1:]
        self.taken += 1
        if expected is not None and char != expected:
            raise _Fail(f"INVALID_ARGUMENT; function signature mismatch: expected cconv type "
                        f"`{expected}` but provided type `{char}`",
                        f"a tensor was given for argument {self.taken - 1}, which is "
                        f"{_CCONV_NAMES.get(char, repr(char))}")
        return char


def _guess_scalar(text: str) -> Value:
    as_int = atoi_int64(text)
    if as_int is not None and str(as_int) == text.lstrip("+"):
        return as_int
    value = atod(text)
    if value is None:
        raise _Fail(f"INVALID_ARGUMENT; parsing value `{text}` as a number",
                    f"`{text}` is not a number")
    return value


def _variant(text: str, cconv: _Cconv, files: InputFiles, out: list) -> None:
    """iree_tooling_parse_variant_into: append the value(s) of one trimmed input to `out`."""
    if not text:
        raise _Fail("INVALID_ARGUMENT; no value specified for input", "the input is empty")
    if text in ("(null)", "(ignored)"):
        char = cconv.take()
        out.append(None if char in ("r", None) else _scalar(text, char))
        return
    if text[0] in "@+*":
        path = text[1:]
        if not path.endswith(".npy"):
            raise _Fail("UNIMPLEMENTED; only numpy (.npy) files are supported for metadata-less "
                        "variant I/O",
                        f"`{text}` starts with `{text[0]}`: a file input, which must be an .npy "
                        f"file (raw contents need a shape and type: `4xf32=@{path}`)")
        stream = files.open(path, not text.startswith("@"))
        if text[0] != "*":
            cconv.take("r")
            out.append(_load_npy(stream, files.max_bytes))
            return
        while not _at_end(stream):  # one argument per array left in the file
            cconv.take("r")
            out.append(_load_npy(stream, files.max_bytes))
        return
    if text[0] == "&":
        cconv.take("r")
        out.append(StorageInput(_tensor(text[1:], files)))
        return
    if not cconv.next_is_ref(text):
        char = cconv.take()
        out.append(_guess_scalar(text) if char is None else _scalar(text, char))
        return
    cconv.take("r")
    if "=" not in text and "x" not in text:
        raise _Fail("INVALID_ARGUMENT; invalid tensor specification, requires at least a "
                    "shape/type (`4x2xf32=...`)",
                    f"the argument is a tensor and `{text}` has neither `=` nor `x`: give its "
                    f"shape and type, e.g. `f32=...` or `4xf32=...`")
    out.append(_tensor(text, files))


def _tensor(text: str, files: InputFiles) -> np.ndarray:
    metadata, eq, contents = text.partition("=")
    if eq and contents.startswith(("@", "+")):
        return _tensor_from_file(metadata, contents, files)
    return _buffer_view(text, files.max_bytes)


def parse_inputs(specs: Sequence[str], cconv: str | None = None,
                 files: InputFiles | None = None) -> list[Value]:
    """Every `--input` of one call, as iree-run-module parses them against the function's argument
    cconv (`"rrf"`; None: guess tensors from `=`/`x`); `*f.npy` may give several values, so the
    result can be longer than `specs`, and shorter than the cconv (the call then fails)."""
    own = files is None
    streams = files if files is not None else InputFiles()
    state = _Cconv(cconv)
    values: list[Value] = []
    try:
        for spec in specs:
            text = _trim(spec)
            try:
                _variant(text, state, streams, values)
            except _Fail as f:
                err = InputParseError(text, f.reason, f.detail)
                err.element = f.element
                raise err from None
    finally:
        if own:
            streams.close()
    return values


def parse_input(text: str, cconv_char: str | None = None) -> Value:
    """One `--input` value. With the function's cconv character (`i`, `I`, `f`, `F`, `r`) it is
    parsed exactly as iree-run-module does; without, a spec with `=` or `x` is a tensor and
    anything else a scalar (a Python int if it reads as one, else a float)."""
    values = parse_inputs([text], cconv_char)
    if len(values) != 1:  # `*f.npy` with no or several arrays
        raise InputParseError(_trim(text), "INVALID_ARGUMENT; expected one value",
                              f"`{_trim(text)}` gave {len(values)}")
    return values[0]


# --------------------------------------------------------------------------------------------------
# Printing


def _c_g(value: float, upper: bool) -> str:
    """C's %g / %G (Python's formatting agrees with glibc's for every finite value and infinity;
    NaN keeps its sign as glibc prints it)."""
    if math.isnan(value):
        text = "-nan" if math.copysign(1.0, value) < 0 else "nan"
        return text.upper() if upper else text
    return ("%G" if upper else "%g") % value


def format_elements(raw: bytes, element_type: int, count: int) -> list[str]:
    """The first `count` elements of `raw` as iree_hal_format_element prints them."""
    rng = _int_range(element_type)
    size = (iree_hal_element_bit_count(element_type) + 7) // 8
    raw = raw[:count * size]
    if rng is not None:
        signed = element_type >> 24 != NumericalType.INTEGER_UNSIGNED
        dt = (_SIGNED if signed else _UNSIGNED)[size]
        return [str(v) for v in np.frombuffer(raw, dtype=dt).tolist()]
    if element_type == ElementType.FLOAT_32:
        return [_c_g(v, True) for v in np.frombuffer(raw, dtype=np.float32).tolist()]
    if element_type == ElementType.FLOAT_64:
        return [_c_g(v, True) for v in np.frombuffer(raw, dtype=np.float64).tolist()]
    if element_type in _NARROW or element_type == ElementType.FLOAT_8_E8M0_FNU:
        bits = np.frombuffer(raw, dtype=_UNSIGNED[size]).tolist()
        return [_c_g(widen_float_bits(b, element_type), True) for b in bits]
    return [raw[i:i + size].hex().upper() for i in range(0, len(raw), size)]


def format_buffer_view(array: np.ndarray, max_element_count: int = DEFAULT_MAX_ELEMENT_COUNT,
                       element_type: int | None = None) -> str:
    """The `4xf32=1 2 3 4` line of a buffer view holding `array`."""
    arr = np.asarray(array)
    et = element_type if element_type is not None else element_type_of(arr.dtype)
    et &= 0xFFFFFFFF
    shape = list(arr.shape)
    head = ("x".join(str(d) for d in shape) + "x" if shape else "") + format_element_type(et)
    budget = [max_element_count if max_element_count >= 0 else arr.size]  # size_t: no limit
    shown = min(budget[0], arr.size)
    texts = format_elements(np.ascontiguousarray(arr).reshape(-1)[:shown].tobytes(), et, shown)
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


def list_item(value_type: str, bits: int) -> np.generic:
    """A vm.list value slot (its type name and raw bits) as the numpy scalar that prints it."""
    if value_type in ("f32", "f64"):
        width = 4 if value_type == "f32" else 8
        return np.frombuffer(bits.to_bytes(width, "little"),
                             dtype=np.float32 if width == 4 else np.float64)[0]
    width = {"i8": 8, "i16": 16, "i32": 32, "i64": 64}[value_type]
    return np.dtype(f"int{width}").type(_wrap(bits, width, True))


_LIST_VALUE_TYPES = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
                     "f32": np.float32, "f64": np.float64}


def format_value(value: Value, max_element_count: int = DEFAULT_MAX_ELEMENT_COUNT) -> str:
    """One result as iree_tooling_format_variant prints it (without `result[i]: `)."""
    if value is None:
        return "(null)"
    if isinstance(value, OpaqueResult):
        return f"{value.type_name}\n(no printer)"
    if isinstance(value, list):  # a ResultList (or any list): typed by its value_types
        types = tuple(getattr(value, "value_types", ()))
        types += (None,) * (len(value) - len(types))
        value = ListResult(tuple(_LIST_VALUE_TYPES[t](v) if t in _LIST_VALUE_TYPES else v
                                 for v, t in zip(value, types)))
    if isinstance(value, ListResult):
        return "vm.list\n" + "".join(f"child_list[{i}]: {format_value(v, max_element_count)}\n"
                                     for i, v in enumerate(value.items))
    if isinstance(value, np.ndarray):
        return "hal.buffer_view\n" + format_buffer_view(value, max_element_count)
    if isinstance(value, (bool, np.bool_)):
        return f"i32={int(value)}"
    if isinstance(value, np.integer):
        return f"i{8 * value.dtype.itemsize}={int(value)}"
    if isinstance(value, np.floating):
        return f"f{8 * value.dtype.itemsize}={_c_g(float(value), False)}"
    if isinstance(value, int):
        return f"i64={value}"
    if isinstance(value, float):
        return f"f64={_c_g(value, False)}"
    raise TypeError(f"no iree-run-module format for a {type(value).__name__}")


def format_results(results: Sequence[Value],
                   max_element_count: int = DEFAULT_MAX_ELEMENT_COUNT) -> str:
    """What iree-run-module prints for a call's results (after its `EXEC @function` line): one
    `result[i]: ...` entry per result, each ending in a newline. Numpy scalars carry their width
    (np.int32 -> i32, np.float64 -> f64); plain Python ints print as i64 and floats as f64."""
    return "".join(f"result[{i}]: {format_value(v, max_element_count)}\n"
                   for i, v in enumerate(results))


# --------------------------------------------------------------------------------------------------
# --output targets


def _as_view(value: Value) -> tuple[bytes, int, list[int]]:
    """(contents, element type, shape) of a result as iree-run-module wraps it for a file."""
    if value is None:
        return b"", int(ElementType.INT_8), [0]
    if isinstance(value, np.ndarray):
        return np.ascontiguousarray(value).tobytes(), element_type_of(value.dtype), \
            list(value.shape)
    if isinstance(value, (bool, np.bool_)):
        return np.int32(value).tobytes(), int(ElementType.INT_32), []
    if isinstance(value, (np.integer, np.floating)):
        return value.tobytes(), element_type_of(value.dtype), []
    if isinstance(value, int):
        return np.int64(value).tobytes(), int(ElementType.INT_64), []
    if isinstance(value, float):
        return np.float64(value).tobytes(), int(ElementType.FLOAT_64), []
    if isinstance(value, OpaqueResult) and value.type_name in ("hal.buffer", "vm.buffer"):
        raise OutputError(f"UNIMPLEMENTED; ireeabi keeps no contents of a {value.type_name} "
                          f"result, so it cannot write one to a file")
    raise OutputError("INVALID_ARGUMENT; unsupported output source type; expected: !hal.buffer, "
                      "!hal.buffer_view, !vm.buffer")


def npy_header(element_type: int, shape: Sequence[int]) -> bytes:
    """The npy header iree_numpy_npy_save_ndarray writes (version 1 unless the dict is huge,
    padded with spaces and a newline to 64 bytes)."""
    size = (iree_hal_element_bit_count(element_type) + 7) // 8
    kind = {NumericalType.UNKNOWN: "V", NumericalType.BOOLEAN: "b", NumericalType.INTEGER: "i",
            NumericalType.INTEGER_SIGNED: "i", NumericalType.INTEGER_UNSIGNED: "u",
            NumericalType.FLOAT_IEEE: "f",
            NumericalType.FLOAT_COMPLEX: "c"}.get(element_type >> 24)
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


def write_output(value: Value, spec: str, stdout: TextIO,
                 max_element_count: int = DEFAULT_MAX_ELEMENT_COUNT) -> None:
    """One `--output=` target: empty ignores the result, `-` prints it (without `result[i]: `),
    `@path` / `+path` write (overwrite / append) an .npy array or, for any other name, the raw
    contents. Raises OutputError with iree-run-module's text."""
    if not spec:
        return
    if spec == "-":
        stdout.write(format_value(value, max_element_count) + "\n")
        return
    if spec[0] not in "@+":
        raise OutputError(f"UNIMPLEMENTED; unsupported output mode specification '{spec}'")
    path = spec[1:]
    mode = _WRITE_MODE if spec[0] == "@" else _APPEND_MODE
    try:
        f = open(path, "wb" if spec[0] == "@" else "ab")
    except OSError as e:
        raise OutputError(f"UNKNOWN; unable to open file `{path}` with mode {mode} "
                          f"({e.strerror})") from None
    with f:
        data, element_type, shape = _as_view(value)
        if path.endswith(".npy"):
            f.write(npy_header(element_type, shape))
        f.write(data)


__all__ = ["c_atof", "format_elements", "InputParseError", "OutputError", "OpaqueResult", "ListResult", "ResultList", "StorageInput", "InputFiles", "DEFAULT_MAX_ELEMENT_COUNT", "parse_input", "parse_inputs", "parse_scalar", "parse_tensor", "parse_shape", "parse_element_type", "parse_count_flag", "load_npy", "npy_header", "write_output", "format_element_type", "format_buffer_view", "format_value", "format_results", "list_item", "narrow_float_bits", "widen_float_bits", "atoi_int32", "atoi_uint32", "atoi_int64", "atoi_uint64", "atof", "atod"]
