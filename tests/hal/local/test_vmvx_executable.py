"""vmvx dispatches (hal/local/vmvx_executable.py): the fast path calls the export once per workgroup
through the context's `direct_call` (looked up, checked and laid out once per dispatch, the context
held for it all); the reference path (RunOptions.reference, IREEABI_REFERENCE=1) invokes it by name
per workgroup. Both against each other on a kernel of 8 workgroups (tests/programs/vmvx/
workgroups.mlir): the same results as iree-run-module, the same ref retains and releases in the
same order, and, where workgroup 3 of 8 loads past its binding, the same error at the same pc,
the same bytes written by workgroups 0-2 and nothing left allocated.
"""
from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

from support import iree_tools
from support.e2e_corpus import ours
from ireeabi.base.status import StatusCode, StatusError
from ireeabi.hal.local import vmvx_executable
from ireeabi.tooling.program import Program, RunOptions
from ireeabi.vm.errors import VmError

SOURCE = Path(__file__).resolve().parents[2] / "programs" / "vmvx" / "workgroups.mlir"
N, GROUP = 512, 64  # elements; per workgroup (vmvx's tile: 8 workgroups)
# Exact in f32 (x, y, x * y + x): iree-run-module prints each value whole.
X = np.arange(N, dtype=np.float32) * np.float32(0.25) - np.float32(7)
Y = (np.arange(N) % 7 - 3).astype(np.float32)
INPUTS = [f"512xf32={' '.join(f'{v:g}' for v in X)}", f"512xf32={' '.join(f'{v:g}' for v in Y)}"]


@pytest.fixture(scope="module")
def vmfb() -> Path:
    return iree_tools.compile_mlir(SOURCE, model="vmvx")


@pytest.fixture(scope="module")
def expected(vmfb: Path) -> str:
    return iree_tools.run_module(vmfb, "mix", INPUTS)


@contextlib.contextmanager
def _program(vmfb: Path, reference: bool, monkeypatch: pytest.MonkeyPatch
              ) -> Iterator[tuple[Program, list]]:
    """A Program of the module and the vmvx libraries its executables load (as the hal module loads
    them: vmvx_executable.load), the heap's ref events recorded from the start."""
    libraries: list = []
    load = vmvx_executable.load

    def recording(*args: object) -> vmvx_executable.VmvxLibrary:
        libraries.append(load(*args))  # type: ignore[arg-type]
        return libraries[-1]
    with monkeypatch.context() as m:
        m.setattr(vmvx_executable, "load", recording)
        with Program(vmfb, RunOptions(reference=reference)) as program:
            program.heap.ref_events = []
            yield program, libraries


def _canonical(events: list) -> list:
    """Ref events with each object named by the order it first appears (the two runs' heaps put
    their objects at different addresses)."""
    names: dict = {}
    return [(kind, names.setdefault((ptr, type_word), len(names))) for kind, ptr, type_word in events]


def test_the_reference_switch_reaches_the_kernels(vmfb, expected, monkeypatch):
    """RunOptions(reference=True) runs the kernels' bytecode on the reference path too (before, only
    IREEABI_REFERENCE=1 did: the kernels' contexts took the fast path under a reference Program)."""
    for reference in (False, True):
        with _program(vmfb, reference, monkeypatch) as (program, libraries):
            assert ours(program, "mix", INPUTS) == expected
            assert [lib.context.reference for lib in libraries] == [reference]


def test_workgroups_fast_and_reference_agree(vmfb, expected, monkeypatch):
    """The whole call on both paths: iree-run-module's output, and the same retains and releases
    of the same objects in the same order (the fast path's frames hold and drop what each whole
    invoke's did); only the fast path made direct calls."""
    runs = {}
    for reference in (False, True):
        with _program(vmfb, reference, monkeypatch) as (program, libraries):
            assert ours(program, "mix", INPUTS) == expected
            runs[reference] = _canonical(program.heap.ref_events)
            made = libraries[0].context._direct_makers  # noqa: SLF001 - which way the calls went
            assert bool(made) is not reference
    assert runs[False] == runs[True]
    assert len(runs[False]) > 10 * (N // GROUP)  # each workgroup's own retains and releases are in it


def _dispatch_past_the_end(vmfb: Path, reference: bool, monkeypatch: pytest.MonkeyPatch
                           ) -> tuple[StatusError, bytes, list, int, int]:
    """The kernel's dispatch of 8 workgroups with binding 0 (x) cut to 3 workgroups' elements:
    (the error, the output binding's bytes after, the dispatch's ref events, the heap's live
    blocks before and after)."""
    with _program(vmfb, reference, monkeypatch) as (program, libraries):
        ours(program, "mix", INPUTS)  # loads the executable
        library, heap = libraries[0], program.heap
        sentinel = np.full(N, -1.5, np.float32).tobytes()
        blocks = [heap.malloc(3 * GROUP * 4), heap.malloc(4 * N), heap.malloc(4 * N)]
        for block, data in zip(blocks, (X[:3 * GROUP].tobytes(), Y.tobytes(), sentinel)):
            heap.write(block, data)
        live = len(heap.live())
        heap.ref_events = []
        with pytest.raises(StatusError) as raised:
            library.run_workgroups(0, (N // GROUP, 1, 1), [],
                                   [(blocks[0], 3 * GROUP * 4), (blocks[1], 4 * N), (blocks[2], 4 * N)])
        events = _canonical(heap.ref_events)
        after = len(heap.live())
        out = heap.read(blocks[2], 4 * N)
        for block in blocks:
            heap.free(block)
        return raised.value, out, events, live, after


def test_a_fault_in_workgroup_3_of_8_is_the_same_on_both_paths(vmfb, expected, monkeypatch):
    fast = _dispatch_past_the_end(vmfb, False, monkeypatch)
    reference = _dispatch_past_the_end(vmfb, True, monkeypatch)
    (err, out, events, live, after), (ref_err, ref_out, ref_events, ref_live, ref_after) = fast, reference
    assert (err.code, str(err)) == (ref_err.code, str(ref_err))
    assert err.code == StatusCode.OUT_OF_RANGE and "offset=768" in str(err)  # x[192]: workgroup 3's first
    cause, ref_cause = err.__cause__, ref_err.__cause__  # the VM's error: where in the kernel
    assert isinstance(cause, VmError) and type(cause) is type(ref_cause)
    assert (cause.function, cause.pc, cause.stack) == (ref_cause.function, ref_cause.pc, ref_cause.stack)
    assert cause.function.startswith("mix_dispatch_0")
    assert out == ref_out and events == ref_events
    assert (live, after) == (ref_live, ref_after) and after == live  # the views freed, nothing kept
    # workgroups 0-2 wrote what iree-run-module computes there; 3-7 nothing
    printed = expected.split("512xf32=")[1].split()
    got = np.frombuffer(out, np.float32)
    assert got[:3 * GROUP].tolist() == [float(np.float32(v)) for v in printed[:3 * GROUP]]
    assert (got[3 * GROUP:] == np.float32(-1.5)).all()
