"""Bytecode-bound kernels of real programs: ireeabi's interpreter against iree-benchmark-module.

    python benchmarks/bench_kernels.py [--kernel softmax,...] [--model inline-static,vmvx]
                                       [--rounds N] [--profile]
    python benchmarks/bench_kernels.py --whole-run [--shape 12x128x40960]

The kernels (tests/programs/kernels/*.mlir, written here): a softmax (max reduction, exp, sum
reduction, division), a matmul, a 3x3 convolution, an elementwise chain (exp, tanh, pow), a row
argmax. Each is compiled for inline-static (vmvx-inline: the kernels are VM bytecode inside the
module) and for the default model with vmvx kernels (VM bytecode executables, run by the full `hal`
module), and run on the same inputs by both tools.

Times are CPU seconds of one whole call on each side (iree-benchmark-module's process_time with
`--device=local-sync`, one thread; ireeabi's `time.process_time` around `Program.call` and the
release of its result), so that a machine loaded by other work changes the ratio less than wall
time would: the load steals wall time from both, CPU time from neither. Each ireeabi call is
checked against iree-run-module's output of the same call (same text, or the same numbers within
one ulp per element where the two runtimes' libm differ) once, outside the timing.

`--profile` runs each kernel once more on the reference path with every instruction counted per
opcode (the handlers of the per-instruction table wrapped), and once on the fast path under
cProfile: where the time goes, and which ops leave the compiled regions (each handler call from a
region is one).

`--whole-run` times whole runs of softmax_large (tests/programs/kernels/softmax_large.mlir, IREE's
regression size 12x128x40960, inline-static) with a splat input: `iree-run-module` against
`ireeabi run`, the CPU time of each child process (user + system, from wait4), and checks that
both print the same text. `--shape` cuts the tensor down (the same loop nest at 12xAxB).
"""
from __future__ import annotations

import argparse
import collections
import cProfile
import gc
import json
import os
import pstats
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
import tests_support  # noqa: E402,F401 - tests/ on the import path, for `support`

from support import iree_tools  # noqa: E402
from ireeabi.tooling.program import Program, RunOptions  # noqa: E402
from ireeabi.base.heap import Heap  # noqa: E402
from ireeabi.vm.bytecode import Context  # noqa: E402

KERNELS_DIR = ROOT / "tests" / "programs" / "kernels"


class Kernel(NamedTuple):
    source: str
    function: str
    inputs: tuple[tuple[int, ...], ...]  # f32 input shapes


KERNELS = {
    "softmax": Kernel("softmax.mlir", "softmax", ((64, 4096),)),
    "matmul": Kernel("matmul.mlir", "matmul", ((256, 256), (256, 256))),
    "conv2d": Kernel("conv2d.mlir", "conv2d", ((1, 64, 64, 16), (3, 3, 16, 16))),
    "elementwise": Kernel("elementwise.mlir", "chain", ((262144,), (262144,))),
    "argmax": Kernel("argmax.mlir", "argmax", ((512, 1024),)),
}
MODELS = ("inline-static", "vmvx")


def _values(shape: tuple[int, ...], k: int) -> np.ndarray:
    """Deterministic inputs in [0.25, 1.25): a ramp, different per input."""
    n = int(np.prod(shape))
    return (0.25 + ((np.arange(n, dtype=np.float64) * (0.618 + k)) % 1.0)).astype(np.float32).reshape(shape)


def _input_files(kernel: Kernel, work: Path) -> list[str]:
    flags = []
    for k, shape in enumerate(kernel.inputs):
        path = work / f"{kernel.function}_{k}.npy"
        np.save(path, _values(shape, k))
        flags.append(f"--input=@{path}")
    return flags


def iree_cpu_ms(vmfb: Path, kernel: Kernel, inputs: list[str]) -> float:
    """Median CPU ms of iree-benchmark-module's repetitions of one call (local-sync)."""
    out = subprocess.run(
        [iree_tools.find_tool("iree-benchmark-module"), "--device=local-sync", f"--module={vmfb}",
         f"--function={kernel.function}", *inputs, "--benchmark_repetitions=5",
         "--benchmark_format=json"], capture_output=True, text=True, check=True, timeout=3600).stdout
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
    runs = [b for b in json.loads(out)["benchmarks"] if b.get("run_type") == "iteration"]
    return statistics.median(b["cpu_time"] * scale[b["time_unit"]] for b in runs)


def _program(vmfb: Path, reference: bool = False) -> Program:
    return Program(vmfb, RunOptions(reference=reference), heap=Heap(name="bench", capture_stacks=False))


def ireeabi_cpu_ms(vmfb: Path, kernel: Kernel, rounds: int) -> tuple[float, np.ndarray]:
    """Median CPU ms of one whole call (and the release of its result), and the result."""
    with _program(vmfb) as program:
        args = [program.buffer_view(_values(s, k)) for k, s in enumerate(kernel.inputs)]
        samples = []
        result = None
        for _ in range(rounds):
            t0 = time.process_time()
            out = program.context.invoke(kernel.function, *args)
            samples.append(time.process_time() - t0)
            if result is None:
                result = program.to_numpy(out[0]).copy()
            for v in out:
                program.buffers.release(v)
        for v in args:
            program.buffers.release(v)
    return statistics.median(samples) * 1e3, result


def check_against_iree(vmfb: Path, kernel: Kernel, inputs: list[str], ours: np.ndarray, work: Path) -> str:
    """'same' when iree-run-module's result equals ours bit for bit, else the largest ulp gap."""
    out = work / "iree_out.npy"
    subprocess.run([iree_tools.find_tool("iree-run-module"), "--device=local-sync", f"--module={vmfb}",
                    f"--function={kernel.function}", *inputs, f"--output=@{out}"],
                   capture_output=True, text=True, check=True, timeout=3600)
    theirs = np.load(out)
    if theirs.shape != ours.shape or theirs.dtype != ours.dtype:
        return f"DIFFERENT shape/type {theirs.shape}/{theirs.dtype} vs {ours.shape}/{ours.dtype}"
    if theirs.tobytes() == ours.tobytes():
        return "same bits"
    if ours.dtype == np.float32:
        gap = np.abs(theirs.view(np.int32).astype(np.int64) - ours.view(np.int32).astype(np.int64)).max()
        return f"within {gap} ulp"
    return f"DIFFERENT in {(theirs != ours).sum()} elements"


def profile(vmfb: Path, kernel: Kernel, top: int = 12) -> None:
    """Instructions per opcode (reference path), and the fast path's cProfile top entries."""
    counts: collections.Counter = collections.Counter()
    with _program(vmfb, reference=True) as program:
        for fn in program.context.functions:
            code = getattr(fn, "code", None)
            if not code:
                continue
            for i, (handler, payload, inst) in enumerate(code):
                name = inst.op.symbol

                def counted(ctx, frame, p, _h=handler, _n=name):  # noqa: ANN001, ANN202
                    counts[_n] += 1
                    return _h(ctx, frame, p)
                code[i] = (counted, payload, inst)
        args = [program.buffer_view(_values(s, k)) for k, s in enumerate(kernel.inputs)]
        program.context.invoke(kernel.function, *args)
    total = sum(counts.values())
    print(f"    {total} instructions; top opcodes:")
    for name, n in counts.most_common(top):
        print(f"      {name:28s} {n:12d}  {100 * n / total:5.1f}%")
    with _program(vmfb) as program:
        args = [program.buffer_view(_values(s, k)) for k, s in enumerate(kernel.inputs)]
        for v in program.context.invoke(kernel.function, *args):  # a first call compiles the regions
            program.buffers.release(v)
        left = _count_region_handlers()
        prof = cProfile.Profile()
        prof.enable()
        program.context.invoke(kernel.function, *args)
        prof.disable()
    print("    ops left to their handlers from loop regions: "
          + (", ".join(f"{name} {n}" for name, n in left.most_common(top)) or "none"))
    stats = pstats.Stats(prof)
    stats.sort_stats("tottime").print_stats(top)


def _count_region_handlers() -> collections.Counter:
    """Wrap every instruction handler a loop region binds with a counter per opcode (a region binds
    the handler of each op it does not write inline: a signaling NaN load's, a select's on values
    not held, a call's), in every live bytecode context (the program's and its executables')."""
    counts: collections.Counter = collections.Counter()
    symbols, regions = {}, []
    for ctx in (o for o in gc.get_objects() if isinstance(o, Context)):
        for fn in ctx.functions:
            for handler, _, inst in getattr(fn, "code", None) or ():
                symbols[id(handler)] = inst.op.symbol
                if "locals region" in getattr(getattr(handler, "__code__", None), "co_filename", ""):
                    regions.append(handler)
    for run in {id(r): r for r in regions}.values():
        namespace = run.__globals__
        for key, value in list(namespace.items()):
            if key.startswith("h") and key[1:].isdigit() and id(value) in symbols:
                def counted(*a, _f=value, _n=symbols[id(value)]):  # noqa: ANN002, ANN202
                    counts[_n] += 1
                    return _f(*a)
                namespace[key] = counted
    return counts


def _child_cpu_s(argv: list[str], out: Path) -> float:
    """User + system CPU seconds of one child process (its stdout to `out`)."""
    with open(out, "wb") as f:
        child = subprocess.Popen(argv, stdout=f, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        err = child.stderr.read().decode(errors="replace")
        child.stderr.close()
    if child.returncode != 0:
        raise SystemExit(f"{argv[0]} failed ({child.returncode}): {err[-2000:]}")
    return usage.ru_utime + usage.ru_stime


def whole_run(shape: str, work: Path) -> None:
    """softmax_large's whole run, iree-run-module against `ireeabi run`, CPU seconds of each."""
    source = KERNELS_DIR / "softmax_large.mlir"
    if shape != "12x128x40960":  # the same program cut down
        text = source.read_text().replace("12x128x40960", shape)
        source = work / f"softmax_large_{shape}.mlir"
        source.write_text(text)
    vmfb = iree_tools.compile_mlir(source, work, "inline-static")
    value = f"--input={shape}xf32=5"
    iree = _child_cpu_s([iree_tools.find_tool("iree-run-module"), "--device=local-sync", f"--module={vmfb}",
                         value], work / "iree.txt")
    script = Path(sys.executable).with_name("ireeabi")  # the console script, as a user runs it
    command = [str(script)] if script.exists() else [sys.executable, "-m", "ireeabi.cli"]
    ours = _child_cpu_s([*command, "run", str(vmfb), value], work / "ours.txt")
    same = (work / "iree.txt").read_bytes() == (work / "ours.txt").read_bytes()
    print(f"  softmax_large {shape} whole run: iree-run-module {iree:.2f} s CPU, ireeabi run {ours:.2f} s CPU, "
          f"{ours / iree:.1f}x; printed output {'identical' if same else 'DIFFERENT'}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernel", default=",".join(KERNELS))
    ap.add_argument("--model", default=",".join(MODELS))
    ap.add_argument("--rounds", type=int, default=1, help="ireeabi calls per kernel (median)")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--whole-run", action="store_true", help="softmax_large's whole runs instead")
    ap.add_argument("--shape", default="12x128x40960", help="softmax_large's tensor (with --whole-run)")
    args = ap.parse_args()
    work = Path(iree_tools.session_dir())
    load = Path('/proc/loadavg').read_text().split()[:3]
    if args.whole_run:
        print(f"bench_kernels --whole-run: CPU seconds of whole runs; machine load {load}")
        whole_run(args.shape, work)
        return
    print(f"bench_kernels: CPU ms of one call; machine load {load}")
    for name in args.kernel.split(","):
        kernel = KERNELS[name]
        inputs = _input_files(kernel, work)
        for model in args.model.split(","):
            vmfb = iree_tools.compile_mlir(KERNELS_DIR / kernel.source, work, model)
            iree = iree_cpu_ms(vmfb, kernel, inputs)
            ours, result = ireeabi_cpu_ms(vmfb, kernel, args.rounds)
            agreement = check_against_iree(vmfb, kernel, inputs, result, work)
            print(f"  {name:12s} {model:14s} iree {iree:9.2f} ms  ireeabi {ours:10.1f} ms  "
                  f"{ours / iree:7.1f}x  ({agreement})", flush=True)
            if args.profile:
                profile(vmfb, kernel)


if __name__ == "__main__":
    main()
