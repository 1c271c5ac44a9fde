"""runtime/src/iree/hal/buffer.h, buffer_heap.c and buffer_view.h/.c: buffers, mappings, access bits,
element types, views.

The heap buffer (buffer_heap.c, private) is declared for the size of the slab header it allocates in
front of a buffer's data: only that size is used (the HAL objects' other fields live in Python). It is
IREE's default build: IREE_STATISTICS_ENABLE on, so the statistics pointer is present.

The buffer view is private to buffer_view.c; its field list is declared here as IREE allocates it:
one block of `sizeof(header) + rank * sizeof(iree_hal_dim_t)` bytes with the dims in a flexible
`shape[]`.
"""
from __future__ import annotations

import struct
import enum
from typing import NamedTuple

from ..abi.errors import IreeAbiError
from ..abi.layout import Array, Field, FunctionPointer, Pointer, Scalar, Struct, Union
from ..abi.targets import Target, get as _get_target

from .base import iree_allocator_t, iree_byte_span_t, iree_device_size_t, iree_host_size_t
from .ref import iree_atomic_ref_count_t
from .data_model import DataModel


class ElementTypeError(IreeAbiError):
    """An element type that cannot be made or held: a numerical type or bit count that does not fit
    the encoding, or a type ireeabi cannot hold in a numpy array (sub-byte, zero-width)."""


# --------------------------------------------------------------------------------------------------
# buffer.h: bits


def iree_hal_whole_buffer(target: "Target | str") -> int:
    """IREE_HAL_WHOLE_BUFFER: (iree_device_size_t)-1, all ones at the target's device-size width."""
    t = _get_target(target)
    return (1 << (8 * t.scalar(iree_device_size_t.c_type).size)) - 1


class MemoryType(enum.IntFlag):
    """iree_hal_memory_type_bits_t (uint32)."""

    NONE = 0
    OPTIMAL = 1 << 0
    HOST_VISIBLE = 1 << 1
    HOST_COHERENT = 1 << 2
    HOST_CACHED = 1 << 3
    HOST_LOCAL = HOST_VISIBLE | HOST_COHERENT | (1 << 6)
    OPTIMAL_FOR_HOST = OPTIMAL | HOST_LOCAL
    DEVICE_VISIBLE = 1 << 4
    DEVICE_LOCAL = DEVICE_VISIBLE | (1 << 5)
    OPTIMAL_FOR_DEVICE = OPTIMAL | DEVICE_LOCAL


class MemoryAccess(enum.IntFlag):
    """iree_hal_memory_access_bits_t (stored as uint16: iree_hal_memory_access_t)."""

    NONE = 0
    READ = 1 << 0
    WRITE = 1 << 1
    DISCARD = 1 << 2
    DISCARD_WRITE = WRITE | DISCARD
    MAY_ALIAS = 1 << 3
    UNALIGNED = 1 << 4
    ANY = 1 << 5  # bypasses access validation
    ALL = READ | WRITE | DISCARD


class BufferUsage(enum.IntFlag):
    """iree_hal_buffer_usage_bits_t (uint32): the bits the inline HAL allocates with, and their parts."""

    NONE = 0
    TRANSFER_SOURCE = 1 << 0
    TRANSFER_TARGET = 1 << 1
    TRANSFER = TRANSFER_SOURCE | TRANSFER_TARGET
    DISPATCH_INDIRECT_PARAMETERS = 1 << 8
    DISPATCH_UNIFORM_READ = 1 << 9
    DISPATCH_STORAGE_READ = 1 << 10
    DISPATCH_STORAGE_WRITE = 1 << 11
    DISPATCH_STORAGE = DISPATCH_STORAGE_READ | DISPATCH_STORAGE_WRITE
    DISPATCH_IMAGE_READ = 1 << 12
    DISPATCH_IMAGE_WRITE = 1 << 13
    DISPATCH_IMAGE = DISPATCH_IMAGE_READ | DISPATCH_IMAGE_WRITE
    DISPATCH = DISPATCH_INDIRECT_PARAMETERS | DISPATCH_UNIFORM_READ | DISPATCH_STORAGE | DISPATCH_IMAGE
    SHARING_EXPORT = 1 << 16
    SHARING_REPLICATE = 1 << 17
    SHARING_CONCURRENT = 1 << 18
    SHARING_IMMUTABLE = 1 << 19
    MAPPING_SCOPED = 1 << 24
    MAPPING_PERSISTENT = 1 << 25
    MAPPING_OPTIONAL = 1 << 26
    MAPPING_ACCESS_RANDOM = 1 << 27
    MAPPING_ACCESS_SEQUENTIAL_WRITE = 1 << 28
    MAPPING = MAPPING_SCOPED | MAPPING_ACCESS_RANDOM
    DEFAULT = TRANSFER | DISPATCH_STORAGE


class MappingMode(enum.IntFlag):
    """iree_hal_mapping_mode_bits_t (uint32)."""

    SCOPED = 1 << 0  # map_range retains the buffer until unmap
    PERSISTENT = 1 << 1  # the caller keeps the buffer alive


iree_hal_memory_type_t = Scalar("uint32_t", "iree_hal_memory_type_t")
iree_hal_memory_access_t = Scalar("uint16_t", "iree_hal_memory_access_t")
iree_hal_buffer_usage_t = Scalar("uint32_t", "iree_hal_buffer_usage_t")
iree_hal_mapping_mode_t = Scalar("uint32_t", "iree_hal_mapping_mode_t")

# --------------------------------------------------------------------------------------------------
# buffer.h: mappings

iree_hal_buffer_mapping_impl_t = Struct("iree_hal_buffer_mapping_impl_t", [
    Field("byte_offset", iree_device_size_t, doc="where the mapped range starts in the buffer"),
    Field("allowed_access", iree_hal_memory_access_t, doc="validation only"),
    # The uint32 unit of these bit-fields starts at the offset of allowed_access (a uint16), so
    # is_persistent lands in its upper half: byte 34 on LP64, not the next 4-byte unit.
    Field("is_persistent", Scalar("uint32_t"), 1, doc="mapped with MappingMode.PERSISTENT"),
    Field("reserved_flags", Scalar("uint32_t"), 31, doc="31 bits cannot share the unit: next uint32"),
    Field("reserved", Array(Scalar("uint64_t"), 1),
          doc="implementation data; the heap buffer never writes it, others (e.g. Vulkan) do"),
])

iree_hal_buffer_mapping_t = Struct("iree_hal_buffer_mapping_t", [
    Field("contents", iree_byte_span_t, doc="the mapped bytes (set by the buffer implementation)"),
    Field("buffer", Pointer("struct iree_hal_buffer_t"), doc="retained while a SCOPED mapping lives"),
    Field("impl", iree_hal_buffer_mapping_impl_t, doc="private to the HAL: do not modify"),
])

# --------------------------------------------------------------------------------------------------
# resource.h, buffer.h and buffer_heap.c: the heap buffer object

iree_hal_resource_t = Struct("iree_hal_resource_t", [
    Field("ref_count", iree_atomic_ref_count_t, doc="destroy through the vtable at 0"),
    Field("vtable", Pointer("const void"), doc="must start with iree_hal_resource_vtable_t"),
])

iree_hal_buffer_placement_t = Struct("iree_hal_buffer_placement_t", [
    Field("device", Pointer("iree_hal_device_t"), doc="unretained; NULL for a free-floating host buffer"),
    Field("queue_affinity", Scalar("uint64_t", "iree_hal_queue_affinity_t")),
    Field("flags", Scalar("uint32_t", "iree_hal_buffer_placement_flags_t")),
    Field("reserved", Scalar("uint32_t")),
])

iree_hal_buffer_t = Struct("iree_hal_buffer_t", [
    Field("resource", iree_hal_resource_t, doc="must be at 0"),
    Field("allocated_buffer", Pointer("iree_hal_buffer_t"), doc="itself for an allocation"),
    Field("allocation_size", iree_device_size_t),
    Field("byte_offset", iree_device_size_t),
    Field("byte_length", iree_device_size_t),
    Field("placement", iree_hal_buffer_placement_t),
    Field("pooling_allocator", Pointer("iree_hal_allocator_t")),
    Field("preserve_count", Scalar("uint32_t", "iree_atomic_uint32_t")),
    Field("memory_type", iree_hal_memory_type_t),
    Field("allowed_usage", iree_hal_buffer_usage_t),
    Field("allowed_access", iree_hal_memory_access_t),
    Field("reserved", Scalar("uint16_t")),
    Field("flags", Scalar("uint32_t")),
])

iree_hal_buffer_release_callback_t = Struct("iree_hal_buffer_release_callback_t", [
    Field("fn", FunctionPointer("void", "void* user_data, struct iree_hal_buffer_t* buffer",
                                alias="iree_hal_buffer_release_fn_t")),
    Field("user_data", Pointer("void")),
])

iree_hal_heap_buffer_storage_t = Union("iree_hal_heap_buffer_storage_t", [
    Field("data_allocator", iree_allocator_t, doc="IREE_HAL_HEAP_BUFFER_STORAGE_MODE_SPLIT"),
    Field("release_callback", iree_hal_buffer_release_callback_t,
          doc="IREE_HAL_HEAP_BUFFER_STORAGE_MODE_EXTERNAL"),
], doc="anonymous in buffer_heap.c")

iree_hal_heap_buffer_t = Struct("iree_hal_heap_buffer_t", [
    Field("base", iree_hal_buffer_t, doc="base.flags holds the storage mode"),
    Field("host_allocator", iree_allocator_t, doc="the metadata's allocator"),
    Field("data", iree_byte_span_t),
    Field("storage", iree_hal_heap_buffer_storage_t),
    Field("statistics", Pointer("iree_hal_heap_allocator_statistics_t"), doc="IREE_STATISTICS only"),
], doc="private to buffer_heap.c; a slab allocation puts the data after its aligned size")


def heap_slab_header_size(target: "Target | str") -> int:
    """iree_hal_heap_buffer_allocate_slab's header: iree_host_align(iree_sizeof_struct(heap buffer),
    iree_max_align_t) bytes in front of the data, added to the allocation size unchecked."""
    t = _get_target(target)
    size = iree_hal_heap_buffer_t.layout(t).size
    size = -(-size // t.max_align) * t.max_align  # iree_sizeof_struct
    return -(-size // t.max_align) * t.max_align  # iree_host_align(..., iree_max_align_t)


# --------------------------------------------------------------------------------------------------
# buffer_view.h: element and encoding types


class NumericalType(enum.IntEnum):
    """iree_hal_numerical_type_bits_t (uint8): the high byte of an element type."""

    UNKNOWN = 0x00  # opaque: bytes cannot be interpreted, only counted
    INTEGER = 0x10  # signless
    INTEGER_SIGNED = 0x11
    INTEGER_UNSIGNED = 0x12
    BOOLEAN = 0x13
    FLOAT = 0x20
    FLOAT_IEEE = 0x21
    FLOAT_BRAIN = 0x22
    FLOAT_COMPLEX = 0x23
    FLOAT_8_E5M2 = 0x24
    FLOAT_8_E4M3FN = 0x25
    FLOAT_8_E5M2_FNUZ = 0x26
    FLOAT_8_E4M3_FNUZ = 0x27
    FLOAT_8_E8M0_FNU = 0x28


def iree_hal_make_element_type(numerical_type: int, bit_count: int) -> int:
    """IREE_HAL_ELEMENT_TYPE_VALUE: `(numerical_type << 24) | bit_count` as a uint32.

    IREE's macro does not mask; a bit count above 255 would corrupt the numerical-type byte (and the
    other bytes are not read back), so it is an error here.
    """
    if not 0 <= int(numerical_type) <= 0xFF:
        raise ElementTypeError(f"numerical type {numerical_type!r} does not fit in 8 bits")
    if not 0 <= int(bit_count) <= 0xFF:
        raise ElementTypeError(f"bit count {bit_count!r} outside 0..255 (the element type's low byte)")
    return (int(numerical_type) << 24) | int(bit_count)


def _check_u32(element_type: int) -> int:
    if not 0 <= int(element_type) <= 0xFFFFFFFF:
        raise ElementTypeError(f"element type {element_type!r} is not a uint32")
    return int(element_type)


def iree_hal_element_numerical_type(element_type: int) -> int:
    """The high byte (`element_type >> 24`)."""
    return _check_u32(element_type) >> 24


def iree_hal_element_bit_count(element_type: int) -> int:
    """The low byte (`element_type & 0xFF`); bits 8..23 are ignored, as in IREE."""
    return _check_u32(element_type) & 0xFF


def iree_hal_element_dense_byte_count(element_type: int) -> int:
    """Bytes per element rounded up: `(bits + 7) / 8`."""
    return (iree_hal_element_bit_count(element_type) + 7) // 8


def iree_hal_element_packed_byte_count(element_type: int, element_count: int) -> int:
    """Bytes of `element_count` packed elements: `(count * bits + 7) / 8`."""
    return (element_count * iree_hal_element_bit_count(element_type) + 7) // 8


def _all_bits(value: int, bits: int) -> bool:
    return value & bits == bits


def iree_hal_element_numerical_type_is_opaque(element_type: int) -> bool:
    return iree_hal_element_numerical_type(element_type) == NumericalType.UNKNOWN


def iree_hal_element_numerical_type_is_integer(element_type: int) -> bool:
    """All INTEGER bits set: signless, signed, unsigned and boolean all qualify."""
    return _all_bits(iree_hal_element_numerical_type(element_type), NumericalType.INTEGER)


def iree_hal_element_numerical_type_is_boolean(element_type: int) -> bool:
    return _all_bits(iree_hal_element_numerical_type(element_type), NumericalType.BOOLEAN)


def iree_hal_element_numerical_type_is_float(element_type: int) -> bool:
    """All FLOAT bits set: IEEE, brain, complex and the f8 zoo all qualify."""
    return _all_bits(iree_hal_element_numerical_type(element_type), NumericalType.FLOAT)


class DecodedElementType(NamedTuple):
    numerical_type: "NumericalType | int"  # an int when IREE defines no such type
    bit_count: int


def iree_hal_format_element_type(element_type: int) -> str:
    """iree_hal_format_element_type: `f32`, `i1` (boolean), `si8`, `ui16`, `*8`..."""
    element_type &= 0xFFFFFFFF
    names: dict[int, str] = {ElementType.FLOAT_8_E5M2: "f8E5M2", ElementType.FLOAT_8_E4M3_FN: "f8E4M3FN",
             ElementType.FLOAT_8_E5M2_FNUZ: "f8E5M2FNUZ",
             ElementType.FLOAT_8_E4M3_FNUZ: "f8E4M3FNUZ",
             ElementType.FLOAT_8_E8M0_FNU: "f8E8M0FNU"}
    if element_type in names:
        return names[element_type]
    bits = iree_hal_element_bit_count(element_type)
    prefixes: dict[int, str] = {
        NumericalType.BOOLEAN: "i", NumericalType.INTEGER: "i",
        NumericalType.INTEGER_SIGNED: "si", NumericalType.INTEGER_UNSIGNED: "ui",
        NumericalType.FLOAT_IEEE: "f", NumericalType.FLOAT_BRAIN: "bf",
        NumericalType.FLOAT_COMPLEX: "cf"}
    prefix = prefixes.get(iree_hal_element_numerical_type(element_type), "*")
    if iree_hal_element_numerical_type(element_type) == NumericalType.BOOLEAN:
        bits = 1
    return f"{prefix}{bits}"


def decode_element_type(element_type: int) -> DecodedElementType:
    """Split an element type into its numerical type (as NumericalType when known) and bit count."""
    n = iree_hal_element_numerical_type(element_type)
    try:
        numerical: "NumericalType | int" = NumericalType(n)
    except ValueError:
        numerical = n
    return DecodedElementType(numerical, iree_hal_element_bit_count(element_type))


_mk = iree_hal_make_element_type


class ElementType(enum.IntEnum):
    """iree_hal_element_types_t (uint32)."""

    NONE = _mk(NumericalType.UNKNOWN, 0)
    OPAQUE_8 = _mk(NumericalType.UNKNOWN, 8)
    OPAQUE_16 = _mk(NumericalType.UNKNOWN, 16)
    OPAQUE_32 = _mk(NumericalType.UNKNOWN, 32)
    OPAQUE_64 = _mk(NumericalType.UNKNOWN, 64)
    BOOL_8 = _mk(NumericalType.BOOLEAN, 8)
    INT_4 = _mk(NumericalType.INTEGER, 4)
    SINT_4 = _mk(NumericalType.INTEGER_SIGNED, 4)
    UINT_4 = _mk(NumericalType.INTEGER_UNSIGNED, 4)
    INT_8 = _mk(NumericalType.INTEGER, 8)
    SINT_8 = _mk(NumericalType.INTEGER_SIGNED, 8)
    UINT_8 = _mk(NumericalType.INTEGER_UNSIGNED, 8)
    INT_16 = _mk(NumericalType.INTEGER, 16)
    SINT_16 = _mk(NumericalType.INTEGER_SIGNED, 16)
    UINT_16 = _mk(NumericalType.INTEGER_UNSIGNED, 16)
    INT_32 = _mk(NumericalType.INTEGER, 32)
    SINT_32 = _mk(NumericalType.INTEGER_SIGNED, 32)
    UINT_32 = _mk(NumericalType.INTEGER_UNSIGNED, 32)
    INT_64 = _mk(NumericalType.INTEGER, 64)
    SINT_64 = _mk(NumericalType.INTEGER_SIGNED, 64)
    UINT_64 = _mk(NumericalType.INTEGER_UNSIGNED, 64)
    FLOAT_16 = _mk(NumericalType.FLOAT_IEEE, 16)
    FLOAT_32 = _mk(NumericalType.FLOAT_IEEE, 32)
    FLOAT_64 = _mk(NumericalType.FLOAT_IEEE, 64)
    BFLOAT_16 = _mk(NumericalType.FLOAT_BRAIN, 16)
    COMPLEX_FLOAT_64 = _mk(NumericalType.FLOAT_COMPLEX, 64)
    COMPLEX_FLOAT_128 = _mk(NumericalType.FLOAT_COMPLEX, 128)
    FLOAT_8_E5M2 = _mk(NumericalType.FLOAT_8_E5M2, 8)
    FLOAT_8_E4M3_FN = _mk(NumericalType.FLOAT_8_E4M3FN, 8)
    FLOAT_8_E5M2_FNUZ = _mk(NumericalType.FLOAT_8_E5M2_FNUZ, 8)
    FLOAT_8_E4M3_FNUZ = _mk(NumericalType.FLOAT_8_E4M3_FNUZ, 8)
    FLOAT_8_E8M0_FNU = _mk(NumericalType.FLOAT_8_E8M0_FNU, 8)


class EncodingType(enum.IntEnum):
    """iree_hal_encoding_types_t (uint32)."""

    OPAQUE = 0  # unknown: a view assert accepts any expected encoding against it
    DENSE_ROW_MAJOR = 1


iree_hal_element_type_t = Scalar("uint32_t", "iree_hal_element_type_t")
iree_hal_encoding_type_t = Scalar("uint32_t", "iree_hal_encoding_type_t")
iree_hal_dim_t = Scalar("size_t", "iree_hal_dim_t")  # iree_device_size_t

# --------------------------------------------------------------------------------------------------
# buffer_view.c: the view object

iree_hal_buffer_view_t = Struct("iree_hal_buffer_view_t", [
    Field("ref_count", iree_atomic_ref_count_t, doc="1 after create; destroy at 0"),
    Field("host_allocator", iree_allocator_t, doc="frees this single allocation"),
    Field("buffer", Pointer("iree_hal_buffer_t"), doc="retained for the view's lifetime"),
    Field("element_type", iree_hal_element_type_t),
    Field("encoding_type", iree_hal_encoding_type_t),
    Field("byte_length", iree_device_size_t,
          doc="ceil(prod(shape) * bits / 8); not checked against the buffer's length"),
    Field("shape_rank", iree_host_size_t),
    Field("shape", Array(iree_hal_dim_t, None), doc="shape_rank dims, allocated with the header"),
], doc="private to buffer_view.c; one allocation of sizeof + rank * sizeof(iree_hal_dim_t)")


def buffer_view_allocation_size(target: "Target | str", rank: int) -> int:
    """Bytes iree_hal_buffer_view_create requests for a view of `rank` dims."""
    if rank < 0:
        raise IreeAbiError(f"negative shape rank {rank}")
    t = _get_target(target)
    lay = iree_hal_buffer_view_t.layout(t)
    return lay.size + rank * t.scalar(iree_hal_dim_t.c_type).size


STRUCTS = [iree_hal_buffer_mapping_impl_t, iree_hal_buffer_mapping_t, iree_hal_heap_buffer_t,
           iree_hal_buffer_view_t]


HEAP_BUFFER_ALIGNMENT = 64  # IREE_HAL_HEAP_BUFFER_ALIGNMENT: heap buffers are at least this aligned


class HalBufferLayout:
    """iree_hal_buffer_mapping_t and the heap buffer's sizes on one data model."""

    def __init__(self, m: DataModel) -> None:
        mapping = m.layout(iree_hal_buffer_mapping_t)
        self.whole_buffer = iree_hal_whole_buffer(m.target)  # also the device-size mask
        self.mask = self.whole_buffer
        self.mapping_size = mapping.size
        # allowed_access (uint16) and the is_persistent bit share one 32-bit bitfield unit: the mapping
        # is written and read with that unit as one uint32 (little-endian, as every target).
        unit_off = mapping.offsetof("impl.is_persistent")
        access_off = mapping.offsetof("impl.allowed_access")
        persistent = iree_hal_buffer_mapping_impl_t.layout(m.target).field("is_persistent")
        assert persistent.size == 4 and persistent.bits == 1
        assert unit_off <= access_off and access_off + 2 <= unit_off + 4
        self.access_shift = 8 * (access_off - unit_off)
        assert persistent.bit_offset is not None  # a bit-field's
        self.persistent_shift = persistent.bit_offset
        assert self.persistent_shift is not None and not (0xFFFF << self.access_shift) & (1 << self.persistent_shift)
        # map_range zeroes the whole mapping and sets these fields: one pack, the rest zero padding.
        self.map_fmt = m.field_struct([(mapping.offsetof("contents.data"), "W"),
                                        (mapping.offsetof("contents.data_length"), "W"),
                                        (mapping.offsetof("buffer"), "W"),
                                        (mapping.offsetof("impl.byte_offset"), "W"),
                                        (unit_off, "I")], mapping.size)
        self.zero_mapping = struct.Struct(f"{mapping.size}x")  # pack_into writes the zeroed mapping
        # unmap_range reads the buffer and the unit holding is_persistent.
        self.unmap_fmt = m.field_struct([(mapping.offsetof("buffer"), "W"), (unit_off, "I")])
        # iree_hal_heap_buffer_allocate_slab puts the data after the heap buffer's aligned header and
        # adds the allocation size to it unchecked (160 on LP64: iree-run-module 3.13 measured a size of
        # -160 as the one whose slab total is 0). Only the status of a wrapping (negative) size
        # depends on it. iree_allocator_malloc_aligned refuses larger totals.
        self.slab_header = heap_slab_header_size(m.target)
        self.slab_limit = self.mask - m.pointer_size - max(HEAP_BUFFER_ALIGNMENT, m.max_align)


_MAX_CACHED_RANK = 16


class BufferViewLayout:
    """iree_hal_buffer_view_t on one data model, and the codecs of the fields the HAL reads."""

    def __init__(self, m: DataModel) -> None:
        view = m.layout(iree_hal_buffer_view_t)
        self.size = view.size
        self.dim = m.target.scalar(iree_hal_dim_t.c_type).size
        assert self.dim == m.pointer_size
        self.word_code = m.word_code
        self.mask = m.word_mask
        # create writes the allocator, then (after retaining the buffer) the fields from `buffer` on;
        # the ref count last, as adopt sets it once the view is complete. Offsets relative to each
        # group's first field, packed there, so nothing else is touched.
        self.allocator_off = view.offsetof("host_allocator")
        self.allocator_fmt = m.field_struct([(view.offsetof("host_allocator.self") - self.allocator_off, "W"),
                                              (view.offsetof("host_allocator.ctl") - self.allocator_off, "W")])
        self.body_off = view.offsetof("buffer")
        self.body_fmt = m.field_struct([(view.offsetof(name) - self.body_off, code) for name, code in
                                         (("buffer", "W"), ("element_type", "I"), ("encoding_type", "I"),
                                          ("byte_length", "W"), ("shape_rank", "W"))])
        assert "x" not in self.allocator_fmt.format and "x" not in self.body_fmt.format
        assert self.body_off + self.body_fmt.size == self.size  # the header ends with the rank (dims follow)
        self.buffer_fmt = m.field_struct([(view.offsetof("buffer"), "W")])
        self.element_type_fmt = m.field_struct([(view.offsetof("element_type"), "I")])
        self.encoding_type_fmt = m.field_struct([(view.offsetof("encoding_type"), "I")])
        self.rank_fmt = m.field_struct([(view.offsetof("shape_rank"), "W")])
        self.byte_length_fmt = m.field_struct([(view.offsetof("byte_length"), "W")])
        # (element_type, encoding_type, shape_rank): what buffer_view.assert reads from the header.
        self.assert_fmt = m.field_struct([(view.offsetof("element_type"), "I"),
                                           (view.offsetof("encoding_type"), "I"),
                                           (view.offsetof("shape_rank"), "W")])
        self._dims: dict[int, struct.Struct] = {}

    def dims_fmt(self, rank: int) -> struct.Struct:
        """`rank` dims in one codec (cached for the ranks views usually have)."""
        fmt = self._dims.get(rank)
        if fmt is None:
            fmt = struct.Struct(f"<{rank}{self.word_code}")
            if rank <= _MAX_CACHED_RANK:
                self._dims[rank] = fmt
        return fmt
