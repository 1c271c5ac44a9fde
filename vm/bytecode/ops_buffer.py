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

The element loads and stores are written inline by the compiled code: their fast-path writers (the
register accesses, the loop-region and straight-block text: handlers.py's registry) are at the end,
beside the handlers whose steps they take.
"""
from __future__ import annotations

import struct
from typing import Any

from .decoder import Register
from ...base.checked_access import fill_view
from ...base.status import StatusCode
from ..errors import VmStatusError, VmTrapError
from .state import ExecutionState
from .handlers import block_writer, interval_rule, op, region_accesses, region_writer
from ..buffer import siphash24
from ..ops import F32_QUIET_BIT, I32, M64, U64
from .ops_scalar import reads_signed
from .value_ranges import nonnegative
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


# The element load and store ops (their handlers below; their fast-path writers at the end).
LOAD_OPS = tuple(f"BufferLoad{s}" for s in ("I8U", "I8S", "I16U", "I16S", "I32", "I64", "F32", "F64"))
STORE_OPS = tuple(f"BufferStore{s}" for s in ("I8", "I16", "I32", "I64", "F32", "F64"))


def element_parts(ctx: "ExecutionState", inst: Any) -> tuple:
    """What a vm.buffer.load/store does, as data: (ref ordinal of the buffer, byte offset of the i64
    element-offset register, element size, struct of a sub-word element or None, byte offset of the
    value register, iree_host_size_t mask). The handlers below run it; the fast-path writers at the
    end write it inline."""
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


# The range of a narrow load's element (value_ranges.py); a 32- or 64-bit load may give any value.
_LOADED = {"BufferLoadI8U": (0, 255), "BufferLoadI8S": (-128, 127), "BufferLoadI16U": (0, 65535),
           "BufferLoadI16S": (-32768, 32767)}


@interval_rule(*_LOADED)
def _load_interval(v: Any) -> tuple[int, int]:
    return _LOADED[v.inst.op.symbol]


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


# -- the fast path -------------------------------------------------------------------------------

# (kind of the value a region holds, element bytes) -> typed memoryview format; its struct for the
# slow path
_VIEWS = {("int", 4): "I", ("f32", 4): "f", ("int", 8): "Q", ("f64", 8): "d", ("sint", 4): "i", ("sint", 8): "q"}
_VIEW_STRUCTS = {f: struct.Struct("<" + f) for f in ("B", "H", "I", "f", "i", "Q", "d", "q")}


def element_access(ctx: "ExecutionState", inst: Any) -> tuple[int, int, bool] | None:
    """(ref ordinal of the buffer, element size, whether it stores) of an element load or store;
    None for any other instruction (the compiled regions remember the buffers these access)."""
    symbol = inst.op.symbol
    if symbol not in LOAD_OPS and symbol not in STORE_OPS:
        return None
    bo, _, size, _, _, _ = element_parts(ctx, inst)
    return bo, size, symbol in STORE_OPS


def element_offset(buf: Any, o: int, size: int, write: bool, mask: int) -> int:
    """The byte offset of element `o` after the handlers' whole check (a loop region's slow path)."""
    n = buf.data.nbytes
    s = (o * size) & mask
    if not (((o + 1) * size) & mask <= n and s + size <= n and (not write or buf.mutable)):
        check_elements(buf, o, 1, size, write, mask)
    return s


@region_accesses(*LOAD_OPS, *STORE_OPS)
def _element_accesses(ctx: "ExecutionState", inst: Any) -> list:
    _, off, size, elem, val, _ = element_parts(ctx, inst)
    index = ("r", off // 4, 2, "int")
    if inst.op.symbol in LOAD_OPS:
        return [index, ("w", val // 4, 1, "int") if elem is not None else ("w", val // 4, size // 4, "raw")]
    return [index, ("r", val // 4, 1, "int") if size < 4 else ("r", val // 4, size // 4, "raw")]


@block_writer(*LOAD_OPS, *STORE_OPS)
def _block_element(w: Any, i: int, lines: list, pad: str) -> bool:
    """As the handlers: the buffer (its null error from buffer_operand; in a byte-register region,
    from the region's memo), IREE's bounds check inline (check_elements runs, and raises, when
    it fails), the element's bytes."""
    inst = w.code[i][2]
    bind = w.bind
    b, off, size, elem, val, mask = element_parts(w.ctx, inst)
    load = inst.op.symbol in LOAD_OPS
    what = "source_buffer" if load else "target_buffer"
    null = f"null(ctx, frame, {bind(inst.operands['buffer'], 'b')}, {what!r})"
    if w.memo is not None:
        lines.append(f"{pad}b = buf{b}")
        lines.append(f"{pad}if b is None:")
        lines.append(f"{pad}    b = deref(refs[{b}])")
        lines.append(f"{pad}    if b is None: {null}")
        lines.append(f"{pad}    buf{b} = b")
        lines.append(f"{pad}    lo{b}, hi{b} = span(refs[{b}])")
    elif b in w.derefs:
        lines.append(f"{pad}b = buf{b}")
    else:
        lines.append(f"{pad}b = buf{b} = deref(refs[{b}])")
        lines.append(f"{pad}if b is None: {null}")
        w.derefs.add(b)
    # check_elements' conditions for one element, inline; it runs (and raises) when one fails
    lines.append(f"{pad}o = u64(regs, {off})[0] & {mask}")
    lines.append(f"{pad}n = b.data.nbytes")
    lines.append(f"{pad}s = (o * {size}) & {mask}")
    ok = f"((o + 1) * {size}) & {mask} <= n and s + {size} <= n" + ("" if load else " and b.mutable")
    lines.append(f"{pad}if not ({ok}): check(b, o, 1, {size}, {not load}, {mask})")
    if not load:
        lines.append(f"{pad}b.data[s:s + {size}] = regs[{val}:{val + size}]")
        w.derefs.clear()  # the store may have written a buffer's header
        if w.memo:
            lines.append(f"{pad}if b.address is not None:")
            lines.append(f"{pad}    s += b.address")
            for m in w.memo:
                lines.append(f"{pad}    if buf{m} is not None and lo{m} < s + {size} and s < hi{m}: "
                             f"buf{m} = None")
    elif elem is None:
        lines.append(f"{pad}regs[{val}:{val + size}] = b.data[s:s + {size}]")
    else:
        lines.append(f"{pad}write_i32(regs, {val}, {bind(elem.unpack_from, 'e')}(b.data, s)[0])")
    return True


@region_writer(*LOAD_OPS, *STORE_OPS)
def _region_element(w: Any, i: int, end: int, lines: list, pad: str) -> None:
    """A load or store in a loop region: the buffer from the region's memo (remembered with its
    data, address, typed views and element counts), IREE's bounds check as one comparison where
    the element lies wholly inside the data (check_elements' whole check and a byte offset
    otherwise), the element as an item of a typed view, held in a local or temporary. An f32
    load of a signaling NaN leaves the region through its handler (a float would quiet it); a
    store that may have written a remembered buffer's header ends the region after it."""
    handler, payload, inst = w.code[i]
    b = w.b
    bo, off, size, elem, val, mask = element_parts(w.ctx, inst)
    load = inst.op.symbol in LOAD_OPS
    if bo not in w.valid:
        w.remember(i, bo, inst, "source_buffer" if load else "target_buffer", lines, pad)
    index = w.read(off // 4, 2, "b64", lines, pad)
    fact = w.ranges.read(i, off // 4, 2)
    if nonnegative(fact, 2) and fact[1] <= mask:  # the bits are the value, and fit in a size_t
        if not index.isidentifier():
            lines.append(f"{pad}o = {index}")
            index = "o"
    elif not (mask == M64 and index.isidentifier()):  # a local holds unsigned 64-bit values
        lines.append(f"{pad}o = {index} & {mask}")
        index = "o"
    # IREE's bounds check: an element wholly inside the data (no wrap) is one comparison, and the
    # element is item `index` of a typed view of the data; the rest (out of range, or wrapping
    # round the data model's size_t) takes the whole check and a byte offset.
    fast = f"{index} < q{bo}_{size}{'r' if load else 'w'}"
    slow = f"offset(buf{bo}, {index}, {size}, {not load}, {mask})"
    d = f"d{bo}"
    first = val // 4
    if load:
        if elem is not None:  # a sign-extended element is held as its signed value
            fmt = elem.format[-1]
            name, kind = w.raw_target(first, 1, "sint" if fmt.islower() else "int", lines, pad)
            if fmt.islower() and (first, 1) in w.local:
                w.signed.add((first, 1))
            w.views.add((bo, fmt))
            lines.append(f"{pad}if {fast}: {name} = v{bo}_{fmt}[{index}]")
            lines.append(f"{pad}else:")
            lines.append(f"{pad}    k = {i}")
            lines.append(f"{pad}    {name} = {b.bind(elem.unpack_from, 'e')}({d}, {slow})[0]")
            return
        n = size // 4
        hint = w.next_kind(i, end, first, n)
        if hint == "int" and reads_signed(w, i, end, first, n):
            hint = "sint"  # loaded through the signed view: what the op reads, and small
        name, kind = w.raw_target(first, n, hint, lines, pad)
        if hint == "sint" and (first, n) in w.local:
            w.signed.add((first, n))
            kind = "sint"
        fmt = _VIEWS[(kind, size)]
        w.views.add((bo, fmt))
        lines.append(f"{pad}if {fast}: {name} = v{bo}_{fmt}[{index}]")
        lines.append(f"{pad}else:")
        lines.append(f"{pad}    k = {i}")
        reader = {"int": f"UI{n}", "sint": f"SI{n}"}.get(kind, f"U{kind}")
        lines.append(f"{pad}    {name} = {reader}({d}, {slow})[0]")
        if kind == "f32":  # a signaling NaN's bits would not survive the float: the handler
            w.views.add((bo, "I"))
            bits = f"(v{bo}_I[{index}] if {fast} else UI1({d}, {slow})[0])"
            lines.append(f"{pad}if {name} != {name} and not {bits} & {F32_QUIET_BIT}:")
            loaded = w.temps.pop((first, n), None)
            w.flush_temps(lines, pad + "    ", forget=False)
            w.flush_locals(lines, pad + "    ")
            lines.append(f"{pad}    frame.ip = {i + 1}")
            lines.append(f"{pad}    return {b.bind(handler, 'h')}(ctx, frame, {b.bind(payload, 'p')})")
            if loaded is not None:
                w.temps[(first, n)] = loaded
        return
    # a store: the value's low `size` bytes
    value, fmt = None, ""
    if size < 4:
        value = w.read(first, 1, "b32", lines, pad) + (" & 255" if size == 1 else " & 65535")
        fmt = "B" if size == 1 else "H"
    else:
        n = size // 4
        if (first, n) in w.local:
            value, kind = w.held(first, n)
        elif (first, n) in w.temps and w.temps[(first, n)][2]:  # a dirty temporary holds exact bits
            value, kind = w.temps[(first, n)][:2]
        if value is None:
            w.drop_overlapping(first, n, lines, pad, write=False)
        else:
            fmt = _VIEWS[(kind, size)]
    if value is None:  # the register's bytes, copied
        lines.append(f"{pad}if {fast}: s = {index} * {size}")
        lines.append(f"{pad}else:")
        lines.append(f"{pad}    k = {i}")
        lines.append(f"{pad}    s = {slow}")
        lines.append(f"{pad}{d}[s:s + {size}] = regs[{val}:{val + size}]")
    else:
        w.views.add((bo, fmt))
        lines.append(f"{pad}if {fast}: v{bo}_{fmt}[{index}] = {value}")
        lines.append(f"{pad}else:")
        lines.append(f"{pad}    k = {i}")
        lines.append(f"{pad}    {b.bind(_VIEW_STRUCTS[fmt].pack_into, 'w')}({d}, {slow}, {value})")
    b.derefs.clear()
    # The store may have written a remembered buffer's header (hit<b>: some remembered header lies
    # in this buffer's data, see header_hits): then the region ends after it, and the interpreter
    # loop goes on with the next instruction (the next region entry remembers nothing).
    lines.append(f"{pad}if hit{bo}:")
    lines.append(f"{pad}    s = {slow} + a{bo}")
    tests = " or ".join(f"(buf{m} is not None and lo{m} < s + {size} and s < hi{m})" for m in b.memo)
    lines.append(f"{pad}    if {tests}:")
    w.flush_temps(lines, pad + "        ", forget=False)
    w.flush_locals(lines, pad + "        ")
    lines.append(f"{pad}        frame.ip = {i + 1}")
    lines.append(f"{pad}        return None")



__all__ = ["LOAD_OPS", "STORE_OPS", "buffer_operand", "check_elements", "element_access", "element_offset",
           "element_parts"]
