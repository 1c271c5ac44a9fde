"""`hal.file` objects of the local-sync device: memory files over a vm.buffer's bytes, as the `hal`
module's ex.file.from_memory makes them (module.c) with runtime/src/iree/hal/utils/memory_file.c.

A memory file keeps its allowed access and a storage buffer: its contents imported as a heap buffer
(OPTIMAL_FOR_HOST | DEVICE_VISIBLE, mappable, TRANSFER_SOURCE when readable, TRANSFER_TARGET when
writable; access DISCARD added, UNALIGNED when the data is not 64-byte aligned), through which the
local-sync queue reads and writes it as copies (sync_device.c queue_read/queue_write).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..layouts import hal_buffer as HB
from ..vm.ref import TypeRegistry
from ..base.status import StatusCode, StatusError

from ..layouts.hal_buffer import HEAP_BUFFER_ALIGNMENT

from .buffer import BufferTypes
from .device import compatible_params
from .flag_names import format_bitfield
from .resource import ResourceType

_A = HB.MemoryAccess
_ACCESS_NAMES = ((int(_A.ALL), "ALL"), (int(_A.DISCARD_WRITE), "DISCARD_WRITE"), (int(_A.READ), "READ"),
                 (int(_A.WRITE), "WRITE"), (int(_A.DISCARD), "DISCARD"), (int(_A.MAY_ALIAS), "MAY_ALIAS"),
                 (int(_A.ANY), "ANY"))


@dataclass
class MemoryFile:
    """iree_hal_memory_file_t: allowed access, length and the storage buffer (retained)."""

    access: int
    length: int
    storage: int


class FileTypes:
    """The hal.file type of one heap."""

    def __init__(self, registry: TypeRegistry, buffers: BufferTypes) -> None:
        self.buffers = buffers
        self.files: ResourceType[MemoryFile] = ResourceType(registry, "hal.file",
                                                            lambda p, f: buffers.resources.release(f.storage))

    def close(self) -> None:
        self.files.close()

    def wrap(self, access: int, data: int, length: int, release: "object") -> int:
        """iree_hal_memory_file_wrap over [data, data + length); `release` runs when the storage
        buffer goes."""
        usage = int(HB.BufferUsage.MAPPING_SCOPED | HB.BufferUsage.MAPPING_ACCESS_SEQUENTIAL_WRITE)
        if access & int(_A.READ):
            usage |= int(HB.BufferUsage.TRANSFER_SOURCE)
        if access & int(_A.WRITE):
            usage |= int(HB.BufferUsage.TRANSFER_TARGET)
        memory_type, usage = compatible_params(int(HB.MemoryType.OPTIMAL_FOR_HOST | HB.MemoryType.DEVICE_VISIBLE),
                                               usage)
        storage_access = access | int(_A.DISCARD) | (int(_A.UNALIGNED) if data % HEAP_BUFFER_ALIGNMENT else 0)
        storage = self.buffers.wrap(data, length, memory_type=memory_type, allowed_access=storage_access,
                                    allowed_usage=usage, release=release)  # type: ignore[arg-type]
        return self.files.create(MemoryFile(access, length, storage), tag="hal.file (memory)")


def validate_access(file: MemoryFile, required: int) -> None:
    """iree_hal_file_validate_access."""
    if file.access & required != required:
        raise StatusError(StatusCode.PERMISSION_DENIED, f"file operation cannot be performed; file allows "
                          f"{format_bitfield(file.access, _ACCESS_NAMES)}, operation requires "
                          f"{format_bitfield(required, _ACCESS_NAMES)}")


__all__ = ["MemoryFile", "FileTypes", "validate_access"]
