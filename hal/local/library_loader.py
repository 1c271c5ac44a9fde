"""Which loader takes a CPU kernel library: IREE's loaders on the program's data model.

An `embedded-elf-<arch>` library of the host's architecture runs natively (`elf_executable`), unless
the runtime emulates host kernels too; one of another architecture runs in the runtime's emulated
CPU (`emulated_executable`), on memory laid out for that target. `system-elf` libraries (dlopen on
the device) run natively on the host only. `system-wasm-wasm_32` libraries run under wasmtime on a
wasm32 runtime (`wasm_executable`). `KernelRunners` holds a runtime's emulators.
"""
from __future__ import annotations

from typing import Sequence, Union

from ireeabi.vm.heap import Heap
from ireeabi.vm.machine import Machine

from ireeabi.hal.local import elf_executable, emulated_executable, wasm_executable
from ireeabi.hal.local.emulated_executable import KernelEmulator
from ireeabi.hal.local.executable_library import ExecutableError, ForeignKernelError
from ireeabi.hal.local.native import check_cpu_time, default_cpu_time
from ireeabi.hal.local.target_library import TargetLibrary
from ireeabi.hal.local.wasm_executable import WasmKernels

KernelLibrary = Union[elf_executable.Library, TargetLibrary]


class KernelRunners:
    """The emulators of one runtime's heap, each made at its first use: Unicorn for ELF kernels of
    another architecture (or every ELF kernel, with `emulate_host`), wasmtime for wasm32.
    `max_instructions` bounds every emulated call (None: no bound of ours); `native_cpu_time` the
    CPU seconds of each dispatch of host kernels run natively (None: derived from
    `max_instructions`, `native.default_cpu_time`)."""

    def __init__(self, heap: Heap, *, emulate_host: bool = False, max_instructions: int | None = None,
                 native_cpu_time: float | None = None) -> None:
        self.native_cpu_time = check_cpu_time(native_cpu_time) if native_cpu_time is not None else \
            default_cpu_time(max_instructions)
        self.elf = KernelEmulator(heap, emulate_host=emulate_host, max_instructions=max_instructions)
        if emulate_host:
            # No host code touches the heap, so no host guard pages: the emulator would mirror
            # each one, and a protection change splits its mapping and drops translated code.
            heap.native_kernels = False
        self.wasm = WasmKernels(heap, max_instructions=max_instructions)

    def close(self) -> None:
        self.elf.close()
        self.wasm.close()


def query_support(format: str, machine: Machine) -> bool:
    """True when IREE's CPU loaders on `machine`'s data model accept `format`."""
    if machine.name == wasm_executable.TARGET:
        return format == wasm_executable.FORMAT
    return elf_executable.query_support(format, machine)


def foreign_arch(format: str, machine: Machine) -> str | None:
    """The target whose kernels `format` holds, when that is not `machine`'s (None otherwise)."""
    if format == wasm_executable.FORMAT:
        return wasm_executable.TARGET if machine.name != wasm_executable.TARGET else None
    return elf_executable.foreign_arch(format, machine)


def load_library(format: str, data: bytes, constants: Sequence[int], processor_data: Sequence[int],
                 machine: Machine, runners: KernelRunners | None) -> KernelLibrary:
    """Load a CPU kernel library of `format` for a runtime of `machine` (see the module docstring);
    `runners` are the runtime's emulators (None: only host kernels load)."""
    if runners is not None and isinstance(format, str) and format == wasm_executable.FORMAT and \
            machine.name == wasm_executable.TARGET:
        return wasm_executable.load(format, data, runners.wasm, constants, processor_data)
    emulated = runners is not None and runners.elf.runs(machine.is_host)
    if not emulated or not isinstance(format, str) or not format.startswith("embedded-elf-"):
        if not machine.is_host and isinstance(format, str) and format.startswith("system-elf-") and \
                elf_executable.query_support(format, machine):
            raise ForeignKernelError(
                "UNAVAILABLE", f"executable format '{format}' is a system library of {machine.name} machine "
                "code, which needs the device's own dynamic loader; compile with the embedded ELF format "
                "(--iree-llvmcpu-link-embedded=true, the default), which ireeabi runs emulated")
        return elf_executable.load_library(format, data, constants, processor_data, machine,
                                           runners.native_cpu_time if runners is not None else None)
    if not elf_executable.query_support(format, machine):
        raise ExecutableError("NOT_FOUND", f"executable format '{format}' cannot run on {machine.name} "
                              f"(supported: {', '.join(elf_executable.formats(machine)) or 'none'})")
    assert runners is not None
    if runners.elf.heap.machine is not machine:
        raise ForeignKernelError("FAILED_PRECONDITION", f"the emulator's heap is {runners.elf.heap.machine.name}, "
                                 f"the runtime's data model {machine.name}")
    return emulated_executable.load(format, data, runners.elf, constants, processor_data)


__all__ = ["KernelLibrary", "KernelRunners", "load_library", "query_support", "foreign_arch"]
