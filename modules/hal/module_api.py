"""What a native module's implementation may do with the HAL objects a program passes it, on any
data model: read a buffer view (element type, shape, encoding, its bytes as a numpy view) or a
buffer (its length and mapping), and make new buffer views and buffers to return.

    def expect_positive(ctx, view):          # an export "0r_v" of a ModuleDescriptor
        v = ctx.state.view(view)             # ctx.state: the ModuleApi (or what `state` made of it)
        if (v.array() <= 0).any(): ...

    def double(ctx, view):                   # "0r_r"
        v = ctx.state.view(view)
        return ctx.state.new_view(v.array() * 2)   # a new reference, moved into the results

Views of memory (`BufferViewInfo.data`, `.array()`, `BufferInfo.data`) are numpy arrays over the
heap's bytes, without a copy: writes go to the buffer. They stay valid memory even after the buffer
is freed (the heap keeps mapped what a view holds), but then no longer show the buffer.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ...abi.errors import IreeAbiError
from ...layouts import hal_buffer as HB
from ...layouts.hal_buffer import EncodingType
from ...base.allocator import AllocatorT
from ...base.heap import Heap
from ...vm.ref import Ref, release_value

from ...hal.buffer import BufferTypes
from ...hal.buffer_view import BufferViewTypes
from ...hal.element_types import dtype_of, element_type_of


INPUT_ALIGNMENT = 64  # the device allocator's (and IREE_HAL_HEAP_BUFFER_ALIGNMENT's) alignment


@dataclass(frozen=True)
class BufferInfo:
    """A hal.buffer: its byte length and its bytes (uint8, a view of the heap's memory)."""

    address: int
    length: int
    data: np.ndarray


@dataclass(frozen=True)
class BufferViewInfo:
    """A hal.buffer_view: element type (IREE's uint32), shape, encoding, byte length (as the view
    records it), its buffer, and `data`: the view's bytes (uint8) from byte 0 of the buffer."""

    address: int
    element_type: int
    shape: tuple[int, ...]
    encoding_type: int
    byte_length: int
    buffer: BufferInfo

    @property
    def data(self) -> np.ndarray:
        return self.buffer.data[:self.byte_length]

    @property
    def dtype(self) -> np.dtype:
        """The numpy dtype of the elements (ElementTypeError for sub-byte types)."""
        return dtype_of(self.element_type)

    def array(self) -> np.ndarray:
        """The elements as a numpy array of the view's shape, over the buffer's memory."""
        dtype = self.dtype
        count = int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1
        need = count * dtype.itemsize
        if need > self.buffer.length:
            raise IreeAbiError(f"buffer view 0x{self.address:x} of shape {list(self.shape)} needs {need} "
                               f"bytes, its buffer has {self.buffer.length}")
        return self.buffer.data[:need].view(dtype).reshape(self.shape)


class ModuleApi:
    """The buffer-view and buffer API of one HalRuntime (see the module docstring): its heap, its
    buffer-view and buffer types, and the host allocator new views are made with (the inline HAL's,
    as iree-run-module's inputs are)."""

    def __init__(self, heap: Heap, views: BufferViewTypes, buffers: BufferTypes,
                 host_allocator: AllocatorT) -> None:
        self.heap = heap
        self.machine = heap.machine
        self.views = views
        self._views = views
        self._buffers = buffers
        self.host_allocator = host_allocator
        # The params of new buffers (the inline HAL's; a runtime with the full HAL sets the device's).
        self.input_memory_type = int(HB.MemoryType.OPTIMAL_FOR_HOST)
        self.input_usage = int(HB.BufferUsage.DEFAULT)

    # -- reading --------------------------------------------------------------------------------

    def _buffer_info(self, ptr: int) -> BufferInfo:
        b = self._buffers.get(ptr)
        raw = self.heap.view(b.storage, b.byte_length) if b.byte_length else memoryview(bytearray())
        return BufferInfo(ptr, b.byte_length, np.frombuffer(raw, dtype=np.uint8))

    def buffer(self, ref: Ref) -> BufferInfo:
        """A hal.buffer ref's length and mapping (a borrowed ref: nothing is retained)."""
        ptr, _ = self._buffers.deref(ref)
        return self._buffer_info(ptr)

    def view(self, ref: Ref) -> BufferViewInfo:
        """A hal.buffer_view ref's fields and bytes (a borrowed ref: nothing is retained)."""
        views = self._views
        ptr = views.deref(ref)
        shape = tuple(views.shape(ptr))
        return BufferViewInfo(ptr, views.element_type(ptr), shape, views.encoding_type(ptr),
                              views.byte_length(ptr), self._buffer_info(views.buffer(ptr)))

    def is_view(self, ref: Any) -> bool:
        return isinstance(ref, tuple) and len(ref) == 2 and ref[1] == self._views.type and bool(ref[0])

    # -- making ---------------------------------------------------------------------------------

    def new_buffer(self, data: "bytes | int | np.ndarray") -> Ref:
        """A new hal.buffer (a reference the caller owns): `data`'s bytes, or that many zero bytes,
        in a host-visible heap buffer as the inline HAL allocates one."""
        payload: Any  # bytes, or an array's uint8 view
        if isinstance(data, (int, np.integer)) and not isinstance(data, bool):
            n, payload = int(data), b""
            if n < 0:
                raise IreeAbiError(f"buffer size must not be negative, got {n}")
        else:  # an array's bytes are copied once, into the heap (no bytes object in between)
            payload = np.ascontiguousarray(data).reshape(-1).view(np.uint8) \
                if isinstance(data, np.ndarray) else bytes(data)
            n = len(payload)
        ptr = self._buffers.allocate(n, min_alignment=INPUT_ALIGNMENT,
                                     memory_type=self.input_memory_type,
                                     allowed_access=HB.MemoryAccess.ALL,
                                     allowed_usage=self.input_usage)
        if len(payload):
            self.heap.view(self._buffers.get(ptr).storage, n)[:] = payload
        return Ref(ptr, self._buffers.type)

    def new_view(self, array: Any, element_type: int | None = None, *,
                 shape: Sequence[int] | None = None, buffer: Ref | None = None,
                 encoding_type: int = int(EncodingType.DENSE_ROW_MAJOR)) -> Ref:
        """A new hal.buffer_view (a reference the caller owns), as iree_hal_buffer_view_allocate_
        buffer_copy makes one: `array`'s bytes copied into a new buffer, its shape and element type
        (from the dtype unless given). With `buffer`, the view is over that buffer instead (retained
        by the view; `array` is then None and `shape`/`element_type` are required)."""
        if buffer is not None:
            if array is not None or shape is None or element_type is None:
                raise IreeAbiError("new_view over a buffer takes shape and element_type, not an array")
            ptr, _ = self._buffers.deref(buffer)
            view = self._views.create(ptr, list(shape), element_type, encoding_type, self.host_allocator)
            return Ref(view, self._views.type)
        arr = np.asarray(array)  # (np.ascontiguousarray would turn a 0-d array into 1-d)
        if not arr.flags.c_contiguous:
            arr = arr.copy(order="C")
        et = element_type_of(arr.dtype) if element_type is None else element_type
        dims = list(arr.shape) if shape is None else list(shape)
        buf = self.new_buffer(arr)
        try:
            view = self._views.create(buf.ptr, dims, et, encoding_type, self.host_allocator)
        finally:
            self._buffers.resources.release(buf.ptr)
        return Ref(view, self._views.type)

    def release(self, ref: Ref) -> None:
        """Drop a reference one owns (a `new_view`/`new_buffer` result, or a ref a call returned),
        as iree_vm_ref_release does: the object is destroyed with its last reference."""
        release_value(self.heap, ref)

    def to_numpy(self, ref: Ref) -> np.ndarray:
        """A copy of a buffer view's elements."""
        return self.view(ref).array().copy()


__all__ = ["ModuleApi", "BufferInfo", "BufferViewInfo", "INPUT_ALIGNMENT"]
