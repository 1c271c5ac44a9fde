"""Where a whole call's time goes, in parts the ratio benchmarks do not separate.

    python benchmarks/bench_call_costs.py [--calls N]

- import floor: one planned import call (`NativeModule.planned`, the interpreter's call-site path)
  of trivial targets: `0i_i`, `0r_r` (the result released after), `0r_v`;
- heaps: add16's whole call (median of N) on the default tracked heap, without stacks, without
  stacks with a quarantine of 8 blocks, and bare (no stacks, no quarantine);
- cold caches: add16's whole call without stacks, each call after a memset of 1, 2 or 4 MiB of
  other memory (outside the timing), as add1m's calls come after its zero-fill and its kernel:
  how much of the interpreter's working set the 2 MiB L2 loses, and what that costs;
- stack capture: one `capture_stack` 30 frames deep (what the default heap takes per malloc and free);
- heap operations: a malloc and its free (120 and 240 bytes, among 200 live blocks) with the default
  quarantine and with none, and a retain with its release (a vm.buffer's counter, through the
  checked-address memo and the int32 view);
- add1m parts: the whole call, the kernel alone (`Library.issue`, timed inside the call), and a
  4 MiB memset on the heap (the CALLOC zero-fill of the output buffer).

Medians of N repetitions in one process, heaps without stacks unless said; inline-dynamic.
"""
from __future__ import annotations

import argparse
import ctypes
import statistics
import time
from contextlib import contextmanager
from typing import Callable, Iterator

from bench_program import HEAPS, PROGRAMS, _inputs, _release_all, iree_tools
from ireeabi.hal.local import elf_executable as executable
from ireeabi.tooling.program import Program
from ireeabi.vm.buffer import BufferAccess, BufferType
from ireeabi.base.allocation import capture_stack
from ireeabi.base.heap import Heap
from ireeabi.vm.native_module import Export, NativeModule
from ireeabi.vm.ref import Ref, TypeRegistry, object_release, object_retain


def _median_us(fn, n: int) -> float:
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1e6


def import_floor(n: int) -> None:
    heap = Heap(name="floor", **HEAPS["no-stacks"])
    bt = BufferType(TypeRegistry(heap))
    r = Ref(bt.create(BufferAccess.MUTABLE, 64), bt.type)
    mod = NativeModule(heap, "m", [Export("i", "0i_i", lambda ctx, x: x + 1),
                                   Export("r", "0r_r", lambda ctx, x: ctx.retain(x)),
                                   Export("v", "0r_v", lambda ctx, x: None)])
    for name, ordinal, arg in (("0i_i", 0, 5), ("0r_r", 1, r), ("0r_v", 2, r)):
        planned = mod.planned(ordinal)

        def one() -> None:
            for value in planned([arg]):
                if type(value) is Ref:
                    object_release(heap, value.ptr, value.type)
        print(f"  import floor {name}: {_median_us(one, n):7.2f} us per planned call")
    mod.close()


@contextmanager
def _program(bench_name: str, heap: Heap) -> Iterator[tuple[Program, list, Callable[[], None]]]:
    """The program of a benchmark on `heap`, warmed up: (program, its inputs, one whole call);
    the inputs are released and the program closed when the block ends."""
    bench = PROGRAMS[bench_name]
    with Program(iree_tools.compile_mlir(bench.source, model="inline-dynamic"), heap=heap) as program:
        args = _inputs(program, bench)
        invoke = program.context.invoke

        def call() -> None:
            _release_all(program, invoke(bench.function, *args))
        for _ in range(30):
            call()
        yield program, args, call
        _release_all(program, args)


def heaps(n: int) -> None:
    for label, kwargs in (("default tracked heap", HEAPS["default"]), ("without stacks", HEAPS["no-stacks"]),
                          ("without stacks, quarantine 8", {**HEAPS["no-stacks"], "quarantine": 8}),
                          ("bare (no stacks, no quarantine)", HEAPS["bare"])):
        with _program("add16", Heap(name="bench", **kwargs)) as (_, _, call):
            for _ in range(1500):  # past the quarantine's first fill
                call()
            print(f"  add16, {label + ':':33s} {_median_us(call, n):8.1f} us per call")


def cold_caches(n: int) -> None:
    with _program("add16", Heap(name="bench", **HEAPS["no-stacks"])) as (_, _, call):
        other = ctypes.create_string_buffer(4 << 20)
        for mib in (0, 1, 2, 4):
            samples = []
            for _ in range(n):
                if mib:
                    ctypes.memset(other, 1, mib << 20)
                t0 = time.perf_counter()
                call()
                samples.append(time.perf_counter() - t0)
            print(f"  add16 without stacks, after a {mib} MiB memset: "
                  f"{statistics.median(samples) * 1e6:8.1f} us per call")


def stack_capture(n: int) -> None:
    def deep(k: int) -> float:
        if k:
            return deep(k - 1)
        return _median_us(lambda: capture_stack(0), n)
    print(f"  stack capture, 30 frames deep: {deep(30):6.2f} us")


def heap_operations(n: int) -> None:
    for label, quarantine in (("quarantine 1024", 1024), ("no quarantine", 0)):
        heap = Heap(name="ops", capture_stacks=False, quarantine=quarantine)
        keep = [heap.malloc(64 + 16 * (i % 8)) for i in range(200)]

        def pair() -> None:
            a, b = heap.malloc(120), heap.malloc(240)
            heap.free(a)
            heap.free(b)
        print(f"  malloc + free, {label + ':':17s} {_median_us(pair, n) / 2:6.2f} us per pair")
        for p in keep:
            heap.free(p)
    heap = Heap(name="ops", capture_stacks=False)
    bt = BufferType(TypeRegistry(heap))
    bufs = [bt.create(BufferAccess.MUTABLE, 64) for _ in range(3)]

    def counts() -> None:
        for b in bufs:
            object_retain(heap, b, bt.type)
            object_release(heap, b, bt.type)
    print(f"  retain + release of a vm.buffer:  {_median_us(counts, n) / 3:6.2f} us per pair")
    for b in bufs:
        object_release(heap, b, bt.type)


def add1m_parts(n: int) -> None:
    heap = Heap(name="bench", **HEAPS["no-stacks"])
    with _program("add1m", heap) as (_, _, call):
        kernel: list[float] = []
        real = executable.Library.issue

        def timed(self, *a, **k):  # type: ignore[no-untyped-def]
            t0 = time.perf_counter()
            try:
                return real(self, *a, **k)
            finally:
                kernel.append(time.perf_counter() - t0)
        executable.Library.issue = timed  # type: ignore[method-assign]
        try:
            whole = _median_us(call, n)
        finally:
            executable.Library.issue = real  # type: ignore[method-assign]
        block = heap.malloc(4 << 20)
        host = heap.host_address(block)
        fill = _median_us(lambda: ctypes.memset(host, 0, 4 << 20), n)
        heap.free(block)
        print(f"  add1m whole call {whole:8.1f} us; kernel (Library.issue) {statistics.median(kernel) * 1e6:8.1f} us; "
              f"4 MiB memset {fill:8.1f} us")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=2000, help="repetitions per measurement (add1m: / 8)")
    args = ap.parse_args()
    import_floor(args.calls * 10)
    stack_capture(args.calls * 10)
    heap_operations(args.calls * 10)
    heaps(args.calls)
    cold_caches(args.calls // 2)
    add1m_parts(max(50, args.calls // 8))


if __name__ == "__main__":
    main()
