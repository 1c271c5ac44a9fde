"""iree_allocator_t on real memory: ctl called through pointers in memory, IREE's statuses, aligned scheme."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ireeabi.layouts import base as L
from ireeabi.base import allocator as A
from ireeabi.base import callbacks
from ireeabi.base import status as S
from ireeabi.base.allocator import AllocatorT, Command
from ireeabi.base.callbacks import FunctionPointerError
from ireeabi.base.heap import Heap, HeapError, LeakError, tracked_heap
from ireeabi.base.status import StatusCode, StatusError

from ireeabi.base.machine import host as _host_machine
from ireeabi.layouts.base import AllocatorLayout

from support.allocator_recorder import Recorder  # a logging ctl served from the heap

HOST_M = _host_machine()  # the data model of the default (host) heap


def test_layout_of_the_struct_matches_the_catalog(heap: Heap) -> None:
    lay = L.iree_allocator_t.layout(heap.target)
    assert heap.machine.view(AllocatorLayout).size == lay.size == 2 * heap.pointer_size  # fact sheet §5: {self @0, ctl @P}


def test_heap_ctl_status_rules(heap: Heap) -> None:
    a = A.heap_allocator(heap)
    with pytest.raises(StatusError) as e:
        A.malloc(heap, a, 0)
    assert (e.value.code, e.value.message) == (StatusCode.INVALID_ARGUMENT, "allocations must be >0 bytes")
    with heap.scratch(16) as slot:  # an unknown command, issued through the C pointer directly
        result = heap.functions.call(a.ctl, callbacks.CTL_FN, a.self, 7, None, slot)
        assert S.code_of(result) == StatusCode.UNIMPLEMENTED
        st_ = heap.statuses.take(result)
        assert st_.code == StatusCode.UNIMPLEMENTED
    with pytest.raises(StatusError) as e:
        A.malloc(heap, A.allocator_null(), 8)
    assert e.value.message == "allocator has no control routine"
    with pytest.raises(StatusError) as e:
        A.malloc(heap, a, heap.limit + 1)
    assert e.value.code == StatusCode.RESOURCE_EXHAUSTED


def test_malloc_is_calloc_and_realloc_of_null_mallocs(heap: Heap) -> None:
    rec = Recorder(heap)
    a = AllocatorT(0, rec.address)
    p = A.malloc(heap, a, 10)
    q = A.malloc_uninitialized(heap, a, 10)
    r = A.realloc(heap, a, 20, 0)
    assert [c for c, _ in rec.log] == ["CALLOC", "MALLOC", "REALLOC"]
    for x in (p, q, r):
        A.free(heap, a, x)
    A.free(heap, a, 0)  # FREE is not issued for NULL
    A.free(heap, A.allocator_null(), p)  # nor without ctl
    assert [c for c, _ in rec.log].count("FREE") == 3
    rec.close()


def test_heap_ctl_free_nulls_the_slot_and_realloc_moves(heap: Heap) -> None:
    a = A.heap_allocator(heap)
    p = A.malloc(heap, a, 4)
    heap.write(p, b"wxyz")
    p2 = A.realloc(heap, a, 64, p)
    assert heap.read(p2, 4) == b"wxyz"
    with heap.scratch(heap.pointer_size) as slot:
        heap.write_word(slot, p2)
        heap.statuses.check(heap.functions.call(a.ctl, callbacks.CTL_FN, a.self, int(Command.FREE), None, slot) or 0)
        assert heap.read_word(slot) == 0


def test_a_ctl_written_into_memory_by_other_code_is_honoured(heap: Heap) -> None:
    rec = Recorder(heap)
    where = heap.malloc(heap.machine.view(AllocatorLayout).size)
    view = heap.struct_at(L.iree_allocator_t, where)  # "other code" fills the struct field by field
    view.self = 0xABC0
    view.ctl = rec.address
    assert A.read(heap, where) == AllocatorT(0xABC0, rec.address)
    p = A.malloc(heap, where, 33)  # by address: the struct is read at the call
    A.free(heap, where, p)
    assert rec.log == [("CALLOC", 33), ("FREE", p)]
    view.ctl = 0
    with pytest.raises(StatusError, match="no control routine"):
        A.malloc(heap, where, 1)
    heap.free(where)
    rec.close()


def test_forged_ctl_pointers_are_never_called(heap: Heap) -> None:
    for ctl in (0x1000, heap.malloc(8)):
        with pytest.raises(FunctionPointerError) as e:
            A.malloc(heap, AllocatorT(0, ctl), 8)
        assert e.value.address == ctl
    heap.free(ctl)


def test_failing_ctl_status_travels_and_is_consumed(heap: Heap) -> None:
    rec = Recorder(heap, StatusError(StatusCode.DATA_LOSS, "disk on fire"))
    with pytest.raises(StatusError) as e:
        A.malloc(heap, AllocatorT(0, rec.address), 8)
    assert (e.value.code, e.value.message) == (StatusCode.DATA_LOSS, "disk on fire")
    A.free(heap, AllocatorT(0, rec.address), 0x10)  # iree_allocator_free ignores (and frees) the status
    rec.close()  # the heap fixture fails the test if any failing status was left unconsumed


def test_heap_errors_cross_an_ignored_free_status(heap: Heap) -> None:
    """FREE's status is ignored by iree_allocator_free, but a memory error inside it is not lost."""
    a = A.heap_allocator(heap)
    p = A.malloc(heap, a, 8)
    A.free(heap, a, p)
    with pytest.raises(HeapError, match=f"double free of 0x{p:x}"):
        A.free(heap, a, p)


def test_unconsumed_failing_status_is_a_leak() -> None:
    with pytest.raises(LeakError, match="never consumed"):
        with tracked_heap() as heap:
            heap.statuses.to_pointer(S.Status(StatusCode.ABORTED, "dropped"))


def test_aligned_request_sizes_and_slot(heap: Heap) -> None:
    """Request = sizeof(uintptr_t) + n + max(min_alignment, iree_max_align_t) (fact sheet §5)."""
    rec = Recorder(heap)
    a = AllocatorT(0, rec.address)
    measured = {}
    for alignment in (0, 8, 16, 64, 4096):
        rec.log.clear()
        r = A.malloc_aligned(heap, a, 100, alignment, 48)
        (_, requested), = rec.log
        measured[alignment] = requested
        assert requested == heap.pointer_size + 100 + max(alignment, heap.machine.max_align)
        assert (r + 48) & (max(alignment, heap.machine.max_align) - 1) == 0  # ~(A - 1): 12 on i386
        base = heap.read_word(A.base_slot(r, heap.pointer_size))
        assert heap.allocation(base) is not None and A.base_slot(r, heap.pointer_size) == (r & ~(heap.pointer_size - 1)) - heap.pointer_size
        assert base + heap.pointer_size <= r and r + 100 <= base + requested
        A.free_aligned(heap, a, r)
        assert rec.log[-1] == ("FREE", base)
    if heap.target.name == "x86_64":  # measured with the real code (fact sheet §5)
        assert measured == {0: 124, 8: 124, 16: 124, 64: 172, 4096: 4204}
    rec.close()


def test_aligned_argument_errors(heap: Heap) -> None:
    a = A.heap_allocator(heap)
    with pytest.raises(StatusError, match="allocations must be >0 bytes"):
        A.malloc_aligned(heap, a, 0, 0, 0)
    with pytest.raises(StatusError, match=r"alignments must be powers of two \(got 24\)"):
        A.malloc_aligned(heap, a, 8, 24, 0)
    r = A.malloc_aligned(heap, a, 64, 64, 0)
    with pytest.raises(StatusError, match="same alignment"):
        A.realloc_aligned(heap, a, 128, 4096, 0, r)
    A.free_aligned(heap, a, r)


def test_free_aligned_of_a_plain_pointer_is_a_heap_error(heap: Heap) -> None:
    a = A.heap_allocator(heap)
    p = A.malloc(heap, a, 64)
    with pytest.raises(HeapError, match=f"free_aligned of 0x{p + 16:x}, which malloc_aligned did not return"):
        A.free_aligned(heap, a, p + 16)
    A.free(heap, a, p)


@settings(derandomize=True, max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # `target`: a plain value
@given(n=st.integers(1, 5000), align_log=st.one_of(st.none(), st.integers(0, 12)),
       offset=st.integers(0, 256), grow=st.integers(1, 5000))
def test_aligned_scheme_properties(target: "str | None", n: int, align_log: int | None, offset: int,
                                   grow: int) -> None:
    alignment = 0 if align_log is None else 1 << align_log
    with tracked_heap(target=target) as heap:
        A_ = max(alignment, heap.machine.max_align)
        a = A.heap_allocator(heap)
        r = A.malloc_aligned(heap, a, n, alignment, offset)
        assert (r + offset) & (A_ - 1) == 0  # iree_aligned_ptr's mask (A_ is 12 on i386)
        heap.check_range(r, n)  # the whole payload lies inside the base block
        heap.write(r, bytes(i & 0xFF for i in range(n)))
        r2 = A.realloc_aligned(heap, a, grow, alignment, offset, r)
        assert (r2 + offset) & (A_ - 1) == 0
        keep = min(n, grow)
        assert heap.read(r2, keep) == bytes(i & 0xFF for i in range(keep))
        A.free_aligned(heap, a, r2)


def _ctl_status(heap: Heap, a: AllocatorT, command: int) -> int:
    """ctl(a.self, command, NULL, &slot) through the heap's function table; the status pointer."""
    frame = heap.scratch_push(heap.pointer_size) if not heap.closed else 0
    try:
        return heap.functions.call(a.ctl, callbacks.CTL_FN, a.self, command, None, frame or None) or 0
    finally:
        if frame:
            heap.scratch_pop(frame)


@pytest.mark.parametrize("model", [None, "riscv32"])
def test_allocator_tokens_belong_to_their_heap(model) -> None:
    """iree_allocator_t.self is written into target memory, so it does not depend on the other
    heaps or on the process's history: every heap's libc allocator has the same self, which names
    it to the heap's own ctl (a host heap's ctl is its own C function, so two open host heaps'
    allocators still differ). Closing one heap leaves the other's allocator working; the closed
    one's ctl answers FAILED_PRECONDITION in its own status table, as it does for another self."""
    first, other = Heap(target=model), Heap(target=model)
    a, b = A.heap_allocator(first), A.heap_allocator(other)
    assert a.self == b.self == A.HEAP_ALLOCATOR_SELF
    assert (a != b) == first.machine.is_host  # foreign heaps: each has its own address space
    first.close()
    p = A.malloc(other, b, 24)  # through the ctl, which knows its heap
    assert other.allocation(p).size == 24
    A.free(other, b, p)
    assert other.allocation(p) is None
    gone = _ctl_status(first, a, int(Command.MALLOC))
    with pytest.raises(S.StatusTokenError, match="is not a live status"):
        other.statuses.take(gone)
    assert first.statuses.take(gone) == S.Status(StatusCode.FAILED_PRECONDITION,
                                                 f"heap allocator 0x{a.self:x} is gone")
    wrong = _ctl_status(other, AllocatorT(a.self + 16, b.ctl), int(Command.FREE))
    assert other.statuses.take(wrong) == S.Status(StatusCode.FAILED_PRECONDITION,
                                                  f"heap allocator 0x{a.self + 16:x} is gone")
    again = Heap(target=model)
    assert A.heap_allocator(again).self == a.self
    q = A.malloc(again, A.heap_allocator(again), 8)
    A.free(again, A.heap_allocator(again), q)
    for h in (other, again):
        h.close()


def test_status_tables_are_per_heap() -> None:
    """A failing status made on one heap is unknown to another, and only its own heap reports it
    as a leak."""
    with tracked_heap() as quiet:
        with pytest.raises(LeakError, match="never consumed") as leak:
            with tracked_heap() as loud:
                p = loud.statuses.to_pointer(S.Status(StatusCode.ABORTED, "dropped"))
                with pytest.raises(S.StatusTokenError, match=f"0x{p:x} is not a live status"):
                    quiet.statuses.take(p)
        assert leak.value.statuses == ["ABORTED; dropped"]
        assert quiet.statuses.live_tokens() == set()


def _allocator_script(heap: Heap) -> list:
    """What the heap's own libc allocator gives for a run of commands, good and bad: every result or
    error (type and message), then the live blocks' offsets, sizes and bytes and the serial count."""
    a = A.heap_allocator(heap)
    seen: list = []

    def do(fn, *args):
        try:
            seen.append(("ok", fn(heap, a, *args)))
        except (StatusError, HeapError) as e:
            seen.append((type(e).__name__, getattr(e, "code", None), str(e)))
    do(A.malloc, 24)
    do(A.malloc_uninitialized, 40)
    p = seen[0][1]
    heap.write(p, b"kept bytes")
    do(A.realloc, 64, p)
    do(A.realloc, 8, 0)  # REALLOC of NULL allocates
    do(A.malloc, 0)  # INVALID_ARGUMENT, from the ctl's rule
    do(A.malloc, heap.limit + 1)  # RESOURCE_EXHAUSTED as libc's failure, with the heap's annotation
    do(A.realloc, 16, 0x1230)  # a pointer the heap never gave
    do(A.free, seen[2][1])
    do(A.free, seen[2][1])  # double free
    do(A.free, 0x40)  # forged
    base = heap.space.base
    live = [(x.address - base, x.size, bytes(heap.read(x.address, x.size))) for x in heap.leaks()]
    for x in heap.leaks():
        heap.free(x.address)
    return [(k, v - base if k == "ok" and v else v) if len(s) == 2 else s for s in seen
            for k, v in [s[:2]]] + [live, heap.mark()]


def test_the_direct_heap_allocator_agrees_with_the_layered_one(monkeypatch) -> None:
    """Issue 14's fast path for the heap's own libc allocator (no function pointer, no scratch
    words) against the layered path (IREE's iree_allocator_* through ctl): the same pointers,
    statuses, errors, bytes and allocations, on a target whose addresses are the heap's own; and
    the fast path really skips the pointer (the layered one only for the failures)."""
    through_ctl: list = []
    real = A._call_ctl
    monkeypatch.setattr(A, "_call_ctl", lambda heap, ctl, *rest: through_ctl.append(rest[1]) or real(heap, ctl, *rest))
    runs = []
    for reference in (True, False):
        heap = Heap(target="riscv32", limit=1 << 20, capture_stacks=False, name="direct")  # stacks differ by path
        if reference:
            heap.force_reference()
        through_ctl.clear()
        runs.append((_allocator_script(heap), list(through_ctl)))
        heap.close()
    (layered, layered_ctl), (direct, direct_ctl) = runs
    assert direct == layered
    assert [s[0] for s in layered[:10]] == ["ok"] * 4 + ["StatusError"] * 2 + ["HeapError"] + ["ok"] + ["HeapError"] * 2
    assert len(layered_ctl) == 10  # every command goes through ctl
    # the direct path reaches the pointer only where the command fails (and the layered path reports it)
    assert len(direct_ctl) == 5, direct_ctl


def test_the_environment_switch_turns_the_direct_allocator_off(monkeypatch) -> None:
    monkeypatch.setenv("IREEABI_REFERENCE", "1")
    heap = Heap(name="forced")
    A.heap_allocator(heap)
    assert heap.reference and heap.direct_allocator is None
    heap.close()
    monkeypatch.delenv("IREEABI_REFERENCE")
    heap = Heap(name="fast")
    assert heap.direct_allocator is None and A.heap_allocator(heap) == heap.direct_allocator
    heap.close()
