"""A kernel library that lives in a runtime's heap and runs in an emulator (Unicorn for foreign
machine code, wasmtime for wasm32): the library interface hal_loader and the `hal` module use
(`elf_executable.Library`'s), over target addresses.

Each workgroup of a dispatch is one call of the export with the environment, dispatch state and
workgroup state (z outer, x inner, as the host helper's loop), all target addresses in the heap. A
fault the emulator reports ends the dispatch with a fault result and makes the library unusable, as
a trapped host fault does; any other refusal of the emulator (an instruction budget) comes out as
the `ExecutableError` it is.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ...layouts import executable_library as X
from ...base.heap import Heap

from .executable_library import (DispatchResult, ExecutableError, ForeignKernelError,
                                                  LoadedLibrary)
from .native import FAULTED
from ...layouts.executable_library import DispatchLayout
from ...base.status import StatusCode

_U32 = 0xFFFFFFFF
_ID = struct.Struct("<I")
# workgroup_id_x, _y (uint32) and _z (uint16, then the uint16 `reserved` that must stay zero): one
# write per workgroup where the three sit together, as they do in every data model.
_IDS = struct.Struct("<IIHH")

# call(function, args, what) -> int: one call of target code, with the runtime's budget.
Caller = Callable[[int, Sequence[int], str], int]
# A fault the emulator raised -> (what happened, target address or None when the emulator does not say).
FaultReader = Callable[[BaseException], "tuple[str, int | None]"]


@dataclass(eq=False)
class TargetLibrary(LoadedLibrary):
    """A loaded library in a heap (see the module docstring)."""
    has_names: bool
    environment_address: int  # a target address in `heap`
    heap: Heap
    _call: Caller = field(repr=False)
    _faults: tuple = field(repr=False)  # the exception types that are kernel faults
    _fault_of: FaultReader = field(repr=False)
    _release: Callable[[], None] = field(repr=False)  # frees what the library holds
    unusable: str = ""
    closed: bool = False
    # The FPU its code runs on, whose state a dispatch pushes (fpu_state): the emulated CPU; None
    # under wasmtime, whose state IREE's wasm build leaves alone.
    fpu: Any = None

    def issue(self, ordinal: int, dispatch_state: int, workgroup_state: int,
              workgroup_count: tuple[int, int, int], heap: Any = None) -> DispatchResult:
        """Run every workgroup of export `ordinal` with a prepared dispatch_state and workgroup_state:
        target addresses in the library's heap."""
        if heap is not None and heap is not self.heap:
            raise ForeignKernelError(StatusCode.FAILED_PRECONDITION, f"library {self.name} was loaded into another "
                                     "runtime's memory")
        if self.closed:
            raise ExecutableError(StatusCode.FAILED_PRECONDITION, f"library {self.name} was unloaded")
        if self.unusable:
            raise ExecutableError(StatusCode.FAILED_PRECONDITION, f"library {self.name} is unusable: {self.unusable}")
        if not 0 <= ordinal < len(self.exports):
            raise ExecutableError(StatusCode.INVALID_ARGUMENT, "entry point ordinal out of bounds")
        export = self.exports[ordinal]
        heap = self.heap
        ids = heap.machine.view(DispatchLayout).wg_ids
        together = ids[1] == ids[0] + 4 and ids[2] == ids[0] + 8
        count_x, count_y, count_z = workgroup_count
        args = [self.environment_address, dispatch_state, workgroup_state]
        calls = 0
        for z in range(count_z):
            for y in range(count_y):
                for x in range(count_x):
                    if together and z <= 0xFFFF:
                        heap.pack(_IDS, workgroup_state + ids[0], x & _U32, y & _U32, z, 0)
                    else:
                        for off, value in zip(ids, (x, y, z)):
                            heap.write(workgroup_state + off, _ID.pack(value & _U32))
                    try:
                        status = self._call(export.function, args, f"kernel {export.name} workgroup ({x}, {y}, {z})")
                    except self._faults as e:
                        cause, address = self._fault_of(e)
                        self.unusable = f"export {export.name} faulted at workgroup ({x}, {y}, {z}): {cause}"
                        where = None if address is None else self.heap.host_address(address)
                        return DispatchResult(FAULTED, calls, (cause, where, (x, y, z)))
                    calls += 1
                    status &= _U32
                    if status:
                        return DispatchResult(status - (1 << 32) if status >> 31 else status, calls)
        return DispatchResult(0, calls)

    def close(self) -> None:
        """Free what the library holds (later dispatches fail clearly)."""
        if not self.closed:
            self.closed = True
            self._release()


class Environment:
    """environment_v0 of a library in a heap, laid out for the heap's target (`address`), with the
    executable constants and processor data a query reads, and the blocks it owns (`blocks`)."""

    def __init__(self, heap: Heap, constants: Sequence[int], processor_data: Sequence[int],
                 import_thunk: int) -> None:
        m = heap.machine
        self.heap = heap
        self.blocks: list[int] = []
        self.fields = env = m.ctype(X.iree_hal_executable_environment_v0_t)()
        env.import_thunk = import_thunk
        for i, word in enumerate(list(processor_data)[:X.IREE_HAL_PROCESSOR_DATA_CAPACITY_V0]):
            env.processor.data[i] = word
        try:
            if constants:
                env.constants = self._block(4 * len(constants), "executable constants")
                heap.write(env.constants, b"".join(_ID.pack(c & _U32) for c in constants))
            lay = m.layout(X.iree_hal_executable_environment_v0_t)
            self.address = self._block(lay.size, "environment_v0", max(lay.align, 8))
            heap.write(self.address, bytes(env))
        except BaseException:
            self.free()
            raise

    def _block(self, size: int, tag: str, align: int | None = None) -> int:
        address = self.heap.malloc(size, zero=True, align=align, tag=tag)
        self.blocks.append(address)
        return address

    def leave_imports_unresolved(self, count: int) -> None:
        """NULL functions and contexts for `count` optional imports (the library declares only those)."""
        if count:
            word = self.heap.machine.pointer_size
            tables = self._block(2 * word * count, "import tables")
            self.fields.import_funcs, self.fields.import_contexts = tables, tables + word * count
            self.heap.write(self.address, bytes(self.fields))

    def free(self) -> None:
        while self.blocks:
            self.heap.free(self.blocks.pop())


def unsupported_import(kind: str) -> Callable[..., int]:
    """The environment's import thunk for kernels whose imports ireeabi does not serve: a call ends
    the kernel with UNIMPLEMENTED."""
    def import_thunk(fn: int, params: int, context: int, reserved: int) -> int:
        raise ForeignKernelError(StatusCode.UNIMPLEMENTED,
                                 f"a {kind} kernel called an import through the environment's "
                                 "thunk: imports of such kernels are not supported")
    return import_thunk



__all__ = ["TargetLibrary", "Caller", "FaultReader", "Environment", "unsupported_import"]
