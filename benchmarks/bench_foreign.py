"""Foreign kernels: the cost of a dispatch run in the emulated CPU (Unicorn) or under wasmtime,
against the same kernel run natively.

    python benchmarks/bench_foreign.py [--rounds N] [--only riscv32,wasm32,...] [--processes P]

- add16 per dispatch: the time of one `library.issue` (every workgroup of the dispatch, the kernel
  itself) inside `Program.call("add")`, median of N calls: the x86_64 kernel natively and in the
  emulated CPU (`emulate_kernels=True`: the same machine code, so the ratio is the emulator's cost;
  issue 29's target is at most 5x), then each foreign build on its own data model.
- add1m per architecture: one whole `Program.call("add")` of 2 x 1M f32 (256 workgroups), median.
- `--processes P`: only the x86_64 add16 pair, in P fresh processes, each measuring native then
  emulated (the ratio has differed between processes: each process's figures are printed).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
import tests_support  # noqa: E402,F401 - tests/ on the import path, for `support`

from support import iree_tools  # noqa: E402
from ireeabi.hal.local import elf_executable, target_library  # noqa: E402
from ireeabi.tooling.check_compile import KERNEL_TARGET_FLAGS  # noqa: E402
from ireeabi.tooling.program import Program, RunOptions  # noqa: E402

# iree-compile 3.13's flags per foreign target (the library's; check_compile.py says why).
TRIPLES = {t: flags for t, flags in KERNEL_TARGET_FLAGS.items() if t not in ("x86_64", "i386")}

_issue_times: list[float] = []


def _timed(issue):  # wraps a library class's issue to record each dispatch's time
    def wrapper(self, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return issue(self, *args, **kwargs)
        finally:
            _issue_times.append(time.perf_counter() - t0)
    return wrapper


elf_executable.Library.issue = _timed(elf_executable.Library.issue)
target_library.TargetLibrary.issue = _timed(target_library.TargetLibrary.issue)


def dispatch_us(path: Path, target: str, rounds: int, **kw) -> float:
    a = np.arange(16, dtype=np.float32)
    with Program(path, RunOptions(target=target, **kw)) as p:
        for _ in range(20):
            p.call("add", a, a)
        _issue_times.clear()
        for _ in range(rounds):
            p.call("add", a, a)
        return statistics.median(_issue_times) * 1e6


def call_ms(path: Path, target: str, rounds: int, **kw) -> float:
    a = np.full(1 << 20, 1.5, dtype=np.float32)
    with Program(path, RunOptions(target=target, **kw)) as p:
        p.call("add", a, a)
        samples = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            out = p.call("add", a, a)
            samples.append(time.perf_counter() - t0)
        assert float(out[12345]) == 3.0
        return statistics.median(samples) * 1e3


def processes(count: int, rounds: int) -> None:
    import subprocess
    ratios = []
    print(f"add16 dispatch, x86_64 native and emulated, median of {rounds} per process")
    for i in range(count):
        out = subprocess.run([sys.executable, __file__, "--pair", "--rounds", str(rounds)], check=True,
                             capture_output=True, text=True).stdout.split()
        native, emulated = float(out[-2]), float(out[-1])
        ratios.append(emulated / native)
        print(f"  process {i + 1}: native {native:6.1f} us  emulated {emulated:6.1f} us  {emulated / native:4.1f}x")
    print(f"ratio: median {statistics.median(ratios):.1f}x, worst {max(ratios):.1f}x (target <= 5x)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--only", default=",".join(TRIPLES))
    ap.add_argument("--processes", type=int, default=0)
    ap.add_argument("--pair", action="store_true", help=argparse.SUPPRESS)  # one process of --processes
    args = ap.parse_args()
    if args.processes:
        return processes(args.processes, args.rounds)
    if args.pair:
        host16 = iree_tools.compile_mlir(ROOT / "tests" / "programs" / "add16.mlir")
        print(dispatch_us(host16, "x86_64", args.rounds), dispatch_us(host16, "x86_64", args.rounds, emulate_kernels=True))
        return
    only = [a for a in args.only.split(",") if a]
    add16, add1m = ROOT / "tests" / "programs" / "add16.mlir", ROOT / "tests" / "programs" / "add1m.mlir"
    host16 = iree_tools.compile_mlir(add16)
    native = dispatch_us(host16, "x86_64", args.rounds)
    emulated = dispatch_us(host16, "x86_64", args.rounds, emulate_kernels=True)
    print(f"add16 dispatch (one issue: 1 workgroup), median of {args.rounds}")
    print(f"  x86_64 native      {native:8.1f} us")
    print(f"  x86_64 emulated    {emulated:8.1f} us   {emulated / native:5.1f}x native (target <= 5x)")
    for arch in only:
        path = iree_tools.compile_mlir(add16, extra_flags=TRIPLES[arch])
        print(f"  {arch:<8} {'wasmtime' if arch == 'wasm32' else 'emulated':<9} "
              f"{dispatch_us(path, arch, args.rounds):8.1f} us")
    rounds = max(3, args.rounds // 40)
    print(f"add1m whole call (2 x 1M f32, 256 workgroups), median of {rounds}")
    print(f"  x86_64 native      {call_ms(iree_tools.compile_mlir(add1m), 'x86_64', rounds):8.2f} ms")
    print(f"  x86_64 emulated    {call_ms(iree_tools.compile_mlir(add1m), 'x86_64', rounds, emulate_kernels=True):8.2f} ms")
    for arch in only:
        path = iree_tools.compile_mlir(add1m, extra_flags=TRIPLES[arch])
        print(f"  {arch:<18} {call_ms(path, arch, rounds):8.2f} ms")


if __name__ == "__main__":
    main()
