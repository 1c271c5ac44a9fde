"""Threads: a Program serializes its callers; a Context refuses a second thread's invoke.

The rule (tooling/program.py, vm/context.py): a heap, and the runtime and context on it, belong
to one thread at a time, as an IREE VM context does. `Program` takes a lock around each call, so
concurrent callers get the results a sequential run gives them; a bare `Context` refuses another
thread's invoke at once with ContextBusyError instead of interleaving two calls on one heap.
"""
from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

from support import iree_tools as tools
from ireeabi.tooling.program import Program
from ireeabi.vm.bytecode import Context, ContextBusyError, VmStatusError
from ireeabi.base.status import StatusCode

HERE = Path(__file__).parents[1]
E2E = HERE / "programs" / "e2e"
STEPS = (1, 1_000, 1_000_000, 1_000_000_000)  # one per thread: every total decodes uniquely
CALLS = 60


def _run_threads(target, n: int) -> list:
    errors: list = []
    start = threading.Barrier(n)

    def body(k: int) -> None:
        try:
            start.wait()
            target(k)
        except BaseException as e:  # noqa: BLE001 - reported by the test
            errors.append(e)
    threads = [threading.Thread(target=body, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


@pytest.mark.parametrize("model", ["inline-static", "inline-dynamic"])
def test_four_threads_share_a_program_and_its_mutable_global(model):
    """@next adds its step to a mutable global (10 at start). Each thread has its own step, so every
    result says how many calls of each thread came before it: a thread's own share must grow by
    exactly one per call, and the final total counts every call once. The starting value and the
    step rule come from iree-run-module on the same module."""
    path = tools.compile_mlir(E2E / "counter.mlir", None, model)
    assert int(tools.run_module_results([path], "next", ["5"], 1)[0]) == 15
    seen: dict[int, list[int]] = {k: [] for k in range(4)}
    with Program(path.read_bytes()) as prog:
        def calls(k: int) -> None:
            for _ in range(CALLS):
                value = prog.call("next", np.int64(STEPS[k]))
                seen[k].append(int(value))
        assert _run_threads(calls, 4) == []
        final = prog.call("next", np.int64(0))
    assert int(final) == 10 + CALLS * sum(STEPS)
    for k, values in seen.items():
        own = [(v - 10) // STEPS[k] % 1000 for v in values]
        assert own == list(range(1, CALLS + 1)), f"thread {k}"


def test_four_threads_get_their_own_tensor_results():
    """add16 with different inputs per thread: each result is iree-run-module's for that input, and
    nothing leaks (the program's own heap raises LeakError on close otherwise)."""
    path = tools.compile_mlir(HERE / "programs" / "add16.mlir", None, "inline-dynamic")
    inputs = [np.arange(16, dtype=np.float32) * (k + 1) + 0.25 for k in range(4)]
    expected = [tools.run_module_results(
        [path], "add", [f"16xf32={','.join(repr(float(x)) for x in a)}", "16xf32=0.5"], 1)[0]
        for a in inputs]
    half = np.full(16, 0.5, np.float32)
    wrong: list = []
    prog = Program(path.read_bytes())

    def calls(k: int) -> None:
        for _ in range(CALLS):
            out = prog.call("add", inputs[k], half)
            if out.tobytes() != expected[k].tobytes():
                wrong.append((k, out))
    assert _run_threads(calls, 4) == []
    assert wrong == []
    prog.close()


def test_a_context_refuses_another_threads_invoke_at_once():
    """While one thread runs a long call, another thread's invoke fails with ContextBusyError
    immediately (no waiting, no interleaving); the running call is unaffected and the context is
    usable again once it returns."""
    path = tools.compile_with_flags(HERE / "programs" / "host" / "control.mlir", tools.HOST_FLAGS)
    with Context(path, max_steps=3_000_000) as ctx:
        outcome: list = []

        def long_call() -> None:
            try:
                ctx.invoke("sum_squares", 2**31 - 1)
            except VmStatusError as e:
                outcome.append(e.code)
        t = threading.Thread(target=long_call)
        t.start()
        deadline = time.monotonic() + 30
        while ctx._owner is None and time.monotonic() < deadline:
            time.sleep(0.001)
        with pytest.raises(ContextBusyError, match="another thread runs a call on this context"):
            ctx.invoke("sum_squares", 3)
        # refused without waiting for the running call: it is still running (3M steps; while this
        # thread waits for the GIL the other runs a switch interval, a few ms, not seconds)
        assert t.is_alive() and outcome == []
        t.join()
        assert outcome == [StatusCode.DEADLINE_EXCEEDED]
        assert ctx.invoke("sum_squares", 3) == [0 + 1 + 4]
