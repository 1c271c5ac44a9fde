"""Handlers of the vm.list ops (list.c semantics: value conversion between element types, variant
lists, OUT_OF_RANGE on bad indices). In a counted backend a list's ref items hold references:
set/resize/overwrite release what they drop, get retains what it hands out.

As dispatch.c: the list operand is borrowed (a MOVE bit on it is ignored); list.get.ref whose result
register carries MOVE moves the item out of the list; a ref of another type than the op's result
type comes out as null (`!vm.opaque`, no ref type, turns every ref into null); a ref list checks
what is stored into it. Sizes are bounded by the buffer factory's `max_allocation` (IREE's storage
bytes, at least 8 per element here), RESOURCE_EXHAUSTED beyond - IREE asks its allocator instead.
"""
from __future__ import annotations

from typing import Any

from .decoder import Register
from ...base.status import StatusCode
from ..errors import VmStatusError
from .state import ExecutionState
from .handlers import op
from ..list import VALUE_TYPES, VmList, convert_list_value
from ..ref import Ref
from ..ops import I32, U32, U64, M32
from .ops_ref import ref_type_key, ref_type_mismatch, value_type_key
from .registers import Frame, store_ref, take_ref, write_i32, write_i64
from ...layouts.ref import RefLayout

def _list(frame: Frame, reg: Register) -> VmList:
    value = frame.refs[reg.ordinal]
    if not isinstance(value, VmList):
        raise VmStatusError(StatusCode.INVALID_ARGUMENT, "list is null")
    return value


def _list_index(lst: VmList, index: int) -> int:
    index &= M32  # (uint32_t)index
    if index >= len(lst.items):
        raise VmStatusError(StatusCode.OUT_OF_RANGE,
                            f"index {index} out of bounds ({len(lst.items)})")
    return index


def _check_storage(ctx: "ExecutionState", lst: VmList, count: int, what: str) -> None:
    """RESOURCE_EXHAUSTED where `count` elements exceed the interpreter's allocation limit (its own
    bound, not IREE's: each ref slot counted as an iree_vm_ref_t, a variant slot as one more word)."""
    limit = ctx.buffers.max_allocation
    size = lst.element_size
    if not size:
        m = ctx.machine
        size = m.view(RefLayout).size + (m.pointer_size if lst.is_variant else 0)
    if count * max(size, 8) > limit:
        raise VmStatusError(StatusCode.RESOURCE_EXHAUSTED,
                            f"list {what} of {count} elements ({lst.element_type}) exceeds the "
                            f"interpreter's limit of {limit} bytes")


def _replace_item(ctx: "ExecutionState", lst: VmList, index: int, item: Any) -> None:
    old = lst.items[index]
    lst.items[index] = item
    if old is not None and type(old) is not tuple:
        ctx.release(old)


@op("ListAlloc")
def _make_list_alloc(ctx, fn, inst):
    o = inst.operands
    element = ctx.module.types[o["type"]]  # the element type itself (`i32`, `!vm.opaque`, ...)

    def run(ctx, frame, _):
        capacity = U32.unpack_from(frame.regs, 4 * o["initial_capacity"].ordinal)[0]
        lst = VmList(element, capacity)
        _check_storage(ctx, lst, capacity, "capacity")
        store_ref(ctx, frame.refs, o["result"].ordinal, lst)
    return run, None


@op("ListReserve", "ListResize", "ListSize")
def _make_list_size(ctx, fn, inst):
    o = inst.operands
    symbol = inst.op.symbol

    def run(ctx, frame, _):
        lst = _list(frame, o["list"])
        if symbol == "ListSize":
            write_i32(frame.regs, 4 * o["result"].ordinal, len(lst.items))
            return
        n = U32.unpack_from(frame.regs, 4 * o["minimum_capacity" if symbol == "ListReserve"
                                               else "new_size"].ordinal)[0]
        if symbol == "ListReserve":
            if n > lst.capacity:
                _check_storage(ctx, lst, n, "capacity")
                lst.capacity = n
        elif n < len(lst.items):
            dropped = lst.items[n:]
            del lst.items[n:]
            for item in dropped:
                if item is not None and type(item) is not tuple:
                    ctx.release(item)
        elif n > len(lst.items):
            if n > lst.capacity:
                _check_storage(ctx, lst, n, "size")
                lst.capacity = n
            lst.items.extend([lst.zero] * (n - len(lst.items)))  # zeroed storage
    return run, None


_LIST_BANK_TYPES = {"I32": "i32", "I64": "i64", "F32": "f32", "F64": "f64"}


@op("ListGetI32", "ListGetI64", "ListGetF32", "ListGetF64")
def _make_list_get(ctx, fn, inst):
    o = inst.operands
    vtype = _LIST_BANK_TYPES[inst.op.symbol[-3:]]
    width = VALUE_TYPES[vtype]

    def run(ctx, frame, _):
        lst = _list(frame, o["list"])
        i = _list_index(lst, I32.unpack_from(frame.regs, 4 * o["index"].ordinal)[0])
        item = lst.items[i]
        if type(item) is not tuple:
            if lst.is_variant:
                raise VmStatusError(StatusCode.FAILED_PRECONDITION,
                                    f"variant at index {i} is not a value type")
            raise VmStatusError(StatusCode.FAILED_PRECONDITION, "list does not store values")
        bits = convert_list_value(item[0], item[1], vtype)
        (write_i32 if width == 4 else write_i64)(frame.regs, 4 * o["result"].ordinal, bits)
    return run, None


@op("ListSetI32", "ListSetI64", "ListSetF32", "ListSetF64")
def _make_list_set(ctx, fn, inst):
    o = inst.operands
    vtype = _LIST_BANK_TYPES[inst.op.symbol[-3:]]
    reader = U32 if VALUE_TYPES[vtype] == 4 else U64

    def run(ctx, frame, _):
        lst = _list(frame, o["list"])
        i = _list_index(lst, I32.unpack_from(frame.regs, 4 * o["index"].ordinal)[0])
        if not (lst.holds_values or lst.is_variant):
            raise VmStatusError(StatusCode.FAILED_PRECONDITION, "list cannot store values")
        bits = reader.unpack_from(frame.regs, 4 * o["value"].ordinal)[0]
        target = lst.element_type if lst.holds_values else vtype
        bits = convert_list_value(vtype, bits, target)
        width = 8 * VALUE_TYPES[target]
        _replace_item(ctx, lst, i, (target, bits & ((1 << width) - 1)))
    return run, None


@op("ListGetRef")
def _make_list_get_ref(ctx, fn, inst):
    o = inst.operands
    lreg, ireg, result = o["list"], 4 * o["index"].ordinal, o["result"]
    key = ref_type_key(ctx.module.types[o["type"]])
    take = result.move  # dispatch.c: the result's MOVE bit moves the item out of the list

    def run(ctx, frame, _):
        lst = _list(frame, lreg)
        i = _list_index(lst, I32.unpack_from(frame.regs, ireg)[0])
        if lst.holds_values:
            raise VmStatusError(StatusCode.FAILED_PRECONDITION, "list does not store refs")
        value = lst.items[i]
        if type(value) is tuple:  # a variant slot holding a value (list.c: no message)
            raise VmStatusError(StatusCode.FAILED_PRECONDITION,
                                f"variant at index {i} is not a ref type")
        if take:
            lst.items[i] = None
        elif value is not None:
            ctx.retain(value)
        if ref_type_mismatch(ctx, value, key):  # wrong type: null in the register instead
            if value is not None:
                ctx.release(value)
            value = None
        store_ref(ctx, frame.refs, result.ordinal, value)
    buffer_type = getattr(ctx.buffers, "type", None)
    if getattr(ctx, "reference", True) or take or key != "vm.buffer" or buffer_type is None:
        return run, None
    lord, rord = lreg.ordinal, result.ordinal

    def fast(ctx, frame, _):
        # The fast path (a vmvx kernel's bindings, once per workgroup): a vm.buffer ref at a valid
        # index of a ref list, retained into the result register as `run` does with every check
        # passing; anything else is `run`'s, before anything changed.
        refs = frame.refs
        lst = refs[lord]
        if type(lst) is VmList and not lst.holds_values:
            i = U32.unpack_from(frame.regs, ireg)[0]  # (uint32_t)index, as _list_index reads it
            items = lst.items
            if i < len(items):
                value = items[i]
                if type(value) is Ref and value.type == buffer_type:
                    ctx.retain(value)
                    old = refs[rord]
                    refs[rord] = value
                    if old is not None:
                        ctx.release(old)
                    return None
        return run(ctx, frame, _)
    return fast, None


@op("ListSetRef")
def _make_list_set_ref(ctx, fn, inst):
    o = inst.operands
    lreg, ireg, vreg = o["list"], 4 * o["index"].ordinal, o["value"]

    def run(ctx, frame, _):
        lst = _list(frame, lreg)
        i = _list_index(lst, I32.unpack_from(frame.regs, ireg)[0])
        if lst.holds_values:
            raise VmStatusError(StatusCode.FAILED_PRECONDITION, "list cannot store refs")
        if not lst.is_variant:  # a ref list takes refs of its element type only (or null)
            value = frame.refs[vreg.ordinal]
            if value is not None and value_type_key(ctx, value) not in (
                    "", ref_type_key(lst.element_type)):
                raise VmStatusError(StatusCode.INVALID_ARGUMENT, "source ref type mismatch")
        _replace_item(ctx, lst, i, take_ref(ctx, frame.refs, vreg))
    return run, None
