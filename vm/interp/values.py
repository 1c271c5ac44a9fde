"""iree-run-module's value syntax: `--input` parsing and result printing, byte for byte.

Parsing follows runtime/src/iree/tooling/function_io.c and hal/string_util.c of IREE 3.13:

- a scalar is parsed per the function's cconv character with IREE's C helpers: `i` strtol (base 0:
  `0x10`, `010`; at most 15 characters; trailing text ignored; the long cast to int32_t wraps),
  `I` strtoll (at most 31 characters), `f` strtof and `F` strtod (at most 31 characters; trailing
  text ignored). `i32=5` is not a scalar (iree-run-module rejects it). `(null)` is zero;
- a tensor is `[shape]x<type>=<elements>`: dims split on `x`, element types `i1 i8 i16 i32 i64
  si* ui* f16 f32 f64`, elements separated by whitespace, `,`, `[` and `]` (`2x2xi32=[1 2][3 4]`);
  one element splats (`8x16xf32=0.25`), none (or no `=`) zero-fills, too few or too many is an
  error. Integer elements use the same C helpers with IREE's range checks (i8 takes -128..255);
- the C helpers are the C library's own (ctypes), as the IREE runtime calls them.

Printing follows iree_tooling_print_variants: `result[i]: ` then `i32=%d`, `i64=%d`, `f32=%g`,
`f64=%g` for scalars, or `hal.buffer_view` and a newline and the view: shape `AxB` + `x` + element
type, `=`, elements with `%G` for floats (`1E+20`, `NAN`, `-NAN`), nested dimensions in `[...]`, at
most `max_element_count` (1024, `--output_max_element_count`) elements then `...`.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import math
from typing import Any, NamedTuple, Sequence, Union

import numpy as np

from ...abi.errors import IreeAbiError
from ...layouts.hal_buffer import ElementType, NumericalType, iree_hal_element_bit_count, \
    iree_hal_make_element_type
from ...layouts.hal_buffer import iree_hal_format_element_type as format_element_type

DEFAULT_MAX_ELEMENT_COUNT = 1024  # iree-run-module --output_max_element_count


class InputParseError(IreeAbiError):
    """An `--input` value iree-run-module would reject; names the value and the reason."""

    def __init__(self, text: str, reason: str) -> None:
        self.text = text
        self.reason = reason
        self.element: str | None = None  # the rejected tensor element, when one was
        super().__init__(f"{reason}; parsing input `{text}`")


class OpaqueResult(NamedTuple):
    """A ref result with no printer (a vm.buffer, hal.buffer, list...): only its type name."""

    type_name: str


Value = Union[np.ndarray, np.generic, int, float, OpaqueResult, None]

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
    """iree_string_view_atof (3.13): strtof on at most 31 characters; trailing text ignored."""
    r = _c_parse("strtof", text, 32)
    return r[0] if r is not None and r[1] else None


def atod(text: str) -> float | None:
    r = _c_parse("strtod", text, 32)
    return r[0] if r is not None and r[1] else None


# --------------------------------------------------------------------------------------------------
# Element types

_DTYPES: dict[int, np.dtype] = {
    ElementType.BOOL_8: np.dtype(np.bool_),
    ElementType.INT_8: np.dtype(np.int8), ElementType.SINT_8: np.dtype(np.int8),
    ElementType.UINT_8: np.dtype(np.uint8),
    ElementType.INT_16: np.dtype(np.int16), ElementType.SINT_16: np.dtype(np.int16),
    ElementType.UINT_16: np.dtype(np.uint16),
    ElementType.INT_32: np.dtype(np.int32), ElementType.SINT_32: np.dtype(np.int32),
    ElementType.UINT_32: np.dtype(np.uint32),
    ElementType.INT_64: np.dtype(np.int64), ElementType.SINT_64: np.dtype(np.int64),
    ElementType.UINT_64: np.dtype(np.uint64),
    ElementType.FLOAT_16: np.dtype(np.float16), ElementType.FLOAT_32: np.dtype(np.float32),
    ElementType.FLOAT_64: np.dtype(np.float64),
}
# numpy dtype -> the element type iree-run-module's parser gives that spelling (signless ints).
_ELEMENT_TYPES: dict[np.dtype, int] = {
    np.dtype(np.bool_): ElementType.BOOL_8,
    np.dtype(np.int8): ElementType.INT_8, np.dtype(np.uint8): ElementType.UINT_8,
    np.dtype(np.int16): ElementType.INT_16, np.dtype(np.uint16): ElementType.UINT_16,
    np.dtype(np.int32): ElementType.INT_32, np.dtype(np.uint32): ElementType.UINT_32,
    np.dtype(np.int64): ElementType.INT_64, np.dtype(np.uint64): ElementType.UINT_64,
    np.dtype(np.float16): ElementType.FLOAT_16, np.dtype(np.float32): ElementType.FLOAT_32,
    np.dtype(np.float64): ElementType.FLOAT_64,
}


class ElementTypeError(IreeAbiError):
    """An element type with no numpy equivalent here (bf16, complex, f8, opaque...)."""


def dtype_of(element_type: int) -> np.dtype:
    """The numpy dtype holding elements of an IREE element type."""
    try:
        return _DTYPES[element_type & 0xFFFFFFFF]
    except KeyError:
        raise ElementTypeError(f"element type 0x{element_type & 0xFFFFFFFF:08X} "
                               f"({format_element_type(element_type)}) has no numpy dtype "
                               f"here") from None


def element_type_of(dtype: Any) -> int:
    """The IREE element type of a numpy dtype (signless integers, as `i32` parses)."""
    dt = np.dtype(dtype)
    try:
        return int(_ELEMENT_TYPES[dt.newbyteorder("=") if dt.byteorder not in "=|" else dt])
    except KeyError:
        raise ElementTypeError(f"numpy dtype {dt} has no IREE element type here") from None


def parse_element_type(text: str) -> int:
    """iree_hal_parse_element_type."""
    special = {"f8E5M2": ElementType.FLOAT_8_E5M2, "f8E4M3FN": ElementType.FLOAT_8_E4M3_FN,
               "f8E5M2FNUZ": ElementType.FLOAT_8_E5M2_FNUZ,
               "f8E4M3FNUZ": ElementType.FLOAT_8_E4M3_FNUZ,
               "f8E8M0FNU": ElementType.FLOAT_8_E8M0_FNU}
    if text == "i1":
        return int(ElementType.BOOL_8)
    if text in special:
        return int(special[text])
    for prefix, numerical in (("i", NumericalType.INTEGER), ("si", NumericalType.INTEGER_SIGNED),
                              ("ui", NumericalType.INTEGER_UNSIGNED),
                              ("f", NumericalType.FLOAT_IEEE), ("bf", NumericalType.FLOAT_BRAIN),
                              ("cf", NumericalType.FLOAT_COMPLEX), ("x", NumericalType.UNKNOWN),
                              ("*", NumericalType.UNKNOWN)):
        if text.startswith(prefix):
            bits = atoi_uint32(text[len(prefix):]) if text[len(prefix):] else None
            if bits is None or bits > 0xFF:
                raise InputParseError(text, f"INVALID_ARGUMENT; out of range bit count in "
                                            f"'{text}'")
            return iree_hal_make_element_type(numerical, bits)
    raise InputParseError(text, f"INVALID_ARGUMENT; unhandled element type prefix in '{text}'")


# --------------------------------------------------------------------------------------------------
# Parsing

_SCALAR_DTYPES = {"i": np.int32, "I": np.int64, "f": np.float32, "F": np.float64}
_SCALAR_NAMES = {"i": "i32", "I": "i64", "f": "f32", "F": "f64"}


def parse_scalar(text: str, char: str) -> np.generic:
    """A primitive input for cconv character `char` (i, I, f, F), as iree-run-module parses it."""
    if char not in _SCALAR_DTYPES:
        raise InputParseError(text, f"UNIMPLEMENTED; unimplemented cconv type `{char}`")
    if text in ("(null)", "(ignored)"):
        return _SCALAR_DTYPES[char](0)
    value = {"i": atoi_int32, "I": atoi_int64, "f": atof, "F": atod}[char](text)
    if value is None:
        raise InputParseError(text, f"INVALID_ARGUMENT; parsing value `{text}` as "
                                    f"{_SCALAR_NAMES[char]}")
    return _SCALAR_DTYPES[char](value)


def parse_shape(text: str) -> list[int]:
    """iree_hal_parse_shape: dims split on `x`, each an int64 >= 0."""
    if not text:
        return []
    dims = []
    for i, part in enumerate(text.split("x")):
        value = atoi_int64(part) if part else None
        if value is None or value < 0:
            raise InputParseError(text, f"INVALID_ARGUMENT; shape[{i}] invalid value '{part}' of "
                                        f"'{text}'")
        dims.append(value)
    return dims


def _parse_element(token: str, element_type: int, dtype: np.dtype) -> Any:
    """iree_hal_parse_element_unsafe; None when the token is rejected."""
    et = ElementType
    if element_type in (et.INT_8, et.SINT_8, et.INT_16, et.SINT_16):
        v = atoi_int32(token)
        bits = 8 if element_type in (et.INT_8, et.SINT_8) else 16
        if v is None:
            return None
        if element_type in (et.INT_8, et.INT_16):
            if not -(1 << (bits - 1)) <= v <= (1 << bits) - 1:
                return None
        elif v > (1 << (bits - 1)) - 1:
            return None
        return _wrap(v, bits, True)
    if element_type in (et.UINT_8, et.UINT_16):
        v = atoi_uint32(token)
        bits = 8 if element_type == et.UINT_8 else 16
        return None if v is None or v > (1 << bits) - 1 else v
    if element_type in (et.INT_32, et.SINT_32):
        return atoi_int32(token)
    if element_type == et.UINT_32:
        return atoi_uint32(token)
    if element_type in (et.INT_64, et.SINT_64):
        return atoi_int64(token)
    if element_type == et.UINT_64:
        return atoi_uint64(token)
    if element_type in (et.FLOAT_16, et.FLOAT_32):
        return atof(token)
    if element_type == et.FLOAT_64:
        return atod(token)
    # Any other type is binary: two hex digits per byte.
    size = (iree_hal_element_bit_count(element_type) + 7) // 8
    if len(token) != 2 * size:
        return None
    try:
        return bytes.fromhex(token)
    except ValueError:
        return bytes(0 if c not in "0123456789abcdefABCDEF" else int(c, 16)
                     for c in token[::2])  # IREE's table maps bad digits to 0 nibbles


def parse_tensor(text: str) -> np.ndarray:
    """A `[shape]x<type>=<elements>` spec as a numpy array (iree_hal_buffer_view_parse)."""
    try:
        return _parse_tensor(text)
    except InputParseError as e:
        if e.text == text:
            raise
        raise InputParseError(text, e.reason) from None


def _parse_tensor(text: str) -> np.ndarray:
    spec = text.strip().strip('"')
    if not spec:
        raise InputParseError(text, "INVALID_ARGUMENT; empty string input")
    head, sep, data = spec.partition("=")
    last_x = head.rfind("x")
    shape = parse_shape(head[:last_x]) if last_x >= 0 else []
    element_type = parse_element_type(head[last_x + 1:] if last_x >= 0 else head)
    dtype = dtype_of(element_type)
    count = math.prod(shape)
    out = np.zeros(count, dtype=dtype)
    if count == 0 or not data:
        return out.reshape(shape)
    tokens = [t for t in _split_elements(data)]
    if len(tokens) > count:
        raise InputParseError(text, f"OUT_OF_RANGE; output data overflow: element_capacity="
                                    f"{count} < dst_i={count}")
    values = []
    for token in tokens:
        v = _parse_element(token, element_type, dtype)
        if v is None:  # IREE reports the bare status code for a bad element
            err = InputParseError(text, "INVALID_ARGUMENT")
            err.element = token
            raise err
        values.append(v)
    if values and isinstance(values[0], bytes):
        raw = np.frombuffer(b"".join(values), dtype=dtype)
    else:
        with np.errstate(over="ignore"):  # f16 elements: out of range rounds to infinity
            raw = np.array(values, dtype=dtype)
    if len(values) == 1:
        out[:] = raw[0]
    elif len(values) < count:
        raise InputParseError(text, f"OUT_OF_RANGE; input data string underflow: "
                                    f"dst_i={len(values)} < element_capacity={count}")
    else:
        out[:] = raw
    return out.reshape(shape)


def _split_elements(data: str) -> list[str]:
    tokens, current = [], []
    for c in data:
        if c.isspace() or c in ",[]":
            if current:
                tokens.append("".join(current))
                current = []
        else:
            current.append(c)
    if current:
        tokens.append("".join(current))
    return tokens


def parse_input(text: str, cconv_char: str | None = None) -> Value:
    """One `--input` value. With the function's cconv character (`i`, `I`, `f`, `F`, `r`) it is
    parsed exactly as iree-run-module does; without, a spec with `=` or `x` is a tensor and
    anything else a scalar (a Python int if it reads as one, else a float)."""
    s = text.strip()
    try:
        return _parse_input(s, cconv_char)
    except InputParseError as e:
        if e.text == s:
            raise
        raise InputParseError(s, e.reason) from None


def _parse_input(s: str, cconv_char: str | None) -> Value:
    text = s
    if not s:
        raise InputParseError(text, "INVALID_ARGUMENT; no value specified for input")
    if s.startswith(("@", "+", "*")) or s.startswith("&"):
        raise InputParseError(text, "UNIMPLEMENTED; file and storage inputs are not supported "
                                    "by ireeabi")
    if cconv_char is not None and cconv_char != "r":
        return parse_scalar(s, cconv_char)
    if s in ("(null)", "(ignored)"):
        return None
    if cconv_char == "r" or "=" in s or "x" in s:
        if "=" not in s and "x" not in s:
            raise InputParseError(text, "INVALID_ARGUMENT; invalid tensor specification, "
                                        "requires at least a shape/type (`4x2xf32=...`)")
        return parse_tensor(s)
    as_int = atoi_int64(s)
    if as_int is not None and str(as_int) == s.lstrip("+"):
        return as_int
    value = atod(s)
    if value is None:
        raise InputParseError(text, f"INVALID_ARGUMENT; parsing value `{s}` as a number")
    return value


# --------------------------------------------------------------------------------------------------
# Printing


def _c_g(value: float, upper: bool) -> str:
    """C's %g / %G (Python's formatting agrees with glibc's for every finite value and infinity;
    NaN keeps its sign as glibc prints it)."""
    if math.isnan(value):
        text = "-nan" if math.copysign(1.0, value) < 0 else "nan"
        return text.upper() if upper else text
    return ("%G" if upper else "%g") % value


def _format_elements(flat: np.ndarray, dtype: np.dtype) -> list[str]:
    kind = dtype.kind
    if kind == "f":
        return [_c_g(float(x), True) for x in flat]
    if kind in "iu":
        return [str(int(x)) for x in flat]
    # booleans (and anything else IREE has no printer for): hex bytes
    raw = flat.tobytes()
    size = dtype.itemsize
    return [raw[i:i + size].hex().upper() for i in range(0, len(raw), size)]


def format_buffer_view(array: np.ndarray, max_element_count: int = DEFAULT_MAX_ELEMENT_COUNT,
                       element_type: int | None = None) -> str:
    """The `4xf32=1 2 3 4` line of a buffer view holding `array`."""
    arr = np.asarray(array)
    et = element_type if element_type is not None else element_type_of(arr.dtype)
    shape = list(arr.shape)
    head = ("x".join(str(d) for d in shape) + "x" if shape else "") + format_element_type(et)
    flat = np.ascontiguousarray(arr).reshape(-1)
    budget = [max_element_count]
    shown = flat[:min(max_element_count, flat.size)]
    texts = _format_elements(shown, arr.dtype)
    pos = [0]

    def leaf(n: int) -> str:
        k = min(budget[0], n)
        budget[0] -= k
        out = " ".join(texts[pos[0]:pos[0] + k])
        pos[0] += n  # skip the elided ones too: the next row starts at its own data
        return out + ("..." if k < n else "")

    def rec(dims: list[int]) -> str:
        if len(dims) <= 1:
            return leaf(dims[0] if dims else 1)
        return "".join("[" + rec(dims[1:]) + "]" for _ in range(dims[0]))

    # `texts` covers only the first max_element_count elements; rows after the budget is spent
    # print no element, so indexing past it never happens.
    return head + "=" + rec(shape)


def format_value(value: Value, max_element_count: int = DEFAULT_MAX_ELEMENT_COUNT) -> str:
    """One result as iree_tooling_format_variant prints it (without `result[i]: `)."""
    if value is None:
        return "(null)"
    if isinstance(value, OpaqueResult):
        return f"{value.type_name}\n(no printer)"
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


__all__ = ["InputParseError", "ElementTypeError", "OpaqueResult", "DEFAULT_MAX_ELEMENT_COUNT",
           "parse_input", "parse_scalar", "parse_tensor", "parse_shape", "parse_element_type",
           "format_element_type", "format_buffer_view", "format_value", "format_results",
           "dtype_of", "element_type_of", "atoi_int32", "atoi_uint32", "atoi_int64",
           "atoi_uint64", "atof", "atod"]
