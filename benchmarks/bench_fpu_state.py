"""What the floating-point state pushed around each dispatch (base/internal/fpu_state.py) costs.

    python benchmarks/bench_fpu_state.py [--rounds N] [--pairs N]

Two measurements, each median of alternating pairs:

- the push/pop itself: `dispatch_scope` on the host thread (read MXCSR, set FTZ|DAZ, restore it),
  per dispatch;
- whole calls of a small default-model program (tests/programs/add16.mlir, one dispatch each) with
  the scope as it is and with it replaced by a no-op, for llvm-cpu kernels (native) and vmvx kernels
  (the interpreter's float ops run under the pushed state: no per-op cost of ours).
"""
from __future__ import annotations

import argparse
import contextlib
import statistics
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
import tests_support  # noqa: E402,F401 - tests/ on the import path, for `support`

from support import iree_tools  # noqa: E402
from ireeabi.hal.local import inline_command_buffer  # noqa: E402
from ireeabi.hal.local.inline_command_buffer import dispatch_scope  # noqa: E402
from ireeabi.tooling.program import Program  # noqa: E402


class _Native:  # a library whose code runs on the host thread
    pass


def _scope_us(rounds: int) -> float:
    lib = _Native()
    t = time.perf_counter()
    for _ in range(rounds):
        with dispatch_scope(lib, "x86_64"):
            pass
    return (time.perf_counter() - t) / rounds * 1e6


def _call_us(program: Program, a: np.ndarray, rounds: int) -> float:
    t = time.perf_counter()
    for _ in range(rounds):
        program.call("add", a, a)
    return (time.perf_counter() - t) / rounds * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2000)
    ap.add_argument("--pairs", type=int, default=7)
    args = ap.parse_args()
    print(f"dispatch_scope push/pop: {statistics.median(_scope_us(args.rounds * 10) for _ in range(args.pairs)):.2f} us")
    a = np.arange(16, dtype=np.float32)
    real = inline_command_buffer.dispatch_scope
    for model in ("llvm-cpu", "vmvx"):
        path = iree_tools.compile_mlir(ROOT / "tests" / "programs" / "add16.mlir", model=model)
        with Program(path) as p:
            _call_us(p, a, args.rounds // 10)  # warm up
            pushed, plain = [], []
            for _ in range(args.pairs):
                pushed.append(_call_us(p, a, args.rounds))
                inline_command_buffer.dispatch_scope = lambda library, target: contextlib.nullcontext()
                try:
                    plain.append(_call_us(p, a, args.rounds))
                finally:
                    inline_command_buffer.dispatch_scope = real
        print(f"{model}: add16 call {statistics.median(pushed):.1f} us with the push, "
              f"{statistics.median(plain):.1f} us without (median of {args.pairs} pairs of {args.rounds})")


if __name__ == "__main__":
    main()
