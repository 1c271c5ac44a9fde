"""Large `--input`s: `ireeabi run` against `iree-run-module`, whole process, time and peak memory.

    python benchmarks/bench_inputs.py [--elements 100000000] [--runs 1] [--list-elements 10000000]

The program takes a tensor<Nxf32> and returns its first two elements (so the run is the input's
parse, its copy into a buffer and the module's load). Rows:

- splat: `--input=Nxf32=1`;
- npy: `--input=@f.npy` (an N-element f32 array written by numpy);
- list (ireeabi only, in one process): `parse_inputs` of an explicit list of `--list-elements`
  decimal elements (a command line cannot carry it: Linux caps one argument at 128 KiB), its
  elements per second and tracemalloc's peak.

Each tool runs as a child process; its wall time and its peak RSS (wait4's ru_maxrss) are printed,
the median of `--runs`. Numbers measured on a shared, loaded machine vary; label them as such.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
import tests_support  # noqa: E402,F401 - tests/ on the import path, for `support`

from support import iree_tools  # noqa: E402

PROGRAM = """func.func @first(%a: tensor<{n}xf32>) -> tensor<2xf32> {{
  %0 = tensor.extract_slice %a[0] [2] [1] : tensor<{n}xf32> to tensor<2xf32>
  return %0 : tensor<2xf32>
}}
"""


def _measured(argv: list[str]) -> tuple[float, int, str]:
    """(wall seconds, peak RSS bytes, stdout) of one run."""
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        took = time.perf_counter() - t0
        out.seek(0)
        text = out.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{argv[0]} failed:\n{text}")
    return took, usage.ru_maxrss * 1024, text


def _row(name: str, runs: int, ireeabi: list[str], iree: list[str]) -> None:
    ours, theirs = [], []
    for _ in range(runs):  # alternating, so load on the machine hits both alike
        ours.append(_measured(ireeabi))
        theirs.append(_measured(iree))
    if ours[0][2].splitlines()[-1] != theirs[0][2].splitlines()[-1]:
        raise SystemExit(f"outputs differ:\n{ours[0][2]}\n{theirs[0][2]}")
    t_ours = statistics.median(r[0] for r in ours)
    t_theirs = statistics.median(r[0] for r in theirs)
    m_ours = max(r[1] for r in ours) >> 20
    m_theirs = max(r[1] for r in theirs) >> 20
    print(f"{name:<8} ireeabi {t_ours:7.2f} s {m_ours:6d} MiB   iree-run-module {t_theirs:7.2f} s "
          f"{m_theirs:6d} MiB", flush=True)


def _list_row(n: int) -> None:
    from ireeabi.tooling.function_io import parse_inputs
    spec = f"{n}xf32=" + " ".join(["1.25", "-3e-2", "7"] * (n // 3) + ["0"] * (n % 3))
    tracemalloc.start()
    t0 = time.perf_counter()
    value = parse_inputs([spec], "r")[0]
    took = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"list     ireeabi parse_inputs of {n} elements: {took:.2f} s "
          f"({n / took / 1e6:.1f} M elements/s), peak {peak >> 20} MiB for a {value.nbytes >> 20} "
          f"MiB array (text {len(spec) >> 20} MiB, not counted)", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--elements", type=int, default=100_000_000)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--list-elements", type=int, default=10_000_000)
    args = ap.parse_args()
    n = args.elements
    with tempfile.TemporaryDirectory(prefix="bench-inputs-") as tmp:
        src = Path(tmp) / f"first{n}.mlir"
        src.write_text(PROGRAM.format(n=n))
        module = iree_tools.compile_mlir(src, tmp, model="llvm-cpu")
        npy = Path(tmp) / "input.npy"
        import numpy as np
        np.save(npy, np.arange(n, dtype=np.float32))
        ours = [sys.executable, "-m", "ireeabi", "run", str(module)]
        theirs = [iree_tools.find_tool("iree-run-module"), iree_tools.RUN_DEVICE,
                  f"--module={module}"]
        print(f"{n} f32 elements ({4 * n >> 20} MiB); whole process, median of {args.runs}")
        for name, spec in (("splat", f"{n}xf32=1"), ("npy", f"@{npy}")):
            _row(name, args.runs, ours + [f"--input={spec}"], theirs + [f"--input={spec}"])
    _list_row(args.list_elements)


if __name__ == "__main__":
    main()
