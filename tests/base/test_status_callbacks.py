"""Statuses across the C boundary, function-pointer calls, the host data model, shim kinds."""
from __future__ import annotations

import ctypes

import pytest

from ireeabi.abi import targets
from ireeabi.base import allocator as A
from ireeabi.base import callbacks
from ireeabi.vm import shims
from ireeabi.base.machine import host as _host_machine
from ireeabi.base import status as S
from ireeabi.base.callbacks import FunctionPointerError
from ireeabi.base.heap import Heap
from ireeabi.base.status import StatusCode, StatusError

HOST_M = _host_machine()  # the data model of the default (host) heap


@pytest.fixture
def host_functions() -> callbacks.HostFunctions:
    """A host function table of its own (a heap makes one for itself), off the reference path."""
    return callbacks.HostFunctions()


def test_status_pointers_carry_the_code_in_the_low_bits() -> None:
    table = S.StatusTable()
    for code in StatusCode:
        p = table.to_pointer(S.Status(code, f"m{code}"))
        if code == StatusCode.OK:
            assert p == 0 and table.take(p).ok
            continue
        assert p != 0 and S.code_of(p) == code == p & S.STATUS_CODE_MASK
        assert table.take(p) == S.Status(code, f"m{code}")
        with pytest.raises(S.StatusTokenError, match=f"0x{p:x}"):
            table.take(p)  # consumed once, as IREE frees a status once


def test_status_error_carries_code_and_message() -> None:
    e = StatusError(StatusCode.OUT_OF_RANGE, "count 9 > 4")
    assert (e.code, e.message, str(e)) == (StatusCode.OUT_OF_RANGE, "count 9 > 4", "OUT_OF_RANGE: count 9 > 4")
    assert e.status == S.Status(StatusCode.OUT_OF_RANGE, "count 9 > 4")
    with pytest.raises(StatusError) as raised:
        table = S.StatusTable()
        table.check(table.to_pointer(e.status))
    assert raised.value.code == StatusCode.OUT_OF_RANGE


def test_callbacks_are_real_c_function_pointers_and_checked(host_functions) -> None:
    seen: list[int] = []
    fn = host_functions.make(callbacks.DESTROY_FN, lambda p: seen.append(p), name="probe")
    callbacks.DESTROY_FN(fn)(0x40)  # callable from C by address
    host_functions.call(fn, callbacks.DESTROY_FN, 0x80)
    assert seen == [0x40, 0x80]
    with pytest.raises(FunctionPointerError, match="another signature"):
        host_functions.call(fn, callbacks.CTL_FN, None, 0, None, None)
    host_functions.forget(fn)
    with pytest.raises(FunctionPointerError, match="not a registered C function"):
        host_functions.call(fn, callbacks.DESTROY_FN, 0)
    with pytest.raises(FunctionPointerError, match="NULL"):
        host_functions.call(0, callbacks.DESTROY_FN, 0)


EDGE_ARGS = [(0, 1, None, 5), (None, 2**31, 0, 0), (2**64 - 1, -1, 1, 1), (-1, 2**40 + 3, 1, 1),
             (2**64, 0, 0, 0), (0x1000, -(2**31) - 1, 0x7F, 2**63), (True, True, False, True)]
EDGE_RESULTS = [0, None, 1, 2**64 - 1, -5, 2**64 + 8]


@pytest.mark.parametrize("result", EDGE_RESULTS)
def test_direct_calls_convert_as_the_call_through_c(host_functions, result) -> None:
    """Issue 14's direct callbacks: a Python caller of a registered Python function skips C, with
    every argument and result converted as ctypes converts them on the way through C (the oracle:
    the same function called through its real C pointer)."""
    seen: list[tuple] = []

    def ctl(*args):
        seen.append(args)
        return result

    address = host_functions.make_raw(callbacks.CTL_FN, ctl, name="edge")
    try:
        direct = host_functions.find(address).pointer
        assert not isinstance(direct, callbacks.CTL_FN)  # the fast path, not a ctypes pointer
        through_c = callbacks.CTL_FN(address)
        for args in EDGE_ARGS:
            got = direct(*args), seen[-1:]
            want = through_c(*args), seen[-1:]
            assert got == want, args
        for bad in [(1.5, 0, 0, 0), (0, "x", 0, 0)]:
            with pytest.raises(ctypes.ArgumentError):
                through_c(*bad)
            with pytest.raises(ctypes.ArgumentError):
                direct(*bad)
    finally:
        host_functions.forget(address)


def test_direct_calls_of_a_destroy_function_and_a_raising_one(host_functions) -> None:
    seen: list = []
    address = host_functions.make(callbacks.DESTROY_FN, seen.append, name="probe")
    try:
        assert host_functions.find(address).pointer(2**64 + 0x40) is None
        assert callbacks.DESTROY_FN(address)(2**64 + 0x40) is None
        assert seen == [0x40, 0x40]
    finally:
        host_functions.forget(address)

    def raw(p):  # breaks make_raw's contract: through C ctypes would print and drop the error
        raise KeyError("raw")

    address = host_functions.make_raw(callbacks.DESTROY_FN, raw)
    try:
        with pytest.raises(KeyError, match="raw"):  # parked, then re-raised by call()
            host_functions.call(address, callbacks.DESTROY_FN, 1)
    finally:
        host_functions.forget(address)


def test_a_reference_table_calls_through_c() -> None:
    table = callbacks.HostFunctions(reference=True)
    address = table.make(callbacks.DESTROY_FN, lambda p: None, name="through C")
    try:
        assert isinstance(table.find(address).pointer, callbacks.DESTROY_FN)
    finally:
        table.forget(address)


def test_a_heap_made_with_the_reference_switch_calls_its_callbacks_through_c(monkeypatch) -> None:
    """IREEABI_REFERENCE is read when a heap is made, and only then: that heap's table calls its
    Python callbacks through their C pointers, another heap's calls them directly, whatever the
    variable says when the callbacks are registered."""
    monkeypatch.setenv("IREEABI_REFERENCE", "1")
    forced = Heap(name="forced")
    monkeypatch.delenv("IREEABI_REFERENCE")
    fast = Heap(name="fast")
    monkeypatch.setenv("IREEABI_REFERENCE", "1")
    for heap, through_c in ((forced, True), (fast, False)):
        seen: list[int] = []
        a = A.heap_allocator(heap)
        destroy = heap.functions.make(callbacks.DESTROY_FN, seen.append, name="probe")
        assert isinstance(heap.functions.find(a.ctl).pointer, callbacks.CTL_FN) is through_c
        assert isinstance(heap.functions.find(destroy).pointer, callbacks.DESTROY_FN) is through_c
        heap.functions.call(destroy, callbacks.DESTROY_FN, 0x40)
        assert seen == [0x40]
        A.free(heap, a, A.malloc(heap, a, 8))
        assert not heap.leaks()
        heap.close()


def test_callback_exceptions_resurface_after_the_c_call(host_functions) -> None:
    def boom(p: int) -> None:
        raise KeyError("from inside C")

    fn = host_functions.make(callbacks.DESTROY_FN, boom)
    with pytest.raises(KeyError, match="from inside C"):
        host_functions.call(fn, callbacks.DESTROY_FN, 1)
    host_functions.forget(fn)


def test_host_target_is_the_running_data_model() -> None:
    assert HOST_M.target is targets.get(HOST_M.target.name)
    assert HOST_M.pointer_size == ctypes.sizeof(ctypes.c_void_p) == HOST_M.word.size
    assert HOST_M.target.scalar("long long").size == ctypes.sizeof(ctypes.c_longlong)


@pytest.mark.parametrize("fragment,kind", [("", "void"), ("rIiii", "fixed"), ("rCrD", "vla"),
                                           ("rIiiiCiDCrIID", "spanwalker"), ("CiDi", "spanwalker")])
def test_shim_kinds(fragment: str, kind: str) -> None:
    assert shims.describe(fragment) == kind
