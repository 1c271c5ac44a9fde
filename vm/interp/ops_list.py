"""Handlers of the vm.list ops (list.c semantics: value conversion between element types, variant
lists, OUT_OF_RANGE on bad indices). In a counted backend a list's ref items hold references:
set/resize/overwrite release what they drop, get retains what it hands out."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..decoder import Register
from ..status import StatusCode
from .errors import VmStatusError
from .handlers import op
from .lists import VALUE_TYPES, VmList, convert_list_value, list_element_type
from .numerics import _I32, _U32, _U64, M32
from .registers import Frame, store_ref, take_ref, write_i32, write_i64

if TYPE_CHECKING:
    from .context import Context


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


def _zero_item(lst: VmList) -> Any:
    if lst.holds_values:
        return (lst.element_type, 0)
    return None


def _replace_item(ctx: "Context", lst: VmList, index: int, item: Any) -> None:
    old = lst.items[index]
    lst.items[index] = item
    if old is not None and type(old) is not tuple:
        ctx.release(old)


@op("ListAlloc")
def _make_list_alloc(ctx, fn, inst):
    o = inst.operands
    element = list_element_type(ctx.module.types[o["type"]])

    def run(ctx, frame, _):
        capacity = _U32.unpack_from(frame.regs, 4 * o["initial_capacity"].ordinal)[0]
        store_ref(ctx, frame.refs, o["result"].ordinal, VmList(element, capacity))
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
        n = _U32.unpack_from(frame.regs, 4 * o["minimum_capacity" if symbol == "ListReserve"
                                               else "new_size"].ordinal)[0]
        if symbol == "ListReserve":
            lst.capacity = max(lst.capacity, n)
        elif n < len(lst.items):
            dropped = lst.items[n:]
            del lst.items[n:]
            for item in dropped:
                if item is not None and type(item) is not tuple:
                    ctx.release(item)
        else:
            lst.items.extend(_zero_item(lst) for _ in range(n - len(lst.items)))
            lst.capacity = max(lst.capacity, n)
    return run, None


_LIST_BANK_TYPES = {"I32": "i32", "I64": "i64", "F32": "f32", "F64": "f64"}


@op("ListGetI32", "ListGetI64", "ListGetF32", "ListGetF64")
def _make_list_get(ctx, fn, inst):
    o = inst.operands
    vtype = _LIST_BANK_TYPES[inst.op.symbol[-3:]]
    width = VALUE_TYPES[vtype]

    def run(ctx, frame, _):
        lst = _list(frame, o["list"])
        i = _list_index(lst, _I32.unpack_from(frame.regs, 4 * o["index"].ordinal)[0])
        item = lst.items[i]
        if type(item) is not tuple:
            raise VmStatusError(StatusCode.FAILED_PRECONDITION,
                                f"variant at index {i} is not a value type")
        bits = convert_list_value(item[0], item[1], vtype)
        (write_i32 if width == 4 else write_i64)(frame.regs, 4 * o["result"].ordinal, bits)
    return run, None


@op("ListSetI32", "ListSetI64", "ListSetF32", "ListSetF64")
def _make_list_set(ctx, fn, inst):
    o = inst.operands
    vtype = _LIST_BANK_TYPES[inst.op.symbol[-3:]]
    reader = _U32 if VALUE_TYPES[vtype] == 4 else _U64

    def run(ctx, frame, _):
        lst = _list(frame, o["list"])
        i = _list_index(lst, _I32.unpack_from(frame.regs, 4 * o["index"].ordinal)[0])
        if not (lst.holds_values or lst.is_variant):
            raise VmStatusError(StatusCode.FAILED_PRECONDITION, "list cannot store values")
        bits = reader.unpack_from(frame.regs, 4 * o["value"].ordinal)[0]
        target = lst.element_type if lst.holds_values else vtype
        bits = convert_list_value(vtype, bits, target)
        width = 8 * VALUE_TYPES[target]
        _replace_item(ctx, lst, i, (target, bits & ((1 << width) - 1)))
    return run, None


@op("ListGetRef", "ListSetRef")
def _make_list_ref(ctx, fn, inst):
    o = inst.operands
    get = inst.op.symbol == "ListGetRef"

    def run(ctx, frame, _):
        lst = _list(frame, o["list"])
        i = _list_index(lst, _I32.unpack_from(frame.regs, 4 * o["index"].ordinal)[0])
        if lst.holds_values:
            raise VmStatusError(StatusCode.FAILED_PRECONDITION, "list does not store refs")
        if get:
            item = lst.items[i]
            value = None if type(item) is tuple else item
            if value is not None:
                ctx.retain(value)
            store_ref(ctx, frame.refs, o["result"].ordinal, value)
        else:
            _replace_item(ctx, lst, i, take_ref(ctx, frame.refs, o["value"]))
    return run, None
