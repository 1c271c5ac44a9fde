"""The `hal_loader` native module (version 1) on the emulated VM ABI.

executable.query_support / load / lookup.function use generic shims; executable.dispatch
(`0rIiiiCiDCrIID_v`, two spans) is read by hand like IREE's `iree_vm_shim_dispatch_v`:

- fixed (IREE #24827): the constants span starts at the packed size of the fixed part;
- `legacy=True`: it starts at sizeof(iree_vm_abi_rIiii_t) and bindings are aligned to
  alignof(iree_vm_abi_rII_t), as before the fix, so real argument buffers fail with
  "argument/result signature mismatch" (or, for unlucky constants, are misread) as they did in IREE.

Dispatch then follows the loader: executable ref check, function id range, at most 32 bindings, each
binding a vm.buffer mapped read-only over (offset, length), a dispatch_state_v0 with workgroup size
1x1x1 and the parsed counts (in the heap, laid out for its data model, as IREE keeps it on its stack),
and every workgroup issued through the kernel library. One check IREE lacks comes last: fewer
constants or bindings than the export declares are refused (the kernel would read past the arrays).

Libraries of host machine code load only on a runtime whose target is the host; other targets
answer query_support for their own architecture and refuse the load with a message naming the target
that can run the kernels (executable.ForeignKernelError). Python kernels run on every target.

Load follows module.c's loader loop: a format no loader supports, or a loader answering NOT_FOUND or
CANCELLED, ends in NOT_FOUND "no executable loader registered ..."; required library imports fail as
with IREE's NULL import provider (UNAVAILABLE).
"""
from __future__ import annotations

from dataclasses import dataclass

from ireeabi.layouts import hal_loader as HL
from ireeabi.vm.buffer import BufferType
from ireeabi.vm.native_module import Export, NativeModule
from ireeabi.vm.ref import TYPE_NULL, Ref
from ireeabi.vm.shims import CallContext
from ireeabi.base.status import StatusCode, StatusError

from ireeabi.hal.local import library_loader, python_executable
from ireeabi.hal.local.library_loader import KernelRunners
from ireeabi.hal.local.executable_library import (DispatchState, ExecutableError,
                                                  UnresolvedImportError, check_counts, issue_dispatch,
                                                  write_workgroup_state)
from ireeabi.hal.resource import ResourceType
from ireeabi.layouts.executable_library import DispatchLayout

MAX_DISPATCH_BINDINGS = 32  # hal_loader's own limit (the library-level maximum is 64)
_U32 = 0xFFFFFFFF


@dataclass
class LoadedExecutable:
    library: "library_loader.KernelLibrary | python_executable.PythonLibrary"
    # export name -> ordinal, built on the first lookup (a loaded library's export table is fixed)
    ordinals: dict[str, int] | None = None
    # per ordinal, the (constant count, binding count) its attrs declare: dispatch's last check
    needs: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        self.needs = tuple((e.constant_count, e.binding_count) for e in self.library.exports)


def no_loader_status(fmt: str) -> StatusError:
    return StatusError(StatusCode.NOT_FOUND,
                       f"no executable loader registered for the given executable format '{fmt}'")


class HalLoaderModule:
    """hal_loader over a heap's VM buffers and its hal.executable type; the processor data is what
    kernels get in environment_v0."""

    def __init__(self, vm_buffers: BufferType, executables: "ResourceType[LoadedExecutable]",
                 cpu_data: list[int], *, legacy: bool = False, runners: KernelRunners | None = None) -> None:
        self.heap = vm_buffers.heap
        self.cpu_data = cpu_data  # the runtime's words (shared: a change shows in both modules)
        self.runners = runners  # the runtime's emulators for foreign kernels (None: host kernels only)
        self._vm_buffers = vm_buffers
        self.legacy = legacy
        targets = {
            "executable.dispatch": self._dispatch,
            "executable.load": self._load,
            "executable.lookup.function": self.lookup_function,
            "executable.query_support": self._query_support,
        }
        form = "pre-fix" if legacy else "fixed"
        exports = [Export(e.name, e.cconv, targets[e.name], form=form) for e in HL.EXPORTS]
        self.module = NativeModule(self.heap, HL.IREE_HAL_LOADER_MODULE_NAME, exports,
                                   version=HL.IREE_HAL_LOADER_MODULE_VERSION_LATEST)
        self.machine = self.heap.machine
        self._executables = executables
        # The states of the dispatches, in the heap's memory: one workgroup_state, and one
        # dispatch_state block per (constant count, binding count), reused.
        L = self.machine.view(DispatchLayout)
        self._blocks = [self.heap.malloc_internal(L.wg_size + L.wg_align, tag="workgroup_state_v0")]
        self._workgroup_address = -(-self._blocks[0] // L.wg_align) * L.wg_align
        raw, off = self.heap.cell(self._workgroup_address, L.wg_size)
        write_workgroup_state(self.machine, raw, off, 0)
        self._states: dict[tuple[int, int], DispatchState] = {}
        # ELF formats of another architecture this runtime answered "unsupported" for: the formats
        # a module would need another --target for (Program says which).
        self.foreign_formats: dict[str, str] = {}

    def close(self) -> None:
        self.module.close()
        if not self.heap.closed:
            for block in self._blocks:
                self.heap.free_internal(block)
        self._blocks = []
        self._states.clear()

    def _dispatch_state(self, key: tuple[int, int]) -> DispatchState:
        size = self.machine.view(DispatchLayout).block_size(*key)
        address = self.heap.malloc_internal(size, tag=f"dispatch_state_v0 ({key[0]} constants, {key[1]} bindings)")
        self._blocks.append(address)
        raw, off = self.heap.cell(address, size)
        state = self._states[key] = DispatchState(self.machine, key[0], key[1], raw, off, address)
        return state

    def _supports(self, fmt: str) -> bool:
        """The loaders of this runtime: IREE's ELF loaders (for the target's architecture) and
        ireeabi's Python kernels (any target)."""
        return fmt == python_executable.FORMAT or library_loader.query_support(fmt, self.machine)

    def _query_support(self, ctx: CallContext, format: Ref) -> int:
        fmt = self._vm_buffers.text(format)
        if self._supports(fmt):
            return 1
        arch = library_loader.foreign_arch(fmt, self.machine)
        if arch is not None:
            self.foreign_formats[fmt] = arch
        return 0

    def _load(self, ctx: CallContext, format: Ref, data: Ref, constants: Ref) -> Ref:
        vmb = self._vm_buffers
        fmt = self._vm_buffers.text(format)
        dbuf = vmb.check_deref(data)
        ptr, n = vmb.map_ro(dbuf, 0, vmb.length(dbuf), 1)
        consts = executable_constants(vmb, constants, " (not a multiple of 4)")
        if not self._supports(fmt):  # no loader takes the format: none is tried
            raise no_loader_status(fmt)
        try:
            if fmt == python_executable.FORMAT:
                library = python_executable.load(self.heap.read(ptr, n), tuple(consts))
            else:
                library = library_loader.load_library(fmt, self.heap.read(ptr, n), consts, self.cpu_data,
                                                      self.machine, self.runners)
        except UnresolvedImportError as e:
            raise StatusError(StatusCode.UNAVAILABLE, "no import provider registered for resolving required "
                              "executable imports") from e
        except ExecutableError as e:
            # IREE moves on to the next loader on NOT_FOUND / CANCELLED and, none left, reports the
            # format (the python loader is ireeabi's own and keeps its message).
            if e.code in (StatusCode.NOT_FOUND, StatusCode.CANCELLED) and fmt != python_executable.FORMAT:
                raise no_loader_status(fmt) from e
            raise
        return self._executables.move_ref(self._executables.create(LoadedExecutable(library),
                                                                       tag=f"hal.executable {library.name}"))

    def lookup_function(self, ctx: CallContext, executable: Ref, name: Ref) -> int:
        _, exe = self._executables.deref(executable)
        wanted = self._vm_buffers.text(name)  # read from memory every call
        if "\ufffd" in wanted:  # maybe invalid UTF-8, which text() replaced: compare the exact bytes
            return self._lookup_bytes(exe, name)
        ordinals = exe.ordinals
        if ordinals is None:
            ordinals = exe.ordinals = {}
            for e in reversed(exe.library.exports):  # the first of duplicate names wins, as the scan
                if "\ufffd" not in e.name:  # a replaced name matches only through _lookup_bytes
                    ordinals[e.name] = e.ordinal
        ordinal = ordinals.get(wanted)
        if ordinal is not None:
            return ordinal
        return self._not_found(exe, wanted)

    def _lookup_bytes(self, exe: LoadedExecutable, name: Ref) -> int:
        vmb = self._vm_buffers
        buf = vmb.check_deref(name)
        wanted = self.heap.read(vmb.data(buf), vmb.length(buf))
        for e in exe.library.exports:
            if e.name_bytes == wanted:
                return e.ordinal
        return self._not_found(exe, wanted.decode("utf-8", "replace"))

    @staticmethod
    def _not_found(exe: LoadedExecutable, wanted: str) -> int:
        if not exe.library.has_names:  # only a library without exports may have no names table
            raise StatusError(StatusCode.UNAVAILABLE, "function names not available in library")
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
        map_ro_ref = self._vm_buffers.map_ro_ref
        ptrs, lengths = [], []
        for ref, offset, length in bindings:
            p, n = map_ro_ref(ref, offset, length, 1)  # = map_ro(check_deref(ref), ...)
            ptrs.append(p)
            lengths.append(n)
        need_constants, need_bindings = exe.needs[fid]
        if len(constants) < need_constants or len(ptrs) < need_bindings:
            check_counts(library.exports[fid], len(constants), len(ptrs))  # its status, as it is
        key = (len(constants), len(ptrs))
        state = self._states.get(key)
        if state is None:
            state = self._dispatch_state(key)
        counts = (workgroup_x & _U32, workgroup_y & _U32, workgroup_z & 0xFFFF)
        state.pack(counts, constants, ptrs, lengths)  # workgroup size 1x1x1
        issue_dispatch(library, fid, state.address, self._workgroup_address, counts, self.heap, ptrs, lengths)


def executable_constants(vmb: BufferType, constants: Ref, detail: str = "") -> list[int]:
    """The u32 words of an executable's optional constants vm.buffer (none for a null or non-buffer
    ref), as both modules' executable creation reads them; a length not a multiple of 4 is
    INVALID_ARGUMENT (`detail` ends the message: the loader module says why, module.c does not)."""
    if constants.type == TYPE_NULL or not vmb.ref_type.isa(constants):
        return []
    cbuf = vmb.check_deref(constants)
    clen = vmb.length(cbuf)
    if clen % 4:
        raise StatusError(StatusCode.INVALID_ARGUMENT, "constant buffer data must contain 4-byte elements "
                          f"but data length is {clen}{detail}")
    cptr, _ = vmb.map_ro(cbuf, 0, clen, 1)
    raw = vmb.heap.read(cptr, clen)
    return [int.from_bytes(raw[i:i + 4], "little") for i in range(0, clen, 4)]


__all__ = ["HalLoaderModule", "LoadedExecutable", "MAX_DISPATCH_BINDINGS"]
