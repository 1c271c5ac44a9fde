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

from ireeabi.layouts import hal_buffer as HB
from ireeabi.vm import allocator as _alloc
from ireeabi.vm.allocator import AllocatorT
from ireeabi.vm.buffer import field_struct
from ireeabi.vm.heap import Heap, HeapError
from ireeabi.vm.machine import Machine, derived
from ireeabi.vm.ref import object_retain as _object_retain
from ireeabi.vm.ref import Ref, TypeRegistry

from .buffer import BufferTypes
from .resource import ResourceType

@derived("hal_buffer_view")
class BufferViewLayout:
    """iree_hal_buffer_view_t on one data model, and the codecs of the fields the HAL reads."""

    def __init__(self, m: Machine) -> None:
        view = m.layout(HB.iree_hal_buffer_view_t)
        self.size = view.size
        self.dim = m.target.scalar(HB.iree_hal_dim_t.c_type).size
        assert self.dim == m.pointer_size
        self.word_code = m.word_code
        self.mask = m.word_mask
        # create writes the allocator, then (after retaining the buffer) the fields from `buffer` on;
        # the ref count last, as adopt sets it once the view is complete. Offsets relative to each
        # group's first field, packed there, so nothing else is touched.
        self.allocator_off = view.offsetof("host_allocator")
        self.allocator_fmt = field_struct(m, [(view.offsetof("host_allocator.self") - self.allocator_off, "W"),
                                              (view.offsetof("host_allocator.ctl") - self.allocator_off, "W")])
        self.body_off = view.offsetof("buffer")
        self.body_fmt = field_struct(m, [(view.offsetof(name) - self.body_off, code) for name, code in
                                         (("buffer", "W"), ("element_type", "I"), ("encoding_type", "I"),
                                          ("byte_length", "W"), ("shape_rank", "W"))])
        assert "x" not in self.allocator_fmt.format and "x" not in self.body_fmt.format
        assert self.body_off + self.body_fmt.size == self.size  # the header ends with the rank (dims follow)
        self.buffer_fmt = field_struct(m, [(view.offsetof("buffer"), "W")])
        self.element_type_fmt = field_struct(m, [(view.offsetof("element_type"), "I")])
        self.encoding_type_fmt = field_struct(m, [(view.offsetof("encoding_type"), "I")])
        self.rank_fmt = field_struct(m, [(view.offsetof("shape_rank"), "W")])
        self.byte_length_fmt = field_struct(m, [(view.offsetof("byte_length"), "W")])
        # (element_type, encoding_type, shape_rank): what buffer_view.assert reads from the header.
        self.assert_fmt = field_struct(m, [(view.offsetof("element_type"), "I"),
                                           (view.offsetof("encoding_type"), "I"),
                                           (view.offsetof("shape_rank"), "W")])
        self._dims: dict[int, struct.Struct] = {}

    def dims_fmt(self, rank: int) -> struct.Struct:
        """`rank` dims in one codec (cached for the ranks views usually have)."""
        fmt = self._dims.get(rank)
        if fmt is None:
            fmt = struct.Struct(f"<{rank}{self.word_code}")
            if rank <= _MAX_CACHED_RANK:
                self._dims[rank] = fmt
        return fmt


_MAX_CACHED_RANK = 16


@dataclass
class ViewInfo:
    allocator: AllocatorT


class BufferViewTypes:
    def __init__(self, registry: TypeRegistry, buffers: BufferTypes) -> None:
        self.heap: Heap = registry.heap
        self._L: BufferViewLayout = self.heap.machine.hal_buffer_view
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
