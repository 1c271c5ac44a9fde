"""The real backend: vm.buffer refs on `ireeabi.vm.buffer.BufferType`, counted in tracked memory.

`VmBufferFactory(buffer_type)` makes the interpreter keep `vm.ref.Ref` values in ref registers,
globals and list slots; each holds one reference whose counter lives in memory:

- retain / release go through `ireeabi.vm.ref` (object_retain / release_value: the counter in the
  object, the type's destroy through its registered C callback at zero); lists are Python objects
  counted on the Python side (`VmList.refs`), releasing their ref items when the last goes;
- vm.buffer.alloc / clone are `BufferType.create` / `clone` with access MUTABLE | ORIGIN_GUEST (one
  aligned co-allocation, tagged COALLOCATED, freed through the aligned path at zero);
- rodata segments are module-storage VM buffers: the segments are copied into one heap block (the
  module's flatbuffer storage, each segment 64-byte aligned), and one `iree_vm_buffer_t` per segment
  is initialized there with `initialize_module_storage` (counter 0, ORIGIN_MODULE, read-only) on an
  `iree_vm_module_t` head from `vm.module_ref`; vm.const.ref.rodata retains the handle
  (`BufferType.retain_ref`: the 0 -> 1 step retains the module head, the 1 -> 0 release gives it
  back);
- `deref` maps a vm.buffer ref to a `ByteBuffer` over the real bytes (a memoryview of the heap
  block, read-only unless the handle's access has MUTABLE), cached per handle and revalidated
  against the handle's access/data/length words and the heap block on every use.

`close()` checks that no rodata buffer is still referenced (`RodataLeakError` otherwise), drops the
module head and frees the storage.
"""
from __future__ import annotations

import struct
from typing import Any

from ...abi.errors import IreeAbiError
from .. import module_ref
from .. import ref as _ref
from ..buffer import BufferAccess, BufferType
from .module_file import ModuleFile, rodata_bytes
from ..ref import Ref
from ...base.status import StatusCode
from .buffer_factory import DEFAULT_MAX_ALLOCATION, BufferFactory, ByteBuffer
from ..errors import VmStatusError
from ..list import VmList
from ...layouts.buffer import VmBufferLayout

GUEST_ACCESS = BufferAccess.MUTABLE | BufferAccess.ORIGIN_GUEST  # vm.buffer.alloc / clone
RODATA_ALIGNMENT = 64
_MUTABLE = int(BufferAccess.MUTABLE)


class RodataLeakError(IreeAbiError):
    """A context closed while rodata buffers of its module were still referenced."""

    def __init__(self, module: str, live: list[tuple[int, int]]) -> None:
        self.live = live  # (segment ordinal, counter)
        what = ", ".join(f"rodata[{o}] has {n}" for o, n in live)
        super().__init__(f"module {module!r} closed with live references to its rodata buffers: "
                         f"{what}")


class VmBufferFactory(BufferFactory):
    """VM buffers of `buffer_type` (its heap and vm.buffer ref type) as the interpreter's
    buffers."""

    counted = True

    def __init__(self, buffer_type: BufferType, *,
                 max_allocation: int = DEFAULT_MAX_ALLOCATION) -> None:
        super().__init__(max_allocation, target=buffer_type.heap.machine)
        self.vmb = buffer_type
        self.heap = buffer_type.heap
        self.type = buffer_type.type
        L = self.heap.machine.view(VmBufferLayout)
        self._handle_size = L.size
        # access (uint32), then the data span {data, data_length}, read with one unpack.
        self._access_off = L.access_off
        self._head_fmt = struct.Struct(f"<I{L.data_off - L.access_off - 4}x{self.heap.machine.word_code * 2}")
        self._cache: dict[int, tuple] = {}
        self._module_name = ""
        self._module_head = 0
        self._storage = 0
        self._handles: list[int] = []
        self._handle_block = 0
        self.closed = False

    # -- making buffers ----------------------------------------------------------------------------

    def allocate(self, length: int, alignment: int) -> Ref:
        if length > self.max_allocation:
            raise VmStatusError(StatusCode.RESOURCE_EXHAUSTED,
                                f"buffer allocation of {length} bytes exceeds the interpreter's "
                                f"limit of {self.max_allocation}")
        return Ref(self.vmb.create(GUEST_ACCESS, length, alignment), self.type)

    def clone(self, source: Any, offset: int, length: int, alignment: int) -> Ref:
        handle = self.vmb.check_deref(source)
        return Ref(self.vmb.clone(GUEST_ACCESS, handle, offset, length, alignment), self.type)

    def rodata_buffers(self, module: ModuleFile) -> list[int]:
        """Module-storage handles over a copy of the module's rodata (see the module docstring)."""
        segments = module.rodata_segments
        self._module_name = module.name
        if not segments:
            return []
        heap = self.heap
        offsets, total = [], 0
        for s in segments:
            total = -(-total // RODATA_ALIGNMENT) * RODATA_ALIGNMENT
            offsets.append(total)
            total += s.length
        self._storage = heap.malloc(max(total, 1), align=RODATA_ALIGNMENT, zero=True,
                                    tag=f"module {module.name} rodata storage")
        for s, off in zip(segments, offsets):
            data = rodata_bytes(s)
            if data:
                heap.write(self._storage + off, data)
        self._module_head = module_ref.create(heap, lambda _self: None,
                                              name=f"bytecode module {module.name}")
        self._handle_block = heap.malloc(self._handle_size * len(segments),
                                         tag=f"module {module.name} rodata buffers")
        for i, (s, off) in enumerate(zip(segments, offsets)):
            handle = self._handle_block + i * self._handle_size
            self.vmb.initialize_module_storage(self._storage + off, s.length, self._module_head,
                                               handle)
            self._handles.append(handle)
        return list(self._handles)

    def rodata_ref(self, rodata: Any) -> Ref:
        return self.vmb.retain_ref(rodata)

    # -- using buffers -----------------------------------------------------------------------------

    def deref(self, value: Any) -> ByteBuffer | None:
        if type(value) is not Ref or value.type != self.type:
            return None
        ptr = value.ptr
        heap = self.heap
        cached = self._cache.get(ptr)
        if cached is not None and not heap.closed:
            # The checks below, on the blocks found last time: the header's block still live and its
            # words unchanged, the data's block still live (blocks never move or shrink).
            head, words, block, view = cached
            if head.freed_stack is None and (block is None or block.freed_stack is None) and \
                    self._head_fmt.unpack_from(head.raw, ptr + self._access_off - head.base) == words:
                return view
        head = heap.check_range(ptr + self._access_off, self._head_fmt.size)
        words = self._head_fmt.unpack_from(head.raw, ptr + self._access_off - head.base)
        access, data, length = words
        mutable = bool(access & _MUTABLE)
        if length:
            block = heap.check_range(data, length)
            view = ByteBuffer(heap.view(data, length), mutable, 0, f"vm.buffer 0x{ptr:x}", data)
        else:
            block = None
            view = ByteBuffer(bytearray(0) if mutable else b"", mutable, 0, f"vm.buffer 0x{ptr:x}")
        self._cache[ptr] = (head, words, block, view)
        return view

    def header_span(self, value: Any) -> tuple[int, int]:
        start = value.ptr + self._access_off
        return start, start + self._head_fmt.size

    # -- reference counting ------------------------------------------------------------------------

    def retain(self, value: Any) -> None:
        if type(value) is Ref:
            if value.ptr:
                _ref.object_retain(self.heap, value.ptr, value.type)
        elif type(value) is VmList:
            value.refs += 1

    def release(self, value: Any) -> None:
        if type(value) is Ref:
            _ref.release_value(self.heap, value)
        elif type(value) is VmList:
            value.refs -= 1
            if value.refs == 0:
                value.drop_items(self.release)

    # -- teardown ----------------------------------------------------------------------------------

    def rodata_counters(self) -> list[int]:
        """The counter of each rodata buffer (0 when no ref to it is alive)."""
        return [self.vmb.counter(h) for h in self._handles]

    def close(self) -> None:
        if self.closed:
            return
        self._cache.clear()
        live = [(i, n) for i, n in enumerate(self.rodata_counters()) if n]
        if live:  # freeing the storage would leave those refs dangling: keep it, report (a
            raise RodataLeakError(self._module_name, live)  # later close can still succeed)
        self.closed = True
        heap = self.heap
        if self._module_head:
            module_ref.release(heap, self._module_head)
            self._module_head = 0
        if self._handle_block:
            heap.free(self._handle_block)
            self._handle_block = 0
        if self._storage:
            heap.free(self._storage)
            self._storage = 0
        self._handles = []


__all__ = ["VmBufferFactory", "RodataLeakError", "GUEST_ACCESS"]
