"""iree_vm_buffer_t on real memory: runtime/src/iree/vm/buffer.c, with IREE #24827's destroy fix.

A `BufferType` registers the `vm.buffer` ref type (counter tag 0) on a heap and provides the buffer
API over handles in tracked memory:

- create / clone make one aligned co-allocation [handle | pad | data] with
  prefix = iree_sizeof_struct(iree_vm_buffer_t) and tag the handle COALLOCATED (internally);
- initialize puts a handle wherever the caller wants it (counter 1); initialize_module_storage makes a
  module-owned handle (counter 0, ORIGIN_MODULE, null allocator, retains its module on first retain);
- destroy (when a release reaches 0): module storage releases its module; otherwise, with the fix,
  only COALLOCATED handles take the aligned-free path and any other handle is handed to its own
  allocator's FREE. In legacy mode (`legacy=True`, or the module switch `LEGACY_DESTROY` when the
  type leaves it None) the pre-fix rule applies: every non-module handle goes to free_aligned.

Mapping follows buffer.c exactly, including its C arithmetic on iree_host_size_t: offset and length
are rounded down with `x & ~(alignment - 1)` and the bounds check `offset + length > data_length`
wraps. Where that wrap lets IREE's check pass for a range outside the data, the access IREE would make
is reported as BufferOverflowError (a HeapError) instead of being made; memory is only ever touched
through the heap. create / clone add prefix + length unchecked as well: the allocator sees the wrapped
total (its statuses), and a block it hands out is freed again and the overflow reported.

NULL handling follows the build IREE ships: a vm.buffer-typed ref with a NULL ptr passes check_deref
(0) and reads as "" through text() (iree_vm_buffer_as_string); where IREE would dereference NULL the
call fails with INVALID_ARGUMENT "buffer is NULL" (or a HeapError) instead.
"""
from __future__ import annotations

import struct

from typing import Any, Iterable

import numpy as np

from ..abi.errors import IreeAbiError
from ..layouts import base as _base
from ..layouts import buffer as _buffer
from . import allocator as _alloc
from . import host, module_ref
from . import ref as _ref
from .allocator import AllocatorT
from .heap import Heap, HeapError
from .ref import Ref, TypeRegistry
from .status import StatusCode, StatusError

BufferAccess = _buffer.BufferAccess


def field_struct(items: Iterable[tuple[int, str]], size: int | None = None) -> struct.Struct:
    """A little-endian `struct.Struct` over fields at the given byte offsets ((offset, code) pairs, in
    any order; code "W" is one host word), the gaps as 'x' padding, padded to `size` if given: one
    unpack_from / pack_into for several fields of a struct laid out by the catalog. Offsets count
    from where it is applied, and a pack zeroes every gap byte (from offset 0): to write some fields
    only, give offsets relative to the first one and pack there."""
    fmt, at = "<", 0
    for offset, code in sorted(items):
        code = host.WORD.format[-1] if code == "W" else code
        if offset < at:
            raise ValueError(f"field at {offset} overlaps the previous one (ends at {at})")
        fmt += f"{offset - at}x{code}" if offset > at else code
        at = offset + struct.calcsize("<" + code)
    if size is not None:
        if size < at:
            raise ValueError(f"fields end at {at}, past the struct's {size} bytes")
        fmt += f"{size - at}x" if size > at else ""
    return struct.Struct(fmt)


LEGACY_DESTROY = False  # pre-#24827 destroy rule for types registered with legacy=None

_BUF = host.layout(_buffer.iree_vm_buffer_t)
BUFFER_SIZE = _BUF.size
_COUNTER_OFF = _BUF.offsetof("ref_object.counter")
_ACCESS_OFF = _BUF.field("access").offset
_DATA_OFF = _BUF.offsetof("data.data")
_LENGTH_OFF = _BUF.offsetof("data.data_length")
# data pointer and length read together (iree_byte_span_t: adjacent words) on the mapping hot path.
_SPAN_FMT = struct.Struct("<" + host.WORD.format[-1] * 2)
assert _LENGTH_OFF == _DATA_OFF + host.POINTER_SIZE
_ALLOCATOR_OFF = _BUF.field("allocator").offset
_MODULE_OFF = _BUF.field("storage_module").offset
PREFIX_SIZE = _base.iree_sizeof_struct(_buffer.iree_vm_buffer_t, host.HOST)
_MASK = host.WORD_MASK
_COALLOCATED = int(BufferAccess.COALLOCATED)
_MUTABLE = int(BufferAccess.MUTABLE)
_ALLOC_SELF_OFF = _ALLOCATOR_OFF + _alloc._SELF_OFF
_ALLOC_CTL_OFF = _ALLOCATOR_OFF + _alloc._CTL_OFF
# The whole handle in one pack (initialize writes every field; the layout has no gaps to preserve).
_HANDLE_FMT = field_struct([(_COUNTER_OFF, "i"), (_ACCESS_OFF, "I"), (_DATA_OFF, "W"), (_LENGTH_OFF, "W"),
                            (_ALLOC_SELF_OFF, "W"), (_ALLOC_CTL_OFF, "W"), (_MODULE_OFF, "W")])
assert _HANDLE_FMT.size == BUFFER_SIZE and "x" not in _HANDLE_FMT.format
# What destroy reads: access, allocator {self, ctl}, storage module.
_DESTROY_FMT = field_struct([(_ACCESS_OFF, "I"), (_ALLOC_SELF_OFF, "W"), (_ALLOC_CTL_OFF, "W"),
                             (_MODULE_OFF, "W")])
_WORD_FROM = host.WORD.unpack_from
_free_with = _alloc.free_with
_I32_FROM = host.I32.unpack_from
_I32_INTO = host.I32.pack_into
_I32_MIN = 1 << 31
_ELEMENT_LENGTHS = (1, 2, 4, 8)


class AbortError(IreeAbiError):
    """What iree_abort() would do: a broken invariant the runtime cannot continue after."""


class BufferOverflowError(HeapError):
    """An access buffer.c would make outside the buffer's data although its bounds check passed (the
    unchecked `offset + length` wrapped, or an element loop ran past a wrapped length). Reported before
    any byte is touched: inside a co-allocation the heap alone could not see it (the handle sits right
    before the data)."""


class BufferViewError(IreeAbiError):
    """A numpy view whose dtype does not tile the buffer."""


def _hsize(x: int, what: str) -> int:
    """An iree_host_size_t argument: any int, reduced modulo 2**bits as C converts it."""
    if type(x) is int:  # hot path
        return x & _MASK
    if not isinstance(x, int) or isinstance(x, bool):
        raise StatusError(StatusCode.INVALID_ARGUMENT, f"{what} must be an integer, got {x!r}")
    return x & _MASK


def _wrapped_total(heap: Heap, allocator: AllocatorT, length: int, alignment: int) -> None:
    """create / clone when `prefix + length` does not fit iree_host_size_t. buffer.c adds the two
    unchecked and hands the wrapped total to iree_allocator_malloc_aligned, so its statuses come in
    its order (a total of 0 is INVALID_ARGUMENT, then the alignment, then the allocator's own). If
    the small block is allocated, IREE would write the handle and a `length`-byte data span past it:
    the block is freed again and that overflow reported instead of made."""
    total = (PREFIX_SIZE + length) & _MASK
    block = _alloc.malloc_aligned(heap, allocator, total, alignment, PREFIX_SIZE)
    _alloc.free_aligned(heap, allocator, block)
    raise BufferOverflowError(
        f"buffer of {length} bytes: prefix {PREFIX_SIZE} + length wraps to a {total}-byte block; "
        f"buffer.c would write the handle and a {length}-byte data span past it", block)


class BufferType:
    """The vm.buffer ref type on one heap, and the buffer API."""

    def __init__(self, registry: TypeRegistry, *, legacy: bool | None = None) -> None:
        self.registry = registry
        self.heap: Heap = registry.heap
        self._legacy = legacy
        self.ref_type = registry.define(_buffer.VM_BUFFER_TYPE_NAME, self._destroy, offsetof_counter=0)
        self.type = self.ref_type.type

    @property
    def legacy(self) -> bool:
        return LEGACY_DESTROY if self._legacy is None else self._legacy

    def close(self) -> None:
        self.ref_type.close()

    # -- fields -----------------------------------------------------------------------------------

    def _check(self, buf: int) -> None:
        self._cell(buf)

    def _cell(self, buf: int) -> tuple[Any, int]:
        """The NULL check and one heap check of the whole handle; (buffer, offset) of its bytes for
        the reads and writes that follow at once (nothing freed in between)."""
        if not buf:
            raise StatusError(StatusCode.INVALID_ARGUMENT, "buffer is NULL")
        return self.heap.cell(buf, BUFFER_SIZE)

    def counter(self, buf: int) -> int:
        return self.heap.read_i32(buf + _COUNTER_OFF)

    def raw_access(self, buf: int) -> int:
        """The access word as stored (including the internal COALLOCATED bit)."""
        return self.heap.read_i32(buf + _ACCESS_OFF) & 0xFFFFFFFF

    def access(self, buf: int) -> BufferAccess:
        return BufferAccess(self.raw_access(buf) & _buffer.PUBLIC_ACCESS_MASK)

    def is_coallocated(self, buf: int) -> bool:
        return bool(self.raw_access(buf) & _COALLOCATED)

    def data(self, buf: int) -> int:
        return self.heap.read_word(buf + _DATA_OFF)

    def length(self, buf: int) -> int:
        return self.heap.read_word(buf + _LENGTH_OFF)

    def allocator(self, buf: int) -> AllocatorT:
        return _alloc.read(self.heap, buf + _ALLOCATOR_OFF)

    def storage_module(self, buf: int) -> int:
        return self.heap.read_word(buf + _MODULE_OFF)

    # -- construction -----------------------------------------------------------------------------

    def initialize(self, access: int, data: int, data_length: int, allocator: AllocatorT, out: int) -> None:
        """iree_vm_buffer_initialize: a handle at `out` (counter 1) over caller-provided data."""
        raw, off = self._cell(out)
        self.write_handle(raw, off, 1, int(access) & ~_COALLOCATED, data, data_length, allocator, 0)

    def _write(self, buf: int, counter: int, access: int, data: int, data_length: int,
               allocator: AllocatorT, module: int) -> None:
        raw, off = self.heap.cell(buf, BUFFER_SIZE)
        self.write_handle(raw, off, counter, access, data, data_length, allocator, module)

    @staticmethod
    def write_handle(raw: Any, off: int, counter: int, access: int, data: int, data_length: int,
                     allocator: AllocatorT, module: int) -> None:
        """Every field of a handle, into a `Heap.cell` the caller took over the whole handle (the
        bytes of write_i32 / write_word / allocator.write, with their wrapping)."""
        if type(data_length) is int and type(data) is int:  # hot path: one pack of the whole handle
            _HANDLE_FMT.pack_into(raw, off, ((counter + _I32_MIN) & 0xFFFFFFFF) - _I32_MIN,
                                  access & 0xFFFFFFFF, data & _MASK, data_length & _MASK,
                                  allocator.self & _MASK, allocator.ctl & _MASK, module & _MASK)
            return
        # Field by field, so a bad value fails after the fields before it are written.
        i32, word = host.I32.pack_into, host.WORD.pack_into
        i32(raw, off + _COUNTER_OFF, ((counter + _I32_MIN) & 0xFFFFFFFF) - _I32_MIN)
        i32(raw, off + _ACCESS_OFF, (((access & 0xFFFFFFFF) + _I32_MIN) & 0xFFFFFFFF) - _I32_MIN)
        word(raw, off + _DATA_OFF, data & _MASK)
        word(raw, off + _LENGTH_OFF, _hsize(data_length, "data_length"))
        word(raw, off + _ALLOC_SELF_OFF, allocator.self & _MASK)
        word(raw, off + _ALLOC_CTL_OFF, allocator.ctl & _MASK)
        word(raw, off + _MODULE_OFF, module & _MASK)

    def initialize_module_storage(self, data: int, data_length: int, module: int, out: int) -> None:
        """A module-owned handle: counter 0, ORIGIN_MODULE, null allocator, `module` retained later."""
        if not module:
            raise AbortError("initialize_module_storage needs a storage module")
        self._check(out)
        self._write(out, 0, BufferAccess.ORIGIN_MODULE, data, data_length, _alloc.allocator_null(), module)

    def create(self, access: int, length: int, alignment: int = 0,
               allocator: AllocatorT | None = None) -> int:
        """iree_vm_buffer_create: one aligned [handle | data] allocation; the handle's address."""
        a = allocator if allocator is not None else _alloc.heap_allocator(self.heap)
        length = _hsize(length, "length")
        if length > _MASK - PREFIX_SIZE:
            _wrapped_total(self.heap, a, length, alignment)  # always raises
        buf = _alloc.malloc_aligned(self.heap, a, PREFIX_SIZE + length, alignment, PREFIX_SIZE)
        self._init_coallocated(buf, access, length, a)
        return buf

    def _init_coallocated(self, buf: int, access: int, length: int, a: AllocatorT) -> None:
        self.heap.memset(buf, 0, PREFIX_SIZE - BUFFER_SIZE)  # as buffer.c: the block's first bytes
        access = int(access) & ~_COALLOCATED
        if not self.legacy:  # the fix tags co-allocations; the pre-fix code has no such bit
            access |= _COALLOCATED
        raw, off = self._cell(buf)
        self.write_handle(raw, off, 1, access, buf + PREFIX_SIZE, length, a, 0)

    def clone(self, access: int, source: int, source_offset: int, length: int, alignment: int = 0,
              allocator: AllocatorT | None = None) -> int:
        """iree_vm_buffer_clone: map the source range (OUT_OF_RANGE first), then create and copy."""
        src_data, src_length = self.map_ro(source, source_offset, length, 1)
        a = allocator if allocator is not None else _alloc.heap_allocator(self.heap)
        if src_length > _MASK - PREFIX_SIZE:  # only a handle initialized over a near-2**N-byte span
            _wrapped_total(self.heap, a, src_length, alignment)  # always raises
        buf = _alloc.malloc_aligned(self.heap, a, PREFIX_SIZE + src_length, alignment, PREFIX_SIZE)
        self._init_coallocated(buf, access, src_length, a)
        self.heap.memmove(buf + PREFIX_SIZE, src_data, src_length)
        return buf

    def deinitialize(self, buf: int) -> None:
        """iree_vm_buffer_deinitialize: frees the *data* of an in-place handle with its allocator."""
        self._check(buf)
        count = self.counter(buf)
        if self.storage_module(buf):
            if count != 0:
                raise AbortError(f"deinitialize of module-storage buffer 0x{buf:x} with {count} live refs")
            return
        if count != 1:
            raise AbortError(f"deinitialize of buffer 0x{buf:x} whose counter is {count}, not 1")
        _alloc.free(self.heap, self.allocator(buf), self.data(buf))

    def _destroy(self, buf: int) -> None:
        """The descriptor's destroy: runs once when a release takes the counter to 0."""
        heap = self.heap
        # One check of the whole handle, then every field destroy needs from it.
        raw, off = self._cell(buf)
        access, a_self, a_ctl, module = _DESTROY_FMT.unpack_from(raw, off)
        if module:
            module_ref.release(heap, module)
            return
        legacy = LEGACY_DESTROY if self._legacy is None else self._legacy  # self.legacy, inlined
        if access & _COALLOCATED or legacy:
            _alloc.free_aligned(heap, AllocatorT(a_self, a_ctl), buf)
        elif a_ctl:  # iree_allocator_free of buf (non-NULL): nothing without a ctl
            _free_with(heap, a_self, a_ctl, buf)

    # -- references -------------------------------------------------------------------------------

    def retain(self, buf: int) -> None:
        """iree_vm_buffer_retain: module storage retains its module on the 0 -> 1 step."""
        if not buf:
            return
        raw, off = self._cell(buf)
        module = _WORD_FROM(raw, off + _MODULE_OFF)[0]
        if not module:
            _ref.object_retain(self.heap, buf, self.type)
            return
        # fetch_add on the counter inside the handle just checked (nothing freed in between).
        old = _I32_FROM(raw, off + _COUNTER_OFF)[0]
        _I32_INTO(raw, off + _COUNTER_OFF, ((old + 1 + _I32_MIN) & 0xFFFFFFFF) - _I32_MIN)
        if old == 0:
            module_ref.retain(self.heap, module)

    def release(self, buf: int) -> None:
        if buf:
            self._check(buf)
        _ref.object_release(self.heap, buf, self.type)

    def retain_ref(self, buf: int) -> Ref:
        if not buf:
            return _ref.NULL_REF
        self.retain(buf)
        return Ref(buf, self.type)

    def move_ref(self, buf: int) -> Ref:
        """iree_vm_buffer_move_ref: no count change, except module storage is retained."""
        if not buf:
            return _ref.NULL_REF
        raw, off = self._cell(buf)
        if _WORD_FROM(raw, off + _MODULE_OFF)[0]:
            self.retain(buf)
        return Ref(buf, self.type)

    def wrap_retain(self, buf: int, out_ref: int) -> None:
        old = _ref.read_ref(self.heap, out_ref)
        if old.ptr == buf:
            return
        self.retain(buf)
        _ref.write_ref(self.heap, out_ref, Ref(buf, self.type))
        if old.ptr:
            _ref.release_value(self.heap, old)

    def check_deref(self, ref: Ref) -> int:
        """The handle address of a vm.buffer ref (INVALID_ARGUMENT "ref is null"/"ref type mismatch").
        As iree_vm_buffer_check_deref, only the type word is checked: {NULL, vm.buffer} yields 0 (what
        the caller then does with NULL decides); a non-NULL handle is checked against the heap."""
        buf = self.ref_type.check_deref(ref)
        if buf:
            self.heap.cell(buf, BUFFER_SIZE)
        return buf

    def check_deref_or_null(self, ref: Ref) -> int:
        return 0 if ref.type == _ref.TYPE_NULL else self.check_deref(ref)

    # -- mapping and byte operations ----------------------------------------------------------------

    def _map(self, buf: int, offset: int, length: int, alignment: int) -> tuple[int, int]:
        if not buf:
            raise StatusError(StatusCode.INVALID_ARGUMENT, "buffer is NULL")
        data, data_length = self.heap.unpack(_SPAN_FMT, buf + _DATA_OFF)
        return self._map_span(buf, data, data_length, offset, length, alignment)

    def map_ro_ref(self, ref: Ref, offset: int, length: int, alignment: int = 1) -> tuple[int, int]:
        """`map_ro(check_deref(ref), ...)` with one heap check: check_deref checks the whole handle,
        which holds the data span `_map` reads."""
        buf = self.ref_type.check_deref(ref)
        raw, off = self._cell(buf)
        data, data_length = _SPAN_FMT.unpack_from(raw, off + _DATA_OFF)
        return self._map_span(buf, data, data_length, offset, length, alignment)

    def _map_span(self, buf: int, data: int, data_length: int, offset: int, length: int,
                  alignment: int) -> tuple[int, int]:
        if type(offset) is int and type(length) is int and type(alignment) is int:  # hot path
            offset, length, alignment = offset & _MASK, length & _MASK, alignment & _MASK
        else:
            offset, length, alignment = (_hsize(offset, "offset"), _hsize(length, "length"),
                                         _hsize(alignment, "alignment"))
        mask = ~((alignment - 1) & _MASK) & _MASK
        offset &= mask
        length &= mask
        end = (offset + length) & _MASK  # unchecked addition, as buffer.c
        if end > data_length:
            raise StatusError(StatusCode.OUT_OF_RANGE,
                              f"out-of-bounds access detected (offset={offset}, length={length}, "
                              f"alignment={alignment}, buffer length={data_length})")
        if offset + length > data_length:  # IREE's check passed only because the sum wrapped
            raise BufferOverflowError(
                f"buffer 0x{buf:x}: offset {offset} + length {length} wraps to {end}, passing buffer.c's "
                f"bounds check, but the mapping lies outside the {data_length}-byte data", buf)
        return (data + offset) & _MASK, length

    def map_ro(self, buf: int, offset: int, length: int, alignment: int = 1) -> tuple[int, int]:
        """(address, length) of a read-only mapping; access bits are not consulted."""
        return self._map(buf, offset, length, alignment)

    def map_rw(self, buf: int, offset: int, length: int, alignment: int = 1) -> tuple[int, int]:
        raw, off = self._cell(buf)  # access and span read from it
        if not host.U32.unpack_from(raw, off + _ACCESS_OFF)[0] & _MUTABLE:
            raise StatusError(StatusCode.PERMISSION_DENIED,
                              "buffer is read-only and cannot be mapped for mutation")
        data, data_length = _SPAN_FMT.unpack_from(raw, off + _DATA_OFF)
        return self._map_span(buf, data, data_length, offset, length, alignment)

    def contents(self, buf: int) -> tuple[int, int]:
        """iree_vm_buffer_contents: empty unless MUTABLE."""
        if not buf or not self.raw_access(buf) & BufferAccess.MUTABLE:
            return 0, 0
        return self.data(buf), self.length(buf)

    def const_contents(self, buf: int) -> tuple[int, int]:
        return (self.data(buf), self.length(buf)) if buf else (0, 0)

    def copy_bytes(self, source: int, source_offset: int, target: int, target_offset: int, length: int) -> None:
        src, _ = self.map_ro(source, source_offset, length, 1)
        dst, _ = self.map_rw(target, target_offset, length, 1)
        self.heap.memmove(dst, src, _hsize(length, "length"))

    def compare_bytes(self, lhs: int, lhs_offset: int, rhs: int, rhs_offset: int, length: int) -> bool:
        a, _ = self.map_ro(lhs, lhs_offset, length, 1)
        b, _ = self.map_ro(rhs, rhs_offset, length, 1)
        n = _hsize(length, "length")
        return self.heap.read(a, n) == self.heap.read(b, n)

    def fill_bytes(self, buf: int, offset: int, length: int, value: int) -> None:
        self.fill_elements(buf, offset, length, 1, value)

    def fill_elements(self, buf: int, target_offset: int, element_count: int, element_length: int,
                      value: int) -> None:
        """iree_vm_buffer_fill_elements: `target_offset` counts elements, not bytes."""
        count, elen = _hsize(element_count, "element_count"), _hsize(element_length, "element_length")
        data, span_length = self.map_rw(buf, (_hsize(target_offset, "target_offset") * elen) & _MASK,
                                        (count * elen) & _MASK, elen)
        if elen not in _ELEMENT_LENGTHS:
            raise StatusError(StatusCode.INVALID_ARGUMENT,
                              f"invalid element length {elen}; expected one of [1, 2, 4, 8]")
        pattern = (int(value) & ((1 << (8 * elen)) - 1)).to_bytes(elen, "little")
        # buffer.c memsets the span length for bytes but loops element_count times for wider
        # elements; the two differ when count * length wrapped, and the loop then runs off the buffer.
        n = span_length if elen == 1 else count * elen
        if n > span_length:
            raise BufferOverflowError(
                f"buffer 0x{buf:x}: {count} elements of {elen} bytes wrap to a {span_length}-byte mapping; "
                f"buffer.c's fill loop would write {n} bytes", buf)
        self.heap.write(data, pattern * (n // elen))

    def read_elements(self, buf: int, source_offset: int, element_count: int, element_length: int) -> bytes:
        count, elen = _hsize(element_count, "element_count"), _hsize(element_length, "element_length")
        data, n = self.map_ro(buf, (_hsize(source_offset, "source_offset") * elen) & _MASK,
                              (count * elen) & _MASK, elen)
        return self.heap.read(data, n)

    def write_elements(self, buf: int, target_offset: int, source: bytes, element_length: int) -> None:
        elen = _hsize(element_length, "element_length")
        count = len(source) // elen if elen else 0
        data, n = self.map_rw(buf, (_hsize(target_offset, "target_offset") * elen) & _MASK,
                              (count * elen) & _MASK, elen)
        self.heap.write(data, bytes(source[:n]))

    def text(self, ref: Ref, *, allow_null: bool = False) -> str:
        """The whole contents of a vm.buffer ref as UTF-8 (formats, names, messages): check_deref then
        iree_vm_buffer_as_string. A null ref is INVALID_ARGUMENT as check_deref reports it, or the empty
        string with `allow_null`; a vm.buffer-typed ref with a NULL ptr passes check_deref and reads as
        the empty string."""
        if allow_null and ref.type == _ref.TYPE_NULL:
            return ""
        buf = self.ref_type.check_deref(ref)
        if not buf:  # {NULL, vm.buffer}: iree_vm_buffer_as_string(NULL) is the empty string view
            return ""
        # check_deref's check of the handle covers the data span; mapping all of it at offset 0
        # cannot fail, so the data bytes are read (and checked) straight from the span.
        raw, off = self._cell(buf)
        data, n = _SPAN_FMT.unpack_from(raw, off + _DATA_OFF)
        return self.heap.read(data, n).decode("utf-8", "replace")

    def as_numpy(self, buf: int, dtype: Any, *, writable: bool | None = None) -> np.ndarray:
        """A zero-copy numpy view of the contents (read-only unless the buffer is MUTABLE)."""
        self._check(buf)
        dt = np.dtype(dtype)
        data, n = self.data(buf), self.length(buf)
        if n % dt.itemsize:
            raise BufferViewError(f"buffer 0x{buf:x} of {n} bytes is not a whole number of {dt} elements")
        if n == 0:
            return np.empty(0, dt)
        arr = np.frombuffer(self.heap.view(data, n), dtype=dt)
        mutable = bool(self.raw_access(buf) & BufferAccess.MUTABLE)
        arr.flags.writeable = mutable if writable is None else (writable and mutable)
        return arr
