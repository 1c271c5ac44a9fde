"""Bytecode-bound kernels of real programs: ireeabi's interpreter against iree-benchmark-module.

    python benchmarks/bench_kernels.py [--kernel softmax,...] [--model inline-static,vmvx]
                                       [--rounds N] [--profile]
    python benchmarks/bench_kernels.py --spy | --workgroup-calls [--kernel ...]
    python benchmarks/bench_kernels.py --workgroup-entry
    python benchmarks/bench_kernels.py --whole-run [--shape 12x128x40960]

The kernels (tests/programs/kernels/*.mlir, written here): a softmax (max reduction, exp, sum
reduction, division), a matmul, a 3x3 convolution, an elementwise chain (exp, tanh, pow), a row
argmax; and the index class (issue 44): tensors of 10^7 elements computed from their indices
(`linalg.index`, `arith.index_cast`, mixed i32/i64 index math, `divsi`/`remsi` of negative
values) feeding reductions: index_reduce (a 64x1024x256 f32 tensor reduced over two axes),
index_i64 (an i64 sum over a 128x512x256 domain, divided by an index), iota_max (a 4096x4096 i32
tensor returned with its row maxima). Each is compiled for inline-static (vmvx-inline: the kernels are VM bytecode inside the
module) and for the default model with vmvx kernels (VM bytecode executables, run by the full `hal`
module), and run on the same inputs by both tools.

Times are CPU seconds of one whole call on each side (iree-benchmark-module's process_time with
`--device=local-sync`, one thread; ireeabi's `time.process_time` around `Program.call` and the
release of its result), so that a machine loaded by other work changes the ratio less than wall
time would: the load steals wall time from both, CPU time from neither. Each ireeabi call is
checked against iree-run-module's output of the same call (same text, or the same numbers within
one ulp per element where the two runtimes' libm differ) once, outside the timing.

`--spy` samples one warm fast-path call of each kernel (a second call: the first one's compiles left
out) with py-spy in a child process and attributes
every sample to the bytecode op whose generated line it was in (regions.py ends each line it writes
for an instruction with `# <pc> <op>`; a sample in a function the line calls counts for the line):
the per-op breakdown of where the time goes, at any size.

`--workgroup-calls` counts what entering a vmvx workgroup costs: the Python function calls of one
warm call's vmvx dispatches per workgroup (sys.setprofile's events: a count, not a time).

`--workgroup-entry` times entering vmvx workgroups where little else runs: one dispatch of
tests/programs/vmvx/workgroups.mlir's kernel (64 elements per workgroup) over 4096 workgroups, CPU
time per workgroup.

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
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, NamedTuple

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
    inputs: tuple[tuple[int, ...], ...]  # input shapes
    dtypes: tuple[str, ...] = ()  # their element types (default f32)


KERNELS = {
    "softmax": Kernel("softmax.mlir", "softmax", ((64, 4096),)),
    "matmul": Kernel("matmul.mlir", "matmul", ((256, 256), (256, 256))),
    "conv2d": Kernel("conv2d.mlir", "conv2d", ((1, 64, 64, 16), (3, 3, 16, 16))),
    "elementwise": Kernel("elementwise.mlir", "chain", ((262144,), (262144,))),
    "argmax": Kernel("argmax.mlir", "argmax", ((512, 1024),)),
    "index_reduce": Kernel("index_reduce.mlir", "index_reduce", ((64,),)),
    "index_i64": Kernel("index_i64.mlir", "index_i64", ((128,), (512,)), ("int64", "int32")),
    "iota_max": Kernel("iota_max.mlir", "iota_max", ((4096,),), ("int32",)),
}
MODELS = ("inline-static", "vmvx")


def _values(shape: tuple[int, ...], k: int, dtype: str = "float32") -> np.ndarray:
    """Deterministic inputs: f32 in [0.25, 1.25), a ramp different per input; integers a ramp of
    both signs in [-50, 50)."""
    n = int(np.prod(shape))
    if dtype != "float32":
        return ((np.arange(n, dtype=np.int64) * (37 + 2 * k)) % 100 - 50).astype(dtype).reshape(shape)
    return (0.25 + ((np.arange(n, dtype=np.float64) * (0.618 + k)) % 1.0)).astype(np.float32).reshape(shape)


def _inputs(kernel: Kernel) -> list[np.ndarray]:
    return [_values(s, k, (kernel.dtypes or ("float32",) * len(kernel.inputs))[k])
            for k, s in enumerate(kernel.inputs)]


def _input_files(kernel: Kernel, work: Path) -> list[str]:
    flags = []
    for k, value in enumerate(_inputs(kernel)):
        path = work / f"{kernel.function}_{k}.npy"
        np.save(path, value)
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


def ireeabi_cpu_ms(vmfb: Path, kernel: Kernel, rounds: int) -> tuple[float, list[np.ndarray]]:
    """Median CPU ms of one whole call (and the release of its results), and the results."""
    with _program(vmfb) as program:
        args = [program.buffer_view(v) for v in _inputs(kernel)]
        samples = []
        result = None
        for _ in range(rounds):
            t0 = time.process_time()
            out = program.context.invoke(kernel.function, *args)
            samples.append(time.process_time() - t0)
            if result is None:
                result = [program.to_numpy(v).copy() for v in out]
            for v in out:
                program.buffers.release(v)
        for v in args:
            program.buffers.release(v)
    return statistics.median(samples) * 1e3, result


def check_against_iree(vmfb: Path, kernel: Kernel, inputs: list[str], results: list[np.ndarray],
                       work: Path) -> str:
    """'same bits' when iree-run-module's results equal ours bit for bit, else how they differ."""
    outs = [work / f"iree_out{k}.npy" for k in range(len(results))]
    subprocess.run([iree_tools.find_tool("iree-run-module"), "--device=local-sync", f"--module={vmfb}",
                    f"--function={kernel.function}", *inputs, *(f"--output=@{o}" for o in outs)],
                   capture_output=True, text=True, check=True, timeout=3600)
    verdicts = {_agreement(np.load(o), ours) for o, ours in zip(outs, results)}
    return "same bits" if verdicts == {"same bits"} else "; ".join(sorted(verdicts))


def _agreement(theirs: np.ndarray, ours: np.ndarray) -> str:
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
        args = [program.buffer_view(v) for v in _inputs(kernel)]
        program.context.invoke(kernel.function, *args)
    total = sum(counts.values())
    print(f"    {total} instructions; top opcodes:")
    for name, n in counts.most_common(top):
        print(f"      {name:28s} {n:12d}  {100 * n / total:5.1f}%")
    with _program(vmfb) as program:
        args = [program.buffer_view(v) for v in _inputs(kernel)]
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


def call_once(vmfb: Path, kernel: Kernel) -> None:
    """One fast-path call after a first one (what --spy samples, in a child process: the second,
    warm call, without the first one's compiles)."""
    with _program(vmfb) as program:
        args = [program.buffer_view(v) for v in _inputs(kernel)]

        def call() -> None:
            for v in program.context.invoke(kernel.function, *args):
                program.buffers.release(v)
        call()
        warm_call(call)
        for v in args:
            program.buffers.release(v)


def warm_call(call: "Callable[[], None]") -> None:
    """The call --spy counts (its samples are those with this function on their stack)."""
    call()


def workgroup_calls(vmfb: Path, kernel: Kernel, top: int = 12) -> None:
    """What entering a vmvx workgroup costs, counted: the Python function calls (and calls of C
    functions) of one warm call's vmvx dispatches, per workgroup, from sys.setprofile's events
    (a count, the same on a loaded machine); the functions called most per workgroup."""
    from ireeabi.hal.local import vmvx_executable
    counts: collections.Counter = collections.Counter()
    workgroups = [0]
    run = vmvx_executable.VmvxLibrary.run_workgroups

    def profile(frame, event, arg):  # noqa: ANN001, ANN202
        if event == "call":
            counts["call", frame.f_code.co_name] += 1
        elif event == "c_call":
            counts["c_call", getattr(arg, "__qualname__", str(arg))] += 1

    def counted(self, ordinal, groups, constants, bindings):  # noqa: ANN001, ANN202
        workgroups[0] += groups[0] * groups[1] * groups[2]
        sys.setprofile(profile)
        try:
            return run(self, ordinal, groups, constants, bindings)
        finally:
            sys.setprofile(None)
    with _program(vmfb) as program:
        args = [program.buffer_view(v) for v in _inputs(kernel)]
        for v in program.context.invoke(kernel.function, *args):  # the first call compiles
            program.buffers.release(v)
        vmvx_executable.VmvxLibrary.run_workgroups = counted  # type: ignore[method-assign]
        try:
            for v in program.context.invoke(kernel.function, *args):
                program.buffers.release(v)
        finally:
            vmvx_executable.VmvxLibrary.run_workgroups = run  # type: ignore[method-assign]
        for v in args:
            program.buffers.release(v)
    n = max(workgroups[0], 1)
    calls = sum(v for (kind, _), v in counts.items() if kind == "call")
    c_calls = sum(v for (kind, _), v in counts.items() if kind == "c_call")
    print(f"    {workgroups[0]} workgroups; per workgroup {calls / n:.1f} Python calls, {c_calls / n:.1f} C calls; "
          f"most called: " + ", ".join(f"{name} {v / n:.1f}" for (_, name), v in counts.most_common(top)))


def workgroup_entry(work: Path, groups: int = 4096, rounds: int = 9) -> None:
    """CPU time per workgroup of one vmvx dispatch of many workgroups whose body is small: the
    kernel of tests/programs/vmvx/workgroups.mlir (64 elements of x * y + x per workgroup) run over
    `groups` workgroups on bindings that large (the executable's own run_workgroups, as the inline
    command buffer calls it); min and median of `rounds` dispatches."""
    from ireeabi.hal.local import vmvx_executable
    vmfb = iree_tools.compile_mlir(ROOT / "tests" / "programs" / "vmvx" / "workgroups.mlir", work, "vmvx")
    libraries: list = []
    load = vmvx_executable.load

    def recording(*args):  # noqa: ANN002, ANN202 - the hal module's load, its library kept
        libraries.append(load(*args))
        return libraries[-1]
    vmvx_executable.load = recording  # type: ignore[assignment]
    try:
        with _program(vmfb) as program:
            x = np.arange(512, dtype=np.float32)
            args = [program.buffer_view(x), program.buffer_view(x)]
            for v in program.context.invoke("mix", *args):  # loads the executable
                program.buffers.release(v)
            for v in args:
                program.buffers.release(v)
            library, heap = libraries[0], program.heap
            size = 4 * 64 * groups
            blocks = [heap.malloc(size) for _ in range(3)]
            samples = []
            for _ in range(rounds):
                t0 = time.process_time()
                library.run_workgroups(0, (groups, 1, 1), [], [(b, size) for b in blocks])
                samples.append(time.process_time() - t0)
            for b in blocks:
                heap.free(b)
    finally:
        vmvx_executable.load = load
    print(f"  workgroups.mlir's kernel over {groups} workgroups: min {min(samples) / groups * 1e6:.1f} us, "
          f"median {statistics.median(samples) / groups * 1e6:.1f} us CPU per workgroup", flush=True)


_FRAME = re.compile(r"^(.*) \((.*):(\d+)\)$")
_TAG = re.compile(r"  # (\d+) (\w+)$")


def spy(name: str, model: str, work: Path, rate: int, top: int = 14) -> None:
    """py-spy's samples of one fast-path call in a child, per bytecode op (see the docstring)."""
    dump = work / f"dump-{name}-{model}"
    shutil.rmtree(dump, ignore_errors=True)
    dump.mkdir()
    raw = work / f"spy-{name}-{model}.txt"
    env = dict(os.environ, IREEABI_DUMP_GENERATED=str(dump))
    subprocess.run([shutil.which("py-spy") or "py-spy", "record", "-r", str(rate), "-f", "raw", "--full-filenames",
                    "-o", str(raw), "--", sys.executable, __file__, "--call-once", "--kernel", name,
                    "--model", model], env=env, check=True, capture_output=True, timeout=7200)
    texts: dict[str, list[str]] = {}
    ops: collections.Counter = collections.Counter()
    pcs: collections.Counter = collections.Counter()
    outside: collections.Counter = collections.Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if "warm_call (" not in stack:
            continue  # the child's start-up, compile and first call
        count = int(n)
        total += count
        for frame in reversed(stack.split(";")):
            m = _FRAME.match(frame)
            number = re.search(r" #(\d+)>$", m[2]) if m else None
            if number is None or not m[2].startswith("<block"):
                continue
            if number[1] not in texts:
                texts[number[1]] = (dump / f"block-{int(number[1]):06d}.py").read_text().splitlines()
            tagged = _TAG.search(texts[number[1]][int(m[3]) - 1])
            op = tagged[2] if tagged else "(region entry, dispatch, loop heads)"
            ops[op] += count
            if tagged:
                pcs[f"{m[1]}@{tagged[1]} {op}"] += count
            break
        else:
            leaf = _FRAME.match(stack.split(";")[-1])
            outside[f"{leaf[1]} ({Path(leaf[2]).name})" if leaf else stack.split(";")[-1]] += count
    inside = sum(ops.values())
    print(f"    py-spy: {total} samples of the call at {rate}/s, {100 * inside / max(total, 1):.1f}% in generated blocks and regions")
    for op, n in ops.most_common(top):
        print(f"      {op:40s} {n:8d}  {100 * n / total:5.1f}%")
    print("    hottest instructions:")
    for pc, n in pcs.most_common(top):
        print(f"      {pc:40s} {n:8d}  {100 * n / total:5.1f}%")
    print("    outside generated code (leaf functions):")
    for leaf, n in outside.most_common(top):
        print(f"      {leaf:60s} {n:8d}  {100 * n / total:5.1f}%")


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
    ap.add_argument("--spy", action="store_true", help="py-spy's samples of one fast-path call, per op")
    ap.add_argument("--rate", type=int, default=100, help="py-spy samples per second (with --spy)")
    ap.add_argument("--workgroup-calls", action="store_true",
                    help="Python calls per vmvx workgroup of one warm call, counted (the vmvx model)")
    ap.add_argument("--workgroup-entry", action="store_true",
                    help="CPU time per vmvx workgroup of a dispatch of many small workgroups")
    ap.add_argument("--call-once", action="store_true", help=argparse.SUPPRESS)  # --spy's child
    ap.add_argument("--whole-run", action="store_true", help="softmax_large's whole runs instead")
    ap.add_argument("--shape", default="12x128x40960", help="softmax_large's tensor (with --whole-run)")
    args = ap.parse_args()
    work = Path(iree_tools.session_dir())
    load = Path('/proc/loadavg').read_text().split()[:3]
    if args.whole_run:
        print(f"bench_kernels --whole-run: CPU seconds of whole runs; machine load {load}")
        whole_run(args.shape, work)
        return
    if args.call_once:
        kernel = KERNELS[args.kernel]
        call_once(iree_tools.compile_mlir(KERNELS_DIR / kernel.source, work, args.model), kernel)
        return
    if args.workgroup_entry:
        print(f"bench_kernels --workgroup-entry: CPU time per vmvx workgroup; machine load {load}")
        workgroup_entry(work)
        return
    if args.workgroup_calls:
        print(f"bench_kernels --workgroup-calls: calls per vmvx workgroup, counted; machine load {load}")
        for name in args.kernel.split(","):
            print(f"  {name}", flush=True)
            workgroup_calls(iree_tools.compile_mlir(KERNELS_DIR / KERNELS[name].source, work, "vmvx"), KERNELS[name])
        return
    if args.spy:
        print(f"bench_kernels --spy: py-spy samples of one fast-path call per kernel; machine load {load}")
        for name in args.kernel.split(","):
            for model in args.model.split(","):
                print(f"  {name} {model}", flush=True)
                spy(name, model, work, args.rate)
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
