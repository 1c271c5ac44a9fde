"""runtime/src/iree/base: allocator, spans, string views, the aligned-allocation scheme."""
from __future__ import annotations

from ..abi.layout import Field, FunctionPointer, Pointer, Scalar, Struct
from ..abi.targets import Target, get as _get_target
from .data_model import DataModel

iree_host_size_t = Scalar("size_t", "iree_host_size_t")
iree_device_size_t = Scalar("size_t", "iree_device_size_t")  # default config: pointer width
iree_status_t = Pointer("void")  # an opaque pointer-sized status (NULL = OK)

iree_byte_span_t = Struct("iree_byte_span_t", [
    Field("data", Pointer("uint8_t")),
    Field("data_length", iree_host_size_t),
])
iree_const_byte_span_t = Struct("iree_const_byte_span_t", [
    Field("data", Pointer("const uint8_t")),
    Field("data_length", iree_host_size_t),
])
iree_string_view_t = Struct("iree_string_view_t", [
    Field("data", Pointer("const char")),
    Field("size", iree_host_size_t),
])

# iree_allocator_command_t values (allocator.h).
ALLOCATOR_COMMAND_MALLOC = 0
ALLOCATOR_COMMAND_CALLOC = 1
ALLOCATOR_COMMAND_REALLOC = 2
ALLOCATOR_COMMAND_FREE = 3

iree_allocator_ctl_fn_t = FunctionPointer(
    "iree_status_t", "void* self, iree_allocator_command_t command, const void* params, void** inout_ptr",
    alias="iree_allocator_ctl_fn_t")
iree_allocator_t = Struct("iree_allocator_t", [
    Field("self", Pointer("void"), doc="control function data"),
    Field("ctl", iree_allocator_ctl_fn_t, doc="services MALLOC/CALLOC/REALLOC/FREE"),
])
iree_allocator_alloc_params_t = Struct("iree_allocator_alloc_params_t", [
    Field("byte_length", iree_host_size_t),
])


def iree_sizeof_struct(decl: Struct, target: "Target | str") -> int:
    """iree_sizeof_struct: sizeof rounded up to iree_max_align_t (a non-power-of-two on i386)."""
    t = _get_target(target)
    size = decl.layout(t).size
    return -(-size // t.max_align) * t.max_align


STRUCTS = [iree_byte_span_t, iree_const_byte_span_t, iree_string_view_t, iree_allocator_t,
           iree_allocator_alloc_params_t]


class AllocatorLayout:
    """iree_allocator_t and iree_allocator_alloc_params_t on one data model, and the sizes the
    allocation API derives from them."""

    def __init__(self, m: DataModel) -> None:
        alloc = m.layout(iree_allocator_t)
        params = m.layout(iree_allocator_alloc_params_t)
        self.size = alloc.size
        self.self_off = alloc.field("self").offset
        self.ctl_off = alloc.field("ctl").offset
        self.byte_length_off = params.field("byte_length").offset
        self.pointer_size = p = m.pointer_size
        self.max_align = m.max_align  # iree_max_align_t
        self.word_mask = m.word_mask
        self.word = m.word
        # One scratch frame per call, as the caller's C stack frame holds both: the params struct at
        # its start, then the pointer-aligned inout slot (the frame is MALLOC_ALIGNMENT-aligned).
        self.slot_off = (params.size + p - 1) & -p
        self.frame_size = self.slot_off + p
        self.slot_mask = ~(p - 1)  # base_slot rounds down to pointer alignment
