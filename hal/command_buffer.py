"""Command buffers of the local-sync device: recorded, then replayed on queue execution.

The local-sync device records every command buffer as IREE's deferred command buffer does
(runtime/src/iree/hal/utils/deferred_command_buffer.c) and replays it into an inline command buffer
when a queue executes it (sync_device.c, iree_hal_sync_device_apply_deferred_command_buffer). A
command names its buffers directly (retained by the command buffer's resource set) or by binding
table slot (buffer NULL: `buffer_slot`), resolved at execution as
iree_hal_buffer_binding_table_resolve_ref resolves it (command_buffer.h): a direct buffer as is, a
NULL buffer with an empty table stays NULL, a slot past the table is OUT_OF_RANGE, and a slot's
range is the reference's range within the binding's.

Recording state (command_buffer.c / command_buffer_validation.c): `create` begins recording (as the
`hal` module's command_buffer.create does), `finalize` ends it; recording into an ended buffer or
ending one twice is FAILED_PRECONDITION, and only an ended buffer can be executed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ireeabi.vm.ref import TypeRegistry
from ireeabi.vm.status import StatusCode, StatusError

from .buffer import BufferTypes, calculate_range
from .resource import ResourceType


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
    recording: bool = True
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
            raise StatusError(StatusCode.INVALID_ARGUMENT, f"{what} buffer is NULL")
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
        return self.resources.create(CommandBuffer(mode, categories, queue_affinity, binding_capacity),
                                     tag="hal.command_buffer")

    @staticmethod
    def record(cb: CommandBuffer, command: Callable[[Resolver], None],
               retain: Sequence[tuple[ResourceType, int]] = ()) -> None:
        """Append a command (FAILED_PRECONDITION once the buffer has ended), retaining the objects
        it names directly."""
        if not cb.recording:
            raise StatusError(StatusCode.FAILED_PRECONDITION, "command buffer is not in a recording state")
        for rtype, obj in retain:
            if obj:
                rtype.retain(obj)
                cb.resources.append((rtype, obj))
        cb.commands.append(command)

    @staticmethod
    def end(cb: CommandBuffer) -> None:
        if not cb.recording:
            raise StatusError(StatusCode.FAILED_PRECONDITION, "command buffer is not in a recording state")
        cb.recording = False

    @staticmethod
    def execute(cb: CommandBuffer, resolver: Resolver) -> None:
        """Replay every command in order (the first failure ends the execution)."""
        if cb.recording:
            raise StatusError(StatusCode.FAILED_PRECONDITION,
                              "command buffer must be finalized (ended) before it is executed")
        for command in list(cb.commands):
            command(resolver)


def fill_pattern(pattern: int, pattern_length: int) -> bytes:
    """The fill pattern bytes: the low `pattern_length` bytes of the little-endian u64 (1, 2 or 4
    bytes, as iree_hal_buffer_map_fill accepts; 8 is refused by the deferred command buffer as
    larger than its pattern field, and any other length by the fill)."""
    if pattern_length not in (1, 2, 4):
        raise StatusError(StatusCode.INVALID_ARGUMENT, f"fill patterns must be 1, 2 or 4 bytes (got "
                          f"{pattern_length})")
    return (pattern & 0xFFFFFFFFFFFFFFFF).to_bytes(8, "little")[:pattern_length]


def do_fill(heap: Any, address: int, length: int, pattern: bytes) -> None:
    """Fill `length` bytes at `address` with `pattern` repeated (the length must be a multiple of
    the pattern's, as iree_hal_buffer_map_fill requires)."""
    if length % len(pattern):
        raise StatusError(StatusCode.INVALID_ARGUMENT, f"fill length {length} is not a multiple of the "
                          f"pattern length {len(pattern)}")
    if length:
        heap.write(address, pattern * (length // len(pattern)))


__all__ = ["BufferRef", "CommandBuffer", "Resolver", "CommandBufferTypes", "fill_pattern", "do_fill"]
