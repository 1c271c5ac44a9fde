"""Instructions per whole call of a program, counted by valgrind (callgrind): a number that does not
drift with the machine's load, for comparing two versions of ireeabi.

    python benchmarks/bench_instructions.py [--program counter|add16] [--model M] [--target T]
                                            [--tree DIR]

One process runs the call N times and another 10 N times under `valgrind --tool=callgrind`; the
difference over 9 N is the instructions of one call (start-up, compilation and loading cancel out).
numpy's BLAS threads are pinned to one (OPENBLAS_NUM_THREADS=1): its idle threads would add counts
that have nothing to do with the call. `--tree DIR` runs the ireeabi checked out in DIR (a git
worktree of another commit: its abi/, vm/, hal/... are put first on the module path) instead of
this one, so two versions are compared on the same inputs.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("abi", "layouts", "vm", "hal", "tooling", "cli")

# Runs one program N times: the body that the two counts differ by.
_CHILD = r'''
import sys
sys.path.insert(0, {tests!r})
import numpy as np
import iree_tools
from ireeabi.vm.heap import Heap
try:  # a tree from before ireeabi.tooling (tried first: this tree's tooling would load its own vm)
    from ireeabi.vm.interp.program import Program
except ImportError:
    from ireeabi.tooling.program import Program
source, function, elements, model, target, n = {source!r}, {function!r}, {elements}, {model!r}, {target!r}, {n}
heap = Heap(capture_stacks=False, quarantine=0, name="bench", **({{"target": target}} if target else {{}}))
p = Program(iree_tools.compile_mlir(source, model=model), heap=heap)
args = [1] if not elements else [p.buffer_view(np.full(elements, 1.5, np.float32)),
                                 p.buffer_view(np.full(elements, 2.0, np.float32))]
for _ in range(n):
    for v in p.context.invoke(function, *args):
        if not isinstance(v, (int, float)):
            p.buffers.release(v)
'''

PROGRAMS = {
    "counter": (ROOT / "tests" / "programs" / "e2e" / "counter.mlir", "next", 0),
    "add16": (ROOT / "tests" / "programs" / "add16.mlir", "add", 16),
}


def _tree_path(tree: "Path | None") -> list[str]:
    """The module path that makes `import ireeabi` find the tree's packages first."""
    if tree is None:
        return []
    pkg = Path(tempfile.mkdtemp(prefix="ireeabi-tree-")) / "ireeabi"
    pkg.mkdir()
    for name in PACKAGES:
        if (tree / name).is_dir():
            (pkg / name).symlink_to(tree / name)
    return [str(pkg.parent)]


def count(program: str, model: str, target: "str | None", n: int, tree: "Path | None") -> int:
    source, function, elements = PROGRAMS[program]
    code = _CHILD.format(tests=str(ROOT / "tests"), source=str(source), function=function,
                         elements=elements, model=model, target=target, n=n)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join(_tree_path(tree) + [os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                          sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=3600)
    if out.returncode != 0:
        raise SystemExit(f"the program failed under valgrind:\n{out.stderr[-3000:]}")
    m = re.search(r"Collected : (\d+)", out.stderr)
    if not m:
        raise SystemExit(f"no instruction count in valgrind's output:\n{out.stderr[-2000:]}")
    return int(m.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--program", choices=sorted(PROGRAMS), default="add16")
    ap.add_argument("--model", default="inline-dynamic")
    ap.add_argument("--target", default=None)
    ap.add_argument("--tree", type=Path, default=None, help="another checkout of ireeabi to measure")
    ap.add_argument("-n", type=int, default=0, help="calls in the shorter run (default: 20 for add16, "
                                                    "200 for counter)")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is needed (Debian: apt-get install valgrind)")
    n = args.n or (20 if PROGRAMS[args.program][2] else 200)
    short = count(args.program, args.model, args.target, n, args.tree)
    long = count(args.program, args.model, args.target, 10 * n, args.tree)
    per_call = (long - short) / (9 * n)
    where = f"tree {args.tree}" if args.tree else "this tree"
    print(f"{args.program} ({args.model}, {args.target or 'host'}), {where}: {per_call:,.0f} instructions "
          f"per call ({n} and {10 * n} calls counted)")


if __name__ == "__main__":
    main()
