"""A deterministic mutation campaign over real modules: no traceback, no death by signal, no hang.

    python tests/mutation_campaign.py [--mutants N] [--seed S] [--cpu-limit SECONDS] [--backstop SECONDS] [--verbose]

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
import io
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import iree_tools as tools  # noqa: E402

# (program, function, inputs) compiled for both inline models.
PROGRAMS = [
    (HERE / "programs" / "add16.mlir", "add", ["16xf32=1", "16xf32=2"]),
    (HERE / "programs" / "e2e" / "push_constants.mlir", "affine", ["5xf32=1,2,3,4,5", "2.5", "-1"]),
    (HERE / "programs" / "e2e" / "counter.mlir", "next", ["5"]),
    (HERE / "programs" / "e2e" / "multi_dispatch.mlir", "normalize", ["16xf32=1", "16xf32=2"]),
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
OUTCOMES = ("ok", "refused", "traceback", "signal", "hang", "backstop")


@dataclass
class Module:
    name: str
    data: bytes
    function: str
    inputs: list[str]
    regions: dict[str, tuple[int, int]]  # region name -> [start, end) in the file
    target: str = ""  # a foreign build's data model (run with --target and the budget)


@dataclass
class Mutant:
    module: str
    region: str
    kind: str
    edits: list[tuple[int, bytes]]  # (offset, bytes written there)
    cut: int | None = None  # truncated to this length

    def apply(self, data: bytes) -> bytes:
        out = bytearray(data)
        for off, b in self.edits:
            out[off:off + len(b)] = b
        return bytes(out[:self.cut] if self.cut is not None else out)

    def describe(self) -> str:
        edits = ", ".join(f"@{off}={b.hex()}" for off, b in self.edits)
        return f"{self.module} {self.region} {self.kind} [{edits}]" + (f" cut={self.cut}" if self.cut else "")


@dataclass
class Result:
    counts: dict[str, int] = field(default_factory=lambda: {k: 0 for k in OUTCOMES})
    bad: list[tuple[str, str, str]] = field(default_factory=list)  # (outcome, mutant, detail)
    iree_hangs: int = 0  # ireeabi passed the CPU limit, and so did iree-run-module: not counted

    @property
    def failures(self) -> int:
        return sum(self.counts[k] for k in ("traceback", "signal", "hang", "backstop"))

    def summary(self) -> str:
        n = sum(self.counts.values())
        return (f"{n} mutants: " + ", ".join(f"{self.counts[k]} {k}" for k in OUTCOMES)
                + f" ({self.iree_hangs} past the CPU limit in iree-run-module too, not counted)")


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
            out.append(Mutant(m.name, region, kind, [], rng.randrange(lo, hi)))
            continue
        out.append(Mutant(m.name, region, kind, edits))
    return out


def _child(data: bytes, function: str, inputs: list[str], path: str, target: str = "") -> int:
    """In the forked process: `ireeabi inspect` and `ireeabi run` on the mutant. Exit 0 if both
    succeeded, 4 if either refused the mutant with an ireeabi error, 3 (with the traceback on fd 2)
    for anything else."""
    from ireeabi.cli.main import main
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
    pause = 0.001
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
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


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


def campaign(count: int = 2000, seed: int = 0, cpu_limit: float = CPU_LIMIT,
             backstop: "float | None" = None, mods: "list[Module] | None" = None,
             verbose: bool = False) -> Result:
    """Run `count` mutants of seed `seed`; `backstop` defaults to BACKSTOP_FACTOR * `cpu_limit`."""
    backstop = BACKSTOP_FACTOR * cpu_limit if backstop is None else backstop
    # Import ireeabi (and build the C helper) before forking, so each mutant starts warm.
    from ireeabi.cli import main  # noqa: F401
    from ireeabi.hal.local.native import native
    native()
    mods = mods if mods is not None else modules()
    by_name = {m.name: m for m in mods}
    result = Result()
    with tempfile.TemporaryDirectory(prefix="ireeabi-mutants-") as workdir:
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
            if outcome in ("traceback", "signal", "hang", "backstop"):
                result.bad.append((outcome, mutant.describe(), detail))
                if verbose:
                    print(f"{outcome}: {mutant.describe()}\n{detail[-1500:]}", flush=True)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mutants", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cpu-limit", type=float, default=CPU_LIMIT,
                    help="seconds of CPU past which a mutant is a hang")
    ap.add_argument("--backstop", type=float, default=None,
                    help=f"wall-clock seconds (default {BACKSTOP_FACTOR} x the CPU limit)")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    t0 = time.monotonic()
    result = campaign(args.mutants, args.seed, args.cpu_limit, args.backstop, verbose=args.verbose)
    print(f"{result.summary()} in {time.monotonic() - t0:.0f} s")
    for outcome, what, _ in result.bad[:50]:
        print(f"  {outcome}: {what}")
    sys.exit(1 if result.failures else 0)


if __name__ == "__main__":
    main()
