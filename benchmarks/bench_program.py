"""Whole programs in the interpreter on the emulated ABI vs iree-benchmark-module on the same
module.

    python benchmarks/bench_program.py [--rounds N] [--model inline-dynamic|inline-static]

For tests/programs/add16.mlir and add1m.mlir (inline-dynamic by default): the module loaded into a
`Program` (bytecode interpreter + HalRuntime on a heap), its two inputs made once as
hal.buffer_views (as iree-benchmark-module makes its inputs once), then each timed call is the whole
function run by the interpreter — buffer_view.assert / .buffer, buffer.allocate, buffer.storage,
lookup.function, hal_loader.executable.dispatch on the real kernel, buffer_view.create, every import
through a packed argument buffer and its shim — and the release of the result view.
iree-benchmark-module runs the same function with `--device=local-sync`. Both in this one run, on
this machine; medians.

`--profile` prints the interpreter's cProfile top entries for the small program instead;
`--breakdown` the mean time of each import call site (each planned native call timed on its own,
so the sum includes the timer's overhead) and of the rest, for both programs.
"""
from __future__ import annotations

import argparse
import collections
import cProfile
import pstats
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import iree_tools  # noqa: E402
from ireeabi.vm.heap import Heap  # noqa: E402
from ireeabi.vm.interp.program import Program  # noqa: E402
from ireeabi.vm.module import PlannedCall  # noqa: E402

PROGRAMS = {  # name -> (source, elements, target ratio)
    "add16": (ROOT / "tests" / "programs" / "add16.mlir", 16, 25.0),
    "add1m": (ROOT / "tests" / "programs" / "add1m.mlir", 1 << 20, 1.5),
}


def ireeabi_ms(vmfb: Path, n: int, rounds: int, checked: bool) -> tuple[float, float]:
    """(median, mean) ms of one whole `add` call in the interpreter. `checked`: the default tracked
    heap (every allocation's Python stack recorded, freed blocks poisoned and quarantined: the last
    1024 remembered, up to 16 MiB of blocks of <= 1 MiB kept unreused); otherwise no stacks and no
    quarantine (freed memory goes back to the C allocator)."""
    heap = Heap(name="bench") if checked else Heap(capture_stacks=False, quarantine=0,
                                                    name="bench")
    program = Program(vmfb, heap=heap)
    a = program.buffer_view(np.full(n, 1.5, np.float32))
    b = program.buffer_view(np.full(n, 2.0, np.float32))
    invoke, release = program.context.invoke, program.buffers.release
    out, = invoke("add", a, b)
    assert (program.to_numpy(out) == 3.5).all()
    release(out)
    for _ in range(min(20, rounds)):
        release(invoke("add", a, b)[0])
    samples = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        out, = invoke("add", a, b)
        release(out)
        samples.append(time.perf_counter() - t0)
    release(a)
    release(b)
    program.close()
    return statistics.median(samples) * 1e3, statistics.mean(samples) * 1e3


def iree_benchmark_ms(vmfb: Path, n: int) -> tuple[float, float]:
    """(median, mean) ms of iree-benchmark-module's repetitions (JSON: full precision)."""
    out = subprocess.run(
        [iree_tools.find_tool("iree-benchmark-module"), "--device=local-sync", f"--module={vmfb}",
         "--function=add", f"--input={n}xf32=1.5", f"--input={n}xf32=2",
         "--benchmark_repetitions=10", "--benchmark_min_time=0.2s", "--benchmark_format=json"],
        capture_output=True, text=True, check=True, timeout=600).stdout
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
    stats = {b.get("aggregate_name"): b["real_time"] * scale[b["time_unit"]]
             for b in json.loads(out)["benchmarks"]}
    return stats["median"], stats["mean"]


def profile(vmfb: Path, n: int, rounds: int) -> None:
    program = Program(vmfb, heap=Heap(capture_stacks=False, quarantine=0, name="bench"))
    a = program.buffer_view(np.full(n, 1.5, np.float32))
    b = program.buffer_view(np.full(n, 2.0, np.float32))
    invoke, release = program.context.invoke, program.buffers.release
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(rounds):
        release(invoke("add", a, b)[0])
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    release(a)
    release(b)
    program.close()


def breakdown(vmfb: Path, n: int, rounds: int) -> None:
    """Mean µs per call of each import (by export name) and of the whole call, no stacks/quarantine."""
    spent: collections.Counter = collections.Counter()
    calls: collections.Counter = collections.Counter()
    real = PlannedCall.__call__

    def timed(self: PlannedCall, flat: list) -> list:
        t0 = time.perf_counter()
        try:
            return real(self, flat)
        finally:
            name = f"{self.module.name}.{self.export.name}"
            spent[name] += time.perf_counter() - t0
            calls[name] += 1

    program = Program(vmfb, heap=Heap(capture_stacks=False, quarantine=0, name="bench"))
    a = program.buffer_view(np.full(n, 1.5, np.float32))
    b = program.buffer_view(np.full(n, 2.0, np.float32))
    invoke, release = program.context.invoke, program.buffers.release
    PlannedCall.__call__ = timed  # type: ignore[method-assign]
    try:
        for _ in range(min(20, rounds)):
            release(invoke("add", a, b)[0])
        spent.clear()
        calls.clear()
        t0 = time.perf_counter()
        for _ in range(rounds):
            release(invoke("add", a, b)[0])
        whole = (time.perf_counter() - t0) / rounds * 1e6
    finally:
        PlannedCall.__call__ = real  # type: ignore[method-assign]
    for name, t in spent.most_common():
        print(f"    {name:42s} {t / calls[name] * 1e6:8.1f} us  x{calls[name] // rounds}")
    imports = sum(spent.values()) / rounds * 1e6
    print(f"    {'imports, in all':42s} {imports:8.1f} us")
    print(f"    {'the rest (interpreter, result release)':42s} {whole - imports:8.1f} us")
    release(a)
    release(b)
    program.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=400)
    ap.add_argument("--model", default="inline-dynamic", choices=sorted(iree_tools.MODEL_FLAGS))
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--breakdown", action="store_true")
    args = ap.parse_args()
    if args.breakdown:
        for name, (src, n, _) in PROGRAMS.items():
            print(f"  {name}, {args.model}: mean us per call")
            breakdown(iree_tools.compile_mlir(src, model=args.model), n,
                      args.rounds if n < 4096 else max(20, args.rounds // 8))
        return
    if args.profile:
        src, n, _ = PROGRAMS["add16"]
        profile(iree_tools.compile_mlir(src, model=args.model), n, args.rounds)
        return
    print(f"whole `add` call, {args.model}, ms per call (medians; mean in parentheses)")
    for name, (src, n, target) in PROGRAMS.items():
        if args.model == "inline-static" and n > 4096:
            print(f"  {name}: skipped (inline-static kernels are bytecode: {n} interpreted "
                  f"iterations)")
            continue
        vmfb = iree_tools.compile_mlir(src, model=args.model)
        rounds = args.rounds if n < 4096 else max(20, args.rounds // 8)
        fast = ireeabi_ms(vmfb, n, rounds, checked=False)
        checked = ireeabi_ms(vmfb, n, max(20, rounds // 4), checked=True)
        theirs = iree_benchmark_ms(vmfb, n)
        print(f"  {name} ({n} elements)")
        print(f"    ireeabi Program, heap without stacks/quarantine  {fast[0]:9.4f} "
              f"({fast[1]:.4f})")
        print(f"    ireeabi Program, default tracked heap            {checked[0]:9.4f} "
              f"({checked[1]:.4f})")
        print(f"    iree-benchmark-module (local-sync)               {theirs[0]:9.4f} "
              f"({theirs[1]:.4f})")
        print(f"    ratio (median, heap without stacks/quarantine)   {fast[0] / theirs[0]:9.1f}x"
              f"  (target <= {target:g}x)")


if __name__ == "__main__":
    main()
