"""Compiled basic blocks: the fast path of the interpreter, generated from the per-instruction handlers.

The reference path runs one handler per instruction (dispatch.py's loop: fetch, call, look at the
answer). Here each basic block of a function becomes one generated Python function that runs the
block's instructions in order, with the loop's per-instruction work gone:

- an op that declares a block writer beside its handler (handlers.block_writer: the pure ops,
  constants, element loads and stores) is inlined as that writer writes it: the reads, the PURE_OPS
  function and the write its handler would make, the bytes a constant's handler would store, a
  load's or store's bounds check and bytes, with the register offsets as literals;
- any other instruction calls its own handler, with its own payload, exactly as the loop would.

This module names no op: which ops end a block and where a branch goes are ops_control.py's.

A block ends at a branch, a return, a call (yieldable ones too), vm.yield or vm.fail, and before
every branch target. The block
function stands in the code table at the block's first instruction; the loop runs it like any
handler, and the instructions after the first keep their own entries (a branch into the middle of a
block never happens: targets start blocks). What the loop does per instruction stays exact:

- `frame.ip` is where the reference path would leave it: after the block, or set by its branch; on an
  error, one past the instruction that raised, so the loop names that instruction's pc;
- the same handlers, readers, writers and functions run in the same order, so registers, statuses,
  heap events and errors are those of the reference path (tests/vm/bytecode/test_compiled_blocks.py compares them).

`max_steps` counts single instructions, so a context with a step budget runs the reference path.
The environment variable IREEABI_REFERENCE=1 (or `Context(reference=True)`) forces it everywhere.
"""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from ...abi.generated import define
from .handlers import BLOCK_WRITERS
from ..ops import I32, U64, PURE_NAMES
from .ops_buffer import buffer_operand, check_elements, element_access
from .ops_control import BRANCHES, ENDS_BLOCK, RETURNS, branch_condition, branch_edges
from .registers import retain_or_move, write_i32
from .region_plan import RegionPlan
from .regions import LocalsEmitter, dispatch_tree
from .value_ranges import speculated

if TYPE_CHECKING:
    from .registers import Function

# What one generated function may cover (issue 41: memory per instruction bounded). Python's
# compiler holds a function's whole tree while it compiles it, about 15 KB per VM instruction: a
# straight run of 100,000 instructions peaked at 1.5 GB. A longer run is cut into functions of at
# most MAX_RUN instructions, each falling through to the next (the loop runs them in turn); a region
# of more than MAX_REGION instructions is left to such runs.
MAX_RUN = 256
MAX_REGION = 4096


def compile_blocks(ctx: Any, fn: "Function") -> list:
    """The function's code table with generated functions at block starts (the other entries
    unchanged), for the data model of `ctx`: one region function for all blocks that end in a
    branch or fall through (the loops), one block function for each other block."""
    code = list(fn.code)
    starts = {0} | set(fn.block_index.values())
    for i, (_, _, inst) in enumerate(code):
        if inst.op.symbol in ENDS_BLOCK:
            starts.add(i + 1)
    ordered = sorted(s for s in starts if s < len(code))
    blocks = [(c, min(c + MAX_RUN, e)) for s, e in
              ((s, ordered[n + 1] if n + 1 < len(ordered) else len(code)) for n, s in enumerate(ordered))
              for c in range(s, e, MAX_RUN)]
    # The region: blocks that end in a branch, and blocks that fall through into the region.
    region_starts: set[int] = set()
    for n in range(len(blocks) - 1, -1, -1):
        s, e = blocks[n]
        last = code[e - 1][2].op.symbol
        if last in BRANCHES or (last not in ENDS_BLOCK and e in region_starts):
            region_starts.add(s)
    region = [b for b in blocks if b[0] in region_starts]
    if sum(e - s for s, e in region) > MAX_REGION:
        region, region_starts = [], set()
    if region:
        # Registers as locals (region_plan.py plans them, regions.py writes the code), with this
        # module's byte-register region as its fallback (and its only form on a big-endian host:
        # regions.py reads elements through native views).
        run = fallback = _Emitter(ctx, fn, code).region(region)
        if sys.byteorder == "little":
            sound, ranges, guards = speculated(fn, code)
            plan = RegionPlan(ctx, fn, code, region)
            # the region without the arguments' assumption, for a call whose values break it:
            # made the first time one does, of the handlers (the code table's block starts are
            # the regions by then)
            handlers = list(code)
            unassumed = _OnFirstCall(lambda: LocalsEmitter(_Emitter(ctx, fn, handlers), plan, fallback,
                                                           sound).region())
            run = LocalsEmitter(_Emitter(ctx, fn, code), plan, fallback, ranges, guards, unassumed).region()
        for s, _ in region:
            code[s] = (run, None, code[s][2])
    ends = {s: e for s, e in blocks}
    for start, end in blocks:
        if start in region_starts:
            continue
        # Through the blocks it falls into (none of them in the region), to a call, a return, a
        # fail or a branch table: one straight run (of at most MAX_RUN instructions).
        while end in ends and code[end - 1][2].op.symbol not in ENDS_BLOCK and ends[end] - start <= MAX_RUN:
            end = ends[end]
        if end - start > 1:
            # The loop reads a returning handler's payload from the entry (the returned registers).
            last_handler, last_payload, last_inst = code[end - 1]
            payload = last_payload if last_inst.op.symbol in RETURNS else None
            code[start] = (_Emitter(ctx, fn, code).block(start, end), payload, code[start][2])
    return code


class _OnFirstCall:
    """A generated function made when it is first called (the region a failed entry check runs)."""

    def __init__(self, make: Any) -> None:
        self.make, self.run = make, None

    def __call__(self, ctx: Any, frame: Any, payload: Any) -> Any:
        if self.run is None:
            self.run = self.make()
        return self.run(ctx, frame, payload)


class _Emitter:
    """Python source for runs of instructions, and the values it names."""

    def __init__(self, ctx: Any, fn: "Function", code: list) -> None:
        self.ctx, self.fn, self.code = ctx, fn, code
        self.names: dict[str, Any] = {"u64": U64.unpack_from, "i32": I32.unpack_from,
                                      "check": check_elements, "null": buffer_operand,
                                      "write_i32": write_i32, "retain_or_move": retain_or_move,
                                      **PURE_NAMES}
        # Ref ordinals whose buffer (local `buf<ordinal>`) was dereferenced earlier in the same
        # block with nothing since that could change memory or registers of refs (only pure ops,
        # constants and loads ran): the next access reuses it, as deref would return the same.
        self.derefs: set[int] = set()
        # In a region function: the ref ordinals its buffer accesses use, each with a runtime memo
        # (`buf<ordinal>`, None when unknown) of its buffer and the header span deref reads. It
        # holds across blocks and iterations: nothing in a region frees memory or changes a ref
        # register except handler calls and ref remaps (which forget every buffer), and a store
        # forgets the buffers whose header it overlaps.
        self.memo: tuple[int, ...] | None = None

    def bind(self, value: Any, prefix: str) -> str:
        name = f"{prefix}{len(self.names)}"
        self.names[name] = value
        return name

    def forget(self, lines: list, pad: str) -> None:
        """After something that may free memory or change ref registers: no buffer is known."""
        self.derefs.clear()
        if self.memo:
            lines.append(pad + " = ".join(f"buf{m}" for m in self.memo) + " = None")

    def finish(self, lines: list, where: str) -> Any:
        run = define("\n".join(lines), "block", f"{self.fn.name!r}@{where}", dict(self.names), "run")
        run.is_block = True  # the loop reads the raising instruction from frame.ip (context._pc)
        return run

    def prologue(self) -> list:
        return ["def run(ctx, frame, _):", "    regs = frame.regs", "    refs = frame.refs",
                "    deref = ctx.buffers.deref"]

    def block(self, start: int, end: int) -> Any:
        """One block's function: `run(ctx, frame, _)` over code[start:end]."""
        lines = self.prologue() + [f"    k = {start}", "    try:"]
        pad = " " * 8
        self.derefs.clear()
        for i in range(start, end):
            handler, payload, inst = self.code[i]
            if i > start:
                lines.append(f"{pad}k = {i}")
            if i < end - 1 or not self.inlined(i, lines, pad):
                if i == end - 1:
                    # The loop's contract: ip past this instruction before its handler runs (a
                    # call saves it as the return point; a branch overwrites it).
                    lines.append(f"{pad}frame.ip = {i + 1}")
                    lines.append(f"{pad}return {self.bind(handler, 'h')}(ctx, frame, {self.bind(payload, 'p')})")
                else:
                    self.instruction(i, lines, pad)
            else:  # inlined: the block falls through to the next one
                lines.append(f"{pad}frame.ip = {end}")
        lines += ["    except BaseException:", "        frame.ip = k + 1", "        raise"]
        return self.finish(lines, str(start))

    def region(self, blocks: list) -> Any:
        """One function for blocks that end in a branch or fall through: it runs from the block at
        frame.ip - 1 (the loop advanced it) from block to block, and returns to the loop (frame.ip
        set) when control reaches a block outside the region."""
        inside = {s for s, _ in blocks}
        accessed = (element_access(self.ctx, self.code[i][2]) for s, e in blocks for i in range(s, e))
        self.memo = tuple(sorted({access[0] for access in accessed if access is not None}))
        lines = self.prologue() + ["    ip = frame.ip - 1", "    k = ip", "    span = ctx.buffers.header_span"]
        lines += [f"    buf{m} = None" for m in self.memo]
        lines += ["    try:", "        while True:"]
        self._tree(blocks, inside, lines, " " * 12)
        lines += ["    except BaseException:", "        frame.ip = k + 1", "        raise"]
        return self.finish(lines, "region " + ",".join(str(s) for s, _ in blocks))

    def _tree(self, blocks: list, inside: set, lines: list, pad: str) -> None:
        """Dispatch on ip by bisection over the blocks' starts, then each block's body."""
        dispatch_tree(blocks, lines, pad, lambda start, end, p: self._body(start, end, inside, lines, p))

    def _body(self, start: int, end: int, inside: set, lines: list, pad: str) -> None:
        self.derefs.clear()  # a block is entered from several places
        for i in range(start, end - 1):
            lines.append(f"{pad}k = {i}")
            self.instruction(i, lines, pad)
        lines.append(f"{pad}k = {end - 1}")
        inst = self.code[end - 1][2]
        symbol = inst.op.symbol
        condition = branch_condition(inst) if symbol in BRANCHES else None
        if condition is not None:
            (true_dest, true_pairs), (false_dest, false_pairs) = branch_edges(inst)
            lines.append(f"{pad}if i32(regs, {4 * condition.ordinal})[0]:")
            self._jump(self.fn.block_index[true_dest], true_pairs, inside, lines, pad + "    ")
            lines.append(f"{pad}else:")
            self._jump(self.fn.block_index[false_dest], false_pairs, inside, lines, pad + "    ")
        elif symbol in BRANCHES:
            (dest, pairs), = branch_edges(inst)
            self._jump(self.fn.block_index[dest], pairs, inside, lines, pad)
        else:
            self.instruction(end - 1, lines, pad)
            self._jump(end, (), inside, lines, pad)

    def _jump(self, target: int, pairs: Any, inside: set, lines: list, pad: str) -> None:
        """ops_control.remap's copies in order, then the next block: in the region, or the loop's."""
        for src, dst in pairs:
            if src.is_ref:
                self.forget(lines, pad)
                lines.append(f"{pad}retain_or_move(ctx, refs, {self.bind(src, 'g')}, refs, {dst.ordinal})")
            else:
                s, d = 4 * src.ordinal, 4 * dst.ordinal
                lines.append(f"{pad}regs[{d}:{d + 4}] = regs[{s}:{s + 4}]")
        if target in inside:
            lines.append(f"{pad}ip = {target}")
            lines.append(f"{pad}continue")
        else:
            lines.append(f"{pad}frame.ip = {target}")
            lines.append(f"{pad}return None")

    def instruction(self, i: int, lines: list, pad: str) -> None:
        """An instruction that does not end its block: inlined, or its handler called."""
        if not self.inlined(i, lines, pad):
            handler, payload, _ = self.code[i]
            lines.append(f"{pad}{self.bind(handler, 'h')}(ctx, frame, {self.bind(payload, 'p')})")
            self.forget(lines, pad)

    def inlined(self, i: int, lines: list, pad: str) -> bool:
        """Append the inline form of instruction i, if its op has one (its block writer, beside its
        handler: handlers.block_writer)."""
        writer = BLOCK_WRITERS.get(self.code[i][2].op.symbol)
        return writer is not None and writer(self, i, lines, pad)


__all__ = ["compile_blocks"]
