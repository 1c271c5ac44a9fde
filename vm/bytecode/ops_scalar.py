"""Handlers of the scalar ops: arithmetic/compare/convert (`PURE_OPS`), sign-bit float ops, the
f32 ops that must see raw bits (min/max, pow), constants, selects, switches and value globals
(`vm.global.load/store.i32...`)."""
from __future__ import annotations

from typing import Callable

from . import isa
from .decoder import Instruction
from ...base.status import StatusCode
from ..errors import VmStatusError
from .handlers import Handler, op
from ..ops import F32, I32, RAW_BANKS, SIGN_BIT_OPS, U32, U64, PURE_OPS, is_snan32, s32
from .registers import READ, SIZES, WRITE, write_f32, write_i64
from .verifier import global_size


def pure_parts(inst: Instruction) -> tuple[Callable, list, tuple]:
    """What a pure op does, as data: (PURE_OPS function, [(reader, byte offset)] of its operands,
    (writer, byte offset) of its result). make_pure runs it; the block compiler inlines it."""
    banks = RAW_BANKS.get(inst.op.symbol)
    reads, write = [], None
    for f in inst.op.fields:
        reg = inst.operands[f.name]
        bank = f.kind if banks is None else banks[0 if f.access == isa.READ else 1]
        if f.access == isa.READ:
            reads.append((READ[bank].unpack_from, 4 * reg.ordinal))
        else:
            write = (WRITE[bank], 4 * reg.ordinal)
    assert write is not None  # a pure op writes its one result
    return PURE_OPS[inst.op.symbol], reads, write


def make_pure(inst: Instruction) -> tuple[Handler, None]:
    """A handler reading the operand registers (per their banks), applying PURE_OPS[symbol] and
    writing the result register (wrapped / rounded by its bank's writer)."""
    fn, reads, write = pure_parts(inst)
    writer, woff = write
    if len(reads) == 1:
        (r0, o0), = reads

        def unary(ctx, frame, _):
            regs = frame.regs
            writer(regs, woff, fn(r0(regs, o0)[0]))
        return unary, None
    if len(reads) == 2:
        (r0, o0), (r1, o1) = reads

        def binary(ctx, frame, _):
            regs = frame.regs
            writer(regs, woff, fn(r0(regs, o0)[0], r1(regs, o1)[0]))
        return binary, None

    def nary(ctx, frame, _):
        regs = frame.regs
        writer(regs, woff, fn(*(r(regs, o)[0] for r, o in reads)))
    return nary, None


def make_sign_bit(inst: Instruction) -> tuple[Handler, None]:
    """abs/neg of floats: the sign bit cleared or flipped on the raw bits (NaN payloads kept)."""
    bits, and_mask, xor_mask = SIGN_BIT_OPS[inst.op.symbol]
    s = U32 if bits == 32 else U64
    src = 4 * inst.operands["operand"].ordinal
    dst = 4 * inst.operands["result"].ordinal

    def run(ctx, frame, _):
        s.pack_into(frame.regs, dst, (s.unpack_from(frame.regs, src)[0] & and_mask) ^ xor_mask)
    return run, None


def _copy(regs: bytearray, dst: int, src: int, width: int) -> None:
    regs[dst:dst + width] = regs[src:src + width]


@op("MinF32", "MaxF32")
def _make_min_max_f32(ctx, fn, inst):
    """IREE's `rhs < lhs ? rhs : lhs` (max: `lhs < rhs`) hands back one operand untouched: copy
    that register, since a Python float would quiet a signaling NaN (PURE_OPS has the values)."""
    o = inst.operands
    lhs, rhs, dst = 4 * o["lhs"].ordinal, 4 * o["rhs"].ordinal, 4 * o["result"].ordinal
    f32 = F32.unpack_from
    if inst.op.symbol == "MinF32":
        def run(ctx, frame, _):
            regs = frame.regs
            src = rhs if f32(regs, rhs)[0] < f32(regs, lhs)[0] else lhs
            regs[dst:dst + 4] = regs[src:src + 4]
    else:
        def run(ctx, frame, _):
            regs = frame.regs
            src = rhs if f32(regs, lhs)[0] < f32(regs, rhs)[0] else lhs
            regs[dst:dst + 4] = regs[src:src + 4]
    return run, None


@op("PowF32")
def _make_pow_f32(ctx, fn, inst):
    """powf, except that glibc answers pow(sNaN, +-0) and pow(1, sNaN) with x + y (a quiet NaN)
    where the quiet NaN a Python float holds would give 1: check the raw bits on that rare path."""
    o = inst.operands
    lhs, rhs, dst = 4 * o["lhs"].ordinal, 4 * o["rhs"].ordinal, 4 * o["result"].ordinal
    f32, u32, powf = F32.unpack_from, U32.unpack_from, PURE_OPS["PowF32"]

    def run(ctx, frame, _):
        regs = frame.regs
        x, y = f32(regs, lhs)[0], f32(regs, rhs)[0]
        r = powf(x, y)
        if r == 1.0 and (is_snan32(u32(regs, lhs)[0]) or is_snan32(u32(regs, rhs)[0])):
            r = x + y
        write_f32(regs, dst, r)
    return run, None


@op("ConstI32Zero", "ConstI64Zero", "ConstF32Zero", "ConstF64Zero")
def _make_const_zero(ctx, fn, inst):
    off = 4 * inst.operands["result"].ordinal
    width = 8 if inst.op.symbol in ("ConstI64Zero", "ConstF64Zero") else 4
    zeros = bytes(width)

    def run(ctx, frame, _):
        frame.regs[off:off + width] = zeros
    return run, None


@op("ConstI32", "ConstI64", "ConstF32", "ConstF64")
def _make_const(ctx, fn, inst):
    bank = inst.op.fields[1].kind
    data = bytearray(SIZES[bank])
    value = inst.operands["value"]
    WRITE[bank](data, 0, value)
    if bank == "f32" and value != value:
        # A NaN immediate decodes to a Python float, which quiets a signaling NaN: take the
        # encoded bits (the 4 bytes before the result register), which IREE loads as they are.
        d = ctx.module.function_descriptors[fn.ordinal]
        end = d.bytecode_offset + inst.pc + inst.length - 2
        data[:] = ctx.module.bytecode[end - 4:end]
    value_bytes = bytes(data)
    off = 4 * inst.operands["result"].ordinal
    end = off + len(value_bytes)

    def run(ctx, frame, _):
        frame.regs[off:end] = value_bytes
    return run, None


@op("SelectI32", "SelectI64", "SelectF32", "SelectF64")
def _make_select(ctx, fn, inst):
    o = inst.operands
    width = SIZES[inst.op.fields[1].kind]
    cond = 4 * o["condition"].ordinal
    t, f, dst = 4 * o["true_value"].ordinal, 4 * o["false_value"].ordinal, 4 * o["result"].ordinal

    def run(ctx, frame, _):
        regs = frame.regs
        _copy(regs, dst, t if I32.unpack_from(regs, cond)[0] else f, width)
    return run, None


@op("SwitchI32", "SwitchI64", "SwitchF32", "SwitchF64")
def _make_switch(ctx, fn, inst):
    o = inst.operands
    symbol = inst.op.symbol
    width = 8 if symbol in ("SwitchI64", "SwitchF64") else 4
    index, default, dst = (4 * o["index"].ordinal, 4 * o["default_value"].ordinal,
                           4 * o["result"].ordinal)
    values = tuple(4 * r.ordinal for r in o["values"])

    def run(ctx, frame, _):
        regs = frame.regs
        i = I32.unpack_from(regs, index)[0]
        if 0 <= i < len(values):
            if symbol == "SwitchI64":
                # dispatch.c reads the selected value as one i32 register and sign-extends it.
                write_i64(regs, dst, I32.unpack_from(regs, values[i])[0])
            else:
                _copy(regs, dst, values[i], width)
        else:
            _copy(regs, dst, default, width)
    return run, None


@op("GlobalLoadI32", "GlobalLoadI64", "GlobalLoadF32", "GlobalLoadF64",
    "GlobalStoreI32", "GlobalStoreI64", "GlobalStoreF32", "GlobalStoreF64")
def _make_global(ctx, fn, inst):
    width = global_size(inst.op)
    at = inst.operands["byte_offset"]
    load = "Load" in inst.op.symbol
    reg = 4 * inst.operands["result" if load else "value"].ordinal

    def run(ctx, frame, _):
        if load:
            frame.regs[reg:reg + width] = ctx.rwdata[at:at + width]
        else:
            ctx.rwdata[at:at + width] = frame.regs[reg:reg + width]
    return run, None


@op("GlobalLoadIndirectI32", "GlobalLoadIndirectI64", "GlobalLoadIndirectF32",
    "GlobalLoadIndirectF64", "GlobalStoreIndirectI32", "GlobalStoreIndirectI64",
    "GlobalStoreIndirectF32", "GlobalStoreIndirectF64")
def _make_global_indirect(ctx, fn, inst):
    width = global_size(inst.op)
    load = "Load" in inst.op.symbol
    at_reg = 4 * inst.operands["byte_offset"].ordinal
    reg = 4 * inst.operands["result" if load else "value"].ordinal

    def run(ctx, frame, _):
        at = U32.unpack_from(frame.regs, at_reg)[0]
        if at + width > len(ctx.rwdata):
            raise VmStatusError(StatusCode.OUT_OF_RANGE,
                                f"global byte_offset out of range: {s32(at)} "
                                f"(rwdata={len(ctx.rwdata)})")
        if load:
            frame.regs[reg:reg + width] = ctx.rwdata[at:at + width]
        else:
            ctx.rwdata[at:at + width] = frame.regs[reg:reg + width]
    return run, None


__all__ = ["make_pure", "make_sign_bit", "pure_parts"]
