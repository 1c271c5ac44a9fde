"""Which loader takes a CPU kernel library: IREE's loaders on the program's data model.

An `embedded-elf-<arch>` library of the host's architecture runs natively (`elf_executable`), unless
the runtime emulates host kernels too; one of another architecture runs in the runtime's emulated
CPU (`emulated_executable`), on memory laid out for that target. `system-elf` libraries (dlopen on
the device) run natively on the host only.
"""
from __future__ import annotations

from typing import Sequence, Union

from ireeabi.vm.machine import Machine

from ireeabi.hal.local import elf_executable, emulated_executable
from ireeabi.hal.local.emulated_executable import EmulatedLibrary, KernelEmulator
from ireeabi.hal.local.executable_library import ExecutableError, ForeignKernelError

KernelLibrary = Union[elf_executable.Library, EmulatedLibrary]


def load_library(format: str, data: bytes, constants: Sequence[int], processor_data: Sequence[int],
                 machine: Machine, emulator: KernelEmulator | None) -> KernelLibrary:
    """Load an ELF kernel library of `format` for a runtime of `machine` (see the module docstring);
    `emulator` is the runtime's (None: no emulated CPU, so only host kernels load)."""
    emulated = emulator is not None and emulator.runs(machine.is_host)
    if not emulated or not isinstance(format, str) or not format.startswith("embedded-elf-"):
        if not machine.is_host and isinstance(format, str) and format.startswith("system-elf-") and \
                elf_executable.query_support(format, machine):
            raise ForeignKernelError(
                "UNAVAILABLE", f"executable format '{format}' is a system library of {machine.name} machine "
                "code, which needs the device's own dynamic loader; compile with the embedded ELF format "
                "(--iree-llvmcpu-link-embedded=true, the default), which ireeabi runs emulated")
        return elf_executable.load_library(format, data, constants, processor_data, machine)
    if not elf_executable.query_support(format, machine):
        raise ExecutableError("NOT_FOUND", f"executable format '{format}' cannot run on {machine.name} "
                              f"(supported: {', '.join(elf_executable.formats(machine)) or 'none'})")
    assert emulator is not None
    if emulator.heap.machine is not machine:
        raise ForeignKernelError("FAILED_PRECONDITION", f"the emulator's heap is {emulator.heap.machine.name}, "
                                 f"the runtime's data model {machine.name}")
    return emulated_executable.load(format, data, emulator, constants, processor_data)


__all__ = ["KernelLibrary", "load_library"]
