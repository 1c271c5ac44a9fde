"""The IREE VM bytecode ISA (bytecode version 17.0) as data: opcode -> mnemonic, operand encoding.

Facts from runtime/src/iree/vm/bytecode/isa (opcode numbers, encodings) and the op definitions
(compiler/src/iree/compiler/Dialect/VM/IR/VMOpcodes*.td); checked against iree-dump-module 3.13.

Encoding, little endian throughout:

- an instruction is one opcode byte; the ExtF32 / ExtF64 ops are a prefix byte (0xE0 / 0xE1)
  followed by their own opcode byte (opcode sets `ext_f32` / `ext_f64`);
- every basic block starts with a one-byte block marker (0x79); branch targets are the function-
  relative offset of the marker and execution resumes after it;
- a register operand is a u16: bit 15 set = ref bank (bit 14 = MOVE, bits 0..13 ordinal),
  otherwise an i32-bank ordinal (i64/f64 values occupy the ordinal and the next one);
- immediates follow their natural width (i32/f32: 4 bytes, i64/f64: 8); function ordinals (bit 31
  set = import), global byte offsets / ref ordinals, rodata ordinals, type ids and branch target
  pcs are u32; a string is a u16 length and that many bytes;
- a register list is aligned to 2 bytes, then a u16 count and count u16 registers; a branch
  operand list (register remap) is aligned to 2, a u16 count and count (src, dst) u16 pairs.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

BYTECODE_VERSION_MAJOR = 17
BYTECODE_VERSION_MINOR = 0

BLOCK_MARKER = 0x79
BLOCK_MARKER_SIZE = 1
PREFIX_EXT_F32 = 0xE0
PREFIX_EXT_F64 = 0xE1

REGISTER_SIZE = 2  # a register ordinal is a u16
REF_REGISTER_TYPE_BIT = 0x8000
REF_REGISTER_MOVE_BIT = 0x4000
REF_REGISTER_MASK = 0x3FFF
I32_REGISTER_MASK = 0x7FFF
FUNCTION_ORDINAL_IMPORT_BIT = 0x80000000

# --------------------------------------------------------------------------------------------------
# Operand kinds

# Registers of one bank (u16).
I32, I64, F32, F64, REF = "i32", "i64", "f32", "f64", "ref"
REGISTER_KINDS = (I32, I64, F32, F64, REF)
# Immediates of the op's value type (const.*).
IMM_I32, IMM_I64, IMM_F32, IMM_F64 = "imm_i32", "imm_i64", "imm_f32", "imm_f64"
IMM_I16 = "imm_i16"  # br_table size
FUNC = "func"  # u32 function ordinal, FUNCTION_ORDINAL_IMPORT_BIT for imports
GLOBAL = "global"  # u32 byte offset into rwdata (value globals) or ref global ordinal
RODATA = "rodata"  # u32 rodata segment ordinal
TYPE = "type"  # u32 index into the module's types
STRING = "string"  # u16 length + bytes
BRANCH_TARGET = "branch_target"  # u32 pc of a block marker
BRANCH_OPERANDS = "branch_operands"  # aligned remap list of (src, dst) register pairs
REG_LIST = "reg_list"  # aligned register list (variadic operands/results, segment sizes)
BRANCH_TABLE_CASES = "branch_table_cases"  # `table_size` x (branch target, branch operands)

OPERAND_KINDS = REGISTER_KINDS + (IMM_I32, IMM_I64, IMM_F32, IMM_F64, IMM_I16, FUNC, GLOBAL, RODATA,
                                  TYPE, STRING, BRANCH_TARGET, BRANCH_OPERANDS, REG_LIST,
                                  BRANCH_TABLE_CASES)
IMMEDIATE_SIZES: Mapping[str, int] = {IMM_I32: 4, IMM_I64: 8, IMM_F32: 4, IMM_F64: 8, IMM_I16: 2,
                                      FUNC: 4, GLOBAL: 4, RODATA: 4, TYPE: 4, BRANCH_TARGET: 4}
IMMEDIATE_KIND = {I32: IMM_I32, I64: IMM_I64, F32: IMM_F32, F64: IMM_F64}

READ, WRITE = "read", "write"


@dataclass(frozen=True)
class Field:
    """One operand of an encoding, in stream order."""

    name: str
    kind: str
    access: str = READ  # READ or WRITE, for registers and register lists
    move: bool = False  # a ref register that may carry the MOVE bit


@dataclass(frozen=True)
class OpInfo:
    """One opcode of one opcode set."""

    opcode_set: str  # "core", "ext_f32", "ext_f64"
    opcode: int
    symbol: str  # the C/tablegen name (AddI32)
    mnemonic: str  # the assembly name without the `vm.` prefix (add.i32)
    encoding: str
    fields: tuple[Field, ...]

    @property
    def prefix(self) -> int | None:
        return PREFIXES_BY_SET.get(self.opcode_set)

    @property
    def qualified_name(self) -> str:
        return f"vm.{self.mnemonic}"


# --------------------------------------------------------------------------------------------------
# Encodings: operation classes parameterised by a register bank, then the one-off encodings.

def _r(name: str, bank: str, access: str = READ, move: bool = False) -> Field:
    return Field(name, bank, access, move)


def _classes(t: str, a: str = "", b: str = "") -> dict[str, tuple[Field, ...]]:
    """The parameterised encodings for value type `t` (conversions: input `a`, output `b`)."""
    return {
        "unary": (_r("operand", t), _r("result", t, WRITE)),
        "binary": (_r("lhs", t), _r("rhs", t), _r("result", t, WRITE)),
        "ternary": (_r("a", t), _r("b", t), _r("c", t), _r("result", t, WRITE)),
        "shift": (_r("operand", t), _r("amount", I32), _r("result", t, WRITE)),
        "select": (_r("condition", I32), _r("true_value", t), _r("false_value", t),
                   _r("result", t, WRITE)),
        "unary_comparison": (_r("operand", t), _r("result", I32, WRITE)),
        "binary_comparison": (_r("lhs", t), _r("rhs", t), _r("result", I32, WRITE)),
        "global_load": (Field("byte_offset", GLOBAL), _r("result", t, WRITE)),
        "global_store": (Field("byte_offset", GLOBAL), _r("value", t)),
        "global_load_indirect": (_r("byte_offset", I32), _r("result", t, WRITE)),
        "global_store_indirect": (_r("byte_offset", I32), _r("value", t)),
        "constant": (Field("value", IMMEDIATE_KIND.get(t, IMM_I32)), _r("result", t, WRITE)),
        "zero_constant": (_r("result", t, WRITE),),
        "list_get": (_r("list", REF), _r("index", I32), _r("result", t, WRITE)),
        "list_set": (_r("list", REF), _r("index", I32), _r("value", t)),
        "buffer_load": (_r("buffer", REF), _r("offset", I64), _r("result", t, WRITE)),
        "buffer_store": (_r("buffer", REF), _r("offset", I64), _r("value", t)),
        "buffer_fill": (_r("buffer", REF), _r("offset", I64), _r("length", I64), _r("value", t)),
        "switch": (_r("index", I32), _r("default_value", t), Field("values", REG_LIST),
                   _r("result", t, WRITE)),
    }


def _conversion(src: str, dst: str) -> tuple[Field, ...]:
    return (_r("operand", src), _r("result", dst, WRITE))


ENCODINGS: dict[str, tuple[Field, ...]] = {}
for _t in (I32, I64, F32, F64):
    for _cls, _fields in _classes(_t).items():
        ENCODINGS[f"{_t}_{_cls}"] = _fields
for _src in (I32, I64, F32, F64):
    for _dst in (I32, I64, F32, F64):
        if _src != _dst:
            ENCODINGS[f"{_src}_to_{_dst}_conversion"] = _conversion(_src, _dst)
ENCODINGS.update({
    "ref_unary_comparison": (_r("operand", REF), _r("result", I32, WRITE)),
    "ref_binary_comparison": (_r("lhs", REF), _r("rhs", REF), _r("result", I32, WRITE)),
    "global_load_ref": (Field("global", GLOBAL), Field("type", TYPE),
                        _r("result", REF, WRITE, move=True)),
    "global_store_ref": (Field("global", GLOBAL), Field("type", TYPE), _r("value", REF, move=True)),
    "global_load_indirect_ref": (_r("global", I32), Field("type", TYPE),
                                 _r("result", REF, WRITE, move=True)),
    "global_store_indirect_ref": (_r("global", I32), Field("type", TYPE),
                                  _r("value", REF, move=True)),
    "const_ref_zero": (_r("result", REF, WRITE, move=True),),
    "const_ref_rodata": (Field("rodata", RODATA), _r("result", REF, WRITE, move=True)),
    "list_alloc": (Field("type", TYPE), _r("initial_capacity", I32),
                   _r("result", REF, WRITE, move=True)),
    "list_reserve": (_r("list", REF), _r("minimum_capacity", I32)),
    "list_size": (_r("list", REF), _r("result", I32, WRITE)),
    "list_resize": (_r("list", REF), _r("new_size", I32)),
    "list_get_ref": (_r("list", REF), _r("index", I32), Field("type", TYPE),
                     _r("result", REF, WRITE, move=True)),
    "list_set_ref": (_r("list", REF), _r("index", I32), _r("value", REF, move=True)),
    "select_ref": (_r("condition", I32), Field("type", TYPE), _r("true_value", REF, move=True),
                   _r("false_value", REF, move=True), _r("result", REF, WRITE, move=True)),
    "switch_ref": (_r("index", I32), Field("type", TYPE), _r("default_value", REF, move=True),
                   Field("values", REG_LIST), _r("result", REF, WRITE, move=True)),
    "branch": (Field("dest", BRANCH_TARGET), Field("operands", BRANCH_OPERANDS)),
    "conditional_branch": (_r("condition", I32), Field("true_dest", BRANCH_TARGET),
                           Field("true_operands", BRANCH_OPERANDS),
                           Field("false_dest", BRANCH_TARGET),
                           Field("false_operands", BRANCH_OPERANDS)),
    "conditional_break": (_r("condition", I32), Field("dest", BRANCH_TARGET),
                          Field("operands", BRANCH_OPERANDS)),
    "branch_table": (_r("index", I32), Field("default_dest", BRANCH_TARGET),
                     Field("default_operands", BRANCH_OPERANDS), Field("table_size", IMM_I16),
                     Field("cases", BRANCH_TABLE_CASES)),
    "call": (Field("callee", FUNC), Field("operands", REG_LIST),
             Field("results", REG_LIST, WRITE)),
    "call_variadic": (Field("callee", FUNC), Field("segment_sizes", REG_LIST),
                      Field("operands", REG_LIST), Field("results", REG_LIST, WRITE)),
    "yieldable_call": (Field("callee", FUNC), Field("operands", REG_LIST),
                       Field("resume", BRANCH_TARGET), Field("results", REG_LIST, WRITE)),
    "call_variadic_yieldable": (Field("callee", FUNC), Field("segment_sizes", REG_LIST),
                                Field("operands", REG_LIST), Field("resume", BRANCH_TARGET),
                                Field("results", REG_LIST, WRITE)),
    "return": (Field("operands", REG_LIST),),
    "fail": (_r("status", I32), Field("message", STRING)),
    "import_resolved": (Field("import", FUNC), _r("result", I32, WRITE)),
    "trace": (Field("event_name", STRING), Field("operands", REG_LIST)),
    "buffer_alloc": (_r("length", I64), _r("alignment", I32), _r("result", REF, WRITE, move=True)),
    "buffer_clone": (_r("source", REF), _r("offset", I64), _r("length", I64), _r("alignment", I32),
                     _r("result", REF, WRITE, move=True)),
    "buffer_length": (_r("buffer", REF), _r("result", I64, WRITE)),
    "buffer_copy": (_r("source", REF), _r("source_offset", I64), _r("target", REF),
                    _r("target_offset", I64), _r("length", I64)),
    "buffer_compare": (_r("lhs", REF), _r("lhs_offset", I64), _r("rhs", REF),
                       _r("rhs_offset", I64), _r("length", I64), _r("result", I32, WRITE)),
    "buffer_hash": (_r("source", REF), _r("offset", I64), _r("length", I64),
                    _r("result", I64, WRITE)),
    "cast_any_ref": (_r("operand", REF, move=True), Field("type", TYPE),
                     _r("result", REF, WRITE, move=True)),
    "discard_refs": (Field("refs", REG_LIST),),
    "assign_ref": (_r("source", REF, move=True), _r("result", REF, WRITE, move=True)),
    "marker": (),
})

# --------------------------------------------------------------------------------------------------
# Opcode tables: (opcode, symbol, mnemonic, encoding).

_CORE = (
    (0x00, "GlobalLoadI32", "global.load.i32", "i32_global_load"),
    (0x01, "GlobalStoreI32", "global.store.i32", "i32_global_store"),
    (0x02, "GlobalLoadIndirectI32", "global.load.indirect.i32", "i32_global_load_indirect"),
    (0x03, "GlobalStoreIndirectI32", "global.store.indirect.i32", "i32_global_store_indirect"),
    (0x04, "GlobalLoadI64", "global.load.i64", "i64_global_load"),
    (0x05, "GlobalStoreI64", "global.store.i64", "i64_global_store"),
    (0x06, "GlobalLoadIndirectI64", "global.load.indirect.i64", "i64_global_load_indirect"),
    (0x07, "GlobalStoreIndirectI64", "global.store.indirect.i64", "i64_global_store_indirect"),
    (0x08, "GlobalLoadRef", "global.load.ref", "global_load_ref"),
    (0x09, "GlobalStoreRef", "global.store.ref", "global_store_ref"),
    (0x0A, "GlobalLoadIndirectRef", "global.load.indirect.ref", "global_load_indirect_ref"),
    (0x0B, "GlobalStoreIndirectRef", "global.store.indirect.ref", "global_store_indirect_ref"),
    (0x0C, "ConstI32Zero", "const.i32.zero", "i32_zero_constant"),
    (0x0D, "ConstI32", "const.i32", "i32_constant"),
    (0x0E, "ConstI64Zero", "const.i64.zero", "i64_zero_constant"),
    (0x0F, "ConstI64", "const.i64", "i64_constant"),
    (0x10, "ConstRefZero", "const.ref.zero", "const_ref_zero"),
    (0x11, "ConstRefRodata", "const.ref.rodata", "const_ref_rodata"),
    (0x12, "ListAlloc", "list.alloc", "list_alloc"),
    (0x13, "ListReserve", "list.reserve", "list_reserve"),
    (0x14, "ListSize", "list.size", "list_size"),
    (0x15, "ListResize", "list.resize", "list_resize"),
    (0x16, "ListGetI32", "list.get.i32", "i32_list_get"),
    (0x17, "ListSetI32", "list.set.i32", "i32_list_set"),
    (0x18, "ListGetI64", "list.get.i64", "i64_list_get"),
    (0x19, "ListSetI64", "list.set.i64", "i64_list_set"),
    (0x1A, "ListGetRef", "list.get.ref", "list_get_ref"),
    (0x1B, "ListSetRef", "list.set.ref", "list_set_ref"),
    (0x1C, "SelectI32", "select.i32", "i32_select"),
    (0x1D, "SelectI64", "select.i64", "i64_select"),
    (0x1E, "SelectRef", "select.ref", "select_ref"),
    (0x1F, "SwitchI32", "switch.i32", "i32_switch"),
    (0x20, "SwitchI64", "switch.i64", "i64_switch"),
    (0x21, "SwitchRef", "switch.ref", "switch_ref"),
    (0x22, "AddI32", "add.i32", "i32_binary"),
    (0x23, "SubI32", "sub.i32", "i32_binary"),
    (0x24, "MulI32", "mul.i32", "i32_binary"),
    (0x25, "DivI32S", "div.i32.s", "i32_binary"),
    (0x26, "DivI32U", "div.i32.u", "i32_binary"),
    (0x27, "RemI32S", "rem.i32.s", "i32_binary"),
    (0x28, "RemI32U", "rem.i32.u", "i32_binary"),
    (0x29, "FMAI32", "fma.i32", "i32_ternary"),
    (0x2A, "AddI64", "add.i64", "i64_binary"),
    (0x2B, "SubI64", "sub.i64", "i64_binary"),
    (0x2C, "MulI64", "mul.i64", "i64_binary"),
    (0x2D, "DivI64S", "div.i64.s", "i64_binary"),
    (0x2E, "DivI64U", "div.i64.u", "i64_binary"),
    (0x2F, "RemI64S", "rem.i64.s", "i64_binary"),
    (0x30, "RemI64U", "rem.i64.u", "i64_binary"),
    (0x31, "FMAI64", "fma.i64", "i64_ternary"),
    (0x32, "NotI32", "not.i32", "i32_unary"),
    (0x33, "AndI32", "and.i32", "i32_binary"),
    (0x34, "OrI32", "or.i32", "i32_binary"),
    (0x35, "XorI32", "xor.i32", "i32_binary"),
    (0x36, "NotI64", "not.i64", "i64_unary"),
    (0x37, "AndI64", "and.i64", "i64_binary"),
    (0x38, "OrI64", "or.i64", "i64_binary"),
    (0x39, "XorI64", "xor.i64", "i64_binary"),
    (0x3A, "ShlI32", "shl.i32", "i32_shift"),
    (0x3B, "ShrI32S", "shr.i32.s", "i32_shift"),
    (0x3C, "ShrI32U", "shr.i32.u", "i32_shift"),
    (0x3D, "ShlI64", "shl.i64", "i64_shift"),
    (0x3E, "ShrI64S", "shr.i64.s", "i64_shift"),
    (0x3F, "ShrI64U", "shr.i64.u", "i64_shift"),
    (0x40, "TruncI32I8", "trunc.i32.i8", "i32_unary"),
    (0x41, "TruncI32I16", "trunc.i32.i16", "i32_unary"),
    (0x42, "TruncI64I32", "trunc.i64.i32", "i64_to_i32_conversion"),
    (0x43, "ExtI8I32S", "ext.i8.i32.s", "i32_unary"),
    (0x44, "ExtI8I32U", "ext.i8.i32.u", "i32_unary"),
    (0x45, "ExtI16I32S", "ext.i16.i32.s", "i32_unary"),
    (0x46, "ExtI16I32U", "ext.i16.i32.u", "i32_unary"),
    (0x47, "ExtI32I64S", "ext.i32.i64.s", "i32_to_i64_conversion"),
    (0x48, "ExtI32I64U", "ext.i32.i64.u", "i32_to_i64_conversion"),
    (0x49, "CmpEQI32", "cmp.eq.i32", "i32_binary_comparison"),
    (0x4A, "CmpNEI32", "cmp.ne.i32", "i32_binary_comparison"),
    (0x4B, "CmpLTI32S", "cmp.lt.i32.s", "i32_binary_comparison"),
    (0x4C, "CmpLTI32U", "cmp.lt.i32.u", "i32_binary_comparison"),
    (0x4D, "CmpNZI32", "cmp.nz.i32", "i32_unary_comparison"),
    (0x4E, "CmpEQI64", "cmp.eq.i64", "i64_binary_comparison"),
    (0x4F, "CmpNEI64", "cmp.ne.i64", "i64_binary_comparison"),
    (0x50, "CmpLTI64S", "cmp.lt.i64.s", "i64_binary_comparison"),
    (0x51, "CmpLTI64U", "cmp.lt.i64.u", "i64_binary_comparison"),
    (0x52, "CmpNZI64", "cmp.nz.i64", "i64_unary_comparison"),
    (0x53, "CmpEQRef", "cmp.eq.ref", "ref_binary_comparison"),
    (0x54, "CmpNERef", "cmp.ne.ref", "ref_binary_comparison"),
    (0x55, "CmpNZRef", "cmp.nz.ref", "ref_unary_comparison"),
    (0x56, "Branch", "br", "branch"),
    (0x57, "CondBranch", "cond_br", "conditional_branch"),
    (0x58, "Call", "call", "call"),
    (0x59, "CallVariadic", "call.variadic", "call_variadic"),
    (0x5A, "Return", "return", "return"),
    (0x5B, "Fail", "fail", "fail"),
    (0x5C, "ImportResolved", "import.resolved", "import_resolved"),
    (0x5D, "Yield", "yield", "branch"),
    (0x5E, "Trace", "trace", "trace"),
    (0x5F, "Print", "print", "trace"),
    (0x60, "CondBreak", "cond_break", "conditional_break"),
    (0x61, "Break", "break", "branch"),
    (0x62, "BufferLoadI8U", "buffer.load.i8.u", "i32_buffer_load"),
    (0x63, "BufferLoadI8S", "buffer.load.i8.s", "i32_buffer_load"),
    (0x64, "BufferLoadI16U", "buffer.load.i16.u", "i32_buffer_load"),
    (0x65, "BufferLoadI16S", "buffer.load.i16.s", "i32_buffer_load"),
    (0x66, "BufferLoadI32", "buffer.load.i32", "i32_buffer_load"),
    (0x67, "BufferLoadI64", "buffer.load.i64", "i64_buffer_load"),
    (0x68, "BufferStoreI8", "buffer.store.i8", "i32_buffer_store"),
    (0x69, "BufferStoreI16", "buffer.store.i16", "i32_buffer_store"),
    (0x6A, "BufferStoreI32", "buffer.store.i32", "i32_buffer_store"),
    (0x6B, "BufferStoreI64", "buffer.store.i64", "i64_buffer_store"),
    (0x6C, "BufferAlloc", "buffer.alloc", "buffer_alloc"),
    (0x6D, "BufferClone", "buffer.clone", "buffer_clone"),
    (0x6E, "BufferLength", "buffer.length", "buffer_length"),
    (0x6F, "BufferCopy", "buffer.copy", "buffer_copy"),
    (0x70, "BufferCompare", "buffer.compare", "buffer_compare"),
    (0x71, "BufferFillI8", "buffer.fill.i8", "i32_buffer_fill"),
    (0x72, "BufferFillI16", "buffer.fill.i16", "i32_buffer_fill"),
    (0x73, "BufferFillI32", "buffer.fill.i32", "i32_buffer_fill"),
    (0x74, "BufferFillI64", "buffer.fill.i64", "i64_buffer_fill"),
    (0x75, "CtlzI32", "ctlz.i32", "i32_unary"),
    (0x76, "CtlzI64", "ctlz.i64", "i64_unary"),
    (0x77, "AbsI32", "abs.i32", "i32_unary"),
    (0x78, "AbsI64", "abs.i64", "i64_unary"),
    (0x79, "Block", "block", "marker"),
    (0x7A, "MinI32S", "min.i32.s", "i32_binary"),
    (0x7B, "MinI32U", "min.i32.u", "i32_binary"),
    (0x7C, "MaxI32S", "max.i32.s", "i32_binary"),
    (0x7D, "MaxI32U", "max.i32.u", "i32_binary"),
    (0x7E, "MinI64S", "min.i64.s", "i64_binary"),
    (0x7F, "MinI64U", "min.i64.u", "i64_binary"),
    (0x80, "MaxI64S", "max.i64.s", "i64_binary"),
    (0x81, "MaxI64U", "max.i64.u", "i64_binary"),
    (0x82, "CastAnyRef", "cast.any.ref", "cast_any_ref"),
    (0x83, "BranchTable", "br_table", "branch_table"),
    (0x84, "BufferHash", "buffer.hash", "buffer_hash"),
    (0x85, "DiscardRefs", "discard.refs", "discard_refs"),
    (0x86, "AssignRef", "assign.ref", "assign_ref"),
    (0x87, "CallYieldable", "call.yieldable", "yieldable_call"),
    (0x88, "CallVariadicYieldable", "call.variadic.yieldable", "call_variadic_yieldable"),
)

# The float extensions share one layout: (opcode, symbol stem, mnemonic stem, encoding stem),
# `{t}` standing for f32 / f64 (and F32 / F64 in symbols).
_EXT_F32 = (
    (0x00, "GlobalLoadF32", "global.load.f32", "f32_global_load"),
    (0x01, "GlobalStoreF32", "global.store.f32", "f32_global_store"),
    (0x02, "GlobalLoadIndirectF32", "global.load.indirect.f32", "f32_global_load_indirect"),
    (0x03, "GlobalStoreIndirectF32", "global.store.indirect.f32", "f32_global_store_indirect"),
    (0x04, "ConstF32Zero", "const.f32.zero", "f32_zero_constant"),
    (0x05, "ConstF32", "const.f32", "f32_constant"),
    (0x06, "ListGetF32", "list.get.f32", "f32_list_get"),
    (0x07, "ListSetF32", "list.set.f32", "f32_list_set"),
    (0x08, "SelectF32", "select.f32", "f32_select"),
    (0x09, "SwitchF32", "switch.f32", "f32_switch"),
    (0x0A, "AddF32", "add.f32", "f32_binary"),
    (0x0B, "SubF32", "sub.f32", "f32_binary"),
    (0x0C, "MulF32", "mul.f32", "f32_binary"),
    (0x0D, "DivF32", "div.f32", "f32_binary"),
    (0x0E, "RemF32", "rem.f32", "f32_binary"),
    (0x0F, "FMAF32", "fma.f32", "f32_ternary"),
    (0x10, "AbsF32", "abs.f32", "f32_unary"),
    (0x11, "NegF32", "neg.f32", "f32_unary"),
    (0x12, "CeilF32", "ceil.f32", "f32_unary"),
    (0x13, "FloorF32", "floor.f32", "f32_unary"),
    (0x14, "CastSI32F32", "cast.si32.f32", "i32_to_f32_conversion"),
    (0x15, "CastUI32F32", "cast.ui32.f32", "i32_to_f32_conversion"),
    (0x16, "CastF32SI32", "cast.f32.si32", "f32_to_i32_conversion"),
    (0x17, "CastF32UI32", "cast.f32.ui32", "f32_to_i32_conversion"),
    (0x18, "BitcastI32F32", "bitcast.i32.f32", "i32_to_f32_conversion"),
    (0x19, "BitcastF32I32", "bitcast.f32.i32", "f32_to_i32_conversion"),
    (0x1A, "AtanF32", "atan.f32", "f32_unary"),
    (0x1B, "Atan2F32", "atan2.f32", "f32_binary"),
    (0x1C, "CosF32", "cos.f32", "f32_unary"),
    (0x1D, "SinF32", "sin.f32", "f32_unary"),
    (0x1E, "ExpF32", "exp.f32", "f32_unary"),
    (0x1F, "Exp2F32", "exp2.f32", "f32_unary"),
    (0x20, "ExpM1F32", "expm1.f32", "f32_unary"),
    (0x21, "LogF32", "log.f32", "f32_unary"),
    (0x22, "Log10F32", "log10.f32", "f32_unary"),
    (0x23, "Log1pF32", "log1p.f32", "f32_unary"),
    (0x24, "Log2F32", "log2.f32", "f32_unary"),
    (0x25, "PowF32", "pow.f32", "f32_binary"),
    (0x26, "RsqrtF32", "rsqrt.f32", "f32_unary"),
    (0x27, "SqrtF32", "sqrt.f32", "f32_unary"),
    (0x28, "TanhF32", "tanh.f32", "f32_unary"),
    (0x29, "ErfF32", "erf.f32", "f32_unary"),
    (0x2A, "CmpEQF32O", "cmp.eq.f32.o", "f32_binary_comparison"),
    (0x2B, "CmpEQF32U", "cmp.eq.f32.u", "f32_binary_comparison"),
    (0x2C, "CmpNEF32O", "cmp.ne.f32.o", "f32_binary_comparison"),
    (0x2D, "CmpNEF32U", "cmp.ne.f32.u", "f32_binary_comparison"),
    (0x2E, "CmpLTF32O", "cmp.lt.f32.o", "f32_binary_comparison"),
    (0x2F, "CmpLTF32U", "cmp.lt.f32.u", "f32_binary_comparison"),
    (0x30, "CmpLTEF32O", "cmp.lte.f32.o", "f32_binary_comparison"),
    (0x31, "CmpLTEF32U", "cmp.lte.f32.u", "f32_binary_comparison"),
    (0x32, "CmpNaNF32", "cmp.nan.f32", "f32_unary_comparison"),
    (0x33, "BufferLoadF32", "buffer.load.f32", "f32_buffer_load"),
    (0x34, "BufferStoreF32", "buffer.store.f32", "f32_buffer_store"),
    (0x35, "BufferFillF32", "buffer.fill.f32", "f32_buffer_fill"),
    (0x36, "RoundF32", "round.f32", "f32_unary"),
    (0x37, "MinF32", "min.f32", "f32_binary"),
    (0x38, "MaxF32", "max.f32", "f32_binary"),
    (0x39, "RoundF32Even", "round.f32.even", "f32_unary"),
    (0x3A, "CastF32SI64", "cast.f32.si64", "f32_to_i64_conversion"),
    (0x3B, "CastF32UI64", "cast.f32.ui64", "f32_to_i64_conversion"),
    (0x3C, "CastSI64F32", "cast.si64.f32", "i64_to_f32_conversion"),
    (0x3D, "CastUI64F32", "cast.ui64.f32", "i64_to_f32_conversion"),
)

_EXT_F64 = (
    (0x00, "GlobalLoadF64", "global.load.f64", "f64_global_load"),
    (0x01, "GlobalStoreF64", "global.store.f64", "f64_global_store"),
    (0x02, "GlobalLoadIndirectF64", "global.load.indirect.f64", "f64_global_load_indirect"),
    (0x03, "GlobalStoreIndirectF64", "global.store.indirect.f64", "f64_global_store_indirect"),
    (0x04, "ConstF64Zero", "const.f64.zero", "f64_zero_constant"),
    (0x05, "ConstF64", "const.f64", "f64_constant"),
    (0x06, "ListGetF64", "list.get.f64", "f64_list_get"),
    (0x07, "ListSetF64", "list.set.f64", "f64_list_set"),
    (0x08, "SelectF64", "select.f64", "f64_select"),
    (0x09, "SwitchF64", "switch.f64", "f64_switch"),
    (0x0A, "AddF64", "add.f64", "f64_binary"),
    (0x0B, "SubF64", "sub.f64", "f64_binary"),
    (0x0C, "MulF64", "mul.f64", "f64_binary"),
    (0x0D, "DivF64", "div.f64", "f64_binary"),
    (0x0E, "RemF64", "rem.f64", "f64_binary"),
    (0x0F, "FMAF64", "fma.f64", "f64_ternary"),
    (0x10, "AbsF64", "abs.f64", "f64_unary"),
    (0x11, "NegF64", "neg.f64", "f64_unary"),
    (0x12, "CeilF64", "ceil.f64", "f64_unary"),
    (0x13, "FloorF64", "floor.f64", "f64_unary"),
    (0x14, "TruncF64F32", "trunc.f64.f32", "f64_to_f32_conversion"),
    (0x15, "ExtF32F64", "ext.f32.f64", "f32_to_f64_conversion"),
    (0x16, "CastSI32F64", "cast.si32.f64", "i32_to_f64_conversion"),
    (0x17, "CastUI32F64", "cast.ui32.f64", "i32_to_f64_conversion"),
    (0x18, "CastF64SI32", "cast.f64.si32", "f64_to_i32_conversion"),
    (0x19, "CastF64UI32", "cast.f64.ui32", "f64_to_i32_conversion"),
    (0x1A, "CastSI64F64", "cast.si64.f64", "i64_to_f64_conversion"),
    (0x1B, "CastUI64F64", "cast.ui64.f64", "i64_to_f64_conversion"),
    (0x1C, "CastF64SI64", "cast.f64.si64", "f64_to_i64_conversion"),
    (0x1D, "CastF64UI64", "cast.f64.ui64", "f64_to_i64_conversion"),
    (0x1E, "BitcastI64F64", "bitcast.i64.f64", "i64_to_f64_conversion"),
    (0x1F, "BitcastF64I64", "bitcast.f64.i64", "f64_to_i64_conversion"),
    (0x20, "AtanF64", "atan.f64", "f64_unary"),
    (0x21, "Atan2F64", "atan2.f64", "f64_binary"),
    (0x22, "CosF64", "cos.f64", "f64_unary"),
    (0x23, "SinF64", "sin.f64", "f64_unary"),
    (0x24, "ExpF64", "exp.f64", "f64_unary"),
    (0x25, "Exp2F64", "exp2.f64", "f64_unary"),
    (0x26, "ExpM1F64", "expm1.f64", "f64_unary"),
    (0x27, "LogF64", "log.f64", "f64_unary"),
    (0x28, "Log10F64", "log10.f64", "f64_unary"),
    (0x29, "Log1pF64", "log1p.f64", "f64_unary"),
    (0x2A, "Log2F64", "log2.f64", "f64_unary"),
    (0x2B, "PowF64", "pow.f64", "f64_binary"),
    (0x2C, "RsqrtF64", "rsqrt.f64", "f64_unary"),
    (0x2D, "SqrtF64", "sqrt.f64", "f64_unary"),
    (0x2E, "TanhF64", "tanh.f64", "f64_unary"),
    (0x2F, "ErfF64", "erf.f64", "f64_unary"),
    (0x30, "CmpEQF64O", "cmp.eq.f64.o", "f64_binary_comparison"),
    (0x31, "CmpEQF64U", "cmp.eq.f64.u", "f64_binary_comparison"),
    (0x32, "CmpNEF64O", "cmp.ne.f64.o", "f64_binary_comparison"),
    (0x33, "CmpNEF64U", "cmp.ne.f64.u", "f64_binary_comparison"),
    (0x34, "CmpLTF64O", "cmp.lt.f64.o", "f64_binary_comparison"),
    (0x35, "CmpLTF64U", "cmp.lt.f64.u", "f64_binary_comparison"),
    (0x36, "CmpLTEF64O", "cmp.lte.f64.o", "f64_binary_comparison"),
    (0x37, "CmpLTEF64U", "cmp.lte.f64.u", "f64_binary_comparison"),
    (0x38, "CmpNaNF64", "cmp.nan.f64", "f64_unary_comparison"),
    (0x39, "BufferLoadF64", "buffer.load.f64", "f64_buffer_load"),
    (0x3A, "BufferStoreF64", "buffer.store.f64", "f64_buffer_store"),
    (0x3B, "BufferFillF64", "buffer.fill.f64", "f64_buffer_fill"),
    (0x3C, "RoundF64", "round.f64", "f64_unary"),
    (0x3D, "MinF64", "min.f64", "f64_binary"),
    (0x3E, "MaxF64", "max.f64", "f64_binary"),
    (0x3F, "RoundF64Even", "round.f64.even", "f64_unary"),
)

CORE, EXT_F32, EXT_F64 = "core", "ext_f32", "ext_f64"
PREFIXES_BY_SET: Mapping[str, int] = {EXT_F32: PREFIX_EXT_F32, EXT_F64: PREFIX_EXT_F64}
SETS_BY_PREFIX: Mapping[int, str] = {v: k for k, v in PREFIXES_BY_SET.items()}
# Function descriptor requirement bit (iree.vm.FeatureBits) an extension's ops need.
SET_FEATURE_BITS: Mapping[str, int] = {EXT_F32: 1 << 0, EXT_F64: 1 << 1}


def _table(opcode_set: str, rows: tuple) -> dict[int, OpInfo]:
    table: dict[int, OpInfo] = {}
    for opcode, symbol, mnemonic, encoding in rows:
        assert opcode not in table, (opcode_set, opcode)
        table[opcode] = OpInfo(opcode_set, opcode, symbol, mnemonic, encoding, ENCODINGS[encoding])
    return table


OPCODES: Mapping[str, Mapping[int, OpInfo]] = {
    CORE: _table(CORE, _CORE),
    EXT_F32: _table(EXT_F32, _EXT_F32),
    EXT_F64: _table(EXT_F64, _EXT_F64),
}
BY_MNEMONIC: Mapping[str, OpInfo] = {
    op.mnemonic: op for table in OPCODES.values() for op in table.values()}
BY_SYMBOL: Mapping[str, OpInfo] = {
    op.symbol: op for table in OPCODES.values() for op in table.values()}


def lookup(opcode_set: str, opcode: int) -> OpInfo | None:
    """The op for `opcode` in `opcode_set`, or None when the slot is unassigned."""
    return OPCODES[opcode_set].get(opcode)


def op(mnemonic: str) -> OpInfo:
    """The op with this mnemonic (`add.i32`, or `vm.add.i32`); KeyError when unknown."""
    return BY_MNEMONIC[mnemonic[3:] if mnemonic.startswith("vm.") else mnemonic]
