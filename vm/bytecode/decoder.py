"""Decode IREE VM bytecode into instruction objects, from the encoding in `vm.bytecode.isa`.

`decode_function(code)` sweeps one function's bytecode (as cut out by its function descriptor) from
offset 0 and returns its `Instruction`s with their pc (the offset of the opcode, or of the prefix
byte for ExtF32/ExtF64 ops), mnemonic and decoded operands. Every read is bounds-checked: an
unassigned opcode raises `UnsupportedOpError` (naming the opcode value, its prefix and pc), bytes
that run out mid-instruction raise `TruncatedBytecodeError`, and other malformed encodings raise
`MalformedBytecodeError`; nothing else escapes.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, Iterator, NamedTuple, Union

from ...abi.errors import IreeAbiError
from ...abi.printable import printable
from . import isa
from .isa import OpInfo
from .module_file import ModuleFile
from ...base.status import StatusCode


# --------------------------------------------------------------------------------------------------
# Errors


class DecodeError(IreeAbiError):
    """Bytecode that cannot be decoded; `pc` is the offset of the offending instruction.

    `code` is the StatusCode IREE's loader gives for the same problem (its bytecode verifier
    walks every function when the module is created): the class default, or per instance."""

    code = StatusCode.INVALID_ARGUMENT

    def __init__(self, reason: str, pc: int, function: str | None = None,
                 code: "StatusCode | None" = None) -> None:
        # pcs are printed in hex, as iree-dump-module --bytecode_offsets shows them
        self.reason = reason
        self.pc = pc
        self.function = function
        if code is not None:
            self.code = StatusCode(code)
        where = f"{printable(function)} " if function else ""  # a module's name: escaped
        super().__init__(f"{reason} (at {where}pc 0x{pc:X})")

    def __reduce__(self) -> tuple:
        return (type(self), (self.reason, self.pc, self.function, self.code))

    def in_function(self, function: str) -> "DecodeError":
        """The same error naming `function` (when it did not yet)."""
        if self.function is not None:
            return self
        return type(self)(self.reason, self.pc, function, self.code)


class TruncatedBytecodeError(DecodeError):
    """The bytecode ends inside an instruction (IREE: "bytecode data overrun", OUT_OF_RANGE)."""

    code = StatusCode.OUT_OF_RANGE


class MalformedBytecodeError(DecodeError):
    """A well-delimited but invalid encoding (e.g. a ref register where an i32 one belongs)."""


class UnsupportedOpError(DecodeError):
    """An opcode this code does not handle: unassigned in the ISA (`mnemonic` None) or known but
    not implemented by a consumer such as the interpreter."""

    def __init__(self, opcode: int, pc: int, prefix: int | None = None,
                 mnemonic: str | None = None, function: str | None = None) -> None:
        self.opcode = opcode
        self.prefix = prefix
        self.mnemonic = mnemonic
        value = f"0x{prefix:02X} 0x{opcode:02X}" if prefix is not None else f"0x{opcode:02X}"
        if mnemonic is None:
            # IREE's verifier: "unrecognized opcode" / "unhandled ext ... opcode", INVALID_ARGUMENT
            what = f"{isa.SETS_BY_PREFIX.get(prefix, isa.CORE)} " if prefix is not None else ""
            reason = f"unknown {what}opcode {value}"
            code = StatusCode.INVALID_ARGUMENT
        else:
            # a valid op this interpreter does not run: our limitation, not a bad module
            reason = f"unsupported op vm.{mnemonic} (opcode {value})"
            code = StatusCode.UNIMPLEMENTED
        super().__init__(reason, pc, function, code)

    def __reduce__(self) -> tuple:
        return (type(self), (self.opcode, self.pc, self.prefix, self.mnemonic, self.function))

    def in_function(self, function: str) -> "UnsupportedOpError":
        if self.function is not None:
            return self
        return UnsupportedOpError(self.opcode, self.pc, self.prefix, self.mnemonic, function)


# --------------------------------------------------------------------------------------------------
# Operand values


class Register(NamedTuple):
    """A register operand: `bank` is i32/i64/f32/f64/ref for typed fields and "i32" or "ref" for
    entries of register lists (which carry no width); `ordinal` is the masked index."""

    bank: str
    ordinal: int
    move: bool = False  # ref registers only

    @property
    def is_ref(self) -> bool:
        return self.bank == isa.REF

    @property
    def encoded(self) -> int:
        if self.is_ref:
            return (isa.REF_REGISTER_TYPE_BIT | (isa.REF_REGISTER_MOVE_BIT if self.move else 0)
                    | self.ordinal)
        return self.ordinal

    def __str__(self) -> str:
        if self.is_ref:
            return f"%{'R' if self.move else 'r'}{self.ordinal}"
        if self.bank in (isa.I64, isa.F64):
            return f"%i{self.ordinal}:{self.ordinal + 1}"
        return f"%i{self.ordinal}"


class Remap(NamedTuple):
    """One (source, destination) pair of a branch operand list."""

    src: Register
    dst: Register


class BranchCase(NamedTuple):
    dest: int
    operands: tuple[Remap, ...]


OperandValue = Union[int, float, str, Register, tuple]


@dataclass(frozen=True)
class Instruction:
    pc: int  # offset of the opcode (of the prefix byte for extension ops)
    length: int  # bytes, prefix included
    op: OpInfo
    # field name -> decoded value, in encoding order; an OperandValue whose type the field's kind
    # decides (a register for REG fields, an int for ordinals...), which a union cannot say per key
    operands: dict[str, Any]

    @property
    def mnemonic(self) -> str:
        return self.op.mnemonic

    @property
    def opcode(self) -> int:
        return self.op.opcode

    @property
    def prefix(self) -> int | None:
        return self.op.prefix

    @property
    def is_block(self) -> bool:
        return self.op.opcode_set == isa.CORE and self.op.opcode == isa.BLOCK_MARKER

    def __str__(self) -> str:
        if self.is_block:
            return f"[{self.pc:08X}] ^block"
        parts = []
        for name, value in self.operands.items():
            if isinstance(value, Register):
                pass
            elif isinstance(value, tuple) and value and isinstance(value[0], Remap):
                value = "(" + ", ".join(f"{p.src}->{p.dst}" for p in value) + ")"
            elif isinstance(value, tuple):
                value = "(" + ", ".join(str(v) for v in value) + ")"
            elif isinstance(value, str):
                value = repr(value)
            parts.append(f"{name}={value}")
        return f"[{self.pc:08X}] vm.{self.mnemonic} " + " ".join(parts)


# --------------------------------------------------------------------------------------------------
# Decoding

_U16 = struct.Struct("<H")
_UNPACK = {
    isa.IMM_I32: struct.Struct("<i"), isa.IMM_I64: struct.Struct("<q"),
    isa.IMM_F32: struct.Struct("<f"), isa.IMM_F64: struct.Struct("<d"),
    isa.IMM_I16: struct.Struct("<H"), isa.FUNC: struct.Struct("<I"),
    isa.GLOBAL: struct.Struct("<I"), isa.RODATA: struct.Struct("<I"),
    isa.TYPE: struct.Struct("<I"), isa.BRANCH_TARGET: struct.Struct("<I"),
}


class _Reader:
    __slots__ = ("code", "pos", "end", "start", "what")

    def __init__(self, code: bytes, pos: int, end: int) -> None:
        self.code, self.pos, self.end, self.start = code, pos, end, pos
        self.what = "opcode"

    def need(self, n: int) -> None:
        if self.pos + n > self.end:
            raise TruncatedBytecodeError(
                f"bytecode ends inside {self.what}: {n} byte(s) needed at offset {self.pos}, "
                f"{max(self.end - self.pos, 0)} left", self.start)

    def u8(self) -> int:
        self.need(1)
        self.pos += 1
        return self.code[self.pos - 1]

    def u16(self) -> int:
        self.need(2)
        self.pos += 2
        return _U16.unpack_from(self.code, self.pos - 2)[0]

    def unpack(self, s: struct.Struct) -> Any:
        self.need(s.size)
        self.pos += s.size
        return s.unpack_from(self.code, self.pos - s.size)[0]

    def align(self, n: int) -> None:
        self.pos = (self.pos + n - 1) & ~(n - 1)

    def register(self, bank: str) -> Register:
        raw = self.u16()
        return _register(raw, bank, self.start, self.what)

    def reg_list(self, bank: str | None = None) -> tuple[Register, ...]:
        self.align(isa.REGISTER_SIZE)
        count = self.u16()
        self.need(count * isa.REGISTER_SIZE)
        out = []
        for _ in range(count):
            raw = _U16.unpack_from(self.code, self.pos)[0]
            self.pos += 2
            out.append(_list_entry(raw) if bank is None else Register(bank, raw))
        return tuple(out)

    def remap_list(self) -> tuple[Remap, ...]:
        self.align(isa.REGISTER_SIZE)
        count = self.u16()
        self.need(count * 2 * isa.REGISTER_SIZE)
        out = []
        for _ in range(count):
            src, dst = struct.unpack_from("<HH", self.code, self.pos)
            self.pos += 4
            out.append(Remap(_list_entry(src), _list_entry(dst)))
        return tuple(out)


def _register(raw: int, bank: str, pc: int, what: str) -> Register:
    """A typed register operand as IREE's interpreter reads it (its verifier checks none): a ref
    operand is the masked ordinal whatever its type bit, an i32/i64/f32/f64 one the raw value (a
    ref-encoded one indexes past 0x8000; the verifier refuses what lies past a frame)."""
    if bank == isa.REF:
        return Register(isa.REF, raw & isa.REF_REGISTER_MASK, bool(raw & isa.REF_REGISTER_MOVE_BIT))
    return Register(bank, raw)


def _list_entry(raw: int) -> Register:
    if raw & isa.REF_REGISTER_TYPE_BIT:
        return Register(isa.REF, raw & isa.REF_REGISTER_MASK, bool(raw & isa.REF_REGISTER_MOVE_BIT))
    return Register(isa.I32, raw)


def _field(r: _Reader, field: isa.Field, operands: dict) -> OperandValue:
    kind = field.kind
    if kind in isa.REGISTER_KINDS:
        return r.register(kind)
    if kind in _UNPACK:
        return r.unpack(_UNPACK[kind])
    if kind == isa.REG_LIST:
        # Segment sizes are counts, not registers; keep them as plain numbers.
        if field.name == "segment_sizes":
            return tuple(reg.encoded for reg in r.reg_list(isa.I32))
        return r.reg_list()
    if kind == isa.BRANCH_OPERANDS:
        return r.remap_list()
    if kind == isa.STRING:
        n = r.u16()
        r.need(n)
        r.pos += n
        return bytes(r.code[r.pos - n:r.pos]).decode("utf-8", errors="backslashreplace")
    if kind == isa.BRANCH_TABLE_CASES:
        cases = []
        for _ in range(operands["table_size"]):
            dest = r.unpack(_UNPACK[isa.BRANCH_TARGET])
            cases.append(BranchCase(dest, r.remap_list()))
        return tuple(cases)
    raise AssertionError(f"operand kind {kind!r} has no decoder")  # pragma: no cover (isa tables)


def decode_instruction(code: bytes, pc: int, end: int | None = None) -> Instruction:
    """Decode the instruction at `pc` of a function's bytecode `code` (up to `end`)."""
    end = len(code) if end is None else end
    r = _Reader(code, pc, end)
    opcode = r.u8()
    prefix = None
    opcode_set = isa.CORE
    if opcode in isa.SETS_BY_PREFIX:
        prefix = opcode
        opcode_set = isa.SETS_BY_PREFIX[prefix]
        r.what = f"the opcode after prefix 0x{prefix:02X}"
        opcode = r.u8()
    op = isa.lookup(opcode_set, opcode)
    if op is None:
        raise UnsupportedOpError(opcode, pc, prefix)
    operands: dict[str, OperandValue] = {}
    for field in op.fields:
        r.what = f"vm.{op.mnemonic} operand '{field.name}'"
        operands[field.name] = _field(r, field, operands)
    return Instruction(pc, r.pos - pc, op, operands)


def iter_function(code: bytes, start: int = 0, end: int | None = None) -> Iterator[Instruction]:
    """Instructions of one function's bytecode, in order (a linear sweep)."""
    end = len(code) if end is None else end
    pc = start
    while pc < end:
        inst = decode_instruction(code, pc, end)
        yield inst
        pc += inst.length


# Ops after which the next instruction must be a block marker (IREE's verifier clears its
# in-block state on exactly these).
TERMINATORS = frozenset({"Branch", "CondBranch", "BranchTable", "CallYieldable",
                         "CallVariadicYieldable", "Return", "Fail", "Yield", "Break", "CondBreak"})


def _block_structure_error(code: bytes, done: list[Instruction], pc: int) -> DecodeError | None:
    """The block-structure error IREE's verifier reports before reaching an undecodable op at `pc`.

    IREE decodes and verifies a function in one walk and checks, before decoding each op, that it
    sits inside a block (iree_vm_bytecode_function_verify_bytecode_op): bytes past a terminator or
    at a function start that is not a block marker fail there, whatever follows."""
    in_block = False
    for inst in done + [None]:
        at = inst.pc if inst is not None else pc
        if at >= len(code) - 1:
            return None  # IREE's walk never looks at an op starting at the last byte
        is_block = code[at] == isa.BLOCK_MARKER
        if not in_block and not is_block:
            return MalformedBytecodeError(f"op at pc {at:08X} is not in a block", at)
        if in_block and is_block:
            return MalformedBytecodeError(f"op at pc {at:08X} is a block while still in a block",
                                          at)
        if inst is not None:
            in_block = is_block or (in_block and inst.op.symbol not in TERMINATORS)
    return None


def decode_function(code: bytes, function: str | None = None) -> list[Instruction]:
    """All instructions of one function's bytecode; errors name `function` when given. When an
    op cannot be decoded, a block-structure error IREE would report first is raised instead."""
    done: list[Instruction] = []
    try:
        for inst in iter_function(code):
            done.append(inst)
        return done
    except DecodeError as e:
        err = _block_structure_error(code, done, e.pc) or e
        raise (err.in_function(function) if function else err) from None


def function_bytecode(module: ModuleFile, ordinal: int) -> bytes:
    """The bytecode of internal function `ordinal` of a `vm.bytecode.module_file.ModuleFile`."""
    d = module.function_descriptors[ordinal]
    return module.bytecode[d.bytecode_offset:d.bytecode_offset + d.bytecode_length]


def function_names(module: ModuleFile) -> dict[int, str]:
    """Internal ordinal -> a display name (the first export naming it, else `function#N`)."""
    names: dict[int, str] = {}
    for e in module.exported_functions:
        names.setdefault(e.internal_ordinal, e.name)
    return {i: names.get(i, f"function#{i}") for i in range(len(module.function_descriptors))}


def decode_module(module: ModuleFile) -> dict[int, list[Instruction]]:
    """Every internal function of a ModuleFile, decoded: ordinal -> instructions."""
    names = function_names(module)
    return {i: decode_function(function_bytecode(module, i), names[i])
            for i in range(len(module.function_descriptors))}
