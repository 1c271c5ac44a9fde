"""A deterministic mutation campaign over real modules: no traceback, no death by signal, no hang.

    cd tests && python -m support.mutation_campaign [--mutants N] [--seed S] [--cpu-limit SECONDS] \
        [--backstop SECONDS] [--verbose]

(a module of the tests' `support` package: run from tests/, whose folder `-m` puts on the path)

Real modules compiled by iree-compile for both inline models (and inline-dynamic builds for riscv32,
aarch64 and wasm32, run with `--target` of their architecture in the emulated CPU or under
wasmtime) are mutated in four regions: the FlatBuffer (the archive header, tables and vectors), the
function bytecode, the embedded ELF of inline-dynamic kernels, and the wasm32 side module.
Mutations are bit flips, bytes and 32-bit words set to edge values (0, 0xFF, 0x7FFFFFFF,
0x80000000, 0xFFFFFFFE, ...), splices of another range of the module, and truncations, drawn from a
seeded generator. Each mutant is given, in a process of its own (forked from one that has ireeabi
imported, so a crash kills only that mutant), to `ireeabi inspect` and to `ireeabi run` with the
function's real inputs. What counts:

- a traceback: any exception but ireeabi's own leaving the command line;
- a death by signal (SIGSEGV, SIGABRT, ...) of the mutant's process;
- a hang: the mutant's process has used more than `cpu_limit` seconds of CPU, where
  iree-run-module, given the same mutant, stays under the same CPU limit (a mutant that makes
  iree-run-module spin too is not ireeabi's hang);
- a backstop: the process (or iree-run-module, consulted as above) had not ended after `backstop`
  seconds of wall-clock time, without reaching the CPU limit: blocked rather than computing.

Why the verdicts do not depend on the machine's load. Every `run` has an instruction budget,
`--max-steps` (HOST_BUDGET VM instructions for host modules, FOREIGN_BUDGET for the foreign builds,
where it also bounds each emulated or wasm kernel call in target instructions): a mutant that loops
in the VM or in an emulated kernel exhausts it and ends with a status (DEADLINE_EXCEEDED), which is
an answer, not a hang. What the budget cannot bound (the loader, a host kernel running natively,
ireeabi's own Python) is judged by the CPU time the process used (/proc/PID/stat, its threads and
reaped children included), not by the wall clock: a machine with ten other jobs runs a mutant
slower, not longer in CPU. The largest budget needs about 10 s of CPU here; the default CPU limit
(60 s) leaves room for a machine several times slower. iree-run-module's hang verdict, the oracle
for host modules, is the same CPU limit, summed over its session (the tool on PATH may be a
wrapper that starts the real binary). The wall clock only backs this up: BACKSTOP (ten times the
CPU limit) ends a process that is blocked and never uses the CPU, and such a mutant is reported as
"backstop", apart from the hangs.

`campaign()` returns the counts and the offending mutants (enough to reproduce each).
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import hashlib
import io
import os
import pickle
import random
import re
import resource
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import iree_tools as tools

TESTS = Path(__file__).resolve().parents[1]

# (program, function, inputs) compiled for both inline models.
PROGRAMS = [
    (TESTS / "programs" / "add16.mlir", "add", ["16xf32=1", "16xf32=2"]),
    (TESTS / "programs" / "e2e" / "push_constants.mlir", "affine", ["5xf32=1,2,3,4,5", "2.5", "-1"]),
    (TESTS / "programs" / "e2e" / "counter.mlir", "next", ["5"]),
    (TESTS / "programs" / "e2e" / "multi_dispatch.mlir", "normalize", ["16xf32=1", "16xf32=2"]),
]
MODELS = ("inline-static", "inline-dynamic")
# Foreign builds of the first two programs (inline-dynamic): the target, iree-compile's flags for it.
FOREIGN = [
    ("riscv32", ("--iree-llvmcpu-target-triple=riscv32-pc-linux-elf", "--iree-llvmcpu-target-cpu-features=+m,+f,+d")),
    ("aarch64", ("--iree-llvmcpu-target-triple=aarch64-pc-linux-elf",)),
    ("wasm32", ("--iree-llvmcpu-target-triple=wasm32-unknown-unknown",)),
]
# A mutant may loop: the budget (VM steps, and target instructions per emulated kernel call) ends it
# as a status. Host modules need a few hundred VM steps; 2M take about a second of CPU. The foreign
# kernels run in the emulated CPU or wasm under the budget too (20M: a few seconds of CPU).
# iree-run-module cannot run the foreign modules on this host, so it is no hang oracle for them.
HOST_BUDGET = 2_000_000
FOREIGN_BUDGET = 20_000_000
CPU_LIMIT = 60.0  # seconds of CPU past which a process is a hang (budgets need at most ~10 s)
BACKSTOP_FACTOR = 10  # the wall-clock backstop: this many times the CPU limit
EDGE_WORDS = (0, 1, 0xFF, 0x7F, 0x80, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF, 0x10000, 64)
OUTCOMES = ("ok", "refused", "traceback", "signal", "hang", "backstop", "memory")
FAILURES = ("traceback", "signal", "hang", "backstop", "memory")


@dataclass
class Module:
    name: str
    data: bytes
    function: str
    inputs: list[str]
    regions: dict[str, tuple[int, int]]  # region name -> [start, end) in the file
    target: str = ""  # a foreign build's data model (run with --target and the budget)

    @property
    def digest(self) -> str:
        """The module's content hash: the same on every machine and in every folder (the modules
        are compiled from file names, not paths), so a mutant's report names what it mutated."""
        return hashlib.sha256(self.data).hexdigest()[:16]


@dataclass
class Mutant:
    module: str
    region: str
    kind: str
    edits: list[tuple[int, bytes]]  # (offset, bytes written there)
    cut: int | None = None  # truncated to this length
    index: int = 0  # its place in the seed's sequence
    seed: int = 0
    digest: str = ""  # the content hash of the module it mutates

    def apply(self, data: bytes) -> bytes:
        out = bytearray(data)
        for off, b in self.edits:
            out[off:off + len(b)] = b
        return bytes(out[:self.cut] if self.cut is not None else out)

    def describe(self) -> str:
        edits = ", ".join(f"@{off}={b.hex()}" for off, b in self.edits)
        return (f"mutant {self.index} of seed {self.seed}: {self.module} (sha256 {self.digest}...) "
                f"{self.region} {self.kind} [{edits}]" + (f" cut={self.cut}" if self.cut else "")
                + f"; rebuild it (in tests/): python -m support.mutation_campaign --seed {self.seed} "
                  f"--mutants {self.index + 1} --write-mutant {self.index} -o mutant.vmfb")


@dataclass
class Result:
    counts: dict[str, int] = field(default_factory=lambda: {k: 0 for k in OUTCOMES})
    bad: list[tuple[str, str, str]] = field(default_factory=list)  # (outcome, mutant, detail)
    iree_hangs: int = 0  # ireeabi passed the CPU limit, and so did iree-run-module: not counted
    forks: dict[str, float] = field(default_factory=dict)  # see `ForkMeter`

    @property
    def failures(self) -> int:
        return sum(self.counts[k] for k in FAILURES)

    def summary(self) -> str:
        n = sum(self.counts.values())
        return (f"{n} mutants: " + ", ".join(f"{self.counts[k]} {k}" for k in OUTCOMES)
                + f" ({self.iree_hangs} past the CPU limit in iree-run-module too, not counted)"
                + describe_forks(self.forks, n))


def modules(out_dir: "Path | None" = None) -> list[Module]:
    """The campaign's modules: each program in both inline models, and the foreign builds, with
    their regions located."""
    from ireeabi.vm.bytecode.module_file import read_module
    out = []
    builds = [(src, function, inputs, model, "", ()) for src, function, inputs in PROGRAMS
              for model in MODELS]
    builds += [(src, function, inputs, "inline-dynamic", target, flags)
               for src, function, inputs in PROGRAMS[:2] for target, flags in FOREIGN]
    for src, function, inputs, model, target, flags in builds:
        path = tools.compile_mlir(src, out_dir, model,
                                  extra_flags=("--iree-input-demote-f64-to-f32=false", *flags))
        data = path.read_bytes()
        m = read_module(data)
        end = m.rodata_segments and min(s.offset for s in m.rodata_segments) or len(data)
        code = [(f.file_offset, f.file_offset + f.bytecode_length) for f in m.function_descriptors
                if f.bytecode_length]
        regions = {"flatbuffer": (0, min([end] + [c[0] for c in code]))}
        if code:
            regions["bytecode"] = (min(c[0] for c in code), max(c[1] for c in code))
        for s in m.rodata_segments:
            if data[s.offset:s.offset + 4] == b"\x7fELF":
                regions["elf"] = (s.offset, s.offset + s.length)
            if data[s.offset:s.offset + 4] == b"\0asm":
                regions["wasm"] = (s.offset, s.offset + s.length)
        name = f"{src.stem}.{model}" + (f".{target}" if target else "")
        out.append(Module(name, data, function, inputs, regions, target))
    return out


def mutants(mods: list[Module], count: int, seed: int) -> list[Mutant]:
    """`count` mutants, spread over the modules and their regions (the ELF ones get a third)."""
    rng = random.Random(seed)
    out = []
    slots = [(m, r) for m in mods for r in m.regions]
    elf_slots = [s for s in slots if s[1] in ("elf", "wasm")]
    for i in range(count):
        m, region = rng.choice(elf_slots) if elf_slots and i % 3 == 0 else rng.choice(slots)
        lo, hi = m.regions[region]
        if hi - lo < 8:
            lo, hi = 0, len(m.data)
        kind = rng.choice(("flip", "byte", "word", "word", "splice", "truncate"))
        pos = rng.randrange(lo, hi - 4)
        if kind == "flip":
            edits = [(pos, bytes([m.data[pos] ^ (1 << rng.randrange(8))]))]
        elif kind == "byte":
            edits = [(pos, bytes([rng.choice((0, 0xFF, 0x7F, 0x80, rng.randrange(256)))]))]
        elif kind == "word":
            pos -= pos % 4
            edits = [(pos, rng.choice(EDGE_WORDS).to_bytes(4, "little"))]
        elif kind == "splice":
            n = rng.randrange(2, 33)
            src = rng.randrange(0, len(m.data) - n)
            edits = [(pos, m.data[src:src + n][:len(m.data) - pos])]
        else:
            out.append(Mutant(m.name, region, kind, [], rng.randrange(lo, hi), i, seed, m.digest))
            continue
        out.append(Mutant(m.name, region, kind, edits, None, i, seed, m.digest))
    return out


def _child(data: bytes, function: str, inputs: list[str], path: str, target: str = "") -> int:
    """In the forked process: `ireeabi inspect` and `ireeabi run` on the mutant. Exit 0 if both
    succeeded, 4 if either refused the mutant with an ireeabi error, 3 (with the traceback on fd 2)
    for anything else."""
    from ireeabi.cli.main import main
    # a new file, not the last mutant's rewritten: ext4 flushes a file truncated and rewritten at
    # its close (auto_da_alloc), ~3 ms of waiting a mutant
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    Path(path).write_bytes(data)
    sink = io.StringIO()
    try:
        with contextlib.redirect_stderr(sink):
            where = ["--target", target] if target else []
            budget = ["--max-steps", str(FOREIGN_BUDGET if target else HOST_BUDGET)]
            inspected = main(["inspect", path, "--check-imports", *where], stdout=sink, stderr=sink)
            ran = main(["run", path, "--function", function, *(f"--input={i}" for i in inputs), *where,
                        *budget], stdout=sink, stderr=sink)
    except BaseException:  # noqa: BLE001 - what the campaign counts
        import traceback
        os.write(2, traceback.format_exc().encode()[-4000:])
        return 3
    return 0 if inspected == 0 and ran == 0 else 4


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) process `pid` has used, its threads and reaped children included
    (/proc/PID/stat); 0.0 once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def session_cpu_seconds(sid: int) -> float:
    """CPU time of every process of session `sid` (a wrapper and the program it started)."""
    total = 0.0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid:
            total += sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    return total


def watch(pid: int, cpu_limit: float, backstop: float, cpu=cpu_seconds) -> "tuple[str, int]":
    """Wait for child `pid`: ("done", wait status), or kill it (its process group when it leads
    one) and return ("hang", 0) once it has used more than `cpu_limit` seconds of CPU, or
    ("backstop", 0) once `backstop` seconds of wall-clock time passed below that limit. The poll
    interval only sets how soon a verdict is seen, never which."""
    deadline = time.monotonic() + backstop
    exited = select.poll()
    pidfd = os.pidfd_open(pid)  # readable once the child has exited: no sleeping past its end
    exited.register(pidfd, select.POLLIN)
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return "done", status
            verdict = ("hang" if cpu(pid) > cpu_limit else
                       "backstop" if time.monotonic() > deadline else None)
            if verdict:
                try:
                    os.killpg(pid, signal.SIGKILL) if os.getpgid(pid) == pid else os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                os.waitpid(pid, 0)
                return verdict, 0
            exited.poll(50)  # ms: how often the CPU time is looked at while the child runs
    finally:
        os.close(pidfd)


def _run_one(mod: Module, mutant: Mutant, cpu_limit: float, backstop: float,
             workdir: str) -> tuple[str, str]:
    data = mutant.apply(mod.data)
    path = os.path.join(workdir, "mutant.vmfb")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the mutant's own process
        os.close(r)
        os.dup2(w, 2)
        code = 1
        try:
            code = _child(data, mod.function, mod.inputs, path, mod.target)
        finally:
            os._exit(code)
    os.close(w)
    verdict, status = watch(pid, cpu_limit, backstop)
    if verdict != "done":
        os.close(r)
        return verdict, f"{verdict}: CPU limit {cpu_limit} s, backstop {backstop} s"
    with os.fdopen(r, "rb") as f:
        detail = f.read().decode("utf-8", "replace")
    if os.WIFSIGNALED(status):
        return "signal", f"signal {os.WTERMSIG(status)}: {detail[-2000:]}"
    code = os.WEXITSTATUS(status)
    if code == 0:
        return "ok", ""
    if code == 4:
        return "refused", ""
    if code == 3:
        return "traceback", detail
    return "traceback", f"exit {code}: {detail}"


def _iree_verdict(mod: Module, mutant: Mutant, cpu_limit: float, backstop: float,
                  workdir: str) -> str:
    """iree-run-module on the mutant: "done", "hang" (past the CPU limit) or "backstop"."""
    path = os.path.join(workdir, "iree.vmfb")
    Path(path).write_bytes(mutant.apply(mod.data))
    argv = [tools.find_tool("iree-run-module"), tools.RUN_DEVICE, f"--module={path}",
            f"--function={mod.function}", *(f"--input={i}" for i in mod.inputs)]
    # A session of its own: the tool on PATH may be a wrapper that starts the real binary; its CPU
    # is the session's, and a verdict kills both.
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    verdict, status = watch(proc.pid, cpu_limit, backstop, cpu=session_cpu_seconds)
    proc.returncode = 0  # reaped by watch
    return verdict


def campaign_in_fresh_process(count: int, seed: int, mods: "list[Module] | None" = None) -> Result:
    """`campaign(count, seed)` run by a fresh interpreter (this module, run from tests/), which forks the
    mutants' processes: a process with other threads (a pytest-xdist worker has execnet's) must not
    be the one that forks them, as a forked child keeps only the forking thread (wasm32 mutants
    died by signals forked from an xdist worker). The modules (`modules()` here by default) are
    handed to it pickled: finding them imports iree.compiler, whose libIREECompiler.so would add
    60 MB to the resident set every fork copies the page tables of and every child's exit unmaps."""
    import json
    mods = mods if mods is not None else modules()
    with tempfile.TemporaryDirectory(prefix="ireeabi-campaign-") as tmp:
        given, out = os.path.join(tmp, "modules.pickle"), os.path.join(tmp, "result.json")
        with open(given, "wb") as f:
            pickle.dump(mods, f)
        proc = subprocess.run([sys.executable, "-m", "support.mutation_campaign", "--mutants", str(count),
                               "--seed", str(seed), "--modules-only", "--modules-from", given,
                               "--json-out", out], capture_output=True, text=True, cwd=TESTS)
        if not os.path.exists(out):
            raise RuntimeError(f"the campaign process ended with {proc.returncode}: {proc.stderr[-3000:]}")
        with open(out) as f:
            data = json.load(f)
    return Result(data["counts"], [tuple(b) for b in data["bad"]], data["iree_hangs"], data["forks"])


def freeze_heap() -> None:
    """Before the forks: collect, then move every object into the collector's permanent generation
    (`gc.freeze`, Python's documented remedy). A child's collection of the oldest generation would
    otherwise walk, and write to, every object it inherited (after the warm-up: ~6,000 pages
    copied, ~60 ms of CPU; RESULTS.md, session 51); frozen, it walks only what the child made. The child's memory is the same: a collection frees
    nothing of what the parent holds."""
    gc.collect()
    gc.freeze()


class ForkMeter:
    """What the forks between the meter's making and `stop` cost: the CPU time and minor page faults
    of the children reaped meanwhile (the kernel's counts, their own reaped children included), how
    many objects were frozen (`freeze_heap`) when they were forked, and whether the forking
    process had loaded the compiler (see campaign_in_fresh_process)."""

    def __init__(self) -> None:
        self.start_usage = resource.getrusage(resource.RUSAGE_CHILDREN)

    def stop(self) -> "dict[str, float]":
        now = resource.getrusage(resource.RUSAGE_CHILDREN)
        return {"cpu": (now.ru_utime - self.start_usage.ru_utime) + (now.ru_stime - self.start_usage.ru_stime),
                "faults": now.ru_minflt - self.start_usage.ru_minflt, "frozen": gc.get_freeze_count(),
                "compiler": "iree.compiler" in sys.modules}


def describe_forks(forks: "dict[str, float]", n: int) -> str:
    """The fork costs of `ForkMeter.stop` per case, as the summaries print them ("" without)."""
    if not forks or not n:
        return ""
    return (f"; children {1000 * forks['cpu'] / n:.1f} ms of CPU and {forks['faults'] / n:.0f} minor "
            f"faults a case, forked with {forks['frozen']} objects frozen")


def _warm_up(mods: list[Module], workdir: str) -> None:
    """Import, before forking, everything a mutant's commands import: the command line's modules
    are imported lazily, and a child importing them anew costs ~7x the mutant's own work. The
    unmutated host modules are inspected and run once here; the foreign ones only inspected, and the
    CPU emulator's and wasm runtime's modules imported, since running them would leave threads in
    this process, which a forked child does not keep."""
    from ireeabi.cli.main import main
    from ireeabi.hal.local import emulated_executable, wasm_executable  # noqa: F401
    from ireeabi.hal.local.native import native
    native()  # builds the C helper once
    sink = io.StringIO()
    path = os.path.join(workdir, "original.vmfb")
    for mod in mods:
        Path(path).write_bytes(mod.data)
        where = ["--target", mod.target] if mod.target else []
        main(["inspect", path, "--check-imports", *where], stdout=sink, stderr=sink)
        if not mod.target:
            main(["run", path, "--function", mod.function, *(f"--input={i}" for i in mod.inputs)],
                 stdout=sink, stderr=sink)


def campaign(count: int = 2000, seed: int = 0, cpu_limit: float = CPU_LIMIT,
             backstop: "float | None" = None, mods: "list[Module] | None" = None,
             verbose: bool = False) -> Result:
    """Run `count` mutants of seed `seed`; `backstop` defaults to BACKSTOP_FACTOR * `cpu_limit`."""
    backstop = BACKSTOP_FACTOR * cpu_limit if backstop is None else backstop
    mods = mods if mods is not None else modules()
    by_name = {m.name: m for m in mods}
    result = Result()
    with tempfile.TemporaryDirectory(prefix="ireeabi-mutants-") as workdir:
        _warm_up(mods, workdir)
        freeze_heap()
        meter = ForkMeter()
        for mutant in mutants(mods, count, seed):
            mod = by_name[mutant.module]
            outcome, detail = _run_one(mod, mutant, cpu_limit, backstop, workdir)
            if outcome == "hang" and not mod.target:
                iree = _iree_verdict(mod, mutant, cpu_limit, backstop, workdir)
                if iree == "hang":
                    result.iree_hangs += 1
                    outcome = "refused"
                elif iree == "backstop":
                    outcome, detail = "backstop", f"iree-run-module hit the backstop; {detail}"
            result.counts[outcome] += 1
            if outcome in FAILURES:
                result.bad.append((outcome, mutant.describe(), detail))
                if verbose:
                    print(f"{outcome}: {mutant.describe()}\n{detail[-1500:]}", flush=True)
        result.forks = meter.stop()
    return result


def _answer_class(text: str) -> str:
    """What a mutant's commands answered, numbers, names and paths left out: "ok", or the first
    `ireeabi: error:` message (or status line) in their output."""
    m = re.search(r"ireeabi: error: (.*)", text) or re.search(r"^([A-Z_]+: .*)$", text, re.M)
    if not m:
        return "ok"
    msg = re.sub(r"'[^']*'|\"[^\"]*\"", "Q", m.group(1))
    msg = re.sub(r"/\S+", "PATH", msg)
    return re.sub(r"0x[0-9a-fA-F]+|-?\d+", "#", msg)[:160]


def cut_report(count: int, cuts: "list[int]", seed: int) -> dict:
    """What the seed's first N mutants reach, for each N of `cuts`, of what its first `count`
    reach: the answer classes (`_answer_class` of `inspect` and of `run`) and the branch arcs of
    ireeabi's code (coverage.py, which must be importable). The mutants run in this process one
    after another, not forked (no mutant of the seeds the campaign runs crashes or hangs; the arcs
    are those the forked commands run), each stretch between two cuts under a coverage session of
    its own."""
    import coverage
    mods = modules()
    by_name = {m.name: m for m in mods}
    from ireeabi.cli.main import main
    classes: list[tuple[str, str]] = []
    arcs: list[set] = []
    bounds = sorted(set(cuts) | {count})
    everything = mutants(mods, count, seed)
    with tempfile.TemporaryDirectory(prefix="ireeabi-cut-") as workdir:
        _warm_up(mods, workdir)
        path = os.path.join(workdir, "mutant.vmfb")
        for n, (lo, hi) in enumerate(zip([0, *bounds], bounds)):
            cov = coverage.Coverage(data_file=os.path.join(workdir, f"cov{n}"), branch=True,
                                    source_pkgs=["ireeabi"])
            cov.start()
            for mutant in everything[lo:hi]:
                mod = by_name[mutant.module]
                Path(path).write_bytes(mutant.apply(mod.data))
                where = ["--target", mod.target] if mod.target else []
                budget = ["--max-steps", str(FOREIGN_BUDGET if mod.target else HOST_BUDGET)]
                answers = []
                for argv in (["inspect", path, "--check-imports", *where],
                             ["run", path, "--function", mod.function,
                              *(f"--input={i}" for i in mod.inputs), *where, *budget]):
                    sink = io.StringIO()
                    with contextlib.redirect_stderr(sink):
                        main(argv, stdout=sink, stderr=sink)
                    answers.append(_answer_class(sink.getvalue()))
                classes.append((answers[0], answers[1]))
            cov.stop()
            data = cov.get_data()
            arcs.append({(f, a) for f in data.measured_files() for a in (data.arcs(f) or ())})
    every_class = {c for pair in classes for c in pair}
    every_arc = set().union(*arcs)
    report: dict = {"count": count, "seed": seed, "classes": len(every_class), "arcs": len(every_arc),
                    "cuts": {}}
    for k, cut in enumerate(bounds[:-1]):
        have_classes = {c for pair in classes[:cut] for c in pair}
        have_arcs = set().union(*arcs[:k + 1])
        past = every_arc - have_arcs
        report["cuts"][cut] = {
            "classes": len(have_classes), "arcs": len(have_arcs),
            "classes_missing": {c: sum(c in pair for pair in classes)
                                for c in sorted(every_class - have_classes)},
            "arcs_missing_by_file": {f: n for f, n in sorted(
                {f: sum(1 for g, _ in past if g == f) for f, _ in past}.items())}}
    return report


# --------------------------------------------------------------------------------------------------
# Whole commands in processes of their own: `layout --header`, `layout --dwarf`, `inspect
# --disassemble`. Each case is the command line's `main` in a process forked from a fresh
# interpreter (`command_campaign_in_fresh_process`; `run_command(forked=False)` runs a real `python
# -m ireeabi ...` under the peak-RSS launcher, tests/support/peak_rss.py, instead), watched as above
# (CPU limit, wall backstop), and its peak resident memory (its own, and any child's such as
# libclang's) must stay within PEAK_LIMIT.

PEAK_LIMIT = 1 << 30  # the bound: no single command above 1 GB
COMMAND_KINDS = ("header", "dwarf", "disassemble", "input", "vmtest")
HEADERS = TESTS / "fixtures" / "headers"
DWARF_SOURCE = '#include "constructs.h"\neverything_t e; struct wire w; value_t v; cacheline_t l;\n'
DWARF_NAMES = ("wire", "everything_t", "value_t", "cacheline_t", "struct everything", "nope")
# The objects whose bytes are mutated: gcc -g for several data models, DWARF 4, and compressed
# debug sections (SHF_COMPRESSED, and GNU's older .zdebug_* sections).
DWARF_BUILDS = [
    ("x86_64", "gcc", ("-g",)),
    ("i386", "gcc", ("-m32", "-g")),
    ("x86_64.dwarf4", "gcc", ("-gdwarf-4",)),
    ("x86_64.zlib", "gcc", ("-g", "-gz=zlib")),
    ("x86_64.zdebug", "gcc", ("-g", "-gz=zlib-gnu")),
    ("aarch64", "aarch64-linux-gnu-gcc", ("-g",)),
    ("armv7", "arm-linux-gnueabihf-gcc", ("-g",)),
    ("riscv64", "riscv64-linux-gnu-gcc", ("-g",)),
]
TARGET_FLAGS = ((), (), ("--all-targets",), ("--target", "i386"), ("--target", "riscv32"),
                ("--target", "aarch64"), ("--json",))


@dataclass
class CommandCase:
    """One command: `ireeabi ARGV` with FILES written to a directory of its own first ("{dir}" in
    ARGV names it)."""
    kind: str  # one of COMMAND_KINDS
    what: str  # what the case is: enough, with the seed, to reproduce it
    files: dict[str, bytes]
    argv: list[str]

    def describe(self) -> str:
        return f"{self.kind} {self.what}: ireeabi {' '.join(self.argv)}"


def _edge_array() -> list[str]:
    return ["1ULL<<32", "1ULL<<62", "1ULL<<63", "(1ULL<<61)-1", "1u<<31", "0x7fffffff", "-1",
            "0", "(unsigned long)-1", "1ULL<<30][1ULL<<27", "1<<20][1<<20][1<<20", "65536][65536"]


def _hostile_header(rng: random.Random) -> tuple[str, str, str]:
    """(shape, header text, the struct to ask for) of one seeded hostile shape."""
    shape = rng.choice(("macro", "array", "inline-nesting", "named-nesting", "members", "include",
                        "self-include", "mutated", "mutated", "combined"))
    if shape == "macro":  # a left-leaning expression 2^levels terms long (libclang recurses on it)
        levels = rng.randrange(4, 23)
        lines = ["#define X0 1"] + [f"#define X{k} X{k - 1}+X{k - 1}" for k in range(1, levels + 1)]
        return f"{shape}({levels})", "\n".join(lines) + f"\nstruct s {{ char a[X{levels}]; int b; }};\n", "s"
    if shape == "array":
        dims = rng.choice(_edge_array())
        elem = rng.choice(("char", "int", "long long", "struct { char c; double d; }"))
        return f"{shape}({elem}[{dims}])", f"struct s {{ char c; {elem} a[{dims}]; char d; }};\n", "s"
    if shape == "inline-nesting":
        depth = rng.randrange(1, 200)
        body = "int x;"
        for i in range(depth):
            body = f"struct {{ {body} }} m{i};"
        return f"{shape}({depth})", f"struct s {{ {body} }};\n", "s"
    if shape == "named-nesting":  # s<k> holds two s<k-1>: 2^depth ints
        depth = rng.randrange(1, 70)
        lines = ["struct s0 { int x; };"] + [f"struct s{k} {{ struct s{k - 1} a; struct s{k - 1} b; }};"
                                           for k in range(1, depth + 1)]
        name = rng.choice((f"s{depth}", f"s{min(depth, 12)}"))
        return f"{shape}({depth})", "\n".join(lines) + "\n", name
    if shape == "members":
        n = rng.choice((1, 10, 100, 1000, rng.randrange(1, 4000)))
        decl = rng.choice(("int m{i};", "char c{i}; int m{i};", "unsigned b{i} : 3;", "char a{i}[7];",
                           "struct {{ short x; }} p{i};"))
        body = "".join(f"  {decl.format(i=i)}\n" for i in range(n))
        return f"{shape}({n}, {decl})", f"struct s {{\n{body}}};\n", "s"
    if shape == "include":
        path = rng.choice(("/dev/zero", "/dev/null", "/proc/self/maps", "/", "/no/such/file.h"))
        return f"{shape}({path})", f'#include "{path}"\nstruct s {{ int b; }};\n', "s"
    if shape == "self-include":  # includes itself (clang stops at its include depth)
        return shape, '#include __FILE__\nstruct s { int b; };\n', "s"
    if shape == "mutated":  # a real header's bytes, damaged
        src = rng.choice(sorted(HEADERS.glob("*.h")))
        data = bytearray(src.read_bytes())
        for _ in range(rng.choice((1, 2, 8))):
            pos = rng.randrange(len(data))
            op = rng.choice(("flip", "byte", "cut", "dup"))
            if op == "flip":
                data[pos] ^= 1 << rng.randrange(8)
            elif op == "byte":
                data[pos] = rng.choice(b"{}[]()*;:#\\\"'\0\n/")
            elif op == "cut":
                del data[pos:pos + rng.randrange(1, 40)]
            else:
                n = rng.randrange(1, 60)
                data[pos:pos] = data[pos:pos + n] * rng.randrange(1, 50)
        name = rng.choice(("wire", "everything_t", "value_t", "s", ""))
        return f"mutated({src.name})", data.decode("latin-1"), name
    parts = [_hostile_header(rng) for _ in range(rng.randrange(2, 4))]
    text = "".join(f"#define s s{i}\n{p[1]}#undef s\n" for i, p in enumerate(parts))
    return "combined(" + ", ".join(p[0] for p in parts) + ")", text, rng.choice(("s0", ""))


def header_cases(count: int, seed: int) -> list[CommandCase]:
    """`count` hostile headers from a seeded generator, each laid out by `layout --header`."""
    rng = random.Random(seed)
    # the fixture headers beside each case (a mutated one includes its siblings), the case's own
    # text over its file (a mutated fixture) or in h.h
    siblings = {p.name: p.read_bytes() for p in sorted(HEADERS.glob("*.h"))}
    out = []
    for i in range(count):
        shape, text, name = _hostile_header(rng)
        file = shape[len("mutated("):-1] if shape.startswith("mutated(") else "h.h"
        flags = list(rng.choice(TARGET_FLAGS))
        argv = ["layout", *([name] if name else []), "--header", f"{{dir}}/{file}", *flags]
        out.append(CommandCase("header", f"#{i} {shape}", {**siblings, file: text.encode("latin-1")},
                               argv))
    return out


def dwarf_objects(out_dir: Path) -> dict[str, bytes]:
    """The DWARF_BUILDS objects, compiled from DWARF_SOURCE (the same bytes wherever they are
    built)."""
    import shutil
    src = out_dir / "use.c"
    src.write_text(DWARF_SOURCE)
    out = {}
    for name, cc, flags in DWARF_BUILDS:
        compiler = shutil.which(cc)
        assert compiler, f"{cc} is needed to build the campaign's DWARF objects"
        obj = out_dir / f"{name}.o"
        # the paths mapped to fixed ones: the same bytes from any directory (the seed's mutants too)
        subprocess.run([compiler, "-c", "-I", str(HEADERS), *flags, f"-ffile-prefix-map={out_dir}=/src",
                        f"-ffile-prefix-map={HEADERS}=/headers", str(src), "-o", str(obj)],
                       check=True, cwd=out_dir)
        out[name] = obj.read_bytes()
    return out


def _elf_regions(data: bytes) -> list[tuple[str, int, int]]:
    """(name, start, end) of the parts of an object the mutants hit: its debug sections (and
    their relocations), the section header table and the ELF header."""
    from elftools.elf.elffile import ELFFile
    elf = ELFFile(io.BytesIO(data))
    out = [(s.name, s["sh_offset"], s["sh_offset"] + s["sh_size"]) for s in elf.iter_sections()
           if "debug_" in s.name and s["sh_size"] >= 8]
    out.append(("section headers", elf["e_shoff"], elf["e_shoff"] + elf["e_shnum"] * elf["e_shentsize"]))
    out.append(("ELF header", 0, elf["e_ehsize"]))
    return out


def _damage(rng: random.Random, data: bytes, lo: int, hi: int) -> tuple[bytes, str]:
    """Bytes of [lo, hi) of `data` damaged: bit flips, bytes and words set to edge values, zeroed
    runs, splices of the file's own bytes, or a truncation."""
    b = bytearray(data)
    kind = rng.choice(("flip", "byte", "word", "word", "zero", "splice", "truncate"))
    for _ in range(rng.choice((1, 1, 2, 4))):
        pos = rng.randrange(lo, max(hi - 4, lo + 1))
        if kind == "flip":
            b[pos] ^= 1 << rng.randrange(8)
        elif kind == "byte":
            b[pos] = rng.choice((0, 0xFF, 0x7F, 0x80, rng.randrange(256)))
        elif kind == "word":
            b[pos:pos + 4] = rng.choice(EDGE_WORDS).to_bytes(4, "little")
        elif kind == "zero":
            n = rng.randrange(1, 32)
            b[pos:pos + n] = bytes(len(b[pos:pos + n]))
        elif kind == "splice":
            n, src = rng.randrange(2, 33), rng.randrange(0, len(data) - 33)
            b[pos:pos + n] = data[src:src + n]
        else:
            return bytes(b[:pos]), f"{kind}@{pos}"
    return bytes(b[:len(data)]), kind


def dwarf_cases(objects: dict[str, bytes], count: int, seed: int) -> list[CommandCase]:
    """`count` byte mutants of the objects, each read by `layout NAME --dwarf`."""
    rng = random.Random(seed)
    names = sorted(objects)
    regions = {n: _elf_regions(objects[n]) for n in names}
    out = []
    for i in range(count):
        name = names[i % len(names)]
        # the DIEs and their abbreviations get half the mutants; the other sections the rest
        core = [r for r in regions[name] if r[0].lstrip(".z").startswith(("debug_info", "debug_abbrev"))]
        part, lo, hi = rng.choice(core if core and rng.random() < 0.5 else regions[name])
        data, kind = _damage(rng, objects[name], lo, hi)
        flags = list(rng.choice(TARGET_FLAGS))
        argv = ["layout", rng.choice(DWARF_NAMES), "--dwarf", "{dir}/m.o", *flags]
        out.append(CommandCase("dwarf", f"#{i} {name} {part} {kind}", {"m.o": data}, argv))
    return out


def disassembly_cases(mods: list[Module], count: int, seed: int) -> list[CommandCase]:
    """`count` byte mutants of the campaign's modules (most in the bytecode), each listed by
    `inspect --disassemble`."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        m = mods[i % len(mods)]
        region = "bytecode" if "bytecode" in m.regions and rng.random() < 0.75 else "flatbuffer"
        lo, hi = m.regions[region]
        data, kind = _damage(rng, m.data, lo, hi)
        argv = ["inspect", "{dir}/m.vmfb", "--disassemble", *rng.choice(((), (), ("--json",)))]
        out.append(CommandCase("disassemble", f"#{i} {m.name} {region} {kind}", {"m.vmfb": data}, argv))
    return out


VM_CORPUS = TESTS / "programs" / "vm"
VM_TEST_FILES = ("arith_i32", "control_calls", "lists_refs", "buffers")  # loops, calls, refs, memory
VM_TEST_STEPS = "2000000"  # per call: a mutant's loop ends by it, far below the CPU limit


def vm_test_modules() -> "dict[str, bytes]":
    """The VM op corpus files `vm_test_cases` mutates, assembled by iree-as-module (cached)."""
    return {name: tools.assemble_vmasm(VM_CORPUS / f"{name}.vmasm").read_bytes() for name in VM_TEST_FILES}


def vm_test_cases(vm_modules: "dict[str, bytes]", count: int, seed: int) -> list[CommandCase]:
    """`count` byte mutants of VM test modules (most in their bytecode, where branches turn into
    loops), each run by `ireeabi test` under `--max-steps`, on the host or a 32-bit data model (issue
    41: hostile VM test modules)."""
    from ireeabi.vm.bytecode.module_file import read_module
    rng = random.Random(seed)
    names = sorted(vm_modules)
    out = []
    for i in range(count):
        name = names[i % len(names)]
        data = vm_modules[name]
        m = read_module(data)
        code = [(f.file_offset, f.file_offset + f.bytecode_length) for f in m.function_descriptors
                if f.bytecode_length]
        region = "bytecode" if rng.random() < 0.75 else "flatbuffer"
        lo, hi = ((min(c[0] for c in code), max(c[1] for c in code)) if region == "bytecode"
                  else (0, min(c[0] for c in code)))
        mutant, kind = _damage(rng, data, lo, hi)
        argv = ["test", "{dir}/m.vmfb", "--max-steps", VM_TEST_STEPS,
                *rng.choice(((), (), ("--target", "riscv32"), ("--runner", "check")))]
        out.append(CommandCase("vmtest", f"#{i} {name} {region} {kind}", {"m.vmfb": mutant}, argv))
    return out


# Hostile `--input` values: shapes past memory or the dimension type, malformed text of each part,
# numbers past every type, long and control-character text, and files that are not arrays.
_HOSTILE_INPUTS = (
    "4294967296xf32=1", "1000000000000x1000000000000xf32=1", "65536x65536x65536xi8=0",
    "9223372036854775807xf32=1", "18446744073709551616xf32=1", "0x0xf32=", "16x-1xf32=1",
    "16xf32=1,2,", "16xq32=1", "xf32", "=", "16xf32=[1 2", "16xf32=[[[[[[[[[[[[[[1]]]]]]]]]]]]]]",
    "", "16xf32=nan", "16xf32=1e999", "16xi8=300", "16xi64=99999999999999999999999", "16xf16=70000",
    "16xf32=0x7FC00001", "99999999999999999999999", "-1e999", "inf", "16xf32=\\x00", "16xf32=‮1",
    "16xf32=" + "1 " * 50000, "1" * 100000, "16xf32=" + "[" * 5000, "(" * 1000,
    "@/dev/zero", "@/dev/null", "@/", "@{dir}/missing.npy", "@{dir}/huge.npy", "@{dir}/cut.npy",
    "@{dir}/text.npy", "&16xf32=1", "16xf32=@/dev/zero",
)


def _npy(shape: str, data: bytes, descr: str = "<f4") -> bytes:
    """A .npy file's bytes with the header numpy writes for `shape` (a tuple's text) over `data`."""
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}".encode()
    header += b" " * (63 - (len(header) + 10) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + data


def input_cases(mods: list[Module], count: int, seed: int) -> list[CommandCase]:
    """`count` runs of the campaign's unmutated modules with one input (or more) hostile: a value of
    _HOSTILE_INPUTS, or a real input with bytes damaged; every hostile value at least once when
    `count` allows."""
    rng = random.Random(seed)
    files = {"huge.npy": _npy("(1099511627776, 1099511627776)", bytes(64)),
             "cut.npy": _npy("(16,)", bytes(10)), "text.npy": b"16xf32=1\n"}
    out = []
    for i in range(count):
        m = mods[i % len(mods)]
        inputs = list(m.inputs)
        if not inputs:
            inputs = [""]
        k = rng.randrange(len(inputs))
        if i < len(_HOSTILE_INPUTS) or rng.random() < 0.5:
            value = _HOSTILE_INPUTS[i % len(_HOSTILE_INPUTS)] if i < len(_HOSTILE_INPUTS) \
                else rng.choice(_HOSTILE_INPUTS)
            what = f"value#{_HOSTILE_INPUTS.index(value)}"
        else:
            raw = bytearray(inputs[k].encode())
            for _ in range(rng.choice((1, 2, 4))):
                if raw:
                    raw[rng.randrange(len(raw))] = rng.choice(b"x=[],.- 0123456789eEinfa@\\")
            value = raw.decode("latin-1")
            what = "damaged"
        inputs[k] = value
        # a heap of 512 MiB: a shape IREE would allocate (16 GiB) is refused the same on any machine
        argv = ["run", "{dir}/m.vmfb", "--function", m.function, *(f"--input={v}" for v in inputs),
                "--heap-limit", "512M"]
        if m.target:
            argv += ["--target", m.target, "--max-steps", str(FOREIGN_BUDGET)]
        else:
            argv += ["--max-steps", str(HOST_BUDGET)]
        out.append(CommandCase("input", f"#{i} {m.name} input {k} {what}", {"m.vmfb": m.data, **files}, argv))
    return out


def run_command(case: CommandCase, cpu_limit: float, backstop: float, workdir: str,
                peak_limit: int = PEAK_LIMIT, forked: bool = False) -> tuple[str, str, int]:
    """(outcome, detail, peak RSS in bytes) of one case: "ok" (exit 0), "refused" (one
    `ireeabi: error:` message, exit 1 or 2; or a header's listing with its errors, exit 2),
    "traceback" (anything else, or any traceback
    printed), "signal", "hang", "backstop", or "memory" (a peak above `peak_limit`).

    The command is `python -m ireeabi ...` under the peak-RSS launcher, or, `forked`, `main(argv)`
    in a process forked from this one (`command_in_this_process`: no interpreter start and no
    imports per case; this process must have no other thread, and its own peak, which a fork
    inherits, counts in the case's)."""
    from . import peak_rss
    import shutil
    where = os.path.join(workdir, "case")
    shutil.rmtree(where, ignore_errors=True)
    os.makedirs(where)
    for name, data in case.files.items():
        Path(where, name).write_bytes(data)
    args = [a.replace("{dir}", where) for a in case.argv]
    if forked:
        verdict, status = forked_command(args, workdir, cpu_limit, backstop)
        if verdict != "done":
            return verdict, f"{verdict}: CPU limit {cpu_limit} s, backstop {backstop} s", 0
        text = Path(workdir, "err").read_bytes().decode("utf-8", "replace")
        listing = Path(workdir, "out").read_bytes().decode("utf-8", "replace")
        peak_file = Path(workdir, "peak")
        peak = int(peak_file.read_text()) * 1024 if peak_file.exists() else 0
        if peak_file.exists():
            peak_file.unlink()
        if os.WIFSIGNALED(status):
            return "signal", f"signal {os.WTERMSIG(status)}: {text[-2000:]}", 0
    else:
        argv = [sys.executable, "-m", "ireeabi", *args]
        with open(os.path.join(workdir, "out"), "wb+") as out, open(os.path.join(workdir, "err"), "wb+") as err:
            proc = subprocess.Popen(peak_rss.launcher_argv(argv), stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                    start_new_session=True)
            verdict, status = watch(proc.pid, cpu_limit, backstop, cpu=session_cpu_seconds)
            proc.returncode = 0  # reaped by watch
            if verdict != "done":
                return verdict, f"{verdict}: CPU limit {cpu_limit} s, backstop {backstop} s", 0
            err.seek(0)
            text = err.read().decode("utf-8", "replace")
            out.seek(0)
            listing = out.read().decode("utf-8", "replace")
        if os.WIFSIGNALED(status):
            return "signal", f"signal {os.WTERMSIG(status)}: {text[-2000:]}", 0
        text, peak = peak_rss.split_stderr(text)
    code = os.WEXITSTATUS(status)
    clean = "Traceback" not in text and "Exception ignored" not in text
    if code == 0 and clean:
        outcome = "ok"
    elif code in (1, 2) and clean and text.startswith("ireeabi: error: "):
        outcome = "refused"
    elif code == 2 and clean and not text and _listed_errors(listing):
        outcome = "refused"  # `layout --header` without a name: the structs, then their errors
    elif case.kind == "vmtest" and code == 1 and clean and not text and "[  FAILED  ]" in listing:
        outcome = "refused"  # `test`: failing tests, in gtest's words
    else:
        return "traceback", f"exit {code}: {text[-3000:]}", peak
    if peak > peak_limit:
        return "memory", f"peak RSS {peak >> 20} MiB ({outcome}): {text[:300]}", peak
    return outcome, text[:300], peak


def forked_command(argv: list[str], workdir: str, cpu_limit: float, backstop: float) -> "tuple[str, int]":
    """`command_in_this_process(argv, workdir)` in a forked process leading a process group (a
    verdict kills its children too), watched as `watch` watches: (verdict, wait status)."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setpgid(0, 0)
            code = command_in_this_process(argv, workdir)
        finally:
            os._exit(code)
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass  # the child did it first, or is gone
    return watch(pid, cpu_limit, backstop)  # its CPU, reaped children included


def command_in_this_process(argv: list[str], workdir: str) -> int:
    """In a forked process: the command `ireeabi ARGV`, its output in files; 3 and the traceback for an exception
    leaving main; its own peak RSS (and its children's) in KiB written to `peak`, the modules it
    imported (what the warm-up left it to import) to `imported`."""
    import traceback
    before = set(sys.modules)
    fds = []
    for name in ("out", "err"):  # new files (see _child: no flush of a file truncated and rewritten)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(workdir, name))
        fds.append(os.open(os.path.join(workdir, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC))
    fd_out, fd_err = fds
    os.dup2(fd_out, 1)
    os.dup2(fd_err, 2)
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True)
    from ireeabi.cli.main import main
    try:
        code = main(argv)
    except BaseException:  # noqa: BLE001 - what the campaign counts
        sys.stderr.write(traceback.format_exc()[-4000:])
        code = 3
    sys.stdout.flush()
    sys.stderr.flush()
    peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
               resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    Path(workdir, "peak").write_text(str(peak))
    Path(workdir, "imported").write_text("\n".join(sorted(set(sys.modules) - before)))
    return code




def _listed_errors(listing: str) -> bool:
    """Whether `layout --header`'s listing of every struct reports errors (exit 2): `error (T):
    ...` lines, or a non-empty "errors" list in its JSON."""
    return (re.search(r"^error \(\w+\): ", listing, re.M) is not None
            or re.search(r'"errors": \[\s*\{', listing) is not None)


@dataclass
class CommandResult:
    """The counts of each command kind, its largest peak RSS, and the offending cases."""
    counts: dict[str, dict[str, int]] = field(
        default_factory=lambda: {k: {o: 0 for o in OUTCOMES} for k in COMMAND_KINDS})
    peaks: dict[str, int] = field(default_factory=lambda: {k: 0 for k in COMMAND_KINDS})
    bad: list[tuple[str, str, str]] = field(default_factory=list)  # (outcome, case, detail)
    outcomes: list[str] = field(default_factory=list)  # each case's, in the order given
    # the modules the forked cases of each kind imported anew: what the warm-up left them to import
    imported: dict[str, list[str]] = field(default_factory=lambda: {k: [] for k in COMMAND_KINDS})
    forks: dict[str, float] = field(default_factory=dict)  # see `ForkMeter`

    @property
    def failures(self) -> int:
        return sum(c[k] for c in self.counts.values() for k in FAILURES)

    def summary(self) -> str:
        return "; ".join(
            f"{kind}: {sum(c.values())} cases, " + ", ".join(f"{c[k]} {k}" for k in OUTCOMES if c[k])
            + f", peak RSS {self.peaks[kind] >> 20} MiB" for kind, c in self.counts.items()
        ) + describe_forks(self.forks, len(self.outcomes))


def command_cases(headers: int, dwarf: int, disassembly: int, seed: int,
                  mods: "list[Module] | None" = None, out_dir: "Path | None" = None,
                  inputs: int = 0, vm_tests: int = 0) -> list[CommandCase]:
    """The cases of `command_campaign`, interleaved (the kinds share the machine's load alike)."""
    with tempfile.TemporaryDirectory(prefix="ireeabi-dwarf-objects-") as tmp:
        objects = dwarf_objects(Path(out_dir or tmp))
    mods = mods if mods is not None else modules()
    groups = [header_cases(headers, seed), dwarf_cases(objects, dwarf, seed + 1),
              disassembly_cases(mods, disassembly, seed + 2), input_cases(mods, inputs, seed + 3),
              vm_test_cases(vm_test_modules() if vm_tests else {}, vm_tests, seed + 4)]
    out = []
    for i in range(max(len(g) for g in groups)):
        out += [g[i] for g in groups if i < len(g)]
    return out


def command_campaign(headers: int = 40, dwarf: int = 100, disassembly: int = 80, seed: int = 0,
                     inputs: int = 60,
                     cpu_limit: float = CPU_LIMIT, backstop: "float | None" = None,
                     cases: "list[CommandCase] | None" = None, verbose: bool = False,
                     forked: bool = False) -> CommandResult:
    """Hostile headers through `layout --header`, DWARF mutants through `layout --dwarf`, module
    mutants through `inspect --disassemble`, hostile `--input` values through `run`: each a whole
    command in a process of its own (`forked`: see run_command)."""
    backstop = BACKSTOP_FACTOR * cpu_limit if backstop is None else backstop
    cases = cases if cases is not None else command_cases(headers, dwarf, disassembly, seed, inputs=inputs)
    result = CommandResult()
    meter = ForkMeter()
    with tempfile.TemporaryDirectory(prefix="ireeabi-commands-") as workdir:
        for case in cases:
            outcome, detail, peak = run_command(case, cpu_limit, backstop, workdir, forked=forked)
            imported = Path(workdir, "imported")
            if imported.exists():  # forked: what the case's process imported
                names = set(result.imported[case.kind]) | set(imported.read_text().split())
                result.imported[case.kind] = sorted(names)
                imported.unlink()
            result.counts[case.kind][outcome] += 1
            result.outcomes.append(outcome)
            result.peaks[case.kind] = max(result.peaks[case.kind], peak)
            if outcome in FAILURES:
                result.bad.append((outcome, case.describe(), detail))
                if verbose:
                    print(f"{outcome}: {case.describe()}\n{detail[-1500:]}", flush=True)
    result.forks = meter.stop()
    return result


def _warm_up_commands(mods: "list[Module]", vm_modules: "dict[str, bytes]", workdir: str) -> None:
    """Import and load, before forking, what the commands import and load (each case would import
    it anew, most of its cost): the command line, numpy, pyelftools, the header reader and libclang
    (a header read here), the VM, the HAL, the loaders of foreign kernels and the C helper (as
    `_warm_up`), the disassembler (a module listed here) and `ireeabi test`'s (the VM test modules
    run here)."""
    import importlib
    import threading
    from ireeabi.cli.main import COMMAND_MODULES, main
    for name in COMMAND_MODULES.values():
        importlib.import_module(name)
    import elftools.elf.elffile  # noqa: F401
    from ireeabi.abi import cheader, dwarf  # noqa: F401
    from ireeabi.tooling import program  # noqa: F401
    sink = io.StringIO()
    _warm_up(mods, workdir)
    main(["layout", "iree_byte_span_t", "--all-targets"], stdout=sink, stderr=sink)
    header = os.path.join(workdir, "warm.h")
    Path(header).write_text("struct s { char c; int a; };\n")
    main(["layout", "s", "--header", header, "--json"], stdout=sink, stderr=sink)
    path = os.path.join(workdir, "warm.vmfb")
    for mod in mods[:1]:
        Path(path).write_bytes(mod.data)
        for json_flag in ([], ["--json"]):
            main(["inspect", path, "--disassemble", *json_flag], stdout=sink, stderr=sink)
    for data in vm_modules.values():
        Path(path).write_bytes(data)
        main(["test", path, "--max-steps", VM_TEST_STEPS], stdout=sink, stderr=sink)
    if threading.active_count() != 1:  # a forked child keeps only the forking thread
        raise RuntimeError(f"the warm-up left threads: {threading.enumerate()}")


def command_campaign_in_fresh_process(cases: "list[CommandCase]", mods: "list[Module] | None" = None,
                                      vm_modules: "dict[str, bytes] | None" = None) -> CommandResult:
    """`command_campaign(cases=cases, forked=True)` by a fresh interpreter (this module, run from
    tests/): the cases are forked from a process that has imported ireeabi and has no other thread
    (a pytest-xdist worker has execnet's, and its resident pages would count in every case's),
    warmed up with the campaign's modules and the VM test modules (found here by default, and
    handed to it pickled: see campaign_in_fresh_process)."""
    import json
    mods = mods if mods is not None else modules()
    vm_modules = vm_modules if vm_modules is not None else vm_test_modules()
    with tempfile.TemporaryDirectory(prefix="ireeabi-commands-json-") as tmp:
        given, out = os.path.join(tmp, "cases.pickle"), os.path.join(tmp, "result.json")
        with open(given, "wb") as f:
            pickle.dump({"cases": cases, "modules": mods, "vm_modules": vm_modules}, f)
        proc = subprocess.run([sys.executable, "-m", "support.mutation_campaign", "--commands-from", given,
                               "--json-out", out], capture_output=True, text=True, cwd=TESTS)
        if not os.path.exists(out):
            raise RuntimeError(f"the command campaign process ended with {proc.returncode}: {proc.stderr[-3000:]}")
        with open(out) as f:
            data = json.load(f)
    return CommandResult(data["counts"], data["peaks"], [tuple(b) for b in data["bad"]], data["outcomes"],
                         data["imported"], data["forks"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mutants", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cpu-limit", type=float, default=CPU_LIMIT,
                    help="seconds of CPU past which a mutant is a hang")
    ap.add_argument("--backstop", type=float, default=None,
                    help=f"wall-clock seconds (default {BACKSTOP_FACTOR} x the CPU limit)")
    ap.add_argument("--headers", type=int, default=40, help="hostile headers through layout --header")
    ap.add_argument("--dwarf", type=int, default=100, help="object mutants through layout --dwarf")
    ap.add_argument("--disassembly", type=int, default=80,
                    help="module mutants through inspect --disassemble")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--modules-only", action="store_true", help="no command campaign")
    ap.add_argument("--json-out", metavar="FILE", help="the module campaign's result as JSON")
    ap.add_argument("--write-mutant", type=int, metavar="INDEX",
                    help="write mutant INDEX of the seed (with --mutants past it) to -o, run nothing")
    ap.add_argument("-o", "--output", default="mutant.vmfb", help="where --write-mutant writes")
    ap.add_argument("--cut-report", metavar="N[,N...]",
                    help="what the first N of the --mutants reach of what all reach (answer classes, "
                         "branch arcs with coverage.py), as JSON to --json-out; nothing else")
    ap.add_argument("--commands-from", metavar="FILE",
                    help="run the command cases pickled in FILE (with the modules to warm up with), "
                         "forked from this process (the result to --json-out), and nothing else")
    ap.add_argument("--modules-from", metavar="FILE",
                    help="the campaign's modules, pickled (instead of compiling or finding them here)")
    args = ap.parse_args()
    if args.commands_from:
        import json
        with open(args.commands_from, "rb") as f:
            given = pickle.load(f)
        with tempfile.TemporaryDirectory(prefix="ireeabi-commands-warm-") as workdir:
            _warm_up_commands(given["modules"], given["vm_modules"], workdir)
            freeze_heap()
            commands = command_campaign(cases=given["cases"], cpu_limit=args.cpu_limit,
                                        backstop=args.backstop, verbose=args.verbose, forked=True)
        with open(args.json_out, "w") as f:
            json.dump({"counts": commands.counts, "peaks": commands.peaks, "bad": commands.bad,
                       "outcomes": commands.outcomes, "imported": commands.imported,
                       "forks": commands.forks}, f)
        return
    if args.cut_report is not None:
        import json
        report = cut_report(args.mutants, [int(n) for n in args.cut_report.split(",")], args.seed)
        with open(args.json_out or "cut-report.json", "w") as f:
            json.dump(report, f, indent=1)
        print(report["classes"], "classes,", report["arcs"], "arcs;",
              {cut: (c["classes"], c["arcs"]) for cut, c in report["cuts"].items()})
        return
    if args.write_mutant is not None:
        mods = modules()
        mutant = mutants(mods, max(args.mutants, args.write_mutant + 1), args.seed)[args.write_mutant]
        Path(args.output).write_bytes(mutant.apply(next(m for m in mods if m.name == mutant.module).data))
        print(f"{args.output}: {mutant.describe()}")
        return
    t0 = time.monotonic()
    given_mods = None
    if args.modules_from:
        with open(args.modules_from, "rb") as f:
            given_mods = pickle.load(f)
    result = campaign(args.mutants, args.seed, args.cpu_limit, args.backstop, mods=given_mods,
                      verbose=args.verbose)
    print(f"{result.summary()} in {time.monotonic() - t0:.0f} s")
    for outcome, what, _ in result.bad[:50]:
        print(f"  {outcome}: {what}")
    if args.json_out:
        import json
        with open(args.json_out, "w") as f:
            json.dump({"counts": result.counts, "bad": result.bad, "iree_hangs": result.iree_hangs,
                       "forks": result.forks}, f)
    if args.modules_only:
        sys.exit(1 if result.failures else 0)
    t0 = time.monotonic()
    commands = command_campaign(args.headers, args.dwarf, args.disassembly, args.seed, args.cpu_limit,
                                args.backstop, verbose=args.verbose)
    print(f"{commands.summary()} in {time.monotonic() - t0:.0f} s")
    for outcome, what, _ in commands.bad[:50]:
        print(f"  {outcome}: {what}")
    sys.exit(1 if result.failures or commands.failures else 0)


if __name__ == "__main__":
    main()
