"""The frame IREE allocates for a bytecode function, and the registers its verifier lets it name.

IREE sizes a frame from the function descriptor's declared counts (runtime/src/iree/vm/bytecode/
dispatch.c, iree_vm_bytecode_function_enter): the i32 bank is `count * 4` bytes and the ref bank
`count * sizeof(iree_vm_ref_t)` bytes, each rounded up to 16, zeroed, the ref bank right after the
i32 bank; past the frame lies the VM stack's free storage (where a callee's frame goes next). Its
verifier (runtime/src/iree/vm/bytecode/verifier.c, iree_vm_bytecode_function_verify) bounds the
registers of lists, branch operands and the arguments by another number: the declared count, at
least 1, rounded up to a power of two (`verifier_bound`). Between the two a register can lie past
its bank: an i32 register then overlays the ref bank, or both kinds lie past the frame.

`FrameLayout` is that layout on one data model (a ref is 16 bytes on 64-bit models, 8 on 32-bit
ones), measured with iree-run-module 3.13 (tests/vm/bytecode/test_frame_sizing.py): a function
declaring 9 i32 registers and 1 ref register reads the pointer of its %r0 through %i12. A negative
declared count becomes a frame of gigabytes there, which the stack refuses when the function is
entered (RESOURCE_EXHAUSTED, "new stack size would exceed maximum size"): `FrameLayout.too_big`.
"""
from __future__ import annotations

from dataclasses import dataclass

STACK_MAX_SIZE = 1 << 20  # IREE_VM_STACK_MAX_SIZE (runtime/src/iree/vm/stack.h)
_BANK_ALIGNMENT = 16  # both banks are rounded up to 16 bytes
I32_SIZE = 4


def verifier_bound(declared: int) -> int:
    """iree_math_round_up_to_pow2_u32(max(1, declared)): the register bound of IREE's verifier."""
    n = max(1, declared)
    return 1 << (n - 1).bit_length()


def bank_registers(declared: int, slot_size: int) -> int:
    """Registers in a bank of `declared` slots of `slot_size` bytes rounded up to 16 bytes."""
    size = -(-declared * slot_size // _BANK_ALIGNMENT) * _BANK_ALIGNMENT
    return size // slot_size


@dataclass(frozen=True)
class FrameLayout:
    """IREE's frame for a function descriptor's declared counts, on one data model. Byte offsets
    below count from the start of the i32 bank."""

    declared_i32: int
    declared_ref: int
    ref_size: int  # sizeof(iree_vm_ref_t) on the data model
    i32: int  # i32 registers in the frame's bank
    ref: int  # ref registers in the frame's bank
    i32_bound: int  # IREE's verifier bounds
    ref_bound: int
    too_big: bool  # a negative count: IREE cannot enter the function

    @property
    def ref_bank_offset(self) -> int:
        return I32_SIZE * self.i32

    @property
    def end(self) -> int:
        """The byte offset just past the frame."""
        return self.ref_bank_offset + self.ref_size * self.ref

    def i32_span(self, ordinal: int, registers: int = 1) -> tuple[int, int]:
        """[start, end) bytes of i32 registers `ordinal`..`ordinal + registers - 1`."""
        return I32_SIZE * ordinal, I32_SIZE * (ordinal + registers)

    def ref_span(self, ordinal: int) -> tuple[int, int]:
        start = self.ref_bank_offset + self.ref_size * ordinal
        return start, start + self.ref_size


def frame_layout(declared_i32: int, declared_ref: int, ref_size: int) -> FrameLayout:
    """The frame IREE allocates for these declared counts (negative ones: none, `too_big`)."""
    too_big = declared_i32 < 0 or declared_ref < 0
    return FrameLayout(
        declared_i32, declared_ref, ref_size,
        bank_registers(max(0, declared_i32), I32_SIZE), bank_registers(max(0, declared_ref), ref_size),
        verifier_bound(declared_i32), verifier_bound(declared_ref), too_big)


__all__ = ["FrameLayout", "frame_layout", "verifier_bound", "bank_registers", "STACK_MAX_SIZE"]
