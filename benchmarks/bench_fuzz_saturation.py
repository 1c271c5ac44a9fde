"""How much of ireeabi the hypothesis fuzz tests of tests/vm/test_vm_fuzz.py reach, against their
example counts: whether a count can be cut without losing what the test reaches.

    pip install coverage
    python benchmarks/bench_fuzz_saturation.py [--tests NAME,...] [--fractions 0.25,0.5,1,2]

For each test and each fraction of its example count (FUZZ_CASES), a fresh process runs the test
with that many examples under coverage.py (branch coverage of the product packages) and prints a
JSON line: the examples, the arcs and lines reached, the distinct refusals (the ireeabi error's
type and message with numbers replaced, for tests whose cases end in run_case), and the CPU time.
A fresh process per point, so that one-time work (generated code, memos) counts in every point
the same way. Coverage.py does not see the code the shims generate at run time (exec'd text).
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("abi", "layouts", "base", "vm", "hal", "modules")
TESTS = ("test_fuzz_shims_with_random_bytes", "test_fuzz_shims_with_mutated_valid_buffers",
         "test_fuzz_vm_calls_with_forged_refs", "test_fuzz_planned_calls_with_forged_refs",
         "test_fuzz_planned_and_layered_calls_agree", "test_fuzz_buffer_ops")


def measure(name: str, fraction: float) -> dict[str, object]:
    """One point, in this process: run the test with `fraction` of its examples under coverage."""
    import coverage
    from hypothesis import settings

    sys.path.insert(0, str(ROOT / "tests"))
    import vm.test_vm_fuzz as fuzz
    from ireeabi.abi.errors import IreeAbiError

    refusals: set[str] = set()
    run_case = fuzz.run_case

    def recording_run_case(world, fn, check=None):  # noqa: ANN001, ANN202
        def case() -> None:
            try:
                fn()
                refusals.add("ok")
            except IreeAbiError as e:
                refusals.add(type(e).__name__ + ": " + re.sub(r"0x[0-9a-fA-F]+|-?\d+", "N", str(e))[:160])
                raise
        return run_case(world, case, check)

    fuzz.run_case = recording_run_case
    test = getattr(fuzz, name)
    base = test._hypothesis_internal_use_settings
    n = max(1, int(base.max_examples * fraction))
    test._hypothesis_internal_use_settings = settings(base, max_examples=n)
    cov = coverage.Coverage(branch=True, source=[str(ROOT / p) for p in PRODUCT], data_file=None)
    start = time.process_time()
    cov.start()
    try:
        test()
    finally:
        cov.stop()
    data = cov.get_data()
    files = data.measured_files()
    return {"test": name, "examples": n, "arcs": sum(len(data.arcs(f) or ()) for f in files),
            "lines": sum(len(data.lines(f) or ()) for f in files), "refusals": len(refusals),
            "cpu_s": round(time.process_time() - start, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", default=",".join(TESTS))
    parser.add_argument("--fractions", default="0.25,0.5,1,2")
    parser.add_argument("--one", nargs=2, metavar=("TEST", "FRACTION"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one[0], float(args.one[1]))), flush=True)
        return
    for name in args.tests.split(","):
        for fraction in args.fractions.split(","):
            subprocess.run([sys.executable, __file__, "--one", name, fraction], check=True)


if __name__ == "__main__":
    main()
