"""ireeabi.hal: IREE's HAL objects on the emulated VM (runtime/src/iree/hal), any data model.

- `resource`, `buffer`, `buffer_view`: ref-counted HAL objects, buffers and mappings, buffer views;
- `device`, `semaphore`, `file`, `command_buffer`, `command_buffer_validation`: the local-sync
  device, its timeline semaphores and fences, memory files, recorded command buffers and their
  validation;
- `element_types`, `flag_names`: IREE element types with the numpy dtypes that hold them, and HAL
  bitfields as IREE prints them;
- `string_util`, `buffer_view_util`: element types, shapes, elements and buffer views as text,
  parsed and printed as IREE does (hal/string_util.c, hal/buffer_view_util.c), over the number
  parsers of `ireeabi.base.string_view`;
- `local`: executables and their loaders, IREE's ELF loader, the dispatch of kernels
  (runtime/src/iree/hal/local).

The native modules that hand these objects to programs (`hal`, `hal_inline`, `hal_loader`) and the
runtime that assembles them are `ireeabi.modules.hal`.
"""

__all__ = ["resource", "buffer", "buffer_view", "device", "semaphore", "file", "command_buffer",
           "command_buffer_validation", "element_types", "flag_names", "string_util", "buffer_view_util",
           "local"]
