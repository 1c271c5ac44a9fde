"""Command buffers of the local-sync device: recorded, then replayed on queue execution.

The local-sync device records every command buffer as IREE's deferred command buffer does
(runtime/src/iree/hal/utils/deferred_command_buffer.c) and replays it into an inline command buffer
when a queue executes it (sync_device.c, iree_hal_sync_device_apply_deferred_command_buffer). A
command names its buffers directly (retained by the command buffer's resource set) or by binding
table slot (buffer NULL: `buffer_slot`), resolved at execution as
iree_hal_buffer_binding_table_resolve_ref resolves it (command_buffer.h): a direct buffer as is, a
NULL buffer with an empty table stays NULL, a slot past the table is OUT_OF_RANGE, and a slot's
range is the reference's range within the binding's.

Recording state and every record-time check are the validation layer's
(hal/command_buffer_validation.py): `create` begins recording (as the `hal` module's
command_buffer.create does), `finalize` ends it. The deferred recording itself appends.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ..layouts import hal_buffer as HB
from ..vm.ref import TypeRegistry
from ..base.status import IreeFaultError, StatusCode, StatusError

from . import command_buffer_validation as V
from .buffer import BufferTypes, calculate_range
from .command_buffer_validation import ValidationState
from .resource import ResourceType

_DISCARD_WRITE = int(HB.MemoryAccess.DISCARD_WRITE)


def null_hal_buffer(what: str) -> IreeFaultError:
    """A command that reaches its buffer operation with a NULL hal.buffer (an unvalidated command
    buffer, or a binding table slot left empty): iree_hal_buffer_map_range and the copy and fill
    helpers read through it untested, so IREE faults there."""
    return IreeFaultError(f"the {what} buffer is NULL when the command runs: IREE's buffer mapping reads "
                          "through it untested (hal/buffer.c); its own runtime faults there")


@dataclass(frozen=True)
class BufferRef:
    """iree_hal_buffer_ref_t: a buffer (address, 0 for an indirect reference), its binding table
    slot, and a range (device sizes, WHOLE_BUFFER = all ones)."""

    buffer: int
    slot: int
    offset: int
    length: int


@dataclass
class CommandBuffer:
    """A recorded command buffer: its creation parameters, state and commands (callables that
    replay one command given the resolver of its buffer references)."""

    mode: int
    categories: int
    queue_affinity: int
    binding_capacity: int
    validation: ValidationState | None = None  # None: created UNVALIDATED
    commands: list[Callable[["Resolver"], None]] = field(default_factory=list)
    resources: list[tuple[ResourceType, int]] = field(default_factory=list)  # retained objects


class Resolver:
    """Resolves buffer references against one execution's binding table of (buffer, offset,
    length) entries (device sizes) on a data model whose all-ones device size is `mask`."""

    def __init__(self, buffers: BufferTypes, table: Sequence[tuple[int, int, int]], mask: int) -> None:
        self.buffers = buffers
        self.table = table
        self.mask = mask

    def resolve(self, ref: BufferRef) -> tuple[int, int, int]:
        """(buffer, offset, length) of `ref`; (0, 0, 0) for a NULL reference with an empty table."""
        if ref.buffer:
            return ref.buffer, ref.offset & self.mask, ref.length & self.mask
        if not self.table:
            return 0, 0, 0
        slot = ref.slot & 0xFFFFFFFF
        if slot >= len(self.table):
            raise StatusError(StatusCode.OUT_OF_RANGE, f"buffer binding {slot} out of range of binding table "
                              f"with capacity {len(self.table)}")
        buffer, offset, length = self.table[slot]
        offset &= self.mask
        length &= self.mask
        if not buffer:
            return 0, 0, 0
        max_length = length if length != self.mask else self.buffers.get(buffer).byte_length - offset
        off, n = calculate_range(buffer, max_length, ref.offset, ref.length, self.mask)
        return buffer, offset + off, n

    def span(self, ref: BufferRef, what: str) -> tuple[int, int]:
        """(address, length) of a resolved reference's bytes, range-checked against its buffer as
        iree_hal_buffer_map_range checks it."""
        buffer, offset, length = self.resolve(ref)
        if not buffer:
            raise null_hal_buffer(what)
        b = self.buffers.get(buffer)
        off, n = calculate_range(buffer, b.byte_length, offset, length, self.mask)
        return b.storage + off, n


class CommandBufferTypes:
    """The hal.command_buffer type of one heap."""

    def __init__(self, registry: TypeRegistry) -> None:
        self.heap = registry.heap
        self.resources: ResourceType[CommandBuffer] = ResourceType(registry, "hal.command_buffer",
                                                                   self._destroy)

    def close(self) -> None:
        self.resources.close()

    def _destroy(self, ptr: int, cb: CommandBuffer) -> None:
        resources, cb.resources, cb.commands = cb.resources, [], []
        for rtype, obj in resources:
            rtype.release(obj)

    def create(self, mode: int, categories: int, queue_affinity: int, binding_capacity: int) -> int:
        """iree_hal_command_buffer_create then begin (the `hal` module does both)."""
        V.check_create(mode, binding_capacity)
        validation = None if mode & V.MODE_UNVALIDATED else ValidationState(categories, binding_capacity)
        cb = CommandBuffer(mode, categories, queue_affinity, binding_capacity, validation)
        if validation is not None:
            V.begin(validation)
        return self.resources.create(cb, tag="hal.command_buffer")

    @staticmethod
    def record(cb: CommandBuffer, command: Callable[[Resolver], None],
               retain: Sequence[tuple[ResourceType, int]] = ()) -> None:
        """Append a command (validated by the caller), retaining the objects it names directly."""
        for rtype, obj in retain:
            if obj:
                rtype.retain(obj)
                cb.resources.append((rtype, obj))
        cb.commands.append(command)

    @staticmethod
    def end(cb: CommandBuffer) -> None:
        if cb.validation is not None:
            V.end(cb.validation)

    def validate_submission(self, cb: CommandBuffer, table: Sequence[tuple[int, int, int]], mask: int,
                            buffers: BufferTypes) -> None:
        """iree_hal_command_buffer_validate_submission: recorded and ended, a binding table large
        enough for the slots the commands use, each slot's binding meeting its requirements."""
        v = cb.validation
        count = v.binding_count if v is not None else 0
        V.submission(v, count, len(table))
        if v is None:
            return
        for slot in range(count):
            buffer, offset, length = table[slot]
            try:
                V.binding(buffers, buffer, offset & mask, length & mask, v.slots.get(slot, V.Requirements()),
                          mask)
            except StatusError as e:
                raise StatusError(e.code, e.message, e.annotations + (f"binding table slot {slot}",)) from None

    @staticmethod
    def execute(cb: CommandBuffer, resolver: Resolver) -> None:
        """Replay every command in order (the first failure ends the execution)."""
        for command in list(cb.commands):
            command(resolver)


def map_fill(heap: Any, buffers: BufferTypes, buffer: int, offset: int, length: int, pattern: int,
             pattern_length: int, mask: int) -> None:
    """iree_hal_buffer_map_fill: the pattern's low 1, 2 or 4 bytes (little-endian) repeated over
    [offset, offset + length) of `buffer` (WHOLE_BUFFER: to its end), which must be aligned to the
    pattern length."""
    if pattern_length not in (1, 2, 4):
        raise StatusError(StatusCode.INVALID_ARGUMENT, f"fill patterns must be 1, 2, or 4 bytes (got "
                          f"{pattern_length})")
    if length == 0:
        return
    b = buffers.get(buffer)
    V.validate_access(b.allowed_access, _DISCARD_WRITE)  # iree_hal_buffer_map_range's access check
    off, n = calculate_range(buffer, b.byte_length, offset, length, mask)
    if length == mask:
        length = n
    if offset % pattern_length or length % pattern_length:
        raise StatusError(StatusCode.INVALID_ARGUMENT, f"attempting to fill a range with {pattern_length} byte "
                          f"values that is not aligned (offset={offset}, length={length})")
    if n:
        heap.fill(b.storage + off, (pattern & 0xFFFFFFFF).to_bytes(4, "little")[:pattern_length],
                  n // pattern_length)


def map_write(heap: Any, buffers: BufferTypes, buffer: int, offset: int, data: bytes, mask: int) -> None:
    """iree_hal_buffer_map_write: `data` into [offset, offset + len(data)) of `buffer`."""
    if not data:
        return
    b = buffers.get(buffer)
    V.validate_access(b.allowed_access, _DISCARD_WRITE)  # iree_hal_buffer_map_range's access check
    off, n = calculate_range(buffer, b.byte_length, offset, len(data), mask)
    heap.write(b.storage + off, data[:n])


__all__ = ["BufferRef", "CommandBuffer", "Resolver", "CommandBufferTypes", "map_fill", "map_write"]
