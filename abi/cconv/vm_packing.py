"""The VM's side of a cconv on one data model: per-target value sizes, the size the VM allocates
(rule a: runtime/src/iree/vm/module.c) and where its packer writes each value and span count (rule
b: runtime/src/iree/vm/bytecode/dispatch.c), with the slots of an instance kept as repeated runs."""
from __future__ import annotations

import operator
from bisect import bisect_right
from collections.abc import Sequence as _SequenceABC
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable, Iterator, NamedTuple, Sequence

from ..layout import Field, Scalar, Pointer, Struct, align_up, layout_of
from ..targets import Target, get as _get_target
from .syntax import Fragment, KINDS, MAX_SPAN_COUNT, SpanCountError, Value, as_fragment

# iree_vm_ref_t (runtime/src/iree/vm/ref.h): the one declaration; layouts/ re-exports it.
IREE_VM_REF_T = Struct("iree_vm_ref_t", [
    Field("ptr", Pointer("void"), doc="object pointer; its counter is at ptr + 4 * (type & 7)"),
    Field("type", Scalar("uintptr_t", "iree_vm_ref_type_t"), doc="descriptor address | counter tag"),
])
IREE_VM_SIZE_T = Scalar("int32_t", "iree_vm_size_t")


# Per-target constants of the rules


@dataclass(frozen=True)
class _RefInfo:
    size: int  # sizeof(iree_vm_ref_t)
    align: int  # iree_alignof(iree_vm_ref_t)


@lru_cache(maxsize=None)
def _ref(target: Target) -> _RefInfo:
    lay = layout_of(IREE_VM_REF_T, target)
    return _RefInfo(lay.size, lay.align)


@lru_cache(maxsize=None)
def _vm_fields(target: Target) -> dict[str, tuple[int, int]]:
    """char -> (size, alignment) as the VM's size rule and packer use them: sizeof(int64_t) aligns
    i64/f64 (not the C ABI's member alignment), alignof(iree_vm_ref_t) aligns refs."""
    r = _ref(target)
    return {"i": (4, 4), "f": (4, 4), "I": (8, 8), "F": (8, 8), "r": (r.size, r.align)}


def target_tables_cache_clear() -> None:
    """Forget the per-target value sizes and alignments the rules have cached."""
    _ref.cache_clear()
    _vm_fields.cache_clear()


def vm_field(char: str, target: "Target | str") -> tuple[int, int]:
    """(size, alignment) of one value character under the VM's size and packing rules."""
    return _vm_fields(_get_target(target))[char]


def check_spans(frag: Fragment, spans: Sequence[int] | None) -> tuple[int, ...]:
    n = len(frag.spans)
    counts = tuple(spans) if spans is not None else ()
    if len(counts) != n:
        raise SpanCountError(
            f"fragment {frag.text!r} has {n} span(s) but {len(counts)} count(s) were given")
    for k, c in enumerate(counts):
        if not isinstance(c, int) or isinstance(c, bool):
            raise SpanCountError(f"span {k} count must be an integer, got {c!r}")
        if c < 0 or c > MAX_SPAN_COUNT:
            raise SpanCountError(f"span {k} count {c} outside 0..{MAX_SPAN_COUNT} (uint16 segment size)")
    return counts


# Rule (a): the size the VM allocates


def vm_size(fragment: "Fragment | str", target: "Target | str", spans: Sequence[int] | None = None) -> int:
    """iree_vm_function_call_compute_cconv_fragment_size."""
    frag, t = as_fragment(fragment), _get_target(target)
    return vm_size_instance(frag, t, check_spans(frag, spans))


def vm_size_instance(frag: Fragment, t: Target, spans: tuple[int, ...]) -> int:
    fields = _vm_fields(t)
    counts = iter(spans)
    size, max_align = 0, 4
    for item in frag.items:
        if isinstance(item, Value):
            fs, fa = fields[item.char]
            size = align_up(size, fa) + fs
            max_align = max(max_align, fa)
        else:
            n = next(counts)
            size += 4  # the count, unaligned
            esize, ealign = 0, 4
            for v in item.values:
                fs, fa = fields[v.char]
                esize = align_up(esize, fa) + fs  # the element is not rounded up to ealign
                ealign = max(ealign, fa)
            max_align = max(max_align, ealign)
            size = align_up(size, ealign) + esize * n  # aligned even when n == 0
    return align_up(size, max_align)


# Rule (b): where the VM's packer writes


class ValueSlot(NamedTuple):  # NamedTuple: built by the thousand on first layouts
    kind: str
    char: str
    offset: int
    size: int
    index: int  # type: ignore[assignment]  # shadows tuple.index; the character's in the fragment
    span: int | None = None  # which span (0-based) or None for fixed values
    element: int | None = None  # element number within the span

    @property
    def end(self) -> int:
        return self.offset + self.size


class CountSlot(NamedTuple):
    span: int
    offset: int
    count: int  # type: ignore[assignment]  # shadows tuple.count (never called here)
    size: int = 4

    @property
    def end(self) -> int:
        return self.offset + self.size


class Gap(NamedTuple):
    offset: int
    size: int


# Slots of an instance, stored as repeated runs
#
# A span of 65535 elements would otherwise cost one object per value (hundreds of bytes each, for a
# layout most callers walk once). Within a span the packer's layout is periodic: each element's fields
# are placed by the residue of its start address modulo the element alignment, so after at most a few
# elements (one per residue) the byte pattern repeats with a fixed stride. A run stores that pattern
# once; the sequences below build each slot when it is asked for.


class Run(NamedTuple):
    reps: int  # repetitions of `items`
    stride: int  # bytes from one repetition to the next
    offset: int  # added to every item's offset
    items: tuple  # templates (ValueSlot, Gap or int offsets) relative to the repetition
    elements: int = 0  # span elements per repetition (ValueSlot templates only)
    first: int = 0  # element number of repetition 0's first element


# Sequences up to this many items also keep them in a tuple: the hot paths (a call's buffer is
# walked on every import call) then iterate a tuple, and the memory is the old layout's.
_KEEP_ITEMS = 256


def _explicit(run: Run) -> bool:
    """Whether a run's items are the final items (one repetition, nothing added)."""
    return run.reps == 1 and run.offset == 0 and run.first == 0


class _RunSequence(_SequenceABC):
    """An immutable sequence spelled as runs; equal to the tuple of its items."""

    __slots__ = ("_runs", "_starts", "_len", "_items")
    _starts: tuple[int, ...]
    _items: tuple[Any, ...] | None  # the items themselves, when few enough to keep

    def __init__(self, runs: Iterable[Run]) -> None:
        self._runs = tuple(r for r in runs if r.reps > 0 and r.items)
        if len(self._runs) <= 1 and all(_explicit(r) for r in self._runs):  # the common small case
            self._items = self._runs[0].items if self._runs else ()
            self._starts, self._len = (0,), len(self._items)
            return
        starts, n = [], 0
        for r in self._runs:
            starts.append(n)
            n += r.reps * len(r.items)
        self._starts = tuple(starts)
        self._len = n
        self._items = None
        if n <= _KEEP_ITEMS:
            if all(_explicit(r) for r in self._runs):
                self._items = tuple(x for r in self._runs for x in r.items)
            else:
                self._items = tuple(self._generate())

    def _make(self, run: Run, item: Any, q: int) -> Any:
        raise NotImplementedError

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, i: Any) -> Any:
        if self._items is not None:
            return self._items[i]
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(self._len)))
        i = operator.index(i)
        if i < 0:
            i += self._len
        if not 0 <= i < self._len:
            raise IndexError(f"{type(self).__name__} index out of range")
        k = bisect_right(self._starts, i) - 1
        run = self._runs[k]
        q, j = divmod(i - self._starts[k], len(run.items))
        return self._make(run, run.items[j], q)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._items) if self._items is not None else self._generate()

    def _generate(self) -> Iterator[Any]:
        make = self._make
        for run in self._runs:
            for q in range(run.reps):
                for item in run.items:
                    yield make(run, item, q)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (tuple, list, _RunSequence)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        if self._len <= 8:
            return repr(tuple(self))
        return f"<{type(self).__name__} of {self._len}: {self[0]!r}, ..., {self[-1]!r}>"


class ValueSlots(_RunSequence):
    """The values of an instance, in packer order (a sequence of ValueSlot)."""

    __slots__ = ()

    def _make(self, run: Run, t: ValueSlot, q: int) -> ValueSlot:
        element = t.element if t.span is None else run.first + q * run.elements + t.element  # type: ignore[operator]  # a span's slot has its element
        return ValueSlot(t.kind, t.char, run.offset + q * run.stride + t.offset, t.size, t.index,
                         t.span, element)

    def misplaced(self, reads: Iterable[int]) -> Iterator[tuple[ValueSlot, int]]:
        """(value, read offset) for each value whose offset differs from its read (zip order)."""
        if self._items is not None:
            return ((v, r) for v, r in zip(self._items, reads) if v.offset != r)
        return ((self[i], r) for i, (o, r) in enumerate(zip(self.offsets(), reads)) if o != r)

    def offsets(self) -> Iterator[int]:
        """Each value's offset, in order, without building the slots."""
        for run in self._runs:
            for q in range(run.reps):
                at = run.offset + q * run.stride
                for t in run.items:
                    yield at + t.offset


class Gaps(_RunSequence):
    """Byte ranges nothing is packed into (a sequence of Gap)."""

    __slots__ = ()

    def _make(self, run: Run, t: Gap, q: int) -> Gap:
        return Gap(run.offset + q * run.stride + t.offset, t.size)


class Offsets(_RunSequence):
    """Byte offsets (a sequence of int), e.g. where a reader looks for each value."""

    __slots__ = ()

    def _make(self, run: Run, t: int, q: int) -> int:
        return run.offset + q * run.stride + t

    def _generate(self) -> Iterator[int]:
        for run in self._runs:
            for q in range(run.reps):
                at = run.offset + q * run.stride
                for t in run.items:
                    yield at + t


class _Packed(NamedTuple):
    values: ValueSlots
    counts: tuple[CountSlot, ...]
    gaps: Gaps  # alignment padding between packed slots (not the tail up to the VM's size)
    end: int


def vm_pack(fragment: "Fragment | str", target: "Target | str", spans: Sequence[int] | None = None,
            base: int = 0) -> tuple[tuple[ValueSlot, ...], tuple[CountSlot, ...], int]:
    """iree_vm_bytecode_populate_import_cconv_arguments: (values, counts, end offset).

    Alignment applies to the absolute address `base + offset`, as the packer aligns pointers.
    """
    frag, t = as_fragment(fragment), _get_target(target)
    packed = vm_pack_instance(frag, t, check_spans(frag, spans), base)
    return tuple(packed.values), packed.counts, packed.end


# Spans with more elements than this are stored as a repeated run; shorter ones slot by slot,
# which is quicker to build (a new dispatch shape is laid out on the call path).
RUN_MIN_ELEMENTS = 16


def _element(elem: Sequence[tuple], span_no: int, r: int) -> tuple[list[ValueSlot], list[Gap], int]:
    """One span element whose first byte lies at residue `r` of the element alignment: its values
    and gaps relative to that byte (element numbers relative: 0), and its length (to the end of its
    last field)."""
    values, gaps, p = [], [], r
    for kind, char, index, fs, fa in elem:
        q = -(-p // fa) * fa  # every field of every element re-aligned
        if q > p:
            gaps.append(Gap(p - r, q - p))
        values.append(ValueSlot(kind, char, q - r, fs, index, span_no, 0))
        p = q + fs
    return values, gaps, p - r


def vm_pack_instance(frag: Fragment, t: Target, counts: tuple[int, ...], base: int = 0,
             size: int | None = None) -> _Packed:
    """The packer's slots; `gaps` end at the last slot, or at `size` if given and larger."""
    fields = _vm_fields(t)
    runs: list[Run] = []  # of values
    gap_runs: list[Run] = []
    values: list[ValueSlot] = []  # not yet in a run; offsets from base, final element numbers
    gaps: list[Gap] = []
    count_slots: list[CountSlot] = []
    p = base
    span_no = 0
    for item in frag.items:
        if isinstance(item, Value):
            fs, fa = fields[item.char]
            q = -(-p // fa) * fa
            if q > p:
                gaps.append(Gap(p - base, q - p))
            values.append(ValueSlot(KINDS[item.char], item.char, q - base, fs, item.index))
            p = q + fs
            continue
        n = counts[span_no]
        count_slots.append(CountSlot(span_no, p - base, n))
        p += 4
        if n:
            elem = [(KINDS[v.char], v.char, v.index, *fields[v.char]) for v in item.values]
            ealign = max([4] + [e[4] for e in elem])
            q = -(-p // ealign) * ealign
            if q > p:
                gaps.append(Gap(p - base, q - p))
            p = q
            if n <= RUN_MIN_ELEMENTS:
                for e in range(n):
                    for kind, char, index, fs, fa in elem:
                        q = -(-p // fa) * fa  # every field of every element re-aligned
                        if q > p:
                            gaps.append(Gap(p - base, q - p))
                        values.append(ValueSlot(kind, char, q - base, fs, index, span_no, e))
                        p = q + fs
            else:
                p = _pack_span_run(elem, ealign, span_no, n, p, base, values, gaps, runs, gap_runs)
        span_no += 1
    if size is not None and size > p - base:  # the tail the VM allocates and the packer never writes
        gaps.append(Gap(p - base, size - (p - base)))
    runs.append(Run(1, 0, 0, tuple(values)))
    gap_runs.append(Run(1, 0, 0, tuple(gaps)))
    return _Packed(ValueSlots(runs), tuple(count_slots), Gaps(gap_runs), p - base)


def _pack_span_run(elem: Sequence[tuple], ealign: int, span_no: int, n: int, p: int, base: int,
                   values: list, gaps: list, runs: list, gap_runs: list) -> int:
    """Lay out `n` elements from absolute `p` (aligned to `ealign`) as: the elements before the
    pattern starts repeating, slot by slot; the repeating cycle as one run; the partial cycle left.
    `values`/`gaps` hold the slots not yet in a run. Returns the end."""
    laid: list[tuple[list[ValueSlot], list[Gap], int]] = []
    starts: list[int] = []
    seen: dict[int, int] = {}
    at = p
    while len(laid) < n and at % ealign not in seen:  # until an element's start residue repeats
        seen[at % ealign] = len(laid)
        starts.append(at)
        laid.append(_element(elem, span_no, at % ealign))
        at += laid[-1][2]

    def place(elements: Sequence[tuple], at: int, first: int) -> int:
        for k, (vals, gs, length) in enumerate(elements):
            values.extend(ValueSlot(v.kind, v.char, at - base + v.offset, v.size, v.index, span_no, first + k)
                          for v in vals)
            gaps.extend(Gap(at - base + g.offset, g.size) for g in gs)
            at += length
        return at

    if len(laid) == n:
        return place(laid, p, 0)
    c = seen[at % ealign]  # the cycle: elements c .. len(laid)-1, `cycle` bytes long
    period, cycle = len(laid) - c, at - starts[c]
    place(laid[:c], p, 0)
    reps, tail = divmod(n - c, period)
    tmpl_v: list[ValueSlot] = []
    tmpl_g: list[Gap] = []
    off = 0
    for k, (vals, gs, length) in enumerate(laid[c:]):
        tmpl_v.extend(ValueSlot(v.kind, v.char, off + v.offset, v.size, v.index, span_no, k) for v in vals)
        tmpl_g.extend(Gap(off + g.offset, g.size) for g in gs)
        off += length
    runs.append(Run(1, 0, 0, tuple(values)))
    gap_runs.append(Run(1, 0, 0, tuple(gaps)))
    values.clear()
    gaps.clear()
    runs.append(Run(reps, cycle, starts[c] - base, tuple(tmpl_v), period, c))
    gap_runs.append(Run(reps, cycle, starts[c] - base, tuple(tmpl_g)))
    return place(laid[c:c + tail], starts[c] + reps * cycle, c + reps * period)


