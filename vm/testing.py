"""pytest fixtures for code that uses `ireeabi.vm`. They are part of ireeabi's registered pytest
plugin (`ireeabi.tooling.testing`, which adds a HalRuntime and native modules of one's own); a
conftest.py may also import them.

- `target`: the data model of `heap` (None: the host). Parametrize it to run a test on other data
  models: `@pytest.mark.parametrize("target", ["riscv32", "i386"])`.
- `heap`: a fresh tracked Heap per test on `target`; the test errors at teardown with LeakError
  (listing every live allocation with its size and the stack that made it, and any failing status
  nobody consumed) if anything outlives it.
- `types`: the heap's ref type registry, closed (descriptors freed) before the leak check.
- `buffers`: the vm.buffer type (IREE #24827's destroy rule) on that registry.
"""
from __future__ import annotations

from typing import Iterator

import pytest

from .buffer import BufferType
from ..base.heap import Heap, tracked_heap
from .ref import TypeRegistry


@pytest.fixture
def target() -> "str | None":
    return None


@pytest.fixture
def heap(target: "str | None") -> Iterator[Heap]:
    with tracked_heap(target=target) as h:
        yield h


@pytest.fixture
def types(heap: Heap) -> Iterator[TypeRegistry]:
    registry = TypeRegistry(heap)
    yield registry
    registry.close()


@pytest.fixture
def buffers(types: TypeRegistry) -> Iterator[BufferType]:
    bt = BufferType(types)
    yield bt
    bt.close()
