"""The project's own test suite as a benchmark: wall time and peak memory of the whole process tree.

    python benchmarks/bench_suite.py [--workers 2] [--log FILE] [-- extra pytest args]

Runs the README's test command (`python -m pytest -q -n 2 --dist loadgroup tests`, with `--workers`
in place of 2; `--workers 0` runs serially) and samples, every 0.2 s, the resident memory of the
pytest process and all its descendants (xdist workers, compilers, qemu, subprocesses of tests) from
/proc. Reports the wall time, the CPU time of the whole tree, the peak of the summed RSS of the
tree (and the largest single process at that moment), the pytest summary line and `uptime` before
and after: a machine shared with other work gives loaded numbers, to be labelled as such. The
compile cache is pytest's (kept between runs); pass `-- -p no:cacheprovider` for a cold run.

RSS counts shared pages (the Python interpreter, numpy, libIREE) once per process, so the sum over
the tree overstates physical memory somewhat; it is the conservative measure of the bound. With
IREEABI_TEST_RSS_LOG=FILE in the environment, tests/conftest.py also writes each test's peak
memory and wall time there.
"""
from __future__ import annotations

import argparse
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
import tests_support  # noqa: E402,F401 - tests/ on the import path, for `support`

from support.process_memory import Sampler  # noqa: E402


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2, help="xdist workers; 0 runs serially")
    ap.add_argument("--log", type=Path, help="write pytest's output here (default: discard)")
    ap.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = ap.parse_args()
    argv = [sys.executable, "-m", "pytest", "-q"]
    if args.workers:
        argv += ["-n", str(args.workers), "--dist", "loadgroup"]
    argv += [*args.pytest_args, "tests"]
    before = _uptime()
    out = open(args.log, "w") if args.log else subprocess.DEVNULL
    t0 = time.monotonic()
    # A shell's background job ignores SIGINT, and a Python started so keeps ignoring it: tests of
    # Ctrl-C handling would then wait for their budget. The suite gets the default disposition.
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    sampler = Sampler(proc.pid)
    sampler.start()
    rc = proc.wait()
    wall = time.monotonic() - t0
    sampler.stop()
    # CPU time of the whole tree (each process's is added to its parent's when it is reaped): what
    # the run costs whatever the load; on n quiet cores the wall time is at least cpu / n.
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = usage.ru_utime + usage.ru_stime
    if args.log:
        out.close()
        lines = [ln for ln in args.log.read_text().splitlines() if ln.strip()]
        summary = lines[-1] if lines else ""
    else:
        summary = "(no --log)"
    print(f"command: {' '.join(argv[1:])}")
    print(f"exit {rc}; {summary}")
    print(f"wall {wall:.0f} s ({wall / 60:.1f} min); CPU of the process tree {cpu:.0f} s "
          f"(user {usage.ru_utime:.0f} s, system {usage.ru_stime:.0f} s)")
    print(f"peak RSS of the process tree {sampler.peak_kib / 1024**2:.2f} GiB "
          f"at {sampler.peak_at:.0f} s; largest processes then:")
    for rss, pid, cmd in sampler.peak_procs:
        print(f"  {rss / 1024:8.0f} MiB  {pid:>7}  {cmd}")
    print(f"uptime before: {before}")
    print(f"uptime after:  {_uptime()}")
    print("(numbers from a machine shared with other work are loaded numbers)")
    sys.exit(rc)


if __name__ == "__main__":
    main()
