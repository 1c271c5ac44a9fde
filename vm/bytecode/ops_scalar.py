"""Handlers of the scalar ops: arithmetic/compare/convert (`PURE_OPS`), sign-bit float ops, the
f32 ops that must see raw bits (min/max, pow), constants, selects, switches and value globals
(`vm.global.load/store.i32...`); and the fast-path writers of those the compiled code writes inline
(handlers.py's registry: each beside its handler).

A pure op's fast path comes from its declaration in vm/ops.py (PURE_EXPRESSIONS' text, or its
PURE_OPS function called); what a loop region makes of it besides (no mask where the op cannot wrap,
operators for a division by a positive divisor, loop-invariant ops computed where the loop is
entered) follows from the op's class below (`_MODULAR`, `_DIVISIONS`, ...). The interval rules of
the integer ops (value_ranges.py) close the file."""
from __future__ import annotations

from typing import Any, Callable

from . import isa
from .decoder import Instruction
from ...base.status import StatusCode
from ..errors import VmStatusError
from .handlers import Handler, block_writer, condition_rule, interval_rule, op, region_accesses, region_writer
from ..ops import (EXACT_F32_OPS, F32, I32, PURE_EXPRESSIONS, RAW_BANKS, SIGN_BIT_OPS, U32, U64,
                   PURE_OPS, is_snan32, s32)
from .region_plan import BANKS, FLOAT_STRUCTS, INT_STRUCTS, MASKS, SIGN_BITS, Opaque, is_read
from .registers import READ, SIZES, WRITE, write_f32, write_i64
from .value_ranges import Interval, Operands, nonnegative, top
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


# -- the fast path -------------------------------------------------------------------------------

# The f32 ops whose handlers hand back an operand's bits (min/max) or must see a signaling NaN's
# (powf), and the float sign-bit ops: written inline on values held as floats, else the handler.
FLOAT_BITS_OPS = frozenset({"MinF32", "MaxF32", "PowF32"}) | frozenset(SIGN_BIT_OPS)
# The pure ops whose handler is make_pure (PURE_OPS less the ops above, which have their own).
PURE_SYMBOLS = tuple(s for s in PURE_OPS if s not in FLOAT_BITS_OPS)
_CONSTS = ("ConstI32", "ConstI64", "ConstF32", "ConstF64")
_ZERO_REGISTERS = {"ConstI32Zero": 1, "ConstI64Zero": 2, "ConstF32Zero": 1, "ConstF64Zero": 2}
# vm.select.*: registers per value, and whether the values are integers (floats are selected as held
# floats, or by the handler, which copies the register and so keeps a signaling NaN)
_SELECTS = {"SelectI32": (1, True), "SelectI64": (2, True), "SelectF32": (1, False), "SelectF64": (2, False)}
# Ops whose handlers read and write registers only: a region calling one keeps its remembered buffers.
REGISTER_ONLY = frozenset(PURE_OPS) | FLOAT_BITS_OPS | frozenset(_SELECTS) | frozenset(_CONSTS) \
    | frozenset(_ZERO_REGISTERS) | frozenset({"SwitchI32", "SwitchI64", "SwitchF32", "SwitchF64"})
# Integer ops whose wrapped result is the same for signed and unsigned operand values.
_MODULAR = frozenset(f"{op}{t}" for op in ("Add", "Sub", "Mul", "And", "Or", "Xor", "Not", "Shl", "FMA")
                     for t in ("I32", "I64")) | {"TruncI64I32"}
_UNSIGNED = {"i32": "b32", "i64": "b64"}
_SIGNED_COMPARES = frozenset({"CmpLTI32S", "CmpLTI64S"})
_MIN_MAX = frozenset({"MinI32S", "MinI64S", "MaxI32S", "MaxI64S"})
# integer division ops -> (Python operator of a nonnegative quotient or remainder, signed)
_DIVISIONS = {f"{op}I{w}{s}": ("//" if op == "Div" else "%", s == "S")
              for op in ("Div", "Rem") for w in (32, 64) for s in ("S", "U")}
_INT_TO_F32 = frozenset({"CastSI32F32", "CastUI32F32", "CastSI64F32", "CastUI64F32"})
# integer ops of PURE_EXPRESSIONS (they cannot raise) a loop computes once where it is entered
# when their operands are its invariants
_HOISTED = frozenset(f"{op}I{w}" for op in ("Add", "Sub", "Mul", "And", "Or", "Xor") for w in (32, 64)) \
    | {"TruncI64I32", "ExtI32I64S", "ExtI32I64U"}
_ADDS = ("AddI32", "AddI64")  # two of them in a row: an address, (v + a) + b (_hoist)


def constant_value(inst: Instruction) -> Any:
    """A constant op's value as the reference reader would read its register back."""
    kind = inst.op.fields[1].kind
    n, vkind = BANKS[kind]
    data = bytearray(SIZES[kind])
    WRITE[kind](data, 0, inst.operands["value"])
    return (INT_STRUCTS[n] if vkind == "int" else FLOAT_STRUCTS[vkind]).unpack_from(data)[0]


def reads_signed(w: Any, i: int, end: int, first: int, n: int) -> bool:
    """Whether the next access of register (first, n) in region w's block is a pure op's or a
    select's read of it whole that takes its signed value as well as its bits (none of the
    unsigned ops, bitcasts, or an index)."""
    j = w.next_read(i, end, first, n)
    if j is None:
        return False
    symbol = w.code[j][2].op.symbol
    return (symbol in PURE_OPS or symbol in _SELECTS) and symbol not in RAW_BANKS and not symbol.endswith("U")


def _wants_value(w: Any, i: int, end: int, first: int, n: int) -> bool:
    """Whether the next access of register (first, n) in this block is a read of it whole by an
    op that takes its signed value (a signed division, compare, extension, cast...), not bits
    any form gives as cheaply."""
    j = w.next_read(i, end, first, n)
    if j is None:
        return False
    inst = w.code[j][2]
    symbol = inst.op.symbol
    return symbol in PURE_OPS and symbol not in _MODULAR and symbol not in RAW_BANKS and not symbol.endswith("U") \
        and any(fl.kind in SIGN_BITS and is_read(fl) and inst.operands[fl.name].ordinal == first
                for fl in inst.op.fields)


@region_accesses(*PURE_SYMBOLS)
def _pure_accesses(ctx: Any, inst: Instruction) -> list:
    banks = RAW_BANKS.get(inst.op.symbol)
    out = []
    for f in inst.op.fields:
        bank = f.kind if banks is None else banks[0 if is_read(f) else 1]
        if bank not in BANKS:
            raise Opaque
        n, kind = BANKS[bank]
        out.append(("r" if is_read(f) else "w", inst.operands[f.name].ordinal, n, kind))
    return out


@region_writer(*PURE_SYMBOLS)
def _region_pure(w: Any, i: int, end: int, lines: list, pad: str) -> None:
    """A pure op in a loop region: PURE_EXPRESSIONS' text on the operands as held (their
    intervals known: no mask where the op cannot wrap, no sign conversion of a nonnegative
    value), or its PURE_OPS function called (a C function through regions.c_call)."""
    inst = w.code[i][2]
    symbol = inst.op.symbol
    if _hoist(w, i, end, inst, lines, pad):
        return
    f, _reads, _write = pure_parts(inst)
    banks = RAW_BANKS.get(symbol)
    args, facts, result = [], [], None
    exact = True  # every operand's expression is its value (not the bits of a negative one)
    for fld in inst.op.fields:
        reg = inst.operands[fld.name]
        bank = fld.kind if banks is None else banks[0 if is_read(fld) else 1]
        n = BANKS[bank][0]
        if is_read(fld):
            fact = w.ranges.read(i, reg.ordinal, n) if BANKS[bank][1] == "int" else None
            nonneg = banks is None and nonnegative(fact, n)  # its bits are its value
            if symbol in _MODULAR and not nonneg:
                # the result is wrapped: bits or a signed value, whichever is held, are the same
                held = w.held(reg.ordinal, n)
                bank = bank if held is not None and held[1] == "sint" else _UNSIGNED.get(bank, bank)
            if bank in ("b32", "b64") and not nonneg:
                exact = False
            args.append(w.read(reg.ordinal, n, bank, lines, pad, nonneg))
            facts.append(fact)
        else:
            result = (reg.ordinal, n, bank)
    assert result is not None  # a pure op writes its one result
    if symbol in _SIGNED_COMPARES and all(a in w.biased for a in args):
        args = [w.biased[a][0] for a in args]  # (x ^ sign) orders unsigned bits as signed values
    if symbol in _MIN_MAX and all(a in w.biased for a in args):
        # both held as bits: compared as above, the chosen operand's bits are the result's
        (fa, a), (fb, b) = (w.biased[x] for x in args)
        test = f"{fb} < {fa}" if symbol.startswith("Min") else f"{fa} < {fb}"
        name, _ = w.raw_target(result[0], result[1], "int", lines, pad)
        lines.append(f"{pad}{name} = {b} if {test} else {a}")
        return
    # the result's interval when the expression is the result itself (it cannot wrap: ValueRanges)
    value = w.ranges.result.get(i) if exact and banks is None else None
    template = PURE_EXPRESSIONS.get(symbol)
    low = 0 if symbol.startswith("CastU") else -(1 << 24)  # an unsigned cast reads the bits
    if symbol in _INT_TO_F32 and all(x is not None and low <= x[0] and x[1] <= 1 << 24 for x in facts):
        name, _ = w.raw_target(result[0], result[1], "f32", lines, pad)
        lines.append(f"{pad}{name} = float({args[0]})")  # |x| <= 2^24: exact in an f32, no rounding
        return
    division = _division(symbol, args, facts, lines, pad) if symbol in _DIVISIONS else None
    if division is not None:
        expr = division
    elif symbol == "FMAF32":  # PURE_EXPRESSIONS' text with F32A's rounding instead of f32r's call
        lines.append(f"{pad}F32A[0] = {args[0]} * {args[1]}")
        expr = f"F32A[0] + {args[2]}"
    elif template is not None:
        expr = template.format(*args)
    else:
        lines.append(f"{pad}k = {i}")
        expr = f"{w.c_function(f)}({', '.join(args)})"
    if symbol in EXACT_F32_OPS:  # an f32 already: no rounding to write
        name, _ = w.raw_target(result[0], result[1], "f32", lines, pad)
        lines.append(f"{pad}{name} = {expr}")
        return
    w.write(*result[:2], result[2], expr, lines, pad, value,
            value is None and BANKS[result[2]][1] == "int" and _wants_value(w, i, end, *result[:2]))


def _hoist(w: Any, i: int, end: int, inst: Instruction, lines: list, pad: str) -> bool:
    """An integer op of the loop's invariants (its locals nothing in it writes) computed where the
    loop is entered; and the two adds of an address, (v + a) + b with a and b invariant, as one
    add of v and (a + b) computed there. Whether instruction i was written so."""
    loop = w.plan.loop_of.get(w.start)
    invariant = w.invariant.get(loop, set()) if loop is not None else set()
    symbol = inst.op.symbol
    if not invariant or symbol not in _HOISTED:
        return False
    o = inst.operands
    fields = inst.op.fields
    n = BANKS[fields[-1].kind][0]
    result = o[fields[-1].name].ordinal
    regs = [(o[f.name].ordinal, BANKS[f.kind][0], f.kind) for f in fields if is_read(f)]
    if all((r, m) in invariant for r, m, _ in regs):
        facts = [w.ranges.read(i, r, m) for r, m, _ in regs]
        args = [w.read(r, m, kind, lines, pad, nonnegative(x, m)) for (r, m, kind), x in zip(regs, facts)]
        exact = all(nonnegative(x, m) or kind in SIGN_BITS for (_, m, kind), x in zip(regs, facts))
        value = w.ranges.result.get(i) if exact else None
        expr = PURE_EXPRESSIONS[symbol].format(*args)
        name = w.hoisted_name(loop, expr if value is not None else f"({expr}) & {MASKS[n]}")
        # the value itself, or its bits (nonnegative: nothing to wrap)
        w.write(result, n, fields[-1].kind, name, lines, pad, value if value is not None else (0, MASKS[n]))
        return True
    if symbol not in _ADDS or i + 1 >= end - 1:
        return False
    nxt = w.code[i + 1][2]
    if nxt.op.symbol != symbol or nxt.operands["result"].ordinal != result:
        return False
    pair = [nxt.operands["lhs"].ordinal, nxt.operands["rhs"].ordinal]
    if result not in pair:
        return False
    pair.remove(result)
    b = pair[0]
    ops = [o["lhs"].ordinal, o["rhs"].ordinal]
    inv = [r for r in ops if (r, n) in invariant]
    if (b, n) not in invariant or len(inv) != 1:
        return False
    a = inv[0]
    ops.remove(a)
    v = ops[0]
    fa, fb, fv = w.ranges.read(i, a, n), w.ranges.read(i + 1, b, n), w.ranges.read(i, v, n)
    la, lb = w.lname(a, n), w.lname(b, n)
    if nonnegative(fa, n) and nonnegative(fb, n) and fa[1] + fb[1] <= MASKS[n] >> 1:
        h, exact = w.hoisted_name(loop, f"{la} + {lb}"), True  # the sum's bits are it
    else:
        h, exact = w.hoisted_name(loop, f"({la} + {lb}) & {MASKS[n]}"), False
    held = w.held(v, n)
    nonneg = nonnegative(fv, n)
    signed = not nonneg and held is not None and held[1] == "sint"
    bank = ("i32" if n == 1 else "i64") if signed else ("b32" if n == 1 else "b64")
    x = w.read(v, n, bank, lines, pad, nonneg)
    value = w.ranges.result.get(i + 1) if exact and (nonneg or signed) else None
    w.write(result, n, bank, f"{x} + {h}", lines, pad, value)
    w.skip = i + 1
    return True


def _division(symbol: str, args: list, facts: list, lines: list, pad: str) -> str | None:
    """An integer division or remainder by a divisor known positive (ValueRanges) as Python's
    operators: C's truncating quotient and remainder of a dividend known nonnegative, or of any
    signed one (its magnitude's, signed). None: the op's function, which traps on a zero
    divisor and on INT_MIN / -1 as IREE's runtime does (SIGFPE)."""
    operator, signed = _DIVISIONS[symbol]
    x, y = facts
    if y is None or y[0] < 1:
        return None
    if x is not None and x[0] >= 0:  # both read as their values
        return f"{args[0]} {operator} {args[1]}"
    if not signed:
        return None
    dv = args[0]
    if not dv.isidentifier():
        lines.append(f"{pad}dv = {dv}")
        dv = "dv"
    return f"({dv} {operator} {args[1]} if {dv} >= 0 else -(-{dv} {operator} {args[1]}))"


@block_writer(*PURE_SYMBOLS)
def _block_pure(w: Any, i: int, lines: list, pad: str) -> bool:
    """As make_pure's handler: the reads, PURE_EXPRESSIONS' text (or the PURE_OPS function), the write."""
    f, reads, (writer, woff) = pure_parts(w.code[i][2])
    bind = w.bind
    args = [f"{bind(r, 'r')}(regs, {o})[0]" for r, o in reads]
    template = PURE_EXPRESSIONS.get(w.code[i][2].op.symbol)  # the text f is made from, inline
    value = template.format(*args) if template else f"{bind(f, 'f')}({', '.join(args)})"
    lines.append(f"{pad}{bind(writer, 'w')}(regs, {woff}, {value})")
    return True


@region_accesses(*FLOAT_BITS_OPS)
def _float_bits_accesses(ctx: Any, inst: Instruction) -> list:
    kind = "f64" if inst.op.symbol.endswith("F64") else "f32"
    n = 2 if kind == "f64" else 1
    return [("r" if is_read(f) else "w", inst.operands[f.name].ordinal, n, kind) for f in inst.op.fields]


@region_writer(*FLOAT_BITS_OPS)
def _region_float_bits(w: Any, i: int, end: int, lines: list, pad: str) -> None:
    """min/max.f32, pow.f32 and the float sign-bit ops (FLOAT_BITS_OPS). A float local or
    temporary never holds an f32 signaling NaN (a load or entry of one leaves the region), so on
    held f32 values: min/max hand back the chosen operand's value (its bits, as the handler's
    register copy), abs/neg clear or flip the float's sign bit (as the handler does to the bits;
    on bits held as an integer, the handler's masks), and powf's signaling-NaN check can only
    hold for an operand read from the bytes (its bits are read there). An f32 min/max or sign op
    on an operand not held runs the handler. f64 values keep every bit in a Python float."""
    inst = w.code[i][2]
    symbol = inst.op.symbol
    o = inst.operands
    if symbol in SIGN_BIT_OPS:
        src, r = o["operand"].ordinal, o["result"].ordinal
        f64 = symbol.endswith("F64")
        held = w.held(src, 1)
        # (an int's bits or its signed value: the masks take the same low 32 bits of either)
        if not f64 and held is not None and held[1] in ("int", "sint") and (r, 1) not in w.local:
            _, and_mask, xor_mask = SIGN_BIT_OPS[symbol]  # bits held (a bitcast's): as the handler
            name, _ = w.raw_target(r, 1, "int", lines, pad)
            lines.append(f"{pad}{name} = ({held[0]} & {and_mask}) ^ {xor_mask}")
            return
        if not f64 and (held is None or held[1] != "f32"):
            w.call_handler(i, lines, pad)
            return
        x = w.read(src, 2, "f64", lines, pad) if f64 else held[0]
        expr = f"-{x}" if symbol.startswith("Neg") else f"abs({x})"
        if f64:
            w.write(r, 2, "f64", expr, lines, pad)
        else:
            name, _ = w.raw_target(r, 1, "f32", lines, pad)
            lines.append(f"{pad}{name} = {expr}")
        return
    lhs, rhs, r = o["lhs"].ordinal, o["rhs"].ordinal, o["result"].ordinal
    hl, hr = w.held(lhs, 1), w.held(rhs, 1)
    if symbol == "PowF32":
        tests = []
        for reg, h in ((lhs, hl), (rhs, hr)):
            if h is None or h[1] != "f32":
                tests.append(f"is_snan32(UI1(regs, {4 * reg})[0])")
        x, y = w.read(lhs, 1, "f32", lines, pad), w.read(rhs, 1, "f32", lines, pad)
        lines.append(f"{pad}k = {i}")
        lines.append(f"{pad}xp = {x}")
        lines.append(f"{pad}yp = {y}")
        lines.append(f"{pad}rp = {w.c_function(PURE_OPS['PowF32'])}(xp, yp)")
        if tests:
            lines.append(f"{pad}if rp == 1.0 and ({' or '.join(tests)}): rp = xp + yp")
        w.write(r, 1, "f32", "rp", lines, pad)
        return
    if hl is None or hr is None or hl[1] != "f32" or hr[1] != "f32":
        w.call_handler(i, lines, pad)
        return
    a, c = (hr[0], hl[0]) if symbol == "MinF32" else (hl[0], hr[0])  # min: rhs < lhs; max: lhs < rhs
    name, _ = w.raw_target(r, 1, "f32", lines, pad)
    lines.append(f"{pad}{name} = {hr[0]} if {a} < {c} else {hl[0]}")


@region_accesses(*_CONSTS)
def _const_accesses(ctx: Any, inst: Instruction) -> list:
    n, kind = BANKS[inst.op.fields[1].kind]
    if kind == "f32" and constant_value(inst) != constant_value(inst):
        raise Opaque  # a NaN constant's bits would not survive a float local
    return [("w", inst.operands["result"].ordinal, n, kind)]


@region_writer(*_CONSTS)
def _region_const(w: Any, i: int, end: int, lines: list, pad: str) -> None:
    inst = w.code[i][2]
    first = inst.operands["result"].ordinal
    value = constant_value(inst)
    # an int is its own literal; a float is bound (inf and nan have no literal, and its bits stay)
    text = repr(value) if type(value) is int else w.b.bind(value, "c")
    n = BANKS[inst.op.fields[1].kind][0]
    known = (value, value) if type(value) is int and value < 1 << (32 * n - 1) else None  # its own bits
    w.write(first, n, inst.op.fields[1].kind, text, lines, pad, known)


@block_writer(*_CONSTS)
def _block_const(w: Any, i: int, lines: list, pad: str) -> bool:
    """The bytes the handler stores, as a literal (not an f32: a NaN keeps its bits there)."""
    inst = w.code[i][2]
    kind = inst.op.fields[1].kind
    if kind == "f32":
        return False
    data = bytearray(SIZES[kind])
    WRITE[kind](data, 0, inst.operands["value"])
    off = 4 * inst.operands["result"].ordinal
    lines.append(f"{pad}regs[{off}:{off + len(data)}] = {bytes(data)!r}")
    return True


@region_accesses(*_ZERO_REGISTERS)
def _zero_accesses(ctx: Any, inst: Instruction) -> list:
    return [("w", inst.operands["result"].ordinal, _ZERO_REGISTERS[inst.op.symbol], "raw")]


@region_writer(*_ZERO_REGISTERS)
def _region_zero(w: Any, i: int, end: int, lines: list, pad: str) -> None:
    inst = w.code[i][2]
    first = inst.operands["result"].ordinal
    n = _ZERO_REGISTERS[inst.op.symbol]
    name, kind = w.raw_target(first, n, w.next_kind(i, end, first, n), lines, pad)
    lines.append(f"{pad}{name} = {0 if kind == 'int' else 0.0!r}")


@block_writer(*_ZERO_REGISTERS)
def _block_zero(w: Any, i: int, lines: list, pad: str) -> bool:
    inst = w.code[i][2]
    off = 4 * inst.operands["result"].ordinal
    width = 4 * _ZERO_REGISTERS[inst.op.symbol]
    lines.append(f"{pad}regs[{off}:{off + width}] = {bytes(width)!r}")
    return True


@region_accesses(*_SELECTS)
def _select_accesses(ctx: Any, inst: Instruction) -> list:
    n, ints = _SELECTS[inst.op.symbol]
    o = inst.operands
    # floats as floats: registers a float select reads or writes become float locals (selected
    # inline when held, else the handler)
    kind = "int" if ints else ("f32" if n == 1 else "f64")
    return [("r", o["condition"].ordinal, 1, "int"), ("r", o["true_value"].ordinal, n, kind),
            ("r", o["false_value"].ordinal, n, kind), ("w", o["result"].ordinal, n, kind)]


@region_writer(*_SELECTS)
def _region_select(w: Any, i: int, end: int, lines: list, pad: str) -> None:
    """vm.select.*: the chosen operand's value. Integers are read as their bits; floats are
    chosen as they are held, which is exact (a float local or temporary never holds bits its
    write-back would change: a loaded NaN runs the load's handler), when both operands and the
    result are held as one kind; otherwise the handler copies the register bytes (nothing but
    registers: remembered buffers stay valid)."""
    inst = w.code[i][2]
    o = inst.operands
    n, ints = _SELECTS[inst.op.symbol]
    t, f, r = o["true_value"].ordinal, o["false_value"].ordinal, o["result"].ordinal
    cond = w.condition(o["condition"].ordinal, lines, pad)
    if ints:
        # as values where one is held as its signed value (the interval of the result known),
        # else as bits (values too where both are known nonnegative)
        tf, ff = w.ranges.read(i, t, n), w.ranges.read(i, f, n)
        signed = any((w.held(x, n) or ("", ""))[1] == "sint" for x in (t, f)) and \
            w.ranges.result.get(i) is not None
        bank = ("i32" if n == 1 else "i64") if signed else ("b32" if n == 1 else "b64")
        tv = w.read(t, n, bank, lines, pad, nonnegative(tf, n))
        fv = w.read(f, n, bank, lines, pad, nonnegative(ff, n))
        exact = signed or nonnegative(tf, n) and nonnegative(ff, n)
        w.write(r, n, bank, f"{tv} if {cond} else {fv}", lines, pad,
                w.ranges.result.get(i) if exact else None)
        return
    ht, hf = w.held(t, n), w.held(f, n)
    want = w.local.get((r, n))
    if ht is not None and hf is not None and ht[1] == hf[1] and want in (None, ht[1]):
        name, kind = w.raw_target(r, n, ht[1], lines, pad)
        lines.append(f"{pad}{name} = {ht[0]} if {cond} else {hf[0]}")
        return
    w.call_handler(i, lines, pad)


# -- value ranges (value_ranges.py): the interval of an integer result from its operands' ----------

@interval_rule("ConstI32", "ConstI64", constant=True)
def _const_interval(v: Operands) -> Interval:
    n = v.width
    assert n is not None
    value = v.inst.operands["value"] & ((1 << (32 * n)) - 1)
    return (value - (1 << 32 * n) if value > top(n)[1] else value,) * 2


@interval_rule("ConstI32Zero", "ConstI64Zero", "ConstF32Zero", "ConstF64Zero", constant=True)
def _zero_interval(v: Operands) -> Interval:
    return 0, 0  # a float zero's bits too


@interval_rule("CmpEQF32O", "CmpEQF32U", "CmpEQF64O", "CmpEQF64U", "CmpNEF32O", "CmpNEF32U", "CmpNEF64O",
               "CmpNEF64U", "CmpLTF32O", "CmpLTF32U", "CmpLTF64O", "CmpLTF64U", "CmpLTEF32O", "CmpLTEF32U",
               "CmpLTEF64O", "CmpLTEF64U", "CmpNaNF32", "CmpNaNF64")
def _float_compare_interval(v: Operands) -> Interval:
    return 0, 1


def _compared(v: Operands) -> tuple[Interval, Interval]:
    """An integer compare's operands (a test of one against zero: its operand and (0, 0))."""
    o = v.inst.operands
    return (v.get("lhs") if "lhs" in o else v.get("operand")), (v.get("rhs") if "rhs" in o else (0, 0))


@interval_rule("CmpLTI32S", "CmpLTI64S")
def _lt_interval(v: Operands) -> Interval:
    x, y = _compared(v)
    return (1, 1) if x[1] < y[0] else (0, 0) if x[0] >= y[1] else (0, 1)


@interval_rule("CmpLTI32U", "CmpLTI64U")
def _lt_unsigned_interval(v: Operands) -> Interval:
    x, y = _compared(v)
    if x[0] < 0 or y[0] < 0:  # a negative operand's bits compare above every nonnegative one's
        return 0, 1
    return _lt_interval(v)


@interval_rule("CmpEQI32", "CmpEQI64")
def _eq_interval(v: Operands) -> Interval:
    x, y = _compared(v)
    return (1, 1) if x[0] == x[1] == y[0] == y[1] else (0, 0) if x[1] < y[0] or y[1] < x[0] else (0, 1)


@interval_rule("CmpNEI32", "CmpNEI64", "CmpNZI32", "CmpNZI64")
def _ne_interval(v: Operands) -> Interval:
    x, y = _compared(v)
    return (0, 0) if x[0] == x[1] == y[0] == y[1] else (1, 1) if x[1] < y[0] or y[1] < x[0] else (0, 1)


# -- value ranges: a compare's operands on the edges of the branch its result decides -------------

@condition_rule("CmpLTI32S", "CmpLTI64S")
def _lt_narrowed(x: Interval, y: Interval, truth: bool) -> tuple[Interval, Interval] | None:
    if truth:  # x < y
        return (x[0], min(x[1], y[1] - 1)), (max(y[0], x[0] + 1), y[1])
    return (max(x[0], y[0]), x[1]), (y[0], min(y[1], x[1]))  # x >= y


@condition_rule("CmpLTI32U", "CmpLTI64U")
def _lt_unsigned_narrowed(x: Interval, y: Interval, truth: bool) -> tuple[Interval, Interval] | None:
    if x[0] < 0 or y[0] < 0:  # the signed order is not the unsigned one
        return None
    return _lt_narrowed(x, y, truth)


def _equal(x: Interval, y: Interval) -> tuple[Interval, Interval]:
    lo, hi = max(x[0], y[0]), min(x[1], y[1])
    return (lo, hi), (lo, hi)


def _unequal(x: Interval, y: Interval) -> tuple[Interval, Interval]:
    """Only an end of an interval can go: the other's one value."""
    if y[0] == y[1]:
        x = (x[0] + (x[0] == y[0]), x[1] - (x[1] == y[0]))
    if x[0] == x[1]:
        y = (y[0] + (y[0] == x[0]), y[1] - (y[1] == x[0]))
    return x, y


@condition_rule("CmpEQI32", "CmpEQI64")
def _eq_narrowed(x: Interval, y: Interval, truth: bool) -> tuple[Interval, Interval] | None:
    return _equal(x, y) if truth else _unequal(x, y)


# cmp.nz.i32 of a compare's result is that compare's condition; cmp.nz.i64 reads the register
# pair the result is the low half of, which is not
@condition_rule("CmpNZI32", nonzero_test=True)
@condition_rule("CmpNEI32", "CmpNEI64", "CmpNZI64")
def _ne_narrowed(x: Interval, y: Interval, truth: bool) -> tuple[Interval, Interval] | None:
    return _unequal(x, y) if truth else _equal(x, y)


# -- value ranges: arithmetic ----------------------------------------------------------------------

@interval_rule("AddI32", "AddI64")
def _add_interval(v: Operands) -> Interval:
    x, y = v.get("lhs"), v.get("rhs")
    return x[0] + y[0], x[1] + y[1]


@interval_rule("SubI32", "SubI64")
def _sub_interval(v: Operands) -> Interval:
    x, y = v.get("lhs"), v.get("rhs")
    return x[0] - y[1], x[1] - y[0]


@interval_rule("MulI32", "MulI64")
def _mul_interval(v: Operands) -> Interval:
    x, y = v.get("lhs"), v.get("rhs")
    p = [u * w for u in x for w in y]
    return min(p), max(p)


@interval_rule("FMAI32", "FMAI64")
def _fma_interval(v: Operands) -> Interval:
    a, b, c = v.get("a"), v.get("b"), v.get("c")
    p = [u * w for u in a for w in b]
    return min(p) + c[0], max(p) + c[1]


@interval_rule("AndI32", "AndI64")
def _and_interval(v: Operands) -> Interval | None:
    x, y = v.get("lhs"), v.get("rhs")
    if x[0] >= 0 and y[0] >= 0:
        return 0, min(x[1], y[1])
    if x[0] >= 0 or y[0] >= 0:
        return 0, (x if x[0] >= 0 else y)[1]
    return None


@interval_rule("OrI32", "OrI64", "XorI32", "XorI64")
def _or_interval(v: Operands) -> Interval | None:
    x, y = v.get("lhs"), v.get("rhs")
    if x[0] >= 0 and y[0] >= 0:
        return 0, (1 << max(x[1], y[1]).bit_length()) - 1
    return None


@interval_rule("NotI32", "NotI64")
def _not_interval(v: Operands) -> Interval:
    x = v.get("operand")
    return -x[1] - 1, -x[0] - 1


def _shift(v: Operands) -> tuple[Interval, int | None, int]:
    """(the operand's interval, the shift amount where it is one known value, the operand's bits)."""
    n = v.width
    assert n is not None
    amount = v.known("amount")
    bits = 32 * n
    return v.get("operand"), (amount[0] & (bits - 1) if amount is not None and amount[0] == amount[1] else None), bits


@interval_rule("ShlI32", "ShlI64")
def _shl_interval(v: Operands) -> Interval | None:
    x, s, _ = _shift(v)
    return None if s is None else (x[0] << s, x[1] << s)


@interval_rule("ShrI32S", "ShrI64S")
def _shr_signed_interval(v: Operands) -> Interval | None:
    x, s, _ = _shift(v)
    if x[0] >= 0:
        return (0, x[1]) if s is None else (x[0] >> s, x[1] >> s)
    return None if s is None else (x[0] >> s, x[1] >> s)


@interval_rule("ShrI32U", "ShrI64U")
def _shr_unsigned_interval(v: Operands) -> Interval | None:
    x, s, bits = _shift(v)
    if x[0] >= 0:
        return (0, x[1]) if s is None else (x[0] >> s, x[1] >> s)
    return None if not s else (0, (1 << (bits - s)) - 1)


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _divisors(y: Interval) -> list[int]:
    """The divisors whose quotients bound a division's: the ends of y's negative and positive
    parts (zero traps, so it bounds nothing)."""
    out = []
    if y[0] <= -1:
        out += [y[0], min(y[1], -1)]
    if y[1] >= 1:
        out += [max(y[0], 1), y[1]]
    return out


def _division_operands(v: Operands, unsigned: bool) -> tuple[Interval, Interval, list[int]] | None:
    """(dividend, divisor, _divisors) of a division whose result has bounds here, else None."""
    x, y = v.get("lhs"), v.get("rhs")
    ds = _divisors(y)
    if not ds:
        return None  # it always traps
    if unsigned and (x[0] < 0 or y[0] < 0):
        return None
    return x, y, ds


@interval_rule("DivI32S", "DivI64S", "DivI32U", "DivI64U")
def _div_interval(v: Operands) -> Interval | None:
    parts = _division_operands(v, v.inst.op.symbol.endswith("U"))
    if parts is None:
        return None
    x, y, ds = parts
    n = v.width
    assert n is not None
    if x[0] == top(n)[0] and y[0] <= -1 <= y[1]:
        return None  # INT_MIN / -1 traps; its neighbours' quotients are not bounded here
    q = [_trunc_div(u, w) for u in x for w in ds]
    return min(q), max(q)


@interval_rule("RemI32S", "RemI64S", "RemI32U", "RemI64U")
def _rem_interval(v: Operands) -> Interval | None:
    parts = _division_operands(v, v.inst.op.symbol.endswith("U"))
    if parts is None:
        return None
    x, _, ds = parts
    m = max(abs(w) for w in ds) - 1
    if x[0] >= 0:
        return 0, min(x[1], m)
    if x[1] <= 0:
        return max(x[0], -m), 0
    return max(x[0], -m), min(x[1], m)


@interval_rule("MinI32S", "MinI64S", "MinI32U", "MinI64U")
def _min_interval(v: Operands) -> Interval | None:
    x, y = v.get("lhs"), v.get("rhs")
    if v.inst.op.symbol.endswith("U") and (x[0] < 0 or y[0] < 0):
        return None
    return min(x[0], y[0]), min(x[1], y[1])


@interval_rule("MaxI32S", "MaxI64S", "MaxI32U", "MaxI64U")
def _max_interval(v: Operands) -> Interval | None:
    x, y = v.get("lhs"), v.get("rhs")
    if v.inst.op.symbol.endswith("U") and (x[0] < 0 or y[0] < 0):
        return None
    return max(x[0], y[0]), max(x[1], y[1])


@interval_rule("AbsI32", "AbsI64")
def _abs_interval(v: Operands) -> Interval | None:
    x = v.get("operand")
    n = v.width
    assert n is not None
    if x[0] == top(n)[0]:
        return None  # abs(INT_MIN) wraps to itself
    if x[0] >= 0:
        return x
    if x[1] <= 0:
        return -x[1], -x[0]
    return 0, max(-x[0], x[1])


@interval_rule("CtlzI32", "CtlzI64")
def _ctlz_interval(v: Operands) -> Interval:
    n = v.width
    assert n is not None
    return 0, 32 * n


@interval_rule("SelectI32", "SelectI64")
def _select_interval(v: Operands) -> Interval:
    cond = v.known("condition")
    t, f = v.get("true_value"), v.get("false_value")
    if cond is not None and cond == (0, 0):
        return f
    if cond is not None and (cond[0] > 0 or cond[1] < 0):
        return t
    return min(t[0], f[0]), max(t[1], f[1])


# -- value ranges: truncations and extensions --------------------------------------------------------

@interval_rule("TruncI64I32")
def _trunc_i64_interval(v: Operands) -> Interval | None:
    x = v.get("operand")
    return x if top(1)[0] <= x[0] and x[1] <= top(1)[1] else None


@interval_rule("TruncI32I8", "TruncI32I16", "ExtI8I32U", "ExtI16I32U")
def _zero_extended_interval(v: Operands) -> Interval:
    hi = 255 if "I8" in v.inst.op.symbol else 65535
    x = v.get("operand")
    return x if 0 <= x[0] and x[1] <= hi else (0, hi)


@interval_rule("ExtI8I32S", "ExtI16I32S")
def _sign_extended_interval(v: Operands) -> Interval:
    lim = 128 if "I8" in v.inst.op.symbol else 32768
    x = v.get("operand")
    return x if -lim <= x[0] and x[1] < lim else (-lim, lim - 1)


@interval_rule("ExtI32I64S")
def _ext_i32_i64_signed_interval(v: Operands) -> Interval:
    return v.get("operand")


@interval_rule("ExtI32I64U")
def _ext_i32_i64_unsigned_interval(v: Operands) -> Interval:
    x = v.get("operand")
    if x[0] >= 0:
        return x
    if x[1] < 0:
        return x[0] + (1 << 32), x[1] + (1 << 32)
    return 0, (1 << 32) - 1


__all__ = ["make_pure", "make_sign_bit", "pure_parts", "constant_value", "reads_signed", "FLOAT_BITS_OPS",
           "PURE_SYMBOLS", "REGISTER_ONLY"]
