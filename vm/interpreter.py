"""A Python interpreter for IREE VM bytecode modules (the subset iree-compile emits).

`Context(module, imports=...)` loads a `.vmfb` (path, bytes or `vm.module_file.ModuleFile`), decodes
and verifies every function, resolves imports, allocates the module state (a globals byte blob of
`global_bytes_capacity` plus `global_ref_count` ref slots) and runs the `__init` export; then
`invoke(name, *args) -> list` calls exports, keeping the state across calls.

Semantics follow runtime/src/iree/vm/bytecode/dispatch.c and vm/ops.h:

- a frame has an i32 register bank (a byte array; i64/f64 values occupy two consecutive registers,
  f32 shares the i32 bits) and a ref bank (Python objects, None for null); the MOVE bit on a ref
  operand moves the value out of the source register;
- calls place arguments as the callee's calling convention lays them out (i32/f32 one register each,
  i64/f64 on the next even register, refs in order) and copy results back by the same widths; this
  is what IREE 3.13 does (its register lists carry one entry per value);
- branch operand lists are (src, dst) 32-bit register copies done in order, as IREE does them (the
  compiler splits 64-bit values into two pairs and is meant to order the pairs hazard-free; 3.13
  does not always, see tests/programs/host/calls.mlir @doubling, and in-order copying reproduces
  what the native runtime computes); vm.switch.i64 selects one 32-bit register and sign-extends it,
  as dispatch.c does;
- integer division by zero and INT_MIN / -1 are undefined in IREE's C and kill iree-run-module with
  SIGFPE on x86-64; here they raise `VmTrapError`;
- float ops round to f32 after each op; f32 fma is the two-rounding `a * b + c` (no FP_FAST_FMAF on
  x86-64); float -> int casts round half away from zero (lroundf/llroundf), and out-of-range or NaN
  inputs give what x86-64 gives (INT64_MIN truncated to the result width); math functions come from
  the C library through ctypes, bound to the glibc symbol versions the IREE runtime links;
- buffer ops check bounds with IREE's host-size arithmetic (64-bit, wrapping) and report its
  OUT_OF_RANGE / PERMISSION_DENIED / INVALID_ARGUMENT statuses; an access IREE's check lets through
  (wrapped offsets) that would fall outside the buffer is a `VmTrapError` instead of a stray access.

Buffers are behind one small interface (`ByteBuffer`, `BufferFactory`): a buffer exposes `data`, a
memoryview that is writable unless the buffer is read-only (rodata), `mutable` and its length; the
factory makes them (alloc, clone, rodata) and derefs ref values into them. The real VM buffers of
`ireeabi.vm.buffer` can replace these through a BufferFactory subclass.

Imports go through an `ImportResolver`: `call(full_name, cconv, args) -> results`, with arguments
and results flattened in cconv order and each span (`C...D`) passed as a list of tuples, one per
element (segment sizes of variadic calls give the element counts).

Not modelled: yields/coroutines (vm.yield, vm.call.yieldable), ref type checks on typed ref ops,
IREE's exact stack-size limit (a frame-depth limit instead), debug tracing.
"""
from __future__ import annotations

import abc
import ctypes
import ctypes.util
import math
import os
import struct
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence, Union

from ..abi.errors import IreeAbiError, UnknownNameError
from . import isa
from .decoder import (DecodeError, Instruction, Register, UnsupportedOpError, decode_function,
                      function_bytecode, function_names)
from .module_file import ExportedFunction, ModuleFile, read_module, rodata_bytes
from .status import STATUS_CODE_MASK, Status, StatusCode, StatusError

HOST_SIZE_BITS = 64  # iree_host_size_t on the x86-64/aarch64 hosts IREE runs on here
_HOST_MASK = (1 << HOST_SIZE_BITS) - 1
M32 = 0xFFFFFFFF
M64 = 0xFFFFFFFFFFFFFFFF
DEFAULT_MAX_DEPTH = 1024  # frames; IREE limits the stack by bytes instead
DEFAULT_MAX_ALLOCATION = 1 << 30


# ==================================================================================================
# Errors


class VmError(IreeAbiError):
    """A failure while running bytecode; names the function and pc when known, and the callers."""

    def __init__(self, message: str, function: str | None = None, pc: int | None = None) -> None:
        self.message = message
        self.function = function
        self.pc = pc
        self.stack: tuple[tuple[str, int], ...] = ()  # callers, innermost first
        super().__init__(message)

    def locate(self, function: str, pc: int, stack: Sequence[tuple[str, int]] = ()) -> "VmError":
        if self.function is None:
            self.function, self.pc, self.stack = function, pc, tuple(stack)
        return self

    def __str__(self) -> str:
        text = self.message
        if self.function is not None:
            text += f" (in {self.function} at pc 0x{self.pc:X}"
            for name, pc in self.stack:
                text += f", called from {name} at pc 0x{pc:X}"
            text += ")"
        return text


class VmTrapError(VmError):
    """What would crash or abort the native runtime: integer division by zero, signed division
    overflow, running off the end of a function, an access outside a buffer that IREE's wrapping
    bounds check lets through."""


class VmStatusError(VmError):
    """A failing iree_status_t the runtime would return (bounds, null refs, import failures...)."""

    def __init__(self, code: "StatusCode | int", message: str, function: str | None = None,
                 pc: int | None = None) -> None:
        self.code = _status_code(code)
        super().__init__(f"{self.code.name}; {message}", function, pc)
        self.detail = message

    @property
    def status(self) -> Status:
        return Status(self.code, self.detail)


class VmFailError(VmStatusError):
    """vm.fail with a nonzero status: the program's own failure (`code`, `detail` = its message)."""


class BytecodeVerifyError(DecodeError):
    """A function that decodes but that IREE's bytecode verifier would reject."""


class ImportResolutionError(IreeAbiError):
    """A required import no resolver provides."""

    def __init__(self, full_name: str, reason: str) -> None:
        self.full_name = full_name
        super().__init__(f"import {full_name}: {reason}")


class ArgumentError(IreeAbiError):
    """Arguments to `Context.invoke` (or import results) that do not match the cconv."""


def _status_code(code: "StatusCode | int") -> StatusCode:
    code = int(code) & STATUS_CODE_MASK
    try:
        return StatusCode(code)
    except ValueError:  # codes IREE does not name still travel as numbers
        return StatusCode.UNKNOWN


# ==================================================================================================
# Buffers, lists: the minimal objects refs point at


class ByteBuffer:
    """The interpreter's view of a vm.buffer: `data` is a memoryview over its bytes, writable unless
    `mutable` is False (rodata)."""

    __slots__ = ("data", "mutable", "alignment", "origin")

    def __init__(self, data: Union[bytes, bytearray, memoryview], mutable: bool | None = None,
                 alignment: int = 0, origin: str = "") -> None:
        view = data if isinstance(data, memoryview) else memoryview(data)
        if mutable is None:
            mutable = not view.readonly
        if mutable and view.readonly:
            raise ValueError("a mutable ByteBuffer needs writable memory")
        self.data = view.cast("B") if view.format != "B" or view.ndim != 1 else view
        if not mutable and not self.data.readonly:
            self.data = self.data.toreadonly()
        self.mutable = mutable
        self.alignment = alignment
        self.origin = origin

    def __len__(self) -> int:
        return self.data.nbytes

    def tobytes(self) -> bytes:
        return self.data.tobytes()

    def __repr__(self) -> str:
        kind = "mutable" if self.mutable else "read-only"
        return f"ByteBuffer({len(self)} B, {kind}{', ' + self.origin if self.origin else ''})"


class BufferFactory:
    """The one place that knows what a buffer is: makes the buffers the interpreter hands out and
    turns ref register values back into buffers. Buffer ops use only `data` (a memoryview),
    `mutable` and `len()` of what `deref` returns; a subclass can substitute ireeabi.vm.buffer's VM
    buffers for ByteBuffer."""

    def __init__(self, max_allocation: int = DEFAULT_MAX_ALLOCATION) -> None:
        self.max_allocation = max_allocation

    def allocate(self, length: int, alignment: int) -> ByteBuffer:
        """A zeroed mutable buffer (vm.buffer.alloc / clone targets)."""
        if length > self.max_allocation:
            raise VmStatusError(StatusCode.RESOURCE_EXHAUSTED,
                                f"buffer allocation of {length} bytes exceeds the interpreter's "
                                f"limit of {self.max_allocation}")
        return ByteBuffer(bytearray(length), True, alignment, "alloc")

    def wrap_rodata(self, ordinal: int, data: bytes) -> ByteBuffer:
        """The read-only buffer vm.const.ref.rodata returns for segment `ordinal`."""
        return ByteBuffer(bytes(data), False, 0, f"rodata[{ordinal}]")

    def deref(self, value: Any) -> ByteBuffer | None:
        """The buffer a ref register holds, or None (null or not a buffer: iree_vm_buffer_deref)."""
        return value if isinstance(value, ByteBuffer) else None


# Value types of list elements and their byte widths (vm/list.c stores them packed).
_VALUE_TYPES = {"i8": 1, "i16": 2, "i32": 4, "i64": 8, "f32": 4, "f64": 8}


class VmList:
    """vm.list; `element_type` is the name inside `!vm.list<...>` (`i32`, `!vm.buffer`, `?`)."""

    __slots__ = ("element_type", "items", "capacity")

    def __init__(self, element_type: str, capacity: int = 0) -> None:
        self.element_type = element_type
        self.items: list = []  # values: (value type, raw int bits); refs: objects
        self.capacity = capacity

    @property
    def holds_values(self) -> bool:
        return self.element_type in _VALUE_TYPES

    @property
    def is_variant(self) -> bool:
        return self.element_type == "?"

    def __len__(self) -> int:
        return len(self.items)

    def __repr__(self) -> str:
        return f"VmList<{self.element_type}>({len(self.items)} items)"


def _list_element_type(type_name: str) -> str:
    if type_name.startswith("!vm.list<") and type_name.endswith(">"):
        return type_name[len("!vm.list<"):-1]
    return type_name


def _convert_list_value(src_type: str, bits: int, dst_type: str) -> int:
    """iree_vm_list_convert_value_type on raw bits: integer widths convert as C casts, f32<->f64
    convert, every other pair yields zero bits."""
    if src_type == dst_type:
        return bits
    widths = {"i8": 8, "i16": 16, "i32": 32, "i64": 64}
    if src_type in widths and dst_type in widths:
        w = widths[src_type]
        value = bits & ((1 << w) - 1)
        if value >> (w - 1):
            value -= 1 << w
        return value & ((1 << widths[dst_type]) - 1)
    if src_type == "f32" and dst_type == "f64":
        return _f64_bits(_from_f32_bits(bits))
    if src_type == "f64" and dst_type == "f32":
        return _f32_bits(_from_f64_bits(bits))
    return 0


# ==================================================================================================
# Imports


class ImportResolver(abc.ABC):
    """Native (or other) modules the bytecode imports from."""

    @abc.abstractmethod
    def call(self, full_name: str, cconv: str, args: list) -> list:
        """Call `full_name` (`module.function`) with `args` flattened per `cconv`'s arguments (spans
        as lists of per-element tuples); return its results flattened per the cconv's results."""

    def resolves(self, full_name: str, cconv: str | None) -> bool:
        """Whether `call` can serve this import (checked when a Context is created)."""
        return True


class FunctionImports(ImportResolver):
    """Imports served by Python callables: full_name -> fn(*args) -> list of results."""

    def __init__(self, functions: Mapping[str, Callable[..., Sequence]]) -> None:
        self.functions = dict(functions)

    def resolves(self, full_name: str, cconv: str | None) -> bool:
        return full_name in self.functions

    def call(self, full_name: str, cconv: str, args: list) -> list:
        return list(self.functions[full_name](*args))


class ContextImports(ImportResolver):
    """Imports served by the exports of other interpreter Contexts, found by module name."""

    def __init__(self, *contexts: "Context") -> None:
        self.contexts = {c.module.name: c for c in contexts}

    def _target(self, full_name: str) -> "tuple[Context, str] | None":
        module, _, function = full_name.partition(".")
        ctx = self.contexts.get(module)
        if ctx is None or not any(e.name == function for e in ctx.module.exported_functions):
            return None
        return ctx, function

    def resolves(self, full_name: str, cconv: str | None) -> bool:
        return self._target(full_name) is not None

    def call(self, full_name: str, cconv: str, args: list) -> list:
        ctx, function = self._target(full_name)
        return ctx.invoke(function, *args)


# ==================================================================================================
# Numerics (vm/ops.h semantics on an x86-64 host)

_I32 = struct.Struct("<i")
_U32 = struct.Struct("<I")
_I64 = struct.Struct("<q")
_U64 = struct.Struct("<Q")
_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")


def _s32(x: int) -> int:
    x &= M32
    return x - (1 << 32) if x & 0x80000000 else x


def _s64(x: int) -> int:
    x &= M64
    return x - (1 << 64) if x >> 63 else x


def _to_f32(x: float) -> float:
    """x rounded to the nearest f32 (overflow to infinity), as a Python float."""
    try:
        return _F32.unpack(_F32.pack(x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def _f32_bits(x: float) -> int:
    try:
        return _U32.unpack(_F32.pack(x))[0]
    except OverflowError:
        return _U32.unpack(_F32.pack(math.copysign(math.inf, x)))[0]


def _f64_bits(x: float) -> int:
    return _U64.unpack(_F64.pack(x))[0]


def _from_f32_bits(bits: int) -> float:
    return _F32.unpack(_U32.pack(bits & M32))[0]


def _from_f64_bits(bits: int) -> float:
    return _F64.unpack(_U64.pack(bits & M64))[0]


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
    """roundf/round: halfway cases away from zero; keeps the sign of zero and non-finite values."""
    if not math.isfinite(x):
        return x
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
        return x
    r = float(math.ceil(x))
    return math.copysign(r, x) if r == 0 else r


def _floor(x: float) -> float:
    if not math.isfinite(x):
        return x
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
            return a
        if a == 0.0:
            return _DEFAULT_NAN
        sign = math.copysign(1.0, a) * math.copysign(1.0, b)
        return math.copysign(math.inf, sign)
    return a / b


# The C math library provides the transcendental functions, bound to the same symbol versions the
# iree-base-runtime 3.13 wheels link (glibc 2.28 baseline): exp/exp2/log/log2/pow of that era are
# the SVID-compatible wrappers (log(-1) is +NaN there, -NaN in the 2.29 default). Python's math is
# the fallback where ctypes cannot load libm.
def _load_libm():
    name = ctypes.util.find_library("m")
    try:
        return ctypes.CDLL(name) if name else None
    except OSError:  # pragma: no cover (platform without a loadable libm)
        return None


_LIBM = _load_libm()
# name -> symbol versions to try (x86-64, aarch64 base versions) before the default symbol.
_LINKED_VERSIONS = {name: (b"GLIBC_2.2.5", b"GLIBC_2.17")
                    for name in ("exp", "exp2", "log", "log2", "pow")}


def _dlvsym():
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


_MATH = {  # op stem -> (libm f32 name, libm f64 name, arity, Python fallback)
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


def _unord(a: float, b: float) -> bool:
    return math.isnan(a) or math.isnan(b)


def _pure_ops() -> dict[str, Callable]:
    """Op symbol -> function of the operand values (read per the encoding's register banks) giving
    the result value (wrapped / rounded when written to the result register)."""
    u32 = lambda x: x & M32  # noqa: E731
    u64 = lambda x: x & M64  # noqa: E731
    ops: dict[str, Callable] = {}
    for w, u, s in ((32, u32, _s32), (64, u64, _s64)):
        t = f"I{w}"
        ops.update({
            f"Add{t}": lambda a, b: a + b, f"Sub{t}": lambda a, b: a - b,
            f"Mul{t}": lambda a, b: a * b,
            f"Div{t}S": lambda a, b, w=w: _c_div(a, b, w, True, f"div.i{w}.s"),
            f"Div{t}U": lambda a, b, w=w, u=u: _c_div(u(a), u(b), w, False, f"div.i{w}.u"),
            f"Rem{t}S": lambda a, b, w=w: _c_rem(a, b, w, True, f"rem.i{w}.s"),
            f"Rem{t}U": lambda a, b, w=w, u=u: _c_rem(u(a), u(b), w, False, f"rem.i{w}.u"),
            f"FMA{t}": lambda a, b, c: a * b + c, f"Abs{t}": abs,
            f"Min{t}S": lambda a, b: b if b < a else a,
            f"Min{t}U": lambda a, b, u=u: b if u(b) < u(a) else a,
            f"Max{t}S": lambda a, b: b if a < b else a,
            f"Max{t}U": lambda a, b, u=u: b if u(a) < u(b) else a,
            f"Not{t}": lambda a: ~a, f"And{t}": lambda a, b: a & b,
            f"Or{t}": lambda a, b: a | b, f"Xor{t}": lambda a, b: a ^ b,
            f"Ctlz{t}": lambda a, w=w: _ctlz(a, w),
            f"Shl{t}": lambda a, n, w=w: a << (n & (w - 1)),
            f"Shr{t}S": lambda a, n, w=w: a >> (n & (w - 1)),
            f"Shr{t}U": lambda a, n, w=w, u=u: u(a) >> (n & (w - 1)),
            f"CmpEQ{t}": lambda a, b: int(a == b), f"CmpNE{t}": lambda a, b: int(a != b),
            f"CmpLT{t}S": lambda a, b: int(a < b),
            f"CmpLT{t}U": lambda a, b, u=u: int(u(a) < u(b)),
            f"CmpNZ{t}": lambda a: int(a != 0),
        })
    ops.update({
        "TruncI32I8": lambda a: a & 0xFF, "TruncI32I16": lambda a: a & 0xFFFF,
        "ExtI8I32S": lambda a: ((a & 0xFF) ^ 0x80) - 0x80, "ExtI8I32U": lambda a: a & 0xFF,
        "ExtI16I32S": lambda a: ((a & 0xFFFF) ^ 0x8000) - 0x8000,
        "ExtI16I32U": lambda a: a & 0xFFFF,
        "TruncI64I32": lambda a: a, "ExtI32I64S": lambda a: a, "ExtI32I64U": lambda a: a & M32,
    })
    for t in ("F32", "F64"):
        ops.update({
            f"Add{t}": lambda a, b: a + b, f"Sub{t}": lambda a, b: a - b,
            f"Mul{t}": lambda a, b: a * b, f"Div{t}": _fdiv,
            f"Ceil{t}": _ceil, f"Floor{t}": _floor, f"Round{t}": _round_away,
            f"Min{t}": lambda a, b: b if b < a else a, f"Max{t}": lambda a, b: b if a < b else a,
            f"CmpEQ{t}O": lambda a, b: int(a == b),
            f"CmpEQ{t}U": lambda a, b: int(_unord(a, b) or a == b),
            f"CmpNE{t}O": lambda a, b: int(a != b),
            f"CmpNE{t}U": lambda a, b: int(_unord(a, b) or a != b),
            f"CmpLT{t}O": lambda a, b: int(a < b),
            f"CmpLT{t}U": lambda a, b: int(_unord(a, b) or a < b),
            f"CmpLTE{t}O": lambda a, b: int(a <= b),
            f"CmpLTE{t}U": lambda a, b: int(_unord(a, b) or a <= b),
            f"CmpNaN{t}": lambda a: int(math.isnan(a)),
        })
    ops.update({
        # Two roundings: C's a * b + c in float without FP_FAST_FMAF.
        "FMAF32": lambda a, b, c: _to_f32(a * b) + c,
        "FMAF64": lambda a, b, c: a * b + c,
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
    return ops


PURE_OPS = _pure_ops()
# Bitcasts and sign-bit ops move raw bits: their registers are read and written as integers.
_RAW_BANKS = {"BitcastI32F32": ("b32", "b32"), "BitcastF32I32": ("b32", "b32"),
              "BitcastI64F64": ("b64", "b64"), "BitcastF64I64": ("b64", "b64")}
_SIGN_BIT_OPS = {"AbsF32": (32, 0x7FFFFFFF, 0), "NegF32": (32, M32, 0x80000000),
                 "AbsF64": (64, (1 << 63) - 1, 0), "NegF64": (64, M64, 1 << 63)}


# ==================================================================================================
# Registers

_READ = {"i32": _I32, "i64": _I64, "f32": _F32, "f64": _F64, "b32": _U32, "b64": _U64}
_SIZES = {"i32": 4, "i64": 8, "f32": 4, "f64": 8, "b32": 4, "b64": 8}


def _write_i32(regs: bytearray, off: int, v: int) -> None:
    _U32.pack_into(regs, off, v & M32)


def _write_i64(regs: bytearray, off: int, v: int) -> None:
    _U64.pack_into(regs, off, v & M64)


def _write_f32(regs: bytearray, off: int, v: float) -> None:
    try:
        _F32.pack_into(regs, off, v)
    except OverflowError:
        _F32.pack_into(regs, off, math.copysign(math.inf, v))


def _write_f64(regs: bytearray, off: int, v: float) -> None:
    _F64.pack_into(regs, off, v)


_WRITE = {"i32": _write_i32, "i64": _write_i64, "f32": _write_f32, "f64": _write_f64,
          "b32": _write_i32, "b64": _write_i64}


class _Frame:
    __slots__ = ("fn", "ip", "regs", "refs", "return_regs")

    def __init__(self, fn: "_Function") -> None:
        self.fn = fn
        self.ip = 0
        self.regs = bytearray(4 * fn.i32_count)
        self.refs: list = [None] * fn.ref_count
        self.return_regs: tuple[Register, ...] = ()  # where a pending call's results go


def _take_ref(refs: list, reg: Register):
    """Read a ref operand, moving it out of its register when the MOVE bit is set."""
    value = refs[reg.ordinal]
    if reg.move:
        refs[reg.ordinal] = None
    return value


def _move_ref(src: list, reg: Register, dst: list, dst_ordinal: int) -> None:
    """iree_vm_ref_retain_or_move between registers (a move onto itself changes nothing)."""
    value = src[reg.ordinal]
    if reg.move and not (src is dst and reg.ordinal == dst_ordinal):
        src[reg.ordinal] = None
    dst[dst_ordinal] = value


# ==================================================================================================
# Preparation: decode + verify each function once


@dataclass
class _Function:
    ordinal: int
    name: str
    i32_count: int
    ref_count: int
    requirements: int
    cconv_args: str | None
    cconv_results: str | None
    instructions: list[Instruction]
    code: list = field(default_factory=list)  # (handler, payload, instruction)
    block_index: dict[int, int] = field(default_factory=dict)  # block pc -> index after marker


def _cconv_fragments(cconv: str | None) -> tuple[str | None, str | None]:
    if cconv is None:
        return None, None
    body = cconv[1:]
    args, _, results = body.partition("_")
    return args.replace("v", ""), results.replace("v", "")


def _value_chars(fragment: str) -> list[str]:
    return [c for c in fragment if c in "iIfFr"]


# ==================================================================================================
# The context


class Context:
    """One module instance: its state (globals) lives across `invoke` calls."""

    def __init__(self, module: "ModuleFile | str | os.PathLike | bytes", imports:
                 ImportResolver | None = None, *, buffers: BufferFactory | None = None,
                 max_depth: int = DEFAULT_MAX_DEPTH, run_init: bool = True) -> None:
        self.module = module if isinstance(module, ModuleFile) else read_module(module)
        self.imports = imports
        self.buffers = buffers if buffers is not None else BufferFactory()
        self.max_depth = max_depth
        m = self.module
        self.rwdata = bytearray(max(m.global_bytes_capacity, 0))
        self.global_refs: list = [None] * max(m.global_ref_count, 0)
        self._rodata = [self.buffers.wrap_rodata(s.ordinal, rodata_bytes(s))
                        for s in m.rodata_segments]
        self._resolved = self._resolve_imports()
        names = function_names(m)
        self._functions = [self._prepare(i, names[i]) for i in range(len(m.function_descriptors))]
        if run_init and any(e.name == "__init" for e in m.exported_functions):
            self.invoke("__init")

    # ---------------------------------------------------------------------------------- public API

    def exported(self, name: str) -> ExportedFunction:
        for e in self.module.exported_functions:
            if e.name == name:
                return e
        raise UnknownNameError("exported function", name,
                               [e.name for e in self.module.exported_functions])

    def invoke(self, function_name: str, *args: Any) -> list:
        """Call an export with Python values (ints, floats, refs) per its cconv; return results."""
        export = self.exported(function_name)
        fn = self._functions[export.internal_ordinal]
        if fn.cconv_args is None:
            raise ArgumentError(f"export {function_name!r} has no calling convention")
        if any(c in fn.cconv_args for c in "CD"):
            raise ArgumentError(f"export {function_name!r} takes spans ({export.cconv}); "
                                f"bytecode functions cannot")
        chars = _value_chars(fn.cconv_args)
        if len(args) != len(chars):
            raise ArgumentError(f"{function_name} takes {len(chars)} argument(s) "
                                f"({export.cconv}), got {len(args)}")
        frame = _Frame(fn)
        i32_reg = ref_reg = 0
        for index, (char, value) in enumerate(zip(chars, args)):
            what = f"{function_name} argument {index}"
            if char == "r":
                frame.refs[ref_reg] = value
                ref_reg += 1
                continue
            if char in "IF":
                i32_reg += i32_reg & 1
            _store_value(frame.regs, 4 * i32_reg, char, value, what)
            i32_reg += 2 if char in "IF" else 1
        return self._execute(frame)

    # --------------------------------------------------------------------------------- preparation

    def _resolve_imports(self) -> list[bool]:
        resolved = []
        for imp in self.module.imported_functions:
            ok = self.imports is not None and self.imports.resolves(imp.full_name, imp.cconv)
            if not ok and not imp.optional:
                why = ("no import resolver given" if self.imports is None
                       else "the resolver does not provide it")
                raise ImportResolutionError(imp.full_name, f"required import not resolved ({why})")
            resolved.append(ok)
        return resolved

    def _prepare(self, ordinal: int, name: str) -> _Function:
        m = self.module
        d = m.function_descriptors[ordinal]
        args, results = _cconv_fragments(m.function_signatures[ordinal].cconv)
        insts = decode_function(function_bytecode(m, ordinal), name)
        fn = _Function(ordinal, name, d.i32_register_count, d.ref_register_count, d.requirements,
                       args, results, insts)
        for i, inst in enumerate(insts):
            if inst.is_block:
                fn.block_index[inst.pc] = i + 1
        if args is not None:
            need_i32, need_refs = _cconv_register_counts(args)
            if need_i32 > fn.i32_count or need_refs > fn.ref_count:
                cconv = m.function_signatures[ordinal].cconv
                raise BytecodeVerifyError(
                    f"insufficient register storage for the arguments ({cconv}: {need_i32} i32 / "
                    f"{need_refs} ref registers needed, {fn.i32_count} / {fn.ref_count} declared)",
                    0, name)
        for inst in insts:
            try:
                self._verify(fn, inst)
                handler, payload = _compile(self, fn, inst)
            except BytecodeVerifyError as e:
                raise e.in_function(name) from None
            fn.code.append((handler, payload, inst))
        return fn

    def _verify(self, fn: _Function, inst: Instruction) -> None:
        m = self.module

        def fail(reason: str) -> None:
            raise BytecodeVerifyError(f"vm.{inst.mnemonic}: {reason}", inst.pc)

        feature = isa.SET_FEATURE_BITS.get(inst.op.opcode_set)
        if feature is not None and not fn.requirements & feature:
            fail(f"{inst.op.opcode_set} op in a function that does not declare that requirement")

        def check_reg(reg: Register, bank: str) -> None:
            if reg.is_ref:
                if reg.ordinal >= fn.ref_count:
                    fail(f"ref register {reg.ordinal} out of range ({fn.ref_count} ref registers)")
            elif bank in (isa.I64, isa.F64):
                if reg.ordinal & 1:
                    fail(f"{bank} register %i{reg.ordinal} is not 8-byte aligned")
                if reg.ordinal + 1 >= fn.i32_count:
                    fail(f"{bank} register %i{reg.ordinal}:{reg.ordinal + 1} out of range "
                         f"({fn.i32_count} i32 registers)")
            elif reg.ordinal >= fn.i32_count:
                fail(f"register %i{reg.ordinal} out of range ({fn.i32_count} i32 registers)")

        def check_target(pc: int) -> None:
            if pc not in fn.block_index:
                fail(f"branch target pc 0x{pc:X} is not a block in the function")

        for f in inst.op.fields:
            value = inst.operands[f.name]
            if f.kind in isa.REGISTER_KINDS:
                check_reg(value, f.kind)
            elif f.kind == isa.REG_LIST and f.name != "segment_sizes":
                for reg in value:
                    check_reg(reg, reg.bank)
            elif f.kind == isa.BRANCH_OPERANDS:
                for pair in value:
                    check_reg(pair.src, pair.src.bank)
                    check_reg(pair.dst, pair.dst.bank)
            elif f.kind == isa.BRANCH_TARGET:
                check_target(value)
            elif f.kind == isa.BRANCH_TABLE_CASES:
                for case in value:
                    check_target(case.dest)
                    for pair in case.operands:
                        check_reg(pair.src, pair.src.bank)
                        check_reg(pair.dst, pair.dst.bank)
            elif f.kind == isa.RODATA and value >= len(m.rodata_segments):
                fail(f"rodata ordinal {value} out of range ({len(m.rodata_segments)} segments)")
            elif f.kind == isa.TYPE and value >= len(m.types):
                fail(f"type id {value} out of range ({len(m.types)} types)")
            elif f.kind == isa.FUNC:
                if value & isa.FUNCTION_ORDINAL_IMPORT_BIT:
                    if value & ~isa.FUNCTION_ORDINAL_IMPORT_BIT >= len(m.imported_functions):
                        fail(f"import ordinal {value & 0x7FFFFFFF} out of range")
                elif value >= len(m.function_descriptors):
                    fail(f"function ordinal {value} out of range")
            elif f.kind == isa.GLOBAL:
                size = _global_size(inst.op)
                if size is None:
                    if value >= len(self.global_refs):
                        fail(f"ref global ordinal {value} out of range "
                             f"({len(self.global_refs)} ref globals)")
                elif value + size > len(self.rwdata):
                    fail(f"global byte offset {value} (+{size}) out of range "
                         f"({len(self.rwdata)} bytes of globals)")

    # ----------------------------------------------------------------------------------- execution

    def _execute(self, frame: _Frame) -> list:
        stack = [frame]
        while True:
            code = frame.fn.code
            ip = frame.ip
            if ip >= len(code):
                err = VmTrapError("execution ran past the end of the function")
                raise err.locate(frame.fn.name, _end_pc(frame.fn), _callers(stack))
            handler, payload, inst = code[ip]
            frame.ip = ip + 1
            try:
                out = handler(self, frame, payload)
            except VmError as e:
                raise e.locate(frame.fn.name, inst.pc, _callers(stack)) from None
            except UnsupportedOpError as e:
                raise e.in_function(frame.fn.name) from None
            if out is None:
                continue
            if out is _RETURN:
                stack.pop()
                results = payload
                if not stack:
                    return _leave_external(frame, results)
                caller = stack[-1]
                _leave_internal(frame, results, caller)
                frame = caller
                continue
            if len(stack) >= self.max_depth:
                err = VmStatusError(StatusCode.RESOURCE_EXHAUSTED,
                                    f"call depth exceeds {self.max_depth} frames")
                raise err.locate(frame.fn.name, inst.pc, _callers(stack))
            stack.append(out)
            frame = out

    # Used by handlers -----------------------------------------------------------------------------

    def _call_import(self, frame: _Frame, ordinal: int, segment_sizes: Sequence[int] | None,
                     operands: tuple[Register, ...], results: tuple[Register, ...]) -> None:
        imp = self.module.imported_functions[ordinal]
        if not self._resolved[ordinal]:
            raise VmStatusError(StatusCode.NOT_FOUND, f"optional import `{imp.full_name}` "
                                f"(ordinal {ordinal}) not resolved")
        args_cc, results_cc = _cconv_fragments(imp.cconv)
        if args_cc is None:
            raise VmStatusError(StatusCode.INVALID_ARGUMENT,
                                f"import {imp.full_name} has no calling convention")
        args = _gather_import_args(frame, args_cc, segment_sizes, operands, imp.full_name)
        try:
            out = self.imports.call(imp.full_name, imp.cconv, args)
        except VmError:
            raise
        except StatusError as e:  # a native module's failing status
            raise VmStatusError(e.code, f"{e.message}; while calling import "
                                f"{imp.full_name}") from e
        chars = _value_chars(results_cc)
        out = list(out) if out is not None else []
        if len(out) != len(chars):
            raise VmStatusError(StatusCode.INTERNAL,
                                f"import {imp.full_name} ({imp.cconv}) returned {len(out)} "
                                f"result(s), expected {len(chars)}")
        for i, (char, value, reg) in enumerate(zip(chars, out, results)):
            if char == "r":
                frame.refs[reg.ordinal] = value
            else:
                _store_value(frame.regs, 4 * reg.ordinal, char, value,
                             f"{imp.full_name} result {i}", import_result=True)


_RETURN = object()


def _callers(stack: list) -> list[tuple[str, int]]:
    return [(f.fn.name, f.fn.code[f.ip - 1][2].pc) for f in reversed(stack[:-1])]


def _end_pc(fn: _Function) -> int:
    last = fn.instructions[-1] if fn.instructions else None
    return last.pc + last.length if last else 0


def _global_size(op: isa.OpInfo) -> int | None:
    name = op.symbol
    if name.endswith("Ref"):
        return None
    return 8 if name.endswith(("I64", "F64")) else 4


def _store_value(regs: bytearray, off: int, char: str, value: Any, what: str,
                 import_result: bool = False) -> None:
    """Write a Python value into an i32-bank register per cconv char (i, I, f, F)."""
    def bad(msg: str) -> IreeAbiError:
        return (VmStatusError(StatusCode.INVALID_ARGUMENT, msg) if import_result
                else ArgumentError(msg))

    if char in "iI":
        bits = 32 if char == "i" else 64
        if not isinstance(value, int):  # bool is an int: True -> 1
            raise bad(f"{what}: expected an integer for {char!r}, got {type(value).__name__}")
        if not -(1 << (bits - 1)) <= value < (1 << bits):
            raise bad(f"{what}: {value} does not fit i{bits}")
        (_write_i32 if bits == 32 else _write_i64)(regs, off, int(value))
    else:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise bad(f"{what}: expected a float for {char!r}, got {type(value).__name__}")
        (_write_f32 if char == "f" else _write_f64)(regs, off, float(value))


def _load_value(regs: bytearray, off: int, char: str) -> Any:
    return _READ[{"i": "i32", "I": "i64", "f": "f32", "F": "f64"}[char]].unpack_from(regs, off)[0]


def _gather_import_args(frame: _Frame, cconv: str, segment_sizes: Sequence[int] | None,
                        operands: tuple[Register, ...], name: str) -> list:
    """Flatten the operand registers per the import's argument cconv (spans -> lists of tuples)."""
    out: list = []
    regs = iter(operands)

    def one(char: str):
        reg = next(regs)
        if char == "r":
            return _take_ref(frame.refs, reg)
        return _load_value(frame.regs, 4 * reg.ordinal, char)

    i = seg = 0
    try:
        while i < len(cconv):
            char = cconv[i]
            if char == "C":
                end = cconv.index("D", i)
                if segment_sizes is None:
                    raise VmStatusError(StatusCode.INVALID_ARGUMENT,
                                        f"import {name} is variadic but was called without "
                                        f"segment sizes")
                count = segment_sizes[seg]
                body = cconv[i + 1:end]
                # (list comprehensions: a StopIteration from `one` must not turn into RuntimeError)
                out.append([tuple([one(c) for c in body if c in "iIfFr"]) for _ in range(count)])
                i = end
            elif char in "iIfFr":
                out.append(one(char))
            i += 1
            seg += 1
    except (StopIteration, IndexError):
        raise VmStatusError(StatusCode.INVALID_ARGUMENT,
                            f"operands of the call to {name} do not match its cconv {cconv!r} "
                            f"(segment sizes {segment_sizes})") from None
    return out


def _enter_internal(ctx: Context, caller: _Frame, ordinal: int, operands: tuple[Register, ...],
                    results: tuple[Register, ...]) -> _Frame:
    callee = ctx._functions[ordinal]
    frame = _Frame(callee)
    caller.return_regs = results
    i32_reg = ref_reg = 0
    for char, reg in zip(_value_chars(callee.cconv_args), operands):
        if char == "r":
            _move_ref(caller.refs, reg, frame.refs, ref_reg)
            ref_reg += 1
            continue
        width = 8 if char in "IF" else 4
        if width == 8:
            i32_reg += i32_reg & 1
        src = 4 * reg.ordinal
        frame.regs[4 * i32_reg:4 * i32_reg + width] = caller.regs[src:src + width]
        i32_reg += width // 4
    return frame


def _leave_internal(callee: _Frame, operands: tuple[Register, ...], caller: _Frame) -> None:
    for char, src, dst in zip(_value_chars(callee.fn.cconv_results), operands, caller.return_regs):
        if char == "r":
            _move_ref(callee.refs, src, caller.refs, dst.ordinal)
        else:
            width = 8 if char in "IF" else 4
            caller.regs[4 * dst.ordinal:4 * dst.ordinal + width] = \
                callee.regs[4 * src.ordinal:4 * src.ordinal + width]
    caller.return_regs = ()


def _leave_external(frame: _Frame, operands: tuple[Register, ...]) -> list:
    out = []
    for char, reg in zip(_value_chars(frame.fn.cconv_results), operands):
        if char == "r":
            out.append(_take_ref(frame.refs, reg))
        else:
            out.append(_load_value(frame.regs, 4 * reg.ordinal, char))
    return out


# ==================================================================================================
# Op handlers: handler(ctx, frame, payload) -> None | _Frame (call) | _RETURN

Handler = Callable[[Context, _Frame, Any], Any]
_HANDLERS: dict[str, Callable[[Context, _Function, Instruction], tuple[Handler, Any]]] = {}


def _op(*symbols: str):
    def register(make):
        for s in symbols:
            _HANDLERS[s] = make
        return make
    return register


def _compile(ctx: Context, fn: _Function, inst: Instruction) -> tuple[Handler, Any]:
    """The handler and its precomputed payload for one instruction."""
    symbol = inst.op.symbol
    make = _HANDLERS.get(symbol)
    if make is not None:
        return make(ctx, fn, inst)
    if symbol in _SIGN_BIT_OPS:
        return _make_sign_bit(inst)
    if symbol in PURE_OPS:
        return _make_pure(inst)
    return _unsupported, inst


def _unsupported(ctx: Context, frame: _Frame, inst: Instruction) -> None:
    raise UnsupportedOpError(inst.opcode, inst.pc, inst.prefix, inst.mnemonic)


def _make_pure(inst: Instruction) -> tuple[Handler, Any]:
    banks = _RAW_BANKS.get(inst.op.symbol)
    reads, write = [], None
    for f in inst.op.fields:
        reg = inst.operands[f.name]
        bank = f.kind if banks is None else banks[0 if f.access == isa.READ else 1]
        if f.access == isa.READ:
            reads.append((_READ[bank].unpack_from, 4 * reg.ordinal))
        else:
            write = (_WRITE[bank], 4 * reg.ordinal)
    fn = PURE_OPS[inst.op.symbol]
    writer, woff = write
    if len(reads) == 1:
        (r0, o0), = reads

        def unary(ctx, frame, _):
            regs = frame.regs
            writer(regs, woff, fn(r0(regs, o0)[0]))
        return unary, None
    if len(reads) == 2:
        (r0, o0), (r1, o1) = reads

        def binary(ctx, frame, _):
            regs = frame.regs
            writer(regs, woff, fn(r0(regs, o0)[0], r1(regs, o1)[0]))
        return binary, None

    def nary(ctx, frame, _):
        regs = frame.regs
        writer(regs, woff, fn(*(r(regs, o)[0] for r, o in reads)))
    return nary, None


def _make_sign_bit(inst: Instruction) -> tuple[Handler, Any]:
    bits, and_mask, xor_mask = _SIGN_BIT_OPS[inst.op.symbol]
    s = _U32 if bits == 32 else _U64
    src = 4 * inst.operands["operand"].ordinal
    dst = 4 * inst.operands["result"].ordinal

    def run(ctx, frame, _):
        s.pack_into(frame.regs, dst, (s.unpack_from(frame.regs, src)[0] & and_mask) ^ xor_mask)
    return run, None


def _copy(regs: bytearray, dst: int, src: int, width: int) -> None:
    regs[dst:dst + width] = regs[src:src + width]


# Constants, selects, switches ------------------------------------------------------------------

@_op("ConstI32Zero", "ConstI64Zero", "ConstF32Zero", "ConstF64Zero")
def _make_const_zero(ctx, fn, inst):
    off = 4 * inst.operands["result"].ordinal
    width = 8 if inst.op.symbol in ("ConstI64Zero", "ConstF64Zero") else 4
    zeros = bytes(width)

    def run(ctx, frame, _):
        frame.regs[off:off + width] = zeros
    return run, None


@_op("ConstI32", "ConstI64", "ConstF32", "ConstF64")
def _make_const(ctx, fn, inst):
    bank = inst.op.fields[1].kind
    data = bytearray(_SIZES[bank])
    _WRITE[bank](data, 0, inst.operands["value"])
    data = bytes(data)
    off = 4 * inst.operands["result"].ordinal

    def run(ctx, frame, _):
        frame.regs[off:off + len(data)] = data
    return run, None


@_op("SelectI32", "SelectI64", "SelectF32", "SelectF64")
def _make_select(ctx, fn, inst):
    o = inst.operands
    width = _SIZES[inst.op.fields[1].kind]
    cond = 4 * o["condition"].ordinal
    t, f, dst = 4 * o["true_value"].ordinal, 4 * o["false_value"].ordinal, 4 * o["result"].ordinal

    def run(ctx, frame, _):
        regs = frame.regs
        _copy(regs, dst, t if _I32.unpack_from(regs, cond)[0] else f, width)
    return run, None


@_op("SwitchI32", "SwitchI64", "SwitchF32", "SwitchF64")
def _make_switch(ctx, fn, inst):
    o = inst.operands
    symbol = inst.op.symbol
    width = 8 if symbol in ("SwitchI64", "SwitchF64") else 4
    index, default, dst = (4 * o["index"].ordinal, 4 * o["default_value"].ordinal,
                           4 * o["result"].ordinal)
    values = tuple(4 * r.ordinal for r in o["values"])

    def run(ctx, frame, _):
        regs = frame.regs
        i = _I32.unpack_from(regs, index)[0]
        if 0 <= i < len(values):
            if symbol == "SwitchI64":
                # dispatch.c reads the selected value as one i32 register and sign-extends it.
                _write_i64(regs, dst, _I32.unpack_from(regs, values[i])[0])
            else:
                _copy(regs, dst, values[i], width)
        else:
            _copy(regs, dst, default, width)
    return run, None


# Globals ---------------------------------------------------------------------------------------

@_op("GlobalLoadI32", "GlobalLoadI64", "GlobalLoadF32", "GlobalLoadF64",
     "GlobalStoreI32", "GlobalStoreI64", "GlobalStoreF32", "GlobalStoreF64")
def _make_global(ctx, fn, inst):
    width = _global_size(inst.op)
    at = inst.operands["byte_offset"]
    load = "Load" in inst.op.symbol
    reg = 4 * inst.operands["result" if load else "value"].ordinal

    def run(ctx, frame, _):
        if load:
            frame.regs[reg:reg + width] = ctx.rwdata[at:at + width]
        else:
            ctx.rwdata[at:at + width] = frame.regs[reg:reg + width]
    return run, None


@_op("GlobalLoadIndirectI32", "GlobalLoadIndirectI64", "GlobalLoadIndirectF32",
     "GlobalLoadIndirectF64", "GlobalStoreIndirectI32", "GlobalStoreIndirectI64",
     "GlobalStoreIndirectF32", "GlobalStoreIndirectF64")
def _make_global_indirect(ctx, fn, inst):
    width = _global_size(inst.op)
    load = "Load" in inst.op.symbol
    at_reg = 4 * inst.operands["byte_offset"].ordinal
    reg = 4 * inst.operands["result" if load else "value"].ordinal

    def run(ctx, frame, _):
        at = _U32.unpack_from(frame.regs, at_reg)[0]
        if at + width > len(ctx.rwdata):
            raise VmStatusError(StatusCode.OUT_OF_RANGE,
                                f"global byte_offset out of range: {_s32(at)} "
                                f"(rwdata={len(ctx.rwdata)})")
        if load:
            frame.regs[reg:reg + width] = ctx.rwdata[at:at + width]
        else:
            ctx.rwdata[at:at + width] = frame.regs[reg:reg + width]
    return run, None


@_op("GlobalLoadRef", "GlobalStoreRef", "GlobalLoadIndirectRef", "GlobalStoreIndirectRef")
def _make_global_ref(ctx, fn, inst):
    load = "Load" in inst.op.symbol
    g = inst.operands["global"]
    reg = inst.operands["result" if load else "value"]

    def run(ctx, frame, _):
        index = g if isinstance(g, int) else _U32.unpack_from(frame.regs, 4 * g.ordinal)[0]
        if index >= len(ctx.global_refs):
            raise VmStatusError(StatusCode.OUT_OF_RANGE,
                                f"global ref ordinal out of range: {_s32(index)} "
                                f"(table={len(ctx.global_refs)})")
        if load:
            frame.refs[reg.ordinal] = ctx.global_refs[index]
        else:
            ctx.global_refs[index] = _take_ref(frame.refs, reg)
    return run, None


# Refs ------------------------------------------------------------------------------------------

@_op("ConstRefZero")
def _make_const_ref_zero(ctx, fn, inst):
    r = inst.operands["result"].ordinal

    def run(ctx, frame, _):
        frame.refs[r] = None
    return run, None


@_op("ConstRefRodata")
def _make_const_ref_rodata(ctx, fn, inst):
    r, ordinal = inst.operands["result"].ordinal, inst.operands["rodata"]

    def run(ctx, frame, _):
        frame.refs[r] = ctx._rodata[ordinal]
    return run, None


@_op("DiscardRefs", "Trace", "Print")
def _make_discard(ctx, fn, inst):
    regs = inst.operands["refs" if inst.op.symbol == "DiscardRefs" else "operands"]
    # discard.refs releases every listed ref; trace/print release only the MOVE-marked ones.
    drop = tuple(r.ordinal for r in regs
                 if r.is_ref and (r.move or inst.op.symbol == "DiscardRefs"))

    def run(ctx, frame, _):
        for i in drop:
            frame.refs[i] = None
    return run, None


@_op("AssignRef", "CastAnyRef")
def _make_assign_ref(ctx, fn, inst):
    src = inst.operands["source" if inst.op.symbol == "AssignRef" else "operand"]
    dst = inst.operands["result"].ordinal

    def run(ctx, frame, _):
        _move_ref(frame.refs, src, frame.refs, dst)
    return run, None


@_op("SelectRef")
def _make_select_ref(ctx, fn, inst):
    o = inst.operands
    cond, t, f, dst = 4 * o["condition"].ordinal, o["true_value"], o["false_value"], o["result"]

    def run(ctx, frame, _):
        chosen, other = (t, f) if _I32.unpack_from(frame.regs, cond)[0] else (f, t)
        _move_ref(frame.refs, chosen, frame.refs, dst.ordinal)
        if other.move and other.ordinal != dst.ordinal:
            frame.refs[other.ordinal] = None
    return run, None


@_op("SwitchRef")
def _make_switch_ref(ctx, fn, inst):
    o = inst.operands
    index, default = 4 * o["index"].ordinal, o["default_value"]
    values, dst = o["values"], o["result"]

    def run(ctx, frame, _):
        i = _I32.unpack_from(frame.regs, index)[0]
        _move_ref(frame.refs, values[i] if 0 <= i < len(values) else default, frame.refs,
                  dst.ordinal)
    return run, None


@_op("CmpEQRef", "CmpNERef", "CmpNZRef")
def _make_cmp_ref(ctx, fn, inst):
    o = inst.operands
    dst = 4 * o["result"].ordinal
    symbol = inst.op.symbol

    def run(ctx, frame, _):
        if symbol == "CmpNZRef":
            value = frame.refs[o["operand"].ordinal] is not None
        else:
            same = frame.refs[o["lhs"].ordinal] is frame.refs[o["rhs"].ordinal]
            value = same if symbol == "CmpEQRef" else not same
        _write_i32(frame.regs, dst, int(value))
    return run, None


# Buffers ---------------------------------------------------------------------------------------

_BUFFER_ELEMENTS = {  # symbol stem -> (element bytes, struct for loads/stores, load extension)
    "I8U": (1, struct.Struct("<B"), None), "I8S": (1, struct.Struct("<b"), None),
    "I16U": (2, struct.Struct("<H"), None), "I16S": (2, struct.Struct("<h"), None),
    "I8": (1, struct.Struct("<B"), None), "I16": (2, struct.Struct("<H"), None),
    "I32": (4, None, None), "I64": (8, None, None), "F32": (4, None, None), "F64": (8, None, None),
}


def _buffer(ctx: Context, frame: _Frame, reg: Register, what: str) -> ByteBuffer:
    buffer = ctx.buffers.deref(frame.refs[reg.ordinal])
    if buffer is None:
        raise VmStatusError(StatusCode.INVALID_ARGUMENT, f"{what} is null")
    return buffer


def _host(frame: _Frame, reg: Register) -> int:
    """An i64 operand converted to iree_host_size_t (wrapping)."""
    return _U64.unpack_from(frame.regs, 4 * reg.ordinal)[0] & _HOST_MASK


def _check_elements(buf: ByteBuffer, offset: int, count: int, size: int, write: bool) -> int:
    """iree_vm_buffer_check_ro/rw: returns the byte offset of the first element."""
    if write and not buf.mutable:
        raise VmStatusError(StatusCode.PERMISSION_DENIED,
                            "buffer is read-only and cannot be mapped for mutation")
    end = ((offset + count) * size) & _HOST_MASK
    if end > len(buf):
        byte_offset, byte_length = (offset * size) & _HOST_MASK, (count * size) & _HOST_MASK
        raise VmStatusError(StatusCode.OUT_OF_RANGE,
                            f"out-of-bounds access detected (offset={byte_offset}, "
                            f"length={byte_length}, alignment={size}, buffer length={len(buf)})")
    start = offset * size
    if start + count * size > len(buf):
        raise VmTrapError(f"buffer access at byte {start} (+{count * size}) passes IREE's wrapping "
                          f"bounds check but lies outside the {len(buf)}-byte buffer")
    return start


def _map_bytes(buf: ByteBuffer, offset: int, length: int, write: bool) -> int:
    """iree_vm_buffer_map_ro/rw with alignment 1: returns the byte offset."""
    if write and not buf.mutable:
        raise VmStatusError(StatusCode.PERMISSION_DENIED,
                            "buffer is read-only and cannot be mapped for mutation")
    if ((offset + length) & _HOST_MASK) > len(buf):
        raise VmStatusError(StatusCode.OUT_OF_RANGE,
                            f"out-of-bounds access detected (offset={offset}, length={length}, "
                            f"alignment=1, buffer length={len(buf)})")
    if offset + length > len(buf):
        raise VmTrapError(f"buffer range at byte {offset} (+{length}) passes IREE's wrapping "
                          f"bounds check but lies outside the {len(buf)}-byte buffer")
    return offset


def _stem(symbol: str, prefix: str) -> str:
    return symbol[len(prefix):]


@_op(*(f"BufferLoad{s}" for s in ("I8U", "I8S", "I16U", "I16S", "I32", "I64", "F32", "F64")))
def _make_buffer_load(ctx, fn, inst):
    size, elem, _ = _BUFFER_ELEMENTS[_stem(inst.op.symbol, "BufferLoad")]
    o = inst.operands
    breg, oreg, dst = o["buffer"], o["offset"], 4 * o["result"].ordinal

    def run(ctx, frame, _):
        buf = _buffer(ctx, frame, breg, "source_buffer")
        start = _check_elements(buf, _host(frame, oreg), 1, size, False)
        if elem is None:
            frame.regs[dst:dst + size] = buf.data[start:start + size]
        else:
            _write_i32(frame.regs, dst, elem.unpack_from(buf.data, start)[0])
    return run, None


@_op(*(f"BufferStore{s}" for s in ("I8", "I16", "I32", "I64", "F32", "F64")))
def _make_buffer_store(ctx, fn, inst):
    size = _BUFFER_ELEMENTS[_stem(inst.op.symbol, "BufferStore")][0]
    o = inst.operands
    breg, oreg, src = o["buffer"], o["offset"], 4 * o["value"].ordinal

    def run(ctx, frame, _):
        buf = _buffer(ctx, frame, breg, "target_buffer")
        start = _check_elements(buf, _host(frame, oreg), 1, size, True)
        buf.data[start:start + size] = frame.regs[src:src + size]  # low bytes, little endian
    return run, None


@_op(*(f"BufferFill{s}" for s in ("I8", "I16", "I32", "I64", "F32", "F64")))
def _make_buffer_fill(ctx, fn, inst):
    size = _BUFFER_ELEMENTS[_stem(inst.op.symbol, "BufferFill")][0]
    o = inst.operands
    breg, oreg, lreg, src = o["buffer"], o["offset"], o["length"], 4 * o["value"].ordinal

    def run(ctx, frame, _):
        buf = _buffer(ctx, frame, breg, "buffer")
        count = _host(frame, lreg)
        start = _check_elements(buf, _host(frame, oreg), count, size, True)
        buf.data[start:start + count * size] = bytes(frame.regs[src:src + size]) * count
    return run, None


@_op("BufferAlloc")
def _make_buffer_alloc(ctx, fn, inst):
    o = inst.operands
    lreg, areg, dst = o["length"], 4 * o["alignment"].ordinal, o["result"].ordinal

    def run(ctx, frame, _):
        length = _host(frame, lreg)
        alignment = _I32.unpack_from(frame.regs, areg)[0] & _HOST_MASK
        frame.refs[dst] = _allocate(ctx, length, alignment)
    return run, None


def _allocate(ctx: Context, length: int, alignment: int) -> ByteBuffer:
    if alignment != 0 and alignment & (alignment - 1):
        raise VmStatusError(StatusCode.INVALID_ARGUMENT,
                            f"alignments must be powers of two (got {alignment})")
    return ctx.buffers.allocate(length, alignment)


@_op("BufferClone")
def _make_buffer_clone(ctx, fn, inst):
    o = inst.operands

    def run(ctx, frame, _):
        source = _buffer(ctx, frame, o["source"], "source")
        offset, length = _host(frame, o["offset"]), _host(frame, o["length"])
        alignment = _I32.unpack_from(frame.regs, 4 * o["alignment"].ordinal)[0] & _HOST_MASK
        start = _map_bytes(source, offset, length, False)
        clone = _allocate(ctx, length, alignment)
        clone.data[:length] = source.data[start:start + length]
        frame.refs[o["result"].ordinal] = clone
    return run, None


@_op("BufferLength")
def _make_buffer_length(ctx, fn, inst):
    breg, dst = inst.operands["buffer"], 4 * inst.operands["result"].ordinal

    def run(ctx, frame, _):
        _write_i64(frame.regs, dst, len(_buffer(ctx, frame, breg, "buffer")))
    return run, None


@_op("BufferCopy")
def _make_buffer_copy(ctx, fn, inst):
    o = inst.operands

    def run(ctx, frame, _):
        source = _buffer(ctx, frame, o["source"], "source_buffer")
        target = _buffer(ctx, frame, o["target"], "target_buffer")
        length = _host(frame, o["length"])
        s = _map_bytes(source, _host(frame, o["source_offset"]), length, False)
        t = _map_bytes(target, _host(frame, o["target_offset"]), length, True)
        target.data[t:t + length] = source.data[s:s + length]
    return run, None


@_op("BufferCompare")
def _make_buffer_compare(ctx, fn, inst):
    o = inst.operands

    def run(ctx, frame, _):
        lhs = _buffer(ctx, frame, o["lhs"], "lhs_buffer")
        rhs = _buffer(ctx, frame, o["rhs"], "rhs_buffer")
        length = _host(frame, o["length"])
        a = _map_bytes(lhs, _host(frame, o["lhs_offset"]), length, False)
        b = _map_bytes(rhs, _host(frame, o["rhs_offset"]), length, False)
        same = lhs.data[a:a + length] == rhs.data[b:b + length]
        _write_i32(frame.regs, 4 * o["result"].ordinal, int(same))
    return run, None


def siphash24(data: bytes, key: bytes = bytes(range(16))) -> int:
    """SipHash-2-4 (Aumasson & Bernstein) of `data`; vm.buffer.hash uses key 00 01 .. 0F."""
    def rotl(x: int, b: int) -> int:
        return ((x << b) | (x >> (64 - b))) & M64

    k0, k1 = struct.unpack("<QQ", key)
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D,
         k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]

    def rounds(n: int) -> None:
        for _ in range(n):  # SipRound
            v[0] = (v[0] + v[1]) & M64
            v[1] = rotl(v[1], 13) ^ v[0]
            v[0] = rotl(v[0], 32)
            v[2] = (v[2] + v[3]) & M64
            v[3] = rotl(v[3], 16) ^ v[2]
            v[0] = (v[0] + v[3]) & M64
            v[3] = rotl(v[3], 21) ^ v[0]
            v[2] = (v[2] + v[1]) & M64
            v[1] = rotl(v[1], 17) ^ v[2]
            v[2] = rotl(v[2], 32)

    whole = len(data) - len(data) % 8
    for i in range(0, whole, 8):
        m = struct.unpack_from("<Q", data, i)[0]
        v[3] ^= m
        rounds(2)
        v[0] ^= m
    b = ((len(data) & 0xFF) << 56) | int.from_bytes(data[whole:], "little")
    v[3] ^= b
    rounds(2)
    v[0] ^= b
    v[2] ^= 0xFF
    rounds(4)
    return v[0] ^ v[1] ^ v[2] ^ v[3]


@_op("BufferHash")
def _make_buffer_hash(ctx, fn, inst):
    o = inst.operands

    def run(ctx, frame, _):
        source = _buffer(ctx, frame, o["source"], "source_buffer")
        length = _host(frame, o["length"])
        start = _map_bytes(source, _host(frame, o["offset"]), length, False)
        _write_i64(frame.regs, 4 * o["result"].ordinal,
                   siphash24(bytes(source.data[start:start + length])))
    return run, None


# Lists -----------------------------------------------------------------------------------------

def _list(frame: _Frame, reg: Register) -> VmList:
    value = frame.refs[reg.ordinal]
    if not isinstance(value, VmList):
        raise VmStatusError(StatusCode.INVALID_ARGUMENT, "list is null")
    return value


def _list_index(lst: VmList, index: int) -> int:
    index &= M32  # (uint32_t)index
    if index >= len(lst.items):
        raise VmStatusError(StatusCode.OUT_OF_RANGE,
                            f"index {index} out of bounds ({len(lst.items)})")
    return index


def _zero_item(lst: VmList):
    if lst.holds_values:
        return (lst.element_type, 0)
    return None


@_op("ListAlloc")
def _make_list_alloc(ctx, fn, inst):
    o = inst.operands
    element = _list_element_type(ctx.module.types[o["type"]])

    def run(ctx, frame, _):
        capacity = _U32.unpack_from(frame.regs, 4 * o["initial_capacity"].ordinal)[0]
        frame.refs[o["result"].ordinal] = VmList(element, capacity)
    return run, None


@_op("ListReserve", "ListResize", "ListSize")
def _make_list_size(ctx, fn, inst):
    o = inst.operands
    symbol = inst.op.symbol

    def run(ctx, frame, _):
        lst = _list(frame, o["list"])
        if symbol == "ListSize":
            _write_i32(frame.regs, 4 * o["result"].ordinal, len(lst.items))
            return
        n = _U32.unpack_from(frame.regs, 4 * o["minimum_capacity" if symbol == "ListReserve"
                                               else "new_size"].ordinal)[0]
        if symbol == "ListReserve":
            lst.capacity = max(lst.capacity, n)
        elif n < len(lst.items):
            del lst.items[n:]
        else:
            lst.items.extend(_zero_item(lst) for _ in range(n - len(lst.items)))
            lst.capacity = max(lst.capacity, n)
    return run, None


_LIST_BANK_TYPES = {"I32": "i32", "I64": "i64", "F32": "f32", "F64": "f64"}


@_op("ListGetI32", "ListGetI64", "ListGetF32", "ListGetF64")
def _make_list_get(ctx, fn, inst):
    o = inst.operands
    vtype = _LIST_BANK_TYPES[inst.op.symbol[-3:]]
    width = _VALUE_TYPES[vtype]

    def run(ctx, frame, _):
        lst = _list(frame, o["list"])
        i = _list_index(lst, _I32.unpack_from(frame.regs, 4 * o["index"].ordinal)[0])
        item = lst.items[i]
        if not isinstance(item, tuple):
            raise VmStatusError(StatusCode.FAILED_PRECONDITION,
                                f"variant at index {i} is not a value type")
        bits = _convert_list_value(item[0], item[1], vtype)
        (_write_i32 if width == 4 else _write_i64)(frame.regs, 4 * o["result"].ordinal, bits)
    return run, None


@_op("ListSetI32", "ListSetI64", "ListSetF32", "ListSetF64")
def _make_list_set(ctx, fn, inst):
    o = inst.operands
    vtype = _LIST_BANK_TYPES[inst.op.symbol[-3:]]
    reader = _U32 if _VALUE_TYPES[vtype] == 4 else _U64

    def run(ctx, frame, _):
        lst = _list(frame, o["list"])
        i = _list_index(lst, _I32.unpack_from(frame.regs, 4 * o["index"].ordinal)[0])
        if not (lst.holds_values or lst.is_variant):
            raise VmStatusError(StatusCode.FAILED_PRECONDITION, "list cannot store values")
        bits = reader.unpack_from(frame.regs, 4 * o["value"].ordinal)[0]
        target = lst.element_type if lst.holds_values else vtype
        bits = _convert_list_value(vtype, bits, target)
        width = 8 * _VALUE_TYPES[target]
        lst.items[i] = (target, bits & ((1 << width) - 1))
    return run, None


@_op("ListGetRef", "ListSetRef")
def _make_list_ref(ctx, fn, inst):
    o = inst.operands
    get = inst.op.symbol == "ListGetRef"

    def run(ctx, frame, _):
        lst = _list(frame, o["list"])
        i = _list_index(lst, _I32.unpack_from(frame.regs, 4 * o["index"].ordinal)[0])
        if lst.holds_values:
            raise VmStatusError(StatusCode.FAILED_PRECONDITION, "list does not store refs")
        if get:
            item = lst.items[i]
            frame.refs[o["result"].ordinal] = None if isinstance(item, tuple) else item
        else:
            lst.items[i] = _take_ref(frame.refs, o["value"])
    return run, None


# Control flow ----------------------------------------------------------------------------------

@_op("Block")
def _make_block(ctx, fn, inst):
    return (lambda ctx, frame, _: None), None


def _remap(frame: _Frame, pairs) -> None:
    regs, refs = frame.regs, frame.refs
    for src, dst in pairs:
        if src.is_ref:
            _move_ref(refs, src, refs, dst.ordinal)
        else:
            s, d = 4 * src.ordinal, 4 * dst.ordinal
            regs[d:d + 4] = regs[s:s + 4]


@_op("Branch", "Break")
def _make_branch(ctx, fn, inst):
    target = fn.block_index[inst.operands["dest"]]
    pairs = inst.operands["operands"]

    def run(ctx, frame, _):
        if pairs:
            _remap(frame, pairs)
        frame.ip = target
    return run, None


@_op("CondBranch")
def _make_cond_branch(ctx, fn, inst):
    o = inst.operands
    cond = 4 * o["condition"].ordinal
    t, tp = fn.block_index[o["true_dest"]], o["true_operands"]
    f, fp = fn.block_index[o["false_dest"]], o["false_operands"]

    def run(ctx, frame, _):
        if _I32.unpack_from(frame.regs, cond)[0]:
            if tp:
                _remap(frame, tp)
            frame.ip = t
        else:
            if fp:
                _remap(frame, fp)
            frame.ip = f
    return run, None


@_op("CondBreak")
def _make_cond_break(ctx, fn, inst):
    target, pairs = fn.block_index[inst.operands["dest"]], inst.operands["operands"]

    def run(ctx, frame, _):  # a debugger hook in IREE; otherwise an unconditional branch
        if pairs:
            _remap(frame, pairs)
        frame.ip = target
    return run, None


@_op("BranchTable")
def _make_branch_table(ctx, fn, inst):
    o = inst.operands
    index = 4 * o["index"].ordinal
    default = (fn.block_index[o["default_dest"]], o["default_operands"])
    cases = tuple((fn.block_index[c.dest], c.operands) for c in o["cases"])

    def run(ctx, frame, _):
        i = _I32.unpack_from(frame.regs, index)[0]
        target, pairs = cases[i] if 0 <= i < len(cases) else default
        if pairs:
            _remap(frame, pairs)
        frame.ip = target
    return run, None


@_op("Return")
def _make_return(ctx, fn, inst):
    operands = inst.operands["operands"]
    if fn.cconv_results is None:
        raise BytecodeVerifyError(f"vm.return in {fn.name}, which has no calling convention",
                                  inst.pc)
    _check_cconv_regs(fn, _value_chars(fn.cconv_results), operands, "vm.return operands", inst)

    def run(ctx, frame, _):
        return _RETURN
    return run, operands


@_op("Call", "CallVariadic")
def _make_call(ctx, fn, inst):
    o = inst.operands
    callee, operands, results = o["callee"], o["operands"], o["results"]
    segments = o.get("segment_sizes")
    if callee & isa.FUNCTION_ORDINAL_IMPORT_BIT:
        ordinal = callee & ~isa.FUNCTION_ORDINAL_IMPORT_BIT
        imp = ctx.module.imported_functions[ordinal]
        _check_call_lists(fn, imp.cconv, segments, operands, results, inst, imp.full_name)

        def call_import(ctx, frame, _):
            ctx._call_import(frame, ordinal, segments, operands, results)
        return call_import, None
    if segments is not None:
        raise BytecodeVerifyError("vm.call.variadic of an internal function (IREE supports "
                                  "variadic calls to imports only)", inst.pc)
    target = ctx.module.function_signatures[callee]
    _check_call_lists(fn, target.cconv, None, operands, results, inst, f"function#{callee}")

    def call_internal(ctx, frame, _):
        return _enter_internal(ctx, frame, callee, operands, results)
    return call_internal, None


def _check_cconv_regs(fn: _Function, chars: Sequence[str], regs: Sequence[Register], what: str,
                      inst: Instruction) -> None:
    """Counts, banks, and 64-bit register bounds/alignment of a register list typed by a cconv."""
    if len(chars) != len(regs):
        raise BytecodeVerifyError(f"{what}: {len(regs)} register(s) listed, the cconv has "
                                  f"{len(chars)}", inst.pc)
    for char, reg in zip(chars, regs):
        if (char == "r") != reg.is_ref:
            raise BytecodeVerifyError(f"{what}: register {reg} does not match cconv type "
                                      f"{char!r}", inst.pc)
        if char in "IF" and (reg.ordinal & 1 or reg.ordinal + 1 >= fn.i32_count):
            raise BytecodeVerifyError(f"{what}: 64-bit register %i{reg.ordinal} is unaligned or "
                                      f"out of range ({fn.i32_count} i32 registers)", inst.pc)


def _cconv_register_counts(fragment: str) -> tuple[int, int]:
    """(i32, ref) registers a function's arguments or results occupy (64-bit values aligned)."""
    i32 = refs = 0
    for char in _value_chars(fragment):
        if char == "r":
            refs += 1
        elif char in "IF":
            i32 += (i32 & 1) + 2
        else:
            i32 += 1
    return i32, refs


def _check_call_lists(fn: _Function, cconv: str | None, segments, operands, results, inst,
                      name: str) -> None:
    """The verifier's cconv/register-list agreement (counts and banks) for a call."""
    args, res = _cconv_fragments(cconv)
    if args is None:
        raise BytecodeVerifyError(f"call to {name}, which has no calling convention", inst.pc)
    expected: list[str] = []
    i = seg = 0
    while i < len(args):
        if args[i] == "C":
            end = args.index("D", i)
            if segments is None or seg >= len(segments):
                raise BytecodeVerifyError(f"call to variadic {name} ({cconv}) without a segment "
                                          f"size for argument {seg}", inst.pc)
            expected += _value_chars(args[i + 1:end]) * segments[seg]
            i = end
        else:
            expected += _value_chars(args[i])
        i += 1
        seg += 1
    _check_cconv_regs(fn, expected, operands, f"operands of the call to {name} ({cconv})", inst)
    _check_cconv_regs(fn, _value_chars(res), results, f"results of the call to {name} ({cconv})",
                      inst)


@_op("ImportResolved")
def _make_import_resolved(ctx, fn, inst):
    ordinal = inst.operands["import"] & ~isa.FUNCTION_ORDINAL_IMPORT_BIT
    dst = 4 * inst.operands["result"].ordinal

    def run(ctx, frame, _):
        _write_i32(frame.regs, dst, int(ctx._resolved[ordinal]))
    return run, None


@_op("Fail")
def _make_fail(ctx, fn, inst):
    status, message = 4 * inst.operands["status"].ordinal, inst.operands["message"]

    def run(ctx, frame, _):
        code = _U32.unpack_from(frame.regs, status)[0]
        if code != 0:
            raise VmFailError(code, message)
    return run, None


SUPPORTED_OPS: frozenset[str] = frozenset(
    op.symbol for table in isa.OPCODES.values() for op in table.values()
    if op.symbol in _HANDLERS or op.symbol in PURE_OPS or op.symbol in _SIGN_BIT_OPS)
UNSUPPORTED_OPS: frozenset[str] = frozenset(
    op.symbol for table in isa.OPCODES.values() for op in table.values()) - SUPPORTED_OPS


def unsupported_in(instructions: Iterable[Instruction]) -> set[str]:
    """Mnemonics among `instructions` this interpreter does not execute."""
    return {i.mnemonic for i in instructions if i.op.symbol in UNSUPPORTED_OPS}
