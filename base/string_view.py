"""The number parsers of IREE's string views (runtime/src/iree/base/string_view.c:
iree_string_view_atoi_int32 / uint32 / int64 / uint64, atof, atod), byte for byte as
iree-run-module 3.13 uses them: the C library's own strtol / strtoul / strtoll / strtoull / strtof /
strtod (ctypes) on a copy of the text in IREE's scratch buffer (15 characters for 32-bit integers,
31 otherwise; longer text is refused), with its range checks; a failure is None (IREE's false).

Beside them C's atof and atoi as IREE's flags read their values (runtime/src/iree/base/tooling/
flags.c: the whole text, junk read as 0), and `c_parse`, the C call under all of them.

strtol and strtoul return a `long`, whose width is the target's data model's (`long_bits`: 64 on
LP64, 32 on ILP32: i386, armv7, riscv32, wasm32), not the host's: `4294967295` as an i32 wraps to -1
on LP64 and is out of range (ERANGE) on ILP32. Where the two differ, the host's 64-bit strtoll /
strtoull parse and the result is narrowed as the target's C library narrows it (`c_parse_long`).
"""
from __future__ import annotations

import ctypes
from typing import Any

from .host_libraries import library_name

__all__ = ["c_parse", "c_parse_long", "wrap_int", "atoi_int32", "atoi_uint32", "atoi_int64", "atoi_uint64", "atof", "atod",
           "c_atof", "c_atoi"]


def _libc() -> Any:
    name = library_name("c")
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


def c_parse(fn: str, text: str, capacity: int, *base: int) -> "tuple[Any, bool, int] | None":
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


def c_parse_long(fn: str, text: str, capacity: int, base: int, long_bits: int) -> "tuple[Any, bool, int] | None":
    """`c_parse` of strtol / strtoul ("strtol", "strtoul") with a `long_bits`-bit long: the host's
    call where its long is as wide; otherwise the 64-bit strtoll / strtoull, narrowed as C's
    strtol / strtoul narrow: a value past the long's range is LONG_MIN / LONG_MAX (ULONG_MAX) with
    ERANGE; strtoul negates the magnitude in unsigned long arithmetic (`-1` is ULONG_MAX, no error)."""
    if long_bits == _LONG_BITS:
        return c_parse(fn, text, capacity, base)
    r = c_parse("strtoll" if fn == "strtol" else "strtoull", text, capacity, base)
    if r is None or not r[1]:
        return r
    value, consumed, err = r
    if fn == "strtol":
        low, high = -(1 << (long_bits - 1)), (1 << (long_bits - 1)) - 1
        if err == _ERANGE or not low <= value <= high:  # strtoll's ERANGE is beyond 64 bits
            return (low if value < 0 else high), consumed, _ERANGE
        return r
    top = (1 << long_bits) - 1
    negative = text.lstrip(" \t\n\v\f\r").startswith("-")
    magnitude = -value & ((1 << 64) - 1) if negative else value
    if err == _ERANGE or magnitude > top:
        return top, consumed, _ERANGE
    return (-magnitude & top if negative else magnitude), consumed, err


def wrap_int(value: int, bits: int, signed: bool) -> int:
    """`value` cast to a C integer of `bits` bits (signed or not): its low bits, two's
    complement."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if signed and value >> (bits - 1) else value


def atoi_int32(text: str, *, long_bits: int = 64) -> int | None:
    """iree_string_view_atoi_int32: strtol base 0 (a `long_bits`-bit long: the target's), cast to
    int32_t (None: not a number, or past the long's range)."""
    r = c_parse_long("strtol", text, 16, 0, long_bits)
    if r is None or not r[1]:
        return None
    value, _, err = r
    if value in (-(1 << (long_bits - 1)), (1 << (long_bits - 1)) - 1) and err == _ERANGE:
        return None
    return wrap_int(value, 32, True) if (value != 0 or err == 0) else None


def atoi_uint32(text: str, *, long_bits: int = 64) -> int | None:
    """iree_string_view_atoi_uint32: strtoul base 0 (a `long_bits`-bit unsigned long), cast to
    uint32_t."""
    r = c_parse_long("strtoul", text, 16, 0, long_bits)
    if r is None or not r[1]:
        return None
    value, _, err = r
    if value == (1 << long_bits) - 1 and err == _ERANGE:
        return None
    return wrap_int(value, 32, False) if (value != 0 or err == 0) else None


def atoi_int64(text: str, *, long_bits: int = 64) -> int | None:
    """iree_string_view_atoi_int64: strtoll, a long long on every data model (`long_bits` is
    taken for the parsers' one signature and not used)."""
    r = c_parse("strtoll", text, 32, 0)
    if r is None or not r[1]:
        return None
    value, _, err = r
    if value in (-(1 << 63), (1 << 63) - 1) and err == _ERANGE:
        return None
    return value if (value != 0 or err == 0) else None


def atoi_uint64(text: str, *, long_bits: int = 64) -> int | None:
    """iree_string_view_atoi_uint64: strtoull (see atoi_int64)."""
    r = c_parse("strtoull", text, 32, 0)
    if r is None or not r[1]:
        return None
    value, _, err = r
    if value == (1 << 64) - 1 and err == _ERANGE:
        return None
    return value if (value != 0 or err == 0) else None


def atof(text: str) -> float | None:
    """iree_string_view_atof: strtof on at most 31 characters; trailing text ignored; a result
    that underflowed to zero (ERANGE) is refused (`1e-50`), one that overflowed is infinity."""
    r = c_parse("strtof", text, 32)
    if r is None or not r[1]:
        return None
    value, _, err = r
    return value if (value != 0 or err == 0) else None


def atod(text: str) -> float | None:
    r = c_parse("strtod", text, 32)
    if r is None or not r[1]:
        return None
    value, _, err = r
    return value if (value != 0 or err == 0) else None


def c_atof(text: str) -> float:
    """C's atof, as the tool's float flags read their text (strtod on the whole text; nothing
    parsed reads as 0)."""
    r = c_parse("strtod", text, len(text.encode()) + 1)
    return float(r[0]) if r is not None and r[1] else 0.0


def c_atoi(text: str, *, long_bits: int = 64) -> int:
    """C's atoi as IREE's int32 flags use it: strtol base 10 (a `long_bits`-bit long), cast to int
    (junk reads as 0)."""
    r = c_parse_long("strtol", text, max(len(text.encode()) + 1, 2), 10, long_bits)
    return wrap_int(r[0], 32, True) if r is not None and r[1] else 0
