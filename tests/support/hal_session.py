"""Fixtures of the HAL tests (tests/hal and tests/modules/hal import them into their conftest.py): an
emulated runtime on a tracked heap that fails the test on leaks."""
from __future__ import annotations

import pytest

from ireeabi.modules.hal.runtime import HalRuntime
from ireeabi.vm import ref as R
from ireeabi.vm.buffer import BufferAccess
from ireeabi.base.heap import tracked_heap
from ireeabi.vm.ref import Ref

from .hal_programs import Program


class Session:
    """A runtime plus helpers that keep every ref they hand out for release at teardown."""

    def __init__(self, rt: HalRuntime) -> None:
        self.rt = rt
        self.held: list[Ref] = []

    def keep(self, *refs: Ref) -> Ref:
        self.held.extend(r for r in refs if isinstance(r, Ref))
        return refs[0] if refs else None

    def call(self, name, *args):
        out = self.rt.call(name, *args)
        self.keep(*[r for r in out if isinstance(r, Ref)])
        return out

    def bytes_buffer(self, data: bytes) -> Ref:
        vmb = self.rt.vm_buffers
        b = vmb.create(BufferAccess.MUTABLE | BufferAccess.ORIGIN_HOST, len(data))
        vmb.write_elements(b, 0, data, 1)
        return self.keep(Ref(b, vmb.type))

    def load(self, prog: Program) -> Ref:
        (exe,) = self.call("hal_loader.executable.load", self.bytes_buffer(prog.format.encode()),
                           self.bytes_buffer(prog.elf), R.NULL_REF)
        return exe

    def function(self, exe: Ref, name: str) -> int:
        (fid,) = self.call("hal_loader.executable.lookup.function", exe, self.bytes_buffer(name.encode()))
        return fid

    def allocate(self, nbytes: int) -> tuple[Ref, Ref]:
        return tuple(self.call("hal_inline.buffer.allocate", 64, nbytes))

    def release_all(self) -> None:
        while self.held:
            R.release_value(self.rt.heap, self.held.pop())


def _session(**modes):
    with tracked_heap() as heap, HalRuntime(heap, **modes) as rt:
        s = Session(rt)
        try:
            yield s
        finally:
            s.release_all()


@pytest.fixture
def session():
    yield from _session()


@pytest.fixture
def legacy_loader_session():
    yield from _session(legacy_loader=True)
