"""The tests' memory of real tools' answers (tests/support/iree_tools.run_tool): a run is done once
per key and its answer read back after, including a run a signal ended when it ran under
`setarch -R` (IREE's runtime built from source crashes there, deterministically without address
randomization: tests/tooling/test_oracle_differential.py's pre-fix runs); a crash with address
randomization on is run again every time, since its outcome can change from run to run. And the
compiler's binary is found without loading the compiler's library into the test process."""
from __future__ import annotations

import shutil
import signal
from pathlib import Path

import pytest

from support import iree_tools as tools


@pytest.fixture
def answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty answer cache of this test's own."""
    monkeypatch.setenv(tools.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path


def _crashing(counter: Path, *prefix: str) -> list[str]:
    """A program that counts its runs in `counter`, prints, then dies of SIGSEGV."""
    return [*prefix, "/bin/sh", "-c", f"echo run >> {counter}; echo out; kill -SEGV $$"]


def test_a_crash_under_setarch_R_is_run_once(answers):
    counter = answers / "runs"
    argv = _crashing(counter, shutil.which("setarch"), "-R")
    first, second = tools.run_tool(argv), tools.run_tool(argv)
    assert first.returncode == second.returncode == -signal.SIGSEGV
    assert first.stdout == second.stdout == "out\n"
    assert counter.read_text().count("run") == 1


def test_a_crash_with_randomization_on_is_run_every_time(answers):
    counter = answers / "runs"
    argv = _crashing(counter)
    assert [tools.run_tool(argv).returncode for _ in range(2)] == [-signal.SIGSEGV] * 2
    assert counter.read_text().count("run") == 2


def test_an_exit_is_run_once(answers):
    counter = answers / "runs"
    argv = ["/bin/sh", "-c", f"echo run >> {counter}; echo out; exit 3"]
    assert [tools.run_tool(argv).returncode for _ in range(2)] == [3, 3]
    assert counter.read_text().count("run") == 1


@pytest.mark.parametrize("argv,expected", [
    (["prlimit", "--core=0", "/usr/bin/setarch", "-R", "qemu-arm", "x"], True),
    (["setarch", "x86_64", "-R", "x"], True),
    (["setarch", "--addr-no-randomize", "x"], True),
    (["setarch", "x86_64", "x", "-R"], False),
    (["qemu-arm", "-R", "x"], False),
])
def test_without_aslr_reads_setarch_options(argv, expected):
    assert tools.without_aslr(argv) is expected


def test_the_tool_log_counts_runs_and_answers_read_back(answers, monkeypatch):
    """IREEABI_TOOL_LOG: a line per call, "run" for the one that ran the program (its CPU seconds),
    "hit" for the one the cache answered, both under the same key; a run without a key (one with
    a working folder of its own) logs "-" as its key."""
    log = answers / "tools.tsv"
    monkeypatch.setenv(tools.TOOL_LOG_ENV, str(log))
    argv = ["/bin/sh", "-c", "echo out; exit 3"]
    tools.run_tool(argv), tools.run_tool(argv), tools.run_tool(argv, cwd=answers)
    rows = [line.split("\t") for line in log.read_text().splitlines()]
    assert [(r[0], r[4]) for r in rows] == [("run", "3"), ("hit", "3"), ("run", "3")]
    assert rows[0][3] == rows[1][3] != "-" and rows[2][3] == "-" and float(rows[1][1]) == 0.0
    assert rows[0][6] == "sh -c echo out; exit 3"


def test_the_compilers_binary_is_found_without_loading_the_compiler():
    """find_tool("iree-compile") gives the binary iree-base-compiler's own lookup gives, without
    importing the `iree.compiler` package, whose libIREECompiler.so took 56 MB of every xdist
    worker's resident set (a fresh interpreter, tests/ on its path)."""
    import subprocess
    import sys
    script = ("import os, sys\n"
              "from support import iree_tools\n"
              "found = iree_tools.find_tool('iree-compile')\n"
              "loaded = 'iree.compiler' in sys.modules or any('libIREECompiler' in line for line in open('/proc/self/maps'))\n"
              "from iree.compiler.tools.binaries import find_tool\n"
              "print(found == os.path.normpath(find_tool('iree-compile')), loaded)\n")
    out = subprocess.run([sys.executable, "-c", script], cwd=Path(__file__).resolve().parent,
                         capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "False"], out
