"""The program heap's limit (issue 16): by default what the host's memory can hold, within the
target's address window; `--heap-limit` / `heap_limit=` lower it, and only past the limit does an
allocation fail, with RESOURCE_EXHAUSTED.

Oracles: the OS (sysconf's physical pages), iree-run-module (the ~512 MB program's output) and the
targets' address windows (base.address_space.window_limit: 32-bit pointers reach below 4 GiB).
"""
from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import pytest

from support import iree_tools as tools
from ireeabi.cli.loading import parse_heap_limit
from ireeabi.cli.main import main
from ireeabi.tooling.program import Program, RunOptions
from ireeabi.base.heap import Heap, default_limit
from ireeabi.base.machine import machine
from ireeabi.base.status import StatusCode

LARGE = Path(__file__).parents[1] / "programs" / "native" / "large_fill.mlir"
TENSOR_BYTES = (1 << 27) * 4  # the program's one tensor: 512 MiB


@pytest.fixture(scope="module")
def large() -> Path:
    return tools.compile_mlir(LARGE, tools.session_dir(), "inline-dynamic")


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = main(list(argv), stdout=out, stderr=err)
    return rc, out.getvalue(), err.getvalue()


def test_default_limit_is_host_memory_within_the_window():
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert default_limit(machine(None)) == physical
    for name in ("riscv32", "armv7", "wasm32", "i386"):
        limit = default_limit(machine(name))
        assert limit == min(physical, (1 << 32) - 2 * 0x10000)  # below 4 GiB, above the NULL page
        heap = Heap(target=name)
        try:
            assert heap.limit == limit
        finally:
            heap.close()
    heap = Heap()
    try:
        assert heap.limit == physical
    finally:
        heap.close()


def test_limit_is_a_positive_size():
    with pytest.raises(Exception, match="positive number of bytes"):
        Heap(limit=0)
    assert [parse_heap_limit(t) for t in ("64M", "64mib", "2G", "512K", "4096")] == \
        [64 << 20, 64 << 20, 2 << 30, 512 << 10, 4096]
    for bad in ("", "0", "-1M", "1.5G", "12Q"):
        with pytest.raises(Exception, match="not a positive size"):
            parse_heap_limit(bad)


def test_512_mb_of_tensors_run_within_the_default_limit(large):
    """The old fixed 256 MiB cap refused this program; now it prints what iree-run-module prints."""
    inputs = ["2.5", "100000000"]
    theirs = tools.run_module(large, "big", inputs)
    rc, out, err = cli("run", str(large), "--function", "big", *(f"--input={i}" for i in inputs))
    assert (rc, out, err) == (0, theirs, "")
    assert out == "EXEC @big\nresult[0]: f32=2.5\n"


def test_a_lower_limit_refuses_it_cleanly(large):
    rc, out, err = cli("run", str(large), "--function", "big", "--input=1", "--input=0",
                       "--heap-limit", "64M")
    assert (rc, out) == (1, "EXEC @big\n")
    assert err.startswith("ireeabi: error: RESOURCE_EXHAUSTED;") and "Traceback" not in err
    assert f"{TENSOR_BYTES} bytes requested" in err and f"of {64 << 20}" in " ".join(err.split())
    with Program(large, RunOptions(heap_limit=64 << 20)) as prog:
        with pytest.raises(Exception) as e:
            prog.call("big", np.float32(1), 0)
        assert getattr(e.value, "code", None) == StatusCode.RESOURCE_EXHAUSTED
        assert prog.heap.limit == 64 << 20
    with Program(large, RunOptions(heap_limit=TENSOR_BYTES + (16 << 20))) as prog:  # just enough
        assert prog.call("big", np.float32(3), 7) == np.float32(3)


def test_heap_limit_needs_the_programs_own_heap(large):
    heap = Heap()
    try:
        with pytest.raises(Exception, match="heap_limit applies to the program's own heap"):
            Program(large, RunOptions(heap_limit=1 << 20), heap=heap)
    finally:
        heap.close()
