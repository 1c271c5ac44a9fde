"""examples/custom_module through the registered pytest plugin, as a user runs it: a fresh pytest
process in the example's folder, no conftest and no `-p` flag (the fixtures come from the
`pytest11` entry point of the installed package)."""
from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "custom_module"


def _pytest(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
                          cwd=EXAMPLE, capture_output=True, text=True, timeout=300)


def test_the_plugin_is_registered():
    eps = {e.name: e.value for e in importlib.metadata.entry_points(group="pytest11")}
    assert eps.get("ireeabi") == "ireeabi.tooling.testing"


def test_the_examples_pass_through_the_registered_plugin():
    assert not (EXAMPLE / "conftest.py").exists()
    r = _pytest("-rx", ".")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "8 passed, 2 xfailed" in r.stdout, r.stdout
    assert "XFAIL test_accumulate.py::test_prefix_reader_misreads_the_spans" in r.stdout


def test_the_wrong_shim_test_alone_shows_its_failure():
    r = _pytest("-k", "prefix_reader_misreads", "--runxfail", ".")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "2 failed" in r.stdout
    assert "INVALID_ARGUMENT: span lengths differ: 1 and 3" in r.stdout  # a first element read as a count
    assert "while invoking native function accumulate.dot" in r.stdout
