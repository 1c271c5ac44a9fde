"""HAL buffer views in tracked memory, as runtime/src/iree/hal/buffer_view.c keeps them.

One allocation from the host allocator: the `iree_hal_buffer_view_t` header (catalog layout) followed
by `shape_rank` dims. The view retains its buffer; `byte_length` is ceil(prod(shape) * bits / 8) in
wrapping device-size arithmetic and is not checked against the buffer's length (as IREE).
"""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Sequence

from ..base import allocator as _alloc
from ..base.allocator import AllocatorT
from ..base.heap import Heap, HeapError
from ..vm.ref import object_retain as _object_retain
from ..vm.ref import Ref, TypeRegistry

from .buffer import BufferTypes
from .resource import ResourceType
from ..layouts.hal_buffer import BufferViewLayout


@dataclass
class ViewInfo:
    allocator: AllocatorT


class BufferViewTypes:
    def __init__(self, registry: TypeRegistry, buffers: BufferTypes) -> None:
        self.heap: Heap = registry.heap
        self._L = self.heap.machine.view(BufferViewLayout)
        self.buffers = buffers
        self.resources: ResourceType[ViewInfo] = ResourceType(registry, "hal.buffer_view", self._destroy)
        self.type = self.resources.type

    def close(self) -> None:
        self.resources.close()

    def create(self, buffer: int, shape: Sequence[int], element_type: int, encoding_type: int,
               allocator: AllocatorT) -> int:
        """iree_hal_buffer_view_create: one header + dims allocation; the view's address."""
        rank = len(shape)
        heap = self.heap
        L = self._L
        mask, dim = L.mask, L.dim
        ptr = _alloc.malloc(heap, allocator, L.size + rank * dim)
        raw, off = heap.cell(ptr, L.size)
        L.allocator_fmt.pack_into(raw, off + L.allocator_off, allocator.self & mask, allocator.ctl & mask)
        _object_retain(heap, buffer, self.buffers.type)
        element_type &= 0xFFFFFFFF
        bits = element_type & 0xFF  # iree_hal_element_bit_count of the uint32 type: its low byte
        # iree_hal_element_packed_byte_count in device-size arithmetic: the element count, the bit
        # count and the +7 each wrap modulo 2**64 before the division (a signed product would not).
        count = math.prod(shape) & mask
        L.body_fmt.pack_into(raw, off + L.body_off, buffer & mask, element_type, encoding_type & 0xFFFFFFFF,
                             ((count * bits & mask) + 7 & mask) // 8, rank)
        if rank:
            dims = [d & mask for d in shape]
            try:
                draw, doff = heap.cell(ptr + L.size, rank * dim)  # all dims, one check
            except HeapError:  # dim by dim, for the error (and the dims written) of the first bad one
                for i, d in enumerate(dims):
                    heap.write_word(ptr + L.size + i * dim, d)
                raise
            L.dims_fmt(rank).pack_into(draw, doff, *dims)
        return self.resources.adopt(ptr, ViewInfo(allocator))

    def _destroy(self, ptr: int, info: ViewInfo) -> None:
        buffer = self._field(ptr, self._L.buffer_fmt)
        self.buffers.resources.release(buffer)
        _alloc.free(self.heap, info.allocator, ptr)

    def deref(self, ref: Ref) -> int:
        return self.resources.deref_ptr(ref)

    def deref_buffer(self, ref: Ref) -> int:
        """`buffer(deref(ref))`: the ref checked, then the header (the whole of it) read."""
        ptr = self.resources.deref_ptr(ref)
        L = self._L
        raw, off = self.heap.cell(ptr, L.size)
        return L.buffer_fmt.unpack_from(raw, off)[0]

    def _field(self, ptr: int, fmt: struct.Struct) -> int:
        """One header field: the whole header is checked, as a ctypes view of it would be."""
        raw, off = self.heap.cell(ptr, self._L.size)
        return fmt.unpack_from(raw, off)[0]

    def buffer(self, ptr: int) -> int:
        return self._field(ptr, self._L.buffer_fmt)

    def element_type(self, ptr: int) -> int:
        return self._field(ptr, self._L.element_type_fmt)

    def encoding_type(self, ptr: int) -> int:
        return self._field(ptr, self._L.encoding_type_fmt)

    def rank(self, ptr: int) -> int:
        return self._field(ptr, self._L.rank_fmt)

    def byte_length(self, ptr: int) -> int:
        return self._field(ptr, self._L.byte_length_fmt)

    def assert_fields(self, ptr: int) -> tuple[int, int, int]:
        """(element_type, encoding_type, rank) with one check of the header."""
        L = self._L
        raw, off = self.heap.cell(ptr, L.size)
        return L.assert_fmt.unpack_from(raw, off)

    def dim(self, ptr: int, index: int) -> int:
        """shape[index] read from memory; the heap rejects a read past the dims."""
        return self.heap.read_word(ptr + self._L.size + index * self._L.dim)

    def shape(self, ptr: int) -> list[int]:
        return self.dims(ptr, self.rank(ptr))

    def dims(self, ptr: int, rank: int) -> list[int]:
        """The first `rank` dims; one check for all of them (the first bad one is reported as a
        dim-by-dim read reports it)."""
        if not rank:
            return []
        heap = self.heap
        L = self._L
        try:
            raw, off = heap.cell(ptr + L.size, rank * L.dim)
        except HeapError:
            return [self.dim(ptr, i) for i in range(rank)]  # raises at the first unreadable dim
        return list(L.dims_fmt(rank).unpack_from(raw, off))
