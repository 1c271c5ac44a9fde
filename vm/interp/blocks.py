"""Compiled basic blocks: the fast path of the interpreter, generated from the per-instruction handlers.

The reference path runs one handler per instruction (context.py's loop: fetch, call, look at the
answer). Here each basic block of a function becomes one generated Python function that runs the
block's instructions in order, with the loop's per-instruction work gone:

- a pure op (arithmetic, compare, convert: `ops_scalar.pure_parts`) is inlined as the read, the
  PURE_OPS function and the write its handler would make, with the register offsets as literals;
- a constant is inlined as the bytes its handler would store;
- any other instruction calls its own handler, with its own payload, exactly as the loop would.

A block ends at a branch, a return, a call or vm.fail, and before every branch target. The block
function stands in the code table at the block's first instruction; the loop runs it like any
handler, and the instructions after the first keep their own entries (a branch into the middle of a
block never happens: targets start blocks). What the loop does per instruction stays exact:

- `frame.ip` is where the reference path would leave it: after the block, or set by its branch; on an
  error, one past the instruction that raised, so the loop names that instruction's pc;
- the same handlers, readers, writers and functions run in the same order, so registers, statuses,
  heap events and errors are those of the reference path (tests/test_compiled_blocks.py compares them).

`max_steps` counts single instructions, so a context with a step budget runs the reference path.
The environment variable IREEABI_REFERENCE=1 (or `Context(reference=True)`) forces it everywhere.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from .handlers import HANDLERS
from .numerics import PURE_OPS, _SIGN_BIT_OPS
from .ops_scalar import pure_parts
from .registers import SIZES, WRITE

if TYPE_CHECKING:
    from .registers import Function

# Instructions after which control may not fall through to the next one in the same block.
_ENDS_BLOCK = frozenset({"Branch", "CondBranch", "BranchTable", "Return", "Call", "CallVariadic",
                         "Fail", "Break", "CondBreak"})
_CONSTS = frozenset({"ConstI32", "ConstI64", "ConstF32", "ConstF64"})
_ZEROS = {"ConstI32Zero": 4, "ConstI64Zero": 8, "ConstF32Zero": 4, "ConstF64Zero": 8}


def reference_forced() -> bool:
    """IREEABI_REFERENCE=1 in the environment: every context runs the per-instruction handlers."""
    return os.environ.get("IREEABI_REFERENCE", "") not in ("", "0")


def compile_blocks(fn: "Function") -> list:
    """The function's code table with a generated block function at each block's first
    instruction (the other entries unchanged)."""
    code = list(fn.code)
    starts = {0} | set(fn.block_index.values())
    for i, (_, _, inst) in enumerate(code):
        if inst.op.symbol in _ENDS_BLOCK:
            starts.add(i + 1)
    ordered = sorted(s for s in starts if s < len(code))
    for n, start in enumerate(ordered):
        end = ordered[n + 1] if n + 1 < len(ordered) else len(code)
        if end - start > 1:
            # The loop reads a returning handler's payload from the entry (the returned registers).
            last_handler, last_payload, last_inst = code[end - 1]
            payload = last_payload if last_inst.op.symbol == "Return" else None
            code[start] = (_generate(fn, code, start, end), payload, code[start][2])
    return code


def _generate(fn: "Function", code: list, start: int, end: int) -> Any:
    """One block's function: `run(ctx, frame, _)` over code[start:end]."""
    names: dict[str, Any] = {}

    def bind(value: Any, prefix: str) -> str:
        name = f"{prefix}{len(names)}"
        names[name] = value
        return name

    lines = ["def run(ctx, frame, _):", "    regs = frame.regs", "    k = %d" % start, "    try:"]
    for i in range(start, end):
        handler, payload, inst = code[i]
        symbol = inst.op.symbol
        last = i == end - 1
        if i > start:
            lines.append(f"        k = {i}")
        if symbol not in HANDLERS and symbol in PURE_OPS and symbol not in _SIGN_BIT_OPS:
            f, reads, (writer, woff) = pure_parts(inst)  # as compile_instruction's make_pure
            args = ", ".join(f"{bind(r, 'r')}(regs, {o})[0]" for r, o in reads)
            lines.append(f"        {bind(writer, 'w')}(regs, {woff}, {bind(f, 'f')}({args}))")
        elif symbol in _CONSTS and inst.op.fields[1].kind != "f32":  # (an f32 NaN keeps its bits)
            kind = inst.op.fields[1].kind
            data = bytearray(SIZES[kind])
            WRITE[kind](data, 0, inst.operands["value"])
            off = 4 * inst.operands["result"].ordinal
            lines.append(f"        regs[{off}:{off + len(data)}] = {bytes(data)!r}")
        elif symbol in _ZEROS:
            off = 4 * inst.operands["result"].ordinal
            lines.append(f"        regs[{off}:{off + _ZEROS[symbol]}] = {bytes(_ZEROS[symbol])!r}")
        elif last:
            # The loop's contract: ip past this instruction before its handler runs (a call saves
            # it as the return point; a branch overwrites it).
            lines.append(f"        frame.ip = {i + 1}")
            lines.append(f"        return {bind(handler, 'h')}(ctx, frame, {bind(payload, 'p')})")
            continue
        else:
            lines.append(f"        {bind(handler, 'h')}(ctx, frame, {bind(payload, 'p')})")
        if last:  # inlined: the block falls through to the next one
            lines.append(f"        frame.ip = {end}")
    lines += ["    except BaseException:", "        frame.ip = k + 1", "        raise"]
    namespace = dict(names)
    exec(compile("\n".join(lines), f"<block {fn.name!r}@{start}>", "exec"), namespace)
    run = namespace["run"]
    run.is_block = True  # the loop reads the raising instruction from frame.ip (context._pc)
    return run


__all__ = ["compile_blocks", "reference_forced"]
