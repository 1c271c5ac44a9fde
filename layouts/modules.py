"""Native module declarations: name, version and export table, one declaration for every use.

A `ModuleDescriptor` is what a compiled program's imports resolve against (runtime/src/iree/vm/
context.c): the dependency's minimum version, then each function by name with a byte-for-byte cconv
comparison. The same declaration runs the module when each export carries its implementation
(`ireeabi.vm.native_module.Export`: name, cconv, function): a `HalRuntime` or `Program` given it makes a
native module of it, with `state` (if any) making the per-instance state from the runtime's
`ireeabi.modules.hal.module_api.ModuleApi`. Exports that only name a cconv (`ModuleExport`, or a TOML/JSON
file, see `module_sources`) serve import checking alone.

An export name may be declared with several cconvs (overloads): IREE resolves an import against the
one export of that name, so `select` keeps, per name, the overload a program's imports ask for
(e.g. the `check` module's functions with and without the leading device argument).

The registry (`register`, `registered`) holds the modules `inspect --check-imports` knows without a
flag: hal_inline and hal_loader, and any registered by the process.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Protocol

from ..abi import cconv as _cconv
from ..abi.errors import IreeAbiError, UnknownNameError

from . import hal_inline, hal_loader
from .hal_inline import ModuleExport


class ExportDeclaration(Protocol):
    """What checking needs of an export: its name and calling convention."""

    @property
    def name(self) -> str: ...

    @property
    def cconv(self) -> str: ...


class ModuleDeclarationError(IreeAbiError):
    """A native module declaration that cannot be used (names the module and the offending part)."""


_UINT32 = (1 << 32) - 1


@dataclass(frozen=True)
class ModuleDescriptor:
    """A native module: name, version (uint32, as iree_vm_module_signature_t's), exports in any order
    (the module instance sorts them), and `state`, a factory of the per-instance state called with
    the runtime's ModuleApi (None: the implementations get the ModuleApi itself as `ctx.state`).
    `source` says where it was declared, for messages."""

    name: str
    version: int
    exports: tuple[Any, ...]
    state: Callable[[Any], Any] | None = None
    source: str = ""

    def __post_init__(self) -> None:
        where = f"native module {self.name!r}" + (f" ({self.source})" if self.source else "")
        if not isinstance(self.name, str) or not self.name or "." in self.name or "\0" in self.name:
            raise ModuleDeclarationError(f"{where}: a module name is a non-empty string without '.' "
                                         f"or NUL")
        if not isinstance(self.version, int) or isinstance(self.version, bool) \
                or not 0 <= self.version <= _UINT32:
            raise ModuleDeclarationError(f"{where}: version must be a uint32, got {self.version!r}")
        try:
            exports = tuple(self.exports)
        except TypeError:
            raise ModuleDeclarationError(f"{where}: exports must be a sequence, got "
                                         f"{self.exports!r}") from None
        seen: set[tuple[str, str]] = set()
        for e in exports:
            name, cc = getattr(e, "name", None), getattr(e, "cconv", None)
            if not isinstance(name, str) or not name or not isinstance(cc, str):
                raise ModuleDeclarationError(f"{where}: an export needs a name and a cconv string, "
                                             f"got {e!r}")
            try:
                _cconv.parse(cc)
            except _cconv.CconvError as err:
                raise ModuleDeclarationError(f"{where}: export {name!r} has a malformed cconv "
                                             f"{cc!r}: {err}") from None
            if (name, cc) in seen:
                raise ModuleDeclarationError(f"{where}: export {name!r} {cc} is declared twice")
            seen.add((name, cc))
        if self.state is not None and not callable(self.state):
            raise ModuleDeclarationError(f"{where}: state must be a factory (callable), got "
                                         f"{self.state!r}")
        object.__setattr__(self, "exports", exports)

    @property
    def runnable(self) -> bool:
        """Whether every export carries its implementation (a `function`)."""
        return all(callable(getattr(e, "function", None)) for e in self.exports)

    def export(self, name: str) -> Any | None:
        """The export named `name` (its first overload), or None."""
        for e in self.exports:
            if e.name == name:
                return e
        return None

    def select(self, imports: Mapping[str, "str | None"] = {}) -> "ModuleDescriptor":
        """One export per name: the overload whose cconv is the one `imports` (function name ->
        the import's cconv) asks for, else the first declared."""
        chosen: dict[str, Any] = {}
        for e in self.exports:
            if e.name not in chosen or (imports.get(e.name) == e.cconv
                                        and imports.get(e.name) != chosen[e.name].cconv):
                chosen[e.name] = e
        if len(chosen) == len(self.exports):
            return self
        return ModuleDescriptor(self.name, self.version, tuple(chosen.values()), self.state, self.source)


_REGISTRY: dict[str, ModuleDescriptor] = {}


def register(descriptor: ModuleDescriptor, *, replace: bool = False) -> None:
    """Make `descriptor` known to import checking (and, when runnable, to programs that import it)."""
    if not isinstance(descriptor, ModuleDescriptor):
        raise ModuleDeclarationError(f"register takes a ModuleDescriptor, got {descriptor!r}")
    if descriptor.name in _REGISTRY and not replace:
        raise IreeAbiError(f"a native module named {descriptor.name!r} is already registered")
    _REGISTRY[descriptor.name] = descriptor


def unregister(name: str) -> None:
    """Forget a registered module (UnknownNameError if there is none of that name)."""
    get(name)
    del _REGISTRY[name]


def get(name: str) -> ModuleDescriptor:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownNameError("native module", name, _REGISTRY) from None


def registered() -> list[ModuleDescriptor]:
    return list(_REGISTRY.values())


BUILTIN = (hal_inline.IREE_HAL_INLINE_MODULE_NAME, hal_loader.IREE_HAL_LOADER_MODULE_NAME)

register(ModuleDescriptor(hal_inline.IREE_HAL_INLINE_MODULE_NAME,
                          hal_inline.IREE_HAL_INLINE_MODULE_VERSION_LATEST, hal_inline.EXPORTS))
register(ModuleDescriptor(hal_loader.IREE_HAL_LOADER_MODULE_NAME,
                          hal_loader.IREE_HAL_LOADER_MODULE_VERSION_LATEST, hal_loader.EXPORTS))

__all__ = ["ModuleDescriptor", "ModuleExport", "ExportDeclaration", "ModuleDeclarationError", "BUILTIN",
           "register", "unregister", "get", "registered"]
