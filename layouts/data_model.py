"""One data model's words and catalog layouts: what every per-target view of a catalog struct is
computed from (`Machine`, the runtime's struct factory in base/machine.py, is one).

A view of a struct on a data model (`RefLayout`, `VmBufferLayout`, `DispatchLayout`, ...) sits in
layouts/ beside the struct it reads, takes a `DataModel`, and holds offsets and `struct.Struct`
codecs; the runtime builds each once per data model (base/machine.py) and reads it as
`heap.machine.<name>`.
"""
from __future__ import annotations

import struct
from typing import Any, Callable, Iterable, TypeVar

from ..abi.layout import Struct, StructLayout
from ..abi.targets import Target

V = TypeVar("V")


class DataModel:
    """The sizes and word codecs of one `Target`, and its catalog layouts (each laid out once)."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.name = target.name
        self.pointer_size = p = target.pointer_size
        # One unsigned pointer-sized word: how every pointer, size_t and iree_host_size_t is stored.
        self.word_code = "Q" if p == 8 else "I"
        self.word = struct.Struct("<" + self.word_code)
        self.word_mask = (1 << (8 * p)) - 1
        self.i32 = struct.Struct("<i")
        self.u32 = struct.Struct("<I")
        self.max_align = target.max_align  # iree_max_align_t
        # glibc's MALLOC_ALIGNMENT rule: 2 * sizeof(size_t), at least alignof(long double).
        self.malloc_alignment = max(2 * p, target.scalar("long double").align)
        self._layouts: dict[Struct, StructLayout] = {}
        self._ctypes: dict[Struct, type] = {}
        self._views: dict[Callable, object] = {}

    def layout(self, decl: Struct) -> StructLayout:
        """`decl` laid out for this data model."""
        lay = self._layouts.get(decl)
        if lay is None:
            lay = self._layouts[decl] = decl.layout(self.target)
        return lay

    def view(self, make: Callable[["DataModel"], V]) -> V:
        """The view `make(self)` of this data model, built on first use and kept (`make` is a view
        class: `RefLayout`, `DispatchLayout`, ...; a memo, the same object every time)."""
        try:
            return self._views[make]  # type: ignore[return-value]
        except KeyError:
            made = self._views[make] = make(self)
            return made

    def ctype(self, decl: Struct) -> Any:  # a ctypes Structure or Union class
        """The packed ctypes view of `decl` on this data model (checked against the layout by
        `abi.views`): pointers are plain unsigned words of the target's width."""
        ct = self._ctypes.get(decl)
        if ct is None:
            from ..abi import views  # start-up: ctypes and construct only for a runtime's views

            ct = self._ctypes[decl] = views.ctypes_class(decl, self.target)
        return ct

    def align_up(self, value: int, alignment: int) -> int:
        return -(-value // alignment) * alignment

    def field_struct(self, items: Iterable[tuple[int, str]], size: int | None = None) -> struct.Struct:
        """A little-endian `struct.Struct` over fields at the given byte offsets ((offset, code) pairs,
        in any order; code "W" is one pointer-sized word of this data model), the gaps as 'x' padding,
        padded to `size` if given: one unpack_from / pack_into for several fields of a struct laid
        out by the catalog. Offsets count from where it is applied, and a pack zeroes every gap byte
        (from offset 0): to write some fields only, give offsets relative to the first one and pack
        there."""
        fmt, at = "<", 0
        for offset, code in sorted(items):
            code = self.word_code if code == "W" else code
            if offset < at:
                raise ValueError(f"field at {offset} overlaps the previous one (ends at {at})")
            fmt += f"{offset - at}x{code}" if offset > at else code
            at = offset + struct.calcsize("<" + code)
        if size is not None:
            if size < at:
                raise ValueError(f"fields end at {at}, past the struct's {size} bytes")
            fmt += f"{size - at}x" if size > at else ""
        return struct.Struct(fmt)


__all__ = ["DataModel"]
