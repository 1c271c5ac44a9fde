"""Scalar semantics of the VM ops (runtime/src/iree/vm/ops.h) on an x86-64 host.

Integer ops wrap, division follows C (truncating, traps where the native runtime gets SIGFPE), float
ops round to f32 after each op, float -> int casts round half away from zero, and the transcendental
functions come from the C math library through ctypes, bound to the glibc symbol versions the IREE
runtime links. `PURE_OPS` maps an op symbol to a function of its operand values.

Signaling NaNs: an f32 register read into a Python float comes back quieted (an f64 one keeps its
bits), so the few f32 ops that return an operand untouched (min/max) or can tell a signaling NaN
(powf) have handlers on raw bits in ops_scalar; f64 paths quiet explicitly where libm or the FPU
would (x + x for NaN inputs of ceil/floor/round, x / 0).
"""
from __future__ import annotations

import ctypes
import math
import re
import struct
from typing import Any, Callable

from .errors import VmTrapError
from ..base.host_libraries import library_name

M32 = 0xFFFFFFFF
M64 = 0xFFFFFFFFFFFFFFFF


I32 = struct.Struct("<i")
U32 = struct.Struct("<I")
I64 = struct.Struct("<q")
U64 = struct.Struct("<Q")
F32 = struct.Struct("<f")
F64 = struct.Struct("<d")


def s32(x: int) -> int:
    x &= M32
    return x - (1 << 32) if x & 0x80000000 else x


def _s64(x: int) -> int:
    x &= M64
    return x - (1 << 64) if x >> 63 else x


def _to_f32(x: float) -> float:
    """x rounded to the nearest f32 (overflow to infinity), as a Python float."""
    try:
        return F32.unpack(F32.pack(x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def f32_bits(x: float) -> int:
    try:
        return U32.unpack(F32.pack(x))[0]
    except OverflowError:
        return U32.unpack(F32.pack(math.copysign(math.inf, x)))[0]


def f64_bits(x: float) -> int:
    return U64.unpack(F64.pack(x))[0]


def from_f32_bits(bits: int) -> float:
    return F32.unpack(U32.pack(bits & M32))[0]


def from_f64_bits(bits: int) -> float:
    return F64.unpack(U64.pack(bits & M64))[0]


def _int_to_f32(n: int) -> float:
    """(float)n for a 64-bit integer: one round-to-nearest-even step (no double rounding)."""
    if abs(n) <= 1 << 53:
        return _to_f32(float(n))
    shift = abs(n).bit_length() - 24
    m, rem = divmod(abs(n), 1 << shift)
    half = 1 << (shift - 1)
    if rem > half or (rem == half and m & 1):
        m += 1
    return _to_f32(math.copysign(float(m << shift), n))


def _c_div(a: int, b: int, bits: int, signed: bool, what: str) -> int:
    if b == 0:
        raise VmTrapError(f"integer division by zero in vm.{what} (SIGFPE in the native runtime)")
    if signed:
        if a == -(1 << (bits - 1)) and b == -1:
            raise VmTrapError(f"signed integer overflow in vm.{what}: {a} / -1 "
                              f"(SIGFPE in the native runtime)")
        q = abs(a) // abs(b)
        return -q if (a < 0) != (b < 0) else q
    return a // b


def _c_rem(a: int, b: int, bits: int, signed: bool, what: str) -> int:
    return a - _c_div(a, b, bits, signed, what) * b


def _ctlz(x: int, bits: int) -> int:
    return bits - (x & ((1 << bits) - 1)).bit_length()


def _round_away(x: float) -> float:
    """roundf/round: halfway cases away from zero; keeps the sign of zero. Non-finite values come
    back as x + x, as libm returns them: a signaling NaN leaves quieted (matters for f64, whose
    registers hold signaling NaNs intact)."""
    if not math.isfinite(x):
        return x + x
    t = float(math.trunc(x))
    if abs(x - t) >= 0.5:
        t += math.copysign(1.0, x)
    return math.copysign(t, x) if t == 0 else t


def _round_even_f32(x: float) -> float:
    """IREE's pre-C23 vm_round_f32_even: roundf, then step a halfway odd result toward zero (so
    -0.5 gives +0.0, unlike roundevenf)."""
    rounded = _round_away(x)
    if math.isfinite(x) and abs(x - rounded) == 0.5 and math.fmod(rounded, 2.0) != 0:
        rounded += -1.0 if rounded > 0.0 else 1.0
    return rounded


def _ceil(x: float) -> float:
    if not math.isfinite(x):
        return x + x  # libm's ceil: a signaling NaN leaves quieted
    r = float(math.ceil(x))
    return math.copysign(r, x) if r == 0 else r


def _floor(x: float) -> float:
    if not math.isfinite(x):
        return x + x  # libm's floor: a signaling NaN leaves quieted
    r = float(math.floor(x))
    return math.copysign(r, x) if r == 0 else r


_INT64_MIN = -(1 << 63)


def _lround64(x: float) -> int:
    """lroundf/llroundf/lround on x86-64 glibc: half away from zero; INT64_MIN out of range."""
    if math.isnan(x):
        return _INT64_MIN
    r = _round_away(x)
    if not -(2.0 ** 63) <= r < 2.0 ** 63:
        return _INT64_MIN
    return int(r)


def _f32_to_u64(x: float) -> int:
    """(uint64_t)roundf(x) as x86-64 compiles it (negative values wrap, out of range -> 2^63)."""
    if math.isnan(x):
        return 1 << 63
    r = _round_away(x)
    if -(2.0 ** 63) <= r < 2.0 ** 64:
        return int(r) & M64
    return 1 << 63


# The NaN x86-64 SSE produces for invalid operations (0/0, inf-inf): sign bit set, quiet.
_DEFAULT_NAN = -math.nan


def _fdiv(a: float, b: float) -> float:
    """IEEE division (Python raises on a zero divisor)."""
    if b == 0.0:
        if math.isnan(a):
            return a + b  # quieted, as the divide instruction does to a signaling NaN
        if a == 0.0:
            return _DEFAULT_NAN
        sign = math.copysign(1.0, a) * math.copysign(1.0, b)
        return math.copysign(math.inf, sign)
    return a / b


# The C math library provides the transcendental functions, bound to the same symbol versions the
# iree-base-runtime 3.13 wheels link (glibc 2.28 baseline): exp/exp2/log/log2/pow of that era are
# the SVID-compatible wrappers (log(-1) is +NaN there, -NaN in the 2.29 default). Python's math is
# the fallback where ctypes cannot load libm.
def _load_libm() -> ctypes.CDLL | None:
    name = library_name("m")
    try:
        return ctypes.CDLL(name) if name else None
    except OSError:  # pragma: no cover (platform without a loadable libm)
        return None


_LIBM = _load_libm()
# name -> symbol versions to try (x86-64, aarch64 base versions) before the default symbol.
_LINKED_VERSIONS = {name: (b"GLIBC_2.2.5", b"GLIBC_2.17")
                    for name in ("exp", "exp2", "log", "log2", "pow")}


def _dlvsym() -> Any:  # glibc's dlvsym, or None
    try:
        fn = ctypes.CDLL(None).dlvsym
    except (AttributeError, OSError):  # pragma: no cover (not glibc)
        return None
    fn.restype = ctypes.c_void_p
    fn.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
    return fn


_DLVSYM = _dlvsym()


def _libm(name: str, arity: int, single: bool, fallback: Callable[..., float]) -> Callable:
    if _LIBM is None:  # pragma: no cover
        return fallback
    ctype = ctypes.c_float if single else ctypes.c_double
    prototype = ctypes.CFUNCTYPE(ctype, *([ctype] * arity))
    for version in _LINKED_VERSIONS.get(name, ()) if _DLVSYM is not None else ():
        address = _DLVSYM(_LIBM._handle, name.encode(), version)
        if address:
            return prototype(address)
    fn = getattr(_LIBM, name, None)
    if fn is None:  # pragma: no cover
        return fallback
    fn.restype = ctype
    fn.argtypes = [ctype] * arity
    return fn


def _py_fallback(fn: Callable[..., float]) -> Callable[..., float]:  # pragma: no cover
    def safe(*args: float) -> float:
        try:
            return fn(*args)
        except (ValueError, ZeroDivisionError):
            return math.nan
        except OverflowError:
            return math.inf
    return safe


_MATH: dict[str, tuple[str, str, int, Callable[..., float]]] = {  # op stem -> (libm f32 name, libm f64 name, arity, Python fallback)
    "Atan": ("atanf", "atan", 1, math.atan), "Atan2": ("atan2f", "atan2", 2, math.atan2),
    "Cos": ("cosf", "cos", 1, math.cos), "Sin": ("sinf", "sin", 1, math.sin),
    "Exp": ("expf", "exp", 1, math.exp), "Exp2": ("exp2f", "exp2", 1, lambda x: 2.0 ** x),
    "ExpM1": ("expm1f", "expm1", 1, math.expm1), "Log": ("logf", "log", 1, math.log),
    "Log10": ("log10f", "log10", 1, math.log10), "Log1p": ("log1pf", "log1p", 1, math.log1p),
    "Log2": ("log2f", "log2", 1, math.log2), "Pow": ("powf", "pow", 2, math.pow),
    "Sqrt": ("sqrtf", "sqrt", 1, math.sqrt), "Tanh": ("tanhf", "tanh", 1, math.tanh),
    "Erf": ("erff", "erf", 1, math.erf), "Rem": ("remainderf", "remainder", 2, math.remainder),
}


def _math_ops() -> dict[str, Callable]:
    out: dict[str, Callable] = {}
    for stem, (f32_name, f64_name, arity, fallback) in _MATH.items():
        out[stem + "F32"] = _libm(f32_name, arity, True, _py_fallback(fallback))
        out[stem + "F64"] = _libm(f64_name, arity, False, _py_fallback(fallback))
    sqrt32, sqrt64 = out["SqrtF32"], out["SqrtF64"]
    out["RsqrtF32"] = lambda x: _fdiv(1.0, _to_f32(sqrt32(x)))
    out["RsqrtF64"] = lambda x: _fdiv(1.0, sqrt64(x))
    return out


def _pure_ops() -> dict[str, Callable]:
    """Op symbol -> function of the operand values (read per the encoding's register banks) giving
    the result value (wrapped / rounded when written to the result register)."""
    u32 = lambda x: x & M32  # noqa: E731
    u64 = lambda x: x & M64  # noqa: E731
    ops: dict[str, Callable] = {}
    for w, u, s in ((32, u32, s32), (64, u64, _s64)):
        t = f"I{w}"
        ops.update({
            f"Div{t}S": lambda a, b, w=w: _c_div(a, b, w, True, f"div.i{w}.s"),
            f"Div{t}U": lambda a, b, w=w, u=u: _c_div(u(a), u(b), w, False, f"div.i{w}.u"),
            f"Rem{t}S": lambda a, b, w=w: _c_rem(a, b, w, True, f"rem.i{w}.s"),
            f"Rem{t}U": lambda a, b, w=w, u=u: _c_rem(u(a), u(b), w, False, f"rem.i{w}.u"),
            f"Abs{t}": abs,
            f"Min{t}U": lambda a, b, u=u: b if u(b) < u(a) else a,
            f"Max{t}U": lambda a, b, u=u: b if u(a) < u(b) else a,
            f"Ctlz{t}": lambda a, w=w: _ctlz(a, w),
            f"Shr{t}U": lambda a, n, w=w, u=u: u(a) >> (n & (w - 1)),
            f"CmpLT{t}U": lambda a, b, u=u: int(u(a) < u(b)),
        })
    ops.update({
        "TruncI32I8": lambda a: a & 0xFF, "TruncI32I16": lambda a: a & 0xFFFF,
        "ExtI8I32S": lambda a: ((a & 0xFF) ^ 0x80) - 0x80, "ExtI8I32U": lambda a: a & 0xFF,
        "ExtI16I32S": lambda a: ((a & 0xFFFF) ^ 0x8000) - 0x8000,
        "ExtI16I32U": lambda a: a & 0xFFFF,
    })
    for t in ("F32", "F64"):
        ops.update({
            f"Ceil{t}": _ceil, f"Floor{t}": _floor, f"Round{t}": _round_away,
            f"Min{t}": lambda a, b: b if b < a else a, f"Max{t}": lambda a, b: b if a < b else a,
        })
    ops.update({
        "RoundF32Even": _round_even_f32, "RoundF64Even": _round_even_f32,
        "CastSI32F32": float, "CastUI32F32": lambda a: float(a & M32),
        "CastSI64F32": _int_to_f32, "CastUI64F32": lambda a: _int_to_f32(a & M64),
        "CastF32SI32": _lround64, "CastF32UI32": _lround64,
        "CastF32SI64": _lround64, "CastF32UI64": _f32_to_u64,
        "TruncF64F32": lambda a: a, "ExtF32F64": lambda a: a,
        "CastSI32F64": float, "CastUI32F64": lambda a: float(a & M32),
        "CastSI64F64": float, "CastUI64F64": lambda a: float(a & M64),
        # IREE calls the float lroundf/llroundf on the double: the value goes through f32 first.
        "CastF64SI32": lambda a: _lround64(_to_f32(a)),
        "CastF64UI32": lambda a: _lround64(_to_f32(a)),
        "CastF64SI64": _lround64, "CastF64UI64": lambda a: _lround64(a) & M64,
        "BitcastI32F32": lambda a: a, "BitcastF32I32": lambda a: a,
        "BitcastI64F64": lambda a: a, "BitcastF64I64": lambda a: a,
    })
    ops.update(_math_ops())
    for symbol, template in PURE_EXPRESSIONS.items():
        names = ("a", "b", "c")[:len(set(re.findall(r"\{(\d)\}", template)))]
        ops[symbol] = eval(f"lambda {', '.join(names)}: {template.format(*names)}",  # noqa: S307
                           dict(PURE_NAMES))
    return ops


def _pure_expressions() -> dict[str, str]:
    """The pure ops that are one Python expression of their operand values ({0}, {1}): the block
    compiler writes them inline, and PURE_OPS' functions are made from the same text."""
    out: dict[str, str] = {}
    for t in ("I32", "I64"):
        out.update({f"Add{t}": "{0} + {1}", f"Sub{t}": "{0} - {1}", f"Mul{t}": "{0} * {1}",
                    f"Not{t}": "~{0}", f"And{t}": "{0} & {1}", f"Or{t}": "{0} | {1}",
                    f"Xor{t}": "{0} ^ {1}", f"CmpEQ{t}": "int({0} == {1})",
                    f"CmpNE{t}": "int({0} != {1})", f"CmpLT{t}S": "int({0} < {1})",
                    f"CmpNZ{t}": "int({0} != 0)",
                    f"Min{t}S": "({1} if {1} < {0} else {0})", f"Max{t}S": "({1} if {0} < {1} else {0})"})
    w = {"I32": 31, "I64": 63}
    for t in ("I32", "I64"):
        out.update({f"Shl{t}": "{0} << ({1} & %d)" % w[t], f"Shr{t}S": "{0} >> ({1} & %d)" % w[t]})
    for t in ("F32", "F64"):
        out.update({f"Add{t}": "{0} + {1}", f"Sub{t}": "{0} - {1}", f"Mul{t}": "{0} * {1}",
                    f"CmpEQ{t}O": "int({0} == {1})", f"CmpNE{t}O": "int({0} != {1})",
                    f"CmpLT{t}O": "int({0} < {1})", f"CmpLTE{t}O": "int({0} <= {1})"})
    for t in ("F32", "F64"):
        # Unordered compares: true when either operand is a NaN, which no ordered test passes.
        out.update({f"CmpLT{t}U": "int(not {0} >= {1})", f"CmpLTE{t}U": "int(not {0} > {1})",
                    f"CmpEQ{t}U": "int(not ({0} < {1} or {0} > {1}))", f"CmpNE{t}U": "int({0} != {1})",
                    f"CmpNaN{t}": "int({0} != {0})",
                    # Python raises on a zero divisor: fdiv gives IEEE's answer there
                    f"Div{t}": "({0} / {1} if {1} else fdiv({0}, {1}))"})
    out.update({"TruncI64I32": "{0}", "ExtI32I64S": "{0}", "ExtI32I64U": "{0} & %d" % M32,
                "FMAI32": "{0} * {1} + {2}", "FMAI64": "{0} * {1} + {2}", "FMAF64": "{0} * {1} + {2}",
                # Two roundings: C's a * b + c in float without FP_FAST_FMAF (the product of two
                # f32 is exact in a double; rounded to f32, added, the sum rounded by the writer).
                "FMAF32": "f32r({0} * {1}) + {2}"})
    return out


# The names PURE_EXPRESSIONS' texts use besides their operands (generated code binds them too).
PURE_NAMES = {"fdiv": _fdiv, "f32r": _to_f32}


PURE_EXPRESSIONS = _pure_expressions()
PURE_OPS = _pure_ops()
# f32 ops whose function is the C library's float function (ctypes returns the C float as a Python
# float): the value is an f32 already, which the writer's rounding would leave as it is.
EXACT_F32_OPS = frozenset(stem + "F32" for stem in _MATH
                          if getattr(PURE_OPS[stem + "F32"], "restype", None) is ctypes.c_float)
# Bitcasts and sign-bit ops move raw bits: their registers are read and written as integers.
RAW_BANKS = {"BitcastI32F32": ("b32", "b32"), "BitcastF32I32": ("b32", "b32"),
              "BitcastI64F64": ("b64", "b64"), "BitcastF64I64": ("b64", "b64")}
SIGN_BIT_OPS = {"AbsF32": (32, 0x7FFFFFFF, 0), "NegF32": (32, M32, 0x80000000),
                 "AbsF64": (64, (1 << 63) - 1, 0), "NegF64": (64, M64, 1 << 63)}


F32_QUIET_BIT = 0x400000  # an f32 NaN's quiet bit: a quiet NaN's bits survive a Python float, a signaling one's not


def is_snan32(bits: int) -> bool:
    """An f32 signaling NaN: all exponent bits set, quiet bit clear, some other mantissa bit set.
    Reading one into a Python float quiets it, so the few ops that can tell need the raw bits."""
    return bits & 0x7FC00000 == 0x7F800000 and bits & 0x003FFFFF != 0
