"""What IREE's bytecode verifier checks, per instruction, before a function may run: register
ranges and 64-bit alignment, branch targets, rodata/type/function/global ordinals, feature bits of
the op's opcode set, and that call and return register lists agree with the calling conventions."""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from .. import isa
from ..decoder import Instruction, Register
from .errors import BytecodeVerifyError
from .registers import Function, cconv_fragments, value_chars

if TYPE_CHECKING:
    from .context import Context


def global_size(op: isa.OpInfo) -> int | None:
    """Bytes a value global op touches (None for ref globals)."""
    name = op.symbol
    if name.endswith("Ref"):
        return None
    return 8 if name.endswith(("I64", "F64")) else 4


def verify_instruction(ctx: "Context", fn: Function, inst: Instruction) -> None:
    """BytecodeVerifyError (with the instruction's pc) for what IREE's verifier rejects."""
    m = ctx.module

    def fail(reason: str) -> None:
        raise BytecodeVerifyError(f"vm.{inst.mnemonic}: {reason}", inst.pc)

    feature = isa.SET_FEATURE_BITS.get(inst.op.opcode_set)
    if feature is not None and not fn.requirements & feature:
        fail(f"{inst.op.opcode_set} op in a function that does not declare that requirement")

    def check_reg(reg: Register, bank: str) -> None:
        if reg.is_ref:
            if reg.ordinal >= fn.ref_count:
                fail(f"ref register {reg.ordinal} out of range ({fn.ref_count} ref registers)")
        elif bank in (isa.I64, isa.F64):
            if reg.ordinal & 1:
                fail(f"{bank} register %i{reg.ordinal} is not 8-byte aligned")
            if reg.ordinal + 1 >= fn.i32_count:
                fail(f"{bank} register %i{reg.ordinal}:{reg.ordinal + 1} out of range "
                     f"({fn.i32_count} i32 registers)")
        elif reg.ordinal >= fn.i32_count:
            fail(f"register %i{reg.ordinal} out of range ({fn.i32_count} i32 registers)")

    def check_target(pc: int) -> None:
        if pc not in fn.block_index:
            fail(f"branch target pc 0x{pc:X} is not a block in the function")

    for f in inst.op.fields:
        value = inst.operands[f.name]
        if f.kind in isa.REGISTER_KINDS:
            check_reg(value, f.kind)
        elif f.kind == isa.REG_LIST and f.name != "segment_sizes":
            for reg in value:
                check_reg(reg, reg.bank)
        elif f.kind == isa.BRANCH_OPERANDS:
            for pair in value:
                check_reg(pair.src, pair.src.bank)
                check_reg(pair.dst, pair.dst.bank)
        elif f.kind == isa.BRANCH_TARGET:
            check_target(value)
        elif f.kind == isa.BRANCH_TABLE_CASES:
            for case in value:
                check_target(case.dest)
                for pair in case.operands:
                    check_reg(pair.src, pair.src.bank)
                    check_reg(pair.dst, pair.dst.bank)
        elif f.kind == isa.RODATA and value >= len(m.rodata_segments):
            fail(f"rodata ordinal {value} out of range ({len(m.rodata_segments)} segments)")
        elif f.kind == isa.TYPE and value >= len(m.types):
            fail(f"type id {value} out of range ({len(m.types)} types)")
        elif f.kind == isa.FUNC:
            if value & isa.FUNCTION_ORDINAL_IMPORT_BIT:
                if value & ~isa.FUNCTION_ORDINAL_IMPORT_BIT >= len(m.imported_functions):
                    fail(f"import ordinal {value & 0x7FFFFFFF} out of range")
            elif value >= len(m.function_descriptors):
                fail(f"function ordinal {value} out of range")
        elif f.kind == isa.GLOBAL:
            size = global_size(inst.op)
            if size is None:
                if value >= len(ctx.global_refs):
                    fail(f"ref global ordinal {value} out of range "
                         f"({len(ctx.global_refs)} ref globals)")
            elif value + size > len(ctx.rwdata):
                fail(f"global byte offset {value} (+{size}) out of range "
                     f"({len(ctx.rwdata)} bytes of globals)")


def check_cconv_regs(fn: Function, chars: Sequence[str], regs: Sequence[Register], what: str,
                     inst: Instruction) -> None:
    """Counts, banks, and 64-bit register bounds/alignment of a register list typed by a cconv."""
    if len(chars) != len(regs):
        raise BytecodeVerifyError(f"{what}: {len(regs)} register(s) listed, the cconv has "
                                  f"{len(chars)}", inst.pc)
    for char, reg in zip(chars, regs):
        if (char == "r") != reg.is_ref:
            raise BytecodeVerifyError(f"{what}: register {reg} does not match cconv type "
                                      f"{char!r}", inst.pc)
        if char in "IF" and (reg.ordinal & 1 or reg.ordinal + 1 >= fn.i32_count):
            raise BytecodeVerifyError(f"{what}: 64-bit register %i{reg.ordinal} is unaligned or "
                                      f"out of range ({fn.i32_count} i32 registers)", inst.pc)


def check_call_lists(fn: Function, cconv: str | None, segments: Sequence[int] | None,
                     operands: Sequence[Register], results: Sequence[Register],
                     inst: Instruction, name: str) -> None:
    """The verifier's cconv/register-list agreement (counts and banks) for a call."""
    args, res = cconv_fragments(cconv)
    if args is None:
        raise BytecodeVerifyError(f"call to {name}, which has no calling convention", inst.pc)
    expected: list[str] = []
    i = seg = 0
    while i < len(args):
        if args[i] == "C":
            end = args.index("D", i)
            if segments is None or seg >= len(segments):
                raise BytecodeVerifyError(f"call to variadic {name} ({cconv}) without a segment "
                                          f"size for argument {seg}", inst.pc)
            expected += value_chars(args[i + 1:end]) * segments[seg]
            i = end
        else:
            expected += value_chars(args[i])
        i += 1
        seg += 1
    check_cconv_regs(fn, expected, operands, f"operands of the call to {name} ({cconv})", inst)
    check_cconv_regs(fn, value_chars(res), results, f"results of the call to {name} ({cconv})",
                     inst)


__all__ = ["verify_instruction", "check_cconv_regs", "check_call_lists", "global_size"]
