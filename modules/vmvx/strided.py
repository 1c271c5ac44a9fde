"""The vmvx module's 2-D buffer operands: how runtime/src/iree/modules/vmvx/module.c checks and maps
a (buffer, offset, stride0, stride1, size0, size1) operand before a kernel touches it, and the
element indices the kernel then reads or writes.

- `declare_2d`: BUFFER_2D_DECLS. Every int64 argument is cast to iree_host_size_t (on a 32-bit data
  model a value with any of its upper 32 bits set is an overflow), the length bound
  `((size0 - 1) * stride0 + (size1 - 1) * stride1 + 1) * element_size` is computed in uint64 (each
  size and each stride + 1 must fit 32 bits; on a 32-bit model the bound must fit the host size) and
  the offset is scaled to bytes in host-size arithmetic. Any overflow is INVALID_ARGUMENT
  "buffer overflow for NAME", before the buffer is looked at.
- `map_2d`: MAP_BUFFER_2D_*: iree_vm_buffer_check_deref, then iree_vm_buffer_map_ro / map_rw of
  [offset, offset + bound) at the element size's alignment (their statuses: a null ref
  INVALID_ARGUMENT, a read-only output PERMISSION_DENIED, past the end OUT_OF_RANGE).
- `Operand2d.indices`: the element index of every (i, j) the kernel visits, as the kernel's
  pointer arithmetic computes it, checked against the mapped span. IREE's checks leave some
  arguments whose accesses fall outside the mapping (a stride that wraps in the bound); those are
  refused here with `KernelAccessError` (IREE would read or write outside the buffer).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...abi.errors import IreeAbiError
from ...vm.buffer import BufferType, null_buffer
from ...vm.errors import VmTrapError
from ...vm.ref import Ref
from ...base.status import StatusCode, StatusError

U64 = (1 << 64) - 1
HIGH32 = 0xFFFFFFFF00000000
# The most kernel iterations one call may take here (each (i, j) visited is one): a call past it is
# refused (`KernelLimitError`) rather than looped over; the operands of real programs are bounded by
# their buffers, far below it.
MAX_ITERATIONS = 1 << 26


class KernelAccessError(VmTrapError):
    """A vmvx kernel would access memory outside the span its arguments mapped (IREE's checks
    passed; its kernel would read or write past the buffer), or do what else crashes the native
    runtime (an integer division by zero)."""

    def __init__(self, export: str, operand: str, detail: str) -> None:
        self.export = export
        self.operand = operand
        super().__init__(f"vmvx.{export}: operand {operand}: {detail}")


class KernelLimitError(IreeAbiError):
    """A vmvx kernel call whose iteration count is past MAX_ITERATIONS (a bound on the work one
    call may take here; IREE would loop that many times)."""

    def __init__(self, export: str, count: int) -> None:
        self.export = export
        self.count = count
        super().__init__(f"vmvx.{export}: {count} kernel iterations exceed the limit of {MAX_ITERATIONS}")


def _host_cast(value: int, host_bits: int, overflow: list[int]) -> int:
    """iree_vmvx_cast_host_size: the int64 as iree_host_size_t; upper bits flag an overflow on a
    32-bit host size."""
    v = value & U64
    if host_bits == 32:
        overflow[0] |= v & HIGH32
        return v & 0xFFFFFFFF
    return v


def length_bound(element_size: int, size0: int, size1: int, stride0: int, stride1: int,
                 host_bits: int, overflow: list[int]) -> int:
    """iree_vmvx_2d_length_bound: the byte length mapped for a 2-D operand (uint64 arithmetic)."""
    overflow[0] |= (size0 & HIGH32) | (size1 & HIGH32) | (((stride0 + 1) & U64) & HIGH32) | \
        (((stride1 + 1) & U64) & HIGH32)
    last_index = (((size0 - 1) & U64) * stride0 + ((size1 - 1) & U64) * stride1) & U64
    max_size = (((last_index + 1) & U64) * element_size) & U64
    host = max_size & ((1 << host_bits) - 1)
    overflow[0] |= host != max_size
    return host


@dataclass(frozen=True)
class Decl2d:
    """BUFFER_2D_DECLS' values: host sizes, strides, the byte offset and the mapped length."""

    name: str
    element_size: int
    size0: int
    size1: int
    stride0: int
    stride1: int
    offset: int  # bytes
    length: int  # bytes


def declare_2d(name: str, element_size: int, offset: int, stride0: int, stride1: int, size0: int,
               size1: int, host_bits: int) -> Decl2d:
    """BUFFER_2D_DECLS for one operand; INVALID_ARGUMENT "buffer overflow for NAME" on overflow."""
    overflow = [0]
    s0 = _host_cast(size0, host_bits, overflow)
    s1 = _host_cast(size1, host_bits, overflow)
    t0 = _host_cast(stride0, host_bits, overflow)
    t1 = _host_cast(stride1, host_bits, overflow)
    bound = length_bound(element_size, s0, s1, t0, t1, host_bits, overflow)
    off = (element_size * _host_cast(offset, host_bits, overflow)) & ((1 << host_bits) - 1)
    if overflow[0]:
        raise StatusError(StatusCode.INVALID_ARGUMENT, f"buffer overflow for {name}")
    return Decl2d(name, element_size, s0, s1, t0, t1, off, bound)


@dataclass(frozen=True)
class Operand2d:
    """A mapped 2-D operand: its declaration and the span (address, byte length) mapped for it."""

    decl: Decl2d
    address: int
    span_length: int

    def array(self, heap: Any, dtype: Any) -> np.ndarray:
        """The mapped span as a flat little-endian numpy array of `dtype` (a view of the heap)."""
        dt = np.dtype(dtype).newbyteorder("<")
        count = self.span_length // dt.itemsize
        if count == 0:
            return np.empty(0, dt)
        return np.frombuffer(heap.view(self.address, count * dt.itemsize), dtype=dt)

    def indices(self, export: str, size0: int, size1: int, stride0: int, stride1: int) -> np.ndarray:
        """The element index of each (i, j), i < size0, j < size1, at element strides (signed, as
        the kernel's index type holds them), checked to lie in the mapped span."""
        if size0 <= 0 or size1 <= 0:
            return np.zeros((0, 0), dtype=np.int64)
        count = size0 * size1
        if count > MAX_ITERATIONS:
            raise KernelLimitError(export, count)
        lo = min(0, (size0 - 1) * stride0) + min(0, (size1 - 1) * stride1)
        hi = max(0, (size0 - 1) * stride0) + max(0, (size1 - 1) * stride1)
        elements = self.span_length // self.decl.element_size
        if lo < 0 or hi >= elements:
            raise KernelAccessError(export, self.decl.name,
                                    f"elements {lo}..{hi} of a {elements}-element mapping at byte offset "
                                    f"{self.decl.offset} (sizes {size0}x{size1}, strides {stride0}, {stride1})")
        return (np.arange(size0, dtype=np.int64)[:, None] * stride0
                + np.arange(size1, dtype=np.int64)[None, :] * stride1)


def map_2d(vm_buffers: BufferType, ref: Ref, decl: Decl2d, *, writable: bool) -> Operand2d:
    """MAP_BUFFER_2D_RO / _RW: check_deref the ref, then map [offset, offset + length) at the
    element size's alignment (IREE's statuses)."""
    buf = vm_buffers.check_deref(ref)
    if not buf:  # {NULL, vm.buffer}: module.c's MAP_BUFFER_2D maps it untested
        raise null_buffer(f"vm.buffer ({decl.name})")
    if writable:
        address, length = vm_buffers.map_rw(buf, decl.offset, decl.length, decl.element_size)
    else:
        address, length = vm_buffers.map_ro(buf, decl.offset, decl.length, decl.element_size)
    return Operand2d(decl, address, length)


def signed(value: int, bits: int) -> int:
    """`value` (a host size) as the signed integer of `bits` bits the kernels' index type holds."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


__all__ = ["KernelAccessError", "KernelLimitError", "Decl2d", "Operand2d", "declare_2d", "map_2d",
           "length_bound", "signed", "MAX_ITERATIONS"]
