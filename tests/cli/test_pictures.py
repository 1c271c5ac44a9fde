"""Layout pictures (cli/picture.py): `layout NAME --svg FILE` and `check CCONV --svg FILE`.

Each picture is read back by parsing the SVG: every drawn range carries its target, label, offset
and size, and its geometry (a cell of CELL px per byte, PER_LINE bytes a line) must put it exactly
where the catalog's layout (abi/layout.py's own walk, not the rows the picture was drawn from) puts
the field, padding, packed value or read. The pictures are rendered to PNG with cairosvg, and the
pixels under a field are its fill: the SVG renders, not only parses.
"""
from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from support.debian_tools import debian_file
from ireeabi import layouts
from ireeabi.abi import cconv, targets
from ireeabi.abi.layout import Struct
from ireeabi.cli import picture
from ireeabi.cli.main import main

ALL = [targets.get(n) for n in targets.names()]
SVG = "{http://www.w3.org/2000/svg}"
STRUCTS = ("iree_hal_buffer_t", "iree_hal_executable_dispatch_state_v0_t", "iree_vm_buffer_t")
LOADER_DISPATCH = "0rIiiiCiDCrIID_v"  # hal_loader.executable.dispatch: IREE #24827's shim


def _pieces(first_bit: int, end_bit: int) -> list[tuple[float, float]]:
    """(x offset in the line, width) in px of the bit range [first_bit, end_bit), one per line."""
    out = []
    line = picture.PER_LINE * 8
    for lo in range(first_bit // line * line, max(end_bit, first_bit + 1), line):
        a, b = max(first_bit, lo), min(end_bit, lo + line)
        if a < b:
            out.append(((a - lo) * picture.CELL / 8, (b - a) * picture.CELL / 8))
    return out


def _drawn(svg: str, target: str, label: str) -> list[tuple[float, float]]:
    """The same pieces as drawn: each rect is inset by 1 px on both sides."""
    return sorted((float(r["x"]) - 1 - picture.LABEL_W, float(r["width"]) + 2)
                  for r in picture.ranges_of(svg) if r["target"] == target and r["label"] == label)


def _expected_struct(decl: Struct, target) -> dict[str, list[tuple[float, float]]]:
    """Leaf fields by path (bit-fields as their bits) and padding (every byte no leaf touches)."""
    lay = decl.layout(target)
    out: dict[str, list] = {}
    used = []
    for path, f, offset, _ in lay.walk():
        if isinstance(f.type, Struct) or f.flexible:
            continue
        if f.bits is not None:
            first = (offset - f.offset) * 8 + f.first_bit
            out[path] = _pieces(first, first + f.bits)
            used.append((first // 8, -(-(first + f.bits) // 8)))
        else:
            out[path] = _pieces(offset * 8, (offset + f.size) * 8)
            used.append((offset, offset + f.size))
    pad, pos = [], 0
    for a, b in sorted(used) + [(lay.size, lay.size)]:
        if a > pos:
            pad += _pieces(pos * 8, a * 8)
        pos = max(pos, b)
    if pad:
        out["padding"] = pad
    return out


@pytest.mark.parametrize("name", STRUCTS)
def test_a_catalog_struct_is_drawn_where_its_layout_puts_each_byte(name, tmp_path, capsys):
    path = tmp_path / f"{name}.svg"
    assert main(["layout", name, "--all-targets", "--svg", str(path)]) == 0
    assert "sizeof" in capsys.readouterr().out  # the table is still printed
    svg = path.read_text()
    ET.fromstring(svg)  # well formed
    decl = layouts.get(name)
    for t in ALL:
        expected = _expected_struct(decl, t)
        for label, pieces in expected.items():
            assert _drawn(svg, t.name, label) == sorted(pieces), (t.name, label)
        drawn = {r["label"] for r in picture.ranges_of(svg) if r["target"] == t.name}
        assert drawn == set(expected), t.name
    # padding is hatched (a pattern fill), fields are plain colours, the same colour on every target
    rects = [el for el in ET.fromstring(svg).iter(f"{SVG}rect") if "data-kind" in el.attrib]
    padding = [el for el in rects if el.attrib["data-kind"] == "padding"]
    assert all(el.attrib["fill"].startswith("url(#") for el in padding)
    assert bool(padding) == any("padding" in _expected_struct(decl, t) for t in ALL)
    colour: dict[str, set] = {}
    for el in rects:
        if el.attrib["data-kind"] == "field":
            colour.setdefault(el.attrib["data-label"], set()).add(el.attrib["fill"])
    assert all(len(c) == 1 for c in colour.values())


def test_bit_fields_are_drawn_as_their_bits(tmp_path):
    header = tmp_path / "flags.h"
    header.write_text("struct flags { unsigned char kind : 3; unsigned int mode : 9; short s; "
                      "unsigned long long wide : 40; char tail; };\n")
    path = tmp_path / "flags.svg"
    assert main(["layout", "flags", "--header", str(header), "--all-targets", "--svg", str(path)]) == 0
    svg = path.read_text()
    from ireeabi.abi import cheader
    for t in ALL:
        decl = cheader.header_struct(str(header), "flags", t)
        expected = _expected_struct(decl, t)
        for label, pieces in expected.items():
            assert _drawn(svg, t.name, label) == sorted(pieces), (t.name, label)
        kind = next(r for r in picture.ranges_of(svg) if r["target"] == t.name and r["label"] == "kind")
        assert (kind["bit"], kind["bits"]) == ("0", "3")
        assert float(kind["width"]) + 2 == 3 * picture.CELL / 8


def _check_svg(tmp_path, cconv_text: str, *target_args: str) -> str:
    path = tmp_path / "check.svg"
    code = main(["check", cconv_text, *target_args, "--svg", str(path)])
    assert code in (0, 1)
    return path.read_text()


def test_the_dispatch_cconv_picture_shows_the_seed_misread_where_it_lives(tmp_path, capsys):
    """hal_loader's dispatch cconv on every target: the VM's packing drawn where cconv.layout puts
    each value and count; on a target where sizeof of the fixed struct is past the packed span
    count (riscv32: 32 B against 28 B packed), the count is outlined and the read at sizeof drawn."""
    svg = _check_svg(tmp_path, LOADER_DISPATCH, "--all-targets", "--spans", "1,1")
    capsys.readouterr()
    fragment = cconv.parse(LOADER_DISPATCH).arguments
    for t in ALL:
        lay = cconv.layout(fragment, t, (1, 1))
        drawn = [r for r in picture.ranges_of(svg) if r["target"] == t.name and r["kind"] == "count"]
        fixed = lay.fixed_struct.layout(t).size
        misread = fixed != lay.counts[0].offset
        if not misread and not lay.findings:
            assert not drawn  # no finding on this target: no panel for it
            continue
        assert sorted((int(r["offset"]), int(r["size"])) for r in drawn) == sorted(
            {(c.offset, c.size) for c in lay.counts})
        values = [r for r in picture.ranges_of(svg) if r["target"] == t.name and r["kind"] == "value"]
        assert {(int(r["offset"]), int(r["size"])) for r in values} == {(v.offset, v.size) for v in lay.values}
        reads = {int(r["offset"]) for r in picture.ranges_of(svg) if r["target"] == t.name and r["kind"] == "read"}
        assert (fixed in reads) == misread, t.name
    root = ET.fromstring(svg)
    hot = [el for el in root.iter(f"{SVG}rect") if el.attrib.get("stroke") == picture.HOT]
    rv32 = cconv.layout(fragment, targets.get("riscv32"), (1, 1))
    assert rv32.fixed_struct.layout(targets.get("riscv32")).size == 32 and rv32.counts[0].offset == 28
    assert any(el.attrib["data-target"] == "riscv32" and el.attrib["data-kind"] == "count"
               and el.attrib["data-offset"] == "28" for el in hot)
    assert any(el.attrib["data-target"] == "riscv32" and el.attrib["data-kind"] == "read"
               and el.attrib["data-offset"] == "32" for el in hot)


def test_a_cconv_without_findings_is_drawn_with_nothing_outlined(tmp_path):
    svg = _check_svg(tmp_path, "0ii_i", "--target", "riscv32")
    root = ET.fromstring(svg)
    assert not [el for el in root.iter(f"{SVG}rect") if el.attrib.get("stroke") == picture.HOT]
    # one panel per side; a value is named by its character's index in the signature text
    assert {r["label"] for r in picture.ranges_of(svg) if r["kind"] == "value"} == {"i@1", "i@2", "i@4"}


def test_pictures_render_to_png_with_the_fills_they_declare(tmp_path):
    debian_file("/usr/lib/x86_64-linux-gnu/libcairo.so.2", "libcairo2")
    import cairosvg
    from PIL import Image

    path = tmp_path / "buffer.svg"
    assert main(["layout", "iree_hal_buffer_t", "--target", "riscv32", "--svg", str(path)]) == 0
    svg = path.read_text()
    png = cairosvg.svg2png(bytestring=svg.encode())
    image = Image.open(io.BytesIO(png)).convert("RGB")
    root = ET.fromstring(svg)
    assert image.size == (int(float(root.attrib["width"])), int(float(root.attrib["height"])))
    for el in root.iter(f"{SVG}rect"):
        if el.attrib.get("data-kind") == "field" and float(el.attrib["width"]) > 10:
            x = float(el.attrib["x"]) + 3
            y = float(el.attrib["y"]) + 3  # inside the fill, clear of the label text
            want = tuple(int(el.attrib["fill"][i:i + 2], 16) for i in (1, 3, 5))
            assert image.getpixel((int(x), int(y))) == want, el.attrib["data-label"]


def test_svg_errors_are_clean(tmp_path, capsys):
    assert main(["layout", "iree_vm_buffer_t", "--svg", str(tmp_path / "no" / "dir.svg")]) == 2
    assert "--svg" in capsys.readouterr().err
    header = tmp_path / "big.h"
    header.write_text("struct big { char bytes[5000]; };\n")
    assert main(["layout", "big", "--header", str(header), "--svg", str(tmp_path / "big.svg")]) == 2
    err = capsys.readouterr().err
    assert "5000 bytes" in err and "Traceback" not in err
    assert main(["layout", "--header", str(header), "--svg", str(tmp_path / "all.svg")]) == 2
    assert "one struct" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------------
# Every field seen, every label whole (issue 42 item 8)

NARROW_H = "struct narrow { unsigned char a : 1; unsigned char b : 1; unsigned char c : 2; int n : 9; char z; };\n"


def _narrow_svg(tmp_path) -> tuple[str, object]:
    from ireeabi.abi import cheader

    header = tmp_path / "narrow.h"
    header.write_text(NARROW_H)
    path = tmp_path / "narrow.svg"
    assert main(["layout", "narrow", "--header", str(header), "--target", "x86_64", "--svg", str(path)]) == 0
    return path.read_text(), cheader.header_struct(str(header), "narrow", targets.get("x86_64"))


def test_a_one_bit_field_is_outlined_and_labelled_below_its_row(tmp_path, capsys):
    """A 1-bit field is 3 px wide: drawn with a dark outline, and its label (with a swatch of its
    fill, joined to it by a leader) goes below the row; the PNG shows the swatch in the field's
    colour. Every field whose label does not fit inside gets such a callout."""
    debian_file("/usr/lib/x86_64-linux-gnu/libcairo.so.2", "libcairo2")
    import cairosvg
    from PIL import Image

    svg, _ = _narrow_svg(tmp_path)
    capsys.readouterr()
    root = ET.fromstring(svg)
    fields = {el.attrib["data-label"]: el for el in root.iter(f"{SVG}rect")
              if el.attrib.get("data-kind") == "field"}
    assert float(fields["a"].attrib["width"]) + 2 == picture.CELL / 8  # one bit
    callouts = {el.attrib["data-callout"]: el for el in root.iter(f"{SVG}text") if "data-callout" in el.attrib}
    for label, el in fields.items():
        w = float(el.attrib["width"]) + 2
        if w < picture.NARROW_W:
            assert el.attrib["stroke"] == picture.INK, label
        inside = any(t.text in (label, f"{label}:{el.attrib.get('data-bits')}") and "data-callout" not in t.attrib
                     for t in root.iter(f"{SVG}text"))
        assert inside or label in callouts, label
    assert {"a", "b"} <= set(callouts)
    image = Image.open(io.BytesIO(cairosvg.svg2png(bytestring=svg.encode()))).convert("RGB")
    for label in ("a", "b"):
        swatch = next(el for el in root.iter(f"{SVG}rect")
                      if el.attrib.get("width") == "10" and float(el.attrib["x"]) + 13 == float(callouts[label].attrib["x"]))
        want = tuple(int(fields[label].attrib["fill"][i:i + 2], 16) for i in (1, 3, 5))
        assert image.getpixel((int(float(swatch.attrib["x"])) + 5, int(float(swatch.attrib["y"])) + 5)) == want


def test_unused_bits_are_hatched_and_in_the_legend(tmp_path):
    """The bits of the bytes bit-fields touch that no field covers (libclang's layout, read through
    abi/layout.py's walk) are drawn as `unused` ranges, hatched, and the legend names them."""
    svg, decl = _narrow_svg(tmp_path)
    lay = decl.layout(targets.get("x86_64"))
    fields, touched = [], set()
    for _, f, offset, _ in lay.walk():
        first = (offset - f.offset) * 8 + f.first_bit if f.bits is not None else offset * 8
        end = first + (f.bits if f.bits is not None else f.size * 8)
        fields.append((first, end))
        if f.bits is not None:
            touched |= set(range(first // 8, -(-end // 8)))
    unused_bits = {b for byte in touched for b in range(byte * 8, byte * 8 + 8)
                   if not any(a <= b < e for a, e in fields)}
    assert unused_bits  # a:1 b:1 c:2 leave 4 bits of byte 0; n:9 leaves bits of its bytes
    drawn = set()
    for r in picture.ranges_of(svg):
        if r["kind"] == "unused":
            first = int(r["offset"]) * 8 + int(r["bit"])
            drawn |= set(range(first, first + int(r["bits"])))
    assert drawn == unused_bits
    root = ET.fromstring(svg)
    assert any(el.attrib.get("data-kind") == "unused" and el.attrib["fill"].startswith("url(#")
               for el in root.iter(f"{SVG}rect"))
    assert any((t.text or "").startswith("unused bits") for t in root.iter(f"{SVG}text"))


def test_row_labels_are_never_cut(tmp_path, capsys):
    """The struct the dispatch shim reads is named whole (`iree_vm_abi_rIiiiCiDCrIID` was cut to
    18 characters), and the label column is wide enough for every label."""
    svg = _check_svg(tmp_path, LOADER_DISPATCH, "--target", "riscv32", "--spans", "1,1")
    path = tmp_path / "cconv.svg"
    assert main(["layout", LOADER_DISPATCH, "--all-targets", "--svg", str(path)]) in (0, 1)
    capsys.readouterr()
    struct = cconv.layout(cconv.parse(LOADER_DISPATCH).arguments, targets.get("riscv32"), (1, 1)).fixed_struct
    for picture_text, wanted in ((svg, struct.name), (path.read_text(), None)):
        root = ET.fromstring(picture_text)
        rows = [t for t in root.iter(f"{SVG}text") if "data-row" in t.attrib]
        if wanted:
            assert wanted in [t.text for t in rows]
        first_cell = min(float(el.attrib["x"]) for el in root.iter(f"{SVG}rect") if "data-kind" in el.attrib)
        assert rows and all(10 + len(t.text) * picture.LABEL_CHAR_W <= first_cell for t in rows)


def test_span_elements_are_indexed(tmp_path, capsys):
    """Each element of a span is labelled with its index (`i@7[0]`, `i@7[1]`), the elements of one
    value sharing its colour; as cconv.layout numbers them."""
    svg = _check_svg(tmp_path, LOADER_DISPATCH, "--target", "riscv32", "--spans", "2,2")
    capsys.readouterr()
    lay = cconv.layout(cconv.parse(LOADER_DISPATCH).arguments, targets.get("riscv32"), (2, 2))
    want = {f"{v.char}@{v.index}" + ("" if v.span is None else f"[{v.element}]") for v in lay.values}
    root = ET.fromstring(svg)
    values = [el for el in root.iter(f"{SVG}rect") if el.attrib.get("data-kind") == "value"]
    assert {el.attrib["data-label"] for el in values} == want
    assert len({el.attrib["data-label"] for el in values}) == len(values)  # one panel: none twice
    fills: dict[str, set] = {}
    for el in values:
        fills.setdefault(el.attrib["data-label"].split("[")[0], set()).add(el.attrib["fill"])
    assert all(len(f) == 1 for f in fills.values())
    assert any("[1]" in label for label in want)
