"""HAL buffer views in tracked memory, as runtime/src/iree/hal/buffer_view.c keeps them.

One allocation from the host allocator: the `iree_hal_buffer_view_t` header (catalog layout) followed
by `shape_rank` dims. The view retains its buffer; `byte_length` is ceil(prod(shape) * bits / 8) and
is not checked against the buffer's length (as IREE).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from ireeabi.layouts import hal_buffer as HB
from ireeabi.vm import allocator as _alloc
from ireeabi.vm import host
from ireeabi.vm.allocator import AllocatorT
from ireeabi.vm.heap import Heap
from ireeabi.vm.ref import Ref, TypeRegistry

from .buffer import BufferTypes
from .resource import ResourceType

_VIEW = host.layout(HB.iree_hal_buffer_view_t)
_DIM = host.HOST.scalar("size_t").size
_DIM_CODE = host.WORD


@dataclass
class ViewInfo:
    allocator: AllocatorT


class BufferViewTypes:
    def __init__(self, registry: TypeRegistry, buffers: BufferTypes) -> None:
        self.heap: Heap = registry.heap
        self.buffers = buffers
        self.resources: ResourceType[ViewInfo] = ResourceType(registry, "hal.buffer_view", self._destroy)
        self.type = self.resources.type

    def close(self) -> None:
        self.resources.close()

    def create(self, buffer: int, shape: Sequence[int], element_type: int, encoding_type: int,
               allocator: AllocatorT) -> int:
        """iree_hal_buffer_view_create: one header + dims allocation; the view's address."""
        rank = len(shape)
        ptr = _alloc.malloc(self.heap, allocator, _VIEW.size + rank * _DIM)
        v = self.heap.struct_at(HB.iree_hal_buffer_view_t, ptr)
        v.host_allocator.self, v.host_allocator.ctl = allocator.self, allocator.ctl
        self.buffers.resources.retain(buffer)
        v.buffer = buffer
        v.element_type = element_type & 0xFFFFFFFF
        v.encoding_type = encoding_type & 0xFFFFFFFF
        bits = HB.iree_hal_element_bit_count(element_type & 0xFFFFFFFF)
        v.byte_length = (math.prod(shape) * bits + 7) // 8 & host.WORD_MASK
        v.shape_rank = rank
        for i, d in enumerate(shape):
            self.heap.write_word(ptr + _VIEW.size + i * _DIM, d & host.WORD_MASK)
        return self.resources.adopt(ptr, ViewInfo(allocator))

    def _destroy(self, ptr: int, info: ViewInfo) -> None:
        buffer = self.heap.struct_at(HB.iree_hal_buffer_view_t, ptr).buffer
        self.buffers.resources.release(buffer)
        _alloc.free(self.heap, info.allocator, ptr)

    def deref(self, ref: Ref) -> int:
        return self.resources.deref(ref)[0]

    def _header(self, ptr: int):  # noqa: ANN202 - ctypes view
        return self.heap.struct_at(HB.iree_hal_buffer_view_t, ptr)

    def buffer(self, ptr: int) -> int:
        return self._header(ptr).buffer

    def element_type(self, ptr: int) -> int:
        return self._header(ptr).element_type

    def encoding_type(self, ptr: int) -> int:
        return self._header(ptr).encoding_type

    def rank(self, ptr: int) -> int:
        return self._header(ptr).shape_rank

    def byte_length(self, ptr: int) -> int:
        return self._header(ptr).byte_length

    def dim(self, ptr: int, index: int) -> int:
        """shape[index] read from memory; the heap rejects a read past the dims."""
        return self.heap.read_word(ptr + _VIEW.size + index * _DIM)

    def shape(self, ptr: int) -> list[int]:
        return [self.dim(ptr, i) for i in range(self.rank(ptr))]
