"""The reference-counted head of iree_vm_module_t: {self, ref_count, destroy, ...}.

Module-storage VM buffers hold a `storage_module` pointer and retain/release that module
(iree_vm_module_retain / iree_vm_module_release in runtime/src/iree/vm/module.c); native modules are
such objects too. Only the head of the interface struct is modelled: the remaining members are
function pointers the VM model does not call.
"""
from __future__ import annotations

from typing import Callable

import struct

from ..base import callbacks
from ..base.heap import Heap, HeapError
from .ref import RefCountError
from ..layouts.vm_module import ModuleHeadLayout


_DESTROY_FN = callbacks.DESTROY_FN
_I32 = struct.Struct("<i")
_i32_unpack, _i32_pack = _I32.unpack_from, _I32.pack_into


def create(heap: Heap, destroy: Callable[[int], None], *, self_value: int = 0, name: str = "module") -> int:
    """A module head in tracked memory with ref_count 1 whose destroy calls `destroy(self)`.

    The head is freed after `destroy` returns (the destroy callback is then unregistered).
    """
    L = heap.machine.view(ModuleHeadLayout)
    address = heap.malloc(L.size, tag=f"iree_vm_module_t {name}")
    holder: list[int] = []

    def thunk(self: int | None) -> None:
        try:
            destroy(self or 0)
        finally:
            heap.functions.forget(holder[0])
            heap.free(address)

    fn = heap.functions.make(callbacks.DESTROY_FN, thunk, name=f"destroy module {name}")
    holder.append(fn)
    heap.write_word(address + L.self_off, self_value or address)
    heap.write_i32(address + L.count_off, 1)
    heap.write_word(address + L.destroy_off, fn)
    return address


def ref_count(heap: Heap, module: int) -> int:
    return heap.read_i32(module + heap.machine.view(ModuleHeadLayout).count_off)


def retain(heap: Heap, module: int) -> None:
    """iree_vm_module_retain (NULL: nothing)."""
    if module:
        heap.fetch_add_i32(module + heap.machine.view(ModuleHeadLayout).count_off, 1)


def release(heap: Heap, module: int) -> None:
    """iree_vm_module_release: at 1 -> 0, module->destroy(module->self) through C."""
    if not module:
        return
    L = heap.machine.view(ModuleHeadLayout)
    try:
        raw, off = heap.cell(module, L.used)  # one check for the fields below
    except HeapError:
        _release_fieldwise(heap, module)  # raises what the first bad field access raises
        return
    old = _i32_unpack(raw, off + L.count_off)[0]
    if old <= 0:
        raise RefCountError(f"release of module 0x{module:x} whose ref_count is {old}: over-release", module)
    if old != 1:
        _i32_pack(raw, off + L.count_off, old - 1)
        return
    fn = L.word.unpack_from(raw, off + L.destroy_off)[0]
    r = None
    if fn:
        r = heap.functions.find(fn)
        if r is None or r.prototype is not _DESTROY_FN:
            r = heap.functions.lookup(fn, _DESTROY_FN, f"destroy of module 0x{module:x}")  # raises
    self_value = L.word.unpack_from(raw, off + L.self_off)[0]
    _i32_pack(raw, off + L.count_off, 0)
    if r is not None:
        callbacks.call_registered(r, self_value or None)


def _release_fieldwise(heap: Heap, module: int) -> None:
    """`release` one field access at a time: for a head the single check refused, so the error is
    the one the first field that cannot be accessed raises."""
    L = heap.machine.view(ModuleHeadLayout)
    old = heap.read_i32(module + L.count_off)
    if old <= 0:
        raise RefCountError(f"release of module 0x{module:x} whose ref_count is {old}: over-release", module)
    fn = heap.read_word(module + L.destroy_off) if old == 1 else 0
    if fn:
        heap.functions.lookup(fn, callbacks.DESTROY_FN, f"destroy of module 0x{module:x}")
    self_value = heap.read_word(module + L.self_off)
    heap.write_i32(module + L.count_off, old - 1)
    if fn:
        heap.functions.call(fn, callbacks.DESTROY_FN, self_value or None,
                            what=f"destroy of module 0x{module:x}")
