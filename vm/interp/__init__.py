"""A Python interpreter for IREE VM bytecode modules (the subset iree-compile emits), split by
concept:

- `errors`: VmError and its kinds (traps, statuses, vm.fail), verification/argument errors;
- `numerics`: scalar op semantics (vm/ops.h on x86-64), SipHash;
- `buffers`: ByteBuffer and the BufferFactory interface (plain-Python backend);
- `vmbuffers`: the real backend: vm.buffer refs on ireeabi.vm.buffer's BufferType, counted in
  memory;
- `lists`: vm.list;
- `registers`: frames, register banks, ref slots (retain/move/release), cconv helpers;
- `handlers`, `ops_scalar`, `ops_ref`, `ops_buffer`, `ops_list`, `ops_control`, `compile`: one
  handler maker per op, compiled once per instruction;
- `verify`: the bytecode verifier's checks;
- `imports`: ImportResolver and its implementations (Python callables, other contexts, native
  modules);
- `context`: Context (module state, run loop, calls).

See `context` for the calling semantics and `vmbuffers` for the reference counting. Running a module
as iree-run-module does (`Program`, its input syntax and printing) is tooling: `ireeabi.tooling`.
"""
from __future__ import annotations

from .buffers import DEFAULT_MAX_ALLOCATION, BufferFactory, ByteBuffer
from .compile import SUPPORTED_OPS, UNSUPPORTED_OPS, unsupported_in
from .context import DEFAULT_MAX_DEPTH, Context
from .errors import (ArgumentError, BytecodeVerifyError, ContextBusyError, ContextClosedError,
                     ImportResolutionError, VmError, VmFailError, VmStatusError, VmTrapError)
from .imports import ContextImports, FunctionImports, ImportResolver, NativeImports
from .lists import VmList
from .numerics import PURE_OPS, siphash24
from .vmbuffers import RodataLeakError, VmBufferFactory

__all__ = ["Context", "BufferFactory", "ByteBuffer", "VmList", "ImportResolver", "FunctionImports",
           "ContextImports", "NativeImports", "VmError", "VmTrapError", "VmStatusError",
           "VmFailError", "BytecodeVerifyError", "ImportResolutionError", "ArgumentError",
           "ContextClosedError", "ContextBusyError", "SUPPORTED_OPS", "UNSUPPORTED_OPS",
           "unsupported_in", "PURE_OPS", "siphash24", "DEFAULT_MAX_DEPTH", "DEFAULT_MAX_ALLOCATION",
           "VmBufferFactory", "RodataLeakError"]
