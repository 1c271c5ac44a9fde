"""What the bytecode-bound benchmark (sum1m) could reach in Python with its checks kept: the loop body
of tests/programs/sum1m.mlir written by hand at its leanest, against the fast path's real call.

    python benchmarks/bench_bytecode_floor.py [--elements N]

The kernel's loop runs, per element, eight VM instructions: a compare and a branch, two
vm.buffer.load.f32 (the input, the accumulator), vm.add.f32, vm.buffer.store.f32, vm.add.i64 and a
branch. The hand-written body keeps what IREE does per access and ireeabi keeps on both paths: the
buffer's header read from memory (VmBufferFactory.deref), IREE's bounds check, the element read or
written in tracked memory, the f32 rounding of the sum. It drops everything else: the registers
are Python locals, there is no dispatch, no register bytes, no handler or PURE_OPS call. So its time
per element is a floor for any block compiler that keeps the per-access checks.
"""
from __future__ import annotations

import argparse
import struct
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
import tests_support  # noqa: E402,F401 - tests/ on the import path, for `support`

from support import iree_tools  # noqa: E402
from ireeabi.tooling.program import Program  # noqa: E402
from ireeabi.base.heap import Heap  # noqa: E402

_F32 = struct.Struct("<f")


def floor_us(program: Program, n: int) -> float:
    """µs per element of the hand-written loop body over two real VM buffers of the program."""
    buffers = program.context.buffers
    source, acc = buffers.allocate(4 * n, 64), buffers.allocate(4, 64)
    deref, mask = buffers.deref, program.heap.machine.word_mask
    t0 = time.perf_counter()
    i = 0
    while i < n:
        b = deref(source)
        size, s = b.data.nbytes, (i * 4) & mask
        if not (((i + 1) * 4) & mask <= size and s + 4 <= size):
            raise AssertionError("bounds")
        x = _F32.unpack_from(b.data, s)[0]
        c = deref(acc)
        y = _F32.unpack_from(c.data, 0)[0]
        total = _F32.unpack(_F32.pack(x + y))[0]
        d = deref(acc)
        if not d.mutable:
            raise AssertionError("read-only")
        _F32.pack_into(d.data, 0, total)
        i += 1
    took = time.perf_counter() - t0
    buffers.release(source)
    buffers.release(acc)
    return took / n * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--elements", type=int, default=1 << 20, help="loop iterations of the floor")
    args = ap.parse_args()
    vmfb = iree_tools.compile_mlir(ROOT / "tests" / "programs" / "sum1m.mlir", model="inline-static")
    with Program(vmfb, heap=Heap(capture_stacks=False, quarantine=0, name="bench")) as program:
        view = program.buffer_view(np.full(1 << 20, 1.5, np.float32))
        t0 = time.perf_counter()
        out = program.context.invoke("sum", view)
        real = (time.perf_counter() - t0) / (1 << 20) * 1e6
        program.buffers.release(out[0])
        floor = floor_us(program, args.elements)
        program.buffers.release(view)
    print(f"sum1m on the fast path: {real:.3f} us per element ({real * (1 << 20) / 1e6:.2f} s per call)")
    print(f"hand-written floor with the checks kept: {floor:.3f} us per element "
          f"({floor * (1 << 20) / 1e6:.2f} s per call); 40x iree-benchmark-module's ~15-20 ms is "
          f"0.6-0.8 us per element")


if __name__ == "__main__":
    main()
