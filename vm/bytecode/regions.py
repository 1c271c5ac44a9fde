"""Loop regions with registers as Python locals: the fast path of blocks.py for blocks that branch.

blocks.py compiles the blocks that end in a branch (the loops) into one region function that reads
and writes the frame's register bytes at every instruction. Here the same region keeps register
values in Python locals instead, and touches the bytes only where something else could look at them.
Which registers are region locals (one width and kind throughout a loop: read where the loop is
entered, written back where it is left or before a handler) and which are block temporaries
(written to the bytes at a block's end only where a later block may read them) is region_plan.py's
`RegionPlan`; this module writes the region function from it.

What the locals hold is what the reference path would read from the bytes: integers as their
unsigned bits, floats as the Python float the f32/f64 reader returns. Writing them back gives the
bytes the reference path writes, with one exception handled here: an f32 signaling NaN (Python's f32
reader quiets it; a quiet NaN keeps its bits). A signaling NaN loaded into an f32 local leaves the
locals (written back), runs that load's own handler, and returns to the loop; a region entered with
a signaling NaN in an f32 region local runs blocks.py's byte-register region instead. So a float
local never holds a signaling NaN, which lets min/max/select/abs/neg of held f32 values be written
inline (their handlers copy or mask the register bits).

Integers known by value_ranges.py (the interval of each register at each instruction) are written
without what their range makes idle: no mask on an op that cannot wrap, no sign conversion of a
value known nonnegative, Python's // and % for a division by a divisor known positive (C's
truncation from the magnitude); a value that may be negative but cannot wrap is held as itself, its
signed value (`self.signed`, a temporary of kind "sint"), back to its bits where a block's end or the
bytes need them. The intervals assume the function's i32 arguments nonnegative where that narrows
them: the region checks the values they rest on where it is entered and runs the region made
without the assumption otherwise. A loop's adds of its invariants are computed where the loop is
entered (`#hoist`). What an instruction becomes is its op's region writer, declared beside its
handler (handlers.region_writer; the pure ops' in ops_scalar.py from vm/ops.py's PURE_EXPRESSIONS,
a C library function called through `c_call`: the same C function by a cheaper call); this module
is the machinery they write with (locals and temporaries: `read`, `write`, `raw_target`, `held`;
the buffer memo: `remember`; `call_handler`) and names no op. Each loop head runs in a `while` of its own, and
twice when its iterations come back with buffers remembered: a copy for when they are remembered
at the head, without the memo test at each access, and one for when some is not. A handler call writes the
locals back and reads them again after; only a handler that may touch more than registers
(ops_scalar.REGISTER_ONLY) makes the region forget its remembered buffers. Errors leave frame.ip one past
the instruction that raised, as blocks.py's do (a frame's register bytes are not read after an error).
"""
from __future__ import annotations

import ctypes
import functools
from array import array
from typing import Any


from .handlers import REGION_WRITERS
from .ops_buffer import element_access, element_offset
from .ops_control import BRANCHES, MARKERS, NO_FALLTHROUGH, branch_condition, branch_edges
from .ops_scalar import REGISTER_ONLY
from ..ops import F32, F64, F32_QUIET_BIT, I32, I64, U32, U64, is_snan32
from .value_ranges import ValueRanges, block_writes
from .region_plan import BANKS, INT_STRUCTS, MASKS, SIGN_BITS, RegionPlan, moves


def dispatch_tree(blocks: list, lines: list, pad: str, body: Any) -> None:
    """Dispatch on `ip` by bisection over the blocks' starts; `body(start, end, pad)` writes each
    block (blocks.py's byte-register regions and this module's both dispatch this way)."""
    if len(blocks) > 1:
        mid = len(blocks) // 2
        lines.append(f"{pad}if ip < {blocks[mid][0]}:")
        dispatch_tree(blocks[:mid], lines, pad + "    ", body)
        lines.append(f"{pad}else:")
        dispatch_tree(blocks[mid:], lines, pad + "    ", body)
        return
    body(blocks[0][0], blocks[0][1], pad)


def tag(lines: list, first: int, i: int, symbol: str) -> None:
    """End each line from `first` on that has no comment yet with `# <pc> <op>`: a reader of the
    dumped text, and bench_kernels.py's --spy (which counts py-spy's samples per op), see which
    instruction each line was written for (the lines of a branch include its edges' moves and the
    locals written back or read there)."""
    for n in range(first, len(lines)):
        if "#" not in lines[n]:
            lines[n] = f"{lines[n]}  # {i} {symbol}"


def _balanced(text: str) -> bool:
    """Whether every parenthesis in `text` closes inside it (so `int(text)` is one call)."""
    depth = 0
    for c in text:
        depth += c == "("
        depth -= c == ")"
        if depth < 0:
            return False
    return depth == 0


_C_TYPES = {ctypes.c_float: "float", ctypes.c_double: "double"}


@functools.lru_cache(maxsize=None)
def _ffi() -> Any:
    """cffi's FFI, imported when a region first calls C (a run of a program without libm ops does
    not pay for importing cffi: tests/cli/test_startup_imports.py pins it)."""
    import cffi
    return cffi.FFI()


def c_call(f: Any) -> Any:
    """The C library function a PURE_OPS entry calls through ctypes, called through a cffi
    function pointer to the same address instead: the same symbol (the version numerics bound),
    the same conversions (a C cast of the Python float to the argument type, the C result widened
    to a Python float), at about half of ctypes' cost per call. Anything else is returned as it is."""
    if not isinstance(f, ctypes._CFuncPtr):
        return f
    types = [_C_TYPES.get(t) for t in (f.restype, *(f.argtypes or ()))]
    if None in types or not f.argtypes:
        return f
    address = ctypes.cast(f, ctypes.c_void_p).value
    return _ffi().cast(f"{types[0]}(*)({', '.join(types[1:])})", address)


class LocalsEmitter:
    """The region function with registers as locals (see the module docstring). `base` is
    blocks.py's emitter of the same region (its names, memo and fallback)."""

    def __init__(self, base: Any, plan: RegionPlan, fallback: Any, ranges: ValueRanges,
                 guards: dict | None = None, unassumed: Any = None) -> None:
        self.b = base
        self.plan = plan
        self.ranges = ranges  # what the integer operands may hold (no mask where they stay in range)
        # block start -> [(slot, interval)] the ranges assume where the region is entered there
        # (value_ranges.speculated): checked on entry, `unassumed` (the region made without them)
        # runs if one fails
        self.guards = guards or {}
        self.unassumed = unassumed
        # loop -> [(name, expression)] computed where the loop's locals are read (`#hoist <loop>`
        # marks the place): its invariant index expressions, out of the loop
        self.hoisted: dict[int, list[tuple[str, str]]] = {}
        self.skip: int | None = None  # an instruction written with the one before it
        self.fallback = fallback
        self.code = base.code
        self.fn = base.fn
        self.ctx = base.ctx
        self.temps: dict[tuple[int, int], tuple[str, str, bool]] = {}  # (first, n) -> (name, kind, dirty)
        self.valid: set[int] = set()  # buffers remembered on every path to the code being written
        self.views: set[tuple[int, str]] = set()  # (buffer ordinal, format) of the typed views indexed
        self.last_compare: tuple | None = None  # (line, temporary, comparison, register) just written
        self.cur: tuple[int, int] | None = None  # (instruction, its block's end) being written
        self.biased: dict[str, tuple[str, str]] = {}  # signed read of bits -> (its sign-flipped bits, the bits)
        self.local: dict[tuple[int, int], str] = {}  # the current block's loop's locals
        self.written: list[tuple[int, int]] = []
        # int locals holding their signed value (not their bits) in the block being written: a value
        # ValueRanges knows, which may be negative (no wrap: a temporary of kind "sint" likewise)
        self.signed: set[tuple[int, int]] = set()
        names = base.names
        names.update({"F32A": array("f", [0.0]), "F64A": array("d", [0.0])})
        for n in (1, 2):
            names[f"UI{n}"] = INT_STRUCTS[n].unpack_from
            names[f"PI{n}"] = INT_STRUCTS[n].pack_into
            names[f"PS{n}"] = (I32 if n == 1 else I64).pack_into
            names[f"SI{n}"] = (I32 if n == 1 else I64).unpack_from
        names.update({"Uf32": F32.unpack_from, "Pf32": F32.pack_into, "Uf64": F64.unpack_from,
                      "Pf64": F64.pack_into, "Uh": __import__("struct").Struct("<H").pack_into,
                      "is_snan32": is_snan32})

    # -- names --------------------------------------------------------------------------------------

    @staticmethod
    def lname(first: int, n: int) -> str:
        return f"L{first}_{n}"

    # -- moving values between locals and bytes ------------------------------------------------------

    def load_stmt(self, name: str, first: int, n: int, kind: str) -> str:
        if kind == "int":
            return f"{name} = UI{n}(regs, {4 * first})[0]"
        return f"{name} = U{kind}(regs, {4 * first})[0]"

    def store_stmt(self, name: str, first: int, n: int, kind: str) -> str:
        if kind == "int":
            return f"PI{n}(regs, {4 * first}, {name})"
        if kind == "sint":
            return f"PS{n}(regs, {4 * first}, {name})"
        return f"P{kind}(regs, {4 * first}, {name})"

    def flush_locals(self, lines: list, pad: str) -> None:
        """Every local the loop writes, to the bytes. An int local a block left holding a signed
        value (dead there, so not brought back to its bits) may still be negative: its bits."""
        for first, n in self.written:
            kind = self.local[(first, n)]
            name = self.lname(first, n)
            if (first, n) in self.signed:
                kind = "sint"
            elif kind == "int":
                name = f"{name} & {MASKS[n]}"
            lines.append(pad + self.store_stmt(name, first, n, kind))

    def flush_temps(self, lines: list, pad: str, live: set | None = None, forget: bool = True) -> None:
        for (first, n), (name, kind, dirty) in list(self.temps.items()):
            if dirty and (live is None or any(r in live for r in range(first, first + n))):
                lines.append(pad + self.store_stmt(name, first, n, kind))
        if forget:
            self.temps.clear()

    def reload_locals(self, lines: list, pad: str, resume: int | None, local: dict | None = None) -> None:
        """Read every loop local from the bytes; an f32 NaN leaves the region at `resume` (None: run
        the fallback region instead, at entry)."""
        nan = []
        local = self.local if local is None else local
        for (first, n), kind in sorted(local.items()):
            name = self.lname(first, n)
            self.signed.discard((first, n))
            lines.append(pad + self.load_stmt(name, first, n, kind))
            if kind == "f32":
                nan.append((name, 4 * first))
        loop = next((x for x, m in enumerate(self.plan.locals_of) if m is local and m), None)
        if loop is not None:
            lines.append(f"{pad}#hoist {loop}")  # the loop's invariant expressions (region() fills it in)
        if nan:
            test = " or ".join(f"({x} != {x} and not UI1(regs, {o})[0] & {F32_QUIET_BIT})" for x, o in nan)
            if resume is None:
                lines.append(f"{pad}if {test}: return {self.b.bind(self.fallback, 'fb')}(ctx, frame, _)")
            else:
                lines.append(f"{pad}if {test}:")
                lines.append(f"{pad}    frame.ip = {resume}")
                lines.append(f"{pad}    return None")

    def drop_overlapping(self, first: int, n: int, lines: list, pad: str, write: bool) -> None:
        """Before a bytes access of registers [first, first + n): temporaries over them are
        written back (a read must see them) and, for a write, forgotten."""
        for key, (name, kind, dirty) in list(self.temps.items()):
            f, m = key
            if f < first + n and first < f + m:
                if write and f >= first and f + m <= first + n:
                    del self.temps[key]  # overwritten whole: its value is never read
                    continue
                if write and dirty and self.cur is not None and not self.plan.read_later(
                        self.code, self.cur[0], self.cur[1], self.start,
                        set(range(f, f + m)) - set(range(first, first + n))):
                    del self.temps[key]  # its registers left are never read again
                    continue
                if dirty:
                    lines.append(pad + self.store_stmt(name, f, m, kind))
                    self.temps[key] = (name, kind, False)
                if write or key != (first, n):
                    del self.temps[key]

    # -- reads and writes of one operand ------------------------------------------------------------

    def read(self, first: int, n: int, bank: str, lines: list, pad: str, nonneg: bool = False) -> str:
        """An expression of the register's value as the reference reader of `bank` returns it
        (`nonneg`: the value is known nonnegative, so its bits are it)."""
        _, kind = BANKS[bank]
        name = None
        held = self.held(first, n)
        if held is not None and (first, n) in self.local:
            assert held[1] == kind or kind == "int" == self.local[(first, n)], (first, n, held, kind)
        if held is not None and held[1] == "sint" and kind == "int":
            name = held[0]
            return name if bank in SIGN_BITS or nonneg else f"({name} & {MASKS[n]})"
        if held is not None and held[1] == kind:
            name, have = held
        if name is not None and have == kind:
            if nonneg:
                return name
            if bank in SIGN_BITS:
                sign = SIGN_BITS[bank]
                expr = f"(({name} ^ {sign}) - {sign})"
                self.biased[expr] = (f"({name} ^ {sign})", name)
                return expr
            return name
        self.drop_overlapping(first, n, lines, pad, write=False)
        reader = {"i32": I32, "b32": U32, "i64": I64, "b64": U64, "f32": F32, "f64": F64}[bank]
        return f"{self.b.bind(reader.unpack_from, 'r')}(regs, {4 * first})[0]"

    def write(self, first: int, n: int, bank: str, expr: str, lines: list, pad: str,
              value: tuple | None = None, signed: bool = False) -> None:
        """Assign the result of a pure op as the bank's writer would (wrapped, rounded). `value`:
        the interval of the integer result when `expr` is that result exactly (ValueRanges: it does
        not wrap), held as it is: its bits when nonnegative, else its signed value. `signed`: an
        integer that may wrap is wrapped to its signed value (what its next reader takes)."""
        _, kind = BANKS[bank]
        form = kind
        if kind == "int" and (value is not None and value[0] < 0 or value is None and signed):
            form = "sint"
        if (first, n) in self.local:
            name = self.lname(first, n)
            if form == "sint":
                self.signed.add((first, n))
            else:
                self.signed.discard((first, n))
        else:
            self.drop_overlapping(first, n, lines, pad, write=True)
            name = f"T{first}_{n}"
            self.temps[(first, n)] = (name, form, True)
        if kind == "int" and expr.startswith("int(") and expr.endswith(")") and _balanced(expr[4:-1]):
            lines.append(f"{pad}{name} = 1 if {expr[4:-1]} else 0")  # a comparison: 0 or 1, nothing to wrap
            # a branch right after it may test the comparison itself
            self.last_compare = (len(lines) - 1, name, expr[4:-1], (first, n))
        elif kind == "int" and value is not None:
            lines.append(f"{pad}{name} = {expr}")
        elif kind == "int" and signed:
            sign = 1 << (32 * n - 1)
            lines.append(f"{pad}{name} = (({expr}) + {sign} & {MASKS[n]}) - {sign}")
        elif kind == "int":
            lines.append(f"{pad}{name} = ({expr}) & {MASKS[n]}")
        elif kind == "f32":
            lines.append(f"{pad}F32A[0] = {expr}")
            lines.append(f"{pad}{name} = F32A[0]")
        else:
            lines.append(f"{pad}F64A[0] = {expr}")
            lines.append(f"{pad}{name} = F64A[0]")

    def raw_target(self, first: int, n: int, kind_hint: str, lines: list, pad: str) -> tuple[str | None, str]:
        """Where a raw write (load, zero, move) of registers [first, first + n) goes: (local name,
        its kind), or (None, "") for the bytes."""
        if (first, n) in self.local:
            self.signed.discard((first, n))  # raw bits
            return self.lname(first, n), self.local[(first, n)]
        self.drop_overlapping(first, n, lines, pad, write=True)
        name = f"T{first}_{n}"
        self.temps[(first, n)] = (name, kind_hint, True)
        return name, kind_hint

    def next_kind(self, i: int, end: int, first: int, n: int) -> str:
        """The kind the next read of register (first, n) in this block wants (int if it is raw,
        absent, or of another shape: bits are kept exactly)."""
        for j in range(i + 1, end):
            acc = self.plan.acc[j]
            if acc is None:
                return "int"
            for rw, f, m, kind in acc:
                if f < first + n and first < f + m:
                    if rw == "r" and (f, m) == (first, n) and kind != "raw":
                        return kind
                    return "int"
        return "int"

    def next_read(self, i: int, end: int, first: int, n: int) -> int | None:
        """The instruction after i in this block whose access of register (first, n) is the next
        one, if it reads the register whole (None: a handler call, a write or another shape first,
        or no access)."""
        for j in range(i + 1, end):
            acc = self.plan.acc[j]
            if acc is None:
                return None
            for rw, f, m, _ in acc:
                if f < first + n and first < f + m:
                    return j if rw == "r" and (f, m) == (first, n) else None
        return None

    # -- the region ----------------------------------------------------------------------------------

    def region(self) -> Any:
        blocks = self.plan.blocks
        inside = {s for s, _ in blocks}
        self.ends = dict(blocks)
        # In-region edges into each block: a block with one is also written out where that edge is
        # taken (no return to the dispatch), besides its own entry for the interpreter loop.
        self.preds: dict[int, int] = {}
        for s, e in blocks:
            if e - s == 1 and self.code[s][2].op.symbol in MARKERS and s > 0 and \
                    self.code[s - 1][2].op.symbol in NO_FALLTHROUGH:
                continue  # a lone block marker after a branch: nothing reaches it (targets are past it)
            for t in self.plan.succ[s]:
                if t is not None:
                    self.preds[t] = self.preds.get(t, 0) + 1
        b = self.b
        self.sizes: dict[int, set] = {}  # buffer ordinal -> {(element size, store)}
        for s, e in blocks:
            for i in range(s, e):
                access = element_access(self.ctx, self.code[i][2])
                if access is not None:
                    bo, size, store = access
                    self.sizes.setdefault(bo, set()).add((size, store))
        self.stored = sorted(bo for bo, sz in self.sizes.items() if any(w for _, w in sz))
        # each loop's locals that nothing in it writes (its invariants)
        variant: dict[int, set | None] = {}
        insts = [c[2] for c in self.code]
        for s, e in blocks:
            loop = self.plan.loop_of.get(s)
            if loop is not None and variant.get(loop, set()) is not None:
                w = block_writes(insts, s, e)
                variant[loop] = None if w is None else variant.get(loop, set()) | w
        self.invariant = {loop: ({k for k in self.plan.locals_of[loop] if not w.intersection(range(k[0], k[0] + k[1]))}
                                 if w is not None else set()) for loop, w in variant.items()}
        b.memo = tuple(sorted(self.sizes))
        b.names["offset"] = element_offset
        lines = b.prologue() + ["    ip = frame.ip - 1", "    k = ip", "    span = ctx.buffers.header_span"]
        lines += [f"    buf{m} = None" for m in b.memo]
        lines += [f"    hit{m} = False" for m in self.stored]
        lines += self.entry_guards(inside)
        for loop, local in enumerate(self.plan.locals_of):  # entered inside a loop: its locals
            if local:
                starts = sorted(s for s, x in self.plan.loop_of.items() if x == loop)
                lines.append(f"    if ip in {set(starts)!r}:")
                self.reload_locals(lines, "        ", None, local)
        lines += ["    try:", "        while True:"]
        # The blocks control comes back to (the loops' heads) first, by equality; then every block.
        self.heads: list[int] = []
        self.inner: int | None = None  # the head whose own `while` the code being written is in
        self.assume: frozenset = frozenset()  # buffers remembered where that while is entered
        self.promote: frozenset = frozenset()  # buffers whose being remembered leaves it (for a copy assuming them)
        self.back_valid: list[frozenset] = []
        body: list = []
        self._tree(blocks, inside, body, " " * 16)
        pad = " " * 12
        # the innermost loops' heads first: the dispatch tests them in order at every iteration
        self.heads.sort(key=lambda h: -self.plan.depth.get(h, 0))
        for n, head in enumerate(self.heads):
            # A head runs in a `while` of its own: a jump back to it is `continue` there (no store
            # of ip, no dispatch), any other jump leaves that loop for the dispatch (`break`).
            lines.append(f"{pad}{'if' if n == 0 else 'elif'} ip == {head}:")
            self.inner = head
            # The buffers remembered wherever an iteration jumps back (written once to find them):
            # when all are remembered at the head, a second copy of the loop runs without testing
            # them at each access (until something makes the region forget a buffer). The first
            # copy, run when some is not, goes to the dispatch (and so to the second) once they are.
            self.back_valid: list[frozenset] = []
            self._block(head, self.ends[head], inside, [], pad, ())
            assumed = frozenset.intersection(*self.back_valid) if self.back_valid else frozenset()
            inner = pad + "    "
            if assumed:
                tests = " and ".join(f"buf{m} is not None" for m in sorted(assumed))
                lines.append(f"{pad}    if {tests}:")
                lines.append(f"{pad}        while True:")
                self.assume = assumed
                self._block(head, self.ends[head], inside, lines, pad + "            ", ())
                self.assume = frozenset()
                lines.append(f"{pad}    else:")
                inner = pad + "        "
            lines.append(f"{inner}while True:")
            self.promote = assumed
            self._block(head, self.ends[head], inside, lines, inner + "    ", ())
            self.promote = frozenset()
            self.inner = None
        if self.heads:
            lines.append(f"{pad}else:")
            lines += body
        else:
            lines += [line[4:] for line in body]
        lines += ["    except BaseException:", "        frame.ip = k + 1", "        raise"]
        # Typed views are made where a buffer is remembered, before the code that indexes them is
        # written: the casts nothing indexes are dropped now (they would run on every remember).
        kept = []
        for line in lines:
            if line.lstrip().startswith("#hoist "):
                indent = line[:len(line) - len(line.lstrip())]
                kept += [f"{indent}{name} = {expr}" for name, expr in self.hoisted.get(int(line.split()[-1]), ())]
                continue
            head, mark, tail = line.partition("  #view ")
            if mark:
                bo, fmt = tail.split()
                if (int(bo), fmt) not in self.views:
                    continue
                line = head
            kept.append(line)
        return b.finish(kept, "locals region " + ",".join(str(s) for s, _ in blocks))

    def entry_guards(self, inside: set) -> list:
        """On entry at a block whose facts assume something of the registers (the arguments'
        speculated ranges, and what follows from them), a check of what it reads there: the region
        made without the assumption runs on when a value is out of its assumed interval."""
        tests: dict[str, list[int]] = {}
        for s in sorted(inside):
            if s in self.guards and self.guards[s] is None:  # reached only when the assumption fails
                tests.setdefault("True", []).append(s)
                continue
            live = self.plan.live_in.get(s, set())
            need = [(slot, iv) for slot, iv in self.guards.get(s) or () if live & set(range(slot[0], slot[0] + slot[1]))]
            if need:
                test = " or ".join(f"not {lo} <= SI{n}(regs, {4 * first})[0] <= {hi}" for (first, n), (lo, hi) in need)
                tests.setdefault(test, []).append(s)
        fb = self.b.bind(self.unassumed, "ua") if tests else ""
        return [f"    if ip in {set(starts)!r} and ({test}): return {fb}(ctx, frame, _)"
                for test, starts in tests.items()]

    def _tree(self, blocks: list, inside: set, lines: list, pad: str) -> None:
        dispatch_tree(blocks, lines, pad, lambda start, end, p: self._block(start, end, inside, lines, p, ()))

    def _block(self, start: int, end: int, inside: set, lines: list, pad: str, chain: tuple) -> None:
        """One block's body and its branch; `chain`: the blocks written out around it (not again)."""
        self.b.derefs.clear()
        self.temps.clear()
        if not chain:
            self.valid = set(self.assume)  # entered from the dispatch: the buffers its test found remembered
        self.start = start
        self.chain = chain + (start,)
        self.local, self.written = self.plan.locals_at(start)
        self.signed = set()  # a block is entered with its locals' bits
        self.skip = None
        for i in range(start, end - 1):
            if i != self.skip:
                self.instruction(i, end, lines, pad)
        inst = self.code[end - 1][2]
        symbol = inst.op.symbol
        first = len(lines)
        condition = branch_condition(inst) if symbol in BRANCHES else None
        if condition is not None:
            edges = branch_edges(inst)
            if any(src.is_ref for _, pairs in edges for src, _ in pairs):
                lines.append(f"{pad}k = {end - 1}")
            cond = self.condition(condition.ordinal, lines, pad)
            fused = self.last_compare
            if fused is not None and fused[0] == len(lines) - 1 and fused[1] == cond:
                # `if <comparison>:` instead of storing 0/1 and testing it: in each arm the
                # temporary is that constant (written back as such where it is live)
                lines.pop()
                first -= 1  # the compare's line becomes the branch's
                cond = fused[2]
            else:
                fused = None
            lines.append(f"{pad}if {cond}:")
            for arm, (dest, pairs) in enumerate(edges):
                if arm:
                    lines.append(f"{pad}else:")
                target = self.fn.block_index[dest]
                if fused and fused[3] in self.local:
                    # a local: given its constant in the arm where it is read (at the target, by its
                    # copies), else left as it was (dead there)
                    reg = fused[3][0]
                    read = self.plan.live_in.get(target, self.plan.exit_live) if target in self.ends \
                        else self.plan.exit_live
                    if reg in read or any(not src.is_ref and src.ordinal == reg for src, _ in pairs):
                        lines.append(f"{pad}    {fused[1]} = {1 - arm}")
                elif fused:
                    self.temps[fused[3]] = (str(1 - arm), "int", True)
                self._jump(target, pairs, inside, lines, pad + "    ")
        elif symbol in BRANCHES:
            (dest, pairs), = branch_edges(inst)
            if any(src.is_ref for src, _ in pairs):
                lines.append(f"{pad}k = {end - 1}")
            self._jump(self.fn.block_index[dest], pairs, inside, lines, pad)
        else:
            self.instruction(end - 1, end, lines, pad)
            self._jump(end, (), inside, lines, pad)
        tag(lines, first, end - 1, symbol)

    def _jump(self, target: int, pairs: Any, inside: set, lines: list, pad: str) -> None:
        temps, start, chain, local, written = dict(self.temps), self.start, self.chain, self.local, self.written
        valid, signed = set(self.valid), set(self.signed)
        loop = self.plan.loop_of.get(start)
        if loop is not None and self.plan.loop_of.get(target) != loop:
            # Leaving the loop: its locals go to the bytes first, and the copies are made there (as
            # RegionPlan assumes: they do not constrain the loop's locals).
            self.flush_temps(lines, pad)
            self.flush_locals(lines, pad)
            self.local, self.written = {}, []
            self.signed = set()
        for m in moves(pairs):
            if m[0] == "ref":
                _, src, dst = m
                self.b.forget(lines, pad)
                self.valid.clear()
                lines.append(f"{pad}retain_or_move(ctx, refs, {self.b.bind(src, 'g')}, refs, {dst})")
                continue
            _, src, dst, n = m
            sk, dk = self.local.get((src, n)), self.local.get((dst, n))
            if dk is not None:  # RegionPlan: then the source is a region local of the same kind
                lines.append(f"{pad}{self.lname(dst, n)} = {self.lname(src, n)}")
                if (src, n) in self.signed:
                    self.signed.add((dst, n))
                else:
                    self.signed.discard((dst, n))
                continue
            if sk is not None:
                lines.append(pad + self.store_stmt(self.lname(src, n), src, n, self.held(src, n)[1]))
            else:
                self.drop_overlapping(src, n, lines, pad, write=False)
            self.drop_overlapping(dst, n, lines, pad, write=True)
            s, d = 4 * src, 4 * dst
            lines.append(f"{pad}regs[{d}:{d + 4 * n}] = regs[{s}:{s + 4 * n}]")
        if target in inside:
            self.flush_temps(lines, pad, self.plan.live_in[target])
            same_loop = self.plan.loop_of.get(target) == self.plan.loop_of.get(start)
            if not same_loop:
                self.flush_locals(lines, pad)  # leaving this loop, entering another or none
                self.signed = set()
                self.reload_locals(lines, pad, target, self.plan.locals_at(target)[0])
            else:  # the target reads its locals' bits: a signed value it reads goes back to its bits
                for first, n in sorted(self.signed):
                    if any(r in self.plan.live_in[target] for r in range(first, first + n)):
                        name = self.lname(first, n)
                        lines.append(f"{pad}{name} = {name} & {MASKS[n]}")
                self.signed = set()
            if self.preds.get(target) == 1 and target not in chain and len(chain) < 8:
                self._block(target, self.ends[target], inside, lines, pad, chain)
            elif target == self.inner and self.assume <= self.valid and \
                    not (self.promote and self.promote <= self.valid):
                self.back_valid.append(frozenset(self.valid))
                lines.append(f"{pad}continue")  # the head's own while
            else:
                if target not in self.heads:
                    self.heads.append(target)
                lines.append(f"{pad}ip = {target}")
                lines.append(f"{pad}{'continue' if self.inner is None else 'break'}")
        else:  # leaving the region: the temporaries the code outside may read (RegionPlan.exit_live)
            self.flush_temps(lines, pad, self.plan.exit_live)
            self.flush_locals(lines, pad)
            lines.append(f"{pad}frame.ip = {target}")
            lines.append(f"{pad}return None")
        self.temps, self.start, self.chain, self.local, self.written = temps, start, chain, local, written
        self.valid, self.signed = valid, signed

    def instruction(self, i: int, end: int, lines: list, pad: str) -> None:
        self.cur = (i, end)  # the instruction being written (drop_overlapping's liveness)
        first = len(lines)
        try:
            self._instruction(i, end, lines, pad)
        finally:
            self.cur = None
        tag(lines, first, i, self.code[i][2].op.symbol)

    def _instruction(self, i: int, end: int, lines: list, pad: str) -> None:
        if self.plan.acc[i] is None:
            self.call_handler(i, lines, pad)
            return
        REGION_WRITERS[self.code[i][2].op.symbol](self, i, end, lines, pad)  # its op's writer

    def hoisted_name(self, loop: int, expr: str) -> str:
        """The name of `expr` computed where `loop` is entered (one name per expression)."""
        entries = self.hoisted.setdefault(loop, [])
        for name, e in entries:
            if e == expr:
                return name
        name = f"H{loop}_{len(entries)}"
        entries.append((name, expr))
        return name

    def condition(self, reg: int, lines: list, pad: str) -> str:
        """A branch's or select's condition: its value, whose truth is its bits' (a signed value
        held is tested as it is)."""
        held = self.held(reg, 1)
        return self.read(reg, 1, "i32" if held is not None and held[1] == "sint" else "b32", lines, pad)

    def held(self, first: int, n: int) -> tuple[str, str] | None:
        """(name, kind) of the local or temporary holding registers (first, n) exactly, if any."""
        if (first, n) in self.local:
            return self.lname(first, n), "sint" if (first, n) in self.signed else self.local[(first, n)]
        if (first, n) in self.temps:
            return self.temps[(first, n)][:2]
        return None

    def call_handler(self, i: int, lines: list, pad: str) -> None:
        """Instruction i by its handler: the locals and temporaries go to the bytes first and the
        locals come back after; the remembered buffers are forgotten unless the handler touches
        registers only (ops_scalar.REGISTER_ONLY)."""
        handler, payload, inst = self.code[i]
        lines.append(f"{pad}k = {i}")
        self.flush_temps(lines, pad)
        self.flush_locals(lines, pad)
        lines.append(f"{pad}{self.b.bind(handler, 'h')}(ctx, frame, {self.b.bind(payload, 'p')})")
        if inst.op.symbol not in REGISTER_ONLY:
            self.b.forget(lines, pad)
            self.valid.clear()
        self.reload_locals(lines, pad, i + 1)

    def c_function(self, f: Any) -> str:
        """The name bound to a PURE_OPS function (a C one through `c_call`)."""
        return self.b.bind(c_call(f), "f")

    def header_hits(self, bo: int, lines: list, pad: str) -> None:
        """After buffer `bo` is remembered: hit<x> is true for every stored-to buffer x whose data
        (in target memory) overlaps a remembered buffer's header (kept conservatively: a forgotten
        buffer leaves it set until x is remembered again)."""
        memo = self.b.memo
        if bo in self.stored:
            tests = " or ".join(f"(buf{m} is not None and lo{m} < a{bo} + d{bo}.nbytes and a{bo} < hi{m})"
                                for m in memo)
            lines.append(f"{pad}hit{bo} = a{bo} is not None and ({tests})")
        for x in self.stored:
            if x != bo:
                lines.append(f"{pad}if buf{x} is not None and a{x} is not None and lo{bo} < a{x} + d{x}.nbytes "
                             f"and a{x} < hi{bo}: hit{x} = True")

    def remember(self, i: int, bo: int, inst: Any, what: str, lines: list, pad: str) -> None:
        """Buffer `bo` as deref gives it, kept with its data, address, typed views and element counts
        until something may change what deref would give (blocks.py's memo)."""
        b = self.b
        null = f"null(ctx, frame, {b.bind(inst.operands['buffer'], 'b')}, {what!r})"
        lines.append(f"{pad}if buf{bo} is None:")
        lines.append(f"{pad}    k = {i}")
        lines.append(f"{pad}    b = deref(refs[{bo}])")
        lines.append(f"{pad}    if b is None: {null}")
        lines.append(f"{pad}    buf{bo} = b")
        lines.append(f"{pad}    lo{bo}, hi{bo} = span(refs[{bo}])")
        lines.append(f"{pad}    d{bo} = b.data")
        lines.append(f"{pad}    a{bo} = b.address")
        lines.append(f"{pad}    n = d{bo}.nbytes")
        for sz in sorted({sz for sz, _ in self.sizes[bo]}):
            lines.append(f"{pad}    q{bo}_{sz}r = n // {sz}")
            for fmt in _FORMATS[sz]:  # only the views the region indexes stay (region() prunes)
                lines.append(f"{pad}    v{bo}_{fmt} = d{bo}[:n - n % {sz}].cast({fmt!r})  #view {bo} {fmt}")
            if (sz, True) in self.sizes[bo]:
                lines.append(f"{pad}    q{bo}_{sz}w = q{bo}_{sz}r if b.mutable else 0")
        self.header_hits(bo, lines, pad + "    ")
        self.valid.add(bo)


# element bytes -> the typed memoryview formats of a remembered buffer's data (those a region indexes)
_FORMATS = {1: ("B", "b"), 2: ("H", "h"), 4: ("I", "f", "i"), 8: ("Q", "d", "q")}


__all__ = ["LocalsEmitter", "c_call", "dispatch_tree", "tag"]
