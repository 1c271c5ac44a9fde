"""Fidelity of the allocator API and of status values to IREE's base library.

Sources are in the IREE mirror at runtime/src/iree/base/ (allocator.h, allocator.c, allocator_libc.c,
status.h, status.c); where the real runtime can show a value, iree-run-module (iree-base-runtime,
through tests/support/iree_tools.py) is the oracle and the text is compared as it prints it.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from support import iree_tools as tools
from ireeabi.base import allocator as A, callbacks, status as S
from ireeabi.base.allocator import AllocatorT, Command
from ireeabi.base.heap import Heap, HeapError, UNINITIALIZED_BYTE
from ireeabi.base.status import StatusCode, StatusError

from ireeabi.base.machine import host as _host_machine
from ireeabi.layouts.base import AllocatorLayout

HOST_M = _host_machine()  # the data model of the default (host) heap

P = HOST_M.pointer_size
MAX_ALIGN = HOST_M.target.max_align
WORD_MASK = HOST_M.word_mask
NO_CTL = "allocator has no control routine"
ZERO_BYTES = "allocations must be >0 bytes"
LIBC_FAILED = "libc allocator failed the request"
FAIL_PROGRAM = Path(__file__).resolve().parents[1] / "programs" / "host" / "fail.mlir"

# vm.buffer.alloc(length, alignment) -> its length: iree_vm_buffer_create hands both to
# iree_allocator_malloc_aligned over the system (libc) allocator.
ALLOC_VM = """
vm.module @alloc {
  vm.func @alloc(%n : i64, %a : i32) -> i64 {
    %buf = vm.buffer.alloc %n, %a : !vm.buffer
    %len = vm.buffer.length %buf : !vm.buffer -> i64
    vm.return %len : i64
  }
  vm.export @alloc
}
"""


@pytest.fixture(scope="module")
def alloc_vmfb(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("base_fidelity") / "alloc.vm.mlir"
    src.write_text(ALLOC_VM)
    return tools.compile_with_flags(src, tools.VM_INPUT_FLAGS, src.parent)


@pytest.fixture(scope="module")
def fail_vmfb() -> Path:
    return tools.compile_with_flags(FAIL_PROGRAM, tools.HOST_FLAGS)


def _iree_status_text(modules, function: str, inputs) -> str:
    """The status line iree-run-module prints, without its "file:line: " location prefix."""
    stderr = tools.run_module_failure(modules, function, [str(i) for i in inputs]).stderr
    line = stderr.strip().splitlines()[-1]
    m = re.match(r"^\S*:\d+: (.*)$", line)
    assert m, stderr
    return m.group(1)


def _ctl_call(heap: Heap, a: AllocatorT, command: int, byte_length: int, slot_value: int) -> tuple[int, int]:
    """ctl(self, command, &params, &slot) through the C pointer: (status pointer, slot after)."""
    L = heap.machine.view(AllocatorLayout)
    with heap.scratch(L.frame_size) as frame:
        heap.write_word(frame + L.byte_length_off, byte_length)
        slot = frame + L.slot_off
        heap.write_word(slot, slot_value)
        result = heap.functions.call(a.ctl, callbacks.CTL_FN, a.self or None, command, frame, slot) or 0
        return result, heap.read_word(slot)


# -- the libc control function ------------------------------------------------------------------


def test_heap_ctl_uses_the_libc_wording(heap: Heap) -> None:
    """allocator_libc.c iree_allocator_libc_ctl: an unknown command is UNIMPLEMENTED "unsupported
    libc allocator command" (ours said "heap"); iree_allocator_libc_alloc: a NULL from
    malloc/calloc/realloc is RESOURCE_EXHAUSTED "libc allocator failed the request" (ours passed
    the heap's own message on), and allocator.h's REALLOC leaves the old block as it was."""
    a = A.heap_allocator(heap)
    for command in (4, 99, -1):
        result, slot = _ctl_call(heap, a, command, 8, 0)
        assert heap.statuses.take(result) == S.Status(StatusCode.UNIMPLEMENTED, "unsupported libc allocator command")
        assert slot == 0
    for make in (lambda: A.malloc(heap, a, heap.limit + 1),
                 lambda: A.malloc_uninitialized(heap, a, heap.limit + 1)):
        with pytest.raises(StatusError) as e:
            make()
        assert (e.value.code, e.value.message) == (StatusCode.RESOURCE_EXHAUSTED, LIBC_FAILED)
        assert e.value.annotations  # the heap's own reason, kept after IREE's message
        assert e.value.status.format().startswith(f"RESOURCE_EXHAUSTED; {LIBC_FAILED}; ")
    p = A.malloc(heap, a, 4)
    heap.write(p, b"keep")
    with pytest.raises(StatusError, match=LIBC_FAILED):
        A.realloc(heap, a, heap.limit + 1, p)
    assert heap.read(p, 4) == b"keep"
    A.free(heap, a, p)


def test_libc_failure_text_matches_iree_run_module(heap: Heap, alloc_vmfb: Path) -> None:
    """The real runtime's text for a request libc cannot serve (2**62 bytes) and for a bad
    alignment, against ours for the same malloc_aligned calls."""
    theirs = _iree_status_text([alloc_vmfb], "alloc", [1 << 62, 0])
    a = A.heap_allocator(heap)
    with pytest.raises(StatusError) as e:
        A.malloc_aligned(heap, a, 1 << 62, 0, 0)
    assert theirs.startswith(S.Status(e.value.code, e.value.message).format() + "; ")
    theirs = _iree_status_text([alloc_vmfb], "alloc", [16, 3])
    with pytest.raises(StatusError) as e:
        A.malloc_aligned(heap, a, 16, 3, 0)
    assert theirs.startswith(e.value.status.format() + "; ")


def test_zero_length_null_realloc_and_null_free_at_the_ctl(heap: Heap) -> None:
    """allocator_libc.c: byte_length 0 is INVALID_ARGUMENT for MALLOC, CALLOC and REALLOC before
    anything else (slot untouched); REALLOC of a NULL slot is a plain malloc (not zeroed); FREE of
    a NULL slot succeeds and does nothing."""
    a = A.heap_allocator(heap)
    live = A.malloc(heap, a, 8)
    for command in (Command.MALLOC, Command.CALLOC, Command.REALLOC):
        for slot_value in (0, live):
            result, slot = _ctl_call(heap, a, int(command), 0, slot_value)
            assert heap.statuses.take(result) == S.Status(StatusCode.INVALID_ARGUMENT, ZERO_BYTES)
            assert slot == slot_value
    result, p = _ctl_call(heap, a, int(Command.REALLOC), 24, 0)
    assert result == 0 and heap.read(p, 24) == bytes([UNINITIALIZED_BYTE]) * 24
    result, slot = _ctl_call(heap, a, int(Command.FREE), 0, 0)
    assert (result, slot) == (0, 0)
    A.free(heap, a, p)
    A.free(heap, a, live)


# -- the allocation API ---------------------------------------------------------------------------


def test_clone_is_an_uninitialized_malloc_and_a_copy(heap: Heap) -> None:
    """allocator.c iree_allocator_clone: MALLOC (malloc_uninitialized) of data_length bytes, then
    memcpy; an empty source is a 0-byte request, which the libc ctl rejects."""
    log: list[tuple[int, int]] = []

    def ctl(self_: int, command: int, params: int, inout: int) -> None:
        if command == Command.FREE:
            heap.free(heap.read_word(inout))
            return
        n = A.read_byte_length(heap, params)
        log.append((command, n))
        heap.write_word(inout, heap.malloc(n))

    address = A.make_ctl(heap, ctl, name="clone_probe")
    try:
        p = A.clone(heap, AllocatorT(0, address), b"\x01\x02\x03")
        assert log == [(int(Command.MALLOC), 3)] and heap.read(p, 3) == b"\x01\x02\x03"
        A.free(heap, AllocatorT(0, address), p)
    finally:
        heap.functions.forget(address)
    with pytest.raises(StatusError) as e:
        A.clone(heap, A.heap_allocator(heap), b"")
    assert (e.value.code, e.value.message) == (StatusCode.INVALID_ARGUMENT, ZERO_BYTES)
    with pytest.raises(HeapError, match="bytes-like"):
        A.clone(heap, A.heap_allocator(heap), 12)


def test_null_allocator_in_every_api(heap: Heap) -> None:
    """allocator.h iree_allocator_null is {NULL, NULL}. allocator.c: issue_alloc fails INVALID_ARGUMENT
    "allocator has no control routine" (malloc, malloc_uninitialized, realloc, clone); malloc_aligned
    checks its arguments first; free and free_aligned do nothing (the block stays allocated, so a
    later free_aligned with the real allocator works: ours used to forget it and call that a bad
    pointer)."""
    null = A.allocator_null()
    assert null.is_null and AllocatorT(0x40, 0).is_null
    for call in (lambda: A.malloc(heap, null, 8), lambda: A.malloc_uninitialized(heap, null, 8),
                 lambda: A.realloc(heap, null, 8, 0), lambda: A.clone(heap, null, b"x"),
                 lambda: A.malloc_aligned(heap, null, 8, 64, 0),
                 lambda: A.realloc_aligned(heap, null, 8, 64, 0, 0)):
        with pytest.raises(StatusError) as e:
            call()
        assert (e.value.code, e.value.message) == (StatusCode.INVALID_ARGUMENT, NO_CTL)
    with pytest.raises(StatusError, match=ZERO_BYTES):
        A.malloc_aligned(heap, null, 0, 0, 0)
    a = A.heap_allocator(heap)
    r = A.malloc_aligned(heap, a, 32, 64, 0)
    heap.write(r, b"z" * 32)
    with pytest.raises(StatusError, match=NO_CTL):
        A.realloc_aligned(heap, null, 64, 64, 0, r)
    A.free_aligned(heap, null, r)
    A.free_aligned(heap, null, 0)
    A.free(heap, null, r)
    assert heap.read(r, 32) == b"z" * 32
    A.free_aligned(heap, a, r)  # the tracked heap fails the test if the base block leaked


# -- aligned allocation ---------------------------------------------------------------------------


def test_malloc_aligned_argument_checks_in_order(heap: Heap) -> None:
    """allocator.c iree_allocator_malloc_aligned: byte_length 0, then the alignment (0 or a power of
    two, iree_host_size_is_valid_alignment in alignment.h, no upper bound), then
    checked_add(sizeof(uintptr_t), byte_length, A) -> OUT_OF_RANGE "aligned allocation size
    overflow". Values no iree_host_size_t holds fail as such (ours: 2**64 passed as an alignment)."""
    a = A.heap_allocator(heap)
    with pytest.raises(StatusError, match=ZERO_BYTES):
        A.malloc_aligned(heap, a, 0, 3, 0)
    for bad in (3, 24, 1 << 40 | 1):
        with pytest.raises(StatusError) as e:
            A.malloc_aligned(heap, a, 8, bad, 0)
        assert (e.value.code, e.value.message) == (StatusCode.INVALID_ARGUMENT,
                                                   f"alignments must be powers of two (got {bad})")
    for n in (WORD_MASK - P - MAX_ALIGN + 1, WORD_MASK):
        with pytest.raises(StatusError) as e:
            A.malloc_aligned(heap, a, n, 0, 0)
        assert (e.value.code, e.value.message) == (StatusCode.OUT_OF_RANGE,
                                                   "aligned allocation size overflow")
    with pytest.raises(StatusError) as e:  # one byte less fits: the request reaches libc
        A.malloc_aligned(heap, a, WORD_MASK - P - MAX_ALIGN, 0, 0)
    assert (e.value.code, e.value.message) == (StatusCode.RESOURCE_EXHAUSTED, LIBC_FAILED)
    with pytest.raises(StatusError) as e:
        A.malloc_aligned(heap, a, 8, 1 << 64, 0)
    assert e.value.code == StatusCode.OUT_OF_RANGE and "min_alignment" in e.value.message
    r = A.malloc_aligned(heap, a, 8, 1 << 16, 24)  # larger than a page: accepted
    assert (r + 24) % (1 << 16) == 0
    A.free_aligned(heap, a, r)


def test_large_alignment_is_accepted_by_the_real_runtime(alloc_vmfb: Path) -> None:
    """No page-size cap: the real runtime serves vm.buffer.alloc(16, 64 KiB) (our side above)."""
    assert [int(v) for v in tools.run_module_results([alloc_vmfb], "alloc", ["16", str(1 << 16)], 1)] == [16]


def test_realloc_aligned_checks_in_order_with_its_own_overflow_message(heap: Heap) -> None:
    """allocator.c iree_allocator_realloc_aligned: NULL -> malloc_aligned; then byte_length 0, the
    alignment, the same-alignment comparison, and only then the size check, whose message is
    "aligned reallocation size overflow" (ours checked the size first, with malloc's message)."""
    a = A.heap_allocator(heap)
    r = A.malloc_aligned(heap, a, 16, 64, 8)
    heap.write(r, b"0123456789abcdef")
    with pytest.raises(StatusError) as e:
        A.realloc_aligned(heap, a, WORD_MASK, 64, 8, r)
    assert (e.value.code, e.value.message) == (StatusCode.OUT_OF_RANGE, "aligned reallocation size overflow")
    # The "same alignment" test compares r with the base re-aligned to the new alignment, so whether
    # a larger alignment counts as different depends on where the base landed: pick one that differs.
    base = heap.read_word(A.base_slot(r, P))
    other = next(al for al in (1 << k for k in range(7, 20)) if A.aligned_pointer(base, al, 8, P) != r)
    with pytest.raises(StatusError) as e:  # alignment differs and size overflows: alignment first
        A.realloc_aligned(heap, a, WORD_MASK, other, 8, r)
    assert (e.value.code, e.value.message) == (
        StatusCode.INVALID_ARGUMENT,
        f"reallocation must have the same alignment as the original allocation (got {other})")
    with pytest.raises(StatusError, match=ZERO_BYTES):
        A.realloc_aligned(heap, a, 0, 3, 8, r)
    with pytest.raises(StatusError, match=r"powers of two \(got 3\)"):
        A.realloc_aligned(heap, a, 8, 3, 8, r)
    assert heap.read(r, 16) == b"0123456789abcdef"  # every failure left the block alone
    A.free_aligned(heap, a, r)
    with pytest.raises(StatusError, match="aligned allocation size overflow"):  # NULL: malloc's path
        A.realloc_aligned(heap, a, WORD_MASK, 0, 0, 0)


def test_realloc_aligned_moves_the_data_when_the_shift_changes(heap: Heap) -> None:
    """allocator.c iree_allocator_realloc_aligned: after REALLOC the data sits at new_base + the old
    (aligned - base) offset; when iree_aligned_ptr(new_base) differs it memmoves byte_length bytes
    there and stores new_base below the new aligned pointer."""
    alignment, offset = 64, 8
    blocks: dict[int, tuple[int, int]] = {}  # base handed out -> (backing block, size)

    def ctl(self_: int, command: int, params: int, inout: int) -> None:
        old = heap.read_word(inout)
        if command == Command.FREE:
            heap.free(blocks.pop(old)[0])
            heap.write_word(inout, 0)
            return
        n = A.read_byte_length(heap, params)
        backing = heap.malloc(n + 128)
        # first block: base at 16 past a 64-byte boundary; the realloc'ed one at 48 past.
        shift = 48 if old else 16
        base = ((backing + 63) & -64) + shift
        if old:
            old_backing, old_n = blocks.pop(old)
            heap.memmove(base, old, min(n, old_n))  # what realloc keeps
            heap.free(old_backing)
        blocks[base] = (backing, n)
        heap.write_word(inout, base)

    address = A.make_ctl(heap, ctl, name="shifting")
    try:
        a = AllocatorT(0, address)
        r = A.malloc_aligned(heap, a, 40, alignment, offset)
        base0 = heap.read_word(A.base_slot(r, P))
        assert r == ((base0 + alignment + P + offset) & ~(alignment - 1)) - offset  # iree_aligned_ptr
        payload = bytes(range(1, 41))
        heap.write(r, payload)
        r2 = A.realloc_aligned(heap, a, 40, alignment, offset, r)
        base1 = heap.read_word(A.base_slot(r2, P))
        assert r2 == ((base1 + alignment + P + offset) & ~(alignment - 1)) - offset
        assert r2 - base1 != r - base0  # the shift changed, so the data had to move
        assert heap.read(r2, 40) == payload
        A.free_aligned(heap, a, r2)
        assert blocks == {}
    finally:
        heap.functions.forget(address)


# -- statuses -------------------------------------------------------------------------------------

# status.c iree_status_code_string, code by code.
IREE_CODE_STRINGS = {
    0: "OK", 1: "CANCELLED", 2: "UNKNOWN", 3: "INVALID_ARGUMENT", 4: "DEADLINE_EXCEEDED",
    5: "NOT_FOUND", 6: "ALREADY_EXISTS", 7: "PERMISSION_DENIED", 8: "RESOURCE_EXHAUSTED",
    9: "FAILED_PRECONDITION", 10: "ABORTED", 11: "OUT_OF_RANGE", 12: "UNIMPLEMENTED",
    13: "INTERNAL", 14: "UNAVAILABLE", 15: "DATA_LOSS", 16: "UNAUTHENTICATED", 17: "DEFERRED",
    18: "INCOMPATIBLE",
}


def test_code_strings_follow_status_c() -> None:
    """status.c iree_status_code_string: the enumerator names, "" for every other value; status.h:
    any code within IREE_STATUS_CODE_MASK (0x1F) is valid, so every low-bit value has a code."""
    assert S.STATUS_CODE_MASK == 0x1F
    for value in range(32):
        assert S.code_string(value) == IREE_CODE_STRINGS.get(value, "")
        code = S.code_of((5 << 5) | value)  # ours raised ValueError for 19..31
        assert int(code) == value
    assert S.code_string(S.as_code(19)) == "" and S.as_code(3) is StatusCode.INVALID_ARGUMENT
    with pytest.raises(ValueError, match="IREE_STATUS_CODE_MASK"):
        S.as_code(32)
    with pytest.raises(ValueError, match="IREE_STATUS_CODE_MASK"):
        StatusError(35, "too wide")


@pytest.mark.parametrize("value", [c for c in range(1, 32) if c != 17])  # DEFERRED: the tool waits
def test_status_text_matches_iree_run_module(fail_vmfb: Path, value: int) -> None:
    """util.status.check_ok with any nonzero code: iree-run-module prints the code string (empty for
    unnamed codes) and "; " before the message; our text for the same status."""
    theirs = _iree_status_text([fail_vmfb], "status", [value])
    ours = S.Status(S.as_code(value), "custom status failure").format()
    assert theirs.startswith(ours + "; "), (theirs, ours)
    table = S.StatusTable()
    pointer = table.to_pointer(S.Status(S.as_code(value), "custom status failure"))
    assert table.to_string(pointer) == ours
    with pytest.raises(StatusError) as e:
        table.check(pointer)
    assert int(e.value.code) == value


def test_code_only_statuses_are_complete_statuses(heap: Heap) -> None:
    """status.h iree_status_from_code: the code masked into the pointer, no storage; status.c
    iree_status_free/ignore do nothing for it and iree_status_format prints the code string alone.
    A control function may return one (ours took it for a dead token: StatusTokenError)."""
    assert S.from_code(StatusCode.OUT_OF_RANGE) == 11 and S.from_code(32 + 3) == 3 and S.from_code(64) == 0
    statuses = heap.statuses
    assert statuses.take(S.from_code(StatusCode.ABORTED)) == S.Status(StatusCode.ABORTED)
    statuses.ignore(S.from_code(StatusCode.ABORTED))
    assert statuses.consume_code(S.from_code(21)) == 21
    assert statuses.to_string(S.from_code(StatusCode.DATA_LOSS)) == "DATA_LOSS"
    assert statuses.to_string(0) == "OK" and S.code_of(0) == StatusCode.OK

    def raw_ctl(self_: int | None, command: int, params: int | None, inout: int | None) -> int:
        return S.from_code(StatusCode.RESOURCE_EXHAUSTED)  # as IREE_STATUS_MODE=0 builds return

    address = heap.functions.make_raw(callbacks.CTL_FN, raw_ctl, name="code_only")
    try:
        with pytest.raises(StatusError) as e:
            A.malloc(heap, AllocatorT(0, address), 8)
        assert (e.value.code, e.value.message) == (StatusCode.RESOURCE_EXHAUSTED, "")
        A.free(heap, AllocatorT(0, address), 0x100)  # FREE's status ignored: nothing to free
    finally:
        heap.functions.forget(address)


def test_annotate_and_format_follow_status_c() -> None:
    """status.c iree_status_annotate: OK or an empty message returns the status as is; no storage ->
    storage with the message; an empty storage message takes it; otherwise a message payload is
    appended. iree_status_format: code string, "; " + message if any, "; " + each payload."""
    table = S.StatusTable()
    assert table.annotate(0, "x") == 0
    p = table.to_pointer(S.Status(StatusCode.NOT_FOUND, "missing"))
    assert table.annotate(p, "") == p and table.to_string(p) == "NOT_FOUND; missing"
    assert table.annotate(p, "in f") == p  # same storage
    assert table.annotate(p, "in g") == p
    assert table.to_string(p) == "NOT_FOUND; missing; in f; in g" == table.format_status(p)
    assert table.take(p) == S.Status(StatusCode.NOT_FOUND, "missing", ("in f", "in g"))
    bare = S.from_code(StatusCode.INTERNAL)
    q = table.annotate(bare, "while loading")
    assert q != bare and S.code_of(q) == StatusCode.INTERNAL
    assert table.take(q) == S.Status(StatusCode.INTERNAL, "while loading")
    assert S.Status(StatusCode.ABORTED).annotate("a").annotate("b").format() == "ABORTED; a; b"
    assert S.Status(StatusCode.ABORTED, "", ("",)).format() == "ABORTED; "  # an empty payload prints
    assert S.Status(StatusCode.OK).annotate("ignored") == S.OK
    assert str(S.Status(StatusCode.UNAVAILABLE, "busy")) == "UNAVAILABLE; busy"


def test_an_altered_status_pointer_is_refused() -> None:
    """The code is read from the pointer's bits (status.h iree_status_code); a token whose bits no
    longer match what was stored was altered, and is refused without being consumed."""
    table = S.StatusTable()
    p = table.to_pointer(S.Status(StatusCode.ABORTED, "x"))
    forged = (p & ~S.STATUS_CODE_MASK) | int(StatusCode.CANCELLED)
    with pytest.raises(S.StatusTokenError, match="carries code 1"):
        table.take(forged)
    assert table.take(p) == S.Status(StatusCode.ABORTED, "x")
