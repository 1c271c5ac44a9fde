"""runtime/src/iree/hal/local/executable_library.h: the CPU executable library ABI (version 0.6).

A library exports one query function; it returns the address of an `iree_hal_executable_library_v0_t`
whose first member points at the version header. Dispatch functions are called once per workgroup
with three read-only structs: the environment, the dispatch state and the workgroup state.
Names are the C names: structs and typedef'd scalars as declared, macros and enums as Python
constants / IntEnums with the C spelling of their values in the docs.
"""
from __future__ import annotations

import struct
import enum

from ..abi.layout import Array, Field, FunctionPointer, Pointer, Scalar, Struct
from .data_model import DataModel

# --------------------------------------------------------------------------------------------------
# Versioning, features, sanitizers

IREE_HAL_EXECUTABLE_LIBRARY_VERSION_0_6 = 0x00000006
IREE_HAL_EXECUTABLE_LIBRARY_VERSION_LATEST = IREE_HAL_EXECUTABLE_LIBRARY_VERSION_0_6

# The symbol a loader looks up (dlsym) in a dynamic library.
IREE_HAL_EXECUTABLE_LIBRARY_EXPORT_NAME = "iree_hal_executable_library_query"


class LibraryFeature(enum.IntFlag):
    """iree_hal_executable_library_feature_bits_t (stored as uint32)."""

    NONE = 0


class SanitizerKind(enum.IntEnum):
    """iree_hal_executable_library_sanitizer_kind_t; MAX_ENUM = INT32_MAX pins it to 4 bytes."""

    NONE = 0
    ADDRESS = 1
    MEMORY = 2
    THREAD = 3
    UNDEFINED = 4


iree_hal_executable_library_version_t = Scalar("uint32_t", "iree_hal_executable_library_version_t")
iree_hal_executable_library_features_t = Scalar("uint32_t", "iree_hal_executable_library_features_t")
# A C enum with a value of INT32_MAX: a 4-byte container on every target (short enums included);
# no negative values, so GCC and clang pick unsigned int.
iree_hal_executable_library_sanitizer_kind_t = Scalar(
    "uint32_t", "iree_hal_executable_library_sanitizer_kind_t")

iree_hal_executable_library_header_t = Struct("iree_hal_executable_library_header_t", [
    Field("version", iree_hal_executable_library_version_t,
          doc="checked first by every loader: must not exceed what the runtime supports"),
    Field("name", Pointer("const char"), doc="for logs and diagnostics only"),
    Field("features", iree_hal_executable_library_features_t, doc="required/supported feature bits"),
    Field("sanitizer", iree_hal_executable_library_sanitizer_kind_t,
          doc="loaders refuse libraries built for a sanitizer the host does not run"),
])

# const iree_hal_executable_library_header_t** (*)(max_version, const environment_v0*)
iree_hal_executable_library_query_fn_t = FunctionPointer(
    "const iree_hal_executable_library_header_t**",
    "iree_hal_executable_library_version_t max_version, "
    "const iree_hal_executable_environment_v0_t* environment",
    alias="iree_hal_executable_library_query_fn_t")

# --------------------------------------------------------------------------------------------------
# Imports and the execution environment

iree_hal_executable_import_v0_t = FunctionPointer(
    "int", "void* params, void* context, void* reserved", alias="iree_hal_executable_import_v0_t")
iree_hal_executable_import_thunk_v0_t = FunctionPointer(
    "int", "iree_hal_executable_import_v0_t fn_ptr, void* params, void* context, void* reserved",
    alias="iree_hal_executable_import_thunk_v0_t")

iree_hal_executable_import_table_v0_t = Struct("iree_hal_executable_import_table_v0_t", [
    Field("count", Scalar("uint32_t"), doc="number of imports"),
    Field("symbols", Pointer("const char* const"),
          doc="sorted names; a leading '?' marks an optional import (NULL when unresolved)"),
])

IREE_HAL_PROCESSOR_DATA_CAPACITY_V0 = 8

iree_hal_processor_v0_t = Struct("iree_hal_processor_v0_t", [
    Field("data", Array(Scalar("uint64_t"), IREE_HAL_PROCESSOR_DATA_CAPACITY_V0),
          doc="opaque architecture-specific CPU words (iree_cpu_read_data); zeros when unknown"),
])

iree_hal_executable_environment_v0_t = Struct("iree_hal_executable_environment_v0_t", [
    Field("constants", Pointer("const uint32_t"),
          doc="executable-level specialization constants copied by the loader, or NULL"),
    Field("import_thunk", iree_hal_executable_import_thunk_v0_t,
          doc="every import call goes through it"),
    Field("import_funcs", Pointer("const iree_hal_executable_import_v0_t"),
          doc="one per import ordinal; NULL for an unresolved optional import"),
    Field("import_contexts", Pointer("const void*"), doc="1:1 with import_funcs"),
    Field("processor", iree_hal_processor_v0_t,
          doc="8 x uint64: 8-aligned except on i386, where it follows at offset 16"),
])

# --------------------------------------------------------------------------------------------------
# Per-dispatch and per-workgroup state

iree_hal_executable_dispatch_state_v0_t = Struct("iree_hal_executable_dispatch_state_v0_t", [
    Field("workgroup_size_x", Scalar("uint32_t")),
    Field("workgroup_size_y", Scalar("uint32_t")),
    Field("workgroup_size_z", Scalar("uint16_t"), doc="Z is narrow: it shares a word with constant_count"),
    Field("constant_count", Scalar("uint16_t"), doc="4-byte values in |constants|"),
    Field("workgroup_count_x", Scalar("uint32_t")),
    Field("workgroup_count_y", Scalar("uint32_t")),
    Field("workgroup_count_z", Scalar("uint16_t"), doc="hal_loader truncates its i32 argument to this"),
    Field("max_concurrency", Scalar("uint8_t")),
    Field("binding_count", Scalar("uint8_t"), doc="entries in binding_ptrs / binding_lengths"),
    Field("constants", Pointer("const uint32_t"),
          doc="hal_loader points this into the VM argument buffer"),
    Field("binding_ptrs", Pointer("void* const"), doc="base pointer of each binding"),
    Field("binding_lengths", Pointer("const size_t"), doc="byte length of each binding"),
])

iree_hal_executable_workgroup_state_v0_t = Struct("iree_hal_executable_workgroup_state_v0_t", [
    Field("workgroup_id_x", Scalar("uint32_t")),
    Field("workgroup_id_y", Scalar("uint32_t")),
    Field("workgroup_id_z", Scalar("uint16_t")),
    Field("reserved", Scalar("uint16_t"), doc="keeps processor_id 4-aligned; zero"),
    Field("processor_id", Scalar("uint32_t"), doc="logical processor executing the workgroup"),
    Field("local_memory", Pointer("void"), doc="workgroup scratch, or NULL when none was requested"),
    Field("local_memory_size", Scalar("uint32_t"), doc="bytes at local_memory (may exceed the request)"),
])

# int fn(const environment_v0*, const dispatch_state_v0*, const workgroup_state_v0*): 0 = success.
iree_hal_executable_dispatch_v0_t = FunctionPointer(
    "int",
    "const iree_hal_executable_environment_v0_t* environment, "
    "const iree_hal_executable_dispatch_state_v0_t* dispatch_state, "
    "const iree_hal_executable_workgroup_state_v0_t* workgroup_state",
    alias="iree_hal_executable_dispatch_v0_t")

IREE_HAL_EXECUTABLE_WORKGROUP_LOCAL_MEMORY_PAGE_SIZE = 4096
IREE_HAL_EXECUTABLE_MAX_CONSTANT_COUNT = 64
IREE_HAL_EXECUTABLE_MAX_BINDING_COUNT = 64

# --------------------------------------------------------------------------------------------------
# Export metadata


class DispatchFlagV0(enum.IntFlag):
    """iree_hal_executable_dispatch_flag_v0_bits_e (stored as uint64)."""

    NONE = 0
    SEQUENTIAL = 1 << 0
    WORKGROUP_SIZE_DYNAMIC = 1 << 1


class DispatchParamTypeV0(enum.IntEnum):
    """iree_hal_executable_dispatch_parameter_type_v0_e (stored as uint8)."""

    CONSTANT = 0  # offset: byte offset into the constants table
    BINDING = 1  # offset: binding ordinal
    BUFFER_PTR = 2  # offset: byte offset into the constants table; size: pointer width


class DispatchParamFlagV0(enum.IntFlag):
    """iree_hal_executable_dispatch_parameter_flag_v0_bits_e (stored as uint16)."""

    NONE = 0


# `name` of a parameter without a name: the uint16 spelling of -1.
DISPATCH_PARAMETER_UNNAMED = 0xFFFF

iree_hal_executable_dispatch_flags_v0_t = Scalar("uint64_t", "iree_hal_executable_dispatch_flags_v0_t")
iree_hal_executable_dispatch_parameter_type_v0_t = Scalar(
    "uint8_t", "iree_hal_executable_dispatch_parameter_type_v0_t")
iree_hal_executable_dispatch_parameter_flags_v0_t = Scalar(
    "uint16_t", "iree_hal_executable_dispatch_parameter_flags_v0_t")

iree_hal_executable_dispatch_attrs_v0_t = Struct("iree_hal_executable_dispatch_attrs_v0_t", [
    Field("flags", iree_hal_executable_dispatch_flags_v0_t),
    Field("local_memory_pages", Scalar("uint16_t"),
          doc="4096-byte pages of workgroup local memory required (0 = none)"),
    Field("constant_count", Scalar("uint8_t"), doc="32-bit constants the function reads (<= 64)"),
    Field("binding_count", Scalar("uint8_t"), doc="bindings the function reads (<= 64)"),
    Field("workgroup_size_x", Scalar("uint32_t"), doc="compiler-fixed workgroup size, if any"),
    Field("workgroup_size_y", Scalar("uint32_t")),
    Field("workgroup_size_z", Scalar("uint16_t")),
    Field("parameter_count", Scalar("uint16_t"), doc="entries in this export's params array"),
    Field("reserved_1", Array(Scalar("uint64_t"), 5), doc="must be zero"),
])

iree_hal_executable_dispatch_parameter_v0_t = Struct("iree_hal_executable_dispatch_parameter_v0_t", [
    Field("type", iree_hal_executable_dispatch_parameter_type_v0_t),
    Field("size", Scalar("uint8_t"), doc="bytes without padding (ignored for bindings)"),
    Field("flags", iree_hal_executable_dispatch_parameter_flags_v0_t),
    Field("name", Scalar("uint16_t"), doc="ordinal in parameter_names, 0xFFFF when unnamed"),
    Field("offset", Scalar("uint16_t"), doc="byte offset in constants or binding ordinal, by type"),
])

iree_hal_executable_dispatch_occupancy_v0_t = Struct("iree_hal_executable_dispatch_occupancy_v0_t", [
    Field("reserved", Scalar("int"), doc="placeholder; not used yet"),
])

iree_hal_executable_source_location_v0_t = Struct("iree_hal_executable_source_location_v0_t", [
    Field("line", Scalar("uint32_t")),
    Field("path_length", Scalar("uint32_t")),
    Field("path", Pointer("const char"), doc="NUL-terminated as well"),
])

iree_hal_executable_stage_location_table_v0_t = Struct("iree_hal_executable_stage_location_table_v0_t", [
    Field("count", Scalar("uint32_t")),
    Field("names", Pointer("const char* const"), doc="stage names, sorted ascending"),
    Field("locations", Pointer("const iree_hal_executable_source_location_v0_t"), doc="1:1 with names"),
])

iree_hal_executable_export_table_v0_t = Struct("iree_hal_executable_export_table_v0_t", [
    Field("count", Scalar("uint32_t"), doc="exports; every non-NULL array below has this many entries"),
    Field("ptrs", Pointer("const iree_hal_executable_dispatch_v0_t"), doc="dispatch functions by ordinal"),
    Field("attrs", Pointer("const iree_hal_executable_dispatch_attrs_v0_t"),
          doc="required by the verifier"),
    Field("params", Pointer("const iree_hal_executable_dispatch_parameter_v0_t*"),
          doc="per export, its parameter array (optional)"),
    Field("occupancy", Pointer("const iree_hal_executable_dispatch_occupancy_v0_t"), doc="optional"),
    Field("names", Pointer("const char* const"),
          doc="required when count > 0: hal_loader's lookup.function searches it"),
    Field("tags", Pointer("const char* const"), doc="optional, for verbose logging"),
    Field("parameter_names", Pointer("const char* const"), doc="optional string table"),
    Field("source_locations", Pointer("const iree_hal_executable_source_location_v0_t"), doc="optional"),
    Field("stage_locations", Pointer("const iree_hal_executable_stage_location_table_v0_t"),
          doc="optional"),
])

iree_hal_executable_constant_table_v0_t = Struct("iree_hal_executable_constant_table_v0_t", [
    Field("count", Scalar("uint32_t"),
          doc="must equal the constants a loader is given (FAILED_PRECONDITION otherwise)"),
])

iree_hal_executable_source_file_v0_t = Struct("iree_hal_executable_source_file_v0_t", [
    Field("path_length", Scalar("uint32_t")),
    Field("path", Pointer("const char")),
    Field("content_length", Scalar("uint32_t")),
    Field("content", Pointer("const uint8_t"), doc="possibly binary"),
])

iree_hal_executable_source_file_table_v0_t = Struct("iree_hal_executable_source_file_table_v0_t", [
    Field("count", Scalar("uint32_t")),
    Field("files", Pointer("const iree_hal_executable_source_file_v0_t")),
])

iree_hal_executable_library_v0_t = Struct("iree_hal_executable_library_v0_t", [
    Field("header", Pointer("const iree_hal_executable_library_header_t"),
          doc="first member: the query result is also a pointer to this pointer"),
    Field("imports", iree_hal_executable_import_table_v0_t),
    Field("exports", iree_hal_executable_export_table_v0_t),
    Field("constants", iree_hal_executable_constant_table_v0_t),
    Field("sources", iree_hal_executable_source_file_table_v0_t, doc="embedded sources for debugging"),
])

STRUCTS = [
    iree_hal_executable_library_header_t,
    iree_hal_executable_library_v0_t,
    iree_hal_executable_dispatch_attrs_v0_t,
    iree_hal_executable_dispatch_parameter_v0_t,
    iree_hal_executable_dispatch_occupancy_v0_t,
    iree_hal_executable_source_location_v0_t,
    iree_hal_executable_stage_location_table_v0_t,
    iree_hal_executable_source_file_v0_t,
    iree_hal_executable_environment_v0_t,
    iree_hal_executable_dispatch_state_v0_t,
    iree_hal_executable_workgroup_state_v0_t,
]


class DispatchLayout:
    """dispatch_state_v0 and workgroup_state_v0 on one data model, and the codecs that fill them."""

    def __init__(self, m: DataModel) -> None:
        ds = m.layout(iree_hal_executable_dispatch_state_v0_t)
        wg = m.layout(iree_hal_executable_workgroup_state_v0_t)
        self.size, self.align = ds.size, ds.align
        self.word_size, self.word_code = m.pointer_size, m.word_code
        # The counts part (sizes, counts, constant/binding counts, max_concurrency) is contiguous at
        # the start: rewritten per dispatch with one pack (constant_count, max_concurrency and
        # binding_count get the values they already hold, so the bytes are those of field stores).
        names = ("workgroup_size_x", "workgroup_size_y", "workgroup_size_z", "constant_count",
                 "workgroup_count_x", "workgroup_count_y", "workgroup_count_z", "max_concurrency",
                 "binding_count")
        fields = [ds.field(n) for n in names]
        assert fields[0].offset == 0 and all(a.offset + a.size == b.offset for a, b in zip(fields, fields[1:]))
        self.counts_fmt = struct.Struct("<" + "".join({4: "I", 2: "H", 1: "B"}[f.size] for f in fields))
        assert self.counts_fmt.size == ds.offsetof("constants")
        # The three array pointers, one word each, right after the counts.
        self.arrays_off = ds.offsetof("constants")
        self.arrays_fmt = m.field_struct([(ds.offsetof(n) - self.arrays_off, "W")
                                           for n in ("constants", "binding_ptrs", "binding_lengths")])
        self.wg_size = wg.size
        self.wg_align = max(64, wg.align)  # IREE keeps it 64-byte aligned on its stack
        self.wg_ids = tuple(wg.field(f"workgroup_id_{a}").offset for a in "xyz")
        self.wg_processor_off = wg.field("processor_id").offset

    def block_size(self, constant_count: int, binding_count: int) -> int:
        """dispatch_state_v0 followed by its constants (uint32), binding pointers and lengths (words)."""
        return self.size + 4 * max(constant_count, 1) + 2 * self.word_size * max(binding_count, 1) + self.word_size
