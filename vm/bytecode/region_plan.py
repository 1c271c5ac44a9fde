"""Loop regions' register plan: which registers of a region keep their values in Python locals,
and what each block reads before it writes (regions.py writes the region's code from it).

Of the blocks blocks.py puts in one region (those that end in a branch or fall through), the loops
are the strongly connected sets, each split into its inner loops and the rest (`_loops`: the
levels of a loop nest plan their locals apart). In a loop:

- a register used with one width and one kind everywhere in the loop (an i64 loop counter, an f32
  accumulator) is a region local: regions.py reads it from the bytes when the loop is entered,
  writes it back when it is left or before a handler that reads registers, reads it again after
  that handler;
- any other register is a block temporary, written to the bytes at its block's end only when a
  block that follows may read it: `live_in` (liveness over the region's blocks; a handler call
  counts as a read of the registers its operands name, leaving the region as a read of what the
  code outside may read: `outside_reads`), or, when partly overwritten, only if its other registers may be read later
  (`read_later`).

Copies on an edge that leaves a loop are made on the bytes after its locals are written back, so
they do not constrain the loop's locals.

An instruction regions.py writes inline has its register accesses listed by `accesses`, as its op
declares them beside its handler (handlers.region_accesses); any other is `Opaque` (a handler call,
which may read and write any register).
"""
from __future__ import annotations

from typing import Any

from .handlers import REGION_ACCESSES
from ..ops import F32, F64, M32, M64, U32, U64
from .ops_control import BRANCHES, branch_edges
from . import isa

# register bank -> (registers, kind of value a local holds)
BANKS = {"i32": (1, "int"), "b32": (1, "int"), "i64": (2, "int"), "b64": (2, "int"),
         "f32": (1, "f32"), "f64": (2, "f64")}
INT_STRUCTS = {1: U32, 2: U64}  # registers -> the struct of an int local's unsigned bits
FLOAT_STRUCTS = {"f32": F32, "f64": F64}
SIGN_BITS = {"i32": 1 << 31, "i64": 1 << 63}  # banks read as signed: the sign bit to fold
MASKS = {1: M32, 2: M64}  # registers -> the mask of an int local's bits


class Opaque(Exception):
    """An instruction the region calls as a handler (it may read and write any register)."""


def accesses(ctx: Any, inst: Any) -> list[tuple[str, int, int, str]]:
    """The register accesses of an instruction the region writes inline, in order: (r/w, first
    register, registers, kind: int, f32, f64 or raw = bits copied), as its op declares them
    (handlers.region_accesses, beside its handler). Raises Opaque for the others."""
    declared = REGION_ACCESSES.get(inst.op.symbol)
    if declared is None:
        raise Opaque
    return declared(ctx, inst)


def is_read(field: Any) -> bool:
    return field.access == isa.READ


def moves(pairs: Any) -> list[tuple]:
    """Branch operand copies as moves: ("ref", src, dst) or ("i32", src, dst, registers), two
    adjacent copies of consecutive registers joined into one two-register move."""
    out: list[tuple] = []
    pairs = list(pairs)
    i = 0
    while i < len(pairs):
        src, dst = pairs[i]
        if src.is_ref:
            out.append(("ref", src, dst.ordinal))
            i += 1
            continue
        if i + 1 < len(pairs):
            s2, d2 = pairs[i + 1]
            if not s2.is_ref and s2.ordinal == src.ordinal + 1 and d2.ordinal == dst.ordinal + 1 \
                    and abs(src.ordinal - dst.ordinal) >= 2:
                out.append(("i32", src.ordinal, dst.ordinal, 2))
                i += 2
                continue
        out.append(("i32", src.ordinal, dst.ordinal, 1))
        i += 1
    return out


class RegionPlan:
    """Which registers of a region are region locals, and what each block reads before it writes
    (for the temporaries' write-backs)."""

    def __init__(self, ctx: Any, fn: Any, code: list, blocks: list) -> None:
        self.blocks = blocks
        inside = {s for s, _ in blocks}
        self.acc: dict[int, list | None] = {}
        self.succ: dict[int, list[int | None]] = {}
        edge_moves: dict[int, list[tuple[int, list]]] = {}  # block -> [(target, its i32 moves)]
        for s, e in blocks:
            for i in range(s, e):
                try:
                    self.acc[i] = accesses(ctx, code[i][2])
                except Opaque:
                    self.acc[i] = None
            inst = code[e - 1][2]
            symbol = inst.op.symbol
            if symbol in BRANCHES:
                targets = [(fn.block_index[dest], ops) for dest, ops in branch_edges(inst)]
            else:
                targets = [(e, ())]
            edge_moves[s] = [(t, [m for m in moves(ops) if m[0] == "i32"]) for t, ops in targets]
            self.succ[s] = [t if t in inside else None for t, _ in targets]
        # The loops: strongly connected sets of blocks. Each has its own region locals, read from the
        # bytes where control enters it and written back where it leaves (a register may hold other
        # values, of another width or kind, outside the loop: a preheader's constants).
        self.loop_of: dict[int, int] = {}
        self.locals_of: list[dict[tuple[int, int], str]] = []
        self.written_of: list[list[tuple[int, int]]] = []
        self.depth: dict[int, int] = {}  # block -> how many loops it is in
        for members, depth in _loops(self.succ):
            self.depth.update(dict.fromkeys(members, depth))
            shapes: dict[int, set] = {}  # register -> {(first, registers)} touching it
            kinds: dict[tuple[int, int], set] = {}
            written: set[tuple[int, int]] = set()
            move_edges: list[tuple] = []
            for s, e in blocks:
                if s not in members:
                    continue
                for i in range(s, e):
                    for rw, first, n, kind in self.acc[i] or ():
                        self._shape(shapes, kinds, first, n, kind)
                        if rw == "w":
                            written.add((first, n))
                # Copies on an edge that leaves the loop are made on the bytes, after the locals are
                # written back (regions.py): only the loop's own edges constrain its locals.
                for _, src, dst, n in (m for t, ms in edge_moves[s] if t in members for m in ms):
                    self._shape(shapes, kinds, src, n, "raw")
                    self._shape(shapes, kinds, dst, n, "raw")
                    written.add((dst, n))
                    move_edges.append((src, dst, n))
            # A loop local: every access of the register in the loop has the same first register and
            # width, and at most one kind besides raw.
            local: dict[tuple[int, int], str] = {}
            for (first, n), ks in kinds.items():
                if any(shapes[r] != {(first, n)} for r in range(first, first + n)):
                    continue
                real = ks - {"raw"}
                if len(real) > 1:
                    continue
                local[(first, n)] = real.pop() if real else "int"
            # A move into a local must come from a local of the same kind (no bits of unknown kind
            # enter a local, and no NaN check is needed in the middle of a branch).
            changed = True
            while changed:
                changed = False
                for src, dst, n in move_edges:
                    if (dst, n) in local and local.get((src, n)) != local[(dst, n)]:
                        del local[(dst, n)]
                        changed = True
            for s in members:
                self.loop_of[s] = len(self.locals_of)
            self.locals_of.append(local)
            self.written_of.append(sorted(k for k in local if k in written))
        self._liveness(fn, code, outside_reads(fn, code, inside, blocks))

    def locals_at(self, start: int) -> tuple[dict, list]:
        """The region locals of the loop block `start` is in (none outside loops), and those of
        them the loop writes."""
        loop = self.loop_of.get(start)
        return ({}, []) if loop is None else (self.locals_of[loop], self.written_of[loop])

    @staticmethod
    def _shape(shapes: dict, kinds: dict, first: int, n: int, kind: str) -> None:
        for r in range(first, first + n):
            shapes.setdefault(r, set()).add((first, n))
        kinds.setdefault((first, n), set()).add(kind)

    def _liveness(self, fn: Any, code: list, outside: tuple[set, set] | None) -> None:
        """live_in[block start]: registers a block may read before writing them. Calling a handler
        reads the registers its operands name (`named_registers`); leaving the region reads
        `exit_live`: the registers the function's instructions outside the region name
        (`outside_reads`), and those the region's blocks entered from outside may read; every
        register when an outside operand is not understood."""
        every = frozenset(range(fn.i32_count))
        uses: dict[int, set] = {}
        defs: dict[int, set] = {}
        for s, e in self.blocks:
            u: set = set()
            d: set = set()
            for i in range(s, e):
                acc = self.acc[i]
                if acc is None:  # a handler: it reads the registers its operands name
                    named = named_registers(fn, code[i][2])
                    if named is None:
                        u |= every - d
                        break
                    u |= named[0] - d
                    continue
                for rw, first, n, _ in acc:
                    regs = set(range(first, first + n))
                    if rw == "r":
                        u |= regs - d
                    else:
                        d |= regs
            else:
                inst = code[e - 1][2]
                if inst.op.symbol in BRANCHES:  # the copies read their sources
                    for _, ops in branch_edges(inst):
                        for src, _dst in ops:
                            if not src.is_ref and src.ordinal not in d:
                                u.add(src.ordinal)
            uses[s], defs[s] = u, d
        self.every = every
        # Leaving the region: the code outside may read what it names, and come back into the
        # region's blocks it enters (their live_in, which depends on exit_live: to a fixed point).
        reads, entered = outside if outside is not None else (set(every), set())
        self.exit_live = frozenset(reads)
        while True:
            live: dict[int, set] = {s: set() for s, _ in self.blocks}
            changed = True
            while changed:
                changed = False
                for s, _ in self.blocks:
                    new = uses[s] | (self.live_out(s, live) - defs[s])
                    if new != live[s]:
                        live[s] = new
                        changed = True
            grown = self.exit_live.union(*(live[s] for s in entered))
            if grown == self.exit_live:
                break
            self.exit_live = frozenset(grown)
        self.live_in = live

    def read_later(self, code: list, i: int, end: int, start: int, regs: set) -> bool:
        """Whether any of `regs` may be read after instruction i of block [start, end) before it is
        written (a handler call reads every register; the branch copies read their sources)."""
        regs = set(regs)
        for j in range(i + 1, end):
            acc = self.acc[j]
            if acc is None:
                return True
            if any(rw == "r" and regs.intersection(range(f, f + n)) for rw, f, n, _ in acc):
                return True
            for rw, f, n, _ in acc:
                if rw == "w":
                    regs.difference_update(range(f, f + n))
            if not regs:
                return False
        inst = code[end - 1][2]
        if inst.op.symbol in BRANCHES:
            if any(not src.is_ref and src.ordinal in regs for _, ops in branch_edges(inst) for src, _ in ops):
                return True
        return bool(regs & self.live_out(start))

    def live_out(self, start: int, live: dict | None = None) -> set:
        live = self.live_in if live is None else live
        out: set = set()
        for t in self.succ[start]:
            out |= self.exit_live if t is None else live[t]
        return out


def named_registers(fn: Any, inst: Any) -> tuple[set[int], set[int]] | None:
    """The i32-bank registers an instruction's operands name, read or written (and the register
    after each: register-list entries carry no width), and the code indices of the blocks it may
    branch to; None when an operand form is not understood. A handler reads no register but these:
    liveness counts them as read by an instruction run by its handler (and none as overwritten)."""
    regs: set[int] = set()
    targets: set[int] = set()
    for f in inst.op.fields:
        value = inst.operands.get(f.name)
        if f.kind in isa.REGISTER_KINDS:
            named = [value]
        elif f.kind == isa.REG_LIST:
            named = [] if f.name == "segment_sizes" else list(value)
        elif f.kind == isa.BRANCH_OPERANDS:
            named = [src for src, _ in value]
        elif f.kind == isa.BRANCH_TABLE_CASES:
            named = [src for case in value for src, _ in case[1]]
            targets.update(fn.block_index.get(case[0], -1) for case in value)
        elif f.kind == isa.BRANCH_TARGET:
            targets.add(fn.block_index.get(value, -1))
            continue
        elif f.kind in isa.IMMEDIATE_SIZES or f.kind == isa.STRING:
            continue
        else:
            return None
        for reg in named:
            if not reg.is_ref:
                regs.update((reg.ordinal, reg.ordinal + 1))
    return regs, targets


def outside_reads(fn: Any, code: list, inside: set[int], blocks: list) -> tuple[set[int], set[int]] | None:
    """What the function's instructions outside the region may read (`named_registers`; nothing
    outside counts as overwriting a register), and the region's blocks they may enter: each one
    that follows an outside instruction, is the target of one, or starts the function. None when
    an operand form is not understood."""
    region = {i for s, e in blocks for i in range(s, e)}
    reads: set[int] = set()
    entered: set[int] = {0}
    for i, (_, _, inst) in enumerate(code):
        if i in region:
            continue
        named = named_registers(fn, inst)
        if named is None:
            return None
        reads |= named[0]
        entered |= named[1] | {i + 1}
    return reads, entered & inside


def _loops(succ: dict[int, list[int | None]], depth: int = 1) -> list[tuple[set[int], int]]:
    """The loops, innermost apart: each strongly connected set of blocks with a cycle, less the
    loops inside it (those of the set without the edges back to its head, `_head`), so that
    a register reused with another width or kind in an outer or inner loop still is a local of
    each (control crossing from one set to another writes the locals back and reads the others).
    Each set comes with its nesting depth."""
    out: list[tuple[set[int], int]] = []
    for members, _ in _cycles(succ):
        head = _head(succ, members)
        inner = _loops({v: [t for t in succ[v] if t in members and t != head] for v in sorted(members)},
                       depth + 1)
        out.extend(inner)
        out.append((members.difference(*(m for m, _ in inner)), depth))
    return out


def _head(succ: dict[int, list[int | None]], members: set[int]) -> int:
    """A loop's head: its first block entered from outside it (the loop's header; the first block
    Tarjan's search reached would depend on the order it visits blocks in, and a body block taken
    for the head splits an inner loop in two, each iteration crossing between their locals)."""
    entries = {t for v, ts in succ.items() if v not in members for t in ts if t in members}
    return min(entries or members)


def _cycles(succ: dict[int, list[int | None]]) -> list[tuple[set[int], int]]:
    """The strongly connected sets of blocks that contain a cycle, each with its first block
    reached (Tarjan's algorithm, iterative)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    out: list[tuple[set[int], int]] = []
    counter = 0
    for root in succ:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, pos = work.pop()
            if pos == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack.add(v)
            edges = [t for t in succ[v] if t is not None]
            if pos < len(edges):
                work.append((v, pos + 1))
                w = edges[pos]
                if w not in index:
                    work.append((w, 0))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            for w in edges:
                if w in on_stack and index[w] > index[v]:
                    low[v] = min(low[v], low[w])
            if low[v] == index[v]:
                members = set()
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    members.add(w)
                    if w == v:
                        break
                if len(members) > 1 or v in succ[v]:
                    out.append((members, v))
    return out


__all__ = ["RegionPlan", "Opaque", "accesses", "named_registers", "outside_reads", "moves", "is_read", "BANKS",
           "INT_STRUCTS", "FLOAT_STRUCTS", "SIGN_BITS", "MASKS"]
