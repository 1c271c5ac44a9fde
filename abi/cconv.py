"""IREE VM calling conventions: parsing and byte layout, one function per IREE rule.

A cconv string (`0rIiiiCiDCrIID_v`) describes the packed argument and result buffers that cross the
VM/native boundary. IREE lays these buffers out in several independent places; each is modelled here
by its own function so that disagreements can be named:

- `vm_size`  — runtime/src/iree/vm/module.c, iree_vm_function_call_compute_cconv_fragment_size: the
  bytes the VM allocates (offsets from 0, spans aligned even when empty, trailing padding).
- `vm_pack`  — runtime/src/iree/vm/bytecode/dispatch.c, the import-argument packer and external
  enter/leave: where each value and span count is written (absolute-address alignment, every span
  element field re-aligned, no trailing padding, empty spans not aligned).
- `shim_struct` / `shim_view` — runtime/src/iree/vm/shims.h, IREE_VM_ABI_FIXED_STRUCT /
  IREE_VM_ABI_VLA_STRUCT: the plain C struct a native shim declares, laid out by the target's C ABI,
  and the length it insists on.
- `span_reader` — a hand-written reader of several spans that copies the fixed C struct and walks
  the tails itself, as hal_loader's dispatch shim does (pre-fix: starting at sizeof of the fixed
  struct; fixed: at the packed size of the fixed part).

`layout()` runs the first three for one instance (fragment, target, span counts) and reports every
disagreement as a `Finding`. A difference that only moves the allocation's unused tail (the VM sizes
empty spans and trailing padding the packer never writes) is not a finding: no byte changes meaning.
"""
from __future__ import annotations

import operator
from bisect import bisect_right
from collections.abc import Sequence as _SequenceABC
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Iterable, Iterator, NamedTuple, Sequence

from .errors import IreeAbiError
from .layout import Array, Field, Scalar, Pointer, Struct, align_up, layout_of
from .targets import Target, get as _get_target

VERSION = "0"
KINDS = {"i": "i32", "I": "i64", "f": "f32", "F": "f64", "r": "ref"}
SPAN_START, SPAN_END, VOID, SPLIT = "C", "D", "v", "_"
MAX_SPAN_COUNT = 0xFFFF  # segment sizes are uint16 registers (iree_vm_register_list_t)
# Values a rule names one finding each; past that one finding counts the rest. A span of 65535
# elements the shim misreads would otherwise hold one message per value (hundreds of bytes each),
# and the first few already show the pattern.
MAX_VALUE_FINDINGS = 64

# iree_vm_ref_t (runtime/src/iree/vm/ref.h): the one declaration; layouts/ re-exports it.
IREE_VM_REF_T = Struct("iree_vm_ref_t", [
    Field("ptr", Pointer("void"), doc="object pointer; its counter is at ptr + 4 * (type & 7)"),
    Field("type", Scalar("uintptr_t", "iree_vm_ref_type_t"), doc="descriptor address | counter tag"),
])
IREE_VM_SIZE_T = Scalar("int32_t", "iree_vm_size_t")


# --------------------------------------------------------------------------------------------------
# Errors


class CconvError(IreeAbiError):
    """A malformed calling convention; `index` and `char` point at the offending character.

    `iree_status` names IREE's own verdict on the same text (`iree_verdict`): this parser is stricter
    than IREE's walkers in places, and the property says where (None: IREE accepts it).
    """

    def __init__(self, text: str, index: int, reason: str) -> None:
        self.text = text
        self.index = index
        self.char = text[index] if 0 <= index < len(text) else ""
        self.reason = reason
        self.source: str | None = text  # what was parsed (None: not a string at all)
        self.fragment = False  # parsed as a bare fragment rather than a whole signature
        where = f"index {index} ({self.char!r})" if self.char else f"index {index} (end of string)"
        super().__init__(f"{reason} at {where} in {text!r}")

    @property
    def iree_status(self) -> "tuple[str, str] | None":
        """(status code name, message) IREE reports for this text, or None where IREE accepts it."""
        if self.source is None:
            return None
        return iree_verdict(self.source, fragment=self.fragment)


class UnknownTypeError(CconvError):
    pass


class SpanSyntaxError(CconvError):
    pass


class VersionError(CconvError):
    pass


class SpanCountError(IreeAbiError):
    """Span counts that do not fit the fragment (missing, extra, negative, > 65535)."""


# --------------------------------------------------------------------------------------------------
# Parsing


class Value(NamedTuple):
    char: str
    index: int  # in the text parsed (the whole signature for `parse`)

    @property
    def kind(self) -> str:
        return KINDS[self.char]


class Span(NamedTuple):
    values: tuple[Value, ...]
    index: int  # of its 'C'

    @property
    def text(self) -> str:
        return "".join(v.char for v in self.values)


Item = "Value | Span"


@dataclass(frozen=True)
class Fragment:
    text: str  # the fragment's own characters ("" for `v`/empty)
    items: tuple  # Value | Span, in order

    @property
    def spans(self) -> tuple[Span, ...]:
        return tuple(i for i in self.items if isinstance(i, Span))

    @property
    def has_spans(self) -> bool:
        return any(isinstance(i, Span) for i in self.items)

    @property
    def fixed_prefix(self) -> str:
        """The characters before the first span."""
        out = []
        for i in self.items:
            if isinstance(i, Span):
                break
            out.append(i.char)
        return "".join(out)

    @property
    def struct_name(self) -> str:
        return f"iree_vm_abi_{self.text or 'v'}_t"

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Signature:
    text: str
    arguments: Fragment
    results: Fragment

    def __str__(self) -> str:
        return self.text


def _parse_items(full: str, start: int, end: int, *, allow_spans: bool) -> tuple:
    items: list = []
    i = start
    if end - start == 1 and full[start] == VOID:
        return ()
    while i < end:
        c = full[i]
        if c in KINDS:
            items.append(Value(c, i))
            i += 1
        elif c == SPAN_START:
            if not allow_spans:
                raise SpanSyntaxError(full, i, "spans are not allowed in results")
            j = i + 1
            values = []
            while j < end and full[j] != SPAN_END:
                if full[j] == SPAN_START:
                    raise SpanSyntaxError(full, j, "nested span")
                if full[j] not in KINDS:
                    raise UnknownTypeError(full, j, _unknown_reason(full[j]))
                values.append(Value(full[j], j))
                j += 1
            if j >= end:
                raise SpanSyntaxError(full, i, "unterminated span")
            if not values:
                raise SpanSyntaxError(full, i, "empty span")
            items.append(Span(tuple(values), i))
            i = j + 1
        elif c == SPAN_END:
            raise SpanSyntaxError(full, i, "span end without a span start")
        elif c == VOID:
            raise UnknownTypeError(full, i, "'v' is only valid as a whole fragment")
        else:
            raise UnknownTypeError(full, i, _unknown_reason(c))
    return tuple(items)


def _unknown_reason(c: str) -> str:
    if c == SPLIT:
        return "second '_' (a signature has one argument/result split)"
    return f"unknown type character (expected one of {''.join(KINDS)}, C...D or v)"


@lru_cache(maxsize=4096)
def parse(text: str) -> Signature:
    """Parse a whole signature: `0` + arguments [+ `_` + results]. Empty text is ()->()."""
    if not isinstance(text, str):
        raise _not_text(CconvError(repr(text), 0, "a calling convention must be a string"))
    if text == "":
        return Signature("", Fragment("", ()), Fragment("", ()))
    if text[0] != VERSION:
        raise VersionError(text, 0, "unsupported cconv version (only '0')")
    split = text.find(SPLIT)
    arg_end = len(text) if split < 0 else split
    args = Fragment(_frag_text(text, 1, arg_end), _parse_items(text, 1, arg_end, allow_spans=True))
    if split < 0:
        results = Fragment("", ())
    else:
        results = Fragment(_frag_text(text, split + 1, len(text)),
                           _parse_items(text, split + 1, len(text), allow_spans=False))
    return Signature(text, args, results)


def _frag_text(text: str, start: int, end: int) -> str:
    t = text[start:end]
    return "" if t == VOID else t


@lru_cache(maxsize=4096)
def parse_fragment(text: str) -> Fragment:
    """Parse one fragment (`rIiiiCiDCrIID`, `v` or empty); indices are into `text`."""
    if not isinstance(text, str):
        raise _not_text(CconvError(repr(text), 0, "a fragment must be a string"))
    if text[:1] == VERSION:
        raise CconvError(text, 0, "this is a whole signature; pass parse(text).arguments or .results")
    try:
        items = _parse_items(text, 0, len(text), allow_spans=True)
    except CconvError as e:
        e.fragment = True  # IREE's verdict is then the one on a fragment (iree_verdict)
        raise
    return Fragment("" if text == VOID else text, items)


def _not_text(e: CconvError) -> CconvError:
    e.source = None
    return e


# --------------------------------------------------------------------------------------------------
# IREE's own verdict on a cconv text, modelled apart from the (stricter) parser above


_IREE_VALUE_CHARS = frozenset("viIfFr")  # 'v' is skipped wherever IREE's walkers meet it
_NO_SEGMENTS = ("INVALID_ARGUMENT", "variadic argument found but segment size list is missing/underflowed")


def _c_char(ch: str) -> str:
    """A character as C's `%c` prints the first byte of its UTF-8 form (latin-1 for one byte)."""
    return ch.encode("utf-8", "surrogatepass")[:1].decode("latin-1")


def _iree_walk(frag: str, segments: bool) -> "tuple[str, str] | None":
    """iree_vm_function_call_compute_cconv_fragment_size's character checks (module.c): unknown
    characters fail, 'v' is skipped, a span runs to its 'D' or to the end of the fragment, a span
    without a segment size list fails."""
    i, n = 0, len(frag)
    while i < n:
        c = frag[i]
        if c == SPAN_START:
            if not segments:
                return _NO_SEGMENTS
            i += 1
            while i < n and frag[i] != SPAN_END:
                if frag[i] not in _IREE_VALUE_CHARS:
                    return ("UNIMPLEMENTED", f"unsupported cconv span type '{_c_char(frag[i])}'")
                i += 1
        elif c not in _IREE_VALUE_CHARS:
            return ("UNIMPLEMENTED", f"unsupported cconv type '{_c_char(c)}'")
        i += 1
    return None


def iree_verdict(text: str, *, fragment: bool = False) -> "tuple[str, str] | None":
    """How IREE judges `text`: None when it accepts it, else (status code name, message).

    A whole signature goes through what resolving an import does (runtime/src/iree/vm/bytecode/
    module.c, iree_vm_bytecode_module_resolve_import): the fragment split and version check of
    iree_vm_function_call_get_cconv_fragments, the size walk of non-variadic arguments and of the
    results (no segment sizes: a span there fails), and, for variadic arguments, the walk each call
    makes with the caller's segment sizes (assumed present). A bare fragment gets that last walk.
    IREE accepts things `parse` refuses ('v' among values, empty or unterminated spans): the two
    verdicts are kept apart so the disagreement has a name.
    """
    if fragment:
        return _iree_walk(text, True)
    if text == "":
        return None  # no cconv: ()->()
    if text[0] != VERSION:
        return ("UNIMPLEMENTED", f"unsupported cconv version {_c_char(text[0])}")
    args, _, results = text[1:].partition(SPLIT)
    args = "" if args == VOID else args
    results = "" if results == VOID else results
    variadic = SPAN_START in args  # iree_vm_function_call_is_variadic_cconv
    return ((None if variadic else _iree_walk(args, False)) or _iree_walk(results, False)
            or (_iree_walk(args, True) if variadic else None))


def as_fragment(fragment: "Fragment | str") -> Fragment:
    return fragment if isinstance(fragment, Fragment) else parse_fragment(fragment)


# --------------------------------------------------------------------------------------------------
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


def vm_field(char: str, target: "Target | str") -> tuple[int, int]:
    """(size, alignment) of one value character under the VM's size and packing rules."""
    return _vm_fields(_get_target(target))[char]


def _check_spans(frag: Fragment, spans: Sequence[int] | None) -> tuple[int, ...]:
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


# --------------------------------------------------------------------------------------------------
# Rule (a): the size the VM allocates


def vm_size(fragment: "Fragment | str", target: "Target | str", spans: Sequence[int] | None = None) -> int:
    """iree_vm_function_call_compute_cconv_fragment_size."""
    frag, t = as_fragment(fragment), _get_target(target)
    return _vm_size(frag, t, _check_spans(frag, spans))


def _vm_size(frag: Fragment, t: Target, spans: tuple[int, ...]) -> int:
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


# --------------------------------------------------------------------------------------------------
# Rule (b): where the VM's packer writes


class ValueSlot(NamedTuple):  # NamedTuple: built by the thousand on first layouts
    kind: str
    char: str
    offset: int
    size: int
    index: int  # character index in the fragment
    span: int | None = None  # which span (0-based) or None for fixed values
    element: int | None = None  # element number within the span

    @property
    def end(self) -> int:
        return self.offset + self.size


class CountSlot(NamedTuple):
    span: int
    offset: int
    count: int
    size: int = 4

    @property
    def end(self) -> int:
        return self.offset + self.size


class Gap(NamedTuple):
    offset: int
    size: int


# --------------------------------------------------------------------------------------------------
# Slots of an instance, stored as repeated runs
#
# A span of 65535 elements would otherwise cost one object per value (hundreds of bytes each, for a
# layout most callers walk once). Within a span the packer's layout is periodic: each element's fields
# are placed by the residue of its start address modulo the element alignment, so after at most a few
# elements (one per residue) the byte pattern repeats with a fixed stride. A run stores that pattern
# once; the sequences below build each slot when it is asked for.


class _Run(NamedTuple):
    reps: int  # repetitions of `items`
    stride: int  # bytes from one repetition to the next
    offset: int  # added to every item's offset
    items: tuple  # templates (ValueSlot, Gap or int offsets) relative to the repetition
    elements: int = 0  # span elements per repetition (ValueSlot templates only)
    first: int = 0  # element number of repetition 0's first element


# Sequences up to this many items also keep them in a tuple: the hot paths (a call's buffer is
# walked on every import call) then iterate a tuple, and the memory is the old layout's.
_KEEP_ITEMS = 256


def _explicit(run: _Run) -> bool:
    """Whether a run's items are the final items (one repetition, nothing added)."""
    return run.reps == 1 and run.offset == 0 and run.first == 0


class _RunSequence(_SequenceABC):
    """An immutable sequence spelled as runs; equal to the tuple of its items."""

    __slots__ = ("_runs", "_starts", "_len", "_items")

    def __init__(self, runs: Iterable[_Run]) -> None:
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

    def _make(self, run: _Run, item: Any, q: int) -> Any:
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

    def _make(self, run: _Run, t: ValueSlot, q: int) -> ValueSlot:
        element = t.element if t.span is None else run.first + q * run.elements + t.element
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

    def _make(self, run: _Run, t: Gap, q: int) -> Gap:
        return Gap(run.offset + q * run.stride + t.offset, t.size)


class Offsets(_RunSequence):
    """Byte offsets (a sequence of int), e.g. where a reader looks for each value."""

    __slots__ = ()

    def _make(self, run: _Run, t: int, q: int) -> int:
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
    packed = _vm_pack(frag, t, _check_spans(frag, spans), base)
    return tuple(packed.values), packed.counts, packed.end


# Spans with more elements than this are stored as a repeated run; shorter ones slot by slot,
# which is quicker to build (a new dispatch shape is laid out on the call path).
_RUN_MIN_ELEMENTS = 16


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


def _vm_pack(frag: Fragment, t: Target, counts: tuple[int, ...], base: int = 0,
             size: int | None = None) -> _Packed:
    """The packer's slots; `gaps` end at the last slot, or at `size` if given and larger."""
    fields = _vm_fields(t)
    runs: list[_Run] = []  # of values
    gap_runs: list[_Run] = []
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
            if n <= _RUN_MIN_ELEMENTS:
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
    runs.append(_Run(1, 0, 0, tuple(values)))
    gap_runs.append(_Run(1, 0, 0, tuple(gaps)))
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
    tmpl_v, tmpl_g, off = [], [], 0
    for k, (vals, gs, length) in enumerate(laid[c:]):
        tmpl_v.extend(ValueSlot(v.kind, v.char, off + v.offset, v.size, v.index, span_no, k) for v in vals)
        tmpl_g.extend(Gap(off + g.offset, g.size) for g in gs)
        off += length
    runs.append(_Run(1, 0, 0, tuple(values)))
    gap_runs.append(_Run(1, 0, 0, tuple(gaps)))
    values.clear()
    gaps.clear()
    runs.append(_Run(reps, cycle, starts[c] - base, tuple(tmpl_v), period, c))
    gap_runs.append(_Run(reps, cycle, starts[c] - base, tuple(tmpl_g)))
    return place(laid[c:c + tail], starts[c] + reps * cycle, c + reps * period)


# --------------------------------------------------------------------------------------------------
# Rule (c): the C structs native shims declare


_SHIM_SCALAR = {"i": Scalar("int32_t"), "I": Scalar("int64_t"), "f": Scalar("float"), "F": Scalar("double")}


@lru_cache(maxsize=None)
def _shim_field(char: str, position: int) -> Field:
    if char == "r":
        return Field(f"r{position}", IREE_VM_REF_T)
    prefix = "f" if char in "fF" else "i"
    return Field(f"{prefix}{position}", _SHIM_SCALAR[char])


@lru_cache(maxsize=None)
def shim_struct(fragment_text: str) -> Struct | None:
    """`iree_vm_abi_<types>_t` as IREE_VM_ABI_FIXED_STRUCT / IREE_VM_ABI_VLA_STRUCT declare it.

    Fixed values are named by position (`r0`, `i1`, ...); one trailing span becomes `aK_count` plus a
    zero-length array of `iree_vm_abi_<element>_t`. None when the shim macros cannot express the
    fragment (empty, several spans, or a span followed by more values).
    """
    frag = parse_fragment(fragment_text)
    if not frag.items or any(isinstance(i, Span) for i in frag.items[:-1]):
        return None
    fields: list[Field] = []
    for pos, item in enumerate(frag.items):
        if isinstance(item, Value):
            fields.append(_shim_field(item.char, pos))
        else:
            elem = shim_struct(item.text)
            fields.append(Field(f"a{pos}_count", IREE_VM_SIZE_T))
            fields.append(Field(f"a{pos}", Array(elem, None)))
    return Struct(frag.struct_name, fields, doc=f"native shim struct for cconv fragment {frag.text!r}")


@dataclass(frozen=True)
class ShimView:
    """How a generic native shim reads this instance."""

    struct: Struct
    sizeof: int
    required_length: int  # the exact length the shim's checked_deref accepts
    reads: Sequence[int]  # offset of every value, in `vm_pack` order (an `Offsets`)
    count_offset: int | None
    element_size: int | None


def shim_view(fragment: "Fragment | str", target: "Target | str",
              spans: Sequence[int] | None = None) -> ShimView | None:
    frag, t = as_fragment(fragment), _get_target(target)
    return _shim_view(frag, t, _check_spans(frag, spans))


def _shim_view(frag: Fragment, t: Target, counts: tuple[int, ...]) -> ShimView | None:
    s = shim_struct(frag.text)
    if s is None:
        return None
    lay = layout_of(s, t)
    fixed: list[int] = []
    span_run = None
    count_offset = elem_size = None
    for pos, item in enumerate(frag.items):
        if isinstance(item, Value):
            fixed.append(lay.fields[pos].offset)
        else:
            count_offset = lay.fields[pos].offset
            arr = lay.fields[pos + 1]
            elay = layout_of(arr.type.elem, t)
            elem_size = elay.size
            field_offsets = tuple(f.offset for f in elay.fields)
            if counts[0] <= _RUN_MIN_ELEMENTS:
                fixed += [arr.offset + e * elay.size + f for e in range(counts[0]) for f in field_offsets]
            else:
                span_run = _Run(counts[0], elay.size, arr.offset, field_offsets)
    reads = Offsets([_Run(1, 0, 0, tuple(fixed))] + ([span_run] if span_run else []))
    required = lay.size + (counts[0] * elem_size if elem_size is not None else 0)
    return ShimView(s, lay.size, required, reads, count_offset, elem_size)


# --------------------------------------------------------------------------------------------------
# Hand-written multi-span readers (hal_loader's dispatch shim and its kind)


@dataclass(frozen=True)
class ReaderView:
    """Where a reader that copies the fixed C struct and walks spans by hand finds each value."""

    name: str
    reads: Sequence[int]  # values, in `vm_pack` order (an `Offsets`)
    count_reads: tuple[int, ...]
    end: int  # the end it checks against the buffer length


READER_FORMS = ("pre-fix", "fixed")


def span_reader(fragment: "Fragment | str", target: "Target | str", spans: Sequence[int], *,
                form: str = "fixed", base: int = 0) -> ReaderView:
    """A reader like hal_loader's `iree_vm_shim_dispatch_v`.

    pre-fix: the first span starts at sizeof(C struct of the fixed part) and each span's elements are
    aligned to alignof(C element struct). fixed: the first span starts at the packed size of the fixed
    part and elements are aligned as the packer aligns them. Either way elements have the stride of
    their C struct, and counts are int32 read where the cursor stands.
    """
    if form not in READER_FORMS:
        raise IreeAbiError(f"unknown reader form {form!r}; valid: {', '.join(READER_FORMS)}")
    frag, t = as_fragment(fragment), _get_target(target)
    counts = _check_spans(frag, spans)
    prefix = frag.fixed_prefix
    runs: list[_Run] = []
    reads: list[int] = []  # not yet in a run
    if prefix:
        play = layout_of(shim_struct(prefix), t)
        reads.extend(f.offset for f in play.fields)
        if form == "pre-fix":
            p = base + play.size
        else:
            p = base + vm_pack(prefix, t)[2]
    else:
        p = base
    count_reads: list[int] = []
    rest = frag.items[len(prefix):]
    span_no = 0
    for item in rest:
        if isinstance(item, Value):  # values between/after spans: read in place, C-aligned
            fa = layout_of(shim_struct(item.char), t).align
            p = align_up(p, fa)
            reads.append(p - base)
            p += vm_field(item.char, t)[0]
            continue
        count_reads.append(p - base)
        p += 4
        n = counts[span_no]
        elay = layout_of(shim_struct(item.text), t)
        if form == "pre-fix":  # aligned to the C element struct, even when empty
            p = align_up(p, elay.align)
        elif n:  # as the packer: empty spans are not aligned
            p = align_up(p, max([4] + [vm_field(v.char, t)[1] for v in item.values]))
        field_offsets = tuple(f.offset for f in elay.fields)
        if n <= _RUN_MIN_ELEMENTS:
            reads += [p - base + e * elay.size + f for e in range(n) for f in field_offsets]
        else:
            runs += [_Run(1, 0, 0, tuple(reads)), _Run(n, elay.size, p - base, field_offsets)]
            reads = []
        p += n * elay.size
        span_no += 1
    runs.append(_Run(1, 0, 0, tuple(reads)))
    return ReaderView(form, Offsets(runs), tuple(count_reads), p - base)


# --------------------------------------------------------------------------------------------------
# The instance layout and its findings


@dataclass(frozen=True)
class Finding:
    rule: str
    message: str
    offset: int | None = None

    def as_dict(self) -> dict:
        return {"rule": self.rule, "message": self.message, "offset": self.offset}


@dataclass(frozen=True, eq=False)  # identity: one object per cached instance
class FragmentLayout:
    fragment: Fragment
    target: Target
    spans: tuple[int, ...]
    size: int  # rule (a): bytes the VM allocates
    packed_size: int  # rule (b): end of the last byte the packer writes
    values: ValueSlots  # a sequence of ValueSlot, built on demand (see `_Run`)
    counts: tuple[CountSlot, ...]
    gaps: Gaps  # bytes in [0, size) the packer leaves zero (a sequence of Gap)
    shim: ShimView | None
    fixed_struct: Struct | None  # C struct of the fixed part before the first span
    findings: tuple[Finding, ...]

    @property
    def cconv(self) -> str:
        return self.fragment.text


def layout(fragment: "Fragment | str", target: "Target | str",
           spans: Sequence[int] | None = None) -> FragmentLayout:
    """Lay out one instance of a fragment and compare IREE's rules on it (cached)."""
    frag = as_fragment(fragment)
    t = _get_target(target)
    key = tuple(spans) if spans is not None else ()
    try:
        return _layout(frag, t, key)
    except TypeError:  # unhashable span values: let the checker name them
        _check_spans(frag, list(spans or ()))
        raise


@lru_cache(maxsize=16384)
def _layout(frag: Fragment, t: Target, spans: tuple[int, ...]) -> FragmentLayout:
    _check_spans(frag, spans)
    size = _vm_size(frag, t, spans)
    values, counts, gaps, packed = _vm_pack(frag, t, spans, 0, size)
    shim = _shim_view(frag, t, spans)
    prefix = frag.fixed_prefix
    fixed_struct = shim_struct(prefix) if (frag.has_spans and prefix) else None
    findings = list(_compare(frag, t, spans, size, values, counts, packed, shim, fixed_struct))
    return FragmentLayout(frag, t, spans, size, packed, values, counts, gaps, shim, fixed_struct,
                          tuple(findings))


def _describe(v: ValueSlot) -> str:
    if v.span is None:
        return f"value {v.char!r} (index {v.index})"
    return f"span {v.span} element {v.element} value {v.char!r} (index {v.index})"


def _compare(frag: Fragment, t: Target, spans: tuple[int, ...], size: int,
             values: ValueSlots, counts: Sequence[CountSlot], packed: int,
             shim: ShimView | None, fixed_struct: Struct | None) -> Iterable[Finding]:
    where = f"{frag.text!r} on {t.name}" + (f" spans={list(spans)}" if spans else "")
    if packed > size:
        yield Finding("pack-overflow",
                      f"{where}: the packer writes {packed} B into the {size} B the VM allocates", size)
    if shim is not None:
        if shim.required_length != size:
            yield Finding(
                "shim-length",
                f"{where}: the VM passes {size} B but {shim.struct.name} requires exactly "
                f"{shim.required_length} B (sizeof {shim.sizeof}"
                + (f" + {spans[0]} x {shim.element_size}" if shim.element_size is not None else "")
                + "): argument/result signature mismatch")
        n_listed, rest, first = 0, 0, None  # misplaced values past MAX_VALUE_FINDINGS: one finding for all
        for v, r in values.misplaced(shim.reads):
            if n_listed < MAX_VALUE_FINDINGS:
                n_listed += 1
                yield Finding("shim-offset",
                              f"{where}: {_describe(v)} packed at {v.offset}, {shim.struct.name} reads it "
                              f"at {r}", v.offset)
            else:
                rest += 1
                first = first or (v, r)
        if first:
            v, r = first
            yield Finding("shim-offset",
                          f"{where}: {rest} more values packed where {shim.struct.name} does not read "
                          f"them, from {_describe(v)} packed at {v.offset}, read at {r}", v.offset)
        if shim.count_offset is not None and counts and counts[0].offset != shim.count_offset:
            yield Finding("shim-offset",
                          f"{where}: span 0 count packed at {counts[0].offset}, {shim.struct.name} reads "
                          f"it at {shim.count_offset}", counts[0].offset)
    if fixed_struct is not None:
        flay = layout_of(fixed_struct, t)
        fixed_end = counts[0].offset
        for v, f in zip(values, flay.fields):
            if v.offset != f.offset:
                yield Finding("fixed-struct-offset",
                              f"{where}: {_describe(v)} packed at {v.offset}, {fixed_struct.name} has it at "
                              f"{f.offset}", v.offset)
        if flay.size != fixed_end:
            yield Finding(
                "fixed-struct-sizeof",
                f"{where}: sizeof({fixed_struct.name}) is {flay.size} B but the VM packs the fixed part "
                f"in {fixed_end} B; a reader starting the first span at sizeof reads its count at "
                f"{flay.size} instead of {fixed_end}", fixed_end)


def read_by(lay: FragmentLayout, struct: Struct) -> FragmentLayout:
    """This instance with a struct of one's own (a native shim's argument or result struct, from a
    header or DWARF) in place of the generic shim's: without spans as the shim struct the whole
    buffer is read through, with spans as the struct of the fixed part before the first span (a
    reader then starts the first span at its sizeof). Its findings are `struct_findings`'."""
    slay = layout_of(struct, lay.target)
    if lay.fragment.has_spans:
        out = replace(lay, shim=None, fixed_struct=struct, findings=())
    else:
        view = ShimView(struct, slay.size, slay.size, [f.offset for f in slay.fields], None, None)
        out = replace(lay, shim=view, fixed_struct=None, findings=())
    return replace(out, findings=struct_findings(out))


def struct_findings(lay: FragmentLayout) -> tuple[Finding, ...]:
    """Where the struct `read_by` put in `lay` disagrees with how the VM packs the instance: the
    generic shim's rules (shim-length, shim-offset) or the fixed part's (fixed-struct-offset,
    fixed-struct-sizeof: IREE #24827's loader bug), and struct-fields / struct-field-size when it
    does not declare one member per value, of that value's size."""
    t, frag = lay.target, lay.fragment
    struct = lay.fixed_struct if frag.has_spans else lay.shim.struct if lay.shim else None
    if struct is None:
        return ()
    fixed = [v for v in lay.values if v.span is None] if frag.has_spans else list(lay.values)
    slay = layout_of(struct, t)
    where = f"{frag.text!r} on {t.name}" + (f" spans={list(lay.spans)}" if lay.spans else "")
    out: list[Finding] = []
    if len(slay.fields) != len(fixed):
        part = "values before the first span" if frag.has_spans else "values"
        out.append(Finding("struct-fields", f"{where}: {struct.name} declares {len(slay.fields)} members, "
                                            f"the VM packs {len(fixed)} {part}"))
    for v, f in zip(fixed, slay.fields):
        if f.size != v.size or f.bits is not None:
            out.append(Finding("struct-field-size", f"{where}: {struct.name}.{f.name} is {f.size} B"
                                                    f"{' (a bit-field)' if f.bits is not None else ''}, "
                                                    f"{_describe(v)} is {v.size} B", v.offset))
    if frag.has_spans and not fixed:
        return tuple(out)
    found = _compare(frag, t, lay.spans, lay.size, lay.values, lay.counts, lay.packed_size, lay.shim,
                     lay.fixed_struct)
    out += [f for f in found if f.rule != "pack-overflow"]  # the VM's own rule, not the struct's
    return tuple(out)


def compare_reader(lay: FragmentLayout, reader: ReaderView) -> tuple[Finding, ...]:
    """Findings where a hand-written span reader disagrees with the packer."""
    out: list[Finding] = []
    where = f"{lay.cconv!r} on {lay.target.name} spans={list(lay.spans)}"
    for c, r in zip(lay.counts, reader.count_reads):
        if c.offset != r:
            out.append(Finding(f"reader-{reader.name}",
                               f"{where}: the {reader.name} reader reads span {c.span}'s count at {r}, "
                               f"the VM packs it at {c.offset}", c.offset))
            return tuple(out)  # everything after a misplaced count is misread too
    first, n_bad = None, 0
    for v, r in lay.values.misplaced(reader.reads):
        first = first or (v, r)
        n_bad += 1
    if first:
        v, r = first
        more = f" ({n_bad - 1} more values misplaced)" if n_bad > 1 else ""
        out.append(Finding(f"reader-{reader.name}",
                           f"{where}: the {reader.name} reader reads {_describe(v)} at {r}, the VM packs it "
                           f"at {v.offset}{more}", v.offset))
    if reader.end > lay.size:
        out.append(Finding(f"reader-{reader.name}",
                           f"{where}: the {reader.name} reader needs {reader.end} B, the VM passes {lay.size} B"))
    return tuple(out)
