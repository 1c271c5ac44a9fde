"""What the commands show, as plain data: the rows of a struct layout and of a cconv instance, and
their JSON forms. Rendering to text lives in the command modules."""
from __future__ import annotations

import struct
from typing import Any, NamedTuple

from ..abi.cconv import Finding, FragmentLayout
from ..abi.layout import Array, FieldLayout, Struct, StructLayout, size_align


class StructRow(NamedTuple):
    """One line of a struct table: a field (nested ones included) or a padding range."""

    kind: str  # "field", "hole" or "tail"
    path: str  # dotted field path; for padding, the path of the struct it belongs to ("" = top)
    depth: int  # nesting level (0 = a member of the struct shown)
    offset: int  # absolute; for a bit-field, the byte holding its first bit
    size: int  # bytes; for a bit-field, the bytes its bits touch; 0 for a flexible array
    type: str = ""
    bit: int | None = None  # bit-fields: first bit within the byte at `offset` (LSB = 0)
    bits: int | None = None
    unit_offset: int | None = None  # bit-fields: the storage unit the C rules place it in
    unit_size: int | None = None
    flexible: bool = False
    element_size: int | None = None  # flexible arrays: bytes per element
    is_struct: bool = False  # a struct or union member: the rows after it describe its bytes

    @property
    def name(self) -> str:
        if self.kind != "field":
            return "<hole>" if self.kind == "hole" else "<tail padding>"
        return self.path.rsplit(".", 1)[-1]

    @property
    def is_bitfield(self) -> bool:
        return self.bits is not None


def struct_rows(lay: StructLayout) -> list[StructRow]:
    """Fields depth-first in declaration order, with every hole and tail padding at its place."""
    out: list[StructRow] = []
    _rows(lay, "", 0, 0, out)
    return out


def _rows(lay: StructLayout, prefix: str, depth: int, base: int, out: list[StructRow]) -> None:
    pads = list(lay.padding)
    next_pad = 0  # an index, not pop(0): linear in the member count
    owner = prefix[:-1]
    for f in lay.fields:
        first = f.byte_span[0] if f.bits is not None else f.offset
        while next_pad < len(pads) and pads[next_pad].offset < first:
            p = pads[next_pad]
            next_pad += 1
            out.append(StructRow(p.kind, owner, depth, base + p.offset, p.size))
        out.append(_field_row(f, prefix, depth, base, lay))
        if isinstance(f.type, Struct):
            _rows(f.type.layout(lay.target), f"{prefix}{f.name}.", depth + 1, base + f.offset, out)
    for p in pads[next_pad:]:
        out.append(StructRow(p.kind, owner, depth, base + p.offset, p.size))


def _field_row(f: FieldLayout, prefix: str, depth: int, base: int, lay: StructLayout) -> StructRow:
    path = prefix + f.name
    if f.bits is not None:
        assert f.bit_offset is not None  # a bit-field's
        lo, hi = f.byte_span
        first_bit = f.offset * 8 + f.bit_offset
        return StructRow("field", path, depth, base + lo, hi - lo, f.type.display(), first_bit % 8,
                         f.bits, base + f.offset, f.size)
    elem = size_align(f.type.elem, lay.target)[0] if f.flexible and isinstance(f.type, Array) else None
    return StructRow("field", path, depth, base + f.offset, f.size, f.type.display(),
                     flexible=f.flexible, element_size=elem, is_struct=isinstance(f.type, Struct))


def unused_ranges(lay: StructLayout) -> list[tuple[int, int, str]]:
    """(offset, size, "hole"/"tail") of the bytes no field touches, nested fields and union members
    included, merged across nesting levels (a byte counts once however many members overlay it)."""
    # Ranges, never a byte map: a char[1 << 40] member costs what a char[2] does.
    used = sorted((r.offset, r.offset + r.size) for r in struct_rows(lay)
                  if r.kind == "field" and not r.is_struct and r.size)  # a struct's bytes are its members'
    out: list[tuple[int, int, str]] = []
    pos = 0
    for start, end in used:
        if start > pos:
            out.append((pos, start - pos, "hole"))
        pos = max(pos, end)
    if pos < lay.size:
        out.append((pos, lay.size - pos, "tail"))
    return out


def field_json(r: StructRow) -> dict[str, Any]:
    """One field of `layout --json`, offsets counted from the start of the struct shown.

    A bit-field has the keys of `FieldLayout` (abi/layout.py) with their meaning there: its storage
    unit's `offset` and `size`, `bit_offset` from the least significant bit at `offset`, `bits`,
    `first_bit` and `byte_span` (the bytes its bits touch, [first, end)).
    """
    if not r.is_bitfield:
        d: dict[str, Any] = {"name": r.path, "offset": r.offset, "size": r.size, "type": r.type}
        if r.flexible:
            d.update(flexible=True, element_size=r.element_size)
        return d
    assert r.bit is not None and r.unit_offset is not None  # a bit-field row's
    first_bit = r.offset * 8 + r.bit  # a row places a bit-field by the byte of its first bit
    return {"name": r.path, "offset": r.unit_offset, "size": r.unit_size, "type": r.type,
            "bit_offset": first_bit - r.unit_offset * 8, "bits": r.bits, "first_bit": first_bit,
            "byte_span": [r.offset, r.offset + r.size]}


def struct_json(lay: StructLayout) -> dict[str, Any]:
    """The documented JSON form of one struct on one target."""
    fields = [field_json(r) for r in struct_rows(lay) if r.kind == "field"]
    padding = [{"offset": o, "size": n, "kind": k} for o, n, k in unused_ranges(lay)]
    return {"name": lay.name, "kind": lay.decl.keyword, "target": lay.target.name, "size": lay.size,
            "align": lay.align, "fields": fields, "padding": padding}



def header_entries(structs: dict[str, Struct], errors: dict[str, str]
                   ) -> tuple[list[tuple[list[str], Struct]], list[tuple[list[str], str]]]:
    """Every struct of a header once, with all its names, in the header's order; and every struct
    that could not be laid out once, with its names and its error (which starts `file:line: `)."""
    laid: dict[int, tuple[list[str], Struct]] = {}
    for name, s in structs.items():
        laid.setdefault(id(s), ([], s))[0].append(name)
    failed: dict[str, list[str]] = {}
    for name, message in errors.items():
        failed.setdefault(message, []).append(name)
    return list(laid.values()), [(names, message) for message, names in failed.items()]


def header_error_json(names: list[str], message: str) -> dict[str, Any]:
    """One struct of a header without a layout: its names, the file and line at fault, the message."""
    where, line, text = message, None, message
    parts = message.split(": ", 1)
    if len(parts) == 2 and ":" in parts[0] and parts[0].rsplit(":", 1)[1].isdigit():
        where, line_text = parts[0].rsplit(":", 1)
        line, text = int(line_text), parts[1]
    return {"names": names, "file": where if line is not None else None, "line": line, "message": text}


def header_json(path: str, target_name: str, structs: dict[str, Struct], errors: dict[str, str],
                layout_of: Any) -> dict[str, Any]:
    """`layout --header FILE --json` on one target: every struct's layout, every struct's error."""
    laid, failed = header_entries(structs, errors)
    return {"header": path, "target": target_name,
            "structs": [{**struct_json(layout_of(s)), "names": names} for names, s in laid],
            "errors": [header_error_json(names, message) for names, message in failed]}


# --------------------------------------------------------------------------------------------------
# cconv instances


class SlotRow(NamedTuple):
    """One line of a cconv table: a value, a span count or a gap the packer leaves zero."""

    kind: str  # value kind ("i32", "i64", "f32", "f64", "ref"), "count" or "gap"
    offset: int
    size: int
    char: str = ""
    index: int | None = None  # type: ignore[assignment]  # shadows tuple.index; the character's in the text
    span: int | None = None
    element: int | None = None
    count: int | None = None  # type: ignore[assignment]  # shadows tuple.count; a count's elements

    @property
    def where(self) -> str:
        if self.kind == "gap":
            return "zero padding"
        if self.kind == "count":
            return f"span {self.span} count = {self.count}"
        if self.span is None:
            return "fixed"
        return f"span {self.span} element {self.element}"


def slot_rows(lay: FragmentLayout) -> list[SlotRow]:
    rows = [SlotRow(v.kind, v.offset, v.size, v.char, v.index, v.span, v.element) for v in lay.values]
    rows += [SlotRow("count", c.offset, c.size, span=c.span, count=c.count) for c in lay.counts]
    rows += [SlotRow("gap", g.offset, g.size) for g in lay.gaps]
    order = {"count": 0, "gap": 2}
    return sorted(rows, key=lambda r: (r.offset, order.get(r.kind, 1)))


def finding_json(f: Finding) -> dict[str, Any]:
    return f.as_dict()


def cconv_json(lay: FragmentLayout, *, side: str, signature: str | None) -> dict[str, Any]:
    """The documented JSON form of one fragment instance on one target."""
    shim = None
    if lay.shim is not None:
        shim = {"struct": lay.shim.struct.name, "sizeof": lay.shim.sizeof,
                "required_length": lay.shim.required_length}
    fixed = None
    if lay.fixed_struct is not None:
        fixed = {"struct": lay.fixed_struct.name, "sizeof": lay.fixed_struct.layout(lay.target).size}
    return {
        "cconv": lay.cconv,
        "signature": signature,
        "side": side,
        "target": lay.target.name,
        "spans": list(lay.spans),
        "size": lay.size,
        "packed_size": lay.packed_size,
        "values": [{"kind": v.kind, "char": v.char, "index": v.index, "offset": v.offset,
                    "size": v.size, "span": v.span, "element": v.element} for v in lay.values],
        "counts": [{"span": c.span, "offset": c.offset, "size": c.size, "count": c.count}
                   for c in lay.counts],
        "gaps": [{"offset": g.offset, "size": g.size} for g in lay.gaps],
        "shim": shim,
        "fixed_struct": fixed,
        "findings": [finding_json(f) for f in lay.findings],
    }


def shim_summary(lay: FragmentLayout) -> str:
    """How native code reads this instance, in one sentence."""
    n_spans = len(lay.fragment.spans)
    parts = []
    if lay.shim is not None:
        parts.append(f"generic shim struct {lay.shim.struct.name}: sizeof {lay.shim.sizeof}, "
                     f"accepts exactly {lay.shim.required_length} B")
    elif lay.fragment.items:
        why = f"{n_spans} spans" if n_spans > 1 else "values after a span"
        parts.append(f"no generic shim struct ({why}: read by hand)")
    if lay.fixed_struct is not None and lay.shim is None:
        parts.append(f"fixed part {lay.fixed_struct.name}: sizeof "
                     f"{lay.fixed_struct.layout(lay.target).size}, packed in {lay.counts[0].offset} B")
    return "; ".join(parts)


def sample_values(lay: FragmentLayout) -> list[Any]:
    """Recognisable values in packer order: every byte of value #k (1-based) is k (1..126, then
    wrapping), so a hex dump shows which value sits where; counts are the real counts."""
    out: list[Any] = []
    for j, v in enumerate(lay.values):
        k = j % 126 + 1
        if v.kind == "ref":
            word = int.from_bytes(bytes([k]) * lay.target.pointer_size, "little")
            out.append((word, word))
        elif v.kind in ("i32", "i64"):
            out.append(int.from_bytes(bytes([k]) * v.size, "little", signed=True))
        else:
            out.append(struct.unpack("<f" if v.kind == "f32" else "<d", bytes([k]) * v.size)[0])
    return out


__all__ = ["StructRow", "SlotRow", "struct_rows", "field_json", "struct_json", "header_entries",
           "header_error_json", "header_json", "slot_rows", "cconv_json", "shim_summary", "sample_values"]
