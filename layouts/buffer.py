"""runtime/src/iree/vm/buffer.h: iree_vm_buffer_t and its access bits."""
from __future__ import annotations

import struct
import enum

from ..abi.layout import Field, Pointer, Scalar, Struct

from .base import iree_allocator_t, iree_byte_span_t
from .ref import iree_vm_ref_object_t
from .base import AllocatorLayout, iree_sizeof_struct
from .data_model import DataModel


class BufferAccess(enum.IntFlag):
    """iree_vm_buffer_access_t (uint32)."""

    MUTABLE = 1 << 0
    ORIGIN_MODULE = 1 << 1
    ORIGIN_GUEST = 1 << 2
    ORIGIN_HOST = 1 << 3
    # IREE #24827 tags create/clone co-allocations with an internal bit; its numeric value is not in
    # the snapshot we read (the public bits use 1<<0..1<<3), so ireeabi uses the highest bit, which no
    # caller can pass by accident.
    COALLOCATED = 1 << 31


PUBLIC_ACCESS_MASK = BufferAccess.MUTABLE | BufferAccess.ORIGIN_MODULE | BufferAccess.ORIGIN_GUEST | \
    BufferAccess.ORIGIN_HOST

iree_vm_buffer_access_t = Scalar("uint32_t", "iree_vm_buffer_access_t")

iree_vm_buffer_t = Struct("iree_vm_buffer_t", [
    Field("ref_object", iree_vm_ref_object_t, doc="intrusive ref count (1 after initialize, 0 for module storage)"),
    Field("access", iree_vm_buffer_access_t),
    Field("data", iree_byte_span_t, doc="the bytes visible through the buffer"),
    Field("allocator", iree_allocator_t, doc="frees in-place data on deinitialize / the handle on destroy"),
    Field("storage_module", Pointer("iree_vm_module_t"), doc="owner of module-storage data, else NULL"),
])

VM_BUFFER_TYPE_NAME = "vm.buffer"

STRUCTS = [iree_vm_buffer_t]


class VmBufferLayout:
    """iree_vm_buffer_t on one data model, and the codecs of the buffer API's hot paths."""

    def __init__(self, m: DataModel) -> None:
        alloc = m.view(AllocatorLayout)
        buf = m.layout(iree_vm_buffer_t)
        self.size = buf.size
        self.counter_off = buf.offsetof("ref_object.counter")
        self.access_off = buf.field("access").offset
        self.data_off = buf.offsetof("data.data")
        self.length_off = buf.offsetof("data.data_length")
        # data pointer and length read together (iree_byte_span_t: adjacent words) when mapping.
        self.span_fmt = struct.Struct("<" + m.word_code * 2)
        assert self.length_off == self.data_off + m.pointer_size
        self.allocator_off = buf.field("allocator").offset
        self.module_off = buf.field("storage_module").offset
        self.prefix_size = iree_sizeof_struct(iree_vm_buffer_t, m.target)
        self.mask = m.word_mask
        self.alloc_self_off = self.allocator_off + alloc.self_off
        self.alloc_ctl_off = self.allocator_off + alloc.ctl_off
        # The whole handle in one pack (initialize writes every field; the layout has no gaps).
        self.handle_fmt = m.field_struct([
            (self.counter_off, "i"), (self.access_off, "I"), (self.data_off, "W"), (self.length_off, "W"),
            (self.alloc_self_off, "W"), (self.alloc_ctl_off, "W"), (self.module_off, "W")])
        assert self.handle_fmt.size == self.size and "x" not in self.handle_fmt.format
        # What destroy reads: access, allocator {self, ctl}, storage module.
        self.destroy_fmt = m.field_struct([(self.access_off, "I"), (self.alloc_self_off, "W"),
                                            (self.alloc_ctl_off, "W"), (self.module_off, "W")])
        self.word = m.word
