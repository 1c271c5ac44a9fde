"""wasm32 kernel libraries (`system-wasm-wasm_32`) loaded into the program's own heap and run by
wasmtime (`wasm_loader`): the library interface of hal_loader and the `hal` module on a wasm32 runtime.

- `WasmKernels(heap)`: a runtime's wasmtime engine and table (`wasm_loader.WasmRuntime`), made on the
  first wasm load and closed with the runtime.
- `load(format, data, kernels, constants, processor_data) -> TargetLibrary`: the side module is
  instantiated with its data in the heap, the library query gets an environment_v0 laid out for
  wasm32 in the heap (executable constants, processor data, the runtime's import thunk), and
  library v0 is read and verified as for ELF libraries; its function pointers are table indices.
  Imports are handled as on the ELF paths: a required one is refused at load
  (`UnresolvedImportError`, which hal_loader reports as UNAVAILABLE "no import provider..."), an
  optional one is left NULL in import_funcs; the thunk forwards a call to the import's table entry
  as IREE's thunk does (see wasm_loader's docstring for what iree-compile emits).
  Each workgroup is one wasm call (`target_library.TargetLibrary`); a trap makes the library
  unusable, as a trapped host fault does. Closing the library (the executable's release) frees its
  environment and unloads the module (`WasmRuntime.release`), as the ELF paths unload theirs.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from ...layouts import executable_library as X
from ...base.heap import Heap

from .elf_executable import Image, read_library
from .executable_library import ExecutableError, ForeignKernelError
from .target_library import Environment, TargetLibrary
from ...base.status import StatusCode

if TYPE_CHECKING:  # wasmtime is imported when a runtime first loads wasm, not at start-up
    from .wasm_loader import WasmRuntime

FORMAT = "system-wasm-wasm_32"  # IREE's format string of iree-compile's wasm32 libraries
TARGET = "wasm32"


class WasmKernels:
    """The wasmtime runtime of one heap, made when first needed. `max_instructions` bounds every
    wasm call (None: wasm_loader's default budget)."""

    def __init__(self, heap: Heap, *, max_instructions: int | None = None) -> None:
        self.heap = heap
        self.max_instructions = max_instructions
        self._runtime: WasmRuntime | None = None

    def runtime(self) -> "WasmRuntime":
        if self._runtime is None:
            from .wasm_loader import WasmRuntime
            # The budget reaches the loader's calls too (the module's initializers, its query).
            self._runtime = WasmRuntime(self.heap) if self.max_instructions is None else \
                WasmRuntime(self.heap, max_instructions=self.max_instructions)
        return self._runtime

    def close(self) -> None:
        if self._runtime is not None:
            runtime, self._runtime = self._runtime, None
            runtime.close()


def load(format: str, data: bytes, kernels: WasmKernels, constants: Sequence[int] = (),
         processor_data: Sequence[int] = ()) -> TargetLibrary:
    """Load a wasm32 library into the heap of `kernels` (see the module docstring)."""
    from .wasm_loader import WasmTrap
    heap = kernels.heap
    m = heap.machine
    if m.name != TARGET:
        raise ForeignKernelError(StatusCode.FAILED_PRECONDITION, f"executable format '{format}' runs on {TARGET}, not "
                                 f"{m.name}")
    runtime = kernels.runtime()
    module = runtime.load_side_module(bytes(data), name=format)
    env: Environment | None = None

    def release() -> None:
        # What the ELF paths do on unload: the environment's blocks and the library itself (its data
        # block and table slots) go back; the runtime drops its store once nothing is loaded.
        if env is not None:
            env.free()
        runtime.release(module)

    def call(function: int, args: Sequence[int], what: str) -> int:
        return runtime.call(function, args, max_instructions=kernels.max_instructions)
    try:
        env = Environment(heap, constants, processor_data, runtime.import_thunk())
        lib_addr = call(module.lookup(X.IREE_HAL_EXECUTABLE_LIBRARY_EXPORT_NAME),
                        [X.IREE_HAL_EXECUTABLE_LIBRARY_VERSION_LATEST, env.address], "iree_hal_executable_library_query")
        table_size = runtime.table.size(runtime.store)

        def check_function(index: int, what: str) -> None:
            if not 0 < index < table_size:
                raise ExecutableError(StatusCode.INVALID_ARGUMENT, f"library {what} is table index {index}, "
                                      + ("NULL" if index == 0 else f"outside the function table (size {table_size})"))
        image = Image(module.data_base, module.data_base + module.info.memory_size, m, heap.read)
        info = read_library(image, lib_addr, constants, check_function)
        env.leave_imports_unresolved(len(info.imports))
    except BaseException:
        release()
        raise
    return TargetLibrary(format, info.name, info.version, info.imports, info.exports, info.constant_count,
                         info.has_names, env.address, heap, call, (WasmTrap,), lambda e: (f"wasm trap: {e}", None),
                         release)


__all__ = ["WasmKernels", "load", "FORMAT", "TARGET"]
