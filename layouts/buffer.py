"""runtime/src/iree/vm/buffer.h: iree_vm_buffer_t and its access bits."""
from __future__ import annotations

import enum

from ireeabi.abi.layout import Field, Pointer, Scalar, Struct

from .base import iree_allocator_t, iree_byte_span_t
from .ref import iree_vm_ref_object_t


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
