"""IREE's bytecode verifier, check by check, against iree-run-module 3.13 (the oracle, run here).

runtime/src/iree/vm/bytecode/verifier.c refuses a module at load (when iree-run-module creates its
context) for what iree_vm_bytecode_module_flatbuffer_verify and iree_vm_bytecode_function_verify
check. For each of those checks a real compiled module (VM dialect of our own, compiled by
iree-compile; and the e2e counter program, compiled inline-static) is mutated to violate exactly it;
iree-run-module must refuse it at load with the status code the case names, and ireeabi must refuse
it at load (creating a `Context`, or a `Program`) with the same code.

Then the checks IREE does not make: where IREE runs on, ireeabi runs on too (type ids past the
table run as type 0; an op IREE would run outside its frame traps only when it runs, so a module
that never runs it gives IREE's result); where IREE crashes reading outside memory, ireeabi keeps a
check (docs/hostile-input.md lists them).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

import pytest

from support import iree_tools as tools
from test_module_load_fidelity import (chars, deref, descriptor, fb_start, field, iree, patch,
                                       p16, p32, root, s16, tables)

from ireeabi.abi.errors import IreeAbiError
from ireeabi.modules.hal.runtime import run_module_type_names
from ireeabi.tooling.program import Program
from ireeabi.vm.bytecode import Context, isa
from ireeabi.vm.bytecode.decoder import DecodeError, decode_module
from ireeabi.vm.errors import VmError, VmStatusError, VmTrapError
from ireeabi.vm.bytecode.module_errors import ModuleFileError
from ireeabi.vm.bytecode.module_file import read_module

HERE = Path(__file__).parents[2]

PAR = """
vm.module @par {
  vm.import private optional @absent.fn(%a : i32) -> i32
  vm.global.i32 private mutable @g32 : i32
  vm.global.i64 private mutable @g64 : i64
  vm.global.ref private mutable @gref : !vm.buffer
  vm.rodata private @blob dense<[1, 2, 3, 4]> : tensor<4xi8>
  vm.func private @twice(%x : i32) -> i32 {
    %y = vm.add.i32 %x, %x : i32
    vm.return %y : i32
  }
  vm.func @f(%a : i32) -> i32 {
    %blob = vm.const.ref.rodata @blob : !vm.buffer
    vm.global.store.ref %blob, @gref : !vm.buffer
    %b2 = vm.global.load.ref @gref : !vm.buffer
    %c0 = vm.const.i64 0
    %v = vm.buffer.load.i8.u %b2[%c0] : !vm.buffer -> i32
    vm.global.store.i32 %v, @g32 : i32
    %w = vm.global.load.i32 @g32 : i32
    %x = vm.ext.i32.i64.s %w : i32 -> i64
    vm.global.store.i64 %x, @g64 : i64
    %r = vm.import.resolved @absent.fn : i32
    %t = vm.call @twice(%a) : (i32) -> i32
    %s = vm.add.i32 %t, %r : i32
    %fl = vm.cast.si32.f32 %s : i32 -> f32
    %u = vm.cast.f32.si32 %fl : f32 -> i32
    %c5 = vm.const.i32 5
    %c7 = vm.const.i32 7
    %k = vm.switch.i32 %a[%c5, %c7] else %u : i32
    %nz = vm.cmp.nz.i32 %a : i32
    vm.cond_br %nz, ^bb1(%k : i32), ^bb2(%w : i32)
  ^bb1(%p : i32):
    vm.br_table %a {
      default: ^bb2(%p : i32),
      0: ^bb2(%s : i32)
    }
  ^bb2(%q : i32):
    vm.return %q : i32
  }
  vm.export @f
}
"""
TWICE, F = 0, 1  # internal function ordinals


@lru_cache(maxsize=None)
def par() -> bytes:
    src = tools.session_dir() / "verifier_parity_par.vm.mlir"
    src.write_text(PAR)
    return tools.compile_with_flags(src, tools.VM_INPUT_FLAGS).read_bytes()


@lru_cache(maxsize=None)
def counter() -> bytes:
    return tools.compile_mlir(HERE / "programs" / "e2e" / "counter.mlir",
                              model="inline-static").read_bytes()


# --------------------------------------------------------------------------------------------------
# Where things are in a module (the fidelity tests' FlatBuffer walk; operand offsets from the
# encoding: 1 opcode byte (2 with an ext prefix), registers 2 bytes, ordinals and targets 4, lists
# aligned to 2 bytes of the function's bytecode)

def _inst(b: bytes, function: int, mnemonic: str, nth: int = 0):
    m = read_module(b)
    found = [i for i in decode_module(m)[function] if i.mnemonic == mnemonic][nth]
    return m.bytecode_offset + m.function_descriptors[function].bytecode_offset, found


def at(b: bytes, function: int, mnemonic: str, name: str, nth: int = 0, entry: int = 0) -> int:
    """File offset of operand `name` of an instruction (of list entry `entry` for lists)."""
    base, inst = _inst(b, function, mnemonic, nth)
    pos = inst.pc + (2 if inst.op.opcode_set != isa.CORE else 1)
    for f in inst.op.fields:
        value = inst.operands[f.name]
        if f.kind in (isa.REG_LIST, isa.BRANCH_OPERANDS):
            pos += pos & 1
            if f.name == name:
                return base + pos + 2 + 2 * entry  # past the count
            pos += 2 + (2 if f.kind == isa.REG_LIST else 4) * len(value)
            continue
        if f.name == name:
            return base + pos
        pos += isa.IMMEDIATE_SIZES.get(f.kind, 2)
    raise AssertionError(f"no operand {name} in vm.{mnemonic}")


def count_at(b: bytes, function: int, mnemonic: str, name: str, nth: int = 0) -> int:
    return at(b, function, mnemonic, name, nth) - 2


def opcode_at(b: bytes, function: int, mnemonic: str, nth: int = 0) -> int:
    base, inst = _inst(b, function, mnemonic, nth)
    return base + inst.pc


def op(b: bytes, function: int, mnemonic: str, name: str, value: bytes, nth: int = 0) -> bytes:
    return patch(b, at(b, function, mnemonic, name, nth), value)


def empty_string(b: bytes, string_chars: int) -> bytes:
    """A string field made empty: length 0, terminator at its first byte."""
    return patch(patch(b, string_chars - 4, p32(0)), string_chars, b"\0")


def desc(offset: int, value: bytes, function: int = F) -> Callable[[bytes], bytes]:
    """FunctionDescriptor bytes: offset 0, length 4, requirements 8, reserved 12, block count 14,
    i32 count 16, ref count 18."""
    return lambda b: patch(b, descriptor(b, function) + offset, value)


def cconv(function: int, index: int, char: bytes) -> Callable[[bytes], bytes]:
    return lambda b: patch(b, chars(b, tables(b, root(b), 8)[function], 0) + index, char)


# --------------------------------------------------------------------------------------------------
# Running both


@dataclass(frozen=True)
class Seen:
    phase: str  # "load", "run", "ok" or "crash" (iree-run-module only)
    code: str | None
    text: str


def theirs(data: bytes, function: str, inputs: tuple) -> Seen:
    out = iree(data, function, tuple(str(i) for i in inputs))
    if out.kind != "status":
        return Seen(out.kind, None, out.text)
    phase = "run" if "invoking function" in out.text else "load"
    return Seen(phase, out.code, out.text)


def ours_vm(data: bytes, function: str, inputs: tuple) -> Seen:
    try:
        ctx = Context(read_module(data, ref_types=run_module_type_names()))
    except (ModuleFileError, DecodeError) as e:
        return Seen("load", e.code.name, str(e))
    try:
        return Seen("ok", None, repr(ctx.invoke(function, *inputs)))
    except VmStatusError as e:
        return Seen("run", e.code.name, str(e))
    except VmTrapError as e:
        return Seen("run", "trap", str(e))
    finally:
        ctx.close()


def ours_program(data: bytes, function: str, inputs: tuple) -> Seen:
    try:
        program = Program(data)
    except IreeAbiError as e:
        code = getattr(e, "code", None)
        return Seen("load", getattr(code, "name", None), str(e))
    try:
        return Seen("ok", None, repr(program.call(function, *inputs)))
    except VmError as e:
        return Seen("run", getattr(getattr(e, "code", None), "name", "trap"), str(e))
    finally:
        program.close()


INV, OOR, EXH, UNIMPL = "INVALID_ARGUMENT", "OUT_OF_RANGE", "RESOURCE_EXHAUSTED", "UNIMPLEMENTED"


@dataclass(frozen=True)
class Check:
    id: str
    mutate: Callable[[bytes], bytes]
    code: str  # IREE's status code at load
    text: str  # in IREE's message: the check the mutation is aimed at
    inputs: tuple = (1,)


# Each of IREE's load checks, violated alone in `par` (calls f(1): 7 unmutated).
CHECKS = [
    # ---- iree_vm_bytecode_module_flatbuffer_verify
    Check("flatcc-identifier", lambda b: patch(b, fb_start(b) + 4, b"IREX"), INV,
          "FlatBuffer verification failed"),
    Check("module-requirements", lambda b: patch(b, field(b, root(b), 2), p32(0x10)), INV,
          "not available in this runtime configuration"),
    Check("module-name-empty", lambda b: empty_string(b, chars(b, root(b), 0)), INV,
          "module missing name field"),
    Check("type-name-empty", lambda b: empty_string(b, chars(b, tables(b, root(b), 4)[1], 0)), INV,
          "types[1] missing name"),
    Check("import-name-empty", lambda b: empty_string(b, chars(b, tables(b, root(b), 6)[0], 0)),
          INV, "imports[0] missing full_name"),
    Check("export-name-empty", lambda b: empty_string(b, chars(b, tables(b, root(b), 7)[0], 0)),
          INV, "exports[0] missing local_name"),
    Check("export-ordinal", lambda b: patch(b, field(b, tables(b, root(b), 7)[0], 1), p32(2)), INV,
          "internal_ordinal out of bounds"),
    Check("signature-descriptor-mismatch",
          lambda b: patch(b, deref(b, field(b, root(b), 8)), p32(1)), INV,
          "function signature and descriptor table length mismatch (1 vs 2)"),
    Check("bytecode-version", lambda b: patch(b, field(b, root(b), 13), p32(18 << 16)), INV,
          "bytecode version mismatch"),
    Check("descriptor-block-count-0", desc(14, s16(0)), INV, "descriptor block count is 0"),
    Check("descriptor-bytecode-length-0", desc(4, p32(0)), INV, "reports 0 length"),
    Check("descriptor-bytecode-span", desc(4, p32(0x10000)), INV,
          "descriptor bytecode span out of range"),
    Check("descriptor-register-count", desc(18, s16(0x4000)), INV,
          "descriptor register count out of range"),
    # ---- iree_vm_bytecode_function_verify
    Check("function-requirements", desc(8, p32(0x40)), INV,
          "not available in this runtime configuration"),
    Check("i32-register-count-overflow", desc(16, s16(0x4001)), EXH, "register count overflow"),
    Check("ref-register-count-overflow", desc(18, s16(0x2001)), EXH, "register count overflow"),
    Check("cconv-version", cconv(F, 0, b"1"), UNIMPL, "unsupported cconv version"),
    Check("cconv-argument-char", cconv(F, 1, b"x"), INV, "unsupported cconv fragment char"),
    Check("cconv-variadic-argument", cconv(F, 1, b"C"), INV,
          "internal functions cannot accept variadic arguments"),
    # twice takes an i64 (two registers) with one declared: bound 1
    Check("argument-storage", cconv(TWICE, 1, b"I"), INV,
          "insufficient register storage for function arguments/results"),
    # ---- iree_vm_bytecode_function_verify_bytecode_op
    Check("pc-overrun", lambda b: desc(4, p32(opcode_at(b, F, "global.store.i64") + 3
                                            - descriptor_code(b, F)))(b), OOR,
          "bytecode data overrun"),
    Check("op-not-in-block", lambda b: patch(b, opcode_at(b, TWICE, "block"),
                                             bytes([isa.op("cmp.nz.i32").opcode])), INV,
          "op at pc 00000000 is not in a block"),
    Check("block-in-block", lambda b: patch(b, opcode_at(b, F, "const.i32", 1),
                                            bytes([isa.BLOCK_MARKER])), INV,
          "is a block while still in a block"),
    Check("unrecognized-opcode", lambda b: patch(b, opcode_at(b, F, "cmp.nz.i32"), b"\xFE"), INV,
          "unrecognized opcode"),
    Check("ext-op-without-requirement", desc(8, p32(0)), INV,
          "not available in this runtime configuration"),
    # the feature check of an ext op comes before the rest of it is read (here: cut short)
    Check("ext-feature-before-overrun",
          lambda b: desc(8, p32(0))(desc(4, p32(opcode_at(b, F, "cast.si32.f32") + 3
                                                - descriptor_code(b, F)))(b)), INV,
          "not available in this runtime configuration"),
    Check("unhandled-ext-opcode", lambda b: patch(b, opcode_at(b, F, "cast.si32.f32") + 1, b"\xFE"),
          INV, "unhandled ext"),
    Check("global-i32-byte-offset", lambda b: op(b, F, "global.load.i32", "byte_offset", p32(0x7F00)),
          OOR, "global byte_offset out of range: 32512"),
    Check("global-i64-byte-offset", lambda b: op(b, F, "global.store.i64", "byte_offset", p32(12)),
          OOR, "global byte_offset out of range: 12"),
    Check("global-ref-ordinal", lambda b: op(b, F, "global.store.ref", "global", p32(1)), OOR,
          "global ref ordinal out of range: 1"),
    Check("rodata-ordinal", lambda b: op(b, F, "const.ref.rodata", "rodata", p32(1)), OOR,
          "rodata ref ordinal out of range: 1"),
    Check("call-import-ordinal",
          lambda b: op(b, F, "call", "callee", p32(isa.FUNCTION_ORDINAL_IMPORT_BIT | 1)), INV,
          "import ordinal 1 out of range 1"),
    Check("import-resolved-internal", lambda b: op(b, F, "import.resolved", "import", p32(0)), INV,
          "is not an import ordinal"),
    Check("import-resolved-ordinal",
          lambda b: op(b, F, "import.resolved", "import", p32(isa.FUNCTION_ORDINAL_IMPORT_BIT | 3)),
          INV, "import ordinal 3 out of range 1"),
    # f declares 5 i32 registers: its bound is 8
    Check("call-operand-register", lambda b: op(b, F, "call", "operands", p16(8)), OOR,
          "i32 register ordinal 8 out of range 8"),
    Check("call-result-register", lambda b: op(b, F, "call", "results", p16(9)), OOR,
          "register ordinal 9 out of range 8"),
    Check("call-operand-ref-for-i32", lambda b: op(b, F, "call", "operands", p16(0x8000)), INV,
          "register required but ref register 32768 provided"),
    Check("call-operands-underflow",
          lambda b: patch(b, count_at(b, F, "call", "operands"), p16(0)), OOR,
          "register list underflow"),
    Check("return-operand-register", lambda b: op(b, F, "return", "operands", p16(8)), OOR,
          "register ordinal 8 out of range 8"),
    Check("switch-value-register", lambda b: op(b, F, "switch.i32", "values", p16(8)), OOR,
          "i32 register ordinal 8 out of range 8"),
    Check("branch-operand-register", lambda b: op(b, F, "cond_br", "true_operands", p16(0x7FF)),
          OOR, "i32 register ordinal 2047 out of range 8"),
    Check("branch-target-past-max", lambda b: op(b, F, "cond_br", "true_dest", p32(1 << 24)), OOR,
          "greater than max"),
    Check("branch-target-not-a-block", lambda b: op(b, F, "br_table", "default_dest", p32(3)), INV,
          "invalid descriptor block count 3"),
    # twice's return turned into a same-size cmp.nz.i32: its block has no terminator
    Check("missing-terminator",
          lambda b: patch(b, opcode_at(b, TWICE, "return"),
                          bytes([isa.op("cmp.nz.i32").opcode]) + p16(0) + p16(0)), INV,
          "function missing terminator in the last block"),
]


def descriptor_code(b: bytes, function: int) -> int:
    """File offset of a function's pc 0."""
    m = read_module(b)
    return m.bytecode_offset + m.function_descriptors[function].bytecode_offset


def test_par_runs_unmutated():
    assert theirs(par(), "f", (1,)).text.count("i32=7") == 1
    assert ours_vm(par(), "f", (1,)) == Seen("ok", None, "[7]")


@pytest.mark.parametrize("check", CHECKS, ids=[c.id for c in CHECKS])
def test_iree_load_check_refused_at_load_with_its_code(check):
    data = check.mutate(par())
    assert data != par()
    iree_seen = theirs(data, "f", check.inputs)
    assert (iree_seen.phase, iree_seen.code) == ("load", check.code), iree_seen
    mine = ours_vm(data, "f", check.inputs)
    assert (mine.phase, mine.code) == ("load", check.code), mine
    assert check.text in iree_seen.text, iree_seen  # the mutation hit the check it names


def test_reported_counter_global_offset():
    """The report: counter.mlir compiled inline-static, the word 0x7f000000 written over the opcode
    of __init's vm.global.store.i64 (file offset 1828 in the reporter's build): the op reads as a
    vm.global.load.i32 whose byte offset is far past the 8-byte rwdata. IREE refuses it at load;
    so must ireeabi, with the same code and offset."""
    b = counter()
    m = read_module(b)
    init = next(e.internal_ordinal for e in m.exported_functions if e.name == "__init")
    data = patch(b, opcode_at(b, init, "global.store.i64"), p32(0x7F000000))
    iree_seen = theirs(data, "next", (5,))
    assert (iree_seen.phase, iree_seen.code) == ("load", OOR), iree_seen
    found = re.search(r"global byte_offset out of range: (-?\d+) \(rwdata=8\)", iree_seen.text)
    assert found, iree_seen
    mine = ours_program(data, "next", (5,))
    assert (mine.phase, mine.code) == ("load", OOR), mine
    assert f"global byte_offset out of range: {found.group(1)} (rwdata=8" in mine.text, mine


def test_verify_error_before_an_undecodable_op():
    """IREE verifies op by op: a global offset out of range comes before a later unknown opcode."""
    b = op(par(), F, "global.load.i32", "byte_offset", p32(0x7F00))
    data = patch(b, opcode_at(b, F, "cmp.nz.i32"), b"\xFE")
    iree_seen = theirs(data, "f", (1,))
    assert (iree_seen.phase, iree_seen.code) == ("load", OOR), iree_seen
    mine = ours_vm(data, "f", (1,))
    assert (mine.phase, mine.code) == ("load", OOR), mine


@pytest.mark.parametrize("prefix, at_block", [(0xE0, True), (0xE1, True), (0xFF, True), (0xE1, False)])
def test_an_op_that_does_not_decode_is_checked_for_its_block_first(prefix, at_block):
    """IREE checks that an op is in a block before it reads it (then an ext prefix's feature bits,
    then the op): an ext prefix the function does not declare, or an unknown opcode, where a block
    marker belongs is "not in a block"; right after a block marker, the feature or the opcode."""
    b = desc(8, p32(0))(par())  # f declares no feature
    pc = opcode_at(b, F, "block") + (0 if at_block else 1)
    data = patch(b, pc, bytes([prefix]))
    iree_seen = theirs(data, "f", (1,))
    mine = ours_vm(data, "f", (1,))
    assert (iree_seen.phase, iree_seen.code) == ("load", INV), iree_seen
    assert (mine.phase, mine.code) == ("load", INV), mine
    assert check_key(mine.text) == check_key(iree_seen.text), (iree_seen.text, mine.text)
    expected = ("not-in-block" if at_block else "features" if prefix != 0xFF else "opcode")
    assert check_key(mine.text) == expected, mine.text


# --------------------------------------------------------------------------------------------------
# What IREE does not check at load


@dataclass(frozen=True)
class Unchecked:
    id: str
    mutate: Callable[[bytes], bytes]
    iree: tuple  # (phase, code) of iree-run-module
    ours: tuple  # (phase, code) of ireeabi
    inputs: tuple = (1,)


UNCHECKED = [
    # type ids: IREE maps one past the table to type 0 (i32 here, a value type): the ref global op
    # then fails its type check when it runs, in both
    Unchecked("type-id-past-table", lambda b: op(b, F, "global.load.ref", "type", p32(99)),
              ("run", INV), ("run", INV)),
    # typed operands: IREE checks none; br_table's index %i300 is never read with f(0)
    Unchecked("typed-operand-in-code-not-run", lambda b: op(b, F, "br_table", "index", p16(300)),
              ("ok", None), ("ok", None), inputs=(0,)),
    # a ref operand encoded without the ref bit: IREE masks it (%r0 still)
    Unchecked("ref-operand-without-type-bit",
              lambda b: op(b, F, "global.store.ref", "value", p16(0x4000)), ("ok", None),
              ("ok", None)),
    # a typed operand far past the frame (and past the 8 KiB stack IREE starts with): IREE reads
    # there and crashes; ours traps when the op runs
    Unchecked("i32-operand-far-past-frame",
              lambda b: op(b, F, "cmp.nz.i32", "operand", p16(0x7FFF)), ("crash", None),
              ("run", "trap")),
    # IREE's internal callee check never fires: it reads the signature past its table and crashes
    Unchecked("internal-callee-ordinal", lambda b: op(b, F, "call", "callee", p32(2)),
              ("crash", None), ("load", INV)),
    # IREE adds offset + size in 32 bits: 0xFFFFFFFE + 4 passes, and the load reads 4 GiB away
    Unchecked("global-offset-wraps", lambda b: op(b, F, "global.load.i32", "byte_offset",
                                                 p32(0xFFFFFFFE)),
              ("crash", None), ("run", "trap")),
]


@pytest.mark.parametrize("case", UNCHECKED, ids=[c.id for c in UNCHECKED])
def test_what_iree_does_not_check(case):
    data = case.mutate(par())
    iree_seen = theirs(data, "f", case.inputs)
    assert (iree_seen.phase, iree_seen.code) == case.iree, iree_seen
    mine = ours_vm(data, "f", case.inputs)
    assert (mine.phase, mine.code) == case.ours, mine
    if case.iree[0] == "ok":
        assert f"i32={mine.text.strip('[]')}" in iree_seen.text, (iree_seen, mine)


# --------------------------------------------------------------------------------------------------
# The differential: seeded bytecode mutants of the e2e corpus against iree-run-module's loader

DIFF_SEED = 20261205
DIFF_MUTANTS = 200
STATUS_LINE = re.compile(r"^\S+:\d+: ([A-Z_]+); (.*)$", re.M)
# The check a refusal comes from, by its message (IREE's wording, then ireeabi's where it differs).
CHECK_KEYS = [
    ("overrun", r"bytecode data overrun|bytecode ends inside"),
    ("opcode", r"unrecognized opcode|unknown opcode|unhandled ext"),
    ("not-in-block", r"is not in a block"),
    ("block-in-block", r"is a block while still in a block"),
    ("features", r"not available in this runtime configuration"),
    ("block-count", r"invalid descriptor block count|block at pc \w+ not defined"),
    ("block-pc", r"greater than max"),
    ("list-underflow", r"register list underflow"),
    ("ref-for-value", r"register required but ref register"),
    ("value-for-ref", r"ref register required but non-ref"),
    ("register-range", r"register ordinal [\d:]+ out of range"),
    ("register-alignment", r"not 8-byte aligned"),
    ("global-offset", r"global byte_offset out of range"),
    ("global-ref", r"global ref ordinal out of range"),
    ("rodata", r"rodata ref ordinal out of range"),
    ("import", r"import ordinal|is not an import ordinal"),
    ("function", r"function ordinal \d+ out of range"),
    ("variadic", r"variadic calls (are )?only supported"),
    ("cconv", r"cconv"),
    ("terminator", r"missing terminator"),
    ("flatbuffer", r"FlatBuffer verification failed"),
]


def check_key(text: str) -> str:
    return next((key for key, pattern in CHECK_KEYS if re.search(pattern, text)), f"other: {text[:80]}")


@dataclass(frozen=True)
class Verdict:
    refused: bool  # refused while the module loads (IREE: its verifier; ireeabi: a load error)
    code: str | None
    check: str  # check_key of the message ("" when loaded); "crash" when IREE died
    text: str


def iree_load(data: bytes, work: Path) -> Verdict:
    """iree-run-module creating a context with the module and asked for a function no module has:
    a refusal while loading the module, or a NOT_FOUND (or the program's own __init failure) once
    it loaded. Its CPU, not the wall clock, bounds an __init that never ends (mutation_campaign)."""
    import os
    import subprocess

    from support import mutation_campaign as mc
    from test_module_load_fidelity import _run_module_binary
    path = work / "mutant.vmfb"
    path.write_bytes(data)
    with open(work / "out", "wb+") as out:
        proc = subprocess.Popen([_run_module_binary(), tools.RUN_DEVICE, f"--module={path}",
                                 "--function=__no_such_function__"], stdout=out, stderr=out,
                                start_new_session=True)
        verdict, status = mc.watch(proc.pid, mc.CPU_LIMIT, mc.CPU_LIMIT * mc.BACKSTOP_FACTOR,
                                   cpu=mc.session_cpu_seconds)
        proc.returncode = 0  # reaped by watch
        out.seek(0)
        text = out.read().decode("utf-8", "backslashreplace")
    if verdict != "done":
        return Verdict(False, None, verdict, "")  # an __init that runs for ever: it loaded
    status_line = STATUS_LINE.search(text)
    if os.WIFSIGNALED(status) or status_line is None:
        return Verdict(False, None, "crash", text[-300:])
    code, message = status_line.groups()
    if "loading bytecode module at" in message:
        return Verdict(True, code, check_key(message), message.split("; at module")[0])
    return Verdict(False, code, "", message)


def ireeabi_load(data: bytes) -> Verdict:
    """ireeabi creating a Context with the module (its verifier runs before imports resolve): a
    load error of the module itself, or loaded (the missing HAL imports then fail to resolve)."""
    from ireeabi.vm.errors import ImportResolutionError
    try:
        ctx = Context(read_module(data, ref_types=run_module_type_names()))
    except (ModuleFileError, DecodeError) as e:
        return Verdict(True, e.code.name, check_key(str(e)), str(e))
    except ImportResolutionError as e:
        return Verdict(False, None, "", str(e))
    ctx.close()
    return Verdict(False, None, "", "")


def bytecode_mutant(rng, data: bytes) -> bytes:
    """One to three edits of a module's function bytecode: a bit flip, a byte, or a 16- or 32-bit
    edge value (register ordinals, list counts, ordinals, offsets, branch targets)."""
    m = read_module(data)
    first = m.function_descriptors[0]
    lo = first.file_offset - first.bytecode_offset
    b = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 3))):
        pos = lo + rng.randrange(len(m.bytecode))
        kind = rng.choice(("flip", "byte", "u16", "u32"))
        if kind == "flip":
            b[pos] ^= 1 << rng.randrange(8)
        elif kind == "byte":
            b[pos] = rng.randrange(256)
        elif kind == "u16":
            b[pos:pos + 2] = rng.choice((0, 0xFFFF, 0x7FFF, 0x8000, 0xFF, 0x100, 0x3FFF)).to_bytes(2, "little")
        else:
            b[pos:pos + 4] = rng.choice((0, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0x1000000, 64)).to_bytes(4, "little")
    return bytes(b[:len(data)])


# Where the verdicts differ and why ireeabi keeps its own (docs/hostile-input.md):
KNOWN_DIFFERENCES = {
    # IREE's internal callee check never fires; it reads the callee's signature past its table
    "internal-callee": lambda iree, ours: (iree.check in ("crash", "") and ours.refused
                                           and ours.check == "function"),
    # An op cut short by the end of its function: IREE checks each operand as it reads it and
    # reports the first that fails (a global offset, a register, an entry of a list whose count
    # runs past the function: read from the bytes after it, the next function's code, the rest of
    # the file or memory past it), the overrun only after those; ireeabi decodes the whole op
    # first and refuses the overrun (OUT_OF_RANGE). Both refuse at load; IREE's code may be
    # INVALID_ARGUMENT (a non-ref where a ref belongs, among the bytes past the function).
    "op-cut-short": lambda iree, ours: (iree.refused and ours.refused and ours.check == "overrun"
                                        and "bytecode ends inside" in ours.text),
}


def classify(iree: Verdict, ours: Verdict) -> str:
    if iree.refused == ours.refused and (not iree.refused or (iree.code, iree.check) == (ours.code, ours.check)):
        return "same"
    return next((name for name, known in KNOWN_DIFFERENCES.items() if known(iree, ours)), "differs")


def test_bytecode_mutants_load_as_iree_run_module_loads_them(tmp_path, capsys):
    """200 seeded mutants of the bytecode of the e2e corpus (both inline models): refused at load by
    both (with the same status code, by the same check) or by neither, except the documented
    differences, each recognized by its shape."""
    import random

    from support import e2e_corpus
    mods = [(f"{stem}.{model}", p.read_bytes()) for (stem, model), p in sorted(e2e_corpus.compile_all().items())]
    rng = random.Random(DIFF_SEED)
    counts: dict[str, int] = {}
    differing = []
    for i in range(DIFF_MUTANTS):
        name, data = mods[i % len(mods)]
        mutant = bytecode_mutant(rng, data)
        iree, ours = iree_load(mutant, tmp_path), ireeabi_load(mutant)
        kind = classify(iree, ours)
        if kind == "same":
            kind = "both refused" if iree.refused else "both loaded"
        counts[kind] = counts.get(kind, 0) + 1
        if kind == "differs":
            differing.append(f"#{i} {name}:\n  IREE    {iree}\n  ireeabi {ours}")
    with capsys.disabled():
        print(f"\nverifier differential (seed {DIFF_SEED}): {counts}")
    assert not differing, "\n".join(differing)
    assert sum(counts.values()) == DIFF_MUTANTS
    assert counts.get("both refused", 0) >= DIFF_MUTANTS // 4 and counts.get("both loaded", 0) >= DIFF_MUTANTS // 10, counts
