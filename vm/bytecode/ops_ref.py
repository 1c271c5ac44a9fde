"""Handlers of the ref ops: null and rodata constants, assign/cast, select/switch, comparisons,
discard/trace/print, and ref globals. Counting follows dispatch.c: MOVE-marked operands hand their
reference over (or are released where the op consumes them), everything else is retained; the
comparisons decode their operands without the MOVE bit (it is ignored, nothing is released).

Type checks follow ref.c's iree_vm_ref_retain_or_move_checked: the op's type operand resolves as
module.c resolves type-table names (`!vm.list<...>` is the one `vm.list` type, `!vm.opaque` - what
`!vm.ref<?>` encodes to - and value types are no ref type at all), and a non-null ref of another type
fails with INVALID_ARGUMENT. vm.cast.any.ref and the ref global ops check the concrete type;
select/switch can only meet a wrong type through `!vm.opaque`, where every non-null ref fails, so
only that case costs a check at run time.
"""
from __future__ import annotations

from typing import Any

from ..ref import Ref, type_name
from ...base.status import StatusCode
from .buffer_factory import ByteBuffer
from ..errors import VmStatusError
from .state import ExecutionState
from .handlers import interval_rule, op
from ..list import VALUE_TYPES, VmList
from ..ops import I32, U32, s32
from .registers import retain_or_move, store_ref, write_i32

OPAQUE = "!vm.opaque"


def ref_type_key(type_name_: str) -> str | None:
    """The ref type a type-table name stands for (`vm.buffer`, `vm.list`, `hal.buffer`...), or None
    where IREE's type def has no ref type (value types, `!vm.opaque`)."""
    if type_name_ in VALUE_TYPES or type_name_ == OPAQUE or type_name_ == "?":
        return None
    name = type_name_[1:] if type_name_.startswith("!") else type_name_
    return "vm.list" if name.startswith("vm.list") else name


def value_type_key(ctx: "ExecutionState", value: Any) -> str:
    """The ref type name of a non-null ref value; "" when this backend cannot tell (a host object
    an ImportResolver handed out), which every type check accepts."""
    t = type(value)
    if t is VmList:
        return "vm.list"
    if t is ByteBuffer:
        return "vm.buffer"
    if t is Ref:
        buffers = ctx.buffers
        if value.type == getattr(buffers, "type", None):
            return "vm.buffer"
        heap = getattr(buffers, "heap", None)
        if heap is not None:
            try:
                return type_name(heap, value.type)
            except Exception:  # noqa: BLE001 - a type word we cannot read: do not judge it
                return ""
    return ""


def ref_type_mismatch(ctx: "ExecutionState", value: Any, key: str | None) -> bool:
    """Whether a ref value fails a check against type `key` (null always passes)."""
    if value is None:
        return False
    if key is None:
        return True
    actual = value_type_key(ctx, value)
    return actual != key and actual != ""


def _type_mismatch() -> VmStatusError:
    return VmStatusError(StatusCode.INVALID_ARGUMENT, "source ref type mismatch")


def _opaque(ctx: "ExecutionState", type_id: int) -> bool:
    return ctx.module.types[type_id] == OPAQUE


@op("GlobalLoadRef", "GlobalStoreRef", "GlobalLoadIndirectRef", "GlobalStoreIndirectRef")
def _make_global_ref(ctx, fn, inst):
    load = "Load" in inst.op.symbol
    g = inst.operands["global"]
    reg = inst.operands["result" if load else "value"]
    # A load whose result register carries MOVE moves the value out of the global (dispatch.c
    # passes the result's MOVE bit to retain_or_move).
    take = load and reg.move
    # the op's type, checked as IREE checks it (a mutated type id can name any type, or one past
    # the table, which IREE runs as type 0: verifier.clamp_type_ids)
    key = ref_type_key(ctx.module.types[inst.operands["type"]])

    def run(ctx, frame, _):
        index = g if isinstance(g, int) else U32.unpack_from(frame.regs, 4 * g.ordinal)[0]
        table = ctx.global_refs
        if index >= len(table):
            raise VmStatusError(StatusCode.OUT_OF_RANGE,
                                f"global ref ordinal out of range: {s32(index)} "
                                f"(table={len(table)})")
        if ref_type_mismatch(ctx, table[index] if load else frame.refs[reg.ordinal], key):
            raise _type_mismatch()
        if load:
            value = table[index]
            if take:
                table[index] = None
            elif value is not None:
                ctx.retain(value)
            store_ref(ctx, frame.refs, reg.ordinal, value)
        else:
            retain_or_move(ctx, frame.refs, reg, table, index)
    return run, None


@op("ConstRefZero")
def _make_const_ref_zero(ctx, fn, inst):
    r = inst.operands["result"].ordinal

    def run(ctx, frame, _):
        store_ref(ctx, frame.refs, r, None)
    return run, None


@op("ConstRefRodata")
def _make_const_ref_rodata(ctx, fn, inst):
    r, ordinal = inst.operands["result"].ordinal, inst.operands["rodata"]

    def run(ctx, frame, _):
        store_ref(ctx, frame.refs, r, ctx.buffers.rodata_ref(ctx.rodata[ordinal]))
    return run, None


@op("DiscardRefs", "Trace", "Print")
def _make_discard(ctx, fn, inst):
    regs = inst.operands["refs" if inst.op.symbol == "DiscardRefs" else "operands"]
    # discard.refs releases every listed ref; trace/print release only the MOVE-marked ones.
    drop = tuple(r.ordinal for r in regs
                 if r.is_ref and (r.move or inst.op.symbol == "DiscardRefs"))

    def run(ctx, frame, _):
        refs = frame.refs
        for i in drop:
            store_ref(ctx, refs, i, None)
    if getattr(ctx, "reference", True):
        return run, None

    def fast(ctx, frame, _):
        # The fast path (a vmvx kernel drops its arguments and bindings once per workgroup):
        # store_ref of None inline, the same releases in the same order.
        refs = frame.refs
        for i in drop:
            v = refs[i]
            if v is not None:
                refs[i] = None
                ctx.release(v)
    return fast, None


@op("AssignRef")
def _make_assign_ref(ctx, fn, inst):
    src = inst.operands["source"]
    dst = inst.operands["result"].ordinal

    def run(ctx, frame, _):
        retain_or_move(ctx, frame.refs, src, frame.refs, dst)
    return run, None


@op("CastAnyRef")
def _make_cast_any_ref(ctx, fn, inst):
    src = inst.operands["operand"]
    dst = inst.operands["result"].ordinal
    key = ref_type_key(ctx.module.types[inst.operands["type"]])

    def run(ctx, frame, _):
        if ref_type_mismatch(ctx, frame.refs[src.ordinal], key):
            raise _type_mismatch()  # nothing moved or released
        retain_or_move(ctx, frame.refs, src, frame.refs, dst)
    return run, None


@op("SelectRef")
def _make_select_ref(ctx, fn, inst):
    o = inst.operands
    cond, t, f, dst = 4 * o["condition"].ordinal, o["true_value"], o["false_value"], o["result"]
    opaque = _opaque(ctx, o["type"])

    def run(ctx, frame, _):
        chosen, other = (t, f) if I32.unpack_from(frame.regs, cond)[0] else (f, t)
        if opaque and frame.refs[chosen.ordinal] is not None:
            raise _type_mismatch()
        retain_or_move(ctx, frame.refs, chosen, frame.refs, dst.ordinal)
        if other.move and other.ordinal != dst.ordinal:
            store_ref(ctx, frame.refs, other.ordinal, None)
    return run, None


@op("SwitchRef")
def _make_switch_ref(ctx, fn, inst):
    o = inst.operands
    index, default = 4 * o["index"].ordinal, o["default_value"]
    values, dst = o["values"], o["result"]
    opaque = _opaque(ctx, o["type"])

    def run(ctx, frame, _):
        i = I32.unpack_from(frame.regs, index)[0]
        chosen = values[i] if 0 <= i < len(values) else default
        if opaque and frame.refs[chosen.ordinal] is not None:
            raise _type_mismatch()
        retain_or_move(ctx, frame.refs, chosen, frame.refs, dst.ordinal)
    return run, None


@op("CmpEQRef", "CmpNERef", "CmpNZRef")
def _make_cmp_ref(ctx, fn, inst):
    o = inst.operands
    dst = 4 * o["result"].ordinal
    symbol = inst.op.symbol
    # The operands are borrowed: dispatch.c decodes them without the MOVE bit.
    operands: tuple = (o["operand"],) if symbol == "CmpNZRef" else (o["lhs"], o["rhs"])

    def run(ctx, frame, _):
        refs = frame.refs
        if symbol == "CmpNZRef":
            value = refs[operands[0].ordinal] is not None
        else:  # same object (a Ref compares by its ptr/type words)
            same = refs[operands[0].ordinal] == refs[operands[1].ordinal]
            value = same if symbol == "CmpEQRef" else not same
        write_i32(frame.regs, dst, int(value))
    return run, None


@interval_rule("CmpEQRef", "CmpNERef", "CmpNZRef")
def _cmp_ref_interval(v: Any) -> tuple[int, int]:
    """The compare's 0 or 1 (value_ranges.py)."""
    return 0, 1
