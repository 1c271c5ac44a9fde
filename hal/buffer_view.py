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
from ireeabi.vm import host
from ireeabi.vm.allocator import AllocatorT
from ireeabi.vm.buffer import field_struct
from ireeabi.vm.heap import Heap, HeapError
from ireeabi.vm.ref import object_retain as _object_retain
from ireeabi.vm.ref import Ref, TypeRegistry

from .buffer import BufferTypes
from .resource import ResourceType

_VIEW = host.layout(HB.iree_hal_buffer_view_t)
_VIEW_SIZE = _VIEW.size
_DIM = host.HOST.scalar("size_t").size
_DIM_CODE = host.WORD
assert _DIM == _DIM_CODE.size
_W = _DIM_CODE.format[-1]
_MASK = host.WORD_MASK
# create writes the allocator, then (after retaining the buffer) the fields from `buffer` on; the
# ref count last, as adopt sets it once the view is complete. Offsets relative to each group's first
# field, packed there, so nothing else is touched.
_ALLOCATOR_OFF = _VIEW.offsetof("host_allocator")
_ALLOCATOR_FMT = field_struct([(_VIEW.offsetof("host_allocator.self") - _ALLOCATOR_OFF, "W"),
                               (_VIEW.offsetof("host_allocator.ctl") - _ALLOCATOR_OFF, "W")])
_BODY_OFF = _VIEW.offsetof("buffer")
_BODY_FMT = field_struct([(_VIEW.offsetof(name) - _BODY_OFF, code) for name, code in
                          (("buffer", "W"), ("element_type", "I"), ("encoding_type", "I"),
                           ("byte_length", "W"), ("shape_rank", "W"))])
assert "x" not in _ALLOCATOR_FMT.format and "x" not in _BODY_FMT.format
assert _BODY_OFF + _BODY_FMT.size == _VIEW_SIZE  # the header ends with the rank (then the dims)
_BUFFER_FMT = field_struct([(_VIEW.offsetof("buffer"), "W")])
_ELEMENT_TYPE_FMT = field_struct([(_VIEW.offsetof("element_type"), "I")])
_ENCODING_TYPE_FMT = field_struct([(_VIEW.offsetof("encoding_type"), "I")])
_RANK_FMT = field_struct([(_VIEW.offsetof("shape_rank"), "W")])
_BYTE_LENGTH_FMT = field_struct([(_VIEW.offsetof("byte_length"), "W")])
# (element_type, encoding_type, shape_rank): what buffer_view.assert reads from the header.
_ASSERT_FMT = field_struct([(_VIEW.offsetof("element_type"), "I"), (_VIEW.offsetof("encoding_type"), "I"),
                           (_VIEW.offsetof("shape_rank"), "W")])
_DIMS_FMTS: dict[int, struct.Struct] = {}
_MAX_CACHED_RANK = 16


def _dims_fmt(rank: int) -> struct.Struct:
    """`rank` dims in one codec (cached for the ranks views usually have)."""
    fmt = _DIMS_FMTS.get(rank)
    if fmt is None:
        fmt = struct.Struct(f"<{rank}{_W}")
        if rank <= _MAX_CACHED_RANK:
            _DIMS_FMTS[rank] = fmt
    return fmt


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
        heap = self.heap
        ptr = _alloc.malloc(heap, allocator, _VIEW_SIZE + rank * _DIM)
        raw, off = heap.cell(ptr, _VIEW_SIZE)
        _ALLOCATOR_FMT.pack_into(raw, off + _ALLOCATOR_OFF, allocator.self & _MASK, allocator.ctl & _MASK)
        _object_retain(heap, buffer, self.buffers.type)
        element_type &= 0xFFFFFFFF
        bits = element_type & 0xFF  # iree_hal_element_bit_count of the uint32 type: its low byte
        # iree_hal_element_packed_byte_count in device-size arithmetic: the element count, the bit
        # count and the +7 each wrap modulo 2**64 before the division (a signed product would not).
        count = math.prod(shape) & _MASK
        _BODY_FMT.pack_into(raw, off + _BODY_OFF, buffer & _MASK, element_type, encoding_type & 0xFFFFFFFF,
                            ((count * bits & _MASK) + 7 & _MASK) // 8, rank)
        if rank:
            dims = [d & _MASK for d in shape]
            try:
                draw, doff = heap.cell(ptr + _VIEW_SIZE, rank * _DIM)  # all dims, one check
            except HeapError:  # dim by dim, for the error (and the dims written) of the first bad one
                for i, d in enumerate(dims):
                    heap.write_word(ptr + _VIEW_SIZE + i * _DIM, d)
                raise
            _dims_fmt(rank).pack_into(draw, doff, *dims)
        return self.resources.adopt(ptr, ViewInfo(allocator))

    def _destroy(self, ptr: int, info: ViewInfo) -> None:
        buffer = self._field(ptr, _BUFFER_FMT)
        self.buffers.resources.release(buffer)
        _alloc.free(self.heap, info.allocator, ptr)

    def deref(self, ref: Ref) -> int:
        return self.resources.deref_ptr(ref)

    def deref_buffer(self, ref: Ref) -> int:
        """`buffer(deref(ref))`: the ref checked, then the header (the whole of it) read."""
        ptr = self.resources.deref_ptr(ref)
        raw, off = self.heap.cell(ptr, _VIEW_SIZE)
        return _BUFFER_FMT.unpack_from(raw, off)[0]

    def _field(self, ptr: int, fmt: struct.Struct) -> int:
        """One header field: the whole header is checked, as a ctypes view of it would be."""
        raw, off = self.heap.cell(ptr, _VIEW_SIZE)
        return fmt.unpack_from(raw, off)[0]

    def buffer(self, ptr: int) -> int:
        return self._field(ptr, _BUFFER_FMT)

    def element_type(self, ptr: int) -> int:
        return self._field(ptr, _ELEMENT_TYPE_FMT)

    def encoding_type(self, ptr: int) -> int:
        return self._field(ptr, _ENCODING_TYPE_FMT)

    def rank(self, ptr: int) -> int:
        return self._field(ptr, _RANK_FMT)

    def byte_length(self, ptr: int) -> int:
        return self._field(ptr, _BYTE_LENGTH_FMT)

    def assert_fields(self, ptr: int) -> tuple[int, int, int]:
        """(element_type, encoding_type, rank) with one check of the header."""
        raw, off = self.heap.cell(ptr, _VIEW_SIZE)
        return _ASSERT_FMT.unpack_from(raw, off)

    def dim(self, ptr: int, index: int) -> int:
        """shape[index] read from memory; the heap rejects a read past the dims."""
        return self.heap.read_word(ptr + _VIEW_SIZE + index * _DIM)

    def shape(self, ptr: int) -> list[int]:
        return self.dims(ptr, self.rank(ptr))

    def dims(self, ptr: int, rank: int) -> list[int]:
        """The first `rank` dims; one check for all of them (the first bad one is reported as a
        dim-by-dim read reports it)."""
        if not rank:
            return []
        heap = self.heap
        try:
            raw, off = heap.cell(ptr + _VIEW_SIZE, rank * _DIM)
        except HeapError:
            return [self.dim(ptr, i) for i in range(rank)]  # raises at the first unreadable dim
        return list(_dims_fmt(rank).unpack_from(raw, off))
