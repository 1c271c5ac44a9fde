"""runtime/src/iree/vm/ref.h: refs, ref objects and ref type descriptors."""
from __future__ import annotations

import struct
from ..abi.cconv import IREE_VM_REF_T
from ..abi.layout import REST_OF_UNIT, Field, FunctionPointer, Scalar, Struct

from .base import iree_string_view_t
from .data_model import DataModel

iree_vm_ref_t = IREE_VM_REF_T  # declared once in abi.cconv, which lays out ref arguments

# The type word is a descriptor address OR'ed with the counter offset (in 4-byte units) in its
# low bits; descriptors are 8-aligned, so 3 tag bits.
REF_TYPE_TAG_BITS = 3
REF_TYPE_TAG_MASK = (1 << REF_TYPE_TAG_BITS) - 1
REF_COUNTER_ALIGNMENT = 4
REF_TYPE_NULL = 0


def ref_type_any(pointer_size: int) -> int:
    """IREE_VM_REF_TYPE_ANY: all ones except the tag bits."""
    return ((1 << (8 * pointer_size)) - 1) ^ REF_TYPE_TAG_MASK


iree_atomic_ref_count_t = Scalar("int32_t", "iree_atomic_ref_count_t")
iree_vm_ref_object_t = Struct("iree_vm_ref_object_t", [
    Field("counter", iree_atomic_ref_count_t),
])

iree_vm_ref_destroy_t = FunctionPointer("void", "void* ptr", alias="iree_vm_ref_destroy_t")
iree_vm_ref_type_descriptor_t = Struct("iree_vm_ref_type_descriptor_t", [
    Field("destroy", iree_vm_ref_destroy_t, doc="called when the count reaches 0"),
    Field("type_name", iree_string_view_t),
    Field("offsetof_counter", Scalar("uintptr_t"), REF_TYPE_TAG_BITS,
          doc="counter offset from ptr in units of 4 bytes"),
    # IREE_VM_REF_TYPE_PTR_BITS = pointer bits - tag bits: the rest of the unit on every target.
    Field("reserved", Scalar("uintptr_t"), REST_OF_UNIT),
])

STRUCTS = [iree_vm_ref_t, iree_vm_ref_object_t, iree_vm_ref_type_descriptor_t]


class RefLayout:
    """iree_vm_ref_t and iree_vm_ref_type_descriptor_t on one data model."""

    def __init__(self, m: DataModel) -> None:
        ref = m.layout(iree_vm_ref_t)
        desc = m.layout(iree_vm_ref_type_descriptor_t)
        self.size = ref.size
        ptr_off, type_off, p = ref.field("ptr").offset, ref.field("type").offset, m.pointer_size
        # {ptr, type} as one struct: two pointer words at their offsets, padding as 'x'.
        w = m.word_code
        self.fmt = struct.Struct(f"<{ptr_off}x{w}{type_off - ptr_off - p}x{w}{ref.size - type_off - p}x")
        assert self.fmt.size == ref.size
        self.descriptor_size = desc.size
        self.descriptor_align = max((1 << REF_TYPE_TAG_BITS), desc.align)
        self.destroy_off = desc.field("destroy").offset
        self.name_data_off = desc.offsetof("type_name.data")
        self.name_size_off = desc.offsetof("type_name.size")
        self.type_any = ref_type_any(p)  # IREE_VM_REF_TYPE_ANY at the target's pointer width
        self.descriptor_mask = ~REF_TYPE_TAG_MASK & m.word_mask
        self.word = m.word
