"""How the benchmarks find the tests' helpers (tests/support: `iree_tools` compiles with the suite's
cache and runs IREE's tools, `hal_programs`, `vm_ir`, `process_memory`): importing this module puts
the repository's tests/ folder on the import path, once, so that `from support import iree_tools`
works. A benchmark runs as `python benchmarks/bench_x.py`, which puts benchmarks/ on the path first,
where this module is."""
from __future__ import annotations

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))
