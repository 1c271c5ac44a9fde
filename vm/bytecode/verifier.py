"""What IREE's bytecode verifier checks before a function may run, and what it misses.

IREE verifies every function when it creates the module (iree_vm_bytecode_function_verify,
runtime/src/iree/vm/bytecode/verifier.c); `verify_function` does the same walk in the same order
and raises the first failure it would report, with its status code (`BytecodeVerifyError.code`):

- the function's feature bits, register counts (rounded up to a power of two, at least 1: the
  bounds IREE's checks use), its own cconv (version `0`, no spans or unknown characters in the
  arguments) and argument storage;
- one pass over the instructions: block structure (every op inside a block, a block marker only
  after a terminator), the block list (branch targets collected, the descriptor's block count, every
  target defined), register lists, branch operands and calls checked as IREE checks them (callee
  cconvs included), rodata/global/import ordinals, ext-op feature bits; a terminator at the end.

IREE 3.13 accepts some modules it cannot run safely: its verifier does not look at the register
operands of ordinary ops (the typed-operand hooks of its decoder are never defined), at type ids,
nor (a misplaced parenthesis) at internal callee ordinals, and its power-of-two bounds go past the
registers a frame holds. Those modules read or write outside the frame, or crash the process; here
they fail to load: internal callee ordinals are checked in the walk, and after IREE's checks pass
every register is checked against the frame and every type id against the types table
(`_check_safety`).

The frame is the one IREE allocates (dispatch.c, iree_vm_bytecode_function_enter): the i32 bank is
the declared count of 4-byte registers rounded up to 16 bytes (`frame_i32_registers`), zeroed, and
the ref bank exactly the declared count. A register past the declared count but inside that bank
(and, for the registers IREE checks, below its power-of-two bound) runs as in IREE; `Function`'s
counts are the frame's, the descriptor keeps the declared ones IREE's checks start from.

A Context calls `verify_function` for every function before it resolves imports (IREE verifies when
it creates the module); `verify_instruction` verifies a whole function at its first instruction.
"""
from __future__ import annotations

from typing import Sequence

from ireeabi.vm.bytecode.state import ExecutionState
from ireeabi.vm.bytecode import isa
from ireeabi.vm.bytecode.decoder import TERMINATORS, Instruction, Register
from ireeabi.vm.bytecode.module_file import AVAILABLE_FEATURES, feature_names
from ireeabi.vm.status import StatusCode
from ireeabi.vm.bytecode.errors import BytecodeVerifyError
from ireeabi.vm.bytecode.registers import Function

OOR, INVALID = StatusCode.OUT_OF_RANGE, StatusCode.INVALID_ARGUMENT
PC_BLOCK_MAX = 0x00FFFFFF  # IREE_VM_ISA_PC_BLOCK_MAX: block pcs must stay below it
_CALLS = frozenset({"Call", "CallVariadic", "CallYieldable", "CallVariadicYieldable"})
_VALUE_CHARS = "iIfFr"


def global_size(op: isa.OpInfo) -> int | None:
    """Bytes a value global op touches (None for ref globals)."""
    name = op.symbol
    if name.endswith("Ref"):
        return None
    return 8 if name.endswith(("I64", "F64")) else 4


def _pow2(n: int) -> int:
    """iree_math_round_up_to_pow2_u32(max(1, n)), the bound the verifier checks registers with."""
    n = max(1, n)
    return 1 << (n - 1).bit_length()


def frame_i32_registers(declared: int) -> int:
    """i32 registers in IREE's frame for a declared count: the bank is `declared * 4` bytes rounded
    up to 16 (iree_vm_bytecode_function_enter). Negative counts stay as they are (rejected)."""
    return (declared + 3) & ~3 if declared > 0 else declared


def _features(bits: int) -> str:
    return "|".join(feature_names(bits))


def _feature_mismatch(required: int, available: int) -> str:
    return (f"required module features [{_features(required & ~available)}] are not available in "
            f"this runtime configuration; have [{_features(available)}] while module requires "
            f"[{_features(required)}]")


class _Limits:
    """Register bounds: IREE's (power-of-two) or the frame's (`Function`'s counts)."""

    __slots__ = ("i32", "ref")

    def __init__(self, i32: int, ref: int) -> None:
        self.i32, self.ref = i32, ref


def _frame(fn: Function) -> _Limits:
    return _Limits(fn.i32_count, fn.ref_count)


def _fail(reason: str, pc: int, code: StatusCode = INVALID) -> BytecodeVerifyError:
    return BytecodeVerifyError(reason, pc, code=code)


# --------------------------------------------------------------------------------------------------
# Register checks, as IREE's verifier macros make them


def _check_any(reg: Register, lim: _Limits, what: str, pc: int) -> None:
    """A register of either bank (register lists, branch operands)."""
    if reg.is_ref:
        if reg.ordinal >= lim.ref:
            raise _fail(f"{what}: ref register ordinal {reg.ordinal} out of range {lim.ref} "
                        f"(register {reg})", pc, OOR)
    elif reg.ordinal >= lim.i32:
        raise _fail(f"{what}: i32 register ordinal {reg.ordinal} out of range {lim.i32} "
                    f"(register %i{reg.ordinal})", pc, OOR)


def _check_typed(reg: Register, char: str, lim: _Limits, what: str, pc: int) -> None:
    """A register that must hold a value of cconv type `char` (i, f, I, F or r)."""
    if char == "r":
        if not reg.is_ref:
            raise _fail(f"{what}: ref register required but non-ref {reg.encoded} provided", pc)
        if reg.ordinal >= lim.ref:
            raise _fail(f"{what}: ref register ordinal {reg.ordinal} out of range {lim.ref}", pc,
                        OOR)
        return
    kind = "i64/f64" if char in "IF" else "i32/f32"
    if reg.is_ref:
        raise _fail(f"{what}: {kind} register required but ref register {reg.encoded} provided",
                    pc)
    if char in "IF":
        if reg.ordinal & 1:
            raise _fail(f"{what}: {kind} register ordinal {reg.ordinal} not 8-byte aligned", pc)
        if reg.ordinal + 1 >= lim.i32:
            raise _fail(f"{what}: {kind} register ordinal {reg.ordinal}:{reg.ordinal + 1} out of "
                        f"range {lim.i32}", pc, OOR)
    elif reg.ordinal >= lim.i32:
        raise _fail(f"{what}: {kind} register ordinal {reg.ordinal} out of range {lim.i32}", pc,
                    OOR)


# --------------------------------------------------------------------------------------------------
# Calling conventions, as the verifier reads them


def cconv_split(cconv: str | None, what: str, pc: int) -> tuple[str, str]:
    """(arguments, results) as iree_vm_function_call_get_cconv_fragments splits them: no cconv is
    `()->()`, the version must be `0`, the first `_` splits, a lone `v` is empty."""
    if not cconv:
        return "", ""
    if cconv[0] != "0":
        raise _fail(f"{what}: unsupported cconv version {cconv[0]} (in {cconv!r})", pc,
                    StatusCode.UNIMPLEMENTED)
    args, sep, results = cconv[1:].partition("_")
    return ("" if args == "v" else args), ("" if results == "v" else results)


def _cconv_registers(fragment: str, segments: Sequence[int] | None, regs: Sequence[Register],
                     lim: _Limits, what: str, pc: int) -> None:
    """IREE's iree_vm_bytecode_function_verify_cconv_registers: every value of the fragment (spans
    expanded by the segment sizes) has a register of its type; more registers are ignored."""
    reg_i = 0

    def one(char: str) -> None:
        nonlocal reg_i
        if reg_i >= len(regs):
            raise _fail(f"{what}: register list underflow (have {len(regs)}, trying to access "
                        f"{reg_i})", pc, OOR)
        _check_typed(regs[reg_i], char, lim, what, pc)
        reg_i += 1

    i = seg_i = 0
    while i < len(fragment):
        char = fragment[i]
        if char in _VALUE_CHARS:
            one(char)
        elif char == "C":
            if segments is None:
                raise _fail(f"{what}: {fragment!r} is variadic but no segment size list is "
                            f"provided", pc)
            if seg_i >= len(segments):
                raise _fail(f"{what}: segment size list underflow (have {len(segments)}, trying "
                            f"to access {seg_i})", pc, OOR)
            end = fragment.find("D", i + 1)
            body = fragment[i + 1:end if end >= 0 else len(fragment)]
            for _ in range(segments[seg_i]):  # an empty span (count 0) is skipped unread
                for c in body:
                    if c in _VALUE_CHARS:
                        one(c)
                    elif c != "v":
                        raise _fail(f"{what}: unsupported cconv fragment char {c!r}", pc)
            if end < 0:  # IREE then stops at the end; our call planner needs the span closed
                raise _fail(f"{what}: unterminated span in {fragment!r}", pc)
            i = end
        elif char != "v":
            raise _fail(f"{what}: unsupported cconv fragment char {char!r}", pc)
        i += 1
        seg_i += 1


def check_cconv_regs(fn: Function, chars: Sequence[str], regs: Sequence[Register], what: str,
                     inst: Instruction) -> None:
    """Registers typed by a list of cconv value chars: each present (extra ones are ignored, as
    IREE ignores them), of its bank, 64-bit ones aligned, all within the frame."""
    _cconv_registers("".join(chars), None, regs, _frame(fn), what, inst.pc)


def check_call_lists(fn: Function, cconv: str | None, segments: Sequence[int] | None,
                     operands: Sequence[Register], results: Sequence[Register],
                     inst: Instruction, name: str) -> None:
    """The verifier's cconv/register-list agreement for a call (IREE's verify_call)."""
    args, res = cconv_split(cconv, f"call to {name}", inst.pc)
    lim = _frame(fn)
    _cconv_registers(args, segments, operands, lim, f"operands of the call to {name} ({cconv})",
                     inst.pc)
    _cconv_registers(res, None, results, lim, f"results of the call to {name} ({cconv})", inst.pc)


# --------------------------------------------------------------------------------------------------
# The function walk


class _BlockList:
    """iree_vm_bytecode_block_list_t: block pcs seen (as markers or as branch targets), at most
    the descriptor's block count of them."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.defined: dict[int, bool] = {}

    def insert(self, target: int, pc: int) -> None:
        if target >= PC_BLOCK_MAX:
            raise _fail(f"block pc {target:08X} greater than max {PC_BLOCK_MAX:08X}", pc, OOR)
        if target not in self.defined:
            if len(self.defined) + 1 > self.capacity:
                raise _fail(f"invalid descriptor block count {self.capacity}; found at least "
                            f"{len(self.defined) + 1} blocks (a branch target or block marker at "
                            f"pc 0x{target:X})", pc)
            self.defined[target] = False

    def verify(self, code: bytes, end_pc: int) -> None:
        if len(self.defined) != self.capacity:
            raise _fail(f"invalid descriptor block count {self.capacity}; found "
                        f"{len(self.defined)} blocks", end_pc)
        for target in sorted(self.defined):
            if not self.defined[target]:
                raise _fail(f"block at pc {target:08X} not defined in bytecode (a branch target "
                            f"that is not a block marker)", end_pc)
            if target + 1 >= len(code):
                raise _fail(f"block at pc {target:08X} out of bytecode data range {len(code)}",
                            end_pc)


def verify_function(ctx: "ExecutionState", fn: Function, *, beyond_iree: bool = True) -> None:
    """BytecodeVerifyError for the first thing IREE's verifier rejects in `fn`, then (unless
    `beyond_iree` is false: a disassembler, which runs nothing) for what it lets through unsafely
    (see the module docstring)."""
    m = ctx.module
    d = m.function_descriptors[fn.ordinal]
    end_pc = d.bytecode_length

    if fn.requirements & ~int(AVAILABLE_FEATURES):
        raise _fail(_feature_mismatch(fn.requirements, int(AVAILABLE_FEATURES)), 0)
    if d.block_count == 0:
        raise _fail("no blocks defined; functions must have at least one block", 0, OOR)
    # IREE's bounds: the descriptor's counts (not the frame's), at least 1, rounded up to a
    # power of two (iree_vm_bytecode_verify_state_t i32/ref_register_count)
    n_i32, n_ref = d.i32_register_count, d.ref_register_count
    lim = _Limits(_pow2(n_i32), _pow2(n_ref))
    if lim.i32 > isa.I32_REGISTER_MASK or lim.ref > isa.REF_REGISTER_MASK:
        raise _fail(f"register count overflow ({n_i32} i32 / {n_ref} ref registers round up to "
                    f"{lim.i32} / {lim.ref})", 0, StatusCode.RESOURCE_EXHAUSTED)
    own = m.function_signatures[fn.ordinal].cconv
    args, results = cconv_split(own, f"{fn.name} signature", 0)
    need_i32 = need_ref = 0
    for char in args:
        if char == "r":
            need_ref += 1
        elif char in "iIfF":
            if char in "IF":
                need_i32 += (need_i32 & 1) + 1
            need_i32 += 1
        elif char == "C":
            raise _fail(f"internal functions cannot accept variadic arguments ({own!r})", 0)
        elif char != "v":
            raise _fail(f"unsupported cconv fragment char {char!r} in the arguments of {own!r}", 0)
    if need_i32 > lim.i32 or need_ref > lim.ref:
        raise _fail(f"insufficient register storage for function arguments/results ({own!r})", 0)
    if d.block_count < 0:
        # IREE sizes its block list with the count as an unsigned 32-bit number and tries to
        # allocate and clear gigabytes (observed: RESOURCE_EXHAUSTED, or a long stall).
        raise _fail(f"negative descriptor block count {d.block_count}", 0,
                    StatusCode.RESOURCE_EXHAUSTED)

    code = m.bytecode[d.bytecode_offset:d.bytecode_offset + d.bytecode_length]
    blocks = _BlockList(d.block_count)
    in_block = False
    for inst in fn.instructions:
        if inst.pc >= end_pc - 1:
            break  # IREE's walk stops before the last byte: nothing starting there is verified
        if not in_block and not inst.is_block:
            raise _fail(f"op at pc {inst.pc:08X} is not in a block", inst.pc)
        if in_block and inst.is_block:
            raise _fail(f"op at pc {inst.pc:08X} is a block while still in a block", inst.pc)
        _verify_op(ctx, fn, inst, lim, blocks, results)
        if inst.is_block:
            blocks.defined[inst.pc] = True
            in_block = True
        elif inst.op.symbol in TERMINATORS:
            in_block = False
    if in_block:
        raise _fail("function missing terminator in the last block", end_pc)
    blocks.verify(code, end_pc)
    if beyond_iree:
        _check_safety(ctx, fn, need_i32, need_ref)


def _verify_op(ctx: "ExecutionState", fn: Function, inst: Instruction, lim: _Limits,
               blocks: _BlockList, own_results: str) -> None:
    """One instruction, as iree_vm_bytecode_function_verify_bytecode_op checks it in 3.13."""
    m, pc, symbol = ctx.module, inst.pc, inst.op.symbol
    what = f"vm.{inst.mnemonic}"
    if inst.is_block:
        blocks.insert(pc, pc)
        return
    feature = isa.SET_FEATURE_BITS.get(inst.op.opcode_set)
    if feature is not None and not fn.requirements & feature:
        raise _fail(f"{what}: {_feature_mismatch(feature, fn.requirements)}", pc)
    switch_bank = {"SwitchI32": "i", "SwitchI64": "I", "SwitchF32": "f", "SwitchF64": "F",
                   "SwitchRef": "r"}.get(symbol)
    for f in inst.op.fields:
        value = inst.operands[f.name]
        if f.kind == isa.REG_LIST and f.name != "segment_sizes":
            for reg in value:
                if switch_bank is not None:
                    _check_typed(reg, switch_bank, lim, what, pc)
                else:
                    _check_any(reg, lim, what, pc)
        elif f.kind == isa.BRANCH_OPERANDS:
            for pair in value:
                _check_any(pair.src, lim, what, pc)
                _check_any(pair.dst, lim, what, pc)
        elif f.kind == isa.BRANCH_TARGET:
            blocks.insert(value, pc)
        elif f.kind == isa.BRANCH_TABLE_CASES:
            for case in value:
                blocks.insert(case.dest, pc)
                for pair in case.operands:
                    _check_any(pair.src, lim, what, pc)
                    _check_any(pair.dst, lim, what, pc)
        elif f.kind == isa.RODATA and value >= len(m.rodata_segments):
            raise _fail(f"{what}: rodata ref ordinal out of range: {value} (table="
                        f"{len(m.rodata_segments)})", pc, OOR)
        elif f.kind == isa.GLOBAL:
            size = global_size(inst.op)
            if size is None:
                if value >= len(ctx.global_refs):
                    raise _fail(f"{what}: global ref ordinal out of range: {value} (table="
                                f"{len(ctx.global_refs)})", pc, OOR)
            elif value + size > len(ctx.rwdata):
                raise _fail(f"{what}: global byte_offset out of range: {value} (rwdata="
                            f"{len(ctx.rwdata)}; {size} bytes accessed)", pc, OOR)
        elif f.kind == isa.FUNC and symbol == "ImportResolved":
            if not value & isa.FUNCTION_ORDINAL_IMPORT_BIT:
                raise _fail(f"{what}: function ordinal {value} is not an import ordinal", pc)
            _check_import(m, value, what, pc)
    if symbol in _CALLS:
        o = inst.operands
        callee, segments = o["callee"], o.get("segment_sizes")
        if segments is not None and not callee & isa.FUNCTION_ORDINAL_IMPORT_BIT:
            raise _fail(f"{what}: variadic calls are only supported for imports (callee is "
                        f"internal function {callee})", pc, StatusCode.FAILED_PRECONDITION)
        if callee & isa.FUNCTION_ORDINAL_IMPORT_BIT:
            imp = _check_import(m, callee, what, pc)
            cconv, name = imp.cconv, f"import '{imp.full_name}'"
        elif callee >= len(m.function_descriptors):
            # IREE's range check here never fires (its condition compares a boolean); it then
            # reads the signature past the table and crashes.
            raise _fail(f"{what}: function ordinal {callee} out of range "
                        f"({len(m.function_descriptors)} functions)", pc)
        else:
            cconv, name = m.function_signatures[callee].cconv, f"internal function {callee}"
        args, results = cconv_split(cconv, f"{what} to {name}", pc)
        _cconv_registers(args, segments, o["operands"], lim,
                         f"{what}: operands of the call to {name} ({cconv})", pc)
        _cconv_registers(results, None, o["results"], lim,
                         f"{what}: results of the call to {name} ({cconv})", pc)
    elif symbol == "Return":
        _cconv_registers(own_results, None, inst.operands["operands"], lim,
                         f"{what}: operands of the return from {fn.name}", pc)


def _check_import(m, value: int, what: str, pc: int):
    ordinal = value & ~isa.FUNCTION_ORDINAL_IMPORT_BIT
    if ordinal >= len(m.imported_functions):
        raise _fail(f"{what}: import ordinal {ordinal} out of range "
                    f"{len(m.imported_functions)}", pc)
    return m.imported_functions[ordinal]


def _check_safety(ctx: "ExecutionState", fn: Function, need_i32: int, need_ref: int) -> None:
    """What IREE 3.13 lets through and then runs outside the frame or crashes on: every register
    within the frame (IREE checks only lists, against power-of-two bounds, and typed operands not
    at all), the arguments within it, type ids within the types table, no negative counts."""
    d = ctx.module.function_descriptors[fn.ordinal]
    if d.i32_register_count < 0 or d.ref_register_count < 0:
        # IREE verifies with max(1, count) and fails the call (frame size) or writes past it.
        raise _fail(f"negative register count ({d.i32_register_count} i32 / "
                    f"{d.ref_register_count} ref)", 0, StatusCode.RESOURCE_EXHAUSTED)
    if need_i32 > fn.i32_count or need_ref > fn.ref_count:
        # within IREE's power-of-two bounds, past the frame: IREE writes the arguments past it
        raise _fail(f"insufficient register storage for the arguments ({need_i32} i32 / "
                    f"{need_ref} ref registers needed, the frame holds {fn.i32_count} / "
                    f"{fn.ref_count})", 0, OOR)
    lim = _frame(fn)
    n_types = len(ctx.module.types)
    for inst in fn.instructions:
        what, pc = f"vm.{inst.mnemonic}", inst.pc
        for f in inst.op.fields:
            value = inst.operands[f.name]
            if f.kind in isa.REGISTER_KINDS:
                if value.is_ref:
                    _check_frame(value, lim, what, pc)
                elif f.kind in (isa.I64, isa.F64):
                    # a misaligned pair works (IREE 3.13 runs it); one past the bank does not
                    if value.ordinal + 1 >= lim.i32:
                        raise _fail(f"{what}: {f.kind} register %i{value.ordinal}:"
                                    f"{value.ordinal + 1} out of range ({lim.i32} i32 registers)",
                                    pc, OOR)
                else:
                    _check_frame(value, lim, what, pc)
            elif f.kind == isa.REG_LIST and f.name != "segment_sizes":
                wide = inst.op.symbol in ("SwitchI64", "SwitchF64")
                for reg in value:
                    _check_frame(reg, lim, what, pc)
                    if wide and reg.ordinal + 1 >= lim.i32:  # the pair's second half too
                        raise _fail(f"{what}: register %i{reg.ordinal}:{reg.ordinal + 1} out of "
                                    f"range ({lim.i32} i32 registers in the frame)", pc, OOR)
            elif f.kind == isa.BRANCH_OPERANDS:
                for pair in value:
                    _check_frame(pair.src, lim, what, pc)
                    _check_frame(pair.dst, lim, what, pc)
            elif f.kind == isa.BRANCH_TABLE_CASES:
                for case in value:
                    for pair in case.operands:
                        _check_frame(pair.src, lim, what, pc)
                        _check_frame(pair.dst, lim, what, pc)
            elif f.kind == isa.TYPE and value >= n_types:
                raise _fail(f"{what}: type id ordinal out of range: {value} (table={n_types})",
                            pc, OOR)
        if inst.op.symbol in _CALLS or inst.op.symbol == "Return":
            # the cconv-typed registers once more against the frame's own counts
            _verify_cconv_exact(ctx, fn, inst, lim)


def _check_frame(reg: Register, lim: _Limits, what: str, pc: int) -> None:
    if reg.is_ref:
        if reg.ordinal >= lim.ref:
            raise _fail(f"{what}: ref register {reg.ordinal} out of range ({lim.ref} ref registers "
                        f"in the frame)", pc, OOR)
    elif reg.ordinal >= lim.i32:
        raise _fail(f"{what}: register %i{reg.ordinal} out of range ({lim.i32} i32 registers in "
                    f"the frame)", pc, OOR)


def _verify_cconv_exact(ctx: "ExecutionState", fn: Function, inst: Instruction, lim: _Limits) -> None:
    m, o, pc = ctx.module, inst.operands, inst.pc
    what = f"vm.{inst.mnemonic}"
    if inst.op.symbol == "Return":
        _, results = cconv_split(m.function_signatures[fn.ordinal].cconv, what, pc)
        _cconv_registers(results, None, o["operands"], lim, f"{what}: operands of the return "
                         f"from {fn.name}", pc)
        return
    callee = o["callee"]
    if callee & isa.FUNCTION_ORDINAL_IMPORT_BIT:
        cconv = m.imported_functions[callee & ~isa.FUNCTION_ORDINAL_IMPORT_BIT].cconv
    else:
        cconv = m.function_signatures[callee].cconv
    args, results = cconv_split(cconv, what, pc)
    _cconv_registers(args, o.get("segment_sizes"), o["operands"], lim,
                     f"{what}: operands ({cconv})", pc)
    _cconv_registers(results, None, o["results"], lim, f"{what}: results ({cconv})", pc)


def verify_instruction(ctx: "ExecutionState", fn: Function, inst: Instruction) -> None:
    """BytecodeVerifyError for what the loader rejects; the whole function is verified (in IREE's
    order) when its first instruction is, as the interpreter prepares functions in order."""
    if fn.instructions and inst is fn.instructions[0]:
        try:
            verify_function(ctx, fn)
        except BytecodeVerifyError as e:
            raise e.in_function(fn.name) from None


__all__ = ["verify_instruction", "verify_function", "check_cconv_regs", "check_call_lists",
           "cconv_split", "global_size", "frame_i32_registers", "TERMINATORS"]
