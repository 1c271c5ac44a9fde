"""ireeabi.hal: the inline HAL on the emulated VM, running real IREE-compiled kernels.

- `runtime`: one emulated inline runtime (`runtime.HalRuntime`): heap, ref types, hal_inline and
  hal_loader;
- `resource`, `buffer`, `buffer_view`: ref-counted HAL objects, buffers and mappings, buffer views;
- `inline_module`, `loader_module`: the `hal_inline` and `hal_loader` native modules;
- `library`, `executable`, `elf_loader`, `python_executable`: kernel libraries (embedded ELF through an
  emulation of IREE's loader, system ELF, Python) and their dispatch;
- `cpu`: host CPU data as IREE exposes it to kernels;
- `element_types`: IREE element types and the numpy dtypes that hold them;
- `module_api`: what a native module's implementation may do with the HAL objects it is passed;
- `native`, `native_build`: the C helper kernels run through (built at install time).
"""

__all__ = ["runtime", "resource", "buffer", "buffer_view", "inline_module", "loader_module",
           "library", "executable", "elf_loader", "python_executable", "cpu", "element_types",
           "module_api", "native", "native_build"]
