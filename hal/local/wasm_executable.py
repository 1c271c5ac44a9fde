"""wasm32 kernel libraries (`system-wasm-wasm_32`) loaded into the program's own heap and run by
wasmtime (`wasm_loader`): the library interface of hal_loader and the `hal` module on a wasm32 runtime.

- `WasmKernels(heap)`: a runtime's wasmtime engine and table (`wasm_loader.WasmRuntime`), made on the
  first wasm load and closed with the runtime.
- `load(format, data, kernels, constants, processor_data) -> TargetLibrary`: the side module is
  instantiated with its data in the heap, the library query gets an environment_v0 laid out for
  wasm32 in the heap (executable constants, processor data, an import thunk in the table), and
  library v0 is read and verified as for ELF libraries; its function pointers are table indices.
  Each workgroup is one wasm call (`target_library.TargetLibrary`); a trap makes the library
  unusable, as a trapped host fault does.
"""
from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Sequence

from ireeabi.layouts import executable_library as X
from ireeabi.vm.heap import Heap

from ireeabi.hal.local.elf_executable import Image, read_library
from ireeabi.hal.local.executable_library import ExecutableError, ForeignKernelError
from ireeabi.hal.local.target_library import TargetLibrary

if TYPE_CHECKING:  # wasmtime is imported when a runtime first loads wasm, not at start-up
    from ireeabi.hal.local.wasm_loader import WasmRuntime

FORMAT = "system-wasm-wasm_32"  # IREE's format string of iree-compile's wasm32 libraries
TARGET = "wasm32"
_U32 = 0xFFFFFFFF


class WasmKernels:
    """The wasmtime runtime of one heap, made when first needed. `max_instructions` bounds every
    wasm call (None: wasm_loader's default budget)."""

    def __init__(self, heap: Heap, *, max_instructions: int | None = None) -> None:
        self.heap = heap
        self.max_instructions = max_instructions
        self._runtime: WasmRuntime | None = None

    def runtime(self) -> "WasmRuntime":
        if self._runtime is None:
            from ireeabi.hal.local.wasm_loader import WasmRuntime
            self._runtime = WasmRuntime(self.heap)
        return self._runtime

    def close(self) -> None:
        if self._runtime is not None:
            runtime, self._runtime = self._runtime, None
            runtime.close()


def load(format: str, data: bytes, kernels: WasmKernels, constants: Sequence[int] = (),
         processor_data: Sequence[int] = ()) -> TargetLibrary:
    """Load a wasm32 library into the heap of `kernels` (see the module docstring)."""
    from ireeabi.hal.local.wasm_loader import WasmTrap
    heap = kernels.heap
    m = heap.machine
    if m.name != TARGET:
        raise ForeignKernelError("FAILED_PRECONDITION", f"executable format '{format}' runs on {TARGET}, not "
                                 f"{m.name}")
    runtime = kernels.runtime()
    module = runtime.load_side_module(bytes(data), name=format)
    blocks: list[int] = []

    def release() -> None:
        for block in blocks:
            heap.free(block)

    try:
        env = m.ctype(X.iree_hal_executable_environment_v0_t)()

        def import_thunk(fn: int, params: int, context: int, reserved: int) -> int:
            raise ForeignKernelError("UNIMPLEMENTED", "a wasm kernel called an import through the "
                                     "environment's thunk: imports of wasm kernels are not supported")
        env.import_thunk = runtime.host_function(import_thunk, ["i32"] * 4, ["i32"], "import_thunk")
        for i, word in enumerate(list(processor_data)[:X.IREE_HAL_PROCESSOR_DATA_CAPACITY_V0]):
            env.processor.data[i] = word
        if constants:
            arr = heap.malloc(4 * len(constants), tag="executable constants")
            blocks.append(arr)
            heap.write(arr, b"".join(struct.pack("<I", c & _U32) for c in constants))
            env.constants = arr
        lay = m.layout(X.iree_hal_executable_environment_v0_t)
        env_addr = heap.malloc(lay.size, align=max(lay.align, 8), tag="environment_v0")
        blocks.append(env_addr)
        heap.write(env_addr, bytes(env))

        query = module.lookup(X.IREE_HAL_EXECUTABLE_LIBRARY_EXPORT_NAME)
        lib_addr = runtime.call(query, [X.IREE_HAL_EXECUTABLE_LIBRARY_VERSION_LATEST, env_addr],
                                max_instructions=kernels.max_instructions)
        table_size = runtime.table.size(runtime.store)

        def check_function(index: int, what: str) -> None:
            if not 0 <= index < table_size:
                raise ExecutableError("INVALID_ARGUMENT", f"library {what} is table index {index}, outside the "
                                      f"function table (size {table_size})")
        image = Image(module.data_base, module.data_base + module.info.memory_size, m, heap.read)
        info = read_library(image, lib_addr, constants, check_function)
        if info.imports:  # every import optional: NULL functions and contexts
            tables = heap.malloc(8 * len(info.imports), zero=True, tag="import tables")
            blocks.append(tables)
            env.import_funcs, env.import_contexts = tables, tables + 4 * len(info.imports)
            heap.write(env_addr, bytes(env))
    except BaseException:
        release()
        raise

    def call(function: int, args: Sequence[int], what: str) -> int:
        return runtime.call(function, args, max_instructions=kernels.max_instructions)
    return TargetLibrary(format, info.name, info.version, info.imports, info.exports, info.constant_count,
                         info.has_names, env_addr, heap, call, (WasmTrap,), lambda e: (f"wasm trap: {e}", None),
                         release)


__all__ = ["WasmKernels", "load", "FORMAT", "TARGET"]
