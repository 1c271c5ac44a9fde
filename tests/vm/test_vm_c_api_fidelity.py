"""Fidelity of the VM buffer and ref C APIs against IREE's sources (runtime/src/iree/vm/buffer.c,
buffer.h, ref.c, ref.h, instance.c; runtime/src/iree/base/allocator.c). Each test names the IREE
function whose behaviour it pins; the expected values are read from that code."""
from __future__ import annotations

import pytest

from ireeabi.base import allocator as A
from ireeabi.vm import buffer as B
from ireeabi.vm import ref as R
from ireeabi.base.allocator import AllocatorT
from ireeabi.vm.buffer import BufferAccess, BufferType
from ireeabi.base.heap import Heap, HeapError
from ireeabi.vm.ref import Ref, RefCountError, RefError, TypeRegistry
from ireeabi.base.status import StatusCode, StatusError

from support.allocator_recorder import Recorder  # a logging ctl served from the heap

from ireeabi.base.machine import host as _host_machine
from ireeabi.layouts.buffer import VmBufferLayout
from ireeabi.layouts.ref import RefLayout

HOST_M = _host_machine()  # the data model of the default (host) heap

RW = BufferAccess.MUTABLE | BufferAccess.ORIGIN_HOST
MASK = HOST_M.word_mask
P = HOST_M.pointer_size
MAX_ALIGN = HOST_M.target.max_align
INT32_MAX = (1 << 31) - 1


class Objects:
    """Objects of one registered ref type (counter at ptr + 4 * tag); destroy logs and frees."""

    def __init__(self, heap: Heap, types: TypeRegistry, name: str = "fidelity.object", tag: int = 0) -> None:
        self.heap = heap
        self.destroyed: list[int] = []
        self.type = types.define(name, self._destroy, offsetof_counter=tag)
        self.t = self.type.type

    def new(self, count: int = 1) -> int:
        p = self.heap.malloc(4 * (R.TAG_MASK + 1), zero=True, tag=self.type.name)
        self.heap.write_i32(R.counter_address(p, self.t), count)
        return p

    def count(self, p: int) -> int:
        return self.heap.read_i32(R.counter_address(p, self.t))

    def _destroy(self, p: int) -> None:
        self.destroyed.append(p)
        self.heap.free(p)


def slot(heap: Heap, value: Ref = R.NULL_REF) -> int:
    a = heap.malloc(heap.machine.view(RefLayout).size)
    R.write_ref(heap, a, value)
    return a


# -- buffer.c: create / clone size arithmetic -------------------------------------------------------


def test_create_wrapped_total_of_zero_is_malloc_aligneds_invalid_argument(heap: Heap, buffers: BufferType) -> None:
    """buffer.c iree_vm_buffer_create: `total_size = prefix_size + length` is not overflow-checked, so
    prefix + length == 2**N reaches allocator.c iree_allocator_malloc_aligned as byte_length 0:
    INVALID_ARGUMENT "allocations must be >0 bytes" (not an overflow status)."""
    with pytest.raises(StatusError) as e:
        buffers.create(RW, MASK - HOST_M.view(VmBufferLayout).prefix_size + 1)
    assert (e.value.code, e.value.message) == (StatusCode.INVALID_ARGUMENT, "allocations must be >0 bytes")


def test_create_wrapped_total_checks_alignment_next(heap: Heap, buffers: BufferType) -> None:
    """allocator.c iree_allocator_malloc_aligned checks byte_length, then the alignment: with a wrapped
    (non-zero) total and alignment 3 the status is INVALID_ARGUMENT "alignments must be powers of two
    (got 3)"."""
    with pytest.raises(StatusError) as e:
        buffers.create(RW, MASK - HOST_M.view(VmBufferLayout).prefix_size + 11, 3)
    assert (e.value.code, e.value.message) == (StatusCode.INVALID_ARGUMENT,
                                               "alignments must be powers of two (got 3)")


def test_create_wrapped_total_goes_to_the_allocator_then_is_reported(heap: Heap, buffers: BufferType) -> None:
    """buffer.c iree_vm_buffer_create with prefix + length wrapping to 10: malloc_aligned requests
    sizeof(uintptr_t) + 10 + max(0, iree_max_align_t) bytes (allocator.c, via CALLOC as
    iree_allocator_malloc), and the handle plus a `length`-byte span would then be written past that
    block: reported as BufferOverflowError, the block freed again, nothing written or leaked. With a
    null allocator the allocator's own status comes first (allocator.c iree_allocator_issue_alloc)."""
    rec = Recorder(heap)
    length = MASK - HOST_M.view(VmBufferLayout).prefix_size + 11
    with pytest.raises(B.BufferOverflowError, match="wraps to a 10-byte block") as e:
        buffers.create(RW, length, 0, AllocatorT(0, rec.address))
    assert isinstance(e.value, HeapError)
    assert rec.log[0] == ("CALLOC", P + 10 + MAX_ALIGN)
    assert [c for c, _ in rec.log] == ["CALLOC", "FREE"]
    with pytest.raises(StatusError) as e2:
        buffers.create(RW, length, 0, A.allocator_null())
    assert (e2.value.code, e2.value.message) == (StatusCode.INVALID_ARGUMENT, "allocator has no control routine")
    rec.close()


def test_create_largest_unwrapped_length_is_the_size_overflow(heap: Heap, buffers: BufferType) -> None:
    """prefix + length == 2**N - 1 does not wrap in buffer.c; allocator.c iree_allocator_malloc_aligned's
    checked add of sizeof(uintptr_t) and the alignment fails: OUT_OF_RANGE "aligned allocation size
    overflow"."""
    with pytest.raises(StatusError) as e:
        buffers.create(RW, MASK - HOST_M.view(VmBufferLayout).prefix_size)
    assert (e.value.code, e.value.message) == (StatusCode.OUT_OF_RANGE, "aligned allocation size overflow")


def test_clone_of_a_huge_span_wraps_like_create(heap: Heap, buffers: BufferType) -> None:
    """buffer.c iree_vm_buffer_clone: map_ro(source, offset, length, 1) passes for a handle initialized
    over a (2**N - 1)-byte span, then `prefix_size + source_span.data_length` wraps unchecked to 0:
    malloc_aligned's INVALID_ARGUMENT "allocations must be >0 bytes". No source byte is read."""
    handle = heap.malloc(HOST_M.view(VmBufferLayout).size)
    data = heap.malloc(16)
    buffers.initialize(RW, data, MASK, A.allocator_null(), handle)
    with pytest.raises(StatusError) as e:
        buffers.clone(RW, handle, 0, MASK - HOST_M.view(VmBufferLayout).prefix_size + 1)
    assert (e.value.code, e.value.message) == (StatusCode.INVALID_ARGUMENT, "allocations must be >0 bytes")
    with pytest.raises(B.BufferOverflowError):  # wraps to 10 bytes: allocated, then reported
        buffers.clone(RW, handle, 0, MASK - HOST_M.view(VmBufferLayout).prefix_size + 11)
    heap.free(data)
    heap.free(handle)


# -- buffer.c / buffer.h: NULL handles behind a vm.buffer-typed ref ------------------------------------


def test_check_deref_checks_only_the_type_word(heap: Heap, buffers: BufferType) -> None:
    """buffer.c iree_vm_buffer_check_deref / _or_null: iree_vm_ref_check compares the type word only,
    so {NULL, vm.buffer} yields OK with a NULL buffer; {NULL, NULL} is "ref is null" for check_deref
    and NULL for _or_null."""
    typed_null = Ref(0, buffers.type)
    assert buffers.check_deref(typed_null) == 0
    assert buffers.check_deref_or_null(typed_null) == 0
    with pytest.raises(StatusError, match="ref is null"):
        buffers.check_deref(R.NULL_REF)
    b = buffers.create(RW, 4)
    assert buffers.check_deref(Ref(b, buffers.type)) == b
    buffers.release(b)


def test_as_string_of_a_null_buffer_is_empty(heap: Heap, buffers: BufferType) -> None:
    """buffer.h iree_vm_buffer_as_string(NULL) is the empty string view; callers such as
    hal_loader's query_support run it on what iree_vm_buffer_check_deref returned, so a
    {NULL, vm.buffer} ref reads as "". A NULL-typed ref still fails in check_deref ("ref is null")."""
    assert buffers.text(Ref(0, buffers.type)) == ""
    with pytest.raises(StatusError, match="ref is null"):
        buffers.text(R.NULL_REF)
    b = buffers.create(RW, 3)
    heap.write(buffers.data(b), b"abc")
    assert buffers.text(Ref(b, buffers.type)) == "abc"
    buffers.release(b)


def test_map_rw_checks_access_before_bounds_and_alignment_zero_maps_nothing(heap: Heap,
                                                                            buffers: BufferType) -> None:
    """buffer.c iree_vm_buffer_map_rw returns PERMISSION_DENIED before iree_vm_buffer_map looks at the
    range; iree_vm_buffer_map rounds with `x & ~(alignment - 1)`, so alignment 0 maps (data, 0)
    whatever the offset and length."""
    ro = buffers.create(BufferAccess.ORIGIN_HOST, 8)
    with pytest.raises(StatusError) as e:
        buffers.map_rw(ro, 100, 100)
    assert e.value.code == StatusCode.PERMISSION_DENIED
    assert buffers.map_ro(ro, 5, 100, 0) == (buffers.data(ro), 0)
    buffers.release(ro)


def test_fill_validates_element_length_only_after_mapping(heap: Heap, buffers: BufferType) -> None:
    """buffer.c iree_vm_buffer_fill_elements maps first (PERMISSION_DENIED / OUT_OF_RANGE) and rejects
    an element length outside {1, 2, 4, 8} only in the switch after it; read_elements never checks it."""
    ro = buffers.create(BufferAccess.ORIGIN_HOST, 8)
    with pytest.raises(StatusError) as e:
        buffers.fill_elements(ro, 0, 1, 3, 0)
    assert e.value.code == StatusCode.PERMISSION_DENIED
    rw = buffers.create(RW, 8)
    with pytest.raises(StatusError) as e:
        buffers.fill_elements(rw, 0, 1, 3, 0)
    assert e.value.code == StatusCode.INVALID_ARGUMENT
    assert buffers.read_elements(rw, 0, 2, 3) == bytes(4)  # 6 bytes rounded down to alignment 3's mask
    buffers.release(ro)
    buffers.release(rw)


# -- ref.c / ref.h ----------------------------------------------------------------------------------


def test_typed_move_ref_of_null_keeps_the_type(heap: Heap, types: TypeRegistry) -> None:
    """ref.h IREE_VM_DEFINE_TYPE_ADAPTERS: X_move_ref(NULL) is ref.c iree_vm_ref_wrap_assign(NULL,
    type, &{0}), which stores ptr and type unconditionally: {NULL, type}, not null by
    iree_vm_ref_is_null. X_retain_ref(NULL) goes through wrap_retain, whose `out_ref->ptr == ptr`
    early return leaves {0, 0}."""
    objs = Objects(heap, types)
    moved = objs.type.move_ref(0)
    assert moved == Ref(0, objs.t) and not moved.is_null
    assert objs.type.retain_ref(0) == R.NULL_REF


def test_wrap_retain_of_null_releases_the_old_value(heap: Heap, types: TypeRegistry) -> None:
    """ref.c iree_vm_ref_wrap_retain(NULL, type, out): out->ptr NULL -> no-op (out unchanged);
    otherwise the old value is released and {NULL, type} stored with no counter touched."""
    objs = Objects(heap, types)
    q = objs.new()
    out = slot(heap)
    R.wrap_retain(heap, 0, objs.t, out)
    assert R.read_ref(heap, out) == R.NULL_REF
    R.write_ref(heap, out, Ref(q, objs.t))
    R.wrap_retain(heap, 0, objs.t, out)
    assert objs.destroyed == [q] and R.read_ref(heap, out) == Ref(0, objs.t)
    heap.free(out)


def test_wrap_retain_compares_before_touching_the_counter(heap: Heap, types: TypeRegistry) -> None:
    """ref.c iree_vm_ref_wrap_retain returns at once when out->ptr == ptr (no counter access): an
    object whose counter is at INT32_MAX already in `out` is a no-op, not an overflow."""
    objs = Objects(heap, types)
    p = objs.new(INT32_MAX)
    out = slot(heap, Ref(p, objs.t))
    R.wrap_retain(heap, p, objs.t, out)
    assert objs.count(p) == INT32_MAX and R.read_ref(heap, out) == Ref(p, objs.t)
    other = slot(heap)
    with pytest.raises(RefCountError):  # a real retain past INT32_MAX is still refused
        R.wrap_retain(heap, p, objs.t, other)
    assert objs.count(p) == INT32_MAX and R.read_ref(heap, other) == R.NULL_REF
    heap.write_i32(R.counter_address(p, objs.t), 1)
    R.release(heap, out)
    heap.free(out)
    heap.free(other)


def test_wrap_assign_takes_no_reference(heap: Heap, types: TypeRegistry) -> None:
    """ref.c iree_vm_ref_wrap_assign never reads or changes the counter: an object at INT32_MAX can be
    wrapped (the caller's reference is taken over); its NULL checks are IREE_VM_REF_ASSERT only."""
    objs = Objects(heap, types)
    p = objs.new(INT32_MAX)
    out = slot(heap)
    R.wrap_assign(heap, p, objs.t, out)
    assert objs.count(p) == INT32_MAX and R.read_ref(heap, out) == Ref(p, objs.t)
    heap.write_i32(R.counter_address(p, objs.t), 1)
    R.release(heap, out)
    assert objs.destroyed == [p]
    heap.free(out)


def test_same_slot_as_source_and_target(heap: Heap, types: TypeRegistry) -> None:
    """ref.c: iree_vm_ref_move and iree_vm_ref_assign return at once when ref == out_ref;
    iree_vm_ref_retain retains before it releases, so retain_or_move(0, r, r) leaves the count as
    it was (even at 1) and retain_or_move(1, r, r) is a move: nothing."""
    objs = Objects(heap, types)
    p = objs.new()
    s = slot(heap, Ref(p, objs.t))
    for is_move in (0, 1, 2):  # `if (is_move)`: any non-zero int moves
        R.retain_or_move(heap, is_move, s, s)
        assert objs.count(p) == 1 and R.read_ref(heap, s) == Ref(p, objs.t)
    R.retain_or_move_checked(heap, 0, s, objs.t, s)
    R.assign(heap, s, s)
    assert objs.count(p) == 1 and objs.destroyed == []
    R.release(heap, s)
    assert objs.destroyed == [p]
    heap.free(s)


def test_checked_type_mismatch_changes_nothing_even_for_a_move(heap: Heap, types: TypeRegistry) -> None:
    """ref.c iree_vm_ref_retain_or_move_checked: a source type that is not NULL, not `type` and with
    `type` not ANY is INVALID_ARGUMENT "source ref type mismatch" before any move; a NULL source type
    passes whatever `type` is."""
    objs, others = Objects(heap, types), Objects(heap, types, name="fidelity.other")
    p = objs.new()
    src, dst = slot(heap, Ref(p, objs.t)), slot(heap)
    with pytest.raises(StatusError) as e:
        R.retain_or_move_checked(heap, 1, src, others.t, dst)
    assert (e.value.code, e.value.message) == (StatusCode.INVALID_ARGUMENT, "source ref type mismatch")
    assert R.read_ref(heap, src) == Ref(p, objs.t) and R.read_ref(heap, dst) == R.NULL_REF
    R.write_ref(heap, src, Ref(0x1000, 0))  # NULL type: accepted, and a move copies it as is
    R.retain_or_move_checked(heap, 1, src, others.t, dst)
    assert R.read_ref(heap, dst) == Ref(0x1000, 0) and R.read_ref(heap, src) == R.NULL_REF
    R.release_value(heap, Ref(p, objs.t))
    heap.free(src)
    heap.free(dst)


def test_release_of_a_null_ref_leaves_it_untouched(heap: Heap, types: TypeRegistry) -> None:
    """ref.c iree_vm_ref_release returns before the memset when the type is NULL or the ptr is NULL:
    {p, 0} and {0, type} stay in memory as they were, and p's counter is not touched."""
    objs = Objects(heap, types)
    p = objs.new()
    s = slot(heap, Ref(p, 0))
    R.release(heap, s)
    assert R.read_ref(heap, s) == Ref(p, 0) and objs.count(p) == 1
    R.write_ref(heap, s, Ref(0, objs.t))
    R.release(heap, s)
    assert R.read_ref(heap, s) == Ref(0, objs.t)
    R.release_value(heap, Ref(p, objs.t))
    heap.free(s)


def test_wrap_assign_null_is_the_paranoid_assert(heap: Heap, types: TypeRegistry) -> None:
    """ref.c iree_vm_ref_wrap_assign: IREE_VM_REF_ASSERT(ptr) / (type) (IREE_VM_REF_PARANOID only).
    The model keeps that assert as RefError and changes nothing."""
    objs = Objects(heap, types)
    out = slot(heap)
    for ptr, t in ((0, objs.t), (0x1000, 0)):
        with pytest.raises(RefError):
            R.wrap_assign(heap, ptr, t, out)
        assert R.read_ref(heap, out) == R.NULL_REF
    heap.free(out)


# -- instance.c: type registration -------------------------------------------------------------------


def test_type_capacity_is_resource_exhausted(heap: Heap) -> None:
    """instance.c iree_vm_instance_register_type: a new descriptor beyond type_capacity is
    RESOURCE_EXHAUSTED "too many user-defined types registered; new type <name> would exceed capacity
    of <n>"; re-registering a known descriptor only counts. iree_vm_instance_create stores the
    capacity in a uint16_t field, so 65536 + 2 is 2."""
    types = TypeRegistry(heap, capacity=(1 << 16) + 2)
    a = types.define("cap.a", None)
    types.define("cap.b", None)
    before = len(heap.leaks())
    with pytest.raises(StatusError) as e:
        types.define("cap.c", None)
    assert (e.value.code, e.value.message) == (
        StatusCode.RESOURCE_EXHAUSTED,
        "too many user-defined types registered; new type cap.c would exceed capacity of 2")
    assert len(heap.leaks()) == before  # the refused descriptor is not left behind
    assert types.register(a.descriptor) == a.type  # already known: fine while full
    types.unregister(a.descriptor)
    a.close()  # frees a slot
    types.define("cap.c", None)
    types.close()
