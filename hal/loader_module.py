"""The `hal_loader` native module (version 1) on the emulated VM ABI.

executable.query_support / load / lookup.function use generic shims; executable.dispatch
(`0rIiiiCiDCrIID_v`, two spans) is read by hand like IREE's `iree_vm_shim_dispatch_v`:

- fixed (IREE #24827): the constants span starts at the packed size of the fixed part;
- `legacy=True`: it starts at sizeof(iree_vm_abi_rIiii_t) and bindings are aligned to
  alignof(iree_vm_abi_rII_t), as before the fix, so real argument buffers fail with
  "argument/result signature mismatch" (or, for unlucky constants, are misread) as they did in IREE.

Dispatch then follows the loader: executable ref check, function id range, at most 32 bindings, each
binding a vm.buffer mapped read-only over (offset, length), a dispatch_state_v0 with workgroup size
1x1x1 and the parsed counts, and every workgroup issued through the kernel library.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ireeabi.layouts import hal_loader as HL
from ireeabi.vm.module import Export, NativeModule
from ireeabi.vm.ref import TYPE_NULL, Ref
from ireeabi.vm.shims import CallContext
from ireeabi.vm.status import StatusCode, StatusError

from . import executable as X

if TYPE_CHECKING:
    from .runtime import HalRuntime

MAX_DISPATCH_BINDINGS = 32  # hal_loader's own limit (the library-level maximum is 64)
_U32 = 0xFFFFFFFF


@dataclass
class LoadedExecutable:
    library: X.Library
    # export name -> ordinal, built on the first lookup (a loaded library's export table is fixed)
    ordinals: dict[str, int] | None = None


class HalLoaderModule:
    def __init__(self, rt: "HalRuntime", *, legacy: bool = False) -> None:
        self.rt = rt
        self.heap = rt.heap
        self.legacy = legacy
        targets = {
            "executable.dispatch": self._dispatch,
            "executable.load": self._load,
            "executable.lookup.function": self._lookup_function,
            "executable.query_support": self._query_support,
        }
        form = "pre-fix" if legacy else "fixed"
        exports = [Export(e.name, e.cconv, targets[e.name], form=form) for e in HL.EXPORTS]
        self.module = NativeModule(self.heap, HL.IREE_HAL_LOADER_MODULE_NAME, exports,
                                   version=HL.IREE_HAL_LOADER_MODULE_VERSION_LATEST)
        self._workgroup_state = X.new_workgroup_state(0)
        self._workgroup_address = ctypes.addressof(self._workgroup_state)
        self._executables = rt.executables
        self._states: dict[tuple[int, int], X.DispatchState] = {}  # reused per (constants, bindings)

    def close(self) -> None:
        self.module.close()

    def _query_support(self, ctx: CallContext, format: Ref) -> int:
        return 1 if X.query_support(self.rt.vm_buffers.text(format)) else 0

    def _load(self, ctx: CallContext, format: Ref, data: Ref, constants: Ref) -> Ref:
        vmb = self.rt.vm_buffers
        fmt = self.rt.vm_buffers.text(format)
        dbuf = vmb.check_deref(data)
        ptr, n = vmb.map_ro(dbuf, 0, vmb.length(dbuf), 1)
        consts: list[int] = []
        if constants.type != TYPE_NULL and vmb.ref_type.isa(constants):
            cbuf = vmb.check_deref(constants)
            clen = vmb.length(cbuf)
            if clen % 4:
                raise StatusError(StatusCode.INVALID_ARGUMENT,
                                  f"executable constant buffer length {clen} is not a multiple of 4")
            cptr, _ = vmb.map_ro(cbuf, 0, clen, 1)
            raw = self.heap.read(cptr, clen)
            consts = [int.from_bytes(raw[i:i + 4], "little") for i in range(0, clen, 4)]
        try:
            library = X.load_library(fmt, self.heap.read(ptr, n), consts, self.rt.cpu_data)
        except X.ExecutableError as e:
            raise StatusError(StatusCode[e.code], e.message) from None
        return self.rt.executables.move_ref(self.rt.executables.create(LoadedExecutable(library),
                                                                       tag=f"hal.executable {library.name}"))

    def _lookup_function(self, ctx: CallContext, executable: Ref, name: Ref) -> int:
        _, exe = self.rt.executables.deref(executable)
        wanted = self.rt.vm_buffers.text(name)  # read from memory every call
        ordinals = exe.ordinals
        if ordinals is None:
            ordinals = exe.ordinals = {}
            for e in reversed(exe.library.exports):  # the first of duplicate names wins, as the scan
                ordinals[e.name] = e.ordinal
        ordinal = ordinals.get(wanted)
        if ordinal is not None:
            return ordinal
        if not exe.library.exports:
            raise StatusError(StatusCode.UNAVAILABLE, "executable has no export names")
        raise StatusError(StatusCode.NOT_FOUND, f"export '{wanted}' not found in library")

    def _dispatch(self, ctx: CallContext, executable: Ref, function_id: int, workgroup_x: int,
                  workgroup_y: int, workgroup_z: int, constants: list[int],
                  bindings: list[tuple[Ref, int, int]]) -> None:
        _, exe = self._executables.deref(executable)
        library = exe.library
        fid = function_id & 0xFFFFFFFFFFFFFFFF
        n_exports = len(library.exports)
        if fid > _U32 or fid >= n_exports:
            raise StatusError(StatusCode.OUT_OF_RANGE, f"function id {fid} out of range (count: {n_exports})")
        if len(bindings) > MAX_DISPATCH_BINDINGS:
            raise StatusError(StatusCode.RESOURCE_EXHAUSTED, "too many bindings")
        map_ro_ref = self.rt.vm_buffers.map_ro_ref
        ptrs, lengths = [], []
        for ref, offset, length in bindings:
            p, n = map_ro_ref(ref, offset, length, 1)  # = map_ro(check_deref(ref), ...)
            ptrs.append(p)
            lengths.append(n)
        key = (len(constants), len(ptrs))
        state = self._states.get(key)
        if state is None:
            state = self._states[key] = X.DispatchState(*key)
        counts = (workgroup_x & _U32, workgroup_y & _U32, workgroup_z & 0xFFFF)
        state.pack(counts, constants, ptrs, lengths)  # workgroup size 1x1x1
        result = library.issue(fid, state.address, self._workgroup_address, counts)
        if result.status != 0:
            raise StatusError(StatusCode.INTERNAL,
                              f"executable entry point returned catastrophic error {result.status}")

__all__ = ["HalLoaderModule", "LoadedExecutable", "MAX_DISPATCH_BINDINGS"]
