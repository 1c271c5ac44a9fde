"""Byte codecs for one cconv instance: a precompiled `struct.Struct` for hot paths, construct for
inspection and fixtures. Both are generated from a `FragmentLayout`, so they cannot disagree with it.

Values are flat, in packer order: i32/i64 as ints, f32/f64 as floats, a ref as a (ptr, type) pair of
ints (the two words of iree_vm_ref_t). Span counts are not values: they come from the layout.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Sequence

import construct as cs

from .cconv import FragmentLayout
from .errors import IreeAbiError

_FMT = {"i32": "i", "i64": "q", "f32": "f", "f64": "d"}


class CodecError(IreeAbiError):
    """Values that do not fit the layout, or a buffer too short for it."""


@dataclass(frozen=True, eq=False)
class Codec:
    layout: FragmentLayout
    struct: struct.Struct  # every value and count; padding as 'x' (zero on pack)
    count_positions: tuple[int, ...]  # where in the struct's item tuple each span count sits
    value_positions: tuple[int, ...]  # item index of each value (refs take two items)
    n_items: int

    @property
    def size(self) -> int:
        return self.layout.size

    def pack(self, values: Sequence[Any]) -> bytes:
        """The bytes the VM's packer produces, zero-padded to the allocated size."""
        buf = bytearray(self.layout.size)
        self.pack_into(buf, 0, values)
        return bytes(buf)

    def pack_into(self, buf: Any, offset: int, values: Sequence[Any]) -> None:
        items = self._items(values)
        try:
            self.struct.pack_into(buf, offset, *items)
        except struct.error as e:
            raise CodecError(f"{self.layout.cconv!r} on {self.layout.target.name}: {e}") from None

    def unpack(self, buf: Any, offset: int = 0) -> list[Any]:
        """Values back out of packed bytes (refs as (ptr, type) tuples)."""
        if len(buf) - offset < self.struct.size:
            raise CodecError(f"{self.layout.cconv!r} on {self.layout.target.name}: need "
                             f"{self.struct.size} B, got {len(buf) - offset}")
        items = self.struct.unpack_from(buf, offset)
        out: list[Any] = []
        for v, pos in zip(self.layout.values, self.value_positions):
            out.append((items[pos], items[pos + 1]) if v.kind == "ref" else items[pos])
        return out

    def counts(self, buf: Any, offset: int = 0) -> list[int]:
        items = self.struct.unpack_from(buf, offset)
        return [items[p] for p in self.count_positions]

    def _items(self, values: Sequence[Any]) -> list[Any]:
        lay = self.layout
        if len(values) != len(lay.values):
            raise CodecError(f"{lay.cconv!r} on {lay.target.name}: {len(lay.values)} values expected, "
                             f"got {len(values)}")
        items: list[Any] = [0] * self.n_items
        for v, pos, x in zip(lay.values, self.value_positions, values):
            if v.kind == "ref":
                try:
                    ptr, typ = x
                except (TypeError, ValueError):
                    raise CodecError(f"value {v.char!r} at offset {v.offset} needs a (ptr, type) pair, "
                                     f"got {x!r}") from None
                items[pos], items[pos + 1] = ptr, typ
            else:
                items[pos] = x
        for c, pos in zip(lay.counts, self.count_positions):
            items[pos] = c.count
        return items


@lru_cache(maxsize=4096)
def codec(lay: FragmentLayout) -> Codec:
    """The `struct` codec of an instance (compiled once per fragment, target and span counts)."""
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
            fmt.append(_FMT[slot.kind])
            value_pos[i] = item
            item += 1
        pos = offset + slot.size
    if lay.size > pos:
        fmt.append(f"{lay.size - pos}x")
    return Codec(lay, struct.Struct("".join(fmt)), tuple(count_pos), tuple(value_pos), item)


@lru_cache(maxsize=1024)
def construct_of(lay: FragmentLayout) -> cs.Construct:
    """A construct Struct of the instance: named fields (`v<N>_<kind>`, `count<K>`) and explicit
    Padding for every gap, for inspection and fixtures."""
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
