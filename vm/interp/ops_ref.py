"""Handlers of the ref ops: null and rodata constants, assign/cast, select/switch, comparisons,
discard/trace/print, and ref globals. Counting follows dispatch.c: MOVE-marked operands hand their
reference over (or are released where the op consumes them), everything else is retained."""
from __future__ import annotations

from ..status import StatusCode
from .errors import VmStatusError
from .handlers import op
from .numerics import _I32, _U32, _s32
from .registers import retain_or_move, store_ref, write_i32


@op("GlobalLoadRef", "GlobalStoreRef", "GlobalLoadIndirectRef", "GlobalStoreIndirectRef")
def _make_global_ref(ctx, fn, inst):
    load = "Load" in inst.op.symbol
    g = inst.operands["global"]
    reg = inst.operands["result" if load else "value"]

    def run(ctx, frame, _):
        index = g if isinstance(g, int) else _U32.unpack_from(frame.regs, 4 * g.ordinal)[0]
        table = ctx.global_refs
        if index >= len(table):
            raise VmStatusError(StatusCode.OUT_OF_RANGE,
                                f"global ref ordinal out of range: {_s32(index)} "
                                f"(table={len(table)})")
        if load:
            value = table[index]
            if value is not None:
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
    return run, None


@op("AssignRef", "CastAnyRef")
def _make_assign_ref(ctx, fn, inst):
    src = inst.operands["source" if inst.op.symbol == "AssignRef" else "operand"]
    dst = inst.operands["result"].ordinal

    def run(ctx, frame, _):
        retain_or_move(ctx, frame.refs, src, frame.refs, dst)
    return run, None


@op("SelectRef")
def _make_select_ref(ctx, fn, inst):
    o = inst.operands
    cond, t, f, dst = 4 * o["condition"].ordinal, o["true_value"], o["false_value"], o["result"]

    def run(ctx, frame, _):
        chosen, other = (t, f) if _I32.unpack_from(frame.regs, cond)[0] else (f, t)
        retain_or_move(ctx, frame.refs, chosen, frame.refs, dst.ordinal)
        if other.move and other.ordinal != dst.ordinal:
            store_ref(ctx, frame.refs, other.ordinal, None)
    return run, None


@op("SwitchRef")
def _make_switch_ref(ctx, fn, inst):
    o = inst.operands
    index, default = 4 * o["index"].ordinal, o["default_value"]
    values, dst = o["values"], o["result"]

    def run(ctx, frame, _):
        i = _I32.unpack_from(frame.regs, index)[0]
        retain_or_move(ctx, frame.refs, values[i] if 0 <= i < len(values) else default,
                       frame.refs, dst.ordinal)
    return run, None


@op("CmpEQRef", "CmpNERef", "CmpNZRef")
def _make_cmp_ref(ctx, fn, inst):
    o = inst.operands
    dst = 4 * o["result"].ordinal
    symbol = inst.op.symbol
    operands = (o["operand"],) if symbol == "CmpNZRef" else (o["lhs"], o["rhs"])
    moved = tuple(r.ordinal for r in operands if r.move)

    def run(ctx, frame, _):
        refs = frame.refs
        if symbol == "CmpNZRef":
            value = refs[operands[0].ordinal] is not None
        else:  # same object (a Ref compares by its ptr/type words)
            same = refs[operands[0].ordinal] == refs[operands[1].ordinal]
            value = same if symbol == "CmpEQRef" else not same
        write_i32(frame.regs, dst, int(value))
        for i in moved:
            store_ref(ctx, refs, i, None)
    return run, None
