"""Fidelity of the emulated hal_inline exports to IREE's C sources (edge values, error order, casts).

Sources cited below are in the IREE mirror at runtime/src/iree/...; where a case was also run on the
real runtime (iree-run-module 3.13 from iree-base-runtime), the differential test at the end compares
the status code and text byte for byte.
"""
from __future__ import annotations

import re

import pytest

from support import iree_tools as tools
from ireeabi.layouts.hal_buffer import HEAP_BUFFER_ALIGNMENT
from ireeabi.layouts import hal_buffer as HB
from ireeabi.layouts import hal_inline as HI
from ireeabi.base.machine import host as _host_machine
from ireeabi.vm import ref as R
from ireeabi.vm.buffer import BufferOverflowError
from ireeabi.base.heap import HeapError
from ireeabi.base.status import IreeFaultError, StatusCode, StatusError

HOST_M = _host_machine()  # the data model of the default (host) heap

F32 = HB.iree_hal_make_element_type(HB.NumericalType.FLOAT_IEEE, 32)
I32 = HB.iree_hal_make_element_type(HB.NumericalType.INTEGER, 32)
DENSE = 1  # IREE_HAL_ENCODING_TYPE_DENSE_ROW_MAJOR
U64 = (1 << 64) - 1
_WRAPPER = HOST_M.layout(HI.iree_hal_inline_storage_buffer_t)


def _status(session, name, *args) -> StatusError:
    with pytest.raises(StatusError) as e:
        session.call(name, *args)
    return e.value


def _length(session, buf) -> int:
    return session.call("hal_inline.buffer.length", buf)[0]


# -- buffer.allocate ------------------------------------------------------------------------------


@pytest.mark.parametrize("alignment", [0, 3, -1, 4096])
def test_allocate_ignores_min_alignment(session, alignment):
    """hal/allocator_heap.c iree_hal_heap_allocator_allocate_buffer never reads params.min_alignment;
    hal/buffer_heap.c iree_hal_heap_buffer_allocate_slab aligns the data to
    IREE_HAL_HEAP_BUFFER_ALIGNMENT (64) whatever was asked: no alignment is rejected."""
    buf, storage = session.call("hal_inline.buffer.allocate", alignment, 16)
    assert _length(session, buf) == 16
    assert session.rt.vm_buffers.data(storage.ptr) % HEAP_BUFFER_ALIGNMENT == 0


@pytest.mark.parametrize("size,code,message", [
    (-160, StatusCode.INVALID_ARGUMENT, "allocations must be >0 bytes"),
    (-161, StatusCode.OUT_OF_RANGE, "aligned allocation size overflow"),
    (-232, StatusCode.OUT_OF_RANGE, "aligned allocation size overflow"),
    (-233, StatusCode.RESOURCE_EXHAUSTED, None),
    (-(1 << 40), StatusCode.RESOURCE_EXHAUSTED, None),
])
def test_allocate_negative_size_fails_as_the_slab_arithmetic(session, size, code, message):
    """module.c iree_hal_cast_device_size makes a negative i64 a huge size; buffer_heap.c
    iree_hal_heap_buffer_allocate_slab adds it to the 160-byte header unchecked; base/allocator.c
    iree_allocator_malloc_aligned then rejects a 0 total (INVALID_ARGUMENT), a total whose
    + 8 + 64 overflows (OUT_OF_RANGE), and the allocator cannot provide the rest. (160 and these
    boundaries were measured with iree-run-module, see the differential test.)"""
    e = _status(session, "hal_inline.buffer.allocate", 64, size)
    assert e.code == code
    if message is not None:
        assert e.message == message
    assert session.rt.hal_buffers.resources.live() == []


@pytest.mark.parametrize("size", [-1, -159])
def test_allocate_wrapping_slab_is_reported_not_made(session, size):
    """buffer_heap.c iree_hal_heap_buffer_allocate_slab: for sizes -159..-1 the total wraps to a
    1..159-byte block that IREE allocates and describes as a buffer of 2**64 + size bytes (the real
    runtime returns length -1 for size -1): reported as a memory error, nothing allocated."""
    with pytest.raises(BufferOverflowError, match="wraps to"):
        session.call("hal_inline.buffer.allocate", 64, size)
    assert session.rt.hal_buffers.resources.live() == []


# -- buffer.subspan -------------------------------------------------------------------------------


def test_subspan_whole_buffer_length(session):
    """hal/buffer.c iree_hal_buffer_calculate_range: a length of IREE_HAL_WHOLE_BUFFER (the i64 -1
    cast to a device size) means "to the end"; a whole-range subspan of an allocation is the
    allocation itself, retained (iree_hal_buffer_subspan's fast path)."""
    buf, _ = session.allocate(64)
    (sub,) = session.call("hal_inline.buffer.subspan", buf, 8, -1)
    assert _length(session, sub) == 56
    (same,) = session.call("hal_inline.buffer.subspan", buf, 0, -1)
    # ours + the storage wrapper + its mapping + `sub` (a subspan retains its allocation) + `same`
    assert same == buf and session.rt.hal_buffers.resources.counter(buf.ptr) == 5
    (empty,) = session.call("hal_inline.buffer.subspan", buf, 64, 0)  # offset == length, 0 bytes
    assert _length(session, empty) == 0


def test_subspan_of_subspan_fast_path_uses_the_adjusted_offset(session):
    """hal/buffer.c iree_hal_buffer_subspan compares calculate_range's *adjusted* offset (the
    buffer's own byte_offset + offset) with 0: a whole-range subspan of a subspan starting at 16
    is a new subspan of the allocation; one starting at 0 returns itself."""
    buf, storage = session.allocate(64)
    session.rt.vm_buffers.as_numpy(storage.ptr, "uint8")[:] = range(64)
    (inner,) = session.call("hal_inline.buffer.subspan", buf, 16, 32)
    (again,) = session.call("hal_inline.buffer.subspan", inner, 0, 32)
    assert again != inner and _length(session, again) == 32
    (st,) = session.call("hal_inline.buffer.storage", again)
    assert bytes(session.rt.vm_buffers.as_numpy(st.ptr, "uint8")) == bytes(range(16, 48))
    (head,) = session.call("hal_inline.buffer.subspan", buf, 0, 32)
    (same,) = session.call("hal_inline.buffer.subspan", head, 0, -1)
    assert same == head


@pytest.mark.parametrize("offset,length,message", [
    (65, 0, "attempted to access an address off the end of the valid buffer range (offset=65, length=0, "
            "buffer byte_length=64); invalid subspan of an existing buffer (source_offset=65, length=0)"),
    (-8, 8, f"attempted to access an address off the end of the valid buffer range (offset={U64 - 7}, "
            f"length=8, buffer byte_length=64); invalid subspan of an existing buffer "
            f"(source_offset={U64 - 7}, length=8)"),
    (48, 32, "attempted to access an address outside of the valid buffer range (offset=48, "
             "adjusted_length=32, end=79, buffer byte_length=64); invalid subspan of an existing buffer "
             "(source_offset=48, length=32)"),
])
def test_subspan_errors_are_calculate_range_annotated_once(session, offset, length, message):
    """hal/buffer.c iree_hal_buffer_calculate_range's two OUT_OF_RANGE texts (device sizes printed
    unsigned), annotated once by module.c buffer_subspan."""
    buf, _ = session.allocate(64)
    e = _status(session, "hal_inline.buffer.subspan", buf, offset, length)
    assert (e.code, e.message) == (StatusCode.OUT_OF_RANGE, message)
    assert session.rt.hal_buffers.resources.counter(buf.ptr) == 3  # ours, storage wrapper, mapping


def test_subspan_whose_end_wraps_is_reported_not_made(session):
    """hal/buffer.c iree_hal_buffer_calculate_range: end = 8 + (2**64 - 2) - 1 wraps to 5 < 64, so
    IREE accepts a subspan of 2**64 - 2 bytes (the real runtime returns length -2): reported as a
    memory error, no buffer made, no reference taken."""
    buf, _ = session.allocate(64)
    with pytest.raises(BufferOverflowError, match="wraps to end 5"):
        session.call("hal_inline.buffer.subspan", buf, 8, -2)
    assert session.rt.hal_buffers.resources.counter(buf.ptr) == 3
    assert len(session.rt.hal_buffers.resources.live()) == 1


def test_storage_mapping_of_a_subspan_records_the_allocation_offset(session):
    """hal/buffer.c iree_hal_buffer_prepare_map_range stores calculate_range's adjusted offset
    (subspan byte_offset + offset) in mapping.impl.byte_offset; buffer_heap.c map_range points the
    contents at data + that offset."""
    buf, storage = session.allocate(64)
    (sub,) = session.call("hal_inline.buffer.subspan", buf, 16, 32)
    (st,) = session.call("hal_inline.buffer.storage", sub)
    wrapper = st.ptr - _WRAPPER.offsetof("vm_buffer")
    heap = session.rt.heap
    assert heap.read_word(wrapper + _WRAPPER.offsetof("mapping.impl.byte_offset")) == 16
    assert heap.read_word(wrapper + _WRAPPER.offsetof("mapping.contents.data")) == \
        session.rt.vm_buffers.data(storage.ptr) + 16
    assert heap.read_word(wrapper + _WRAPPER.offsetof("mapping.contents.data_length")) == 32


# -- buffer_view.create / dim ---------------------------------------------------------------------


def test_view_create_checks_the_buffer_before_the_dim_count(session):
    """module.c buffer_view_create: iree_hal_buffer_check_deref(r0) runs before
    IREE_VM_ABI_VLA_STACK_CAST, whose status is OUT_OF_RANGE "count %u > %u" (vm/shims.h)."""
    e = _status(session, "hal_inline.buffer_view.create", R.NULL_REF, 0, 0, F32, DENSE, [1] * 129)
    assert (e.code, e.message) == (StatusCode.INVALID_ARGUMENT, "ref is null")
    buf, _ = session.allocate(64)
    e = _status(session, "hal_inline.buffer_view.create", buf, 0, 64, F32, DENSE, [1] * 129)
    assert (e.code, e.message) == (StatusCode.OUT_OF_RANGE, "count 129 > 128")
    session.call("hal_inline.buffer_view.create", buf, 0, 64, F32, DENSE, [1] * 128)


def test_view_create_whole_buffer_length_views_the_buffer_itself(session):
    """module.c buffer_view_create subspans when length != byte_length; iree_hal_buffer_subspan of
    (0, WHOLE_BUFFER) returns the buffer itself, so the view holds the original buffer."""
    buf, _ = session.allocate(64)
    (view,) = session.call("hal_inline.buffer_view.create", buf, 0, -1, F32, DENSE, [16])
    assert session.call("hal_inline.buffer_view.buffer", view) == [buf]
    (view,) = session.call("hal_inline.buffer_view.create", buf, 16, -1, F32, DENSE, [12])
    (b,) = session.call("hal_inline.buffer_view.buffer", view)
    assert b != buf and _length(session, b) == 48
    e = _status(session, "hal_inline.buffer_view.create", buf, 60, 8, F32, DENSE, [2])
    assert e.message.endswith("; invalid subspan of an existing buffer (source_offset=60, length=8)")
    assert e.message.count("invalid subspan") == 1


def test_view_byte_length_and_dims_are_device_sizes(session):
    """hal/buffer_view.c iree_hal_buffer_view_create: dims cast to iree_hal_dim_t (size_t), element
    count and iree_hal_element_packed_byte_count wrap modulo 2**64: [-1, 2] x f32 gives
    ((2**64 - 2) * 32 mod 2**64 + 7) / 8 = 2**61 - 8. module.c buffer_view_dim returns the dim cast
    to int64_t: -1."""
    buf, _ = session.allocate(64)
    (view,) = session.call("hal_inline.buffer_view.create", buf, 0, 64, F32, DENSE, [-1, 2])
    assert session.rt.views.byte_length(view.ptr) == (1 << 61) - 8
    assert session.call("hal_inline.buffer_view.dim", view, 0) == [-1]
    assert session.call("hal_inline.buffer_view.dim", view, 1) == [2]


def test_view_dim_at_rank_reads_past_the_dims(session):
    """hal/buffer_view.c iree_hal_buffer_view_shape_dim returns 0 only for index > rank: index ==
    rank reads shape[rank], one dim past the view's allocation (a negative i32 index becomes a huge
    size_t and gives 0)."""
    buf, _ = session.allocate(64)
    (view,) = session.call("hal_inline.buffer_view.create", buf, 0, 64, F32, DENSE, [4, 4])
    assert session.call("hal_inline.buffer_view.dim", view, 3) == [0]
    assert session.call("hal_inline.buffer_view.dim", view, -1) == [0]
    with pytest.raises(HeapError, match="outside every live allocation"):
        session.call("hal_inline.buffer_view.dim", view, 2)


# -- buffer_view.assert ---------------------------------------------------------------------------


@pytest.fixture
def view4(session):
    """A dense f32 [4] view over a 64-byte buffer."""
    buf, _ = session.allocate(64)
    return session.call("hal_inline.buffer_view.create", buf, 0, 64, F32, DENSE, [4])[0]


def test_assert_requires_a_message_buffer(session, view4):
    """modules/hal/utils/buffer_diagnostics.c iree_hal_modules_buffer_view_assert derefs the message
    with iree_vm_buffer_check_deref (not _or_null) before comparing anything: a null message fails
    even when the view matches; the view is checked first, the dim count before both."""
    e = _status(session, "hal_inline.buffer_view.assert", view4, R.NULL_REF, F32, DENSE, [4])
    assert (e.code, e.message) == (StatusCode.INVALID_ARGUMENT, "ref is null")
    e = _status(session, "hal_inline.buffer_view.assert", view4, view4, F32, DENSE, [4])
    assert e.message == "ref type mismatch"
    e = _status(session, "hal_inline.buffer_view.assert", R.NULL_REF, R.NULL_REF, F32, DENSE, [1] * 129)
    assert (e.code, e.message) == (StatusCode.OUT_OF_RANGE, "count 129 > 128")
    session.call("hal_inline.buffer_view.assert", view4, session.bytes_buffer(b"in"), F32, DENSE, [4])


def test_assert_reads_the_message_only_to_report_a_failure(session, view4):
    """iree_hal_modules_buffer_view_assert takes the message as iree_vm_buffer_as_string (a view, no
    read) and formats it only into a failing status: a message whose data lies outside memory passes
    a matching view; on a mismatch, where IREE would read it, ireeabi refuses instead."""
    vmb = session.rt.vm_buffers
    msg = session.bytes_buffer(b"in")
    L, heap = vmb._L, session.rt.heap
    span = heap.unpack(L.span_fmt, msg.ptr + L.data_off)
    heap.pack(L.span_fmt, msg.ptr + L.data_off, 0x10, 2)  # below every allocation
    try:
        session.call("hal_inline.buffer_view.assert", view4, msg, F32, DENSE, [4])
        with pytest.raises(HeapError, match="outside every live allocation"):
            session.call("hal_inline.buffer_view.assert", view4, msg, F32, DENSE, [5])
    finally:
        heap.pack(L.span_fmt, msg.ptr + L.data_off, *span)


@pytest.mark.parametrize("msg,element_type,encoding,shape,code,message", [
    (b"in", F32, DENSE, [], StatusCode.INVALID_ARGUMENT,
     "in shape rank mismatch; expected 0 (scalar) but have 1; expected shape ``, actual shape `4`"),
    (b"in", F32, DENSE, [4, 4], StatusCode.INVALID_ARGUMENT,
     "in shape rank mismatch; expected 2 but have 1; expected shape `4x4`, actual shape `4`"),
    (b"in", F32, DENSE, [-1], StatusCode.INVALID_ARGUMENT,
     f"in shape dimension 0 mismatch; expected {U64} but have 4; expected shape `{U64}`, actual shape `4`"),
    (b"in", F32, DENSE, [-1, -1], StatusCode.OUT_OF_RANGE, ""),  # `UxU` is 41 chars: format fails
    (b"in", I32, DENSE, [4], StatusCode.INVALID_ARGUMENT,
     "in element type mismatch; expected i32 (10000020) but have f32 (21000020)"),
    (b"in", 5, DENSE, [4], StatusCode.INVALID_ARGUMENT,
     "in element type mismatch; expected *5 (00000005) but have f32 (21000020)"),
    (b"", F32, -1, [4], StatusCode.INVALID_ARGUMENT, " encoding mismatch; expected FFFFFFFF but have 00000001"),
])
def test_assert_statuses(session, view4, msg, element_type, encoding, shape, code, message):
    """buffer_diagnostics.c iree_hal_modules_buffer_view_assert as built with
    IREE_HAL_MODULE_STRING_UTIL_ENABLE (base/config.h default): "%.*s" message prefix as is,
    uint32 types as %08X, dims as %zu with " (scalar)" for rank 0, both shapes appended; a shape
    text of 32+ chars makes iree_hal_format_shape (hal/string_util.c) fail with a bare OUT_OF_RANGE."""
    e = _status(session, "hal_inline.buffer_view.assert", view4, session.bytes_buffer(msg), element_type,
                encoding, shape)
    assert (e.code, e.message) == (code, message)


# -- device.query.i64 -----------------------------------------------------------------------------


def test_query_requires_both_buffers_category_first(session):
    """module.c device_query_i64 derefs category then key with iree_vm_buffer_check_deref: null is
    INVALID_ARGUMENT, not a failed lookup."""
    cat = session.bytes_buffer(b"hal.cpu")
    e = _status(session, "hal_inline.device.query.i64", cat, R.NULL_REF)
    assert (e.code, e.message) == (StatusCode.INVALID_ARGUMENT, "ref is null")
    buf, _ = session.allocate(8)
    e = _status(session, "hal_inline.device.query.i64", buf, R.NULL_REF)
    assert e.message == "ref type mismatch"
    unknown = session.bytes_buffer(b"no-such-key")
    assert session.call("hal_inline.device.query.i64", cat, unknown) == [0, 0]


# -- the same cases on the real runtime -------------------------------------------------------------

_VM_SOURCE = """
vm.module @fidelity {
  vm.import private @hal_inline.buffer.allocate(%align : i32, %size : i64) -> (!vm.ref<!hal.buffer>, !vm.buffer)
  vm.import private @hal_inline.buffer.length(%b : !vm.ref<!hal.buffer>) -> i64
  vm.import private @hal_inline.buffer.subspan(%b : !vm.ref<!hal.buffer>, %o : i64, %l : i64) -> !vm.ref<!hal.buffer>
  vm.import private @hal_inline.buffer_view.create(%b : !vm.ref<!hal.buffer>, %o : i64, %l : i64, %et : i32, %enc : i32, %shape : i64 ...) -> !vm.ref<!hal.buffer_view>
  vm.import private @hal_inline.buffer_view.assert(%v : !vm.ref<!hal.buffer_view>, %msg : !vm.buffer, %et : i32, %enc : i32, %shape : i64 ...)
  vm.import private @hal_inline.device.query.i64(%c : !vm.buffer, %k : !vm.buffer) -> (i32, i64)
  vm.rodata private @msg dense<[105, 110]> : tensor<2xi8>
  vm.func @alloc(%align : i32, %size : i64) -> i64 {
    %b, %st = vm.call @hal_inline.buffer.allocate(%align, %size) : (i32, i64) -> (!vm.ref<!hal.buffer>, !vm.buffer)
    %r = vm.call @hal_inline.buffer.length(%b) : (!vm.ref<!hal.buffer>) -> i64
    vm.return %r : i64
  }
  vm.export @alloc
  vm.func @subspan(%o : i64, %l : i64) -> i64 {
    %a = vm.const.i32 64
    %n = vm.const.i64 64
    %b, %st = vm.call @hal_inline.buffer.allocate(%a, %n) : (i32, i64) -> (!vm.ref<!hal.buffer>, !vm.buffer)
    %s = vm.call @hal_inline.buffer.subspan(%b, %o, %l) : (!vm.ref<!hal.buffer>, i64, i64) -> !vm.ref<!hal.buffer>
    %r = vm.call @hal_inline.buffer.length(%s) : (!vm.ref<!hal.buffer>) -> i64
    vm.return %r : i64
  }
  vm.export @subspan
  vm.func @assert(%et : i32, %enc : i32, %rank : i32, %d0 : i64, %withmsg : i32) {
    %a = vm.const.i32 64
    %n = vm.const.i64 64
    %z = vm.const.i64 0
    %f32 = vm.const.i32 553648160
    %dense = vm.const.i32 1
    %c4 = vm.const.i64 4
    %b, %st = vm.call @hal_inline.buffer.allocate(%a, %n) : (i32, i64) -> (!vm.ref<!hal.buffer>, !vm.buffer)
    %v = vm.call.variadic @hal_inline.buffer_view.create(%b, %z, %n, %f32, %dense, [%c4]) : (!vm.ref<!hal.buffer>, i64, i64, i32, i32, i64 ...) -> !vm.ref<!hal.buffer_view>
    %m0 = vm.const.ref.rodata @msg : !vm.buffer
    %null = vm.const.ref.zero : !vm.buffer
    %m = vm.select.ref %withmsg, %m0, %null : !vm.buffer
    %c0 = vm.const.i32 0
    %c1 = vm.const.i32 1
    %is0 = vm.cmp.eq.i32 %rank, %c0 : i32
    vm.cond_br %is0, ^r0, ^n1
  ^r0:
    vm.call.variadic @hal_inline.buffer_view.assert(%v, %m, %et, %enc, []) : (!vm.ref<!hal.buffer_view>, !vm.buffer, i32, i32, i64 ...)
    vm.return
  ^n1:
    %is1 = vm.cmp.eq.i32 %rank, %c1 : i32
    vm.cond_br %is1, ^r1, ^r2
  ^r1:
    vm.call.variadic @hal_inline.buffer_view.assert(%v, %m, %et, %enc, [%d0]) : (!vm.ref<!hal.buffer_view>, !vm.buffer, i32, i32, i64 ...)
    vm.return
  ^r2:
    vm.call.variadic @hal_inline.buffer_view.assert(%v, %m, %et, %enc, [%d0, %d0]) : (!vm.ref<!hal.buffer_view>, !vm.buffer, i32, i32, i64 ...)
    vm.return
  }
  vm.export @assert
  vm.func @query() -> (i32, i64) {
    %m = vm.const.ref.rodata @msg : !vm.buffer
    %null = vm.const.ref.zero : !vm.buffer
    %ok, %v = vm.call @hal_inline.device.query.i64(%m, %null) : (!vm.buffer, !vm.buffer) -> (i32, i64)
    vm.return %ok, %v : i32, i64
  }
  vm.export @query
}
"""


@pytest.fixture(scope="module")
def fidelity_vmfb(tmp_path_factory):
    src = tmp_path_factory.mktemp("fidelity") / "fidelity.vm.mlir"
    src.write_text(_VM_SOURCE)
    return tools.compile_with_flags(src, tools.VM_INPUT_FLAGS, src.parent)


def _iree_outcome(path, function: str, inputs: list[str], results: int):
    """("ok", values) or (status code name, message) of one iree-run-module call."""
    try:
        return "ok", [int(v) for v in tools.run_module_results([path], function, inputs, results)]
    except tools.IreeToolError:
        stderr = tools.run_module_failure([path], function, inputs).stderr
    m = re.search(r"(?:^|: )([A-Z][A-Z_]+); (?:(.*?); )?while invoking native function", stderr, re.M)
    assert m, stderr
    return m.group(1), m.group(2) or ""


def _our_outcome(session, function: str, args: list[int]):
    """The same VM function's import calls made through the emulated shims."""
    try:
        if function == "alloc":
            buf, _ = session.call("hal_inline.buffer.allocate", *args)
            return "ok", [_length(session, buf)]
        if function == "subspan":
            buf, _ = session.allocate(64)
            return "ok", [_length(session, session.call("hal_inline.buffer.subspan", buf, *args)[0])]
        if function == "assert":
            et, enc, rank, d0, withmsg = args
            buf, _ = session.allocate(64)
            (view,) = session.call("hal_inline.buffer_view.create", buf, 0, 64, F32, DENSE, [4])
            msg = session.bytes_buffer(b"in") if withmsg else R.NULL_REF
            session.call("hal_inline.buffer_view.assert", view, msg, et, enc, [d0] * rank)
            return "ok", []
        if function == "query":
            return "ok", session.call("hal_inline.device.query.i64", session.bytes_buffer(b"in"), R.NULL_REF)
    except StatusError as e:
        return e.code.name, e.message
    raise AssertionError(function)


@pytest.mark.parametrize("function,args,results", [
    ("alloc", [3, 16], 1), ("alloc", [-1, 16], 1), ("alloc", [64, 0], 1),
    ("alloc", [64, -160], 1), ("alloc", [64, -161], 1), ("alloc", [64, -232], 1), ("alloc", [64, -233], 1),
    ("subspan", [8, -1], 1), ("subspan", [64, 0], 1), ("subspan", [65, 0], 1), ("subspan", [-8, 8], 1),
    ("subspan", [48, 32], 1),
    ("assert", [F32, DENSE, 1, 4, 1], 0), ("assert", [F32, DENSE, 1, 4, 0], 0),
    ("assert", [F32, DENSE, 0, 4, 1], 0), ("assert", [F32, DENSE, 2, 4, 1], 0),
    ("assert", [F32, DENSE, 1, -1, 1], 0), ("assert", [F32, DENSE, 2, -1, 1], 0),
    ("assert", [F32, DENSE, 2, 10 ** 14, 1], 0), ("assert", [I32, DENSE, 1, 4, 1], 0),
    ("assert", [5, DENSE, 1, 4, 1], 0), ("assert", [F32, -1, 1, 4, 1], 0),
    ("query", [], 2),
])
def test_matches_iree_run_module(session, fidelity_vmfb, function, args, results):
    """Status code and text (or results) of each case as the real runtime gives them."""
    theirs = _iree_outcome(fidelity_vmfb, function, [str(a) for a in args], results)
    ours = _our_outcome(session, function, args)
    if theirs[0] == "RESOURCE_EXHAUSTED":  # the allocator's own wording differs (libc vs our heap)
        assert ours[0] == theirs[0]
    else:
        assert ours == theirs


def test_a_status_without_message_is_annotated_without_an_empty_segment(fidelity_vmfb):
    """A rank-2 shape of dims -1 (2**64 - 1 as size_t) overflows buffer_view.assert's 32-byte shape
    text: IREE returns
    a bare OUT_OF_RANGE, and iree-run-module prints the code followed directly by its annotation.
    The interpreter's error does the same with its own annotation."""
    from ireeabi.base.heap import tracked_heap
    from ireeabi.vm.errors import VmStatusError
    from ireeabi.tooling.program import Program

    args = [str(a) for a in (F32, DENSE, 2, -1, 1)]
    stderr = tools.run_module_failure([fidelity_vmfb], "assert", args).stderr
    assert re.search(r"OUT_OF_RANGE; while invoking native function", stderr), stderr
    with tracked_heap() as heap, Program(fidelity_vmfb, heap=heap) as p:
        with pytest.raises(VmStatusError) as info:
            p.call("assert", F32, DENSE, 2, -1, 1)
    assert info.value.code is StatusCode.OUT_OF_RANGE and info.value.detail.startswith("while calling import")
    assert "OUT_OF_RANGE; while calling import hal_inline.buffer_view.assert" in str(info.value)


def test_a_forged_hal_buffer_ref_is_where_iree_faults(session):
    """iree_hal_buffer_check_deref (IREE_VM_DEFINE_TYPE_ADAPTERS) tests the ref's type word alone:
    a hal.buffer ref whose pointer is no live buffer reaches buffer.length, which reads through it.
    IREE's own runtime faults (or reads freed memory) there: refused saying so, not with a status."""
    buf, _ = session.call("hal_inline.buffer.allocate", 64, 16)
    forged = R.Ref(buf.ptr + 8, buf.type)
    with pytest.raises(IreeFaultError, match=rf"0x{forged.ptr:x} is not a live hal.buffer: IREE checks a "
                                             r"hal.buffer ref by its type word alone"):
        session.call("hal_inline.buffer.length", forged)
