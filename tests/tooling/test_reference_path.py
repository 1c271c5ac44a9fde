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

HERE = Path(__file__).resolve().parents[1]
PROGRAM_TESTS = ("tooling/test_e2e.py", "vm/bytecode/test_interpreter.py",
                 "vm/bytecode/test_interpreter_fidelity.py", "tooling/test_run_io_fidelity.py")


def test_program_tests_pass_on_the_reference_path() -> None:
    env = dict(os.environ, IREEABI_REFERENCE="1")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *(str(HERE / name) for name in PROGRAM_TESTS)],
                          cwd=HERE.parent, env=env, capture_output=True, text=True, timeout=1800)
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-2000:]
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    passed = re.search(r"(\d+) passed", summary)
    assert passed and int(passed.group(1)) > 300, summary
    assert not re.search(r"\d+ (skipped|failed|error)", summary), summary
