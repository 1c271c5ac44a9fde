"""The storage of a bytecode module's state: its primitive globals (`global_bytes_capacity` zeroed
bytes, `rwdata`) and its ref globals (`global_ref_count` slots), as
iree_vm_bytecode_module_alloc_state allocates them (runtime/src/iree/vm/bytecode/module.c).

Both counts come from the module file, unchecked against anything: IREE callocs them, so a module
declaring 2**29 ref slots loads and runs, its untouched memory never paged in. Here too the cost is
what the program touches, not what the file declares: large byte globals are an anonymous mapping
(the kernel's zero pages until written), and the ref slots are a table of the slots that hold a
ref (a list of 2**29 Nones was 4 GB, and releasing it at close a walk over every slot).
"""
from __future__ import annotations

import mmap
from typing import Any, Iterator

__all__ = ["GlobalRefs", "global_bytes", "global_refs", "held_refs"]

_MAPPED_FROM = 1 << 20  # smaller byte globals are a plain bytearray
_SPARSE_FROM = 1 << 16  # fewer ref slots are a plain list (the ops index it directly)


def global_bytes(capacity: int) -> "bytearray | mmap.mmap":
    """`capacity` zeroed bytes for the primitive globals (a negative capacity is none): sliced and
    slice-assigned like a bytearray, paged in only where written."""
    if capacity < _MAPPED_FROM:
        return bytearray(max(capacity, 0))
    return mmap.mmap(-1, capacity)


def global_refs(count: int) -> "list | GlobalRefs":
    """`count` empty ref slots (a negative count is none)."""
    return [None] * max(count, 0) if count < _SPARSE_FROM else GlobalRefs(count)


def held_refs(slots: "list | GlobalRefs") -> list[tuple[int, Any]]:
    """(slot, ref) of every slot of `global_refs`'s table that holds a ref, in slot order."""
    if isinstance(slots, GlobalRefs):
        return list(slots.held())
    return [(i, v) for i, v in enumerate(slots) if v is not None]


class GlobalRefs:
    """`count` ref slots, each None until a ref is stored: indexed like a list of that length,
    holding only the slots that have a ref."""

    __slots__ = ("_count", "_held")

    def __init__(self, count: int) -> None:
        self._count = max(count, 0)
        self._held: dict[int, Any] = {}

    def __len__(self) -> int:
        return self._count

    def _check(self, index: int) -> int:
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(f"global ref slot {index} of {self._count}")
        return index

    def __getitem__(self, index: int) -> Any:
        return self._held.get(self._check(index))

    def __setitem__(self, index: int, value: Any) -> None:
        index = self._check(index)
        if value is None:
            self._held.pop(index, None)
        else:
            self._held[index] = value

    def held(self) -> Iterator[tuple[int, Any]]:
        """(slot, ref) of every slot holding a ref, in slot order (a copy: slots may be cleared
        while iterating)."""
        return iter(sorted(self._held.items()))
