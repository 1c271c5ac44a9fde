"""One emulated runtime: a tracked heap, the ref types and the hal_inline / hal_loader modules (and,
with `full_hal=True`, the full `hal` module of the default execution model: modules/hal/module.py).

The runtime runs on one data model: its heap's (`target`, the host by default). Every struct, argument
buffer and shim is laid out for it; kernels of host machine code load only when it is the host.

Native modules of one's own (`modules`: runnable `layouts.modules.ModuleDescriptor`s) run next to
them: each becomes a NativeModule on the same heap whose implementations get, as `ctx.state`, the
runtime's `ModuleApi` (buffer views and buffers) or the state their declaration's factory made of it.

Async-external calls: `fence_device()` is the `hal` module whose device makes, signals and waits
on the fences a caller passes to an async-external export (HalModule.new_fence / wait_fence), as
iree-run-module takes them from its device; a runtime without the full `hal` module has none.

Pre-fix switches reproduce each bug IREE #24827 fixed, independently:
- `legacy_vm_buffer`: VM buffer destroy assumes every handle is a create/clone co-allocation;
- `legacy_inline`: the storage wrapper never records its allocator and HAL buffer (it leaks);
- `legacy_loader`: the dispatch shim reads the spans at sizeof(iree_vm_abi_rIiii_t).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from ...abi.errors import IreeAbiError
from ...layouts import hal_buffer as HB
from ...layouts.modules import ModuleDeclarationError, ModuleDescriptor
from ...abi.targets import Target
from ...vm.buffer import BufferType
from ...base.heap import Heap
from ...base.machine import Machine, machine as _machine
from ...vm.native_module import NativeModule
from ...vm.ref import TypeRegistry
from ...base.status import StatusCode, StatusError

from ...base.internal import cpu
from ...hal.buffer import BufferTypes
from ...hal.buffer_view import BufferViewTypes
from ...hal.local.library_loader import KernelRunners
from .inline import HalInlineModule
from .loader import HalLoaderModule, LoadedExecutable
from .module_api import ModuleApi
from ..vmvx.module import create_vmvx_module
from ...hal.resource import ResourceType

if TYPE_CHECKING:
    from .module import HalModule


class HalRuntime:
    """hal_inline and hal_loader on a heap of one data model. `target` (a name, Target or Machine)
    makes a heap of that model when no `heap` is given; with a heap, it must be the heap's.
    `modules`: native modules of one's own to run as well (see the module docstring); an export
    declared with several cconvs runs its first (`ModuleDescriptor.select` picks others).
    `trace`: a `tooling.trace.Trace` recording every import call through the modules' shims."""

    def __init__(self, heap: Heap | None = None, *, target: "Machine | Target | str | None" = None,
                 legacy_vm_buffer: bool = False, legacy_inline: bool = False, legacy_loader: bool = False,
                 cpu_data: list[int] | None = None, modules: Sequence[ModuleDescriptor] = (),
                 full_hal: bool = False, emulate_kernels: bool = False,
                 max_kernel_instructions: int | None = None, kernel_cpu_time: float | None = None,
                 trace: Any = None) -> None:
        if heap is not None and target is not None and _machine(target) is not heap.machine:
            raise IreeAbiError(f"HalRuntime target {_machine(target).name} differs from its heap's "
                               f"({heap.machine.name})")
        self._own_heap = heap is None
        self.heap = heap if heap is not None else Heap(target=target, name="hal runtime")
        self.machine = self.heap.machine
        self.target = self.machine.target
        self.types = TypeRegistry(self.heap)
        self.vm_buffers = BufferType(self.types, legacy=legacy_vm_buffer)
        self.hal_buffers = BufferTypes(self.types)
        self.views = BufferViewTypes(self.types, self.hal_buffers)
        self.executables: ResourceType[LoadedExecutable] = ResourceType(
            self.types, "hal.executable", lambda ptr, exe: exe.library.close())
        # Processor data words (iree_cpu_read_data): device.query.i64("hal.cpu", key) looks keys up
        # in them, and kernels get them in environment_v0.processor.
        self.cpu_data: list[int] = list(cpu_data) if cpu_data is not None else cpu.read_data(target=self.machine)
        self.inline = HalInlineModule(self.vm_buffers, self.hal_buffers, self.views, self.cpu_data,
                                      legacy=legacy_inline)
        # Kernels of another architecture (or, with emulate_kernels, every ELF kernel) run in an
        # emulated CPU on this heap, wasm32 ones under wasmtime; each emulator made at its first load.
        self.runners = KernelRunners(self.heap, emulate_host=emulate_kernels,
                                     max_instructions=max_kernel_instructions,
                                     native_cpu_time=kernel_cpu_time)
        self.loader = HalLoaderModule(self.vm_buffers, self.executables, self.cpu_data, legacy=legacy_loader,
                                      runners=self.runners)
        self.modules: dict[str, NativeModule] = {m.module.name: m.module for m in (self.inline, self.loader)}
        # IREE's `vmvx` microkernel module: vmvx executables' contexts and inline-static programs
        # import it (modules/vmvx).
        self.vmvx = create_vmvx_module(self.heap, self.vm_buffers, self.cpu_data)
        self.modules[self.vmvx.name] = self.vmvx
        self.api = ModuleApi(self.heap, self.views, self.hal_buffers, self.inline.host_allocator)
        # The full `hal` module (the default execution model), made on request: it registers more
        # ref types and the device (see modules/hal/module.py). Inputs are then made as iree-run-module
        # makes them for a device (DEVICE_LOCAL, through the heap allocator's compatibility rules).
        self.hal: HalModule | None = None
        if full_hal:
            from ...hal.device import compatible_params
            from .module import HalModule  # start-up: inline programs never load it

            self.hal = HalModule(self)
            self.modules[self.hal.module.name] = self.hal.module
            self.api.input_memory_type, self.api.input_usage = compatible_params(
                int(HB.MemoryType.DEVICE_LOCAL), int(HB.BufferUsage.DEFAULT))
        self.closed = False
        self._own_modules: list[tuple[NativeModule, Any]] = []
        try:
            for d in modules:
                self._add(d)
        except BaseException:
            self.close()
            raise
        # An import-call trace (tooling/trace.py's Trace) wraps every module's export shims.
        self.trace = trace
        if trace is not None:
            for module in self.modules.values():
                trace.install(module)

    def _add(self, d: ModuleDescriptor) -> None:
        """Instantiate a declared module on this runtime's heap, its state made from the API."""
        if not isinstance(d, ModuleDescriptor):
            raise ModuleDeclarationError(f"a native module must be a ModuleDescriptor, got {d!r}")
        where = f"native module {d.name!r}" + (f" ({d.source})" if d.source else "")
        if d.name in self.modules:
            raise ModuleDeclarationError(f"{where}: a module named {d.name!r} is already on the runtime")
        if not d.runnable:
            raise ModuleDeclarationError(f"{where} declares exports only (no implementations): it "
                                         f"serves import checking, not running")
        state = d.state(self.api) if d.state is not None else self.api
        try:
            module = NativeModule(self.heap, d.name, d.select().exports, version=d.version, state=state,
                                  sort=True)
        except BaseException:
            _close_state(state)
            raise
        self._own_modules.append((module, state))
        self.modules[d.name] = module

    def fence_device(self, function: str = "") -> HalModule:
        """The full `hal` module, whose device makes and waits on the fences of an async-external
        call of `function`; INVALID_ARGUMENT (IREE's tooling text) on a runtime without it."""
        if self.hal is None:
            raise StatusError(StatusCode.INVALID_ARGUMENT,
                              f"async VM invocation requires a HAL device ({function or 'the export'} "
                              f"takes a wait and a signal fence: iree.abi.model coarse-fences; this "
                              f"runtime has no full `hal` module to make them)")
        return self.hal

    def call(self, full_name: str, *args: Any) -> list[Any]:
        """Call `module.function` as the VM calls an import: packed arguments, shim, results."""
        module, _, fn = full_name.partition(".")
        try:
            target = self.modules[module]
        except KeyError:
            from ...abi.errors import UnknownNameError
            raise UnknownNameError("native module", module, self.modules) from None
        return target.call(fn, *args)

    def close(self) -> None:
        """Drop the modules and types (every object must already be released)."""
        if self.closed:
            return
        self.closed = True
        for module, state in reversed(self._own_modules):
            module.close()
            _close_state(state)
        if self.hal is not None:
            self.hal.close()
        self.vmvx.close()
        self.loader.close()
        self.inline.close()
        for t in (self.executables, self.views, self.hal_buffers, self.vm_buffers):
            t.close()
        self.runners.close()
        self.types.close()
        if self._own_heap:
            self.heap.close()

    def __enter__(self) -> "HalRuntime":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# The ref types of the instance iree-run-module makes: the VM's `vm.buffer` and every HAL type
# (runtime/src/iree/modules/hal/types.c, iree_hal_module_register_all_types). A runtime with the
# full `hal` module registers exactly these (tests/modules/hal/test_runtime_types.py compares them
# with its TypeRegistry); named here so that reading a module needs no runtime.
RUN_MODULE_TYPE_NAMES = frozenset({
    "vm.buffer", "hal.allocator", "hal.buffer", "hal.buffer_view", "hal.channel", "hal.command_buffer",
    "hal.device", "hal.event", "hal.executable", "hal.fence", "hal.file", "hal.semaphore"})


def run_module_type_names() -> frozenset[str]:
    """The ref type names of the instance iree-run-module makes (`RUN_MODULE_TYPE_NAMES`): what a
    module read before its runtime exists (`inspect`, `Program`) is resolved against
    (`read_module(..., ref_types=...)`). Names do not depend on the data model."""
    return RUN_MODULE_TYPE_NAMES


def _close_state(state: Any) -> None:
    """A module state with a close() of its own is closed with the module."""
    if not isinstance(state, ModuleApi) and callable(getattr(state, "close", None)):
        state.close()
