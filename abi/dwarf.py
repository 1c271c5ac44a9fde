"""Structs from an object file's DWARF (pyelftools): the struct as the compiler that built the file
laid it out, read back into the engine's declarations.

The file's own data model comes from its ELF header. Every struct read is laid out by the engine on
that model and compared with the offsets, bit offsets and sizes the compiler recorded; DWARF keeps no
`packed` attribute, so a struct whose recorded layout only a packed declaration reproduces is read as
packed (as pahole infers it), and DW_AT_alignment (DWARF 5) gives explicit alignments. Anything else
that disagrees is a `DwarfError` naming the struct and field, never a silent answer. Once read, the
declaration can be re-laid on every other data model.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .errors import IreeAbiError, UnknownNameError
from .layout import Array, CType, Field, FunctionPointer, Pointer, Scalar, Struct, StructLayout
from .targets import Target, get as _get_target


class DwarfError(IreeAbiError):
    """A file without usable DWARF, a construct the engine does not model, or a layout the engine
    cannot reproduce from the recorded one."""


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
_MAX_CHAIN = 256  # typedef/qualifier links followed before a chain is taken for a (damaged) cycle
_QUALIFIERS = ("DW_TAG_const_type", "DW_TAG_volatile_type", "DW_TAG_restrict_type", "DW_TAG_atomic_type")


def dwarf_structs(path: "str | os.PathLike") -> tuple[Target, dict[str, Struct]]:
    """(the file's data model, every struct and union with a definition, by name: typedef names,
    `struct TAG`, `union TAG` and bare tags)."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    path = Path(path)
    try:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            key = (elf.header["e_machine"], elf.elfclass)
            if key not in _MACHINES:
                raise DwarfError(f"{path}: ELF machine {key[0]} ({key[1]}-bit) is not a modelled data model")
            target = _get_target(_MACHINES[key])
            if not elf.has_dwarf_info():
                raise DwarfError(f"{path}: no DWARF debug information (build with -g)")
            return target, _Reader(path, target, elf.get_dwarf_info()).all()
    except FileNotFoundError:
        raise DwarfError(f"{path}: no such file") from None
    except (ELFError, OSError) as e:
        raise DwarfError(f"{path}: not a readable ELF file ({e})") from None
    except DwarfError:
        raise
    except IreeAbiError as e:  # a declaration the engine refuses (e.g. a bit-field wider than its type)
        raise DwarfError(f"{path}: {e}") from None
    except Exception as e:  # noqa: BLE001 - pyelftools on damaged input: asserts, huge sizes, bad indices
        raise DwarfError(f"{path}: damaged ELF or DWARF ({type(e).__name__}: {e})") from None


def dwarf_struct(path: "str | os.PathLike", name: str) -> tuple[Target, Struct]:
    """(the file's data model, the struct or union called `name`)."""
    target, structs = dwarf_structs(path)
    try:
        return target, structs[name]
    except KeyError:
        raise UnknownNameError(f"struct in {path}'s DWARF", name, sorted(structs)) from None


def _name(die: Any) -> str | None:
    a = die.attributes.get("DW_AT_name")
    return a.value.decode("utf-8", "replace") if a else None


def _int(die: Any, attr: str) -> int | None:
    a = die.attributes.get(attr)
    return a.value if a is not None and isinstance(a.value, int) else None


class _Reader:
    def __init__(self, path: Path, target: Target, dwarf: Any) -> None:
        self.path, self.target, self.dwarf = path, target, dwarf
        self.made: dict[int, Struct] = {}  # DIE offset -> declaration

    def all(self) -> dict[str, Struct]:
        out: dict[str, Struct] = {}
        for cu in self.dwarf.iter_CUs():
            for die in cu.iter_DIEs():
                if die.tag in ("DW_TAG_structure_type", "DW_TAG_union_type") and \
                        "DW_AT_declaration" not in die.attributes and _name(die):
                    s = self.record(die)
                    keyword = "union" if die.tag == "DW_TAG_union_type" else "struct"
                    out.setdefault(_name(die), s)
                    out[f"{keyword} {_name(die)}"] = s
                elif die.tag == "DW_TAG_typedef" and "DW_AT_type" in die.attributes:
                    under = self._strip(die.get_DIE_from_attribute("DW_AT_type"))
                    if under.tag in ("DW_TAG_structure_type", "DW_TAG_union_type") and \
                            "DW_AT_declaration" not in under.attributes:
                        out[_name(die)] = self.record(under, _name(die))
        return out

    def _strip(self, die: Any) -> Any:
        for _ in range(_MAX_CHAIN):
            if die.tag not in _QUALIFIERS or "DW_AT_type" not in die.attributes:
                return die
            die = die.get_DIE_from_attribute("DW_AT_type")
        raise DwarfError(f"{self._where(die)}: a qualifier chain of over {_MAX_CHAIN} links (a cycle?)")

    def _where(self, die: Any, member: str = "") -> str:
        line = _int(die, "DW_AT_decl_line")
        at = f" (line {line})" if line else ""
        return f"{self.path}: {_name(die) or 'anonymous'}{'.' + member if member else ''}{at}"

    # -- declarations ----------------------------------------------------------------------------

    def record(self, die: Any, name: str | None = None, hint: str = "") -> Struct:
        if die.offset in self.made:
            return self.made[die.offset]
        is_union = die.tag == "DW_TAG_union_type"
        name = name or _name(die) or hint or "anonymous"
        fields: list[Field] = []
        recorded: list[tuple[str, int | None, int]] = []  # (name, bit offset, byte size) per member
        anon = 0
        for m in die.iter_children():
            if m.tag != "DW_TAG_member":
                continue
            fname = _name(m)
            anonymous = fname is None
            if anonymous:
                fname, anon = f"__anonymous{anon}", anon + 1
            ctype = self.ctype(m.get_DIE_from_attribute("DW_AT_type"), m, f"{name}_{fname.strip('_')}")
            bits = _int(m, "DW_AT_bit_size")
            byte = self._location(m)
            if bits is not None:
                bit = _int(m, "DW_AT_data_bit_offset")
                if bit is None:  # DWARF 2/3: counted from the storage unit's most significant bit
                    size = _int(m, "DW_AT_byte_size") or 0
                    bit = byte * 8 + size * 8 - (_int(m, "DW_AT_bit_offset") or 0) - bits
                if bits == 0:
                    raise DwarfError(f"{self._where(die, fname)}: zero-width bit-fields are not modelled")
            else:
                bit = byte * 8
            fields.append(Field(fname, ctype, bits, align=_int(m, "DW_AT_alignment"), anonymous=anonymous))
            recorded.append((fname, None if is_union else bit, _int(m, "DW_AT_byte_size") or 0))
        if not fields:
            raise DwarfError(f"{self._where(die)}: an empty struct has no C layout")
        try:
            s = Struct(name, fields, is_union=is_union, align=_int(die, "DW_AT_alignment"))
        except IreeAbiError as e:
            raise DwarfError(f"{self._where(die)}: {e}") from None
        s = self._reproduce(die, s, recorded)
        self.made[die.offset] = s
        return s

    def _location(self, m: Any) -> int:
        """DW_AT_data_member_location: a constant, or (DWARF 2) the expression DW_OP_plus_uconst N."""
        a = m.attributes.get("DW_AT_data_member_location")
        if a is None:
            return 0  # a union member, or the first one
        if isinstance(a.value, int):
            return a.value
        ops = list(a.value)
        if ops and ops[0] == 0x23:  # DW_OP_plus_uconst, then a ULEB128
            value = shift = 0
            for b in ops[1:]:
                value |= (b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    return value
        raise DwarfError(f"{self._where(m.get_parent(), _name(m) or '')}: member location "
                         f"{ops!r} is not a constant offset")

    def _reproduce(self, die: Any, s: Struct, recorded: list[tuple[str, int | None, int]]) -> Struct:
        """`s` as the engine lays it out as the compiler recorded it: as declared, else packed as a
        whole, else with members packed one by one where the recorded one sits lower than the
        engine would place it (a member's packed attribute)."""
        size = _int(die, "DW_AT_byte_size")
        problems = _compare(s.layout(self.target), size, recorded)
        if not problems:
            return s
        packed = Struct(s.name, s.fields, is_union=s.is_union, packed=True, align=s.align)
        if not _compare(packed.layout(self.target), size, recorded):
            return packed
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
        alias = None
        for _ in range(_MAX_CHAIN):
            if die.tag not in _QUALIFIERS and die.tag != "DW_TAG_typedef":
                break
            if die.tag == "DW_TAG_typedef":
                if _name(die) in self.target.scalars:  # uint64_t, size_t...: the same on every model
                    return Scalar(_name(die))
                if alias is None:
                    alias = _name(die)
            if "DW_AT_type" not in die.attributes:
                break
            die = die.get_DIE_from_attribute("DW_AT_type")
        else:
            raise DwarfError(f"{self._where(member.get_parent(), _name(member) or '')}: a typedef chain "
                             f"of over {_MAX_CHAIN} links (a cycle?)")
        tag = die.tag
        if tag == "DW_TAG_base_type":
            base = _name(die) or ""
            if base not in _BASE:
                raise DwarfError(f"{self._where(member.get_parent(), _name(member) or '')}: base type "
                                 f"{base!r} is not modelled")
            return Scalar(_BASE[base], alias if alias != _BASE[base] else None)
        if tag == "DW_TAG_enumeration_type":
            # The enum's width, fixed: the compiler picked its underlying type for the values, so
            # re-laid on another model it keeps the width (not the spelling: long is 4 bytes on ILP32).
            size = _int(die, "DW_AT_byte_size")
            under = die.get_DIE_from_attribute("DW_AT_type") if "DW_AT_type" in die.attributes else None
            signed = under is not None and "unsigned" not in (_name(under) or "") and _name(under) != "_Bool"
            c = {1: "int8_t", 2: "int16_t", 4: "int32_t", 8: "int64_t"}.get(size or 0)
            if c is not None and not signed:
                c = "u" + c
            if c is None:
                raise DwarfError(f"{self._where(member.get_parent(), _name(member) or '')}: enum type "
                                 "not modelled")
            return Scalar(c, alias or (f"enum {_name(die)}" if _name(die) else None))
        if tag == "DW_TAG_pointer_type":
            pointee = self._strip(die.get_DIE_from_attribute("DW_AT_type")) if "DW_AT_type" in die.attributes \
                else None
            if pointee is not None and pointee.tag == "DW_TAG_subroutine_type":
                return FunctionPointer(alias=alias)
            return Pointer(_name(pointee) if pointee is not None and _name(pointee) else "void")
        if tag == "DW_TAG_array_type":
            elem = self.ctype(die.get_DIE_from_attribute("DW_AT_type"), member, hint)
            counts = []
            for sub in die.iter_children():
                if sub.tag == "DW_TAG_subrange_type":
                    count = _int(sub, "DW_AT_count")
                    upper = _int(sub, "DW_AT_upper_bound")
                    counts.append(count if count is not None else (upper + 1 if upper is not None else None))
            t: CType = elem
            for c in reversed(counts):
                t = Array(t, c)
            return t
        if tag in ("DW_TAG_structure_type", "DW_TAG_union_type"):
            if "DW_AT_declaration" in die.attributes:
                raise DwarfError(f"{self._where(member.get_parent(), _name(member) or '')}: member of "
                                 "an incomplete type")
            return self.record(die, alias, hint)
        raise DwarfError(f"{self._where(member.get_parent(), _name(member) or '')}: {tag} is not modelled")


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
