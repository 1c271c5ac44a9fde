"""Ref-counted HAL objects in tracked memory (hal.buffer, hal.buffer_view, hal.executable).

Each object is a heap block whose first word is its atomic ref count (counter tag 0, as every HAL
resource), registered under a ref type whose destroy callback runs the Python teardown exactly once.
What the VM ABI never reads (vtables, internal fields) stays on the Python side, keyed by address.
"""
from __future__ import annotations

from typing import Any, Callable, Generic, TypeVar

from ..vm import ref as _ref
from ..base.heap import Heap, HeapError
from ..vm.ref import Ref, TypeRegistry
from ..base.status import IreeFaultError, StatusCode, StatusError

P = TypeVar("P")

_MISSING: Any = object()
_object_retain = _ref.object_retain  # per retain / release: no module attribute lookups
_object_release = _ref.object_release
_HEADER = 16  # ref count word + padding; the HAL objects' other fields live in Python


class ResourceType(Generic[P]):
    """One HAL ref type: create objects, find their payload from a ref, destroy at zero."""

    def __init__(self, registry: TypeRegistry, name: str, destroy: Callable[[int, P], None]) -> None:
        self.heap: Heap = registry.heap
        self.name = name
        self._on_destroy = destroy
        self._objects: dict[int, P] = {}
        self._owned: set[int] = set()  # blocks create() allocated (adopted ones free themselves)
        self.ref_type = registry.define(name, self._destroy, offsetof_counter=0)
        self.type = self.ref_type.type

    def create(self, payload: P, *, size: int = _HEADER, tag: str = "") -> int:
        """A new object with ref count 1; its address."""
        ptr = self.heap.malloc(max(size, _HEADER), tag=tag or self.name)
        self._owned.add(ptr)
        return self.adopt(ptr, payload)

    def adopt(self, ptr: int, payload: P) -> int:
        """Make the block at `ptr` (allocated by the caller) an object with ref count 1; the destroy
        callback must free it."""
        self.heap.write_i32(ptr, 1)
        self._objects[ptr] = payload
        return ptr

    def payload(self, ptr: int) -> P:
        try:
            return self._objects[ptr]
        except KeyError:
            # iree_vm_ref_check / check_deref test the type word only: IREE goes on with the pointer.
            raise IreeFaultError(f"0x{ptr:x} is not a live {self.name}: IREE checks a {self.name} ref by its "
                                 "type word alone and uses the pointer; its own runtime faults (or reads "
                                 "freed memory) there") from None

    def deref(self, ref: Ref) -> tuple[int, P]:
        """(address, payload) of a ref of this type; INVALID_ARGUMENT as iree_vm_ref_check otherwise."""
        ptr, type_word = ref
        if type_word != self.type:
            _ref.check(ref, self.type)  # raises "ref is null" / "ref type mismatch"
        payload = self._objects.get(ptr, _MISSING)
        if payload is _MISSING:
            return ptr, self.payload(ptr)  # raises
        return ptr, payload

    def deref_ptr(self, ref: Ref) -> int:
        """`deref(ref)[0]`: the same checks, no tuple."""
        ptr, type_word = ref
        if type_word != self.type:
            _ref.check(ref, self.type)
        if ptr not in self._objects:
            self.payload(ptr)  # raises
        return ptr

    def retain(self, ptr: int) -> None:
        _object_retain(self.heap, ptr, self.type)

    def release(self, ptr: int) -> None:
        if ptr:
            _object_release(self.heap, ptr, self.type)

    def move_ref(self, ptr: int) -> Ref:
        return Ref(ptr, self.type)

    def retain_ref(self, ptr: int) -> Ref:
        _object_retain(self.heap, ptr, self.type)
        return Ref(ptr, self.type)

    def counter(self, ptr: int) -> int:
        return self.heap.read_i32(ptr)

    def live(self) -> list[int]:
        return list(self._objects)

    def _destroy(self, ptr: int) -> None:
        payload = self._objects.pop(ptr, _MISSING)
        if payload is _MISSING:  # a forged reference (a non-object under this type) reached zero
            raise HeapError(f"0x{ptr:x} is not a live {self.name}: a reference to it under that type "
                            f"reached zero", ptr)
        try:
            self._on_destroy(ptr, payload)
        finally:
            if ptr in self._owned:
                self._owned.discard(ptr)
                self.heap.free(ptr)

    def close(self) -> None:
        self.ref_type.close()
