"""Reader for IREE `.vmfb` bytecode module files, bounds-checked on every read.

A `.vmfb` is an archive (runtime/src/iree/vm/bytecode/archive.c):

- optionally a ZIP local file header first (the compiler's default "polyglot zip" output, so the
  file can be opened as a zip for debugging); the module starts right after the header's name and
  extra field,
- a 4-byte little-endian size prefix, then that many bytes of FlatBuffer (schema
  runtime/src/iree/schemas/bytecode_module_def.fbs, file identifier "IREE", root
  `BytecodeModuleDef`),
- the external rodata region, starting at the end of the FlatBuffer rounded up to 64 bytes
  (IREE_VM_ARCHIVE_SEGMENT_ALIGNMENT) from the start of the archive; a rodata segment without
  `embedded_data` lives at `region + external_data_offset` for `external_data_length` bytes,
- optionally the zip central directory and further zip entries (ignored here).

The tables used are declared in `TABLES` / `STRUCTS` (field name -> vtable slot and type) and read
through `_Obj`, a checked wrapper around the `flatbuffers` package's `Table`: every offset, length,
vtable and vector is checked against the FlatBuffer's extent before the runtime reads it, so
malformed input raises `ModuleFileError` (with the file `offset` concerned) and nothing else.

Loading follows IREE's loader (iree_vm_bytecode_module_create, runtime/src/iree/vm/bytecode/
module.c) step by step, with the same accept/reject decisions and status codes
(`ModuleFileError.code`):

1. the archive header (archive.c): ZIP header, at least 16 bytes, the size prefix within the file;
2. flatcc's verification of the whole FlatBuffer (`_verify_flatbuffer`): every table, vtable,
   string, vector and union reachable from the root, the debug database included, with flatcc's
   bounds and alignment rules (offsets aligned relative to the FlatBuffer, scalars to their size
   in the file, the FlatBuffer itself 4-aligned in the file);
3. the metadata rules of iree_vm_bytecode_module_flatbuffer_verify (verifier.c), in its order:
   module feature bits the runtime has, non-empty module/type/dependency/import/export names,
   external rodata within the file, as many signatures as descriptors, export ordinals, the
   bytecode version (17.0), descriptors with blocks, bytecode and register counts in range;
4. type resolution: every entry of the types table must be a value type or a ref type the runtime
   registers (NOT_FOUND otherwise).

Strings are bytes to IREE: names that are not UTF-8 load (decoded with backslash escapes). Calling
conventions are kept as text; one `abi.cconv` cannot parse has `signature` None, and the bytecode
verifier (`vm.bytecode.verifier`) rejects it where IREE's does. Function bytecode is verified when a
module is instantiated (vm.bytecode), as IREE verifies it in iree_vm_bytecode_module_create.
"""
from __future__ import annotations

import enum
import os
from dataclasses import dataclass, field
from typing import NamedTuple, Union

from flatbuffers import number_types as N
from flatbuffers import util as fb_util
from flatbuffers.table import Table

from ireeabi.abi.cconv import CconvError, Signature, parse as parse_cconv
from ireeabi.abi.errors import IreeAbiError
from ireeabi.vm.bytecode.isa import BYTECODE_VERSION_MAJOR, BYTECODE_VERSION_MINOR
from ireeabi.vm.status import StatusCode

FILE_IDENTIFIER = b"IREE"
SEGMENT_ALIGNMENT = 64  # IREE_VM_ARCHIVE_SEGMENT_ALIGNMENT
ZIP_LOCAL_FILE_HEADER_SIGNATURE = b"PK\x03\x04"
ZIP_LOCAL_FILE_HEADER_SIZE = 30
MIN_MODULE_BYTES = 16  # the runtime refuses less before looking at the FlatBuffer
# Function descriptor register counts the loader accepts (IREE_VM_ISA_*_REGISTER_COUNT, isa.h).
MAX_I32_REGISTER_COUNT = 0x7FFF
MAX_REF_REGISTER_COUNT = 0x3FFF


class ModuleFileError(IreeAbiError):
    """A malformed or truncated module file; `offset` is the file offset concerned and `code` the
    StatusCode IREE's loader returns for the same problem."""

    def __init__(self, reason: str, offset: int,
                 code: StatusCode = StatusCode.INVALID_ARGUMENT) -> None:
        self.reason = reason
        self.offset = offset
        self.code = StatusCode(code)
        super().__init__(f"{reason} (file offset {offset})")

    def __reduce__(self):
        return (type(self), (self.reason, self.offset, self.code))


class NotAModuleError(ModuleFileError):
    """The file is no `.vmfb` module at all (its archive framing fails: empty, text, another file
    format): the message starts "not a .vmfb module" and says what the bytes look like
    (`looks_like`), then the framing check that failed."""

    def __init__(self, reason: str, offset: int,
                 code: StatusCode = StatusCode.INVALID_ARGUMENT, looks_like: str = "") -> None:
        self.looks_like = looks_like
        super().__init__(reason, offset, code)

    def __reduce__(self):
        return (type(self), (self.reason, self.offset, self.code, self.looks_like))


class FeatureBits(enum.IntFlag):
    """iree.vm.FeatureBits."""

    EXT_F32 = 1 << 0
    EXT_F64 = 1 << 1
    YIELD = 1 << 2
    UNWIND = 1 << 3


class DependencyFlags(enum.IntFlag):
    """iree.vm.ModuleDependencyFlagBits (default REQUIRED)."""

    REQUIRED = 1 << 0
    OPTIONAL = 1 << 1


class ImportFlags(enum.IntFlag):
    """iree.vm.ImportFlagBits (default REQUIRED)."""

    REQUIRED = 1 << 0
    OPTIONAL = 1 << 1


# What iree_vm_bytecode_available_features reports for the pip 3.13 runtime (both extensions built
# in; YIELD and UNWIND always): the message of a feature mismatch lists these.
AVAILABLE_FEATURES = (FeatureBits.EXT_F32 | FeatureBits.EXT_F64 | FeatureBits.YIELD
                      | FeatureBits.UNWIND)

# Ref types the runtime resolves type-table entries against: the VM's builtin types and the HAL
# types iree-run-module registers (iree_hal_module_register_all_types, modules/hal/types.c).
# `register_type_name` adds the types of further native modules.
_REGISTERED_TYPES: set[str] = {
    "vm.buffer", "vm.list",
    "hal.allocator", "hal.buffer", "hal.buffer_view", "hal.channel", "hal.command_buffer",
    "hal.device", "hal.event", "hal.executable", "hal.fence", "hal.file", "hal.semaphore",
}
VALUE_TYPE_NAMES = frozenset({"i8", "i16", "i32", "i64", "f32", "f64"})


def register_type_name(name: str) -> None:
    """Make ref type `name` (without the `!`, e.g. `mymod.thing`) resolvable in type tables."""
    _REGISTERED_TYPES.add(name)


def resolves_type(full_name: str) -> bool:
    """Whether the runtime resolves a types-table entry (iree_vm_bytecode_module_resolve_type)."""
    if full_name in VALUE_TYPE_NAMES or full_name == "!vm.opaque":
        return True
    if not full_name.startswith("!"):
        return False
    name = full_name[1:]
    if name.startswith("vm.list"):  # any !vm.list<...> (even a bare prefix) is the one list type
        name = "vm.list"
    return name in _REGISTERED_TYPES


def feature_names(bits: int) -> tuple[str, ...]:
    """Names of the known bits set in `bits`, then any unknown bits as hex."""
    names = [f.name for f in FeatureBits if bits & f.value]
    rest = bits & ~sum(f.value for f in FeatureBits)
    if rest:
        names.append(f"0x{rest:08x}")
    return tuple(names)


# --------------------------------------------------------------------------------------------------
# The schema, declaratively: table -> field -> (vtable slot, type[, default]).
#
# A type is a flatbuffers number type (scalar), STRING, UNION (the value half of a union; its type
# half is a Uint8 field in the slot before), the name of a table, or Vector(element) where the
# element is a number type, a table name or a struct name. Slot n lives at vtable offset 4 + 2 * n.

STRING = "string"
UNION = "union"
UNION_VECTOR = "union_vector"  # value half of a vector of unions; its types vector: the slot before


class Vector(NamedTuple):
    element: object


class Decl(NamedTuple):
    slot: int
    type: object
    default: object = None


TABLES: dict[str, dict[str, Decl]] = {
    "AttrDef": {
        "key": Decl(0, STRING),
        "value": Decl(1, STRING),
    },
    "TypeDef": {
        "full_name": Decl(0, STRING),
    },
    "FunctionSignatureDef": {
        "calling_convention": Decl(0, STRING),
        "attrs": Decl(1, Vector("AttrDef")),
    },
    "ModuleDependencyDef": {
        "name": Decl(0, STRING),
        "minimum_version": Decl(1, N.Uint32Flags, 0),
        "flags": Decl(2, N.Uint32Flags, int(DependencyFlags.REQUIRED)),
    },
    "ImportFunctionDef": {
        "full_name": Decl(0, STRING),
        "signature": Decl(1, "FunctionSignatureDef"),
        "flags": Decl(2, N.Uint32Flags, int(ImportFlags.REQUIRED)),
    },
    "ExportFunctionDef": {
        "local_name": Decl(0, STRING),
        "internal_ordinal": Decl(1, N.Int32Flags, 0),
    },
    "UncompressedDataDef": {},
    "RodataSegmentDef": {
        "compression_type_type": Decl(0, N.Uint8Flags, 0),
        "compression_type": Decl(1, UNION),
        "embedded_data": Decl(2, Vector(N.Uint8Flags)),
        "external_data_offset": Decl(3, N.Uint64Flags, 0),
        "external_data_length": Decl(4, N.Uint64Flags, 0),
    },
    "RwdataSegmentDef": {
        "byte_size": Decl(0, N.Int32Flags, 0),
    },
    "ModuleStateDef": {
        "global_bytes_capacity": Decl(0, N.Int32Flags, 0),
        "global_ref_count": Decl(1, N.Int32Flags, 0),
    },
    "BytecodeModuleDef": {
        "name": Decl(0, STRING),  # (required)
        "version": Decl(1, N.Uint32Flags, 0),
        "requirements": Decl(2, N.Uint32Flags, 0),
        "attrs": Decl(3, Vector("AttrDef")),
        "types": Decl(4, Vector("TypeDef")),
        "dependencies": Decl(5, Vector("ModuleDependencyDef")),
        "imported_functions": Decl(6, Vector("ImportFunctionDef")),
        "exported_functions": Decl(7, Vector("ExportFunctionDef")),
        "function_signatures": Decl(8, Vector("FunctionSignatureDef")),
        "rodata_segments": Decl(9, Vector("RodataSegmentDef")),
        "rwdata_segments": Decl(10, Vector("RwdataSegmentDef")),
        "module_state": Decl(11, "ModuleStateDef"),
        "function_descriptors": Decl(12, Vector("FunctionDescriptor")),
        "bytecode_version": Decl(13, N.Uint32Flags, 0),
        "bytecode_data": Decl(14, Vector(N.Uint8Flags)),
        "debug_database": Decl(15, "DebugDatabaseDef"),  # verified, not read
    },
    # The debug database: not read, but the loader verifies it like the rest of the FlatBuffer.
    "CallSiteLocDef": {
        "callee": Decl(0, N.Int32Flags, 0),
        "caller": Decl(1, N.Int32Flags, 0),
    },
    "FileLineColLocDef": {
        "filename": Decl(0, STRING),
        "line": Decl(1, N.Int32Flags, 0),
        "column": Decl(2, N.Int32Flags, 0),
    },
    "FusedLocDef": {
        "metadata": Decl(0, STRING),
        "locations": Decl(1, Vector(N.Int32Flags)),
    },
    "NameLocDef": {
        "name": Decl(0, STRING),
        "child_location": Decl(1, N.Int32Flags, 0),
    },
    "FunctionSourceMapDef": {
        "local_name": Decl(0, STRING),
        "locations": Decl(1, Vector("BytecodeLocationDef")),
    },
    "DebugDatabaseDef": {
        "location_table_type": Decl(0, Vector(N.Uint8Flags)),
        "location_table": Decl(1, UNION_VECTOR),
        "functions": Decl(2, Vector("FunctionSourceMapDef")),
    },
}

# Fields the schema marks (required): flatcc rejects a table without them.
REQUIRED = {("BytecodeModuleDef", "name")}

# Union member tables by type id (0 is NONE).
UNIONS: dict[str, dict[int, str]] = {
    "RodataSegmentDef.compression_type": {1: "UncompressedDataDef"},
    "DebugDatabaseDef.location_table": {1: "CallSiteLocDef", 2: "FileLineColLocDef",
                                        3: "FusedLocDef", 4: "NameLocDef"},
}

# struct -> (size, {field: (offset, type)}); every struct here is 4-byte aligned
STRUCTS: dict[str, tuple[int, dict[str, tuple[int, object]]]] = {
    "BytecodeLocationDef": (8, {
        "bytecode_offset": (0, N.Int32Flags),
        "location": (4, N.Int32Flags),
    }),
    "FunctionDescriptor": (20, {
        "bytecode_offset": (0, N.Int32Flags),
        "bytecode_length": (4, N.Int32Flags),
        "requirements": (8, N.Uint32Flags),
        "reserved": (12, N.Int16Flags),
        "block_count": (14, N.Int16Flags),
        "i32_register_count": (16, N.Int16Flags),
        "ref_register_count": (18, N.Int16Flags),
    }),
}

_UOFFSET = N.UOffsetTFlags.bytewidth  # 4


def _inline_size(t: object) -> int:
    """Bytes a field occupies inside its table."""
    if isinstance(t, type) and hasattr(t, "bytewidth"):
        return t.bytewidth
    return _UOFFSET  # strings, tables, unions, vectors: a uoffset


def _element_size(t: object) -> int:
    if isinstance(t, str):
        return STRUCTS[t][0] if t in STRUCTS else _UOFFSET
    return t.bytewidth


# --------------------------------------------------------------------------------------------------
# flatcc's verification of the whole FlatBuffer
#
# IREE runs the flatcc-generated verifier over the FlatBuffer before reading anything
# (iree_vm_bytecode_module_flatbuffer_verify): a buffer it rejects does not load, whatever part of
# it is bad (the debug database included), and everything it accepts is safe to read. The rules
# below are flatcc's (runtime/verifier.c): positions are relative to the FlatBuffer's first byte,
# offsets must be non-zero, in range and 4-aligned relative to it, while scalar fields must be
# aligned to their size in memory, i.e. in the file (IREE maps the archive at an aligned address).
# Each failure carries flatcc's reason text, as IREE prints it after "FlatBuffer verification
# failed: ".

_U32_MAX = 0xFFFFFFFF


class _Verifier:
    __slots__ = ("data", "fb", "end")

    def __init__(self, data: bytes, fb: int, length: int) -> None:
        self.data, self.fb, self.end = data, fb, length

    def fail(self, reason: str, rel: int, path: str) -> "ModuleFileError":
        at = min(max(self.fb + rel, 0), len(self.data))
        return ModuleFileError(f"FlatBuffer verification failed: {reason} ({path})", at)

    def u32(self, rel: int) -> int:
        return int.from_bytes(self.data[self.fb + rel:self.fb + rel + 4], "little")

    def u16(self, rel: int) -> int:
        return int.from_bytes(self.data[self.fb + rel:self.fb + rel + 2], "little")

    def header(self, base: int, offset: int, what: str, path: str) -> int:
        """Target of the uoffset `offset` stored at `base`, checked as flatcc's check_header."""
        k = base + offset
        if offset == 0 or k > _U32_MAX or k + 4 > self.end or k & 3:
            raise self.fail(f"{what} header out of range or unaligned", base, path)
        return k

    def string(self, base: int, path: str) -> None:
        k = self.header(base, self.u32(base), "string", path)
        n = self.u32(k)
        if self.end - (k + 4) <= n:
            raise self.fail("string out of range", k, path)
        if self.data[self.fb + k + 4 + n] != 0:
            raise self.fail("string not zero terminated", k + 4 + n, path)

    def vector(self, base: int, elem_size: int, path: str) -> tuple[int, int]:
        """(first element, count) of the vector whose uoffset is at `base`."""
        k = self.header(base, self.u32(base), "vector", path)
        n = self.u32(k)
        if n > _U32_MAX // elem_size:
            raise self.fail("vector count exceeds representable vector size", k, path)
        if self.end - (k + 4) < n * elem_size:
            raise self.fail("vector out of range", k, path)
        return k + 4, n

    def table(self, base: int, type_name: str, path: str) -> None:
        k = self.header(base, self.u32(base), "table", path)
        vt = (k - self.u32(k)) & _U32_MAX  # the soffset, as flatcc subtracts it
        if vt >= 0x80000000 or vt & 1:
            raise self.fail("vtable offset out of range or unaligned", k, path)
        if vt + 2 > self.end:
            raise self.fail("vtable header out of range", k, path)
        vsize = self.u16(vt)
        if vt + vsize > self.end or vsize & 1:
            raise self.fail("vtable size out of range or unaligned", vt, path)
        if vsize < 4:
            raise self.fail("vtable header too small", vt, path)
        tsize = self.u16(vt + 2)
        if self.end - k < tsize:
            raise self.fail("table size out of range", vt + 2, path)

        def entry(slot: int) -> int:
            vo = 4 + 2 * slot
            return self.u16(vt + vo) if vo < vsize else 0

        def offset_field(slot: int, name: str) -> int:
            vte = entry(slot)
            if not vte:
                if (type_name, name) in REQUIRED:
                    raise self.fail("required field missing", k, f"{path}.{name}")
                return 0
            if vte + 4 > tsize:
                raise self.fail("table field out of range", k, f"{path}.{name}")
            if (k + vte) & 3:
                raise self.fail("table field not aligned", k + vte, f"{path}.{name}")
            return k + vte

        for name, decl in TABLES[type_name].items():
            where = f"{path}.{name}"
            t = decl.type
            if isinstance(t, type):  # a scalar: in the table, aligned to its size in the file
                vte = entry(decl.slot)
                if vte:
                    size = t.bytewidth
                    if vte + size > tsize:
                        raise self.fail("table field out of range", k, where)
                    if (self.fb + k + vte) % size:
                        raise self.fail("table field not aligned", k + vte, where)
                continue
            if t == UNION:  # its type byte (the slot before) was checked as a scalar already
                type_slot = entry(decl.slot - 1)
                if not type_slot:
                    if entry(decl.slot):
                        raise self.fail("union cannot have a table without a type", k, where)
                    continue
                type_id = self.data[self.fb + k + type_slot]
                if type_id == 0:
                    if entry(decl.slot):
                        raise self.fail("union type NONE cannot have a value", k, where)
                    continue
                at = offset_field(decl.slot, name)
                member = UNIONS[f"{type_name}.{name}"].get(type_id)
                if at and member is not None:  # flatcc lets unknown member types through
                    self.table(at, member, where)
                continue
            if t == UNION_VECTOR:  # values only matter when there is a types vector
                types_at = offset_field(decl.slot - 1, name + "_type")
                if not types_at:
                    continue
                types_start, count = self.vector(types_at, 1, where + "_type")
                at = offset_field(decl.slot, name)
                if not at:
                    continue
                start, n = self.vector(at, 4, where)
                if n != count:
                    raise self.fail("union vector length mismatch", at, where)
                members = UNIONS[f"{type_name}.{name}"]
                for i in range(n):
                    elem = start + 4 * i
                    type_id = self.data[self.fb + types_start + i]
                    if self.u32(elem) == 0:
                        if type_id != 0:
                            raise self.fail("union element absent without type NONE", elem,
                                            f"{where}[{i}]")
                        continue
                    if type_id == 0:
                        raise self.fail("union element present with type NONE", elem,
                                        f"{where}[{i}]")
                    if type_id in members:
                        self.table(elem, members[type_id], f"{where}[{i}]")
                continue
            at = offset_field(decl.slot, name)
            if not at:
                continue
            if t == STRING:
                self.string(at, where)
            elif isinstance(t, Vector):
                elem = t.element
                if isinstance(elem, str) and elem in TABLES:
                    start, n = self.vector(at, 4, where)
                    for i in range(n):
                        self.table(start + 4 * i, elem, f"{where}[{i}]")
                else:  # scalars and structs: bounds only (all 4-aligned, as any vector's data)
                    self.vector(at, _element_size(elem), where)
            else:
                self.table(at, t, where)


def _verify_flatbuffer(data: bytes, fb: int, length: int) -> None:
    """flatcc's BytecodeModuleDef verification of the FlatBuffer at file offset `fb`."""
    # (_locate has checked the buffer header: alignment, size, identifier)
    _Verifier(data, fb, length).table(0, "BytecodeModuleDef", "BytecodeModuleDef")


# --------------------------------------------------------------------------------------------------
# The checked accessor


class _Buffer:
    """The FlatBuffer's extent [lo, hi) within the file bytes; every read is checked against it."""

    __slots__ = ("data", "lo", "hi")

    def __init__(self, data: bytes, lo: int, hi: int) -> None:
        self.data, self.lo, self.hi = data, lo, hi

    def need(self, pos: int, size: int, what: str) -> None:
        if size < 0:
            raise ModuleFileError(f"negative size {size} reading {what}", max(pos, 0))
        if pos < self.lo or pos + size > self.hi:
            raise ModuleFileError(
                f"{what}: {size} byte(s) at {pos} outside the FlatBuffer [{self.lo}, {self.hi})",
                max(min(pos, len(self.data)), 0))


class _Obj:
    """One table of a declared type, its header checked; fields read by name."""

    __slots__ = ("buf", "tab", "type", "path", "size")

    def __init__(self, buf: _Buffer, pos: int, type_name: str, path: str) -> None:
        self.buf, self.type, self.path = buf, type_name, path
        buf.need(pos, 4, f"{path} ({type_name}) table")
        tab = Table(buf.data, pos)
        vtable = pos - tab.Get(N.SOffsetTFlags, pos)
        buf.need(vtable, 4, f"{path} ({type_name}) vtable header")
        vt_size = tab.Get(N.VOffsetTFlags, vtable)
        obj_size = tab.Get(N.VOffsetTFlags, vtable + 2)
        if vt_size < 4 or vt_size % 2:
            raise ModuleFileError(f"{path} ({type_name}) vtable size {vt_size} is invalid", vtable)
        buf.need(vtable, vt_size, f"{path} ({type_name}) vtable")
        # flatcc accepts any table size that fits; fields are checked against it one by one
        buf.need(pos, obj_size, f"{path} ({type_name}) table body")
        self.tab, self.size = tab, obj_size

    @property
    def pos(self) -> int:
        return self.tab.Pos

    def _decl(self, name: str) -> Decl:
        return TABLES[self.type][name]

    def _field(self, name: str) -> int | None:
        """Offset of the field within the table, or None when absent."""
        decl = self._decl(name)
        vo = self.tab.Offset(4 + 2 * decl.slot)
        if vo == 0:
            return None
        size = _inline_size(decl.type)
        if vo + size > self.size:
            raise ModuleFileError(
                f"{self.path}.{name}: field at table offset {vo} (+{size}) outside the "
                f"{self.size}-byte {self.type} table", self.pos)
        return vo

    def has(self, name: str) -> bool:
        return self._field(name) is not None

    def field_offset(self, name: str) -> int:
        """File offset of the field's slot in the table (the table itself when absent)."""
        vo = self._field(name)
        return self.pos + (vo or 0)

    def _target(self, vo: int, name: str) -> int:
        """Follow the uoffset in field `name` (at table offset `vo`)."""
        at = self.pos + vo
        target = self.tab.Indirect(at)
        self.buf.need(target, 4, f"{self.path}.{name} (target of the offset at {at})")
        return target

    def scalar(self, name: str) -> int:
        decl = self._decl(name)
        vo = self._field(name)
        if vo is None:
            return decl.default
        return self.tab.Get(decl.type, self.pos + vo)

    def string(self, name: str) -> str | None:
        vo = self._field(name)
        if vo is None:
            return None
        where = f"{self.path}.{name}"
        target = self._target(vo, name)
        length = self.tab.Get(N.UOffsetTFlags, target)
        self.buf.need(target + 4, length + 1, f"{where} string of {length} bytes + terminator")
        if self.buf.data[target + 4 + length] != 0:
            raise ModuleFileError(f"{where} string is not zero-terminated", target + 4 + length)
        # IREE compares names as bytes and never decodes them: a name that is not UTF-8 loads
        # (and matches nothing a caller can spell); keep it printable.
        return self.tab.String(self.pos + vo).decode("utf-8", errors="backslashreplace")

    def table(self, name: str) -> "_Obj | None":
        vo = self._field(name)
        if vo is None:
            return None
        return _Obj(self.buf, self._target(vo, name), self._decl(name).type, f"{self.path}.{name}")

    def union(self, name: str) -> "tuple[int, _Obj | None]":
        """(type id, member table or None) of a union field; unknown ids are not followed."""
        type_id = self.scalar(name + "_type")
        vo = self._field(name)
        member = UNIONS[f"{self.type}.{name}"].get(type_id)
        if type_id == 0 or vo is None or member is None:
            return type_id, None
        holder = Table(self.buf.data, 0)
        holder_pos = self._target(vo, name)
        self.tab.Union(holder, vo)
        assert holder.Pos == holder_pos
        return type_id, _Obj(self.buf, holder_pos, member, f"{self.path}.{name}")

    def vector(self, name: str) -> tuple[int, int] | None:
        """(file offset of the first element, element count), bounds-checked, or None."""
        decl = self._decl(name)
        vo = self._field(name)
        if vo is None:
            return None
        target = self._target(vo, name)
        count = self.tab.VectorLen(vo)
        start = self.tab.Vector(vo)
        assert start == target + 4
        esize = _element_size(decl.type.element)
        self.buf.need(start, count * esize,
                      f"{self.path}.{name} vector of {count} x {esize}-byte elements")
        return start, count

    def tables(self, name: str) -> list["_Obj"]:
        vec = self.vector(name)
        if vec is None:
            return []
        start, count = vec
        elem = self._decl(name).type.element
        out = []
        for i in range(count):
            at = start + 4 * i
            target = self.tab.Indirect(at)
            self.buf.need(target, 4, f"{self.path}.{name}[{i}] (target of the offset at {at})")
            out.append(_Obj(self.buf, target, elem, f"{self.path}.{name}[{i}]"))
        return out

    def structs(self, name: str) -> list[dict]:
        vec = self.vector(name)
        if vec is None:
            return []
        start, count = vec
        size, fields = STRUCTS[self._decl(name).type.element]
        out = []
        for i in range(count):
            base = start + i * size
            row = {f: self.tab.Get(t, base + off) for f, (off, t) in fields.items()}
            row["_offset"] = base
            out.append(row)
        return out

    def bytes_(self, name: str) -> tuple[int, bytes] | None:
        vec = self.vector(name)
        if vec is None:
            return None
        start, count = vec
        return start, bytes(self.buf.data[start:start + count])


# --------------------------------------------------------------------------------------------------
# The model


class Attr(NamedTuple):
    key: str
    value: str


@dataclass(frozen=True)
class Dependency:
    name: str
    minimum_version: int
    flags: int

    @property
    def required(self) -> bool:
        return bool(self.flags & DependencyFlags.REQUIRED)

    @property
    def optional(self) -> bool:
        return bool(self.flags & DependencyFlags.OPTIONAL)


@dataclass(frozen=True)
class FunctionSignature:
    cconv: str | None  # calling_convention, None when absent
    signature: Signature | None  # the cconv parsed by abi.cconv
    attrs: tuple[Attr, ...]


@dataclass(frozen=True)
class ImportedFunction:
    ordinal: int
    full_name: str  # `module.function`
    cconv: str | None  # from the import's signature; None when it has none
    signature: Signature | None
    flags: int
    attrs: tuple[Attr, ...]

    @property
    def module(self) -> str:
        return self.full_name.split(".", 1)[0]

    @property
    def optional(self) -> bool:
        return bool(self.flags & ImportFlags.OPTIONAL)


@dataclass(frozen=True)
class ExportedFunction:
    ordinal: int
    name: str  # local name
    internal_ordinal: int  # into function_descriptors / function_signatures
    cconv: str | None  # from function_signatures[internal_ordinal]
    signature: Signature | None
    attrs: tuple[Attr, ...]


@dataclass(frozen=True)
class RodataSegment:
    ordinal: int
    embedded: bool
    offset: int  # file offset of the segment's bytes
    length: int
    external_data_offset: int | None  # as stored, relative to the external rodata region
    external_data_length: int | None
    compression: int  # CompressionTypeDef type id: 0 none, 1 UncompressedDataDef
    _data: bytes = field(default=b"", repr=False, compare=False)

    @property
    def kind(self) -> str:
        return "embedded" if self.embedded else "external"


@dataclass(frozen=True)
class FunctionDescriptor:
    ordinal: int
    bytecode_offset: int  # within the bytecode blob
    bytecode_length: int
    requirements: int
    reserved: int
    block_count: int
    i32_register_count: int
    ref_register_count: int
    file_offset: int  # of the function's first bytecode byte in the file


@dataclass(frozen=True)
class ModuleFile:
    name: str
    version: int
    requirements: int  # FeatureBits
    attrs: tuple[Attr, ...]
    types: tuple[str, ...]
    dependencies: tuple[Dependency, ...]
    imported_functions: tuple[ImportedFunction, ...]
    exported_functions: tuple[ExportedFunction, ...]
    function_signatures: tuple[FunctionSignature, ...]
    rodata_segments: tuple[RodataSegment, ...]
    rwdata_segments: tuple[int, ...]  # byte sizes
    global_bytes_capacity: int
    global_ref_count: int
    function_descriptors: tuple[FunctionDescriptor, ...]
    internal_names: tuple[str | None, ...]  # per internal function: its debug-database name
    bytecode_version: int  # major << 16 | minor
    bytecode: bytes
    bytecode_offset: int  # file offset of the bytecode blob
    zip_header: bool  # the archive starts with a ZIP local file header
    flatbuffer_offset: int  # file offset of the FlatBuffer (after its size prefix)
    flatbuffer_length: int
    external_rodata_offset: int  # file offset of the external rodata region
    file_size: int

    @property
    def requirement_names(self) -> tuple[str, ...]:
        return feature_names(self.requirements)

    @property
    def bytecode_version_major(self) -> int:
        return self.bytecode_version >> 16

    @property
    def bytecode_version_minor(self) -> int:
        return self.bytecode_version & 0xFFFF

    def imported(self, full_name: str) -> ImportedFunction:
        for f in self.imported_functions:
            if f.full_name == full_name:
                return f
        raise KeyError(full_name)

    def exported(self, name: str) -> ExportedFunction:
        for f in self.exported_functions:
            if f.name == name:
                return f
        raise KeyError(name)


def rodata_bytes(segment: RodataSegment) -> bytes:
    """The segment's bytes (as stored; a compressed segment is not decompressed)."""
    return segment._data


# --------------------------------------------------------------------------------------------------
# Reading


def _attrs(sig: _Obj | None, name: str = "attrs") -> tuple[Attr, ...]:
    if sig is None:
        return ()
    out = []
    for a in sig.tables(name):
        key = a.string("key")
        value = a.string("value")
        out.append(Attr(key if key is not None else "", value if value is not None else ""))
    return tuple(out)


def _signature(sig: _Obj | None) -> tuple[str | None, Signature | None]:
    """(cconv text, parsed signature). The loader accepts any text here: an internal function's
    cconv is checked by the bytecode verifier, an import's only where it is resolved or called. So a
    text `abi.cconv` cannot parse (or IREE would reject later) loads with signature None."""
    if sig is None:
        return None, None
    text = sig.string("calling_convention")
    if text is None:
        return None, None
    try:
        return text, parse_cconv(text)
    except CconvError:
        return text, None


def _nonempty(obj: _Obj, name: str, what: str) -> str:
    text = obj.string(name)
    if not text:
        raise ModuleFileError(f"{obj.path}.{name}: {what} is missing or empty",
                              obj.field_offset(name))
    return text


def _locate(data: bytes) -> tuple[bool, int, int]:
    """(zip header present, FlatBuffer file offset, FlatBuffer length) per the archive framing."""
    start = 0
    zipped = False
    if len(data) >= ZIP_LOCAL_FILE_HEADER_SIZE and data[:4] == ZIP_LOCAL_FILE_HEADER_SIGNATURE:
        zipped = True
        header = Table(data, 0)
        name_len = header.Get(N.Uint16Flags, 26)
        extra_len = header.Get(N.Uint16Flags, 28)
        start = ZIP_LOCAL_FILE_HEADER_SIZE + name_len + extra_len
        if start > len(data):
            raise ModuleFileError(
                f"zip local file header: archive self-reports as a zip but does not have enough "
                f"data to contain a module: name ({name_len} B) and extra field ({extra_len} B) "
                f"end at {start}, past the end of the {len(data)}-byte file", 26)
    available = len(data) - start
    if available < MIN_MODULE_BYTES:
        raise ModuleFileError(
            f"module header: FlatBuffer data is not present or less than {MIN_MODULE_BYTES} bytes "
            f"({available} byte(s) after the archive header)", start)
    length = fb_util.GetSizePrefix(data, start) & 0xFFFFFFFF
    if length > available - 4:
        raise ModuleFileError(
            f"FlatBuffer length prefix out of bounds: size prefix {length} exceeds the "
            f"{available - 4} byte(s) that follow it", start)
    fb = start + 4
    # flatcc's buffer header checks, in its order: alignment, size, identifier
    if fb & 3:
        raise ModuleFileError(
            f"FlatBuffer verification failed: runtime: buffer header not aligned (the FlatBuffer "
            f"starts at file offset {fb}, not a multiple of 4)", fb)
    if length < 8:
        raise ModuleFileError(
            f"FlatBuffer verification failed: buffer header too small (size prefix {length} "
            f"leaves no room for the root offset and file identifier)", start)
    if not fb_util.BufferHasIdentifier(data, fb, FILE_IDENTIFIER):
        got = bytes(fb_util.GetBufferIdentifier(data, fb))
        raise ModuleFileError(f"FlatBuffer verification failed: identifier mismatch (file "
                              f"identifier is {got!r}, expected {FILE_IDENTIFIER!r})", fb + 4)
    return zipped, fb, length


# What a file that is no module looks like, from its first bytes: magic numbers of the formats a
# user may hand over by mistake, then text (MLIR source, most likely).
_MAGICS = (
    (b"\x93NUMPY", "a NumPy .npy array"),
    (b"\x7fELF", "an ELF object or library"),
    (b"ML\xefR", "MLIR bytecode (iree-compile's input, not its output)"),
    (b"\x89HDF", "an HDF5 file"),
    (b"PK\x03\x04", "a zip archive whose first entry is not an IREE module"),
)
_SNIFF_BYTES = 256


def describe_content(data: "bytes | memoryview") -> str:
    """What bytes that are not a module look like, for an error message ("MLIR text ...")."""
    head = bytes(data[:_SNIFF_BYTES])
    if not head:
        return "an empty file"
    for magic, what in _MAGICS:
        if head.startswith(magic):
            return what
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as e:  # a multi-byte character cut at the end is still text
        text = head[:e.start].decode("utf-8") if e.start >= len(head) - 3 else ""
    if text and all(c.isprintable() or c in "\t\r\n" for c in text):
        first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
        shown = first if len(first) <= 40 else first[:37] + "..."
        mlir = any(w in text for w in ("func.func", "module", "util.", "%", "tensor<", "vm."))
        return f"{'MLIR' if mlir else 'plain'} text (first line {shown!r})"
    return f"binary data starting {head[:8].hex(' ')}"


def _has_identifier(data: "bytes | memoryview") -> bool:
    """Whether IREE's file identifier sits where the framing puts it (after the optional zip local
    file header, the size prefix and the root offset)."""
    start = 0
    if bytes(data[:4]) == ZIP_LOCAL_FILE_HEADER_SIGNATURE and len(data) >= ZIP_LOCAL_FILE_HEADER_SIZE:
        start = (ZIP_LOCAL_FILE_HEADER_SIZE + int.from_bytes(data[26:28], "little")
                 + int.from_bytes(data[28:30], "little"))
    return bytes(data[start + 8:start + 12]) == FILE_IDENTIFIER


def check_framing(data: "bytes | memoryview") -> tuple[bool, int, int]:
    """The archive framing checks of IREE's loader (archive.c, then flatcc's buffer header):
    (zip header present, FlatBuffer file offset, FlatBuffer length). A file failing them is no
    module at all: NotAModuleError, "not a .vmfb module" with what the bytes look like."""
    try:
        return _locate(data)
    except ModuleFileError as e:
        if _has_identifier(data):  # a module whose framing is damaged (truncated, say): not "no module"
            raise
        looks = describe_content(data)
        what = "is empty" if not len(data) else f"looks like {looks}"
        raise NotAModuleError(f"not a .vmfb module: the file {what} ({e.reason})", e.offset,
                              e.code, looks) from None


def _check_descriptor(i: int, row: dict, code_length: int) -> None:
    """iree_vm_bytecode_module_flatbuffer_verify's rules for one function descriptor, in order."""
    at = row["_offset"]
    where = f"BytecodeModuleDef.function_descriptors[{i}]"
    if row["block_count"] == 0:
        raise ModuleFileError(f"{where}.block_count is 0; functions must have at least 1 block",
                              at + 14)
    off, length = row["bytecode_offset"], row["bytecode_length"]
    if length == 0:
        raise ModuleFileError(f"{where}.bytecode_length is 0; functions must have at least one "
                              f"block", at + 4)
    # IREE's check here lets a negative length through while offset + length stays in the blob
    # (its function walk then finds no block: INVALID_ARGUMENT too); it is a span error here.
    if off < 0 or length < 0 or off + length > code_length:
        raise ModuleFileError(f"{where}: bytecode span [{off}, +{length}) out of range of the "
                              f"{code_length}-byte bytecode blob", at)
    if row["i32_register_count"] > MAX_I32_REGISTER_COUNT or \
            row["ref_register_count"] > MAX_REF_REGISTER_COUNT:
        raise ModuleFileError(
            f"{where}: register count out of range ({row['i32_register_count']} i32 / "
            f"{row['ref_register_count']} ref; at most {MAX_I32_REGISTER_COUNT} / "
            f"{MAX_REF_REGISTER_COUNT})", at + 16)


def _read(data: bytes) -> ModuleFile:
    zipped, fb, fb_len = check_framing(data)
    _verify_flatbuffer(data, fb, fb_len)
    buf = _Buffer(data, fb, fb + fb_len)
    root_at = fb + Table(data, fb).Get(N.UOffsetTFlags, fb)
    root = _Obj(buf, root_at, "BytecodeModuleDef", "BytecodeModuleDef")
    region = -(-(fb + fb_len) // SEGMENT_ALIGNMENT) * SEGMENT_ALIGNMENT

    # The metadata checks of iree_vm_bytecode_module_flatbuffer_verify, in its order.
    requirements = root.scalar("requirements")
    missing = requirements & ~int(AVAILABLE_FEATURES)
    if missing:
        raise ModuleFileError(
            f"BytecodeModuleDef.requirements: required module features "
            f"[{'|'.join(feature_names(missing))}] are not available in this runtime "
            f"configuration; have [{'|'.join(feature_names(AVAILABLE_FEATURES))}] while module "
            f"requires [{'|'.join(feature_names(requirements))}]",
            root.field_offset("requirements"))
    name = _nonempty(root, "name", "module name (required)")
    type_defs = root.tables("types")
    types = tuple(_nonempty(t, "full_name", "type name") for t in type_defs)

    segments = []
    for i, seg in enumerate(root.tables("rodata_segments")):
        compression, _member = seg.union("compression_type")
        embedded = seg.bytes_("embedded_data")
        if embedded is not None:  # embedded wins when both are present, as in the runtime
            at, blob = embedded
            segments.append(RodataSegment(i, True, at, len(blob), None, None, compression, blob))
            continue
        ext_off = seg.scalar("external_data_offset")
        ext_len = seg.scalar("external_data_length")
        # compared without sums, which could wrap in IREE's uint64 arithmetic
        avail = len(data)
        if region > avail or ext_off > avail - region or ext_len > avail - region - ext_off:
            raise ModuleFileError(
                f"{seg.path}: external reference out of range: data [{ext_off}, +{ext_len}) "
                f"relative to the rodata region at {region} extends past the end of the "
                f"{avail}-byte file", seg.field_offset("external_data_offset"))
        at = region + ext_off
        segments.append(RodataSegment(i, False, at, ext_len, ext_off, ext_len, compression,
                                      bytes(data[at:at + ext_len])))

    deps = tuple(Dependency(_nonempty(d, "name", "dependency module name"),
                            d.scalar("minimum_version"), d.scalar("flags"))
                 for d in root.tables("dependencies"))

    signatures = []
    for sig in root.tables("function_signatures"):
        cconv, parsed = _signature(sig)
        signatures.append(FunctionSignature(cconv, parsed, _attrs(sig)))

    imports = []
    for i, imp in enumerate(root.tables("imported_functions")):
        full_name = _nonempty(imp, "full_name", "import name")
        sig = imp.table("signature")
        cconv, parsed = _signature(sig)
        imports.append(ImportedFunction(i, full_name, cconv, parsed, imp.scalar("flags"),
                                        _attrs(sig)))

    descriptor_rows = root.structs("function_descriptors")
    if len(signatures) != len(descriptor_rows):
        raise ModuleFileError(
            f"BytecodeModuleDef: function signature and descriptor table length mismatch "
            f"({len(signatures)} vs {len(descriptor_rows)})",
            root.field_offset("function_descriptors"))

    exports = []
    for i, exp in enumerate(root.tables("exported_functions")):
        local_name = _nonempty(exp, "local_name", "export name")
        ordinal = exp.scalar("internal_ordinal")
        if not 0 <= ordinal < len(descriptor_rows):
            raise ModuleFileError(
                f"{exp.path}.internal_ordinal {ordinal} out of range (module has "
                f"{len(descriptor_rows)} internal function(s))",
                exp.field_offset("internal_ordinal"))
        s = signatures[ordinal]
        exports.append(ExportedFunction(i, local_name, ordinal, s.cconv, s.signature, s.attrs))

    version = root.scalar("bytecode_version")
    major, minor = version >> 16, version & 0xFFFF
    if major != BYTECODE_VERSION_MAJOR or minor > BYTECODE_VERSION_MINOR:
        raise ModuleFileError(
            f"BytecodeModuleDef.bytecode_version: bytecode version mismatch; runtime supports "
            f"{BYTECODE_VERSION_MAJOR}.{BYTECODE_VERSION_MINOR}, module has {major}.{minor}",
            root.field_offset("bytecode_version"))

    code = root.bytes_("bytecode_data")
    code_at, code_bytes = code if code is not None else (root.field_offset("bytecode_data"), b"")
    descriptors = []
    for i, row in enumerate(descriptor_rows):
        _check_descriptor(i, row, len(code_bytes))
        off = row["bytecode_offset"]
        descriptors.append(FunctionDescriptor(
            i, off, row["bytecode_length"], row["requirements"], row["reserved"],
            row["block_count"], row["i32_register_count"], row["ref_register_count"],
            code_at + off))

    # Internal functions' own names live only in the debug database (a stripped module has none);
    # IREE shows them where no export names the function (iree-dump-module, backtraces).
    debug = root.table("debug_database")
    names = [f.string("local_name") or None for f in debug.tables("functions")] if debug else []
    internal_names = tuple(names[i] if i < len(names) else None for i in range(len(descriptors)))

    rwdata = tuple(r.scalar("byte_size") for r in root.tables("rwdata_segments"))
    state = root.table("module_state")
    global_bytes = state.scalar("global_bytes_capacity") if state else 0
    global_refs = state.scalar("global_ref_count") if state else 0

    # iree_vm_bytecode_module_create then resolves the types table against the instance.
    for t, type_def in zip(types, type_defs):
        if not resolves_type(t):
            raise ModuleFileError(f"{type_def.path}.full_name: no type registered with name {t!r}",
                                  type_def.field_offset("full_name"), StatusCode.NOT_FOUND)

    return ModuleFile(
        name=name,
        version=root.scalar("version"),
        requirements=requirements,
        attrs=_attrs(root),
        types=types,
        dependencies=deps,
        imported_functions=tuple(imports),
        exported_functions=tuple(exports),
        function_signatures=tuple(signatures),
        rodata_segments=tuple(segments),
        rwdata_segments=rwdata,
        global_bytes_capacity=global_bytes,
        global_ref_count=global_refs,
        function_descriptors=tuple(descriptors),
        internal_names=internal_names,
        bytecode_version=version,
        bytecode=code_bytes,
        bytecode_offset=code_at,
        zip_header=zipped,
        flatbuffer_offset=fb,
        flatbuffer_length=fb_len,
        external_rodata_offset=region,
        file_size=len(data),
    )


def read_module(source: Union[str, os.PathLike, bytes, bytearray, memoryview]) -> ModuleFile:
    """Read a `.vmfb` from a path or from its bytes. Malformed input raises ModuleFileError."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    elif isinstance(source, (str, os.PathLike)):
        try:
            with open(source, "rb") as f:
                data = f.read()
        except OSError as e:
            raise ModuleFileError(f"cannot read module file {os.fspath(source)!r}: {e}", 0) from e
    else:
        raise TypeError(f"read_module takes a path or bytes, not {type(source).__name__}")
    try:
        return _read(data)
    except ModuleFileError:
        raise
    except Exception as e:  # a read this module failed to guard: still report it as bad input
        raise ModuleFileError(f"unreadable module ({type(e).__name__}: {e})", 0) from e
