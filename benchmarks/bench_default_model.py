"""The 1M-element f32 add in iree-compile's default execution model (the full `hal` module) against
iree-benchmark-module, side by side.

    python benchmarks/bench_default_model.py [--model llvm-cpu|vmvx] [--pairs N] [--rounds N]

tests/programs/add1m.mlir compiled with tooling.execution_model.MODEL_FLAGS[--model] (llvm-cpu by
default: iree-compile's defaults for the local CPU device). One timed ireeabi call is the whole
`add` run by the interpreter on a `Program` with the full HAL: buffer_view.assert/.buffer,
buffer.assert, fence.create, device.queue.alloca, device.queue.execute.indirect replaying the command
buffer __init recorded (the real kernel over 1M elements), fence.await, buffer_view.create, each
import through a packed argument buffer and its shim; then the release of the result. Its inputs
are made once, as iree-benchmark-module makes them once. iree-benchmark-module runs the same module
and function with `--device=local-sync`. The two sides are measured alternately (`--pairs`, at least
5), with bench_program.py's measurements (ireeabi_ms, iree_benchmark_ms): the medians of each side
and the median of the per-pair ratios. The target is the inline models' (<= 1.5x).
"""
from __future__ import annotations

import argparse
import statistics

from bench_program import PROGRAMS, _rounds, iree_benchmark_ms, ireeabi_ms, iree_tools
from ireeabi.tooling.execution_model import DEFAULT_MODELS

TARGET = 1.5


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="llvm-cpu", choices=DEFAULT_MODELS)
    ap.add_argument("--pairs", type=int, default=5, help="alternating measurement pairs (at least 5)")
    ap.add_argument("--rounds", type=int, default=400, help="as bench_program.py (add1m: rounds // 8)")
    args = ap.parse_args()
    if args.pairs < 5:
        ap.error("--pairs must be at least 5")
    bench = PROGRAMS["add1m"]
    vmfb = iree_tools.compile_mlir(bench.source, model=args.model)
    rounds = _rounds(bench, args.rounds)
    pairs = []
    for _ in range(args.pairs):
        ours = ireeabi_ms(vmfb, bench, rounds)
        theirs = iree_benchmark_ms(vmfb, bench)
        pairs.append((ours[0], theirs[0]))
    checked = ireeabi_ms(vmfb, bench, max(20, rounds // 4), heap="default")
    bare = ireeabi_ms(vmfb, bench, rounds, heap="bare")
    ratios = sorted(o / t for o, t in pairs)
    print(f"add1m: add ({bench.elements} f32 elements), default execution model ({args.model}), "
          f"ms per call (medians); {args.pairs} alternating pairs, {rounds} calls each")
    print(f"  ireeabi Program, tracked heap without stacks     {statistics.median(o for o, _ in pairs):9.4f}  "
          f"(pairs: {', '.join(f'{o:.4f}' for o, _ in pairs)})")
    print(f"  ireeabi Program, default tracked heap            {checked[0]:9.4f}")
    print(f"  ireeabi Program, no stacks and no quarantine     {bare[0]:9.4f}")
    print(f"  iree-benchmark-module (local-sync)               {statistics.median(t for _, t in pairs):9.4f}  "
          f"(pairs: {', '.join(f'{t:.4f}' for _, t in pairs)})")
    print(f"  ratio, median of the pairs' (min, max)           {statistics.median(ratios):9.2f}x  "
          f"({ratios[0]:.2f}-{ratios[-1]:.2f}; target <= {TARGET:g}x)")


if __name__ == "__main__":
    main()
