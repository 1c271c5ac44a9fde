"""ireeabi.hal.local: executables of the local CPU HAL and how they are loaded and dispatched, as
IREE's runtime/src/iree/hal/local keeps them.

- `executable_library`: what every library kind shares: export descriptions, dispatch results and
  the dispatch_state_v0 / workgroup_state_v0 memory a dispatch hands a kernel;
- `library_loader`: which loader takes a CPU library on a runtime's data model, and the runtime's
  emulators (`KernelRunners`);
- `elf_loader`: IREE's own loader for embedded-elf libraries (elf/elf_module.c) into host memory;
  `elf_heap_loader`: the same into a runtime's heap at target addresses, with every architecture's
  relocations (elf/arch/*.c);
- `elf_executable`: embedded-elf and system-elf libraries of host machine code, loaded and
  dispatched natively;
- `emulated_cpu`: a runtime's emulated CPU (Unicorn) on its heap, for foreign machine code;
- `emulated_executable`: embedded-elf libraries of another architecture, run by that CPU;
- `wasm_loader`, `wasm_dylink`, `wasm_executable`: wasm32 side modules (`system-wasm-wasm_32`) run
  under wasmtime, the wasm32 heap being their linear memory, and their dylink.0 section;
- `target_library`: the dispatch loop of a library that lives in a heap and runs in an emulator;
- `vmvx_executable`: vmvx bytecode executables run by the interpreter (loaders/vmvx_module_loader.c);
- `python_executable`: Python kernels, for tests and teaching, through the same dispatch memory;
- `inline_command_buffer`: one dispatch as the local HAL's inline command buffer issues it, in the
  floating-point state IREE pushes around it (`ireeabi.base.internal.fpu_state`);
- `native`, `native_build`: the C helper host kernels run through (built at install time).
"""

__all__ = ["executable_library", "library_loader", "elf_loader", "elf_heap_loader", "elf_executable",
           "emulated_cpu", "emulated_executable", "wasm_loader", "wasm_dylink", "wasm_executable",
           "target_library", "vmvx_executable", "python_executable", "inline_command_buffer",
           "native", "native_build"]
