"""iree_allocator_t on real memory: control functions, the allocation API, the aligned scheme.

An allocator is the two-word struct {self, ctl} (runtime/src/iree/base/allocator.h). Every operation
here calls `ctl` through the function pointer it is given, usually read from memory, with an
`iree_allocator_alloc_params_t` and an in/out pointer slot placed in tracked scratch memory, exactly as
allocator.c does; so a control function written by anyone (see `make_ctl`) is honoured.

`heap_allocator(heap)` is the libc allocator of allocator_libc.c over a tracked `Heap`: same commands,
same statuses and messages (byte_length 0 -> INVALID_ARGUMENT, failure -> RESOURCE_EXHAUSTED "libc
allocator failed the request" annotated with the heap's reason, unknown command -> UNIMPLEMENTED,
REALLOC of NULL acts as MALLOC, FREE nulls the slot).

Every function takes the heap it works on (whose data model lays out the structs and sizes the words)
and the allocator by value (`AllocatorT`, as IREE passes it) or as the address of an iree_allocator_t
in memory, which is then read at the call.

The aligned scheme (iree_allocator_malloc_aligned / realloc_aligned / free_aligned) over-allocates
`sizeof(uintptr_t) + byte_length + A` with A = max(min_alignment, iree_max_align_t), returns R with
R + offset A-aligned, and stores the base pointer in the pointer-sized slot just below R rounded down
to pointer alignment. free_aligned trusts that slot; with a strict heap it first checks that R really
came from malloc_aligned (HeapError otherwise).
"""
from __future__ import annotations

import enum
import weakref
from typing import Callable, NamedTuple

from ..layouts import base as _base
from ..layouts.base import AllocatorLayout
from . import callbacks
from .heap import Heap, HeapError
from .status import Status, StatusCode, StatusError


class Command(enum.IntEnum):
    """iree_allocator_command_t."""

    MALLOC = _base.ALLOCATOR_COMMAND_MALLOC
    CALLOC = _base.ALLOCATOR_COMMAND_CALLOC
    REALLOC = _base.ALLOCATOR_COMMAND_REALLOC
    FREE = _base.ALLOCATOR_COMMAND_FREE


class AllocatorT(NamedTuple):
    """An iree_allocator_t value (IREE passes allocators by value)."""

    self: int
    ctl: int

    @property
    def is_null(self) -> bool:
        """iree_allocator_is_null tests ctl only."""
        return self.ctl == 0


def allocator_null() -> AllocatorT:
    return AllocatorT(0, 0)


def layout(heap: Heap) -> AllocatorLayout:
    """The allocator structs on the heap's data model."""
    return heap.machine.view(AllocatorLayout)


def _value(heap: Heap, allocator: "AllocatorT | int") -> AllocatorT:
    """An allocator value; an int is the address of a struct, read now (its ctl is what gets called)."""
    if isinstance(allocator, AllocatorT):
        return allocator
    if isinstance(allocator, int) and not isinstance(allocator, bool):
        return read(heap, allocator)
    raise HeapError(f"not an allocator or an allocator address: {allocator!r}")


def read(heap: Heap, address: int) -> AllocatorT:
    """The iree_allocator_t stored at `address`."""
    L = heap.machine.view(AllocatorLayout)
    raw, off = heap.cell(address, L.size)  # the whole struct, one check
    unpack = L.word.unpack_from
    return AllocatorT(unpack(raw, off + L.self_off)[0], unpack(raw, off + L.ctl_off)[0])


def write(heap: Heap, address: int, allocator: AllocatorT) -> None:
    L = heap.machine.view(AllocatorLayout)
    raw, off = heap.cell(address, L.size)
    pack, mask = L.word.pack_into, L.word_mask
    pack(raw, off + L.self_off, allocator.self & mask)
    pack(raw, off + L.ctl_off, allocator.ctl & mask)


# -- control functions ----------------------------------------------------------------------------

CtlBody = Callable[[int, int, int, int], None]  # (self, command, params, inout_ptr); raises StatusError


def make_ctl(heap: Heap, body: CtlBody, *, name: str = "") -> int:
    """Register a Python control function as an `iree_allocator_ctl_fn_t` of the heap's address
    space (a real C function on the host target); its address. `heap.functions.forget` drops it.

    `body` gets raw ints (NULL as 0) and signals failure by raising StatusError, which becomes a
    failing iree_status_t for the C caller. Any other exception (a HeapError from a bad pointer) is
    re-raised in the Python code that called through the pointer.
    """
    park = callbacks.park
    to_pointer = heap.statuses.to_pointer  # the heap's table: its caller takes the status there

    # Registered as is (callbacks.make_raw): the status conversion and the parking that
    # callbacks.make would wrap around it, in one frame (every FREE of a storage buffer runs it).
    def ctl(self: int | None, command: int, params: int | None, inout: int | None) -> int | None:
        try:
            try:
                body(self or 0, command, params or 0, inout or 0)
            except StatusError as e:
                return to_pointer(e.status)
            return None
        except BaseException as e:  # noqa: BLE001 - nothing may unwind through C
            park(e)
            return to_pointer(_ctl_error(e))

    return heap.functions.make_raw(callbacks.CTL_FN, ctl, name=name or getattr(body, "__name__", "ctl"))


def read_byte_length(heap: Heap, params: int) -> int:
    """params->byte_length, for control functions."""
    return heap.read_word(params + heap.machine.view(AllocatorLayout).byte_length_off)


_MALLOC, _CALLOC, _REALLOC, _FREE = (int(Command.MALLOC), int(Command.CALLOC), int(Command.REALLOC),
                                     int(Command.FREE))
_ALLOCATING = frozenset({_MALLOC, _CALLOC, _REALLOC})


_EXHAUSTED = StatusCode.RESOURCE_EXHAUSTED


def _libc_failure(e: StatusError) -> Status:
    """allocator_libc.c's status for a failed malloc/calloc/realloc, with the heap's own account
    of why appended as an annotation (the message stays IREE's)."""
    return Status(_EXHAUSTED, "libc allocator failed the request", (e.message,) + e.annotations)


# iree_allocator_t.self of every heap's libc allocator: a word naming the allocator to the ctl it
# is passed to (that ctl belongs to one heap, so the word need not tell heaps apart, and target
# memory does not depend on what other heaps the process holds).
HEAP_ALLOCATOR_SELF = 16


def _heap_ctl(heap: Heap) -> "Callable[[int | None, int, int | None, int | None], int | None]":
    """The C-callable libc ctl of `heap` (held weakly: the heap's table holds the function): what
    `make_ctl(body)` would build, with the body inlined (it runs on every allocation and free).
    Registered as is, so it parks what callbacks.make would."""
    heap_ref = weakref.ref(heap)
    to_pointer = heap.statuses.to_pointer
    park = callbacks.park
    byte_length_off = heap.machine.view(AllocatorLayout).byte_length_off

    def heap_ctl(self: int | None, command: int, params: int | None, inout: int | None) -> int | None:
        try:
            try:
                self = self or 0
                heap = heap_ref()
                if heap is None or heap.closed or self != HEAP_ALLOCATOR_SELF:
                    raise StatusError(StatusCode.FAILED_PRECONDITION, f"heap allocator 0x{self:x} is gone")
                inout = inout or 0
                if command == _FREE:
                    ptr = heap.read_word(inout)
                    if ptr:
                        heap.free(ptr)
                        heap.write_word(inout, 0)
                elif command in _ALLOCATING:
                    byte_length = heap.read_word((params or 0) + byte_length_off)
                    heap.write_word(inout, _heap_allocate(heap, command, byte_length, heap.read_word(inout)))
                else:
                    raise StatusError(StatusCode.UNIMPLEMENTED, "unsupported libc allocator command")
            except StatusError as e:
                if e.code is _EXHAUSTED:  # only the heap's limit raises it: libc's NULL from malloc
                    return to_pointer(_libc_failure(e))
                return to_pointer(e.status)
            return None
        except BaseException as e:  # noqa: BLE001 - nothing may unwind through C
            park(e)
            return to_pointer(_ctl_error(e))
    return heap_ctl


def _heap_allocate(heap: Heap, command: int, byte_length: int, existing: int) -> int:
    """allocator_libc.c's MALLOC/CALLOC/REALLOC on the heap, given the words its ctl reads: the new
    block (REALLOC of a non-NULL `existing` moves it)."""
    if byte_length == 0:
        raise StatusError(StatusCode.INVALID_ARGUMENT, "allocations must be >0 bytes")
    if existing and command == _REALLOC:
        return heap.realloc(existing, byte_length)
    return heap.malloc(byte_length, zero=command == _CALLOC)


def _ctl_error(exc: BaseException) -> Status:
    """The status a ctl returns for an exception it parked (the caller re-raises the exception)."""
    return Status(StatusCode.INTERNAL, f"ctl raised {exc!r}")


def heap_allocator(heap: Heap) -> AllocatorT:
    """The libc-style allocator over `heap`: self is HEAP_ALLOCATOR_SELF, ctl the heap's own
    function (registered once in the heap's function table, which keeps it; it knows its heap)."""
    a = heap.allocator_value
    if a is None:
        a = heap.allocator_value = AllocatorT(HEAP_ALLOCATOR_SELF, heap.functions.shared(
            "heap_ctl", callbacks.CTL_FN, _heap_ctl(heap)))
        if not heap.reference:
            heap.direct_allocator = a
    return a


# -- the allocation API (allocator.c) -------------------------------------------------------------


def _check_size(n: int, what: str, mask: int) -> None:
    if type(n) is int and 0 <= n <= mask:  # the common case, without isinstance calls
        return
    if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= mask:
        raise StatusError(StatusCode.OUT_OF_RANGE, f"{what} {n!r} does not fit iree_host_size_t")


_CTL_FN = callbacks.CTL_FN
_CTL_WHAT = "iree_allocator_t.ctl"
_PARKED = callbacks.PARKED


def _call_ctl(heap: Heap, ctl: int, self: int, command: int, params: int, slot: int) -> int | None:
    """ctl(self, command, params, slot) through the function pointer, as the heap's address space
    resolves it; an exception a Python ctl parked is re-raised here (its status, if any, consumed
    first, from the heap's table)."""
    functions = heap.functions
    r = functions.find(ctl)
    if r is None or r.prototype is not _CTL_FN:
        r = functions.lookup(ctl, _CTL_FN, _CTL_WHAT)  # raises
    result = r.pointer(self or None, command, params or None, slot)
    if _PARKED.errors:
        callbacks.reraise_parked(result, heap.statuses.ignore)
    return result


def _issue_alloc(heap: Heap, allocator: AllocatorT, command: int, byte_length: int, inout_value: int) -> int:
    """An allocating command: params and slot in one scratch frame, ctl called through its pointer."""
    ctl = allocator.ctl
    if not ctl:
        raise StatusError(StatusCode.INVALID_ARGUMENT, "allocator has no control routine")
    L = heap.machine.view(AllocatorLayout)
    if type(byte_length) is not int or not 0 <= byte_length <= L.word_mask:
        _check_size(byte_length, "byte_length", L.word_mask)
    if allocator == heap.direct_allocator and type(inout_value) is int and heap.scratch_fits(L.frame_size):
        # The heap's own libc allocator: its rule on the values the ctl would read, without the
        # function pointer and the frame's words. A failure changed nothing: the layered path
        # below makes it again, as the status IREE's code sees.
        try:
            return _heap_allocate(heap, command, byte_length, inout_value & L.word_mask)
        except (StatusError, HeapError):
            pass
    frame = heap.scratch_push(L.frame_size)  # zeroed
    try:
        heap.write_word(frame + L.byte_length_off, byte_length)
        slot = frame + L.slot_off
        if inout_value or type(inout_value) is not int:  # 0 is already there
            heap.write_word(slot, inout_value)
        result = _call_ctl(heap, ctl, allocator.self, command, frame, slot)
        if result:
            heap.statuses.check(result)
        return heap.read_word(slot)
    finally:
        heap.scratch_pop(frame)


def malloc(heap: Heap, allocator: "AllocatorT | int", byte_length: int) -> int:
    """iree_allocator_malloc: zeroed memory (it issues CALLOC)."""
    if type(allocator) is not AllocatorT:
        allocator = _value(heap, allocator)
    return _issue_alloc(heap, allocator, _CALLOC, byte_length, 0)


def malloc_uninitialized(heap: Heap, allocator: "AllocatorT | int", byte_length: int) -> int:
    return _issue_alloc(heap, _value(heap, allocator), _MALLOC, byte_length, 0)


def realloc(heap: Heap, allocator: "AllocatorT | int", byte_length: int, ptr: int) -> int:
    """iree_allocator_realloc; on failure `ptr` is untouched (StatusError raised)."""
    return _issue_alloc(heap, _value(heap, allocator), _REALLOC, byte_length, ptr)


def clone(heap: Heap, allocator: "AllocatorT | int", source: "bytes | bytearray | memoryview") -> int:
    """iree_allocator_clone: MALLOC (uninitialized) of len(source) bytes, then the copy; an empty
    source is a 0-byte request, which the allocator answers (the libc one: INVALID_ARGUMENT)."""
    try:
        data = memoryview(source).cast("B")
    except TypeError:
        raise HeapError(f"clone needs a bytes-like source, not {type(source).__name__}") from None
    ptr = _issue_alloc(heap, _value(heap, allocator), _MALLOC, data.nbytes, 0)
    heap.write(ptr, data.tobytes())
    return ptr


def free(heap: Heap, allocator: "AllocatorT | int", ptr: int) -> None:
    """iree_allocator_free: FREE only for a non-NULL pointer and ctl; its status is ignored."""
    if type(allocator) is not AllocatorT:
        allocator = _value(heap, allocator)
    if ptr and allocator.ctl:
        free_with(heap, allocator.self, allocator.ctl, ptr)


def free_with(heap: Heap, self: int, ctl: int, ptr: int) -> None:
    """`free` given the allocator's two words as read from memory, with ptr and ctl known non-NULL
    (no AllocatorT to build on a destroy path, e.g. a VM buffer's)."""
    own = heap.direct_allocator
    if own is not None and ctl == own[1] and self == own[0] and heap.scratch_fits(heap.pointer_size):
        try:  # as in _issue_alloc: the heap's own FREE, the layered path for any failure
            heap.free(ptr & heap.machine.word_mask)
            return
        except HeapError:
            pass
    slot = heap.scratch_push(heap.pointer_size)
    try:
        heap.write_word(slot, ptr)
        result = _call_ctl(heap, ctl, self, _FREE, 0, slot)
        if result:
            heap.statuses.ignore(result)
    finally:
        heap.scratch_pop(slot)


# -- aligned allocation ---------------------------------------------------------------------------


def _valid_alignment(a: int) -> bool:
    return isinstance(a, int) and not isinstance(a, bool) and (a == 0 or (a > 0 and a & (a - 1) == 0))


def aligned_pointer(base: int, alignment: int, offset: int, pointer_size: int) -> int:
    """iree_aligned_ptr: the R in [base, ...) with R + offset aligned to `alignment`, past the
    pointer-sized base slot."""
    return ((base + alignment + pointer_size + offset) & ~(alignment - 1)) - offset


def base_slot(aligned: int, pointer_size: int) -> int:
    """Where free_aligned looks for the base pointer: the word below R rounded down to a pointer."""
    return (aligned & ~(pointer_size - 1)) - pointer_size


_MALLOC_OVERFLOW = "aligned allocation size overflow"
_REALLOC_OVERFLOW = "aligned reallocation size overflow"


def _check_aligned_args(L: AllocatorLayout, byte_length: int, min_alignment: int, offset: int,
                        overflow: "str | None" = _MALLOC_OVERFLOW) -> int:
    """The alignment to use, or the first error of `_check_aligned_args_slowly`."""
    mask = L.word_mask
    if (type(byte_length) is int and type(offset) is int and type(min_alignment) is int
            and 0 < byte_length <= mask and 0 <= offset <= mask
            and min_alignment >= 0 and not min_alignment & (min_alignment - 1)):  # all valid
        alignment = min_alignment if min_alignment > L.max_align else L.max_align
        if L.pointer_size + byte_length + alignment <= mask:
            return alignment
    return _check_aligned_args_slowly(L, byte_length, min_alignment, offset, overflow)


def _check_aligned_args_slowly(L: AllocatorLayout, byte_length: int, min_alignment: int, offset: int,
                               overflow: "str | None") -> int:
    """malloc_aligned's checks in its order (what no C caller could pass first); `overflow` None
    leaves the size check to the caller (realloc_aligned makes it after comparing alignments)."""
    mask = L.word_mask
    _check_size(byte_length, "byte_length", mask)
    _check_size(min_alignment, "min_alignment", mask)
    _check_size(offset, "offset", mask)
    if byte_length == 0:
        raise StatusError(StatusCode.INVALID_ARGUMENT, "allocations must be >0 bytes")
    if not _valid_alignment(min_alignment):
        raise StatusError(StatusCode.INVALID_ARGUMENT,
                          f"alignments must be powers of two (got {min_alignment})")
    alignment = max(min_alignment, L.max_align)
    if overflow is not None and L.pointer_size + byte_length + alignment > mask:
        raise StatusError(StatusCode.OUT_OF_RANGE, overflow)
    return alignment


def malloc_aligned(heap: Heap, allocator: "AllocatorT | int", byte_length: int, min_alignment: int = 0,
                   offset: int = 0) -> int:
    """iree_allocator_malloc_aligned: R such that R + offset is aligned to max(min_alignment, max_align)."""
    if type(allocator) is not AllocatorT:
        allocator = _value(heap, allocator)
    L = heap.machine.view(AllocatorLayout)
    p = L.pointer_size
    alignment = _check_aligned_args(L, byte_length, min_alignment, offset)
    base = _issue_alloc(heap, allocator, _CALLOC, p + byte_length + alignment, 0)  # malloc
    aligned = ((base + alignment + p + offset) & ~(alignment - 1)) - offset  # aligned_pointer
    heap.write_word((aligned & L.slot_mask) - p, base)  # at base_slot(aligned)
    heap.note_aligned(aligned, base)
    return aligned


def realloc_aligned(heap: Heap, allocator: "AllocatorT | int", byte_length: int, min_alignment: int,
                    offset: int, ptr: int) -> int:
    """iree_allocator_realloc_aligned (NULL `ptr` allocates)."""
    allocator = _value(heap, allocator)
    if not ptr:
        return malloc_aligned(heap, allocator, byte_length, min_alignment, offset)
    L = heap.machine.view(AllocatorLayout)
    p = L.pointer_size
    alignment = _check_aligned_args(L, byte_length, min_alignment, offset, None)
    if heap.strict_aligned and not heap.is_aligned(ptr):
        raise HeapError(f"realloc_aligned of 0x{ptr:x}, which malloc_aligned did not return", ptr)
    unaligned = heap.read_word(base_slot(ptr, p))
    if ptr != aligned_pointer(unaligned, alignment, offset, p):
        raise StatusError(StatusCode.INVALID_ARGUMENT, "reallocation must have the same alignment as "
                          f"the original allocation (got {min_alignment})")
    if p + byte_length + alignment > L.word_mask:  # realloc_aligned checks the size only here
        raise StatusError(StatusCode.OUT_OF_RANGE, _REALLOC_OVERFLOW)
    old_offset = ptr - unaligned
    new_base = realloc(heap, allocator, p + byte_length + alignment, unaligned)
    heap.forget_aligned(ptr)
    aligned = aligned_pointer(new_base, alignment, offset, p)
    old_data = new_base + old_offset
    if old_data != aligned:
        heap.memmove(aligned, old_data, byte_length)
    heap.write_word(base_slot(aligned, p), new_base)
    heap.note_aligned(aligned, new_base)
    return aligned


def free_aligned(heap: Heap, allocator: "AllocatorT | int", ptr: int) -> None:
    """iree_allocator_free_aligned: FREE the base pointer stored below `ptr`."""
    if type(allocator) is not AllocatorT:
        allocator = _value(heap, allocator)
    if not ptr:
        return
    p = heap.pointer_size
    slot = (ptr & ~(p - 1)) - p  # base_slot(ptr)
    if heap.strict_aligned and not heap.is_aligned(ptr):
        try:
            would = f"the word there holds 0x{heap.read_word(slot):x}"
        except HeapError:
            would = "that word is not readable memory"
        raise HeapError(f"free_aligned of 0x{ptr:x}, which malloc_aligned did not return: IREE would "
                        f"FREE the base pointer read from 0x{slot:x} ({would})", ptr)
    base = heap.read_word(slot)
    ctl = allocator.ctl
    if ctl:  # a null allocator frees nothing: the block stays a live aligned allocation
        heap.forget_aligned(ptr)
        if base:  # iree_allocator_free's own tests, inlined
            free_with(heap, allocator.self, ctl, base)


__all__ = ["Command", "AllocatorT", "allocator_null", "layout", "read", "write", "CtlBody",
           "make_ctl", "read_byte_length", "HEAP_ALLOCATOR_SELF", "heap_allocator", "malloc",
           "malloc_uninitialized", "realloc", "clone", "free", "free_with", "aligned_pointer", "base_slot",
           "malloc_aligned", "realloc_aligned", "free_aligned"]
