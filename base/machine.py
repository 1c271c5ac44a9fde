"""The data model a runtime runs on, as one object: the struct factory of everything on its heap.

pyelftools builds every ELF struct from one factory per word size and endianness; here a `Machine`
is that factory for one `Target`. A `Heap` holds one, and everything built on the heap (refs,
allocators, VM buffers, shims, the HAL's objects and modules, the interpreter) takes its sizes,
offsets, pointer width and codecs from it, laid out by the catalog for that target. Nothing in the
runtime reads the host's data model except through the host's own Machine.

Its words, layouts and struct views are `layouts.data_model.DataModel`'s: each view of a catalog
struct (declared in layouts/ beside its struct) is built on first use, once per data model, by
whoever reads it: `heap.machine.view(VmBufferLayout).size`,
`heap.machine.view(DispatchLayout).block_size(...)`. The Machine knows none of them: a struct of the
VM or of the HAL gets its view without a change here.
"""
from __future__ import annotations

from ..abi import targets
from ..abi.errors import IreeAbiError
from ..abi.targets import Target
from ..layouts.data_model import DataModel


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
