"""What the execution trace machinery costs when tracing is off: add16's per-call time on the fast
path with this tree (the trace hooks present, `trace=None`) against another ireeabi (by default the
one the plain `python` on PATH imports: the main tree), and, for scale, this tree with the import
trace on.

    python benchmarks/bench_trace.py [--baseline PYTHON] [--rounds N] [--calls N]

Each side runs in its own interpreter (`python -c`), alternately, `--rounds` times: each round makes
a Program on tests/programs/add16.mlir (inline-dynamic, host kernels), warms it up, and times
`--calls` calls of `add` (two 16-element f32 buffer views made once). Reported: the median per-call
time of each side over the rounds, and the median of the per-round ratios (this tree / baseline).
Wall-clock numbers on a shared machine: they are labelled "loaded" unless `--quiet-machine` says the
machine was otherwise idle.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
import tests_support  # noqa: E402,F401 - tests/ on the import path, for `support`

from support import iree_tools  # noqa: E402

CHILD = r"""
import json, sys, time
import numpy as np
from ireeabi.tooling.program import Program
path, calls, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
kw = {} if mode == "off" else {"trace": mode}
with Program(path, **kw) as p:
    a = p.buffer_view(np.full(16, 1.5, np.float32))
    b = p.buffer_view(np.full(16, 2.0, np.float32))
    for _ in range(50):
        p.call("add", a, b)
    if getattr(p, "trace", None) is not None:  # the baseline has no trace attribute
        p.trace.events.clear()
    best = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(calls):
            p.call("add", a, b)
        best.append((time.perf_counter() - t0) / calls)
        if getattr(p, "trace", None) is not None:
            p.trace.events.clear()
    import ireeabi.vm
    print(json.dumps({"per_call": min(best), "tree": ireeabi.vm.__file__}))
    from ireeabi.vm.ref import release_value
    release_value(p.heap, a)
    release_value(p.heap, b)
"""


def _run(python: str, path: Path, calls: int, mode: str) -> dict:
    out = subprocess.run([python, "-c", CHILD, str(path), str(calls), mode], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default="python", help="interpreter whose ireeabi is the baseline")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--quiet-machine", action="store_true",
                    help="the machine was otherwise idle (else the numbers are labelled loaded)")
    args = ap.parse_args()
    path = iree_tools.compile_mlir(ROOT / "tests" / "programs" / "add16.mlir", model="inline-dynamic")
    ours, base, traced, ratios = [], [], [], []
    trees = {}
    for _ in range(args.rounds):
        b = _run(args.baseline, path, args.calls, "off")
        o = _run(sys.executable, path, args.calls, "off")
        t = _run(sys.executable, path, max(args.calls // 10, 10), "imports")
        trees = {"this tree": o["tree"], "baseline": b["tree"]}
        ours.append(o["per_call"])
        base.append(b["per_call"])
        traced.append(t["per_call"])
        ratios.append(o["per_call"] / b["per_call"])
    label = "" if args.quiet_machine else " (loaded machine: shared with other jobs)"
    print(f"add16 per call, fast path, tracing off{label}:")
    print(f"  this tree {trees['this tree']}")
    print(f"  baseline  {trees['baseline']}")
    print(f"  this tree: median {statistics.median(ours) * 1e6:8.1f} us")
    print(f"  baseline:  median {statistics.median(base) * 1e6:8.1f} us")
    print(f"  ratio this/baseline: median {statistics.median(ratios):.3f} "
          f"(per round: {', '.join(f'{r:.3f}' for r in ratios)})")
    print(f"  for scale, import trace on (reference path, events kept): median "
          f"{statistics.median(traced) * 1e6:8.1f} us per call")


if __name__ == "__main__":
    main()
