"""Handlers of the vm.buffer ops: element loads/stores/fills, alloc/clone/length/copy/compare/hash.

Bounds checks use IREE's host-size arithmetic (iree_host_size_t of the context's data model, wrapping)
and report its OUT_OF_RANGE /
PERMISSION_DENIED / INVALID_ARGUMENT statuses. Where IREE's check passes on a wrapped sum, the access
goes where IREE's wrapping pointer arithmetic puts it: inside the buffer it happens, outside it is a
`VmTrapError` (IREE would touch memory that is not the buffer's). vm.buffer.alloc sizes its block as
IREE does (handle prefix + length, wrapping), with the allocator's statuses in its order. Ref operands
of these ops carry no ownership: a MOVE bit on them is ignored, as dispatch.c decodes them. Bytes are
read and written through the memoryview the buffer factory's `deref` gives (real tracked memory for
VM buffers).
"""
from __future__ import annotations

import struct
from typing import Any

from .decoder import Register
from ...base.checked_access import fill_view
from ...base.status import StatusCode
from ..errors import VmStatusError, VmTrapError
from .state import ExecutionState
from .handlers import op
from ..buffer import siphash24
from ..ops import I32, U64
from .registers import Frame, store_ref, write_i32, write_i64
from ...layouts.buffer import VmBufferLayout

_BUFFER_ELEMENTS = {  # symbol stem -> (element bytes, struct for loads/stores, load extension)
    "I8U": (1, struct.Struct("<B"), None), "I8S": (1, struct.Struct("<b"), None),
    "I16U": (2, struct.Struct("<H"), None), "I16S": (2, struct.Struct("<h"), None),
    "I8": (1, struct.Struct("<B"), None), "I16": (2, struct.Struct("<H"), None),
    "I32": (4, None, None), "I64": (8, None, None), "F32": (4, None, None), "F64": (8, None, None),
}


def buffer_operand(ctx: "ExecutionState", frame: Frame, reg: Register, what: str) -> Any:
    buffer = ctx.buffers.deref(frame.refs[reg.ordinal])
    if buffer is None:
        raise VmStatusError(StatusCode.INVALID_ARGUMENT, f"{what} is null")
    return buffer


def _host(frame: Frame, reg: Register, mask: int) -> int:
    """An i64 operand converted to iree_host_size_t (wrapping at `mask`, the data model's width)."""
    return U64.unpack_from(frame.regs, 4 * reg.ordinal)[0] & mask


def check_elements(buf: Any, offset: int, count: int, size: int, write: bool, mask: int) -> int:
    """iree_vm_buffer_check_ro/rw: returns the byte offset of the first element."""
    if write and not buf.mutable:
        raise VmStatusError(StatusCode.PERMISSION_DENIED,
                            "buffer is read-only and cannot be mapped for mutation")
    end = ((offset + count) * size) & mask
    if end > len(buf):
        byte_offset, byte_length = (offset * size) & mask, (count * size) & mask
        raise VmStatusError(StatusCode.OUT_OF_RANGE,
                            f"out-of-bounds access detected (offset={byte_offset}, "
                            f"length={byte_length}, alignment={size}, buffer length={len(buf)})")
    # The element pointer is data + offset elements, wrapping like the size arithmetic: an offset
    # that wraps back into the buffer reads/writes there (fills still touch `count` elements).
    start = (offset * size) & mask
    if start + count * size > len(buf):
        raise VmTrapError(f"buffer access at byte {start} (+{count * size}) passes IREE's wrapping "
                          f"bounds check but lies outside the {len(buf)}-byte buffer")
    return start


def _map_bytes(buf: Any, offset: int, length: int, write: bool, mask: int) -> int:
    """iree_vm_buffer_map_ro/rw with alignment 1: returns the byte offset."""
    if write and not buf.mutable:
        raise VmStatusError(StatusCode.PERMISSION_DENIED,
                            "buffer is read-only and cannot be mapped for mutation")
    if ((offset + length) & mask) > len(buf):
        raise VmStatusError(StatusCode.OUT_OF_RANGE,
                            f"out-of-bounds access detected (offset={offset}, length={length}, "
                            f"alignment=1, buffer length={len(buf)})")
    if offset + length > len(buf):
        raise VmTrapError(f"buffer range at byte {offset} (+{length}) passes IREE's wrapping "
                          f"bounds check but lies outside the {len(buf)}-byte buffer")
    return offset


def _stem(symbol: str, prefix: str) -> str:
    return symbol[len(prefix):]


# The element load and store ops (their handlers below; blocks.py inlines them).
LOAD_OPS = tuple(f"BufferLoad{s}" for s in ("I8U", "I8S", "I16U", "I16S", "I32", "I64", "F32", "F64"))
STORE_OPS = tuple(f"BufferStore{s}" for s in ("I8", "I16", "I32", "I64", "F32", "F64"))


def element_parts(ctx: "ExecutionState", inst: Any) -> tuple:
    """What a vm.buffer.load/store does, as data: (ref ordinal of the buffer, byte offset of the i64
    element-offset register, element size, struct of a sub-word element or None, byte offset of the
    value register, iree_host_size_t mask). The handlers below run it; the block compiler
    (blocks.py) inlines it."""
    load = inst.op.symbol.startswith("BufferLoad")
    size, elem, _ = _BUFFER_ELEMENTS[_stem(inst.op.symbol, "BufferLoad" if load else "BufferStore")]
    o = inst.operands
    value = o["result"] if load else o["value"]
    return o["buffer"].ordinal, 4 * o["offset"].ordinal, size, elem, 4 * value.ordinal, ctx.machine.word_mask


@op(*LOAD_OPS)
def _make_buffer_load(ctx, fn, inst):
    breg, oreg = inst.operands["buffer"], inst.operands["offset"]
    _, _, size, elem, dst, mask = element_parts(ctx, inst)

    def run(ctx, frame, _):
        buf = buffer_operand(ctx, frame, breg, "source_buffer")
        start = check_elements(buf, _host(frame, oreg, mask), 1, size, False, mask)
        if elem is None:
            frame.regs[dst:dst + size] = buf.data[start:start + size]
        else:
            write_i32(frame.regs, dst, elem.unpack_from(buf.data, start)[0])
    return run, None


@op(*STORE_OPS)
def _make_buffer_store(ctx, fn, inst):
    breg, oreg = inst.operands["buffer"], inst.operands["offset"]
    _, _, size, _, src, mask = element_parts(ctx, inst)

    def run(ctx, frame, _):
        buf = buffer_operand(ctx, frame, breg, "target_buffer")
        start = check_elements(buf, _host(frame, oreg, mask), 1, size, True, mask)
        buf.data[start:start + size] = frame.regs[src:src + size]  # low bytes, little endian
    return run, None


@op(*(f"BufferFill{s}" for s in ("I8", "I16", "I32", "I64", "F32", "F64")))
def _make_buffer_fill(ctx, fn, inst):
    mask = ctx.machine.word_mask
    size = _BUFFER_ELEMENTS[_stem(inst.op.symbol, "BufferFill")][0]
    o = inst.operands
    breg, oreg, lreg, src = o["buffer"], o["offset"], o["length"], 4 * o["value"].ordinal

    def run(ctx, frame, _):
        buf = buffer_operand(ctx, frame, breg, "buffer")
        count = _host(frame, lreg, mask)
        start = check_elements(buf, _host(frame, oreg, mask), count, size, True, mask)
        fill_view(buf.data, start, bytes(frame.regs[src:src + size]), count)
    return run, None


@op("BufferAlloc")
def _make_buffer_alloc(ctx, fn, inst):
    mask = ctx.machine.word_mask
    o = inst.operands
    lreg, areg, dst = o["length"], 4 * o["alignment"].ordinal, o["result"].ordinal

    def run(ctx, frame, _):
        length = _host(frame, lreg, mask)
        alignment = I32.unpack_from(frame.regs, areg)[0] & mask
        store_ref(ctx, frame.refs, dst, _allocate(ctx, length, alignment))
    return run, None


def _check_alignment(alignment: int) -> None:
    if alignment != 0 and alignment & (alignment - 1):
        raise VmStatusError(StatusCode.INVALID_ARGUMENT,
                            f"alignments must be powers of two (got {alignment})")


def _allocate(ctx: "ExecutionState", length: int, alignment: int) -> Any:
    """iree_vm_buffer_create: one block of prefix + length bytes (host-size arithmetic) from
    iree_allocator_malloc_aligned, whose checks come in this order."""
    m = ctx.machine
    prefix, mask = m.view(VmBufferLayout).prefix_size, m.word_mask
    total = (prefix + length) & mask
    if total == 0:
        raise VmStatusError(StatusCode.INVALID_ARGUMENT, "allocations must be >0 bytes")
    _check_alignment(alignment)
    if m.pointer_size + total + max(alignment, m.max_align) > mask:
        raise VmStatusError(StatusCode.OUT_OF_RANGE, "aligned allocation size overflow")
    if prefix + length > mask:  # IREE gets a small block but records `length`
        raise VmTrapError(f"buffer of {length} bytes: IREE's size computation wraps to a "
                          f"{total}-byte block, a buffer longer than its memory")
    return ctx.buffers.allocate(length, alignment)


@op("BufferClone")
def _make_buffer_clone(ctx, fn, inst):
    mask = ctx.machine.word_mask
    o = inst.operands

    def run(ctx, frame, _):
        value = frame.refs[o["source"].ordinal]
        source = buffer_operand(ctx, frame, o["source"], "source")
        offset, length = _host(frame, o["offset"], mask), _host(frame, o["length"], mask)
        alignment = I32.unpack_from(frame.regs, 4 * o["alignment"].ordinal)[0] & mask
        start = _map_bytes(source, offset, length, False, mask)
        _check_alignment(alignment)
        store_ref(ctx, frame.refs, o["result"].ordinal,
                  ctx.buffers.clone(value, start, length, alignment))
    return run, None


@op("BufferLength")
def _make_buffer_length(ctx, fn, inst):
    breg, dst = inst.operands["buffer"], 4 * inst.operands["result"].ordinal

    def run(ctx, frame, _):
        write_i64(frame.regs, dst, len(buffer_operand(ctx, frame, breg, "buffer")))
    return run, None


@op("BufferCopy")
def _make_buffer_copy(ctx, fn, inst):
    mask = ctx.machine.word_mask
    o = inst.operands

    def run(ctx, frame, _):
        source = buffer_operand(ctx, frame, o["source"], "source_buffer")
        target = buffer_operand(ctx, frame, o["target"], "target_buffer")
        length = _host(frame, o["length"], mask)
        s = _map_bytes(source, _host(frame, o["source_offset"], mask), length, False, mask)
        t = _map_bytes(target, _host(frame, o["target_offset"], mask), length, True, mask)
        target.data[t:t + length] = source.data[s:s + length]
    return run, None


@op("BufferCompare")
def _make_buffer_compare(ctx, fn, inst):
    mask = ctx.machine.word_mask
    o = inst.operands

    def run(ctx, frame, _):
        lhs = buffer_operand(ctx, frame, o["lhs"], "lhs_buffer")
        rhs = buffer_operand(ctx, frame, o["rhs"], "rhs_buffer")
        length = _host(frame, o["length"], mask)
        a = _map_bytes(lhs, _host(frame, o["lhs_offset"], mask), length, False, mask)
        b = _map_bytes(rhs, _host(frame, o["rhs_offset"], mask), length, False, mask)
        same = lhs.data[a:a + length] == rhs.data[b:b + length]
        write_i32(frame.regs, 4 * o["result"].ordinal, int(same))
    return run, None


@op("BufferHash")
def _make_buffer_hash(ctx, fn, inst):
    mask = ctx.machine.word_mask
    o = inst.operands

    def run(ctx, frame, _):
        source = buffer_operand(ctx, frame, o["source"], "source_buffer")
        length = _host(frame, o["length"], mask)
        start = _map_bytes(source, _host(frame, o["offset"], mask), length, False, mask)
        write_i64(frame.regs, 4 * o["result"].ordinal,
                  siphash24(bytes(source.data[start:start + length])))
    return run, None

