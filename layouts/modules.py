"""Descriptors of the native modules ireeabi emulates: name, version and export table.

These are what a compiled program's imports resolve against (runtime/src/iree/vm/context.c): the
dependency's minimum version, then each function by name with a byte-for-byte cconv comparison.
Other native modules can be added with `register`.
"""
from __future__ import annotations

from dataclasses import dataclass

from ireeabi.abi.errors import IreeAbiError, UnknownNameError

from . import hal_inline, hal_loader
from .hal_inline import ModuleExport


@dataclass(frozen=True)
class ModuleDescriptor:
    name: str
    version: int
    exports: tuple[ModuleExport, ...]

    def export(self, name: str) -> ModuleExport | None:
        for e in self.exports:
            if e.name == name:
                return e
        return None


_REGISTRY: dict[str, ModuleDescriptor] = {}


def register(descriptor: ModuleDescriptor, *, replace: bool = False) -> None:
    if descriptor.name in _REGISTRY and not replace:
        raise IreeAbiError(f"a native module named {descriptor.name!r} is already registered")
    _REGISTRY[descriptor.name] = descriptor


def get(name: str) -> ModuleDescriptor:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownNameError("native module", name, _REGISTRY) from None


def registered() -> list[ModuleDescriptor]:
    return list(_REGISTRY.values())


register(ModuleDescriptor(hal_inline.IREE_HAL_INLINE_MODULE_NAME,
                          hal_inline.IREE_HAL_INLINE_MODULE_VERSION_LATEST, hal_inline.EXPORTS))
register(ModuleDescriptor(hal_loader.IREE_HAL_LOADER_MODULE_NAME,
                          hal_loader.IREE_HAL_LOADER_MODULE_VERSION_LATEST, hal_loader.EXPORTS))
