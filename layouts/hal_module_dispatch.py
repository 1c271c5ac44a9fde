"""runtime/src/iree/modules/hal/module.c: the full `hal` module's two span-reading dispatch shims.

`command_buffer.dispatch` (`0rrIiiiICiDCiirIID_v`) and `command_buffer.dispatch.indirect`
(`0rrIirIICiDCiirIID_v`) carry two spans (push constants, then bindings), which the generic shims
cannot express. Each has its own shim (`iree_hal_module_command_buffer_dispatch_shim` and
`..._dispatch_indirect_shim`): it copies `sizeof(iree_vm_abi_rrIiiiI_t)` (`rrIirII`) bytes into the
union of its args struct, reads the constant count at that sizeof, the binding count after the
constants, aligns the binding array to `alignof(iree_vm_abi_iirII_t)` and walks it with that
struct's stride. That is the reader `ireeabi.abi.cconv.span_reader` calls "pre-fix" (hal_loader's
dispatch before IREE #24827); IREE's full HAL reads that way in the snapshot and, by the machine
code of iree-run-module 3.13.0 (tests/layouts/test_hal_module_dispatch_binary.py), in 3.13.

History (git log of module.c): until #22845 (2026-01) the shim structs were packed and the VM packed
unaligned, so sizeof and the packer always agreed; #22845 gave both C alignment, from when on the
sizeof start is right only where the C struct of the fixed part has no tail padding and its members
sit where the VM packs them. #24827 moved hal_loader's reader to the packed size of the fixed part;
the full HAL's shims kept sizeof. `sizeof_site` checks, per data model, whether that still holds:
"latent" where every instance is read right, "live" where some is misread.

The args structs have an anonymous union of an anonymous struct and `params` first, like
hal_loader's; the union is the field `anon` and the struct its member `named` (`C_PATHS`).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import Sequence

from ..abi import cconv
from ..abi.cconv import Finding
from ..abi.errors import UnknownNameError
from ..abi.layout import Array, Field, Pointer, Scalar, Struct, Union
from ..abi.targets import Target, get as get_target

from .ref import iree_vm_ref_t

__all__ = ["DISPATCH_CCONV", "DISPATCH_INDIRECT_CCONV", "MAX_DISPATCH_BINDINGS", "IREE_FORM",
           "READER_NAME", "SPAN_SWEEP", "DispatchShim", "SizeofSite", "SHIMS", "C_PATHS", "shim",
           "shim_for_cconv", "reader", "sizeof_site", "sizeof_sites", "STRUCTS",
           "iree_hal_module_command_buffer_dispatch_args_t",
           "iree_hal_module_command_buffer_dispatch_indirect_args_t"]

DISPATCH_CCONV = "0rrIiiiICiDCiirIID_v"
DISPATCH_INDIRECT_CCONV = "0rrIirIICiDCiirIID_v"
MAX_DISPATCH_BINDINGS = 32  # IREE_HAL_MODULE_MAX_DESCRIPTOR_BINDING_COUNT: more -> OUT_OF_RANGE
IREE_FORM = "pre-fix"  # the cconv.span_reader form the full HAL's shims read with (sizeof start)
READER_NAME = "sizeof"  # what findings call that reader here: it is IREE's current one, not a pre-fix
SPAN_SWEEP = range(0, 4)  # span counts per span a site is checked with (16 instances each)

iree_vm_size_t = cconv.IREE_VM_SIZE_T
iree_hal_dispatch_flags_t = Scalar("uint64_t", "iree_hal_dispatch_flags_t")  # hal/command_buffer.h
# The same declarations the cconv rules use for the shim structs (shim_struct is cached).
iree_vm_abi_rrIiiiI_t = cconv.shim_struct("rrIiiiI")
iree_vm_abi_rrIirII_t = cconv.shim_struct("rrIirII")
iree_vm_abi_iirII_t = cconv.shim_struct("iirII")
assert iree_vm_abi_rrIiiiI_t and iree_vm_abi_rrIirII_t and iree_vm_abi_iirII_t  # fixed values: all expressed


def _args(prefix: str, named: Struct, params: Struct, what: str) -> Struct:
    anon = Union(f"{prefix}_anon_t", [
        Field("named", named),
        Field("params", params, doc=f"the shim copies sizeof({params.name}) bytes of arguments into it"),
    ], doc="anonymous union in module.c")
    return Struct(f"{prefix}_t", [
        Field("anon", anon, doc="anonymous in C"),
        Field("constant_count", iree_vm_size_t, doc=f"read at sizeof({params.name})"),
        Field("constants", Pointer("const uint32_t"), doc="the count's address + 4 in the argument buffer"),
        Field("binding_count", iree_vm_size_t, doc="read right after the last constant"),
        Field("bindings", Pointer("const iree_vm_abi_iirII_t"),
              doc="aligned to alignof(iree_vm_abi_iirII_t) after the count; stride sizeof(iirII)"),
    ], doc=f"static in hal/module.c: {what}'s arguments")


iree_hal_module_command_buffer_dispatch_args_named_t = Struct(
    "iree_hal_module_command_buffer_dispatch_args_named_t", [
        Field("command_buffer", iree_vm_ref_t),
        Field("executable", iree_vm_ref_t),
        Field("function_id", Scalar("int64_t"), doc="from executable.lookup.function"),
        Field("workgroup_count", Array(Scalar("uint32_t"), 3)),
        Field("flags", iree_hal_dispatch_flags_t),
    ], doc="anonymous struct in module.c: the rrIiiiI values by name")

iree_hal_module_command_buffer_dispatch_args_t = _args(
    "iree_hal_module_command_buffer_dispatch_args", iree_hal_module_command_buffer_dispatch_args_named_t,
    iree_vm_abi_rrIiiiI_t, "command_buffer.dispatch")

iree_hal_module_command_buffer_dispatch_indirect_args_named_t = Struct(
    "iree_hal_module_command_buffer_dispatch_indirect_args_named_t", [
        Field("command_buffer", iree_vm_ref_t),
        Field("executable", iree_vm_ref_t),
        Field("function_id", Scalar("int64_t")),
        Field("workgroups_buffer_slot", Scalar("int32_t")),
        Field("workgroups_buffer", iree_vm_ref_t, doc="holds the three uint32 workgroup counts"),
        Field("workgroups_offset", Scalar("int64_t")),
        Field("flags", iree_hal_dispatch_flags_t),
    ], doc="anonymous struct in module.c: the rrIirII values by name")

iree_hal_module_command_buffer_dispatch_indirect_args_t = _args(
    "iree_hal_module_command_buffer_dispatch_indirect_args",
    iree_hal_module_command_buffer_dispatch_indirect_args_named_t, iree_vm_abi_rrIirII_t,
    "command_buffer.dispatch.indirect")


def _c_paths(named: Struct) -> dict[str, str]:
    out = {f.name: f"anon.named.{f.name}" for f in named.fields}
    out["params"] = "anon.params"
    out.update({n: n for n in ("constant_count", "constants", "binding_count", "bindings")})
    return out


@dataclass(frozen=True)
class DispatchShim:
    """One span-reading shim of the full HAL: the export it serves, its args struct, the struct of
    the fixed part whose sizeof it starts the spans at, and the binding element struct."""

    export: str  # local name in the `hal` module
    cconv: str
    args: Struct
    params: Struct
    element: Struct
    function: str  # the C shim in module.c

    @property
    def full_name(self) -> str:
        return f"hal.{self.export}"

    @property
    def fixed_prefix(self) -> str:
        return cconv.parse(self.cconv).arguments.fixed_prefix


SHIMS: tuple[DispatchShim, ...] = (
    DispatchShim("command_buffer.dispatch", DISPATCH_CCONV, iree_hal_module_command_buffer_dispatch_args_t,
                 iree_vm_abi_rrIiiiI_t, iree_vm_abi_iirII_t, "iree_hal_module_command_buffer_dispatch_shim"),
    DispatchShim("command_buffer.dispatch.indirect", DISPATCH_INDIRECT_CCONV,
                 iree_hal_module_command_buffer_dispatch_indirect_args_t, iree_vm_abi_rrIirII_t,
                 iree_vm_abi_iirII_t, "iree_hal_module_command_buffer_dispatch_indirect_shim"),
)

# C member access -> dotted path in the declarations, per args struct.
C_PATHS: dict[str, dict[str, str]] = {
    iree_hal_module_command_buffer_dispatch_args_t.name:
        _c_paths(iree_hal_module_command_buffer_dispatch_args_named_t),
    iree_hal_module_command_buffer_dispatch_indirect_args_t.name:
        _c_paths(iree_hal_module_command_buffer_dispatch_indirect_args_named_t),
}


def shim(export: str) -> DispatchShim:
    """The full-HAL dispatch shim of export `export` (`command_buffer.dispatch` or `hal.`-prefixed)."""
    name = export[4:] if export.startswith("hal.") else export
    for s in SHIMS:
        if s.export == name:
            return s
    raise UnknownNameError("full-HAL dispatch shim", export, [s.export for s in SHIMS])


def shim_for_cconv(text: str) -> list[DispatchShim]:
    """The shims whose argument fragment is `text`'s (a whole cconv or a bare argument fragment)."""
    try:
        frag = cconv.parse(text).arguments if text[:1] == cconv.VERSION else cconv.parse_fragment(text)
    except cconv.CconvError:
        return []
    return [s for s in SHIMS if cconv.parse(s.cconv).arguments.text == frag.text]


@dataclass(frozen=True)
class SizeofSite:
    """One shim on one data model: where the VM packs the first span's count against the sizeof the
    shim reads it at, and how many of the swept instances its reader misreads (`state`: "latent"
    when none, "live" otherwise)."""

    shim: DispatchShim
    target: Target
    sizeof: int  # sizeof(params) on the target: where the shim reads the constant count
    packed: int  # where the VM packs the constant count (the end of the packed fixed part)
    instances: int
    misread: int  # instances the shim's reader misreads (a value, a count, or the length check)
    findings: tuple[Finding, ...]  # the first misread instance's, empty when latent
    # instances still misread were the spans started at the packed size (#24827's loader fix):
    # the fixed part's C members can sit elsewhere than the VM packs them (i386)
    packed_start_misread: int = 0

    @property
    def state(self) -> str:
        return "live" if self.misread else "latent"

    @property
    def sizes_agree(self) -> bool:
        return self.sizeof == self.packed

    def summary(self) -> str:
        """One line: the sizes and what the reader does with them."""
        sizes = (f"sizeof({self.shim.params.name}) {self.sizeof} "
                 f"{'=' if self.sizes_agree else '!='} packed fixed part {self.packed}")
        if not self.misread:
            return f"{self.state} sizeof site on {self.target.name}: {sizes}; the shim reads all " \
                   f"{self.instances} instances right"
        return f"{self.state} sizeof site on {self.target.name}: {sizes}; the shim misreads " \
               f"{self.misread} of {self.instances} instances (a packed-size start, #24827's hal_loader " \
               f"fix, would still misread {self.packed_start_misread})"

    def as_dict(self) -> dict:
        return {"export": self.shim.full_name, "cconv": self.shim.cconv, "shim": self.shim.function,
                "struct": self.shim.params.name, "target": self.target.name, "sizeof": self.sizeof,
                "packed": self.packed, "state": self.state, "instances": self.instances,
                "misread": self.misread, "packed_start_misread": self.packed_start_misread,
                "findings": [f.as_dict() for f in self.findings]}


def reader(s: DispatchShim, target: "Target | str", spans: Sequence[int]) -> cconv.ReaderView:
    """How `s`'s shim reads the instance with `spans` elements per span: `cconv.span_reader` in
    form IREE_FORM, named "sizeof" (its findings are rule `reader-sizeof`)."""
    return replace(cconv.span_reader(cconv.parse(s.cconv).arguments, target, spans,
                                     form=IREE_FORM), name=READER_NAME)


def sizeof_site(s: DispatchShim, target: "Target | str", sweep: Sequence[int] = SPAN_SWEEP) -> SizeofSite:
    """Lay out every instance of `s`'s arguments with 0..3 elements per span on `target` and read
    each with the shim's reader (`cconv.span_reader`, form IREE_FORM)."""
    t = get_target(target)
    frag = cconv.parse(s.cconv).arguments
    sizeof = s.params.layout(t).size
    packed = cconv.layout(frag, t, (0,) * len(frag.spans)).counts[0].offset
    misread, fixed_misread = 0, 0
    first: tuple[cconv.Finding, ...] = ()
    n = 0
    for counts in itertools.product(sweep, repeat=len(frag.spans)):
        n += 1
        lay = cconv.layout(frag, t, counts)
        found = cconv.compare_reader(lay, reader(s, t, counts))
        if found:
            misread += 1
            first = first or found
        packed_start = cconv.span_reader(frag, t, counts, form="fixed")
        fixed_misread += bool(cconv.compare_reader(lay, packed_start))
    return SizeofSite(s, t, sizeof, packed, n, misread, tuple(first), fixed_misread)


def sizeof_sites(target: "Target | str") -> list[SizeofSite]:
    """Every full-HAL dispatch shim's site on `target`."""
    return [sizeof_site(s, target) for s in SHIMS]


STRUCTS = [iree_hal_module_command_buffer_dispatch_args_t,
           iree_hal_module_command_buffer_dispatch_indirect_args_t]
