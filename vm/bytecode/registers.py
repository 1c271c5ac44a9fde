"""Frames and register banks, and moving values between them as the calling convention says.

A frame has an i32 register bank (a bytearray; i64/f64 values occupy two consecutive registers, f32
shares the i32 bits) and a ref bank (a list; None is a null ref). In a counted backend every
non-null ref register owns one reference: `store_ref` releases what it overwrites, `retain_or_move`
is iree_vm_ref_retain_or_move between two slots, `release_frame` is the frame cleanup that releases
every ref register when a frame is left (normally or by unwinding).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .state import ExecutionState
from .decoder import Instruction, Register
from ..errors import ArgumentError, VmStatusError
from .frames import STACK_MAX_SIZE
from ...base.status import StatusCode
from ...abi.errors import IreeAbiError
from ..ops import M32, M64, F32, F64, I32, I64, U32, U64

READ = {"i32": I32, "i64": I64, "f32": F32, "f64": F64, "b32": U32, "b64": U64}
SIZES = {"i32": 4, "i64": 8, "f32": 4, "f64": 8, "b32": 4, "b64": 8}


def write_i32(regs: bytearray, off: int, v: int) -> None:
    U32.pack_into(regs, off, v & M32)


def write_i64(regs: bytearray, off: int, v: int) -> None:
    U64.pack_into(regs, off, v & M64)


def write_f32(regs: bytearray, off: int, v: float) -> None:
    try:
        F32.pack_into(regs, off, v)
    except OverflowError:
        F32.pack_into(regs, off, math.copysign(math.inf, v))


def write_f64(regs: bytearray, off: int, v: float) -> None:
    F64.pack_into(regs, off, v)


WRITE = {"i32": write_i32, "i64": write_i64, "f32": write_f32, "f64": write_f64,
         "b32": write_i32, "b64": write_i64}


# --------------------------------------------------------------------------------------------------
# Functions and frames


@dataclass
class Function:
    """One decoded, verified function: its instructions and their compiled handlers."""

    ordinal: int
    name: str
    i32_count: int
    ref_count: int
    requirements: int
    cconv_args: str | None
    cconv_results: str | None
    instructions: list[Instruction]
    code: list = field(default_factory=list)  # (handler, payload, instruction)
    result_chars: tuple[str, ...] = ()  # value_chars(cconv_results), kept for every return
    block_index: dict[int, int] = field(default_factory=dict)  # block pc -> index after marker
    # id(return operands) -> the context's leave function generated for that return site (fast path)
    leavers: dict[int, Any] = field(default_factory=dict)
    # a negative declared register count: IREE's frame would be gigabytes (frames.FrameLayout)
    too_big: bool = False
    # instruction index -> why it traps when it runs (verifier.FrameUse.traps)
    traps: dict[int, str] = field(default_factory=dict)
    ready: bool = False  # `code` is compiled (a context compiles a function at its first frame)
    handled: bool = False  # `code` holds a context's handlers (blocks follow at its first frame)


class Frame:
    __slots__ = ("fn", "ip", "regs", "refs", "return_regs", "pending")

    def __init__(self, fn: Function) -> None:
        if fn.too_big:  # iree_vm_stack_function_enter cannot grow the stack that far
            raise VmStatusError(StatusCode.RESOURCE_EXHAUSTED,
                                f"new stack size would exceed maximum size: the frame of "
                                f"{fn.name} (negative register count) > {STACK_MAX_SIZE}")
        self.fn = fn
        self.ip = 0
        self.regs = bytearray(4 * fn.i32_count)
        self.refs: list = [None] * fn.ref_count
        self.return_regs: Sequence[Register] = ()  # where a pending call's results go
        # A yieldable import call that yielded: what resumes it when its instruction runs again
        # (IREE marks it by the frame's return_registers, bytecode/dispatch.c)
        self.pending: Any = None


# --------------------------------------------------------------------------------------------------
# Refs between slots (counted when the context's buffer factory counts)


def store_ref(ctx: "ExecutionState", refs: list, index: int, value: Any) -> None:
    """Put an owned value in a ref slot, releasing what was there."""
    old = refs[index]
    refs[index] = value
    if old is not None:
        ctx.release(old)


def take_ref(ctx: "ExecutionState", refs: list, reg: Register) -> Any:
    """An owned reference to a ref operand: moved out of its register when the MOVE bit is set,
    retained otherwise."""
    value = refs[reg.ordinal]
    if reg.move:
        refs[reg.ordinal] = None
    elif value is not None:
        ctx.retain(value)
    return value


def retain_or_move(ctx: "ExecutionState", src: list, reg: Register, dst: list, dst_index: int) -> None:
    """iree_vm_ref_retain_or_move from register `reg` of `src` into slot `dst_index` of `dst` (a
    move onto itself changes nothing; a retain takes its reference before the old value goes)."""
    s = reg.ordinal
    value = src[s]
    if reg.move:
        if src is dst and s == dst_index:
            return
        src[s] = None
    elif value is not None:
        ctx.retain(value)
    old = dst[dst_index]
    dst[dst_index] = value
    if old is not None:
        ctx.release(old)


def release_frame(ctx: "ExecutionState", frame: Frame) -> None:
    """Release every ref register of a frame being left."""
    refs = frame.refs
    for i, value in enumerate(refs):
        if value is not None:
            refs[i] = None
            ctx.release(value)


# --------------------------------------------------------------------------------------------------
# Calling conventions and registers


def cconv_fragments(cconv: str | None) -> tuple[str | None, str | None]:
    """(arguments, results) of a whole cconv (`0iI_f`), `v` (void) removed."""
    if cconv is None:
        return None, None
    body = cconv[1:]
    args, _, results = body.partition("_")
    return args.replace("v", ""), results.replace("v", "")


def value_chars(fragment: str) -> list[str]:
    return [c for c in fragment if c in "iIfFr"]


def cconv_register_counts(fragment: str) -> tuple[int, int]:
    """(i32, ref) registers a function's arguments or results occupy (64-bit values aligned)."""
    i32 = refs = 0
    for char in value_chars(fragment):
        if char == "r":
            refs += 1
        elif char in "IF":
            i32 += (i32 & 1) + 2
        else:
            i32 += 1
    return i32, refs


def store_value(regs: bytearray, off: int, char: str, value: Any, what: str,
                import_result: bool = False) -> None:
    """Write a Python value into an i32-bank register per cconv char (i, I, f, F)."""
    def bad(msg: str) -> IreeAbiError:
        return (VmStatusError(StatusCode.INVALID_ARGUMENT, msg) if import_result
                else ArgumentError(msg))

    if isinstance(value, (np.integer, np.floating)):  # numpy scalars: their exact Python value
        value = value.item()
    if char in "iI":
        bits = 32 if char == "i" else 64
        if not isinstance(value, int):  # bool is an int: True -> 1
            raise bad(f"{what}: expected an integer for {char!r}, got {type(value).__name__}")
        if not -(1 << (bits - 1)) <= value < (1 << bits):
            raise bad(f"{what}: {value} does not fit i{bits}")
        (write_i32 if bits == 32 else write_i64)(regs, off, int(value))
    else:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise bad(f"{what}: expected a float for {char!r}, got {type(value).__name__}")
        (write_f32 if char == "f" else write_f64)(regs, off, float(value))


_CHAR_STRUCT = {"i": I32, "I": I64, "f": F32, "F": F64}


def load_value(regs: bytearray, off: int, char: str) -> Any:
    return _CHAR_STRUCT[char].unpack_from(regs, off)[0]


__all__ = ["Function", "Frame", "READ", "WRITE", "SIZES", "write_i32", "write_i64", "write_f32",
           "write_f64", "store_ref", "take_ref", "retain_or_move", "release_frame",
           "cconv_fragments", "value_chars", "cconv_register_counts", "store_value", "load_value"]
