"""The benchmark scripts are run by hand, not timed in tests; this only checks that each still
imports what it uses and parses its options (`--help` runs after every import)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = sorted((Path(__file__).resolve().parent.parent / "benchmarks").glob("bench_*.py"))


def test_there_are_benchmarks() -> None:
    assert {p.name for p in BENCHMARKS} >= {"bench_cconv.py", "bench_marshal.py", "bench_dispatch.py",
                                            "bench_program.py"}


@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda p: p.name)
def test_benchmark_script_starts(script: Path) -> None:
    out = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert "usage:" in out.stdout
