"""IREE's `check` module as ireeabi runs it (ireeabi.modules.check) and `ireeabi test`.

Oracles: IREE's sources, cited per test (runtime/src/iree/modules/check/module.cc,
runtime/src/iree/base/internal/math.h iree_math_fuzzy_compare_f64, tools/iree-check-module-main.cc,
compiler/src/iree/compiler/Modules/Check/IR/CheckOps.td), the C library's printf (how C++ streams
print the numbers in failure messages), IREE's compiler (the programs, their imports and cconvs in
tests/programs/native/check_ops.mlir) and numpy. iree-check-module is not in the iree-base-runtime
wheel (`test_iree_check_module_is_not_installed`), so its output is modelled from its source.
"""
from __future__ import annotations

import ctypes
import io
import math
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from support import iree_tools as tools
from ireeabi.cli.main import main
from ireeabi.modules.hal.runtime import HalRuntime
from ireeabi.layouts.hal_buffer import ElementType
from ireeabi.modules.check import CHECK_MODULE, DEFAULT_ATOL, DEFAULT_RTOL, fuzzy_equal
from ireeabi.vm.ref import NULL_REF, release_value
from ireeabi.base.status import StatusCode, StatusError

HERE = Path(__file__).parents[1]
SOURCE = HERE / "programs" / "native" / "check_ops.mlir"
MODELS = ("inline-static", "inline-dynamic")
_libc = ctypes.CDLL(None)


@pytest.fixture(scope="module")
def compiled() -> dict[str, Path]:
    return {m: tools.compile_mlir(SOURCE, tools.session_dir(), m) for m in MODELS}


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = main(list(argv), stdout=out, stderr=err)
    return rc, out.getvalue(), err.getvalue()


def c_format(fmt: bytes, value: float) -> str:
    """What glibc's printf prints (the C++ stream's %g / %.3e)."""
    buf = ctypes.create_string_buffer(64)
    _libc.snprintf(buf, 64, fmt, ctypes.c_double(value))
    return buf.value.decode()


def test_iree_check_module_is_not_installed():
    """The wheels carry no iree-check-module (so its output is modelled from its source)."""
    assert shutil.which("iree-check-module") is None
    assert not (Path(sys.executable).parent / "iree-check-module").exists()


# -- the declaration --------------------------------------------------------------------------------


def test_exports_as_iree_declares_them():
    """module.cc iree_check_module_create: "check", version 0, five functions; their cconvs from the
    C++ signatures (int32_t -> i, refs -> r, float -> f) with the device argument, as
    compiler/src/iree/compiler/Modules/Check/check.imports.mlir declares them, and without it."""
    assert (CHECK_MODULE.name, CHECK_MODULE.version) == ("check", 0)
    assert sorted((e.name, e.cconv) for e in CHECK_MODULE.exports) == sorted([
        ("expect_true", "0i_v"), ("expect_false", "0i_v"),
        ("expect_all_true", "0rr_v"), ("expect_all_true", "0r_v"),
        ("expect_eq", "0rrr_v"), ("expect_eq", "0rr_v"),
        ("expect_almost_eq", "0rrrff_v"), ("expect_almost_eq", "0rrff_v")])


def test_default_tolerances_are_the_ops():
    """CheckOps.td: expect_almost_eq(_const) default atol DefaultValuedAttr<F32Attr, "1.e-4f">,
    rtol "0.f"."""
    assert DEFAULT_ATOL == float(np.float32(1e-4)) and DEFAULT_RTOL == 0.0


# -- semantics, against the C functions ------------------------------------------------------------


@pytest.mark.parametrize("actual,expected,atol,rtol,equal", [
    (1.0, 1.0, 0.0, 0.0, True),                       # actual == expected
    (math.nan, math.nan, 0.0, 0.0, True),             # isnan(actual) && isnan(expected)
    (math.nan, 1.0, 1e9, 1e9, False),                 # NaN actual: |NaN - e| <= ... is false
    (math.inf, math.inf, 0.0, 0.0, True),
    (-math.inf, math.inf, 1e30, 1e30, False),         # !isfinite(expected): only equal passes
    (1e30, math.inf, math.inf, 0.0, False),
    (1.0005, 1.0, 1e-3, 0.0, True),                   # |a - e| <= atol
    (1.002, 1.0, 1e-3, 0.0, False),
    (110.0, 100.0, 0.0, 0.1, True),                   # rtol scales with the expected value...
    (100.0, 110.0, 0.0, 0.09, False),                 # ...only: the check is asymmetric
])
def test_fuzzy_compare_is_iree_math_fuzzy_compare_f64(actual, expected, atol, rtol, equal):
    """base/internal/math.h iree_math_fuzzy_compare_f64(actual, expected, atol, rtol): equal, or both
    NaN, or (expected finite and |actual - expected| <= atol + rtol * |expected|), in double."""
    assert bool(fuzzy_equal(np.array([actual]), np.array([expected]), atol, rtol)[0]) is equal


NO_DEVICE = {"expect_all_true": "0r_v", "expect_eq": "0rr_v", "expect_almost_eq": "0rrff_v"}


@pytest.fixture
def rt():
    """A runtime with the check module as the inline models import it (no device argument)."""
    with HalRuntime(modules=[CHECK_MODULE.select(NO_DEVICE)]) as runtime:
        yield runtime


def _state(rt):
    return rt.modules["check"].state


def _views(rt, *arrays, element_type=None):
    return [rt.api.new_view(a, element_type) for a in arrays]


def _release(rt, *refs):
    for r in refs:
        release_value(rt.heap, r)


def test_expect_true_false_record_and_return_ok(rt):
    """module.cc ExpectTrue / ExpectFalse: EXPECT_TRUE(operand) << "Expected " << operand << " to be
    nonzero." (and EXPECT_FALSE, "to be zero."): a gtest non-fatal failure, the call returns OK."""
    assert rt.call("check.expect_true", 5) == [] and rt.call("check.expect_false", 0) == []
    assert _state(rt).take() == []
    rt.call("check.expect_true", 0)
    rt.call("check.expect_false", -3)
    (t, f) = _state(rt).take()
    assert t.report() == ("c/runtime/src/iree/modules/check/module.cc:369: Failure\nValue of: operand\n"
                          "  Actual: false\nExpected: true\nExpected 0 to be nonzero.\n")
    assert f.message == "Value of: operand\n  Actual: true\nExpected: false\nExpected -3 to be zero."


@pytest.mark.parametrize("with_device", [True, False])
def test_expect_eq_compares_type_shape_bytes(with_device):
    """module.cc ExpectEq: element types equal, shapes equal (rank included), EqByteSpan (same length
    and memcmp); each mismatch named in the message, then both views formatted (BufferViewToString:
    iree_hal_buffer_view_format, 1024 elements at most). The device argument (first, as
    check.imports.mlir declares it; a null ref here) changes nothing."""
    declared = CHECK_MODULE if with_device else CHECK_MODULE.select(NO_DEVICE)
    with HalRuntime(modules=[declared]) as rt:
        assert rt.modules["check"].exports[rt.modules["check"].lookup("expect_eq")].cconv == \
            ("0rrr_v" if with_device else "0rr_v")
        lead = (NULL_REF,) if with_device else ()
        a, b, c, d = _views(rt, np.array([1, 2, 3], np.int32), np.array([1, 2, 3], np.int32),
                            np.array([1, 2, 4], np.int32), np.array([[1, 2, 3]], np.int32))
        e = rt.api.new_view(np.array([1, 2, 3], np.uint32))  # same bytes, another element type
        rt.call("check.expect_eq", *lead, a, b)
        assert _state(rt).take() == []
        for other in (c, d, e):
            assert rt.call("check.expect_eq", *lead, a, other) == []  # returns OK
        assert [f.message for f in _state(rt).take()] == [
            "Failed\nExpected equality of these values. Contents does not match.\n"
            "  lhs:\n    3xi32=1 2 3\n  rhs:\n    3xi32=1 2 4",
            "Failed\nExpected equality of these values. Shapes do not match.\n"
            "  lhs:\n    3xi32=1 2 3\n  rhs:\n    1x3xi32=[1 2 3]",
            "Failed\nExpected equality of these values. Element types do not match.\n"
            "  lhs:\n    3xi32=1 2 3\n  rhs:\n    3xui32=1 2 3"]
        _release(rt, a, b, c, d, e)


def test_expect_almost_eq_message_and_tolerances(rt):
    """module.cc ExpectAlmostEq: contents compared only when types and shapes match, element by
    element with iree_math_fuzzy_compare_f64 (lhs actual, rhs expected; f32 atol/rtol widened);
    the first failure's index and values printed by a C++ stream (default %g, then std::scientific
    with setprecision(3) for rhs - lhs)."""
    a, b = _views(rt, np.array([1.0, 2.0, 3.0], np.float32), np.array([1.0, 2.0, 3.01], np.float32))
    rt.call("check.expect_almost_eq", a, b, 1e-4, 1e-3)
    (f,) = _state(rt).take()
    lv, rv = float(np.float32(3.0)), float(np.float32(3.01))
    atol, rtol = float(np.float32(1e-4)), float(np.float32(1e-3))
    assert f.message == (
        f"Failed\nExpected near equality of these values. Contents does not match to tolerance "
        f"parameters atol={c_format(b'%g', atol)}, rtol={c_format(b'%g', rtol)}. The first failure "
        f"occurs at index 2 as the lhs value {c_format(b'%g', lv)} differs from the rhs value "
        f"{c_format(b'%g', rv)} by {c_format(b'%.3e', rv - lv)}.\n"
        f"  lhs:\n    3xf32=1 2 3\n  rhs:\n    3xf32=1 2 3.01")
    rt.call("check.expect_almost_eq", a, b, 0.02, 0.0)  # within atol
    n, m = _views(rt, np.array([np.nan, np.inf], np.float32), np.array([np.nan, np.inf], np.float32))
    rt.call("check.expect_almost_eq", n, m, 0.0, 0.0)  # NaN == NaN, inf == inf
    assert _state(rt).take() == []
    _release(rt, a, b, n, m)


def test_almost_eq_of_narrow_floats_and_f64(rt):
    """FloatTypeInfo<F16/BF16>::load widens to float; F64 compares in double."""
    h1, h2 = _views(rt, np.array([1.0, 2.0], np.float16), np.array([1.0, 2.001], np.float16))
    rt.call("check.expect_almost_eq", h1, h2, 1e-2, 0.0)
    d1, d2 = _views(rt, np.array([1.0], np.float64), np.array([1.0 + 1e-12], np.float64))
    rt.call("check.expect_almost_eq", d1, d2, 0.0, 0.0)
    bf = np.array([0x3F80, 0x4000], np.uint16)  # bf16 1.0, 2.0
    b1 = rt.api.new_view(bf, int(ElementType.BFLOAT_16))
    b2 = rt.api.new_view(bf + np.uint16(1), int(ElementType.BFLOAT_16))  # 1.0078125, 2.015625
    rt.call("check.expect_almost_eq", b1, b2, 0.01, 0.0)
    failures = _state(rt).take()
    assert [f.message.split(". ")[1] for f in failures] == [
        "Contents does not match to tolerance parameters atol=0, rtol=0",
        "Contents does not match to tolerance parameters atol=0.01, rtol=0"]
    assert "index 1 as the lhs value 2 differs from the rhs value 2.01562" in failures[1].message
    _release(rt, h1, h2, d1, d2, b1, b2)


def test_unsupported_element_types_fail_the_call(rt):
    """ExpectAllTrue(bytes, element_type) and AlmostEqByteSpan return INVALID_ARGUMENT "unsupported
    element type %s" (a failing call, not a recorded failure); almost-eq of differing types records
    a failure instead (the contents are not compared)."""
    h = rt.api.new_view(np.array([1.0], np.float16))
    i, j = _views(rt, np.array([1], np.int32), np.array([1], np.int32))
    with pytest.raises(StatusError) as e:
        rt.call("check.expect_all_true", h)
    assert (e.value.code, e.value.status.message) == (StatusCode.INVALID_ARGUMENT, "unsupported element type f16")
    with pytest.raises(StatusError, match="unsupported element type i32"):
        rt.call("check.expect_almost_eq", i, j, 0.0, 0.0)
    rt.call("check.expect_almost_eq", i, h, 0.0, 0.0)
    (f,) = _state(rt).take()
    assert f.message == ("Failed\nExpected near equality of these values. Element types do not match.\n"
                         "  lhs:\n    1xi32=1\n  rhs:\n    1xf16=1")
    _release(rt, h, i, j)


def test_expect_all_true_prints_as_gmock(rt):
    """ExpectAllTrue<T>: EXPECT_THAT(ToSpan<T>(bytes), Each(Not(T(0)))); gmock prints the span as a
    container ({ a, b }, 32 elements at most) and 8-bit elements as gtest prints chars
    (PrintCharAndCodeTo: '\\0', then 'c' (code, 0xHEX) or '\\xHH' (code))."""
    v, w = _views(rt, np.array([3, 0, 65, -1], np.int8), np.arange(40, dtype=np.int64) - 5)
    rt.call("check.expect_all_true", v)
    rt.call("check.expect_all_true", w)
    f, g = _state(rt).take()
    assert f.report() == ("c/runtime/src/iree/modules/check/module.cc:60: Failure\n"
                          "Value of: ToSpan<T>(bytes)\nExpected: only contains elements that isn't equal "
                          "to '\\0'\n  Actual: { '\\x3' (3), '\\0', 'A' (65, 0x41), '\\xFF' (-1) }, whose "
                          "element #1 doesn't match\n")
    shown = ", ".join(str(k) for k in range(-5, 27))
    assert g.message.endswith(f"  Actual: {{ {shown}, ... }}, whose element #5 doesn't match")
    _release(rt, v, w)


def test_const_ops_lower_to_eq(rt):
    """CheckOps.td expect_eq_const / expect_almost_eq_const: expect_eq / expect_almost_eq against a
    constant of the operand's type and shape (the ops' default tolerances)."""
    (v,) = _views(rt, np.array([1.0, 2.0], np.float32))
    state = _state(rt)
    state.expect_eq_const(v, [1.0, 2.0])
    state.expect_almost_eq_const(v, [1.00005, 2.0])  # within the default atol 1e-4
    assert state.take() == []
    state.expect_almost_eq_const(v, [1.001, 2.0])
    state.expect_eq_const(v, [1.0, 3.0])
    assert [f.function for f in state.take()] == ["expect_almost_eq", "expect_eq"]
    _release(rt, v)


# -- programs and `ireeabi test` --------------------------------------------------------------------

FAILING = ("true_fails", "false_fails", "all_true_fails", "eq_fails", "eq_shape_fails",
           "almost_eq_fails", "two_failures")


def _normalized(text: str) -> str:
    return re.sub(r"\(\d+ ms( total)?\)", r"(N ms\1)", text)


@pytest.mark.parametrize("model", MODELS)
def test_ireeabi_test_prints_iree_check_module_output(compiled, model):
    """tools/iree-check-module-main.cc: one gtest test per export (suite: the module name, value
    parameter: the export ordinal), gtest's pretty printer; `Test failed` and the status after a
    failing run; exit 1."""
    rc, out, err = cli("test", str(compiled[model]))
    assert (rc, err) == (1, "")
    lines = _normalized(out).splitlines()
    assert lines[:3] == ["[==========] Running 13 tests from 1 test suite.",
                         "[----------] Global test environment set-up.",
                         "[----------] 13 tests from module"]
    failed = [("true_fails", 1), ("false_fails", 3), ("all_true_fails", 5), ("eq_fails", 7),
              ("eq_shape_fails", 8), ("almost_eq_fails", 10), ("two_failures", 12)]
    assert lines[-17:] == [
        "[----------] 13 tests from module (N ms total)", "",
        "[----------] Global test environment tear-down",
        "[==========] 13 tests from 1 test suite ran. (N ms total)",
        "[  PASSED  ] 6 tests.",
        "[  FAILED  ] 7 tests, listed below:",
        *[f"[  FAILED  ] module.{n}, where GetParam() = {o}" for n, o in failed],
        "", " 7 FAILED TESTS", "Test failed", "OK"]
    for name in FAILING:
        assert f"[ RUN      ] module.{name}\n" in out
        assert re.search(rf"\[  FAILED  \] module\.{name}, where GetParam\(\) = \d+ \(\d+ ms\)\n", out)
    assert out.endswith("\n 7 FAILED TESTS\nTest failed\nOK\n")
    assert out.count(": Failure\n") == 8  # two_failures records two
    eq_fails = out.split("[ RUN      ] module.eq_fails\n")[1].split("[  FAILED")[0]
    assert eq_fails == ("c/runtime/src/iree/modules/check/module.cc:498: Failure\nFailed\n"
                        "Expected equality of these values. Contents does not match.\n"
                        "  lhs:\n    3xf32=1 2 2\n  rhs:\n    3xf32=1 2.5 2\n")


@pytest.mark.parametrize("model", MODELS)
def test_ireeabi_test_passing_functions_exit_0(compiled, model):
    names = ["true_passes", "false_passes", "all_true_passes", "eq_passes", "almost_eq_passes",
             "eq_const_passes"]
    rc, out, err = cli("test", str(compiled[model]), *[a for n in names for a in ("--function", n)])
    assert (rc, err) == (0, "")
    assert _normalized(out).endswith("[==========] 6 tests from 1 test suite ran. (N ms total)\n"
                                     "[  PASSED  ] 6 tests.\n")
    assert out.count("[       OK ]") == 6


def test_ireeabi_test_refuses_functions_with_inputs(tmp_path):
    """iree-check-module: INVALID_ARGUMENT "expected function with no inputs or outputs, but export
    '%.*s' has signature '%.*s'" before any test runs."""
    own = tools.compile_mlir(HERE / "programs" / "native" / "own_module.mlir", tools.session_dir(),
                             "inline-static")
    rc, out, err = cli("test", str(own), "--native-module", "support.own_native_module")
    assert (rc, out) == (1, "")
    assert " ".join(err.split()) == ("ireeabi: error: INVALID_ARGUMENT; expected function with no inputs "
                                     "or outputs, but export 'scale' has signature '0r_r'")
    rc, out, err = cli("test", str(own), "--function", "nope")
    assert rc == 1 and "no test function 'nope'" in err


@pytest.mark.parametrize("target", ["riscv32", "armv7"])
def test_ireeabi_test_on_a_foreign_target(compiled, target):
    """The same tests on a 32-bit data model print the same (the check module reads that target's
    views)."""
    host = _normalized(cli("test", str(compiled["inline-static"]))[1])
    rc, out, err = cli("test", str(compiled["inline-static"]), "--target", target)
    assert (rc, err) == (1, "") and _normalized(out) == host
