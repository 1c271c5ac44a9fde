"""The check-style corpus (tests/programs/check) against oracles nobody here wrote.

Every corpus file is turned into its returning twin (`check_corpus.twin_source`: each function
returns its check calls' operands), compiled for both inline models, and run by iree-run-module and
by ireeabi's `Program`. For every function:
- ireeabi prints what iree-run-module prints, byte for byte, and its values have the same element
  types, shapes and bytes (iree-run-module's raw `--output=@file` bytes);
- every expectation holds on iree-run-module's values, with the check module's semantics
  (runtime/src/iree/modules/check/module.cc: ExpectEq compares element type, shape and bytes;
  ExpectAlmostEq compares element type and shape, then each element with
  iree_math_fuzzy_compare_f64 from runtime/src/iree/base/internal/math.h; ExpectTrue/ExpectFalse an
  i32 against zero; ExpectAllTrue every element against zero, for the element types it lists);
- the expected values spelled in the .mlir agree with numpy's (tests/support/check_reference.py).
"""
from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import pytest

from support import check_corpus as cc
from support import iree_tools as tools
from support.check_reference import REFERENCE
from ireeabi.hal.element_types import dtype_of, element_type_of
from ireeabi.hal.string_util import parse_element_type
from ireeabi.tooling.function_io import format_results
from ireeabi.cli.main import main
from ireeabi.tooling.program import Program
from ireeabi.base.heap import tracked_heap

FILES = cc.corpus_files()
FUNCTIONS = [(path.stem, f) for path in FILES for f in cc.parse(path.read_text(), str(path))]
FAILING = cc.CHECK_DIR / "failing.mlir"
# ExpectAllTrue's element types (module.cc, ExpectAllTrue(bytes, element_type)).
ALL_TRUE_TYPES = {"i8", "i16", "i32", "i64", "si8", "si16", "si32", "si64", "ui8", "ui16",
                  "ui32", "ui64", "f32", "f64"}
FLOAT_TYPES = {"f16", "bf16", "f32", "f64"}


class Value:
    """One result as iree-run-module reports it: element type name, shape (None: a scalar), bytes."""

    def __init__(self, type_name: str, shape: tuple[int, ...] | None, raw: bytes) -> None:
        self.type_name, self.shape, self.raw = type_name, shape, raw
        self.array = np.frombuffer(raw, dtype_of(parse_element_type(type_name))).reshape(shape or ())

    def floats(self) -> np.ndarray:
        """The elements as float64, as the check module loads them (f16/bf16 widened exactly)."""
        if self.type_name == "bf16":
            return (self.array.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        return self.array.astype(np.float64)


def _compile_all(sources: list[tuple[str, Path]], compile_one) -> dict[tuple[str, str], Path]:
    """(name, source) pairs compiled for both models by `compile_one(source, model)`, two compiles
    at a time."""
    jobs = [(name, src, model) for name, src in sources for model in cc.MODELS]
    built = tools.map_compiles(lambda j: compile_one(j[1], j[2]), jobs)
    return {(name, model): vmfb for (name, _, model), vmfb in zip(jobs, built)}


@pytest.fixture(scope="session")
def twins() -> dict[tuple[str, str], Path]:
    """Each corpus file's twin (and failing.mlir's) compiled for both models."""
    sources = []
    for path in [*FILES, FAILING]:
        # at one path for every xdist worker: compiled once per run
        twin = tools.shared_source(f"{path.stem}_twin.mlir", cc.twin_source(path.read_text(), str(path)))
        sources.append((path.stem, twin))
    return _compile_all(sources, lambda src, model: tools.compile_mlir(src, tools.session_dir(),
                                                                      model, cc.F64))


@pytest.fixture(scope="session")
def checks() -> dict[tuple[str, str], Path]:
    """Each corpus file (and failing.mlir) as written, calling the check module: the modules the
    pytest plugin's items of these files run (tests/tooling/test_plugin_collect.py), from its cache."""
    return _compile_all([(path.stem, path) for path in [*FILES, FAILING]], cc.compile_check)


@pytest.fixture(scope="module")
def programs(twins):
    """One ireeabi Program per twin module on a tracked heap, closed (leak-checked) at the end."""
    opened: dict = {}
    with tracked_heap() as heap:
        def get(stem: str, model: str) -> Program:
            if (stem, model) not in opened:
                opened[stem, model] = Program(twins[stem, model], heap=heap)
            return opened[stem, model]
        yield get
        for p in opened.values():
            p.close()


def iree_results(vmfb: Path, function: str, count: int) -> tuple[str, list[Value]]:
    """iree-run-module's stdout and its results (types and shapes from the stdout, bytes from a
    second run writing each result raw with `--output=@file`)."""
    text = tools.run_module(vmfb, function)
    headers = cc.result_headers(text)
    assert len(headers) == count, text
    raws = cc.run_module_raw(vmfb, function, count)
    return text, [Value(t, s, r) for (t, s), r in zip(headers, raws)]


def fuzzy(actual: float, expected: float, atol: float, rtol: float) -> bool:
    """iree_math_fuzzy_compare_f64 (runtime/src/iree/base/internal/math.h)."""
    if actual == expected or (math.isnan(actual) and math.isnan(expected)):
        return True
    if not math.isfinite(expected):
        return False
    return abs(actual - expected) <= atol + rtol * abs(expected)


def expectation_holds(call: cc.CheckCall, values: list[Value]) -> tuple[bool, str]:
    """Whether one check call passes on these operand values, by the check module's rules."""
    if call.check in ("expect_true", "expect_false"):
        v = int(values[0].array)
        return (v != 0) == (call.check == "expect_true"), f"operand {v}"
    if call.check == "expect_all_true":
        v = values[0]
        if v.type_name not in ALL_TRUE_TYPES:
            return False, f"unsupported element type {v.type_name}"
        return bool(np.all(v.array != 0)), f"{v.array}"
    lhs, rhs = values[0], values[1]
    same = lhs.type_name == rhs.type_name and lhs.shape == rhs.shape
    if call.check == "expect_eq":
        return same and lhs.raw == rhs.raw, f"lhs {lhs.array!r} rhs {rhs.array!r}"
    atol, rtol = float(values[2].array), float(values[3].array)
    if not same or lhs.type_name not in FLOAT_TYPES:
        return False, f"lhs {lhs.type_name}{lhs.shape} rhs {rhs.type_name}{rhs.shape}"
    ok = all(fuzzy(a, e, atol, rtol) for a, e in zip(lhs.floats().ravel(), rhs.floats().ravel()))
    return ok, f"lhs {lhs.array!r} rhs {rhs.array!r} atol {atol} rtol {rtol}"


def split(function: cc.CheckFunction, values: list) -> list[list]:
    """The twin's results grouped per check call."""
    groups, at = [], 0
    for call in function.calls:
        groups.append(values[at:at + len(call.operands)])
        at += len(call.operands)
    return groups


def test_corpus_size_and_categories():
    """Issue 16's corpus: at least 40 functions over its categories, each with a numpy reference."""
    assert {p.stem for p in FILES} == {"elementwise", "reductions", "linalg", "gather_scatter",
                                      "sort_topk", "control_flow", "element_types", "dynamic"}
    assert len(FUNCTIONS) >= 40
    assert {f.name for _, f in FUNCTIONS} == set(REFERENCE)
    used = {call.check for _, f in FUNCTIONS for call in f.calls}
    assert used == set(cc.CHECK_OPERANDS)


@pytest.mark.parametrize("model", cc.MODELS)
@pytest.mark.parametrize("stem,function", FUNCTIONS, ids=[f"{s}.{f.name}" for s, f in FUNCTIONS])
def test_twin(twins, programs, model, stem, function):
    vmfb = twins[stem, model]
    count = len(function.result_types)
    text, values = iree_results(vmfb, function.name, count)

    # ireeabi runs the same twin: the same printout and the same values.
    ours = programs(stem, model).call_results(function.name)
    assert f"EXEC @{function.name}\n" + format_results(ours) == text
    for mine, theirs in zip(ours, values):
        mine = np.asarray(mine)
        assert element_type_of(mine.dtype) == parse_element_type(theirs.type_name)
        assert mine.shape == (theirs.shape or ())
        assert mine.tobytes() == theirs.raw

    # Every expectation holds on iree-run-module's values, and numpy derives the same values.
    reference = REFERENCE[function.name]()
    assert len(reference) == len(function.calls)
    for call, operands, ref in zip(function.calls, split(function, values), reference):
        ok, detail = expectation_holds(call, operands)
        assert ok, f"{function.name}: check.{call.check} fails on iree-run-module's values: {detail}"
        assert_reference(call, operands, ref, function.name)


def assert_reference(call: cc.CheckCall, operands: list[Value], ref, name: str) -> None:
    """numpy's value agrees with the checked one: exactly for eq/true/false/all_true, within the
    call's own tolerances (numpy's as the actual, the .mlir's as the expected) for almost_eq."""
    if call.check in ("expect_true", "expect_false", "expect_all_true"):
        got = operands[0]
        ref = np.asarray(ref)
        assert element_type_of(ref.dtype) == parse_element_type(got.type_name), name
        assert ref.tobytes() == got.raw and ref.shape == (got.shape or ()), name
        return
    expected = operands[1]
    ref = np.asarray(ref)
    assert element_type_of(ref.dtype) == parse_element_type(expected.type_name), name
    assert ref.shape == expected.shape, name
    if call.check == "expect_eq":
        assert ref.tobytes() == expected.raw, f"{name}: numpy {ref!r} != .mlir {expected.array!r}"
        return
    atol, rtol = float(operands[2].array), float(operands[3].array)
    ref_value = Value(expected.type_name, expected.shape, ref.tobytes())
    assert all(fuzzy(a, e, atol, rtol) for a, e in zip(ref_value.floats().ravel(),
                                                      expected.floats().ravel())), \
        f"{name}: numpy {ref!r} is not within tolerance of the .mlir's {expected.array!r}"


# --------------------------------------------------------------------------- `ireeabi test`

def ireeabi_test(vmfb: Path) -> tuple[int, str]:
    out = io.StringIO()
    code = main(["test", str(vmfb)], stdout=out)
    return code, out.getvalue()


@pytest.mark.parametrize("model", cc.MODELS)
@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_ireeabi_test_passes_the_corpus(checks, model, path):
    code, out = ireeabi_test(checks[path.stem, model])
    functions = cc.parse(path.read_text(), str(path))
    assert code == 0, out
    for f in functions:
        assert f"[ RUN      ] module.{f.name}\n[       OK ] module.{f.name} (" in out
    assert f"[  PASSED  ] {len(functions)} tests.\n" in out
    assert "FAILED" not in out


def _why_not_eq(lhs: Value, rhs: Value) -> str:
    """ExpectEq's reasons, in module.cc's order."""
    return "".join([" Element types do not match." if lhs.type_name != rhs.type_name else "",
                    " Shapes do not match." if lhs.shape != rhs.shape else "",
                    " Contents does not match." if lhs.raw != rhs.raw else ""])


def _why_not_almost_eq(lhs: Value, rhs: Value, atol: float, rtol: float) -> str:
    """ExpectAlmostEq's reasons; numbers as C++ streams print them (%g, then %.3e)."""
    if lhs.type_name != rhs.type_name or lhs.shape != rhs.shape:
        return "".join([" Element types do not match." if lhs.type_name != rhs.type_name else "",
                        " Shapes do not match." if lhs.shape != rhs.shape else ""])
    pairs = zip(lhs.floats().ravel(), rhs.floats().ravel())
    i, (a, e) = next((i, p) for i, p in enumerate(pairs) if not fuzzy(*p, atol, rtol))
    return (f" Contents does not match to tolerance parameters atol={atol:g}, rtol={rtol:g}. The "
            f"first failure occurs at index {i} as the lhs value {a:g} differs from the rhs value "
            f"{e:g} by {e - a:.3e}.")


def _printed(text: str) -> list[str]:
    """The value lines of iree-run-module's printout (a buffer view's line after its header)."""
    lines = text.splitlines()
    values = []
    for i, line in enumerate(lines):
        if line.startswith("result["):
            values.append(lines[i + 1] if line.endswith("hal.buffer_view") else line.split(": ")[1])
    return values


@pytest.mark.parametrize("model", cc.MODELS)
def test_ireeabi_test_reports_each_wrong_expectation(checks, twins, model):
    """failing.mlir: every function fails, exit 1, and each failure carries module.cc's message
    about the values iree-run-module computes for the same function (its twin)."""
    functions = cc.parse(FAILING.read_text(), str(FAILING))
    assert {c.check for f in functions for c in f.calls} == set(cc.CHECK_OPERANDS)
    code, out = ireeabi_test(checks["failing", model])
    assert code == 1, out
    assert out.endswith(f"\n{len(functions):2d} FAILED TESTS\nTest failed\nOK\n")
    reports = out.split("[ RUN      ] ")[1:]
    assert len(reports) == len(functions)
    for ordinal, (f, report) in enumerate(zip(functions, reports)):
        assert report.startswith(f"module.{f.name}\n")
        assert f"[  FAILED  ] module.{f.name}, where GetParam() = {ordinal} (" in report
        text, values = iree_results(twins["failing", model], f.name, len(f.result_types))
        printed = _printed(text)
        call, = f.calls
        if call.check == "expect_true":
            assert f"\nExpected {int(values[0].array)} to be nonzero.\n" in report
        elif call.check == "expect_false":
            assert f"\nExpected {int(values[0].array)} to be zero.\n" in report
        elif call.check == "expect_all_true":
            # module.cc's EXPECT_THAT(ToSpan<T>(bytes), Each(Not(T(0)))): gtest prints the span.
            elements = ", ".join(str(int(v)) for v in values[0].array)
            assert "\nValue of: ToSpan<T>(bytes)\n" in report
            assert f"  Actual: {{ {elements} }}" in report
        else:
            lhs, rhs = values[0], values[1]
            if call.check == "expect_eq":
                head = "Expected equality of these values." + _why_not_eq(lhs, rhs)
            else:
                atol, rtol = float(values[2].array), float(values[3].array)
                head = ("Expected near equality of these values."
                        + _why_not_almost_eq(lhs, rhs, atol, rtol))
            assert (f"\n{head}\n  lhs:\n    {printed[0]}\n  rhs:\n    {printed[1]}\n"
                    in report), report


# --------------------------------------------------------------------------- the twin transform

CALL_EQ = "  util.call @check.expect_eq(%a, %b) : (!hal.buffer_view, !hal.buffer_view) -> ()"


def test_twin_transform_returns_the_operands_in_call_order():
    text = "\n".join([
        "util.func private @check.expect_eq(%lhs: !hal.buffer_view, %rhs: !hal.buffer_view)",
        "util.func private @check.expect_true(%operand: i32)",
        "func.func @f() {", "  %x = arith.constant 1 : i32", CALL_EQ,
        "  util.call @check.expect_true(%x) : (i32) -> ()", "  return", "}"])
    fns = cc.parse(text)
    assert [f.name for f in fns] == ["f"]
    assert fns[0].result_types == ("!hal.buffer_view", "!hal.buffer_view", "i32")
    twin = cc.twin_source(text)
    assert "@check." not in twin
    assert "func.func @f() -> (!hal.buffer_view, !hal.buffer_view, i32) {" in twin
    assert "  return %a, %b, %x : !hal.buffer_view, !hal.buffer_view, i32" in twin


@pytest.mark.parametrize("body,message", [
    (["func.func @f(%a: i32) {", CALL_EQ, "  return", "}"], "takes no arguments"),
    (["func.func @f() {", "  scf.if %c {", "  " + CALL_EQ, "  }", "  return", "}"],
     "top-level"),
    (["func.func @f() {", CALL_EQ, "}"], "bare `return`"),
    (["func.func @f() {", "  %x = arith.constant 1 : i32", "  return", "}"], "calls no check"),
    (["func.func @f() {", "  util.call @check.expect_eq(%a) : (!hal.buffer_view) -> ()",
      "  return", "}"], "check.expect_eq takes"),
    (["func.func @f() {", "  util.call @check.expect_nothing(%a) : (i32) -> ()", "  return", "}"],
     "unknown check function"),
    (["func.func @f() {", CALL_EQ, "  return"], "no closing brace"),
    (["func.func @f() {", CALL_EQ, "  return", "}"] * 2, "defined twice"),
])
def test_twin_transform_rejects_what_it_cannot_transform(body, message):
    with pytest.raises(cc.CorpusFormatError, match=message):
        cc.parse("\n".join(body), "x.mlir")
