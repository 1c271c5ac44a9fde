"""ireeabi.vm: IREE's VM on real memory, laid out for any data model.

- `machine`: the data model a runtime runs on (`machine.machine("riscv32")`);
- `address_space`, `heap`: emulated address spaces and the tracked heap (`heap.tracked_heap`);
  `allocation`, `checked_access`: a heap block's record with its stacks, the heap's accessors;
- `allocator`, `callbacks`, `status`: iree_allocator_t, function pointers backed by Python, statuses;
- `ref`, `module_ref`, `buffer`: iree_vm_ref_t and its types, module heads, iree_vm_buffer_t;
- `call`, `shims`, `module`: argument/result buffers as the VM fills them, the shims that read
  them (`shim_code`: their generated functions), and native modules (`module.NativeModule`);
- `imports`: the import checker (a compiled module's imports against native modules);
- `bytecode`: bytecode modules, as runtime/src/iree/vm/bytecode: the `.vmfb` reader, the ISA, its
  decoder, the verifier and the interpreter (`bytecode.Context`);
- `reference_path`: the switch that forces the interpreter's reference path;
- `host_libraries`: the host's libc and libm as ctypes loads them.

`ireeabi.vm.testing` holds pytest fixtures (it imports pytest, so it is not part of `*`).
"""

__all__ = ["machine", "address_space", "heap", "allocation", "checked_access", "allocator",
           "callbacks", "status", "ref", "module_ref", "buffer", "call", "shims", "shim_code", "module",
           "imports", "bytecode",
           "reference_path", "host_libraries"]
