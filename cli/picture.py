"""Pictures of the ABI as SVG: a struct's bytes on several targets side by side, and a cconv's
packing against the struct its shim reads, disagreements highlighted (`layout NAME --svg FILE`,
`check CCONV --svg FILE`).

Drawn with drawsvg, a maintained SVG writer whose elements (patterns, titles, groups) are objects,
so hatching, tooltips and attributes are escaped and well formed without string templates. Each
drawn range carries `data-*` attributes (target, field, offset, size) so tools and tests read the
picture back; every cell has a tooltip. The page is opaque and light, so it reads the same on a
dark page as on a light one.
"""
from __future__ import annotations

import textwrap
from typing import Any, Iterator, NamedTuple, Sequence

import drawsvg as draw

from ..abi.cconv import FragmentLayout
from ..abi.layout import Struct, StructLayout
from ..abi.targets import Target

from . import describe
from .errors import CliError

__all__ = ["MAX_BYTES", "Range", "Row", "cconv_svg", "check_svg", "ranges_of", "struct_svg"]

CELL = 24  # px per byte
LANE = 22  # px per lane of a row (members that overlay each other take a lane each)
PER_LINE = 32  # bytes per line: wider structs wrap, every target repeated under each other
LABEL_W = 150  # the row labels' column (at least)
LABEL_CHAR_W = 7.3  # px per character of a 12 px monospace row label
MAX_BYTES = 4096  # per row: a picture of a cell per byte stops being one past this
MAX_PANELS = 24  # check: instances drawn at most
NARROW_W = 8  # px: a range narrower than this is outlined dark and labelled below its row
CALLOUT_H = 14  # px per line of labels below a row

PAGE, INK, GRID, HOT = "#ffffff", "#1b1b1b", "#9a9a9a", "#d7191c"
# Light fills under dark text (ColorBrewer Set3, then Pastel1): distinct, and readable in print.
PALETTE = ("#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69", "#fccde5",
           "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f", "#fbb4ae", "#b3cde3", "#decbe4", "#fed9a6",
           "#e5d8bd", "#fddaec", "#f2f2f2", "#c6dbef")
FONT = "DejaVu Sans Mono, Menlo, Consolas, monospace"


class Range(NamedTuple):
    """One drawn range of a row: bytes [offset, offset+size), or bits when `bits` is set (`bit`: the
    first bit within the byte at `offset`, LSB = 0)."""

    label: str  # what the range is (a field path, "padding", a packed value)
    kind: str  # "field", "padding", "value", "count", "gap", "read", "struct"
    offset: int
    size: int
    tip: str
    bit: int | None = None
    bits: int | None = None
    hot: bool = False  # part of a disagreement

    @property
    def first_bit(self) -> int:
        return self.offset * 8 + (self.bit or 0)

    @property
    def end_bit(self) -> int:
        return self.first_bit + (self.bits if self.bits is not None else self.size * 8)


class Row(NamedTuple):
    label: str  # shown left of the row (a target's name, "VM packs", ...)
    target: str
    size: int  # bytes the row spans
    ranges: tuple[Range, ...]
    grid: bool = True  # a cell per byte under the ranges (not for a row of a few reads)


# --------------------------------------------------------------------------------------------------
# Rows


def struct_row(lay: StructLayout, target: Target, label: str | None = None) -> Row:
    """A struct's leaf fields (nested members and bit-fields included) and its padding on `target`."""
    ranges = []
    for r in describe.struct_rows(lay):
        if r.kind != "field" or r.is_struct or r.flexible:
            continue
        tip = f"{r.path}: {r.type}, offset {r.offset}"
        if r.is_bitfield:
            tip += f" bit {r.bit}, {r.bits} bits"
            ranges.append(Range(r.path, "field", r.offset, r.size, tip, r.bit, r.bits))
        else:
            ranges.append(Range(r.path, "field", r.offset, r.size, tip + f", {r.size} B"))
    for offset, size, kind in describe.unused_ranges(lay):
        what = "tail padding" if kind == "tail" else "padding"
        ranges.append(Range("padding", "padding", offset, size, f"{what}: {size} B at {offset}"))
    ranges += _unused_bits(ranges)
    ranges.sort(key=lambda r: r.first_bit)  # in memory order: padding takes the lane its bytes are in
    return Row(label or target.name, target.name, lay.size, tuple(ranges))


def _unused_bits(ranges: Sequence[Range]) -> list[Range]:
    """The bits of the bytes bit-fields touch that no field covers (a bit-field's storage left
    over): drawn hatched, not left as blank grid."""
    covered = sorted((r.first_bit, r.end_bit) for r in ranges if r.kind == "field")
    out: list[Range] = []
    for r in ranges:
        if r.bits is None:
            continue
        lo, hi = r.first_bit // 8 * 8, -(-r.end_bit // 8) * 8  # the bytes its bits touch
        pos = lo
        for a, b in covered:
            if b <= pos or a >= hi:
                continue
            if a > pos:
                out.append(_unused(pos, a))
            pos = max(pos, b)
        if pos < hi:
            out.append(_unused(pos, hi))
    unique = {(u.first_bit, u.end_bit): u for u in out}  # neighbouring bit-fields share bytes
    return list(unique.values())


def _unused(first_bit: int, end_bit: int) -> Range:
    byte, bit, bits = first_bit // 8, first_bit % 8, end_bit - first_bit
    return Range("unused bits", "unused", byte, -(-(bit + bits) // 8),
                 f"unused bits: {bits} bit(s) from byte {byte} bit {bit} (no field)", bit, bits)


def packing_row(lay: FragmentLayout) -> Row:
    """What the VM's packer writes for one cconv instance: values, span counts and gaps."""
    ranges = []
    for r in describe.slot_rows(lay):
        if r.kind == "gap":
            ranges.append(Range("gap", "gap", r.offset, r.size, f"gap: {r.size} B at {r.offset}"))
        elif r.kind == "count":
            ranges.append(Range(f"count {r.span}", "count", r.offset, r.size,
                                f"span {r.span} count ({r.count}): {r.size} B at {r.offset}"))
        else:
            where = "fixed" if r.span is None else f"span {r.span} element {r.element}"
            # a span's elements share their character's index: each is numbered ([element])
            name = f"{r.char}@{r.index}" + ("" if r.span is None else f"[{r.element}]")
            ranges.append(Range(name, "value", r.offset, r.size,
                                f"{r.char} #{r.index} ({where}): {r.size} B at {r.offset}"))
    return Row("VM packs", lay.target.name, max(lay.size, lay.packed_size), tuple(ranges))


# --------------------------------------------------------------------------------------------------
# Drawing


def _lanes(ranges: Sequence[Range]) -> list[int]:
    """A lane per range: the first whose ranges end before it starts (union members overlay)."""
    ends: list[int] = []
    out = []
    for r in ranges:
        lo = r.first_bit
        for i, end in enumerate(ends):
            if end <= lo:
                ends[i] = r.end_bit
                out.append(i)
                break
        else:
            ends.append(r.end_bit)
            out.append(len(ends) - 1)
    return out


class _Canvas:
    """Rows drawn line by line (PER_LINE bytes a line); the height grows as rows are added."""

    def __init__(self, title: str, width_bytes: int, labels: Sequence[str] = ()) -> None:
        self.per_line = max(1, min(PER_LINE, width_bytes))
        # the label column: LABEL_W, wider for a row label that would not fit (never cut)
        self.label_w = max([LABEL_W, *(int(len(x) * LABEL_CHAR_W) + 20 for x in labels)])
        self.width = self.label_w + self.per_line * CELL + 20
        self.items: list[draw.DrawingElement] = []
        self.y = 10.0
        self.colour: dict[str, str] = {}
        hatch = draw.Pattern(6, 6, patternUnits="userSpaceOnUse", patternTransform="rotate(45)")
        hatch.append(draw.Rectangle(0, 0, 6, 6, fill="#f2f2f2"))
        hatch.append(draw.Line(0, 0, 0, 6, stroke="#8a8a8a", stroke_width=2))
        self.hatch = hatch
        unused = draw.Pattern(4, 4, patternUnits="userSpaceOnUse", patternTransform="rotate(-45)")
        unused.append(draw.Rectangle(0, 0, 4, 4, fill="#ffffff"))
        unused.append(draw.Line(0, 0, 0, 4, stroke="#3a3a3a", stroke_width=1.5))
        self.unused_hatch = unused
        self.unused_drawn = False
        self.text(title, 14, bold=True)

    def text(self, s: str, size: float = 12, x: float = 10, bold: bool = False, colour: str = INK) -> None:
        self.y += size + 6
        self.items.append(draw.Text(s, size, x, self.y, font_family=FONT, fill=colour,
                                    font_weight="bold" if bold else "normal"))

    def paragraph(self, s: str, size: float = 11, x: float = 10, colour: str = INK) -> None:
        """`s` wrapped to the picture's width (a monospace character is about 0.6 em wide)."""
        for line in textwrap.wrap(s, max(20, int((self.width - x - 10) / (size * 0.62)))):
            self.text(line, size, x, colour=colour)

    def fill_of(self, r: Range) -> object:
        if r.kind in ("padding", "gap"):
            return self.hatch
        if r.kind == "unused":
            self.unused_drawn = True
            return self.unused_hatch
        key = r.label.split("[", 1)[0]  # a span's elements share their value's colour
        if key not in self.colour:
            self.colour[key] = PALETTE[len(self.colour) % len(PALETTE)]
        return self.colour[key]

    def rows(self, rows: Sequence[Row]) -> None:
        """`rows` one under another, wrapped every PER_LINE bytes (each line shows every row)."""
        for row in rows:
            if row.size > MAX_BYTES:
                raise CliError(f"{row.label} spans {row.size} bytes: too many to draw a cell per byte "
                               f"(at most {MAX_BYTES})")
        span = max((row.size for row in rows), default=0)
        lanes = [_lanes(row.ranges) for row in rows]
        for lo in range(0, max(span, 1), self.per_line):
            hi = lo + self.per_line
            self.y += 6
            for k in range(lo, min(hi, max(span, 1))):  # byte offsets above the cells
                if k % 4 == 0:
                    self.items.append(draw.Text(str(k), 9, self.label_w + (k - lo) * CELL + 2, self.y + 9,
                                                font_family=FONT, fill="#555555"))
            self.y += 12
            for row, lane_of in zip(rows, lanes):
                if row.size <= lo and lo:  # this row ended on an earlier line
                    continue
                if not row.grid and not any(r.first_bit < hi * 8 and lo * 8 < r.end_bit for r in row.ranges):
                    continue  # nothing of it on this line
                n_lanes = max(lane_of, default=0) + 1
                height = n_lanes * LANE
                extra = self._row(row, lane_of, lo, hi, height)
                self.y += height + 6 + extra

    def _row(self, row: Row, lane_of: Sequence[int], lo: int, hi: int, height: float) -> float:
        """One line of `row`; the height its callouts take below it (labels of ranges too narrow
        to hold them: a swatch of the range's fill joined to it, then the label)."""
        y0 = self.y
        self.items.append(draw.Text(row.label, 12, 10, y0 + min(height, LANE) / 2 + 4,
                                    font_family=FONT, fill=INK, data_row=row.target))
        end = min(hi, row.size) if row.grid else lo
        for k in range(lo, end):  # the byte grid
            self.items.append(draw.Rectangle(self.label_w + (k - lo) * CELL, y0, CELL, height, fill=PAGE,
                                             stroke=GRID, stroke_width=0.5))
        callouts: list[tuple[float, float, str, Range]] = []  # (x centre, range bottom, label, range)
        for r, lane in zip(row.ranges, lane_of):
            a, b = max(r.first_bit, lo * 8), min(r.end_bit, hi * 8)
            if a >= b and not (r.size == 0 and lo <= r.offset < hi):
                continue
            x = self.label_w + (a - lo * 8) * CELL / 8
            w = max((b - a) * CELL / 8, 2)
            y = y0 + lane * LANE
            attrs = {"data_target": row.target, "data_kind": r.kind, "data_label": r.label,
                     "data_offset": str(r.offset), "data_size": str(r.size)}
            if r.bits is not None:
                attrs.update(data_bit=str(r.bit), data_bits=str(r.bits))
            narrow = w < NARROW_W  # a bit or two: a dark outline keeps it visible
            rect = draw.Rectangle(x + 1, y + 2, w - 2, LANE - 4, fill=self.fill_of(r),
                                  stroke=HOT if r.hot else INK if narrow else "#555555",
                                  stroke_width=2.5 if r.hot else 1.0 if narrow else 0.8,
                                  rx=0 if narrow else 3, **attrs)
            rect.append_title(r.tip)
            self.items.append(rect)
            name = r.label if r.bits is None else f"{r.label.rsplit('.', 1)[-1]}:{r.bits}"
            name = name.rsplit(".", 1)[-1] if r.kind == "field" else name
            if r.kind in ("padding", "gap", "unused"):
                continue
            if len(name) * 6.6 + 6 <= w:
                self.items.append(draw.Text(name, 11, x + 4, y + LANE / 2 + 4, font_family=FONT,
                                            fill=INK))
            else:
                callouts.append((x + w / 2, y + LANE - 2, name, r))
        return self._callouts(callouts, y0 + height)

    def _callouts(self, callouts: Sequence[tuple[float, float, str, Range]], top: float) -> float:
        """Each callout on the first line below `top` where it does not run into another: a leader
        from the range down to a swatch of its fill, the label right of it. The height taken."""
        ends: list[float] = []  # per callout line, where its last label ends
        for cx, bottom, label, r in callouts:
            width = 14 + len(label) * 6.6
            k = next((i for i, e in enumerate(ends) if cx - 5 > e + 6), len(ends))
            if k == len(ends):
                ends.append(0.0)
            ends[k] = cx - 5 + width
            y = top + 4 + k * CALLOUT_H
            self.items.append(draw.Line(cx, bottom, cx, y + 1, stroke=INK, stroke_width=0.8))
            self.items.append(draw.Rectangle(cx - 5, y + 1, 10, 10, fill=self.fill_of(r), stroke=INK,
                                             stroke_width=0.8))
            self.items.append(draw.Text(label, 11, cx + 8, y + 10, font_family=FONT, fill=INK,
                                        data_callout=r.label))
        return len(ends) * CALLOUT_H + (4 if ends else 0)

    def legend(self) -> None:
        if not self.colour:
            return
        self.y += 8
        self.items.append(draw.Rectangle(10, self.y, 14, 14, fill=self.hatch, stroke="#555555"))
        self.items.append(draw.Text("padding / gap (no field)", 11, 30, self.y + 11, font_family=FONT,
                                    fill=INK))
        self.y += 18
        if self.unused_drawn:
            self.items.append(draw.Rectangle(10, self.y, 14, 14, fill=self.unused_hatch, stroke="#555555"))
            self.items.append(draw.Text("unused bits (of a bit-field's storage, no field)", 11, 30,
                                        self.y + 11, font_family=FONT, fill=INK))
            self.y += 18
        for name, colour in self.colour.items():
            self.items.append(draw.Rectangle(10, self.y, 14, 14, fill=colour, stroke="#555555"))
            self.items.append(draw.Text(name, 11, 30, self.y + 11, font_family=FONT, fill=INK))
            self.y += 18

    def svg(self) -> str:
        d = draw.Drawing(self.width, self.y + 12)
        d.append(draw.Rectangle(0, 0, self.width, self.y + 12, fill=PAGE))
        for item in self.items:
            d.append(item)
        return d.as_svg()


# --------------------------------------------------------------------------------------------------
# Pictures


def struct_svg(decl: Struct, tgts: Sequence[Target], decls: Sequence[Struct] | None = None) -> str:
    """`decl`'s bytes on each of `tgts`, a row per target (`decls`: one declaration per target)."""
    decls = list(decls) if decls is not None else [decl] * len(tgts)
    rows = [struct_row(d.layout(t), t) for d, t in zip(decls, tgts)]
    where = tgts[0].name if len(tgts) == 1 else f"{len(tgts)} targets"
    canvas = _Canvas(f"{decl.keyword} {decl.name} on {where}", max((r.size for r in rows), default=1),
                     [r.label for r in rows])
    sizes = ", ".join(f"{t.name} {r.size} B" for t, r in zip(tgts, rows))
    canvas.text(f"sizeof: {sizes}", 11)
    canvas.text("a cell per byte; bit-fields drawn as their bits; hover a cell for its field", 11)
    canvas.rows(rows)
    canvas.legend()
    return canvas.svg()


def cconv_svg(text: str, instances: Sequence[tuple[str, Target, FragmentLayout]]) -> str:
    """A cconv's packing: a row per (side, target) instance, as `layout CCONV` lists them."""
    rows = [packing_row(lay)._replace(label=f"{t.name} {label}") for label, t, lay in instances]
    canvas = _Canvas(f"cconv {text}", max((r.size for r in rows), default=1), [r.label for r in rows])
    canvas.text("what the VM's packer writes: values, span counts, gaps (hatched)", 11)
    canvas.rows(rows)
    canvas.legend()
    return canvas.svg()


def _reader_row(lay: FragmentLayout, hot: Sequence[tuple[int, int]]) -> Row | None:
    """The struct the instance's shim (or the fixed part's C struct) reads the buffer through."""
    struct = lay.shim.struct if lay.shim is not None else lay.fixed_struct
    if struct is None:
        return None
    row = struct_row(struct.layout(lay.target), lay.target, label=struct.name)
    marked = tuple(r._replace(hot=any(r.offset < o + n and o < r.offset + max(r.size, 1) for o, n in hot))
                   for r in row.ranges)
    return row._replace(ranges=marked)


def _examples(instances: Sequence) -> list:
    """One instance per (target, side, rule), as `check`'s text shows them: one where every span has
    elements when there is one (its picture shows them), each instance drawn once."""
    chosen: dict[int, object] = {}
    groups: dict[tuple, list] = {}
    for inst in instances:
        for a in inst.findings:
            groups.setdefault((inst.target.name, inst.side, a.finding.rule), []).append(inst)
    for items in groups.values():
        inst = next((i for i in items if all(i.kept.spans)), items[0])
        chosen.setdefault(id(inst), inst)
    return list(chosen.values())


def check_svg(res: Any, max_panels: int = MAX_PANELS) -> str:  # res: cmd_check's result
    """`check`'s instances as pictures: per instance the VM's packing, the struct its shim reads, and
    each disagreement's bytes (what was packed, where it is read) outlined in red. Instances with
    findings come first; with none, the first instance of each target and side."""
    insts = _examples(res.instances)
    if not insts:
        seen: set = set()
        insts = [i for i in res.instances
                 if (i.target.name, i.side) not in seen and not seen.add((i.target.name, i.side))]  # type: ignore[func-returns-value]  # the first of each
    where = res.targets[0].name if len(res.targets) == 1 else f"{len(res.targets)} targets"
    width = max((max(i.kept.size, i.kept.packed_size) for i in insts[:max_panels]), default=1)
    labels = ["VM packs", "shim reads", *(s.name for i in insts[:max_panels]
                                           for s in [i.kept.shim.struct if i.kept.shim is not None
                                                     else i.kept.fixed_struct] if s is not None)]
    canvas = _Canvas(f"check {res.text} on {where}: {res.n_findings} findings", width, labels)
    for inst in insts[:max_panels]:
        lay = inst.kept
        canvas.y += 10
        spans = f" spans {list(lay.spans)}" if lay.spans else ""
        canvas.text(f"{inst.target.name} {inst.side} {lay.cconv!r}{spans}", 12, bold=True)
        packed_hot = [(x.offset, x.size) for a in inst.findings for x in a.involved if x.char != "r"]
        read_hot = [(x.offset, x.size) for a in inst.findings for x in a.involved if x.char == "r"]
        vm = packing_row(lay)
        vm = vm._replace(ranges=tuple(r._replace(hot=any(r.offset < o + n and o < r.offset + max(r.size, 1)
                                                          for o, n in packed_hot)) for r in vm.ranges))
        rows = [vm]
        reader = _reader_row(lay, read_hot)
        if reader is not None:
            rows.append(reader)
        reads = tuple(Range(x.label, "read", x.offset, x.size, f"{x.label}: {x.size} B at {x.offset}",
                            hot=True)
                      for a in inst.findings for x in a.involved if x.char == "r")
        if reads:
            rows.append(Row("shim reads", lay.target.name, max(r.offset + r.size for r in reads), reads,
                            grid=False))
        canvas.rows(rows)
        for a in inst.findings:
            canvas.paragraph(f"{a.finding.rule}: {a.finding.message}", 10, x=20, colour=HOT)
    if len(insts) > max_panels:
        canvas.text(f"{len(insts) - max_panels} more instances not drawn", 11)
    canvas.legend()
    return canvas.svg()


def ranges_of(svg_text: str) -> Iterator[dict[str, str]]:
    """The data-* attributes of every drawn range of a picture (for tools reading it back)."""
    import xml.etree.ElementTree as ET
    for el in ET.fromstring(svg_text).iter("{http://www.w3.org/2000/svg}rect"):
        if "data-kind" in el.attrib:
            yield {k[5:]: v for k, v in el.attrib.items() if k.startswith("data-")} | {
                "x": el.attrib["x"], "width": el.attrib["width"], "y": el.attrib["y"]}
