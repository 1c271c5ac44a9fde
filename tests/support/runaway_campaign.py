"""The runaway campaign (issue 41, item 6): foreign kernel mutants, looping kernel libraries and files
that are not regular, each one whole command in a process of its own, all ending cleanly.

    cd tests && python -m support.runaway_campaign [--seed S] [--mutants N] [--json-out FILE] [--verbose]
    cd tests && python -m support.runaway_campaign --seed S --write-case INDEX -o DIR

(a module of the tests' `support` package: run from tests/, whose folder `-m` puts on the path)

Three kinds of cases, on add16 compiled by iree-compile (cached) for every kernel data model
(`KERNEL_TARGET_FLAGS`: x86_64's embedded ELF runs natively, riscv32, riscv64, armv7, aarch64 and
i386 in the emulated CPU, wasm32 under wasmtime):

- "mutant": the module's kernel library (the embedded ELF of x86_64, aarch64, armv7, riscv64,
  riscv32; the wasm32 side module) damaged in one of its parts (an ELF section, its program or
  section headers, its ELF header; a wasm section or the wasm header) by the damage of the mutation
  campaign (bit flips, edge words, zeroed runs, splices, truncations), seeded; each given to `run
  --max-steps`, `inspect --check-imports` (its default budget) or `run --trace` (imports, calls or
  instructions, to stderr or `--trace-file`), in turn, so every target meets every command.
- "loop": the library made to loop where its loader calls it (tests/support/hostile_kernels.py:
  the ELF initializer DT_INIT, the wasm `__wasm_apply_data_relocs`, the library query, the
  dispatches) on every ISA (i386 too), through `run --max-steps` (x86_64's native kernel also by
  `--kernel-cpu-time`) and, where a load reaches the loop, `inspect --check-imports`. Each must end
  refused with DEADLINE_EXCEEDED.
- "file": a path that is not a regular file (/dev/zero, a FIFO no process opens the other end of,
  a directory, a sparse file of 64 GiB) for every option that reads or writes a file: `--dwarf`,
  `--header` and a header's `#include`, `-I`, the module of `run`, `inspect`, `test` and
  `compare`, `run --module`, `--input=@`, `--input=SHAPE=@`, `--expected-output=@`,
  `--native-module` (a declaration file), `compile`'s source, and the output targets `--output=@`,
  `--trace-file`, `--svg` and `compile -o` (a FIFO only: the others are iree-compile's to answer,
  after seconds of compiling). The sparse file reaches IREE's own tools through `compile` and
  `compare` (a regular file, theirs to read): iree-compile cannot allocate its 64 GiB and says so,
  iree-run-module prints nothing, and ireeabi ends with their error.

Each case runs `ireeabi.cli.main.main` in a process forked from one that has imported ireeabi (and
has run no foreign kernel: no thread to lose in the fork), its stdout and stderr in files. What
counts, as in the mutation campaign: exit 0 ("ok") or 1/2 with no traceback ("refused", its kind the
first IREE status code it names, else the kind of file it names); a traceback; a signal; a hang (past
`cpu_limit` seconds of the case's CPU: every kernel runs under `--max-steps`, so a loop ends as a
status long before); a backstop (wall-clock, for a process blocked without computing: a FIFO's open);
and "memory": the case's own peak RSS (getrusage, itself and its children: libclang's) past
PEAK_LIMIT, which no input here needs (the inputs are a few KiB, or files that must not be read
whole). A failure names the seed, the case and the command that rebuilds it.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import hostile_kernels as hk
from . import iree_tools as tools
from . import mutation_campaign as mc

TESTS = Path(__file__).resolve().parents[1]
ADD16 = TESTS / "programs" / "add16.mlir"
INPUTS = ["--function", "add", "--input=16xf32=1", "--input=16xf32=2"]
MUTANT_TARGETS = ("x86_64", "aarch64", "armv7", "riscv64", "riscv32", "wasm32")
COMMANDS = ("run", "inspect", "trace")
KINDS = ("mutant", "loop", "file")
# A mutant's run: add16 needs a few thousand instructions; a looping mutant ends by this many, in a
# fraction of a second of CPU. The loops' own cases use a smaller one (the same as
# tests/cli/test_runaway_bounds.py).
BUDGET = 2_000_000
LOOP_STEPS = 200_000
CPU_LIMIT = 60.0  # seconds of CPU past which a case is a hang (a case needs well under one)
PEAK_LIMIT = 256 << 20  # a case's own peak RSS: ~60 MiB measured for these; 64 GiB files not read whole
SPARSE_SIZE = 64 << 30
OUTCOMES = ("ok", "refused", "traceback", "signal", "hang", "backstop", "memory", "unexpected")
FAILURES = ("traceback", "signal", "hang", "backstop", "memory", "unexpected")
STATUS_CODES = ("DEADLINE_EXCEEDED", "RESOURCE_EXHAUSTED", "INVALID_ARGUMENT", "OUT_OF_RANGE", "NOT_FOUND",
                "FAILED_PRECONDITION", "UNIMPLEMENTED", "PERMISSION_DENIED", "INTERNAL", "DATA_LOSS",
                "UNAVAILABLE", "ABORTED", "CANCELLED", "ALREADY_EXISTS", "UNKNOWN")
# What a refusal that names no status code is about, by its words (the first that matches).
REFUSAL_WORDS = (("bound", r"memory bound|time bound"),
                 ("not-regular", r"not a regular file|a FIFO|a directory|[Ii]s a directory|a device"),
                 ("too-large", r"larger than|too large|past the largest"),
                 ("mismatch", r"\[FAILED\]|does not match"),
                 ("os-error", r"No space left|Permission denied|Cannot allocate memory"),
                 ("not-found", r"No such file|no such|not found|missing"),
                 ("malformed", r"not a|malformed|invalid|truncated|bad |cannot|out of"))


@dataclass
class Case:
    """One command: `ireeabi ARGV` with FILES set up in a directory of its own first ("{dir}" in
    ARGV and in a header's bytes names it). A file's value is its bytes, or "fifo", "dir", "sparse"
    (made so) or "link:PATH" (a symbolic link to PATH)."""
    kind: str  # one of KINDS
    index: int  # its place in the seed's list
    what: str
    files: "dict[str, bytes | str]"
    argv: list[str]
    expect: str = ""  # a status its output must name (inspect reports a load's status, exit 0)
    peak_limit: int = PEAK_LIMIT
    seed: int = 0
    mutants: int = 0  # the seed's count of mutants (the cases after them are numbered past it)

    def describe(self) -> str:
        return (f"{self.kind} case {self.index} of seed {self.seed}: {self.what}: ireeabi {' '.join(self.argv)}; "
                f"rebuild it (in tests/): python -m support.runaway_campaign --seed {self.seed} "
                f"--mutants {self.mutants} --write-case {self.index} -o DIR")

    def set_up(self, where: str) -> list[str]:
        """Make the case's files in `where`; its argv there."""
        for name, data in self.files.items():
            path = os.path.join(where, name)
            if data == "fifo":
                os.mkfifo(path)
            elif data == "dir":
                os.mkdir(path)
            elif data == "sparse":
                with open(path, "wb") as f:
                    f.truncate(SPARSE_SIZE)
            elif isinstance(data, str) and data.startswith("link:"):
                os.symlink(data[len("link:"):], path)
            else:
                assert isinstance(data, bytes)
                # a header's #include names the directory; a module's bytes are left as they are
                Path(path).write_bytes(data.replace(b"{dir}", where.encode()) if name.endswith(".h") else data)
        return [a.replace("{dir}", where) for a in self.argv]


@dataclass
class Result:
    """Per kind: the count of each outcome, the refusals by kind, the exit codes, the largest peak;
    the offending cases."""
    counts: dict = field(default_factory=lambda: {k: {o: 0 for o in OUTCOMES} for k in KINDS})
    refusals: dict = field(default_factory=lambda: {k: {} for k in KINDS})
    exits: dict = field(default_factory=lambda: {k: {} for k in KINDS})
    peaks: dict = field(default_factory=lambda: {k: 0 for k in KINDS})
    bad: list = field(default_factory=list)  # (outcome, case, detail)

    @property
    def failures(self) -> int:
        return sum(c[k] for c in self.counts.values() for k in FAILURES)

    def summary(self) -> str:
        return "; ".join(
            f"{kind}: {sum(c.values())} cases, " + ", ".join(f"{c[k]} {k}" for k in OUTCOMES if c[k])
            + f" (exit codes {dict(sorted(self.exits[kind].items()))}; refusals "
            + ", ".join(f"{n} {r}" for r, n in sorted(self.refusals[kind].items(), key=lambda x: -x[1]))
            + f"), peak RSS {self.peaks[kind] >> 20} MiB" for kind, c in self.counts.items())

    def to_json(self) -> dict:
        return {"counts": self.counts, "refusals": self.refusals, "exits": {k: {str(c): n for c, n in v.items()}
                for k, v in self.exits.items()}, "peaks": self.peaks, "bad": self.bad}

    @classmethod
    def from_json(cls, data: dict) -> "Result":
        return cls(data["counts"], data["refusals"], {k: {int(c): n for c, n in v.items()}
                   for k, v in data["exits"].items()}, data["peaks"], [tuple(b) for b in data["bad"]])


# -- the cases ---------------------------------------------------------------------------------------


def kernel_modules() -> "dict[str, bytes]":
    """add16 (inline-dynamic) for every kernel data model, from the compile cache."""
    from ireeabi.tooling.check_compile import KERNEL_TARGET_FLAGS
    return {t: tools.compile_mlir(ADD16, None, "inline-dynamic", extra_flags=flags).read_bytes()
            for t, flags in KERNEL_TARGET_FLAGS.items()}


def library_parts(lib: bytes) -> "list[tuple[str, int, int]]":
    """(name, start, end) of the parts of a kernel library, in the library: an ELF's sections (of 8
    bytes or more), its program and section headers and its ELF header; a wasm module's sections
    (by id) and its header."""
    if lib[:4] == b"\0asm":
        out, pos = [("wasm header", 0, 8)], 8
        while pos < len(lib):
            size, start = hk.read_uleb128(lib, pos + 1)
            out.append((f"wasm section {lib[pos]}", pos, start + size))
            pos = start + size
        return out
    from elftools.elf.elffile import ELFFile
    elf = ELFFile(io.BytesIO(lib))
    out = [(s.name, s["sh_offset"], s["sh_offset"] + s["sh_size"]) for s in elf.iter_sections()
           if s["sh_size"] >= 8 and s["sh_type"] != "SHT_NOBITS"]
    out.append(("program headers", elf["e_phoff"], elf["e_phoff"] + elf["e_phnum"] * elf["e_phentsize"]))
    out.append(("section headers", elf["e_shoff"], elf["e_shoff"] + elf["e_shnum"] * elf["e_shentsize"]))
    out.append(("ELF header", 0, elf["e_ehsize"]))
    return out


def _run_argv(target: str, steps: int) -> list[str]:
    return ["run", "{dir}/m.vmfb", "--target", target, *INPUTS, "--max-steps", str(steps)]


def mutant_cases(mods: "dict[str, bytes]", count: int, seed: int) -> list[Case]:
    """`count` mutants of the kernel libraries: the targets in turn, the commands in turn over
    them, the part and the damage drawn from `seed`."""
    rng = random.Random(seed)
    parts = {}
    for t in MUTANT_TARGETS:
        off, n, _ = hk.kernel_segment(mods[t])
        parts[t] = (off, library_parts(mods[t][off:off + n]))
    out = []
    for i in range(count):
        target = MUTANT_TARGETS[i % len(MUTANT_TARGETS)]
        command = COMMANDS[(i // len(MUTANT_TARGETS)) % len(COMMANDS)]
        off, lib_parts = parts[target]
        part, lo, hi = rng.choice(lib_parts)
        data, damage = mc._damage(rng, mods[target], off + lo, off + hi)
        if command == "run":
            argv = _run_argv(target, BUDGET)
        elif command == "inspect":
            argv = ["inspect", "{dir}/m.vmfb", "--target", target, "--check-imports"]
        else:
            level = rng.choice(("imports", "calls", "instructions"))
            argv = _run_argv(target, BUDGET) + [f"--trace={level}"]
            if rng.random() < 0.5:
                argv += ["--trace-file", "{dir}/trace.jsonl"]
        out.append(Case("mutant", i, f"{target} {part} {damage} {command}", {"m.vmfb": data}, argv))
    return out


def loop_cases(mods: "dict[str, bytes]") -> list[Case]:
    """Every looping place of every ISA's library, through `run` and (where loading reaches it)
    `inspect --check-imports`; each must end with DEADLINE_EXCEEDED."""
    out: list[Case] = []
    for target, data in mods.items():
        places = hk.WASM_WHERE if target == "wasm32" else hk.ELF_WHERE
        for where in places:
            if (target, where) == ("i386", "dispatch"):
                # IREE's hal_inline shims refuse add16's buffer_view.assert on i386 before any
                # dispatch (the shim-length hazard inspect predicts): no dispatch is reached.
                continue
            files = {"m.vmfb": hk.looping(data, where)}
            argvs = [("run", _run_argv(target, LOOP_STEPS))]
            if target == "x86_64":
                argvs.append(("run --kernel-cpu-time", _run_argv(target, LOOP_STEPS) + ["--kernel-cpu-time", "0.05"]))
            if where != "dispatch":  # loading calls no dispatch
                argvs.append(("inspect", ["inspect", "{dir}/m.vmfb", "--target", target, "--check-imports",
                                          "--max-steps", str(LOOP_STEPS)]))
            for name, argv in argvs:
                out.append(Case("loop", 0, f"{target} {where} {name}", files, argv, expect="DEADLINE_EXCEEDED"))
    return out


# The paths that are not regular files: name -> (the path in argv, the file to set up).
NOT_REGULAR = {
    "zero": ("/dev/zero", {}),
    "fifo": ("{dir}/fifo", {"fifo": "fifo"}),
    "dir": ("{dir}/adir", {"adir": "dir"}),
    "sparse": ("{dir}/huge", {"huge": "sparse"}),
}


def _suffixed(name: str, suffix: str) -> "tuple[str, dict[str, str]]":
    """NOT_REGULAR's path `name` under a name ending in `suffix` (what `--native-module` and
    `--input=@` read by: a declaration file, a .npy array), /dev/zero through a link."""
    path, made = NOT_REGULAR[name]
    if name == "zero":
        return f"{{dir}}/zero{suffix}", {f"zero{suffix}": "link:/dev/zero"}
    (file, kind), = made.items()
    return f"{{dir}}/{file}{suffix}", {f"{file}{suffix}": kind}


def file_cases(mods: "dict[str, bytes]") -> list[Case]:
    """Every file option given each path of NOT_REGULAR (an output target given /dev/full in place
    of /dev/zero, which takes any write)."""
    module = {"m.vmfb": mods["x86_64"]}
    run = ["run", "{dir}/m.vmfb", "--function", "add", "--input=16xf32=1"]
    out: list[Case] = []
    for name, (path, made) in NOT_REGULAR.items():
        sink = "/dev/full" if name == "zero" else path
        options = [
            ("--dwarf", {}, ["layout", "x", "--dwarf", path]),
            ("--header", {}, ["layout", "s", "--header", path]),
            ("--header #include", {"h.h": f'#include "{path}"\nstruct s {{ int b; }};\n'.encode()},
             ["layout", "s", "--header", "{dir}/h.h"]),
            ("-I", {"h.h": b'#include "x.h"\nstruct s { int b; };\n'},
             ["layout", "s", "--header", "{dir}/h.h", "-I", path]),
            ("run module", {}, ["run", path, "--function", "add"]),
            ("inspect module", {}, ["inspect", path, "--check-imports"]),
            ("test module", {}, ["test", path]),
            ("run --module", {}, ["run", "--module", path, "--function", "add"]),
            ("--input=@", {**module, **_suffixed(name, ".npy")[1]}, [*run, f"--input=@{_suffixed(name, '.npy')[0]}"]),
            ("--input=SHAPE=@", module, [*run, f"--input=16xf32=@{path}"]),
            ("--expected-output=@", module, [*run, "--input=16xf32=2", f"--expected-output=16xf32=@{path}"]),
            ("--native-module", {**module, **_suffixed(name, ".toml")[1]},
             ["inspect", "{dir}/m.vmfb", "--check-imports", "--native-module", _suffixed(name, ".toml")[0]]),
            ("--output=@", module, [*run, "--input=16xf32=2", f"--output=@{sink}"]),
            ("--trace-file", module, [*run, "--input=16xf32=2", "--trace", "--trace-file", sink]),
            ("--svg", {}, ["layout", "iree_byte_span_t", "--svg", sink]),
            ("compile source", {}, ["compile", path]),
            ("compile -o", {"a.mlir": ADD16.read_bytes()}, ["compile", "{dir}/a.mlir", "-o", path]),
            ("compare module", {}, ["compare", path, "--tool", "iree-run-module", "--function", "add"]),
        ]
        for option, files, argv in options:
            if option == "compile -o" and name != "fifo":
                continue  # iree-compile would run (seconds of CPU) and answer for itself
            case = Case("file", 0, f"{option} {name}", {**files, **made}, argv)
            if option.startswith(("--header", "-I")):
                # libclang runs in a child bounded to cheader.MEMORY_BYTES of address space (768
                # MiB): a header including /dev/zero reads up to that bound and is refused there
                case.peak_limit = mc.PEAK_LIMIT
            out.append(case)
    return out


def cases(seed: int, mutants: int, mods: "dict[str, bytes] | None" = None) -> list[Case]:
    """The campaign's cases, numbered: the mutants of `seed`, the loops, the files."""
    mods = mods if mods is not None else kernel_modules()
    out = mutant_cases(mods, mutants, seed) + loop_cases(mods) + file_cases(mods)
    for i, case in enumerate(out):
        case.index, case.seed, case.mutants = i, seed, mutants
    return out


# -- running them ------------------------------------------------------------------------------------


def _tail(path: str, n: int = 4000) -> str:
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        f.seek(max(0, f.tell() - n))
        return f.read().decode("utf-8", "replace")


def refusal_kind(text: str) -> str:
    """The first IREE status code `text` names, else what its words say it is about."""
    found = [(text.find(c), c) for c in STATUS_CODES if c in text]
    if found:
        return min(found)[1]
    for kind, words in REFUSAL_WORDS:
        if re.search(words, text):
            return kind
    return "other"


def run_case(case: Case, workdir: str, cpu_limit: float = CPU_LIMIT,
             backstop: "float | None" = None) -> "tuple[str, int | None, str, int, str]":
    """(outcome, exit code, refusal kind, peak RSS in bytes, detail) of one case: "unexpected" a
    clean end whose output does not name the status the case expects."""
    backstop = mc.BACKSTOP_FACTOR * cpu_limit if backstop is None else backstop
    where = os.path.join(workdir, "case")
    shutil.rmtree(where, ignore_errors=True)
    os.makedirs(where)
    argv = case.set_up(where)
    verdict, status = mc.forked_command(argv, workdir, cpu_limit, backstop)
    if verdict != "done":
        return verdict, None, "", 0, f"{verdict}: CPU limit {cpu_limit} s, backstop {backstop} s"
    err, out = _tail(os.path.join(workdir, "err")), _tail(os.path.join(workdir, "out"))
    if os.WIFSIGNALED(status):
        return "signal", None, "", 0, f"signal {os.WTERMSIG(status)}: {err[-2000:]}"
    code = os.WEXITSTATUS(status)
    peak_file = os.path.join(workdir, "peak")
    peak = int(Path(peak_file).read_text()) * 1024 if os.path.exists(peak_file) else 0
    if os.path.exists(peak_file):
        os.remove(peak_file)
    clean = not any(w in t for t in (err, out) for w in ("Traceback (most recent", "Exception ignored"))
    if code == 0 and clean:
        outcome, kind = "ok", ""
    elif code in (1, 2) and clean:
        outcome, kind = "refused", refusal_kind(err + "\n" + out)
    else:
        return "traceback", code, "", peak, f"exit {code}: {err[-3000:]}"
    if peak > case.peak_limit:
        return "memory", code, kind, peak, f"peak RSS {peak >> 20} MiB ({outcome}): {err[:300]}"
    if case.expect and case.expect not in err + out:
        return "unexpected", code, kind, peak, f"ended {outcome}, naming no {case.expect}: {(err + out)[-1500:]}"
    return outcome, code, kind, peak, (err + out)[:300]


def _warm_up(mods: "dict[str, bytes]", workdir: str) -> None:
    """Import, before forking, what the cases' commands import (a child importing it anew costs
    several times its own work): the command line, the HAL's loaders, the C helper; runs the host
    module once and inspects the foreign ones (their kernels are not run here: the emulated CPU
    and wasmtime leave threads, which a forked child does not keep)."""
    from ireeabi.cli.main import main
    from ireeabi.hal.local import emulated_executable, wasm_executable  # noqa: F401
    from ireeabi.hal.local.native import native
    native()
    sink = io.StringIO()
    path = os.path.join(workdir, "warm.vmfb")
    for target, data in mods.items():
        Path(path).write_bytes(data)
        if target == "x86_64":
            main(["run", path, "--target", target, *INPUTS], stdout=sink, stderr=sink)
        main(["inspect", path, "--target", target], stdout=sink, stderr=sink)
    main(["layout", "iree_byte_span_t"], stdout=sink, stderr=sink)


def campaign(seed: int, mutants: int, cpu_limit: float = CPU_LIMIT, backstop: "float | None" = None,
             verbose: bool = False) -> Result:
    """Run every case of `seed` (see the module docstring)."""
    mods = kernel_modules()
    result = Result()
    with tempfile.TemporaryDirectory(prefix="ireeabi-runaway-") as workdir:
        _warm_up(mods, workdir)
        for case in cases(seed, mutants, mods):
            outcome, code, kind, peak, detail = run_case(case, workdir, cpu_limit, backstop)
            result.counts[case.kind][outcome] += 1
            result.peaks[case.kind] = max(result.peaks[case.kind], peak)
            if code is not None:
                result.exits[case.kind][code] = result.exits[case.kind].get(code, 0) + 1
            if kind:
                result.refusals[case.kind][kind] = result.refusals[case.kind].get(kind, 0) + 1
            if outcome in FAILURES:
                result.bad.append((outcome, case.describe(), detail))
            if verbose and result.bad and result.bad[-1][1] == case.describe():
                print(f"{result.bad[-1][0]}: {case.describe()}\n{detail[-1500:]}", flush=True)
    return result


def campaign_in_fresh_process(seed: int, mutants: int) -> Result:
    """`campaign(seed, mutants)` by a fresh interpreter (this module, run from tests/): the process
    that forks the cases must have no other thread (a pytest-xdist worker has execnet's)."""
    with tempfile.TemporaryDirectory(prefix="ireeabi-runaway-json-") as tmp:
        out = os.path.join(tmp, "result.json")
        import subprocess
        proc = subprocess.run([sys.executable, "-m", "support.runaway_campaign", "--seed", str(seed),
                               "--mutants", str(mutants), "--json-out", out],
                              capture_output=True, text=True, cwd=TESTS)
        if not os.path.exists(out):
            raise RuntimeError(f"the campaign process ended with {proc.returncode}: {proc.stderr[-3000:]}")
        with open(out) as f:
            return Result.from_json(json.load(f))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mutants", type=int, default=60)
    ap.add_argument("--cpu-limit", type=float, default=CPU_LIMIT)
    ap.add_argument("--backstop", type=float, default=None)
    ap.add_argument("--json-out", metavar="FILE")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--write-case", type=int, metavar="INDEX",
                    help="set up case INDEX of the seed in -o (a directory) and print its command; run nothing")
    ap.add_argument("-o", "--output", default="case", help="where --write-case sets the case up")
    args = ap.parse_args()
    if args.write_case is not None:
        case = cases(args.seed, args.mutants)[args.write_case]
        os.makedirs(args.output, exist_ok=True)
        argv = case.set_up(os.path.abspath(args.output))
        print(f"{case.kind} case {case.index}: {case.what}\nireeabi {' '.join(argv)}")
        return
    t0 = time.monotonic()
    result = campaign(args.seed, args.mutants, args.cpu_limit, args.backstop, args.verbose)
    print(f"{result.summary()} in {time.monotonic() - t0:.0f} s")
    for outcome, what, _ in result.bad[:50]:
        print(f"  {outcome}: {what}")
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(result.to_json(), f)
    sys.exit(1 if result.failures else 0)


if __name__ == "__main__":
    main()
