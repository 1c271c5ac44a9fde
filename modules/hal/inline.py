"""The `hal_inline` native module (version 0) on the emulated VM ABI.

Every export is registered with IREE's exact cconv (layouts.hal_inline.EXPORTS) and called through
ireeabi.vm's generic shims on packed memory. Storage for a HAL buffer is exposed to the VM as an
`iree_hal_inline_storage_buffer_t` wrapper in tracked memory: the HAL buffer mapped (SCOPED) and a
VM buffer initialized in place over the mapping, whose allocator is {wrapper, custom ctl}. When the
VM buffer's last reference goes, its destroy hands the handle to that allocator's FREE, which tears the
wrapper down.

- fixed (IREE #24827): the wrapper records its host allocator and retains the HAL buffer, and FREE
  unmaps, releases the buffer and frees the wrapper.
- `legacy=True` (the snapshot before the fix): `host_allocator` and `hal_buffer` are never assigned,
  so FREE cannot free the wrapper; combined with the pre-fix VM buffer destroy (free_aligned of the
  handle) the wrapper and its mapping leak, and the tracked heap reports it.
"""
from __future__ import annotations

from typing import Any, Callable

from ...layouts import hal_buffer as HB
from ...layouts import hal_inline as HI
from ...layouts.buffer import BufferAccess
from ...base import allocator as _alloc
from ...vm import ref as _ref
from ...base.allocator import AllocatorT, Command
from ...vm.buffer import BufferType
from ...vm.native_module import Export, NativeModule
from ...vm.ref import Ref
from ...vm.shims import CallContext
from ...base.status import StatusCode, StatusError

from ...base.internal import cpu
from ...hal.buffer import BufferTypes, HalBuffer
from ...hal.buffer_view import BufferViewTypes
from ...layouts.hal_inline import StorageWrapperLayout


ALLOCATE_USAGE = (HB.BufferUsage.TRANSFER | HB.BufferUsage.DISPATCH_STORAGE | HB.BufferUsage.MAPPING)
_FREE = int(Command.FREE)
_OPTIMAL_FOR_HOST = int(HB.MemoryType.OPTIMAL_FOR_HOST)
_ACCESS_ALL = int(HB.MemoryAccess.ALL)
_ALLOCATE_USAGE = int(ALLOCATE_USAGE)
_SCOPED = int(HB.MappingMode.SCOPED)
_ACCESS_ANY = int(HB.MemoryAccess.ANY)
STORAGE_ACCESS = BufferAccess.ORIGIN_HOST | BufferAccess.MUTABLE
_STORAGE_ACCESS = int(STORAGE_ACCESS) & ~int(BufferAccess.COALLOCATED)  # as initialize stores it
_MAX_RANK = HI.MAX_BUFFER_VIEW_RANK
_object_retain = _ref.object_retain  # per call: no module attribute lookups
_object_release = _ref.object_release


class HalInlineModule:
    """hal_inline over the ref types of one heap: VM buffers, HAL buffers and buffer views; the
    processor data answers device.query.i64("hal.cpu", key)."""

    def __init__(self, vm_buffers: BufferType, hal_buffers: BufferTypes, views: BufferViewTypes,
                 cpu_data: list[int], *, legacy: bool = False) -> None:
        self.heap = vm_buffers.heap
        self.cpu_data = cpu_data  # the runtime's words (shared: a change shows in both modules)
        self.legacy = legacy
        self._W = self.heap.machine.view(StorageWrapperLayout)
        self._mask = self.heap.machine.word_mask
        self.host_allocator = _alloc.heap_allocator(self.heap)
        self._ctl = _alloc.make_ctl(self.heap, self._storage_ctl, name="hal_inline storage buffer ctl")
        # The heap's types, fixed for the module's life: bound once for the per-call paths.
        self._hal_buffers = hal_buffers
        self._buffer_type = hal_buffers.type
        self._views = views
        self._view_type = views.type
        self._vm_buffers = vm_buffers
        targets: dict[str, Callable[..., Any]] = {
            "buffer.allocate": self._allocate,
            "buffer.allocate.initialized": self._allocate_initialized,
            "buffer.length": self.buffer_length,
            "buffer.storage": self._storage,
            "buffer.subspan": self.buffer_subspan,
            "buffer.wrap": self._wrap,
            "buffer_view.assert": self.buffer_view_assert,
            "buffer_view.buffer": self.buffer_view_buffer,
            "buffer_view.create": self.buffer_view_create,
            "buffer_view.dim": self.buffer_view_dim,
            "buffer_view.element_type": self.buffer_view_element_type,
            "buffer_view.encoding_type": self.buffer_view_encoding_type,
            "buffer_view.rank": self.buffer_view_rank,
            "buffer_view.trace": self.buffer_view_trace,
            "device.query.i64": self._query_i64,
        }
        exports = [Export(e.name, e.cconv, targets[e.name]) for e in HI.EXPORTS]
        self.module = NativeModule(self.heap, HI.IREE_HAL_INLINE_MODULE_NAME, exports,
                                   version=HI.IREE_HAL_INLINE_MODULE_VERSION_LATEST)

    def close(self) -> None:
        self.module.close()
        self.heap.functions.forget(self._ctl)

    # -- storage wrappers ---------------------------------------------------------------------------

    def wrap_storage(self, buffer: int) -> Ref:
        """A new storage wrapper for HAL buffer `buffer`: a vm.buffer ref the caller owns."""
        return self._wrap_storage(buffer, None)

    def _wrap_storage(self, buffer: int, b: HalBuffer | None) -> Ref:
        """wrap_storage; `b` is the buffer's payload when the caller has it (None: looked up)."""
        heap = self.heap
        hal_buffers = self._hal_buffers
        W = self._W
        wrapper = _alloc.malloc(heap, self.host_allocator, W.size)
        # One check of the whole wrapper (mapping and VM buffer handle included); nothing below frees
        # it before the last write.
        raw, off = heap.cell(wrapper, W.size)
        if not self.legacy:
            a = self.host_allocator
            W.allocator_fmt.pack_into(raw, off + W.allocator_off, a.self, a.ctl)
            _object_retain(heap, buffer, self._buffer_type)
            W.word.pack_into(raw, off + W.hal_buffer_off, buffer)
        try:
            if b is None:
                b = hal_buffers.get(buffer)
            data, length = hal_buffers.map_into(raw, off + W.mapping_off, buffer, b, _SCOPED, _ACCESS_ANY, 0,
                                                b.byte_length)
        except StatusError:
            self._destroy_wrapper(wrapper)
            raise
        # iree_vm_buffer_initialize over the mapping: a handle with counter 1, moved into the ref.
        vm_buffers = self._vm_buffers
        vm_buffers.write_handle(raw, off + W.vm_buffer_off, 1, _STORAGE_ACCESS, data, length,
                                AllocatorT(wrapper, self._ctl), 0)
        return Ref(wrapper + W.vm_buffer_off, vm_buffers.type)

    def _storage_ctl(self, self_ptr: int, command: int, params: int, inout: int) -> None:
        if command != _FREE:
            raise StatusError(StatusCode.FAILED_PRECONDITION, "storage buffers cannot be (re)allocated")
        self._destroy_wrapper(self_ptr)  # *inout_ptr (the handle) is not needed: self is the wrapper

    def _destroy_wrapper(self, wrapper: int) -> None:
        heap = self.heap
        W = self._W
        raw, off = heap.cell(wrapper, W.size)  # covers the mapping: unmapped in place
        self._hal_buffers.unmap_into(raw, off + W.mapping_off)
        # Read after the unmap, as the fields stand then (the wrapper itself is not freed by it).
        a_self, a_ctl, hal_buffer = W.teardown_fmt.unpack_from(raw, off)
        if hal_buffer:
            _object_release(heap, hal_buffer, self._buffer_type)
        _alloc.free(heap, AllocatorT(a_self, a_ctl), wrapper)  # a null allocator (pre-fix) frees nothing

    # -- buffers ------------------------------------------------------------------------------------

    def _new_buffer(self, min_alignment: int, size: int) -> int:
        # The heap device allocator never reads params.min_alignment (any value passes; storage is
        # aligned to IREE_HAL_HEAP_BUFFER_ALIGNMENT), and `size` is a device size: a negative i64
        # fails (or wraps) in the slab arithmetic, which allocate models.
        return self._hal_buffers.allocate(size, memory_type=_OPTIMAL_FOR_HOST, allowed_access=_ACCESS_ALL,
                                          allowed_usage=_ALLOCATE_USAGE)

    def _allocate(self, ctx: CallContext, min_alignment: int, size: int) -> tuple[Ref, Ref]:
        buffer = self._new_buffer(min_alignment, size)
        try:
            storage = self.wrap_storage(buffer)
        except BaseException:
            self._hal_buffers.resources.release(buffer)
            raise
        return self._hal_buffers.resources.move_ref(buffer), storage

    def _allocate_initialized(self, ctx: CallContext, min_alignment: int, source: Ref, offset: int,
                              length: int) -> tuple[Ref, Ref]:
        vmb = self._vm_buffers
        data, n = vmb.map_ro(vmb.check_deref(source), offset, length, 1)
        buffer_ref, storage = self._allocate(ctx, min_alignment, n)
        self.heap.memmove(self._hal_buffers.get(buffer_ref.ptr).storage, data, n)
        return buffer_ref, storage

    # The exports below serve the full `hal` module too (modules/hal/module.py binds these methods
    # into its export table): one implementation of the exports both modules declare.

    def buffer_length(self, ctx: CallContext, buffer: Ref) -> int:
        return self._hal_buffers.deref(buffer)[1].byte_length

    def _storage(self, ctx: CallContext, buffer: Ref) -> Ref:
        ptr, b = self._hal_buffers.resources.deref(buffer)
        return self._wrap_storage(ptr, b)

    def buffer_subspan(self, ctx: CallContext, buffer: Ref, offset: int, length: int) -> Ref:
        ptr, _ = self._hal_buffers.deref(buffer)
        try:
            return self._hal_buffers.resources.move_ref(self._hal_buffers.subspan(ptr, offset, length))
        except StatusError as e:
            raise _subspan_error(e, offset, length, self._mask) from None

    def _wrap(self, ctx: CallContext, source: Ref, offset: int, length: int) -> Ref:
        self._vm_buffers.check_deref(source)
        raise StatusError(StatusCode.UNIMPLEMENTED, "vm->hal buffer wrapping not yet implemented")

    # -- buffer views -------------------------------------------------------------------------------

    def buffer_view_create(self, ctx: CallContext, buffer: Ref, offset: int, length: int, element_type: int,
                     encoding_type: int, shape: list[int]) -> Ref:
        hal_buffers, heap, buffer_type = self._hal_buffers, self.heap, self._buffer_type
        ptr, b = hal_buffers.resources.deref(buffer)  # before the span count check, as IREE
        if len(shape) > _MAX_RANK:
            raise _count_error(len(shape))
        if offset == 0 and length == b.byte_length:
            source = ptr
            _object_retain(heap, source, buffer_type)
        else:
            try:
                source = hal_buffers.subspan(ptr, offset, length)
            except StatusError as e:
                raise _subspan_error(e, offset, length, self._mask) from None
        try:
            view = self._views.create(source, shape, element_type, encoding_type, self.host_allocator)
        finally:
            _object_release(heap, source, buffer_type)
        return Ref(view, self._view_type)

    def buffer_view_assert(self, ctx: CallContext, view: Ref, message: Ref, element_type: int, encoding_type: int,
                     shape: list[int]) -> None:
        if len(shape) > _MAX_RANK:
            raise _count_error(len(shape))
        views = self._views
        vptr = views.deref(view)
        # The message is a required vm.buffer (check_deref, not _or_null): a null one is an error even
        # when the view matches. Its bytes are read only to report a failure, as IREE formats them
        # only then; the text is printed as is (an empty message gives " encoding ...").
        vm_buffers = self._vm_buffers
        vm_buffers.check_deref(message)
        actual, actual_encoding, rank = views.assert_fields(vptr)  # one read of the header
        encoding_type &= 0xFFFFFFFF
        if actual_encoding != 0 and actual_encoding != encoding_type:
            raise StatusError(StatusCode.INVALID_ARGUMENT, f"{vm_buffers.text(message)} encoding mismatch; "
                              f"expected {encoding_type:08X} but have {actual_encoding:08X}")
        element_type &= 0xFFFFFFFF
        if actual != element_type and not _element_types_compatible(actual, element_type):
            raise StatusError(StatusCode.INVALID_ARGUMENT, f"{vm_buffers.text(message)} element type mismatch; "
                              f"expected {HB.iree_hal_format_element_type(element_type)} ({element_type:08X}) but have "
                              f"{HB.iree_hal_format_element_type(actual)} ({actual:08X})")
        have = views.dims(vptr, rank)
        if have == shape:  # the usual case (dims in range): the checks below would all pass
            return
        want = [d & self._mask for d in shape]  # compared as iree_hal_dim_t
        if want != have:
            _shape_mismatch(vm_buffers.text(message), want, have)

    def buffer_view_buffer(self, ctx: CallContext, view: Ref) -> Ref:
        buffer = self._views.deref_buffer(view)
        _object_retain(self.heap, buffer, self._buffer_type)
        return Ref(buffer, self._buffer_type)

    def buffer_view_dim(self, ctx: CallContext, view: Ref, index: int) -> int:
        vptr = self._views.deref(view)
        if index > self._views.rank(vptr) or index < 0:  # as IREE: index == rank is not rejected
            return 0
        d = self._views.dim(vptr, index)
        # The size_t dim returned as int64_t: a 64-bit size_t reinterpreted, a 32-bit one widened.
        return d - (1 << 64) if d >> 63 else d

    def buffer_view_element_type(self, ctx: CallContext, view: Ref) -> int:
        return _i32(self._views.element_type(self._views.deref(view)))

    def buffer_view_encoding_type(self, ctx: CallContext, view: Ref) -> int:
        return _i32(self._views.encoding_type(self._views.deref(view)))

    def buffer_view_rank(self, ctx: CallContext, view: Ref) -> int:
        return self._views.rank(self._views.deref(view))

    def buffer_view_trace(self, ctx: CallContext, key: Ref, views: list[Ref]) -> None:
        return None  # no debug sink is configured: IREE does nothing either

    # -- device queries -----------------------------------------------------------------------------

    def _query_i64(self, ctx: CallContext, category: Ref, key: Ref) -> tuple[int, int]:
        # Both are required vm.buffers (check_deref: null is INVALID_ARGUMENT), category first.
        cat = self._vm_buffers.text(category)
        k = self._vm_buffers.text(key)
        if cat == "hal.cpu":
            value = cpu.lookup(self.cpu_data, k, self.heap.machine)
            if value is not None:
                return 1, value
        return 0, 0  # unknown category, or NOT_FOUND for the key: ok = 0


def _count_error(count: int) -> StatusError:
    """IREE_VM_ABI_VLA_STACK_CAST's status for a span of more than 128 dims."""
    return StatusError(StatusCode.OUT_OF_RANGE, f"count {count} > {_MAX_RANK}")


def _subspan_error(e: StatusError, offset: int, length: int, mask: int) -> StatusError:
    """iree_hal_buffer_subspan's status annotated as buffer.subspan / buffer_view.create do (device
    sizes of the data model: `mask`)."""
    return StatusError(e.status.code, f"{e.status.message}; invalid subspan of an existing buffer "
                                      f"(source_offset={offset & mask}, length={length & mask})")


def _shape_mismatch(what: str, want: list[int], have: list[int]) -> None:
    """Raise buffer_view.assert's shape status (dims as size_t), annotated with both shapes as a build
    with IREE_HAL_MODULE_STRING_UTIL_ENABLE does; a shape longer than its 32-byte text buffer makes
    the formatting fail, and that bare OUT_OF_RANGE is returned instead."""
    if len(have) != len(want):
        message = (f"{what} shape rank mismatch; expected {len(want)}{' (scalar)' if not want else ''} "
                   f"but have {len(have)}{' (scalar)' if not have else ''}")
    else:
        i = next(i for i, (w, h) in enumerate(zip(want, have)) if w != h)
        message = f"{what} shape dimension {i} mismatch; expected {want[i]} but have {have[i]}"
    have_text, want_text = "x".join(map(str, have)), "x".join(map(str, want))
    if len(have_text) >= 32 or len(want_text) >= 32:
        raise StatusError(StatusCode.OUT_OF_RANGE)
    raise StatusError(StatusCode.INVALID_ARGUMENT,
                      f"{message}; expected shape `{want_text}`, actual shape `{have_text}`")


def _i32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >> 31 else v


def _element_types_compatible(actual: int, expected: int) -> bool:
    """buffer_view.assert's rule: opaque actual, same-width integers, or an exact match."""
    if actual == expected:
        return True
    if HB.iree_hal_element_numerical_type(actual) == HB.NumericalType.UNKNOWN:
        return True
    if (HB.iree_hal_element_numerical_type_is_integer(actual)
            and HB.iree_hal_element_numerical_type_is_integer(expected)):
        return HB.iree_hal_element_bit_count(actual) == HB.iree_hal_element_bit_count(expected)
    return False


__all__ = ["HalInlineModule"]
