"""HAL buffers over the tracked heap, and iree_hal_buffer_mapping_t in memory.

A HAL buffer here is a heap-backed buffer (as IREE's buffer_heap.c): an aligned block of host memory
plus its memory type, allowed access and usage. Subspans retain the buffer they view. Mappings are
written into an `iree_hal_buffer_mapping_t` laid out by the catalog, as iree_hal_buffer_map_range does:
the whole mapping zeroed, buffer/offset/access/flags filled, SCOPED mappings retaining the buffer until
`unmap_range`, which releases and zeroes it (and is a no-op on an unmapped, i.e. NULL-buffer, mapping).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Any

from ..layouts import hal_buffer as HB
from ..layouts.hal_buffer import HEAP_BUFFER_ALIGNMENT
from ..vm.buffer import BufferOverflowError
from ..base.heap import Heap
from ..vm.ref import object_release as _object_release
from ..vm.ref import object_retain as _object_retain
from ..vm.ref import Ref, TypeRegistry
from ..base.status import StatusCode, StatusError

from .resource import ResourceType
from ..layouts.hal_buffer import HalBufferLayout

_PERSISTENT = int(HB.MappingMode.PERSISTENT)
_SCOPED = int(HB.MappingMode.SCOPED)


def calculate_range(ptr: int, max_length: int, offset: int, length: int, mask: int) -> tuple[int, int]:
    """iree_hal_buffer_calculate_range for [offset, offset + length) of the `max_length`-byte buffer
    at `ptr`: (offset, length) as device sizes of the data model (all ones in `mask`, which is also
    IREE_HAL_WHOLE_BUFFER: the VM's i64 reinterpreted, WHOLE_BUFFER resolved). Where IREE's end
    check passes only because `offset + length - 1` wrapped, the range it would accept lies outside
    the buffer: reported as BufferOverflowError instead of being made."""
    offset &= mask
    length &= mask
    if offset > max_length:
        raise StatusError(StatusCode.OUT_OF_RANGE,
                          f"attempted to access an address off the end of the valid buffer range "
                          f"(offset={offset}, length={length}, buffer byte_length={max_length})")
    if length == mask:  # IREE_HAL_WHOLE_BUFFER
        length = max_length - offset
    elif length and offset + length > max_length:
        end = (offset + length - 1) & mask
        if end >= max_length:
            raise StatusError(StatusCode.OUT_OF_RANGE,
                              f"attempted to access an address outside of the valid buffer range "
                              f"(offset={offset}, adjusted_length={length}, end={end}, "
                              f"buffer byte_length={max_length})")
        raise BufferOverflowError(
            f"hal.buffer 0x{ptr:x}: offset {offset} + length {length} wraps to end {end}, passing "
            f"iree_hal_buffer_calculate_range, but the range lies outside the buffer's {max_length} bytes",
            ptr)
    return offset, length


@dataclass
class HalBuffer:
    storage: int  # address of byte 0 of this buffer's range
    byte_length: int
    allocation_size: int
    memory_type: int
    allowed_access: int
    allowed_usage: int
    parent: int = 0  # retained buffer a subspan views (0 for an allocation)
    byte_offset: int = 0  # within the parent
    # A wrapped (imported) buffer's release callback instead of freeing its storage (None: owned).
    release: "Callable[[], None] | None" = None


class BufferTypes:
    """The hal.buffer type and operations on one heap."""

    def __init__(self, registry: TypeRegistry) -> None:
        self.heap: Heap = registry.heap
        self._L = self.heap.machine.view(HalBufferLayout)
        self.resources: ResourceType[HalBuffer] = ResourceType(registry, "hal.buffer", self._destroy)
        self.type = self.resources.type

    def close(self) -> None:
        self.resources.close()

    def _destroy(self, ptr: int, b: HalBuffer) -> None:
        if b.parent:
            self.resources.release(b.parent)
        elif b.release is not None:
            b.release()
        else:
            self.heap.free(b.storage)

    def wrap(self, storage: int, length: int, *, memory_type: int, allowed_access: int, allowed_usage: int,
             release: "Callable[[], None]") -> int:
        """iree_hal_heap_buffer_wrap: a buffer (ref count 1) over memory it does not own; `release`
        runs when its last reference goes."""
        return self.resources.create(HalBuffer(storage, length, length, int(memory_type), int(allowed_access),
                                               int(allowed_usage), release=release), tag="hal.buffer (wrapped)")

    def allocate(self, size: int, *, min_alignment: int = 0,
                 memory_type: int = HB.MemoryType.OPTIMAL_FOR_HOST,
                 allowed_access: int = HB.MemoryAccess.ALL,
                 allowed_usage: int = HB.BufferUsage.DEFAULT) -> int:
        """A new heap buffer (ref count 1) of `size` bytes, zero-filled; its address. `size` is a device
        size (a negative VM i64 is the huge size it reinterprets as), failing as the heap allocator's
        slab allocation does."""
        if not isinstance(size, int):
            raise StatusError(StatusCode.INVALID_ARGUMENT, f"allocation size {size!r} must be an int")
        L = self._L
        size &= L.mask
        total = (L.slab_header + size) & L.mask  # header + size, unchecked as in buffer_heap.c
        if total > L.slab_limit or total < size:
            _slab_failure(size, total, L.slab_limit)
        if min_alignment < 0 or min_alignment & (min_alignment - 1):
            raise StatusError(StatusCode.INVALID_ARGUMENT,
                              f"minimum alignment {min_alignment} must be 0 or a power of two")
        align = max(min_alignment, HEAP_BUFFER_ALIGNMENT)
        with self.heap.guarded_allocations():  # a kernel's binding, with guard pages on the host
            storage = self.heap.malloc(max(size, 1), align=align, tag=f"hal.buffer storage ({size} B)")
        return self.resources.create(HalBuffer(storage, size, size, int(memory_type), int(allowed_access),
                                               int(allowed_usage)), tag="hal.buffer")

    def get(self, ptr: int) -> HalBuffer:
        return self.resources.payload(ptr)

    def deref(self, ref: Ref) -> tuple[int, HalBuffer]:
        return self.resources.deref(ref)

    def subspan(self, ptr: int, offset: int, length: int) -> int:
        """iree_hal_buffer_subspan: a buffer viewing [offset, offset + length) of `ptr` (device sizes:
        a VM i64 -1 is WHOLE_BUFFER). `ptr` itself, retained, only when the range is its whole
        allocation (offset 0 within the root): a whole-range request on a subspan that starts inside
        its root still makes a new subspan of the root, as IREE does."""
        b = self.get(ptr)
        if not (0 <= offset and 0 <= length and offset + length <= b.byte_length):  # else in range as is
            offset, length = calculate_range(ptr, b.byte_length, offset, length, self._L.mask)
        if b.byte_offset + offset == 0 and length == b.byte_length:
            self.resources.retain(ptr)
            return ptr
        root = b.parent or ptr
        self.resources.retain(root)
        return self.resources.create(HalBuffer(b.storage + offset, length, b.allocation_size, b.memory_type,
                                               b.allowed_access, b.allowed_usage, root, b.byte_offset + offset),
                                     tag="hal.buffer subspan")

    # -- mappings ------------------------------------------------------------------------------------

    def map_range(self, ptr: int, mode: int, access: int, offset: int, length: int, mapping: int) -> None:
        """Fill the iree_hal_buffer_mapping_t at `mapping` for [offset, offset + length) of `ptr`."""
        b = self.get(ptr)
        raw, off = self.heap.cell(mapping, self._L.mapping_size)  # the whole mapping, one check
        self.map_into(raw, off, ptr, b, mode, access, offset, length)

    def map_into(self, raw: Any, off: int, ptr: int, b: HalBuffer, mode: int, access: int, offset: int,
                 length: int) -> tuple[int, int]:
        """map_range into a `Heap.cell` the caller took over the whole mapping (`b` is ptr's
        payload); the mapped (data, length)."""
        L = self._L
        mask = L.mask
        if not (0 <= offset and 0 <= length and offset + length <= b.byte_length):  # else in range as is
            try:
                offset, length = calculate_range(ptr, b.byte_length, offset, length, mask)
            except BaseException:
                L.zero_mapping.pack_into(raw, off)  # zeroed before the check, as ever
                raise
        mode = int(mode)  # plain int flag tests (an IntFlag's & is slow)
        unit = ((access & 0xFFFF) << L.access_shift) | ((1 if mode & _PERSISTENT else 0) << L.persistent_shift)
        data = b.storage + offset
        # impl.byte_offset is the range's offset within the allocated (root) buffer, as
        # iree_hal_buffer_prepare_map_range stores calculate_range's adjusted offset.
        offset = (b.byte_offset + offset) & mask
        if mode & _SCOPED:
            try:
                _object_retain(self.heap, ptr, self.type)
            except BaseException:  # the mapping as it stood when the retain failed: no contents yet
                L.map_fmt.pack_into(raw, off, 0, 0, ptr & mask, offset, unit)
                raise
        L.map_fmt.pack_into(raw, off, data & mask, length & mask, ptr & mask, offset, unit)
        return data, length

    def unmap_range(self, mapping: int) -> None:
        raw, off = self.heap.cell(mapping, self._L.mapping_size)
        self.unmap_into(raw, off)

    def unmap_into(self, raw: Any, off: int) -> None:
        """unmap_range on a `Heap.cell` the caller took over the whole mapping."""
        L = self._L
        ptr, unit = L.unmap_fmt.unpack_from(raw, off)
        if not ptr:
            return
        L.zero_mapping.pack_into(raw, off)
        if not (unit >> L.persistent_shift) & 1:  # SCOPED: the mapping holds a retain
            _object_release(self.heap, ptr, self.type)


def _slab_failure(size: int, total: int, limit: int) -> None:
    """The status of a slab allocation whose total (header + size) wrapped or is too large for
    iree_allocator_malloc_aligned's overflow checks (`limit`)."""
    if total == 0:
        raise StatusError(StatusCode.INVALID_ARGUMENT, "allocations must be >0 bytes")
    if total > limit:
        raise StatusError(StatusCode.OUT_OF_RANGE, "aligned allocation size overflow")
    # The total wrapped to a small block: IREE would allocate it and describe it as `size` bytes.
    raise BufferOverflowError(f"heap buffer of {size} bytes: the slab total (header + size) wraps to "
                              f"{total} bytes, which IREE would allocate; the buffer would overrun it")
