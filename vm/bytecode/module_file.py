"""The `.vmfb` bytecode module as data (`ModuleFile`: names, types, imports, exports, rodata,
function descriptors, bytecode) and its loader, `read_module`.

Loading follows IREE's loader (iree_vm_bytecode_module_create, runtime/src/iree/vm/bytecode/
module.c) step by step, with the same accept/reject decisions and status codes
(`ModuleFileError.code`, vm.bytecode.module_errors):

1. the archive framing (`archive.check_framing`, archive.c): ZIP header, at least 16 bytes, the size
   prefix within the file, flatcc's buffer header;
2. flatcc's verification of the whole FlatBuffer (`flatbuffer.verify_flatbuffer`): every table,
   vtable, string, vector and union reachable from the root, the debug database included;
3. the metadata rules of iree_vm_bytecode_module_flatbuffer_verify (verifier.c), in its order:
   module feature bits the runtime has, non-empty module/type/dependency/import/export names,
   external rodata within the file, as many signatures as descriptors, export ordinals, the
   bytecode version (17.0; the refusal names the releases that make and load the module's:
   vm.releases), descriptors with blocks, bytecode and register counts in range;
4. type resolution: every entry of the types table must be a value type, one of the VM's builtin
   ref types or a ref type the runtime registers (NOT_FOUND otherwise). The registered names come
   from the caller (`read_module(..., ref_types=...)`): IREE resolves them against its instance,
   here the runtime's TypeRegistry (vm.ref), so this file knows no type beyond the VM's own.

The FlatBuffer is read through `flatbuffer.Obj`, which checks every read against its extent.
Strings are bytes to IREE: names that are not UTF-8 load (decoded with backslash escapes). Calling
conventions are kept as text; one `abi.cconv` cannot parse has `signature` None, and the bytecode
verifier (`vm.bytecode.verifier`) rejects it where IREE's does. Function bytecode is verified when a
module is instantiated (vm.bytecode), as IREE verifies it in iree_vm_bytecode_module_create.
"""
from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Collection, NamedTuple, Sequence, Union

from flatbuffers import number_types as N
from flatbuffers.table import Table

from ...abi.cconv import CconvError, Signature, parse as parse_cconv
from ...abi.printable import printable
from .archive import check_framing, external_rodata_offset
from .flatbuffer import (Buffer, DependencyFlags, FeatureBits, ImportFlags, Obj,
                                            verify_flatbuffer)
from .isa import BYTECODE_VERSION_MAJOR, BYTECODE_VERSION_MINOR
from .module_errors import ModuleFileError
from ..releases import bytecode_version_refusal
from ...base.status import StatusCode

__all__ = ["ModuleFile", "Attr", "Dependency", "FunctionSignature", "ImportedFunction",
           "ExportedFunction", "RodataSegment", "FunctionDescriptor", "read_module", "clear_read_memo", "rodata_bytes",
           "resolves_type", "takes_bytecode_version", "hal_needs", "feature_names", "AVAILABLE_FEATURES", "BUILTIN_TYPE_NAMES",
           "VALUE_TYPE_NAMES", "MAX_I32_REGISTER_COUNT", "MAX_REF_REGISTER_COUNT"]

# Function descriptor register counts the loader accepts (IREE_VM_ISA_*_REGISTER_COUNT, isa.h).
MAX_I32_REGISTER_COUNT = 0x7FFF
MAX_REF_REGISTER_COUNT = 0x3FFF

# What iree_vm_bytecode_available_features reports for the pip 3.13 runtime (both extensions built
# in; YIELD and UNWIND always): the message of a feature mismatch lists these.
AVAILABLE_FEATURES = (FeatureBits.EXT_F32 | FeatureBits.EXT_F64 | FeatureBits.YIELD
                      | FeatureBits.UNWIND)

# The VM's own ref types, in every instance whatever else it registers (iree_vm_instance_create
# registers them first); every other ref type resolves only if the caller's registry names it.
BUILTIN_TYPE_NAMES = frozenset({"vm.buffer", "vm.list"})
VALUE_TYPE_NAMES = frozenset({"i8", "i16", "i32", "i64", "f32", "f64"})


def resolves_type(full_name: str, ref_types: Collection[str]) -> bool:
    """Whether an instance whose registered ref types are named `ref_types` (without the `!`, as
    TypeRegistry.names() gives them) resolves a types-table entry
    (iree_vm_bytecode_module_resolve_type)."""
    if full_name in VALUE_TYPE_NAMES or full_name == "!vm.opaque":
        return True
    if not full_name.startswith("!"):
        return False
    name = full_name[1:]
    if name.startswith("vm.list"):  # any !vm.list<...> (even a bare prefix) is the one list type
        name = "vm.list"
    return name in BUILTIN_TYPE_NAMES or name in ref_types


def feature_names(bits: int) -> tuple[str, ...]:
    """Names of the known bits set in `bits`, then any unknown bits as hex."""
    names = [f.name for f in FeatureBits if bits & f.value and f.name]  # (a single bit's is a str)
    rest = bits & ~sum(f.value for f in FeatureBits)
    if rest:
        names.append(f"0x{rest:08x}")
    return tuple(names)


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
    # What the interpreter derives from the module alone, kept for every context made of it (its
    # functions decoded and verified per data model, vm/bytecode/module.py): a context per test
    # costs the same whatever the module's size. Not part of the module's value.
    memo: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

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


def _attrs(sig: Obj | None, name: str = "attrs") -> tuple[Attr, ...]:
    if sig is None:
        return ()
    out = []
    for a in sig.tables(name):
        key = a.string("key")
        value = a.string("value")
        out.append(Attr(key if key is not None else "", value if value is not None else ""))
    return tuple(out)


def _signature(sig: Obj | None) -> tuple[str | None, Signature | None]:
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


def _nonempty(obj: Obj, name: str, what: str) -> str:
    text = obj.string(name)
    if not text:
        raise ModuleFileError(f"{obj.path}.{name}: {what} is missing or empty",
                              obj.field_offset(name))
    return text


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


def hal_needs(deps: "tuple[Dependency, ...]",
               imports: "Sequence[ImportedFunction]") -> tuple[int | None, dict[str, str]]:
    """The module's `hal >= N` dependency (None without one) and its required `hal` imports
    (local name -> cconv): what decides which releases' runtimes resolve them."""
    minimum = next((d.minimum_version for d in deps if d.name == "hal"), None)
    return minimum, {f.full_name.split(".", 1)[1]: f.cconv for f in imports
                     if f.module == "hal" and not f.optional and f.cconv is not None}


def _read(data: bytes, ref_types: Collection[str] | None, any_version: bool) -> ModuleFile:
    zipped, fb, fb_len = check_framing(data)
    verify_flatbuffer(data, fb, fb_len)
    buf = Buffer(data, fb, fb + fb_len)
    root_at = fb + Table(data, fb).Get(N.UOffsetTFlags, fb)
    root = Obj(buf, root_at, "BytecodeModuleDef", "BytecodeModuleDef")
    region = external_rodata_offset(fb, fb_len)

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
    sig: Obj | None
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
    if not any_version and not takes_bytecode_version(major, minor):
        raise ModuleFileError(
            f"BytecodeModuleDef.bytecode_version: bytecode version mismatch; runtime supports "
            f"{BYTECODE_VERSION_MAJOR}.{BYTECODE_VERSION_MINOR}, module has {major}.{minor} "
            f"({bytecode_version_refusal(major, minor, *hal_needs(deps, imports))})",
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
        if ref_types is not None and not resolves_type(t, ref_types):
            raise ModuleFileError(f"{type_def.path}.full_name: no type registered with name "
                                  f"'{printable(t)}'",
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


def takes_bytecode_version(major: int, minor: int) -> bool:
    """Whether this runtime's loader takes a module of bytecode version major.minor (verifier.c:
    the same major, a minor no newer than its own)."""
    return major == BYTECODE_VERSION_MAJOR and minor <= BYTECODE_VERSION_MINOR


def read_module(source: Union[str, os.PathLike, bytes, bytearray, memoryview], *,
                ref_types: Collection[str] | None = None,
                any_version: bool = False) -> ModuleFile:
    """Read a `.vmfb` from a path or from its bytes. Malformed input raises ModuleFileError.

    `ref_types`: the names of the ref types registered in the instance that will run the module
    (a runtime's `TypeRegistry.names()`); each entry of the module's types table must then be a
    value type, a VM builtin type or one of them (NOT_FOUND otherwise, as IREE's loader). None
    reads the file as a tool without an instance does (iree-dump-module): the types table is
    read, not resolved. `any_version` reads a module of a bytecode version this runtime refuses
    (another IREE release's) as far as its FlatBuffer goes, as iree-dump-module lists any
    release's module; the caller then says whether the runtime takes it (`takes_bytecode_version`)."""
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
    key = (data, None if ref_types is None else frozenset(ref_types), any_version)
    with _READ_LOCK:
        found = _READ.get(key)
        if found is not None:
            _READ.move_to_end(key)
            return found
    try:
        module = _read(data, ref_types, any_version)
    except ModuleFileError:
        raise
    except Exception as e:  # a read this module failed to guard: still report it as bad input
        raise ModuleFileError(f"unreadable module ({type(e).__name__}: {e})", 0) from e
    if len(data) <= READ_MEMO_MODULE_BYTES:
        global _read_bytes
        with _READ_LOCK:
            if key not in _READ:
                _READ[key] = module
                _read_bytes += len(data)
            while _read_bytes > READ_MEMO_BYTES or len(_READ) > READ_MEMO_ENTRIES:
                (old, _, _), _ = _READ.popitem(last=False)
                _read_bytes -= len(old)
    return module


# The modules read in this process, by their bytes (and the read's terms): a module is the same
# value whatever reads it, and its memo (functions decoded and verified per data model) then serves
# every Program made of the same bytes, as IREE shares one loaded module between contexts. Tests
# and the pytest plugin's items make a Program per test of one module: each read it, verified its
# FlatBuffer and decoded its functions again (a third of a small `run`). Bounded: modules of at most
# READ_MEMO_MODULE_BYTES, READ_MEMO_BYTES of them in all, the least recently read dropped first.
READ_MEMO_MODULE_BYTES = 1 << 20
READ_MEMO_BYTES = 8 << 20
READ_MEMO_ENTRIES = 64
_READ: "OrderedDict[tuple, ModuleFile]" = OrderedDict()
_READ_LOCK = threading.Lock()
_read_bytes = 0


def clear_read_memo() -> None:
    """Forget the modules read so far (their memos with them)."""
    global _read_bytes
    with _READ_LOCK:
        _READ.clear()
        _read_bytes = 0
