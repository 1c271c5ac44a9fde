"""How far one import call is from the least Python that does its memory work (run by hand):

    python benchmarks/bench_import_floor.py

Side by side in one run, for `hal_inline.buffer_view.buffer` (`0r_r`):

- ireeabi: the interpreter's planned call (`NativeModule.planned`) on a real Program — argument frame
  on the scratch stack, the ref retained into it, the shim's checks and decode, the buffer view
  dereferenced through the ref type registry, its buffer retained into the result frame, the release
  walk, the result moved out — and the release of the returned ref;
- floor: the same memory work written straight-line on one ctypes block with precompiled structs:
  every counter and field read/written where ireeabi does it, each pointer checked by the tracked
  heap's bisection, nothing else (no error paths, no registries, no layers). No model can do less
  and still touch the same bytes; the ratio says how much of an import call is Python structure.
"""
from __future__ import annotations

import argparse
import bisect
import ctypes
import statistics
import struct
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
import tests_support  # noqa: E402,F401 - tests/ on the import path, for `support`

from support import iree_tools  # noqa: E402
from ireeabi.vm import ref as R  # noqa: E402
from ireeabi.base.heap import Heap  # noqa: E402
from ireeabi.tooling.program import Program  # noqa: E402

_FRAME = struct.Struct("<QQ")  # a ref: (ptr, type)
_I32 = struct.Struct("<i")
_WORD = struct.Struct("<Q")


def floor_call() -> "tuple[callable, tuple[int, int]]":
    mem = (ctypes.c_char * 4096)()
    view, buf = 1024, 2048  # two objects, their counters at +0, the view's buffer field at +8
    _I32.pack_into(mem, view, 1)
    _I32.pack_into(mem, buf, 1)
    _WORD.pack_into(mem, view + 8, buf)
    starts, ends = [0, 1024, 2048], [512, 1536, 2560]

    def check(a: int, n: int) -> None:
        i = bisect.bisect_right(starts, a) - 1
        if i < 0 or a + n > ends[i]:
            raise MemoryError(a)

    def call(ref: tuple[int, int]) -> tuple:
        args, rets = 64, 32  # the frame: results, then arguments
        check(ref[0], 4)  # retain into the argument buffer
        c = _I32.unpack_from(mem, ref[0])[0]
        _I32.pack_into(mem, ref[0], c + 1)
        _FRAME.pack_into(mem, args, *ref)
        p, _ = _FRAME.unpack_from(mem, args)  # the shim reads its argument
        check(p, 16)
        b = _WORD.unpack_from(mem, p + 8)[0]  # the view's buffer field
        check(b, 4)  # retained into the result
        c = _I32.unpack_from(mem, b)[0]
        _I32.pack_into(mem, b, c + 1)
        _FRAME.pack_into(mem, rets, b, 7)
        p, _ = _FRAME.unpack_from(mem, args)  # the release walk
        check(p, 4)
        c = _I32.unpack_from(mem, p)[0]
        _I32.pack_into(mem, p, c - 1)
        out = _FRAME.unpack_from(mem, rets)
        check(b, 4)  # the caller drops the result
        c = _I32.unpack_from(mem, b)[0]
        _I32.pack_into(mem, b, c - 1)
        return out

    return call, (view, 5)


def per_call_us(fn, arg, n: int) -> float:  # noqa: ANN001
    for _ in range(n // 10):
        fn(arg)
    samples = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            fn(arg)
        samples.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(samples)


def main(n: int) -> None:
    heap = Heap(capture_stacks=False, quarantine=0, name="bench")
    with Program(iree_tools.compile_mlir(ROOT / "tests" / "programs" / "add16.mlir"), heap=heap) as program:
        view = program.buffer_view(np.zeros(16, np.float32))
        module = program.runtime.modules["hal_inline"]
        planned = module.planned(module.lookup("buffer_view.buffer"))

        def ireeabi_call(ref: R.Ref) -> None:
            R.release_value(heap, planned([ref])[0])

        ours = per_call_us(ireeabi_call, view, n)
        floor, ref = floor_call()
        least = per_call_us(floor, ref, n)
        print("hal_inline.buffer_view.buffer, us per call (median of 5 x %d)" % n)
        print(f"  ireeabi planned call + result release   {ours:7.2f}")
        print(f"  floor: the same memory work, no layers  {least:7.2f}   ({ours / least:.1f}x)")
        program.buffers.release(view)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=20000)
    main(ap.parse_args().calls)
