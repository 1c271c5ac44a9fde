"""The FlatBuffer of a `.vmfb` (schema runtime/src/iree/schemas/bytecode_module_def.fbs): the schema
as data, flatcc's verification of a whole buffer, and a checked reader.

- `TABLES` / `STRUCTS` / `UNIONS` declare the tables, structs and unions the loader uses (field name
  -> vtable slot and type), with the schema's enums (`FeatureBits`, `DependencyFlags`,
  `ImportFlags`) for their defaults;
- `verify_flatbuffer` is flatcc's verification of everything reachable from the root, as IREE runs
  it before reading anything;
- `Obj` (over a `Buffer`, the FlatBuffer's extent in the file) reads one table's fields by name,
  a checked wrapper around the `flatbuffers` package's `Table`: every offset, length, vtable and
  vector is checked against the FlatBuffer's extent before it is read.

Malformed input raises `ModuleFileError` (with the file offset concerned) and nothing else.
"""
from __future__ import annotations

import enum
from typing import Any, NamedTuple

from flatbuffers import number_types as N
from flatbuffers.table import Table

from .module_errors import ModuleFileError

__all__ = ["FeatureBits", "DependencyFlags", "ImportFlags", "STRING", "UNION", "UNION_VECTOR",
           "Vector", "Decl", "TABLES", "REQUIRED", "UNIONS", "STRUCTS", "verify_flatbuffer",
           "Buffer", "Obj"]


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


# --------------------------------------------------------------------------------------------------
# The schema, declaratively: table -> field -> (vtable slot, type[, default]).
#
# A type is a flatbuffers number type (scalar), STRING, UNION (the value half of a union; its type
# half is a Uint8 field in the slot before), the name of a table, or Vector(element) where the
# element is a number type, a table name or a struct name. Slot n lives at vtable offset 4 + 2 * n.

STRING = "string"
UNION = "union"
UNION_VECTOR = "union_vector"  # value half of a vector of unions; its types vector: the slot before


# A field's type is a flatbuffers number type (flatbuffers.number_types), STRING, UNION(_VECTOR),
# a table or struct name, or a Vector: Any, as the schema's code decides by which it is.
class Vector(NamedTuple):
    element: Any


class Decl(NamedTuple):
    slot: int
    type: Any
    default: Any = None


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


def _element_size(t: Any) -> int:
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
                    size = decl.type.bytewidth  # (t narrowed to `type` has none)
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


def verify_flatbuffer(data: bytes, fb: int, length: int) -> None:
    """flatcc's BytecodeModuleDef verification of the FlatBuffer at file offset `fb`."""
    # (archive.check_framing has checked the buffer header: alignment, size, identifier)
    _Verifier(data, fb, length).table(0, "BytecodeModuleDef", "BytecodeModuleDef")


# --------------------------------------------------------------------------------------------------
# The checked accessor


class Buffer:
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


class Obj:
    """One table of a declared type, its header checked; fields read by name."""

    __slots__ = ("buf", "tab", "type", "path", "size")

    def __init__(self, buf: Buffer, pos: int, type_name: str, path: str) -> None:
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
        # IREE compares names as bytes and never decodes them: a name that is not UTF-8 loads, each
        # such byte a lone surrogate (it round-trips to its bytes; abi.printable shows it as \xNN).
        return self.tab.String(self.pos + vo).decode("utf-8", errors="surrogateescape")

    def table(self, name: str) -> "Obj | None":
        vo = self._field(name)
        if vo is None:
            return None
        return Obj(self.buf, self._target(vo, name), self._decl(name).type, f"{self.path}.{name}")

    def union(self, name: str) -> "tuple[int, Obj | None]":
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
        return type_id, Obj(self.buf, holder_pos, member, f"{self.path}.{name}")

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

    def tables(self, name: str) -> list["Obj"]:
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
            out.append(Obj(self.buf, target, elem, f"{self.path}.{name}[{i}]"))
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
