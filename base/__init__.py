"""ireeabi.base: what IREE keeps in runtime/src/iree/base, and the memory it stands on, for any data
model. Left of the VM and the HAL: both build on it, it knows neither.

IREE's base/ concepts:
- `status`: iree_status_t as Python values, and across a C function-pointer boundary (status.c);
- `allocator`: iree_allocator_t on real memory, and the libc allocator over a heap (allocator.c,
  allocator_libc.c);
- `string_view`: the number parsers of IREE's string views (string_view.c), and C's atof and atoi
  as IREE's flags read their values (tooling/flags.c);
- `internal`: `cpu` (the processor data IREE hands kernels, internal/cpu.c), `fpu_state`
  (denormals flushed to zero, internal/fpu_state.c) and `math` (IREE's narrow float conversions,
  internal/math.h).

ireeabi's own: what IREE's base/ gets from the compiler, the C library and the process, which the
model must provide itself:
- `machine`: the data model a runtime runs on (`machine.machine("riscv32")`), the sizes and codecs
  IREE's compiler fixes (base/target_platform.h), with a cache of the catalog's struct views;
- `address_space`, `heap`: emulated address spaces and the tracked heap (`heap.tracked_heap`), what
  the libc allocator's malloc takes memory from; `allocation`, `checked_access`: a heap block's
  record with its stacks, the heap's accessors;
- `callbacks`: function pointers in target memory backed by Python;
- `host_libraries`: the host's libc and libm as ctypes loads them;
- `reference_path`: the switch that forces every fast path's reference path.
"""

__all__ = ["status", "allocator", "string_view", "internal", "machine", "address_space", "heap", "allocation",
           "checked_access", "callbacks", "host_libraries", "reference_path"]
