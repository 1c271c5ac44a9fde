"""runtime/src/iree/base: allocator, spans, string views, the aligned-allocation scheme."""
from __future__ import annotations

from ireeabi.abi.layout import Field, FunctionPointer, Pointer, Scalar, Struct
from ireeabi.abi.targets import Target, get as _get_target

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
