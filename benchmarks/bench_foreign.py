"""Foreign kernels: the cost of a dispatch run in the emulated CPU (Unicorn) or under wasmtime,
against the same kernel run natively.

    python benchmarks/bench_foreign.py [--rounds N] [--only riscv32,wasm32,...] [--processes P]

- add16 per dispatch: the time of one `library.issue` (every workgroup of the dispatch, the kernel
  itself) inside `Program.call("add")`, median of N calls: the x86_64 kernel natively and in the
  emulated CPU (`emulate_kernels=True`: the same machine code, so the ratio is the emulator's cost;
  issue 29's target is at most 5x), then each foreign build on its own data model.
- add1m per architecture: one whole `Program.call("add")` of 2 x 1M f32 (256 workgroups), median.
- `--processes P`: only the x86_64 add16 pair, in P fresh processes, each measuring native then
  emulated (the ratio has differed between processes: each process's figures are printed).

Against the peer a user would pick (issue 43), whole processes:

    python benchmarks/bench_foreign.py --peers [--isas aarch64,armv7,riscv64] [--programs ...]
        [--runs 3] [--peer ISA=ARGV]

- `--peers`: `ireeabi run --target ISA` against IREE's own runtime for ISA under qemu-user
  (aarch64: the 3.13 aarch64 wheel's iree-run-module, tests/iree_tools.py; armv7 and riscv64: the
  builds from source of `--oracles DIR`, or `--peer armv7='qemu-arm -L SYSROOT .../iree-run-module'`;
  `--peer` wins), each program compiled once for the
  default execution model with the ISA's kernel flags, the same flags and inputs on both sides,
  `--device=local-sync`. Per pair: ireeabi then the peer, `--runs` pairs; the medians of each side's
  CPU time (user + sys of the process and its children, from wait4) and wall time, the median of the
  per-pair CPU ratios; the two stdouts must be identical (else it stops). The package's bytecode is
  compiled first, as bench_startup.py does. Programs (`--programs`): matmul (256x256x256 f32, the
  issue's table), matmul384 and matmul512 (384 and 512 cubed), add1m (1M f32 add), add4m (4M),
  add16m (16M), conv (3x3 conv, 64x64x16), conv128 (128x128x16), conv256 (256x256x16), chain (262144 f32 exp/tanh/pow), add16 (16 f32: a whole run's
  fixed cost; with it in `--programs`, the table's last column is each program's CPU beyond add16's
  on each side, the part that grows with the kernel); `name:v1,v2` sets the splat
  inputs (default 1 and 2); separate several with `;` when one has values, else with `,`.
- `--phases`: where a whole run's fixed cost goes: add16 on each ISA in `--runs` child processes,
  the CPU seconds (process_time) of each phase of `ireeabi run`'s work: the interpreter's start-up,
  numpy's import, the command's imports, unicorn's, the Program (module load, native modules, the
  kernels' load into the emulated CPU), the call; medians.
- `--breakdown`: in this process, for each ISA and program: CPU seconds of the program load, of
  the call, and of the emulated kernels (time inside `emu_start`), the emulated calls and their
  restarts (the preemption thread's stops), translated-code flushes, the emulator's regions and
  hooks (and the TLB fills of the CPU's fill). `--reference` runs the programs on the reference
  path, the emulated CPU's included (its MMU's TLB; floats soft-float until an inexact one), for
  the time inside `emu_start` against the fast path's (the VM's own time is then the reference
  interpreter's). Where the rest of a kernel's time goes (soft-float, the store path) is perf's to
  say (RESULTS.md has the command).
"""
from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
import tests_support  # noqa: E402,F401 - tests/ on the import path, for `support`

from support import iree_tools  # noqa: E402
from bench_startup import compile_bytecode, console_script, load_line  # noqa: E402
from ireeabi.hal.local import elf_executable, target_library  # noqa: E402
from ireeabi.tooling.check_compile import KERNEL_TARGET_FLAGS  # noqa: E402
from ireeabi.tooling.program import Program, RunOptions  # noqa: E402

# iree-compile 3.13's flags per foreign target (the library's; check_compile.py says why).
TRIPLES = {t: flags for t, flags in KERNEL_TARGET_FLAGS.items() if t not in ("x86_64", "i386")}

_issue_times: list[float] = []


def _timed(issue):  # wraps a library class's issue to record each dispatch's time
    def wrapper(self, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return issue(self, *args, **kwargs)
        finally:
            _issue_times.append(time.perf_counter() - t0)
    return wrapper


elf_executable.Library.issue = _timed(elf_executable.Library.issue)
target_library.TargetLibrary.issue = _timed(target_library.TargetLibrary.issue)


def dispatch_us(path: Path, target: str, rounds: int, **kw) -> float:
    a = np.arange(16, dtype=np.float32)
    with Program(path, RunOptions(target=target, **kw)) as p:
        for _ in range(20):
            p.call("add", a, a)
        _issue_times.clear()
        for _ in range(rounds):
            p.call("add", a, a)
        return statistics.median(_issue_times) * 1e6


def call_ms(path: Path, target: str, rounds: int, **kw) -> float:
    a = np.full(1 << 20, 1.5, dtype=np.float32)
    with Program(path, RunOptions(target=target, **kw)) as p:
        p.call("add", a, a)
        samples = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            out = p.call("add", a, a)
            samples.append(time.perf_counter() - t0)
        assert float(out[12345]) == 3.0
        return statistics.median(samples) * 1e3


def processes(count: int, rounds: int) -> None:
    import subprocess
    ratios = []
    print(f"add16 dispatch, x86_64 native and emulated, median of {rounds} per process")
    for i in range(count):
        out = subprocess.run([sys.executable, __file__, "--pair", "--rounds", str(rounds)], check=True,
                             capture_output=True, text=True).stdout.split()
        native, emulated = float(out[-2]), float(out[-1])
        ratios.append(emulated / native)
        print(f"  process {i + 1}: native {native:6.1f} us  emulated {emulated:6.1f} us  {emulated / native:4.1f}x")
    print(f"ratio: median {statistics.median(ratios):.1f}x, worst {max(ratios):.1f}x (target <= 5x)")


class Kernel(NamedTuple):
    """A program of the peer comparison: its source, function and splat input shapes."""
    source: str  # a file of tests/programs, or MLIR text (generated sizes)
    function: str
    shapes: tuple[str, ...]


_PROGRAMS = ROOT / "tests" / "programs"
_MATMUL = (_PROGRAMS / "kernels" / "matmul.mlir").read_text()
_CONV = (_PROGRAMS / "kernels" / "conv2d.mlir").read_text()
PROGRAMS = {
    "matmul": Kernel("tests/programs/kernels/matmul.mlir", "matmul", ("256x256xf32", "256x256xf32")),
    "matmul384": Kernel(_MATMUL.replace("256", "384"), "matmul", ("384x384xf32", "384x384xf32")),
    "matmul512": Kernel(_MATMUL.replace("256", "512"), "matmul", ("512x512xf32", "512x512xf32")),
    "add1m": Kernel("tests/programs/add1m.mlir", "add", ("1048576xf32", "1048576xf32")),
    "add4m": Kernel((_PROGRAMS / "add1m.mlir").read_text().replace("1048576", "4194304"), "add",
                    ("4194304xf32", "4194304xf32")),
    "add16m": Kernel((_PROGRAMS / "add1m.mlir").read_text().replace("1048576", "16777216"), "add",
                     ("16777216xf32", "16777216xf32")),
    "conv": Kernel("tests/programs/kernels/conv2d.mlir", "conv2d", ("1x64x64x16xf32", "3x3x16x16xf32")),
    "conv128": Kernel(_CONV.replace("64x64", "128x128").replace("62x62", "126x126"), "conv2d",
                      ("1x128x128x16xf32", "3x3x16x16xf32")),
    "conv256": Kernel(_CONV.replace("64x64", "256x256").replace("62x62", "254x254"), "conv2d",
                      ("1x256x256x16xf32", "3x3x16x16xf32")),
    "chain": Kernel("tests/programs/kernels/elementwise.mlir", "chain", ("262144xf32", "262144xf32")),
    "add16": Kernel("tests/programs/add16.mlir", "add", ("16xf32", "16xf32")),  # a whole run's fixed cost
}
PEER_ISAS = ("aarch64", "armv7", "riscv64")


def program_spec(spec: str) -> tuple[str, Kernel, tuple[str, ...]]:
    """`name` or `name:v1,v2` -> (label, kernel, the --input values)."""
    name, _, values = spec.partition(":")
    if name not in PROGRAMS:
        raise SystemExit(f"unknown program {name!r}; there are {', '.join(PROGRAMS)}")
    kernel = PROGRAMS[name]
    splats = values.split(",") if values else ["1", "2"]
    if len(splats) != len(kernel.shapes):
        raise SystemExit(f"{spec}: {len(kernel.shapes)} input values wanted")
    return spec, kernel, tuple(f"{shape}={v}" for shape, v in zip(kernel.shapes, splats))


def compiled(kernel: Kernel, isa: str, work: Path) -> Path:
    """The default execution model's module of `kernel` with `isa`'s kernels (the shared cache)."""
    src = ROOT / kernel.source if kernel.source.endswith(".mlir") else None
    if src is None:  # generated text: a file of its own, named by the function (the cache keys the text)
        src = work / f"{kernel.function}_gen.mlir"
        src.write_text(kernel.source)
    return iree_tools.compile_mlir(src, model="llvm-cpu", extra_flags=TRIPLES[isa])


def timed_process(argv: list[str], out_path: Path) -> tuple[float, float, bytes, int]:
    """(wall s, user + sys CPU s of the process and the children it waited for, stdout, exit
    status: negative for a signal)."""
    with open(out_path, "wb") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    return wall, usage.ru_utime + usage.ru_stime, out_path.read_bytes(), os.waitstatus_to_exitcode(status)


def oracle_peers(folder: Path) -> dict[str, list[str]]:
    """ISA -> the command line of the `fixed` build in an oracle folder's README.txt (lines
    `ISA  fixed  [qemu-... -L SYSROOT] .../iree-run-module`)."""
    found = {}
    for line in (folder / "README.txt").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "fixed":
            found[parts[0]] = parts[2:]
    return found


def peers(isas: list[str], specs: list[str], runs: int, given: dict[str, list[str]]) -> None:
    print(compile_bytecode())
    ireeabi = console_script("ireeabi")
    before, loaded_before = load_line()
    rows = []
    fixed: dict[str, tuple[float, float]] = {}  # ISA -> add16's CPU medians (ireeabi, the peer)
    with tempfile.TemporaryDirectory(prefix="ireeabi-foreign-") as tmp:
        work = Path(tmp)
        for isa in isas:
            peer = given.get(isa)
            if peer is None and isa == "aarch64":
                peer = iree_tools.aarch64_iree_run_module()
            if peer is None:
                print(f"{isa}: no peer (give --peer {isa}='qemu-... iree-run-module')")
                continue
            print(f"{isa} peer: {shlex.join(peer)}")
            for spec in specs:
                label, kernel, inputs = program_spec(spec)
                vmfb = compiled(kernel, isa, work)
                flags = [f"--module={vmfb}", "--device=local-sync", f"--function={kernel.function}",
                         *(f"--input={v}" for v in inputs)]
                ours, theirs = [ireeabi, "run", "--target", isa, *flags], [*peer, *flags]
                a_code, b_code = timed_process(ours, work / "a")[3], timed_process(theirs, work / "b")[3]  # warm-up
                if a_code or b_code:  # a module the peer cannot run either (armv7's exp/pow kernels)
                    print(f"  {label:<16} not timed: ireeabi exit status {a_code}, the peer's {b_code}")
                    rows.append((isa, label, None, None, None, a_code, b_code))
                    continue
                a_wall, a_cpu, b_wall, b_cpu, ratios = [], [], [], [], []
                for _ in range(runs):
                    wall, cpu, a_out, _ = timed_process(ours, work / "a")
                    a_wall.append(wall), a_cpu.append(cpu)
                    wall, cpu, b_out, _ = timed_process(theirs, work / "b")
                    b_wall.append(wall), b_cpu.append(cpu)
                    ratios.append(a_cpu[-1] / b_cpu[-1])
                    if a_out != b_out:
                        raise SystemExit(f"{isa} {label}: the outputs differ\n{a_out[:600]!r}\n{b_out[:600]!r}")
                med = statistics.median
                rows.append((isa, label, med(a_cpu), med(b_cpu), med(ratios), med(a_wall), med(b_wall)))
                if label == "add16":
                    fixed[isa] = (med(a_cpu), med(b_cpu))
                print(f"  {label:<16} ireeabi {med(a_cpu):6.2f} s CPU ({med(a_wall):6.2f} s wall)  "
                      f"peer {med(b_cpu):6.2f} s CPU ({med(b_wall):6.2f} s wall)  "
                      f"CPU ratio {med(ratios):5.2f}x (pairs {', '.join(f'{r:.2f}' for r in ratios)}); "
                      "outputs identical", flush=True)
    after, loaded_after = load_line()
    print(f"\n{runs} pairs per row, medians; {before} before, {after} after"
          + ("; MEASURED ON A LOADED MACHINE: wall times are inflated, CPU times steadier"
             if loaded_before or loaded_after else ""))
    print("| ISA | program | ireeabi CPU s | peer CPU s | CPU ratio | ireeabi wall s | peer wall s "
          "| beyond add16: ireeabi, peer, ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for isa, label, a, b, r, aw, bw in rows:
        if a is None:
            print(f"| {isa} | {label} | exit status {aw} | exit status {bw} | - | - | - | - |")
            continue
        beyond = "-"
        if isa in fixed and label != "add16":  # the program's own part: its CPU less a whole run's fixed cost
            ka, kb = a - fixed[isa][0], b - fixed[isa][1]
            beyond = f"{ka:.2f}, {kb:.2f}, " + (f"{ka / kb:.2f}x" if kb > 0 else "-")
        print(f"| {isa} | {label} | {a:.2f} | {b:.2f} | {r:.2f}x | {aw:.2f} | {bw:.2f} | {beyond} |")


# One whole run in a child, its CPU (process_time) read between the phases of `ireeabi run`.
_PHASES = """
import os, sys, time
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the process entry sets it (cli/__main__.py)
marks = [("interpreter", time.process_time())]
import numpy as np
marks.append(("numpy", time.process_time()))
import ireeabi.cli.cmd_run
marks.append(("the command's imports", time.process_time()))
import unicorn
marks.append(("unicorn", time.process_time()))
from ireeabi.tooling.program import Program, RunOptions
from ireeabi.hal.local import emulated_executable
kernels_load = [0.0]
def timed_load(*args, _load=emulated_executable.load, **kwargs):  # the kernels' load into the emulated CPU
    t = time.process_time()
    try:
        return _load(*args, **kwargs)
    finally:
        kernels_load[0] += time.process_time() - t
emulated_executable.load = timed_load
isa, vmfb, fn, shape = sys.argv[1:5]
with Program(vmfb, RunOptions(target=isa)) as p:
    marks.append(("Program (module load, native modules; the kernels' load apart)", time.process_time() - kernels_load[0]))
    marks.append(("the kernels' load (emulated_executable.load)", time.process_time()))
    p.call(fn, *(np.ones(tuple(int(d) for d in shape.split("x")), np.float32) for _ in range(2)))
    marks.append(("the call", time.process_time()))
print(repr([(name, t - (marks[i - 1][1] if i else 0.0)) for i, (name, t) in enumerate(marks)]))
"""


def phases(isas: list[str], runs: int) -> None:
    """Where a whole run's fixed cost goes: add16 in `runs` child processes per ISA, the medians of
    the CPU seconds of each phase (the interpreter's start-up, the imports, the program's load, the
    call)."""
    import ast

    print(compile_bytecode())
    with tempfile.TemporaryDirectory(prefix="ireeabi-foreign-") as tmp:
        for isa in isas:
            kernel = PROGRAMS["add16"]
            vmfb = compiled(kernel, isa, Path(tmp))
            seen: dict[str, list[float]] = {}
            for _ in range(runs):
                out = subprocess.run([sys.executable, "-c", _PHASES, isa, str(vmfb), kernel.function, "16"],
                                     check=True, capture_output=True, text=True).stdout
                for name, cpu in ast.literal_eval(out.strip().splitlines()[-1]):
                    seen.setdefault(name, []).append(cpu)
            total = sum(statistics.median(v) for v in seen.values())
            print(f"{isa} add16, medians of {runs} processes, CPU s: " + "; ".join(
                f"{name} {statistics.median(v):.3f}" for name, v in seen.items()) + f"; sum {total:.3f}")


def breakdown(isas: list[str], specs: list[str], reference: bool) -> None:
    """Where an emulated program's time goes, in this process (see the module docstring)."""
    import unicorn

    counts = {"emu_start": 0, "flush": 0, "protect": 0}
    times = {"emu_start": 0.0, "protect": 0.0}

    def counted(name, fn, timed_too):
        def wrapper(self, *a, **k):
            counts[name] += 1
            t0 = time.process_time()
            try:
                return fn(self, *a, **k)
            finally:
                if timed_too:
                    times[name] += time.process_time() - t0
        return wrapper
    unicorn.Uc.emu_start = counted("emu_start", unicorn.Uc.emu_start, True)
    unicorn.Uc.ctl_flush_tb = counted("flush", unicorn.Uc.ctl_flush_tb, False)
    unicorn.Uc.mem_protect = counted("protect", unicorn.Uc.mem_protect, True)
    import numpy as np
    with tempfile.TemporaryDirectory(prefix="ireeabi-foreign-") as tmp:
        for isa in isas:
            for spec in specs:
                label, kernel, inputs = program_spec(spec)
                vmfb = compiled(kernel, isa, Path(tmp))
                args = []
                for value in inputs:
                    shape, _, v = value.partition("=")
                    dims = [int(d) for d in shape[:-len("xf32")].split("x")]
                    args.append(np.full(dims, float(v), dtype=np.float32))
                for k in counts:
                    counts[k] = 0
                for k in times:
                    times[k] = 0.0
                t0 = time.process_time()
                with Program(vmfb, RunOptions(target=isa, reference=reference)) as p:
                    t1 = time.process_time()
                    load = dict(counts), dict(times)
                    for k in times:
                        times[k] = 0.0
                    for k in counts:
                        counts[k] = 0
                    p.call(kernel.function, *args)
                    t2 = time.process_time()
                    cpu = p.runtime.runners.elf.cpu()
                    regions, hooks = len(cpu.regions()), len(cpu.uc._callbacks)
                    code = getattr(cpu, "_code_pages", None)
                    fills = "the MMU's TLB" if code is None else f"{code.fills} TLB fills"
                print(f"{isa} {label}: load {t1 - t0:.3f} s CPU (emulated {load[1]['emu_start']:.3f} s in "
                      f"{load[0]['emu_start']} emu_starts; {load[0]['protect']} protections "
                      f"{load[1]['protect'] * 1e3:.1f} ms); call {t2 - t1:.3f} s CPU, of which emulated "
                      f"{times['emu_start']:.3f} s in {counts['emu_start']} emu_starts, protections "
                      f"{counts['protect']} ({times['protect'] * 1e3:.1f} ms), translated-code flushes "
                      f"{counts['flush']}; {regions} regions, {hooks} hooks, {fills}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--only", default=",".join(TRIPLES))
    ap.add_argument("--processes", type=int, default=0)
    ap.add_argument("--pair", action="store_true", help=argparse.SUPPRESS)  # one process of --processes
    ap.add_argument("--peers", action="store_true", help="whole processes against IREE under qemu-user")
    ap.add_argument("--breakdown", action="store_true", help="where an emulated program's time goes")
    ap.add_argument("--phases", action="store_true", help="where a whole run's fixed cost goes (add16)")
    ap.add_argument("--reference", action="store_true",
                    help="--breakdown on the reference path (the emulated CPU's too: the MMU's TLB, "
                         "floats soft until the first inexact one)")
    ap.add_argument("--isas", default=",".join(PEER_ISAS))
    ap.add_argument("--programs", default="matmul,add1m,conv", help=f"of {', '.join(PROGRAMS)} (name:v1,v2)")
    ap.add_argument("--runs", type=int, default=3, help="pairs per program and ISA (--peers)")
    ap.add_argument("--peer", action="append", default=[], metavar="ISA=ARGV",
                    help="the peer's command line for ISA (qemu and IREE's iree-run-module for it)")
    ap.add_argument("--oracles", metavar="DIR", default=None,
                    help="IREE's runtime built from source per ISA (tests/iree_oracle.py's folder): "
                         "its README.txt's `fixed` command lines are the peers")
    args = ap.parse_args()
    isas = [a for a in args.isas.split(",") if a]
    specs = [p for p in args.programs.split(",") if p] if ":" not in args.programs else \
        [p for p in args.programs.split(";") if p]
    if args.peers:
        # aarch64's peer stays the 3.13 wheel's runtime (issue 43) unless --peer names another.
        given = {isa: argv for isa, argv in oracle_peers(Path(args.oracles)).items() if isa != "aarch64"} \
            if args.oracles else {}
        for item in args.peer:
            isa, _, argv = item.partition("=")
            given[isa] = shlex.split(argv)
        return peers(isas, specs, args.runs, given)
    if args.phases:
        return phases(isas, args.runs)
    if args.breakdown:
        return breakdown(isas, specs, args.reference)
    if args.processes:
        return processes(args.processes, args.rounds)
    if args.pair:
        host16 = iree_tools.compile_mlir(ROOT / "tests" / "programs" / "add16.mlir")
        print(dispatch_us(host16, "x86_64", args.rounds), dispatch_us(host16, "x86_64", args.rounds, emulate_kernels=True))
        return
    only = [a for a in args.only.split(",") if a]
    add16, add1m = ROOT / "tests" / "programs" / "add16.mlir", ROOT / "tests" / "programs" / "add1m.mlir"
    host16 = iree_tools.compile_mlir(add16)
    native = dispatch_us(host16, "x86_64", args.rounds)
    emulated = dispatch_us(host16, "x86_64", args.rounds, emulate_kernels=True)
    print(f"add16 dispatch (one issue: 1 workgroup), median of {args.rounds}")
    print(f"  x86_64 native      {native:8.1f} us")
    print(f"  x86_64 emulated    {emulated:8.1f} us   {emulated / native:5.1f}x native (target <= 5x)")
    for arch in only:
        path = iree_tools.compile_mlir(add16, extra_flags=TRIPLES[arch])
        print(f"  {arch:<8} {'wasmtime' if arch == 'wasm32' else 'emulated':<9} "
              f"{dispatch_us(path, arch, args.rounds):8.1f} us")
    rounds = max(3, args.rounds // 40)
    print(f"add1m whole call (2 x 1M f32, 256 workgroups), median of {rounds}")
    print(f"  x86_64 native      {call_ms(iree_tools.compile_mlir(add1m), 'x86_64', rounds):8.2f} ms")
    print(f"  x86_64 emulated    {call_ms(iree_tools.compile_mlir(add1m), 'x86_64', rounds, emulate_kernels=True):8.2f} ms")
    for arch in only:
        path = iree_tools.compile_mlir(add1m, extra_flags=TRIPLES[arch])
        print(f"  {arch:<18} {call_ms(path, arch, rounds):8.2f} ms")


if __name__ == "__main__":
    main()
