"""Embedded-ELF kernel libraries of a foreign architecture, loaded into the program's own heap and
run by an emulated CPU: what IREE's embedded ELF loader does on that device, on memory laid out for
it (runtime/src/iree/hal/local/loaders/embedded_elf_loader.c and elf/elf_module.c).

- `KernelEmulator(heap, emulate_host=False)`: a runtime's emulated CPU (`emulated_cpu.EmulatedCpu`),
  made on the first foreign load and closed with the runtime. `emulate_host=True` runs host (x86_64)
  kernels under the emulator too, so one kernel can run natively and emulated and be compared.
- `load(format, data, emulator, constants, processor_data) -> EmulatedLibrary`: the image is placed in
  the heap at target addresses (`elf_loader.load_into_heap`: relocations of the target's arch file),
  its segments are protected in the emulator as IREE protects them, its initializers run, and the
  library query gets an environment_v0 laid out for the target in the heap (executable constants,
  processor data, an import thunk). Library v0 is then read and verified as for host libraries
  (`elf_executable.read_library`, with the target's struct layouts).
- The library is a `target_library.TargetLibrary`: each workgroup one emulated call; a fault (an
  access the emulator refuses, an invalid or trap instruction) makes it unusable, as a trapped host
  fault does; a kernel running past the emulator's instruction budget ends with
  `InstructionBudgetExceeded`.
"""
from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any, Sequence

from ireeabi.layouts import executable_library as X
from ireeabi.vm.heap import Heap

from ireeabi.hal.local import elf_loader
from ireeabi.hal.local.elf_executable import Image, read_library
from ireeabi.hal.local.executable_library import ExecutableError, ForeignKernelError
from ireeabi.hal.local.target_library import TargetLibrary

if TYPE_CHECKING:  # Unicorn is imported when a runtime first emulates a kernel, not at start-up
    from ireeabi.hal.local.emulated_cpu import EmulatedCpu

_U32 = 0xFFFFFFFF


class KernelEmulator:
    """The emulated CPU of one runtime's heap, made when first needed (see the module docstring).
    `max_instructions` bounds every emulated call (None: no bound)."""

    def __init__(self, heap: Heap, *, emulate_host: bool = False, max_instructions: int | None = None) -> None:
        self.heap = heap
        self.emulate_host = emulate_host
        self.max_instructions = max_instructions
        self._cpu: EmulatedCpu | None = None

    def runs(self, machine_is_host: bool) -> bool:
        """Whether kernels of this runtime run emulated (every foreign kernel; host ones on request)."""
        return not machine_is_host or self.emulate_host

    def cpu(self) -> EmulatedCpu:
        if self._cpu is None:
            from ireeabi.hal.local.emulated_cpu import EmulatedCpu
            self._cpu = EmulatedCpu(self.heap)
        return self._cpu

    def close(self) -> None:
        if self._cpu is not None:
            cpu, self._cpu = self._cpu, None
            cpu.close()


def load(format: str, data: bytes, emulator: KernelEmulator, constants: Sequence[int] = (),
         processor_data: Sequence[int] = ()) -> TargetLibrary:
    """Load an `embedded-elf-<arch>` library into the emulator's heap (see the module docstring)."""
    from ireeabi.hal.local.emulated_cpu import EmulatedFault
    heap = emulator.heap
    m = heap.machine
    image = elf_loader.load_into_heap(bytes(data), heap)
    blocks: list[int] = []
    try:
        cpu = emulator.cpu()
        cpu.invalidate(image.start, image.size)  # an earlier image may have run from these pages
        for address, size, readable, writable, executable in image.segments:
            perms = ("r" if readable else "-") + ("w" if writable else "-") + ("x" if executable else "-")
            cpu.protect(address, size, perms)
        for i, address in enumerate(image.initializers):
            cpu.call(address, [], max_instructions=emulator.max_instructions, what=f"initializer {i}")

        env_decl = X.iree_hal_executable_environment_v0_t
        env_lay = m.layout(env_decl)
        env = m.ctype(env_decl)()

        def import_thunk(fn: int, params: int, context: int, reserved: int) -> int:
            raise ForeignKernelError("UNIMPLEMENTED", "a foreign kernel called an import through the "
                                     "environment's thunk: imports of emulated kernels are not supported")
        env.import_thunk = cpu.host_function(import_thunk, 4, "import_thunk")
        for i, word in enumerate(list(processor_data)[:X.IREE_HAL_PROCESSOR_DATA_CAPACITY_V0]):
            env.processor.data[i] = word
        if constants:
            arr = heap.malloc(4 * len(constants), tag="executable constants")
            blocks.append(arr)
            heap.write(arr, b"".join(struct.pack("<I", c & _U32) for c in constants))
            env.constants = arr
        env_addr = heap.malloc(env_lay.size, align=max(env_lay.align, 8), tag="environment_v0")
        blocks.append(env_addr)
        heap.write(env_addr, bytes(env))

        query = image.lookup(X.IREE_HAL_EXECUTABLE_LIBRARY_EXPORT_NAME)
        lib_addr = cpu.call(query, [X.IREE_HAL_EXECUTABLE_LIBRARY_VERSION_LATEST, env_addr],
                            max_instructions=emulator.max_instructions, what="iree_hal_executable_library_query")
        info = read_library(Image(image.start, image.end, m, heap.read), lib_addr, constants)
        if info.imports:  # every import optional: NULL functions and contexts
            tables = heap.malloc(2 * m.pointer_size * len(info.imports), zero=True, tag="import tables")
            blocks.append(tables)
            env.import_funcs = tables
            env.import_contexts = tables + m.pointer_size * len(info.imports)
            heap.write(env_addr, bytes(env))

        def call(function: int, args: Sequence[int], what: str) -> int:
            return emulator.cpu().call(function, args, max_instructions=emulator.max_instructions, what=what)
        return TargetLibrary(format, info.name, info.version, info.imports, info.exports, info.constant_count,
                             info.has_names, env_addr, heap, call, (EmulatedFault,),
                             lambda e: (f"{e.kind} at pc 0x{e.pc:x}", e.address),
                             lambda: _free(heap, blocks, image))
    except EmulatedFault as e:
        _free(heap, blocks, image)
        raise ExecutableError("INTERNAL", f"loading {format} faulted: {e}") from None
    except BaseException:
        _free(heap, blocks, image)
        raise


def _free(heap: Heap, blocks: list[int], image: Any) -> None:
    for block in blocks:
        heap.free(block)
    image.close()


__all__ = ["KernelEmulator", "load"]
