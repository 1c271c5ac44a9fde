"""Which loader takes a CPU kernel library: IREE's loaders on the program's data model.

An `embedded-elf-<arch>` library of the host's architecture runs natively (`elf_executable`), unless
the runtime emulates host kernels too; one of another architecture runs in the runtime's emulated
CPU (`emulated_executable`), on memory laid out for that target. `system-elf` libraries (dlopen on
the device) run natively on the host only. `system-wasm-wasm_32` libraries run under wasmtime on a
wasm32 runtime (`wasm_executable`). `KernelRunners` holds a runtime's emulators.

`place_library` says, before anything runs, where a module's executable would run on a data model
and, when it would not, the status the load would end with: the same decisions (`query_support`,
`foreign_arch`, `load_library` on a scratch heap of that data model) the `hal` and `hal_loader`
modules make when a program creates it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence, Union

from ...base.heap import Heap
from ...base.machine import Machine

from ...base.internal import cpu
from . import elf_executable, vmvx_executable, wasm_executable
from .executable_library import ExecutableError, ForeignKernelError, UnresolvedImportError
from .native import check_cpu_time, default_cpu_time
from .target_library import TargetLibrary
from .wasm_executable import WasmKernels
from ...base.status import StatusCode

if TYPE_CHECKING:
    from .emulated_executable import KernelEmulator

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
        self.heap = heap
        self.emulate_host = emulate_host
        self.max_instructions = max_instructions
        self._elf: KernelEmulator | None = None
        if self.emulates(heap.machine.is_host):
            self.elf  # made with the runtime: it marks the heap whose kernels it runs
        if emulate_host:
            # No host code touches the heap, so no host guard pages: the emulator would mirror
            # each one, and a protection change splits its mapping and drops translated code.
            heap.native_kernels = False
        self.wasm = WasmKernels(heap, max_instructions=max_instructions)

    def emulates(self, machine_is_host: bool) -> bool:
        """Whether ELF kernels of a runtime run emulated (`KernelEmulator.runs`): every foreign
        kernel; host ones with `emulate_host`."""
        return not machine_is_host or self.emulate_host

    @property
    def elf(self) -> KernelEmulator:
        """The emulated CPU's runner (Unicorn, itself made at the first emulated load); a runtime
        whose kernels all run natively never imports it."""
        if self._elf is None:
            from .emulated_executable import KernelEmulator

            self._elf = KernelEmulator(self.heap, emulate_host=self.emulate_host,
                                       max_instructions=self.max_instructions)
        return self._elf

    def close(self) -> None:
        if self._elf is not None:
            self._elf.close()
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
    emulated = runners is not None and runners.emulates(machine.is_host)
    if not emulated or not isinstance(format, str) or not format.startswith("embedded-elf-"):
        if not machine.is_host and isinstance(format, str) and format.startswith("system-elf-") and \
                elf_executable.query_support(format, machine):
            raise ForeignKernelError(
                StatusCode.UNAVAILABLE, f"executable format '{format}' is a system library of {machine.name} machine "
                "code, which needs the device's own dynamic loader; compile with the embedded ELF format "
                "(--iree-llvmcpu-link-embedded=true, the default), which ireeabi runs emulated")
        return elf_executable.load_library(format, data, constants, processor_data, machine,
                                           runners.native_cpu_time if runners is not None else None)
    if not elf_executable.query_support(format, machine):
        raise ExecutableError(StatusCode.NOT_FOUND, f"executable format '{format}' cannot run on {machine.name} "
                              f"(supported: {', '.join(elf_executable.formats(machine)) or 'none'})")
    assert runners is not None
    if runners.elf.heap.machine is not machine:
        raise ForeignKernelError(StatusCode.FAILED_PRECONDITION,
                                 f"the emulator's heap is {runners.elf.heap.machine.name}, "
                                 f"the runtime's data model {machine.name}")
    from . import emulated_executable

    library = emulated_executable.load(format, data, runners.elf, constants, processor_data)
    library.fpu = runners.elf.cpu()  # a dispatch's FPU state is the emulated CPU's (fpu_state)
    return library


# Where an executable runs (Placement.where), and how each place is said.
PLACES = {
    "native": "natively on the host",
    "emulated": "in the emulated CPU (Unicorn)",
    "wasmtime": "under wasmtime",
    "vmvx": "in the VM's vmvx interpreter",
    "refused": "refused",
}
# Target instructions a library's load may run in the emulators when `place_library` checks it (its
# initializers and iree_hal_executable_library_query: a few thousand in iree-compile's libraries).
PLACE_MAX_INSTRUCTIONS = 10_000_000
STATIC_FORMAT = "static"  # iree-compile's format of --iree-llvmcpu-link-static libraries


def no_loader_message(format: str) -> str:
    """IREE's executable cache, when no loader takes `format` (its status is NOT_FOUND)."""
    return f"no executable loader registered for the given executable format '{format}'"


@dataclass(frozen=True)
class Placement:
    """Where an executable of `format` runs on `target` (a key of PLACES); when refused, the
    `status` code and `message` the load ends with, and `reason` why (also, when it runs, a
    note: e.g. that the image was not loaded to check it). `runs_on`: the target whose kernels a
    refused library holds, when it is another's."""

    format: str
    target: str
    where: str
    status: StatusCode | None = None
    message: str = ""
    reason: str = ""
    runs_on: str | None = None
    checked: bool = False  # the image was loaded on a scratch heap of `target`

    @property
    def runs(self) -> bool:
        return self.where != "refused"

    def as_dict(self) -> dict:
        return {"format": self.format, "target": self.target, "placement": self.where,
                "runs": self.runs, "where": PLACES[self.where],
                "status": self.status.name if self.status is not None else None,
                "message": self.message, "reason": self.reason, "runs_on": self.runs_on,
                "checked": self.checked}


def place_library(format: str, data: bytes | None, machine: Machine, *, vmvx: bool = False,
                  emulate_host: bool = False, check: bool = True,
                  max_instructions: int = PLACE_MAX_INSTRUCTIONS) -> Placement:
    """Where a runtime on `machine` would run an executable of `format` whose image is `data`, as the
    `hal` module's device (`vmvx=True`: it has IREE's vmvx loader too) or hal_loader (`vmvx=False`)
    decides: refused with NOT_FOUND when no loader takes the format (`query_support`), else by
    `load_library`'s choice (host ELF natively, unless `emulate_host`; foreign ELF in the emulated
    CPU; wasm32 under wasmtime). With `check`, the image is loaded as a program would load it, on a
    scratch heap of `machine` (host ELF in the emulated CPU, so no code of the module runs natively;
    a host `system-elf` library is not loaded: dlopen would run it), and a load that fails makes the
    placement refused with the load's status. vmvx images are not loaded (the interpreter needs a
    runtime). The load's code (initializers, query) runs within `max_instructions` per call, so a
    library that loops there is refused with DEADLINE_EXCEEDED."""
    m = machine
    if vmvx and format == vmvx_executable.FORMAT:
        return Placement(format, m.name, "vmvx", reason="VM bytecode: runs on every data model")
    if not query_support(format, m):
        arch = foreign_arch(format, m)
        if arch is not None:
            why = f"{format} holds {arch} machine code, not {m.name}'s: it runs with --target {arch}"
        elif format == STATIC_FORMAT:
            why = ("a static library is linked into the program that runs it (IREE's static library "
                   "loader, registered by that program); the module holds only its name")
        elif format == vmvx_executable.FORMAT:
            why = "ireeabi runs vmvx executables on the full `hal` module's device; its hal_loader has no vmvx loader"
        else:
            why = f"no loader of ireeabi takes {format} on {m.name}"
        return Placement(format, m.name, "refused", StatusCode.NOT_FOUND, no_loader_message(format), why, arch)
    if format == wasm_executable.FORMAT:
        where = "wasmtime"
    elif format.startswith("embedded-elf-") and (not m.is_host or emulate_host):
        where = "emulated"
    else:
        where = "native"
    if data is None:
        return Placement(format, m.name, where, reason="the image is not one rodata segment: not checked")
    if not check:
        return Placement(format, m.name, where, reason="not loaded to check it")
    if m.is_host and format.startswith("system-elf-"):
        return Placement(format, m.name, where, reason="a system library, dlopened on the host; not "
                         "loaded to check it (dlopen runs its initializers natively)")
    heap = Heap(target=m, name=f"placement of {format}")
    runners = KernelRunners(heap, emulate_host=m.is_host, max_instructions=max_instructions)
    try:
        library = load_library(format, data, (), cpu.read_data(target=m), m, runners)
        library.close()
    except UnresolvedImportError:  # the hal and hal_loader modules' status for it
        return Placement(format, m.name, "refused", StatusCode.UNAVAILABLE, "no import provider registered for "
                         "resolving required executable imports", "the library needs imports", checked=True)
    except ExecutableError as e:
        if e.code in (StatusCode.NOT_FOUND, StatusCode.CANCELLED):  # IREE tries the next loader; none is left
            return Placement(format, m.name, "refused", StatusCode.NOT_FOUND, no_loader_message(format), e.message,
                             checked=True)
        return Placement(format, m.name, "refused", e.code, e.message, "the loader refuses the image",
                         checked=True)
    finally:
        runners.close()
        heap.close()
    how = " in the emulated CPU (inspecting runs no code of the module natively)" if where == "native" else ""
    return Placement(format, m.name, where, reason=f"its load was checked on a scratch {m.name} heap{how}",
                     checked=True)


__all__ = ["KernelLibrary", "KernelRunners", "load_library", "query_support", "foreign_arch",
           "place_library", "Placement", "PLACES", "no_loader_message", "PLACE_MAX_INSTRUCTIONS",
           "STATIC_FORMAT"]
