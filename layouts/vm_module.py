"""runtime/src/iree/vm/module.h: iree_vm_module_t, the interface every VM module implements.

A module is a ref-counted object: module-storage VM buffers retain and release their module through
the `ref_count` and `destroy` members at its head. The other members are the interface's function
pointers, in header order (iree_vm_module_t is marked IREE_API_UNSTABLE: only the head is ABI that
ireeabi relies on, the rest is declared so that sizeof is real).
"""
from __future__ import annotations

from ..abi.layout import Field, FunctionPointer, Pointer, Scalar, Struct
from .data_model import DataModel

_FNS = ["name", "signature", "enumerate_dependencies", "get_module_attr", "lookup_function", "get_function",
        "get_function_attr", "resolve_source_location", "alloc_state", "free_state", "fork_state",
        "resolve_import", "notify", "begin_call", "resume_call"]

iree_vm_module_t = Struct("iree_vm_module_t", [
    Field("self", Pointer("void"), doc="passed to every interface function"),
    Field("ref_count", Scalar("int32_t", "iree_atomic_ref_count_t")),
    Field("destroy", FunctionPointer("void", "void* self"), doc="called when ref_count reaches 0"),
    *(Field(n, FunctionPointer("iree_status_t", "void* self, ...")) for n in _FNS),
])

STRUCTS = [iree_vm_module_t]


class ModuleHeadLayout:
    """The head of iree_vm_module_t on one data model."""

    def __init__(self, m: DataModel) -> None:
        head = m.layout(iree_vm_module_t)
        self.size = head.size
        self.self_off = head.field("self").offset
        self.count_off = head.field("ref_count").offset
        self.destroy_off = head.field("destroy").offset
        p = m.pointer_size
        self.used = max(self.self_off + p, self.count_off + 4, self.destroy_off + p)  # what release reads
        self.word = m.word
