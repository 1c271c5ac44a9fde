"""The 1M-element add through the emulated hal_loader vs iree-benchmark-module on the same module.

    python benchmarks/bench_dispatch.py

ireeabi side: one `hal_loader.executable.dispatch` import call as the VM makes it — arguments packed
into a fresh buffer (refs retained), the dispatch shim reading them, three bindings mapped, 256
workgroups run by the kernel, arguments released — with workgroup counts and sizes taken from the
compiler's VM IR. iree-benchmark-module runs the module's whole `add` function (allocation, buffer
views and the same dispatch) on local-sync. Both in this one run, on this machine.
"""
from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import time
from pathlib import Path

import numpy as np

KERNEL_MS = 0.0

ROOT = Path(__file__).resolve().parent.parent
import tests_support  # noqa: E402,F401 - tests/ on the import path, for `support`

from support import iree_tools  # noqa: E402
from support.hal_session import Session  # noqa: E402
from support.hal_programs import program  # noqa: E402
from ireeabi.modules.hal.runtime import HalRuntime  # noqa: E402


def ireeabi_ms(rounds: int = 400) -> tuple[float, float]:
    prog = program("add1m")
    (d,) = prog.dispatches("add", [None, None])
    with HalRuntime() as rt:
        s = Session(rt)
        exe = s.load(prog)
        fid = s.function(exe, d.export_name)
        storages = [s.allocate(length)[1] for (_, _, length) in d.bindings]
        for st in storages[:2]:
            rt.vm_buffers.as_numpy(st.ptr, np.float32)[:] = 1.5
        bindings = [(st, off, length) for st, (_, off, length) in zip(storages, d.bindings)]
        args = (exe, fid, *d.workgroups, d.constants, bindings)
        call = rt.loader.module.call
        for _ in range(50):
            call("executable.dispatch", *args)
        samples, kernel = [], []
        # Interleaved with the full call: the kernel alone (the C workgroup loop over the same buffers).
        _, loaded = rt.executables.deref(exe)
        state = rt.loader._states[(len(d.constants), len(d.bindings))]
        wg = rt.loader._workgroup_address
        for _ in range(rounds):
            t0 = time.perf_counter()
            call("executable.dispatch", *args)
            t1 = time.perf_counter()
            loaded.library.issue(fid, state.address, wg, d.workgroups, rt.heap)
            t2 = time.perf_counter()
            samples.append(t1 - t0)
            kernel.append(t2 - t1)
        global KERNEL_MS
        KERNEL_MS = statistics.median(kernel) * 1e3
        assert (rt.vm_buffers.as_numpy(storages[2].ptr, np.float32) == 3.0).all()
        s.release_all()
    return statistics.median(samples) * 1e3, statistics.mean(samples) * 1e3


def iree_benchmark_ms() -> tuple[float, float]:
    vmfb = iree_tools.compile_mlir(ROOT / "tests" / "programs" / "add1m.mlir")
    out = subprocess.run(
        [iree_tools.find_tool("iree-benchmark-module"), "--device=local-sync", f"--module={vmfb}",
         "--function=add", "--input=1048576xf32=1.5", "--input=1048576xf32=1.5",
         "--benchmark_repetitions=10", "--benchmark_min_time=0.2s"],
        capture_output=True, text=True, check=True).stdout

    def stat(name: str) -> float:
        m = re.search(rf"_{name}\s+([\d.]+) ms", out)
        if not m:
            raise RuntimeError(f"no {name} in iree-benchmark-module output:\n{out}")
        return float(m.group(1))

    return stat("median"), stat("mean")


def main(rounds: int = 5) -> None:
    # The machine's speed drifts (other processes, memory bandwidth): measure the two sides
    # alternately and compare each pair, then take the median of the per-pair ratios.
    pairs = []
    for _ in range(rounds):
        ours_median, _ = ireeabi_ms(rounds=200)
        kernel = KERNEL_MS
        theirs_median, _ = iree_benchmark_ms()
        pairs.append((ours_median, kernel, theirs_median))
    print("1M-element add (256 workgroups), ms per call, alternating rounds")
    print("  round  ireeabi dispatch  (kernel alone)  iree-benchmark-module  ratio")
    for i, (o, k, t) in enumerate(pairs):
        print(f"  {i:5d}  {o:16.3f}  {k:14.3f}  {t:21.3f}  {o / t:5.2f}x")
    ratios = sorted(o / t for o, _, t in pairs)
    print(f"  median ratio {statistics.median(ratios):.2f}x (min {ratios[0]:.2f}, max {ratios[-1]:.2f});"
          " target <= 1.2x")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds (default 5)")
    main(ap.parse_args().rounds)
