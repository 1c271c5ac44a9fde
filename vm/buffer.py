"""iree_vm_buffer_t on real memory: runtime/src/iree/vm/buffer.c, with IREE #24827's destroy fix.

A `BufferType` registers the `vm.buffer` ref type (counter tag 0) on a heap and provides the buffer
API over handles in tracked memory:

- create / clone make one aligned co-allocation [handle | pad | data] with
  prefix = iree_sizeof_struct(iree_vm_buffer_t) and tag the handle COALLOCATED (internally);
- initialize puts a handle wherever the caller wants it (counter 1); initialize_module_storage makes a
  module-owned handle (counter 0, ORIGIN_MODULE, null allocator, retains its module on first retain);
- destroy (when a release reaches 0): module storage releases its module; otherwise, with the fix,
  only COALLOCATED handles take the aligned-free path and any other handle is handed to its own
  allocator's FREE. In legacy mode (`BufferType(..., legacy=True)`, a switch of the type on its
  heap) the pre-fix rule applies: every non-module handle goes to free_aligned.

Mapping follows buffer.c exactly, including its C arithmetic on iree_host_size_t: offset and length
are rounded down with `x & ~(alignment - 1)` and the bounds check `offset + length > data_length`
wraps. Where that wrap lets IREE's check pass for a range outside the data, the access IREE would make
is reported as BufferOverflowError (a HeapError and an IreeFaultError) instead of being made; memory
is only ever touched
through the heap. create / clone add prefix + length unchecked as well: the allocator sees the wrapped
total (its statuses), and a block it hands out is freed again and the overflow reported.

NULL handling follows the build IREE ships: a vm.buffer-typed ref with a NULL ptr passes check_deref
(0) and reads as "" through text() (iree_vm_buffer_as_string); where buffer.c would dereference NULL
(its IREE_ASSERT_ARGUMENTs are compiled out of release builds, and the native modules that map a
checked-deref'd buffer do not test it) ireeabi refuses with IreeFaultError saying so. The VM's own
buffer ops test NULL first (bytecode/dispatch.c "buffer is null", ops_buffer.py).
"""
from __future__ import annotations

import struct

from typing import Any

import numpy as np

from ..abi.errors import IreeAbiError
from ..layouts import buffer as _buffer
from ..base import allocator as _alloc
from . import module_ref
from . import ref as _ref
from ..base.allocator import AllocatorT
from ..base.heap import Heap, HeapError
from .ref import Ref, TypeRegistry
from ..base.status import IreeFaultError, StatusCode, StatusError
from ..layouts.buffer import VmBufferLayout

BufferAccess = _buffer.BufferAccess


_free_with = _alloc.free_with
_I32 = struct.Struct("<i")
_U32 = struct.Struct("<I")
_I32_FROM = _I32.unpack_from
_I32_INTO = _I32.pack_into
_I32_MIN = 1 << 31
_ELEMENT_LENGTHS = (1, 2, 4, 8)
_COALLOCATED = int(BufferAccess.COALLOCATED)
_MUTABLE = int(BufferAccess.MUTABLE)


class AbortError(IreeFaultError):
    """Where IREE calls iree_abort() (its process dies by SIGABRT): a broken invariant the runtime
    cannot continue after."""


class BufferOverflowError(HeapError, IreeFaultError):
    """An access buffer.c would make outside the buffer's data although its bounds check passed (the
    unchecked `offset + length` wrapped, or an element loop ran past a wrapped length). Reported before
    any byte is touched: inside a co-allocation the heap alone could not see it (the handle sits right
    before the data)."""


def null_buffer(what: str = "vm.buffer") -> IreeFaultError:
    """A NULL iree_vm_buffer_t* where buffer.c reads through it without a test (a {NULL, vm.buffer}
    ref passes check_deref): IREE faults there."""
    return IreeFaultError(f"a NULL {what} (a vm.buffer ref whose pointer is NULL passes check_deref): IREE's "
                          "vm/buffer.c reads through it untested (IREE_ASSERT_ARGUMENT is compiled out of "
                          "release builds); its own runtime faults there")


class BufferViewError(IreeAbiError):
    """A numpy view whose dtype does not tile the buffer."""


def _hsize(x: int, what: str, mask: int) -> int:
    """An iree_host_size_t argument: any int, reduced modulo 2**bits as C converts it."""
    if type(x) is int:  # hot path
        return x & mask
    if not isinstance(x, int) or isinstance(x, bool):
        raise StatusError(StatusCode.INVALID_ARGUMENT, f"{what} must be an integer, got {x!r}")
    return x & mask


def _wrapped_total(heap: Heap, allocator: AllocatorT, length: int, alignment: int) -> None:
    """create / clone when `prefix + length` does not fit iree_host_size_t. buffer.c adds the two
    unchecked and hands the wrapped total to iree_allocator_malloc_aligned, so its statuses come in
    its order (a total of 0 is INVALID_ARGUMENT, then the alignment, then the allocator's own). If
    the small block is allocated, IREE would write the handle and a `length`-byte data span past it:
    the block is freed again and that overflow reported instead of made."""
    L = heap.machine.view(VmBufferLayout)
    total = (L.prefix_size + length) & L.mask
    block = _alloc.malloc_aligned(heap, allocator, total, alignment, L.prefix_size)
    _alloc.free_aligned(heap, allocator, block)
    raise BufferOverflowError(
        f"buffer of {length} bytes: prefix {L.prefix_size} + length wraps to a {total}-byte block; "
        f"buffer.c would write the handle and a {length}-byte data span past it", block)


class BufferType:
    """The vm.buffer ref type on one heap, and the buffer API."""

    def __init__(self, registry: TypeRegistry, *, legacy: bool = False) -> None:
        self.registry = registry
        self.heap: Heap = registry.heap
        self._legacy = legacy
        self._L = self.heap.machine.view(VmBufferLayout)
        self.ref_type = registry.define(_buffer.VM_BUFFER_TYPE_NAME, self._destroy, offsetof_counter=0)
        self.type = self.ref_type.type

    @property
    def legacy(self) -> bool:
        return self._legacy

    def close(self) -> None:
        self.ref_type.close()

    # -- fields -----------------------------------------------------------------------------------

    def _check(self, buf: int) -> None:
        self._cell(buf)

    def _cell(self, buf: int) -> tuple[Any, int]:
        """The NULL check and one heap check of the whole handle; (buffer, offset) of its bytes for
        the reads and writes that follow at once (nothing freed in between)."""
        if not buf:
            raise null_buffer()
        return self.heap.cell(buf, self._L.size)

    def counter(self, buf: int) -> int:
        return self.heap.read_i32(buf + self._L.counter_off)

    def raw_access(self, buf: int) -> int:
        """The access word as stored (including the internal COALLOCATED bit)."""
        return self.heap.read_i32(buf + self._L.access_off) & 0xFFFFFFFF

    def access(self, buf: int) -> BufferAccess:
        return BufferAccess(self.raw_access(buf) & _buffer.PUBLIC_ACCESS_MASK)

    def is_coallocated(self, buf: int) -> bool:
        return bool(self.raw_access(buf) & _COALLOCATED)

    def data(self, buf: int) -> int:
        return self.heap.read_word(buf + self._L.data_off)

    def length(self, buf: int) -> int:
        return self.heap.read_word(buf + self._L.length_off)

    def allocator(self, buf: int) -> AllocatorT:
        return _alloc.read(self.heap, buf + self._L.allocator_off)

    def storage_module(self, buf: int) -> int:
        return self.heap.read_word(buf + self._L.module_off)

    # -- construction -----------------------------------------------------------------------------

    def initialize(self, access: int, data: int, data_length: int, allocator: AllocatorT, out: int) -> None:
        """iree_vm_buffer_initialize: a handle at `out` (counter 1) over caller-provided data."""
        raw, off = self._cell(out)
        self.write_handle(raw, off, 1, int(access) & ~_COALLOCATED, data, data_length, allocator, 0)

    def _write(self, buf: int, counter: int, access: int, data: int, data_length: int,
               allocator: AllocatorT, module: int) -> None:
        L = self._L
        raw, off = self.heap.cell(buf, L.size)
        self.write_handle(raw, off, counter, access, data, data_length, allocator, module)

    def write_handle(self, raw: Any, off: int, counter: int, access: int, data: int, data_length: int,
                     allocator: AllocatorT, module: int) -> None:
        """Every field of a handle, into a `Heap.cell` the caller took over the whole handle (the
        bytes of write_i32 / write_word / allocator.write, with their wrapping)."""
        L = self._L
        if type(data_length) is int and type(data) is int:  # hot path: one pack of the whole handle
            L.handle_fmt.pack_into(raw, off, ((counter + _I32_MIN) & 0xFFFFFFFF) - _I32_MIN,
                                  access & 0xFFFFFFFF, data & L.mask, data_length & L.mask,
                                  allocator.self & L.mask, allocator.ctl & L.mask, module & L.mask)
            return
        # Field by field, so a bad value fails after the fields before it are written.
        i32, word = _I32.pack_into, L.word.pack_into
        i32(raw, off + L.counter_off, ((counter + _I32_MIN) & 0xFFFFFFFF) - _I32_MIN)
        i32(raw, off + L.access_off, (((access & 0xFFFFFFFF) + _I32_MIN) & 0xFFFFFFFF) - _I32_MIN)
        word(raw, off + L.data_off, data & L.mask)
        word(raw, off + L.length_off, _hsize(data_length, "data_length", L.mask))
        word(raw, off + L.alloc_self_off, allocator.self & L.mask)
        word(raw, off + L.alloc_ctl_off, allocator.ctl & L.mask)
        word(raw, off + L.module_off, module & L.mask)

    def initialize_module_storage(self, data: int, data_length: int, module: int, out: int) -> None:
        """A module-owned handle: counter 0, ORIGIN_MODULE, null allocator, `module` retained later."""
        if not module:
            raise AbortError("initialize_module_storage needs a storage module")
        self._check(out)
        self._write(out, 0, BufferAccess.ORIGIN_MODULE, data, data_length, _alloc.allocator_null(), module)

    def create(self, access: int, length: int, alignment: int = 0,
               allocator: AllocatorT | None = None) -> int:
        """iree_vm_buffer_create: one aligned [handle | data] allocation; the handle's address."""
        L = self._L
        a = allocator if allocator is not None else _alloc.heap_allocator(self.heap)
        length = _hsize(length, "length", L.mask)
        if length > L.mask - L.prefix_size:
            _wrapped_total(self.heap, a, length, alignment)  # always raises
        with self.heap.guarded_allocations():  # the data may be a kernel's binding
            buf = _alloc.malloc_aligned(self.heap, a, L.prefix_size + length, alignment, L.prefix_size)
        self._init_coallocated(buf, access, length, a)
        return buf

    def _init_coallocated(self, buf: int, access: int, length: int, a: AllocatorT) -> None:
        L = self._L
        self.heap.memset(buf, 0, L.prefix_size - L.size)  # as buffer.c: the block's first bytes
        access = int(access) & ~_COALLOCATED
        if not self.legacy:  # the fix tags co-allocations; the pre-fix code has no such bit
            access |= _COALLOCATED
        raw, off = self._cell(buf)
        self.write_handle(raw, off, 1, access, buf + L.prefix_size, length, a, 0)

    def clone(self, access: int, source: int, source_offset: int, length: int, alignment: int = 0,
              allocator: AllocatorT | None = None) -> int:
        """iree_vm_buffer_clone: map the source range (OUT_OF_RANGE first), then create and copy."""
        L = self._L
        src_data, src_length = self.map_ro(source, source_offset, length, 1)
        a = allocator if allocator is not None else _alloc.heap_allocator(self.heap)
        if src_length > L.mask - L.prefix_size:  # only a handle initialized over a near-2**N-byte span
            _wrapped_total(self.heap, a, src_length, alignment)  # always raises
        with self.heap.guarded_allocations():
            buf = _alloc.malloc_aligned(self.heap, a, L.prefix_size + src_length, alignment, L.prefix_size)
        self._init_coallocated(buf, access, src_length, a)
        self.heap.memmove(buf + L.prefix_size, src_data, src_length)
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
        L = self._L
        heap = self.heap
        # One check of the whole handle, then every field destroy needs from it.
        raw, off = self._cell(buf)
        access, a_self, a_ctl, module = L.destroy_fmt.unpack_from(raw, off)
        if module:
            module_ref.release(heap, module)
            return
        if access & _COALLOCATED or self._legacy:
            _alloc.free_aligned(heap, AllocatorT(a_self, a_ctl), buf)
        elif a_ctl:  # iree_allocator_free of buf (non-NULL): nothing without a ctl
            _free_with(heap, a_self, a_ctl, buf)

    # -- references -------------------------------------------------------------------------------

    def retain(self, buf: int) -> None:
        """iree_vm_buffer_retain: module storage retains its module on the 0 -> 1 step."""
        L = self._L
        if not buf:
            return
        raw, off = self._cell(buf)
        module = L.word.unpack_from(raw, off + L.module_off)[0]
        if not module:
            _ref.object_retain(self.heap, buf, self.type)
            return
        # fetch_add on the counter inside the handle just checked (nothing freed in between).
        old = _I32_FROM(raw, off + L.counter_off)[0]
        _I32_INTO(raw, off + L.counter_off, ((old + 1 + _I32_MIN) & 0xFFFFFFFF) - _I32_MIN)
        if self.heap.ref_events is not None:
            self.heap.ref_events.append(("retain", buf, self.type))
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
        L = self._L
        if not buf:
            return _ref.NULL_REF
        raw, off = self._cell(buf)
        if L.word.unpack_from(raw, off + L.module_off)[0]:
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
        L = self._L
        buf = self.ref_type.check_deref(ref)
        if buf:
            self.heap.cell(buf, L.size)
        return buf

    def check_deref_or_null(self, ref: Ref) -> int:
        return 0 if ref.type == _ref.TYPE_NULL else self.check_deref(ref)

    # -- mapping and byte operations ----------------------------------------------------------------

    def _map(self, buf: int, offset: int, length: int, alignment: int) -> tuple[int, int]:
        L = self._L
        if not buf:
            raise null_buffer()
        data, data_length = self.heap.unpack(L.span_fmt, buf + L.data_off)
        return self._map_span(buf, data, data_length, offset, length, alignment)

    def map_ro_ref(self, ref: Ref, offset: int, length: int, alignment: int = 1) -> tuple[int, int]:
        """`map_ro(check_deref(ref), ...)` with one heap check: check_deref checks the whole handle,
        which holds the data span `_map` reads."""
        L = self._L
        buf = self.ref_type.check_deref(ref)
        raw, off = self._cell(buf)
        data, data_length = L.span_fmt.unpack_from(raw, off + L.data_off)
        return self._map_span(buf, data, data_length, offset, length, alignment)

    def _map_span(self, buf: int, data: int, data_length: int, offset: int, length: int,
                  alignment: int) -> tuple[int, int]:
        L = self._L
        if type(offset) is int and type(length) is int and type(alignment) is int:  # hot path
            offset, length, alignment = offset & L.mask, length & L.mask, alignment & L.mask
        else:
            offset, length, alignment = (_hsize(offset, "offset", L.mask), _hsize(length, "length", L.mask),
                                         _hsize(alignment, "alignment", L.mask))
        mask = ~((alignment - 1) & L.mask) & L.mask
        offset &= mask
        length &= mask
        end = (offset + length) & L.mask  # unchecked addition, as buffer.c
        if end > data_length:
            raise StatusError(StatusCode.OUT_OF_RANGE,
                              f"out-of-bounds access detected (offset={offset}, length={length}, "
                              f"alignment={alignment}, buffer length={data_length})")
        if offset + length > data_length:  # IREE's check passed only because the sum wrapped
            raise BufferOverflowError(
                f"buffer 0x{buf:x}: offset {offset} + length {length} wraps to {end}, passing buffer.c's "
                f"bounds check, but the mapping lies outside the {data_length}-byte data", buf)
        return (data + offset) & L.mask, length

    def map_ro(self, buf: int, offset: int, length: int, alignment: int = 1) -> tuple[int, int]:
        """(address, length) of a read-only mapping; access bits are not consulted."""
        return self._map(buf, offset, length, alignment)

    def map_rw(self, buf: int, offset: int, length: int, alignment: int = 1) -> tuple[int, int]:
        L = self._L
        raw, off = self._cell(buf)  # access and span read from it
        if not _U32.unpack_from(raw, off + L.access_off)[0] & _MUTABLE:
            raise StatusError(StatusCode.PERMISSION_DENIED,
                              "buffer is read-only and cannot be mapped for mutation")
        data, data_length = L.span_fmt.unpack_from(raw, off + L.data_off)
        return self._map_span(buf, data, data_length, offset, length, alignment)

    def contents(self, buf: int) -> tuple[int, int]:
        """iree_vm_buffer_contents: empty unless MUTABLE."""
        if not buf or not self.raw_access(buf) & BufferAccess.MUTABLE:
            return 0, 0
        return self.data(buf), self.length(buf)

    def const_contents(self, buf: int) -> tuple[int, int]:
        return (self.data(buf), self.length(buf)) if buf else (0, 0)

    def copy_bytes(self, source: int, source_offset: int, target: int, target_offset: int, length: int) -> None:
        L = self._L
        src, _ = self.map_ro(source, source_offset, length, 1)
        dst, _ = self.map_rw(target, target_offset, length, 1)
        self.heap.memmove(dst, src, _hsize(length, "length", L.mask))

    def compare_bytes(self, lhs: int, lhs_offset: int, rhs: int, rhs_offset: int, length: int) -> bool:
        L = self._L
        a, _ = self.map_ro(lhs, lhs_offset, length, 1)
        b, _ = self.map_ro(rhs, rhs_offset, length, 1)
        n = _hsize(length, "length", L.mask)
        return self.heap.read(a, n) == self.heap.read(b, n)

    def fill_bytes(self, buf: int, offset: int, length: int, value: int) -> None:
        self.fill_elements(buf, offset, length, 1, value)

    def fill_elements(self, buf: int, target_offset: int, element_count: int, element_length: int,
                      value: int) -> None:
        """iree_vm_buffer_fill_elements: `target_offset` counts elements, not bytes."""
        L = self._L
        count, elen = _hsize(element_count, "element_count", L.mask), _hsize(element_length, "element_length", L.mask)
        data, span_length = self.map_rw(buf, (_hsize(target_offset, "target_offset", L.mask) * elen) & L.mask,
                                        (count * elen) & L.mask, elen)
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
        self.heap.fill(data, pattern, n // elen)

    def read_elements(self, buf: int, source_offset: int, element_count: int, element_length: int) -> bytes:
        L = self._L
        count, elen = _hsize(element_count, "element_count", L.mask), _hsize(element_length, "element_length", L.mask)
        data, n = self.map_ro(buf, (_hsize(source_offset, "source_offset", L.mask) * elen) & L.mask,
                              (count * elen) & L.mask, elen)
        return self.heap.read(data, n)

    def write_elements(self, buf: int, target_offset: int, source: bytes, element_length: int) -> None:
        L = self._L
        elen = _hsize(element_length, "element_length", L.mask)
        count = len(source) // elen if elen else 0
        data, n = self.map_rw(buf, (_hsize(target_offset, "target_offset", L.mask) * elen) & L.mask,
                              (count * elen) & L.mask, elen)
        self.heap.write(data, bytes(source[:n]))

    def text(self, ref: Ref, *, allow_null: bool = False) -> str:
        """The whole contents of a vm.buffer ref as UTF-8 (formats, names, messages): check_deref then
        iree_vm_buffer_as_string. A null ref is INVALID_ARGUMENT as check_deref reports it, or the empty
        string with `allow_null`; a vm.buffer-typed ref with a NULL ptr passes check_deref and reads as
        the empty string."""
        L = self._L
        if allow_null and ref.type == _ref.TYPE_NULL:
            return ""
        buf = self.ref_type.check_deref(ref)
        if not buf:  # {NULL, vm.buffer}: iree_vm_buffer_as_string(NULL) is the empty string view
            return ""
        # check_deref's check of the handle covers the data span; mapping all of it at offset 0
        # cannot fail, so the data bytes are read (and checked) straight from the span.
        raw, off = self._cell(buf)
        data, n = L.span_fmt.unpack_from(raw, off + L.data_off)
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


_M64 = 0xFFFFFFFFFFFFFFFF
def siphash24(data: bytes, key: bytes = bytes(range(16))) -> int:
    """SipHash-2-4 (Aumasson & Bernstein) of `data`: iree_vm_buffer_hash, which vm.buffer.hash
    calls, hashes a byte range with key 00 01 .. 0F."""
    def rotl(x: int, b: int) -> int:
        return ((x << b) | (x >> (64 - b))) & _M64

    k0, k1 = struct.unpack("<QQ", key)
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D,
         k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]

    def rounds(n: int) -> None:
        for _ in range(n):  # SipRound
            v[0] = (v[0] + v[1]) & _M64
            v[1] = rotl(v[1], 13) ^ v[0]
            v[0] = rotl(v[0], 32)
            v[2] = (v[2] + v[3]) & _M64
            v[3] = rotl(v[3], 16) ^ v[2]
            v[0] = (v[0] + v[3]) & _M64
            v[3] = rotl(v[3], 21) ^ v[0]
            v[2] = (v[2] + v[1]) & _M64
            v[1] = rotl(v[1], 17) ^ v[2]
            v[2] = rotl(v[2], 32)

    whole = len(data) - len(data) % 8
    for i in range(0, whole, 8):
        m = struct.unpack_from("<Q", data, i)[0]
        v[3] ^= m
        rounds(2)
        v[0] ^= m
    b = ((len(data) & 0xFF) << 56) | int.from_bytes(data[whole:], "little")
    v[3] ^= b
    rounds(2)
    v[0] ^= b
    v[2] ^= 0xFF
    rounds(4)
    return v[0] ^ v[1] ^ v[2] ^ v[3]
