"""Whole runs of the command-line tools on one program: `ireeabi run` against `iree-run-module`, and
one call inside a process against `iree-benchmark-module`, side by side.

    python benchmarks/bench_tools.py [--program sum1m] [--model inline-static] [--runs 3]

The program is one of bench_program.py's (by default sum1m: a 1M-element f32 reduction whose loop,
compiled for inline-static, is VM bytecode: eight instructions per element). Columns:

- process: wall time of the whole tool run, start-up and module load included, median of `--runs`
  runs of each, alternating (`ireeabi run` and `iree-run-module` with the same flags and inputs,
  their outputs compared);
- call: one call of the function inside a process (bench_program.py's `ireeabi_ms` on the default
  tracked heap without stack capture, and iree-benchmark-module's median).
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
import tests_support  # noqa: E402,F401 - tests/ on the import path, for `support`
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_program  # noqa: E402
from support import iree_tools  # noqa: E402


def _inputs(bench: bench_program.Bench) -> list[str]:
    n = bench.elements
    return [f"--input={n}xf32=1.5", f"--input={n}xf32=2"][:bench.inputs] if n else ["--input=1"]


def _timed(argv: list[str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    out = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=1800).stdout
    return time.perf_counter() - t0, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--program", default="sum1m", choices=sorted(bench_program.PROGRAMS))
    ap.add_argument("--model", default="inline-static", choices=sorted(iree_tools.MODEL_FLAGS))
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    bench = bench_program.PROGRAMS[args.program]
    vmfb = iree_tools.compile_mlir(bench.source, model=args.model)
    common = [f"--module={vmfb}", f"--function={bench.function}", *_inputs(bench)]
    ours_argv = [sys.executable, "-m", "ireeabi.cli.main", "run", *common]
    theirs_argv = [iree_tools.find_tool("iree-run-module"), "--device=local-sync", *common]
    ours, theirs = [], []
    for _ in range(args.runs):
        t, out_ours = _timed(ours_argv)
        ours.append(t)
        t, out_theirs = _timed(theirs_argv)
        theirs.append(t)
        if out_ours != out_theirs:
            raise SystemExit(f"outputs differ:\n{out_ours}\n---\n{out_theirs}")
    o, t = statistics.median(ours), statistics.median(theirs)
    print(f"{args.program} ({args.model}), median of {args.runs} runs each, outputs identical")
    print(f"  process  ireeabi run {o:8.3f} s   iree-run-module {t:8.3f} s   ratio {o / t:7.1f}x")
    rounds = bench_program._rounds(bench, 400)
    call = bench_program.ireeabi_ms(vmfb, bench, rounds, heap="bare")[0]
    tool = bench_program.iree_benchmark_ms(vmfb, bench)[0]
    print(f"  call     ireeabi     {call:8.3f} ms  iree-benchmark-module {tool:8.3f} ms   "
          f"ratio {call / tool:7.1f}x")


if __name__ == "__main__":
    main()
