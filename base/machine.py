"""The data model a runtime runs on, as one object: the struct factory of the VM and HAL models.

pyelftools builds every ELF struct from one factory per word size and endianness; here a `Machine`
is that factory for one `Target`. A `Heap` holds one, and everything built on the heap (refs,
allocators, VM buffers, shims, hal_inline, hal_loader, the interpreter) takes its sizes, offsets,
pointer width and codecs from it, laid out by the catalog for that target. Nothing in the runtime
reads the host's data model except through the host's own Machine.

Its words and layouts are `layouts.data_model.DataModel`'s; on top, each view of a catalog struct the
runtime reads (declared in layouts/ beside its struct) is a typed attribute built on first use, once
per data model: `heap.machine.vm_buffer.size`, `heap.machine.dispatch_state.block_size(...)`.
"""
from __future__ import annotations

from functools import cached_property

from ..abi import targets
from ..abi.errors import IreeAbiError
from ..abi.targets import Target
from ..layouts.base import AllocatorLayout
from ..layouts.buffer import VmBufferLayout
from ..layouts.data_model import DataModel
from ..layouts.executable_library import DispatchLayout
from ..layouts.hal_buffer import BufferViewLayout, HalBufferLayout
from ..layouts.hal_inline import StorageWrapperLayout
from ..layouts.ref import RefLayout
from ..layouts.vm_module import ModuleHeadLayout


class Machine(DataModel):
    """One data model's sizes, codecs and struct views for the runtime (see the module docstring)."""

    def __init__(self, target: Target) -> None:
        if target.endian != "little":  # every codec, and the heap's int32 view, is little-endian
            raise TargetError(f"target {target.name}: the runtime models little-endian data models only, "
                              f"not {target.endian}-endian")
        super().__init__(target)
        try:
            self.is_host = target is targets.host()
        except targets.HostError:
            self.is_host = False

    # Views of catalog structs, each built on first use (cached_property keeps it in the instance).
    @cached_property
    def ref(self) -> RefLayout:
        return RefLayout(self)

    @cached_property
    def allocator(self) -> AllocatorLayout:
        return AllocatorLayout(self)

    @cached_property
    def vm_buffer(self) -> VmBufferLayout:
        return VmBufferLayout(self, self.allocator)

    @cached_property
    def module_head(self) -> ModuleHeadLayout:
        return ModuleHeadLayout(self)

    @cached_property
    def hal_buffer(self) -> HalBufferLayout:
        return HalBufferLayout(self)

    @cached_property
    def hal_buffer_view(self) -> BufferViewLayout:
        return BufferViewLayout(self)

    @cached_property
    def dispatch_state(self) -> DispatchLayout:
        return DispatchLayout(self)

    @cached_property
    def hal_inline_wrapper(self) -> StorageWrapperLayout:
        return StorageWrapperLayout(self)

    def __repr__(self) -> str:
        return f"Machine({self.name}{', host' if self.is_host else ''})"


_MACHINES: dict[Target, Machine] = {}


class TargetError(IreeAbiError):
    """A target name that is empty or names no data model, or a data model the runtime cannot run."""


_HOST: list[Machine] = []  # the host's Machine, found once (targets.host() asks the platform)


def machine(target: "Machine | Target | str | None" = None) -> Machine:
    """The Machine of `target` (a name, a Target or a Machine); None is the host."""
    if isinstance(target, Machine):
        return target
    if target is None:
        if _HOST:
            return _HOST[0]
        t = targets.host()
    elif isinstance(target, str) and not target.strip():
        raise TargetError("target name is empty; valid: " + ", ".join(targets.names()))
    else:
        t = targets.get(target)
    m = _MACHINES.get(t)
    if m is None:
        m = _MACHINES[t] = Machine(t)
    if target is None:
        _HOST.append(m)
    return m


def host() -> Machine:
    """The Machine of the data model this Python runs on."""
    return machine(None)


__all__ = ["Machine", "TargetError", "host", "machine"]
