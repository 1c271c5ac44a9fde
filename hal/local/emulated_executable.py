"""Embedded-ELF kernel libraries of a foreign architecture, loaded into the program's own heap and
run by an emulated CPU: what IREE's embedded ELF loader does on that device, on memory laid out for
it (runtime/src/iree/hal/local/loaders/embedded_elf_loader.c and elf/elf_module.c).

- `KernelEmulator(heap, emulate_host=False)`: a runtime's emulated CPU (`emulated_cpu.EmulatedCpu`),
  made on the first foreign load and closed with the runtime. `emulate_host=True` runs host (x86_64)
  kernels under the emulator too, so one kernel can run natively and emulated and be compared.
  Where its kernels run in the CPU (a heap of a CPU target: `CPU_TARGETS`), it marks the heap
  (`Heap.emulated_kernels`) from the start, so HAL buffer storage is guarded
  (`Heap.guarded_allocations`: emulator-only guard pages where no kernel runs natively), guard pages
  made before the CPU exists included: an emulated kernel's access past its binding faults.
- `load(format, data, emulator, constants, processor_data) -> EmulatedLibrary`: the image is placed in
  the heap at target addresses (`elf_heap_loader.load_into_heap`: relocations of the target's arch file),
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

from typing import TYPE_CHECKING, Sequence

from ...layouts import executable_library as X
from ...base.heap import Heap

from . import elf_heap_loader
from .elf_executable import Image, read_library
from .executable_library import ExecutableError
from .target_library import Environment, TargetLibrary, unsupported_import
from ...base.status import StatusCode

if TYPE_CHECKING:  # Unicorn is imported when a runtime first emulates a kernel, not at start-up
    from .emulated_cpu import EmulatedCpu



# The targets the emulated CPU runs (emulated_cpu.TARGETS, which imports Unicorn).
CPU_TARGETS = ("riscv32", "riscv64", "armv7", "aarch64", "i386", "x86_64")


class KernelEmulator:
    """The emulated CPU of one runtime's heap, made when first needed (see the module docstring).
    `max_instructions` bounds every emulated call (None: no bound)."""

    def __init__(self, heap: Heap, *, emulate_host: bool = False, max_instructions: int | None = None) -> None:
        self.heap = heap
        self.emulate_host = emulate_host
        self.max_instructions = max_instructions
        self._cpu: EmulatedCpu | None = None
        if self.runs(heap.machine.is_host) and heap.machine.name in CPU_TARGETS:
            heap.emulated_kernels = True  # its bindings get guard pages (the emulator's)

    def runs(self, machine_is_host: bool) -> bool:
        """Whether kernels of this runtime run emulated (every foreign kernel; host ones on request)."""
        return not machine_is_host or self.emulate_host

    def cpu(self) -> EmulatedCpu:
        if self._cpu is None:
            from .emulated_cpu import EmulatedCpu
            self._cpu = EmulatedCpu(self.heap)
        return self._cpu

    def close(self) -> None:
        if self._cpu is not None:
            cpu, self._cpu = self._cpu, None
            cpu.close()


def load(format: str, data: bytes, emulator: KernelEmulator, constants: Sequence[int] = (),
         processor_data: Sequence[int] = ()) -> TargetLibrary:
    """Load an `embedded-elf-<arch>` library into the emulator's heap (see the module docstring)."""
    from .emulated_cpu import EmulatedFault
    heap = emulator.heap
    image = elf_heap_loader.load_into_heap(bytes(data), heap)
    env: Environment | None = None

    def release() -> None:
        if env is not None:
            env.free()
        image.close()

    def call(function: int, args: Sequence[int], what: str) -> int:
        return emulator.cpu().call(function, args, max_instructions=emulator.max_instructions, what=what)
    try:
        cpu = emulator.cpu()
        cpu.invalidate(image.start, image.size)  # an earlier image may have run from these pages
        for address, size, readable, writable, executable in image.segments:
            perms = ("r" if readable else "-") + ("w" if writable else "-") + ("x" if executable else "-")
            cpu.protect(address, size, perms)
        for i, address in enumerate(image.initializers):
            call(address, [], f"initializer {i}")
        env = Environment(heap, constants, processor_data,
                          cpu.host_function(unsupported_import("foreign"), 4, "import_thunk"))
        lib_addr = call(image.lookup(X.IREE_HAL_EXECUTABLE_LIBRARY_EXPORT_NAME),
                        [X.IREE_HAL_EXECUTABLE_LIBRARY_VERSION_LATEST, env.address], "iree_hal_executable_library_query")
        info = read_library(Image(image.start, image.end, heap.machine, heap.read), lib_addr, constants)
        env.leave_imports_unresolved(len(info.imports))
    except EmulatedFault as e:
        release()
        raise ExecutableError(StatusCode.INTERNAL, f"loading {format} faulted: {e}") from None
    except BaseException:
        release()
        raise
    return TargetLibrary(format, info.name, info.version, info.imports, info.exports, info.constant_count,
                         info.has_names, env.address, heap, call, (EmulatedFault,),
                         lambda e: (f"{e.kind} at pc 0x{e.pc:x}", e.address),  # type: ignore[attr-defined]  # an EmulatedFault (the class given)
                         release)


__all__ = ["CPU_TARGETS", "KernelEmulator", "load"]
