"""vm.list: a Python object holding values (as raw bits with their value type) or refs.

The element type is the name list.alloc's type operand gives (list.c's storage modes): a value type
(`i32`...: values), `!vm.opaque` - what `?` / `!vm.ref<?>` encode to - (variants: values or refs of
any type, each slot typed by what was stored), any other ref type (refs of that type).

In a counted backend a list is a ref value too: `refs` counts the references held to it (ref
registers, globals, other lists), and when the last goes its ref items are released
(`BufferFactory.release` calls `VmList.drop_items`).
"""
from __future__ import annotations

from typing import Any, Callable

from .ops import f32_bits, f64_bits, from_f32_bits, from_f64_bits

# Value types of list elements and their byte widths (vm/list.c stores them packed).
VALUE_TYPES = {"i8": 1, "i16": 2, "i32": 4, "i64": 8, "f32": 4, "f64": 8}
VARIANT_TYPES = frozenset({"!vm.opaque", "?"})  # element types of variant lists


class VmList:
    """vm.list; `element_type` is the name inside `!vm.list<...>` (`i32`, `!vm.buffer`, `?`)."""

    __slots__ = ("element_type", "items", "capacity", "refs", "holds_values", "is_variant",
                 "element_size", "zero")

    def __init__(self, element_type: str, capacity: int = 0) -> None:
        self.element_type = element_type
        self.items: list = []  # values: (value type, raw int bits); refs: objects (None = null)
        self.capacity = capacity
        self.refs = 1  # references held (counted backends only)
        self.holds_values = element_type in VALUE_TYPES
        self.is_variant = element_type in VARIANT_TYPES
        # IREE's bytes per value element (0 for ref and variant slots, whose size is the data
        # model's), and what a new slot holds (zeroed storage: 0 or an empty slot)
        self.element_size = VALUE_TYPES[element_type] if self.holds_values else 0
        self.zero = (element_type, 0) if self.holds_values else None

    def drop_items(self, release: Callable[[Any], None]) -> None:
        """Empty the list, releasing every ref item (the list's destroy)."""
        items, self.items = self.items, []
        for item in items:
            if item is not None and type(item) is not tuple:
                release(item)

    def __len__(self) -> int:
        return len(self.items)

    def __repr__(self) -> str:
        return f"VmList<{self.element_type}>({len(self.items)} items)"


def convert_list_value(src_type: str, bits: int, dst_type: str) -> int:
    """iree_vm_list_convert_value_type on raw bits: integer widths convert as C casts, f32<->f64
    convert, every other pair yields zero bits."""
    if src_type == dst_type:
        return bits
    widths = {"i8": 8, "i16": 16, "i32": 32, "i64": 64}
    if src_type in widths and dst_type in widths:
        w = widths[src_type]
        value = bits & ((1 << w) - 1)
        if value >> (w - 1):
            value -= 1 << w
        return value & ((1 << widths[dst_type]) - 1)
    if src_type == "f32" and dst_type == "f64":
        return f64_bits(from_f32_bits(bits))
    if src_type == "f64" and dst_type == "f32":
        return f32_bits(from_f64_bits(bits))
    return 0


__all__ = ["VmList", "VALUE_TYPES", "VARIANT_TYPES", "convert_list_value"]
