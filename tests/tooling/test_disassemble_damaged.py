"""Damaged bytecode through the disassembler (tooling/disassemble.py, `inspect --disassemble`): a
listing or an ireeabi error naming the function and pc, never another exception; and where
iree-dump-module 3.13 refuses a module, ireeabi refuses it too.

iree-dump-module creates the module before it disassembles, and creating it runs IREE's bytecode
verifier over every function; ireeabi's disassembly verifies the same way first (IREE's checks
only). Before, a branch to a pc inside a block reached the writers and ended in `KeyError: <pc>`.

- a seeded in-process loop over mutants (bit flips, byte sets, 16-bit specials, zeroed runs,
  splices of the module's own bytecode, truncations) of the e2e corpus' real modules (both inline
  models), most in the bytecode, some anywhere in the file: only ireeabi errors come out, and a
  bytecode error names its function and pc;
- a sample of the bytecode mutants against iree-dump-module: its refusals are ours; where it lists
  and we refuse, the reason is one of the two documented below; where both list, the texts are the
  same bytes (strings with bytes that are not UTF-8 printed raw by the tool, as `\\xNN` here);
- directed: the branch into a block (the KeyError shape), an op starting at a function's last
  byte, a type id past the types table, a NUL inside a vm.fail message, `inspect --disassemble`.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import random
import re
import struct
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from support import e2e_corpus
from support import iree_tools
from ireeabi.abi.errors import IreeAbiError
from ireeabi.cli.main import main
from ireeabi.tooling import disassemble as dis
from ireeabi.vm.bytecode.decoder import DecodeError, MalformedBytecodeError, decode_function, function_bytecode
from ireeabi.vm.bytecode.verifier import BytecodeVerifyError
from ireeabi.vm.bytecode.module_file import read_module

SEED = 20261205
MUTANTS = 1500
ORACLE_EVERY = 15  # every 15th bytecode mutant also goes through iree-dump-module (74 of them)


def corpus_modules() -> list[tuple[str, bytes]]:
    return [(p.name, p.read_bytes()) for p in sorted(e2e_corpus.compile_all().values())]


@pytest.fixture(scope="module")
def modules() -> list[tuple[str, bytes]]:
    return corpus_modules()


def _bytecode_span(data: bytes) -> tuple[int, int]:
    m = read_module(data)
    start = m.function_descriptors[0].file_offset - m.function_descriptors[0].bytecode_offset
    assert data[start:start + len(m.bytecode)] == bytes(m.bytecode)
    return start, len(m.bytecode)


def _mutate(rng: random.Random, data: bytes, lo: int, size: int) -> bytes:
    b = bytearray(data)
    op = rng.choice(("flip", "set", "special", "zero", "splice", "truncate"))
    for _ in range(rng.choice((1, 1, 2, 4))):
        pos = lo + rng.randrange(size)
        if op == "flip":
            b[pos] ^= 1 << rng.randrange(8)
        elif op == "set":
            b[pos] = rng.randrange(256)
        elif op == "special":
            b[pos:pos + 2] = rng.choice((b"\0\0", b"\xff\xff", b"\xff\x7f", b"\x00\x80"))
        elif op == "zero":
            n = rng.randrange(1, 8)
            b[pos:pos + n] = bytes(len(b[pos:pos + n]))
        elif op == "splice":  # bytes of the same region over others: ops, pcs and lists misplaced
            src, n = lo + rng.randrange(size), rng.randrange(1, 12)
            b[pos:pos + n] = data[src:src + n]
        else:
            del b[pos:]
            return bytes(b)
    return bytes(b[:len(data)])


def _check_refusal(e: IreeAbiError) -> None:
    if isinstance(e, DecodeError):  # a bytecode error names its function and pc
        assert e.function and re.search(r"\(at \S.* pc 0x[0-9A-F]+\)$", str(e)), str(e)


def _raw(text: str) -> bytes:
    """Our text as the bytes iree-dump-module writes: a string operand's bytes that are not UTF-8
    are `\\xNN` escapes here (a str holds no raw bytes), raw in the tool's output."""
    return re.sub(rb"\\x([0-9a-f]{2})", lambda m: bytes([int(m[1], 16)]), text.encode())


# Where iree-dump-module lists a module that ireeabi refuses; anything else is a failure.
_WE_REFUSE_MORE = (
    # the decoder reads every typed register operand in its bank (a ref register where an i32
    # belongs is malformed); IREE's decoder takes the ordinal without looking
    (MalformedBytecodeError, r"register required but .* encoded"),
    # IREE's verifier means to range-check internal callee ordinals, but the check never fires (a
    # misplaced parenthesis); it then reads the callee's signature past the table (and may crash)
    (BytecodeVerifyError, r"function ordinal \d+ out of range"),
    # a ref global op's type id with no types table: IREE's disassembler reads entry 0 past it
    (MalformedBytecodeError, r"with an empty types table"),
)


def mutant_sequence(modules: list[tuple[str, bytes]], count: int = MUTANTS
                    ) -> "Iterator[tuple[int, str, bool, bytes]]":
    """(index, module name, whether the mutation is in the bytecode, mutant) for the seed's
    first `count` mutants of `modules` (the corpus compiled from file names: the same bytes in
    every folder and on every machine, so the same mutants)."""
    rng = random.Random(SEED)
    spans = [_bytecode_span(data) for _, data in modules]
    for i in range(count):
        k = i % len(modules)
        name, data = modules[k]
        in_bytecode = rng.random() < 0.75
        lo, size = spans[k] if in_bytecode else (0, len(data))
        yield i, name, in_bytecode, _mutate(rng, data, lo, size)


def _where(i: int, name: str, data: bytes) -> str:
    """What reproduces mutant `i` anywhere: the seed, the module and its content hash, the index,
    and the command that writes it."""
    return (f"mutant {i} of seed {SEED}, module {name} (sha256 {hashlib.sha256(data).hexdigest()[:16]}"
            f"...); rebuild it: PYTHONPATH=tests python tests/tooling/test_disassemble_damaged.py --mutant {i} "
            f"-o mutant.vmfb")


def test_mutants_disassemble_or_refuse_as_iree_dump_module(modules, tmp_path):
    path = tmp_path / "mutant.vmfb"
    counts = {"listed": 0, "refused": 0, "compared": 0, "same": 0, "tool refused": 0,
              "we refuse more": 0}
    originals = dict(modules)
    bytecode_mutants = 0
    for i, name, in_bytecode, mutant in mutant_sequence(modules):
        ours: str | None = None
        try:
            ours = dis.disassembly(read_module(mutant), bytecode_offsets=True)
            counts["listed"] += 1
        except IreeAbiError as e:
            _check_refusal(e)
            refusal = e
            counts["refused"] += 1
        # any other exception fails the test here (the seed reproduces it)
        if not in_bytecode:
            continue
        bytecode_mutants += 1
        if bytecode_mutants % ORACLE_EVERY:
            continue
        path.write_bytes(mutant)
        tool = subprocess.run([iree_tools.find_tool("iree-dump-module"), "--output=disassembly",
                               "--bytecode_offsets", str(path)], capture_output=True, timeout=600)
        counts["compared"] += 1
        where = _where(i, name, originals[name])
        if tool.returncode != 0:  # refused (or crashed): so do we
            assert ours is None, (where, tool.stderr[-300:])
            counts["tool refused"] += 1
        elif ours is None:
            assert any(isinstance(refusal, cls) and re.search(pattern, str(refusal))
                       for cls, pattern in _WE_REFUSE_MORE), (where, str(refusal))
            counts["we refuse more"] += 1
        else:
            assert _raw(ours) == tool.stdout, where
            counts["same"] += 1
    print(f"disassembly mutants (seed {SEED}): {counts}")
    assert counts["listed"] + counts["refused"] == MUTANTS
    assert counts["compared"] == bytecode_mutants // ORACLE_EVERY
    # the sample holds both verdicts of the tool and texts to compare
    assert counts["tool refused"] >= 30 and counts["same"] >= 8, counts


# --------------------------------------------------------------------------------------------------
# Directed shapes


def _first(modules, symbols: tuple[str, ...]):
    """(name, bytes, module, ordinal, instruction) of the first op among `symbols` in the corpus."""
    for name, data in modules:
        m = read_module(data)
        for i in range(len(m.function_descriptors)):
            for inst in decode_function(function_bytecode(m, i)):
                if inst.op.symbol in symbols:
                    return name, data, m, i, inst
    raise AssertionError(f"no {symbols} in the corpus")


def _tool(tmp_path: Path, data: bytes, *flags: str) -> subprocess.CompletedProcess:
    path = tmp_path / "directed.vmfb"
    path.write_bytes(data)
    return subprocess.run([iree_tools.find_tool("iree-dump-module"), "--output=disassembly", *flags,
                           str(path)], capture_output=True, timeout=600)


def _descriptor_at(data: bytes, m, ordinal: int) -> int:
    """File offset of function `ordinal`'s FunctionDescriptor (offset, length, requirements,
    reserved:16, block_count:16, i32 count:16, ref count:16)."""
    d = m.function_descriptors[ordinal]
    key = struct.pack("<ii", d.bytecode_offset, d.bytecode_length)
    at = data.find(key)
    assert at > 0 and data.find(key, at + 1) < 0
    return at


@pytest.mark.parametrize("block_count_raised", [False, True])
def test_a_branch_into_a_block_is_refused_as_the_tool_does(modules, tmp_path, block_count_raised):
    """The KeyError shape: a branch to a pc inside a block. The target is one more block than the
    descriptor counts; with the count raised to match, it is a block no marker defines."""
    _, data, m, ordinal, br = _first(modules, ("Branch", "CondBranch"))
    field = "dest" if br.op.symbol == "Branch" else "true_dest"
    at = m.function_descriptors[ordinal].file_offset + br.pc + (1 if field == "dest" else 3)
    assert struct.unpack_from("<I", data, at)[0] == br.operands[field]
    target = br.operands[field] + 1  # inside the block: not a block marker
    damaged = bytearray(data)
    struct.pack_into("<I", damaged, at, target)
    if block_count_raised:
        count_at = _descriptor_at(data, m, ordinal) + 14
        assert struct.unpack_from("<h", data, count_at)[0] == m.function_descriptors[ordinal].block_count
        struct.pack_into("<h", damaged, count_at, m.function_descriptors[ordinal].block_count + 1)
        reason = f"block at pc {target:08X} not defined in bytecode"
    else:
        reason = f"invalid descriptor block count {m.function_descriptors[ordinal].block_count}"
    damaged = bytes(damaged)
    name = dis.function_name(m, ordinal)
    with pytest.raises(BytecodeVerifyError, match=rf"{reason}.* \(at {re.escape(name)} pc 0x[0-9A-F]+\)"):
        dis.disassembly(read_module(damaged))
    with pytest.raises(BytecodeVerifyError, match=reason):
        dis.function_lines(read_module(damaged), ordinal)
    tool = _tool(tmp_path, damaged)
    assert tool.returncode != 0 and reason.encode() in tool.stderr, tool.stderr
    # the writers, given a block map without the target, name it instead of a KeyError
    damaged_m = read_module(damaged)
    insts = decode_function(function_bytecode(damaged_m, ordinal))
    blocks = {x.pc: n for n, x in enumerate(y for y in insts if y.is_block)}
    inst = next(x for x in insts if x.pc == br.pc)
    with pytest.raises(MalformedBytecodeError, match=rf"branch target pc {target:08X} is not a block "
                                                     rf"marker \(at pc 0x{br.pc:X}\)"):
        dis.instruction_text(inst, damaged_m, blocks)
    # and the command line says so in one line, no traceback
    path = tmp_path / "branch.vmfb"
    path.write_bytes(damaged)
    err = io.StringIO()
    assert main(["inspect", str(path), "--disassemble"], stdout=io.StringIO(), stderr=err) != 0
    assert reason in err.getvalue() and name in err.getvalue()
    assert "Traceback" not in err.getvalue()


@pytest.mark.parametrize("last", [0x00, 0x5A, 0xFF])
def test_an_op_at_the_last_byte_is_refused(modules, tmp_path, last):
    # IREE's verifier stops before a function's last byte, so one more byte (the padding after
    # the function) loads; its disassembler then decodes that op from the bytes past the function
    # (3.13 lists `vm.global.load.i32` with a garbage offset, or stops at "unhandled opcode")
    name, data, m, ordinal, _ = _first(modules, ("Return",))
    d = m.function_descriptors[ordinal]
    assert d.bytecode_length % 8, "the function needs padding after it"
    damaged = bytearray(data)
    struct.pack_into("<i", damaged, _descriptor_at(data, m, ordinal) + 4, d.bytecode_length + 1)
    damaged[d.file_offset + d.bytecode_length] = last
    fname = dis.function_name(m, ordinal)
    with pytest.raises(DecodeError, match=rf"\(at {re.escape(fname)} pc 0x{d.bytecode_length:X}\)"):
        dis.disassembly(read_module(bytes(damaged)))


def _type_operand_offsets(data: bytes, m, ordinal: int) -> list[int]:
    """File offsets of the type id operand of every instruction of function `ordinal` that has
    one (opcode, then a 32-bit global ordinal or register, then the type for the ref global ops)."""
    out = []
    for inst in decode_function(function_bytecode(m, ordinal)):
        if inst.op.symbol in ("GlobalLoadRef", "GlobalStoreRef"):
            at = m.function_descriptors[ordinal].file_offset + inst.pc + 5
            assert struct.unpack_from("<I", data, at)[0] == inst.operands["type"]
            out.append(at)
    return out


# Corpus modules whose types table starts with different types: the CI run of a fresh clone met
# counter.inline-static (types[0] f32) printed `: i32` here, `: f32` by the tool.
@pytest.mark.parametrize("stem,first", [("counter.inline-dynamic", "i32"),
                                        ("counter.inline-static", "f32"),
                                        ("scalars.inline-dynamic", "f64")])
def test_a_type_id_past_the_table_prints_as_the_tool(modules, tmp_path, stem, first):
    _, data = next((n, d) for n, d in modules if n.startswith(stem + "."))
    m = read_module(data)
    assert m.types[0] == first
    ordinal, at = next((i, a) for i in range(len(m.function_descriptors))
                       for a in _type_operand_offsets(data, m, i))
    for type_id in (len(m.types), 0x7FFFFFFF, 0xFFFFFFFF):
        damaged = bytearray(data)
        struct.pack_into("<I", damaged, at, type_id)
        ours = dis.disassembly(read_module(bytes(damaged)), bytecode_offsets=True)
        tool = _tool(tmp_path, bytes(damaged), "--bytecode_offsets")
        assert tool.returncode == 0 and ours.encode() == tool.stdout
        assert f".refs[0] : {first}\n" in ours


# A types table whose entry 0 is a ref type or no type: the tool prints entry 0's resolved type
# (the registered name, `vm.list` for any list, `*` for !vm.opaque). VM assembly sets the table.
@pytest.mark.parametrize("first,printed", [("!vm.buffer", "!vm.buffer"), ("!vm.list<i8>", "!vm.list"),
                                           ("!vm.opaque", "*"), ("i16", "i16")])
def test_a_type_id_past_the_table_prints_entry_0_resolved(tmp_path, first, printed):
    src = tmp_path / "first_type.vmasm"
    src.write_text(f"""vm.module @first_type version 0
vm.type {first}
vm.type !hal.buffer
vm.export @f
vm.func @f(%r0: !hal.buffer) -> () {{
^bb0:
  vm.global.store.ref %r0, .refs[0] : !hal.buffer
  %r1 = vm.global.load.ref .refs[0] : !hal.buffer
  vm.return
}}
""")
    data = iree_tools.assemble_vmasm(src, tmp_path).read_bytes()
    m = read_module(data)
    assert m.types == (first, "!hal.buffer")
    offsets = _type_operand_offsets(data, m, 0)
    assert len(offsets) == 2
    damaged = bytearray(data)
    for at in offsets:
        struct.pack_into("<I", damaged, at, 2)  # one past the table
    ours = dis.disassembly(read_module(bytes(damaged)))
    tool = _tool(tmp_path, bytes(damaged))
    assert tool.returncode == 0 and ours.encode() == tool.stdout, tool.stderr
    assert ours.count(f".refs[0] : {printed}\n") == 2


def test_a_nul_in_a_fail_message_ends_it_as_the_tool(modules, tmp_path):
    _, data, m, ordinal, inst = _first(modules, ("Fail",))
    message = inst.operands["message"].encode()
    start = m.function_descriptors[ordinal].file_offset + inst.pc + inst.length - len(message)
    assert data[start:start + len(message)] == message
    damaged = bytearray(data)
    damaged[start + 4] = 0
    ours = dis.disassembly(read_module(bytes(damaged)))
    tool = _tool(tmp_path, bytes(damaged))
    assert tool.returncode == 0 and ours.encode() == tool.stdout
    assert f'"{message[:4].decode()}"\n' in ours


def test_an_i64_register_with_high_bits_prints_masked_as_the_tool(modules, tmp_path):
    # IREE names an i64 register by its ordinal under the i32 mask (the CI run of 2026-12-05 met
    # 0xFF0E printed unmasked here, where the tool printed %i32526:32527)
    _, data, m, ordinal, inst = _first(modules, ("BufferStoreF32",))
    at = m.function_descriptors[ordinal].file_offset + inst.pc + 4  # prefix, opcode, buffer ref
    offset_reg = struct.unpack_from("<H", data, at)[0]
    assert offset_reg < 0x100 and f"%i{offset_reg}:{offset_reg + 1}" in dis.disassembly(m)
    for raw in (0xFF00 | offset_reg, 0x8000 | offset_reg, 0x7F00 | offset_reg):
        damaged = bytearray(data)
        struct.pack_into("<H", damaged, at, raw)
        ours = dis.disassembly(read_module(bytes(damaged)), bytecode_offsets=True)
        tool = _tool(tmp_path, bytes(damaged), "--bytecode_offsets")
        assert tool.returncode == 0 and ours.encode() == tool.stdout, hex(raw)
        masked = raw & 0x7FFF
        assert f"%i{masked}:{masked + 1}\n" in ours


def rebuild_mutant() -> None:
    """Write one of the seeded mutants (what a failure of the campaign above names) to a file."""
    ap = argparse.ArgumentParser(description=rebuild_mutant.__doc__)
    ap.add_argument("--mutant", type=int, required=True, help="its index in the seed's sequence")
    ap.add_argument("-o", "--output", default="mutant.vmfb")
    args = ap.parse_args()
    modules = corpus_modules()
    for i, name, _, mutant in mutant_sequence(modules, args.mutant + 1):
        if i == args.mutant:
            Path(args.output).write_bytes(mutant)
            print(f"{args.output}: {_where(i, name, dict(modules)[name])}")


if __name__ == "__main__":
    rebuild_mutant()
