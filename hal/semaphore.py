"""Timeline semaphores and fences of a single-threaded local-sync device.

Semaphores (`hal.semaphore`) hold a 64-bit timeline value or a failure status; fences
(`hal.fence`, runtime/src/iree/hal/fence.c) are lists of (semaphore, value) timepoints that retain
their semaphores. Nothing runs in the background: every queue operation completes inside its call,
so a timepoint is reached exactly when some call has signalled it. A wait on a timepoint that is not
reached can therefore never end; IREE would block its thread forever (or until the timeout), and
here that wait is an error (or, with a finite timeout, the DEADLINE_EXCEEDED the timeout would end
in), never a hang.

Rules (IREE's sources):
- signal: the new value must exceed the current one (iree_async_semaphore_signal_untainted,
  runtime/src/iree/async/semaphore.c: INVALID_ARGUMENT "semaphore already signaled past N");
  a failed semaphore stays failed and gives its status to every query and wait;
- fence insert: a semaphore already in the fence keeps the larger value (iree_hal_fence_insert);
- fence query: OK when every timepoint is reached, DEFERRED when one is pending, the failure status
  of a failed semaphore (iree_hal_fence_query).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..vm.ref import TypeRegistry
from ..base.status import StatusCode, StatusError

from .resource import ResourceType

_U64 = (1 << 64) - 1


@dataclass
class Semaphore:
    """iree_hal_semaphore_t: the timeline value, or the status it failed with."""

    value: int = 0
    failure: StatusError | None = None


@dataclass
class Fence:
    """iree_hal_fence_t: (semaphore address, payload value) timepoints; each semaphore retained."""

    timepoints: list[list[int]] = field(default_factory=list)


class SemaphoreTypes:
    """The hal.semaphore and hal.fence types of one heap and their operations."""

    def __init__(self, registry: TypeRegistry) -> None:
        self.heap = registry.heap
        self.semaphores: ResourceType[Semaphore] = ResourceType(registry, "hal.semaphore", lambda p, s: None)
        self.fences: ResourceType[Fence] = ResourceType(registry, "hal.fence", self._destroy_fence)

    def close(self) -> None:
        self.fences.close()
        self.semaphores.close()

    def _destroy_fence(self, ptr: int, fence: Fence) -> None:
        for sem, _ in fence.timepoints:
            self.semaphores.release(sem)

    # -- making ------------------------------------------------------------------------------------

    def create_semaphore(self, initial_value: int = 0) -> int:
        return self.semaphores.create(Semaphore(initial_value & _U64), tag="hal.semaphore")

    def create_fence(self) -> int:
        return self.fences.create(Fence(), tag="hal.fence")

    def insert(self, fence: Fence, semaphore: int, value: int) -> None:
        """iree_hal_fence_insert: a semaphore already present keeps max(old, new)."""
        for tp in fence.timepoints:
            if tp[0] == semaphore:
                tp[1] = max(tp[1], value)
                return
        self.semaphores.retain(semaphore)
        fence.timepoints.append([semaphore, value & _U64])

    def new_timeline_fence(self) -> int:
        """hal.fence.create: a new semaphore at 0 and a fence waiting for it to reach 1."""
        sem = self.create_semaphore(0)
        try:
            fence = self.create_fence()
            self.insert(self.fences.payload(fence), sem, 1)
        finally:
            self.semaphores.release(sem)
        return fence

    # -- state -------------------------------------------------------------------------------------

    def query(self, fence: Fence | None) -> StatusError | None:
        """iree_hal_fence_query: None (OK), StatusError(DEFERRED), or a failed semaphore's status."""
        if fence is None:
            return None
        for sem, value in fence.timepoints:
            s = self.semaphores.payload(sem)
            if s.failure is not None:
                return s.failure
            if s.value < value:
                return StatusError(StatusCode.DEFERRED)
        return None

    def signal(self, fence: Fence | None) -> None:
        """iree_hal_fence_signal: every semaphore to its payload value (iree_hal_semaphore_list_signal
        stops at the first failure). The timeline check does not look at a failure: signalling a
        failed semaphore succeeds (iree.runtime 3.13 shows it) and the failure stays."""
        if fence is None:
            return
        for sem, value in fence.timepoints:
            s = self.semaphores.payload(sem)
            if value <= s.value:
                raise StatusError(StatusCode.INVALID_ARGUMENT, f"semaphore already signaled past {value}")
            s.value = value

    def fail(self, fence: Fence | None, status: StatusError) -> None:
        """iree_hal_fence_fail: every semaphore of the fence fails with `status` (a semaphore that
        already failed keeps its first status)."""
        if fence is None:
            return
        for sem, _ in fence.timepoints:
            s = self.semaphores.payload(sem)
            if s.failure is None:
                s.failure = status

    def wait(self, fence: Fence | None, what: str) -> None:
        """Wait for `fence` with an infinite timeout, as the local-sync queue operations begin: an
        unreached timepoint can never be reached here (nothing else runs), so it is an error naming
        `what` waited; a failed semaphore gives its status."""
        status = self.query(fence)
        if status is None:
            return
        if status.code == StatusCode.DEFERRED:
            raise StatusError(StatusCode.FAILED_PRECONDITION,
                              f"{what} waits on a fence that is not signalled and that nothing can signal "
                              f"(single-threaded local-sync device: IREE would block forever)")
        raise status


__all__ = ["Semaphore", "Fence", "SemaphoreTypes"]
