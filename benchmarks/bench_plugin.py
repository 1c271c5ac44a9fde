"""The check corpus as pytest items (the plugin's check program collection), serial against
pytest-xdist's `-n 2`: wall time of a whole pytest run of each.

    python benchmarks/bench_plugin.py [--models M,...] [--targets T,...] [--workers N] [--rounds N]

tests/programs/check's corpus (failing.mlir left out) is copied into a temporary folder with a
pytest.ini turning collection on (`ireeabi_collect`, the models and targets given; default: both
inline models and the default model, on x86_64 and riscv32). A first run with `--collect-only`
fills the compiled-module cache (`--cache-dir`, else one kept for the whole benchmark), so that
the timed runs measure collecting and running the items, not iree-compile. Then serial runs
(`pytest -q`) and `-n WORKERS` runs alternate, `--rounds` pairs of them, each a fresh
`python -m pytest` process; the wall time of each is printed, and the median ratio of parallel to
serial. Every run must pass every
item (a failing run is an error, not a time). The target: `-n 2` at most 0.6x of serial on two
quiet cores. The load (os.getloadavg, `uptime`) is printed before and after: on a loaded machine
the figures are labelled as such; each run's CPU seconds (its processes', from getrusage) show how
much of the machine it got.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHECK = ROOT / "tests" / "programs" / "check"
TARGET = 0.6
F64 = "--iree-input-demote-f64-to-f32=false"  # the corpus's f64 functions stay f64


def corpus(dest: Path, models: str, targets: str, cache: Path) -> int:
    """Copy the corpus into `dest` with its pytest.ini; the number of .mlir files."""
    files = sorted(p for p in CHECK.glob("*.mlir") if p.name != "failing.mlir")
    for p in files:
        shutil.copy(p, dest / p.name)
    (dest / "pytest.ini").write_text(
        "[pytest]\nireeabi_collect = true\n"
        f"ireeabi_models = {models}\nireeabi_targets = {targets}\n"
        f"ireeabi_compile_flags = {F64}\nireeabi_cache_dir = {cache}\n")
    return len(files)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(dest: Path, *args: str) -> tuple[float, str, float]:
    """One `python -m pytest` in `dest`: wall seconds, its last line and the CPU seconds of it and
    its workers (user + system); an error if it fails."""
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", *args]
    cpu = _children_cpu()
    began = time.monotonic()
    proc = subprocess.run(argv, cwd=dest, capture_output=True, text=True)
    took = time.monotonic() - began
    cpu = _children_cpu() - cpu
    last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}"
                         f"\n{proc.stderr[-2000:]}")
    return took, last, cpu


def load() -> str:
    one, five, fifteen = os.getloadavg()
    up = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores ({up})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="inline-static,inline-dynamic,default")
    ap.add_argument("--targets", default="x86_64,riscv32")
    ap.add_argument("--workers", type=int, default=2, help="pytest-xdist's -n (default 2)")
    ap.add_argument("--rounds", type=int, default=1, help="serial / parallel pairs (default 1)")
    ap.add_argument("--cache-dir", type=Path, default=None,
                    help="the compiled-module cache to use and keep (default: a temporary one)")
    args = ap.parse_args()
    if importlib.util.find_spec("xdist") is None:
        raise SystemExit("pytest-xdist is not installed (pip install pytest-xdist: ireeabi's "
                         "test extra)")

    with tempfile.TemporaryDirectory(prefix="bench-plugin-") as tmp:
        dest = Path(tmp)
        cache = (args.cache_dir or dest / "vmfb-cache").resolve()
        n = corpus(dest, args.models, args.targets, cache)
        print(f"check corpus: {n} files, models {args.models}, targets {args.targets}")
        print(f"before: {load()}")
        took, last, _ = run(dest, "--collect-only")
        items = int(re.search(r"(\d+) tests? collected", last).group(1))
        print(f"  cache fill (collect-only, compiles): {took:8.2f} s, {items} items")
        pairs = []
        for r in range(args.rounds):
            serial, s_last, s_cpu = run(dest)
            parallel, p_last, p_cpu = run(dest, "-n", str(args.workers))
            pairs.append((serial, parallel))
            # CPU seconds: how much of the machine each run got (on a loaded one, far less than
            # its wall time times the processes it ran)
            print(f"  round {r + 1}: serial {serial:8.2f} s wall, {s_cpu:7.2f} s CPU ({s_last}); "
                  f"-n {args.workers} {parallel:8.2f} s wall, {p_cpu:7.2f} s CPU ({p_last}); "
                  f"ratio {parallel / serial:.2f}")
        ratio = statistics.median(p / s for s, p in pairs)
        print(f"median ratio -n {args.workers} / serial: {ratio:.2f} (target <= {TARGET} on "
              f"{args.workers} quiet cores)")
        print(f"after: {load()}")


if __name__ == "__main__":
    main()
