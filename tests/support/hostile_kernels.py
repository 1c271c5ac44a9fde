"""Kernel libraries made to loop where a loader calls them: the hostile inputs of the budget tests
and the campaigns, generated from real modules (iree-compile's), never committed.

`looping(vmfb, where)` returns the module with its one kernel library (an embedded ELF of any
architecture, or a wasm32 side module) changed in place, so that the code the loader calls at
`where` never returns:

- ELF: "query" writes the architecture's branch-to-itself over `iree_hal_executable_library_query`
  (found in .dynsym, as IREE's loader finds it); "initializer" does the same and turns the dynamic
  entry DT_FLAGS_1 (which IREE's loader ignores, elf_module.c) into DT_INIT naming that function,
  so the loader's initializer loops before the query is reached; "dispatch" writes the loop over the
  dispatch functions, found as the words of the image's relocated data that point into its
  executable segment (library v0's export table: the function pointers are relocated; the query is
  called, never pointed to).
- wasm32: "data-relocs", "query" and "dispatch" replace the body of `__wasm_apply_data_relocs`
  (the initializer iree-compile's side modules export; they have no `__wasm_call_ctors`, which the
  loader runs the same way), the query, or the functions of the element segment (the table slots:
  the dispatch functions), with `loop br 0 end unreachable` padded with nops to the body's own
  length.

Each change keeps every length, so the module's FlatBuffer and zip framing stay as they are.
"""
from __future__ import annotations

import io
import struct

__all__ = ["looping", "kernel_segment", "read_uleb128", "ELF_WHERE", "WASM_WHERE", "LOOPS"]

ELF_WHERE = ("initializer", "query", "dispatch")
WASM_WHERE = ("data-relocs", "query", "dispatch")
# A branch to itself, by e_machine (armv7's Thumb form where the symbol's low bit says Thumb).
LOOPS = {"EM_X86_64": b"\xeb\xfe", "EM_386": b"\xeb\xfe", "EM_AARCH64": b"\x00\x00\x00\x14",
         "EM_RISCV": b"\x6f\x00\x00\x00", "EM_ARM": b"\xfe\xff\xff\xea", "EM_ARM.thumb": b"\xfe\xe7"}
DT_INIT, DT_FLAGS_1 = 12, 0x6FFFFFFB


def kernel_segment(vmfb: bytes) -> tuple[int, int, str]:
    """(offset, length, "elf" or "wasm") of the module's one kernel library."""
    from ireeabi.vm.bytecode import module_file as mf
    found = [(s.offset, s.length) for s in mf.read_module(vmfb).rodata_segments
             if vmfb[s.offset:s.offset + 4] in (b"\x7fELF", b"\0asm")]
    assert len(found) == 1, f"{len(found)} kernel libraries"
    off, n = found[0]
    return off, n, "elf" if vmfb[off:off + 4] == b"\x7fELF" else "wasm"


def looping(vmfb: bytes, where: str) -> bytes:
    """`vmfb` with the code its loader calls at `where` made to loop (see the module docstring)."""
    off, n, kind = kernel_segment(vmfb)
    lib = bytearray(vmfb[off:off + n])
    if kind == "elf":
        _elf_loop(lib, where)
    else:
        _wasm_loop(lib, where)
    assert len(lib) == n
    return vmfb[:off] + bytes(lib) + vmfb[off + n:]


# -- ELF ----------------------------------------------------------------------------------------------


def _elf_loop(lib: bytearray, where: str) -> None:
    from elftools.elf.elffile import ELFFile
    if where not in ELF_WHERE:
        raise ValueError(f"an ELF library loops at one of {ELF_WHERE}, not {where!r}")
    elf = ELFFile(io.BytesIO(bytes(lib)))
    machine = elf["e_machine"]
    (query,) = [s["st_value"] for s in elf.get_section_by_name(".dynsym").iter_symbols()
                if s.name == "iree_hal_executable_library_query"]
    text = [s for s in elf.iter_segments() if s["p_type"] == "PT_LOAD" and s["p_flags"] & 1]

    def file_offset(vaddr: int) -> int:
        vaddr &= ~1  # armv7's Thumb bit
        (seg,) = [s for s in text if s["p_vaddr"] <= vaddr < s["p_vaddr"] + s["p_filesz"]]
        return seg["p_offset"] + vaddr - seg["p_vaddr"]

    def spin(vaddr: int) -> None:
        code = LOOPS["EM_ARM.thumb" if machine == "EM_ARM" and vaddr & 1 else machine]
        at = file_offset(vaddr)
        lib[at:at + len(code)] = code

    if where in ("query", "initializer"):
        spin(query)
    if where == "initializer":
        dyn = elf.get_section_by_name(".dynamic")
        word = elf.elfclass // 8
        entry = struct.Struct("<qQ" if word == 8 else "<iI")
        for i in range(dyn["sh_size"] // entry.size):
            at = dyn["sh_offset"] + i * entry.size
            tag, _ = entry.unpack_from(lib, at)
            if tag & ((1 << (8 * word)) - 1) == DT_FLAGS_1:
                entry.pack_into(lib, at, DT_INIT, query)
                break
        else:
            raise AssertionError("no DT_FLAGS_1 entry to turn into DT_INIT")
    if where == "dispatch":
        targets = _relocated_code_pointers(elf, lib, text)
        assert targets and query not in targets, (targets, query)
        for vaddr in targets:
            spin(vaddr)


def _relocated_code_pointers(elf, lib: bytearray, text: list) -> set[int]:
    """The values of the image's relative relocations that point into its executable segment."""
    word = elf.elfclass // 8
    lo = min(s["p_vaddr"] for s in text)
    hi = max(s["p_vaddr"] + s["p_memsz"] for s in text)
    out = set()
    for sec in elf.iter_sections():
        if sec["sh_type"] not in ("SHT_RELA", "SHT_REL"):
            continue
        for r in sec.iter_relocations():
            if r.is_RELA():
                value = r["r_addend"]
            else:  # the addend is the word at the relocated place
                (place,) = [s for s in elf.iter_segments() if s["p_type"] == "PT_LOAD"
                            and s["p_vaddr"] <= r["r_offset"] < s["p_vaddr"] + s["p_filesz"]]
                at = place["p_offset"] + r["r_offset"] - place["p_vaddr"]
                value = int.from_bytes(lib[at:at + word], "little")
            if lo <= (value & ~1) < hi:
                out.add(value)
    return out


# -- wasm ---------------------------------------------------------------------------------------------


def read_uleb128(data: bytes, pos: int) -> tuple[int, int]:
    """The unsigned LEB128 number at `pos` of a wasm module, and the position after it."""
    result = shift = 0
    while True:
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def _name(data: bytes, pos: int) -> tuple[str, int]:
    n, pos = read_uleb128(data, pos)
    return data[pos:pos + n].decode(), pos + n


def _sections(data: bytes) -> dict[int, tuple[int, int]]:
    """section id -> (start, end) of its contents (custom sections left out)."""
    out, pos = {}, 8
    while pos < len(data):
        sid = data[pos]
        size, start = read_uleb128(data, pos + 1)
        if sid:
            out[sid] = (start, start + size)
        pos = start + size
    return out


def _skip_limits(data: bytes, pos: int) -> int:
    flags, pos = read_uleb128(data, pos)
    _, pos = read_uleb128(data, pos)
    if flags & 1:
        _, pos = read_uleb128(data, pos)
    return pos


def _wasm_loop(lib: bytearray, where: str) -> None:
    if where not in WASM_WHERE:
        raise ValueError(f"a wasm library loops at one of {WASM_WHERE}, not {where!r}")
    data = bytes(lib)
    sec = _sections(data)
    imported = 0
    pos, end = sec[2]
    count, pos = read_uleb128(data, pos)
    for _ in range(count):
        _, pos = _name(data, pos)
        _, pos = _name(data, pos)
        kind = data[pos]
        pos += 1
        if kind == 0:  # function: its type index
            _, pos = read_uleb128(data, pos)
            imported += 1
        elif kind == 1:  # table: reftype, limits
            pos = _skip_limits(data, pos + 1)
        elif kind == 2:  # memory: limits
            pos = _skip_limits(data, pos)
        else:  # global: valtype, mutability
            pos += 2
    exports: dict[str, int] = {}  # name -> function index
    pos, end = sec[7]
    count, pos = read_uleb128(data, pos)
    for _ in range(count):
        name, pos = _name(data, pos)
        kind = data[pos]
        index, pos = read_uleb128(data, pos + 1)
        if kind == 0:
            exports[name] = index
    bodies = []  # (start, end) of each defined function's body
    pos, end = sec[10]
    count, pos = read_uleb128(data, pos)
    for _ in range(count):
        size, pos = read_uleb128(data, pos)
        bodies.append((pos, pos + size))
        pos += size

    def spin(index: int) -> None:
        start, stop = bodies[index - imported]
        n = stop - start
        assert n >= 8, "a body too short for the loop"
        # no locals; loop (empty block type) br 0 end; nops; unreachable (whatever the function
        # returns, the stack is polymorphic past it); end
        lib[start:stop] = b"\x00\x03\x40\x0c\x00\x0b" + b"\x01" * (n - 8) + b"\x00\x0b"

    if where == "data-relocs":
        spin(exports["__wasm_apply_data_relocs"])
    elif where == "query":
        spin(exports["iree_hal_executable_library_query"])
    else:
        pos, end = sec[9]
        count, pos = read_uleb128(data, pos)
        funcs = []
        for _ in range(count):
            flags, pos = read_uleb128(data, pos)
            assert flags == 0, f"element segment flags {flags}"
            while data[pos] != 0x0B:  # the offset expression (global.get or i32.const) to its end
                pos += 1
            n, pos = read_uleb128(data, pos + 1)
            for _ in range(n):
                f, pos = read_uleb128(data, pos)
                funcs.append(f)
        assert funcs, "no element segment"
        for f in funcs:
            spin(f)
