"""iree_vm_buffer_t on real memory: co-allocation, in-place and module storage, mapping, and the destroy
rule before and after IREE #24827."""
from __future__ import annotations

import numpy as np
import pytest

from ireeabi.abi.layout import Array, Field, Scalar, Struct
from ireeabi.layouts import base as LB
from ireeabi.layouts import buffer as LBUF
from ireeabi.base import allocator as A
from ireeabi.vm import buffer as B
from ireeabi.base import callbacks
from ireeabi.vm import module_ref
from ireeabi.vm import ref as R
from ireeabi.base.allocator import AllocatorT, Command
from ireeabi.vm.buffer import AbortError, BufferAccess, BufferType
from ireeabi.base.heap import Heap, HeapError, LeakError, tracked_heap
from ireeabi.vm.ref import TypeRegistry
from ireeabi.base.status import StatusCode, StatusError
from ireeabi.layouts.ref import RefLayout
from ireeabi.layouts.buffer import VmBufferLayout


RW = BufferAccess.MUTABLE | BufferAccess.ORIGIN_HOST


def test_create_is_one_aligned_coallocation(heap: Heap, buffers: BufferType) -> None:
    prefix = LB.iree_sizeof_struct(LBUF.iree_vm_buffer_t, heap.target)
    if heap.target.name == "x86_64":
        assert prefix == 48  # fact sheet §6.2 (measured)
    for alignment in (0, 8, 64, 4096):
        b = buffers.create(RW, 10, alignment)
        assert buffers.data(b) - b == prefix == heap.machine.view(VmBufferLayout).prefix_size
        # iree_aligned_ptr masks with ~(alignment - 1): divisibility for a power of two; on i386
        # (iree_max_align_t = 12) only the bits of 11 are cleared, as IREE's arithmetic does.
        assert buffers.data(b) & (max(alignment, heap.target.max_align) - 1) == 0
        assert (buffers.counter(b), buffers.length(b), buffers.access(b)) == (1, 10, RW)
        assert buffers.is_coallocated(b) and buffers.storage_module(b) == 0
        assert heap.is_aligned(b)
        buffers.release(b)
    assert heap.leaks() == [a for a in heap.leaks() if "ref type" in a.tag]


def test_access_bits_and_mapping(heap: Heap, buffers: BufferType) -> None:
    ro = buffers.create(BufferAccess.ORIGIN_HOST, 16)
    rw = buffers.create(RW, 16)
    with pytest.raises(StatusError) as e:
        buffers.map_rw(ro, 0, 4)
    assert e.value.code == StatusCode.PERMISSION_DENIED
    assert buffers.map_ro(ro, 3, 4) == (buffers.data(ro) + 3, 4)  # reads ignore access bits
    assert buffers.map_ro(rw, 7, 7, 4) == (buffers.data(rw) + 4, 4)  # offset and length rounded down
    with pytest.raises(StatusError) as e:
        buffers.map_ro(rw, 10, 7)
    assert e.value.code == StatusCode.OUT_OF_RANGE and "buffer length=16" in e.value.message
    assert buffers.contents(ro) == (0, 0) and buffers.const_contents(ro) == (buffers.data(ro), 16)
    buffers.release(ro)
    buffers.release(rw)


def test_wrapping_bounds_check_is_reported_not_made(heap: Heap, buffers: BufferType) -> None:
    """buffer.c does not check offset + length for overflow: its check passes, the access it would make
    (before the data, i.e. into the handle of a co-allocation) is reported instead."""
    b = buffers.create(RW, 16)
    before = heap.read(b, heap.machine.view(VmBufferLayout).prefix_size + 16)
    huge = heap.machine.word_mask  # offset + 1 wraps to 0 <= 16: IREE writes the byte before the data
    for op in (lambda: buffers.map_ro(b, huge, 1), lambda: buffers.fill_bytes(b, huge, 1, 0x5A),
               lambda: buffers.copy_bytes(b, 0, b, huge, 1)):
        with pytest.raises(B.BufferOverflowError, match="wraps to 0") as e:
            op()
        assert isinstance(e.value, HeapError) and e.value.address == b
    assert heap.read(b, heap.machine.view(VmBufferLayout).prefix_size + 16) == before  # the handle is intact
    buffers.release(b)


def test_fill_elements_offsets_count_elements(heap: Heap, buffers: BufferType) -> None:
    b = buffers.create(RW, 16)
    buffers.fill_elements(b, 1, 2, 4, 0xA1B2C3D4)  # elements 1 and 2, i.e. bytes 4..11
    arr = buffers.as_numpy(b, np.uint32)
    assert arr.tolist() == [0, 0xA1B2C3D4, 0xA1B2C3D4, 0]
    buffers.fill_bytes(b, 15, 1, 0xEE)
    assert buffers.read_elements(b, 7, 1, 2) == b"\x00\xee"
    with pytest.raises(StatusError) as e:
        buffers.fill_elements(b, 0, 1, 3, 1)
    assert e.value.code == StatusCode.INVALID_ARGUMENT and "[1, 2, 4, 8]" in e.value.message
    with pytest.raises(StatusError) as e:
        buffers.fill_elements(b, 3, 2, 4, 0)  # (3 + 2) * 4 > 16
    assert e.value.code == StatusCode.OUT_OF_RANGE
    buffers.release(b)


def test_wrapped_element_count_overruns_are_caught(heap: Heap, buffers: BufferType) -> None:
    """count * 8 wraps to 0 so the map passes; buffer.c would then loop `count` times: reported."""
    b = buffers.create(RW, 16)
    with pytest.raises(B.BufferOverflowError, match="would write"):
        buffers.fill_elements(b, 0, 1 << (8 * heap.pointer_size - 3), 8, 0)
    buffers.release(b)


def test_copy_compare_clone_and_numpy_views(heap: Heap, buffers: BufferType) -> None:
    a = buffers.create(RW, 8)
    view = buffers.as_numpy(a, np.uint8)
    view[:] = np.arange(8)  # zero-copy: visible through the heap
    assert heap.read(buffers.data(a), 8) == bytes(range(8))
    c = buffers.clone(BufferAccess.ORIGIN_HOST, a, 2, 4)
    assert buffers.as_numpy(c, np.uint8).tolist() == [2, 3, 4, 5]
    assert not buffers.as_numpy(c, np.uint8).flags.writeable  # not MUTABLE
    assert buffers.compare_bytes(a, 2, c, 0, 4) and not buffers.compare_bytes(a, 0, c, 0, 4)
    with pytest.raises(StatusError) as e:
        buffers.clone(RW, a, 6, 4)  # the source map fails first
    assert e.value.code == StatusCode.OUT_OF_RANGE
    d = buffers.create(RW, 8)
    buffers.copy_bytes(a, 4, d, 0, 4)
    assert buffers.as_numpy(d, "<u4")[0] == int.from_bytes(bytes([4, 5, 6, 7]), "little")
    with pytest.raises(B.BufferViewError):
        buffers.as_numpy(c, np.float64)
    for x in (a, c, d):
        buffers.release(x)


def test_in_place_initialize_and_deinitialize(heap: Heap, buffers: BufferType) -> None:
    a = A.heap_allocator(heap)
    handle = heap.malloc(heap.machine.view(VmBufferLayout).size)
    data = A.malloc(heap, a, 32)
    buffers.initialize(RW | BufferAccess.COALLOCATED, data, 32, a, handle)
    assert buffers.counter(handle) == 1 and not buffers.is_coallocated(handle)  # callers cannot tag
    assert buffers.allocator(handle) == a
    buffers.retain(handle)
    with pytest.raises(AbortError):
        buffers.deinitialize(handle)  # someone still holds it
    buffers.release(handle)
    buffers.deinitialize(handle)  # frees the data, not the handle
    assert heap.allocation(data) is None
    heap.free(handle)


def test_module_storage_retains_its_module(heap: Heap, buffers: BufferType) -> None:
    destroyed: list[int] = []
    module = module_ref.create(heap, destroyed.append, name="rodata owner")
    rodata = heap.malloc(8)
    handle = heap.malloc(heap.machine.view(VmBufferLayout).size)
    buffers.initialize_module_storage(rodata, 8, module, handle)
    assert (buffers.counter(handle), buffers.access(handle)) == (0, BufferAccess.ORIGIN_MODULE)
    assert buffers.allocator(handle).is_null
    ref = buffers.move_ref(handle)  # module storage: move_ref retains (0 -> 1 retains the module)
    assert buffers.counter(handle) == 1 and module_ref.ref_count(heap, module) == 2
    R.release_value(heap, ref)  # 1 -> 0: destroy releases the module
    assert buffers.counter(handle) == 0 and module_ref.ref_count(heap, module) == 1
    buffers.deinitialize(handle)  # counter 0: fine
    module_ref.release(heap, module)
    assert destroyed and heap.allocation(module) is None
    heap.free(handle)
    heap.free(rodata)


def test_buffer_refs(heap: Heap, buffers: BufferType) -> None:
    b = buffers.create(RW, 4)
    r = buffers.retain_ref(b)
    assert buffers.counter(b) == 2 and buffers.check_deref(r) == b
    out = heap.malloc(heap.machine.view(RefLayout).size)
    buffers.wrap_retain(b, out)
    buffers.wrap_retain(b, out)  # already there: nothing
    assert buffers.counter(b) == 3
    R.release(heap, out)
    R.release_value(heap, r)
    with pytest.raises(StatusError, match="ref is null"):
        buffers.check_deref(R.NULL_REF)
    assert buffers.check_deref_or_null(R.NULL_REF) == 0
    buffers.release(b)
    heap.free(out)


# -- the destroy rule: IREE #24827 ----------------------------------------------------------------

WRAPPER = Struct("wrapper_t", [
    Field("word_below", Scalar("uintptr_t"), doc="whatever the embedding struct keeps before the handle"),
    Field("buffer", LBUF.iree_vm_buffer_t),
    Field("payload", Array(Scalar("uint8_t"), 24)),
])


class WrapperAllocator:
    """A custom allocator owning wrapper structs: FREE of a handle frees its wrapper (container_of)."""

    def __init__(self, heap: Heap) -> None:
        self.heap = heap
        self.wrap = heap.machine.layout(WRAPPER)  # the wrapper laid out for the heap's target
        self.frees: list[int] = []
        self.ctl = A.make_ctl(heap, self._ctl, name="wrapper allocator")

    def _ctl(self, self_ptr: int, command: int, params: int, inout: int) -> None:
        if command != Command.FREE:
            raise StatusError(StatusCode.UNIMPLEMENTED, "wrapper allocator only frees")
        handle = self.heap.read_word(inout)
        self.frees.append(handle)
        self.heap.free(handle - self.wrap.field("buffer").offset)

    @property
    def value(self) -> AllocatorT:
        return AllocatorT(0, self.ctl)

    def new_buffer(self, buffers: BufferType, word_below: int) -> int:
        wrapper = self.heap.malloc(self.wrap.size, tag="wrapper_t")
        self.heap.write_word(wrapper, word_below)
        handle = wrapper + self.wrap.field("buffer").offset
        buffers.initialize(RW, wrapper + self.wrap.field("payload").offset, 24, self.value, handle)
        return handle

    def close(self) -> None:
        self.heap.functions.forget(self.ctl)


def test_fixed_destroy_hands_an_in_place_handle_to_its_allocator(heap: Heap, types: TypeRegistry) -> None:
    bt = BufferType(types, legacy=False)
    wa = WrapperAllocator(heap)
    handle = wa.new_buffer(bt, word_below=0x1234)
    ref = bt.move_ref(handle)
    R.release_value(heap, ref)  # 1 -> 0
    assert wa.frees == [handle]  # FREE received the handle itself
    wa.close()
    bt.close()  # the heap fixture then finds nothing leaked


def test_legacy_destroy_free_aligned_of_in_place_handle_is_a_heap_error(heap: Heap, types: TypeRegistry) -> None:
    bt = BufferType(types, legacy=True)
    wa = WrapperAllocator(heap)
    handle = wa.new_buffer(bt, word_below=0)
    with pytest.raises(HeapError, match=f"free_aligned of 0x{handle:x}, which malloc_aligned did not return"):
        R.release_value(heap, bt.move_ref(handle))
    assert wa.frees == []
    heap.free(handle - wa.wrap.field("buffer").offset)
    wa.close()
    bt.close()


@pytest.mark.parametrize("word_below", [0, 0x1234])
def test_legacy_destroy_as_iree_runs_it(target: "str | None", word_below: int) -> None:
    """With a lenient heap the pre-fix arithmetic runs (fact sheet §6.3, measured): word below = 0 ->
    FREE never called and the wrapper leaks; word = 0x1234 -> FREE(0x1234), a free of garbage."""
    with pytest.raises((LeakError, HeapError)) as e:
        with tracked_heap(target=target, strict_aligned=False) as heap:
            types = TypeRegistry(heap)
            bt = BufferType(types, legacy=True)
            wa = WrapperAllocator(heap)
            handle = wa.new_buffer(bt, word_below)
            try:
                R.release_value(heap, bt.move_ref(handle))
            finally:
                wa.close()
                types.close()
    if word_below == 0:
        assert type(e.value) is LeakError and wa.frees == []
        assert [a.tag for a in e.value.leaks] == ["wrapper_t"]
        assert e.value.leaks[0].address == handle - wa.wrap.field("buffer").offset
    else:
        assert type(e.value) is HeapError and wa.frees == [word_below]
        assert e.value.address == word_below - wa.wrap.field("buffer").offset


def test_the_legacy_rule_is_a_switch_of_each_buffer_type(heap: Heap) -> None:
    # two registries on one heap, one type each: each follows its own switch (no process state)
    legacy_types, fixed_types = TypeRegistry(heap), TypeRegistry(heap)
    legacy, fixed = BufferType(legacy_types, legacy=True), BufferType(fixed_types)
    assert (legacy.legacy, fixed.legacy) == (True, False)
    wa = WrapperAllocator(heap)
    handle = wa.new_buffer(legacy, word_below=0)
    with pytest.raises(HeapError, match="free_aligned"):
        R.release_value(heap, legacy.move_ref(handle))
    handle2 = wa.new_buffer(fixed, word_below=0)
    R.release_value(heap, fixed.move_ref(handle2))
    assert wa.frees == [handle2]
    heap.free(handle - wa.wrap.field("buffer").offset)
    wa.close()
    legacy.close(), fixed.close()
    legacy_types.close(), fixed_types.close()


@pytest.mark.parametrize("legacy", [False, True])
def test_coallocated_buffers_free_cleanly_under_both_rules(legacy: bool, heap: Heap, types: TypeRegistry) -> None:
    bt = BufferType(types, legacy=legacy)
    b = bt.create(RW, 100, 64)
    c = bt.clone(RW, b, 10, 20)
    assert bt.is_coallocated(b) == (not legacy)  # the pre-fix code has no tag
    bt.release(b)
    bt.release(c)
    bt.close()
