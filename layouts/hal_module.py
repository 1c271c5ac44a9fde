"""runtime/src/iree/modules/hal/exports.inl: the full `hal` module's export table (module version 0.7,
the one iree-compile 3.13 imports: `hal, version >= 7`), as the 3.13 runtime registers it (checked
against iree.runtime's own `hal` module: names, order and cconvs).

Every `EXPORT_FN` line as (name, cconv, shim), in the table's (sorted) order. Fixed and single-span
exports use IREE's generic shims (`iree_vm_shim_<args>_<rets>`); `command_buffer.dispatch*` have two
spans and a hand-written shim (`EXPORT_FN_CUSTOM`), read like hal_loader's dispatch.
`VARIADIC_EXPORTS` are the exports with spans: the ones whose packed layout depends on span counts.
"""
from __future__ import annotations

from .hal_inline import ModuleExport

IREE_HAL_MODULE_NAME = "hal"
IREE_HAL_MODULE_VERSION_LATEST = 0x00000007  # IREE_HAL_MODULE_VERSION_0_7 (module.c)


def _export(name: str, args: str, rets: str, custom: bool = False) -> ModuleExport:
    shim = "custom" if custom else f"iree_vm_shim_{args}_{rets}"
    return ModuleExport(name, f"0{args}_{rets}", shim)


EXPORTS: tuple[ModuleExport, ...] = (
    _export("allocator.allocate", "rIiiI", "r"),
    _export("allocator.import", "riIiirII", "r"),
    _export("allocator.select", "iiICrID", "rI"),
    _export("buffer.allocation.discard", "r", "i"),
    _export("buffer.allocation.is_terminal", "r", "i"),
    _export("buffer.allocation.preserve", "r", "v"),
    _export("buffer.assert", "rrrIii", "v"),
    _export("buffer.length", "r", "I"),
    _export("buffer.load", "rIi", "i"),
    _export("buffer.store", "irIi", "v"),
    _export("buffer.subspan", "rII", "r"),
    _export("buffer_view.assert", "rriiCID", "v"),
    _export("buffer_view.buffer", "r", "r"),
    _export("buffer_view.create", "rIIiiCID", "r"),
    _export("buffer_view.dim", "ri", "I"),
    _export("buffer_view.element_type", "r", "i"),
    _export("buffer_view.encoding_type", "r", "i"),
    _export("buffer_view.rank", "r", "i"),
    _export("buffer_view.trace", "rCrD", "v"),
    _export("channel.create", "rIIrrii", "r"),
    _export("channel.rank_and_count", "r", "ii"),
    _export("channel.split", "riiI", "r"),
    _export("command_buffer.advise_buffer", "rrIIIi", "v"),
    _export("command_buffer.begin_debug_group", "rr", "v"),
    _export("command_buffer.collective", "rriiiirrIIIII", "v"),
    _export("command_buffer.copy_buffer", "riirIrIII", "v"),
    _export("command_buffer.create", "riiIi", "r"),
    _export("command_buffer.dispatch", "rrIiiiICiDCiirIID", "v", custom=True),
    _export("command_buffer.dispatch.indirect", "rrIirIICiDCiirIID", "v", custom=True),
    _export("command_buffer.end_debug_group", "r", "v"),
    _export("command_buffer.execution_barrier", "riiI", "v"),
    _export("command_buffer.fill_buffer", "rrIIiIiI", "v"),
    _export("command_buffer.finalize", "r", "v"),
    # In the installed 3.13 runtime's table (the oracle), gone from later exports.inl.
    _export("command_buffer.flush_buffer", "rirII", "v"),
    _export("command_buffer.invalidate_buffer", "rirII", "v"),
    _export("command_buffer.update_buffer", "rrIrIIiI", "v"),
    _export("device.allocator", "r", "r"),
    _export("device.query.i64", "rrr", "iI"),
    _export("device.queue.alloca", "rIrrIiiII", "r"),
    _export("device.queue.barrier", "rIrrI", "v"),
    _export("device.queue.copy", "rIrrrIrIII", "v"),
    _export("device.queue.dealloca", "rIrrrI", "v"),
    _export("device.queue.execute", "rIrrrI", "v"),
    _export("device.queue.execute.indirect", "rIrrrICrIID", "v"),
    _export("device.queue.fill", "rIrrrIIIiI", "v"),
    _export("device.queue.flush", "rI", "v"),
    _export("device.queue.read", "rIrrrIrIII", "v"),
    _export("device.queue.update", "rIrrrIrIII", "v"),
    _export("device.queue.write", "rIrrrIrIII", "v"),
    _export("devices.count", "v", "i"),
    _export("devices.get", "i", "r"),
    _export("ex.file.from_memory", "rIirIIi", "r"),
    _export("executable.create", "rIrrr", "r"),
    _export("executable.lookup.function", "rr", "I"),
    _export("fence.await", "iICrD", "i"),
    _export("fence.create", "rI", "r"),
    _export("fence.fail", "ri", "v"),
    _export("fence.join", "ICrD", "r"),
    _export("fence.query", "r", "i"),
    _export("fence.signal", "r", "v"),
)

VARIADIC_EXPORTS: tuple[ModuleExport, ...] = tuple(e for e in EXPORTS if "C" in e.cconv)

STRUCTS: list = []

__all__ = ["IREE_HAL_MODULE_NAME", "IREE_HAL_MODULE_VERSION_LATEST", "EXPORTS", "VARIADIC_EXPORTS",
           "STRUCTS"]
