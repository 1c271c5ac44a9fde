"""What the integer registers of a function may hold at each instruction: intervals of their signed
values, for the loop regions' code (regions.py).

Locals of a region hold integers as their unsigned bits, so every integer op is wrapped (`& mask`)
and every signed read converts the bits (`(x ^ sign) - sign`). Where the values an op reads and
writes are known to lie in [0, 2^(w-1)), the bits are the value: no mask, no conversion, and a
division by a divisor known nonzero (and not -1 where the dividend may be INT_MIN) is Python's own
operator. The facts come from the function's bytecode alone: constants, the types of ops (a
compare gives 0 or 1, an i8 load [-128, 127], a zero extension a nonnegative value), arithmetic on
intervals that cannot wrap, and the conditions of the branches (on the true edge of `i < n` the
value of i is below n). Loops are iterated to a fixed point, widening a bound that keeps moving to
its type's extreme (the branch conditions bring a loop counter back to its bounds), then narrowed.

An interval is (lo, hi) of the signed value of a slot: (first register, registers) = (r, 1) for an
i32, (r, 2) for an i64. A slot without an interval may hold anything; a write to a register forgets
every slot that overlaps it. An op not modelled here forgets the registers its operands name (and
every register if an operand form is not understood), so the facts hold for any bytecode the
verifier accepts. The analysis does a bounded amount of work (`_BUDGET` visits of an instruction
per instruction of the function): past it, it gives no facts.
"""
from __future__ import annotations

import bisect
from typing import Any, Iterable

from . import isa
from .ops_control import ENDS_BLOCK
from .region_plan import moves, named_registers

Interval = tuple[int, int]
Slot = tuple[int, int]
State = dict  # Slot -> Interval; absent: any value

_MIN = {1: -(1 << 31), 2: -(1 << 63)}
_MAX = {1: (1 << 31) - 1, 2: (1 << 63) - 1}
_WIDTH = {"i32": 1, "i64": 2}
_JUMPS = frozenset({"Branch", "Break", "CondBreak", "Yield"})
_LOADED = {"BufferLoadI8U": (0, 255), "BufferLoadI8S": (-128, 127), "BufferLoadI16U": (0, 65535),
           "BufferLoadI16S": (-32768, 32767)}
_WIDEN_AFTER = 2  # visits of a block whose entry state still grows before its bounds are widened
_BUDGET = 64  # instruction visits per instruction of the function, plus _MIN_BUDGET
_MIN_BUDGET = 10_000
_NARROWING = 1  # passes without widening after the fixed point


def speculated(fn: Any, code: list) -> tuple["ValueRanges", "ValueRanges", dict[int, list[tuple[Slot, Interval]] | None]]:
    """`_speculated`, remembered for the last functions of the same bytecode (every context of a
    module analyses the same functions: one analysis serves them)."""
    try:
        key = (_BUDGET, _MIN_BUDGET, fn.cconv_args, tuple((inst.op.symbol, tuple(repr(v) if type(v) is float else v  # NaN: its text
                                                           for v in inst.operands.values()))
                                    for inst in fn.instructions))
        hash(key)
    except TypeError:  # an operand that does not hash: no memo
        return _speculated(fn, code)
    found = _MEMO.get(key)
    if found is None:
        found = _MEMO[key] = _speculated(fn, code)
        while len(_MEMO) > _MEMO_SIZE:
            del _MEMO[next(iter(_MEMO))]
    return found


_MEMO: dict = {}  # insertion order: the oldest goes first
_MEMO_SIZE = 256


def _speculated(fn: Any, code: list) -> tuple["ValueRanges", "ValueRanges", dict[int, list[tuple[Slot, Interval]] | None]]:
    """The function's intervals (sound for any arguments), its intervals assuming its i32
    arguments are nonnegative (sizes, counts, ids), and what that assumes at each block: {block
    start: [(slot, interval the facts there need)]}, the slots whose interval is narrower than
    without the assumption, or None at a block only a broken assumption reaches. A loop region
    made with the assumption checks them where it is entered, and runs the one made without it
    when one fails (regions.py)."""
    sound = ValueRanges(fn, code)
    args = [c for c in (fn.cconv_args or "") if c in "iIfFr"]
    assume: State = {}
    reg = 0
    for c in args:
        if c == "i":
            assume[(reg, 1)] = (0, _MAX[1])
            reg += 1
        elif c in "IF":
            reg += (reg & 1) + 2
        elif c == "f":
            reg += 1
    if not assume or sound.given_up:
        return sound, sound, {}
    spec = ValueRanges(fn, code, assume)
    if spec.given_up:
        return sound, sound, {}
    guards: dict[int, list[tuple[Slot, Interval]] | None] = {}
    for s, state in spec.entry.items():
        if state is None and sound.entry.get(s) is not None:
            # unreachable if the arguments were nonnegative: entered there, they were not (and the
            # blocks it leads to were analysed without this way in)
            guards[s] = None
            continue
        if not state:
            continue
        known = sound.entry.get(s) or {}
        need = [(slot, iv) for slot, iv in sorted(state.items())
                if slot not in known or known[slot][0] < iv[0] or iv[1] < known[slot][1]]
        if need:
            guards[s] = need
    return sound, (spec if guards else sound), guards


def top(n: int) -> Interval:
    return _MIN[n], _MAX[n]


def nonnegative(iv: Interval | None, n: int) -> bool:
    """Whether the slot's unsigned bits are its signed value (0 <= value < 2^(w-1))."""
    return iv is not None and iv[0] >= 0


class ValueRanges:
    """Per instruction index: the intervals of the integer slots it reads (`reads[i][slot]`), and
    of the integer result it writes (`result[i]`); an instruction of unreachable code, or one whose
    operand may hold anything, has no entry."""

    def __init__(self, fn: Any, code: list, assume: State | None = None) -> None:
        self.reads: dict[int, dict[Slot, Interval]] = {}
        self.result: dict[int, Interval] = {}
        self.entry: dict[int, State | None] = {}  # block start -> the slots' intervals where it begins
        self.given_up = False
        self.assume = dict(assume or {})  # the function's entry state (what its arguments hold)
        insts = [c[2] for c in code]
        self.blocks = _blocks(fn, insts)
        # per instruction, made once: the registers it writes, its integer operands' slots by name
        self._writes = [_written(inst) for inst in insts]
        self._slots = [{f.name: (inst.operands[f.name].ordinal, _WIDTH[f.kind]) for f in inst.op.fields
                        if f.kind in _WIDTH} for inst in insts]
        self._moves: dict[int, list] = {}  # id(branch operands) -> their moves
        # slots whose one write in the function is a constant in its entry block, before any read:
        # that value everywhere, kept out of the states (which then hold a few slots, not dozens)
        self.consts, self._const_defs = _function_constants(fn, insts, self.blocks, self._writes)
        self.budget = _BUDGET * len(insts) + _MIN_BUDGET
        try:
            entry = self._solve(fn, insts)
        except _OverBudget:
            self.given_up = True
            return
        self.entry = entry
        for s, e in self.blocks:
            if entry.get(s) is not None:
                self._block(fn, insts, s, e, dict(entry[s] or {}), record=True)

    def read(self, i: int, first: int, n: int) -> Interval | None:
        return self.reads.get(i, {}).get((first, n))

    # -- the fixed point --------------------------------------------------------------------------

    def _solve(self, fn: Any, insts: list) -> dict[int, State | None]:
        starts = [s for s, _ in self.blocks]
        ends = dict(self.blocks)
        entry: dict[int, State | None] = {s: None for s in starts}
        if not starts:
            return entry
        entry[starts[0]] = dict(self.assume)
        visits: dict[int, int] = {}
        steps = _steps(insts)
        heads = self._heads(fn, insts)
        work = [starts[0]]
        queued = {starts[0]}
        while work:
            s = min(work)  # in code order: a loop's body before what follows it
            work.remove(s)
            queued.discard(s)
            for t, out in self._block(fn, insts, s, ends[s], dict(entry[s] or {}), record=False):
                if t not in entry:
                    continue
                old = entry[t]
                new = out if old is None else _join(old, out)
                if old is not None and new == old:
                    continue
                visits[t] = visits.get(t, 0) + 1
                if old is not None and visits[t] > _WIDEN_AFTER and t in heads:
                    new = _widen(old, new, steps, heads[t])
                entry[t] = new
                if t not in queued:
                    work.append(t)
                    queued.add(t)
        for _ in range(_NARROWING):  # F(X) of a post-fixed point X is one too, and tighter
            new_entry: dict[int, State | None] = {s: None for s in starts}
            new_entry[starts[0]] = dict(self.assume)
            for s in starts:
                if entry[s] is None:
                    continue
                for t, out in self._block(fn, insts, s, ends[s], dict(entry[s] or {}), record=False):
                    if t in new_entry:
                        old = new_entry[t]
                        new_entry[t] = out if old is None else _join(old, out)
            entry = {s: _meet(entry[s], new_entry[s]) for s in starts}
        return entry

    def _heads(self, fn: Any, insts: list) -> dict[int, set[int] | None]:
        """The loop heads (targets of the back edges of a depth-first search from the entry), each
        with the registers its loops write (None: any): only those widen there. A value a loop
        only carries (a stride an outer loop set) keeps the interval it enters with, where widening
        it at the inner head would lose it for good (its back edge brings the widened value back)."""
        ends = dict(self.blocks)
        succ = {s: [t for t in _successors(fn, insts, s, ends[s]) if t in ends] for s in ends}
        pred: dict[int, list[int]] = {s: [] for s in ends}
        for s, ts in succ.items():
            for t in ts:
                pred[t].append(s)
        back = []
        first = self.blocks[0][0]
        seen = {first: 1}  # 1: on the search's path, 2: done
        stack = [(first, iter(succ[first]))]
        while stack:
            v, it = stack[-1]
            for w in it:
                if w not in seen:
                    seen[w] = 1
                    stack.append((w, iter(succ[w])))
                    break
                if seen[w] == 1:
                    back.append((v, w))
            else:
                seen[v] = 2
                stack.pop()
        heads: dict[int, set[int] | None] = {}
        for u, t in back:
            body, work = {t}, [u]
            while work:
                x = work.pop()
                if x not in body:
                    body.add(x)
                    work.extend(pred[x])
            regs = heads.setdefault(t, set())
            for b in body:
                if regs is None:
                    break
                written = block_writes(insts, b, ends[b])
                regs = None if written is None else regs | written
            heads[t] = regs
        return heads

    # -- one block ----------------------------------------------------------------------------------

    def _block(self, fn: Any, insts: list, s: int, e: int, state: State,
               record: bool) -> list[tuple[int, State]]:
        """The block's effect on `state`: [(successor, state on that edge)]."""
        self.budget -= e - s
        if self.budget < 0:
            raise _OverBudget
        compares: dict[int, tuple] = {}  # condition register -> (compare symbol, lhs slot, rhs slot)
        for i in range(s, e - 1):
            self._step(fn, insts[i], i, state, compares, record)
        inst = insts[e - 1]
        symbol = inst.op.symbol
        o = inst.operands
        if symbol == "CondBranch":
            if record:
                self._record_reads(e - 1, inst, state)
            out = []
            for dest, pairs, truth in ((o["true_dest"], o["true_operands"], True),
                                       (o["false_dest"], o["false_operands"], False)):
                edge = _refine(dict(state), compares.get(o["condition"].ordinal), truth,
                               state.get((o["condition"].ordinal, 1)), self.consts)
                if edge is not None:
                    out.append((fn.block_index.get(dest, -1), _moved(edge, pairs, self._moves)))
            return out
        if symbol in _JUMPS:
            return [(fn.block_index.get(o["dest"], -1), _moved(state, o["operands"], self._moves))]
        if symbol == "BranchTable":
            out = [(fn.block_index.get(o["default_dest"], -1), _moved(state, o["default_operands"], self._moves))]
            for case in o["cases"]:
                out.append((fn.block_index.get(case.dest, -1), _moved(state, case.operands, self._moves)))
            return out
        if symbol == "Return":
            return []
        self._step(fn, inst, e - 1, state, compares, record)
        # a call returns (a yieldable one at its resume block), a failure with status 0 or a block
        # falls through
        targets = [e] + [fn.block_index.get(o[f.name], -1) for f in inst.op.fields if f.kind == isa.BRANCH_TARGET]
        return [(t, state) for t in targets]

    def _record_reads(self, i: int, inst: Any, state: State) -> None:
        got = {}
        for f in inst.op.fields:
            if f.kind in _WIDTH and f.access == isa.READ:
                slot = self._slots[i][f.name]
                if slot in state:
                    got[slot] = state[slot]
                elif slot in self.consts:
                    got[slot] = self.consts[slot]
        if got:
            self.reads[i] = got

    def _step(self, fn: Any, inst: Any, i: int, state: State, compares: dict, record: bool) -> None:
        symbol = inst.op.symbol
        o = inst.operands
        if record:
            self._record_reads(i, inst, state)
        written = self._writes[i]
        if written is None:  # an operand form not understood: it may write any register
            state.clear()
            compares.clear()
            return
        if i in self._const_defs:  # its value is in self.consts, the same everywhere
            if record:
                self.result[i] = self.consts[self._const_defs[i]]
            return
        result = _transfer(symbol, inst, state, self._slots[i], self.consts) if len(written) == 1 else _UNMODELLED
        for first, n, _ in written:
            _kill(state, compares, first, n)
        if not isinstance(result, tuple):  # any value, or not modelled
            return
        first, n, kind = written[0]
        lo, hi = result
        if not _MIN[n] <= lo <= hi <= _MAX[n]:
            return  # it may wrap: any value
        state[(first, n)] = result
        if record and kind in _WIDTH:
            self.result[i] = result
        if symbol in _COMPARES:
            bank = _COMPARES[symbol]
            operands = [(o[f.name].ordinal, bank) for f in inst.op.fields if f.access == isa.READ]
            if any(r < first + 1 and first < r + m for r, m in operands):
                return  # the result overwrote an operand: the compare says nothing of what is left
            fact = (symbol, operands[0], operands[1] if len(operands) > 1 else None)
            if symbol == "CmpNZI32" and operands[0][0] in compares and \
                    (state.get(operands[0]) or self.consts.get(operands[0])) == (0, 1):
                fact = compares[operands[0][0]]  # cmp.nz of a compare's 0 or 1: the same condition
            compares[first] = fact


def _written(inst: Any) -> list[tuple[int, int, str]] | None:
    """The registers an instruction writes: [(first, registers, kind)] (refs left out; a register
    list entry counted as two registers: entries carry no width); None when a field is not
    understood."""
    out = []
    for f in inst.op.fields:
        if f.access != isa.WRITE:
            continue
        value = inst.operands.get(f.name)
        if f.kind in _WIDTH or f.kind in ("f32", "f64"):
            out.append((value.ordinal, 2 if f.kind in ("i64", "f64") else 1, f.kind))
        elif f.kind == isa.REG_LIST:
            out.extend((r.ordinal, 2, "list") for r in value if not r.is_ref)
        elif f.kind != isa.REF:
            return None
    return out


class _OverBudget(Exception):
    pass


_UNMODELLED = object()
_COMPARES = {"CmpLTI32S": 1, "CmpLTI64S": 2, "CmpLTI32U": 1, "CmpLTI64U": 2, "CmpEQI32": 1, "CmpEQI64": 2,
             "CmpNEI32": 1, "CmpNEI64": 2, "CmpNZI32": 1, "CmpNZI64": 2}


def _blocks(fn: Any, insts: list) -> list[tuple[int, int]]:
    """The function's blocks as compile_blocks splits it: at branch targets and after each
    instruction that ends a block."""
    starts = {0} | set(fn.block_index.values())
    for i, inst in enumerate(insts):
        if inst.op.symbol in ENDS_BLOCK:
            starts.add(i + 1)
    ordered = sorted(x for x in starts if x < len(insts))
    return [(x, ordered[k + 1] if k + 1 < len(ordered) else len(insts)) for k, x in enumerate(ordered)]


def _function_constants(fn: Any, insts: list, blocks: list, writes: list) -> tuple[dict, dict]:
    """({slot: its constant}, {defining instruction: slot}) of the slots whose registers nothing
    writes but one integer constant in the entry block (run first on every path), none of which
    that block reads before it."""
    writers: dict[int, list[int]] = {}
    for i, (inst, w) in enumerate(zip(insts, writes)):
        if w is None:
            return {}, {}
        regs = {r for first, n, _ in w for r in range(first, first + n)}
        for f in inst.op.fields:
            value = inst.operands.get(f.name)
            if f.kind == isa.BRANCH_OPERANDS:
                regs.update(dst.ordinal for _, dst in value if not dst.is_ref)
            elif f.kind == isa.BRANCH_TABLE_CASES:
                regs.update(dst.ordinal for case in value for _, dst in case[1] if not dst.is_ref)
        for r in regs:
            writers.setdefault(r, []).append(i)
    consts: dict = {}
    defs: dict = {}
    read: set[int] = set()
    for i in range(blocks[0][1] if blocks else 0):
        inst = insts[i]
        if inst.op.symbol in ("ConstI32", "ConstI64", "ConstI32Zero", "ConstI64Zero"):
            first, n, _ = writes[i][0]
            slot_regs = range(first, first + n)
            if all(writers.get(r) == [i] for r in slot_regs) and not read.intersection(slot_regs):
                consts[(first, n)] = _transfer(inst.op.symbol, inst, {}, {}, {})
                defs[i] = (first, n)
        named = named_registers(fn, inst)
        if named is None:
            break
        read |= named[0]
    return consts, defs


def _successors(fn: Any, insts: list, s: int, e: int) -> list[int]:
    """Every block control may go to from block [s, e) (ValueRanges._block's edges, unrefined)."""
    inst = insts[e - 1]
    o = inst.operands
    symbol = inst.op.symbol
    if symbol == "CondBranch":
        return [fn.block_index.get(o["true_dest"], -1), fn.block_index.get(o["false_dest"], -1)]
    if symbol in _JUMPS:
        return [fn.block_index.get(o["dest"], -1)]
    if symbol == "BranchTable":
        return [fn.block_index.get(o["default_dest"], -1)] + [fn.block_index.get(c.dest, -1) for c in o["cases"]]
    if symbol == "Return":
        return []
    return [e] + [fn.block_index.get(o[f.name], -1) for f in inst.op.fields if f.kind == isa.BRANCH_TARGET]


def block_writes(insts: list, s: int, e: int) -> set[int] | None:
    """The i32-bank registers block [s, e) may write, its branches' copies included (None: any)."""
    out: set[int] = set()
    for i in range(s, e):
        written = _written(insts[i])
        if written is None:
            return None
        for first, n, _ in written:
            out.update(range(first, first + n))
        for f in insts[i].op.fields:
            value = insts[i].operands.get(f.name)
            if f.kind == isa.BRANCH_OPERANDS:
                out.update(dst.ordinal for _, dst in value if not dst.is_ref)
            elif f.kind == isa.BRANCH_TABLE_CASES:
                out.update(dst.ordinal for case in value for _, dst in case[1] if not dst.is_ref)
    return out


def _kill(state: State, compares: dict, first: int, n: int) -> None:
    """Forget every slot overlapping registers [first, first + n), and the compares reading them."""
    for r in range(first - 1, first + n):
        state.pop((r, 2), None)
    for r in range(first, first + n):
        state.pop((r, 1), None)
    if compares:
        for c, (_, a, b) in list(compares.items()):
            if first <= c < first + n or any(x is not None and x[0] < first + n and first < x[0] + x[1]
                                             for x in (a, b)):
                del compares[c]


def _join(a: State, b: State) -> State:
    return {k: (min(v[0], b[k][0]), max(v[1], b[k][1])) for k, v in a.items() if k in b}


def _meet(a: State | None, b: State | None) -> State | None:
    """The narrower of two states (None, unreachable, if either is)."""
    if a is None or b is None:
        return None
    out = dict(a)
    for k, v in b.items():
        if k in out:
            lo, hi = max(out[k][0], v[0]), min(out[k][1], v[1])
            out[k] = (lo, hi) if lo <= hi else out[k]
        else:
            out[k] = v
    return out


def _widen(old: State, new: State, steps: list[int], regs: set[int] | None) -> State:
    """Each bound that moved of a slot the loop writes (`regs`; None: any) goes out to the next of
    `steps` (the function's constants and their neighbours) or to its type's extreme: a counter
    widened to its loop's bound, not past it (where its increment would wrap, and so forget it)."""
    out = {}
    for k, (lo, hi) in new.items():
        if k not in old:
            continue
        n = k[1]
        if regs is not None and not regs.intersection(range(k[0], k[0] + n)):
            out[k] = (lo, hi)
            continue
        if lo < old[k][0]:
            at = bisect.bisect_right(steps, lo) - 1
            lo = steps[at] if at >= 0 and steps[at] >= _MIN[n] else _MIN[n]
        if hi > old[k][1]:
            at = bisect.bisect_left(steps, hi)
            hi = steps[at] if at < len(steps) and steps[at] <= _MAX[n] else _MAX[n]
        out[k] = (lo, hi)
    return out


def _steps(insts: list) -> list[int]:
    """The widening steps: every integer constant of the function, one below and one above it."""
    out = {-1, 0, 1}
    for inst in insts:
        if inst.op.symbol in ("ConstI32", "ConstI64"):
            v = _transfer(inst.op.symbol, inst, {}, {}, {})[0]
            out.update((v - 1, v, v + 1))
    return sorted(out)


def _moved(state: State, pairs: Iterable, cache: dict | None = None) -> State:
    """The state after a branch's register copies, in order (ops_control.remap)."""
    if not pairs:
        return state
    if cache is not None:
        mv = cache.get(id(pairs))
        if mv is None:
            mv = cache[id(pairs)] = (pairs, moves(pairs))  # (the operands kept: their id stays theirs)
        mv = mv[1]
    else:
        mv = moves(pairs)
    out = dict(state)
    for m in mv:
        if m[0] == "ref":
            continue
        _, src, dst, n = m
        copied = {(dst + (f - src), w): out[(f, w)] for f, w in list(out)
                  if src <= f and f + w <= src + n}
        _kill(out, {}, dst, n)
        out.update(copied)
    return out


def _refine(state: State, compare: tuple | None, truth: bool, cond: Interval | None,
            consts: dict) -> State | None:
    """The state on one edge of a conditional branch: the condition's value and, when a compare
    of this block made it, its operands' intervals narrowed. None: the edge is never taken."""
    if cond is not None and (cond == (0, 0) if truth else cond[0] > 0 or cond[1] < 0):
        return None
    if compare is None:
        return state
    symbol, a, b = compare
    n = a[1]
    x = state.get(a) or consts.get(a, top(n))
    y = (state.get(b) or consts.get(b, top(n))) if b is not None else (0, 0)
    if symbol.startswith("CmpLT") and symbol.endswith("U"):
        if x[0] < 0 or y[0] < 0:
            return state
    if symbol.startswith("CmpLT"):
        if truth:  # x < y
            x, y = (x[0], min(x[1], y[1] - 1)), (max(y[0], x[0] + 1), y[1])
        else:  # x >= y
            x, y = (max(x[0], y[0]), x[1]), (y[0], min(y[1], x[1]))
    elif (symbol.startswith("CmpEQ")) == truth:  # x == y
        lo, hi = max(x[0], y[0]), min(x[1], y[1])
        x = y = (lo, hi)
    else:  # x != y: only an end of an interval can go
        if y[0] == y[1]:
            x = (x[0] + (x[0] == y[0]), x[1] - (x[1] == y[0]))
        if x[0] == x[1] and b is not None:
            y = (y[0] + (y[0] == x[0]), y[1] - (y[1] == x[0]))
    if x[0] > x[1] or y[0] > y[1]:
        return None
    if x != top(n):
        state[a] = x
    if b is not None and y != top(n):
        state[b] = y
    return state


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


def _transfer(symbol: str, inst: Any, state: State, slots: dict, consts: dict) -> Any:
    """The interval of the op's integer result (None: any value; _UNMODELLED: not an op modelled
    here, whose writes are the registers its operands name). `slots`: its integer operands' slots
    by field name."""
    o = inst.operands
    fields = inst.op.fields

    def get(name: str) -> Interval:
        slot = slots[name]
        return state.get(slot) or consts.get(slot) or top(slot[1])

    width = None
    for f in fields:
        if f.access == isa.WRITE:
            width = _WIDTH.get(f.kind)
    if symbol in ("ConstI32", "ConstI64"):
        v = o["value"]
        n = _WIDTH[fields[1].kind]
        v &= (1 << (32 * n)) - 1
        return (v - (1 << 32 * n) if v > _MAX[n] else v,) * 2
    if symbol in ("ConstI32Zero", "ConstI64Zero", "ConstF32Zero", "ConstF64Zero"):
        return 0, 0
    if symbol in _LOADED:
        return _LOADED[symbol]
    if symbol.startswith("BufferLoad") or symbol.startswith("Const"):
        return None
    if symbol == "ImportResolved":
        return 0, 1
    if symbol.startswith("Cmp"):
        if symbol not in _COMPARES:
            return 0, 1  # a float compare
        x = get("lhs") if "lhs" in o else get("operand")
        y = get("rhs") if "rhs" in o else (0, 0)
        if symbol.startswith("CmpLT") and symbol.endswith("U") and (x[0] < 0 or y[0] < 0):
            return 0, 1
        if symbol.startswith("CmpLT"):
            return (1, 1) if x[1] < y[0] else (0, 0) if x[0] >= y[1] else (0, 1)
        if symbol.startswith("CmpEQ"):
            return (1, 1) if x[0] == x[1] == y[0] == y[1] else (0, 0) if x[1] < y[0] or y[1] < x[0] else (0, 1)
        # CmpNE, CmpNZ
        return (0, 0) if x[0] == x[1] == y[0] == y[1] else (1, 1) if x[1] < y[0] or y[1] < x[0] else (0, 1)
    if width is None:
        return _UNMODELLED  # a float or ref result: the generic forgetting
    n = width
    stem = symbol[:-3] if symbol[-3:] in ("I32", "I64") else symbol
    if symbol in ("AddI32", "AddI64", "SubI32", "SubI64", "MulI32", "MulI64", "FMAI32", "FMAI64"):
        if stem == "FMA":
            a, b, c = get("a"), get("b"), get("c")
            p = [u * v for u in a for v in b]
            return min(p) + c[0], max(p) + c[1]
        x, y = get("lhs"), get("rhs")
        if stem == "Add":
            return x[0] + y[0], x[1] + y[1]
        if stem == "Sub":
            return x[0] - y[1], x[1] - y[0]
        p = [u * v for u in x for v in y]
        return min(p), max(p)
    if symbol in ("AndI32", "AndI64", "OrI32", "OrI64", "XorI32", "XorI64"):
        x, y = get("lhs"), get("rhs")
        if stem == "And":
            if x[0] >= 0 and y[0] >= 0:
                return 0, min(x[1], y[1])
            if x[0] >= 0 or y[0] >= 0:
                return 0, (x if x[0] >= 0 else y)[1]
            return None
        if x[0] >= 0 and y[0] >= 0:
            return 0, (1 << max(x[1], y[1]).bit_length()) - 1
        return None
    if symbol in ("NotI32", "NotI64"):
        x = get("operand")
        return -x[1] - 1, -x[0] - 1
    if symbol in ("ShlI32", "ShlI64", "ShrI32S", "ShrI64S", "ShrI32U", "ShrI64U"):
        x = get("operand")
        amount = state.get((o["amount"].ordinal, 1)) or consts.get((o["amount"].ordinal, 1))
        bits = 32 * n
        s = amount[0] & (bits - 1) if amount is not None and amount[0] == amount[1] else None
        if symbol.startswith("Shl"):
            return None if s is None else (x[0] << s, x[1] << s)
        if x[0] >= 0:
            return (0, x[1]) if s is None else (x[0] >> s, x[1] >> s)
        if symbol.endswith("S"):
            return None if s is None else (x[0] >> s, x[1] >> s)
        return None if not s else (0, (1 << (bits - s)) - 1)
    if symbol in ("DivI32S", "DivI64S", "RemI32S", "RemI64S", "DivI32U", "DivI64U", "RemI32U", "RemI64U"):
        x, y = get("lhs"), get("rhs")
        ds = _divisors(y)
        if not ds:
            return None  # it always traps
        if symbol.endswith("U") and (x[0] < 0 or y[0] < 0):
            return None
        if symbol.startswith("Div"):
            if x[0] == _MIN[n] and y[0] <= -1 <= y[1]:
                return None  # INT_MIN / -1 traps; its neighbours' quotients are not bounded here
            q = [_trunc_div(u, v) for u in x for v in ds]
            return min(q), max(q)
        m = max(abs(v) for v in ds) - 1
        if x[0] >= 0:
            return 0, min(x[1], m)
        if x[1] <= 0:
            return max(x[0], -m), 0
        return max(x[0], -m), min(x[1], m)
    if symbol in ("MinI32S", "MinI64S", "MaxI32S", "MaxI64S", "MinI32U", "MinI64U", "MaxI32U", "MaxI64U"):
        x, y = get("lhs"), get("rhs")
        if symbol.endswith("U") and (x[0] < 0 or y[0] < 0):
            return None
        if symbol.startswith("Min"):
            return min(x[0], y[0]), min(x[1], y[1])
        return max(x[0], y[0]), max(x[1], y[1])
    if symbol in ("AbsI32", "AbsI64"):
        x = get("operand")
        if x[0] == _MIN[n]:
            return None
        if x[0] >= 0:
            return x
        if x[1] <= 0:
            return -x[1], -x[0]
        return 0, max(-x[0], x[1])
    if symbol in ("CtlzI32", "CtlzI64"):
        return 0, 32 * n
    if symbol in ("SelectI32", "SelectI64"):
        cond: Interval | None = state.get((o["condition"].ordinal, 1)) or consts.get((o["condition"].ordinal, 1))
        t, f = get("true_value"), get("false_value")
        if cond is not None and cond == (0, 0):
            return f
        if cond is not None and (cond[0] > 0 or cond[1] < 0):
            return t
        return min(t[0], f[0]), max(t[1], f[1])
    if symbol == "TruncI64I32":
        x = get("operand")
        return x if _MIN[1] <= x[0] and x[1] <= _MAX[1] else None
    if symbol in ("TruncI32I8", "TruncI32I16", "ExtI8I32U", "ExtI16I32U"):
        hi = 255 if "I8" in symbol else 65535
        x = get("operand")
        return x if 0 <= x[0] and x[1] <= hi else (0, hi)
    if symbol in ("ExtI8I32S", "ExtI16I32S"):
        lim = 128 if "I8" in symbol else 32768
        x = get("operand")
        return x if -lim <= x[0] and x[1] < lim else (-lim, lim - 1)
    if symbol == "ExtI32I64S":
        return get("operand")
    if symbol == "ExtI32I64U":
        x = get("operand")
        if x[0] >= 0:
            return x
        if x[1] < 0:
            return x[0] + (1 << 32), x[1] + (1 << 32)
        return 0, (1 << 32) - 1
    if symbol in ("SwitchI32", "SwitchI64") or symbol.startswith("Cast") or symbol.startswith("Bitcast"):
        return None
    return _UNMODELLED


__all__ = ["ValueRanges", "Interval", "block_writes", "nonnegative", "speculated", "top"]
