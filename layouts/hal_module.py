"""runtime/src/iree/modules/hal/exports.inl: the full `hal` module's exports with spans.

Only the variadic exports are listed: those are the ones whose packed layout depends on span counts
and on the rules ireeabi compares (the fixed ones use the generic shims like hal_inline's).
`command_buffer.dispatch*` have two spans and a custom shim, like hal_loader's dispatch.
"""
from __future__ import annotations

from .hal_inline import ModuleExport

IREE_HAL_MODULE_NAME = "hal"
IREE_HAL_MODULE_VERSION_LATEST = 0x00000007  # IREE_HAL_MODULE_VERSION_0_7 (module.c)


def _export(name: str, args: str, rets: str, custom: bool = False) -> ModuleExport:
    shim = "custom" if custom else f"iree_vm_shim_{args}_{rets}"
    return ModuleExport(name, f"0{args}_{rets}", shim)


VARIADIC_EXPORTS: tuple[ModuleExport, ...] = (
    _export("allocator.select", "iiICrID", "rI"),
    _export("buffer_view.assert", "rriiCID", "v"),
    _export("buffer_view.create", "rIIiiCID", "r"),
    _export("buffer_view.trace", "rCrD", "v"),
    _export("command_buffer.dispatch", "rrIiiiICiDCiirIID", "v", custom=True),
    _export("command_buffer.dispatch.indirect", "rrIirIICiDCiirIID", "v", custom=True),
    _export("device.queue.execute.indirect", "rIrrrICrIID", "v"),
    _export("fence.await", "iICrD", "i"),
    _export("fence.join", "ICrD", "r"),
)

STRUCTS: list = []
