"""What stopping native kernels costs each dispatch: the C helper's issue call (one workgroup of a
kernel that returns at once) as `elf_executable.Library.issue` makes it, against the helper of
another revision (without Ctrl-C and budgets), compiled here from that revision's native_build.py.

    python benchmarks/bench_native_stop.py [--rev main] [--calls 100000] [--runs 5]

Three rows: the other revision's helper; this one with no budget (Ctrl-C only: one more sigaction
query and the SIGINT handler's lookup); this one with a CPU-time budget (a timer armed and disarmed
per dispatch). The median ns per call of `--runs` runs. Needs git and a C compiler.
"""
from __future__ import annotations

import argparse
import ctypes
import importlib.util
import mmap
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _other_helper(rev: str, tmp: Path) -> ModuleType:
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:hal/local/native_build.py"],
                            capture_output=True, text=True, check=True).stdout
    (tmp / "native_build_other.py").write_text(source)
    sys.path.insert(0, str(tmp))
    import native_build_other  # noqa: E402 - written just above
    so = native_build_other.make_ffi("_bench_other_native").compile(tmpdir=str(tmp))
    spec = importlib.util.spec_from_file_location("_bench_other_native", so)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", default="main", help="the revision to compare with (default main)")
    ap.add_argument("--calls", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()

    from ireeabi.hal.local import native
    from ireeabi.hal.local.elf_executable import new_workgroup_state
    from ireeabi.base.machine import host
    from ireeabi.layouts.executable_library import DispatchLayout

    page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(b"\x31\xc0\xc3")  # xor eax, eax; ret: a kernel that returns 0 at once
    fn = ctypes.addressof(ctypes.c_char.from_buffer(page))
    _keep, wg = new_workgroup_state()
    ids = host().view(DispatchLayout).wg_ids
    n = args.calls

    with tempfile.TemporaryDirectory() as tmp:
        other = _other_helper(args.rev, Path(tmp))

        def before() -> float:
            calls, fault = other.ffi.new("uint64_t*"), other.ffi.new("ireeabi_fault_t*")
            issue = other.lib.ireeabi_issue_workgroups
            t = time.perf_counter()
            for _ in range(n):
                issue(fn, 0, 0, wg, *ids, 1, 1, 1, calls, fault)
            return (time.perf_counter() - t) / n * 1e9

        def now(seconds: "float | None") -> float:
            mod = native.native()
            calls, fault = mod.ffi.new("uint64_t*"), mod.ffi.new("ireeabi_fault_t*")
            issue = mod.lib.ireeabi_issue_workgroups
            t = time.perf_counter()
            for _ in range(n):
                issue(fn, 0, 0, wg, *ids, 1, 1, 1, calls, fault, native.budget_ns(seconds), native.stop_flags())
            return (time.perf_counter() - t) / n * 1e9

        for name, run in ((f"{args.rev}'s helper", before), ("this helper, no budget", lambda: now(None)),
                          ("this helper, 1 s CPU budget", lambda: now(1.0))):
            times = [run() for _ in range(args.runs)]
            print(f"{name:30s} {statistics.median(times):8.0f} ns per issue call "
                  f"(median of {args.runs} runs of {n})")


if __name__ == "__main__":
    main()
