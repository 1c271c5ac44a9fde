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

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, NamedTuple, Sequence

from .errors import IreeAbiError
from .layout import Array, Field, Scalar, Pointer, Struct, align_up, layout_of
from .targets import Target, get as _get_target

VERSION = "0"
KINDS = {"i": "i32", "I": "i64", "f": "f32", "F": "f64", "r": "ref"}
SPAN_START, SPAN_END, VOID, SPLIT = "C", "D", "v", "_"
MAX_SPAN_COUNT = 0xFFFF  # segment sizes are uint16 registers (iree_vm_register_list_t)

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


def vm_pack(fragment: "Fragment | str", target: "Target | str", spans: Sequence[int] | None = None,
            base: int = 0) -> tuple[tuple[ValueSlot, ...], tuple[CountSlot, ...], int]:
    """iree_vm_bytecode_populate_import_cconv_arguments: (values, counts, end offset).

    Alignment applies to the absolute address `base + offset`, as the packer aligns pointers.
    """
    frag, t = as_fragment(fragment), _get_target(target)
    return _vm_pack(frag, t, _check_spans(frag, spans), base)


def _vm_pack(frag: Fragment, t: Target, counts: tuple[int, ...], base: int = 0
             ) -> tuple[tuple[ValueSlot, ...], tuple[CountSlot, ...], int]:
    fields = _vm_fields(t)
    values: list[ValueSlot] = []
    count_slots: list[CountSlot] = []
    p = base
    span_no = 0
    for item in frag.items:
        if isinstance(item, Value):
            fs, fa = fields[item.char]
            p = align_up(p, fa)
            values.append(ValueSlot(KINDS[item.char], item.char, p - base, fs, item.index))
            p += fs
            continue
        n = counts[span_no]
        count_slots.append(CountSlot(span_no, p - base, n))
        p += 4
        if n:
            elem = [(KINDS[v.char], v.char, v.index, *fields[v.char]) for v in item.values]
            p = align_up(p, max([4] + [e[4] for e in elem]))
            for e in range(n):
                for kind, char, index, fs, fa in elem:
                    p = -(-p // fa) * fa  # every field of every element re-aligned
                    values.append(ValueSlot(kind, char, p - base, fs, index, span_no, e))
                    p += fs
        span_no += 1
    return tuple(values), tuple(count_slots), p - base


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
    reads: tuple[int, ...]  # offset of every value, in `vm_pack` order
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
    reads: list[int] = []
    count_offset = elem_size = None
    for pos, item in enumerate(frag.items):
        if isinstance(item, Value):
            reads.append(lay.fields[pos].offset)
        else:
            count_offset = lay.fields[pos].offset
            arr = lay.fields[pos + 1]
            elay = layout_of(arr.type.elem, t)
            elem_size = elay.size
            for e in range(counts[0]):
                for f in elay.fields:
                    reads.append(arr.offset + e * elay.size + f.offset)
    required = lay.size + (counts[0] * elem_size if elem_size is not None else 0)
    return ShimView(s, lay.size, required, tuple(reads), count_offset, elem_size)


# --------------------------------------------------------------------------------------------------
# Hand-written multi-span readers (hal_loader's dispatch shim and its kind)


@dataclass(frozen=True)
class ReaderView:
    """Where a reader that copies the fixed C struct and walks spans by hand finds each value."""

    name: str
    reads: tuple[int, ...]  # values, in `vm_pack` order
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
    reads: list[int] = []
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
        for e in range(n):
            for f in elay.fields:
                reads.append(p - base + e * elay.size + f.offset)
        p += n * elay.size
        span_no += 1
    return ReaderView(form, tuple(reads), tuple(count_reads), p - base)


# --------------------------------------------------------------------------------------------------
# The instance layout and its findings


@dataclass(frozen=True)
class Finding:
    rule: str
    message: str
    offset: int | None = None

    def as_dict(self) -> dict:
        return {"rule": self.rule, "message": self.message, "offset": self.offset}


class Gap(NamedTuple):
    offset: int
    size: int


@dataclass(frozen=True, eq=False)  # identity: one object per cached instance
class FragmentLayout:
    fragment: Fragment
    target: Target
    spans: tuple[int, ...]
    size: int  # rule (a): bytes the VM allocates
    packed_size: int  # rule (b): end of the last byte the packer writes
    values: tuple[ValueSlot, ...]
    counts: tuple[CountSlot, ...]
    gaps: tuple[Gap, ...]  # bytes in [0, size) the packer leaves zero
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
    values, counts, packed = _vm_pack(frag, t, spans)
    shim = _shim_view(frag, t, spans)
    prefix = frag.fixed_prefix
    fixed_struct = shim_struct(prefix) if (frag.has_spans and prefix) else None
    findings = list(_compare(frag, t, spans, size, values, counts, packed, shim, fixed_struct))
    return FragmentLayout(frag, t, spans, size, packed, values, counts,
                          _gaps(size, values, counts), shim, fixed_struct, tuple(findings))


def _gaps(size: int, values: Iterable[ValueSlot], counts: Iterable[CountSlot]) -> tuple[Gap, ...]:
    used = sorted([(v.offset, v.end) for v in values] + [(c.offset, c.end) for c in counts])
    out, pos = [], 0
    for lo, hi in used:
        if lo > pos:
            out.append(Gap(pos, lo - pos))
        if hi > pos:
            pos = hi
    if size > pos:
        out.append(Gap(pos, size - pos))
    return tuple(out)


def _describe(v: ValueSlot) -> str:
    if v.span is None:
        return f"value {v.char!r} (index {v.index})"
    return f"span {v.span} element {v.element} value {v.char!r} (index {v.index})"


def _compare(frag: Fragment, t: Target, spans: tuple[int, ...], size: int,
             values: Sequence[ValueSlot], counts: Sequence[CountSlot], packed: int,
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
        for v, r in zip(values, shim.reads):
            if v.offset != r:
                yield Finding("shim-offset",
                              f"{where}: {_describe(v)} packed at {v.offset}, {shim.struct.name} reads it "
                              f"at {r}", v.offset)
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
    bad = [(v, r) for v, r in zip(lay.values, reader.reads) if v.offset != r]
    if bad:
        v, r = bad[0]
        more = f" ({len(bad) - 1} more values misplaced)" if len(bad) > 1 else ""
        out.append(Finding(f"reader-{reader.name}",
                           f"{where}: the {reader.name} reader reads {_describe(v)} at {r}, the VM packs it "
                           f"at {v.offset}{more}", v.offset))
    if reader.end > lay.size:
        out.append(Finding(f"reader-{reader.name}",
                           f"{where}: the {reader.name} reader needs {reader.end} B, the VM passes {lay.size} B"))
    return tuple(out)
