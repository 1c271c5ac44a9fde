"""IREE's `check` module (runtime/src/iree/modules/check/module.cc) as a native module of ireeabi.

Five runtime exports, as iree_check_module_create declares them ("check", version 0), each also
accepted without the leading device argument (the inline models have no device; IREE declares the
device in compiler/src/iree/compiler/Modules/Check/check.imports.mlir):

    expect_true(i32)                      0i_v
    expect_false(i32)                     0i_v
    expect_all_true([device,] view)       0rr_v   | 0r_v
    expect_eq([device,] lhs, rhs)         0rrr_v  | 0rrr_v without the device: 0rr_v
    expect_almost_eq([device,] lhs, rhs, atol: f32, rtol: f32)   0rrrff_v | 0rrff_v

As in CheckModuleState, a failed expectation is recorded (a gtest non-fatal failure there, a
`Failure` here, with the text gtest prints) and the call returns OK; only an unsupported element
type (ExpectAllTrue, AlmostEqByteSpan) fails the call with INVALID_ARGUMENT. `expect_eq_const` and
`expect_almost_eq_const` are compiler ops (CheckOps.td) that lower to expect_eq / expect_almost_eq
with a constant operand: here they are methods of `CheckState` doing exactly that, with the
ops' default tolerances (atol 1e-4, rtol 0, as f32 attributes).

The device and its host transfer are not modelled: the inline HAL's buffers are host-visible and
mappable, so TransferBuffersToHost hands the views back unchanged.
"""
from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ..hal.buffer_view_util import format_buffer_view
from ..hal.element_types import dtype_of
from ..base.internal.math import widen_float_bits
from ..hal.string_util import format_elements
from .hal.module_api import BufferViewInfo, ModuleApi
from ..layouts.hal_buffer import ElementType
from ..layouts.hal_buffer import iree_hal_format_element_type as format_element_type
from ..layouts.modules import ModuleDescriptor
from ..vm.native_module import Export
from ..vm.ref import Ref
from ..vm.shims import CallContext
from ..base.status import StatusCode, StatusError

CHECK_MODULE_NAME = "check"
CHECK_MODULE_VERSION = 0
# CheckOps.td: expect_almost_eq(_const)'s DefaultValuedAttr<F32Attr, "1.e-4f"> / "0.f".
DEFAULT_ATOL = float(np.float32(1e-4))
DEFAULT_RTOL = 0.0
FORMAT_MAX_ELEMENTS = 1024  # BufferViewToString's iree_hal_buffer_view_format max_element_count
# Where gtest says each failure is, as the release wheels' tools name their sources (c/runtime/...)
# and at the lines of module.cc's EXPECT_* / ADD_FAILURE in the revision modelled (f6e1872).
SOURCE = "c/runtime/src/iree/modules/check/module.cc"
LINES = {"expect_all_true": 60, "expect_true": 369, "expect_false": 374, "expect_eq": 498,
         "expect_almost_eq": 604}

_ALL_TRUE_TYPES: dict[int, Any] = {  # ExpectAllTrue(bytes, element_type): the C type each element is read as
    ElementType.INT_8: np.int8, ElementType.SINT_8: np.int8, ElementType.UINT_8: np.uint8,
    ElementType.INT_16: np.int16, ElementType.SINT_16: np.int16, ElementType.UINT_16: np.uint16,
    ElementType.INT_32: np.int32, ElementType.SINT_32: np.int32, ElementType.UINT_32: np.uint32,
    ElementType.INT_64: np.int64, ElementType.SINT_64: np.int64, ElementType.UINT_64: np.uint64,
    ElementType.FLOAT_32: np.float32, ElementType.FLOAT_64: np.float64,
}
_ALMOST_EQ_TYPES = {int(t) for t in (  # AlmostEqByteSpan's cases
    ElementType.FLOAT_64, ElementType.FLOAT_32, ElementType.FLOAT_16, ElementType.BFLOAT_16,
    ElementType.FLOAT_8_E4M3_FN, ElementType.FLOAT_8_E4M3_FNUZ, ElementType.FLOAT_8_E5M2,
    ElementType.FLOAT_8_E5M2_FNUZ, ElementType.FLOAT_8_E8M0_FNU)}


class Failure(NamedTuple):
    """One failed expectation: the check function, and what gtest prints for it."""

    function: str
    message: str

    @property
    def location(self) -> str:
        """gtest's `file:line:` of the expectation."""
        return f"{SOURCE}:{LINES[self.function]}:"

    def report(self) -> str:
        """The failure as gtest's pretty printer prints it (`file:line: Failure` and the message)."""
        return f"{self.location} Failure\n{self.message}\n"


def _unsupported(element_type: int) -> StatusError:
    return StatusError(StatusCode.INVALID_ARGUMENT,
                       f"unsupported element type {format_element_type(element_type)}")


def fuzzy_equal(actual: np.ndarray, expected: np.ndarray, atol: float, rtol: float) -> np.ndarray:
    """iree_math_fuzzy_compare_f64 (base/internal/math.h) element-wise, in double: equal, or both
    NaN, or a finite expected value with |actual - expected| <= atol + rtol * |expected|."""
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.abs(a - e) <= atol + rtol * np.abs(e)
        return (a == e) | (np.isnan(a) & np.isnan(e)) | (np.isfinite(e) & close)


def _load_floats(v: BufferViewInfo) -> np.ndarray:
    """FloatTypeInfo<type>::load of every element, as doubles (f16/bf16/f8 widened to f32 first)."""
    et = v.element_type
    if et == ElementType.FLOAT_64:
        return v.data.view(np.float64).astype(np.float64)
    if et == ElementType.FLOAT_32:
        return v.data.view(np.float32).astype(np.float64)
    if et == ElementType.FLOAT_16:
        return v.data.view(np.float16).astype(np.float64)
    if et == ElementType.BFLOAT_16:
        return (v.data.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return np.array([widen_float_bits(int(b), et) for b in v.data], dtype=np.float64)  # f8 types


def _g(value: float, precision: int = 6) -> str:
    """A double through an ostream's default (%g) formatting, as glibc prints it (-nan included)."""
    if math.isnan(value):
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    if math.isinf(value):
        return "-inf" if value < 0 else "inf"
    return f"{value:.{precision}g}"


def _e3(value: float) -> str:
    """std::scientific with setprecision(3)."""
    if math.isnan(value) or math.isinf(value):
        return _g(value)
    return f"{value:.3e}"


_CHAR_ESCAPES = {0: "\\0", 7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r",
                 39: "\\'", 92: "\\\\"}


def _gtest_char(n: int) -> str:
    """gtest's PrintCharAndCodeTo for a signed or unsigned char holding `n`."""
    u = n & 0xFF
    hex_escape = False
    if u in _CHAR_ESCAPES:
        literal = _CHAR_ESCAPES[u]
    elif 0x20 <= u < 0x7F:
        literal = chr(u)
    else:
        literal, hex_escape = f"\\x{u:X}", True
    if n == 0:
        return f"'{literal}'"
    code = "" if hex_escape or 1 <= n <= 9 else f", 0x{n:X}"
    return f"'{literal}' ({n}{code})"


def _gtest_element(value: Any, dtype: np.dtype) -> str:
    """One element as gtest's universal printer prints it: 8-bit integers as chars, floats at 6
    significant digits when that round-trips (else max_digits10), other integers in decimal."""
    if dtype == np.int8 or dtype == np.uint8:
        return _gtest_char(int(value))
    if dtype.kind == "f":
        v = float(value)
        if math.isnan(v) or math.isinf(v):
            return _g(v)
        short = f"{v:.6g}"
        if dtype.type(float(short)) == dtype.type(v):
            return short
        return f"{v:.{9 if dtype == np.float32 else 17}g}"
    return str(int(value))


def _all_true_message(values: np.ndarray, first_zero: int) -> str:
    """EXPECT_THAT(ToSpan<T>(bytes), Each(Not(T(0)))): gmock's text for the first zero element."""
    shown = [_gtest_element(x, values.dtype) for x in values[:32]]  # gtest's kMaxCount
    body = ", ".join(shown) + (", ..." if values.size > 32 else "")
    container = "{ " + body + " }" if values.size else "{}"
    return ("Value of: ToSpan<T>(bytes)\n"
            f"Expected: only contains elements that isn't equal to {_gtest_element(0, values.dtype)}\n"
            f"  Actual: {container}, whose element #{first_zero} doesn't match")


class CheckState:
    """CheckModuleState: the check functions over one runtime's buffer views (`api`), recording
    failed expectations in `failures` (in call order)."""

    def __init__(self, api: ModuleApi) -> None:
        self.api = api
        self.failures: list[Failure] = []

    def take(self) -> list[Failure]:
        """The failures recorded since the last take, and forget them."""
        out, self.failures = self.failures, []
        return out

    def _format(self, v: BufferViewInfo) -> str:
        """BufferViewToString: iree_hal_buffer_view_format with at most 1024 elements."""
        try:
            array = v.array()
        except Exception:  # noqa: BLE001 - no numpy dtype: format the raw elements
            count = int(np.prod(v.shape)) if v.shape else 1
            texts = format_elements(bytes(v.data), v.element_type, min(count, FORMAT_MAX_ELEMENTS))
            head = "x".join(map(str, v.shape)) + ("x" if v.shape else "")
            return f"{head}{format_element_type(v.element_type)}={' '.join(texts)}"
        return format_buffer_view(array, FORMAT_MAX_ELEMENTS, v.element_type)

    # -- the exports ------------------------------------------------------------------------------

    def expect_true(self, operand: int) -> None:
        if not operand:
            self.failures.append(Failure("expect_true", "Value of: operand\n  Actual: false\n"
                                         f"Expected: true\nExpected {operand} to be nonzero."))

    def expect_false(self, operand: int) -> None:
        if operand:
            self.failures.append(Failure("expect_false", "Value of: operand\n  Actual: true\n"
                                         f"Expected: false\nExpected {operand} to be zero."))

    def expect_all_true(self, operand: Ref) -> None:
        v = self.api.view(operand)
        ctype = _ALL_TRUE_TYPES.get(v.element_type)
        if ctype is None:
            raise _unsupported(v.element_type)
        data = v.data
        values = data[:len(data) - len(data) % np.dtype(ctype).itemsize].view(ctype)
        zeros = np.flatnonzero(values == 0)
        if zeros.size:
            self.failures.append(Failure("expect_all_true", _all_true_message(values, int(zeros[0]))))

    def expect_eq(self, lhs: Ref, rhs: Ref) -> None:
        a, b = self.api.view(lhs), self.api.view(rhs)
        types_eq = a.element_type == b.element_type
        shape_eq = a.shape == b.shape
        contents_eq = a.byte_length == b.byte_length and bytes(a.data) == bytes(b.data)
        if types_eq and shape_eq and contents_eq:
            return
        text = "Expected equality of these values."
        text += "" if types_eq else " Element types do not match."
        text += "" if shape_eq else " Shapes do not match."
        text += "" if contents_eq else " Contents does not match."
        self._fail("expect_eq", text, a, b)

    def expect_almost_eq(self, lhs: Ref, rhs: Ref, atol: float, rtol: float) -> None:
        a, b = self.api.view(lhs), self.api.view(rhs)
        atol, rtol = float(np.float32(atol)), float(np.float32(rtol))  # f32 arguments
        types_eq = a.element_type == b.element_type
        shape_eq = a.shape == b.shape
        close, where = True, None
        if types_eq and shape_eq:  # only then are the contents compared (else they cannot be)
            if a.element_type not in _ALMOST_EQ_TYPES:
                raise _unsupported(a.element_type)
            actual, expected = _load_floats(a), _load_floats(b)
            n = min(actual.size, expected.size)
            bad = np.flatnonzero(~fuzzy_equal(actual[:n], expected[:n], atol, rtol))
            if bad.size:
                close, i = False, int(bad[0])
                where = (i, float(actual[i]), float(expected[i]))
        if types_eq and shape_eq and close:
            return
        text = "Expected near equality of these values."
        text += "" if types_eq else " Element types do not match."
        text += "" if shape_eq else " Shapes do not match."
        if where is not None:  # not close
            i, lv, rv = where
            text += (f" Contents does not match to tolerance parameters atol={_g(atol)}, "
                     f"rtol={_g(rtol)}. The first failure occurs at index {i} as the lhs value "
                     f"{_g(lv)} differs from the rhs value {_g(rv)} by {_e3(rv - lv)}.")
        self._fail("expect_almost_eq", text, a, b)

    def _fail(self, function: str, text: str, a: BufferViewInfo, b: BufferViewInfo) -> None:
        self.failures.append(Failure(function, f"Failed\n{text}\n  lhs:\n    {self._format(a)}\n"
                                               f"  rhs:\n    {self._format(b)}"))

    # -- the compiler's _const ops, as they lower -------------------------------------------------

    def _constant(self, like: Ref, value: Any) -> Ref:
        v = self.api.view(like)
        return self.api.new_view(np.asarray(value, dtype=dtype_of(v.element_type)).reshape(v.shape),
                                 v.element_type)

    def expect_eq_const(self, lhs: Ref, value: Any) -> None:
        """check.expect_eq_const: expect_eq against a constant of lhs's type and shape."""
        const = self._constant(lhs, value)
        try:
            self.expect_eq(lhs, const)
        finally:
            self.api.views.resources.release(const.ptr)

    def expect_almost_eq_const(self, lhs: Ref, value: Any, atol: float = DEFAULT_ATOL,
                               rtol: float = DEFAULT_RTOL) -> None:
        """check.expect_almost_eq_const: expect_almost_eq against a constant (the op's defaults)."""
        const = self._constant(lhs, value)
        try:
            self.expect_almost_eq(lhs, const, atol, rtol)
        finally:
            self.api.views.resources.release(const.ptr)


# The native functions: `ctx.state` is the CheckState; a leading device argument is ignored.
def _true(ctx: CallContext, operand: int) -> None:
    ctx.state.expect_true(operand)


def _false(ctx: CallContext, operand: int) -> None:
    ctx.state.expect_false(operand)


def _all_true(ctx: CallContext, *args: Ref) -> None:
    ctx.state.expect_all_true(args[-1])


def _eq(ctx: CallContext, *args: Ref) -> None:
    ctx.state.expect_eq(args[-2], args[-1])


def _almost_eq(ctx: CallContext, *args: Any) -> None:
    ctx.state.expect_almost_eq(args[-4], args[-3], args[-2], args[-1])


EXPORTS = (
    Export("expect_true", "0i_v", _true),
    Export("expect_false", "0i_v", _false),
    Export("expect_all_true", "0rr_v", _all_true),  # device, operand (as IREE declares it)
    Export("expect_all_true", "0r_v", _all_true),
    Export("expect_eq", "0rrr_v", _eq),
    Export("expect_eq", "0rr_v", _eq),
    Export("expect_almost_eq", "0rrrff_v", _almost_eq),
    Export("expect_almost_eq", "0rrff_v", _almost_eq),
)

CHECK_MODULE = ModuleDescriptor(CHECK_MODULE_NAME, CHECK_MODULE_VERSION, EXPORTS, state=CheckState,
                                source="ireeabi.modules.check")
native_module = CHECK_MODULE  # what `--native-module ireeabi.modules.check` takes

__all__ = ["CHECK_MODULE", "CHECK_MODULE_NAME", "CHECK_MODULE_VERSION", "CheckState", "Failure",
           "DEFAULT_ATOL", "DEFAULT_RTOL", "fuzzy_equal", "native_module"]
