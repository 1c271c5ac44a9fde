"""The interpreter's vm.buffer, vm.list and ref ops against IREE's VM (iree-run-module 3.13).

Programs in tests/programs/host_fidelity put each op at the edges of its checks. Every expected
result, status code and message comes from iree-run-module (or, where a program cannot show it, from
the IREE source named in the test). Each call runs on both buffer backends - plain ByteBuffers and
VmBufferFactory on a tracked heap, which must also leave nothing allocated. Where IREE's wrapping
arithmetic lets an access leave the buffer (or crashes), the interpreter traps instead; those tests
show what IREE does.
"""
from __future__ import annotations

import hashlib
import struct
from functools import lru_cache
from pathlib import Path

import pytest

from support import iree_tools as tools
from ireeabi.vm.bytecode import isa
from ireeabi.vm.buffer import BufferType
from ireeabi.vm.bytecode.decoder import decode_module
from ireeabi.base.heap import tracked_heap
from ireeabi.vm.bytecode import Context, VmStatusError, VmTrapError
from ireeabi.vm.errors import VmError
from ireeabi.vm.bytecode.vm_buffer_factory import VmBufferFactory
from ireeabi.vm.bytecode.module_file import read_module
from ireeabi.vm.ref import TypeRegistry
from ireeabi.base.status import StatusCode
from test_interpreter import _arg, _patched, assert_same

PROGRAMS = Path(__file__).parents[2] / "programs" / "host_fidelity"
OOR, INVALID, DENIED = StatusCode.OUT_OF_RANGE, StatusCode.INVALID_ARGUMENT, \
    StatusCode.PERMISSION_DENIED
PRECONDITION, EXHAUSTED = StatusCode.FAILED_PRECONDITION, StatusCode.RESOURCE_EXHAUSTED
RODATA_WORDS = [0x04030201, 0x08070605, 0x0C0B0A09, 0x100F0E0D]  # buffers.vm.mlir's @bytes as i32
MOVE_BIT = 0x4000  # a ref register's MOVE bit (runtime/src/iree/vm/bytecode/utils/isa.h)


@lru_cache(maxsize=None)
def prog(name: str) -> Path:
    flags = tools.VM_INPUT_FLAGS if name.endswith(".vm.mlir") else tools.HOST_FLAGS
    return tools.compile_with_flags(PROGRAMS / name, flags)


def _count(module, function: str) -> int:
    cconv = read_module(module).exported(function).cconv
    return sum(c in "iIfFr" for c in cconv.partition("_")[2])


def _run(module, function: str, args: tuple, counted: bool):
    """Our results, or the VmError raised, on one backend."""
    if not counted:
        try:
            return Context(module).invoke(function, *args)
        except VmError as e:
            return e
    with tracked_heap() as heap:  # LeakError at exit if anything was left behind
        types = TypeRegistry(heap)
        vmb = BufferType(types)
        try:
            with Context(module, buffers=VmBufferFactory(vmb)) as ctx:
                try:
                    return ctx.invoke(function, *args)
                except VmError as e:
                    return e
        finally:
            vmb.close()
            types.close()


def ours(module, function: str, *args) -> list:
    return [_run(module, function, args, counted) for counted in (False, True)]


def theirs(path: Path, function: str, *args) -> list:
    return tools.run_module_results([path], function, [_arg(a) for a in args],
                                    _count(path, function))


def check_results(path: Path, function: str, *args, module=None) -> list:
    """iree-run-module's results for one call; ours (from `module`, default `path`) must equal them
    bit for bit on both backends."""
    expected = theirs(path, function, *args)
    for got in ours(module if module is not None else path, function, *args):
        assert not isinstance(got, Exception), f"{function}{args}: {got}"
        assert_same(got, expected, f"{function}{args}")
    return expected


def check_status(path: Path, function: str, args: tuple, code: StatusCode,
                 same_message: bool = True, module=None) -> None:
    """iree-run-module fails with `code`; we fail with the same code (and message) at the op."""
    proc = tools.run_module_failure([path], function, [_arg(a) for a in args])
    assert f"{code.name}; " in proc.stderr, proc.stderr
    for err in ours(module if module is not None else path, function, *args):
        assert isinstance(err, VmStatusError), f"{function}{args}: {err!r}"
        assert err.code == code and err.function == function and err.pc is not None
        assert f"in {function} at pc 0x{err.pc:X}" in str(err)
        if same_message:
            assert err.message in proc.stderr, (err.message, proc.stderr)


def check_trap(module, function: str, *args, match: str) -> None:
    for err in ours(module, function, *args):
        assert isinstance(err, VmTrapError), f"{function}{args}: {err!r}"
        assert err.function == function and match in str(err)


def patched_module(program: str, function: str, mnemonic: str, field: str, data) -> tuple:
    """(path for iree-run-module, bytes for us) of `program` with operand `field` of the first
    `mnemonic` in `function` rewritten: `data(instruction) -> bytes` at that operand's offset."""
    path = prog(program)
    m = read_module(path)
    insts = decode_module(m)[m.exported(function).internal_ordinal]
    inst = next(i for i in insts if i.mnemonic == mnemonic)
    offset = 1  # past the (core) opcode; operands are encoded in field order (isa.py)
    for f in inst.op.fields:
        if f.name == field:
            break
        assert f.kind in isa.REGISTER_KINDS or f.kind in (isa.TYPE, isa.GLOBAL), f.kind
        offset += 4 if f.kind in (isa.TYPE, isa.GLOBAL) else 2  # u32 ordinals, u16 registers
    raw = _patched(path, function, inst.pc + offset, data(inst))
    digest = hashlib.sha256(raw).hexdigest()[:16]
    out = tools.session_dir() / f"{path.stem}.{function}.{mnemonic}.{field}.{digest}.vmfb"
    out.write_bytes(raw)
    return out, raw


def with_move_bit(field: str):
    return lambda inst: (inst.operands[field].encoded | MOVE_BIT).to_bytes(2, "little")


# --------------------------------------------------------------------------------------------------
# vm.buffer

BUFFER_RESULTS = [
    ("alloc", [(16, 0), (16, 64), (0, 0)]),
    ("clone", [(0, 16, 0), (4, 8, 16), (2, 3, 1)]),  # the clone is mutable; rodata is not touched
    ("load_i32", [(0,), (3,)]),
    ("load_i16", [(7,)]),
    ("load_i64", [(1,)]),
    ("fill_i8", [(3, 5, -1), (16, 0, 1)]),
    ("fill_i16", [(1, 3, -1), (8, 0, 1)]),
    ("fill_i32", [(1, 2, -1)]),
    ("fill_i64", [(1, 1, -1), (2, 0, 1)]),
    ("fill_f32", [(1, 2, 1.5)]),
    ("fill_f64", [(1, 1, -2.5)]),
    # Overlapping ranges of one buffer: IREE's memcpy behaves as memmove here (glibc x86-64).
    ("copy", [(0, 4, 8), (4, 0, 8), (0, 1, 15), (1, 0, 15), (3, 3, 5), (16, 16, 0)]),
    ("compare", [(0, 0, 16), (1, 0, 15), (16, 16, 0), (3, 3, 13)]),
    ("hash", [(0, 16), (16, 0), (3, 7)]),
]


@pytest.mark.parametrize("function,calls", BUFFER_RESULTS, ids=[f for f, _ in BUFFER_RESULTS])
def test_buffer_ops_match_iree_run_module(function, calls):
    for args in calls:
        check_results(prog("buffers.vm.mlir"), function, *args)


def test_wrapped_element_offsets_access_where_iree_does():
    """Loads, stores and fills check ((offset + count) * size) mod 2**64 and address data + offset
    elements, wrapping too (buffer.h iree_vm_buffer_check_ro/rw): an offset of 2**62 i32 elements is
    byte 0 again. IREE reads and writes there; so do we (we used to trap)."""
    path = prog("buffers.vm.mlir")
    assert check_results(path, "load_i32", 1 << 62) == [RODATA_WORDS[0]]
    check_results(path, "load_i32", (1 << 62) + 1)
    check_results(path, "load_i32", -(1 << 62))
    check_results(path, "load_i64", 1 << 61)
    assert check_results(path, "fill_i32", 1 << 62, 1, 9)[0] == 9
    check_results(path, "fill_i16", -(1 << 63), 1, 7)
    check_results(path, "fill_i64", 1 << 61, 1, 4)


BUFFER_FAILURES = [
    # allocator.c iree_allocator_malloc_aligned: alignments must be 0 or powers of two (the i32
    # operand sign-extended to the host size)
    ("alloc", (16, 3), INVALID, True),
    ("alloc", (16, -1), INVALID, True),
    ("clone", (15, 1, 3), INVALID, True),
    ("clone", (0, 16, -8), INVALID, True),
    # iree_vm_buffer_create sizes the block PREFIX + length in host arithmetic: 2**64 - 48 wraps to
    # 0 (checked before the alignment), a little less overflows the aligned size.
    ("alloc", (-48, 3), INVALID, True),
    ("alloc", (-49, 0), OOR, True),
    ("alloc", (-64, 0), OOR, True),
    ("alloc", (-1000, 32), EXHAUSTED, False),  # libc malloc fails; we stop at our 1 GiB limit
    ("clone", (8, 9, 0), OOR, True),
    ("clone", (17, 0, 0), OOR, True),
    ("clone", (16, 0, 0), OOR, True),  # an empty clone; the store into it is out of range
    ("load_i32", (4,), OOR, True),
    ("load_i16", (8,), OOR, True),
    ("load_i64", (2,), OOR, True),
    # rodata is read-only: PERMISSION_DENIED, checked before the range (even a 0-byte fill)
    ("store_rodata", (0,), DENIED, True),
    ("fill_rodata", (0, 0), DENIED, True),
    ("fill_rodata", (20, 0), DENIED, True),
    ("copy_to_rodata", (0,), DENIED, True),
    ("fill_i8", (17, 0, 1), OOR, True),
    ("fill_i8", (15, 2, 1), OOR, True),
    ("fill_i16", (7, 2, 1), OOR, True),
    ("fill_i16", (9, 0, 1), OOR, True),
    ("fill_i64", (3, 0, 1), OOR, True),
    ("fill_f32", (3, 2, 1.5), OOR, True),
    ("copy", (0, 8, 9), OOR, True),
    ("copy", (17, 0, 0), OOR, True),
    ("compare", (17, 0, 0), OOR, True),
    ("compare", (0, 16, 1), OOR, True),
    ("hash", (0, 17), OOR, True),
    ("hash", (17, 0), OOR, True),
] + [(f"null_{op}", (), INVALID, True) for op in (
    "length", "clone", "copy_src", "copy_dst", "compare_lhs", "compare_rhs", "fill", "load",
    "store", "hash", "load_f32", "store_f64", "fill_f32")]


@pytest.mark.parametrize("function,args,code,same_message", BUFFER_FAILURES,
                         ids=[f"{f}{a}" for f, a, _, _ in BUFFER_FAILURES])
def test_buffer_failures_match_iree_run_module(function, args, code, same_message):
    check_status(prog("buffers.vm.mlir"), function, args, code, same_message)


def test_buffer_traps_where_iree_leaves_the_buffer():
    path = prog("buffers.vm.mlir")
    # alloc of 2**64 - 1 bytes: IREE's PREFIX + length wraps to a 47-byte block, yet the buffer
    # reports 2**64 - 1 bytes (buffer.c iree_vm_buffer_create).
    assert [int(v) for v in theirs(path, "alloc", -1, 0)] == [-1]
    check_trap(path, "alloc", -1, 0, match="wraps to a 47-byte block")
    # Offsets whose wrapped address lies before the buffer: IREE's check passes and it reads or
    # writes outside the buffer (a fill at -1 leaves every byte of the buffer as it was).
    theirs(path, "load_i32", -1)  # succeeds, with bytes from before the buffer
    check_trap(path, "load_i32", -1, match="passes IREE's wrapping bounds check")
    assert [int(v) for v in theirs(path, "fill_i8", -1, 1, 5)] == RODATA_WORDS
    check_trap(path, "fill_i8", -1, 1, 5, match="passes IREE's wrapping bounds check")
    theirs(path, "copy", -1, 0, 1)
    check_trap(path, "copy", -1, 0, 1, match="passes IREE's wrapping bounds check")
    # Lengths that wrap the check: IREE copies/fills far past the buffer and the process dies.
    for function, args in [("clone", (16, -16, 0)), ("fill_i32", (1, (1 << 62) - 1, 3)),
                           ("fill_i8", (1, -1, 5))]:
        proc = tools.run_module_failure([path], function, [_arg(a) for a in args])
        assert "result[" not in proc.stdout and "; invoking function" not in proc.stderr
        check_trap(path, function, *args, match="passes IREE's wrapping bounds check")


def test_byte_offsets_not_multiple_of_the_element_size():
    """util.buffer byte offsets/lengths become element offsets/counts by a signed division the
    compiler emits (vm.div.i64.s); vm.buffer ops never see a misaligned offset."""
    path = prog("util_ops.mlir")
    for args in [(2, 7, 0x11), (5, 9, 0x22), (4, 3, 7), (13, 4, 1)]:
        check_results(path, "fill_bytes", *args)
    for offset in (1, 2, 3, 6):
        check_results(path, "load_bytes", offset)
    check_status(path, "fill_bytes", (16, 4, 1), OOR)


# --------------------------------------------------------------------------------------------------
# vm.list

LIST_RESULTS = [
    # `!vm.list<?>` encodes as `!vm.opaque`: a variant list (it used to be taken for a ref list).
    ("variant_convert", [(-5, (1 << 40) + 7, 2.5, 1e300), (0x7FFFFFFF, -1, -0.0, float("nan"))]),
    ("narrow", [(0x1FF, 0x18234), (-129, -32769)]),
    ("regrow", [(9, 0), (9, 1), (9, 2)]),
    ("variant_regrow", [(0,), (1,)]),
    ("variant_get_i32", [(1,)]),
    # list.get.ref of another type than the result's is null (dispatch.c ListGetRef); all lists
    # are the one `vm.list` type.
    ("variant_get_buffer", [(0,), (2,), (3,)]),
    ("variant_get_list", [(0,), (2,), (3,)]),
    ("variant_any", [(1,)]),  # typed !vm.ref<?>: no ref type matches, always null
    # list.alloc's type operand is the element type: `!vm.list<i32>` elements, a ref list.
    ("nested", [(0, 0), (0, 1), (1, 1)]),
    ("oob", [(3, 2, 1)]),
    ("alloc", [(1000,)]),
    ("reserve", [(1 << 20,)]),
    ("resize", [(1 << 16,)]),
]


@pytest.mark.parametrize("function,calls", LIST_RESULTS, ids=[f for f, _ in LIST_RESULTS])
def test_list_ops_match_iree_run_module(function, calls):
    for args in calls:
        check_results(prog("lists.vm.mlir"), function, *args)


def test_util_variant_list_of_values():
    check_results(prog("util_ops.mlir"), "variant_values", -3, 1 << 40)


LIST_FAILURES = [
    ("variant_get_i32", (0,), PRECONDITION, True),  # a buffer
    ("variant_get_i32", (2,), PRECONDITION, True),  # empty
    ("variant_get_i32", (3,), OOR, True),
    # list.c iree_vm_list_get_ref: a variant holding a value, FAILED_PRECONDITION without a message
    ("variant_get_buffer", (1,), PRECONDITION, False),
    ("variant_get_list", (1,), PRECONDITION, False),
    ("nested", (2, 0), OOR, True),
    ("nested", (0, 2), OOR, True),
    ("oob", (2, 2, 0), OOR, True),
    ("oob", (2, 2, 1), OOR, True),
    ("oob", (2, -1, 0), OOR, True),  # the index is unsigned: 4294967295
    ("oob", (2, -1, 1), OOR, True),
    ("oob", (0, 0, 0), OOR, True),
    # 4294967295 variants (or i64s) to reserve: the allocator fails; we stop at our limit
    ("alloc", (-1,), EXHAUSTED, False),
    ("reserve", (-1,), EXHAUSTED, False),
]


@pytest.mark.parametrize("function,args,code,same_message", LIST_FAILURES,
                         ids=[f"{f}{a}" for f, a, _, _ in LIST_FAILURES])
def test_list_failures_match_iree_run_module(function, args, code, same_message):
    check_status(prog("lists.vm.mlir"), function, args, code, same_message)


def test_list_sizes_beyond_the_limit_fail_cleanly():
    """IREE grows an i8 list to 4294967295 elements (a 4 GiB block: list.c iree_vm_list_reserve);
    the interpreter bounds list storage by the buffer factory's max_allocation instead."""
    for err in ours(prog("lists.vm.mlir"), "resize", -1):
        assert isinstance(err, VmStatusError) and err.code == EXHAUSTED
        assert "list size of 4294967295 elements (i8)" in str(err) and "in resize at pc" in str(err)


@pytest.mark.parametrize("element,code,message", [
    ("!vm.buffer", INVALID, "source ref type mismatch"),  # list.c iree_vm_list_set_ref (checked)
    ("i32", PRECONDITION, "list cannot store refs"),
    ("!vm.opaque", None, None),  # a variant list takes the inner list as well
])
def test_list_set_ref_checks_the_element_type(element, code, message):
    """@nested with its list.alloc type operand rewritten to another element type."""
    types = read_module(prog("lists.vm.mlir")).types
    path, raw = patched_module("lists.vm.mlir", "nested", "list.alloc", "type",
                               lambda inst: struct.pack("<I", types.index(element)))
    if code is None:
        check_results(path, "nested", 0, 0, module=raw)
    else:
        check_status(path, "nested", (0, 0), code, module=raw)
        assert f"{code.name}; {message}" in str(ours(raw, "nested", 0, 0)[0])


# --------------------------------------------------------------------------------------------------
# Refs


def test_ref_ops_match_iree_run_module():
    path = prog("refs.vm.mlir")
    check_results(path, "cast_to_buffer", 1)
    check_results(path, "cast_null", 1)
    check_results(path, "select_any", 0)  # null passes any type check
    for i in (1, 2, -1):
        check_results(path, "switch_any", i)
    check_results(path, "cmp", 1)
    assert check_results(path, "discard", 1) == [1, 0]  # discard.refs releases, MOVE or not
    check_results(path, "global_load_twice", 8)


@pytest.mark.parametrize("function,args", [
    ("cast_to_list", (1,)),  # a buffer cast to !vm.list<i32>
    # `!vm.ref<?>` is `!vm.opaque`, whose type def has no ref type: retain_or_move_checked rejects
    # every non-null ref (select.ref, switch.ref, global.store.ref)
    ("select_any", (1,)),
    ("switch_any", (0,)),
    ("global_any", (1,)),
])
def test_ref_type_mismatches_match_iree_run_module(function, args):
    check_status(prog("refs.vm.mlir"), function, args, INVALID)


@pytest.mark.parametrize("program,function,mnemonic,field", [
    # Borrowed operands: dispatch.c decodes them without the MOVE bit, nothing is released (we used
    # to release a MOVE-marked comparison operand; the later vm.cmp.ne.ref then saw null).
    ("refs.vm.mlir", "cmp", "cmp.eq.ref", "lhs"),
    ("buffers.vm.mlir", "clone", "buffer.clone", "source"),
    ("lists.vm.mlir", "nested", "list.set.ref", "list"),
    # A MOVE bit on the result of a load moves the ref out of the global / list (dispatch.c
    # GlobalLoadRef, ListGetRef pass the result's bit to retain_or_move): the second load is null.
    ("refs.vm.mlir", "global_load_twice", "global.load.ref", "result"),
    ("lists.vm.mlir", "list_get_twice", "list.get.ref", "result"),
])
def test_move_bits_as_iree_reads_them(program, function, mnemonic, field):
    path, raw = patched_module(program, function, mnemonic, field, with_move_bit(field))
    args = {"cmp": (1,), "clone": (4, 8, 16), "nested": (0, 0), "global_load_twice": (8,),
            "list_get_twice": (8,)}[function]
    expected = check_results(path, function, *args, module=raw)
    if field == "result":
        assert [int(v) for v in expected[:2]] == [1, 0]
