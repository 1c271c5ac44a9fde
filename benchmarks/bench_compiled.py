"""Does compiling the model to C (Cython) bring the program benchmark near its targets? (run by hand)

    pip install cython
    python benchmarks/bench_compiled.py [--pairs N] [--rounds N] [--modules all|hot]

Copies the installed ireeabi sources to a temporary directory, compiles them there with Cython
(plain Python in, one extension module per file out: the same code, no C of ours), then runs
bench_program's own measurement (`ireeabi_ms`: whole `add`/`next` calls, heap without stacks or
quarantine) once on the pure-Python package and once on the compiled copy, alternately, in fresh
processes. Each child prints which file its `ireeabi.base.heap` came from, so a run that silently fell
back to the .py files shows.

`--modules hot` compiles the 15 modules the add16 profile spends its time in; `all` (default) every
module of vm/, vm/bytecode/ and hal/. Type annotations are not used as C types
(annotation_typing=False): the package's annotations are documentation, and some name ctypes
metaclasses Cython would enforce.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
HOT = ("base/heap.py", "vm/ref.py", "base/allocator.py", "vm/native_module.py", "vm/shims.py", "vm/buffer.py",
       "base/callbacks.py", "base/status.py", "vm/context.py", "vm/bytecode/dispatch.py", "modules/hal/inline.py",
       "modules/hal/loader.py", "hal/buffer.py", "hal/buffer_view.py", "hal/resource.py",
       "hal/local/elf_executable.py")
# Cython 3.3.1 emits C that does not compile for this one (a closure scope it never declares); it is
# not on the per-call path.
UNCOMPILABLE = frozenset({"base/internal/cpu.py"})


def _packages() -> dict[str, Path]:
    """ireeabi's subpackages and the folders they are installed from."""
    import importlib
    names = ("abi", "layouts", "vm", "hal", "cli")
    return {n: Path(importlib.import_module(f"ireeabi.{n}").__file__).parent for n in names}


def build(root: Path, which: str) -> None:
    pkg = root / "ireeabi"
    for name, src in _packages().items():
        shutil.copytree(src, pkg / name, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    if which == "hot":
        files = [pkg / f for f in HOT]
    else:
        files = [p for d in ("vm", "hal") for p in sorted((pkg / d).rglob("*.py"))
                 if p.name != "__init__.py" and p.relative_to(pkg).as_posix() not in UNCOMPILABLE]
    cmd = [sys.executable, "-m", "Cython.Build.Cythonize", "-i", "-3", "-j", str(os.cpu_count() or 1),
           "-X", "annotation_typing=False", *map(str, files)]
    out = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"cythonize failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    built = [p for d in ("abi", "layouts", "vm", "hal", "cli") for p in (pkg / d).rglob("*.so")]
    if len(built) != len(files):
        sys.exit(f"expected {len(files)} extension modules, cythonize built {len(built)}")
    print(f"compiled {len(built)} modules in {root}")


def child(name: str, rounds: int) -> None:
    sys.path.insert(0, str(HERE))
    import bench_program as bp
    from support import iree_tools
    from ireeabi.base import heap
    bench = bp.PROGRAMS[name]
    vmfb = iree_tools.compile_mlir(bench.source, model="inline-dynamic")
    median, _ = bp.ireeabi_ms(vmfb, bench, bp._rounds(bench, rounds), heap="bare")
    print(Path(heap.__file__).name, median)


def run_child(name: str, rounds: int, root: Path | None) -> tuple[str, float]:
    env = dict(os.environ)
    if root is not None:  # ahead of the editable install's finder
        env["PYTHONPATH"] = os.pathsep.join([str(root), env.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, __file__, "--child", name, "--rounds", str(rounds)],
                         env=env, capture_output=True, text=True, check=True, cwd=tempfile.gettempdir())
    source, ms = out.stdout.split()[-2:]
    return source, float(ms)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=400)
    ap.add_argument("--modules", choices=("all", "hot"), default="all")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.rounds)
        return
    with tempfile.TemporaryDirectory(prefix="ireeabi-cython-") as tmp:
        root = Path(tmp)
        build(root, args.modules)
        print("whole call, inline-dynamic, ms (medians of alternating pairs)")
        for name in ("counter", "add16", "add1m"):
            pure, compiled = [], []
            for _ in range(args.pairs):
                src_p, p = run_child(name, args.rounds, None)
                src_c, c = run_child(name, args.rounds, root)
                assert src_p == "heap.py" and src_c.endswith(".so"), (src_p, src_c)
                pure.append(p)
                compiled.append(c)
            speedups = sorted(p / c for p, c in zip(pure, compiled))
            print(f"  {name:8s} python {statistics.median(pure):8.4f}  cython {statistics.median(compiled):8.4f}"
                  f"  speedup {statistics.median(speedups):.2f}x ({speedups[0]:.2f}-{speedups[-1]:.2f})")


if __name__ == "__main__":
    main()
