"""The program tests on the reference path as well (issue 14): the suite runs them on the fast path
(compiled blocks, planned import call sites); here the same files run again in a child pytest with
IREEABI_REFERENCE=1, which makes every Context run the per-instruction handlers and the layered
import calls (test_compiled_blocks.py checks that the variable does that).

tests/tooling/test_target_runs.py is not among them: it records the argument buffers the planned call sites pack,
which the reference path does not make; tests/vm/bytecode/test_compiled_blocks.py compares both paths' memory
on a 32-bit target instead."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parents[1]
# Each file, as many of its tests as the fast path runs (at least): one child pytest per item, so
# that pytest-xdist spreads them; test_run_io_fidelity.py, the longest, in halves (`-k`).
PROGRAM_TESTS = {
    "e2e": ("tooling/test_e2e.py", None, 100),
    "interpreter": ("vm/bytecode/test_interpreter.py", None, 90),
    "interpreter_fidelity": ("vm/bytecode/test_interpreter_fidelity.py", None, 90),
    "run_io_fidelity-prints": ("tooling/test_run_io_fidelity.py",
                               "test_prints_what_iree_run_module_prints", 140),
    "run_io_fidelity-rest": ("tooling/test_run_io_fidelity.py",
                             "not test_prints_what_iree_run_module_prints", 150),
}


@pytest.mark.parametrize("name,select,at_least", PROGRAM_TESTS.values(), ids=PROGRAM_TESTS.keys())
def test_program_tests_pass_on_the_reference_path(name: str, select: str | None,
                                                  at_least: int) -> None:
    env = dict(os.environ, IREEABI_REFERENCE="1")
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(HERE / name)]
    if select is not None:
        argv += ["-k", select]
    proc = subprocess.run(argv, cwd=HERE.parent, env=env, capture_output=True, text=True,
                          timeout=1800)
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-2000:]
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    passed = re.search(r"(\d+) passed", summary)
    assert passed and int(passed.group(1)) >= at_least, summary
    assert not re.search(r"\d+ (skipped|failed|error)", summary), summary
