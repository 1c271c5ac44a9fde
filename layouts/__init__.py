"""ireeabi.layouts: the catalog of IREE structs, one declaration each, grouped like IREE's headers.

`get(name)` finds any catalog struct by its C name, and derives `iree_vm_abi_<types>_t` shim structs
from their cconv fragment on demand; `names()` lists the catalog, `all_structs()` its declarations,
`module_of(name)` the module declaring one. The catalog modules (`MODULES`: `base`, `ref`, `buffer`,
`vm_module`, `executable_library`, `hal_buffer`, `hal_inline`, `hal_loader`, `hal_module_dispatch`:
the full HAL's dispatch shims) each hold a STRUCTS list; `hal_module` has the full `hal` module's
exports; `modules` declares native modules and their export tables, `module_sources` loads them from
`--native-module` specs; `fixtures` builds and verifies the golden packed-buffer fixtures.

Beside a struct sits its view on one data model where the runtime reads it (`RefLayout`,
`VmBufferLayout`, `DispatchLayout`, ...: offsets and codecs), built from a `data_model.DataModel`;
the runtime's `base.machine.Machine` builds each once per data model.
"""
from __future__ import annotations

import importlib
import re

from ..abi import cconv
from ..abi.errors import UnknownNameError
from ..abi.layout import Struct

# Modules of the catalog, in dependency order; each has a STRUCTS list.
MODULES = ["base", "ref", "buffer", "vm_module", "executable_library", "hal_buffer", "hal_inline",
           "hal_loader", "hal_module_dispatch"]

__all__ = ["get", "names", "all_structs", "module_of", "UnknownNameError", "MODULES", *MODULES,
           "hal_module", "modules", "module_sources", "fixtures", "data_model"]

_ABI_STRUCT = re.compile(r"^iree_vm_abi_([iIfFrCDv]+)_t$")


def _catalog() -> dict[str, Struct]:
    out: dict[str, Struct] = {}
    for m in MODULES:
        mod = importlib.import_module(f"{__name__}.{m}")
        for s in mod.STRUCTS:
            for n in (*s.nested(), s):
                if n.name in out and out[n.name] is not n:
                    raise AssertionError(f"two declarations named {n.name}")
                out[n.name] = n
    return out


def module_of(name: str) -> str:
    """The catalog module declaring struct `name` (`"cconv"` for the derived shim structs)."""
    if _ABI_STRUCT.match(name):
        get(name)  # raises UnknownNameError for a fragment the shim macros cannot express
        return "cconv"
    for m in MODULES:
        mod = importlib.import_module(f"{__name__}.{m}")
        for s in mod.STRUCTS:
            if any(n.name == name for n in (*s.nested(), s)):
                return m
    raise UnknownNameError("struct", name, _catalog())


def names() -> list[str]:
    return sorted(_catalog())


def all_structs() -> list[Struct]:
    return list(_catalog().values())


def get(name: str) -> Struct:
    """A catalog struct by C name, or a derived `iree_vm_abi_<fragment>_t` shim struct."""
    cat = _catalog()
    if name in cat:
        return cat[name]
    m = _ABI_STRUCT.match(name)
    if m:
        s = cconv.shim_struct(m.group(1))
        if s is not None:
            return s
    raise UnknownNameError("struct", name, cat)
