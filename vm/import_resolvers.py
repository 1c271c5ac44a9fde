"""Import resolvers: what serves the functions a module imports (ireeabi's own: IREE's context
resolves an import against the modules registered with it; a resolver stands for those modules).

`ImportResolver.call(full_name, cconv, args) -> results` gets the arguments flattened in cconv
order, each span (`C...D`) as a list of per-element tuples (segment sizes of variadic calls give the
element counts), and returns the results flattened the same way. Ref arguments are borrowed (the
caller keeps its references for the duration of the call); ref results are owned by the caller.

- `FunctionImports`: Python callables;
- `ContextImports`: the exports of other Contexts;
- `NativeImports`: ireeabi.vm `NativeModule`s (e.g. a HalRuntime's hal_inline / hal_loader), called
  through `NativeModule.call_ordinal`: arguments packed into a buffer on the heap's scratch stack as
  the bytecode VM packs them (refs retained into it), the export's shim, the arguments released, the
  results moved out. A yieldable call (`call(..., yieldable=True)`) may yield (StatusError
  DEFERRED); `resume` then continues it, as the VM's vm.call.yieldable does.
"""
from __future__ import annotations

import abc
from typing import Any, Callable, Mapping, Protocol, Sequence

from .native_module import NativeModule
from .ref import NULL_REF, TYPE_NULL, Ref
from ..base.status import StatusError
from .errors import ImportResolutionError


class ModuleContext(Protocol):
    """What ContextImports uses of another context (vm/context.py's `Context`): its module's name,
    version and exports, and its calls."""

    module: Any

    def invoke(self, function_name: str, *args: Any) -> list: ...


class ImportResolver(abc.ABC):
    """Native (or other) modules the bytecode imports from."""

    @abc.abstractmethod
    def call(self, full_name: str, cconv: str, args: list) -> list:
        """Call `full_name` (`module.function`) with `args` flattened per `cconv`'s arguments (spans
        as lists of per-element tuples); return its results flattened per the cconv's results."""

    def resolves(self, full_name: str, cconv: str | None) -> bool:
        """Whether `call` can serve this import (checked when a Context is created)."""
        return True


class FunctionImports(ImportResolver):
    """Imports served by Python callables: full_name -> fn(*args) -> list of results."""

    def __init__(self, functions: Mapping[str, Callable[..., Sequence]]) -> None:
        self.functions = dict(functions)

    def resolves(self, full_name: str, cconv: str | None) -> bool:
        return full_name in self.functions

    def call(self, full_name: str, cconv: str, args: list) -> list:
        return list(self.functions[full_name](*args))


class ContextImports(ImportResolver):
    """Imports served by the exports of other interpreter Contexts, found by module name."""

    def __init__(self, *contexts: "ModuleContext") -> None:
        self.contexts = {c.module.name: c for c in contexts}

    def _target(self, full_name: str) -> "tuple[ModuleContext, str] | None":
        module, _, function = full_name.partition(".")
        ctx = self.contexts.get(module)
        if ctx is None or not any(e.name == function for e in ctx.module.exported_functions):
            return None
        return ctx, function

    def resolves(self, full_name: str, cconv: str | None) -> bool:
        return self._target(full_name) is not None

    def call(self, full_name: str, cconv: str, args: list) -> list:
        target = self._target(full_name)
        assert target is not None  # the VM calls only imports resolves() resolved
        ctx, function = target
        return ctx.invoke(function, *args)


class NativeImports(ImportResolver):
    """Imports served by ireeabi.vm NativeModules, by module name (e.g. `HalRuntime.modules`).

    An import resolves when its module is present, exports the function (IREE's binary search) and
    the export's calling convention is exactly the import's; each resolved name is bound to its
    export ordinal once, so calls skip the lookup.
    """

    def __init__(self, modules: Mapping[str, NativeModule]) -> None:
        self.modules = dict(modules)
        self._bound: dict[str, tuple[NativeModule, int]] = {}

    def _bind(self, full_name: str, cconv: str | None) -> "tuple[NativeModule, int] | None":
        bound = self._bound.get(full_name)
        if bound is not None:
            return bound
        module_name, _, function = full_name.partition(".")
        module = self.modules.get(module_name)
        if module is None:
            return None
        try:
            ordinal = module.lookup(function)
        except StatusError:
            return None
        if cconv is not None and module.exports[ordinal].cconv != cconv:
            return None
        self._bound[full_name] = (module, ordinal)
        return module, ordinal

    def resolves(self, full_name: str, cconv: str | None) -> bool:
        return self._bind(full_name, cconv) is not None

    def bound(self, full_name: str, cconv: str | None) -> "tuple[NativeModule, int] | None":
        """(module, export ordinal) serving the import, if it resolves: a Context plans its call
        sites on them (`NativeModule.planned`)."""
        return self._bind(full_name, cconv)

    def call(self, full_name: str, cconv: str, args: list, moved: Sequence[int] = (),
             yieldable: bool = False) -> list:
        """As ImportResolver.call; `moved`: indices (packer order, spans flattened) of refs whose
        references the caller hands to the argument buffer instead of having them retained.
        `yieldable`: a vm.call.yieldable's begin: the call may yield (StatusError DEFERRED), then
        `resume` continues it."""
        module, ordinal = self._served(full_name, cconv)
        # Null refs are None in registers and NULL_REF ({0, 0}) in argument/result buffers.
        for i, a in enumerate(args):
            if a is None:
                args[i] = NULL_REF
            elif type(a) is list:
                args[i] = [e if None not in e else tuple(NULL_REF if x is None else x for x in e)
                           for e in a]
        return _null_refs(module.call_ordinal(ordinal, *args, moved=tuple(moved), yieldable=yieldable))

    def resume(self, full_name: str, cconv: str) -> list:
        """Continue a yieldable call of `full_name` that yielded: its results, or StatusError
        (DEFERRED) while it yields again."""
        module, ordinal = self._served(full_name, cconv)
        return _null_refs(module.resume_ordinal(ordinal))

    def _served(self, full_name: str, cconv: str) -> "tuple[NativeModule, int]":
        bound = self._bound.get(full_name) or self._bind(full_name, cconv)
        if bound is None:
            raise ImportResolutionError(full_name, "no native module provides it")
        return bound


def _null_refs(results: list) -> list:
    """Null refs of a results buffer (NULL_REF) as registers hold them (None)."""
    for i, r in enumerate(results):
        if type(r) is Ref and r.type == TYPE_NULL:
            results[i] = None
    return results


__all__ = ["ImportResolver", "FunctionImports", "ContextImports", "NativeImports"]
