"""Frames and register banks sized as IREE sizes them, measured on iree-run-module 3.13.

Modules of our own are written in VM assembly and assembled by iree-as-module (iree-base-runtime
3.13), which declares exactly the registers a function's body names (none for an argument it never
touches); other counts are patched into the assembled FlatBuffer's function descriptor. Each module
is run by iree-run-module and by ireeabi (`Context`) with the same arguments.

IREE's frame is measured from outside: a function declaring n i32 registers and one ref register
(holding a rodata buffer) reads %ik with an op whose operands IREE's verifier does not check. Within
the frame's i32 bank the register is zero (frames are zeroed); the first register past the bank
lies over the ref bank and reads the low word of the buffer's pointer, which is not zero. So the
bank holds the smallest such k registers (runtime/src/iree/vm/bytecode/dispatch.c sizes it as
`n * 4` bytes rounded up to 16; verifier.c bounds lists by n rounded up to a power of two).
"""
from __future__ import annotations

import re
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

import pytest

from support import iree_tools as tools
from test_module_load_fidelity import descriptor, iree, patch, s16

from ireeabi.base import machine as vm_machine
from ireeabi.layouts.ref import RefLayout
from ireeabi.vm.bytecode import Context
from ireeabi.vm.errors import VmStatusError, VmTrapError
from ireeabi.vm.bytecode.frames import frame_layout, verifier_bound
from ireeabi.vm.bytecode.module_file import read_module
from ireeabi.vm.bytecode.verifier import function_layout
from ireeabi.base.status import StatusCode


def assemble(text: str) -> bytes:
    """iree-as-module's .vmfb for VM assembly `text`."""
    with tempfile.TemporaryDirectory(prefix="ireeabi-vmasm-") as tmp:
        src, out = Path(tmp) / "m.vmasm", Path(tmp) / "m.vmfb"
        src.write_text(text)
        proc = subprocess.run([tools.find_tool("iree-as-module"), f"--output={out}", str(src)],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return out.read_bytes()


def counts(data: bytes, function: int, i32: int | None = None, ref: int | None = None) -> bytes:
    """`data` with function `function`'s declared register counts replaced."""
    if i32 is not None:
        data = patch(data, descriptor(data, function) + 16, s16(i32))
    if ref is not None:
        data = patch(data, descriptor(data, function) + 18, s16(ref))
    return data


def iree_results(data: bytes, function: str, inputs: tuple = ()) -> list[int]:
    out = iree(data, function, tuple(str(i) for i in inputs))
    assert out.kind == "ok", out
    return [int(x) for x in re.findall(r"result\[\d+\]: i32=(-?\d+)", out.text)]


def ours(data: bytes, function: str, inputs: tuple = ()) -> list[int]:
    ctx = Context(data)
    try:
        return ctx.invoke(function, *inputs)
    finally:
        ctx.close()


# --------------------------------------------------------------------------------------------------
# Functions whose declared counts are 0, 1, 3, 5 (as the assembler counts them)

SIZES = """vm.module @sizes version 0
vm.type i32

vm.export @ignore_arg
vm.func @ignore_arg(%i0: i32) -> () {
^bb0:
  vm.return
}

vm.export @echo
vm.func @echo(%i0: i32) -> (i32) {
^bb0:
  vm.return %i0
}

vm.export @plus_five
vm.func @plus_five(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.const.i32 5
  %i2 = vm.add.i32 %i0, %i1
  vm.return %i2
}

vm.export @sum_three
vm.func @sum_three(%i0: i32, %i1: i32, %i2: i32) -> (i32) {
^bb0:
  %i3 = vm.add.i32 %i0, %i1
  %i4 = vm.add.i32 %i3, %i2
  vm.return %i4
}

vm.export @late_write
vm.func @late_write() -> (i32) {
^bb0:
  %i13 = vm.const.i32 42
  vm.return %i13
}

vm.export @call_then_read
vm.func @call_then_read() -> (i32) {
^bb0:
  %i13 = vm.const.i32 42
  %i0 = vm.call @sizes:1(%i13)
  vm.return %i13
}
"""

# (export, inputs, declared i32 count as assembled)
SIZE_CASES = [("ignore_arg", (4,), 0), ("echo", (4,), 1), ("plus_five", (4,), 3),
              ("sum_three", (1, 2, 3), 5), ("late_write", (), 14)]


@lru_cache(maxsize=None)
def sizes() -> bytes:
    return assemble(SIZES)


@pytest.mark.parametrize("export,inputs,declared", SIZE_CASES, ids=[c[0] for c in SIZE_CASES])
def test_assembled_counts_run_as_in_iree(export, inputs, declared):
    data = sizes()
    m = read_module(data)
    ordinal = [e.name for e in m.exported_functions].index(export)
    d = m.function_descriptors[m.exported_functions[ordinal].internal_ordinal]
    assert (d.i32_register_count, d.ref_register_count) == (declared, 0)
    assert ours(data, export, inputs) == iree_results(data, export, inputs)


def test_argument_without_declared_registers():
    """ignore_arg(%i0: i32) declares no register (the report: function#16 of IREE's control-flow
    test module); IREE's verifier bounds it by max(1, 0) and writes the argument past its frame."""
    data = sizes()
    ctx = Context(data)
    try:
        fn = ctx.functions[0]
        layout = function_layout(ctx, 0)
        assert (layout.i32, layout.ref, layout.i32_bound) == (0, 0, 1)  # IREE's frame, its bound
        assert (fn.i32_count, fn.ref_count) == (1, 0)  # ours holds the argument past it
        assert ctx.invoke("ignore_arg", 4) == []
    finally:
        ctx.close()


@pytest.mark.parametrize("export,inputs,declared", [("echo", (4,), 0), ("late_write", (), 9),
                                                    ("late_write", (), 12)])
def test_fewer_declared_registers_than_named(export, inputs, declared):
    """Counts patched below what the body names, within IREE's verifier bound (echo: 0 declared,
    %i0 past an empty frame; late_write: 9 or 12 declared, a bank of 12, %i13 past it, bound 16):
    IREE runs them on the stack past its frame, and so does ireeabi."""
    data = sizes()
    ordinal = [e.name for e in read_module(data).exported_functions].index(export)
    data = counts(data, ordinal, declared)
    assert ours(data, export, inputs) == iree_results(data, export, inputs)


# --------------------------------------------------------------------------------------------------
# IREE's i32 bank, measured


def _probe_module(ks: range) -> str:
    funcs = []
    for k in ks:
        read = f"  %i0 = vm.or.i32 %i{k}, %i{k}\n" if k else "  %i0 = vm.or.i32 %i0, %i0\n"
        funcs.append(f"vm.export @read{k}\nvm.func @read{k}() -> (i32) {{\n^bb0:\n"
                     f"  %r0 = vm.const.ref.rodata 0\n{read}  vm.return %i0\n}}\n")
    return ("vm.module @probe version 0\nvm.type i32\nvm.type !vm.buffer\n"
            "vm.rodata[0] = 0102030405060708\n\n" + "\n".join(funcs))


PROBE_KS = range(0, 21)


@lru_cache(maxsize=None)
def probes() -> bytes:
    return assemble(_probe_module(PROBE_KS))


def measured_bank(declared: int) -> int:
    """The registers IREE's i32 bank holds for `declared`: the first %ik (k >= declared) that reads
    the ref bank's pointer."""
    data = probes()
    for k in PROBE_KS:
        if k < declared:
            continue
        mutant = counts(data, k, declared, 1)
        if iree_results(mutant, f"read{k}") != [0]:
            return k
    raise AssertionError(f"no pointer read past {declared} declared registers")


@pytest.mark.parametrize("declared", [0, 1, 3, 4, 5, 9, 13, 16])
def test_i32_bank_is_iree_frame(declared):
    bank = measured_bank(declared)
    layout = frame_layout(declared, 1, vm_machine.host().view(RefLayout).size)
    assert layout.i32 == bank
    assert layout.i32_bound == verifier_bound(declared) >= max(1, declared)
    # ireeabi loads the probe, and its read of a ref's pointer traps, naming the register
    ctx = Context(counts(probes(), bank, declared, 1))
    try:
        assert ctx.functions[bank].i32_count == bank  # nothing past the bank is used reproducibly
        with pytest.raises(VmTrapError, match=rf"%i{bank} out of range: it lies over the frame's "
                                              rf"ref bank"):
            ctx.invoke(f"read{bank}")
    finally:
        ctx.close()


def test_registers_inside_the_bank_read_zero():
    """%i3 of a frame declaring 1 register: inside IREE's 16-byte bank, zeroed, in both."""
    data = counts(probes(), 3, 1, 1)
    assert ours(data, "read3") == iree_results(data, "read3") == [0]


def test_ref_bank_by_data_model():
    """The ref bank is rounded up to 16 bytes too: exactly the declared refs where a ref is 16
    bytes, an even number where it is 8 (sizeof(iree_vm_ref_t) from the data model's layout)."""
    for target, expected in (("x86_64", [0, 1, 2, 3]), ("i386", [0, 2, 2, 4]),
                             ("wasm32", [0, 2, 2, 4])):
        size = vm_machine.machine(target).view(RefLayout).size
        assert [frame_layout(0, n, size).ref for n in range(4)] == expected, target


# --------------------------------------------------------------------------------------------------
# Negative counts: IREE loads the module, and fails to enter the function (a frame of gigabytes)


def test_negative_count_fails_at_entry():
    data = counts(sizes(), 1, -1)  # echo
    theirs = iree(data, "echo", ("4",))
    assert (theirs.kind, theirs.code) == ("status", "RESOURCE_EXHAUSTED"), theirs
    assert "new stack size would exceed maximum size" in theirs.text
    assert iree_results(data, "plus_five", (4,)) == [9]  # the module loaded
    ctx = Context(data)
    try:
        assert ctx.invoke("plus_five", 4) == [9]
        with pytest.raises(VmStatusError, match="new stack size would exceed maximum size") as info:
            ctx.invoke("echo", 4)
        assert info.value.code == StatusCode.RESOURCE_EXHAUSTED
    finally:
        ctx.close()


def test_register_past_the_frame_across_a_call_traps():
    """call_then_read declares 9 registers (a bank of 12, bound 16) and keeps 42 in %i13 across a
    call: IREE puts the callee's frame right after its own, over %i13, and returns something else;
    ireeabi loads the module and traps on the ops that use %i13."""
    data = sizes()
    ordinal = [e.name for e in read_module(data).exported_functions].index("call_then_read")
    assert iree_results(data, "call_then_read") == [42]
    data = counts(data, ordinal, 9)
    assert iree_results(data, "call_then_read") != [42]
    ctx = Context(data)
    try:
        with pytest.raises(VmTrapError, match=r"register %i13 is past the frame .* in a function "
                                              r"that calls"):
            ctx.invoke("call_then_read")
        assert ctx.invoke("late_write") == [42]  # the other functions run
    finally:
        ctx.close()
