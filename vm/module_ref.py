"""The reference-counted head of iree_vm_module_t: {self, ref_count, destroy, ...}.

Module-storage VM buffers hold a `storage_module` pointer and retain/release that module
(iree_vm_module_retain / iree_vm_module_release in runtime/src/iree/vm/module.c); native modules are
such objects too. Only the head of the interface struct is modelled: the remaining members are
function pointers the VM model does not call.
"""
from __future__ import annotations

from typing import Callable

from ..layouts.vm_module import iree_vm_module_t
from . import callbacks, host
from .heap import Heap, HeapError
from .ref import RefCountError

_HEAD = host.layout(iree_vm_module_t)
HEAD_SIZE = _HEAD.size
_SELF_OFF = _HEAD.field("self").offset
_COUNT_OFF = _HEAD.field("ref_count").offset
_DESTROY_OFF = _HEAD.field("destroy").offset
_P = host.POINTER_SIZE
_USED = max(_SELF_OFF + _P, _COUNT_OFF + 4, _DESTROY_OFF + _P)  # the head's bytes release reads
_DESTROY_FN = callbacks.DESTROY_FN
_i32_unpack, _i32_pack = host.I32.unpack_from, host.I32.pack_into
_word_unpack = host.WORD.unpack_from


def create(heap: Heap, destroy: Callable[[int], None], *, self_value: int = 0, name: str = "module") -> int:
    """A module head in tracked memory with ref_count 1 whose destroy calls `destroy(self)`.

    The head is freed after `destroy` returns (the destroy callback is then unregistered).
    """
    address = heap.malloc(HEAD_SIZE, tag=f"iree_vm_module_t {name}")
    holder: list[int] = []

    def thunk(self: int | None) -> None:
        try:
            destroy(self or 0)
        finally:
            callbacks.forget(holder[0])
            heap.free(address)

    fn = callbacks.make(callbacks.DESTROY_FN, thunk, name=f"destroy module {name}")
    holder.append(fn)
    heap.write_word(address + _SELF_OFF, self_value or address)
    heap.write_i32(address + _COUNT_OFF, 1)
    heap.write_word(address + _DESTROY_OFF, fn)
    return address


def ref_count(heap: Heap, module: int) -> int:
    return heap.read_i32(module + _COUNT_OFF)


def retain(heap: Heap, module: int) -> None:
    """iree_vm_module_retain (NULL: nothing)."""
    if module:
        heap.fetch_add_i32(module + _COUNT_OFF, 1)


def release(heap: Heap, module: int) -> None:
    """iree_vm_module_release: at 1 -> 0, module->destroy(module->self) through C."""
    if not module:
        return
    try:
        raw, off = heap.cell(module, _USED)  # one check for the fields below
    except HeapError:
        _release_fieldwise(heap, module)  # raises what the first bad field access raises
        return
    old = _i32_unpack(raw, off + _COUNT_OFF)[0]
    if old <= 0:
        raise RefCountError(f"release of module 0x{module:x} whose ref_count is {old}: over-release", module)
    if old != 1:
        _i32_pack(raw, off + _COUNT_OFF, old - 1)
        return
    fn = _word_unpack(raw, off + _DESTROY_OFF)[0]
    r = None
    if fn:
        r = callbacks.find(fn)
        if r is None or r.prototype is not _DESTROY_FN:
            r = callbacks.lookup(fn, _DESTROY_FN, f"destroy of module 0x{module:x}")  # raises
    self_value = _word_unpack(raw, off + _SELF_OFF)[0]
    _i32_pack(raw, off + _COUNT_OFF, 0)
    if r is not None:
        callbacks.call_registered(r, self_value or None)


def _release_fieldwise(heap: Heap, module: int) -> None:
    """`release` one field access at a time: for a head the single check refused, so the error is
    the one the first field that cannot be accessed raises."""
    old = heap.read_i32(module + _COUNT_OFF)
    if old <= 0:
        raise RefCountError(f"release of module 0x{module:x} whose ref_count is {old}: over-release", module)
    fn = heap.read_word(module + _DESTROY_OFF) if old == 1 else 0
    if fn:
        callbacks.lookup(fn, callbacks.DESTROY_FN, f"destroy of module 0x{module:x}")
    self_value = heap.read_word(module + _SELF_OFF)
    heap.write_i32(module + _COUNT_OFF, old - 1)
    if fn:
        callbacks.call(fn, callbacks.DESTROY_FN, self_value or None, what=f"destroy of module 0x{module:x}")
