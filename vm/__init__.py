"""ireeabi.vm: IREE's VM on real memory, laid out for any data model (runtime/src/iree/vm), on the
memory and statuses of `ireeabi.base`.

- `ref`, `module_ref`, `buffer`, `list`: iree_vm_ref_t and its types, module heads, iree_vm_buffer_t
  (with its SipHash), vm.list (ref.c, module.c, buffer.c, list.c);
- `ops`: the scalar semantics of the VM's ops (ops.h);
- `call`, `shims`, `native_module`: argument/result buffers as the VM fills them, the shims that read
  them (`shim_code`: their generated functions), and native modules (`native_module.NativeModule`,
  native_module.c);
- `context`, `invocation`: a context's ownership, lifetime and import resolution (context.c), and a
  call from its begin to its end across yields (invocation.c); `import_resolvers`: what a context
  resolves imports against; `errors`: the VM's exceptions;
- `bytecode`: bytecode modules, as runtime/src/iree/vm/bytecode: the `.vmfb` reader, the ISA, its
  decoder, the verifier and the interpreter (`bytecode.Context`).

`ireeabi.vm.testing` holds pytest fixtures (it imports pytest, so it is not part of `*`).
"""

__all__ = ["ref", "module_ref", "buffer", "list", "ops", "call", "shims", "shim_code", "native_module",
           "context", "invocation", "import_resolvers", "errors", "bytecode"]
