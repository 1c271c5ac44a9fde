"""`ireeabi check --all-targets` against the number of spans of a cconv: CPU seconds and peak memory.

    python benchmarks/bench_check_spans.py [--spans 10,100,1000,10000]

For each N the cconv `0` + `CiD` * N + `_v` (N spans of one i32 each) is checked on every data model
in a child process of its own (`python -m ireeabi check CCONV --all-targets`); its CPU seconds (user
+ system, from wait4's rusage: the machine's load does not count) and peak RSS are printed, with the
RSS per span past the smallest N. Span counts are sampled (cli/resolve.py's SWEEP_CAP per target),
so the instances checked are the same number for every N: the work should grow as N, the memory
as one instance (issue 41: `check` of 2,000 spans on every target peaked at 2.2 GB).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile


def run(n: int) -> tuple[float, int]:
    argv = [sys.executable, "-m", "ireeabi", "check", "0" + "CiD" * n + "_v", "--all-targets"]
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode(errors="replace")
    if code != 0:
        raise SystemExit(f"check of {n} spans exited {code}:\n{text[-2000:]}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spans", default="10,100,1000,10000", help="numbers of spans (comma-separated)")
    sizes = [int(s) for s in ap.parse_args().spans.split(",")]
    print(f"load before: {os.getloadavg()}")
    print("| spans | CPU s | CPU per span | peak RSS | RSS per span past the first |")
    print("|---|---|---|---|---|")
    base = None
    for n in sizes:
        cpu, rss = run(n)
        extra = "" if base is None else f"{1024 * (rss - base[1]) / (n - base[0]):.0f} bytes"
        base = base or (n, rss)
        print(f"| {n} | {cpu:.2f} | {1000 * cpu / n:.2f} ms | {rss / 1024:.0f} MiB | {extra} |", flush=True)
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
