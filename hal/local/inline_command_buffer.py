"""One dispatch of a loaded executable as the local HAL's inline command buffer issues it
(runtime/src/iree/hal/local/inline_command_buffer.c, iree_hal_inline_command_buffer_dispatch).

Unlike hal_loader's dispatch, the local HAL checks the export's declared counts exactly: the
function id must be in range (OUT_OF_RANGE "function id N out of range (count: M)"), the constants
must be exactly the export's constant count and the bindings exactly its binding count
(INVALID_ARGUMENT "constant/binding count mismatch, expected N but was provided M"), and every
binding must name a buffer (FAILED_PRECONDITION "required binding N is NULL; ..."). Each binding is
mapped over (offset, length) of its buffer (iree_hal_buffer_map_range's range checks), the
dispatch_state_v0 gets workgroup size 1x1x1 (the static dispatch config has none), max_concurrency 1,
and every workgroup runs in the calling thread, with denormals flushed to zero on x86 and ARM
(`dispatch_scope`: IREE's iree_fpu_state_push around the dispatch, on the FPU the library's code
runs on; base/internal/fpu_state.py says what that does on each kind of library).

Kernels of host machine code run through hal/local/elf_executable.py's `Library.issue` with the state in the
heap's memory (laid out for its data model, which must be the host's); vmvx kernels run through
`hal.local.vmvx_executable` (VM bytecode, any data model).
"""
from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Sequence

from ...base.heap import Heap
from ...base.status import StatusCode, StatusError

from ..buffer import BufferTypes, calculate_range
from .executable_library import DispatchState, issue_dispatch, write_workgroup_state
from ...base.internal.fpu_state import FpuControl, flushes, pushed
from ...layouts.executable_library import DispatchLayout

_U32 = 0xFFFFFFFF


def fpu_of(library: Any) -> "FpuControl | None":
    """The FPU a library's code runs on: the emulated CPU's for an emulated library, none for
    wasmtime's (`fpu` None), the host thread's for every other kind."""
    if hasattr(library, "fpu"):
        return library.fpu
    from .native import host_fpu  # start-up: the C helper only when a dispatch runs

    return host_fpu()


def dispatch_scope(library: Any, target: str) -> AbstractContextManager[None]:
    """The state a dispatch of the inline command buffer runs in, for a runtime whose data model is
    `target`: flushing on the library's FPU when IREE on `target` flushes."""
    return pushed(fpu_of(library), flushes(target))


class LocalDispatcher:
    """Issues dispatches on one heap: the dispatch states (one block per constant/binding count,
    reused) and one workgroup_state, in the heap's memory."""

    def __init__(self, heap: Heap, buffers: BufferTypes) -> None:
        self.heap = heap
        self.machine = heap.machine
        self.buffers = buffers
        self._blocks: list[int] = []
        self._states: dict[tuple[int, int], DispatchState] = {}
        self._workgroup_address = 0

    def close(self) -> None:
        if not self.heap.closed:
            for block in self._blocks:
                self.heap.free_internal(block)
        self._blocks = []
        self._states.clear()

    def _workgroup_state(self) -> int:
        if not self._workgroup_address:
            L = self.machine.view(DispatchLayout)
            block = self.heap.malloc_internal(L.wg_size + L.wg_align, tag="workgroup_state_v0")
            self._blocks.append(block)
            self._workgroup_address = -(-block // L.wg_align) * L.wg_align
            raw, off = self.heap.cell(self._workgroup_address, L.wg_size)
            write_workgroup_state(self.machine, raw, off, 0)
        return self._workgroup_address

    def _state(self, key: tuple[int, int]) -> DispatchState:
        state = self._states.get(key)
        if state is None:
            size = self.machine.view(DispatchLayout).block_size(*key)
            address = self.heap.malloc_internal(size, tag=f"dispatch_state_v0 ({key[0]} constants, "
                                                          f"{key[1]} bindings)")
            self._blocks.append(address)
            raw, off = self.heap.cell(address, size)
            state = self._states[key] = DispatchState(self.machine, key[0], key[1], raw, off, address)
        return state

    def map_binding(self, index: int, buffer: int, offset: int, length: int) -> tuple[int, int]:
        """(address, length) of a binding mapped as iree_hal_buffer_map_range maps it."""
        if not buffer:  # inline_command_buffer.c's own test, before it maps
            raise StatusError(StatusCode.FAILED_PRECONDITION, f"required binding {index} is NULL; all "
                              f"bindings must have a valid pointer")
        b = self.buffers.get(buffer)
        off, n = calculate_range(buffer, b.byte_length, offset, length, self.machine.word_mask)
        return b.storage + off, n

    def dispatch(self, library: Any, function: int, counts: tuple[int, int, int], constants: Sequence[int],
                 bindings: Sequence[tuple[int, int, int]]) -> None:
        """Run export `function` of `library` over `counts` workgroups; bindings are resolved
        (buffer address, offset, length) triples."""
        exports = library.exports
        fid = function & 0xFFFFFFFFFFFFFFFF
        if fid >= len(exports):
            raise StatusError(StatusCode.OUT_OF_RANGE,
                              f"function id {fid} out of range (count: {len(exports)})")
        export = exports[fid]
        # The checks of hal/local/inline_command_buffer.c iree_hal_inline_command_buffer_dispatch
        # (this path has them; hal_loader's does not: modules/hal/loader.py).
        if len(constants) != export.constant_count:
            raise StatusError(StatusCode.INVALID_ARGUMENT, f"constant count mismatch, expected "
                              f"{export.constant_count} but was provided {len(constants)}")
        if len(bindings) != export.binding_count:
            raise StatusError(StatusCode.INVALID_ARGUMENT, f"binding count mismatch, expected "
                              f"{export.binding_count} but was provided {len(bindings)}")
        mapped = [self.map_binding(i, *b) for i, b in enumerate(bindings)]
        ptrs = [p for p, _ in mapped]
        lengths = [n for _, n in mapped]
        counts = (counts[0] & _U32, counts[1] & _U32, counts[2] & 0xFFFF)
        with dispatch_scope(library, self.machine.name):  # denormals flushed, as IREE pushes it
            if hasattr(library, "run_workgroups"):  # a vmvx module: the VM runs each workgroup
                library.run_workgroups(fid, counts, constants, mapped)
                return
            state = self._state((len(constants), len(ptrs)))
            state.pack(counts, constants, ptrs, lengths)
            issue_dispatch(library, fid, state.address, self._workgroup_state(), counts, self.heap, ptrs, lengths)


__all__ = ["LocalDispatcher"]
