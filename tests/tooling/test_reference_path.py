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
# Each file, as many of its tests as the fast path runs (at least), in two child pytests that
# pytest-xdist spreads over its workers (about the same work each): a child's start-up (a new
# interpreter, the plugins, conftest) is 1.5-1.9 s of CPU, so fewer, larger children.
PROGRAM_TESTS = {
    "run_io_fidelity": {"tooling/test_run_io_fidelity.py": 290},
    "e2e-interpreter": {"tooling/test_e2e.py": 100, "vm/bytecode/test_interpreter.py": 90,
                        "vm/bytecode/test_interpreter_fidelity.py": 90},
}


@pytest.mark.parametrize("files", PROGRAM_TESTS.values(), ids=PROGRAM_TESTS.keys())
def test_program_tests_pass_on_the_reference_path(files: dict[str, int]) -> None:
    env = dict(os.environ, IREEABI_REFERENCE="1")
    argv = [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider",
            *(str(HERE / name) for name in files)]
    proc = subprocess.run(argv, cwd=HERE.parent, env=env, capture_output=True, text=True,
                          timeout=1800)
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-2000:]
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert not re.search(r"\d+ (skipped|failed|error)", summary), summary
    passed = re.findall(r"^PASSED tests/(\S+?)::", proc.stdout, re.M)
    assert len(passed) == int(re.search(r"(\d+) passed", summary).group(1)), summary
    for name, at_least in files.items():
        assert passed.count(name) >= at_least, (name, passed.count(name), summary)
