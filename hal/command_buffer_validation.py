"""Command buffer validation as IREE's runtime builds it (IREE_HAL_COMMAND_BUFFER_VALIDATION_ENABLE:
runtime/src/iree/hal/command_buffer_validation.c, command_buffer.c), checked at record and submit time
unless the command buffer was created UNVALIDATED.

- state: `create` begins recording, `end` (command_buffer.finalize) ends it; a transfer or dispatch
  command outside begin/end, or a second end, is FAILED_PRECONDITION; barriers and debug groups are
  not checked (iree.runtime 3.13 records a barrier after end);
- categories: transfer commands need TRANSFER, dispatches DISPATCH;
- buffers: a direct reference is checked as a binding (buffer, 0, offset + length), so its range is
  not checked until the command runs; an indirect one (by binding table slot) must lie below the
  binding capacity, and merges its requirements into the slot's, checked against the binding table
  on submission (iree_hal_command_buffer_validate_submission);
- a binding: present, compatible with the heap allocator for the queue (DEVICE_VISIBLE memory and
  the usage), with the usage, access and memory type bits, the command's end within the binding and
  its offset aligned.

Messages are IREE's (bitfields formatted as iree_bitfield_format_inline formats them).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..layouts import hal_buffer as HB
from ..base.status import StatusCode, StatusError

from .buffer import BufferTypes
from .flag_names import buffer_usage_text, format_bitfield, memory_type_text

MODE_ONE_SHOT = 1 << 0
MODE_ALLOW_INLINE_EXECUTION = 1 << 4
MODE_UNVALIDATED = 1 << 5
CATEGORY_TRANSFER = 1 << 0
CATEGORY_DISPATCH = 1 << 1
CATEGORY_ANY = CATEGORY_TRANSFER | CATEGORY_DISPATCH

COMPAT_ALLOCATABLE = 1 << 0
COMPAT_IMPORTABLE = 1 << 1
COMPAT_EXPORTABLE = 1 << 2
COMPAT_QUEUE_TRANSFER = 1 << 10
COMPAT_QUEUE_DISPATCH = 1 << 11
COMPAT_LOW_PERFORMANCE = 1 << 20

_CATEGORY_NAMES = ((CATEGORY_ANY, "ANY"), (CATEGORY_TRANSFER, "TRANSFER"), (CATEGORY_DISPATCH, "DISPATCH"))
_COMPAT_NAMES = ((COMPAT_ALLOCATABLE, "ALLOCATABLE"), (COMPAT_IMPORTABLE, "IMPORTABLE"),
                 (COMPAT_EXPORTABLE, "EXPORTABLE"), (COMPAT_QUEUE_TRANSFER, "QUEUE_TRANSFER"),
                 (COMPAT_QUEUE_DISPATCH, "QUEUE_DISPATCH"), (COMPAT_LOW_PERFORMANCE, "LOW_PERFORMANCE"))
_A = HB.MemoryAccess
_ACCESS_NAMES = ((int(_A.ALL), "ALL"), (int(_A.DISCARD_WRITE), "DISCARD_WRITE"), (int(_A.READ), "READ"),
                 (int(_A.WRITE), "WRITE"), (int(_A.DISCARD), "DISCARD"), (int(_A.MAY_ALIAS), "MAY_ALIAS"),
                 (int(_A.ANY), "ANY"))
_DEVICE_VISIBLE = int(HB.MemoryType.DEVICE_VISIBLE)
_TRANSFER = int(HB.BufferUsage.TRANSFER)
_DISPATCH = int(HB.BufferUsage.DISPATCH)


@dataclass
class Requirements:
    """iree_hal_buffer_binding_requirements_t."""

    compatibility: int = 0
    usage: int = 0
    access: int = 0
    type: int = 0
    max_byte_offset: int = 0
    min_byte_alignment: int = 0


@dataclass
class ValidationState:
    """iree_hal_command_buffer_validation_state_t, plus the command buffer's binding count."""

    categories: int
    binding_capacity: int
    has_began: bool = False
    has_ended: bool = False
    debug_group_depth: int = 0
    binding_count: int = 0
    slots: dict[int, Requirements] = field(default_factory=dict)


def heap_compatibility(memory_type: int, usage: int) -> int:
    """iree_hal_heap_allocator_query_buffer_compatibility's verdict for (type, usage)."""
    compat = COMPAT_ALLOCATABLE | COMPAT_IMPORTABLE | COMPAT_EXPORTABLE
    if memory_type & _DEVICE_VISIBLE == _DEVICE_VISIBLE:
        if usage & _TRANSFER:
            compat |= COMPAT_QUEUE_TRANSFER
        if usage & _DISPATCH:
            compat |= COMPAT_QUEUE_DISPATCH
    return compat


def check_create(mode: int, binding_capacity: int) -> None:
    """iree_hal_command_buffer_create's own checks."""
    if mode & MODE_ALLOW_INLINE_EXECUTION:
        if not mode & MODE_ONE_SHOT:
            raise StatusError(StatusCode.INVALID_ARGUMENT, "inline command buffers must be one-shot")
        if binding_capacity > 0:
            raise StatusError(StatusCode.INVALID_ARGUMENT,
                              "inline command buffers cannot have indirect bindings")


def begin(v: ValidationState) -> None:
    if v.has_ended:
        raise StatusError(StatusCode.FAILED_PRECONDITION, "command buffer has already been recorded; "
                          "re-recording command buffers is not allowed")
    if v.has_began:
        raise StatusError(StatusCode.FAILED_PRECONDITION, "command buffer is already in a recording state")
    v.has_began = True


def end(v: ValidationState) -> None:
    if v.debug_group_depth != 0:
        raise StatusError(StatusCode.FAILED_PRECONDITION,
                          f"unbalanced debug group depth (expected 0, is {v.debug_group_depth})")
    if not v.has_began or v.has_ended:
        raise StatusError(StatusCode.FAILED_PRECONDITION, "command buffer is not in a recording state")
    v.has_ended = True


def categories(v: ValidationState, required: int) -> None:
    """iree_hal_command_buffer_validate_categories."""
    if not v.has_began or v.has_ended:
        raise StatusError(StatusCode.FAILED_PRECONDITION, "command buffer is not in a recording state; all "
                          "recording must happen between a begin/end pair")
    if required and v.categories & required != required:
        raise StatusError(StatusCode.FAILED_PRECONDITION,
                          f"operation requires categories {format_bitfield(required, _CATEGORY_NAMES)} but "
                          f"command buffer only supports {format_bitfield(v.categories, _CATEGORY_NAMES)}")


def binding(buffers: BufferTypes, buffer: int, offset: int, length: int, req: Requirements, mask: int) -> None:
    """iree_hal_command_buffer_validate_binding_requirements for (buffer, offset, length)."""
    if req.usage == 0:
        return
    if not buffer:
        raise StatusError(StatusCode.INVALID_ARGUMENT,
                          "binding table slot requires a buffer but none was provided")
    b = buffers.get(buffer)
    allowed = heap_compatibility(b.memory_type, b.allowed_usage & req.usage)
    if allowed & req.compatibility != req.compatibility:
        raise StatusError(StatusCode.PERMISSION_DENIED,
                          f"requested buffer usage is not supported for the buffer on this queue; buffer "
                          f"allows usage {buffer_usage_text(b.allowed_usage)}, operation requires "
                          f"{buffer_usage_text(req.usage)} (allocator compatibility mismatch: allowed "
                          f"compatibility {format_bitfield(allowed, _COMPAT_NAMES)}, requires "
                          f"{format_bitfield(req.compatibility, _COMPAT_NAMES)})")
    validate_usage(b.allowed_usage, req.usage)
    validate_access(b.allowed_access, req.access)
    validate_memory_type(b.memory_type, req.type)
    if req.max_byte_offset > 0:
        end_ = (offset + req.max_byte_offset) & mask
        if end_ > (offset + length) & mask:
            raise StatusError(StatusCode.OUT_OF_RANGE,
                              f"at least one command attempted to access an address outside of the valid "
                              f"bound buffer range (length={req.max_byte_offset}, end(inc)={(end_ - 1) & mask}, "
                              f"binding offset={offset}, binding length={length}, binding "
                              f"end(inc)={(offset + length - 1) & mask})")
    if req.min_byte_alignment and offset % req.min_byte_alignment:
        raise StatusError(StatusCode.INVALID_ARGUMENT,
                          f"binding offset does not match the required alignment of one or more command "
                          f"(offset={offset}, min_byte_alignment={req.min_byte_alignment})")


def buffer_ref(v: ValidationState, buffers: BufferTypes, buffer: int, slot: int, offset: int, length: int,
               req: Requirements, mask: int) -> None:
    """iree_hal_command_buffer_validate_buffer_requirements: a direct reference now, an indirect one
    merged into its slot's requirements."""
    if buffer:
        binding(buffers, buffer, 0, (offset + length) & mask, req, mask)
        return
    if slot >= v.binding_capacity:
        raise StatusError(StatusCode.OUT_OF_RANGE,
                          f"indirect buffer reference slot {slot} is out range of the declared binding "
                          f"capacity of the command buffer {v.binding_capacity}")
    v.binding_count = max(v.binding_count, slot + 1)
    t = v.slots.setdefault(slot, Requirements())
    t.compatibility |= req.compatibility
    t.usage |= req.usage
    t.access |= req.access
    t.type |= req.type
    t.max_byte_offset = max(t.max_byte_offset, req.max_byte_offset)
    if req.min_byte_alignment:
        t.min_byte_alignment = math.lcm(t.min_byte_alignment, req.min_byte_alignment) if \
            t.min_byte_alignment else req.min_byte_alignment


def validate_usage(allowed: int, required: int) -> None:
    """iree_hal_buffer_validate_usage."""
    if allowed & required != required:
        raise StatusError(StatusCode.PERMISSION_DENIED,
                          f"requested usage was not specified when the buffer was allocated; buffer allows "
                          f"{buffer_usage_text(allowed)}, operation requires {buffer_usage_text(required)}")


def validate_access(allowed: int, required: int) -> None:
    """iree_hal_buffer_validate_access."""
    if required & int(_A.ANY) == int(_A.ANY):
        return
    if not required & int(_A.READ | _A.WRITE):
        raise StatusError(StatusCode.INVALID_ARGUMENT, "memory access must specify one or more of _READ or _WRITE")
    if allowed & required != required:
        raise StatusError(StatusCode.PERMISSION_DENIED,
                          f"buffer does not support the requested access type; buffer allows "
                          f"{format_bitfield(allowed, _ACCESS_NAMES)}, operation requires "
                          f"{format_bitfield(required, _ACCESS_NAMES)}")


def validate_memory_type(actual: int, expected: int) -> None:
    """iree_hal_buffer_validate_memory_type."""
    if actual & expected != expected:
        raise StatusError(StatusCode.PERMISSION_DENIED,
                          f"buffer memory type is not compatible with the requested operation; buffer has "
                          f"{memory_type_text(actual)}, operation requires {memory_type_text(expected)}")


def transfer_requirements(target: bool, end_offset: int, alignment: int = 0) -> Requirements:
    """The requirements of a transfer command's source (READ) or target (WRITE) buffer."""
    usage = HB.BufferUsage.TRANSFER_TARGET if target else HB.BufferUsage.TRANSFER_SOURCE
    return Requirements(COMPAT_QUEUE_TRANSFER, int(usage), int(_A.WRITE if target else _A.READ),
                        _DEVICE_VISIBLE, end_offset, alignment)


def dispatch_requirements(end_offset: int) -> Requirements:
    """The requirements of a dispatch binding (any access)."""
    return Requirements(COMPAT_QUEUE_DISPATCH, int(HB.BufferUsage.DISPATCH_STORAGE), int(_A.ANY),
                        _DEVICE_VISIBLE, end_offset)


def submission(v: ValidationState | None, binding_count: int, table_count: int) -> None:
    """iree_hal_command_buffer_validate_submission's state and table-size checks."""
    if v is not None:
        if not v.has_began:
            raise StatusError(StatusCode.FAILED_PRECONDITION, "command buffer has not been recorded")
        if not v.has_ended:
            raise StatusError(StatusCode.FAILED_PRECONDITION, "command buffer recording has not been ended "
                              "and it is still in a recording state")
    if binding_count == 0:
        return
    if table_count == 0:
        raise StatusError(StatusCode.INVALID_ARGUMENT, f"indirect command buffer requires at least "
                          f"{binding_count} bindings but no binding table was provided")
    if table_count < binding_count:
        raise StatusError(StatusCode.OUT_OF_RANGE, f"indirect command buffer requires at least "
                          f"{binding_count} bindings but only {table_count} were provided ")


__all__ = ["Requirements", "ValidationState", "heap_compatibility", "check_create", "begin", "end",
           "categories", "binding", "buffer_ref", "validate_usage", "validate_access", "validate_memory_type",
           "transfer_requirements", "dispatch_requirements", "submission", "MODE_UNVALIDATED",
           "CATEGORY_TRANSFER", "CATEGORY_DISPATCH"]
