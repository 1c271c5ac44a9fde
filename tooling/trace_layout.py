"""The two views of one import call's argument buffer, byte by byte: what the VM packed there (rule
b: runtime/src/iree/vm/bytecode/dispatch.c, `abi.cconv.vm_packing`) and what the export's shim reads
(rule c: the generic shims of runtime/src/iree/vm/shims.h, or a hand-written span walker such as
hal_loader's `iree_vm_shim_dispatch_v` in runtime/src/iree/modules/hal/loader/module.c,
`abi.cconv.shim_structs`), and where they disagree.

`packed_fields(fragment, target, data)` lays the bytes out as the VM's packer did: every value, span
count and padding byte with the field it belongs to (the span counts are read back from the bytes at
the packer's own count slots, which is where it wrote them). `shim_fields(...)` walks the same bytes
as the shim does: the struct it reads through, each field's offset and value, the counts a span
walker reads where *it* believes they are (so a misplaced reader reads a constant as a count, as the
pre-fix loader does), and the check that fails, if any. `mark_disagreements` then names, for every
field the shim reads, the packed field(s) its bytes belong to; a field that reads bytes the VM
packed for another field, padding, or past the buffer is a disagreement.

Fields are named as IREE's C code names them: the members of the shim struct (`r0`, `i1`, ...: the
`iree_vm_abi_<types>_t` of the fragment), or, for the dispatch shims whose args struct the catalog
declares (`layouts.hal_loader`, `layouts.hal_module_dispatch`), its named members (`executable`,
`function_id`, `workgroup_x`, `constant_count`, `constants[0]`, `bindings[1].r0`, ...).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, Sequence

from ..abi import cconv
from ..abi.cconv import Fragment, Span, Value
from ..abi.errors import IreeAbiError
from ..abi.layout import Array, Struct, layout_of
from ..abi.targets import Target
from ..layouts import hal_loader as HL
from ..layouts import hal_module_dispatch as HMD

MISMATCH = "INVALID_ARGUMENT: argument/result signature mismatch"
# Span elements listed per span (a span of 65535 elements would otherwise list them all on every
# call); the bytes of the whole buffer are always there.
MAX_ELEMENTS = 256
_KIND = {"i": "i32", "I": "i64", "f": "f32", "F": "f64", "r": "ref"}
_CODE = {"i": "i", "I": "q", "f": "f", "F": "d"}


class TraceLayoutError(IreeAbiError):
    """Bytes that no packing of the fragment explains (their length, or a span count)."""


@dataclass(frozen=True)
class Names:
    """How the C code names the values of one fragment: fixed values by fragment position, spans
    by span number (count and array name)."""

    struct: str  # the struct the shim reads through
    values: dict[int, str]  # fragment position -> name
    spans: tuple[tuple[str, str], ...]  # per span: (count name, array name)


def _leaves(s: Struct) -> list[str]:
    out: list[str] = []
    for f in s.fields:
        if isinstance(f.type, Array) and f.type.count is not None:
            out += [f"{f.name}[{k}]" for k in range(f.type.count)]
        else:
            out.append(f.name)
    return out


def _generic_name(char: str, pos: int) -> str:
    """The member IREE_VM_ABI_FIXED_STRUCT gives a value (vm/shims.h, as `cconv.shim_struct`)."""
    return ("r" if char == "r" else "f" if char in "fF" else "i") + str(pos)


def names_for(import_name: str, frag: Fragment) -> Names:
    """The C names of `frag`'s values for the shim of `import_name` (`module.function`)."""
    named: Struct | None = None
    args: Struct | None = None
    if import_name == "hal_loader.executable.dispatch":
        named, args = HL.iree_hal_loader_dispatch_args_named_t, HL.iree_hal_loader_dispatch_args_t
    elif import_name.startswith("hal.command_buffer.dispatch"):
        try:
            s = HMD.shim(import_name)
        except IreeAbiError:
            s = None
        if s is not None:
            args = s.args
            anon, named = args.fields[0].type, None
            assert isinstance(anon, Struct)  # the args union (module.c's anonymous one)
            if isinstance(anon.fields[0].type, Struct):
                named = anon.fields[0].type  # anon.named
    if named is not None and args is not None:
        leaves = _leaves(named)
        if len(leaves) == len(frag.fixed_prefix):
            return Names(args.name, dict(enumerate(leaves)),
                         (("constant_count", "constants"), ("binding_count", "bindings")))
    values: dict[int, str] = {}
    spans: list[tuple[str, str]] = []
    for pos, item in enumerate(frag.items):
        if isinstance(item, Value):
            values[pos] = _generic_name(item.char, pos)
        else:
            spans.append((f"a{pos}_count", f"a{pos}"))
    prefix_struct = cconv.shim_struct(frag.fixed_prefix) if frag.fixed_prefix else None
    struct_name = frag.struct_name if cconv.shim_struct(frag.text) is not None else \
        (prefix_struct.name if prefix_struct is not None else "(no struct)")
    return Names(struct_name, values, tuple(spans))


def _element_names(span: Span) -> list[str]:
    """Member suffixes of one span element: none for a single value (`constants[0]`), else the
    element struct's members (`bindings[0].r0`)."""
    if len(span.values) == 1:
        return [""]
    elem = cconv.shim_struct(span.text)
    assert elem is not None  # a span's values are fixed
    return ["." + f.name for f in elem.fields]


def value_names(names: Names, frag: Fragment, counts: Sequence[int]) -> list[str]:
    """Every value's name in packer order (spans flattened) for these span counts."""
    out: list[str] = []
    k = 0
    for pos, item in enumerate(frag.items):
        if isinstance(item, Value):
            out.append(names.values[pos])
            continue
        array = names.spans[k][1]
        suffixes = _element_names(item)
        out += [f"{array}[{e}]{s}" for e in range(counts[k]) for s in suffixes]
        k += 1
    return out


def decode(char: str, data: bytes, offset: int, t: Target) -> Any:
    """The value of cconv character `char` (or "count": an int32) at `offset`, None past the end;
    a ref as {"ptr", "type"}."""
    order = "<" if t.endian == "little" else ">"
    if char == "r":
        w = "Q" if t.pointer_size == 8 else "I"
        if offset < 0 or offset + 2 * t.pointer_size > len(data):
            return None
        ptr, typ = struct.unpack_from(order + w + w, data, offset)
        return {"ptr": ptr, "type": typ}
    code = "i" if char == "count" else _CODE[char]
    size = struct.calcsize(code)
    if offset < 0 or offset + size > len(data):
        return None
    return struct.unpack_from(order + code, data, offset)[0]


def _field(name: str, kind: str, char: str, offset: int, size: int, data: bytes, t: Target,
           **extra: Any) -> dict:
    return {"name": name, "kind": kind, "char": char, "offset": offset, "size": size,
            "value": decode(char, data, offset, t) if kind != "padding" else None,
            "bytes": data[offset:offset + size].hex(), **extra}


# ------------------------------------------------------------------------------------------------
# The VM's view


def packed_counts(frag: Fragment, t: Target, data: bytes) -> tuple[int, ...]:
    """The span counts the packer wrote, read back at its own count slots (each slot's place
    depends only on the counts before it)."""
    counts = [0] * len(frag.spans)
    for k in range(len(counts)):
        at = cconv.layout(frag, t, tuple(counts)).counts[k].offset
        c = decode("count", data, at, t)
        if c is None or not 0 <= c <= cconv.MAX_SPAN_COUNT:
            raise TraceLayoutError(f"{frag.text!r} on {t.name}: span {k} count at +{at} is {c}, "
                                   f"which the VM's packer cannot have written")
        counts[k] = c
    return tuple(counts)


def packed_fields(import_name: str, frag: Fragment, t: Target, data: bytes) -> dict:
    """The buffer as the VM packed it: {"fragment", "spans", "size" (the size rule's), "fields"
    sorted by offset (values, counts, padding), "omitted" (span elements not listed)}."""
    counts = packed_counts(frag, t, data)
    lay = cconv.layout(frag, t, counts)
    if lay.size != len(data):
        raise TraceLayoutError(f"{frag.text!r} on {t.name} spans {list(counts)}: the VM allocates "
                               f"{lay.size} B, the buffer has {len(data)} B")
    names = names_for(import_name, frag)
    vnames = value_names(names, frag, counts)
    fields: list[dict] = []
    omitted = 0
    for v, name in zip(lay.values, vnames):
        if v.element is not None and v.element >= MAX_ELEMENTS:
            omitted += 1
            continue
        fields.append(_field(name, _KIND[v.char], v.char, v.offset, v.size, data, t,
                             span=v.span, element=v.element))
    for c in lay.counts:
        fields.append(_field(names.spans[c.span][0], "count", "count", c.offset, c.size, data, t,
                             span=c.span))
    for g in lay.gaps:
        if g.offset < lay.size:
            fields.append(_field("padding", "padding", "", g.offset, min(g.size, lay.size - g.offset),
                                 data, t))
    fields.sort(key=lambda f: f["offset"])
    return {"fragment": frag.text, "spans": list(counts), "size": lay.size, "fields": fields,
            "omitted": omitted}


# ------------------------------------------------------------------------------------------------
# The shim's view


# A hand-written span walker reads each count before any bounds check (module.c's dispatch shims):
# a count outside the buffer is read from memory that is not the call's (the status says what then).
_OUTSIDE = "IREE reads memory that is not the call's"


def _span_walk(names: Names, frag: Fragment, t: Target, form: str, data: bytes) -> tuple[list, str | None, list]:
    """A hand-written span walker's reads (`cconv.span_reader` in `form`), with the counts it reads
    itself: (fields, failure, counts read)."""
    n = len(data)
    nspans = len(frag.spans)
    prefix = frag.fixed_prefix
    sizeof = layout_of(cconv.shim_struct(prefix), t).size if prefix else 0
    if n < sizeof:
        return [], f"{n} B buffer < sizeof fixed part {sizeof} B: {MISMATCH}", []
    read: list[int] = []
    failure = None
    passed = 0  # spans whose elements lie inside the buffer
    for k in range(nspans):
        rv = cconv.span_reader(frag, t, read + [0] * (nspans - k), form=form)
        at = rv.count_reads[k]
        c = decode("count", data, at, t)
        if c is None:
            failure = f"reads {names.spans[k][0]} at +{at}, past the {n} B buffer: {_OUTSIDE}"
            break
        read.append(c)
        last = k + 1 == nspans
        if not 0 <= c <= cconv.MAX_SPAN_COUNT:
            failure = (f"{names.spans[k][0]} read at +{at} is {c}: "
                       + (f"its elements cannot fit the {n} B buffer: {MISMATCH}" if last and c > 0 else
                          "a negative count: the shim's bounds check wraps and passes (see the status)"
                          if last else f"the next count lies outside the {n} B buffer: {_OUTSIDE}"))
            break
        rv = cconv.span_reader(frag, t, read + [0] * (nspans - k - 1), form=form)
        end = rv.count_reads[k + 1] if k + 1 < nspans else rv.end
        if end > n:
            failure = (f"{names.spans[k][0]} read at +{at} is {c}: its elements would end at +{end}, "
                       f"past the {n} B buffer: " + (MISMATCH if last else _OUTSIDE))
            break
        passed += 1
    counts = read + [0] * (nspans - len(read))
    if len(read) < nspans or not all(0 <= c <= cconv.MAX_SPAN_COUNT for c in read):
        counts = [c if 0 <= c <= cconv.MAX_SPAN_COUNT else 0 for c in counts]
    rv = cconv.span_reader(frag, t, counts, form=form)
    reads = iter(rv.reads)
    fields: list[dict] = []
    k = 0
    for pos, item in enumerate(frag.items):
        if isinstance(item, Value):
            at = next(reads)
            if k > passed:  # a value after a span the walk never got past
                continue
            fields.append(_field(names.values[pos], _KIND[item.char], item.char, at,
                                 cconv.vm_field(item.char, t)[0], data, t))
            continue
        count_name, array = names.spans[k]
        if k < len(read):
            fields.append(_field(count_name, "count", "count", rv.count_reads[k], 4, data, t, span=k))
        suffixes = _element_names(item)
        for e in range(counts[k]):
            for s, v in zip(suffixes, item.values):
                at = next(reads)
                if k < passed and e < MAX_ELEMENTS:
                    fields.append(_field(f"{array}[{e}]{s}", _KIND[v.char], v.char, at,
                                         cconv.vm_field(v.char, t)[0], data, t, span=k, element=e))
        k += 1
    return fields, failure, read


def shim_fields(import_name: str, frag: Fragment, t: Target, form: str, data: bytes) -> dict:
    """The buffer as the export's shim reads it: {"kind" (void, fixed, vla, spanwalker), "form",
    "struct", "fields" in read order, "failure" (the check that fails, None if it reads through)}.
    A fixed struct whose size check fails reads nothing; its fields are still listed where the
    struct has them (`"read": False`), which is why the sizes differ."""
    names = names_for(import_name, frag)
    out: dict = {"kind": "void", "form": form, "struct": names.struct, "fields": [], "failure": None}
    if not frag.items:
        return out
    n = len(data)
    if not frag.has_spans:
        view = cconv.shim_view(frag, t, ())
        assert view is not None  # fixed values: a struct
        out["kind"] = "fixed"
        out["fields"] = [_field(name, _KIND[v[0]], v[0], at, cconv.vm_field(v[0], t)[0], data, t)
                         for name, v, at in zip(value_names(names, frag, ()), _values(frag), view.reads)]
        if n != view.sizeof:
            out["failure"] = f"{n} B buffer != sizeof({view.struct.name}) {view.sizeof} B: {MISMATCH}"
            for f in out["fields"]:  # where the struct has them: why the sizes differ
                f["read"] = False
        return out
    if cconv.shim_struct(frag.text) is not None:  # one trailing span: the VLA struct
        out["kind"] = "vla"
        view0 = cconv.shim_view(frag, t, (0,))
        assert view0 is not None and view0.count_offset is not None and view0.element_size is not None
        if n < view0.sizeof:
            out["failure"] = f"{n} B buffer < sizeof({view0.struct.name}) {view0.sizeof} B: {MISMATCH}"
            return out
        c = decode("count", data, view0.count_offset, t)
        count_field = _field(names.spans[0][0], "count", "count", view0.count_offset, 4, data, t, span=0)
        expected = view0.sizeof + c * view0.element_size
        if not 0 <= c <= cconv.MAX_SPAN_COUNT or n != expected:
            out["fields"] = [count_field]
            out["failure"] = (f"{names.spans[0][0]} read at +{view0.count_offset} is {c}: {n} B buffer != "
                              f"sizeof {view0.sizeof} + {c} x {view0.element_size} B: {MISMATCH}")
            return out
        view = cconv.shim_view(frag, t, (c,))
        assert view is not None  # the VLA struct
        fields = []
        vnames = value_names(names, frag, (c,))
        for name, v, at in zip(vnames, _values(frag, (c,)), view.reads):
            if v[1] is not None and v[2] >= MAX_ELEMENTS:
                continue
            fields.append(_field(name, _KIND[v[0]], v[0], at, cconv.vm_field(v[0], t)[0], data, t,
                                 **({"span": 0, "element": v[2]} if v[1] is not None else {})))
        fixed = [f for f in fields if "span" not in f]
        out["fields"] = fixed + [count_field] + [f for f in fields if "span" in f]
        return out
    out["kind"] = "spanwalker"
    out["fields"], out["failure"], _ = _span_walk(names, frag, t, form, data)
    return out


def _values(frag: Fragment, counts: Sequence[int] = ()) -> list:
    """(char, span or None, element or None) of every value in packer order."""
    out: list = []
    k = 0
    for item in frag.items:
        if isinstance(item, Value):
            out.append((item.char, None, None))
            continue
        out += [(v.char, k, e) for e in range(counts[k]) for v in item.values]
        k += 1
    return out


def mark_disagreements(packed: dict, read: dict, size: int) -> int:
    """Annotate each field the shim reads with the packed fields its bytes belong to (`packed_as`:
    names, `padding`, `past the buffer`) and, where that is not exactly the field of its own name,
    `disagreement` (a sentence); return how many disagree."""
    slots = packed["fields"]
    wrong = 0
    for f in read["fields"]:
        lo, hi = f["offset"], f["offset"] + f["size"]
        over = [p for p in slots if p["offset"] < hi and lo < p["offset"] + p["size"]]
        names = [p["name"] for p in over]
        if hi > size:
            names.append("past the buffer")
        f["packed_as"] = names
        same = len(over) == 1 and hi <= size and over[0]["name"] == f["name"] and \
            over[0]["offset"] == lo and over[0]["size"] == f["size"]
        if same:
            f["disagreement"] = None
            continue
        wrong += 1
        what = ", ".join(f"{p['name']} (+{p['offset']}, {p['size']} B)" if p["kind"] != "padding"
                         else f"padding (+{p['offset']}, {p['size']} B)" for p in over)
        if hi > size:
            what = (what + ", and " if what else "") + f"bytes past the {size} B buffer"
        f["disagreement"] = (f"{f['name']} read at +{lo} ({f['size']} B) holds bytes the VM packed "
                             f"as {what}" if what else f"{f['name']} read at +{lo}: nothing packed there")
    read["disagreements"] = wrong
    return wrong


def result_fields(frag: Fragment, t: Target, data: bytes) -> dict:
    """A result buffer as the VM reads it back (the packer's slots), with the shim's results struct
    offsets (`written_at`) beside each value."""
    if not frag.items:
        return {"fragment": frag.text, "size": len(data), "fields": []}
    lay = cconv.layout(frag, t, ())
    view = cconv.shim_view(frag, t, ())
    assert view is not None  # results: fixed values, a struct
    fields = []
    for pos, (v, at) in enumerate(zip(lay.values, view.reads)):
        fields.append(_field(_generic_name(v.char, pos), _KIND[v.char], v.char, v.offset, v.size, data,
                             t, written_at=at))
    return {"fragment": frag.text, "size": len(data), "fields": fields}


__all__ = ["MISMATCH", "MAX_ELEMENTS", "Names", "TraceLayoutError", "names_for", "value_names",
           "decode", "packed_counts", "packed_fields", "shim_fields", "mark_disagreements",
           "result_fields"]
