"""IREE VM bytecode modules (runtime/src/iree/vm/bytecode): the `.vmfb` reader, the ISA and its
decoder, the verifier, and a Python interpreter for the subset iree-compile emits, split by concept:

- `archive`: the `.vmfb` archive framing (archive.c);
- `flatbuffer`: the bytecode module schema as data, flatcc's verification and a checked reader;
- `module_file`: the module as data (`ModuleFile`) and its loader `read_module` (module.c,
  verifier.c's metadata rules); `module_errors`: the errors of all three;
- `isa`, `decoder`: the bytecode ISA as data and its decoder;
- `errors`: VmError and its kinds (traps, statuses, vm.fail), verification/argument errors;
- `numerics`: scalar op semantics (vm/ops.h on x86-64), SipHash;
- `buffer_factory`: ByteBuffer and the BufferFactory interface (plain-Python backend);
- `vm_buffer_factory`: the real backend: vm.buffer refs on ireeabi.vm.buffer's BufferType, counted in
  memory;
- `lists`: vm.list;
- `registers`: frames, register banks, ref slots (retain/move/release), cconv helpers;
- `handlers`, `ops_scalar`, `ops_ref`, `ops_buffer`, `ops_list`, `ops_control`, `compile`: one
  handler maker per op, compiled once per instruction;
- `verifier`: the bytecode verifier's checks (verifier.c);
- `import_resolvers`: ImportResolver and its implementations (Python callables, other contexts, native
  modules);
- `context`: Context (module state, run loop, calls), Invocation (a call that yields, resumed); its
  fast path: `blocks` (compiled basic blocks), `region_plan` and `regions` (loops with registers
  as locals), `call_sites` (generated entries, returns and import calls).

See `context` for the calling semantics and `vm_buffer_factory` for the reference counting. Running a module
as iree-run-module does (`Program`, its input syntax and printing) is tooling: `ireeabi.tooling`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ireeabi.abi.lazy_face import lazy_face

if TYPE_CHECKING:  # what the face offers, for readers and type checkers; loaded on first use below
    from ireeabi.vm.bytecode.buffer_factory import DEFAULT_MAX_ALLOCATION, BufferFactory, ByteBuffer
    from ireeabi.vm.bytecode.compile import SUPPORTED_OPS, UNSUPPORTED_OPS, unsupported_in
    from ireeabi.vm.bytecode.dispatch import DEFAULT_MAX_DEPTH, TEST_RUNNER_MAX_RESUMES, Context, Invocation
    from ireeabi.vm.errors import (ArgumentError, BytecodeVerifyError, ContextBusyError,
                                   ContextClosedError, ImportResolutionError, InvocationStateError,
                                   VmError, VmFailError, VmStatusError, VmTrapError)
    from ireeabi.vm.import_resolvers import ContextImports, FunctionImports, ImportResolver, NativeImports
    from ireeabi.vm.list import VmList
    from ireeabi.vm.ops import PURE_OPS, siphash24
    from ireeabi.vm.bytecode.vm_buffer_factory import RodataLeakError, VmBufferFactory

# Each name the face re-exports -> its submodule (PEP 562): importing the face (or one submodule,
# such as the `.vmfb` reader) does not load the interpreter.
_SUBMODULES = {
    "buffer_factory": ("DEFAULT_MAX_ALLOCATION", "BufferFactory", "ByteBuffer"),
    "compile": ("SUPPORTED_OPS", "UNSUPPORTED_OPS", "unsupported_in"),
    "dispatch": ("DEFAULT_MAX_DEPTH", "TEST_RUNNER_MAX_RESUMES", "Context", "Invocation"),
    "ireeabi.vm.errors": ("ArgumentError", "BytecodeVerifyError", "ContextBusyError", "ContextClosedError",
                          "ImportResolutionError", "InvocationStateError", "VmError", "VmFailError",
                          "VmStatusError", "VmTrapError"),
    "ireeabi.vm.import_resolvers": ("ContextImports", "FunctionImports", "ImportResolver", "NativeImports"),
    "ireeabi.vm.list": ("VmList",),
    "ireeabi.vm.ops": ("PURE_OPS", "siphash24"),
    "vm_buffer_factory": ("RodataLeakError", "VmBufferFactory"),
}
__getattr__, __dir__ = lazy_face(__name__, globals(), _SUBMODULES)


__all__ = ["Context", "Invocation", "TEST_RUNNER_MAX_RESUMES", "InvocationStateError",
           "BufferFactory", "ByteBuffer", "VmList", "ImportResolver", "FunctionImports",
           "ContextImports", "NativeImports", "VmError", "VmTrapError", "VmStatusError",
           "VmFailError", "BytecodeVerifyError", "ImportResolutionError", "ArgumentError",
           "ContextClosedError", "ContextBusyError", "SUPPORTED_OPS", "UNSUPPORTED_OPS",
           "unsupported_in", "PURE_OPS", "siphash24", "DEFAULT_MAX_DEPTH", "DEFAULT_MAX_ALLOCATION",
           "VmBufferFactory", "RodataLeakError"]
