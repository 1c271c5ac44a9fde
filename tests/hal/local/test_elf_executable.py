"""Real kernels from iree-compile, loaded with dlopen and dispatched on packed memory.

Workgroup counts, push constants and binding sizes come from the compiler's own VM IR for the same
program (tests/support/vm_ir.py evaluates it), never from numbers typed here.
"""
import ctypes
from pathlib import Path

import numpy as np
import pytest

from support import iree_tools, vm_ir
from ireeabi.base.machine import host
from ireeabi.layouts.executable_library import DispatchLayout
from ireeabi.hal.local import elf_executable as ex
from ireeabi.hal.local.native import native
from ireeabi.vm.bytecode import module_file as mf

PROGRAMS = Path(__file__).parents[2] / "programs"


def _library(program: str) -> tuple[ex.Library, str]:
    m = mf.read_module(iree_tools.compile_mlir(PROGRAMS / f"{program}.mlir"))
    formats = [mf.rodata_bytes(s).decode() for s in m.rodata_segments
               if mf.rodata_bytes(s).startswith(b"embedded-elf-")]
    (fmt,) = formats
    elf = next(mf.rodata_bytes(s) for s in m.rodata_segments if mf.rodata_bytes(s)[:4] == b"\x7fELF")
    return ex.load_library(fmt, elf), vm_ir.vm_ir(PROGRAMS / f"{program}.mlir")


def _run(lib, d, inputs, out_dtype=np.float32):
    """Dispatch `d` with inputs bound in order and one output binding (the allocated result)."""
    arrays = list(inputs)
    out = np.zeros(d.bindings[-1][2] // np.dtype(out_dtype).itemsize, out_dtype)
    arrays.append(out)
    assert len(arrays) == len(d.bindings)
    for a, (_, off, length) in zip(arrays, d.bindings):
        assert off == 0 and a.nbytes == length
    export = lib.export(d.export_name)
    result = lib.dispatch(export.ordinal, d.workgroups, d.constants,
                          [(a.ctypes.data, a.nbytes) for a in arrays], workgroup_size=export.workgroup_size)
    assert result.calls == d.workgroups[0] * d.workgroups[1] * d.workgroups[2]
    return out


@pytest.mark.parametrize("program", ["add16", "add1m"])
def test_add_kernels_match_numpy(program):
    lib, ir = _library(program)
    with lib:
        (d,) = vm_ir.dispatches(ir, "add", [None, None])
        n = d.bindings[0][2] // 4
        rng = np.random.default_rng(1)
        a, b = rng.standard_normal(n, np.float32), rng.standard_normal(n, np.float32)
        np.testing.assert_array_equal(_run(lib, d, [a, b]), a + b)
        assert lib.export(d.export_name).binding_count == 3


def test_push_constant_kernel_matches_numpy():
    lib, ir = _library("push_constants")
    with lib:
        n, s = 10000, 2.5
        (d,) = vm_ir.dispatches(ir, "scale", [None, s], {0: [n]})
        assert len(d.constants) == lib.export(d.export_name).constant_count > 0
        x = np.random.default_rng(2).standard_normal(n, np.float32)
        np.testing.assert_array_equal(_run(lib, d, [x]), x * np.float32(s))


def test_several_bindings_kernel_matches_numpy():
    lib, ir = _library("bindings")
    with lib:
        (d,) = vm_ir.dispatches(ir, "muladd", [None, None, None])
        rng = np.random.default_rng(3)
        a, b, c = (rng.standard_normal(64, np.float32) for _ in range(3))
        np.testing.assert_allclose(_run(lib, d, [a, b, c]), a * b + c, rtol=1e-6)
        assert lib.export(d.export_name).binding_count == 4


def test_library_metadata():
    lib, _ = _library("add16")
    with lib:
        assert lib.version == 6 and lib.imports == () and lib.constant_count == 0
        assert lib.exports[0].name.startswith("add_dispatch_0")
        with pytest.raises(ex.ExecutableError, match="NOT_FOUND"):
            lib.export("nope")
        with pytest.raises(ex.ExecutableError, match="ordinal out of bounds"):
            lib.issue(5, 0, 0, (1, 1, 1))
    with pytest.raises(ex.ExecutableError, match="unloaded"):
        lib.issue(0, 0, 0, (1, 1, 1))


def test_formats_are_checked():
    elf = _elf_bytes("add16")
    with pytest.raises(ex.ExecutableError, match="'embedded-elf-arm_64' cannot run on x86_64"):
        ex.load_library("embedded-elf-arm_64", elf)
    with pytest.raises(ex.ExecutableError, match="no executable loader"):
        ex.load_library("vmvx-bytecode-fb", elf)
    assert ex.query_support("embedded-elf-x86_64") and not ex.query_support("embedded-elf-riscv_32")


def test_constant_count_must_match_library():
    with pytest.raises(ex.ExecutableError, match="FAILED_PRECONDITION"):
        ex.load_library("embedded-elf-x86_64", _elf_bytes("add16"), constants=[1])


@pytest.mark.parametrize("cut", [0, 4, 63, 200, 1000])
def test_truncated_or_garbage_elf_is_a_clear_error(cut):
    elf = _elf_bytes("add16")
    with pytest.raises(ex.ExecutableError):
        ex.load_library("embedded-elf-x86_64", elf[:cut])
    with pytest.raises(ex.ExecutableError):
        ex.load_library("embedded-elf-x86_64", bytes(cut) + b"garbage")


def test_workgroup_loop_semantics():
    # The C helper's loop, with a Python kernel that fails at one workgroup: as IREE's inline issue,
    # only the x loop is left, y and z continue, and the status is the last call's.
    calls = []
    layout = host().view(DispatchLayout).wg_ids

    @ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
    def kernel(env, state, wg):
        raw = ctypes.string_at(wg, 12)
        x, y, z = (int.from_bytes(raw[o:o + (2 if i == 2 else 4)], "little") for i, o in enumerate(layout))
        calls.append((x, y, z))
        return 7 if (x, y, z) == (1, 0, 0) else 0

    _keep, wg = ex.new_workgroup_state()
    out = native().ffi.new("uint64_t*")
    fn = ctypes.cast(kernel, ctypes.c_void_p).value
    status = native().lib.ireeabi_issue_workgroups(fn, 0, 0, wg, *layout, 3, 2, 1, out,
                                                   native().ffi.new("ireeabi_fault_t*"), 0, 0)
    assert calls == [(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0), (2, 1, 0)]
    assert status == 0 and out[0] == 5


def _elf_bytes(program):
    m = mf.read_module(iree_tools.compile_mlir(PROGRAMS / f"{program}.mlir"))
    return next(mf.rodata_bytes(s) for s in m.rodata_segments if mf.rodata_bytes(s)[:4] == b"\x7fELF")
