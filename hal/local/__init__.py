"""ireeabi.hal.local: executables of the local CPU HAL and how they are loaded and dispatched, as
IREE's runtime/src/iree/hal/local keeps them.

- `executable_library`: what every library kind shares: export descriptions, dispatch results and
  the dispatch_state_v0 / workgroup_state_v0 memory a dispatch hands a kernel;
- `elf_loader`: IREE's own loader for embedded-elf libraries (elf/elf_module.c);
- `elf_executable`: embedded-elf and system-elf libraries of machine code, loaded and dispatched;
- `wasm_loader`: wasm32 side modules (`system-wasm-wasm_32`) run under wasmtime, the wasm32 heap
  being their linear memory;
- `vmvx_executable`: vmvx bytecode executables run by the interpreter (loaders/vmvx_module_loader.c);
- `python_executable`: Python kernels, for tests and teaching, through the same dispatch memory;
- `inline_command_buffer`: one dispatch as the local HAL's inline command buffer issues it;
- `native`, `native_build`: the C helper kernels run through (built at install time).
"""

__all__ = ["executable_library", "elf_loader", "elf_executable", "wasm_loader", "vmvx_executable",
           "python_executable", "inline_command_buffer", "native", "native_build"]
