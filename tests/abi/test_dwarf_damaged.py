"""Damaged DWARF (abi/dwarf.py): every malformed object is a DwarfError naming the section, DIE
offset or attribute, never another exception, a hang or an unbounded allocation.

- seeded mutation loops (bit flips, byte sets, 4-byte specials, zeroed ranges, truncations,
  splices) over the .debug_info, .debug_abbrev, .debug_str and relocation sections, the section
  headers and the ELF header of objects gcc builds (x86_64 `-g`, `-m32 -g`, `-gdwarf-4`), each
  read in-process: only DwarfError (or UnknownNameError, for the struct asked for) may come out;
- directed shapes, built by editing gcc's annotated assembly (`-dA` names every DIE and attribute)
  and assembling it: a struct holding itself, typedef / qualifier / array cycles, references to
  offsets where no DIE starts, DW_AT_sibling links that loop (not followed: the structs read are
  the undamaged file's), absurd array bounds, deep nesting; the one-byte .debug_abbrev flip that
  left a typedef without a name (a TypeError in `dwarf_struct` before); a section size past the
  file's end (read through a memory map: no allocation of that size);
- compressed debug sections (gcc -gz: SHF_COMPRESSED, and GNU's .zdebug_* sections) read as the
  plain object; decompression bombs (a declared size of gigabytes, a stream inflating past its
  declared size) and a NOBITS debug section of gigabytes refused naming the section, with no
  allocation of that size.
"""
from __future__ import annotations

import random
import re
import shutil
import signal
import subprocess
import tracemalloc
from pathlib import Path

import pytest

from ireeabi.abi import dwarf
from ireeabi.abi.errors import UnknownNameError
from ireeabi.cli.main import main

HEADERS = Path(__file__).parents[1] / "fixtures" / "headers"
SOURCE = '#include "constructs.h"\neverything_t e; struct wire w; value_t v; cacheline_t l;\n'
SEED = 20261205
MUTANTS = 1000
# every refusal names where it is: a DIE, a section, the ELF structure, or the DWARF as a whole
NAMED = re.compile(r"DIE 0x[0-9A-F]+|\.debug_\w+|ELF|DWARF")


def _gcc() -> str:
    gcc = shutil.which("gcc")
    assert gcc, "gcc is needed to build the DWARF test objects"
    return gcc


def _build(tmp: Path, name: str, *flags: str) -> Path:
    src = tmp / "use.c"
    src.write_text(SOURCE)
    out = tmp / f"{name}.o"
    subprocess.run([_gcc(), "-c", "-I", str(HEADERS), *flags, str(src), "-o", str(out)], check=True)
    return out


@pytest.fixture(scope="module")
def objects(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("dwarf_objects")
    return {"x86_64": _build(tmp, "x86_64", "-g"), "i386": _build(tmp, "i386", "-m32", "-g"),
            "dwarf4": _build(tmp, "dwarf4", "-gdwarf-4")}


def _regions(path: Path) -> dict[str, tuple[int, int]]:
    """Name -> (file offset, size) of the parts the mutants hit."""
    from elftools.elf.elffile import ELFFile

    with open(path, "rb") as f:
        elf = ELFFile(f)
        out = {s.name: (s["sh_offset"], s["sh_size"]) for s in elf.iter_sections()
               if s.name in (".debug_info", ".debug_abbrev", ".debug_str", ".rela.debug_info",
                             ".rel.debug_info")}
        out["section headers"] = (elf["e_shoff"], elf["e_shnum"] * elf["e_shentsize"])
        out["ELF header"] = (0, elf["e_ehsize"])
    out[".rel(a).debug_info"] = out.pop(".rela.debug_info", None) or out.pop(".rel.debug_info")
    return out


def _mutate(rng: random.Random, data: bytes, lo: int, size: int) -> tuple[bytes, str]:
    b = bytearray(data)
    op = rng.choice(("flip", "set", "special", "zero", "truncate", "splice"))
    for _ in range(rng.choice((1, 1, 2, 5))):
        pos = lo + rng.randrange(max(size, 1))
        if op == "flip":
            b[pos] ^= 1 << rng.randrange(8)
        elif op == "set":
            b[pos] = rng.randrange(256)
        elif op == "special":
            b[pos:pos + 4] = rng.choice((b"\0\0\0\0", b"\xff\xff\xff\xff", b"\xff\xff\xff\x7f",
                                         b"\x00\x00\x00\x80"))
        elif op == "zero":
            n = rng.randrange(1, 32)
            b[pos:pos + n] = bytes(len(b[pos:pos + n]))
        elif op == "truncate":
            del b[pos:]
            break
        else:  # a piece of the same part copied over another
            src, n = lo + rng.randrange(max(size, 1)), rng.randrange(1, 24)
            b[pos:pos + n] = data[src:src + n]
    return bytes(b[:len(data)]), op


class _Hang(Exception):
    pass


def _backstop(seconds: int):
    """A generous wall-clock backstop (not a verdict on speed): a loop that never ends fails."""
    def fire(*_):
        raise _Hang(f"no answer within {seconds} s")
    signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)


def test_mutants_give_dwarf_errors_only(objects, tmp_path):
    rng = random.Random(SEED)
    pristine = {name: (p.read_bytes(), _regions(p)) for name, p in objects.items()}
    mutant = tmp_path / "mutant.o"
    outcomes: dict[str, int] = {}
    parts_hit: set[str] = set()
    _backstop(600)
    try:
        for i in range(MUTANTS):
            name = sorted(pristine)[i % len(pristine)]
            data, regions = pristine[name]
            part = rng.choice(sorted(regions))
            parts_hit.add(part)
            lo, size = regions[part]
            damaged, op = _mutate(rng, data, lo, size)
            mutant.write_bytes(damaged)
            try:
                dwarf.dwarf_struct(mutant, "__no_such_struct__")
            except UnknownNameError as e:  # read whole: the names are all text
                assert all(isinstance(n, str) for n in e.valid), (i, name, part, op)
                outcomes["read"] = outcomes.get("read", 0) + 1
            except dwarf.DwarfError as e:
                assert NAMED.search(str(e)), (i, name, part, op, str(e))
                outcomes["refused"] = outcomes.get("refused", 0) + 1
            # anything else propagates and fails the test, naming nothing: the seed reproduces it
    finally:
        signal.alarm(0)
    assert sum(outcomes.values()) == MUTANTS
    assert len(parts_hit) == 6
    # both outcomes are common: damage the reader notices, and damage it reads through (names,
    # lines, columns: nothing the layout depends on)
    assert outcomes["refused"] > MUTANTS // 3 and outcomes["read"] > MUTANTS // 10, outcomes


# --------------------------------------------------------------------------------------------------
# Directed shapes, from gcc's annotated assembly


class _Asm:
    """gcc -S -g -dA output: every DIE (`# (DIE (0xOFF) TAG)`) with the line of each attribute."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.dies: list[dict] = []
        for i, line in enumerate(self.lines):
            m = re.search(r"# \(DIE \((0x[0-9a-f]+)\) (DW_TAG_\w+)\)", line)
            if m:
                self.dies.append({"offset": int(m[1], 16), "tag": m[2], "name": None, "attrs": {}})
                continue
            m = re.search(r"# (DW_AT_\w+)(?:: \"(.*)\")?$", line)
            if m and self.dies and not line.lstrip().startswith("#"):
                die = self.dies[-1]
                die["attrs"][m[1]] = i
                if m[1] == "DW_AT_name":
                    die["name"] = m[2] if m[2] is not None else re.search(r'"(.*?)\\0"', line)[1]

    def die(self, tag: str, name: str | None = None, nth: int = 0) -> dict:
        return [d for d in self.dies if d["tag"] == tag and (name is None or d["name"] == name)][nth]

    def children(self, parent: dict) -> list[dict]:
        """The DIEs after `parent` up to the next one of its own tag (its members, for a struct)."""
        i = self.dies.index(parent)
        out = []
        for d in self.dies[i + 1:]:
            if d["tag"] != "DW_TAG_member":
                break
            out.append(d)
        return out

    def set(self, die: dict, attr: str, value: str, directive: str | None = None) -> None:
        i = die["attrs"][attr]
        m = re.match(r"(\s*)(\.\w+)(\s+)(\S+)(.*)$", self.lines[i])
        self.lines[i] = f"{m[1]}{directive or m[2]}{m[3]}{value}{m[5]}"

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


@pytest.fixture(scope="module")
def asm_text(tmp_path_factory) -> str:
    tmp = tmp_path_factory.mktemp("dwarf_asm")
    (tmp / "use.c").write_text(SOURCE)
    out = tmp / "use.s"
    subprocess.run([_gcc(), "-S", "-g", "-dA", "-I", str(HEADERS), str(tmp / "use.c"), "-o", str(out)],
                   check=True)
    return out.read_text()


def _assemble(tmp: Path, asm: _Asm, name: str) -> Path:
    src, obj = tmp / f"{name}.s", tmp / f"{name}.o"
    src.write_text(asm.text())
    subprocess.run([_gcc(), "-c", str(src), "-o", str(obj)], check=True)
    return obj


def _cells(structs: dict) -> dict:
    return {n: ([(f.name, f.offset, f.size, f.bit_offset, f.bits) for f in s.layout("x86_64").fields],
                s.layout("x86_64").size) for n, s in structs.items()}


def test_the_assembly_route_reads_as_the_object(asm_text, objects, tmp_path):
    # the directed tests edit this assembly: unedited, it is the object gcc builds
    obj = _assemble(tmp_path, _Asm(asm_text), "same")
    assert _cells(dwarf.dwarf_structs(obj)[1]) == _cells(dwarf.dwarf_structs(objects["x86_64"])[1])


def _refused(tmp: Path, asm: _Asm, *needles: str) -> str:
    obj = _assemble(tmp, asm, "edited")
    with pytest.raises(dwarf.DwarfError) as e:
        dwarf.dwarf_structs(obj)
    for needle in needles:
        assert needle in str(e.value), str(e.value)
    return str(e.value)


def test_a_struct_holding_itself_is_a_cycle(asm_text, tmp_path):
    asm = _Asm(asm_text)
    wire = asm.die("DW_TAG_structure_type", "wire")
    tag = asm.children(wire)[0]
    asm.set(tag, "DW_AT_type", hex(wire["offset"]))
    _refused(tmp_path, asm, f"type DIE 0x{wire['offset']:X} contains itself", "wire.tag")


def test_an_array_of_itself_is_a_cycle(asm_text, tmp_path):
    asm = _Asm(asm_text)
    array = next(d for d in asm.dies if d["tag"] == "DW_TAG_array_type")
    asm.set(array, "DW_AT_type", hex(array["offset"]))
    _refused(tmp_path, asm, f"type DIE 0x{array['offset']:X} contains itself")


def test_a_typedef_of_itself_is_a_cycle(asm_text, tmp_path):
    asm = _Asm(asm_text)
    mode = asm.die("DW_TAG_typedef", "mode_t_")
    asm.set(mode, "DW_AT_type", hex(mode["offset"]))
    _refused(tmp_path, asm, f"DIE 0x{mode['offset']:X} leads back to it (a cycle)", "everything.mode")


def test_a_two_typedef_cycle(asm_text, tmp_path):
    asm = _Asm(asm_text)
    part, mode = asm.die("DW_TAG_typedef", "part_t"), asm.die("DW_TAG_typedef", "mode_t_")
    asm.set(part, "DW_AT_type", hex(mode["offset"]))
    asm.set(mode, "DW_AT_type", hex(part["offset"]))
    _refused(tmp_path, asm, "(a cycle)")


def test_a_qualifier_of_itself_is_a_cycle(asm_text, tmp_path):
    asm = _Asm(asm_text)
    for const in (d for d in asm.dies if d["tag"] == "DW_TAG_const_type" and "DW_AT_type" in d["attrs"]):
        asm.set(const, "DW_AT_type", hex(const["offset"]))
    _refused(tmp_path, asm, "DW_TAG_const_type", "leads back to this DIE (a cycle)")


@pytest.mark.parametrize("where", ["inside a DIE", "past the section"])
def test_a_reference_where_no_die_starts(asm_text, tmp_path, where):
    asm = _Asm(asm_text)
    wire = asm.die("DW_TAG_structure_type", "wire")
    length = asm.children(wire)[1]
    target = wire["offset"] + 1 if where == "inside a DIE" else 0x7FFFFFFF
    asm.set(length, "DW_AT_type", hex(target))
    _refused(tmp_path, asm, f"DIE 0x{length['offset']:X} (DW_TAG_member length) DW_AT_type",
             f"refers to .debug_info offset 0x{target:X}, where no DIE starts")


def test_looping_sibling_links_are_not_followed(asm_text, objects, tmp_path):
    # pyelftools' child iteration jumps along DW_AT_sibling; pointed back at the DIE itself it
    # never ends. The reader rebuilds the tree from the DIEs' order instead.
    asm = _Asm(asm_text)
    looped = [d for d in asm.dies if "DW_AT_sibling" in d["attrs"]]
    assert len(looped) >= 5
    for d in looped:
        asm.set(d, "DW_AT_sibling", hex(d["offset"]))
    obj = _assemble(tmp_path, asm, "siblings")
    assert _cells(dwarf.dwarf_structs(obj)[1]) == _cells(dwarf.dwarf_structs(objects["x86_64"])[1])


# A unit of its own: `struct big { int a[COUNT]; }` with DW_AT_count and DW_AT_byte_size as 8-byte
# constants (gcc writes the smallest form a value fits; these take any value).
_BIG = """\
\t.section .debug_abbrev,"",@progbits
.Labbrev:
\t.uleb128 1; .uleb128 0x11; .byte 1; .uleb128 0x3; .uleb128 0x8; .byte 0, 0
\t.uleb128 2; .uleb128 0x24; .byte 0; .uleb128 0x3; .uleb128 0x8; .uleb128 0xb; .uleb128 0xb
\t.uleb128 0x3e; .uleb128 0xb; .byte 0, 0
\t.uleb128 3; .uleb128 0x13; .byte 1; .uleb128 0x3; .uleb128 0x8; .uleb128 0xb; .uleb128 0x7
\t.byte 0, 0
\t.uleb128 4; .uleb128 0x0d; .byte 0; .uleb128 0x3; .uleb128 0x8; .uleb128 0x49; .uleb128 0x13
\t.uleb128 0x38; .uleb128 0xb; .byte 0, 0
\t.uleb128 5; .uleb128 0x01; .byte 1; .uleb128 0x49; .uleb128 0x13; .byte 0, 0
\t.uleb128 6; .uleb128 0x21; .byte 0; .uleb128 0x37; .uleb128 0x7; .byte 0, 0
\t.byte 0
\t.section .debug_info,"",@progbits
.Linfo:
\t.long .Lend - .Lstart
.Lstart:
\t.value 4
\t.long .Labbrev
\t.byte 8
\t.uleb128 1; .string "big.c"
.Lint:
\t.uleb128 2; .string "int"; .byte 4; .byte 5
\t.uleb128 3; .string "big"; .quad SIZE
\t.uleb128 4; .string "a"; .long .Larray - .Linfo; .byte 0
\t.byte 0
.Larray:
\t.uleb128 5; .long .Lint - .Linfo
\t.uleb128 6; .quad COUNT
\t.byte 0
\t.byte 0
.Lend:
"""


def _big(tmp: Path, count: int, size: int) -> Path:
    src, obj = tmp / f"big{count:x}.s", tmp / f"big{count:x}.o"
    src.write_text(_BIG.replace("COUNT", hex(count)).replace("SIZE", hex(size)))
    subprocess.run([_gcc(), "-c", str(src), "-o", str(obj)], check=True)
    return obj


def test_absurd_array_counts_and_sizes(tmp_path):
    a = dwarf.dwarf_struct(_big(tmp_path, 4, 16), "big")[1].fields[0]
    assert (a.type.count, a.type.elem.c_type) == (4, "int")  # the hand-written unit reads
    with pytest.raises(dwarf.DwarfError, match=r"DIE 0x[0-9A-F]+ \(DW_TAG_subrange_type\): an array "
                                               f"of {1 << 63} elements"):
        dwarf.dwarf_structs(_big(tmp_path, 1 << 63, 0))
    # a count that is a valid size_t and the size recorded for it, past PTRDIFF_MAX: no C object
    # is that large (gcc: "size of array is too large")
    with pytest.raises(dwarf.DwarfError, match=rf"big \(DIE 0x[0-9A-F]+\): {1 << 63} bytes, "
                                               "larger than any object on x86_64"):
        dwarf.dwarf_structs(_big(tmp_path, 1 << 61, 1 << 63))


def test_nesting_is_read_to_its_bound(tmp_path):
    # clang writes a struct before the ones it holds: reading nests as deep as the C does
    clang = shutil.which("clang")
    assert clang, "clang is needed for the nesting test"

    def nested(depth: int) -> Path:
        src = tmp_path / f"deep{depth}.c"
        src.write_text("struct s0 { int a; };\n" + "".join(
            f"struct s{i} {{ struct s{i - 1} a; int b; }};\n" for i in range(1, depth))
            + f"struct s{depth - 1} top;\n")
        obj = tmp_path / f"deep{depth}.o"
        subprocess.run([clang, "-g", "-c", str(src), "-o", str(obj)], check=True)
        return obj

    _, structs = dwarf.dwarf_structs(nested(95))
    assert structs["s94"].layout("x86_64").size == 4 * 95
    with pytest.raises(dwarf.DwarfError, match=r"s\d+\.a \(DIE 0x[0-9A-F]+, line \d+\): types "
                                               r"nested over 100 deep"):
        dwarf.dwarf_structs(nested(150))


def test_a_long_typedef_chain_is_walked_not_recursed(tmp_path):
    src = tmp_path / "chain.c"
    src.write_text("typedef int t0;\n" + "".join(f"typedef t{i - 1} t{i};\n" for i in range(1, 5000))
                   + "struct chain { t4999 x; } c;\n")
    obj = tmp_path / "chain.o"
    subprocess.run([_gcc(), "-g", "-c", str(src), "-o", str(obj)], check=True)
    x = dwarf.dwarf_structs(obj)[1]["chain"].fields[0]
    assert (x.type.c_type, x.type.alias) == ("int", "t4999")


# --------------------------------------------------------------------------------------------------
# Directed shapes, in the bytes


def _section(path: Path, name: str) -> tuple[int, int, int]:
    """(file offset of the data, size, file offset of the section header) of section `name`."""
    from elftools.elf.elffile import ELFFile

    with open(path, "rb") as f:
        elf = ELFFile(f)
        i = elf.get_section_index(name)
        s = elf.get_section(i)
        return s["sh_offset"], s["sh_size"], elf["e_shoff"] + i * elf["e_shentsize"]


def test_a_typedef_without_a_name(objects, tmp_path, capsys):
    """The reported shape: one flipped .debug_abbrev byte (DW_AT_name 0x03 -> 0x02 in the typedef
    abbreviation) left a typedef without a name, and `layout --dwarf` ended in a TypeError sorting
    the names."""
    from elftools.elf.elffile import ELFFile

    obj = objects["x86_64"]
    data = bytearray(obj.read_bytes())
    with open(obj, "rb") as f:
        cu = next(ELFFile(f).get_dwarf_info().iter_CUs())
        typedef = next(d for d in cu.iter_DIEs() if d.tag == "DW_TAG_typedef")
        code = typedef.abbrev_code
    lo, size, _ = _section(obj, ".debug_abbrev")
    at = bytes(data[lo:lo + size]).find(bytes([code, 0x16, 0x00, 0x03]))  # code, typedef, no children, name
    assert at >= 0 and code < 0x80
    data[lo + at + 3] ^= 0x01
    damaged = tmp_path / "typedef.o"
    damaged.write_bytes(bytes(data))
    with pytest.raises(dwarf.DwarfError, match=r"DIE 0x[0-9A-F]+ \(DW_TAG_typedef\): a typedef "
                                               "without DW_AT_name"):
        dwarf.dwarf_struct(damaged, "wire")
    assert main(["layout", "wire", "--dwarf", str(damaged)]) != 0
    err = capsys.readouterr().err
    assert "a typedef without DW_AT_name" in err and "Traceback" not in err


def test_a_section_size_past_the_end_allocates_nothing_of_it(objects, tmp_path):
    obj = objects["x86_64"]
    data = bytearray(obj.read_bytes())
    _, _, header = _section(obj, ".debug_info")
    data[header + 32:header + 40] = (1 << 46).to_bytes(8, "little")  # Elf64_Shdr.sh_size
    damaged = tmp_path / "huge.o"
    damaged.write_bytes(bytes(data))
    tracemalloc.start()
    try:
        try:
            dwarf.dwarf_structs(damaged)
        except dwarf.DwarfError as e:
            assert NAMED.search(str(e))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20, peak  # the file is 7 KB; 64 TiB was asked for


# --------------------------------------------------------------------------------------------------
# Compressed debug sections (gcc -gz): read as the plain object; a bomb refused before it inflates


@pytest.fixture(scope="module")
def compressed(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("dwarf_compressed")
    return {"plain": _build(tmp, "plain", "-g"), "zlib": _build(tmp, "zlib", "-g", "-gz=zlib"),
            "zlib-gnu": _build(tmp, "zlib-gnu", "-g", "-gz=zlib-gnu"),
            "i386-zlib": _build(tmp, "i386-zlib", "-m32", "-g", "-gz=zlib")}


def _compressed_flag(path: Path, name: str) -> bool:
    from elftools.elf.elffile import ELFFile
    with open(path, "rb") as f:
        return bool(ELFFile(f).get_section_by_name(name)["sh_flags"] & 0x800)


@pytest.mark.parametrize("kind", ["zlib", "zlib-gnu", "i386-zlib"])
def test_compressed_debug_sections_read_as_the_plain_object(compressed, kind):
    # gcc compressed them (SHF_COMPRESSED, or GNU's .zdebug_* sections, whose relocations apply to
    # the inflated bytes: pyelftools applied them to the compressed ones and failed)
    obj = compressed[kind]
    if kind == "zlib-gnu":
        assert _section(obj, ".zdebug_info")[1] > 0
    else:
        assert _compressed_flag(obj, ".debug_info")
    plain = compressed["plain"] if kind != "i386-zlib" else _build(obj.parent, "i386-plain", "-m32", "-g")
    target, structs = dwarf.dwarf_structs(obj)
    assert target.name == ("i386" if kind == "i386-zlib" else "x86_64")
    assert _cells(structs) == _cells(dwarf.dwarf_structs(plain)[1])
    assert {"wire", "everything_t", "value_t", "cacheline_t"} <= set(structs)


def _with_section(tmp: Path, obj: Path, name: str, data: bytes, out: str) -> Path:
    damaged = tmp / out
    subprocess.run(["objcopy", f"--update-section={name}={_write(tmp / (out + '.bin'), data)}",
                    str(obj), str(damaged)], check=True)
    return damaged


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _peak(fn) -> int:
    tracemalloc.start()
    try:
        fn()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def test_a_zdebug_bomb_is_refused_naming_the_section(compressed, tmp_path):
    """A .zdebug_info declaring 4 GiB (a zlib stream of 64 MiB of zeros: 65 KB) is refused by what
    it declares; one declaring 1000 bytes stops inflating past them. Neither inflates the stream."""
    import zlib
    stream = zlib.compress(bytes(64 << 20), 9)
    assert len(stream) < 100_000
    obj = compressed["zlib-gnu"]
    huge = _with_section(tmp_path, obj, ".zdebug_info", b"ZLIB" + (1 << 32).to_bytes(8, "big") + stream, "huge.o")
    with pytest.raises(dwarf.DwarfError, match=r"section \.zdebug_info: declares 4294967296 bytes inflated; "
                                               r"compressed debug sections are read up to 256 MiB"):
        dwarf.dwarf_structs(huge)
    small = _with_section(tmp_path, obj, ".zdebug_info", b"ZLIB" + (1000).to_bytes(8, "big") + stream, "small.o")
    peak = _peak(lambda: pytest.raises(dwarf.DwarfError, dwarf.dwarf_structs, small).match(
        r"section \.zdebug_info: inflates past the 1000 bytes its header declares"))
    assert peak < 8 << 20, peak  # 64 MiB were in the stream


def test_an_shf_compressed_bomb_is_refused_naming_the_section(compressed, tmp_path):
    """Elf64_Chdr.ch_size of .debug_info set to 2^40: refused before inflating; set one byte short
    of the real size: the stream inflates past it and is stopped there."""
    obj = compressed["zlib"]
    start, size, _ = _section(obj, ".debug_info")
    data = bytearray(obj.read_bytes())
    assert int.from_bytes(data[start:start + 4], "little") == 1  # ELFCOMPRESS_ZLIB
    real = int.from_bytes(data[start + 8:start + 16], "little")
    for declared, message in ((1 << 40, rf"declares {1 << 40} bytes inflated"),
                              (real - 1, rf"inflates past the {real - 1} bytes its header declares"),
                              (real + 1, rf"inflates to {real} bytes, not the {real + 1} its header declares")):
        data[start + 8:start + 16] = declared.to_bytes(8, "little")
        damaged = _write(tmp_path / f"chdr{declared}.o", bytes(data))
        with pytest.raises(dwarf.DwarfError, match=rf"section \.debug_info: {message}"):
            dwarf.dwarf_structs(damaged)
    data[start:start + 4] = (2).to_bytes(4, "little")  # ELFCOMPRESS_ZSTD
    with pytest.raises(dwarf.DwarfError, match=r"section \.debug_info: compressed with zstd; only zlib"):
        dwarf.dwarf_structs(_write(tmp_path / "zstd.o", bytes(data)))


def test_a_nobits_debug_section_of_gigabytes_is_refused(objects, tmp_path):
    # pyelftools gives an SHT_NOBITS section as that many zero bytes
    obj = objects["x86_64"]
    data = bytearray(obj.read_bytes())
    _, _, header = _section(obj, ".debug_info")
    data[header + 4:header + 8] = (8).to_bytes(4, "little")  # SHT_NOBITS
    data[header + 32:header + 40] = (3 << 30).to_bytes(8, "little")
    damaged = _write(tmp_path / "nobits.o", bytes(data))
    peak = _peak(lambda: pytest.raises(dwarf.DwarfError, dwarf.dwarf_structs, damaged).match(
        r"section \.debug_info: SHT_NOBITS of 3221225472 bytes"))
    assert peak < 8 << 20, peak
