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

`--cache` counts last-level cache misses instead, with callgrind's cache simulator set to this
machine's per-core caches (L1i, L1d, and the L2 as the last level: the L3 is shared with the other
core): instruction-fetch and data-read misses per call, on the heap the
ratios are measured on (`--heap no-stacks`, bench_program.py's HEAPS). `--evict MIB` writes that
many MiB of other memory before each call, as add1m's zero-fill and kernel do before its imports;
two more runs count the evictions alone, which are subtracted. The read misses the eviction adds are
the cold-cache cost of a call, counted rather than timed (write misses are told only without an
eviction: the eviction's own depend on how much of its buffer the call displaced).
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

from bench_program import HEAPS

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("abi", "layouts", "vm", "hal", "tooling", "cli")

# Runs one program N times: the body that the two counts differ by.
_CHILD = r'''
import sys
sys.path.insert(0, {tests!r})  # the measured tree's tests/, for its helpers
import numpy as np
try:
    from support import iree_tools
except ImportError:  # a tree from before tests/support
    import iree_tools
from ireeabi.base.heap import Heap
try:  # a tree from before ireeabi.tooling (tried first: this tree's tooling would load its own vm)
    from ireeabi.vm.bytecode.program import Program
except ImportError:
    from ireeabi.tooling.program import Program
source, function, elements, model, target, n = {source!r}, {function!r}, {elements}, {model!r}, {target!r}, {n}
heap = Heap(name="bench", **{heap_kwargs!r}, **({{"target": target}} if target else {{}}))
p = Program(iree_tools.compile_mlir(source, model=model), heap=heap)
args = [1] if not elements else [p.buffer_view(np.full(elements, 1.5, np.float32)),
                                 p.buffer_view(np.full(elements, 2.0, np.float32))]
evict = {evict}
if evict:
    import ctypes
    other = ctypes.create_string_buffer(evict)
for _ in range(n):
    if evict:
        ctypes.memset(other, 1, evict)
    if not {call}:  # the eviction alone: its own counts, subtracted
        continue
    for v in p.context.invoke(function, *args):
        if not isinstance(v, (int, float)):
            p.buffers.release(v)
'''

PROGRAMS = {
    "counter": (ROOT / "tests" / "programs" / "e2e" / "counter.mlir", "next", 0),
    "add16": (ROOT / "tests" / "programs" / "add16.mlir", "add", 16),
}

# Heap settings are bench_program.py's HEAPS: instructions are counted on the bare heap (the numbers
# in benchmarks/RESULTS.md are), cache misses on the heap the ratios use (no-stacks).
# callgrind's events with --cache-sim=yes, in the order of its "Collected :" line.
CACHE_EVENTS = ("Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw")


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


def _cache_options() -> list[str]:
    """callgrind's --I1/--D1/--LL for this machine's cpu0: its L1 caches, and its L2 as the last
    level."""
    caches = {}
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        level, kind = (index / "level").read_text().strip(), (index / "type").read_text().strip()
        size = (index / "size").read_text().strip()
        if not size.endswith("K"):
            raise SystemExit(f"unexpected cache size {size!r} in {index}")
        caches[(level, kind)] = (f"{int(size[:-1]) * 1024},{(index / 'ways_of_associativity').read_text().strip()},"
                                 f"{(index / 'coherency_line_size').read_text().strip()}")
    try:
        return [f"--I1={caches[('1', 'Instruction')]}", f"--D1={caches[('1', 'Data')]}",
                f"--LL={caches[('2', 'Unified')]}"]
    except KeyError as e:
        raise SystemExit(f"no {e.args[0]} cache described under /sys/devices/system/cpu/cpu0/cache") from None


def count(program: str, model: str, target: "str | None", n: int, tree: "Path | None",
          heap: str = "bare", evict: int = 0, cache: bool = False, call: bool = True) -> dict[str, int]:
    """callgrind's event totals for `n` calls (Ir only, or CACHE_EVENTS with `cache`); without
    `call`, for the `n` evictions alone."""
    source, function, elements = PROGRAMS[program]
    code = _CHILD.format(tests=str(ROOT / "tests"), source=str(source), function=function,
                         elements=elements, model=model, target=target, n=n, heap_kwargs=HEAPS[heap],
                         evict=evict, call=call)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join(_tree_path(tree) + [os.environ.get("PYTHONPATH", "")]))
    options = ["--cache-sim=yes", *_cache_options()] if cache else []
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *options,
                          sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=3600)
    if out.returncode != 0:
        raise SystemExit(f"the program failed under valgrind:\n{out.stderr[-3000:]}")
    m = re.search(r"Collected : ([\d ]+)", out.stderr)
    events = CACHE_EVENTS if cache else CACHE_EVENTS[:1]
    if not m or len(m.group(1).split()) != len(events):
        raise SystemExit(f"no event counts in valgrind's output:\n{out.stderr[-2000:]}")
    return dict(zip(events, map(int, m.group(1).split())))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--program", choices=sorted(PROGRAMS), default="add16")
    ap.add_argument("--model", default="inline-dynamic")
    ap.add_argument("--target", default=None)
    ap.add_argument("--tree", type=Path, default=None, help="another checkout of ireeabi to measure")
    ap.add_argument("-n", type=int, default=0, help="calls in the shorter run (default: 20 for add16, "
                                                    "200 for counter)")
    ap.add_argument("--cache", action="store_true", help="count last-level cache misses (see above)")
    ap.add_argument("--heap", choices=sorted(HEAPS), default=None,
                    help="heap settings (default: bare for instructions, no-stacks with --cache)")
    ap.add_argument("--evict", type=int, default=0, metavar="MIB",
                    help="MiB of other memory written before each call")
    args = ap.parse_args()
    if args.evict < 0:
        ap.error(f"--evict takes a number of MiB, not {args.evict}")
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is needed (Debian: apt-get install valgrind)")
    n = args.n or (20 if PROGRAMS[args.program][2] else 200)
    heap = args.heap or ("no-stacks" if args.cache else "bare")
    evict = args.evict << 20
    runs = [(n, True), (10 * n, True)] + ([(n, False), (10 * n, False)] if evict else [])
    short, long, *alone = [count(args.program, args.model, args.target, k, args.tree, heap, evict, args.cache,
                                 call) for k, call in runs]
    per_call = {e: (long[e] - short[e] - (alone[1][e] - alone[0][e] if alone else 0)) / (9 * n) for e in long}
    where = f"tree {args.tree}" if args.tree else "this tree"
    what = f"{args.program} ({args.model}, {args.target or 'host'}, {heap} heap"
    what += f", {args.evict} MiB written before each call), " if args.evict else "), "
    if args.cache:
        size, ways, _ = _cache_options()[-1][len("--LL="):].split(",")
        # With an eviction, the eviction's own write misses depend on how much of its buffer the
        # call displaced: they do not cancel out, so write misses are only told without one.
        writes = "" if evict else f" and {per_call['DLmw']:,.0f} data-write"
        print(f"{what}{where}: {per_call['ILmr']:,.0f} instruction-fetch, {per_call['DLmr']:,.0f} "
              f"data-read{writes} misses of the simulated L2 ({int(size) >> 10} KiB, {ways}-way) per call "
              f"({n} and {10 * n} calls counted{', less the evictions alone' if evict else ''})")
    else:
        print(f"{what}{where}: {per_call['Ir']:,.0f} instructions per call ({n} and {10 * n} calls counted)")


if __name__ == "__main__":
    main()
