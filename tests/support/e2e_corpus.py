"""The differential corpus of whole programs (tests/programs/e2e): its cases, compiled modules and
how ireeabi's output is made for a case, shared by the host tests (test_e2e.py) and the seven-target
runs (test_target_runs.py).
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from . import iree_tools as tools
from ireeabi.tooling.program import Program
from ireeabi.tooling.function_io import format_results, parse_input
from ireeabi.vm.bytecode.module_file import read_module

TESTS = Path(__file__).resolve().parents[1]
E2E = TESTS / "programs" / "e2e"
MODELS = ("inline-dynamic", "inline-static")
F64 = ("--iree-input-demote-f64-to-f32=false",)


def _floats(values) -> str:
    return " ".join(repr(float(v)) for v in np.asarray(values, dtype=np.float32).reshape(-1))


_rng = np.random.default_rng(7)
_A48 = _rng.standard_normal(32).astype(np.float32)
_B24 = (_rng.standard_normal(24) * 3).astype(np.float32)
_X37 = np.linspace(-2, 3, 37, dtype=np.float32)

# (program, function, inputs): each run by both tools on both execution models.
CASES = [
    ("elementwise", "mul_add", ["3x4xf32=1 2 3 4 5 6 7 8 9 10 11 12", "3x4xf32=0.5"]),
    # %G formatting: 1E+20, NAN and -NAN, INF, -0, tiny and huge values.
    ("elementwise", "mul_add", ["3x4xf32=[0.1 1e20 -0 nan][-nan inf 1e-7 3.4e38][7 8 9 10]",
                                "3x4xf32=[3 2 -1 1][1 -1 1e-30 2][0.25 0.5 1e-3 1e3]"]),
    ("reduction", "sum", ["64xf32=0.1"]),
    ("reduction", "sum", ["64xf32=" + _floats(np.arange(64) * 0.37 - 5)]),
    ("reduction", "row_sums", ["4x8xf32=[1 2 3 4 5 6 7 8][1 1 1 1 1 1 1 1]"
                               "[0.5 0.25 0 0 0 0 0 1e10][-1 -2 -3 -4 -5 -6 -7 -8]"]),
    ("matmul", "matmul", ["4x8xf32=" + _floats(_A48), "8x3xf32=" + _floats(_B24)]),
    ("matmul", "matmul", ["4x8xf32=1", "8x3xf32=[0.5 1 2][1 1 1][0 0 0][1 2 3][4 5 6][7 8 9]"
                                       "[-1 -1 -1][0.125 0.25 0.5]"]),
    # Push constants: the dynamic length and both scalars reach the kernel as constants.
    ("push_constants", "affine", ["5xf32=1,2,3,4,5", "2.5", "-1"]),
    ("push_constants", "affine", ["37xf32=" + _floats(_X37), "1.1", "0x1p-3"]),
    # 2000 elements: iree-run-module prints the first 1024, then `...`.
    ("push_constants", "affine", ["2000xf32=0.5", "3", "1e-3"]),
    ("multi_dispatch", "normalize", ["16xf32=1", "16xf32=2"]),
    ("multi_dispatch", "normalize", ["16xf32=" + _floats(np.arange(16)),
                                     "16xf32=" + _floats(np.arange(16) ** 2 * 0.01)]),
    ("dynamic", "transpose_inc", ["2x3xi32=1 2 3 4 5 6"]),
    ("dynamic", "transpose_inc", ["4x1xi32=[7][8][-9][2147483647]"]),  # i32 wraps
    # 40x60 -> 60x40: rows after the 1024th element print as [...].
    ("dynamic", "transpose_inc", ["40x60xi32=" + " ".join(str(i * 7 - 900) for i in range(2400))]),
    ("results", "stats", ["8xf32=1 -2 3 -4 5 -6 7 -8", "8xf32=0", "14"]),
    ("results", "stats", ["8xf32=1 nan 3 -4 5 -0 inf -8", "8xf32=0 1 nan -5 -inf 0 1 2", "0x10"]),
    ("scalars", "wide", ["4xf64=1 2 3 0.1", "0.5", "3"]),
    ("scalars", "wide", ["4xf64=1e300 -1e-300 nan 0.3", "-2.25", "-9223372036854775807"]),
    ("int_ops", "mix", ["8xi32=1 2 3 4 5 6 7 -8", "8xi32=100"]),
    ("int_ops", "add64", ["3xi64=1 2 9223372036854775807", "3xi64=5"]),
    ("trap", "div_scale", ["4xf32=1 2 3 4", "7", "2"]),
    # Input parsing and result printing of each kind (identity functions).
    ("io_types", "f32s", ["3.4e39"]), ("io_types", "f32s", ["-nan"]),
    ("io_types", "f32s", ["1.00000005960464477539"]),  # a tie: strtof rounds to even
    ("io_types", "f32s", ["2.5abc"]),  # strtof stops at the first bad character
    ("io_types", "f64s", ["2.5e-320"]), ("io_types", "f64s", ["123456.5"]),
    ("io_types", "i32s", ["0x7fffffff"]), ("io_types", "i32s", ["4294967295"]),
    ("io_types", "i32s", ["010"]), ("io_types", "i64s", ["-0x10"]),
    ("io_types", "ti1", ["3xi1=01 00 01"]), ("io_types", "ti8", ["4xi8=1 -1 127 255"]),
    ("io_types", "ti16", ["3xi16=-5 65535 7"]), ("io_types", "tf16", ["4xf16=nan -inf 1e-7 70000"]),
    ("io_types", "tf64", ["3xf64=0.1 1e300 123456.5"]), ("io_types", "t0d", ["f32=2.5"]),
    ("io_types", "t3d", ["2x2x3xf32=1 2 3 4 5 6 7 8 9 10 11 12"]),
    ("io_types", "t3d", ["2x3x400xf32=1"]), ("io_types", "t3d", ["2x0x2xf32="]),
    ("io_types", "tf32", ["1025xf32=1"]), ("io_types", "tf32", ["1024xf32=1"]),
    ("io_types", "tf32", ['"2xf32=1 2"']), ("io_types", "tf32", ["2xf32=1;2"]),
    ("io_types", "tf32", ["3xf32"]), ("io_types", "tf32", ["0xf32="]),
]


def compile_all() -> dict[tuple[str, str], Path]:
    """Every corpus program for both models (compiled once per run, up to two at a time)."""
    jobs = [(src, model) for src in sorted(E2E.glob("*.mlir")) for model in MODELS]
    paths = tools.map_compiles(lambda j: tools.compile_mlir(j[0], model=j[1], extra_flags=F64), jobs)
    return {(src.stem, model): path for (src, model), path in zip(jobs, paths)}


def kernel_target_free(path: Path) -> bool:
    """Whether the module at `path` imports nothing and holds no read-only data: no HAL module, no
    executable, no device target's text (a module with executables keeps its target's triple in
    its rodata), so nothing a kernel target's flags (triple, CPU features) reach. iree-compile then
    makes it the same bytes for every kernel target (the premise tests of test_oracle_differential
    and test_foreign_kernels compare them), and the host's compile serves every target."""
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)  # a compile cache's file is written once
    free = _TARGET_FREE.get(key)
    if free is None:
        module = read_module(path)
        free = _TARGET_FREE[key] = not module.imported_functions and not module.rodata_segments
    return free


_TARGET_FREE: dict[tuple[str, int, int], bool] = {}  # kernel_target_free's memo (asked per question)


@lru_cache(maxsize=None)
def iree_output(path: Path, function: str, inputs: tuple[str, ...]) -> str:
    """iree-run-module's stdout for a case (cached: several tests compare against it)."""
    return tools.run_module(path, function, list(inputs))


def ours(program: Program, function: str, inputs: list[str]) -> str:
    chars, _ = program.signature(function)
    values = [parse_input(text, char) for text, char in zip(inputs, chars)]
    return f"EXEC @{function}\n" + format_results(program.call_results(function, *values))




def compile_models(models: "tuple[str, ...]", skip: "frozenset[str] | set[str]" = frozenset()
                   ) -> dict[tuple[str, str], Path]:
    """Every corpus program (but those in `skip`) for each of `models`: (program, model) -> .vmfb."""
    jobs = [(src, model) for src in sorted(E2E.glob("*.mlir")) for model in models if src.stem not in skip]
    paths = tools.map_compiles(lambda j: tools.compile_mlir(j[0], model=j[1], extra_flags=F64), jobs)
    return {(src.stem, model): path for (src, model), path in zip(jobs, paths)}


def programs_on_one_heap(compiled: dict[tuple[str, str], Path]):
    """A fixture body: yields get(name, model), one Program per (program, model) on one tracked
    heap, opened on first use; closing them must leave the heap as it was."""
    from ireeabi.base.heap import tracked_heap
    opened: dict = {}
    with tracked_heap() as heap:
        mark = heap.mark()

        def get(name: str, model: str) -> Program:
            if (name, model) not in opened:
                opened[name, model] = Program(compiled[name, model], heap=heap)
            return opened[name, model]
        yield get
        for p in opened.values():
            p.close()
        assert heap.leaks(mark) == []
