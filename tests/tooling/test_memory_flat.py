"""Memory proportional to the work: the resident size of one process stays flat over 10,000 calls of
a small program (inline-dynamic add16, a real kernel per call; inline-static counter, bytecode
only), once the first calls have warmed it up."""
from __future__ import annotations

import gc
from pathlib import Path

import numpy as np
import pytest

from support import iree_tools as tools
from ireeabi.tooling.program import Program

HERE = Path(__file__).parents[1]
CALLS, WARM = 10_000, 1_000
BOUND = 4 << 20  # bytes the resident size may grow over the last 9,000 calls


def _rss() -> int:
    gc.collect()
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")


@pytest.mark.parametrize("src, model, function, args", [
    ("add16.mlir", "inline-dynamic", "add", (np.ones(16, np.float32), np.arange(16, dtype=np.float32))),
    ("e2e/counter.mlir", "inline-static", "next", (np.int64(1),)),
])
def test_resident_size_stays_flat_over_10000_calls(src, model, function, args):
    path = tools.compile_mlir(HERE / "programs" / src, None, model)
    with Program(path.read_bytes()) as prog:
        for _ in range(WARM):
            prog.call(function, *args)
        before = _rss()
        for _ in range(CALLS - WARM):
            prog.call(function, *args)
        grown = _rss() - before
        assert grown <= BOUND, f"resident size grew by {grown} bytes over {CALLS - WARM} calls"
        assert prog.heap.live_bytes < 1 << 16  # nothing accumulates on the program's heap either
