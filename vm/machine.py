"""The data model a runtime runs on, as one object: the struct factory of the VM and HAL models.

pyelftools builds every ELF struct from one factory per word size and endianness; here a `Machine`
is that factory for one `Target`. A `Heap` holds one, and everything built on the heap (refs,
allocators, VM buffers, shims, hal_inline, hal_loader, the interpreter) takes its sizes, offsets,
pointer width and codecs from it, laid out by the catalog for that target. Nothing in the runtime
reads the host's data model except through the host's own Machine.

Domain modules declare what they derive from a data model next to the code that uses it:

    @derived("vm_buffer")
    class _BufferLayout:
        def __init__(self, m: Machine) -> None:
            lay = m.layout(iree_vm_buffer_t)
            self.size = lay.size

and read it as `heap.machine.vm_buffer`: built on first use, once per data model.
"""
from __future__ import annotations

import struct
from typing import Any, Callable, TypeVar

from ..abi import targets, views
from ..abi.errors import IreeAbiError
from ..abi.layout import Struct, StructLayout
from ..abi.targets import Target

T = TypeVar("T")

_FACTORIES: dict[str, Callable[["Machine"], Any]] = {}


def derived(name: str) -> Callable[[T], T]:
    """Register a factory (usually a class taking the Machine) of what a domain module derives from
    a data model; `machine.<name>` builds it on first use and keeps it."""
    def register(factory: T) -> T:
        known = _FACTORIES.get(name)
        if known is not None and getattr(known, "__qualname__", None) != getattr(factory, "__qualname__", None):
            raise IreeAbiError(f"machine attribute {name!r} is already derived by {known!r}")
        _FACTORIES[name] = factory  # type: ignore[assignment]
        return factory
    return register


class Machine:
    """One data model's sizes and codecs for the runtime (see the module docstring)."""

    def __init__(self, target: Target) -> None:
        if target.endian != "little":  # every codec below, and the heap's int32 view, is little-endian
            raise TargetError(f"target {target.name}: the runtime models little-endian data models only, "
                              f"not {target.endian}-endian")
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
        try:
            self.is_host = target is targets.host()
        except targets.HostError:
            self.is_host = False
        self._layouts: dict[Struct, StructLayout] = {}
        self._ctypes: dict[Struct, type] = {}

    def layout(self, decl: Struct) -> StructLayout:
        """`decl` laid out for this data model."""
        lay = self._layouts.get(decl)
        if lay is None:
            lay = self._layouts[decl] = decl.layout(self.target)
        return lay

    def ctype(self, decl: Struct) -> type:
        """The packed ctypes view of `decl` on this data model (checked against the layout by
        `abi.views`): pointers are plain unsigned words of the target's width."""
        ct = self._ctypes.get(decl)
        if ct is None:
            ct = self._ctypes[decl] = views.ctypes_class(decl, self.target)
        return ct

    def align_up(self, value: int, alignment: int) -> int:
        return -(-value // alignment) * alignment

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes not built yet: a derived bundle, made once and kept.
        factory = _FACTORIES.get(name)
        if factory is None:
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")
        value = factory(self)
        setattr(self, name, value)
        return value

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


__all__ = ["Machine", "TargetError", "derived", "host", "machine"]
