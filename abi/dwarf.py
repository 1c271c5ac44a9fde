"""Structs from an object file's DWARF (pyelftools): the struct as the compiler that built the file
laid it out, read back into the engine's declarations.

The file's own data model comes from its ELF header. Every struct read is laid out by the engine on
that model and compared with the offsets, bit offsets and sizes the compiler recorded; DWARF keeps no
`packed` attribute, so a struct whose recorded layout only a packed declaration reproduces is read as
packed (as pahole infers it), and DW_AT_alignment (DWARF 5) gives explicit alignments. Anything else
that disagrees is a `DwarfError` naming the struct and field, never a silent answer. A struct that
only `#pragma pack(N)` reproduces is read with that pack (the smallest such N). `dwarf_struct`
reads one struct and those it holds, so another struct of the file that the engine cannot
reproduce is that struct's error alone. Once read, the
declaration can be re-laid on every other data model.

A damaged file is a `DwarfError` too, naming the section, DIE offset and attribute, and reading one
takes work and memory in proportion to the file:

- the file is memory-mapped, so a section size or offset past its end reads what is there;
- compressed debug sections (SHF_COMPRESSED, GNU's `.zdebug_*`) are inflated here, never past the
  size each declares and at most `MAX_INFLATED` bytes in all (a decompression bomb is an error
  naming the section), and handed to pyelftools inflated;
- pyelftools parses the ELF headers and the DIEs; where it fails, the error names the section and
  offset it was at (the unit header, or the DIE and the .debug_abbrev table it was decoded with);
- each unit's DIEs are read once, in order, and the tree is rebuilt from that walk (DW_AT_sibling is
  not followed: a damaged sibling link could send pyelftools' child iteration round in a loop);
- a reference (DW_AT_type) is resolved against the DIEs that walk found: one to an offset where no
  DIE starts, or of a form that is no reference, is an error naming the DIE and attribute;
- type chains are followed with the DIEs on the way remembered, so a cycle (a struct holding itself,
  a typedef of itself) is an error naming it, and nesting deeper than `_MAX_NESTING` is refused;
- every attribute is read in the forms its use allows (a name is a string, a size a constant); an
  array or struct larger than the data model's largest object (PTRDIFF_MAX) is refused.
"""
from __future__ import annotations

import mmap
import os
import struct
import zlib
from io import BytesIO
from pathlib import Path
from typing import IO, Any, Callable, Iterator, TypeVar

from .errors import IreeAbiError, UnknownNameError
from .files import open_input, require_regular
from .layout import Array, CType, Field, FunctionPointer, Pointer, Scalar, Struct, StructLayout
from .targets import Target, get as _get_target


T = TypeVar("T")


class DwarfError(IreeAbiError):
    """A file without usable DWARF, damaged ELF or DWARF data, a construct the engine does not
    model, or a layout the engine cannot reproduce from the recorded one."""


# DW_TAG_base_type names as GCC and clang spell them -> the engine's C scalar names.
_BASE = {
    "_Bool": "_Bool", "char": "char", "signed char": "signed char", "unsigned char": "unsigned char",
    "short int": "short", "short": "short", "short unsigned int": "unsigned short",
    "unsigned short": "unsigned short", "int": "int", "unsigned int": "unsigned int",
    "long int": "long", "long": "long", "long unsigned int": "unsigned long", "unsigned long": "unsigned long",
    "long long int": "long long", "long long": "long long", "long long unsigned int": "unsigned long long",
    "unsigned long long": "unsigned long long", "float": "float", "double": "double",
    "long double": "long double",
}
# ELF e_machine (and class) -> data model.
_MACHINES = {("EM_X86_64", 64): "x86_64", ("EM_386", 32): "i386", ("EM_AARCH64", 64): "aarch64",
             ("EM_ARM", 32): "armv7", ("EM_RISCV", 64): "riscv64", ("EM_RISCV", 32): "riscv32",
             ("EM_WEBASSEMBLY", 32): "wasm32"}
# Structs and arrays read inside one another (clang writes a struct before the ones it holds, so
# reading nests as deep as the C does; C code nests a few levels). Four Python frames a level: far
# inside the interpreter's recursion limit.
_MAX_NESTING = 100
_QUALIFIERS = ("DW_TAG_const_type", "DW_TAG_volatile_type", "DW_TAG_restrict_type", "DW_TAG_atomic_type")
_RECORDS = ("DW_TAG_structure_type", "DW_TAG_union_type")
# Attribute forms by what the reader takes from them (DWARF 5, 7.5.5).
_UNIT_REFS = frozenset({"DW_FORM_ref1", "DW_FORM_ref2", "DW_FORM_ref4", "DW_FORM_ref8",
                        "DW_FORM_ref_udata"})  # offsets from the unit's header
_CONSTANTS = frozenset({"DW_FORM_data1", "DW_FORM_data2", "DW_FORM_data4", "DW_FORM_data8",
                        "DW_FORM_sdata", "DW_FORM_udata", "DW_FORM_implicit_const"})
_STRINGS = frozenset({"DW_FORM_string", "DW_FORM_strp", "DW_FORM_line_strp", "DW_FORM_strx",
                      "DW_FORM_strx1", "DW_FORM_strx2", "DW_FORM_strx3", "DW_FORM_strx4",
                      "DW_FORM_GNU_str_index", "DW_FORM_GNU_strp_alt", "DW_FORM_strp_sup"})
_BLOCKS = frozenset({"DW_FORM_block1", "DW_FORM_block2", "DW_FORM_block4", "DW_FORM_block",
                     "DW_FORM_exprloc"})


def dwarf_structs(path: "str | os.PathLike") -> tuple[Target, dict[str, Struct]]:
    """(the file's data model, every struct and union with a definition, by name: typedef names,
    `struct TAG`, `union TAG` and bare tags). Any struct the engine cannot reproduce is an error
    (`dwarf_struct` reads one struct, and what it holds, alone)."""
    def every(reader: _Reader) -> dict[str, Struct]:
        return {key: reader.record(die, name) for key, (die, name) in reader.index().items()}
    return _read(path, every)


def dwarf_struct(path: "str | os.PathLike", name: str) -> tuple[Target, Struct]:
    """(the file's data model, the struct or union called `name`): only it and the structs it holds
    are laid out, so another struct of the file the engine cannot reproduce does not matter."""
    def one(reader: _Reader) -> Struct:
        found = reader.index()
        if name not in found:
            raise UnknownNameError(f"struct in {path}'s DWARF", name, sorted(found))
        die, typedef = found[name]
        return reader.record(die, typedef)
    return _read(path, one)


def _read(path: "str | os.PathLike", read: "Callable[[_Reader], T]") -> tuple[Target, T]:
    path = Path(path)
    try:
        f = open_input(path)  # (a FIFO does not block: it is refused below)
    except FileNotFoundError:
        raise DwarfError(f"{path}: no such file") from None
    except OSError as e:
        raise DwarfError(f"{path}: not a readable ELF file ({e.strerror or e})") from None
    with f:
        try:  # pyelftools seeks and maps: /dev/zero or a pipe would be read without end
            require_regular(f, path)
        except OSError as e:
            raise DwarfError(f"{path}: not a readable ELF file ({e.strerror})") from None
        with _Mapped(f) as stream:
            target, info = _open(path, stream)
            return target, read(_Reader(path, target, _Dies(path, info)))


class _Mapped:
    """The file as a read-only memory map (a read past its end returns what is there, where a file
    object would first allocate the size asked for); an empty file as an empty stream."""

    def __init__(self, f: IO[bytes]) -> None:
        self.f = f
        self.map: mmap.mmap | None = None

    def __enter__(self) -> Any:
        try:
            self.map = mmap.mmap(self.f.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # empty
            return BytesIO(b"")
        except OSError:  # not mappable (a pipe...): read as it is
            return BytesIO(self.f.read())
        return self.map

    def __exit__(self, *exc: object) -> None:
        if self.map is not None:
            self.map.close()


def _what(e: BaseException) -> str:
    """A parser's exception, briefly (pyelftools' messages may quote whole structures)."""
    text = f"{type(e).__name__}: {e}"
    return text if len(text) <= 160 else text[:157] + "..."


def _open(path: Path, stream: Any) -> tuple[Target, Any]:
    """(data model, pyelftools DWARFInfo) of an ELF file; every pyelftools failure a DwarfError."""
    from elftools.elf.elffile import ELFFile

    # pyelftools raises whatever its parser meets on damaged input (ELFError, construct's stream
    # errors, KeyError, AssertionError, ...): each call is a boundary that names what it read.
    try:
        elf = ELFFile(stream)
        key = (elf.header["e_machine"], elf.elfclass)
    except Exception as e:  # noqa: BLE001 - see above
        raise DwarfError(f"{path}: not a readable ELF file ({_what(e)})") from None
    if key not in _MACHINES:
        raise DwarfError(f"{path}: ELF machine {key[0]} ({key[1]}-bit) is not a modelled data model")
    target = _get_target(_MACHINES[key])
    try:
        has_dwarf = elf.has_dwarf_info()
    except Exception as e:  # noqa: BLE001
        raise DwarfError(f"{path}: damaged ELF section headers ({_what(e)})") from None
    if not has_dwarf:
        raise DwarfError(f"{path}: no DWARF debug information (build with -g)")
    inflated = _inflated(path, elf, stream)
    if inflated is not None:  # the same file with its debug sections stored inflated
        elf = ELFFile(BytesIO(inflated))
    try:
        return target, elf.get_dwarf_info()
    except Exception as e:  # noqa: BLE001
        raise DwarfError(f"{path}: damaged DWARF sections (.debug_*) or their relocations "
                         f"({_what(e)})") from None


# Compressed debug sections (gcc/ld -gz): SHF_COMPRESSED ones (an Elf_Chdr, then the zlib stream)
# and GNU's older `.zdebug_*` ones ("ZLIB", the inflated size in 8 big-endian bytes, the stream).
# Deflate inflates up to ~1000 times, so a small file can declare (or hold) gigabytes: the inflated
# sizes are bounded in all, and no stream is inflated past the size it declares.
MAX_INFLATED = 256 << 20
_SHF_COMPRESSED = 0x800
_ELFCOMPRESS = {1: "zlib", 2: "zstd"}


def _inflate(where: str, data: bytes, size: int, budget: int) -> bytes:
    """The zlib stream `data`, declared to inflate to `size` bytes, inflated: never more than
    `size` + 1 bytes are made, and `size` must fit in `budget`."""
    if size > budget:
        raise DwarfError(f"{where}: declares {size} bytes inflated; compressed debug sections are "
                         f"read up to {MAX_INFLATED >> 20} MiB inflated in all (a decompression bomb?)")
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(data, size + 1)
    except zlib.error as e:
        raise DwarfError(f"{where}: damaged zlib stream ({e})") from None
    if len(out) > size:
        raise DwarfError(f"{where}: inflates past the {size} bytes its header declares")
    if len(out) < size:
        raise DwarfError(f"{where}: inflates to {len(out)} bytes, not the {size} its header "
                         f"declares")
    return out


def _inflated(path: Path, elf: Any, stream: Any) -> "bytearray | None":
    """The file's bytes with each compressed debug section replaced by its inflated data (appended,
    its section header pointed there, SHF_COMPRESSED cleared, `.zdebug_` names now `.debug_`), or
    None when no debug section is compressed. pyelftools would inflate them without a bound, and
    apply a `.zdebug_` section's relocations to its compressed bytes."""
    try:
        sections = [(i, s.name, s.header) for i, s in enumerate(elf.iter_sections())]
        shstrndx = elf.get_shstrndx()
    except Exception as e:  # noqa: BLE001 - pyelftools on damaged headers, as in _open
        raise DwarfError(f"{path}: damaged ELF section headers ({_what(e)})") from None
    end = "<" if elf.little_endian else ">"
    wide = elf.elfclass == 64
    stream = stream if isinstance(stream, mmap.mmap) else stream.getbuffer()
    budget = MAX_INFLATED
    new: dict[int, bytes] = {}
    for i, name, h in sections:
        if not name.startswith((".debug_", ".zdebug_")):
            continue
        where = f"{path}: section {name}"
        if h["sh_type"] == "SHT_NOBITS":  # pyelftools makes its zeros: as large as it declares
            if h["sh_size"] > budget:
                raise DwarfError(f"{where}: SHT_NOBITS of {h['sh_size']} bytes, past the "
                                 f"{MAX_INFLATED >> 20} MiB read (the file holds none of them)")
            continue
        raw = stream[h["sh_offset"]:h["sh_offset"] + h["sh_size"]]
        if h["sh_flags"] & _SHF_COMPRESSED:
            chdr = struct.Struct(end + ("IIQQ" if wide else "III"))
            if len(raw) < chdr.size:
                raise DwarfError(f"{where}: SHF_COMPRESSED, but its {len(raw)} bytes hold no "
                                 f"compression header")
            fields = chdr.unpack_from(raw)
            kind, size = fields[0], fields[2 if wide else 1]
            if kind != 1:
                what = _ELFCOMPRESS.get(kind, f"type {kind}")
                raise DwarfError(f"{where}: compressed with {what}; only zlib (ELFCOMPRESS_ZLIB) "
                                 f"is read")
            new[i] = _inflate(where, raw[chdr.size:], size, budget)
        elif name.startswith(".zdebug_"):
            if len(raw) < 12 or raw[:4] != b"ZLIB":
                raise DwarfError(f"{where}: no \"ZLIB\" header (a .zdebug_ section is compressed)")
            new[i] = _inflate(where, raw[12:], int.from_bytes(raw[4:12], "big"), budget)
        else:
            continue
        budget -= len(new[i])
    renamed = any(".zdebug_" in name for _, name, _ in sections)
    if not new and not renamed:
        return None
    try:
        # Elf64_Shdr / Elf32_Shdr: sh_flags, sh_offset and sh_size, address-sized
        return _rewritten(elf, bytearray(stream[:]), sections, shstrndx, new, renamed,
                          end + ("Q" if wide else "I"), (8, 24, 32) if wide else (8, 16, 20))
    except (struct.error, IndexError, OverflowError) as e:  # headers the file does not hold
        raise DwarfError(f"{path}: damaged ELF section headers ({_what(e)})") from None


def _rewritten(elf: Any, image: bytearray, sections: list, shstrndx: int, new: dict[int, bytes],
               renamed: bool, word: str, at: tuple[int, int, int]) -> bytearray:
    """`image` with the inflated sections `new` appended and their headers pointed there (and a
    new section name table when `renamed`); `word` is the format of a header's address-sized
    fields, `at` the offsets of sh_flags, sh_offset and sh_size in a header."""
    end = word[0]
    shoff, shentsize = elf["e_shoff"], elf["e_shentsize"]
    flags_at, offset_at, size_at = at

    def place(i: int, data: bytes) -> None:
        start = (len(image) + 7) & ~7
        image.extend(bytes(start - len(image)))
        image.extend(data)
        header = shoff + i * shentsize
        struct.pack_into(word, image, header + offset_at, start)
        struct.pack_into(word, image, header + size_at, len(data))

    for i, data in new.items():
        place(i, data)
        header = shoff + i * shentsize
        flags = struct.unpack_from(word, image, header + flags_at)[0]
        struct.pack_into(word, image, header + flags_at, flags & ~_SHF_COMPRESSED)
    if renamed:  # a string table of its own: names may share bytes (`.rela.zdebug_info`)
        table = bytearray(b"\0")
        for i, name, _ in sections:
            struct.pack_into(end + "I", image, shoff + i * shentsize, len(table))
            table += name.replace(".zdebug_", ".debug_", 1).encode("utf-8", "surrogateescape") + b"\0"
        place(shstrndx, bytes(table))
    return image


class _Dies:
    """Every DIE of .debug_info, read once in file order, and the tree they form (from each unit's
    nesting: a DIE with children opens a list that a null entry closes)."""

    def __init__(self, path: Path, info: Any) -> None:
        self.path = path
        self.by_offset: dict[int, Any] = {}  # offset -> DIE (null entries left out), in file order
        self.children: dict[int, list[Any]] = {}
        self.parent: dict[int, Any] = {}
        units = info.iter_CUs()
        at = 0  # where the next unit header starts
        while True:
            try:
                unit = next(units)
            except StopIteration:
                break
            except Exception as e:  # noqa: BLE001 - pyelftools on a damaged unit header
                raise DwarfError(f"{path}: .debug_info: cannot parse the unit header at offset "
                                 f"0x{at:X} ({_what(e)})") from None
            self._walk(unit)
            at = unit.cu_offset + unit.size

    def _walk(self, unit: Any) -> None:
        open_: list[Any] = []  # DIEs whose children are being read, innermost last
        at = unit.cu_die_offset
        abbrev = unit.header.get("debug_abbrev_offset")
        abbrevs = f", abbreviations at .debug_abbrev offset 0x{abbrev:X}" if type(abbrev) is int else ""
        dies = unit.iter_DIEs()
        while True:
            try:
                die = next(dies)
            except StopIteration:
                return
            except Exception as e:  # noqa: BLE001 - pyelftools on a damaged DIE or abbreviation
                raise DwarfError(
                    f"{self.path}: .debug_info: cannot parse the DIE at offset 0x{at:X} (unit at "
                    f"0x{unit.cu_offset:X}{abbrevs}): {_what(e)}") from None
            if die.offset != at or die.size <= 0:  # the walk must move forwards, DIE by DIE
                raise DwarfError(f"{self.path}: .debug_info: the DIE at offset 0x{die.offset:X} "
                                 f"does not follow the one before it (expected 0x{at:X})")
            at = die.offset + die.size
            if die.is_null():
                if open_:
                    open_.pop()
                continue
            self.by_offset[die.offset] = die
            if open_:
                self.children[open_[-1].offset].append(die)
                self.parent[die.offset] = open_[-1]
            if die.has_children:
                self.children[die.offset] = []
                open_.append(die)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.by_offset.values())


def _tag(die: Any) -> str:
    return die.tag if isinstance(die.tag, str) else f"tag 0x{die.tag:X}"


class _Reader:
    def __init__(self, path: Path, target: Target, dies: _Dies) -> None:
        self.path, self.target, self.dies = path, target, dies
        self.made: dict[int, Struct] = {}  # struct DIE offset -> declaration
        self.types: dict[int, CType] = {}  # type DIE offset -> the member type read from it
        self.stripped: dict[int, Any] = {}  # DIE offset -> the DIE its qualifiers qualify
        self.nesting: list[int] = []  # DIE offsets of the structs and arrays being read
        # the largest object C allows on the model (PTRDIFF_MAX)
        self.max_object = (1 << (8 * target.pointer_size - 1)) - 1

    def index(self) -> dict[str, tuple[Any, str | None]]:
        """Every name a struct or union with a definition goes by -> (its DIE, the typedef name it
        is read under or None): a bare tag names the first struct so tagged, `struct TAG` /
        `union TAG` the last, and a typedef name the struct it names (over a bare tag)."""
        out: dict[str, tuple[Any, str | None]] = {}
        for die in self.dies:
            if die.tag in _RECORDS and "DW_AT_declaration" not in die.attributes:
                name = self._name(die)
                if name is None:
                    continue
                keyword = "union" if die.tag == "DW_TAG_union_type" else "struct"
                out.setdefault(name, (die, None))
                out[f"{keyword} {name}"] = (die, None)
            elif die.tag == "DW_TAG_typedef" and "DW_AT_type" in die.attributes:
                name = self._name(die)
                if name is None:
                    raise DwarfError(f"{self._at(die)}: a typedef without DW_AT_name")
                under = self._strip(self._ref(die, "DW_AT_type"))
                if under.tag in _RECORDS and "DW_AT_declaration" not in under.attributes:
                    out[name] = (under, name)
        return out

    # -- attributes ------------------------------------------------------------------------------

    def _at(self, die: Any, attr: str = "") -> str:
        """`PATH: DIE 0xOFF (TAG NAME) ATTR`, for errors about the DIE itself."""
        a = die.attributes.get("DW_AT_name")
        name = a.value.decode("utf-8", "replace") if a is not None and isinstance(a.value, bytes) else ""
        what = f"{_tag(die)} {name}".strip()
        return f"{self.path}: DIE 0x{die.offset:X} ({what}){' ' + attr if attr else ''}"

    def _name(self, die: Any) -> str | None:
        a = die.attributes.get("DW_AT_name")
        if a is None:
            return None
        if a.form not in _STRINGS or not isinstance(a.value, bytes):
            raise DwarfError(f"{self._at(die, 'DW_AT_name')}: form {a.form} value {a.value!r:.40} "
                             "is not a string")
        return a.value.decode("utf-8", "replace")

    def _const(self, die: Any, attr: str) -> int | None:
        a = die.attributes.get(attr)
        if a is None:
            return None
        if a.form not in _CONSTANTS or type(a.value) is not int:
            raise DwarfError(f"{self._at(die, attr)}: form {a.form} value {a.value!r:.40} is not "
                             "a constant")
        return a.value

    def _ref(self, die: Any, attr: str) -> Any:
        """The DIE that `attr` of `die` refers to."""
        a = die.attributes.get(attr)
        if a is None:
            raise DwarfError(f"{self._at(die)}: no {attr}")
        if a.form in _UNIT_REFS and type(a.value) is int:
            offset = die.cu.cu_offset + a.value
        elif a.form == "DW_FORM_ref_addr" and type(a.value) is int:
            offset = a.value
        else:  # ref_sig8 (type units), supplementary files, or no reference at all
            raise DwarfError(f"{self._at(die, attr)}: form {a.form} is not a reference this reader "
                             "follows")
        target = self.dies.by_offset.get(offset)
        if target is None:
            raise DwarfError(f"{self._at(die, attr)}: refers to .debug_info offset 0x{offset:X}, "
                             "where no DIE starts")
        return target

    def _strip(self, die: Any) -> Any:
        """The type a chain of qualifiers (const, volatile...) qualifies."""
        start = die.offset
        if start in self.stripped:
            return self.stripped[start]
        seen: set[int] = set()
        while die.tag in _QUALIFIERS and "DW_AT_type" in die.attributes:
            if die.offset in seen:
                raise DwarfError(f"{self._at(die, 'DW_AT_type')}: the qualifier chain leads back to "
                                 "this DIE (a cycle)")
            seen.add(die.offset)
            die = self._ref(die, "DW_AT_type")
        self.stripped[start] = die
        return die

    def _where(self, die: Any, member: str = "") -> str:
        """`PATH: NAME.MEMBER (DIE 0xOFF, line N)`, for errors about a declaration."""
        a = die.attributes.get("DW_AT_decl_line")
        line = f", line {a.value}" if a is not None and type(a.value) is int else ""
        n = die.attributes.get("DW_AT_name")
        name = n.value.decode("utf-8", "replace") if n is not None and isinstance(n.value, bytes) else None
        return (f"{self.path}: {name or 'anonymous'}{'.' + member if member else ''} "
                f"(DIE 0x{die.offset:X}{line})")

    def _member_where(self, member: Any) -> str:
        parent = self.dies.parent.get(member.offset)
        if parent is None:
            return self._at(member)
        n = member.attributes.get("DW_AT_name")
        name = n.value.decode("utf-8", "replace") if n is not None and isinstance(n.value, bytes) else ""
        return self._where(parent, name)

    def _enter(self, die: Any, member: Any | None) -> None:
        """Mark `die` (a struct or array) as being read: again while it is, it holds itself."""
        where = self._member_where(member) if member is not None else self._where(die)
        if die.offset in self.nesting:
            raise DwarfError(f"{where}: type DIE 0x{die.offset:X} contains itself (a cycle of "
                             "DW_AT_type references)")
        if len(self.nesting) >= _MAX_NESTING:
            raise DwarfError(f"{where}: types nested over {_MAX_NESTING} deep")
        self.nesting.append(die.offset)

    # -- declarations ----------------------------------------------------------------------------

    def record(self, die: Any, name: str | None = None, hint: str = "",
               member: Any | None = None) -> Struct:
        if die.offset in self.made:
            return self.made[die.offset]
        self._enter(die, member)
        try:
            s = self._record(die, name, hint)
        finally:
            self.nesting.pop()
        self.made[die.offset] = s
        return s

    def _record(self, die: Any, name: str | None, hint: str) -> Struct:
        is_union = die.tag == "DW_TAG_union_type"
        name = name or self._name(die) or hint or "anonymous"
        fields: list[Field] = []
        recorded: list[tuple[str, int | None, int]] = []  # (name, bit offset, byte size) per member
        anon = 0
        for m in self.dies.children.get(die.offset, ()):
            if m.tag != "DW_TAG_member":
                continue
            fname = self._name(m)
            anonymous = fname is None
            if fname is None:
                fname, anon = f"__anonymous{anon}", anon + 1
            ctype = self.ctype(self._ref(m, "DW_AT_type"), m, f"{name}_{fname.strip('_')}")
            bits = self._const(m, "DW_AT_bit_size")
            byte = self._location(m)
            if bits is not None:
                bit = self._const(m, "DW_AT_data_bit_offset")
                if bit is None:  # DWARF 2/3: counted from the storage unit's most significant bit
                    size = self._const(m, "DW_AT_byte_size") or 0
                    bit = byte * 8 + size * 8 - (self._const(m, "DW_AT_bit_offset") or 0) - bits
                if bits == 0:
                    raise DwarfError(f"{self._where(die, fname)}: zero-width bit-fields are not modelled")
            else:
                bit = byte * 8
            fields.append(Field(fname, ctype, bits, align=self._const(m, "DW_AT_alignment"),
                                anonymous=anonymous))
            recorded.append((fname, None if is_union else bit, self._const(m, "DW_AT_byte_size") or 0))
        if not fields:
            raise DwarfError(f"{self._where(die)}: an empty struct has no C layout")
        try:
            s = Struct(name, fields, is_union=is_union, align=self._const(die, "DW_AT_alignment"))
            s = self._reproduce(die, s, recorded)
            size = s.layout(self.target).size
        except DwarfError:
            raise
        except IreeAbiError as e:  # a declaration the engine refuses (a bit-field wider than its type)
            raise DwarfError(f"{self._where(die)}: {e}") from None
        if size > self.max_object:
            raise DwarfError(f"{self._where(die)}: {size} bytes, larger than any object on "
                             f"{self.target.name}")
        return s

    def _location(self, m: Any) -> int:
        """DW_AT_data_member_location: a constant, or (DWARF 2) the expression DW_OP_plus_uconst N."""
        a = m.attributes.get("DW_AT_data_member_location")
        if a is None:
            return 0  # a union member, or the first one
        if a.form in _CONSTANTS and type(a.value) is int:
            return a.value
        ops = list(a.value) if a.form in _BLOCKS and isinstance(a.value, (list, bytes)) else []
        if ops and ops[0] == 0x23:  # DW_OP_plus_uconst, then a ULEB128
            value = shift = 0
            for b in ops[1:]:
                value |= (b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    return value
        raise DwarfError(f"{self._member_where(m)}: member location ({a.form} {a.value!r:.40}) is "
                         "not a constant offset")

    def _reproduce(self, die: Any, s: Struct, recorded: list[tuple[str, int | None, int]]) -> Struct:
        """`s` as the engine lays it out as the compiler recorded it: as declared, else packed as a
        whole, else with members packed one by one where the recorded one sits lower than the
        engine would place it (a member's packed attribute)."""
        size = self._const(die, "DW_AT_byte_size")
        problems = _compare(s.layout(self.target), size, recorded)
        if not problems:
            return s
        packed = Struct(s.name, s.fields, is_union=s.is_union, packed=True, align=s.align)
        if not _compare(packed.layout(self.target), size, recorded):
            return packed
        # `#pragma pack(N)` in force at the definition (DWARF keeps no trace of it either): the
        # smallest N that reproduces the record, below the struct's own alignment (at or above it
        # the pragma changes nothing).
        cap = 2
        while cap < s.layout(self.target).align:
            capped = Struct(s.name, s.fields, is_union=s.is_union, align=s.align, max_align=cap)
            if not _compare(capped.layout(self.target), size, recorded):
                return capped
            cap *= 2
        fields = list(s.fields)
        for _ in fields:
            lay = Struct(s.name, fields, is_union=s.is_union, align=s.align).layout(self.target)
            low = next((i for i, ((_, bit, _), f) in enumerate(zip(recorded, lay.fields))
                        if bit is not None and bit < f.offset * 8 + (f.bit_offset or 0)), None)
            if low is None or fields[low].packed:
                break
            fields[low] = fields[low]._replace(packed=True)
            candidate = Struct(s.name, fields, is_union=s.is_union, align=s.align)
            if not _compare(candidate.layout(self.target), size, recorded):
                return candidate
        raise DwarfError(f"{self._where(die)}: the engine cannot reproduce the recorded layout "
                         f"({self.target.name}): {'; '.join(problems[:4])}")

    def ctype(self, die: Any, member: Any, hint: str) -> CType:
        """The C type of `member`, whose DW_AT_type is `die` (read once per DIE)."""
        if die.offset not in self.types:
            self.types[die.offset] = self._ctype(die, member, hint)
        return self.types[die.offset]

    def _ctype(self, die: Any, member: Any, hint: str) -> CType:
        alias = None
        seen: set[int] = set()
        while die.tag in _QUALIFIERS or die.tag == "DW_TAG_typedef":
            if die.offset in seen:
                raise DwarfError(f"{self._member_where(member)}: the typedef chain through DIE "
                                 f"0x{die.offset:X} leads back to it (a cycle)")
            seen.add(die.offset)
            if die.tag == "DW_TAG_typedef":
                tname = self._name(die)
                if tname is None:
                    raise DwarfError(f"{self._at(die)}: a typedef without DW_AT_name")
                if tname in self.target.scalars:  # uint64_t, size_t...: the same on every model
                    return Scalar(tname)
                if alias is None:
                    alias = tname
            if "DW_AT_type" not in die.attributes:
                break
            die = self._ref(die, "DW_AT_type")
        tag = die.tag
        if tag == "DW_TAG_base_type":
            base = self._name(die) or ""
            if base not in _BASE:
                raise DwarfError(f"{self._member_where(member)}: base type {base!r} is not modelled")
            return Scalar(_BASE[base], alias if alias != _BASE[base] else None)
        if tag == "DW_TAG_enumeration_type":
            # The enum's width, fixed: the compiler picked its underlying type for the values, so
            # re-laid on another model it keeps the width (not the spelling: long is 4 bytes on ILP32).
            size = self._const(die, "DW_AT_byte_size")
            under = self._name(self._ref(die, "DW_AT_type")) if "DW_AT_type" in die.attributes else None
            signed = under is not None and "unsigned" not in under and under != "_Bool"
            c = {1: "int8_t", 2: "int16_t", 4: "int32_t", 8: "int64_t"}.get(size or 0)
            if c is not None and not signed:
                c = "u" + c
            if c is None:
                raise DwarfError(f"{self._member_where(member)}: enum type not modelled")
            ename = self._name(die)
            return Scalar(c, alias or (f"enum {ename}" if ename else None))
        if tag == "DW_TAG_pointer_type":
            pointee = self._strip(self._ref(die, "DW_AT_type")) if "DW_AT_type" in die.attributes \
                else None
            if pointee is not None and pointee.tag == "DW_TAG_subroutine_type":
                return FunctionPointer(alias=alias)
            pname = self._name(pointee) if pointee is not None else None
            return Pointer(pname or "void")
        if tag == "DW_TAG_array_type":
            self._enter(die, member)
            try:
                elem = self.ctype(self._ref(die, "DW_AT_type"), member, hint)
            finally:
                self.nesting.pop()
            counts = []
            for sub in self.dies.children.get(die.offset, ()):
                if sub.tag == "DW_TAG_subrange_type":
                    count = self._const(sub, "DW_AT_count")
                    upper = self._const(sub, "DW_AT_upper_bound")
                    n = count if count is not None else (upper + 1 if upper is not None else None)
                    if n is not None and not 0 <= n <= self.max_object:
                        raise DwarfError(f"{self._at(sub)}: an array of {n} elements")
                    counts.append(n)
            t: CType = elem
            for n in reversed(counts):
                t = Array(t, n)
            return t
        if tag in _RECORDS:
            if "DW_AT_declaration" in die.attributes:
                raise DwarfError(f"{self._member_where(member)}: member of an incomplete type")
            return self.record(die, alias, hint, member)
        raise DwarfError(f"{self._member_where(member)}: {_tag(die)} is not modelled")


def _compare(lay: StructLayout, size: int | None, recorded: list[tuple[str, int | None, int]]) -> list[str]:
    out = []
    if size is not None and lay.size != size:
        out.append(f"sizeof: engine {lay.size}, recorded {size}")
    for (name, bit, _), f in zip(recorded, lay.fields):
        if bit is None:
            continue
        engine = f.offset * 8 + (f.bit_offset or 0)
        if engine != bit:
            out.append(f"{name}: engine bit {engine}, recorded bit {bit}")
    return out


__all__ = ["DwarfError", "dwarf_struct", "dwarf_structs"]
