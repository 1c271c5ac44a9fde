"""The project's own test suite as a benchmark: wall time and peak memory of the whole process tree.

    python benchmarks/bench_suite.py [--workers 2] [--log FILE] [--cold] [--profile DIR]
                                     [--tests PATH...] [-- extra pytest args]

Runs the README's test command (`python -m pytest -q -n 2 --dist loadgroup tests`, with `--workers`
in place of 2, `--workers 0` serially; `--tests` runs those paths instead of `tests`) and samples,
every 0.2 s, the resident memory of the pytest process and all its descendants (xdist workers,
compilers, qemu, subprocesses of tests) from /proc. Reports the wall time, the CPU time of the
whole tree, the peak of the summed RSS of the tree (and the largest single process at that
moment), the pytest summary line and `uptime` before and after: a machine shared with other work
gives loaded numbers, to be labelled as such. The compile cache is $IREEABI_VMFB_CACHE if set,
else pytest's (kept between runs).

`--cold` is a fresh machine's first run, as `.ci/run` makes it: empty compile, answer, oracle and code
caches (new folders under the system's temporary folder, removed afterwards), IREE's runtime built
for every oracle target first (`python -m support.iree_oracle build`, timed on its own and within
the total), then the suite. `--profile DIR` writes each test's peak memory, wall and CPU time
(IREEABI_TEST_RSS_LOG) and each compile of the suite's compile cache (IREEABI_COMPILE_LOG) under DIR
and prints where the CPU went: compiles, and the test files that took the most.

RSS counts shared pages (the Python interpreter, numpy, libIREE) once per process, so the sum over
the tree overstates physical memory somewhat; it is the conservative measure of the bound.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
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
    ap.add_argument("--cold", action="store_true",
                    help="empty compile, answer and oracle caches; build the oracles first")
    ap.add_argument("--profile", type=Path, metavar="DIR",
                    help="write per-test and per-compile logs here and summarize them")
    ap.add_argument("--tests", nargs="+", default=["tests"], metavar="PATH",
                    help="test files or folders to run (default: tests, the whole suite)")
    ap.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = ap.parse_args()
    argv = [sys.executable, "-m", "pytest", "-q"]
    if args.workers:
        argv += ["-n", str(args.workers), "--dist", "loadgroup"]
    env = dict(os.environ)
    scratch = None
    if args.cold:
        scratch = Path(tempfile.mkdtemp(prefix="ireeabi-cold-"))
        env["IREEABI_VMFB_CACHE"] = str(scratch / "vmfb")
        env["IREEABI_ORACLE_CACHE"] = str(scratch / "oracles")
        env["IREEABI_TEST_CACHE"] = str(scratch / "test-cache")
        env["IREEABI_CODE_CACHE"] = str(scratch / "code")
        argv += ["-o", f"cache_dir={scratch / 'pytest-cache'}"]
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
        for name, var in (("tests.tsv", "IREEABI_TEST_RSS_LOG"), ("compiles.tsv", "IREEABI_COMPILE_LOG")):
            (args.profile / name).unlink(missing_ok=True)
            env[var] = str(args.profile / name)
    argv += [*args.pytest_args, *args.tests]
    before = _uptime()
    out = open(args.log, "w") if args.log else subprocess.DEVNULL
    t0 = time.monotonic()
    oracle_cpu = oracle_wall = 0.0
    if args.cold:  # .ci/run's first step: IREE's runtime for every oracle target
        build = subprocess.run([sys.executable, "-m", "support.iree_oracle", "build"],
                               cwd=ROOT / "tests", env=env, stdout=out, stderr=subprocess.STDOUT)
        oracle_wall = time.monotonic() - t0
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        oracle_cpu = usage.ru_utime + usage.ru_stime
        if build.returncode != 0:
            sys.exit(f"the oracle build failed (exit {build.returncode}); see --log")
    # A shell's background job ignores SIGINT, and a Python started so keeps ignoring it: tests of
    # Ctrl-C handling would then wait for their budget. The suite gets the default disposition.
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=env,
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
    if args.cold:
        print(f"of which the oracle builds: wall {oracle_wall:.0f} s, CPU {oracle_cpu:.0f} s")
    if args.profile:
        _summarize(args.profile)
    print(f"uptime before: {before}")
    print(f"uptime after:  {_uptime()}")
    print("(numbers from a machine shared with other work are loaded numbers)")
    if scratch is not None:
        shutil.rmtree(scratch, ignore_errors=True)
    sys.exit(rc)


def _summarize(folder: Path, top: int = 25) -> None:
    """Where the CPU went: the compiles of the suite's compile cache, and the test files (their
    tests' CPU, children included, so a test's compiles count in it too)."""
    compiles = [line.split("\t") for line in _lines(folder / "compiles.tsv")]
    cpu = sum(float(c[0]) for c in compiles)
    print(f"compiles into the suite's cache: {len(compiles)}, CPU {cpu:.0f} s "
          f"({cpu / max(1, len(compiles)):.2f} s each)")
    by_file: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    for line in _lines(folder / "tests.tsv"):
        _, wall, _, nodeid, test_cpu = line.split("\t")
        entry = by_file[nodeid.split("::")[0]]
        entry[0] += float(test_cpu)
        entry[1] += float(wall)
        entry[2] += 1
    total = sum(e[0] for e in by_file.values())
    print(f"tests: {sum(e[2] for e in by_file.values())}, CPU {total:.0f} s (children included); "
          f"the {top} costliest files:")
    for name, (test_cpu, wall, count) in sorted(by_file.items(), key=lambda kv: -kv[1][0])[:top]:
        print(f"  {test_cpu:8.1f} s CPU {wall:8.1f} s wall {count:5d} tests  {name}")


def _lines(path: Path) -> list[str]:
    return [ln for ln in path.read_text().splitlines() if ln.strip()] if path.is_file() else []


if __name__ == "__main__":
    main()
