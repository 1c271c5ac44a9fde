"""Whole programs in the interpreter on the emulated ABI vs iree-benchmark-module on the same
module.

    python benchmarks/bench_program.py [--rounds N] [--model inline-dynamic|inline-static]

Three programs (inline-dynamic by default), each loaded into a `Program` (bytecode interpreter +
HalRuntime on a heap):

- counter: tests/programs/e2e/counter.mlir `next(1)`, the corpus's mutable-global counter: a small
  program without tensors (global load, add, store; no import call);
- add16 / add1m: tests/programs/add16.mlir and add1m.mlir `add(a, b)`, their two inputs made once as
  hal.buffer_views (as iree-benchmark-module makes its inputs once); each timed call is the whole
  function run by the interpreter — buffer_view.assert / .buffer, buffer.allocate, buffer.storage,
  lookup.function, hal_loader.executable.dispatch on the real kernel, buffer_view.create, every
  import through a packed argument buffer and its shim — and the release of the result view.

iree-benchmark-module runs the same function with `--device=local-sync`. Both in this one run, on
this machine, alternately (`--pairs`): medians of each side, and the median of the per-pair ratios.

`--profile` prints the interpreter's cProfile top entries for the small program instead;
`--breakdown` the mean time of each import call site (each planned native call timed on its own,
so the sum includes the timer's overhead) and of the rest, for both programs.

`--target T` compares data models instead of tools: each program runs on a heap laid out for T and on
one laid out for the host, alternately in this one run, and the ratio T / host is reported. Kernels of
host machine code run only on the host, so a foreign T wants `--model inline-static` for programs
with dispatches (add16; add1m is skipped there, its kernel being a million interpreted iterations).
"""
from __future__ import annotations

import argparse
import collections
import cProfile
import pstats
import json
import statistics
import subprocess
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
import tests_support  # noqa: E402,F401 - tests/ on the import path, for `support`

from support import iree_tools  # noqa: E402
from ireeabi.tooling.program import KernelTargetError  # noqa: E402
from ireeabi.vm.bytecode import VmError  # noqa: E402
from ireeabi.base import machine  # noqa: E402
from ireeabi.base.heap import Heap  # noqa: E402
from ireeabi.tooling.program import Program, RunOptions  # noqa: E402
from ireeabi.vm.native_module import PlannedCall  # noqa: E402

class Bench(NamedTuple):
    source: Path
    function: str
    elements: int  # per f32 input tensor; 0: the scalar input 1
    target: float  # the ratio bound of issue 14 (generated fast paths)
    inputs: int = 2  # f32 tensors (when elements)
    expect: float = 3.5  # every element of the first result (when elements)
    rounds: int = 0  # timed calls per measurement, when the default would take minutes
    model: str = ""  # the only execution model the program is measured in ("": any)


PROGRAMS = {
    "counter": Bench(ROOT / "tests" / "programs" / "e2e" / "counter.mlir", "next", 0, 20.0),
    "add16": Bench(ROOT / "tests" / "programs" / "add16.mlir", "add", 16, 80.0),
    "add1m": Bench(ROOT / "tests" / "programs" / "add1m.mlir", "add", 1 << 20, 1.5),
    # bytecode-bound: for inline-static the reduction is a 1M-iteration loop of VM bytecode
    "sum1m": Bench(ROOT / "tests" / "programs" / "sum1m.mlir", "sum", 1 << 20, 40.0, inputs=1,
                   expect=1.5 * (1 << 20), rounds=1, model="inline-static"),
}


def _inputs(program: Program, bench: Bench) -> list:
    if not bench.elements:
        return [1]
    return [program.buffer_view(np.full(bench.elements, 1.5 if i == 0 else 2.0, np.float32))
            for i in range(bench.inputs)]


def _release_all(program: Program, values: list) -> None:
    for v in values:
        if not isinstance(v, (int, float)):
            program.buffers.release(v)


# The heaps a measurement runs on. Issue 14's ratios hold on the default tracked heap with its
# checks on, stack capture off allowed: "no-stacks" (freed blocks still poisoned and quarantined).
HEAPS = {
    "default": {},  # every allocation's Python stack recorded, freed blocks poisoned and quarantined
    "no-stacks": {"capture_stacks": False},  # the same, without stacks
    "bare": {"capture_stacks": False, "quarantine": 0},  # no stacks, freed memory reused at once
}


def ireeabi_ms(vmfb: Path, bench: Bench, rounds: int, heap: str = "no-stacks",
               target: "str | None" = None, reference: bool = False) -> tuple[float, float]:
    """(median, mean) ms of one whole call in the interpreter (and the release of its results), on
    a heap of `target` (the host by default) configured as HEAPS[heap]: "default" is the default
    tracked heap (every allocation's Python stack recorded, freed blocks poisoned and quarantined:
    the last 1024 remembered, up to 16 MiB of blocks of <= 1 MiB kept unreused), "no-stacks" the
    same without stacks, "bare" neither stacks nor quarantine (freed memory goes back to the free
    lists at once). `reference`: the interpreter's per-instruction handlers and layered import
    calls instead of compiled blocks and planned calls."""
    heap_ = Heap(target=target, name="bench", **HEAPS[heap])
    with Program(vmfb, RunOptions(reference=reference), heap=heap_) as program:
        args = _inputs(program, bench)
        invoke, function = program.context.invoke, bench.function
        out = invoke(function, *args)
        if bench.elements:  # the answer is checked once, outside the timing
            assert (program.to_numpy(out[0]) == bench.expect).all()
        _release_all(program, out)
        for _ in range(min(20, rounds)):
            _release_all(program, invoke(function, *args))
        samples = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            _release_all(program, invoke(function, *args))
            samples.append(time.perf_counter() - t0)
        _release_all(program, args)
    return statistics.median(samples) * 1e3, statistics.mean(samples) * 1e3


def iree_benchmark_ms(vmfb: Path, bench: Bench) -> tuple[float, float]:
    """(median, mean) ms of iree-benchmark-module's repetitions (JSON: full precision)."""
    n = bench.elements
    inputs = [f"--input={n}xf32=1.5", f"--input={n}xf32=2"][:bench.inputs] if n else ["--input=1"]
    out = subprocess.run(
        [iree_tools.find_tool("iree-benchmark-module"), "--device=local-sync", f"--module={vmfb}",
         f"--function={bench.function}", *inputs,
         "--benchmark_repetitions=10", "--benchmark_min_time=0.2s", "--benchmark_format=json"],
        capture_output=True, text=True, check=True, timeout=600).stdout
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
    stats = {b.get("aggregate_name"): b["real_time"] * scale[b["time_unit"]]
             for b in json.loads(out)["benchmarks"]}
    return stats["median"], stats["mean"]


def profile(vmfb: Path, bench: Bench, rounds: int) -> None:
    with Program(vmfb, heap=Heap(name="bench", **HEAPS["no-stacks"])) as program:
        args = _inputs(program, bench)
        invoke = program.context.invoke
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(rounds):
            _release_all(program, invoke(bench.function, *args))
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        _release_all(program, args)


def breakdown(vmfb: Path, bench: Bench, rounds: int) -> None:
    """Mean µs per call of each import (by export name) and of the whole call, on the tracked heap
    without stacks."""
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

    with Program(vmfb, heap=Heap(name="bench", **HEAPS["no-stacks"])) as program:
        args = _inputs(program, bench)
        invoke = program.context.invoke
        PlannedCall.__call__ = timed  # type: ignore[method-assign]
        try:
            for _ in range(min(20, rounds)):
                _release_all(program, invoke(bench.function, *args))
            spent.clear()
            calls.clear()
            t0 = time.perf_counter()
            for _ in range(rounds):
                _release_all(program, invoke(bench.function, *args))
            whole = (time.perf_counter() - t0) / rounds * 1e6
        finally:
            PlannedCall.__call__ = real  # type: ignore[method-assign]
        for name, t in spent.most_common():
            print(f"    {name:42s} {t / calls[name] * 1e6:8.1f} us  x{calls[name] // rounds}")
        imports = sum(spent.values()) / rounds * 1e6
        print(f"    {'imports, in all':42s} {imports:8.1f} us")
        print(f"    {'the rest (interpreter, result release)':42s} {whole - imports:8.1f} us")
        _release_all(program, args)


def compare_targets(args: argparse.Namespace) -> None:
    """Each program on `args.target` and on the host, alternately: medians and the ratio."""
    host = machine.host().name
    print(f"whole call, {args.model}, ms per call (medians), {args.target} vs the host ({host})")
    for name, bench in PROGRAMS.items():
        n = bench.elements
        if args.model == "inline-static" and n > 4096:
            print(f"  {name}: skipped (inline-static kernels are bytecode: {n} interpreted iterations)")
            continue
        vmfb = iree_tools.compile_mlir(bench.source, model=args.model)
        rounds = _rounds(bench, args.rounds)
        pairs = []
        try:
            for _ in range(args.pairs):
                theirs = ireeabi_ms(vmfb, bench, rounds, target=args.target)
                ours = ireeabi_ms(vmfb, bench, rounds)
                pairs.append((theirs[0], ours[0]))
        except KernelTargetError as e:
            print(f"  {name}: cannot run on {args.target}: {str(e).split('; ')[-1]}")
            continue
        except VmError as e:  # an import the layout rules predict incompatible there (i386)
            print(f"  {name}: fails on {args.target} as `inspect --check-imports` predicts: {e}")
            continue
        ratios = sorted(t / h for t, h in pairs)
        print(f"  {name}: {bench.function}; {args.pairs} alternating pairs, tracked heap without stacks")
        print(f"    on {args.target:8s} {statistics.median(t for t, _ in pairs):9.4f}  "
              f"(pairs: {', '.join(f'{t:.4f}' for t, _ in pairs)})")
        print(f"    on {host:8s} {statistics.median(h for _, h in pairs):9.4f}  "
              f"(pairs: {', '.join(f'{h:.4f}' for _, h in pairs)})")
        print(f"    ratio, median of the pairs' (min, max) {statistics.median(ratios):6.2f}x  "
              f"({ratios[0]:.2f}-{ratios[-1]:.2f}; target <= 2x)")


def compare_paths(vmfb: Path, name: str, bench: Bench, rounds: int, pairs_n: int) -> None:
    """The reference path and the fast path, alternately, on the default tracked heap."""
    pairs = []
    for _ in range(pairs_n):
        ref = ireeabi_ms(vmfb, bench, rounds, heap="default", reference=True)
        fast = ireeabi_ms(vmfb, bench, rounds, heap="default")
        pairs.append((ref[0], fast[0]))
    ratios = sorted(r / f for r, f in pairs)
    print(f"  {name}: {bench.function}; {pairs_n} alternating pairs, default tracked heap")
    print(f"    reference path {statistics.median(r for r, _ in pairs):10.4f}  "
          f"(pairs: {', '.join(f'{r:.4f}' for r, _ in pairs)})")
    print(f"    fast path      {statistics.median(f for _, f in pairs):10.4f}  "
          f"(pairs: {', '.join(f'{f:.4f}' for _, f in pairs)})")
    print(f"    speed-up, median of the pairs' (min, max) {statistics.median(ratios):6.2f}x  "
          f"({ratios[0]:.2f}-{ratios[-1]:.2f})")


def _rounds(bench: Bench, rounds: int) -> int:
    if bench.rounds:
        return bench.rounds
    return rounds * 10 if not bench.elements else rounds if bench.elements < 4096 \
        else max(20, rounds // 8)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=400)
    ap.add_argument("--model", default="inline-dynamic", choices=sorted(iree_tools.MODEL_FLAGS))
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--breakdown", action="store_true")
    ap.add_argument("--pairs", type=int, default=3, help="alternating measurement pairs (default 3)")
    ap.add_argument("--reference", action="store_true",
                    help="time the reference path (IREEABI_REFERENCE=1's) instead of the fast path")
    ap.add_argument("--paths", action="store_true",
                    help="compare the reference path with the fast path instead of with IREE")
    ap.add_argument("--only", default=None, help="comma-separated program names")
    ap.add_argument("--target", default=None, metavar="T",
                    help="compare a heap laid out for data model T with the host's (see above)")
    args = ap.parse_args()
    if args.target:
        compare_targets(args)
        return
    if args.breakdown:
        for name, bench in PROGRAMS.items():
            if bench.model and bench.model != args.model:
                continue
            print(f"  {name}, {args.model}: mean us per call")
            breakdown(iree_tools.compile_mlir(bench.source, model=args.model), bench,
                      _rounds(bench, args.rounds))
        return
    if args.profile:
        bench = PROGRAMS["add16"]
        profile(iree_tools.compile_mlir(bench.source, model=args.model), bench, args.rounds)
        return
    path = "reference path" if args.reference else "fast path"
    print(f"whole call, {args.model}, ms per call (medians), ireeabi's {path}")
    for name, bench in PROGRAMS.items():
        n = bench.elements
        if args.only and name not in args.only.split(","):
            continue
        if bench.model and bench.model != args.model:
            continue
        if args.model == "inline-static" and n > 4096 and not bench.model:
            print(f"  {name}: skipped (inline-static kernels are bytecode: {n} interpreted "
                  f"iterations; sum1m measures that)")
            continue
        vmfb = iree_tools.compile_mlir(bench.source, model=args.model)
        rounds = _rounds(bench, args.rounds)
        if args.paths:
            compare_paths(vmfb, name, bench, rounds, args.pairs)
            continue
        # The machine's speed drifts (shared cores, memory bandwidth): the two sides are measured
        # alternately, and the ratio is the median of the per-pair ratios.
        pairs = []
        for _ in range(args.pairs):
            fast = ireeabi_ms(vmfb, bench, rounds, reference=args.reference)
            theirs = iree_benchmark_ms(vmfb, bench)
            pairs.append((fast[0], theirs[0]))
        checked = ireeabi_ms(vmfb, bench, bench.rounds or max(20, rounds // 4), heap="default",
                             reference=args.reference)
        bare = ireeabi_ms(vmfb, bench, rounds, heap="bare", reference=args.reference)
        ours = statistics.median(o for o, _ in pairs)
        native = statistics.median(t for _, t in pairs)
        ratios = sorted(o / t for o, t in pairs)
        what = f"{n} elements" if n else "scalar, no import calls"
        print(f"  {name}: {bench.function} ({what}); {args.pairs} alternating pairs")
        print(f"    ireeabi Program, tracked heap without stacks     {ours:9.4f}  "
              f"(pairs: {', '.join(f'{o:.4f}' for o, _ in pairs)})")
        print(f"    ireeabi Program, default tracked heap            {checked[0]:9.4f}")
        print(f"    ireeabi Program, no stacks and no quarantine     {bare[0]:9.4f}")
        print(f"    iree-benchmark-module (local-sync)               {native:9.4f}  "
              f"(pairs: {', '.join(f'{t:.4f}' for _, t in pairs)})")
        d = 2 if bench.target < 10 else 1  # a ratio near its target of 1.5x needs the hundredths
        print(f"    ratio, median of the pairs' (min, max)           {statistics.median(ratios):9.{d}f}x"
              f"  ({ratios[0]:.{d}f}-{ratios[-1]:.{d}f}; target <= {bench.target:g}x)")


if __name__ == "__main__":
    main()
