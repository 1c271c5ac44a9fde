"""Package faces that import what they re-export on first use (PEP 562).

A face lists, per module, the names it re-exports; `lazy_face` gives the package's module-level
`__getattr__` and `__dir__`: a name is imported from its module the first time it is asked for,
then kept in the package's namespace, so importing a package (or one of its modules: the cconv
syntax, the `.vmfb` reader, the execution models' flags) loads nothing else. `dir()` lists what
`__all__` offers before it is loaded. The faces keep the same imports under TYPE_CHECKING for
readers and type checkers.
"""
from __future__ import annotations

import importlib
from typing import Any, Callable, Iterable, Mapping

__all__ = ["lazy_face"]


def lazy_face(package: str, namespace: dict[str, Any], exports: Mapping[str, Iterable[str]],
              submodules: Iterable[str] = ()) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """(`__getattr__`, `__dir__`) of `package`, whose globals are `namespace`. `exports`: module ->
    the names it gives, a module named relative to the package (`"context"`) or absolute
    (`"ireeabi.hal.string_util"`); `submodules`: modules that are attributes of the face as well."""
    where = {name: module if module.startswith("ireeabi.") else f"{package}.{module}"
             for module, names in exports.items() for name in names}
    modules = frozenset(submodules)

    def __getattr__(name: str) -> Any:  # noqa: N807 - the module hook's own name
        if name in modules:
            return importlib.import_module(f"{package}.{name}")  # the import sets the attribute
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where[name]), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:  # noqa: N807
        return sorted({*namespace, *namespace.get("__all__", ()), *modules})

    return __getattr__, __dir__
