"""runtime/src/iree/modules/hal/inline/module.c and exports.inl: the hal_inline native module.

`iree_hal_inline_storage_buffer_t` is static to module.c: one heap wrapper per `buffer.storage` /
`buffer.allocate` call that keeps a HAL buffer mapped and exposes it as an embedded VM buffer.
"""
from __future__ import annotations

from typing import NamedTuple

from ..abi.errors import UnknownNameError
from ..abi.layout import Field, Pointer, Struct

from .base import iree_allocator_t
from .buffer import iree_vm_buffer_t
from .hal_buffer import iree_hal_buffer_mapping_t
from .data_model import DataModel


class ModuleExport(NamedTuple):
    """One `EXPORT_FN` line of a module's exports.inl."""

    name: str  # local name; the VM resolves `<module>.<name>`
    cconv: str  # "0" + argument types + "_" + result types, as the module publishes it
    shim: str  # the C shim function the entry is bound to


def _generic(name: str, args: str, rets: str) -> ModuleExport:
    # Generic shims are named iree_vm_shim_<args>_<rets> (vm/shims.h).
    return ModuleExport(name, f"0{args}_{rets}", f"iree_vm_shim_{args}_{rets}")


IREE_HAL_INLINE_MODULE_NAME = "hal_inline"
IREE_HAL_INLINE_MODULE_VERSION_0_0 = 0x00000000
IREE_HAL_INLINE_MODULE_VERSION_LATEST = IREE_HAL_INLINE_MODULE_VERSION_0_0

# exports.inl order, which is also the module's function ordinal order.
EXPORTS: tuple[ModuleExport, ...] = (
    _generic("buffer.allocate", "iI", "rr"),
    _generic("buffer.allocate.initialized", "irII", "rr"),
    _generic("buffer.length", "r", "I"),
    _generic("buffer.storage", "r", "r"),
    _generic("buffer.subspan", "rII", "r"),
    _generic("buffer.wrap", "rII", "r"),
    _generic("buffer_view.assert", "rriiCID", "v"),
    _generic("buffer_view.buffer", "r", "r"),
    _generic("buffer_view.create", "rIIiiCID", "r"),
    _generic("buffer_view.dim", "ri", "I"),
    _generic("buffer_view.element_type", "r", "i"),
    _generic("buffer_view.encoding_type", "r", "i"),
    _generic("buffer_view.rank", "r", "i"),
    _generic("buffer_view.trace", "rCrD", "v"),
    _generic("device.query.i64", "rr", "iI"),
)

# Element-count limits the module checks before touching a span (module.c).
MAX_BUFFER_VIEW_RANK = 128  # buffer_view.create / assert: more dims -> OUT_OF_RANGE
MAX_TRACE_VIEWS = 128  # buffer_view.trace: more views -> RESOURCE_EXHAUSTED

iree_hal_inline_storage_buffer_t = Struct("iree_hal_inline_storage_buffer_t", [
    Field("host_allocator", iree_allocator_t,
          doc="meant to free the wrapper; never assigned in this snapshot, so it stays {NULL, NULL}"),
    Field("hal_buffer", Pointer("iree_hal_buffer_t"),
          doc="meant to be retained for the wrapper's life; never assigned (NULL)"),
    Field("mapping", iree_hal_buffer_mapping_t,
          doc="SCOPED mapping of the whole buffer: it holds the retain that keeps the storage alive"),
    Field("vm_buffer", iree_vm_buffer_t,
          doc="initialized in place over mapping.contents; its allocator's ctl frees the wrapper"),
], doc="static in hal/inline/module.c")


def export(name: str) -> ModuleExport:
    """The hal_inline export called `name`."""
    for e in EXPORTS:
        if e.name == name:
            return e
    raise UnknownNameError("hal_inline export", name, [e.name for e in EXPORTS])


STRUCTS = [iree_hal_inline_storage_buffer_t]


class StorageWrapperLayout:
    """iree_hal_inline_storage_buffer_t on one data model."""

    def __init__(self, m: DataModel) -> None:
        wrapper = m.layout(iree_hal_inline_storage_buffer_t)
        self.size = wrapper.size
        self.mapping_off = wrapper.field("mapping").offset
        self.vm_buffer_off = wrapper.field("vm_buffer").offset
        self.hal_buffer_off = wrapper.offsetof("hal_buffer")
        # The fixed wrapper records its host allocator (written in one pack at the allocator).
        self.allocator_off = wrapper.offsetof("host_allocator")
        self.allocator_fmt = m.field_struct([(wrapper.offsetof("host_allocator.self") - self.allocator_off, "W"),
                                              (wrapper.offsetof("host_allocator.ctl") - self.allocator_off, "W")])
        assert "x" not in self.allocator_fmt.format  # so the pack writes nothing else
        self.word = m.word
        # host_allocator {self, ctl} and hal_buffer, read together when the wrapper is torn down.
        self.teardown_fmt = m.field_struct([(wrapper.offsetof("host_allocator.self"), "W"),
                                             (wrapper.offsetof("host_allocator.ctl"), "W"),
                                             (self.hal_buffer_off, "W")])
