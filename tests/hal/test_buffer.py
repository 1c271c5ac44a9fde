"""hal/buffer.py called directly: heap buffers, their ranges, subspans and mappings on every data
model (the `hal`, `hal_inline` and `hal_loader` modules reach them in tests/modules/hal).

Expected values: IREE's real `hal` module on a local-sync device (iree.runtime 3.13, through
support.full_hal_oracle.RealHal) for subspans and their lengths and refusals (buffer.subspan,
buffer.length); IREE's sources for the rest: runtime/src/iree/hal/buffer.c
(iree_hal_buffer_calculate_range, iree_hal_buffer_subspan, iree_hal_buffer_map_range,
iree_hal_buffer_unmap_range), hal/buffer_heap.c (IREE_HAL_HEAP_BUFFER_ALIGNMENT, zeroed contents:
iree_hal_heap_buffer_create fills with zeros) and base/allocator.c
(iree_allocator_malloc_aligned's overflow check).
"""
from __future__ import annotations

from typing import Iterator

import pytest

from ireeabi.abi import targets
from ireeabi.hal.buffer import BufferTypes, calculate_range
from ireeabi.layouts import hal_buffer as HB
from ireeabi.layouts.hal_buffer import HEAP_BUFFER_ALIGNMENT, heap_slab_header_size
from ireeabi.vm.buffer import BufferOverflowError
from ireeabi.vm.ref import TypeRegistry
from ireeabi.base.status import StatusCode, StatusError
from support.full_hal_oracle import Handle, RealHal

M, U = HB.MemoryType, HB.BufferUsage
MASK = (1 << 64) - 1
# (offset, length) subspans of a 64-byte buffer, as the VM passes them (i64: -1 is WHOLE_BUFFER).
SUBSPANS = [(16, 32), (0, 64), (0, -1), (16, -1), (64, 0), (100, 4), (48, 32), (65, -1)]


@pytest.fixture(scope="module")
def real_subspans() -> dict[tuple[int, int], object]:
    """The real buffer.subspan of a 64-byte buffer for each SUBSPANS entry: the subspan's length
    (buffer.length), or the refusal (code, message)."""
    real = RealHal()
    real.call("devices.get", (0,), 1)
    real.call("device.allocator", (Handle(0),), 1)
    real.call("allocator.allocate", (Handle(1), -1, int(M.DEVICE_LOCAL | M.HOST_VISIBLE),
                                     int(U.DEFAULT), 64), 1)
    out = {}
    for offset, length in SUBSPANS:
        got = real.call("buffer.subspan", (Handle(2), offset, length), 1)
        if isinstance(got, tuple):
            out[offset, length] = got
        else:
            out[offset, length] = real.call("buffer.length", (Handle(len(real.results) - 1),), 1)[0]
    return out


@pytest.fixture
def buffers(types: TypeRegistry) -> Iterator[BufferTypes]:
    b = BufferTypes(types)
    yield b
    b.close()


@pytest.mark.parametrize("offset, length", SUBSPANS)
def test_subspans_as_the_real_module_makes_them(buffers, real_subspans, offset, length):
    """The real module's refusal is iree_hal_buffer_subspan's status with the module's own
    annotation (modules/hal/module.c: "; invalid subspan of an existing buffer (...)") after it."""
    ptr = buffers.allocate(64)
    try:
        sub = buffers.subspan(ptr, offset, length)
    except StatusError as e:
        code, message = real_subspans[offset, length]
        assert (e.code.name, e.message) == (code, message.split("; invalid subspan of an existing buffer")[0])
    else:
        assert buffers.get(sub).byte_length == real_subspans[offset, length]
        buffers.resources.release(sub)
    finally:
        buffers.resources.release(ptr)


def test_a_subspan_views_its_root_and_retains_it(buffers):
    """iree_hal_buffer_subspan: a subspan of a subspan is a subspan of the allocated buffer at the
    summed offset; the whole buffer asked for is the buffer itself, retained."""
    root = buffers.allocate(64)
    inner = buffers.subspan(root, 16, 32)
    innermost = buffers.subspan(inner, 8, 8)
    b, r = buffers.get(innermost), buffers.get(root)
    assert (b.parent, b.byte_offset, b.storage, b.byte_length) == (root, 24, r.storage + 24, 8)
    assert buffers.resources.counter(root) == 3
    assert buffers.subspan(root, 0, -1) == root and buffers.resources.counter(root) == 4
    for p in (root, innermost, inner, root):
        buffers.resources.release(p)
    assert buffers.resources.live() == []


@pytest.mark.parametrize("target", ["x86_64", "riscv32"])
def test_allocations_are_zeroed_and_aligned(buffers, target):
    ptr = buffers.allocate(100)
    b = buffers.get(ptr)
    assert b.storage % HEAP_BUFFER_ALIGNMENT == 0 and HEAP_BUFFER_ALIGNMENT == 64
    assert buffers.heap.read(b.storage, 100) == bytes(100)
    assert (b.memory_type, b.allowed_access, b.allowed_usage) == \
        (int(M.OPTIMAL_FOR_HOST), int(HB.MemoryAccess.ALL), int(U.DEFAULT))
    buffers.resources.release(ptr)


@pytest.mark.parametrize("target", ["x86_64", "riscv32"])
def test_sizes_past_the_allocators_limit(buffers, target):
    """iree_allocator_malloc_aligned refuses a slab total (header + size) its overflow checks do not
    pass: OUT_OF_RANGE. A size whose total wraps to a small slab is one IREE allocates and then
    overruns (the real module returns such a buffer: tests/modules/hal/test_hal_module_fidelity.py);
    ireeabi refuses it, naming the wrap."""
    top = (1 << 8 * targets.get(target).scalar("size_t").size) - 1  # iree_device_size_t
    with pytest.raises(StatusError) as info:
        buffers.allocate(top - heap_slab_header_size(target))  # the total is the largest size
    assert (info.value.code, info.value.message) == (StatusCode.OUT_OF_RANGE, "aligned allocation size overflow")
    with pytest.raises(BufferOverflowError, match=f"heap buffer of {top} bytes: the slab total .* wraps to"):
        buffers.allocate(-1)  # the VM's i64 -1: the largest device size
    assert buffers.resources.live() == []


@pytest.mark.parametrize("offset, length, mask, expected", [
    (8, 16, MASK, (8, 16)), (8, MASK, MASK, (8, 56)), (64, 0, MASK, (64, 0)), (0, 0, MASK, (0, 0)),
    (8, (1 << 32) - 1, (1 << 32) - 1, (8, 56)),  # WHOLE_BUFFER of a 32-bit device size
])
def test_calculate_range_resolves_whole_buffer(offset, length, mask, expected):
    assert calculate_range(0x1000, 64, offset, length, mask) == expected


def test_calculate_range_refuses_what_iree_refuses_and_what_only_wraps():
    with pytest.raises(StatusError, match=r"off the end of the valid buffer range \(offset=65, "
                                          r"length=1, buffer byte_length=64\)"):
        calculate_range(0x1000, 64, 65, 1, MASK)
    with pytest.raises(StatusError, match=r"outside of the valid buffer range \(offset=60, "
                                          r"adjusted_length=8, end=67, buffer byte_length=64\)"):
        calculate_range(0x1000, 64, 60, 8, MASK)
    # offset + length - 1 wraps below 64: IREE's end check passes and it would make the range
    with pytest.raises(BufferOverflowError, match="wraps to end 5"):
        calculate_range(0x1000, 64, 8, MASK - 1, MASK)


@pytest.mark.parametrize("target", targets.names())
def test_a_scoped_mapping_holds_a_reference_until_it_is_unmapped(buffers, heap, target):
    """iree_hal_buffer_map_range: SCOPED mappings retain the buffer, PERSISTENT ones do not;
    unmapping releases a scoped mapping's reference and zeroes the mapping; unmapping it again is
    nothing."""
    ptr = buffers.allocate(64)
    size = HB.iree_hal_buffer_mapping_t.layout(heap.machine.target).size
    mapping = heap.malloc(size)
    for mode, held in ((HB.MappingMode.SCOPED, 2), (HB.MappingMode.PERSISTENT, 1)):
        buffers.map_range(ptr, int(mode), int(HB.MemoryAccess.READ), 8, 16, mapping)
        assert buffers.resources.counter(ptr) == held
        assert heap.read(mapping, size) != bytes(size)
        buffers.unmap_range(mapping)
        assert buffers.resources.counter(ptr) == 1 and heap.read(mapping, size) == bytes(size)
        buffers.unmap_range(mapping)
        assert buffers.resources.counter(ptr) == 1
    heap.free(mapping)
    buffers.resources.release(ptr)
