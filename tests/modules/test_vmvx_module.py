"""IREE's `vmvx` microkernel module (modules/vmvx) against iree-run-module.

Programs of our own (tests/programs/vmvx) compiled for vmvx with `--iree-vmvx-enable-microkernels`
(matmul.mlir also with `--iree-opt-data-tiling`: pack, mmt4d, unpack, query_tile_sizes.2d) import
the module from their vmvx executables; inline_static.mlir imports it from the program itself.
ireeabi's output, on the host and on riscv32, must be iree-run-module's byte for byte; so must the
whole e2e corpus compiled with microkernels. The export table's calling conventions are those of
the compiled modules' imports; hand-built calls (bad_calls.vm.mlir) fail with IREE's statuses, and
those in bounds (copy_calls.vm.mlir: every copy width, the fill) print what iree-run-module prints.
On riscv32 every export family runs with a trace: each call's argument buffer is riscv32's packing
and the shim reads each field where the VM packed it.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from support import e2e_corpus as corpus
from support import iree_tools as tools
from ireeabi.modules.hal.runtime import HalRuntime
from ireeabi.modules.vmvx import KernelAccessError, TileQueryError, exports
from ireeabi.tooling.execution_model import MODEL_FLAGS
from ireeabi.tooling.program import Program, RunOptions
from ireeabi.vm.bytecode import module_file as mf
from ireeabi.base.heap import tracked_heap
from ireeabi.vm.ref import release_value
from ireeabi.base.status import StatusCode, StatusError

HERE = Path(__file__).resolve().parent.parent
VMVX = HERE / "programs" / "vmvx"
UK = ("--iree-vmvx-enable-microkernels",)
DEFAULT_FLAGS = MODEL_FLAGS["vmvx"] + UK
TILING = ("--iree-opt-data-tiling",)
INLINE_FLAGS = MODEL_FLAGS["inline-static"] + UK
TARGETS = ("x86_64", "riscv32")

_rng = np.random.default_rng(31)


def _vals(shape, kind="f") -> str:
    n = int(np.prod(shape))
    if kind == "f":
        v = (_rng.standard_normal(n) * 3).astype(np.float32)
        text = " ".join(repr(float(x)) for x in v)
        return "x".join(map(str, shape)) + "xf32=" + text
    v = _rng.integers(-50, 50, n)
    return "x".join(map(str, shape)) + f"x{kind}=" + " ".join(str(int(x)) for x in v)


def _nonzero_i32(shape) -> str:
    v = _rng.integers(1, 40, int(np.prod(shape))) * _rng.choice([-1, 1], int(np.prod(shape)))
    return "x".join(map(str, shape)) + "xi32=" + " ".join(str(int(x)) for x in v)


# (program, extra flags, function, inputs)
CASES = [
    ("elementwise", (), "binary_f32", [_vals((3, 5)), _vals((3, 5))]),
    ("elementwise", (), "unary_f32", [_vals((4, 6))]),
    ("elementwise", (), "unary_f32", ["4x6xf32=[0 -0 0.5 -0.5 1.5 -1.5][nan inf -inf 1e-30 80 -80]"
                                      "[3.4e38 -3.4e38 1e-3 7 8 9][0.25 2.5 -2.5 60 -60 1]"]),
    ("elementwise", (), "binary_i32", [_vals((3, 6), "i32"), _nonzero_i32((3, 6))]),
    ("elementwise", (), "binary_i32", ["3x6xi32=[2147483647 -2147483648 -1 0 7 -7][1 2 3 4 5 6][9 8 7 6 5 4]",
                                       "3x6xi32=[1 2 -1 5 31 33][-3 30 -2 1 1 65][3 2 1 -1 -2 -3]"]),
    ("elementwise", (), "ctlz_i32", ["2x5xi32=0 1 2 3 -1 65535 65536 2147483647 255 4096"]),
    ("elementwise", (), "broadcast_add", [_vals((4, 3)), _vals((3,))]),
    ("copy_fill", (), "fill_matmul", ["2.5", _vals((3, 4)), _vals((4, 5))]),
    ("matmul", TILING, "matmul_f32", [_vals((5, 7)), _vals((7, 3))]),
    ("matmul", TILING, "matmul_acc", [_vals((9, 16)), _vals((16, 10)), _vals((9, 10))]),
    ("matmul", TILING, "matmul_i8", [_vals((6, 9), "i8"), _vals((9, 5), "i8")]),
    ("matmul", TILING, "matmul_dyn", [_vals((11, 6)), _vals((6, 13))]),
    ("matmul", TILING, "matmul_dyn", [_vals((1, 1)), _vals((1, 1))]),
    ("reduction", (), "row_sums", [_vals((4, 8))]),
    ("reduction", (), "sum_i32", [_vals((64,), "i32")]),
]
# iree-compile 3.13 lowers a transpose (and a row-strided slice) to a copy.2d whose strides make module.c's length bound pass
# the buffer's end: iree-run-module fails the call with OUT_OF_RANGE, and so must ireeabi.
FAILING_CASES = [
    ("copy_fill", "transpose", ["3x5xi32=" + " ".join(str(i * 3 - 7) for i in range(15))]),
    ("copy_fill", "transpose_f32", [_vals((4, 6))]),
    ("copy_fill", "slice_copy", ["6x8xi32=" + " ".join(str(i) for i in range(48))]),
]
# Hand-built copies and fills that pass module.c's checks (copy_calls.vm.mlir): (function, inputs).
# copy: in offset, in strides, out offset, out strides, sizes (elements); fill: value, offset, row
# stride, sizes.
COPY_CALLS = [
    ("copy_x8", "3 16 1 0 8 1 5 7"),  # a 5x7 window of 16-byte rows into 8-byte rows
    ("copy_x16", "0 1 8 0 8 1 8 8"),  # an 8x8 transpose
    ("copy_x32", "0 1 4 0 4 1 4 4"),  # a 4x4 transpose
    ("copy_x32", "5 9 2 1 3 9 3 3"),  # column-strided source and destination
    ("copy_x64", "1 1 3 2 3 1 3 3"),
    ("fill_x32", "-123456 2 5 4 3"),
    ("fill_x32", "2139095041 0 1 16 1"),  # a NaN's bits: the fill moves bits, not floats
]
INLINE_CASES = [
    ("inline_static", "exp_index", ["0.37"]), ("inline_static", "exp_index", ["-1.25"]),
    ("inline_static", "int_index", ["-7"]), ("inline_static", "int_index", ["123456"]),
]


def _compiled(name: str, flags: tuple[str, ...]) -> Path:
    suffix = ".vm.mlir" if name.endswith("_calls") else ".mlir"
    return tools.compile_with_flags(VMVX / f"{name}{suffix}", flags)


def _ours(path: Path, function: str, inputs: list[str], target: str) -> str:
    with tracked_heap(target=target) as heap:
        program = Program(path, heap=heap)
        try:
            return corpus.ours(program, function, inputs)
        finally:
            program.close()


def _imported_cconvs(path: Path) -> dict[str, str]:
    """vmvx imports (name -> cconv) of a module and of the vmvx executables it holds."""
    found: dict[str, str] = {}
    data = path.read_bytes()
    module = mf.read_module(data)
    images = [data] + [mf.rodata_bytes(s) for s in module.rodata_segments]
    for image in images:
        try:
            m = mf.read_module(image)
        except Exception:  # noqa: BLE001 - rodata that is no module (a vmvx executable's archive?)
            try:
                m = mf.read_module(image[image.find(b"IREE") - 4:])
            except Exception:  # noqa: BLE001
                continue
        for f in m.imported_functions:
            if f.full_name.startswith("vmvx."):
                found[f.full_name] = f.cconv
    return found


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name,flags,function,inputs", CASES,
                         ids=[f"{n}.{f}.{i}" for i, (n, _, f, _) in enumerate(CASES)])
def test_program_matches_iree_run_module(name, flags, function, inputs, target):
    if function == "matmul_dyn" and target != "x86_64":  # tile sizes per architecture: see below
        return test_dynamic_matmul_riscv32()
    path = _compiled(name, DEFAULT_FLAGS + flags)
    expected = corpus.iree_output(path, function, tuple(inputs))
    assert _ours(path, function, inputs, target) == expected


def test_dynamic_matmul_riscv32():
    """riscv32's runtime builds the generic ukernels: query_tile_sizes.2d answers 8x4x8 and the
    generic tile accumulates in f32, one rounding per product and per sum, k in order; the x86-64
    host's answer (M x 1 tiles, FMA) differs in the last bits, so the oracle is that sum."""
    path = _compiled("matmul", DEFAULT_FLAGS + TILING)
    a = (_rng.standard_normal((11, 6)) * 3).astype(np.float32)
    b = (_rng.standard_normal((6, 13)) * 3).astype(np.float32)
    with tracked_heap(target="riscv32") as heap:
        program = Program(path, heap=heap)
        try:
            out = program.call("matmul_dyn", a, b)
        finally:
            program.close()
    acc = np.zeros((11, 13), np.float32)
    for k in range(6):
        acc = (acc + (a[:, k:k + 1] * b[k:k + 1, :]).astype(np.float32)).astype(np.float32)
    assert np.asarray(out).tobytes() == acc.tobytes()


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name,function,inputs", FAILING_CASES, ids=[c[1] for c in FAILING_CASES])
def test_program_failure_matches_iree_run_module(name, function, inputs, target):
    path = _compiled(name, DEFAULT_FLAGS)
    proc = tools.run_module_failure([path], function, inputs)
    m = re.search(r"buffer\.c:\d+: ([A-Z_]+); (out-of-bounds access detected \([^)]*\))", proc.stderr)
    assert m, proc.stderr
    with tracked_heap(target=target) as heap:
        program = Program(path, heap=heap)
        try:
            with pytest.raises(Exception) as info:
                corpus.ours(program, function, inputs)
        finally:
            program.close()
    assert StatusCode(int(info.value.code)).name == m.group(1)
    assert m.group(2) in " ".join(str(info.value).split())
    assert "vmvx.copy.2d.x32" in str(info.value)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("function,inputs", COPY_CALLS, ids=[f"{f}.{i}" for i, (f, _) in enumerate(COPY_CALLS)])
def test_copy_and_fill_calls_match_iree_run_module(function, inputs, target):
    """copy.2d.x8..x64 and fill.2d.x32 called as a program calls them, in bounds: the hash of every
    output byte and two elements are iree-run-module's."""
    path = _compiled("copy_calls", tools.VM_INPUT_FLAGS)
    args = inputs.split()
    expected = corpus.iree_output(path, function, tuple(args))
    assert _ours(path, function, args, target) == expected


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name,function,inputs", INLINE_CASES,
                         ids=[f"{n}.{f}.{i}" for i, (n, f, _) in enumerate(INLINE_CASES)])
def test_inline_static_matches_iree_run_module(name, function, inputs, target):
    path = _compiled(name, INLINE_FLAGS)
    assert any(k.startswith("vmvx.") for k in _imported_cconvs(path))  # the program imports vmvx itself
    expected = corpus.iree_output(path, function, tuple(inputs))
    assert _ours(path, function, inputs, target) == expected


def test_programs_import_what_the_module_exports():
    """Every vmvx import of the compiled programs resolves with its cconv; together they use most
    of the table, and each export's cconv is what iree-compile emits for it."""
    table = {f"vmvx.{e.name}": e.cconv for e in exports()}
    assert len(table) == 32
    seen: dict[str, str] = {}
    for name, flags in {("elementwise", ()), ("copy_fill", ()), ("matmul", TILING), ("reduction", ())}:
        seen.update(_imported_cconvs(_compiled(name, DEFAULT_FLAGS + flags)))
    seen.update(_imported_cconvs(_compiled("inline_static", INLINE_FLAGS)))
    for name, cconv in seen.items():
        assert table[name] == cconv, name
    assert len(seen) >= 28
    assert {"vmvx.pack", "vmvx.unpack", "vmvx.mmt4d", "vmvx.query_tile_sizes.2d", "vmvx.fill.2d.x32",
            "vmvx.copy.2d.x32"} <= set(seen)


def test_every_import_declared_by_the_compiler_matches():
    """iree-compile declares all 32 vmvx imports in an inline-static module's VM IR before dead
    ones are dropped: their function types flattened are the table's cconvs."""
    proc = subprocess.run([tools.find_tool("iree-compile"), str(VMVX / "inline_static.mlir"), *INLINE_FLAGS,
                           "--compile-to=vm", "--mlir-print-ir-after-all=false"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    declared = dict(re.findall(r'vm\.import private @(vmvx\.[\w.]+)\(([^)]*)\)', proc.stdout))
    table = {f"vmvx.{e.name}": e.cconv for e in exports()}
    assert declared, "no vmvx imports in the VM IR"
    for name, params in declared.items():
        assert name in table
        args = "".join({"!vm.buffer": "r", "i64": "I", "i32": "i"}[t]
                       for t in re.findall(r"!vm\.buffer|i64|i32", params))
        assert table[name].startswith("0" + args + "_"), (name, params)


# -- hand-built calls: IREE's statuses --------------------------------------------------------------

BAD_CALLS = [  # (lhs bytes, size0, lhs offset, lhs row stride)
    ("32", "2", "0", "4"),  # in bounds
    ("16", "2", "0", "4"),  # the lhs buffer too small: OUT_OF_RANGE
    ("32", "2", "1", "4"),  # offset past the end
    ("32", "2", "0", "5"),  # row stride past the end
    ("32", "4294967296", "0", "4"),  # size0 past 32 bits: INVALID_ARGUMENT buffer overflow for lhs
    ("32", "0", "0", "4"),  # nothing to do
]


def _status_line(stderr: str) -> str:
    m = re.search(r"(?:\.c:\d+: )([A-Z_]+); (.*?); while invoking", stderr)
    assert m, stderr
    return f"{m.group(1)}; {m.group(2)}"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("args", BAD_CALLS, ids=["-".join(a) for a in BAD_CALLS])
def test_hand_built_call_status_is_irees(args, target):
    path = _compiled("bad_calls", tools.VM_INPUT_FLAGS)
    inputs = list(args)
    argv = [tools.find_tool("iree-run-module"), f"--module={path}", "--function=oob",
            *(f"--input={i}" for i in inputs)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    with tracked_heap(target=target) as heap:
        program = Program(path, heap=heap)
        try:
            if proc.returncode == 0:
                assert corpus.ours(program, "oob", inputs) == proc.stdout
                return
            with pytest.raises(Exception) as info:
                corpus.ours(program, "oob", inputs)
        finally:
            program.close()
    expected = _status_line(proc.stderr)
    code, _, message = expected.partition("; ")
    assert StatusCode(int(info.value.code)).name == code
    assert message in str(info.value)


def test_negative_offset_is_refused_where_iree_reads_before_the_buffer():
    """offset -1 passes IREE's wrapping bounds check (iree-run-module returns without error, having
    read before the buffer); ireeabi names the access instead."""
    path = _compiled("bad_calls", tools.VM_INPUT_FLAGS)
    with tracked_heap() as heap:
        program = Program(path, heap=heap)
        try:
            with pytest.raises(Exception, match="wraps to .* passing buffer.c's bounds check"):
                corpus.ours(program, "oob", ["32", "2", "-1", "4"])
        finally:
            program.close()


@pytest.mark.parametrize("target", TARGETS)
def test_module_api_calls(target):
    """Direct calls through the module API: read-only output PERMISSION_DENIED, unhandled flags
    INVALID_ARGUMENT, a divide by zero refused, the tile query answered per architecture."""
    with HalRuntime(target=target) as rt:
        vmb = rt.vm_buffers
        ro = vmb.move_ref(vmb.create(0, 16, 4))  # access 0: not MUTABLE
        rw = vmb.move_ref(vmb.create(3, 16, 4))
        try:
            with pytest.raises(StatusError, match="read-only") as info:
                rt.call("vmvx.copy.2d.x32", rw, 0, 4, 1, ro, 0, 4, 1, 1, 4)
            assert info.value.code == StatusCode.PERMISSION_DENIED
            with pytest.raises(StatusError, match="unhandled flags") as info:
                rt.call("vmvx.mmt4d", rw, 0, 1, rw, 0, 1, rw, 0, 1, 1, 1, 1, 1, 1, 1, 0x03)
            assert info.value.code == StatusCode.INVALID_ARGUMENT
            with pytest.raises(StatusError, match="unhandled flags"):
                rt.call("vmvx.unpack", rw, 0, 1, 1, rw, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0x02)
            with pytest.raises(KernelAccessError, match="division by zero"):
                rt.call("vmvx.divs.2d.i32", rw, 0, 4, 1, rw, 0, 4, 1, rw, 0, 4, 1, 1, 4)
            lhs_f32 = rt.call("vmvx.query_tile_sizes.2d", 10, 20, 0x0101)
            result_i8 = rt.call("vmvx.query_tile_sizes.2d", 10, 20, 0x0203)
            if target == "riscv32":  # generic ukernels: 8x4x8
                assert (lhs_f32, result_i8) == ([8, 4], [8, 8])
            else:  # x86_64: M x 1 for f32, by the host's AVX-512 / AVX2+FMA+F16C (SSE: N 4)
                flags = set(Path("/proc/cpuinfo").read_text().split())
                avx2 = {"avx2", "fma", "f16c"} <= flags
                avx512 = avx2 and {"avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512cd"} <= flags
                assert lhs_f32 == ([16, 1] if avx512 else [8, 1])
                assert result_i8 == ([16, 16] if avx512 and "avx512_vnni" in flags else
                                     [8, 8] if avx2 else [8, 4])
            with pytest.raises(TileQueryError):
                rt.call("vmvx.query_tile_sizes.2d", 10, 20, 0x0004)
        finally:
            release_value(rt.heap, ro)
            release_value(rt.heap, rw)


# -- every export family on riscv32: the packing of the argument buffers ---------------------------

# iree_vm_ref_t (runtime/src/iree/vm/ref.h: a pointer and an iree_vm_ref_type_t, uintptr_t): its
# size and alignment.
REF_BYTES = {"x86_64": (16, 8), "riscv32": (8, 4)}
# One run per family: (program, flags, function, inputs, the vmvx imports it must call).
FAMILY_RUNS = [
    ("elementwise", (), "binary_f32", [_vals((3, 5)), _vals((3, 5))], {"add.2d.f32", "mul.2d.f32"}),
    ("elementwise", (), "binary_i32", [_vals((3, 6), "i32"), _nonzero_i32((3, 6))], {"shl.2d.i32", "divs.2d.i32"}),
    ("elementwise", (), "unary_f32", [_vals((4, 6))], {"exp.2d.f32", "rsqrt.2d.f32"}),
    ("elementwise", (), "ctlz_i32", ["2x5xi32=0 1 2 3 -1 65535 65536 2147483647 255 4096"], {"ctlz.2d.i32"}),
    ("copy_fill", (), "fill_matmul", ["-0.75", _vals((3, 4)), _vals((4, 5))], {"fill.2d.x32"}),
    ("matmul", TILING, "matmul_i8", [_vals((6, 9), "i8"), _vals((9, 5), "i8")], {"pack", "unpack", "mmt4d"}),
    ("matmul", TILING, "matmul_acc", [_vals((9, 16)), _vals((16, 10)), _vals((9, 10))],
     {"pack", "unpack", "mmt4d"}),
] + [("copy_calls", tools.VM_INPUT_FLAGS, f, i.split(), {f"copy.2d.x{f[6:]}"})
     for f, i in COPY_CALLS if f.startswith("copy")]


def _packed_size(cconv: str, target: str) -> int:
    """The argument buffer of an import call as IREE's VM sizes it (module.c,
    iree_vm_function_call_compute_cconv_fragment_size): each value at the next multiple of its
    alignment (i 4 bytes, I 8 aligned to sizeof(int64_t), r an iree_vm_ref_t at its alignment), the
    whole rounded up to the largest alignment."""
    size, largest = 0, 4
    for c in cconv[1:].partition("_")[0]:
        n, align = {"i": (4, 4), "I": (8, 8), "r": REF_BYTES[target]}[c]
        size = (size + align - 1) // align * align + n
        largest = max(largest, align)
    return (size + largest - 1) // largest * largest


@pytest.mark.parametrize("name,flags,function,inputs,calls", FAMILY_RUNS,
                         ids=[f"{r[2]}.{i}" for i, r in enumerate(FAMILY_RUNS)])
def test_riscv32_packs_every_family_as_its_shims_read(name, flags, function, inputs, calls):
    """On riscv32 (refs of 8 bytes, a 32-bit iree_host_size_t) every vmvx call of the run gets an
    argument buffer of riscv32's size, every field of the shim's struct reads the bytes the VM packed
    for it, the call succeeds, and the program prints what iree-run-module prints on the host."""
    path = _compiled(name, DEFAULT_FLAGS + flags if name != "copy_calls" else flags)
    expected = corpus.iree_output(path, function, tuple(inputs))
    with tracked_heap(target="riscv32") as heap:
        program = Program(path, RunOptions(trace="imports"), heap=heap)
        try:
            assert corpus.ours(program, function, inputs) == expected
            events = [e for e in program.trace.events if e.get("import", "").startswith("vmvx.")]
        finally:
            program.close()
    assert calls <= {e["import"][len("vmvx."):] for e in events}
    for e in events:
        size = _packed_size(e["cconv"], "riscv32")
        assert e["target"] == "riscv32"
        assert e["arguments"]["size"] == size, e["import"]
        if "r" in e["cconv"]:
            assert size != _packed_size(e["cconv"], "x86_64")
        shim = e["shim"]
        assert shim["fields"] and shim.get("disagreements", 0) == 0, e["import"]
        assert all(f["disagreement"] is None for f in shim["fields"]), e["import"]
        assert e["status"] == {"code": "OK"}, (e["import"], e["status"])


def test_family_runs_cover_every_export_family():
    """The riscv32 runs above call 2-D binary and unary elementwise kernels of both element types,
    every copy width, the fill, pack, unpack and mmt4d (query_tile_sizes.2d: test_module_api_calls)."""
    called = set().union(*(r[4] for r in FAMILY_RUNS))
    table = {e.name for e in exports()}
    assert called <= table
    families = {"copy.2d.x8", "copy.2d.x16", "copy.2d.x32", "copy.2d.x64", "fill.2d.x32", "pack", "unpack", "mmt4d"}
    assert families <= called
    assert {n for n in called if n.endswith(".f32")} and {n for n in called if n.endswith(".i32")}


# -- the e2e corpus compiled with microkernels -------------------------------------------------------

@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name,function,inputs", corpus.CASES,
                         ids=[f"{n}.{f}.{i}" for i, (n, f, _) in enumerate(corpus.CASES)])
def test_e2e_corpus_with_microkernels(name, function, inputs, target):
    path = tools.compile_with_flags(corpus.E2E / f"{name}.mlir", DEFAULT_FLAGS + corpus.F64)
    expected = corpus.iree_output(path, function, tuple(inputs))
    assert _ours(path, function, inputs, target) == expected
