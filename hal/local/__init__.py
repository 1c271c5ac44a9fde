"""ireeabi.hal.local: executables of the local CPU HAL and how they are loaded and dispatched, as
IREE's runtime/src/iree/hal/local keeps them.

- `executable_library`: what every library kind shares: export descriptions, dispatch results and
  the dispatch_state_v0 / workgroup_state_v0 memory a dispatch hands a kernel;
- `elf_loader`: IREE's own loader for embedded-elf libraries (elf/elf_module.c);
- `elf_executable`: embedded-elf and system-elf libraries of machine code, loaded and dispatched;
- `vmvx_executable`: vmvx bytecode executables run by the interpreter (loaders/vmvx_module_loader.c);
- `python_executable`: Python kernels, for tests and teaching, through the same dispatch memory;
- `inline_command_buffer`: one dispatch as the local HAL's inline command buffer issues it;
- `native`, `native_build`: the C helper kernels run through (built at install time);
- `emulated_cpu`: an emulated CPU (Unicorn) per runtime, running foreign machine code on the heap's memory.
"""

__all__ = ["executable_library", "elf_loader", "elf_executable", "vmvx_executable",
           "python_executable", "inline_command_buffer", "native", "native_build", "emulated_cpu"]
