"""An emulated CPU per runtime: foreign machine code run by Unicorn (QEMU's CPU emulator as a
library) on the runtime's own heap, so a target address is the same number for the kernel and for
the heap and nothing is ever copied.

Interface (what the ELF loader and the dispatch integration build on):

- `EmulatedCpu(heap, *, stack_size=STACK_SIZE, chunk=CHUNK, quantum=QUANTUM, reference=None)`: a
  CPU of `heap.machine`'s target: riscv32, riscv64, armv7 (ARM mode; an address with bit 0 set runs
  as Thumb), aarch64, i386, x86_64 (the host's data model, emulated: for differential tests of host
  kernels). wasm32 has no CPU here.
  - The heap's whole address-space window is mapped into the emulator with `Uc.mem_map_ptr`
    (read and write: heap memory is data, as on a device, where IREE's loader makes only an
    image's code segments executable; `protect` does that here), in regions that double in size
    from its bottom. Outside the window nothing is mapped: the NULL page and all else fault.
  - Unicorn's TLB is filled by the C helper (native_build.py, `ireeabi_tlb_fill`): each page
    maps to itself, its entry readable and executable on a page of code, readable and writable
    elsewhere. Unicorn lets a store take its fast path only once the page's entry is marked dirty,
    which it does only for an entry that cannot execute and a page no memory hook covers; the
    CPU's own MMU (off) makes every entry executable, so every store took the slow path (a helper
    call, two region lookups, a look for translated code on the page): half of a scalar riscv64
    matmul's time. The fill costs more per TLB miss than the MMU's (Unicorn restores the CPU state
    first), so a call that fills more than THRASH entries flushes the TLB after it, which lets
    QEMU grow it (it doubles a TLB found over 70% used at a flush). `reference=True` (default:
    `heap.reference`, so IREEABI_REFERENCE=1 and a reference Program too) keeps the MMU's TLB:
    the same results and faults, slower (a differential test compares them); so does a process
    without the C helper.
  - Faults are reported by `UC_HOOK_MEM_INVALID` hooks over what can fault only: all outside the
    window, and each region of it that cannot be read or written (a hook over a page would keep
    its stores on the slow path); a fetch from a data page needs none (Unicorn's error says so,
    and the pc is the address).
  - Protections: the CPU is a protection listener of the heap's address space
    (`AddressSpace.add_protection_listener`): it learns the pages protected before it existed,
    makes a page inaccessible before the host protects it and accessible after the host
    unprotects it (the emulator must never touch an `mprotect`ed host page: that would kill the
    process), and mirrors guard pages that are the emulators' alone (a heap whose kernels run
    only emulated: `Heap.emulated_kernels`) the same way. So the guard pages of HAL buffer storage
    (`Heap.guarded_allocations`) stop an emulated kernel's load or store past its binding as a
    protection fault (Unicorn's UC_MEM_READ_PROT / UC_MEM_WRITE_PROT), which the dispatch turns
    into the status a trapped native fault gets (`executable_library.fault_message`: kernel,
    workgroup, address, binding). A Unicorn protection splits the region holding the pages, which
    costs in proportion to the region's size and to the number of regions (0.4 ms in a 16 MiB
    region, 17 ms in a 256 MiB one, tens of ms past a thousand regions); so the CPU first halves
    the region holding a boundary until the piece is at most GRAIN bytes (later guards nearby
    split small pieces; a guard page is then one split in three), and a page that was protected
    once stays a region of its own, so protecting it again (a pooled or reused guarded chunk) is a
    permission change only (~25 us) and a fault hook made or dropped. The heap keeps freed
    guarded chunks, guards on, for reuse (`base.heap.GUARD_POOL`), and its quarantine holds the
    memory of a few guarded blocks only
    (`base.heap.GUARD_HELD`), which bounds the guard pages, hence the regions, to about the live
    guarded blocks. `benchmarks/bench_emulated_guards.py` (a loaded 2-core machine): buffers that
    come and go cost ~6 us per allocation and free (the pool serves them; 0.1 ms mean with the
    first chunks' splits) and nothing per dispatch, against ~100-200 ms per allocation when every
    change was mirrored as it came; a new guarded buffer while 200 others live costs 3-9 ms (some
    600 regions), as much as before.
  - The address space's code range (just below the window) is the CPU's trap area, mapped
    execute-only: the CPU's return address and every function handle live there. A call of a
    handle runs its Python function, with the arguments read per the target's C calling
    convention, and returns its result. On a foreign heap the handles are the heap's own function
    table (`heap.functions`), so pointers the VM model stores (allocator ctl, ref destroy) can be
    called by emulated code as well; on the host heap (whose table holds real C pointers) the CPU
    keeps a handle table of its own.
  - The FPU is switched on (riscv mstatus.FS, armv7 CPACR cp10/cp11 and FPEXC.EN, aarch64
    CPACR_EL1.FPEN; x87/SSE are on by default). Its control register (MXCSR, FPCR, FPSCR; none on
    riscv) is `fpu_control()` / `set_fpu_control(value)`, with `flush_bits` the bits IREE sets in
    it to flush denormals (`fpu_state.FLUSH_BITS`; 0 on riscv): the state a dispatch pushes
    (`inline_command_buffer.dispatch_scope`) stays in the CPU across its calls, as in a thread. Unicorn's x86
    applies MXCSR.FZ to its x87 status, not to SSE's: DAZ works, FTZ does not (fpu_state.py).
    Off the reference path the CPU starts with the cumulative inexact flag set, and an uncounted
    armv7 call rounds once on NEON first (`_set_inexact`): QEMU computes floats on the host's FPU
    only after an inexact result, and falls back to soft-float wherever that could differ (the
    same bits; a matmul of small integers 2x faster).
  - A stack of `stack_size` bytes is a guarded block of the heap (target memory; a stack overflow
    faults on the guard page). It is freed by `close()`; close the CPU before a leak check.
- `call(function, args, *, max_instructions=None, what="") -> int`: calls target address
  `function` with integer or pointer arguments (each one word, masked to it; riscv64 expects 32-bit
  ints sign-extended, as its ABI says) in registers then on the stack (a0-a7, r0-r3, x0-x7,
  rdi..r9; i386 cdecl: all on the stack), the stack 16-byte aligned at the call, the return address
  the CPU's trap; returns a0 / r0 / x0 / eax / rax masked to the word.
- `host_function(fn, arity, name) -> int`: a target address that runs `fn(*args)` (ints) when
  emulated code calls it; `fn` returns an int (None is 0). An exception `fn` raises stops the
  emulation and comes out of `call` unchanged (KeyboardInterrupt included).
- `invalidate(address, size)`: forget translated code of a range whose bytes changed since it ran
  (a loader placing an image where one ran before); `protect(address, size, perms)`: the emulator's
  permissions of whole pages of the window (an image's segments: "r-x" for code; "rw-" gives a page
  back to data), without touching the host's.
  `regions()`: the emulator's regions of the window, (start, end, perms), for tests and benchmarks.
- `close()` (or `with`): forgets the handles, frees the stack, stops mirroring protections.

Faults and runaways are exceptions, never signals: `EmulatedFault` (an invalid instruction, a
trap instruction such as ebreak/brk/udf/ud2/int3, a fetch, read or write of an unmapped or
protected address, a call of an unregistered handle), naming the kind, the pc and the address;
`InstructionBudgetExceeded` past `max_instructions`.

A call with a budget runs in chunks of `chunk` instructions counted by Unicorn's `count` (a
per-instruction counter compiled into the translated code: 2.2-2.7x the uncounted time of a 1M
float add, against ~12x for a Python block hook and ~70x for a Python instruction hook); the
budget is exact and Ctrl-C gets out within one chunk. A call without one runs uncounted, and a
thread of the CPU's own stops the emulation every `quantum` seconds while it runs; the call resumes
it exactly where it stopped, after Python has run its signal handlers, so Ctrl-C gets out within a
quantum (the results never depend on when the stops fall). Switching between the two flushes the
translated code. A host function returns to its caller from its hook, so a stop at its handle
never runs it twice. `instructions` is what the last counted call ran (to a chunk).

wasm32 has no CPU here: its kernels run under wasmtime (`wasm_loader`), whose compiled code reaches
the linear memory (the heap's window from target 0) natively. What protects there is the host's
alone: target [0, 64 KiB), everything past the window's end, and guard pages the host protects (the
wasm shadow stack's, `malloc(guard=True)`). HAL buffer storage on a wasm32 heap is not guarded
(neither `native_kernels` nor `emulated_kernels`), and the heap's red zones and per-block checks do
not apply to wasm accesses: a wasm kernel writing past its binding lands in the neighbouring heap
memory unseen, unless it leaves the window.
"""
from __future__ import annotations

import bisect
import ctypes
import re
import struct
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import unicorn as uc_mod
from unicorn import arm64_const as A64
from unicorn import arm_const as ARM
from unicorn import riscv_const as RV
from unicorn import x86_const as X86
from unicorn.unicorn_py3.arch.types import uc_hook_h
from unicorn.unicorn_py3.unicorn import uclib as _UCLIB

from .executable_library import ForeignKernelError
from ...base.internal.fpu_state import FLUSH_BITS
from ...base import callbacks
from ...base.address_space import PAGE
from ...base.heap import Heap, HeapError
from ...base.status import StatusCode

CHUNK = 1 << 22  # instructions per emu_start of a call with a budget: the latency of Ctrl-C (~50 ms)
QUANTUM = 0.05  # seconds between preemptions of a call without a budget: the latency of Ctrl-C
IDLE_QUANTA = 20  # quanta without an uncounted call after which the preemption thread ends
STACK_SIZE = 256 << 10
# A protection inside a region splits it, and Unicorn re-maps a split region whole, flushing its TLB
# page by page (4 KiB pages: 256 per MiB): what a split costs grows with the region, so the window's
# first regions (where the heap allocates first: the kernels' images, the stack, small buffers) are
# small, and every split is made on a piece halved down to GRAIN.
MIN_REGION = 1 << 20  # the window's first regions; later ones double
GRAIN = 1 << 20  # a protection halves the region holding each of its boundaries down to this size
THRASH = 2048  # TLB fills in one call past which the TLB is flushed so that it grows
_PROT_ALL = uc_mod.UC_PROT_ALL
_PROT_NONE = uc_mod.UC_PROT_NONE
_PROT_RW = uc_mod.UC_PROT_READ | uc_mod.UC_PROT_WRITE  # the heap's memory, as on a device: not executable
_TOP = (1 << 64) - 1  # the last address a Unicorn hook's range can name
# What a TLB entry grants (the TLB fill hook): data pages read/write, code read/execute.
_EXEC = uc_mod.UC_PROT_EXEC
_TLB_CODE = uc_mod.UC_PROT_READ | uc_mod.UC_PROT_EXEC


class EmulatedCpuError(ForeignKernelError):
    """The CPU cannot be made or used as asked (a target without one, a bad argument, a call while
    one runs)."""

    def __init__(self, message: str) -> None:
        super().__init__(StatusCode.INVALID_ARGUMENT, message)


class EmulatedFault(ForeignKernelError):
    """Emulated code faulted. `kind` says how ("invalid instruction", "write to unmapped memory",
    "breakpoint instruction", ...), `pc` where, `address` what it accessed (the pc for an instruction
    fault)."""

    def __init__(self, kind: str, pc: int, address: int, what: str = "") -> None:
        self.kind, self.pc, self.address = kind, pc, address
        super().__init__(StatusCode.ABORTED, f"{what or 'emulated call'}: {kind} at pc 0x{pc:x}, address 0x{address:x}")


class InstructionBudgetExceeded(ForeignKernelError):
    """Emulated code ran more than `max_instructions` instructions."""

    def __init__(self, limit: int, pc: int, what: str = "") -> None:
        self.limit, self.pc = limit, pc
        super().__init__(StatusCode.DEADLINE_EXCEEDED,
                         f"{what or 'emulated call'}: more than {limit} instructions (stopped at pc 0x{pc:x})")


@dataclass(frozen=True)
class _Arch:
    """What one target's CPU and C calling convention need."""

    arch: int
    mode: int
    pc: int
    sp: int
    result: int
    args: tuple[int, ...]  # integer argument registers, in order
    link: int | None  # return-address register; None: pushed on the stack (x86)
    ret: bytes  # a return instruction: fills the trap area
    slot: int  # bytes per stack argument
    push_return: bool  # the call pushes the return address (x86)


_ARCHES = {
    "riscv32": _Arch(uc_mod.UC_ARCH_RISCV, uc_mod.UC_MODE_RISCV32, RV.UC_RISCV_REG_PC, RV.UC_RISCV_REG_SP,
                     RV.UC_RISCV_REG_A0, tuple(getattr(RV, f"UC_RISCV_REG_A{i}") for i in range(8)),
                     RV.UC_RISCV_REG_RA, struct.pack("<I", 0x00008067), 4, False),
    "riscv64": _Arch(uc_mod.UC_ARCH_RISCV, uc_mod.UC_MODE_RISCV64, RV.UC_RISCV_REG_PC, RV.UC_RISCV_REG_SP,
                     RV.UC_RISCV_REG_A0, tuple(getattr(RV, f"UC_RISCV_REG_A{i}") for i in range(8)),
                     RV.UC_RISCV_REG_RA, struct.pack("<I", 0x00008067), 8, False),
    "armv7": _Arch(uc_mod.UC_ARCH_ARM, uc_mod.UC_MODE_ARM, ARM.UC_ARM_REG_PC, ARM.UC_ARM_REG_SP,
                   ARM.UC_ARM_REG_R0, (ARM.UC_ARM_REG_R0, ARM.UC_ARM_REG_R1, ARM.UC_ARM_REG_R2, ARM.UC_ARM_REG_R3),
                   ARM.UC_ARM_REG_LR, struct.pack("<I", 0xE12FFF1E), 4, False),  # bx lr
    "aarch64": _Arch(uc_mod.UC_ARCH_ARM64, uc_mod.UC_MODE_ARM, A64.UC_ARM64_REG_PC, A64.UC_ARM64_REG_SP,
                     A64.UC_ARM64_REG_X0, tuple(getattr(A64, f"UC_ARM64_REG_X{i}") for i in range(8)),
                     A64.UC_ARM64_REG_X30, struct.pack("<I", 0xD65F03C0), 8, False),  # ret
    "i386": _Arch(uc_mod.UC_ARCH_X86, uc_mod.UC_MODE_32, X86.UC_X86_REG_EIP, X86.UC_X86_REG_ESP,
                  X86.UC_X86_REG_EAX, (), None, b"\xc3", 4, True),
    "x86_64": _Arch(uc_mod.UC_ARCH_X86, uc_mod.UC_MODE_64, X86.UC_X86_REG_RIP, X86.UC_X86_REG_RSP,
                    X86.UC_X86_REG_RAX, (X86.UC_X86_REG_RDI, X86.UC_X86_REG_RSI, X86.UC_X86_REG_RDX,
                                         X86.UC_X86_REG_RCX, X86.UC_X86_REG_R8, X86.UC_X86_REG_R9),
                    None, b"\xc3", 8, True),
}

TARGETS = tuple(_ARCHES)
# ARM: vmov.f32 d16, #0.5; vcvt.s32.f32 d16, d16 (NEON, rounds toward zero: inexact); bx r12.
_NEON_INEXACT = struct.pack("<III", 0xF2C60F10, 0xF3FB0720, 0xE12FFF1C)
# The floating-point control register of each target that has one IREE's fpu_state writes.
_FPU_CONTROL = {"x86_64": X86.UC_X86_REG_MXCSR, "i386": X86.UC_X86_REG_MXCSR,
                "aarch64": A64.UC_ARM64_REG_FPCR, "armv7": ARM.UC_ARM_REG_FPSCR}

_ACCESS = {
    uc_mod.UC_MEM_READ_UNMAPPED: "read of unmapped memory",
    uc_mod.UC_MEM_WRITE_UNMAPPED: "write to unmapped memory",
    uc_mod.UC_MEM_FETCH_UNMAPPED: "fetch from unmapped memory",
    uc_mod.UC_MEM_READ_PROT: "read of protected memory",
    uc_mod.UC_MEM_WRITE_PROT: "write to protected memory",
    uc_mod.UC_MEM_FETCH_PROT: "fetch from protected memory",
}
_ERRORS = {
    uc_mod.UC_ERR_FETCH_PROT: "fetch from protected memory",  # a data page: no hook, the pc is the address
    uc_mod.UC_ERR_INSN_INVALID: "invalid instruction",
    uc_mod.UC_ERR_EXCEPTION: "unhandled CPU exception",
    uc_mod.UC_ERR_READ_UNALIGNED: "unaligned read",
    uc_mod.UC_ERR_WRITE_UNALIGNED: "unaligned write",
    uc_mod.UC_ERR_FETCH_UNALIGNED: "unaligned fetch",
}


# CPU exception numbers the interrupt hook gets (RISC-V mcause codes, QEMU's EXCP_* for ARM, x86
# vectors) -> what happened.
_EXCEPTIONS = {
    "riscv": {2: "invalid instruction", 3: "breakpoint instruction", 8: "system call", 9: "system call",
              11: "system call"},
    "arm": {1: "invalid instruction", 2: "system call", 7: "breakpoint instruction"},
    "x86": {0: "divide error", 3: "breakpoint instruction", 6: "invalid instruction"},
}


def _preempt(ref: "weakref.ref[EmulatedCpu]") -> None:
    """A CPU's preemption thread: while an uncounted call runs (`_uncounted`), stop the emulation
    every QUANTUM seconds (the call resumes it at once, exactly where it stopped, after Python ran
    its signal handlers). A call only raises a flag: waking a thread per call would cost more than a
    small kernel. Holds the CPU weakly; ends when it is closed or gone, or after IDLE_QUANTA quanta
    without an uncounted call (the next one starts it again)."""
    idle = 0
    while True:
        cpu = ref()
        if cpu is None or cpu._closed:
            return
        quantum = cpu.quantum
        del cpu
        time.sleep(quantum)
        cpu = ref()
        if cpu is None or cpu._closed:
            return
        if cpu._uncounted:
            idle = 0
            cpu.uc.emu_stop()  # between two emu_starts it is a no-op; the next quantum stops it
        else:
            idle += 1
            if idle >= IDLE_QUANTA:
                with cpu._preempt_lock:
                    # A call sets its flag before it looks for this thread: seen clear here, the
                    # call to come starts a new thread.
                    if not cpu._uncounted:
                        cpu._preempter = None
                        return
        del cpu


class EmulatedCpu:
    """One emulated CPU of `heap.machine`'s target running on `heap`'s memory (see the module
    docstring)."""

    def __init__(self, heap: Heap, *, stack_size: int = STACK_SIZE, chunk: int = CHUNK,
                 quantum: float = QUANTUM, reference: bool | None = None) -> None:
        machine = heap.machine
        arch = _ARCHES.get(machine.name)
        if arch is None:
            raise EmulatedCpuError(f"no emulated CPU for target {machine.name!r}; there is one for "
                                   f"{', '.join(TARGETS)}")
        if not isinstance(stack_size, int) or stack_size < 4096:
            raise EmulatedCpuError(f"stack size must be an int of at least 4096 bytes, got {stack_size!r}")
        if not isinstance(chunk, int) or chunk <= 0:
            raise EmulatedCpuError(f"chunk must be a positive number of instructions, got {chunk!r}")
        if not isinstance(quantum, (int, float)) or not 0 < quantum <= 10:
            raise EmulatedCpuError(f"quantum must be a number of seconds in (0, 10], got {quantum!r}")
        self.heap = heap
        self.chunk = chunk
        self.quantum = float(quantum)
        self.machine = machine
        self.target = machine.name
        self._arch = arch
        self._family = ("riscv" if machine.name.startswith("riscv") else
                        "x86" if machine.name in ("i386", "x86_64") else "arm")
        self._word = machine.pointer_size
        self._mask = machine.word_mask
        self._word_fmt = struct.Struct("<I" if self._word == 4 else "<Q")
        self._closed = False
        self._running = False
        self._counted_code = True  # what the translated code holds: Unicorn's instruction count or not
        self._thumb = machine.name == "armv7"  # a stop may land in Thumb code
        self._uncounted = False  # an uncounted call is running: the preemption thread stops it
        self._preempt_lock = threading.Lock()
        self._preempter: threading.Thread | None = None
        self._listening = False
        self._stack = 0
        self.instructions = 0  # the last call with a budget: instructions of its whole chunks (0 without)
        self._neon_stub = 0  # armv7: the entry that rounds once on NEON first (`_set_inexact`)
        self._r12 = ctypes.c_uint64()
        uc = self.uc = uc_mod.Uc(arch.arch, arch.mode)
        if arch.arch in (uc_mod.UC_ARCH_ARM, uc_mod.UC_ARCH_ARM64):
            # Unicorn's ARM pages are 1 KiB (ARMv5's tiny pages) unless set before first use: a TLB
            # entry would cover a quarter of a 4 KiB page, and a matmul's TLB thrash.
            uc.ctl_set_page_size(PAGE)
        self.reference = heap.reference if reference is None else bool(reference)
        self._code_pages: Any = None  # the TLB fill's list of code pages (None: the MMU's TLB)
        self._code_list: list[tuple[int, int]] = []  # the window's executable ranges
        if not self.reference:
            self._fill_tlb()
        # General registers through Unicorn's C API: its Python wrapper picks a register class per
        # access, a third of a small kernel call's time.
        # A call's registers (argument registers, then the link register where there is one, then
        # sp) are written in one batch, and pc and the result read back in one: each C call through
        # ctypes costs about as much as a small kernel's instructions.
        n = len(arch.args) + 2
        self._batch_values = (ctypes.c_uint64 * n)()
        self._batch_pointers = (ctypes.c_void_p * n)(
            *(ctypes.addressof(self._batch_values) + 8 * i for i in range(n)))
        self._batch_regs: dict[int, Any] = {}  # register-argument count -> its c_int array
        self._done_regs = (ctypes.c_int * 2)(arch.pc, arch.result)
        space = self._space = heap.space
        self._enable_fpu()
        self.flush_bits = FLUSH_BITS.get(machine.name, 0)  # what a dispatch's push sets in fpu_control
        # The window, in regions (their starts, sorted, and start -> [end, perms]: what Unicorn has);
        # then the protections as they stand now, and every change from now on.
        self._lo, self._hi = space.base, space.end
        self._starts: list[int] = []
        self._regions: dict[int, list[int]] = {}
        self._guards: dict[int, tuple[int, int]] = {}  # region start -> (its end, its fault hook)
        a = self._lo
        while a < self._hi:
            # Regions double in size from the bottom of the window, where the heap allocates first.
            n = min(max(MIN_REGION, a - self._lo), self._hi - a)
            uc.mem_map_ptr(a, n, _PROT_RW, space.host_address(a))
            self._starts.append(a)
            self._regions[a] = [a + n, _PROT_RW]
            a += n
        space.add_protection_listener(self._mirror)
        self._listening = True
        if not self.reference:
            self._set_inexact()
        # The trap area: the code range, execute-only, full of return instructions.
        self._code_lo, self._code_hi = space.code_lo, space.code_hi
        fill = arch.ret * ((self._code_hi - self._code_lo) // len(arch.ret))
        uc.mem_map(self._code_lo, self._code_hi - self._code_lo, uc_mod.UC_PROT_ALL)
        uc.mem_write(self._code_lo, fill)
        uc.mem_protect(self._code_lo, self._code_hi - self._code_lo, uc_mod.UC_PROT_EXEC)
        self._table: callbacks.FunctionTable = (
            callbacks.HandleFunctions(self._code_lo, self._code_hi) if machine.is_host else heap.functions)
        self._prototypes: dict[int, Any] = {}
        self._host: dict[int, tuple[Callable[..., Any], int, str]] = {}
        self._return = self._table.make_raw(self._prototype(0), self._never, name="emulated CPU return")
        self._host[self._return] = (self._never, 0, "emulated CPU return")
        self._fault: tuple[str, int, int] | None = None
        uc.hook_add(uc_mod.UC_HOOK_CODE, self._on_trap_area, begin=self._code_lo, end=self._code_hi - 1)
        # Invalid accesses are reported by hooks over what can fault only: all outside the window,
        # and each region of the window a page of which cannot be read or written (`_guard`). A
        # memory hook over a page keeps every store to it on Unicorn's slow path (notdirty_write
        # never marks such a page dirty), so none covers the heap's ordinary pages.
        if self._lo > 0:
            uc.hook_add(uc_mod.UC_HOOK_MEM_INVALID, self._on_bad_access, begin=0, end=self._lo - 1)
        if self._hi <= _TOP:
            uc.hook_add(uc_mod.UC_HOOK_MEM_INVALID, self._on_bad_access, begin=self._hi, end=_TOP)
        for start in self._starts:
            self._guard(start)
        uc.hook_add(uc_mod.UC_HOOK_INTR, self._on_interrupt)
        try:
            self._stack = heap.malloc(stack_size, guard=True, tag="emulated CPU stack")
        except BaseException:
            self.close()
            raise
        self._stack_size = stack_size
        self._stack_top = (self._stack + stack_size) & -16

    # -- set-up ------------------------------------------------------------------------------------

    def _fill_tlb(self) -> None:
        """Unicorn's TLB filled by the C helper's callback instead of the CPU's MMU (off): each page
        maps to itself, an entry of a code page readable and executable, of any other readable and
        writable. Unicorn marks a written page dirty, which puts its stores on the fast path, only
        when its entry cannot execute; the MMU makes every entry executable, so every store took
        the slow path (a helper call, two region lookups, a look for translated code on the page).
        The regions' permissions are checked after the fill as before. Without the C helper (no
        compiler where it was not built) the CPU keeps the MMU's TLB: the same results, slower."""
        from .native import NativeBuildError, native
        try:
            helper = native()
        except NativeBuildError:
            return
        ffi = self._ffi = helper.ffi
        code = self._code_pages = ffi.new("ireeabi_code_pages_t *")
        code.fetch, code.write = uc_mod.UC_MEM_FETCH, uc_mod.UC_MEM_WRITE
        code.code_perms, code.data_perms = _TLB_CODE, _PROT_RW
        self._code_ranges = ffi.new("uint64_t[]", 2)  # what code.ranges points at (kept alive here)
        code.ranges = self._code_ranges
        self.uc.ctl_set_tlb_mode(uc_mod.UC_TLB_VIRTUAL)
        handle = uc_hook_h()
        status = _UCLIB.uc_hook_add(self.uc._uch, ctypes.byref(handle), uc_mod.UC_HOOK_TLB_FILL,
                                    ctypes.c_void_p(helper.lib.ireeabi_tlb_fill_address()),
                                    ctypes.c_void_p(int(ffi.cast("uintptr_t", code))),
                                    ctypes.c_uint64(1), ctypes.c_uint64(0))
        if status:
            raise uc_mod.UcError(status)

    def _list_code_pages(self) -> None:
        """Record the window's executable ranges (`_code_list`) after a change of one, and tell the
        TLB fill, whose entries made under the old list are dropped."""
        ranges: list[list[int]] = []
        for start in self._starts:
            end, perms = self._regions[start]
            if perms & _EXEC:
                if ranges and ranges[-1][1] == start:
                    ranges[-1][1] = end
                else:
                    ranges.append([start, end])
        self._code_list = [(lo, hi) for lo, hi in ranges]
        if self._code_pages is None:
            return
        self._code_ranges = self._ffi.new("uint64_t[]", [a for r in ranges for a in r] or [0, 0])
        self._code_pages.ranges = self._code_ranges
        self._code_pages.count = len(ranges)
        self.uc.ctl(uc_mod.UC_CTL_TLB_FLUSH, uc_mod.UC_CTL_IO_WRITE)  # drop entries of the old list

    def _enable_fpu(self) -> None:
        uc, name = self.uc, self.target
        if name.startswith("riscv"):
            uc.reg_write(RV.UC_RISCV_REG_MSTATUS, uc.reg_read(RV.UC_RISCV_REG_MSTATUS) | (3 << 13))  # FS = dirty
        elif name == "armv7":
            uc.reg_write(ARM.UC_ARM_REG_C1_C0_2, uc.reg_read(ARM.UC_ARM_REG_C1_C0_2) | (0xF << 20))  # cp10, cp11
            uc.reg_write(ARM.UC_ARM_REG_FPEXC, 0x40000000)  # EN
        elif name == "aarch64":
            uc.reg_write(A64.UC_ARM64_REG_CPACR_EL1, uc.reg_read(A64.UC_ARM64_REG_CPACR_EL1) | (3 << 20))  # FPEN

    def _set_inexact(self) -> None:
        """Set the cumulative inexact flag (riscv fflags.NX, AArch64 FPSR.IXC, ARM FPSCR.IXC), as
        in a thread that has rounded a float once. QEMU computes float add, sub, mul, div, fma and
        sqrt on the host's FPU only while that flag is set (it checks nothing else that a
        computation could change), and falls back to soft-float wherever the host could round or
        flag differently: the same bits either way, the fast path from the first operation instead
        of from the first inexact one (a matmul of small integers never has one). Kernels do not
        read the flags. ARM's NEON keeps its own flags, which every FPSCR write (a dispatch's push
        and pop) clears: an uncounted armv7 call enters its function through `_neon_stub`, three
        instructions that round once on NEON (d16 and r12, scratch registers at a call, are left
        changed)."""
        uc, name = self.uc, self.target
        self._neon_stub = 0
        if name.startswith("riscv"):
            uc.reg_write(RV.UC_RISCV_REG_FFLAGS, uc.reg_read(RV.UC_RISCV_REG_FFLAGS) | 0x1)
        elif name == "aarch64":
            uc.reg_write(A64.UC_ARM64_REG_FPSR, uc.reg_read(A64.UC_ARM64_REG_FPSR) | 0x10)
        elif name == "armv7":
            uc.reg_write(ARM.UC_ARM_REG_FPSCR, uc.reg_read(ARM.UC_ARM_REG_FPSCR) | 0x10)
            stub = self._hi  # a page past the window, execute-only (reads there fault as outside it)
            if stub + PAGE <= 1 << 32:
                uc.mem_map(stub, PAGE, uc_mod.UC_PROT_ALL)
                uc.mem_write(stub, _NEON_INEXACT)
                uc.mem_protect(stub, PAGE, uc_mod.UC_PROT_EXEC)
                self._neon_stub = stub

    def fpu_control(self) -> int:
        """The guest's floating-point control register (0 on riscv, which has none to flush)."""
        self._check_open()
        reg = _FPU_CONTROL.get(self.target)
        return 0 if reg is None else int(self.uc.reg_read(reg))

    def set_fpu_control(self, value: int) -> None:
        """Write the guest's control register (Unicorn updates its float status from it); nothing on
        riscv."""
        self._check_open()
        reg = _FPU_CONTROL.get(self.target)
        if reg is not None:
            self.uc.reg_write(reg, value & 0xFFFFFFFF)

    def _mirror(self, offset: int, size: int, accessible: bool) -> None:
        """The address space protects or frees whole pages at arena `offset`: the same in here."""
        self._set_perms(self._space.base + offset, size, _PROT_RW if accessible else _PROT_NONE)

    def _set_perms(self, address: int, size: int, perms: int) -> None:
        """Unicorn's permissions of [address, address + size) (whole pages of the window), and the
        TLB fill's list of code pages when code is made or unmade."""
        end = address + size
        code = perms & _EXEC or any(lo < end and address < hi for lo, hi in self._code_list)
        self._protect_regions(address, size, perms)
        if code:
            self._list_code_pages()

    def _protect_regions(self, address: int, size: int, perms: int) -> None:
        """Unicorn's permissions of [address, address + size). Within one region of at most GRAIN
        bytes (after halving), one protection that splits it in up to three (a guard page's case:
        one re-map); else its two ends made region boundaries first (`_boundary`), so the change
        splits nothing."""
        end = address + size
        starts, regions = self._starts, self._regions
        start = self._halve(address)
        region_end, old = regions[start]
        if end <= region_end and region_end - start <= GRAIN:
            if old != perms:
                self.uc.mem_protect(address, size, perms)
                for cut in (address, end):
                    if start < cut < region_end and cut not in regions:
                        bisect.insort(starts, cut)
                regions[start] = [address, old] if start < address else [end, perms]
                if start < address:
                    regions[address] = [end, perms]
                if end < region_end:
                    regions[end] = [region_end, old]
                for cut in (start, address, end):
                    if cut in regions:
                        self._guard(cut)
            return
        self._boundary(address)
        self._boundary(end)
        i = bisect.bisect_left(starts, address)
        while i < len(starts) and starts[i] < end:
            region = regions[starts[i]]
            if region[1] != perms:
                self.uc.mem_protect(starts[i], region[0] - starts[i], perms)
                region[1] = perms
                self._guard(starts[i])
            i += 1

    def _split(self, start: int, cut: int) -> None:
        """Split the region at `start` in two at `cut`: a protection of [start, cut) with the
        region's own permissions (Unicorn splits the region, re-mapping it whole)."""
        end, perms = self._regions[start]
        self.uc.mem_protect(start, cut - start, perms)
        self._regions[start] = [cut, perms]
        self._regions[cut] = [end, perms]
        bisect.insort(self._starts, cut)
        self._guard(start)
        self._guard(cut)

    def _guard(self, start: int) -> None:
        """Give the region at `start` the fault hook it needs, and only that: one over the region
        when a page of it cannot be read or written (its faults then name their address), none
        when it can (a hook would keep its stores on Unicorn's slow path). A fetch from a data
        page needs none: Unicorn's error says so, and the pc is the address."""
        end, perms = self._regions[start]
        hook = self._guards.get(start)
        if hook is not None:
            if perms & _PROT_RW != _PROT_RW and hook[0] == end:
                return
            del self._guards[start]
            self.uc.hook_del(hook[1])
        if perms & _PROT_RW != _PROT_RW:
            self._guards[start] = (end, self.uc.hook_add(uc_mod.UC_HOOK_MEM_INVALID, self._on_bad_access,
                                                         begin=start, end=end - 1))

    def _halve(self, address: int) -> int:
        """Halve the region holding `address` (a page of the window) until the piece holding it is
        at most GRAIN bytes or starts there; that piece's start. A split re-maps the whole region
        (Unicorn flushes its pages one by one): halving keeps later splits nearby small."""
        starts, regions = self._starts, self._regions
        start = starts[bisect.bisect_right(starts, address) - 1]
        while start != address and regions[start][0] - start > GRAIN:
            cut = start + ((regions[start][0] - start) // 2 & -PAGE)
            self._split(start, cut)
            if address >= cut:
                start = cut
        return start

    def _boundary(self, address: int) -> None:
        """Make `address` (a page of the window, or its end) the start of a region: halved down to
        GRAIN (`_halve`), then the piece split there."""
        if address >= self._hi:
            return
        start = self._halve(address)
        if start != address:
            self._split(start, address)

    def regions(self) -> list[tuple[int, int, int]]:
        """The emulator's regions of the window: (start, end, Unicorn permissions), in order."""
        return [(a, *self._regions[a]) for a in self._starts]

    def _prototype(self, arity: int) -> Any:
        p = self._prototypes.get(arity)
        if p is None:
            p = self._prototypes[arity] = ctypes.CFUNCTYPE(ctypes.c_void_p, *[ctypes.c_void_p] * arity)
        return p

    @staticmethod
    def _never(*args: int) -> int:
        raise AssertionError("the return trap is never called")

    # -- public ------------------------------------------------------------------------------------

    def host_function(self, fn: Callable[..., int | None], arity: int, name: str) -> int:
        """A target address that runs `fn(*args)` (`arity` integer arguments, read per the C calling
        convention) when emulated code calls it, and returns its result (masked to the word)."""
        self._check_open()
        if not callable(fn):
            raise EmulatedCpuError(f"host function {name!r}: {fn!r} is not callable")
        if not isinstance(arity, int) or not 0 <= arity <= 16:
            raise EmulatedCpuError(f"host function {name!r}: arity must be an int in 0..16, got {arity!r}")
        address = self._table.make_raw(self._prototype(arity), fn, name=name)
        self._host[address] = (fn, arity, name)
        return address

    def call(self, function: int, args: Sequence[int], *, max_instructions: int | None = None,
             what: str = "") -> int:
        """Call target address `function` with integer arguments (see the module docstring); its
        integer result, masked to the word."""
        if self._closed:
            self._check_open()
        if self._running:
            raise EmulatedCpuError(f"{what or 'emulated call'}: the CPU is already running a call "
                                   "(a host function cannot call back into emulated code)")
        mask = self._mask
        if type(function) is not int and not isinstance(function, int) or not 0 < function <= mask:
            raise EmulatedCpuError(f"{what or 'emulated call'}: function address {function!r} is not a "
                                   f"non-null {self._word * 8}-bit address")
        if max_instructions is not None and (not isinstance(max_instructions, int) or max_instructions < 0):
            raise EmulatedCpuError(f"{what or 'emulated call'}: max_instructions must be a non-negative "
                                   f"int or None, got {max_instructions!r}")
        if len(args) > self._stack_size // (4 * self._arch.slot):
            raise EmulatedCpuError(f"{what or 'emulated call'}: {len(args)} arguments do not fit the CPU's "
                                   f"{self._stack_size}-byte stack")
        words = [a & mask for a in args if type(a) is int]
        if len(words) != len(args):  # an int subclass passes; anything else is refused
            for i, a in enumerate(args):
                if not isinstance(a, int):
                    raise EmulatedCpuError(f"{what or 'emulated call'}: argument {i} is {a!r}, not an int")
            words = [a & mask for a in args]
        self._set_up_call(words)
        self._running = True
        code = self._code_pages
        fills = 0 if code is None else code.fills
        try:
            return self._run(function, max_instructions, what)
        finally:
            self._running = False
            if code is not None and code.fills - fills > THRASH:
                # The call's pages did not fit the TLB. Unicorn's TLB (QEMU's) starts at 256
                # entries and doubles only when a flush finds it over 70% used: flush, so that
                # it grows (a refill goes through the fill, which costs more than the MMU's).
                self.uc.ctl(uc_mod.UC_CTL_TLB_FLUSH, uc_mod.UC_CTL_IO_WRITE)

    def invalidate(self, address: int, size: int) -> None:
        """Forget code translated from [address, address + size): its bytes changed since it ran."""
        self._check_open()
        if size > 0:
            self.uc.ctl_remove_cache(address, address + size)

    def protect(self, address: int, size: int, perms: str) -> None:
        """Set the emulator's permissions ("rwx", "r-x", "r--", "---", ...) of whole pages of the
        window; the host's stay as they are."""
        self._check_open()
        if (address % PAGE or size % PAGE or size <= 0 or not self._lo <= address
                or address + size > self._hi):
            raise EmulatedCpuError(f"protect of [0x{address:x}, +{size}): not whole pages of the window "
                                   f"0x{self._lo:x}..0x{self._hi:x}")
        if not re.fullmatch(r"[r-][w-][x-]", perms):
            raise EmulatedCpuError(f"permissions must look like 'r-x', got {perms!r}")
        bits = ((uc_mod.UC_PROT_READ if perms[0] == "r" else 0) | (uc_mod.UC_PROT_WRITE if perms[1] == "w" else 0)
                | (uc_mod.UC_PROT_EXEC if perms[2] == "x" else 0))
        self._set_perms(address, size, bits)

    def close(self) -> None:
        """Forget the handles, free the stack, stop mirroring protections. Idempotent."""
        if self._closed:
            return
        self._closed = True
        # The preemption thread sees the CPU closed within a quantum and ends.
        if self._listening:
            self._space.remove_protection_listener(self._mirror)
            self._listening = False
        if getattr(self, "_host", None):
            for address in self._host:
                self._table.forget(address)
            self._host.clear()
        if self._stack and not self.heap.closed:
            try:
                self.heap.free(self._stack)
            except HeapError:
                pass  # the heap forgot it already
        self._stack = 0

    def __enter__(self) -> "EmulatedCpu":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise EmulatedCpuError(f"emulated {self.target} CPU: used after close")

    # -- calls -------------------------------------------------------------------------------------

    def _set_up_call(self, words: list[int]) -> None:
        arch = self._arch
        in_regs = words[:len(arch.args)]
        on_stack = words[len(arch.args):]
        slot = arch.slot
        area = (len(on_stack) * slot + 15) & -16
        sp = self._stack_top - area  # 16-aligned: where the stack arguments start
        for i, w in enumerate(on_stack):
            self._word_fmt_for(slot).pack_into(self.heap.space.bytes, sp + i * slot - self._lo, w)
        values = self._batch_values
        for i, w in enumerate(in_regs):
            values[i] = w
        n = len(in_regs)
        if arch.push_return:
            sp -= slot
            self._word_fmt_for(slot).pack_into(self.heap.space.bytes, sp - self._lo, self._return)
        else:
            values[n] = self._return
            n += 1
        values[n] = sp
        regs = self._batch_regs.get(len(in_regs))
        if regs is None:
            regs = self._batch_regs[len(in_regs)] = (ctypes.c_int * (n + 1))(
                *arch.args[:len(in_regs)], *(() if arch.push_return else (arch.link,)), arch.sp)
        status = _UCLIB.uc_reg_write_batch(self.uc._uch, regs, self._batch_pointers, n + 1)
        if status:
            raise uc_mod.UcError(status)

    def _word_fmt_for(self, slot: int) -> struct.Struct:
        return self._word_fmt if slot == self._word else struct.Struct("<Q")

    def _run(self, function: int, budget: int | None, what: str) -> int:
        uc = self.uc
        counted = budget is not None
        if counted != self._counted_code:
            # Unicorn keeps translated code across hook changes, and `count` is a hook: code
            # translated with (without) it would keep (skip) counting in the other mode.
            uc.ctl_flush_tb()
            self._counted_code = counted
        if counted:
            return self._loop(function, budget, what)
        if self._neon_stub:  # (a counted call would count its instructions)
            self._r12.value = function
            status = _UCLIB.uc_reg_write(uc._uch, ARM.UC_ARM_REG_R12, ctypes.byref(self._r12))
            if status:
                raise uc_mod.UcError(status)
            function = self._neon_stub
        self._uncounted = True
        try:
            if self._preempter is None:
                self._start_preempter()
            return self._loop(function, budget, what)
        finally:
            self._uncounted = False

    def _start_preempter(self) -> None:
        """Start the thread that stops uncounted calls every QUANTUM seconds, so that Python gets
        to run its signal handlers."""
        with self._preempt_lock:
            if self._preempter is None:
                self._preempter = threading.Thread(target=_preempt, args=(weakref.ref(self),),
                                                   name=f"emulated {self.target} CPU preemption", daemon=True)
                self._preempter.start()

    def _loop(self, function: int, budget: int | None, what: str) -> int:
        uc = self.uc
        pc = function
        done = 0
        self.instructions = 0
        stop = self._return
        thumb = self._thumb
        while True:
            count = 0 if budget is None else min(self.chunk, budget - done + 1)
            self._fault = None
            try:
                uc.emu_start(pc, stop, count=count)
            except uc_mod.UcError as e:
                self._forget_faulting_page()
                raise self._fault_from(e, what) from None
            if self._fault is not None:
                self._forget_faulting_page()
                kind, at, address = self._fault
                raise EmulatedFault(kind, at, address, what)
            status = _UCLIB.uc_reg_read_batch(uc._uch, self._done_regs, self._batch_pointers, 2)
            if status:
                raise uc_mod.UcError(status)
            pc = self._batch_values[0] & self._mask
            if pc == stop:
                self.instructions = done  # to a chunk: the last one's count is not known
                return self._batch_values[1] & self._mask
            if budget is not None:  # the chunk ran out; uncounted, the preemption thread stopped it
                done += count
                self.instructions = done
                if done > budget:
                    raise InstructionBudgetExceeded(budget, pc, what)
            if thumb and uc.reg_read(ARM.UC_ARM_REG_CPSR) & 0x20:
                pc |= 1  # resume in Thumb state

    def _forget_faulting_page(self) -> None:
        """Drop the TLB after a fault. Unicorn fills a page's entry before it checks the region's
        permissions, and the entry of a page that faulted stays: a later read of the same guard
        page would hit it and read on, unchecked."""
        self.uc.ctl(uc_mod.UC_CTL_TLB_FLUSH, uc_mod.UC_CTL_IO_WRITE)

    def _fault_from(self, e: "uc_mod.UcError", what: str) -> EmulatedFault:
        pc = self.uc.reg_read(self._arch.pc)
        if self._fault is not None:
            kind, at, address = self._fault
            return EmulatedFault(kind, at, address, what)
        kind = _ERRORS.get(e.errno, f"emulation error ({e})")
        return EmulatedFault(kind, pc, pc, what)

    # -- hooks (run inside emu_start; an exception stops it and comes out of it) ---------------------

    def _on_bad_access(self, uc: Any, access: int, address: int, size: int, value: int, _: Any) -> bool:
        self._fault = (_ACCESS.get(access, f"bad memory access ({access})"), uc.reg_read(self._arch.pc),
                       address)
        return False

    def _on_interrupt(self, uc: Any, intno: int, _: Any) -> None:
        pc = uc.reg_read(self._arch.pc)
        family = self._family
        if family == "riscv":
            pc -= 4  # Unicorn steps a RISC-V pc 4 bytes past the instruction before the hook runs
        self._fault = (_EXCEPTIONS[family].get(intno, f"CPU exception {intno}"), pc, pc)
        uc.emu_stop()

    def _on_trap_area(self, uc: Any, address: int, size: int, _: Any) -> None:
        """Emulated code reached the trap area: the return trap (emu_start's `until` stops there
        first), or a function handle: run it and return to its caller."""
        if address == self._return:
            uc.emu_stop()
            return
        host = self._host.get(address)
        if host is not None:
            fn, arity, name = host
            result = fn(*self._read_args(arity))
            if result is not None and not isinstance(result, int):
                raise EmulatedCpuError(f"host function {name!r} returned {result!r}, not an int")
        else:
            r = self._table.find(address)
            if r is None:
                self._fault = ("call of an unregistered function handle", address, address)
                uc.emu_stop()
                return
            result = r.pointer(*self._read_args(len(r.prototype._argtypes_)))
            if callbacks.PARKED.errors:
                callbacks.reraise_parked(result)
        arch = self._arch
        uc.reg_write(arch.result, (result or 0) & self._mask)
        # Return here rather than by the return instruction at the handle: a stop requested
        # meanwhile (a chunk's end, a preemption) then resumes in the caller, never calling `fn`
        # a second time.
        if arch.push_return:
            sp = uc.reg_read(arch.sp)
            back = self._word_fmt_for(arch.slot).unpack(bytes(uc.mem_read(sp, arch.slot)))[0]
            uc.reg_write(arch.sp, sp + arch.slot)
        else:
            back = uc.reg_read(arch.link)
        uc.reg_write(arch.pc, back)

    def _read_args(self, n: int) -> list[int]:
        arch, uc = self._arch, self.uc
        regs = arch.args[:n]
        out = [uc.reg_read(r) & self._mask for r in regs]
        if n > len(regs):
            sp = uc.reg_read(arch.sp) + (arch.slot if arch.push_return else 0)
            fmt = self._word_fmt_for(arch.slot)
            for i in range(n - len(regs)):
                raw = bytes(uc.mem_read(sp + i * arch.slot, arch.slot))
                out.append(fmt.unpack(raw)[0] & self._mask)
        return out


__all__ = ["CHUNK", "EmulatedCpu", "EmulatedCpuError", "EmulatedFault", "InstructionBudgetExceeded",
           "QUANTUM", "STACK_SIZE", "TARGETS"]
