"""One local-sync CPU device and its heap allocator, as the full `hal` module sees them.

IREE's local-sync driver (runtime/src/iree/hal/drivers/local_sync/sync_device.c) makes one device
named `local-sync` that runs every queue operation in the calling thread, with a heap allocator
(runtime/src/iree/hal/allocator_heap.c). Both are ref-counted HAL objects here (`hal.device`,
`hal.allocator`, counter at offset 0 as every HAL resource); the device holds a reference to its
allocator.

- `query_i64` is iree_hal_sync_device_query_i64: `hal.device.id` matches the identifier against a
  pattern (iree_string_view_match_pattern: `*` and `?`, at most 16 of them), `hal.executable.format` asks the device's
  executable loaders, `hal.device`/`hal.dispatch` `concurrency` are 1, `hal.cpu` looks the key up in
  the processor data (iree_cpu_lookup_data_by_key); anything else is NOT_FOUND.
- `compatible_params` is the heap allocator's query_buffer_compatibility: buffers are always made
  host-visible, never OPTIMAL, and mappable/transferable.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..layouts import hal_buffer as HB
from ..vm.ref import TypeRegistry
from ..base.status import StatusCode, StatusError

from ..base.internal import cpu
from .buffer import BufferTypes
from .resource import ResourceType

DEVICE_IDENTIFIER = "local-sync"  # iree_hal_sync_device_create's identifier in IREE's tools

_COMPAT_USAGE = int(HB.BufferUsage.MAPPING_SCOPED | HB.BufferUsage.MAPPING_PERSISTENT
                    | HB.BufferUsage.MAPPING_ACCESS_RANDOM | HB.BufferUsage.TRANSFER)


@dataclass
class HeapAllocator:
    """iree_hal_heap_allocator_t: allocations come from the runtime's heap buffers."""

    buffers: BufferTypes


@dataclass
class LocalSyncDevice:
    """iree_hal_sync_device_t: its identifier, its allocator (a retained hal.allocator) and the
    executable formats its loaders accept."""

    identifier: str
    allocator: int
    supports_format: Callable[[str], bool]


MAX_PATTERN_WILDCARDS = 16  # IREE_STRING_VIEW_MAX_PATTERN_WILDCARDS


def match_pattern(value: str, pattern: str) -> bool:
    """iree_string_view_match_pattern: `*` matches any run (also empty), `?` one character,
    everything else itself; a pattern of more than 16 wildcards matches nothing. Each run of
    wildcards is one step, as IREE coalesces it (a `*` in it: at least as many characters as it has
    `?`), so the work is polynomial in the value's length, never exponential in the pattern's."""
    if pattern.count("*") + pattern.count("?") > MAX_PATTERN_WILDCARDS:
        return False
    return _match(value, pattern)


def _match(value: str, pattern: str) -> bool:
    """iree_string_view_match_pattern_impl (recursing once per run of wildcards with a `*`: at
    most MAX_PATTERN_WILDCARDS deep)."""
    while True:
        found = [i for i in (pattern.find("*"), pattern.find("?")) if i >= 0]
        if not found:
            return value == pattern
        literal = min(found)
        if value[:literal] != pattern[:literal]:
            return False
        value, pattern = value[literal:], pattern[literal:]
        run, min_chars, star = 0, 0, False
        while run < len(pattern) and pattern[run] in "*?":
            star = star or pattern[run] == "*"
            min_chars += pattern[run] == "?"
            run += 1
        rest = pattern[run:]
        if len(value) < min_chars:
            return False
        if not star:  # only `?`: exactly min_chars characters
            value, pattern = value[min_chars:], rest
            continue
        if not rest:
            return True
        return any(_match(value[i:], rest) for i in range(min_chars, len(value) + 1))


def compatible_params(memory_type: int, usage: int) -> tuple[int, int]:
    """(memory type, usage) as iree_hal_heap_allocator_query_buffer_compatibility rewrites them."""
    memory_type = (memory_type | int(HB.MemoryType.HOST_VISIBLE)) & ~int(HB.MemoryType.OPTIMAL)
    return memory_type & 0xFFFFFFFF, (usage | _COMPAT_USAGE) & 0xFFFFFFFF


class DeviceTypes:
    """The hal.device and hal.allocator types of one heap, and the one local-sync device on it."""

    def __init__(self, registry: TypeRegistry, buffers: BufferTypes, cpu_data: list[int],
                 supports_format: Callable[[str], bool]) -> None:
        self.heap = registry.heap
        self.buffers = buffers
        self.cpu_data = cpu_data
        self.allocators: ResourceType[HeapAllocator] = ResourceType(registry, "hal.allocator",
                                                                    lambda ptr, a: None)
        self.devices: ResourceType[LocalSyncDevice] = ResourceType(
            registry, "hal.device", lambda ptr, d: self.allocators.release(d.allocator))
        allocator = self.allocators.create(HeapAllocator(buffers), tag="hal.allocator (heap)")
        self.device = self.devices.create(LocalSyncDevice(DEVICE_IDENTIFIER, allocator, supports_format),
                                          tag="hal.device local-sync")

    def close(self) -> None:
        """Drop the runtime's reference to the device (and so its allocator), then the types."""
        if self.device:
            self.devices.release(self.device)
            self.device = 0
        self.devices.close()
        self.allocators.close()

    def query_i64(self, device: LocalSyncDevice, category: str, key: str) -> tuple[bool, int]:
        """(status is OK, value) of iree_hal_sync_device_query_i64."""
        if category == "hal.device.id":
            return True, int(match_pattern(device.identifier, key))
        if category == "hal.executable.format":
            return True, int(device.supports_format(key))
        if category in ("hal.device", "hal.dispatch"):
            return (True, 1) if key == "concurrency" else (False, 0)
        if category == "hal.cpu":
            value = cpu.lookup(self.cpu_data, key, self.heap.machine)
            return (True, value) if value is not None else (False, 0)
        return False, 0

    def allocate(self, memory_type: int, usage: int, size: int, access: int = 0) -> int:
        """iree_hal_heap_allocator_allocate_buffer: a new heap buffer with the compatible params
        (access 0 is ALL, as iree_hal_buffer_params_canonicalize makes it)."""
        memory_type, usage = compatible_params(memory_type, usage)
        return self.buffers.allocate(size, memory_type=memory_type,
                                     allowed_access=(access & 0xFFFF) or int(HB.MemoryAccess.ALL),
                                     allowed_usage=usage)


def not_found(category: str, key: str) -> StatusError:
    """The status of an unknown query key (what iree_hal_device_query_i64 returns; the module
    turns it into ok=0)."""
    return StatusError(StatusCode.NOT_FOUND, f"unknown device configuration key value '{category} :: {key}'")


__all__ = ["DEVICE_IDENTIFIER", "MAX_PATTERN_WILDCARDS", "HeapAllocator", "LocalSyncDevice", "DeviceTypes", "match_pattern",
           "compatible_params", "not_found"]
