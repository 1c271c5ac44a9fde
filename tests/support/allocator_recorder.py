"""A custom allocator control function for tests of code that allocates through an iree_allocator_t:
it logs every command and serves it from the heap (tests/base/test_allocator.py,
tests/vm/test_vm_c_api_fidelity.py)."""
from __future__ import annotations

from ireeabi.base import allocator as A
from ireeabi.base.allocator import Command
from ireeabi.base.heap import Heap
from ireeabi.base.status import StatusError


class Recorder:
    """A custom ctl that logs every command and serves it from the heap (written into memory by tests)."""

    def __init__(self, heap: Heap, fail_with: StatusError | None = None) -> None:
        self.heap = heap
        self.fail_with = fail_with
        self.log: list[tuple[str, int]] = []
        self.address = A.make_ctl(heap, self.ctl, name="recorder")

    def ctl(self, self_ptr: int, command: int, params: int, inout: int) -> None:
        if self.fail_with is not None:
            raise self.fail_with
        if command == Command.FREE:
            ptr = self.heap.read_word(inout)
            self.log.append(("FREE", ptr))
            self.heap.free(ptr)
            return
        n = A.read_byte_length(self.heap, params)
        self.log.append((Command(command).name, n))
        self.heap.write_word(inout, self.heap.malloc(n))

    def close(self) -> None:
        self.heap.functions.forget(self.address)
