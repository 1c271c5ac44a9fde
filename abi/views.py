"""ctypes and construct views of a computed layout.

Both views carry every padding byte as an explicit field and are packed (`_pack_ = 1` / construct's
byte-exact Structs), so their size and offsets equal the engine's on any host, whatever the host's own
C ABI. Pointers are unsigned integers of the target's pointer width: these are bytes of a (possibly
foreign) target, not host pointers. `views(decl, target)` builds both once and checks that all three
views agree: ctypes offsets/sizeof against the layout, and ctypes bytes against construct bytes for a
pattern where every scalar has a distinct value.
"""
from __future__ import annotations

import ctypes
import sys
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import construct as cs

from .errors import LayoutError
from .layout import Array, FieldLayout, FunctionPointer, Pointer, Scalar, Struct, StructLayout, layout_of
from .targets import Target, get as _get_target

_CTYPES_INT = {
    ("sint", 1): ctypes.c_int8, ("uint", 1): ctypes.c_uint8,
    ("sint", 2): ctypes.c_int16, ("uint", 2): ctypes.c_uint16,
    ("sint", 4): ctypes.c_int32, ("uint", 4): ctypes.c_uint32,
    ("sint", 8): ctypes.c_int64, ("uint", 8): ctypes.c_uint64,
    ("float", 4): ctypes.c_float, ("float", 8): ctypes.c_double,
}
_CONSTRUCT_INT = {
    ("sint", 1): cs.Int8sl, ("uint", 1): cs.Int8ul,
    ("sint", 2): cs.Int16sl, ("uint", 2): cs.Int16ul,
    ("sint", 4): cs.Int32sl, ("uint", 4): cs.Int32ul,
    ("sint", 8): cs.Int64sl, ("uint", 8): cs.Int64ul,
    ("float", 4): cs.Float32l, ("float", 8): cs.Float64l,
}


def _scalar_kind(t: Any, target: Target) -> tuple[str, int]:
    if isinstance(t, Scalar):
        info = target.scalar(t.c_type)
        return info.kind, info.size
    if isinstance(t, (Pointer, FunctionPointer)):
        return "uint", target.pointer_size
    raise LayoutError(f"not a scalar: {t!r}")


@dataclass(frozen=True)
class Views:
    layout: StructLayout
    ctype: type  # ctypes.LittleEndianStructure / Union subclass
    construct: cs.Construct

    @property
    def size(self) -> int:
        return self.layout.size


def views(decl: Struct, target: "Target | str") -> Views:
    return _views(decl, _get_target(target))


@lru_cache(maxsize=None)
def _views(decl: Struct, target: Target) -> Views:
    lay = layout_of(decl, target)
    v = Views(lay, _ctypes_class(lay), _construct_struct(lay))
    check_views(v)
    return v


def ctypes_class(decl: Struct, target: "Target | str") -> Any:  # a ctypes Structure or Union class
    return views(decl, target).ctype


def construct_struct(decl: Struct, target: "Target | str") -> cs.Construct:
    return views(decl, target).construct


# -- ctypes -----------------------------------------------------------------------------------------


def _ctypes_of(t: Any, target: Target) -> Any:
    if isinstance(t, Struct):
        return _views(t, target).ctype
    if isinstance(t, Array):
        return _ctypes_of(t.elem, target) * (t.count or 0)
    kind, size = _scalar_kind(t, target)
    if kind == "bytes":
        return ctypes.c_uint8 * size
    return _CTYPES_INT[(kind, size)]


def bit_regions(lay: StructLayout) -> list[tuple[int, int, list[FieldLayout]]]:
    """Bit-fields grouped into disjoint byte ranges [lo, hi) (merging ranges that share a byte)."""
    regions: list[tuple[int, int, list[FieldLayout]]] = []
    for f in lay.fields:
        if f.bits is None:
            continue
        lo, hi = f.byte_span
        if regions and lo < regions[-1][1]:
            plo, phi, fs = regions[-1]
            regions[-1] = (plo, max(phi, hi), fs + [f])
        else:
            regions.append((lo, hi, [f]))
    return regions


def _bit_property(lo: int, n: int, f: FieldLayout, signed: bool) -> property:
    assert f.bits is not None and f.bit_offset is not None  # a bit-field's
    bits = f.bits
    shift = f.offset * 8 + f.bit_offset - lo * 8
    mask = (1 << bits) - 1
    name = f"_bits_{lo}"

    def get(self: Any) -> int:
        v = (int.from_bytes(bytes(getattr(self, name)), "little") >> shift) & mask
        return v - (1 << bits) if signed and v >> (bits - 1) else v

    def put(self: Any, value: int) -> None:
        arr = getattr(self, name)
        word = int.from_bytes(bytes(arr), "little")
        word = (word & ~(mask << shift)) | ((int(value) & mask) << shift)
        ctypes.memmove(ctypes.addressof(arr), word.to_bytes(n, "little"), n)

    return property(get, put, doc=f"bit-field {f.name}:{f.bits}")


# ctypes.LittleEndianUnion is Python 3.11's; 3.10's ctypes has none, and on the little-endian hosts
# ireeabi runs on its Union is one.
if sys.version_info >= (3, 11):
    _LITTLE_ENDIAN_UNION: type = ctypes.LittleEndianUnion
else:
    _LITTLE_ENDIAN_UNION = ctypes.Union


def _ctypes_class(lay: StructLayout) -> type:
    target = lay.target
    base = _LITTLE_ENDIAN_UNION if lay.decl.is_union else ctypes.LittleEndianStructure
    fields: list[tuple] = []
    props: dict[str, property] = {}
    if lay.decl.is_union:
        if any(f.bits is not None for f in lay.fields):
            raise LayoutError(f"{lay.name}: bit-fields in unions are not modelled")
        for f in lay.fields:
            fields.append((f.name, _ctypes_of(f.type, target)))
        if lay.padding:
            fields.append(("_tail_pad", ctypes.c_uint8 * lay.size))
    else:
        # Bit-fields become a byte array per region plus properties: ctypes' own bit-fields cannot
        # share a storage unit with a preceding ordinary member, which C allows.
        items: list[tuple[int, int, Any]] = [(f.offset, f.end, f) for f in lay.fields if f.bits is None]
        for lo, hi, fs in bit_regions(lay):
            items.append((lo, hi, fs))
            for f in fs:
                assert isinstance(f.type, Scalar)  # a bit-field's type
                signed = target.scalar(f.type.c_type).kind == "sint"
                props[f.name] = _bit_property(lo, hi - lo, f, signed)
        items.sort(key=lambda it: (it[0], it[1]))
        pos = 0
        for lo, hi, item in items:
            _pad_to(fields, pos, lo)
            if isinstance(item, list):
                fields.append((f"_bits_{lo}", ctypes.c_uint8 * (hi - lo)))
            else:
                fields.append((item.name, _ctypes_of(item.type, target)))
            pos = max(pos, hi)
        _pad_to(fields, pos, lay.size)
    ns = {"_pack_": 1, "_fields_": fields, "__module__": __name__, **props}
    return type(lay.decl.name, (base,), ns)


def _pad_to(fields: list[tuple], pos: int, offset: int) -> None:
    if offset > pos:
        fields.append((f"_pad_{pos}", ctypes.c_uint8 * (offset - pos)))


# -- construct --------------------------------------------------------------------------------------


def _construct_of(t: Any, target: Target) -> cs.Construct:
    if isinstance(t, Struct):
        return _views(t, target).construct
    if isinstance(t, Array):
        return cs.Array(t.count or 0, _construct_of(t.elem, target))
    kind, size = _scalar_kind(t, target)
    if kind == "bytes":
        return cs.Bytes(size)
    return _CONSTRUCT_INT[(kind, size)]


def _construct_struct(lay: StructLayout) -> cs.Construct:
    target = lay.target
    if lay.decl.is_union:
        members = [f.name / _construct_of(f.type, target) for f in lay.fields]
        return cs.Padded(lay.size, cs.Union(None, *members))
    items: list[tuple[int, int, Any]] = [(f.offset, f.end, f) for f in lay.fields
                                         if f.bits is None and not f.flexible]
    items += [(lo, hi, fs) for lo, hi, fs in bit_regions(lay)]
    items.sort(key=lambda it: (it[0], it[1]))
    parts: list[cs.Construct] = []
    groups: dict[str, list[str]] = {}
    pos = 0
    for lo, hi, item in items:
        if lo > pos:
            parts.append(cs.Padding(lo - pos))
        if isinstance(item, list):
            key = f"bits_{lo}"
            groups[key] = [f.name for f in item]
            parts.append(key / _bit_region(lo, hi, item, target))
        else:
            parts.append(item.name / _construct_of(item.type, target))
        pos = hi
    if lay.size > pos:
        parts.append(cs.Padding(lay.size - pos))
    struct = cs.Struct(*parts)
    return _FlatBits(struct, groups) if groups else struct


def _bit_region(lo: int, hi: int, fs: list[FieldLayout], target: Target) -> cs.Construct:
    """Bytes [lo, hi) of little-endian bit-fields, LSB first."""
    # BitStruct reads MSB first; byte-swapping the region makes its highest bit come first.
    members: list[cs.Construct] = []
    top = (hi - lo) * 8
    for f in sorted(fs, key=lambda g: g.offset * 8 + (g.bit_offset or 0), reverse=True):
        assert f.bits is not None and f.bit_offset is not None and isinstance(f.type, Scalar)
        start = f.offset * 8 + f.bit_offset - lo * 8
        if top > start + f.bits:
            members.append(cs.Padding(top - start - f.bits))
        signed = target.scalar(f.type.c_type).kind == "sint"
        members.append(f.name / cs.BitsInteger(f.bits, signed=signed))
        top = start
    if top > 0:
        members.append(cs.Padding(top))
    return cs.ByteSwapped(cs.BitStruct(*members))


class _FlatBits(cs.Adapter):
    """Shows bit-fields as plain members of their struct, as C does (construct nests bit units)."""

    def __init__(self, subcon: cs.Construct, groups: dict[str, list[str]]) -> None:
        super().__init__(subcon)
        self.groups = groups

    def _decode(self, obj: Any, context: Any, path: Any) -> Any:
        out = cs.Container()
        for k, v in obj.items():
            if k in self.groups:
                for name in self.groups[k]:
                    out[name] = v[name]
            else:
                out[k] = v
        return out

    def _encode(self, obj: Any, context: Any, path: Any) -> Any:
        out = dict(obj)
        for key, names in self.groups.items():
            out[key] = {n: out.pop(n) for n in names}
        return out


def parse(decl: Struct, target: "Target | str", data: bytes) -> dict:
    """Parse `data` as `decl` on `target` (construct; a plain dict without padding keys)."""
    v = views(decl, target)
    if len(data) < v.size:
        raise LayoutError(f"{decl.name}: need {v.size} bytes, got {len(data)}")
    return _plain(v.construct.parse(bytes(data[: v.size])))


class FieldValuesError(LayoutError):
    """Values for `build` that do not match the declaration: every `missing` field and every
    `unknown` key (dotted paths; `[i]` indexes array elements), and `wrong` shapes (a struct given
    a non-dict, an array a list of another length)."""

    def __init__(self, name: str, missing: list[str], unknown: list[str], wrong: list[str]) -> None:
        self.name, self.missing, self.unknown, self.wrong = name, missing, unknown, wrong
        parts = [f"{label} {', '.join(items)}" for label, items in
                 (("missing", missing), ("unknown", unknown), ("wrong", wrong)) if items]
        super().__init__(f"{name}: cannot build: {'; '.join(parts)}")


def build(decl: Struct, target: "Target | str", values: dict) -> bytes:
    """Build the bytes of `decl` on `target` from a dict of its fields (nested structs as dicts,
    arrays as lists, bit-fields as plain keys).

    Every field must have a value and every key must name a field: `FieldValuesError` lists all
    that are missing and all that are unknown. A union takes one member or more (parse gives them
    all) and builds the first one given in declaration order. A flexible array member is optional:
    given a list, its elements are laid from its offset on, as C co-allocates them (the result is
    then longer than sizeof).
    """
    v = views(decl, target)
    missing: list[str] = []
    unknown: list[str] = []
    wrong: list[str] = []
    _check_values(v.layout, values, "", missing, unknown, wrong)
    if missing or unknown or wrong:
        raise FieldValuesError(decl.name, missing, unknown, wrong)
    flex = v.layout.flexible
    try:
        data = v.construct.build(values)
        if flex is None or flex.name not in values:
            return data
        assert isinstance(flex.type, Array)  # a flexible array member's
        elem = _construct_of(flex.type.elem, v.layout.target)
        tail = b"".join(elem.build(item) for item in values[flex.name])
    except (cs.ConstructError, KeyError, TypeError, ValueError, OverflowError) as e:
        raise LayoutError(f"{decl.name}: cannot build: {e}") from None
    out = bytearray(data)
    out[flex.offset:] = tail  # over the tail padding, as C's elements may lie
    return bytes(out.ljust(len(data), b"\0"))


def _check_values(lay: StructLayout, values: Any, prefix: str, missing: list[str],
                  unknown: list[str], wrong: list[str]) -> None:
    if not isinstance(values, dict):
        wrong.append(f"{prefix[:-1] or lay.name} (a dict of {lay.decl.keyword} {lay.name}'s fields, "
                     f"got {type(values).__name__})")
        return
    members = [f for f in lay.fields if not f.flexible]
    flex = lay.flexible
    names = {f.name for f in lay.fields}
    unknown += [prefix + str(k) for k in values if k not in names]
    if flex is not None and flex.name in values:
        if prefix:  # only the outermost struct may end in elements past its sizeof
            unknown.append(f"{prefix}{flex.name} (a flexible array inside a member has no bytes)")
        elif not isinstance(values[flex.name], (list, tuple)):
            wrong.append(f"{flex.name} (a list of elements, got {type(values[flex.name]).__name__})")
        else:
            for i, item in enumerate(values[flex.name]):
                assert isinstance(flex.type, Array)  # a flexible array member's
                _check_value(flex.type.elem, item, f"{flex.name}[{i}]", lay.target, missing, unknown,
                             wrong)
    if lay.decl.is_union:
        given = [f for f in members if f.name in values][:1]  # the member construct builds
        if not given:
            missing.append(f"{prefix}{{{' | '.join(f.name for f in members)}}}")
    else:
        given = members
    for f in given:  # declaration order, depth first
        if f.name not in values:
            missing.append(prefix + f.name)
        else:
            _check_value(f.type, values[f.name], prefix + f.name, lay.target, missing, unknown, wrong)


def _check_value(t: Any, value: Any, path: str, target: Target, missing: list[str],
                 unknown: list[str], wrong: list[str]) -> None:
    if isinstance(t, Struct):
        _check_values(layout_of(t, target), value, path + ".", missing, unknown, wrong)
    elif isinstance(t, Array):
        count = t.count or 0
        if not isinstance(value, (list, tuple)) or len(value) != count:
            got = f"{len(value)} elements" if isinstance(value, (list, tuple)) else type(value).__name__
            wrong.append(f"{path} (a list of {count} elements, got {got})")
            return
        for i, item in enumerate(value):
            _check_value(t.elem, item, f"{path}[{i}]", target, missing, unknown, wrong)


# Keys construct adds to what it parses: its context, not fields (a C field may start with "_", and
# the engine names anonymous members "__anonymous<N>").
_CONSTRUCT_KEYS = frozenset({"_io", "_", "_params", "_root", "_parsing", "_building", "_sizing",
                             "_subcons", "_index"})


def _plain(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items() if k not in _CONSTRUCT_KEYS}
    if isinstance(obj, list):
        return [_plain(v) for v in obj]
    return obj


# -- agreement check -------------------------------------------------------------------------------


def check_views(v: Views) -> None:
    """Raise LayoutError unless layout, ctypes and construct describe the same bytes."""
    lay, ct = v.layout, v.ctype
    name = lay.name
    if ctypes.sizeof(ct) != lay.size:
        raise LayoutError(f"{name}: ctypes sizeof {ctypes.sizeof(ct)} != layout {lay.size}")
    for f in lay.fields:
        if f.bits is not None:
            continue  # checked through the byte pattern below
        desc = getattr(ct, f.name)
        if desc.offset != f.offset:
            raise LayoutError(f"{name}.{f.name}: ctypes offset {desc.offset} != layout {f.offset}")
    try:
        csize = v.construct.sizeof()
    except cs.SizeofError as e:
        raise LayoutError(f"{name}: construct has no fixed size: {e}") from None
    if csize != lay.size:
        raise LayoutError(f"{name}: construct sizeof {csize} != layout {lay.size}")
    values = pattern(lay)
    inst = ct()
    _fill_ctypes(inst, values)
    cbytes = bytes(inst)
    kbytes = v.construct.build(values)
    if cbytes != kbytes:
        diff = next(i for i in range(len(cbytes)) if cbytes[i] != kbytes[i])
        raise LayoutError(f"{name}: ctypes and construct bytes differ first at offset {diff}")
    if project(_plain(v.construct.parse(kbytes)), values) != values:
        raise LayoutError(f"{name}: construct parse does not round-trip")


def pattern(lay: StructLayout, seed: list[int] | None = None) -> dict:
    """A value for every scalar leaf, all distinct (unions: first member only)."""
    counter = seed if seed is not None else [0]
    out: dict = {}
    members = lay.fields[:1] if lay.decl.is_union else lay.fields
    for f in members:
        if f.flexible:
            continue
        out[f.name] = _pattern_value(f.type, lay.target, counter, f.bits)
    return out


def _pattern_value(t: Any, target: Target, counter: list[int], bits: int | None) -> Any:
    if isinstance(t, Struct):
        return pattern(layout_of(t, target), counter)
    if isinstance(t, Array):
        return [_pattern_value(t.elem, target, counter, None) for _ in range(t.count or 0)]
    counter[0] += 1
    n = counter[0]
    kind, size = _scalar_kind(t, target)
    if kind == "bytes":
        return bytes((n + i) & 0xFF for i in range(size))
    if kind == "float":
        return float(n) + 0.5
    width = bits if bits is not None else size * 8
    value = (n * 0x9E3779B97F4A7C15) & ((1 << width) - 1)
    if kind == "sint" and value >= 1 << (width - 1):
        value -= 1 << width
    return value


def _fill_ctypes(inst: Any, values: dict) -> None:
    for k, v in values.items():
        if isinstance(v, dict):
            _fill_ctypes(getattr(inst, k), v)
        elif isinstance(v, list):
            _fill_array(getattr(inst, k), v)
        elif isinstance(v, bytes):
            arr = getattr(inst, k)
            ctypes.memmove(ctypes.addressof(arr), v, len(v))
        else:
            setattr(inst, k, v)


def _fill_array(arr: Any, items: list) -> None:
    for i, item in enumerate(items):
        if isinstance(item, dict):
            _fill_ctypes(arr[i], item)
        elif isinstance(item, list):  # an array of arrays (C's part[2][3])
            _fill_array(arr[i], item)
        elif isinstance(item, bytes):
            ctypes.memmove(ctypes.addressof(arr[i]), item, len(item))
        else:
            arr[i] = item


def project(parsed: Any, expected: Any) -> Any:
    """Project a parse result onto the keys of the expected pattern (unions parse every member)."""
    if isinstance(expected, dict) and isinstance(parsed, dict):
        return {k: project(parsed.get(k), v) for k, v in expected.items()}
    if isinstance(expected, list) and isinstance(parsed, list):
        return [project(p, e) for p, e in zip(parsed, expected)]
    return parsed
