"""hal/buffer_view.py called directly: buffer views in target memory on every data model (the
`hal` and `hal_inline` modules' buffer_view exports reach them in tests/modules/hal).

Expected values from IREE's sources: runtime/src/iree/hal/buffer_view.c
(iree_hal_buffer_view_create: one host allocation of the header and `shape_rank` dims, the buffer
retained, byte_length = iree_hal_element_packed_byte_count of the element count, computed in
iree_device_size_t arithmetic; iree_hal_buffer_view_destroy: the buffer released, the allocation
freed with the view's allocator) and hal/buffer_view.h (iree_hal_element_packed_byte_count:
(count * bits + 7) / 8).
"""
from __future__ import annotations

from typing import Iterator

import pytest

from ireeabi.abi import targets
from ireeabi.hal.buffer import BufferTypes
from ireeabi.hal.buffer_view import BufferViewTypes
from ireeabi.layouts.hal_buffer import ElementType, NumericalType, iree_hal_make_element_type
from ireeabi.base import allocator as _alloc
from ireeabi.vm.ref import TypeRegistry


I1 = iree_hal_make_element_type(NumericalType.INTEGER, 1)


@pytest.fixture
def views(types: TypeRegistry) -> Iterator[BufferViewTypes]:
    buffers = BufferTypes(types)
    v = BufferViewTypes(types, buffers)
    yield v
    v.close()
    buffers.close()


def _device_size_max(target: str) -> int:
    return (1 << 8 * targets.get(target).scalar("size_t").size) - 1  # iree_device_size_t is size_t


@pytest.mark.parametrize("target", targets.names())
@pytest.mark.parametrize("shape, element_type", [
    ([2, 3, 4], ElementType.FLOAT_32), ([], ElementType.INT_8), ([5, 0], ElementType.FLOAT_16),
    ([3], ElementType.INT_4), ([7], I1)])
def test_a_view_holds_its_shape_type_and_packed_byte_length(views, heap, target, shape, element_type):
    buffer = views.buffers.allocate(64)
    view = views.create(buffer, shape, int(element_type), 1, _alloc.heap_allocator(heap))
    count = 1
    for d in shape:
        count *= d
    assert views.shape(view) == shape and views.rank(view) == len(shape)
    assert (views.element_type(view), views.encoding_type(view)) == (int(element_type), 1)
    assert views.byte_length(view) == (count * (int(element_type) & 0xFF) + 7) // 8
    assert views.buffer(view) == buffer
    assert views.buffers.resources.counter(buffer) == 2  # the caller's and the view's
    views.resources.release(view)
    assert views.buffers.resources.counter(buffer) == 1
    views.buffers.resources.release(buffer)


@pytest.mark.parametrize("target", ["x86_64", "riscv32"])
def test_byte_length_wraps_in_device_size_arithmetic(views, heap, target):
    """Each step of (count * bits + 7) / 8 wraps modulo the device size (IREE checks no overflow
    there; the view's length is not compared with its buffer's)."""
    top = _device_size_max(target)
    buffer = views.buffers.allocate(16)
    shape = [top // 2 + 1, 2]  # count == top + 1: zero once wrapped
    view = views.create(buffer, shape, int(ElementType.FLOAT_32), 0, _alloc.heap_allocator(heap))
    assert views.shape(view) == shape
    assert views.byte_length(view) == ((((top // 2 + 1) * 2 & top) * 32 & top) + 7 & top) // 8 == 0
    views.resources.release(view)
    views.buffers.resources.release(buffer)
