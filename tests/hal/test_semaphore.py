"""hal/semaphore.py called directly: timeline semaphores and fences of the local-sync device (the
`hal` module's fence exports reach them in tests/modules/hal).

Expected values: IREE's real `hal` module on a local-sync device (iree.runtime 3.13, through
support.full_hal_oracle.RealHal) where one of its exports shows the rule; IREE's sources where none
does: runtime/src/iree/hal/fence.c (iree_hal_fence_insert, iree_hal_fence_query,
iree_hal_fence_destroy), hal/semaphore.c (iree_hal_semaphore_list_signal) and async/semaphore.c
(iree_async_semaphore_signal_untainted, iree_async_semaphore_fail).
"""
from __future__ import annotations

from typing import Iterator

import pytest

from ireeabi.hal.semaphore import SemaphoreTypes
from ireeabi.vm.ref import TypeRegistry
from ireeabi.base.status import StatusCode, StatusError
from support.full_hal_oracle import Handle, RealHal


@pytest.fixture
def sems(types: TypeRegistry) -> Iterator[SemaphoreTypes]:
    s = SemaphoreTypes(types)
    yield s
    s.close()


@pytest.fixture(scope="module")
def real_fence_story() -> list:
    """The real module's answers: a new fence queried, signalled, queried, signalled again; a second
    fence failed with ABORTED (10), then signalled."""
    real = RealHal()
    dev = Handle(0)
    real.call("devices.get", (0,), 1)
    real.call("fence.create", (dev, 0), 1)
    fence = Handle(1)
    out = [real.call("fence.query", (fence,), 1), real.call("fence.signal", (fence,), 0),
           real.call("fence.query", (fence,), 1), real.call("fence.signal", (fence,), 0)]
    real.call("fence.create", (dev, 0), 1)
    failed = Handle(len(real.results) - 1)
    out += [real.call("fence.fail", (failed, int(StatusCode.ABORTED)), 0),
            real.call("fence.signal", (failed,), 0)]
    return out


def _code(status: "StatusError | None") -> int:
    return 0 if status is None else int(status.code)


def test_a_timeline_fence_is_pending_then_reached_then_refuses_a_second_signal(sems, real_fence_story):
    pending, signalled, reached, again = real_fence_story[:4]
    fence_ptr = sems.new_timeline_fence()
    fence = sems.fences.payload(fence_ptr)
    assert [_code(sems.query(fence))] == pending == [int(StatusCode.DEFERRED)]
    assert sems.signal(fence) is None and signalled == []
    assert [_code(sems.query(fence))] == reached == [0]
    with pytest.raises(StatusError) as info:
        sems.signal(fence)
    assert (info.value.code.name, info.value.message) == again
    sems.fences.release(fence_ptr)


def test_signalling_a_failed_fence_succeeds_and_the_failure_stays(sems, real_fence_story):
    """The timeline check does not look at the failure (async/semaphore.c: the signal compares the
    value only); the query then gives the failure (IREE's process dies querying it: here it is the
    status the semaphore holds)."""
    failed, signalled = real_fence_story[4:]
    fence_ptr = sems.new_timeline_fence()
    fence = sems.fences.payload(fence_ptr)
    sems.fail(fence, StatusError(StatusCode.ABORTED, "first"))
    assert failed == [] and signalled == []
    assert sems.signal(fence) is None
    assert sems.query(fence).code == StatusCode.ABORTED
    sems.fences.release(fence_ptr)


def test_the_first_failure_wins(sems):
    """iree_async_semaphore_fail: a compare-exchange from no status; a later failure is freed."""
    fence_ptr = sems.new_timeline_fence()
    fence = sems.fences.payload(fence_ptr)
    first = StatusError(StatusCode.ABORTED, "first")
    sems.fail(fence, first)
    sems.fail(fence, StatusError(StatusCode.INTERNAL, "second"))
    assert sems.query(fence) is first
    sems.fences.release(fence_ptr)


def test_insert_keeps_the_larger_value_and_retains_a_semaphore_once(sems):
    """iree_hal_fence_insert: an existing entry takes max(old, new) without a retain; a new entry
    is appended and retained. iree_hal_fence_destroy releases each entry's semaphore."""
    sem = sems.create_semaphore(0)
    fence_ptr = sems.create_fence()
    fence = sems.fences.payload(fence_ptr)
    sems.insert(fence, sem, 3)
    sems.insert(fence, sem, 2)
    assert fence.timepoints == [[sem, 3]]
    assert sems.semaphores.counter(sem) == 2  # the caller's and the fence's
    sems.insert(fence, sem, 5)
    assert fence.timepoints == [[sem, 5]] and sems.semaphores.counter(sem) == 2
    sems.fences.release(fence_ptr)
    assert sems.semaphores.counter(sem) == 1
    sems.semaphores.release(sem)


def test_query_stops_at_the_first_timepoint_that_is_not_ok(sems):
    """iree_hal_fence_query walks the timepoints in order: a pending one before a failed one is
    DEFERRED, a failed one before a pending one is its failure."""
    pending, failed = sems.create_semaphore(0), sems.create_semaphore(0)
    sems.semaphores.payload(failed).failure = StatusError(StatusCode.DATA_LOSS, "lost")
    for order, code in (((pending, failed), StatusCode.DEFERRED), ((failed, pending), StatusCode.DATA_LOSS)):
        fence_ptr = sems.create_fence()
        for sem in order:
            sems.insert(sems.fences.payload(fence_ptr), sem, 1)
        assert sems.query(sems.fences.payload(fence_ptr)).code == code
        sems.fences.release(fence_ptr)
    assert sems.query(None) is None  # a NULL fence is OK
    sems.semaphores.release(pending)
    sems.semaphores.release(failed)


def test_signal_stops_at_the_first_failure(sems):
    """iree_hal_semaphore_list_signal breaks at the first failing signal: later semaphores keep
    their values."""
    ahead, behind = sems.create_semaphore(7), sems.create_semaphore(0)
    fence_ptr = sems.create_fence()
    fence = sems.fences.payload(fence_ptr)
    sems.insert(fence, ahead, 7)
    sems.insert(fence, behind, 1)
    with pytest.raises(StatusError, match="semaphore already signaled past 7"):
        sems.signal(fence)
    assert (sems.semaphores.payload(ahead).value, sems.semaphores.payload(behind).value) == (7, 0)
    sems.fences.release(fence_ptr)
    sems.semaphores.release(ahead)
    sems.semaphores.release(behind)


def test_values_are_uint64(sems):
    """iree_hal_semaphore_create takes a uint64_t initial value: the VM's i64 -1 is 2**64 - 1,
    past which no signal can go."""
    sem = sems.create_semaphore(-1)
    assert sems.semaphores.payload(sem).value == 2**64 - 1
    fence_ptr = sems.create_fence()
    sems.insert(sems.fences.payload(fence_ptr), sem, -1)
    assert sems.query(sems.fences.payload(fence_ptr)) is None  # reached at the top of the timeline
    sems.fences.release(fence_ptr)
    sems.semaphores.release(sem)


def test_a_wait_nothing_can_end_is_refused_not_a_hang(sems):
    """A wait with an infinite timeout on a pending timepoint: IREE's thread would block forever
    (nothing else runs on the local-sync device); here it is FAILED_PRECONDITION naming the waiter."""
    fence_ptr = sems.new_timeline_fence()
    fence = sems.fences.payload(fence_ptr)
    with pytest.raises(StatusError) as info:
        sems.wait(fence, "queue_execute")
    assert info.value.code == StatusCode.FAILED_PRECONDITION
    assert "queue_execute waits on a fence that is not signalled" in info.value.message
    assert "IREE would block forever" in info.value.message
    sems.signal(fence)
    sems.wait(fence, "queue_execute")  # reached: returns at once
    sems.fences.release(fence_ptr)
