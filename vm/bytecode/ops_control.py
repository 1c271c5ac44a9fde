"""Handlers of the control ops: blocks and branches (with their register remaps), branch tables,
calls (internal and import, variadic, yieldable), return, vm.yield, vm.import.resolved and vm.fail;
which of them end a compiled block or branch within one (blocks.py and regions.py follow
`branch_edges`), the block marker's fast path (nothing), and where each of them sends the value
ranges (value_ranges.py: `interval_edges`)."""
from __future__ import annotations

from typing import Any, Sequence

from . import isa
from .decoder import Instruction, Remap
from ..errors import VmFailError
from .state import ExecutionState
from .handlers import (RETURN, YIELD, block_writer, interval_edges, interval_rule, op, region_accesses,
                       region_writer)
from ..ops import I32, U32
from .registers import Frame, Function, retain_or_move, value_chars, write_i32
from .verifier import BytecodeVerifyError, check_call_lists, check_cconv_regs

# The branches to a block of the function (`branch_edges`): compiled regions follow them.
BRANCHES = frozenset({"Branch", "CondBranch", "Break", "CondBreak"})
# Ops after which control does not go on to the next instruction.
NO_FALLTHROUGH = BRANCHES | {"BranchTable", "Return", "Fail"}
# Instructions after which control may not fall through to the next one in the same compiled
# block. A yieldable call or vm.yield ends its block too: its handler sets frame.ip (the resume
# block, the yield's target, or the call itself to run again on resume) and may suspend the stack
# (YIELD), which only the interpreter loop can do.
ENDS_BLOCK = NO_FALLTHROUGH | {"Call", "CallVariadic", "CallYieldable", "CallVariadicYieldable", "Yield"}
MARKERS = frozenset({"Block"})  # a block's first instruction: its handler does nothing
# Ops whose handler answers RETURN: the loop reads the returned registers from its entry's payload.
RETURNS = frozenset({"Return"})


@op(*MARKERS)
def _make_block(ctx, fn, inst):
    return (lambda ctx, frame, _: None), None


@region_accesses(*MARKERS)
def _block_accesses(ctx: ExecutionState, inst: Instruction) -> list:
    return []


@region_writer(*MARKERS)
def _region_block(w: Any, i: int, end: int, lines: list, pad: str) -> None:
    """Nothing to write."""


@block_writer(*MARKERS)
def _block_block(w: Any, i: int, lines: list, pad: str) -> bool:
    return True


def branch_condition(inst: Instruction) -> Any:
    """The condition register of a conditional branch of BRANCHES (vm.cond_br), None for the
    others (vm.br; vm.break and vm.cond_break, debugger hooks in IREE, branch unconditionally)."""
    return inst.operands["condition"] if inst.op.symbol == "CondBranch" else None


def branch_edges(inst: Instruction) -> list[tuple[Any, Any]]:
    """(destination block, operand remaps) of a branch of BRANCHES: the true edge first."""
    o = inst.operands
    if inst.op.symbol == "CondBranch":
        return [(o["true_dest"], o["true_operands"]), (o["false_dest"], o["false_operands"])]
    return [(o["dest"], o["operands"])]


@interval_edges(*BRANCHES)
def _branch_interval_edges(inst: Instruction) -> list[tuple[Any, Any, Any]]:
    """A conditional branch's true edge is taken where its condition is nonzero."""
    cond = branch_condition(inst)
    if cond is None:
        return [(dest, pairs, None) for dest, pairs in branch_edges(inst)]
    return [(dest, pairs, (cond.ordinal, truth)) for (dest, pairs), truth in zip(branch_edges(inst), (True, False))]


@region_accesses(*BRANCHES)
def _branch_accesses(ctx: ExecutionState, inst: Instruction) -> list:
    cond = branch_condition(inst)
    return [] if cond is None else [("r", cond.ordinal, 1, "int")]


def remap(ctx: "ExecutionState", frame: Frame, pairs: Sequence[Remap]) -> None:
    """Branch operands: (src, dst) register copies in order, refs retained or moved."""
    regs, refs = frame.regs, frame.refs
    for src, dst in pairs:
        if src.is_ref:
            retain_or_move(ctx, refs, src, refs, dst.ordinal)
        else:
            s, d = 4 * src.ordinal, 4 * dst.ordinal
            regs[d:d + 4] = regs[s:s + 4]


@op("Branch", "Break", "CondBreak")  # CondBreak: a debugger hook in IREE, otherwise a branch
def _make_branch(ctx, fn, inst):
    target = fn.block_index[inst.operands["dest"]]
    pairs = inst.operands["operands"]

    def run(ctx, frame, _):
        if pairs:
            remap(ctx, frame, pairs)
        frame.ip = target
    return run, None


@op("CondBranch")
def _make_cond_branch(ctx, fn, inst):
    o = inst.operands
    cond = 4 * o["condition"].ordinal
    t, tp = fn.block_index[o["true_dest"]], o["true_operands"]
    f, fp = fn.block_index[o["false_dest"]], o["false_operands"]

    def run(ctx, frame, _):
        if I32.unpack_from(frame.regs, cond)[0]:
            if tp:
                remap(ctx, frame, tp)
            frame.ip = t
        else:
            if fp:
                remap(ctx, frame, fp)
            frame.ip = f
    return run, None


@op("BranchTable")
def _make_branch_table(ctx, fn, inst):
    o = inst.operands
    index = 4 * o["index"].ordinal
    default = (fn.block_index[o["default_dest"]], o["default_operands"])
    cases = tuple((fn.block_index[c.dest], c.operands) for c in o["cases"])

    def run(ctx, frame, _):
        i = I32.unpack_from(frame.regs, index)[0]
        target, pairs = cases[i] if 0 <= i < len(cases) else default
        if pairs:
            remap(ctx, frame, pairs)
        frame.ip = target
    return run, None


@interval_edges("BranchTable")
def _branch_table_interval_edges(inst: Instruction) -> list[tuple[Any, Any, Any]]:
    o = inst.operands
    return [(o["default_dest"], o["default_operands"], None)] + [(c.dest, c.operands, None) for c in o["cases"]]


@interval_edges("Return")
def _return_interval_edges(inst: Instruction) -> list[tuple[Any, Any, Any]]:
    return []


@op("Return")
def _make_return(ctx, fn, inst):
    operands = inst.operands["operands"]
    if fn.cconv_results is None:
        raise BytecodeVerifyError(f"vm.return in {fn.name}, which has no calling convention",
                                  inst.pc)
    check_cconv_regs(fn, value_chars(fn.cconv_results), operands, "vm.return operands", inst)

    def run(ctx, frame, _):
        return RETURN
    return run, operands


def _checked_callee(ctx: ExecutionState, fn: Function, inst: Instruction, op_name: str) -> tuple[bool, int]:
    """(whether the callee is an import, its import or function ordinal), its argument and result
    lists checked against its cconv; a variadic call of an internal function is refused, as IREE
    supports variadic calls to imports only."""
    o = inst.operands
    callee, segments = o["callee"], o.get("segment_sizes")
    if callee & isa.FUNCTION_ORDINAL_IMPORT_BIT:
        ordinal = callee & ~isa.FUNCTION_ORDINAL_IMPORT_BIT
        imp = ctx.module.imported_functions[ordinal]
        check_call_lists(fn, imp.cconv, segments, o["operands"], o["results"], inst, imp.full_name)
        return True, ordinal
    if segments is not None:
        raise BytecodeVerifyError(f"{op_name} of an internal function (IREE supports variadic calls "
                                  f"to imports only)", inst.pc)
    target = ctx.module.function_signatures[callee]
    check_call_lists(fn, target.cconv, None, o["operands"], o["results"], inst, f"function#{callee}")
    return False, callee


@op("Call", "CallVariadic")
def _make_call(ctx, fn, inst):
    o = inst.operands
    operands, results = o["operands"], o["results"]
    is_import, callee = _checked_callee(ctx, fn, inst, "vm.call.variadic")
    if is_import:
        return ctx.import_call(callee, o.get("segment_sizes"), operands, results), None

    def call_internal(ctx, frame, _):
        return ctx.enter_internal(frame, callee, operands, results)
    return call_internal, None


@op("CallYieldable", "CallVariadicYieldable")
def _make_yieldable_call(ctx, fn, inst):
    """vm.call.yieldable / vm.call.variadic.yieldable (bytecode/dispatch.c): the call, then on to the
    resume block. An internal callee may yield (vm.yield): the whole stack suspends with it, and its
    return lands in the resume block (the caller's `pending` holds where). An import may yield
    (DEFERRED): the frame stays at this instruction, which begins the call the first time and
    resumes it each time it runs again (`Context.yieldable_import_call`)."""
    o = inst.operands
    operands, results = o["operands"], o["results"]
    resume = fn.block_index[o["resume"]]  # a block: the verifier checked it
    is_import, callee = _checked_callee(ctx, fn, inst, "vm.call.variadic.yieldable")
    if is_import:
        return ctx.yieldable_import_call(callee, o.get("segment_sizes"), operands, results, resume), None

    def call_internal(ctx, frame, _):
        callee_frame = ctx.enter_internal(frame, callee, operands, results)
        frame.pending = resume  # the return goes on at the resume block (context._leave_internal)
        return callee_frame
    return call_internal, None


@op("Yield")
def _make_yield(ctx, fn, inst):
    """vm.yield ^dest(operands): the branch first, then the stack suspends (IREE returns DEFERRED
    from its dispatch loop); a resume runs on at the target, nothing else kept."""
    target = fn.block_index[inst.operands["dest"]]
    pairs = inst.operands["operands"]

    def run(ctx, frame, _):
        if pairs:
            remap(ctx, frame, pairs)
        frame.ip = target
        return YIELD
    return run, None


@interval_edges("Yield")
def _yield_interval_edges(inst: Instruction) -> list[tuple[Any, Any, Any]]:
    """The stack resumes at the yield's target."""
    return [(inst.operands["dest"], inst.operands["operands"], None)]


@op("ImportResolved")
def _make_import_resolved(ctx, fn, inst):
    ordinal = inst.operands["import"] & ~isa.FUNCTION_ORDINAL_IMPORT_BIT
    dst = 4 * inst.operands["result"].ordinal

    def run(ctx, frame, _):
        write_i32(frame.regs, dst, int(ctx.resolved[ordinal]))
    return run, None


@interval_rule("ImportResolved")
def _import_resolved_interval(v: Any) -> tuple[int, int]:
    return 0, 1


@op("Fail")
def _make_fail(ctx, fn, inst):
    status, message = 4 * inst.operands["status"].ordinal, inst.operands["message"]

    def run(ctx, frame, _):
        code = U32.unpack_from(frame.regs, status)[0]
        if code != 0:
            raise VmFailError(code, message)
    return run, None
