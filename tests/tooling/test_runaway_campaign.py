"""The runaway campaign of tests/support/runaway_campaign.py in the suite (issue 41, item 6): seeded
mutants of the kernel libraries of x86_64 (embedded ELF, native), aarch64, armv7, riscv64, riscv32
(emulated) and wasm32 (wasmtime) builds through `run --max-steps`, `inspect --check-imports` and
`run --trace`; libraries that loop in their initializer, query or dispatches on every ISA through
`run` and `inspect`; and paths that are not regular files (/dev/zero, a FIFO, a directory, a 64 GiB
sparse file) for every option that reads or writes a file. Each case is one command in a process
of its own, forked from a fresh interpreter: it ends with exit 0, 1 or 2 and no traceback, no
signal, within the CPU limit (every kernel runs under a budget, so the verdict does not depend on
the machine's load), with its own peak RSS within the case's limit; each loop names
DEADLINE_EXCEEDED. The counts (outcomes, exit codes, refusals by kind) are printed."""
from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from support import hostile_kernels as hk
from support import runaway_campaign as rc

SEED = 20261207
MUTANTS = 90  # 15 per target: 5 through each command


@pytest.fixture(scope="module")
def cases() -> list:
    return rc.cases(SEED, MUTANTS)


def test_every_runaway_case_ends_cleanly_within_its_budget(cases, capsys):
    t0 = time.monotonic()
    result = rc.campaign_in_fresh_process(SEED, MUTANTS)
    took = time.monotonic() - t0
    with capsys.disabled():
        print(f"\nrunaway campaign (seed {SEED}): {result.summary()} in {took:.0f} s (wall, loaded machine)")
    sizes = {k: sum(c.values()) for k, c in result.counts.items()}
    assert sizes == {k: sum(1 for c in cases if c.kind == k) for k in rc.KINDS}
    assert result.failures == 0, "\n".join(f"{o}: {what}\n{detail[-1500:]}" for o, what, detail in result.bad[:5])
    assert set(result.exits["mutant"]) | set(result.exits["file"]) <= {0, 1, 2}
    # every loop a run reaches is refused with the budget's status (exit 1); inspect reports it in
    # its listing (exit 0, or 1 on i386, for the shim hazard its import check reports there too)
    assert set(result.refusals["loop"]) == {"DEADLINE_EXCEEDED"} and set(result.exits["loop"]) == {0, 1}
    assert result.exits["loop"][1] >= sum(1 for c in cases if c.kind == "loop" and c.argv[0] == "run")
    # both answers are common among mutants, and no file case is taken for an ordinary one
    assert result.counts["mutant"]["ok"] >= MUTANTS // 10 and result.counts["mutant"]["refused"] >= MUTANTS // 10
    assert result.counts["file"]["refused"] >= sizes["file"] * 3 // 4, result.counts["file"]


def test_the_cases_cover_every_target_command_loop_and_file_option(cases):
    mutants = [c for c in cases if c.kind == "mutant"]
    assert {(c.what.split()[0], c.what.split()[-1]) for c in mutants} == \
        {(t, cmd) for t in rc.MUTANT_TARGETS for cmd in rc.COMMANDS}
    parts = {" ".join(c.what.split()[1:-2]) for c in mutants}
    assert {"ELF header", "program headers", ".dynamic", ".text", "wasm header"} <= parts, parts
    trace = {a for c in mutants for a in c.argv if a.startswith("--trace")}
    assert trace == {"--trace=imports", "--trace=calls", "--trace=instructions", "--trace-file"}
    loops = {tuple(c.what.split()[:2]) for c in cases if c.kind == "loop"}
    from ireeabi.tooling.check_compile import KERNEL_TARGET_FLAGS
    assert loops == {(t, w) for t in KERNEL_TARGET_FLAGS for w in (hk.WASM_WHERE if t == "wasm32" else hk.ELF_WHERE)
                     if (t, w) != ("i386", "dispatch")}
    assert all(c.expect == "DEADLINE_EXCEEDED" for c in cases if c.kind == "loop")
    files = {c.what.rsplit(" ", 1)[1] for c in cases if c.kind == "file"}
    options = {c.what.rsplit(" ", 1)[0] for c in cases if c.kind == "file"}
    assert files == set(rc.NOT_REGULAR)
    assert {"--dwarf", "--header", "--header #include", "-I", "run module", "inspect module", "test module",
            "run --module", "--input=@", "--input=SHAPE=@", "--expected-output=@", "--native-module",
            "--output=@", "--trace-file", "--svg", "compile source", "compile -o", "compare module"} == options
    # `compile -o` for a FIFO alone (any other output is iree-compile's, after compiling)
    assert sum(1 for c in cases if c.kind == "file") == len(files) * len(options) - 3


# Run by a fresh interpreter, as the campaign's cases are: a case forked from an xdist worker
# starts with the worker's resident pages (1.5 GiB late in a suite run), not a command's own.
_VERDICTS = """
import json, sys
from support import runaway_campaign as rc
mods = {"x86_64": rc.kernel_modules()["x86_64"]}
(case,) = [c for c in rc.loop_cases(mods) if c.what == "x86_64 query run"]
case.files = {"m.vmfb": mods["x86_64"]}
first = rc.run_case(case, sys.argv[1])
case.expect, case.peak_limit = "", 1 << 20
second = rc.run_case(case, sys.argv[1])
print(json.dumps([first, second]))
"""


def test_a_loop_case_that_names_no_deadline_and_a_case_past_its_peak_fail(tmp_path):
    """The verdicts the campaign adds can fail: the unmutated x86_64 module given as a loop case
    ends without DEADLINE_EXCEEDED ("unexpected"), and a case's peak (the command's own, ~40
    MiB or more: the interpreter and ireeabi) above a limit of 1 MiB is "memory"."""
    proc = subprocess.run([sys.executable, "-c", _VERDICTS, str(tmp_path)], capture_output=True,
                          text=True, cwd=rc.TESTS)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (outcome, code, _, peak, detail), second = json.loads(proc.stdout.splitlines()[-1])
    assert (outcome, code) == ("unexpected", 0), detail
    assert 16 << 20 < peak < rc.PEAK_LIMIT
    assert second[0] == "memory"
