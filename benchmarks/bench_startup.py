"""Start-up: each `ireeabi` command as a whole process, against `python -c pass` and against IREE's
own tools on the same 16-element add.

    python benchmarks/bench_startup.py [--rounds 5] [--model inline-dynamic]

Every command is started as a user starts it, through its console script (`ireeabi` beside this
interpreter; `iree-run-module` and `iree-dump-module` of the iree-base-runtime wheel, the
interpreter's own scripts rather than a version manager's shim, which adds a shell of its own):

- `python -c pass`: the interpreter's own start-up (site and .pth files included), the floor;
- `ireeabi --version`, `ireeabi targets`, `ireeabi layout iree_vm_buffer_t`,
  `ireeabi check 0rIiiiCiDCrIID_v` (hal_loader's dispatch; it has findings, exit 1);
- `ireeabi run` and `iree-run-module` of tests/programs/add16.mlir `add` (compiled as
  tests/support/iree_tools.py compiles programs, `--model`), the same flags and inputs, outputs compared;
- `iree-dump-module` of the same module.

The package's bytecode is compiled first (`compileall` of its folders, a no-op when it is up to
date), so that every command starts as it does after its first run: with PYTHONDONTWRITEBYTECODE
set, as on some machines, no run would write the caches and each would compile every module it
imports from source (`--cold` measures that instead).

Each round runs every command once, in an order rotated from round to round (so none always runs
first), `--rounds` rounds in one go. For each process: its wall time, and its CPU time (user + sys
from wait4, the process and the children it waited for), which a loaded machine inflates much less
than the wall time. Reported: the medians, and each command's ratio to iree-run-module's whole run
(medians of wall and of CPU time) next to issue 32's bounds (table commands 4x, `run` 6x). The load
average before and after is printed; numbers taken with more runnable work than cores are labelled
as measured on a loaded machine.
"""
from __future__ import annotations

import argparse
import compileall
import importlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
import tests_support  # noqa: E402,F401 - tests/ on the import path, for `support`

from support import iree_tools  # noqa: E402

# Every top-level package (pyproject.toml's folders; `ireeabi.base` was missing until issue 43's
# start-up work, so every benchmarked process compiled base/ from source).
PACKAGES = ["ireeabi", "ireeabi.abi", "ireeabi.layouts", "ireeabi.base", "ireeabi.vm", "ireeabi.hal",
            "ireeabi.modules", "ireeabi.tooling", "ireeabi.cli"]
BOUNDS = {"run": 6.0, "table": 4.0}  # issue 32: ratio to iree-run-module's whole run of the add
REFERENCE = "iree-run-module"


class Command(NamedTuple):
    label: str
    argv: list[str]
    ok_status: tuple[int, ...] = (0,)
    bound: float | None = None  # issue 32's bound on the ratio to REFERENCE


def console_script(name: str) -> str:
    """The console script `name` as the interpreter installed it: beside this interpreter (a venv),
    beside its base installation's interpreter, else on PATH."""
    for d in (Path(sys.executable).parent, Path(sys.base_prefix) / "bin"):
        candidate = d / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which(name)
    if found is None:
        raise SystemExit(f"{name} is not installed (pip install -e . / iree-base-runtime==3.13.0)")
    return found


def commands(vmfb: Path) -> list[Command]:
    ireeabi = console_script("ireeabi")
    run_flags = [f"--module={vmfb}", "--function=add", "--input=16xf32=1.5", "--input=16xf32=2"]
    table = BOUNDS["table"]
    return [
        Command("python -c pass", [sys.executable, "-c", "pass"]),
        Command("ireeabi --version", [ireeabi, "--version"], bound=table),
        Command("ireeabi targets", [ireeabi, "targets"], bound=table),
        Command("ireeabi layout iree_vm_buffer_t", [ireeabi, "layout", "iree_vm_buffer_t"], bound=table),
        Command("ireeabi check 0rIiiiCiDCrIID_v", [ireeabi, "check", "0rIiiiCiDCrIID_v"], (0, 1), table),
        Command("ireeabi run add16", [ireeabi, "run", *run_flags], bound=BOUNDS["run"]),
        Command(REFERENCE, [console_script("iree-run-module"), "--device=local-sync", *run_flags]),
        Command("iree-dump-module", [console_script("iree-dump-module"), str(vmfb)]),
    ]


def timed(cmd: Command, out_dir: Path) -> tuple[float, float, str]:
    """(wall s, user + sys CPU s, stdout) of one whole process of `cmd`."""
    out_path = out_dir / "stdout"
    with open(out_path, "wb") as out, open(os.devnull, "wb") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd.argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in cmd.ok_status:
        raise SystemExit(f"{cmd.label}: exit status {proc.returncode} ({' '.join(cmd.argv)})")
    return wall, usage.ru_utime + usage.ru_stime, out_path.read_text()


def compile_bytecode() -> str:
    """Write the bytecode caches of every module of the package; what was done, in words."""
    folders = sorted({Path(p) for name in PACKAGES for p in importlib.import_module(name).__path__})
    ok = all(compileall.compile_dir(str(d), quiet=1) for d in folders)
    if not ok:
        raise SystemExit("compileall failed on the package's folders")
    return f"bytecode caches compiled for {len(folders)} folders"


def load_line() -> tuple[str, bool]:
    one, five, _ = os.getloadavg()
    cores = os.cpu_count() or 1
    return f"load average {one:.2f} (5 min {five:.2f}) on {cores} cores", one > cores


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help="runs of each command (default 5)")
    ap.add_argument("--model", default="inline-dynamic", choices=sorted(iree_tools.MODEL_FLAGS),
                    help="execution model the add is compiled for (default inline-dynamic)")
    ap.add_argument("--cold", action="store_true",
                    help="leave the package's bytecode caches as they are (none are written when "
                         "PYTHONDONTWRITEBYTECODE is set)")
    args = ap.parse_args()
    caches = "bytecode caches left as they are" if args.cold else compile_bytecode()
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        caches += " (PYTHONDONTWRITEBYTECODE is set: runs write none)"
    vmfb = iree_tools.compile_mlir(ROOT / "tests" / "programs" / "add16.mlir", model=args.model)
    cmds = commands(vmfb)
    for c in cmds:
        print(f"{c.label:32s} {c.argv[0]}")
    before, loaded_before = load_line()
    walls: dict[str, list[float]] = {c.label: [] for c in cmds}
    cpus: dict[str, list[float]] = {c.label: [] for c in cmds}
    outputs: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="ireeabi-startup-") as tmp:
        for r in range(args.rounds):
            k = r % len(cmds)
            for c in cmds[k:] + cmds[:k]:
                wall, cpu, out = timed(c, Path(tmp))
                walls[c.label].append(wall)
                cpus[c.label].append(cpu)
                outputs[c.label] = out
    after, loaded_after = load_line()
    if outputs["ireeabi run add16"] != outputs[REFERENCE]:
        raise SystemExit(f"the outputs differ:\n{outputs['ireeabi run add16']}\n{outputs[REFERENCE]}")
    ref_wall = statistics.median(walls[REFERENCE])
    ref_cpu = statistics.median(cpus[REFERENCE])
    floor_wall = statistics.median(walls["python -c pass"])
    loaded = loaded_before or loaded_after
    print(f"\n{args.rounds} rounds, module {vmfb.name}; {caches}; {before} before, {after} after"
          + ("\nMEASURED ON A LOADED MACHINE (more runnable work than cores): wall times are inflated; "
             "the CPU times are the steadier figure" if loaded else ""))
    print(f"{'command':32s} {'wall ms':>8s} {'cpu ms':>7s} {'/pass':>6s} "
          f"{'wall/' + REFERENCE:>20s} {'cpu/' + REFERENCE:>19s}  bound")
    for c in cmds:
        wall, cpu = statistics.median(walls[c.label]), statistics.median(cpus[c.label])
        rw, rc = wall / ref_wall, cpu / ref_cpu
        verdict = "" if c.bound is None else \
            f"{c.bound:g}x: wall {'ok' if rw <= c.bound else 'OVER'}, cpu {'ok' if rc <= c.bound else 'OVER'}"
        print(f"{c.label:32s} {1e3 * wall:8.1f} {1e3 * cpu:7.1f} {wall / floor_wall:6.2f} "
              f"{rw:20.2f} {rc:19.2f}  {verdict}")


if __name__ == "__main__":
    main()
