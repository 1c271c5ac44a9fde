"""Byte codecs for one cconv instance: a precompiled `struct.Struct` for hot paths, construct for
inspection and fixtures. Both are generated from a `FragmentLayout`, so they cannot disagree with it.

Values are flat, in packer order: i32/i64 as ints, f32/f64 as floats, a ref as a (ptr, type) pair of
ints (the two words of iree_vm_ref_t). Span counts are not values: they come from the layout. With
`float_bits`, f32/f64 travel as their bit patterns (signed int32/int64), as VM registers hold them, so
no NaN payload is changed on the way (a float32 signalling NaN does not survive a trip through a
Python float).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, Sequence

from . import FragmentLayout
from ..errors import IreeAbiError
from ..generated import define

if TYPE_CHECKING:
    import construct as cs

_FMT = {"i32": "i", "i64": "q", "f32": "f", "f64": "d"}
_BITS_FMT = {"i32": "i", "i64": "q", "f32": "i", "f64": "q"}


class CodecError(IreeAbiError):
    """Values that do not fit the layout, or a buffer too short for it."""


@dataclass(frozen=True, eq=False)
class Codec:
    """The `struct` codec of one instance. `pack_into(buf, offset, values)` and `unpack(buf, offset=0)`
    are generated straight-line functions: the values unpacked into locals, refs split into their two
    words, span counts as constants, one `Struct.pack_into` / `unpack_from` call, as a hand-written
    codec would be."""

    layout: FragmentLayout
    struct: struct.Struct  # every value and count; padding as 'x' (zero on pack)
    count_positions: tuple[int, ...]  # where in the struct's item tuple each span count sits
    value_positions: tuple[int, ...]  # item index of each value (refs take two items)
    n_items: int
    pack_into: Callable[[Any, int, Sequence[Any]], None] = field(repr=False)
    unpack: Callable[..., list] = field(repr=False)

    @property
    def size(self) -> int:
        return self.layout.size

    def pack(self, values: Sequence[Any]) -> bytes:
        """The bytes the VM's packer produces, zero-padded to the allocated size."""
        buf = bytearray(self.layout.size)
        self.pack_into(buf, 0, values)
        return bytes(buf)

    def counts(self, buf: Any, offset: int = 0) -> list[int]:
        items = self.struct.unpack_from(buf, offset)
        return [items[p] for p in self.count_positions]


def _fail(lay: FragmentLayout, exc: Exception, values: Any) -> CodecError:
    where = f"{lay.cconv!r} on {lay.target.name}"
    n = len(values) if hasattr(values, "__len__") else None
    if n is not None and n != len(lay.values):
        return CodecError(f"{where}: {len(lay.values)} values expected, got {n}")
    return CodecError(f"{where}: {exc}")


def _generate(lay: FragmentLayout, st: struct.Struct, value_pos: Sequence[int], count_pos: Sequence[int],
              n_items: int) -> tuple[Callable, Callable]:
    item_expr = ["0"] * n_items
    out_expr: list[str] = []
    for i, (v, pos) in enumerate(zip(lay.values, value_pos)):
        if v.kind == "ref":
            item_expr[pos], item_expr[pos + 1] = f"v{i}[0]", f"v{i}[1]"
            out_expr.append(f"(t[{pos}], t[{pos + 1}])")
        else:
            item_expr[pos] = f"v{i}"
            out_expr.append(f"t[{pos}]")
    for c, pos in zip(lay.counts, count_pos):
        item_expr[pos] = str(c.count)
    names = [f"v{i}" for i in range(len(lay.values))]
    target = (", ".join(names) + ("," if len(names) == 1 else "")) if names else "()"
    src = (
        "def pack_into(buf, offset, values):\n"
        "    try:\n"
        f"        {target} = values\n"
        f"        _pack_into(buf, offset, {', '.join(item_expr)})\n"
        "    except (ValueError, TypeError, IndexError, _error) as e:\n"
        "        raise _fail(_lay, e, values) from None\n"
        "def unpack(buf, offset=0):\n"
        "    try:\n"
        "        t = _unpack_from(buf, offset)\n"
        "    except _error as e:\n"
        "        raise _fail(_lay, e, None) from None\n"
        f"    return [{', '.join(out_expr)}]\n"
    )
    ns: dict[str, Any] = {"_pack_into": st.pack_into, "_unpack_from": st.unpack_from, "_error": struct.error,
                          "_fail": _fail, "_lay": lay}
    pack_into = define(src, "codec", f"{lay.cconv!r} {lay.target.name} {list(lay.spans)}", ns, "pack_into")
    return pack_into, ns["unpack"]


@lru_cache(maxsize=4096)
def codec(lay: FragmentLayout, float_bits: bool = False) -> Codec:
    """The `struct` codec of an instance (compiled once per fragment, target and span counts);
    `float_bits`: floats as their bit patterns (see the module docstring)."""
    formats = _BITS_FMT if float_bits else _FMT
    word = "Q" if lay.target.pointer_size == 8 else "I"
    slots = sorted([(v.offset, "v", i, v) for i, v in enumerate(lay.values)]
                   + [(c.offset, "c", i, c) for i, c in enumerate(lay.counts)], key=lambda s: s[0])
    fmt = ["<"]
    pos = 0
    item = 0
    value_pos = [0] * len(lay.values)
    count_pos = [0] * len(lay.counts)
    for offset, what, i, slot in slots:
        if offset > pos:
            fmt.append(f"{offset - pos}x")
        if what == "c":
            fmt.append("i")
            count_pos[i] = item
            item += 1
        elif slot.kind == "ref":
            fmt.append(word * 2)
            value_pos[i] = item
            item += 2
        else:
            fmt.append(formats[slot.kind])
            value_pos[i] = item
            item += 1
        pos = offset + slot.size
    if lay.size > pos:
        fmt.append(f"{lay.size - pos}x")
    st = struct.Struct("".join(fmt))
    pack_into, unpack = _generate(lay, st, value_pos, count_pos, item)
    return Codec(lay, st, tuple(count_pos), tuple(value_pos), item, pack_into, unpack)


@lru_cache(maxsize=1024)
def construct_of(lay: FragmentLayout) -> cs.Construct:
    """A construct Struct of the instance: named fields (`v<N>_<kind>`, `count<K>`) and explicit
    Padding for every gap, for inspection and fixtures."""
    import construct as cs  # start-up: the hot-path codecs above need only `struct`

    word = cs.Int64ul if lay.target.pointer_size == 8 else cs.Int32ul
    scalar = {"i32": cs.Int32sl, "i64": cs.Int64sl, "f32": cs.Float32l, "f64": cs.Float64l}
    slots = sorted([(v.offset, v.size, f"v{i}_{v.kind}", v.kind) for i, v in enumerate(lay.values)]
                   + [(c.offset, c.size, f"count{c.span}", "count") for c in lay.counts])
    parts: list[cs.Construct] = []
    pos = 0
    for offset, size, name, kind in slots:
        if offset > pos:
            parts.append(cs.Padding(offset - pos))
        if kind == "ref":
            parts.append(name / cs.Struct("ptr" / word, "type" / word))
        elif kind == "count":
            parts.append(name / cs.Int32sl)
        else:
            parts.append(name / scalar[kind])
        pos = offset + size
    if lay.size > pos:
        parts.append(cs.Padding(lay.size - pos))
    return cs.Struct(*parts)
