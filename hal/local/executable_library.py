"""What every kernel library kind shares: its errors, export descriptions, dispatch results, and the
dispatch_state_v0 / workgroup_state_v0 memory a dispatch hands it.

hal_loader dispatches through `DispatchState`, laid out for the runtime's data model in its heap; the
library kinds (`executable`: ELF machine code on the host, `python_executable`: Python kernels on any
target) read it from there.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, Sequence

from ...layouts import executable_library as X
from ...base.machine import Machine
from ...base.status import IreeFaultError, StatusCode, StatusError
from ...layouts.executable_library import DispatchLayout

_U32 = 0xFFFFFFFF

class ExecutableError(StatusError):
    """A kernel library that cannot be loaded or dispatched: the status (`code`, `message`) IREE's
    loader or dispatch returns for it, which a caller passes on as it is."""


class UnresolvedImportError(ExecutableError):
    """A library needs an import no provider resolves. ireeabi has no import provider; hal_loader
    reports this as IREE does for a NULL provider (see loader_module)."""


class ForeignKernelError(ExecutableError):
    """A kernel library of a target that is not the host: its machine code cannot run here."""


@dataclass(frozen=True)
class ExportInfo:
    ordinal: int
    name: str  # decoded for display (invalid UTF-8 replaced)
    function: int  # address of the dispatch function
    constant_count: int
    binding_count: int
    workgroup_size: tuple[int, int, int]
    local_memory_pages: int
    flags: int
    name_bytes: bytes = b""  # the exact C string: lookups compare bytes, as IREE does


@dataclass(eq=False)
class LoadedLibrary:
    """What every loaded CPU library declares (library v0, verified): hal_loader and the `hal`
    module read these, whichever loader made the library."""
    format: str
    name: str
    version: int
    imports: tuple[str, ...]
    exports: tuple[ExportInfo, ...]
    constant_count: int

    def export(self, name: str) -> ExportInfo:
        for e in self.exports:
            if e.name == name:
                return e
        raise ExecutableError(StatusCode.NOT_FOUND, f"export '{name}' not found in library")


@dataclass
class DispatchResult:
    status: int  # the kernel's return value of the last call (0 = success)
    calls: int  # workgroups called
    # A trapped fault: (signal, or the emulated CPU's kind of fault; faulting host address;
    # workgroup id (x, y, z)); the status is then the helper's FAULTED and the library is unusable.
    fault: "tuple[int | str, int | None, tuple[int, int, int]] | None" = None


def check_counts(export: ExportInfo, constant_count: int, binding_count: int) -> None:
    """Refuse fewer constants or bindings than the export declares: the kernel would read past the
    arrays. IREE's hal_loader makes no such check (its kernel reads whatever lies there); the
    messages are those of IREE's inline command buffer, which does check."""
    if constant_count < export.constant_count:
        raise ExecutableError(StatusCode.INVALID_ARGUMENT, f"constant count mismatch, expected {export.constant_count} "
                              f"but was provided {constant_count}")
    if binding_count < export.binding_count:
        raise ExecutableError(StatusCode.INVALID_ARGUMENT, f"binding count mismatch, expected {export.binding_count} "
                              f"but was provided {binding_count}")


class DispatchState:
    """dispatch_state_v0 plus the constant and binding arrays it points at, in one block of memory
    laid out for `machine`: `memory[offset:]` is the block and `address` where the data model sees
    it (a heap block, or host memory for `Library.dispatch`). The arrays' codecs are compiled once
    per (constant count, binding count)."""

    def __init__(self, machine: Machine, constant_count: int, binding_count: int, memory: Any, offset: int,
                 address: int) -> None:
        L = machine.view(DispatchLayout)
        self._L = L
        self.machine = machine
        self.memory, self.offset, self.address = memory, offset, address
        # as a (truncating) C field store leaves them
        self.constant_count, self.binding_count = constant_count & 0xFFFF, binding_count & 0xFF
        p = L.word_size
        c_off = L.size
        ptrs_off = -(-(c_off + 4 * max(constant_count, 1)) // p) * p
        lengths_off = ptrs_off + p * max(binding_count, 1)
        self._constants_off, self._ptrs_off, self._lengths_off = c_off, ptrs_off, lengths_off
        self._constants_fmt = struct.Struct(f"<{constant_count}I")
        self._bindings_fmt = struct.Struct(f"<{binding_count}{L.word_code}")
        L.counts_fmt.pack_into(memory, offset, 0, 0, 0, self.constant_count, 0, 0, 0, 1, self.binding_count)
        L.arrays_fmt.pack_into(memory, offset + L.arrays_off, address + c_off, address + ptrs_off,
                               address + lengths_off)

    @property
    def state(self) -> Any:
        """A ctypes view of the dispatch_state_v0 (laid out for the data model) over its memory."""
        return self.machine.ctype(X.iree_hal_executable_dispatch_state_v0_t).from_buffer(self.memory, self.offset)

    def set(self, *, workgroup_size: tuple[int, int, int], workgroup_count: tuple[int, int, int],
            constants: Sequence[int], bindings: Sequence[tuple[int, int]]) -> None:
        """Any caller's values, truncated as C field stores truncate them (`pack` is the dispatcher's)."""
        (sx, sy, sz), (cx, cy, cz) = workgroup_size, workgroup_count
        self._L.counts_fmt.pack_into(self.memory, self.offset, sx & _U32, sy & _U32, sz & 0xFFFF,
                                     self.constant_count, cx & _U32, cy & _U32, cz & 0xFFFF, 1,
                                     self.binding_count)
        mask = (1 << (8 * self._L.word_size)) - 1
        self._pack_arrays([c & _U32 for c in constants], [p & mask for p, _ in bindings],
                          [n & mask for _, n in bindings])

    def pack(self, counts: tuple[int, int, int], constants: Sequence[int], ptrs: Sequence[int],
             lengths: Sequence[int]) -> None:
        """`set` with workgroup size 1x1x1 for in-range counts (x, y as uint32, z as uint16), exactly
        `constant_count` constants (masked to uint32 here) and `binding_count` binding words."""
        self._L.counts_fmt.pack_into(self.memory, self.offset, 1, 1, 1, self.constant_count, counts[0], counts[1],
                                     counts[2], 1, self.binding_count)
        self._pack_arrays([c & _U32 for c in constants] if constants else (), ptrs, lengths)

    def point_constants(self, address: int) -> None:
        """Make the state's constants pointer `address` (memory the caller keeps alive during the
        dispatch) instead of the block's own array, as a dispatcher that hands the kernel a pointer
        into its argument buffer does (hal_loader's module.c); `pack` then passes no constants."""
        L = self._L
        mask = (1 << (8 * L.word_size)) - 1
        L.arrays_fmt.pack_into(self.memory, self.offset + L.arrays_off, address & mask,
                               self.address + self._ptrs_off, self.address + self._lengths_off)

    def _pack_arrays(self, constants: Sequence[int], ptrs: Sequence[int], lengths: Sequence[int]) -> None:
        memory, offset = self.memory, self.offset
        if constants:
            self._constants_fmt.pack_into(memory, offset + self._constants_off, *constants)
        if ptrs:
            self._bindings_fmt.pack_into(memory, offset + self._ptrs_off, *ptrs)
            self._bindings_fmt.pack_into(memory, offset + self._lengths_off, *lengths)


def write_workgroup_state(machine: Machine, memory: Any, offset: int, processor_id: int = 0) -> None:
    """A zeroed workgroup_state_v0 with `processor_id` (the ids are set per workgroup call)."""
    L = machine.view(DispatchLayout)
    memory[offset:offset + L.wg_size] = bytes(L.wg_size)
    struct.pack_into("<I", memory, offset + L.wg_processor_off, processor_id & _U32)


def fault_message(export: str, fault: tuple, ptrs: list[int], lengths: list[int], heap: Any) -> str:
    """What a trapped kernel fault tells: the export, the workgroup, the address, and where it lies
    against the bindings (IREE's process dies here; the library is unusable from now on). The cause
    is a signal number for host code, or the emulated CPU's kind of fault for foreign code."""
    cause, host_address, (x, y, z) = fault
    what = f"signal {cause}" if isinstance(cause, int) else cause
    if host_address is None:  # the emulator did not say where (a wasm trap)
        return (f"kernel {export} faulted in workgroup ({x}, {y}, {z}): {what}; {_DIES}")
    address = host_address - heap.host_address(0)  # the heap's own address for it
    where = "outside every binding"
    best = None  # (distance, text) of the nearest binding the address lies before or past
    for i, (p, n) in enumerate(zip(ptrs, lengths)):
        if p <= address < p + n:
            where = f"inside binding {i} at offset {address - p}"
            best = None
            break
        if address >= p + n:
            text = f"{address - (p + n)} byte(s) past the end of binding {i} ({n} bytes)"
            distance = address - (p + n)
        else:
            text = f"{p - address} byte(s) before the start of binding {i} ({n} bytes)"
            distance = p - address
        if best is None or distance < best[0]:
            best = (distance, text)
    if best is not None:
        where = best[1]
    return (f"kernel {export} faulted in workgroup ({x}, {y}, {z}): {what} at address "
            f"0x{address:x}, {where}; {_DIES}")


# IREE runs a kernel on its own thread with no handler: a fault kills its process.
_DIES = ("IREE's own runtime dies there (nothing in it catches a kernel's fault); the executable cannot "
         "be dispatched again")


def issue_dispatch(library: Any, ordinal: int, dispatch_state: int, workgroup_state: int,
                   workgroup_count: tuple[int, int, int], heap: Any, ptrs: list[int], lengths: list[int]) -> None:
    """Run a dispatch's workgroups (`library.issue`) as the local HAL's dispatch does: a kernel's
    non-zero return is IREE's INTERNAL status (loaders' issue_call); a fault, which kills IREE's
    process, is IreeFaultError naming the kernel, workgroup, address and binding, and so is any later
    dispatch of that library; the library's own refusals (an emulated kernel's instruction budget,
    ireeabi's bound: ExecutableErrors, which are StatusErrors) are passed on as they are."""
    unusable = getattr(library, "unusable", "")
    if unusable:
        raise IreeFaultError(f"library {library.name} cannot be dispatched again: {unusable} (IREE's own "
                             "runtime died at that fault)")
    result = library.issue(ordinal, dispatch_state, workgroup_state, workgroup_count, heap)
    if result.fault is not None:
        raise IreeFaultError(fault_message(library.exports[ordinal].name, result.fault, ptrs, lengths, heap))
    if result.status != 0:
        raise StatusError(StatusCode.INTERNAL, f"executable entry point returned catastrophic error {result.status}")



__all__ = ["LoadedLibrary", "ExecutableError", "ForeignKernelError", "UnresolvedImportError", "ExportInfo", "DispatchResult",
           "check_counts", "DispatchState", "write_workgroup_state", "fault_message", "issue_dispatch"]
