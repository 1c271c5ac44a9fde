"""runtime/src/iree/modules/hal/loader/module.c and exports.inl: the hal_loader native module.

`executable.dispatch` (cconv `0rIiiiCiDCrIID_v`) has two spans, which the generic shims cannot
express; its own shim copies the fixed part into `iree_hal_loader_dispatch_args_t` and walks the
constant and binding spans by hand (`ireeabi.abi.cconv.span_reader` models both forms).

In C the first member of the args struct is an anonymous union of an anonymous struct and `params`,
so C code writes `args.executable` and `args.params`. The engine names every member, so here the
union is the field `anon` and the struct its member `named`; `C_PATHS` maps the C spellings.
"""
from __future__ import annotations

from ..abi import cconv
from ..abi.errors import UnknownNameError
from ..abi.layout import Field, Pointer, Scalar, Struct, Union

from .hal_inline import ModuleExport
from .ref import iree_vm_ref_t

IREE_HAL_LOADER_MODULE_NAME = "hal_loader"
IREE_HAL_LOADER_MODULE_VERSION_0_0 = 0x00000000
IREE_HAL_LOADER_MODULE_VERSION_0_1 = 0x00000001
# The compiler imports executable.dispatch / lookup.function with minimum_version = 1.
IREE_HAL_LOADER_MODULE_VERSION_LATEST = IREE_HAL_LOADER_MODULE_VERSION_0_1

DISPATCH_CCONV = "0rIiiiCiDCrIID_v"
MAX_DISPATCH_BINDINGS = 32  # dispatch: more -> RESOURCE_EXHAUSTED (the library limit is 64)

# exports.inl order; the shim column is `shim_arg_type` there ("dispatch" names the custom shim).
EXPORTS: tuple[ModuleExport, ...] = (
    ModuleExport("executable.dispatch", DISPATCH_CCONV, "iree_vm_shim_dispatch_v"),
    ModuleExport("executable.load", "0rrr_r", "iree_vm_shim_rrr_r"),
    ModuleExport("executable.lookup.function", "0rr_I", "iree_vm_shim_rr_I"),
    ModuleExport("executable.query_support", "0r_i", "iree_vm_shim_r_i"),
)

iree_vm_size_t = cconv.IREE_VM_SIZE_T
# The same declarations the cconv rules use for the shim structs (shim_struct is cached).
iree_vm_abi_rIiii_t = cconv.shim_struct("rIiii")
assert iree_vm_abi_rIiii_t is not None  # fixed values: expressed
iree_vm_abi_rII_t = cconv.shim_struct("rII")

iree_hal_loader_dispatch_args_named_t = Struct("iree_hal_loader_dispatch_args_named_t", [
    Field("executable", iree_vm_ref_t, doc="hal.executable ref (checked by the dispatch)"),
    Field("function_id", Scalar("int64_t"), doc="export ordinal from lookup.function"),
    Field("workgroup_x", Scalar("int32_t")),
    Field("workgroup_y", Scalar("int32_t")),
    Field("workgroup_z", Scalar("int32_t"), doc="truncated to uint16 in the dispatch state"),
], doc="anonymous struct in module.c: the rIiii values by name")

iree_hal_loader_dispatch_args_anon_t = Union("iree_hal_loader_dispatch_args_anon_t", [
    Field("named", iree_hal_loader_dispatch_args_named_t),
    Field("params", iree_vm_abi_rIiii_t,
          doc="the shim copies sizeof(iree_vm_abi_rIiii_t) bytes of arguments into it"),
], doc="anonymous union in module.c")

iree_hal_loader_dispatch_args_t = Struct("iree_hal_loader_dispatch_args_t", [
    Field("anon", iree_hal_loader_dispatch_args_anon_t, doc="anonymous in C"),
    Field("constant_count", iree_vm_size_t, doc="read where the shim believes span 0's count is"),
    Field("constants", Pointer("const uint32_t"), doc="points into the argument buffer"),
    Field("binding_count", iree_vm_size_t),
    Field("bindings", Pointer("const iree_vm_abi_rII_t"),
          doc="aligned to alignof(iree_vm_abi_rII_t) after the count; stride sizeof(rII)"),
], doc="static in hal/loader/module.c")

# C member access -> dotted path in this declaration.
C_PATHS = {
    "executable": "anon.named.executable",
    "function_id": "anon.named.function_id",
    "workgroup_x": "anon.named.workgroup_x",
    "workgroup_y": "anon.named.workgroup_y",
    "workgroup_z": "anon.named.workgroup_z",
    "params": "anon.params",
    "constant_count": "constant_count",
    "constants": "constants",
    "binding_count": "binding_count",
    "bindings": "bindings",
}


def export(name: str) -> ModuleExport:
    """The hal_loader export called `name`."""
    for e in EXPORTS:
        if e.name == name:
            return e
    raise UnknownNameError("hal_loader export", name, [e.name for e in EXPORTS])


STRUCTS = [iree_hal_loader_dispatch_args_t]
