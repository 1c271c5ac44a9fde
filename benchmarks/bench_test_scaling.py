"""`ireeabi test` against the number of tests of a VM test module: CPU seconds and peak memory.

    python benchmarks/bench_test_scaling.py [--sizes 100,1000,10000] [--runners vm,check]
    python benchmarks/bench_test_scaling.py --instructions 1000,10000,100000

For each size N a VM test module of N trivial tests (`test_<i>() -> ()`, one `vm.return` each) is
written as VM assembly and assembled with iree-as-module (in a temporary folder); then
`python -m ireeabi test MODULE --runner R` runs in a child process of its own, and its CPU seconds
(user + system, from wait4's rusage: the machine's load does not count) and peak RSS are printed,
with the CPU per test. Every run must pass every test (a failing run is an error, not a figure).
The acceptance of issue 41: 10,000 tests within 1.5x of 10 times the CPU of 1,000 (the `ratio`
line: cpu(10 N) / (10 cpu(N)) for each consecutive pair of sizes ten apart).

With `--instructions`, the other curve: one test whose function is N additions in one block (the
compiled path compiles it: blocks.MAX_RUN bounds each generated function), CPU and peak RSS per N.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

TARGET = 1.5


def module_text(n: int) -> str:
    lines = ["vm.module @many version 0", "vm.type i32", ""]
    for i in range(n):
        lines += [f"vm.export @test_{i}", f"vm.func @test_{i}() -> () {{", "^bb0:", "  vm.return", "}", ""]
    return "\n".join(lines)


def long_function_text(n: int) -> str:
    lines = ["vm.module @long version 0", "vm.type i32", "", "vm.export @test_long",
             "vm.func @test_long() -> () {", "^bb0:", "  %i0 = vm.const.i32 1"]
    lines += ["  %i1 = vm.add.i32 %i0, %i0"] * n
    return "\n".join(lines + ["  vm.return", "}", ""])


def assemble(folder: Path, n: int, text: str = "", stem: str = "many") -> Path:
    src, out = folder / f"{stem}{n}.vmasm", folder / f"{stem}{n}.vmfb"
    src.write_text(text or module_text(n))
    tool = shutil.which("iree-as-module")
    if tool is None:
        raise SystemExit("iree-as-module is not on PATH (pip install iree-base-runtime)")
    subprocess.run([tool, f"--output={out}", str(src)], check=True)
    return out


def run(module: Path, runner: str, n: int) -> tuple[float, int]:
    """CPU seconds (user + system) and peak RSS (KiB) of one `ireeabi test` child."""
    argv = [sys.executable, "-m", "ireeabi", "test", str(module), "--runner", runner]
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode(errors="replace")
    if proc.returncode != 0 or f"[  PASSED  ] {n} test{'s' if n != 1 else ''}." not in text:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}:\n{text[-2000:]}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100,1000,10000", help="numbers of tests (comma-separated)")
    ap.add_argument("--runners", default="vm,check", help="--runner values to run (comma-separated)")
    ap.add_argument("--instructions", default="", help="instead: function sizes (comma-separated)")
    args = ap.parse_args()
    if args.instructions:
        long_functions([int(s) for s in args.instructions.split(",")])
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    runners = args.runners.split(",")
    print(f"load before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        modules = {n: assemble(Path(tmp), n) for n in sizes}
        print("| runner | tests | CPU s | CPU per test | peak RSS |")
        print("|---|---|---|---|---|")
        for runner in runners:
            cpu = {}
            for n in sizes:
                cpu[n], rss = run(modules[n], runner, n)
                print(f"| {runner} | {n} | {cpu[n]:.2f} | {1000 * cpu[n] / n:.2f} ms | {rss / 1024:.0f} MiB |",
                      flush=True)
            for n in sizes:
                if 10 * n in cpu:
                    ratio = cpu[10 * n] / (10 * cpu[n])
                    verdict = "within" if ratio <= TARGET else "PAST"
                    print(f"ratio {runner} {10 * n}/(10 x {n}): {ratio:.2f} ({verdict} {TARGET})")
    print(f"load after: {os.getloadavg()}")


def long_functions(sizes: list[int]) -> None:
    print(f"load before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        print("| instructions | CPU s | peak RSS | RSS per instruction past 100 |")
        print("|---|---|---|---|")
        base = None
        for n in [100] + sizes:
            module = assemble(Path(tmp), n, long_function_text(n), "long")
            cpu, rss = run(module, "vm", 1)
            if base is None:
                base = rss
                continue
            print(f"| {n} | {cpu:.2f} | {rss / 1024:.0f} MiB | {1024 * (rss - base) / n:.0f} bytes |",
                  flush=True)
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
