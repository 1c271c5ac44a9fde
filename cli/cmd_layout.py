"""`ireeabi layout NAME_OR_CCONV`: pahole-style struct tables and cconv instance layouts."""
from __future__ import annotations

from typing import Any, Sequence

from ireeabi import layouts
from ireeabi.abi import cconv
from ireeabi.abi.cconv import FragmentLayout
from ireeabi.abi.layout import Struct, StructLayout
from ireeabi.abi.targets import Target

from . import describe, render
from .render import Column
from .resolve import CconvInput, default_spans_note, span_instances

DIFF = "*"


# --------------------------------------------------------------------------------------------------
# Structs


def _offset_cell(r: describe.StructRow) -> str:
    return f"{r.offset}:{r.bit}" if r.is_bitfield else str(r.offset)


def _size_cell(r: describe.StructRow) -> str:
    return f"{r.bits}b" if r.is_bitfield else str(r.size)


def _type_cell(r: describe.StructRow) -> str:
    return f"{r.type}:{r.bits}" if r.is_bitfield else r.type


def _name_cell(r: describe.StructRow) -> str:
    suffix = "[]" if r.flexible else ""
    return "  " * r.depth + r.name + suffix


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _struct_footer(lay: StructLayout, rows: Sequence[describe.StructRow]) -> list[str]:
    unused = describe.unused_ranges(lay)
    pad = sum(n for _, n, _ in unused)
    padding = (f"padding {pad} B ({_plural(len(unused), 'range')} no field touches)" if unused
               else "no padding")
    out = [f"sizeof {lay.size}, alignof {lay.align}; {padding}"]
    if any(r.is_bitfield for r in rows):
        out.append("bit-fields: offset = byte:bit of the first bit (LSB = bit 0), size in bits (b)")
    for r in rows:
        if r.flexible:
            out.append(f"flexible array {r.path}[]: {r.element_size} B per element from offset "
                       f"{r.offset}, not counted in sizeof")
    return out


def _struct_title(decl: Struct, where: str) -> str:
    module = layouts.module_of(decl.name)
    source = "derived from its cconv fragment" if module == "cconv" else f"ireeabi.layouts.{module}"
    return f"{decl.keyword} {decl.name} on {where} ({source})"


def struct_text(decl: Struct, target: Target) -> list[str]:
    lay = decl.layout(target)
    rows = describe.struct_rows(lay)
    cols = [Column("offset", ">"), Column("size", ">"), Column("field", shrink=True, min_width=16),
            Column("type", shrink=True, min_width=12)]
    cells = [(_offset_cell(r), _size_cell(r), _name_cell(r), _type_cell(r)) for r in rows]
    return [*render.wrap(_struct_title(decl, target.name), subsequent=2), *render.table(cols, cells),
            *_struct_footer(lay, rows)]


def _targets_table(title: list[str], label_header: str, labels: Sequence[str],
                   per_target: Sequence[Sequence[str]], names: Sequence[str]) -> list[str]:
    """Rows of labels with one column per target, `*` on cells that differ from the first target;
    the target columns are split into several tables when they do not fit the width."""
    marked: list[list[str]] = []
    for t, col in enumerate(per_target):
        marked.append([cell + (DIFF if t and cell != per_target[0][i] and cell else "")
                       for i, cell in enumerate(col)])
    label_w = max([len(label_header), *map(len, labels)])
    label_w = min(label_w, 40)
    widths = [max(len(names[t]), *(len(c) for c in marked[t])) for t in range(len(names))]
    out = list(title)
    for chunk in render.chunk_columns([label_w], widths, indent=2):
        cols = [Column(label_header, shrink=True, min_width=12)] + [Column(names[t]) for t in chunk]
        rows = [[labels[i]] + [marked[t][i] for t in chunk] for i in range(len(labels))]
        out.extend(render.table(cols, rows, indent=2))
    return out


def struct_all_text(decl: Struct, tgts: Sequence[Target]) -> list[str]:
    per_rows = [describe.struct_rows(decl.layout(t)) for t in tgts]
    field_rows = [[r for r in rows if r.kind == "field"] for rows in per_rows]
    labels = [_name_cell(r) for r in field_rows[0]]
    per_target: list[list[str]] = []
    for t, rows in zip(tgts, field_rows):
        lay = decl.layout(t)
        pad = sum(n for _, n, _ in describe.unused_ranges(lay))
        col = [f"{_offset_cell(r)}/{_size_cell(r)}" for r in rows]
        col += [str(lay.size), str(lay.align), str(pad)]
        per_target.append(col)
    labels += ["sizeof", "alignof", "padding bytes"]
    title = [*render.wrap(_struct_title(decl, f"{len(tgts)} targets"), subsequent=2),
             f"cells: offset/size (bit-fields byte:bit/bits); {DIFF} = differs from {tgts[0].name}"]
    return _targets_table(title, "field", labels, per_target, [t.name for t in tgts])


def struct_data(decl: Struct, tgts: Sequence[Target], all_targets: bool) -> Any:
    objs = [describe.struct_json(decl.layout(t)) for t in tgts]
    return objs if all_targets else objs[0]


# --------------------------------------------------------------------------------------------------
# cconvs


def instances(inp: CconvInput, tgts: Sequence[Target], spans: tuple[int, ...] | None
              ) -> list[tuple[str, Target, FragmentLayout]]:
    """(side label, target, layout) for `layout`: one instance per side and target."""
    out = []
    for t in tgts:
        for side in inp.sides:
            for counts in span_instances(side, spans, sweep=False):
                out.append((side.label, t, cconv.layout(side.fragment, t, counts)))
    return out


def _side_title(label: str, lay: FragmentLayout) -> str:
    if not lay.fragment.items:
        return f"{label}: void (the VM allocates {lay.size} B)"
    spans = f" spans {list(lay.spans)}" if lay.spans else ""
    return (f"{label} {lay.cconv!r}{spans}: the VM allocates {lay.size} B, the packer writes "
            f"{lay.packed_size} B")


def _findings_text(findings: Sequence[cconv.Finding], indent: int) -> list[str]:
    if not findings:
        return [" " * indent + "findings: none"]
    out = [" " * indent + f"findings: {len(findings)}"]
    for f in findings:
        out += render.wrap(f"{f.rule}: {f.message}", indent=indent + 2, subsequent=indent + 4)
    return out


def cconv_text(inp: CconvInput, target: Target, spans: tuple[int, ...] | None) -> list[str]:
    out = render.wrap(f"cconv {inp.text} on {target.name}", subsequent=2)
    note = default_spans_note(inp.sides, spans)
    if note:
        out.append(note)
    cols = [Column("offset", ">"), Column("size", ">"), Column("kind"), Column("char"),
            Column("index", ">"), Column("where", shrink=True)]
    for label, _, lay in instances(inp, [target], spans):
        out += render.wrap(_side_title(label, lay), subsequent=2)
        if not lay.fragment.items:
            continue
        rows = [(str(r.offset), str(r.size), r.kind, r.char, "" if r.index is None else str(r.index),
                 r.where) for r in describe.slot_rows(lay)]
        out += render.table(cols, rows, indent=2)
        summary = describe.shim_summary(lay)
        if summary:
            out += render.wrap(summary, indent=2, subsequent=4)
        out += _findings_text(lay.findings, 2)
    return out


def _slot_label(r: describe.SlotRow) -> str:
    if r.kind == "count":
        return f"count of span {r.span}"
    where = "fixed" if r.span is None else f"span {r.span} el {r.element}"
    return f"{r.char} @{r.index} {r.kind} {where}"


def cconv_all_text(inp: CconvInput, tgts: Sequence[Target], spans: tuple[int, ...] | None) -> list[str]:
    out = render.wrap(f"cconv {inp.text} on {len(tgts)} targets", subsequent=2)
    note = default_spans_note(inp.sides, spans)
    if note:
        out.append(note)
    out.append(f"cells: offset (bytes); {DIFF} = differs from {tgts[0].name}")
    names = [t.name for t in tgts]
    for side in inp.sides:
        counts = next(span_instances(side, spans, sweep=False))
        lays = [cconv.layout(side.fragment, t, counts) for t in tgts]
        if side.fragment.items:
            spans_text = f" spans {list(counts)}" if counts else ""
            out += render.wrap(f"{side.label} {side.fragment.text!r}{spans_text}:", subsequent=2)
        else:
            out.append(f"{side.label}: void on every target")
        if not side.fragment.items:
            continue
        per_rows = [[r for r in describe.slot_rows(lay) if r.kind != "gap"] for lay in lays]
        labels = [_slot_label(r) for r in per_rows[0]] + ["VM allocates", "packer writes", "gap bytes"]
        per_target = []
        for lay, rows in zip(lays, per_rows):
            col = [str(r.offset) for r in rows]
            col += [str(lay.size), str(lay.packed_size), str(sum(g.size for g in lay.gaps))]
            per_target.append(col)
        out += _targets_table([], "value", labels, per_target, names)
        any_finding = False
        for lay in lays:
            if lay.findings:
                any_finding = True
                out.append(f"  {lay.target.name}:")
                out += _findings_text(lay.findings, 4)[1:]
        if not any_finding:
            out.append("  findings: none on any target")
    return out


def cconv_data(inp: CconvInput, tgts: Sequence[Target], spans: tuple[int, ...] | None) -> Any:
    sig = inp.text if inp.signature is not None else None
    objs = [describe.cconv_json(lay, side=label, signature=sig)
            for label, _, lay in instances(inp, tgts, spans)]
    return objs[0] if len(objs) == 1 else objs
