"""Memory per VM instruction is bounded (issue 41, item 3): the compiled path's generated functions
cover at most `blocks.MAX_RUN` instructions (a region at most `blocks.MAX_REGION`), so compiling a
function costs the same per instruction whatever its length. A VM test function of 100,000
instructions in one block peaked at 1.5 GB (Python's compiler holding one function's whole tree,
about 15 KB per instruction). Memory is counted in bytes (tracemalloc's peak), never timed; the
paths are compared on functions longer than both bounds (blocks cut into runs, a region left to
runs), whose results the assembly checks itself (a wrong sum fails the test).
"""
from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from support import iree_tools as tools
from ireeabi.tooling.program import Program, RunOptions
from ireeabi.tooling.vm_test_module import run_vm_test, vm_tests
from ireeabi.vm.bytecode import blocks
from ireeabi.abi import generated
from ireeabi.vm.bytecode.module_file import clear_read_memo, read_module

BIG = 5_000  # instructions of the straight function: past MAX_REGION (see the test)
PER_INSTRUCTION = 5_000  # bytes of peak per instruction allowed (15 KB and more before)


def _straight(n: int) -> list[str]:
    """`test_straight`: n additions of 1 in one block (cut into runs), then a check of the sum."""
    lines = ["vm.export @test_straight", "vm.func @test_straight() -> () {", "^bb0:",
             "  %i0 = vm.const.i32 0", "  %i1 = vm.const.i32 1"]
    lines += ["  %i0 = vm.add.i32 %i0, %i1"] * n
    lines += [f"  %i2 = vm.const.i32 {n}", "  %i3 = vm.cmp.eq.i32 %i0, %i2",
              "  vm.cond_br %i3, ^bb1(), ^bb2()", "^bb1:", "  vm.return", "^bb2:",
              "  %i4 = vm.const.i32 9", '  vm.fail %i4, "wrong sum"', "}", ""]
    return lines


def _loop(body: int, turns: int) -> list[str]:
    """`test_loop`: `turns` iterations of a block of `body` additions (a region past MAX_REGION)."""
    lines = ["vm.export @test_loop", "vm.func @test_loop() -> () {", "^bb0:",
             "  %i0 = vm.const.i32 0", "  %i1 = vm.const.i32 1", "  %i2 = vm.const.i32 0",
             f"  %i3 = vm.const.i32 {turns}", "  vm.br ^bb1()", "^bb1:"]
    lines += ["  %i0 = vm.add.i32 %i0, %i1"] * body
    lines += ["  %i2 = vm.add.i32 %i2, %i1", "  %i4 = vm.cmp.lt.i32.s %i2, %i3",
              "  vm.cond_br %i4, ^bb1(), ^bb2()", "^bb2:",
              f"  %i5 = vm.const.i32 {body * turns}", "  %i6 = vm.cmp.eq.i32 %i0, %i5",
              "  vm.cond_br %i6, ^bb3(), ^bb4()", "^bb3:", "  vm.return", "^bb4:",
              "  %i7 = vm.const.i32 9", '  vm.fail %i7, "wrong sum"', "}", ""]
    return lines


def _assemble(folder: Path, name: str, functions: list[str]) -> Path:
    src = folder / f"{name}.vmasm"
    src.write_text("\n".join([f"vm.module @{name} version 0", "vm.type i32", "", *functions]))
    return tools.assemble_vmasm(src, folder)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("instruction-memory")


def test_long_blocks_and_regions_run_alike_on_both_paths(folder):
    assert blocks.MAX_RUN < 1000 and blocks.MAX_REGION < 5000
    path = _assemble(folder, "long", _straight(1000 + blocks.MAX_RUN // 3) + _loop(blocks.MAX_REGION + 7, 3))
    module = read_module(path.read_bytes())
    for test in vm_tests(module, "long.vmfb"):
        for reference in (False, True):
            outcome = run_vm_test(module, test, RunOptions(reference=reference))
            assert outcome.passed, (test.function, reference, outcome.failure())


def test_a_function_costs_bounded_memory_per_instruction(folder, monkeypatch):
    """Compiled, then read back from the generated code's disk cache (which read each file into a
    buffer the size of its bound, 64 MiB, before it shrank: 5,675 bytes per instruction at 20,000).

    Why 5,000 instructions (20,000 before; the test's CPU 12 s -> 2.6 s, tracemalloc slowing the
    compile): past MAX_REGION, so the function is a region cut into runs as the long one was. Peaks
    per instruction measured (tracemalloc, fresh code cache) at 5,000 / 20,000: with the cut, 3,250 /
    2,593 compiled and 1,649 / 1,681 read back (a fixed ~3 MB spread thinner at 5,000); without it
    (MAX_RUN and MAX_REGION unbounded), 15,224 / 14,800 compiled: both failures stay three times the
    bound, and the 64 MiB read buffer alone is 13,422 bytes per instruction at 5,000 (3,355 at 20,000,
    where it broke the bound by only 675 bytes)."""
    assert BIG > blocks.MAX_REGION
    monkeypatch.setenv(generated.CACHE_VARIABLE, str(folder / "code-cache"))
    module = read_module(_assemble(folder, "big", _straight(BIG)).read_bytes())
    for how in ("compiled", "read back"):
        generated.clear_memo()  # this process's memo of code: each pass makes or reads its own
        clear_read_memo()
        tracemalloc.start()
        try:
            with Program(module, RunOptions()) as program:  # the compiled path: every function compiled
                assert program.context.begin("test_straight").finish(1) == []
                peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak <= PER_INSTRUCTION * BIG, f"{how}: {peak / BIG:.0f} bytes per instruction"
