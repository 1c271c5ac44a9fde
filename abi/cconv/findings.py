"""One instance of a fragment laid out by every rule, and the disagreements between them as
findings (`layout`, `read_by`, `struct_findings`, `compare_reader`)."""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Iterable, Sequence

from ..layout import Struct, layout_of
from ..targets import Target, get as _get_target
from .syntax import Fragment, as_fragment
from .vm_packing import (CountSlot, Gaps, ValueSlot, ValueSlots, check_spans, vm_pack_instance,
                         vm_size_instance)
from .shim_structs import ReaderView, ShimView, shim_struct, shim_view_instance

# Values a rule names one finding each; past that one finding counts the rest. A span of 65535
# elements the shim misreads would otherwise hold one message per value (hundreds of bytes each),
# and the first few already show the pattern.
MAX_VALUE_FINDINGS = 64


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
    values: ValueSlots  # a sequence of ValueSlot, built on demand (see `Run`)
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
        cache_key = (frag, t, key)
        found = _memo.get(cache_key)
    except TypeError:  # unhashable span values: let the checker name them
        check_spans(frag, list(spans or ()))
        raise
    if found is not None:
        _memo.move_to_end(cache_key)
        return found
    made = _layout(frag, t, key)
    _remember(cache_key, made)
    return made


# The layouts `layout` keeps (least recently used first), weighed by the spans and values they
# hold: the memo stays within MEMO_WEIGHT whatever the instances' size (an entry count alone let
# `check` of 2,000 spans on every target keep 2.2 GB of layouts nobody would ask for again).
MEMO_WEIGHT = 1 << 18
_memo: "OrderedDict[tuple[Fragment, Target, tuple[int, ...]], FragmentLayout]" = OrderedDict()
_weights: dict[tuple[Fragment, Target, tuple[int, ...]], int] = {}
_weight = [0]


def _remember(key: "tuple[Fragment, Target, tuple[int, ...]]", made: FragmentLayout) -> None:
    weight = 1 + len(made.counts) + len(made.findings) + len(made.fragment.items)
    if weight > MEMO_WEIGHT // 16:  # one instance this big is laid out again rather than kept
        return
    _memo[key], _weights[key] = made, weight
    _weight[0] += weight
    while _weight[0] > MEMO_WEIGHT:
        old, _ = _memo.popitem(last=False)
        _weight[0] -= _weights.pop(old)


def _layout(frag: Fragment, t: Target, spans: tuple[int, ...]) -> FragmentLayout:
    check_spans(frag, spans)
    size = vm_size_instance(frag, t, spans)
    values, counts, gaps, packed = vm_pack_instance(frag, t, spans, 0, size)
    shim = shim_view_instance(frag, t, spans)
    prefix = frag.fixed_prefix
    fixed_struct = shim_struct(prefix) if (frag.has_spans and prefix) else None
    findings = list(_compare(frag, t, spans, size, values, counts, packed, shim, fixed_struct))
    return FragmentLayout(frag, t, spans, size, packed, values, counts, gaps, shim, fixed_struct,
                          tuple(findings))


def layout_cache_clear() -> None:
    """Forget the instance layouts `layout` has cached."""
    _memo.clear()
    _weights.clear()
    _weight[0] = 0


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
