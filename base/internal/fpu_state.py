"""The floating-point state IREE's local HAL pushes around a dispatch: denormals flushed to zero.

What IREE does (runtime/src/iree/base/internal/fpu_state.{h,c}, read at IREE's main branch;
iree-run-module 3.13 behaves so):

- `iree_fpu_state_push(IREE_FPU_STATE_FLAG_FLUSH_DENORMALS_TO_ZERO)` reads the thread's control
  register, sets its flush bits and writes it back only when that changed; `iree_fpu_state_pop`
  writes the previous value back, again only when the push changed it. The bits (`FLUSH_BITS`):
  x86_64 and i386 MXCSR FTZ | DAZ (0x8040: results and inputs that are denormal become zero; SSE
  only, the x87 unit ignores MXCSR), aarch64 FPCR FZ | FZ16 (0x1080000), armv7 FPSCR FZ
  (0x1000000: the VFP unit; NEON always flushes, so armv7's vectorized f32 kernels flush even where
  nothing is pushed). riscv32, riscv64 and wasm32 have nothing to set:
  their kernels keep denormals.
- Who pushes: the inline command buffer, around each dispatch it issues
  (runtime/src/iree/hal/local/inline_command_buffer.c, iree_hal_inline_command_buffer_dispatch),
  and each task-system worker thread, once at its start (runtime/src/iree/task/worker.c). So the
  default execution model's dispatches (the full `hal` module's command buffers, on local-sync or
  local-task) run flushed, whatever the executable: embedded or system ELF kernels, and vmvx
  bytecode, whose interpreter then computes with the flushing FPU, its `vmvx` microkernels included.
  hal_loader's dispatch (runtime/src/iree/modules/hal/loader/module.c, inline-dynamic) calls
  iree_hal_local_executable_issue_dispatch_inline directly and pushes nothing, and inline-static
  programs run their vmvx-inline kernels as plain VM code in the caller's thread: both keep
  denormals (iree-run-module 3.13 prints 1.1E-39 for 1E-40 + 1E-39 there, 0 in the default model).

How ireeabi models it: here the push and pop (`pushed`, on any `FpuControl`), the bits and which
data models IREE sets them on (`flushes`); `LocalDispatcher.dispatch`
(hal/local/inline_command_buffer.py) runs each dispatch in `dispatch_scope(library, target)`, which
pushes the flushing state when IREE built for the runtime's data model `target` would, on the FPU
the library's code runs on (`fpu_of`):

- host code (native ELF kernels, Python kernels, and the VM interpreter running vmvx kernels): the
  calling thread's own control register, through the C helper (`native.HostFpu`), set to
  the host architecture's flush bits. ireeabi's VM float ops are Python float and numpy arithmetic
  on that thread, so they flush exactly as the host's FPU does, at no cost per op: an f32 register
  read into a Python float (cvtss2sd) is a denormal input, its write back (cvtsd2ss) a denormal
  result. Loads, stores, moves, selects and bitcasts copy raw bits, as IREE's do. A data model
  whose architecture differs from the host's (vmvx on an aarch64 heap run on x86_64) flushes with
  the host's bits: the same inputs and results become zero, except where the architectures decide
  tininess differently (x86 after rounding, ARM before), a result that rounds up to the smallest
  normal. On an i386 heap the interpreter's ops flush as SSE code does (ireeabi's VM float ops are
  SSE's on every data model, vm/ops.py); an IREE runtime built for i386 with x87
  math would not flush its interpreter's own ops (MXCSR does not govern x87).
- emulated kernels (`emulated_cpu.EmulatedCpu`): the guest's register (MXCSR, FPCR, FPSCR), the
  emulator then flushing as that CPU does. One gap, the emulator's: Unicorn's x86 (QEMU 5.0's
  target/i386, update_mxcsr_status) puts MXCSR.FZ on its x87 status instead of the SSE one, so an
  emulated i386 or x86_64 kernel reads denormal inputs as zero (DAZ) but keeps a denormal result
  of normal operands (real SSE gives zero). AArch64's FPCR.FZ16 reads back clear there (a CPU
  without half-precision arithmetic, where the bit is RES0).
- wasm32 kernels (wasmtime) get nothing, as IREE's wasm build sets nothing.

The previous value goes back when the scope ends, when the push changed it (as IREE's pop), and
on every exceptional exit (a status, a trapped fault whose signal handler left the register at its
default, Ctrl-C) unconditionally: the thread leaves a dispatch as it entered it.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Protocol

# The control register bits IREE's fpu_state sets per architecture (none: it sets nothing).
FLUSH_BITS = {"x86_64": 0x8040, "i386": 0x8040, "aarch64": 0x1080000, "armv7": 0x1000000}
REGISTER = {"x86_64": "MXCSR", "i386": "MXCSR", "aarch64": "FPCR", "armv7": "FPSCR"}


class FpuControl(Protocol):
    """A floating-point control register some code runs under: its flush bits (0: none to set)."""

    flush_bits: int

    def fpu_control(self) -> int: ...

    def set_fpu_control(self, value: int) -> None: ...


# Where C's float -> double promotion (every f32 printf prints goes through it) makes a NaN the
# canonical one, positive and without payload: RISC-V's fcvt.d.s (the F/D extensions canonicalize
# every NaN result). x86's cvtss2sd and ARM's fcvt / vcvt (default-NaN mode off, as Linux leaves it)
# keep the sign and payload; wasm's f64.promote_f32 may do either (the spec leaves a non-canonical
# NaN's result nondeterministic), and ireeabi keeps it, as wasmtime on x86 does.
PROMOTES_NAN_CANONICALLY = frozenset({"riscv32", "riscv64"})


def promotes_nan_canonically(target: str) -> bool:
    """True when an f32 NaN becomes the positive canonical NaN on its way to double on `target`:
    IREE's iree-run-module there prints every f32 (and f16, bf16: widened to f32 in software) NaN
    as `nan` / `NAN`, whatever its sign."""
    return target in PROMOTES_NAN_CANONICALLY


def flushes(target: str) -> bool:
    """True when IREE's runtime built for `target` (a data model's name) flushes denormals to zero
    inside a dispatch of the inline command buffer."""
    return target in FLUSH_BITS


@contextmanager
def pushed(fpu: "FpuControl | None", flush: bool = True) -> Iterator[None]:
    """iree_fpu_state_push / pop on `fpu` (see the module docstring); nothing when `flush` is false
    or the FPU has no flush bits."""
    bits = fpu.flush_bits if fpu is not None and flush else 0
    if not bits or fpu is None:
        yield
        return
    previous = fpu.fpu_control()
    current = previous | bits
    if current != previous:
        fpu.set_fpu_control(current)
    try:
        yield
    except BaseException:
        fpu.set_fpu_control(previous)
        raise
    if current != previous:
        fpu.set_fpu_control(previous)


__all__ = ["FLUSH_BITS", "REGISTER", "PROMOTES_NAN_CANONICALLY", "FpuControl", "flushes",
           "promotes_nan_canonically", "pushed"]
