"""`ireeabi layout NAME_OR_CCONV`: pahole-style struct tables and cconv instance layouts; with
`--header FILE.h` or `--dwarf FILE`, a struct of one's own (every struct of a header without NAME)."""
from __future__ import annotations

import argparse
import heapq
from typing import Any, Callable, Iterable, Iterator, Sequence, TextIO

from .. import layouts
from ..abi import cconv
from ..abi.cconv import FragmentLayout
from ..abi.layout import Struct, StructLayout
from ..abi.targets import Target

from . import describe, render
from .errors import CliError
from .loading import (MAX_TABLE_ROWS, add_struct_source_options, add_svg_option, add_target_options,
                      own_struct, select_targets, table_rows)
from .render import Column, emit, emit_json, write_svg
from .resolve import CconvInput, default_spans_note, parse_spans, resolve, span_instances

EXIT_OK, EXIT_BAD_INPUT = 0, 2


def add_parser(sub: "argparse._SubParsersAction") -> None:
    p = sub.add_parser("layout", help="struct table or cconv instance layout",
                       description="A catalog struct (pahole-style table) or a calling convention "
                                   "(`0...` signature or a bare fragment such as rIiiiCiDCrIID). "
                                   "Without --spans every span has 1 element.")
    p.add_argument("name", metavar="NAME_OR_CCONV", nargs="?",
                   help="without it, --header lays out every struct of the header")
    add_target_options(p)
    add_struct_source_options(p, "NAME is")
    add_svg_option(p, "the struct's bytes on each target (a cell per byte, fields coloured and named, "
                      "padding hatched), or the cconv's packing")


def command(args: argparse.Namespace, out: TextIO) -> int:
    if args.header or args.dwarf:
        return _foreign_struct(args, out)
    if args.include_dirs or args.defines:
        raise CliError("-I and -D apply to --header")
    if args.name is None:
        raise CliError("layout needs NAME_OR_CCONV (usage: ireeabi layout NAME_OR_CCONV [options], or "
                       "ireeabi layout --header FILE.h [options] for every struct of a header)")
    tgts = select_targets(args.target, args.all_targets)
    spans = parse_spans(args.spans)
    what = resolve(args.name)
    if isinstance(what, Struct):
        if spans is not None:
            raise CliError(f"--spans applies to calling conventions, not to struct {what.name}")
        write_svg(args.svg, lambda picture: picture.struct_svg(what, tgts))
        if args.json:
            emit_json(struct_data(what, tgts, args.all_targets), out)
        elif args.all_targets:
            emit(struct_all_text(what, tgts), out)
        else:
            emit(struct_text(what, tgts[0]), out)
        return EXIT_OK
    insts = instances(what, tgts, spans)  # validates span counts before any output
    write_svg(args.svg, lambda picture: picture.cconv_svg(what.text, insts))
    if args.json:
        emit_json(cconv_data(what, tgts, spans), out)
    elif args.all_targets:
        emit(cconv_all_text(what, tgts, spans), out)
    else:
        emit(cconv_text(what, tgts[0], spans), out)
    return EXIT_OK


def _foreign_struct(args: argparse.Namespace, out: TextIO) -> int:
    """`layout --header FILE.h NAME` / `layout --dwarf FILE NAME`."""
    if args.spans is not None:
        raise CliError("--spans applies to calling conventions, not to structs")
    if args.name is None:
        if not args.header:
            raise CliError("layout --dwarf needs the NAME of a struct")
        return _header(args, out)
    tgts, struct_for, source = own_struct(args, args.name)
    decls = [struct_for(t) for t in tgts]
    write_svg(args.svg, lambda picture: picture.struct_svg(decls[0], tgts, decls))
    if args.json:
        emit_json(struct_data(decls[0], tgts, args.all_targets, decls), out)
    elif args.all_targets:
        emit(struct_all_text(decls[0], tgts, source, decls), out)
    else:
        emit(struct_text(decls[0], tgts[0], source), out)
    return EXIT_OK


def _header(args: argparse.Namespace, out: TextIO) -> int:
    """`layout --header FILE.h`: every struct of the header on each target; a struct that cannot be
    laid out is listed with its line and concerns no other (exit 2 when there is one)."""
    from ..abi import cheader

    if args.svg:
        raise CliError("--svg draws one struct: give its NAME with --header")
    tgts = select_targets(args.target, args.all_targets)
    readings = [cheader.read_header(args.header, t, include_dirs=args.include_dirs, defines=args.defines)
                for t in tgts]
    for r in readings:
        for s in {id(s): s for s in r.structs.values()}.values():
            if table_rows(s) > MAX_TABLE_ROWS:
                raise CliError(f"{args.header}: {s.name}: its table would have more than {MAX_TABLE_ROWS} rows")
    if args.json:
        objs = [header_data(args.header, t, r) for t, r in zip(tgts, readings)]
        emit_json(objs if args.all_targets else objs[0], out)
    else:
        emit(header_text(args.header, tgts, readings), out)
    return EXIT_BAD_INPUT if any(r.errors for r in readings) else EXIT_OK

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


def _struct_title(decl: Struct, where: str, source: str | None = None) -> str:
    if source is None:
        module = layouts.module_of(decl.name)
        source = "derived from its cconv fragment" if module == "cconv" else f"ireeabi.layouts.{module}"
    attrs = ", ".join(a for a in ("packed" if decl.packed else "",
                                  f"aligned({decl.align})" if decl.align else "",
                                  f"#pragma pack({decl.max_align})" if decl.max_align else "") if a)
    return f"{decl.keyword} {decl.name}{f' [{attrs}]' if attrs else ''} on {where} ({source})"


def struct_text(decl: Struct, target: Target, source: str | None = None) -> list[str]:
    """The pahole-style table of `decl` on `target`; `source` says where the declaration comes from
    (default: its catalog module)."""
    lay = decl.layout(target)
    rows = describe.struct_rows(lay)
    cols = [Column("offset", ">"), Column("size", ">"), Column("field", shrink=True, min_width=16),
            Column("type", shrink=True, min_width=12)]
    cells = [(_offset_cell(r), _size_cell(r), _name_cell(r), _type_cell(r)) for r in rows]
    return [*render.wrap(_struct_title(decl, target.name, source), subsequent=2), *render.table(cols, cells),
            *_struct_footer(lay, rows)]


def _targets_table(title: list[str], label_header: str, labels: Sequence[str],
                   per_target: Sequence[Sequence[str]], names: Sequence[str]) -> list[str]:
    """Rows of labels with one column per target, `*` on cells that differ from the first target;
    the target columns are split into several tables when they do not fit the width."""
    return [*title, *_targets_table_lines(label_header, lambda: zip(labels, zip(*per_target)), names)]


def _targets_table_lines(label_header: str, rows: Callable[[], Iterable[tuple[str, Sequence[str]]]],
                         names: Sequence[str]) -> Iterator[str]:
    """`_targets_table` from `rows()`, an iterable of (label, one cell per target) made again for
    each pass (one for the widths, one per chunk of target columns): nothing is held per row."""
    def marked() -> Iterator[list[str]]:
        for label, cells in rows():
            yield [label, *(cell + (DIFF if t and cell != cells[0] and cell else "")
                            for t, cell in enumerate(cells))]

    cols = [Column(label_header, shrink=True, min_width=12)] + [Column(n) for n in names]
    natural = render.natural_widths(cols, marked())
    label_w = min(natural[0], 40)
    for chunk in render.chunk_columns([label_w], natural[1:], indent=2):
        picked = [0] + [t + 1 for t in chunk]
        yield from render.table_lines([cols[i] for i in picked], ([r[i] for i in picked] for r in marked()),
                                      [natural[i] for i in picked], indent=2)


def struct_all_text(decl: Struct, tgts: Sequence[Target], source: str | None = None,
                    decls: Sequence[Struct] | None = None) -> list[str]:
    """`decl` on every target side by side; `decls`: one declaration per target instead (a header
    read for each triple), which must declare the same fields."""
    decls = list(decls) if decls is not None else [decl] * len(tgts)
    per_rows = [describe.struct_rows(d.layout(t)) for d, t in zip(decls, tgts)]
    field_rows = [[r for r in rows if r.kind == "field"] for rows in per_rows]
    labels = [_name_cell(r) for r in field_rows[0]]
    per_target: list[list[str]] = []
    for d, t, rows in zip(decls, tgts, field_rows):
        if [r.path for r in rows] != [r.path for r in field_rows[0]]:
            raise CliError(f"{decl.name} declares other fields on {t.name} than on {tgts[0].name}; "
                           "lay it out one --target at a time")
        lay = d.layout(t)
        pad = sum(n for _, n, _ in describe.unused_ranges(lay))
        col = [f"{_offset_cell(r)}/{_size_cell(r)}" for r in rows]
        col += [str(lay.size), str(lay.align), str(pad)]
        per_target.append(col)
    labels += ["sizeof", "alignof", "padding bytes"]
    title = [*render.wrap(_struct_title(decl, f"{len(tgts)} targets", source), subsequent=2),
             f"cells: offset/size (bit-fields byte:bit/bits); {DIFF} = differs from {tgts[0].name}"]
    return _targets_table(title, "field", labels, per_target, [t.name for t in tgts])


def struct_data(decl: Struct, tgts: Sequence[Target], all_targets: bool,
                decls: Sequence[Struct] | None = None) -> Any:
    decls = list(decls) if decls is not None else [decl] * len(tgts)
    objs = [describe.struct_json(d.layout(t)) for d, t in zip(decls, tgts)]
    return objs if all_targets else objs[0]


def header_data(path: str, target: Target, reading: Any) -> Any:
    """`layout --header FILE --json` on one target (cli/describe.py: header_json)."""
    return describe.header_json(path, target.name, reading.structs, reading.errors,
                                lambda s: s.layout(target))


def header_text(path: str, tgts: Sequence[Target], readings: Sequence[Any]) -> list[str]:
    """Every struct of a header: its table on one target, or its cells on every target (where it
    has a layout on all of them); then each struct without a layout, with its error per target."""
    source = f"{path}, checked with libclang"
    out: list[str] = []
    entries = [describe.header_entries(r.structs, r.errors) for r in readings]
    for names, s in entries[0][0]:
        if len(tgts) == 1:
            out += [*struct_text(s, tgts[0], source), ""]
            continue
        decls = [r.structs.get(names[0]) for r in readings]
        if all(d is not None for d in decls):
            out += [*struct_all_text(s, tgts, source, decls), ""]
    for t, (_, failed) in zip(tgts, entries):
        for names, message in failed:
            out.append(f"error ({t.name}): {' / '.join(names)}: {message}")
    if not out:
        out.append(f"{path}: no struct or union")
    elif not out[-1]:
        out.pop()
    return out


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


_SLOT_ORDER = {"count": 0, "gap": 2}  # at one offset (never, as slots do not overlap): as slot_rows


def _slot_rows(lay: FragmentLayout) -> Iterator[describe.SlotRow]:
    """`describe.slot_rows` one row at a time: the packer's values, counts and gaps each come in
    offset order, so merging them gives the sorted order without a list of every slot."""
    values = (describe.SlotRow(v.kind, v.offset, v.size, v.char, v.index, v.span, v.element)
              for v in lay.values)
    counts = (describe.SlotRow("count", c.offset, c.size, span=c.span, count=c.count) for c in lay.counts)
    gaps = (describe.SlotRow("gap", g.offset, g.size) for g in lay.gaps)
    return heapq.merge(counts, values, gaps, key=lambda r: (r.offset, _SLOT_ORDER.get(r.kind, 1)))


def cconv_text(inp: CconvInput, target: Target, spans: tuple[int, ...] | None) -> Iterator[str]:
    """The lines of `layout CCONV`, made as they are written (a span of 65535 elements is a table
    of as many rows per value character, never held whole)."""
    yield from render.wrap(f"cconv {inp.text} on {target.name}", subsequent=2)
    note = default_spans_note(inp.sides, spans)
    if note:
        yield note
    cols = [Column("offset", ">"), Column("size", ">"), Column("kind"), Column("char"),
            Column("index", ">"), Column("where", shrink=True)]
    for label, _, lay in instances(inp, [target], spans):
        yield from render.wrap(_side_title(label, lay), subsequent=2)
        if not lay.fragment.items:
            continue

        def rows(lay: FragmentLayout = lay) -> Iterator[tuple[str, ...]]:
            for r in _slot_rows(lay):
                yield (str(r.offset), str(r.size), r.kind, r.char,
                       "" if r.index is None else str(r.index), r.where)

        yield from render.table_lines(cols, rows(), render.natural_widths(cols, rows()), indent=2)
        summary = describe.shim_summary(lay)
        if summary:
            yield from render.wrap(summary, indent=2, subsequent=4)
        yield from _findings_text(lay.findings, 2)


def _slot_label(r: describe.SlotRow) -> str:
    if r.kind == "count":
        return f"count of span {r.span}"
    where = "fixed" if r.span is None else f"span {r.span} el {r.element}"
    return f"{r.char} @{r.index} {r.kind} {where}"


def cconv_all_text(inp: CconvInput, tgts: Sequence[Target], spans: tuple[int, ...] | None
                   ) -> Iterator[str]:
    """The lines of `layout CCONV --all-targets`, made as they are written (see `cconv_text`)."""
    yield from render.wrap(f"cconv {inp.text} on {len(tgts)} targets", subsequent=2)
    note = default_spans_note(inp.sides, spans)
    if note:
        yield note
    yield f"cells: offset (bytes); {DIFF} = differs from {tgts[0].name}"
    names = [t.name for t in tgts]
    for side in inp.sides:
        counts = next(span_instances(side, spans, sweep=False))
        lays = [cconv.layout(side.fragment, t, counts) for t in tgts]
        if side.fragment.items:
            spans_text = f" spans {list(counts)}" if counts else ""
            yield from render.wrap(f"{side.label} {side.fragment.text!r}{spans_text}:", subsequent=2)
        else:
            yield f"{side.label}: void on every target"
        if not side.fragment.items:
            continue

        def rows(lays: list[FragmentLayout] = lays) -> Iterator[tuple[str, list[str]]]:
            # Values and counts come in the same order on every target (only offsets differ).
            streams = [(r for r in _slot_rows(lay) if r.kind != "gap") for lay in lays]
            for slots in zip(*streams):
                yield _slot_label(slots[0]), [str(r.offset) for r in slots]
            yield "VM allocates", [str(lay.size) for lay in lays]
            yield "packer writes", [str(lay.packed_size) for lay in lays]
            yield "gap bytes", [str(sum(g.size for g in lay.gaps)) for lay in lays]

        yield from _targets_table_lines("value", rows, names)
        any_finding = False
        for lay in lays:
            if lay.findings:
                any_finding = True
                yield f"  {lay.target.name}:"
                yield from _findings_text(lay.findings, 4)[1:]
        if not any_finding:
            yield "  findings: none on any target"


def cconv_data(inp: CconvInput, tgts: Sequence[Target], spans: tuple[int, ...] | None) -> Any:
    sig = inp.text if inp.signature is not None else None
    objs = [describe.cconv_json(lay, side=label, signature=sig)
            for label, _, lay in instances(inp, tgts, spans)]
    return objs[0] if len(objs) == 1 else objs


__all__ = ["add_parser", "command", "struct_text", "struct_all_text", "struct_data", "header_data",
           "header_text", "instances", "cconv_text", "cconv_all_text", "cconv_data"]
