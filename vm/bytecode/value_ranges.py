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

What an op does to the intervals is declared beside its handler (handlers.py: `interval_rule`,
`condition_rule`, `interval_edges`, registered when the op modules are, before any function is
compiled); this module is the op-independent machinery that looks them up.
"""
from __future__ import annotations

import bisect
from typing import Any, Iterable

from . import isa
from .handlers import CONDITION_RULES, CONSTANT_RULES, INTERVAL_EDGES, INTERVAL_RULES, NONZERO_TESTS
from .ops_control import ENDS_BLOCK
from .region_plan import moves, named_registers

Interval = tuple[int, int]
Slot = tuple[int, int]
State = dict  # Slot -> Interval; absent: any value

_MIN = {1: -(1 << 31), 2: -(1 << 63)}
_MAX = {1: (1 << 31) - 1, 2: (1 << 63) - 1}
_WIDTH = {"i32": 1, "i64": 2}
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
        o = inst.operands
        edges = INTERVAL_EDGES.get(inst.op.symbol)
        if edges is not None:  # it goes elsewhere than on: its edges (a condition's refined)
            taken = edges(inst)
            if record and any(test is not None for _, _, test in taken):
                self._record_reads(e - 1, inst, state)
            out = []
            for dest, pairs, test in taken:
                edge: State | None = state
                if test is not None:
                    cond, truth = test
                    edge = _refine(dict(state), compares.get(cond), truth, state.get((cond, 1)), self.consts)
                if edge is not None:
                    out.append((fn.block_index.get(dest, -1), _moved(edge, pairs, self._moves)))
            return out
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
        result = _transfer(inst, state, self._slots[i], self.consts) if len(written) == 1 else None
        for first, n, _ in written:
            _kill(state, compares, first, n)
        if result is None:  # any value
            return
        first, n, kind = written[0]
        lo, hi = result
        if not _MIN[n] <= lo <= hi <= _MAX[n]:
            return  # it may wrap: any value
        state[(first, n)] = result
        if record and kind in _WIDTH:
            self.result[i] = result
        if symbol in CONDITION_RULES:
            slots = self._slots[i]
            operands = [slots[f.name] for f in inst.op.fields if f.access == isa.READ and f.name in slots]
            if any(r < first + 1 and first < r + m for r, m in operands):
                return  # the result overwrote an operand: the compare says nothing of what is left
            fact = (symbol, operands[0], operands[1] if len(operands) > 1 else None)
            if symbol in NONZERO_TESTS and operands[0][0] in compares and \
                    (state.get(operands[0]) or self.consts.get(operands[0])) == (0, 1):
                fact = compares[operands[0][0]]  # a nonzero test of a compare's 0 or 1: the same condition
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
        if inst.op.symbol in CONSTANT_RULES and len(writes[i]) == 1 and writes[i][0][2] in _WIDTH:
            first, n, _ = writes[i][0]
            slot_regs = range(first, first + n)
            if all(writers.get(r) == [i] for r in slot_regs) and not read.intersection(slot_regs):
                consts[(first, n)] = _transfer(inst, {}, {}, {})
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
    edges = INTERVAL_EDGES.get(inst.op.symbol)
    if edges is not None:
        return [fn.block_index.get(dest, -1) for dest, _, _ in edges(inst)]
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
        if inst.op.symbol in CONSTANT_RULES and any(f.access == isa.WRITE and f.kind in _WIDTH for f in inst.op.fields):
            v = _transfer(inst, {}, {}, {})[0]
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
    narrowed = CONDITION_RULES[symbol](x, y, truth)
    if narrowed is None:
        return state
    x, y = narrowed
    if x[0] > x[1] or y[0] > y[1]:
        return None
    if x != top(n):
        state[a] = x
    if b is not None and y != top(n):
        state[b] = y
    return state


class Operands:
    """What an interval rule (handlers.interval_rule) reads: its instruction, the width in
    registers of its integer result (None: not an integer), and its integer operands' intervals
    where the instruction runs."""

    __slots__ = ("inst", "width", "_state", "_slots", "_consts")

    def __init__(self, inst: Any, width: int | None, state: State, slots: dict, consts: dict) -> None:
        self.inst = inst
        self.width = width
        self._state = state
        self._slots = slots  # field name -> slot
        self._consts = consts

    def known(self, name: str) -> Interval | None:
        """The interval of the integer operand `name`, None where it may hold anything."""
        slot = self._slots[name]
        return self._state.get(slot) or self._consts.get(slot)

    def get(self, name: str) -> Interval:
        """The interval of the integer operand `name` (its type's whole range where not known)."""
        slot = self._slots[name]
        return self._state.get(slot) or self._consts.get(slot) or top(slot[1])


def _transfer(inst: Any, state: State, slots: dict, consts: dict) -> Interval | None:
    """The interval of the op's integer result by its rule (None: any value). `slots`: its integer
    operands' slots by field name."""
    rule = INTERVAL_RULES.get(inst.op.symbol)
    if rule is None:
        return None
    width = None
    for f in inst.op.fields:
        if f.access == isa.WRITE:
            width = _WIDTH.get(f.kind)
    result: Interval | None = rule(Operands(inst, width, state, slots, consts))
    return result


__all__ = ["ValueRanges", "Interval", "Operands", "block_writes", "nonnegative", "speculated", "top"]
