"""`Program(module, RunOptions(...), heap=...)`: every option of a run in one value, which reaches the
runtime and the context it makes; and `with Program(...)`, which closes the program and, when its
body raised, lets the body's error through (as `tracked_heap` does).

Oracle: the inline-static add16 (tests/programs/add16.mlir) and its results, 1.5 + 2 in every
element, as iree-run-module prints them; the leak is IREE #24827's pre-fix storage wrapper (one
`iree_hal_inline_storage_buffer_t` per storage buffer: runtime/src/iree/modules/hal/inline/module.c
before the fix).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from support import iree_tools as tools
from ireeabi.abi.errors import IreeAbiError
from ireeabi.layouts import hal_inline as HI
from ireeabi.tooling.program import Program, RunOptions
from ireeabi.base.heap import LeakError
from ireeabi.base.machine import machine

ADD16 = Path(__file__).resolve().parents[1] / "programs" / "add16.mlir"
A, B = np.full(16, 1.5, np.float32), np.full(16, 2.0, np.float32)


@pytest.fixture(scope="module")
def add16() -> Path:
    return tools.compile_mlir(ADD16, tools.session_dir(), "inline-static")


def test_every_option_reaches_what_the_program_makes(add16):
    options = RunOptions(target="riscv32", heap_limit=64 << 20, max_steps=10**6, max_depth=9,
                         reference=True, legacy_loader=True)  # (no loader in an inline-static run)
    with Program(add16, options) as p:
        assert p.options is options
        assert (p.machine.name, p.heap.limit) == ("riscv32", 64 << 20)
        assert (p.context.max_steps, p.context.max_depth, p.context.reference) == (10**6, 9, True)
        assert (p.runtime.loader.legacy, p.runtime.inline.legacy, p.runtime.vm_buffers.legacy) == \
            (True, False, False)
        assert (p.call("add", A, B) == 3.5).all()


def test_one_value_runs_any_number_of_programs(add16):
    options = RunOptions(target="armv7")
    with Program(add16, options) as p, Program(add16, options) as q:
        assert p.machine is q.machine is machine("armv7")
        assert p.heap is not q.heap
        assert (p.call("add", A, B) == q.call("add", A, B)).all()


def test_the_default_runs_on_the_host():
    assert RunOptions() == RunOptions(target=None, modules=(), heap_limit=None, max_steps=None,
                                      reference=False, trace=None)


def test_options_are_one_value(add16):
    with pytest.raises(IreeAbiError, match="Program options are a RunOptions, got str"):
        Program(add16, "riscv32")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Program(add16, target="riscv32")  # type: ignore[call-arg]


def test_leaving_a_with_closes_and_reports_the_leaks(add16):
    with pytest.raises(LeakError) as info:
        with Program(add16, RunOptions(legacy_inline=True)) as p:
            assert (p.call("add", A, B) == 3.5).all()
    assert p.closed
    wrapper = machine(None).layout(HI.iree_hal_inline_storage_buffer_t).size
    assert wrapper in [a.size for a in info.value.leaks]


def test_a_with_whose_body_raised_closes_and_lets_the_body_error_through(add16):
    """The same leak as above; the body's error is the one raised, not the close's LeakError."""
    with pytest.raises(ZeroDivisionError):
        with Program(add16, RunOptions(legacy_inline=True)) as p:
            p.call("add", A, B)
            1 / 0
    assert p.closed
