"""The mutation campaign of tests/support/mutation_campaign.py in the suite: 1,000 deterministic mutants of
real modules of both inline models and of riscv32, aarch64 and wasm32 builds (FlatBuffer, bytecode,
embedded ELF, wasm side module), each through `ireeabi inspect` and `ireeabi run` in a process of
its own. No traceback, no death by signal, no hang that iree-run-module does not share, no
backstop. The counts are printed. A seed's first 1,000 mutants are the first half of its 2,000:
the suite runs the half (its largest cost, ~40 ms of CPU a mutant, most of it the commands' own work
and the copies of the parent's pages a forked child writes: RESULTS.md, session 51), the 2,000 and
other seeds are run by hand (`cd tests && python -m support.mutation_campaign --mutants 2000`, RESULTS.md).
Why not fewer: what the seed's first N of its 2,000 reach, measured by `python -m
support.mutation_campaign --mutants 2000 --cut-report 250,500,750,1000 --seed 20261203` (coverage.py
importable; RESULTS.md, session 50): of the 2,000's 10,137 branch arcs of ireeabi, 9,518 / 9,674 /
9,814 / 9,922 for N = 250 / 500 / 750 / 1,000, and of their 317 answer classes (error messages,
numbers and names left out) 73 / 117 / 159 / 193. Neither has levelled off: halving to 500 would
lose 248 arcs and 76 classes that the 1,000 reach, so the count stays.

Its verdicts do not depend on the machine's load: loops end by the `--max-steps` budget (a status),
a hang is CPU time past a limit, and the wall clock is only a backstop, reported apart; the tests
below pin each of these.

Then whole commands on hostile input, each the command line's `main` in a process of its own,
forked from a fresh interpreter that has imported ireeabi (its own peak, which a fork inherits,
counted in each case's), with the same CPU limit and backstop: seeded hostile
headers (huge macros and arrays, deep nesting, many members, includes of /dev/zero, damaged real
headers) through `layout --header`, byte mutants of objects gcc builds with -g for five data models
(and DWARF 4, and compressed debug sections) through `layout --dwarf`, and byte mutants of the
campaign's modules through `inspect --disassemble`, and byte mutants of VM test modules (the VM op
corpus, assembled) through `ireeabi test --max-steps` (issue 41: hostile VM test modules). Each ends with exit 0 or one `ireeabi: error:`
message (no traceback, no signal, no hang), its peak resident memory (the command's own, and its
libclang child's) at most 1 GB."""
from __future__ import annotations

import gc
import os
import resource
import time
from pathlib import Path

import pytest

from support import iree_tools as tools
from support import mutation_campaign as mc
from support.forked import run_forked

MUTANTS = 1000
SEED = 20261203
HEADER_CASES, DWARF_CASES, DISASSEMBLY_CASES, INPUT_CASES, VM_TEST_CASES = 40, 100, 80, 60, 30
HERE = Path(__file__).resolve().parents[1]


def test_no_mutant_ends_in_a_traceback_a_signal_or_a_hang(capsys):
    t0 = time.monotonic()
    result = mc.campaign_in_fresh_process(MUTANTS, SEED)
    took = time.monotonic() - t0
    with capsys.disabled():
        print(f"\nmutation campaign (seed {SEED}): {result.summary()} in {took:.0f} s (wall, loaded "
              f"machine)")
    assert sum(result.counts.values()) == MUTANTS
    regions = {m.region for m in mc.mutants(mc.modules(), MUTANTS, SEED)}
    assert regions == {"flatbuffer", "bytecode", "elf", "wasm"}
    assert {m.target for m in mc.modules()} == {"", "riscv32", "aarch64", "wasm32"}
    assert result.failures == 0, "\n".join(f"{o}: {what}\n{detail[-1500:]}" for o, what, detail in result.bad[:5])
    # forked from a frozen heap (test_a_frozen_heap_spares_a_forked_child_its_collection), by a
    # process that never loaded the compiler (its libIREECompiler.so: 60 MB more to fork)
    assert result.forks["frozen"] > 10_000 and not result.forks["compiler"], result.forks


def _faults_of_a_collection_in_a_child() -> int:
    """The minor page faults of a child forked from this process that runs a full collection."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt
    pid = os.fork()
    if pid == 0:
        try:
            gc.collect()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt - before


def test_a_frozen_heap_spares_a_forked_child_its_collection():
    """A child's full collection writes to every object it walks, so each page of the parent's
    heap it walks is copied; after `freeze_heap` in the parent it walks only what the child made.
    Counted in page faults (the kernel's count, not time), in a child of this test's process (its
    heap, frozen, stays there)."""
    def measure() -> "tuple[int, int]":
        ballast = [[i] for i in range(100_000)]  # ~1,000 pages of objects the collector tracks
        unfrozen = _faults_of_a_collection_in_a_child()
        mc.freeze_heap()
        frozen = _faults_of_a_collection_in_a_child()
        del ballast
        return unfrozen, frozen
    unfrozen, frozen = run_forked(measure)
    assert unfrozen > 1000 and frozen * 3 < unfrozen, (unfrozen, frozen)


def _spawn(code: str) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            exec(code)
        finally:
            os._exit(0)
    return pid


def test_a_process_that_computes_past_the_cpu_limit_is_a_hang():
    """A child spinning for ever: past 0.3 s of its own CPU it is a hang, however loaded the
    machine (the backstop, 600 s, is never reached first by a process that computes)."""
    pid = _spawn("while True: pass")
    assert mc.watch(pid, cpu_limit=0.3, backstop=600.0) == ("hang", 0)


def test_a_blocked_process_hits_the_backstop_not_the_hang_verdict():
    """A child that sleeps uses no CPU: only the wall-clock backstop ends it, reported as such."""
    pid = _spawn("import time\nwhile True: time.sleep(1000)")
    assert mc.watch(pid, cpu_limit=600.0, backstop=0.5) == ("backstop", 0)


def test_a_loop_in_the_vm_ends_by_the_budget_not_as_a_hang(tmp_path):
    """sum_squares(2**31 - 1) loops for minutes; under the campaign's HOST_BUDGET it ends with
    DEADLINE_EXCEEDED (the mutant is "refused"), far below the CPU limit."""
    path = tools.compile_with_flags(HERE / "programs" / "host" / "control.mlir", tools.HOST_FLAGS)
    mod = mc.Module("control", path.read_bytes(), "sum_squares", [str(2**31 - 1)], {})
    mutant = mc.Mutant("control", "bytecode", "none", [])
    assert mc._run_one(mod, mutant, mc.CPU_LIMIT, 600.0, str(tmp_path)) == ("refused", "")


def test_iree_run_module_on_a_looping_program_is_judged_by_cpu(tmp_path):
    """The oracle's verdict is CPU-based too: iree-run-module running the same loop (natively, for
    good) is a hang past the limit, the CPU of its session counted."""
    path = tools.compile_with_flags(HERE / "programs" / "host" / "control.mlir", tools.HOST_FLAGS)
    mod = mc.Module("control", path.read_bytes(), "sum_squares", [str(2**31 - 1)], {})
    mutant = mc.Mutant("control", "bytecode", "none", [])
    assert mc._iree_verdict(mod, mutant, 1.0, 600.0, str(tmp_path)) == "hang"


@pytest.fixture(scope="module")
def command_cases() -> list:
    return mc.command_cases(HEADER_CASES, DWARF_CASES, DISASSEMBLY_CASES, SEED, inputs=INPUT_CASES,
                            vm_tests=VM_TEST_CASES)


@pytest.fixture(scope="module")
def command_result(command_cases) -> "tuple[mc.CommandResult, float]":
    """The command campaign, forked from a fresh interpreter (each case's outcome kept, for the
    comparison with whole processes below), and its wall time."""
    t0 = time.monotonic()
    result = mc.command_campaign_in_fresh_process(command_cases)
    return result, time.monotonic() - t0


def test_every_command_ends_cleanly_within_a_gigabyte(command_cases, command_result, capsys):
    result, took = command_result
    with capsys.disabled():
        print(f"\ncommand campaign (seed {SEED}): {result.summary()} in {took:.0f} s (wall, loaded "
              f"machine)")
    assert len(result.outcomes) == len(command_cases)
    sizes = {k: sum(c.values()) for k, c in result.counts.items()}
    assert sizes == {"header": HEADER_CASES, "dwarf": DWARF_CASES, "disassemble": DISASSEMBLY_CASES,
                     "input": INPUT_CASES, "vmtest": VM_TEST_CASES}
    assert result.failures == 0, "\n".join(f"{o}: {what}\n{detail[-1500:]}" for o, what, detail in result.bad[:5])
    assert max(result.peaks.values()) <= mc.PEAK_LIMIT
    assert result.forks["frozen"] > 10_000 and not result.forks["compiler"], result.forks
    for kind, counts in result.counts.items():  # both answers are common: listings and refusals
        # (a VM test module's tests check their own values: a mutant fails one or more, cleanly)
        assert kind == "vmtest" or counts["ok"] >= sizes[kind] // 20, (kind, counts)
        assert counts["refused"] >= sizes[kind] // 20, (kind, counts)


def test_the_warm_up_leaves_the_cases_nothing_to_import(command_result):
    """What a forked case imports it imports anew, in every case (libclang's bindings, the
    loaders of foreign kernels, the disassembler, `ireeabi test`'s modules: each costs more than
    most cases' own work): the warm-up imports all of it once, before the forks."""
    assert command_result[0].imported == {k: [] for k in mc.COMMAND_KINDS}


def test_forked_commands_end_as_whole_processes_do(command_cases, command_result):
    """The campaign forks its commands from a warmed interpreter; `python -m ireeabi` started
    anew under the peak-RSS launcher gives each case the same outcome (three cases of each kind;
    their forked outcomes are the campaign's own, not a second forked run)."""
    sample = [i for kind in mc.COMMAND_KINDS
              for i in [i for i, c in enumerate(command_cases) if c.kind == kind][:3]]
    forked = [command_result[0].outcomes[i] for i in sample]
    whole = mc.command_campaign(cases=[command_cases[i] for i in sample])
    assert whole.outcomes == forked and not set(forked) & set(mc.FAILURES), (whole.outcomes, forked)
    assert set(forked) >= {"ok", "refused"}, forked


def test_the_command_cases_cover_every_hostile_shape_and_object(command_cases):
    what = " ".join(c.what for c in command_cases)
    for shape in ("macro(", "array(", "inline-nesting(", "named-nesting(", "members(",
                  "include(/dev/zero)", "self-include", "mutated(constructs.h)", "combined("):
        assert shape in what, shape
    dwarf = {c.what.split()[1] for c in command_cases if c.kind == "dwarf"}
    assert dwarf == {name for name, _, _ in mc.DWARF_BUILDS}
    parts = {c.what.split()[2] for c in command_cases if c.kind == "dwarf"}
    assert {".debug_info", ".debug_abbrev", ".debug_str", ".zdebug_info", "section"} <= parts, parts
    modules = {c.what.split()[1] for c in command_cases if c.kind == "disassemble"}
    assert {m.split(".")[0] for m in modules} == {p.stem for p, _, _ in mc.PROGRAMS}
    inputs = {c.what.split()[-1] for c in command_cases if c.kind == "input"}
    assert {f"value#{k}" for k in range(len(mc._HOSTILE_INPUTS))} | {"damaged"} == inputs
    vm_modules = {c.what.split()[1] for c in command_cases if c.kind == "vmtest"}
    assert vm_modules == set(mc.VM_TEST_FILES)
    assert {c.what.split()[2] for c in command_cases if c.kind == "vmtest"} == {"bytecode", "flatbuffer"}


def test_a_command_past_the_peak_limit_is_a_memory_failure(tmp_path):
    """The peak is the command's own (through the launcher), and a peak over the limit fails: an
    ordinary header's command peaks above 8 MiB (the interpreter alone), far below 1 GB."""
    case = mc.CommandCase("header", "plain", {"h.h": b"struct s { int a; };\n"},
                          ["layout", "s", "--header", "{dir}/h.h"])
    outcome, _, peak = mc.run_command(case, mc.CPU_LIMIT, 600.0, str(tmp_path))
    assert outcome == "ok" and 8 << 20 < peak < 256 << 20, (outcome, peak)
    assert mc.run_command(case, mc.CPU_LIMIT, 600.0, str(tmp_path), peak_limit=8 << 20)[0] == "memory"
