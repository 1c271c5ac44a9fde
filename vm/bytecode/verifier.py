"""What IREE's bytecode verifier checks before a function may run, and what it misses.

IREE verifies every function when it creates the module (iree_vm_bytecode_function_verify,
runtime/src/iree/vm/bytecode/verifier.c); `verify_function` does the same walk in the same order
and raises the first failure it would report, with its status code (`BytecodeVerifyError.code`):

- the function's feature bits, register counts (rounded up to a power of two, at least 1: the
  bounds IREE's checks use, `frames.verifier_bound`), its own cconv (version `0`, no spans or
  unknown characters in the arguments) and argument storage;
- one pass over the instructions: block structure (every op inside a block, a block marker only
  after a terminator), the block list (branch targets collected, the descriptor's block count, every
  target defined), register lists, branch operands and calls checked as IREE checks them (callee
  cconvs included), rodata/global/import ordinals, ext-op feature bits; a terminator at the end.

IREE 3.13 does not look at the register operands of ordinary ops (the typed-operand hooks of its
decoder are never defined), nor at type ids (its interpreter maps one past the table to type 0:
`clamp_type_ids` does the same), nor (a misplaced parenthesis) at internal callee ordinals. Its
frame is not its verifier's bound (`frames.FrameLayout`): between the two a register lies past its
bank. What IREE then does is reproduced where it is reproducible: registers past the frame within
the verifier's bounds run on zeroed storage (the frame `verify_function` sizes is IREE's plus those
registers). Where IREE would read a ref's pointer, a byte another register also uses, memory a
callee's frame overwrites, or memory past any bound (possibly outside its stack), the function
fails to load instead (`_frame_storage`; the list is in docs/hostile-input.md), as do internal
callee ordinals past the table (IREE reads the signature past its table and crashes).

A Context calls `verify_function` for every function before it resolves imports (IREE verifies when
it creates the module).
"""
from __future__ import annotations

from typing import Any, NamedTuple, Sequence

from ...abi.printable import printable
from .state import ExecutionState
from . import isa
from .decoder import TERMINATORS, DecodeError, Instruction, Register
from .module_file import AVAILABLE_FEATURES, feature_names
from ...base.status import StatusCode
from .frames import (I32_SIZE, FrameLayout, bank_registers, frame_layout,
                                        verifier_bound)
from .registers import Function, value_chars
from ...layouts.ref import RefLayout

OOR, INVALID = StatusCode.OUT_OF_RANGE, StatusCode.INVALID_ARGUMENT
PC_BLOCK_MAX = 0x00FFFFFF  # IREE_VM_ISA_PC_BLOCK_MAX: block pcs must stay below it
_CALLS = frozenset({"Call", "CallVariadic", "CallYieldable", "CallVariadicYieldable"})
_VALUE_CHARS = "iIfFr"


class BytecodeVerifyError(DecodeError):
    """A function that decodes but that IREE's bytecode verifier would reject."""


def global_size(op: isa.OpInfo) -> int | None:
    """Bytes a value global op touches (None for ref globals)."""
    name = op.symbol
    if name.endswith("Ref"):
        return None
    return 8 if name.endswith(("I64", "F64")) else 4


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


def function_layout(ctx: "ExecutionState", ordinal: int) -> FrameLayout:
    """The frame IREE allocates for internal function `ordinal` on the context's data model."""
    d = ctx.module.function_descriptors[ordinal]
    return frame_layout(d.i32_register_count, d.ref_register_count, ctx.machine.view(RefLayout).size)


def frame_i32_registers(declared: int) -> int:
    """i32 registers in IREE's frame for a declared count: the bank is `declared * 4` bytes rounded
    up to 16 (iree_vm_bytecode_function_enter); none for a negative count."""
    return bank_registers(max(0, declared), I32_SIZE)


def verify_function(ctx: "ExecutionState", fn: Function, *, complete: bool = True,
                    beyond_iree: bool = True) -> FrameUse:
    """BytecodeVerifyError for the first thing IREE's verifier rejects in `fn`, then (unless
    `beyond_iree` is false: a disassembler, which runs nothing) for what it lets through where no
    reproducible value lies (see the module docstring); else the frame the function needs here and
    the instructions that trap (`FrameUse`). `complete=False` walks only the instructions given (a
    prefix that decodes) and skips the checks at the end of the function. Only the checks beyond
    IREE's need `ctx.machine` (the frame's layout depends on the data model)."""
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
    lim = _Limits(verifier_bound(n_i32), verifier_bound(n_ref))
    if lim.i32 > isa.I32_REGISTER_MASK or lim.ref > isa.REF_REGISTER_MASK:
        raise _fail(f"register count overflow ({n_i32} i32 / {n_ref} ref registers round up to "
                    f"{lim.i32} / {lim.ref})", 0, StatusCode.RESOURCE_EXHAUSTED)
    own = m.function_signatures[fn.ordinal].cconv
    args, results = cconv_split(own, f"{printable(fn.name)} signature", 0)
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
    if not complete:
        return FrameUse(frame_i32_registers(n_i32), max(0, n_ref), {})
    if in_block:
        raise _fail("function missing terminator in the last block", end_pc)
    blocks.verify(code, end_pc)
    if not beyond_iree:
        return FrameUse(frame_i32_registers(n_i32), max(0, n_ref), {})
    layout = function_layout(ctx, fn.ordinal)
    if layout.too_big:  # never runs: IREE fails to enter it (RESOURCE_EXHAUSTED, at the call)
        return FrameUse(layout.i32, layout.ref, {})
    return _frame_storage(ctx, fn, layout, need_ref)


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
            elif (value + size) & 0xFFFFFFFF > len(ctx.rwdata):
                # IREE adds in 32 bits: an offset within `size` of 2^32 passes (and traps here
                # when it runs: _frame_storage)
                signed = value - (1 << 32) if value & 0x80000000 else value
                raise _fail(f"{what}: global byte_offset out of range: {signed} (rwdata="
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
            cconv, name = imp.cconv, f"import '{printable(imp.full_name)}'"
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
                         f"{what}: operands of the return from {printable(fn.name)}", pc)


def verify_prefix_feature(fn: Function, code: bytes, pc: int) -> None:
    """IREE's checks of the op at `pc` that come before it is decoded (`fn.instructions` are the
    ops before it): that it is in a block (or is a block marker after a terminator), then the
    feature bits of its ext prefix."""
    if pc + 1 >= len(code):
        return  # the last byte: IREE's walk stops before it
    in_block = False
    for inst in fn.instructions:
        if inst.is_block:
            in_block = True
        elif inst.op.symbol in TERMINATORS:
            in_block = False
    if not in_block and code[pc] != isa.BLOCK_MARKER:
        raise _fail(f"op at pc {pc:08X} is not in a block", pc)
    if in_block and code[pc] == isa.BLOCK_MARKER:
        raise _fail(f"op at pc {pc:08X} is a block while still in a block", pc)
    if code[pc] not in isa.SETS_BY_PREFIX:
        return
    feature = isa.SET_FEATURE_BITS.get(isa.SETS_BY_PREFIX[code[pc]])
    if feature is not None and not fn.requirements & feature:
        raise _fail(_feature_mismatch(feature, fn.requirements), pc)


def _check_import(m: Any, value: int, what: str, pc: int) -> Any:
    ordinal = value & ~isa.FUNCTION_ORDINAL_IMPORT_BIT
    if ordinal >= len(m.imported_functions):
        raise _fail(f"{what}: import ordinal {ordinal} out of range "
                    f"{len(m.imported_functions)}", pc)
    return m.imported_functions[ordinal]


def _cconv_uses(fragment: str, segments: Sequence[int] | None,
                regs: Sequence[Register]) -> list[tuple[Register, str]]:
    """(register, cconv char) for the registers a call or return reads or writes: the fragment's
    values (spans expanded by their segment sizes) in order; registers past them are not touched."""
    chars: list[str] = []
    i = seg_i = 0
    while i < len(fragment):
        char = fragment[i]
        if char in _VALUE_CHARS:
            chars.append(char)
        elif char == "C":
            end = fragment.find("D", i + 1)
            body = [c for c in fragment[i + 1:end] if c in _VALUE_CHARS]
            chars.extend(body * (segments[seg_i] if segments and seg_i < len(segments) else 0))
            i = end
        i += 1
        seg_i += 1
    return list(zip(regs, chars))


# (bank "i"/"r", ordinal, registers, field name, typed field?)
_RegisterUse = tuple[str, int, int, str, bool]


def _register_uses(ctx: "ExecutionState", fn: Function, inst: Instruction) -> list[_RegisterUse]:
    """(bank "i"/"r", ordinal, registers, field name, typed field?) for every register `inst`
    reads or writes, as IREE's dispatch addresses them (an i64/f64 value is two i32 registers)."""
    m, o, symbol = ctx.module, inst.operands, inst.op.symbol

    def typed(reg: Register, char: str, name: str, field: bool = False) -> _RegisterUse:
        if char == "r" or reg.is_ref:
            return ("r", reg.ordinal, 1, name, field)
        return ("i", reg.ordinal, 2 if char in "IF" else 1, name, field)

    def pair(p: Any, name: str) -> list[_RegisterUse]:
        if p.src.is_ref:  # retain_or_move into the ref slot the destination's ordinal names
            return [("r", p.src.ordinal, 1, name, False), ("r", p.dst.ordinal, 1, name, False)]
        # an i32 copy into regs_i32[dst]: a ref-encoded destination indexes past 0x8000
        return [("i", p.src.ordinal, 1, name, False), ("i", p.dst.encoded, 1, name, False)]

    uses = []
    for f in inst.op.fields:
        value = o[f.name]
        if f.kind in isa.REGISTER_KINDS:
            uses.append(typed(value, {isa.I64: "I", isa.F64: "F", isa.REF: "r"}.get(f.kind, "i"),
                              f.name, True))
        elif f.kind == isa.REG_LIST and f.name != "segment_sizes":
            if symbol in _CALLS or symbol == "Return":
                continue  # typed by the cconv below
            wide = "I" if symbol in ("SwitchI64", "SwitchF64") else "i"
            uses.extend(typed(r, wide, f.name) for r in value)
        elif f.kind == isa.BRANCH_OPERANDS:
            for p in value:
                uses.extend(pair(p, f.name))
        elif f.kind == isa.BRANCH_TABLE_CASES:
            for case in value:
                for p in case.operands:
                    uses.extend(pair(p, f.name))
    if symbol == "Return":
        _, results = cconv_split(m.function_signatures[fn.ordinal].cconv, "", inst.pc)
        uses.extend(typed(r, c, "operands") for r, c in _cconv_uses(results, None, o["operands"]))
    elif symbol in _CALLS:
        callee = o["callee"]
        if callee & isa.FUNCTION_ORDINAL_IMPORT_BIT:
            cconv = m.imported_functions[callee & ~isa.FUNCTION_ORDINAL_IMPORT_BIT].cconv
        else:
            cconv = m.function_signatures[callee].cconv
        args, results = cconv_split(cconv, "", inst.pc)
        uses.extend(typed(r, c, "operands")
                    for r, c in _cconv_uses(args, o.get("segment_sizes"), o["operands"]))
        uses.extend(typed(r, c, "results") for r, c in _cconv_uses(results, None, o["results"]))
    return uses


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


class FrameUse(NamedTuple):
    """What `verify_function` finds a function needs: its frame here (IREE's, plus the registers
    past it that IREE's checks allow) and the instructions that would address a register where no
    reproducible value lies (index in `Function.instructions` -> why): they trap when they run,
    where IREE would read or write outside its frame."""

    i32: int
    ref: int
    traps: dict[int, str]


class _Trap(Exception):
    """One register of one instruction that cannot run as IREE runs it (a reason)."""


def _frame_storage(ctx: "ExecutionState", fn: Function, layout: FrameLayout,
                   need_ref: int) -> FrameUse:
    """The registers ireeabi's frame needs for `fn`, after IREE's checks passed. What IREE would
    address where no reproducible value lies (the checks IREE does not make, kept; the list is in
    docs/hostile-input.md):

    - at run time (the instruction traps, where IREE would read or write there): a register past
      IREE's verifier bound (a typed operand: IREE checks none of them), a ref-encoded register in
      an i32/i64/f32/f64 operand, an i32 register over IREE's ref bank (a ref's pointer), a
      register past the frame sharing bytes with one of the other bank past it, a register past
      the frame in a function that calls (the callee's frame is placed there);
    - at load (BytecodeVerifyError): an argument over the ref bank; a type id with an empty types
      table.

    Registers past the frame but within the verifier's bounds otherwise run, on zeroed storage
    (IREE's arguments of a function declaring too few registers land there)."""
    n_types = len(ctx.module.types)
    # slack uses: (start byte, end byte, register name, instruction index; -1 for an argument)
    past: dict[str, list[tuple[int, int, str, int]]] = {"i": [], "r": []}

    def use(bank: str, ordinal: int, n: int, what: str, index: int, field: bool = False) -> None:
        """Record a register past the frame; _Trap for one that has no reproducible place."""
        if field and bank == "i" and ordinal & isa.REF_REGISTER_TYPE_BIT:
            raise _Trap(f"{what}: i32 register required but ref register {ordinal} provided (IREE "
                        f"would index its i32 registers at {ordinal})")
        if bank == "r":
            if ordinal < layout.ref:
                return
            if ordinal >= layout.ref_bound:
                raise _Trap(f"{what}: ref register %r{ordinal} out of range: past IREE's verifier "
                            f"bound {layout.ref_bound} and its frame ({layout.ref} ref registers)")
            past["r"].append((*layout.ref_span(ordinal), f"%r{ordinal}", index))
            return
        name = f"%i{ordinal}" if n == 1 else f"%i{ordinal}:{ordinal + n - 1}"
        if ordinal + n <= layout.i32:
            return
        span = layout.i32_span(ordinal, n)
        if layout.ref and _overlaps(span, (layout.ref_bank_offset, layout.end)):
            raise _Trap(f"{what}: register {name} out of range: it lies over the frame's ref bank "
                        f"(IREE's i32 bank holds {layout.i32} registers, then {layout.ref} ref "
                        f"registers)")
        if ordinal + n > layout.i32_bound:
            raise _Trap(f"{what}: register {name} out of range: past IREE's verifier bound "
                        f"{layout.i32_bound} and its frame ({layout.i32} i32 registers)")
        past["i"].append((*span, name, index))

    try:
        i32_reg = 0
        for char in value_chars(fn.cconv_args or ""):  # the arguments, written at entry
            if char == "r":
                continue
            if char in "IF":
                i32_reg += i32_reg & 1
            use("i", i32_reg, 2 if char in "IF" else 1, f"argument register of {printable(fn.name)}", -1)
            i32_reg += 2 if char in "IF" else 1
        for ordinal in range(need_ref):
            use("r", ordinal, 1, f"argument register of {printable(fn.name)}", -1)
    except _Trap as e:
        raise _fail(str(e), 0, OOR) from None
    traps: dict[int, str] = {}
    call = None  # pc of the function's first call
    for index, inst in enumerate(fn.instructions):
        what = f"vm.{inst.mnemonic}"
        if inst.op.symbol in _CALLS and call is None:
            call = inst.pc
        try:
            for bank, ordinal, n, field, typed in _register_uses(ctx, fn, inst):
                use(bank, ordinal, n, f"{what} {field}", index, typed)
            for f in inst.op.fields:
                size = global_size(inst.op) if f.kind == isa.GLOBAL else None
                if size is not None and inst.operands[f.name] + size > len(ctx.rwdata):
                    raise _Trap(f"{what}: global byte_offset {inst.operands[f.name]} wraps past "
                                f"the {len(ctx.rwdata)}-byte rwdata (IREE's check adds in 32 "
                                f"bits)")
        except _Trap as e:
            traps[index] = str(e)
        if not n_types and any(f.kind == isa.TYPE for f in inst.op.fields):
            # IREE maps an out-of-range type id to type 0 (iree_vm_map_type), which an empty
            # table does not have: it reads past the table
            raise _fail(f"{what}: type id {inst.operands['type']} with an empty types table",
                        inst.pc, OOR)
    frame = f"past the frame ({layout.i32} i32 / {layout.ref} ref registers)"
    for a_start, a_end, a_name, a_index in past["i"]:
        for b_start, b_end, b_name, b_index in past["r"]:
            if a_start < b_end and b_start < a_end:
                for index in (a_index, b_index):
                    if index >= 0:
                        traps.setdefault(index, f"registers {a_name} and {b_name} share IREE's "
                                                f"stack bytes {frame}")
    if call is not None:
        for start, end, name, index in past["i"] + past["r"]:
            if index >= 0:
                traps.setdefault(index, f"vm.{fn.instructions[index].mnemonic}: register {name} "
                                        f"is {frame} in a function that calls (pc 0x{call:X}): "
                                        f"IREE places the callee's frame there")
    # storage for what runs: the frame, and the registers past it the untrapped ops and the
    # arguments use
    i32_storage, ref_storage = layout.i32, layout.ref
    for bank, uses in past.items():
        for start, end, name, index in uses:
            if index in traps:
                continue
            if bank == "i":
                i32_storage = max(i32_storage, end // 4)
            else:
                ref_storage = max(ref_storage,
                                  (end - layout.ref_bank_offset) // layout.ref_size)
    return FrameUse(i32_storage, ref_storage, traps)


def clamp_type_ids(ctx: "ExecutionState", fn: Function) -> None:
    """IREE runs an op whose type id is past the types table with type 0 (iree_vm_map_type);
    the decoded operands take that id once, here."""
    n_types = len(ctx.module.types)
    for inst in fn.instructions:
        for f in inst.op.fields:
            if f.kind == isa.TYPE and inst.operands[f.name] >= n_types:
                inst.operands[f.name] = 0


__all__ = ["BytecodeVerifyError", "verify_function", "verify_prefix_feature", "FrameUse", "function_layout",
           "frame_i32_registers", "clamp_type_ids", "check_cconv_regs",
           "check_call_lists", "cconv_split", "global_size", "TERMINATORS"]
