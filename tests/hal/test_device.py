"""hal/device.py called directly: the local-sync device's configuration queries and its heap
allocator (the `hal` module's device exports reach them in tests/modules/hal).

Expected values: IREE's real `hal` module on its local-sync device (iree.runtime 3.13, through
support.full_hal_oracle.RealHal): `device.query.i64` for the categories sync_device.c answers
(iree_hal_sync_device_query_i64; `hal.device.id` patterns by iree_string_view_match_pattern,
base/string_view.c); and IREE's sources for the heap allocator
(runtime/src/iree/hal/allocator_heap.c, iree_hal_heap_allocator_query_buffer_compatibility).
"""
from __future__ import annotations

import sys
from typing import Callable, Iterator, TypeVar

import pytest

from ireeabi.base.internal import cpu
from ireeabi.hal import device
from ireeabi.hal.buffer import BufferTypes
from ireeabi.hal.device import DEVICE_IDENTIFIER, DeviceTypes, compatible_params, match_pattern
from ireeabi.layouts import hal_buffer as HB
from ireeabi.vm.ref import TypeRegistry
from support.full_hal_oracle import Handle, RealHal, Str

T = TypeVar("T")
PATTERNS = ["local-sync", "local-*", "*sync", "local?sync", "l*c*", "*", "", "local", "local-sync*",
            "?ocal-sync", "local-task", "*-*-*", "**", "*?*?*", "local-syncx", "?" * 10, "?" * 11,
            "LOCAL-SYNC", "*l*o*c*a*l*-*s*y*n*c*", "*" * 16, "*" * 17, "?" * 10 + "*" * 6,
            "?" * 10 + "*" * 7, "*" * 16 + "b", "*" * 60 + "b"]
# (category, key) pairs sync_device.c answers, or does not (ok 0).
QUERIES = [("hal.device", "concurrency"), ("hal.dispatch", "concurrency"), ("hal.device", "other"),
           ("hal.dispatch", ""), ("hal.unknown", "concurrency"), ("", "")]


@pytest.fixture(scope="module")
def real_queries() -> dict[tuple[str, str], list[int]]:
    """[ok, value] of the real device.query.i64 for every pattern and query above."""
    real = RealHal()
    real.call("devices.get", (0,), 1)
    asked = [("hal.device.id", p) for p in PATTERNS] + QUERIES
    return {(c, k): real.call("device.query.i64", (Handle(0), Str(c), Str(k)), 2) for c, k in asked}


@pytest.fixture
def devices(types: TypeRegistry) -> Iterator[DeviceTypes]:
    buffers = BufferTypes(types)
    d = DeviceTypes(types, buffers, cpu.read_data(target=types.heap.machine), lambda fmt: False)
    yield d
    d.close()
    buffers.close()


def test_the_device_is_local_sync(real_queries):
    assert DEVICE_IDENTIFIER == "local-sync"
    assert real_queries["hal.device.id", "local-sync"] == [1, 1]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_device_id_patterns_match_as_iree_matches_them(devices, real_queries, pattern):
    device = devices.devices.payload(devices.device)
    ok, value = _bounded(lambda: devices.query_i64(device, "hal.device.id", pattern))
    assert [int(ok), value] == real_queries["hal.device.id", pattern]
    assert _bounded(lambda: match_pattern(DEVICE_IDENTIFIER, pattern)) == bool(value)


@pytest.mark.parametrize("category, key", QUERIES)
def test_other_queries_answer_as_the_sync_device(devices, real_queries, category, key):
    ok, value = devices.query_i64(devices.devices.payload(devices.device), category, key)
    assert [int(ok), value] == real_queries[category, key]


MAX_CALLS = 1000  # calls of hal/device.py's functions one match may make


def _bounded(match: Callable[[], T]) -> T:
    """`match()`, failing once it has made MAX_CALLS calls of hal/device.py's functions (work
    counted, not timed: a match that backtracks exponentially fails instead of hanging)."""
    calls = 0

    def count(frame, event, arg):  # noqa: ANN001, ANN202 - sys.settrace's callback
        nonlocal calls
        if event == "call" and frame.f_code.co_filename == device.__file__:
            calls += 1
            if calls > MAX_CALLS:
                raise RuntimeError(f"the match made over {MAX_CALLS} calls")
        return None

    sys.settrace(count)
    try:
        return match()
    finally:
        sys.settrace(None)


def test_a_run_of_stars_is_one_step():
    """iree_string_view_match_pattern_impl coalesces a run of wildcards into one step: 16 stars and
    a `b` against "local-sync" ends after a few calls (matching one `*` at a time would make 11**16
    of them)."""
    assert _bounded(lambda: match_pattern(DEVICE_IDENTIFIER, "*" * 16 + "b")) is False


def test_the_heap_allocator_makes_buffers_host_visible_and_never_optimal():
    """query_buffer_compatibility: type |= HOST_VISIBLE, type &= ~OPTIMAL; usage |= MAPPING_SCOPED |
    MAPPING_PERSISTENT | MAPPING_ACCESS_RANDOM | TRANSFER."""
    M, U = HB.MemoryType, HB.BufferUsage
    added = int(U.MAPPING_SCOPED | U.MAPPING_PERSISTENT | U.MAPPING_ACCESS_RANDOM | U.TRANSFER)
    assert compatible_params(int(M.OPTIMAL | M.DEVICE_LOCAL), int(U.DISPATCH_STORAGE)) == \
        ((int(M.OPTIMAL | M.DEVICE_LOCAL) | int(M.HOST_VISIBLE)) & ~int(M.OPTIMAL),
         int(U.DISPATCH_STORAGE) | added)
    assert compatible_params(0, 0) == (int(M.HOST_VISIBLE), added)


def test_allocate_gives_a_compatible_zeroed_buffer_with_access_all(devices):
    """iree_hal_buffer_params_canonicalize: access 0 is ALL; the buffer's type and usage are the
    compatible ones."""
    M = HB.MemoryType
    ptr = devices.allocate(int(M.DEVICE_LOCAL), 0, 100)
    b = devices.buffers.get(ptr)
    assert (b.memory_type, b.allowed_usage) == compatible_params(int(M.DEVICE_LOCAL), 0)
    assert b.allowed_access == int(HB.MemoryAccess.ALL)
    assert b.byte_length == 100 and devices.buffers.heap.read(b.storage, 100) == bytes(100)
    devices.buffers.resources.release(ptr)


def test_the_device_holds_its_allocator_until_it_goes(devices):
    """The device retains its allocator (sync_device.c keeps device_allocator); releasing the
    runtime's reference to the device destroys both."""
    device = devices.devices.payload(devices.device)
    assert devices.allocators.counter(device.allocator) == 1
    assert devices.allocators.live() == [device.allocator]
    devices.devices.release(devices.device)
    devices.device = 0
    assert devices.allocators.live() == [] and devices.devices.live() == []
