"""`Program.call` hands a call's results back as iree.runtime's function invoker does
(iree/runtime/function.py, `FunctionInvoker.__call__`): the value itself for one result, None for
none, a tuple for several; `Program.call_results` gives the list, one item per result.

Oracle: iree.runtime's own invoker (local-sync device) on the same .vmfb, for every export of
tests/programs/returns/returns.mlir (zero, one and two results; tensors and scalars) built for the
default execution model with llvm-cpu and with vmvx kernels. iree.runtime cannot load the inline
models (it has no hal_inline) and its invoker appends no fences, so for those builds of the same
source (inline-static; async-external-vmvx, called with the program's fences and with fences of
one's own) the oracle is its invoker on the vmvx build.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from support import iree_tools as tools
from ireeabi.tooling.execution_model import DEFAULT_MODELS
from ireeabi.tooling.program import Program
from ireeabi.base.heap import tracked_heap

RETURNS = Path(__file__).resolve().parent.parent / "programs" / "returns"
A = np.array([1.5, -2.0, 0.25, 8.0], np.float32)
B = np.array([0.5, 3.0, -1.0, 2.0], np.float32)
# (export, inputs, result count as declared in returns.mlir)
CASES = [("nothing", (), 0), ("one", (A, B), 1), ("two", (A, B), 2), ("mixed", (A, 4), 2),
         ("scalar", (7,), 1)]
ASYNC_CASES = [c for c in CASES if c[0] in ("nothing", "one", "two")]  # returns_async.mlir's


def _iree_runtime(vmfb: Path, calls: list[tuple[str, tuple, int]]) -> list[Any]:
    """What iree.runtime's invoker returns for each call, its arrays copied to the host (the
    container kept: None, the value, or a tuple)."""
    import iree.runtime as ireert  # noqa: PLC0415 - only this oracle needs the wheel's bindings

    ctx = ireert.SystemContext(config=ireert.Config("local-sync"))
    ctx.add_vm_module(ireert.VmModule.copy_buffer(ctx.instance, vmfb.read_bytes()))
    module = ctx.modules.module

    def host(value: Any) -> Any:
        return value.to_host() if hasattr(value, "to_host") else value

    out = []
    for function, inputs, _ in calls:
        got = module[function](*inputs)
        out.append(tuple(host(v) for v in got) if type(got) is tuple else host(got))
    return out


def _assert_same(ours: Any, theirs: Any, what: str, listed: bool = False) -> None:
    """One value of ours equals iree.runtime's: an array of the same dtype, shape and bytes, or
    for iree.runtime's Python int / float the same value of the same type (`call`), a numpy scalar
    of the same value in `call_results`'s list (`listed`: format_results prints its width)."""
    if isinstance(theirs, np.ndarray):
        assert isinstance(ours, np.ndarray), (what, ours)
        assert (ours.dtype, ours.shape) == (theirs.dtype, theirs.shape), what
        assert ours.tobytes() == theirs.tobytes(), what
    else:
        assert type(theirs) in (int, float), (what, theirs)
        if listed:
            assert isinstance(ours, np.generic) and ours == theirs, (what, ours, theirs)
        else:
            assert type(ours) is type(theirs) and ours == theirs, (what, ours, theirs)


def _assert_returned_alike(ours: Any, theirs: Any, what: str) -> None:
    """Program.call's return has iree.runtime's shape (None / the value / a tuple) and values."""
    if theirs is None:
        assert ours is None, (what, ours)
    elif type(theirs) is tuple:
        assert type(ours) is tuple and len(ours) == len(theirs), (what, ours)
        for k, (mine, its) in enumerate(zip(ours, theirs)):
            _assert_same(mine, its, f"{what} result {k}")
    else:
        assert type(ours) not in (tuple, list), (what, ours)
        _assert_same(ours, theirs, what)


def _as_list(theirs: Any) -> list:
    return [] if theirs is None else list(theirs) if type(theirs) is tuple else [theirs]


def test_the_oracle_returns_none_a_value_or_a_tuple():
    """The oracle itself, for each result count of returns.mlir: None, the value, a tuple."""
    vmfb = tools.compile_mlir(RETURNS / "returns.mlir", model="vmvx")
    theirs = _iree_runtime(vmfb, CASES)
    for (function, _, count), got in zip(CASES, theirs):
        if count == 0:
            assert got is None, function
        elif count == 1:
            assert type(got) is not tuple and got is not None, function
        else:
            assert type(got) is tuple and len(got) == count, function


@pytest.mark.parametrize("model", DEFAULT_MODELS)
def test_call_returns_what_iree_runtime_returns(model):
    """Every export of the same .vmfb: Program.call's return is iree.runtime's (None / the value /
    a tuple, the same values), and call_results is the list of the same values."""
    vmfb = tools.compile_mlir(RETURNS / "returns.mlir", model=model)
    theirs = _iree_runtime(vmfb, CASES)
    with tracked_heap() as heap, Program(vmfb, heap=heap) as p:
        for (function, inputs, count), want in zip(CASES, theirs):
            _assert_returned_alike(p.call(function, *inputs), want, f"{model} {function}")
            listed = p.call_results(function, *inputs)
            assert type(listed) is list and len(listed) == count, function
            for k, (mine, its) in enumerate(zip(listed, _as_list(want))):
                _assert_same(mine, its, f"{model} {function} call_results[{k}]", listed=True)


def test_an_inline_build_returns_alike():
    """The inline-static build of the same source (hal_inline, which iree.runtime cannot load)
    returns as iree.runtime returns for the vmvx build."""
    theirs = _iree_runtime(tools.compile_mlir(RETURNS / "returns.mlir", model="vmvx"), CASES)
    vmfb = tools.compile_mlir(RETURNS / "returns.mlir", model="inline-static")
    with tracked_heap() as heap, Program(vmfb, heap=heap) as p:
        for (function, inputs, _), want in zip(CASES, theirs):
            _assert_returned_alike(p.call(function, *inputs), want, f"inline-static {function}")


def test_async_external_calls_return_alike():
    """An async-external export (fences appended by the program, or one's own given) returns as
    iree.runtime's invoker returns the synchronous build's; call_results with fences too."""
    theirs = _iree_runtime(tools.compile_mlir(RETURNS / "returns_async.mlir", model="vmvx"),
                           ASYNC_CASES)
    vmfb = tools.compile_mlir(RETURNS / "returns_async.mlir", model="async-external-vmvx")
    with tracked_heap() as heap, Program(vmfb, heap=heap) as p:
        for (function, inputs, count), want in zip(ASYNC_CASES, theirs):
            assert p.takes_fences(function)
            _assert_returned_alike(p.call(function, *inputs), want, f"async {function}")
            wait, signal = p.new_fence(), p.new_fence()
            try:
                p.signal_fence(wait)
                _assert_returned_alike(p.call(function, *inputs, wait=wait, signal=signal), want,
                                       f"async {function}, own fences")
                assert p.fence_status(signal) is None
            finally:
                p.release_fence(wait)
                p.release_fence(signal)
            listed = p.call_results(function, *inputs)
            assert type(listed) is list and len(listed) == count, function
            for k, (mine, its) in enumerate(zip(listed, _as_list(want))):
                _assert_same(mine, its, f"async {function} call_results[{k}]")
