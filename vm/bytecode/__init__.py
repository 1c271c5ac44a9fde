"""IREE VM bytecode modules (runtime/src/iree/vm/bytecode): the `.vmfb` reader, the ISA and its
decoder, the verifier, and a Python interpreter for the subset iree-compile emits, split by concept:

- `archive`: the `.vmfb` archive framing (archive.c);
- `flatbuffer`: the bytecode module schema as data, flatcc's verification and a checked reader;
- `module_file`: the module as data (`ModuleFile`) and its loader `read_module` (module.c,
  verifier.c's metadata rules); `module_errors`: the errors of all three;
- `isa`, `decoder`: the bytecode ISA as data and its decoder;
- `buffer_factory`: ByteBuffer and the BufferFactory interface (plain-Python backend);
- `vm_buffer_factory`: the real backend: vm.buffer refs on ireeabi.vm.buffer's BufferType, counted in
  memory;
- `frames`, `registers`: frames, register banks, ref slots (retain/move/release), cconv helpers;
- `handlers`, `ops_scalar`, `ops_ref`, `ops_buffer`, `ops_list`, `ops_control`, `compile`: one
  handler maker per op, compiled once per instruction;
- `verifier`: the bytecode verifier's checks (verifier.c);
- `module`: `Context`, a context holding one bytecode module (module.c: its functions decoded,
  verified and compiled, its state; vm/context.py: its calls and imports); `module_state`: the
  state's storage; `state`: what the ops use of a Context;
- `dispatch`: how its calls run (dispatch.c: the loop, internal and import calls, yields); its
  fast path: `blocks` (compiled basic blocks), `region_plan` and `regions` (loops with registers
  as locals), `call_sites` (generated entries, returns and import calls);
- `import_check`: a compiled module's imports checked against native modules before it runs.

The VM's own concepts a bytecode program's caller uses with these are re-exported here:
`Invocation` (vm/invocation.py), the import resolvers, the errors, `VmList` (vm/list.py),
`PURE_OPS` (vm/ops.py), `siphash24` (vm/buffer.py). See `dispatch` for the calling semantics and
`vm_buffer_factory` for the reference counting. Running a module as iree-run-module does
(`Program`, its input syntax and printing) is tooling: `ireeabi.tooling`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...abi.lazy_face import lazy_face

if TYPE_CHECKING:  # what the face offers, for readers and type checkers; loaded on first use below
    from .buffer_factory import DEFAULT_MAX_ALLOCATION, BufferFactory, ByteBuffer
    from .compile import SUPPORTED_OPS, UNSUPPORTED_OPS, unsupported_in
    from .module import DEFAULT_MAX_DEPTH, Context
    from .verifier import BytecodeVerifyError
    from .vm_buffer_factory import RodataLeakError, VmBufferFactory
    from ..buffer import siphash24
    from ..errors import (ArgumentError, ContextBusyError, ContextClosedError, ImportResolutionError,
                                   InvocationStateError, VmError, VmFailError, VmStatusError, VmTrapError)
    from ..import_resolvers import ContextImports, FunctionImports, ImportResolver, NativeImports
    from ..invocation import TEST_RUNNER_MAX_RESUMES, Invocation
    from ..list import VmList
    from ..ops import PURE_OPS

# Each name the face re-exports -> its submodule (PEP 562): importing the face (or one submodule,
# such as the `.vmfb` reader) does not load the interpreter.
_SUBMODULES = {
    "buffer_factory": ("DEFAULT_MAX_ALLOCATION", "BufferFactory", "ByteBuffer"),
    "compile": ("SUPPORTED_OPS", "UNSUPPORTED_OPS", "unsupported_in"),
    "module": ("DEFAULT_MAX_DEPTH", "Context"),
    "verifier": ("BytecodeVerifyError",),
    "vm_buffer_factory": ("RodataLeakError", "VmBufferFactory"),
    # the VM's own names a bytecode program's caller uses with them
    "ireeabi.vm.buffer": ("siphash24",),
    "ireeabi.vm.errors": ("ArgumentError", "ContextBusyError", "ContextClosedError", "ImportResolutionError",
                          "InvocationStateError", "VmError", "VmFailError", "VmStatusError", "VmTrapError"),
    "ireeabi.vm.import_resolvers": ("ContextImports", "FunctionImports", "ImportResolver", "NativeImports"),
    "ireeabi.vm.invocation": ("TEST_RUNNER_MAX_RESUMES", "Invocation"),
    "ireeabi.vm.list": ("VmList",),
    "ireeabi.vm.ops": ("PURE_OPS",),
}
__getattr__, __dir__ = lazy_face(__name__, globals(), _SUBMODULES)


__all__ = ["Context", "Invocation", "TEST_RUNNER_MAX_RESUMES", "InvocationStateError",
           "BufferFactory", "ByteBuffer", "VmList", "ImportResolver", "FunctionImports",
           "ContextImports", "NativeImports", "VmError", "VmTrapError", "VmStatusError",
           "VmFailError", "BytecodeVerifyError", "ImportResolutionError", "ArgumentError",
           "ContextClosedError", "ContextBusyError", "SUPPORTED_OPS", "UNSUPPORTED_OPS",
           "unsupported_in", "PURE_OPS", "siphash24", "DEFAULT_MAX_DEPTH", "DEFAULT_MAX_ALLOCATION",
           "VmBufferFactory", "RodataLeakError"]
