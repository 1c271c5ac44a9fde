"""hal/command_buffer.py called directly: recorded command buffers, the resolution of their buffer
references against a binding table, and the host fills and writes their commands make (the `hal`
module's command_buffer exports and queue execution reach them in tests/modules/hal).

Expected values from IREE's sources: runtime/src/iree/hal/command_buffer.h
(iree_hal_buffer_binding_table_resolve_ref), hal/buffer.c (iree_hal_buffer_calculate_range,
iree_hal_buffer_map_fill, iree_hal_buffer_validate_access), hal/utils/resource_set.c (a recorded
command retains what it names until the command buffer goes), and hal/command_buffer_validation.c
(recording state: begin at create, end at finalize).
"""
from __future__ import annotations

from typing import Iterator

import pytest

from ireeabi.hal import command_buffer_validation as V
from ireeabi.hal.buffer import BufferTypes
from ireeabi.hal.command_buffer import BufferRef, CommandBufferTypes, Resolver, map_fill, map_write
from ireeabi.layouts import hal_buffer as HB
from ireeabi.vm.ref import TypeRegistry
from ireeabi.base.status import StatusCode, StatusError

MASK = (1 << 64) - 1  # iree_device_size_t on a 64-bit data model; IREE_HAL_WHOLE_BUFFER
A = HB.MemoryAccess


@pytest.fixture
def buffers(types: TypeRegistry) -> Iterator[BufferTypes]:
    b = BufferTypes(types)
    yield b
    b.close()


@pytest.fixture
def command_buffers(types: TypeRegistry) -> Iterator[CommandBufferTypes]:
    c = CommandBufferTypes(types)
    yield c
    c.close()


@pytest.fixture
def buf(buffers: BufferTypes) -> Iterator[int]:
    ptr = buffers.allocate(64)
    yield ptr
    buffers.resources.release(ptr)


def _bytes(buffers: BufferTypes, ptr: int) -> bytes:
    b = buffers.get(ptr)
    return buffers.heap.read(b.storage, b.byte_length)


# -- resolve_ref ---------------------------------------------------------------------------------


def test_a_direct_reference_resolves_to_itself(buffers, buf):
    assert Resolver(buffers, [], MASK).resolve(BufferRef(buf, 9, 8, 16)) == (buf, 8, 16)


def test_a_null_reference_with_an_empty_table_is_null(buffers):
    assert Resolver(buffers, [], MASK).resolve(BufferRef(0, 3, 8, 16)) == (0, 0, 0)


def test_a_slot_past_the_table_is_out_of_range(buffers, buf):
    with pytest.raises(StatusError) as info:
        Resolver(buffers, [(buf, 0, 64), (buf, 0, 64)], MASK).resolve(BufferRef(0, 2, 0, 4))
    assert info.value.code == StatusCode.OUT_OF_RANGE
    assert info.value.message == "buffer binding 2 out of range of binding table with capacity 2"


@pytest.mark.parametrize("binding, ref, resolved", [
    ((16, 32), (4, 8), (20, 8)),  # the reference's range within the binding's
    ((16, MASK), (4, MASK), (20, 44)),  # a whole binding is the buffer past its offset
    ((16, 32), (0, MASK), (16, 32)),  # a whole reference is the binding
    ((0, 64), (64, 0), (64, 0)),  # an empty range at the end
])
def test_an_indirect_reference_is_its_range_within_the_binding(buffers, buf, binding, ref, resolved):
    table = [(buf, *binding)]
    assert Resolver(buffers, table, MASK).resolve(BufferRef(0, 0, *ref)) == (buf, *resolved)


def test_an_indirect_reference_past_its_binding_is_out_of_range(buffers, buf):
    with pytest.raises(StatusError) as info:
        Resolver(buffers, [(buf, 16, 32)], MASK).resolve(BufferRef(0, 0, 24, 16))
    assert info.value.code == StatusCode.OUT_OF_RANGE
    assert info.value.message == ("attempted to access an address outside of the valid buffer range "
                                  "(offset=24, adjusted_length=16, end=39, buffer byte_length=32)")


# -- map_fill / map_write ------------------------------------------------------------------------


@pytest.mark.parametrize("pattern, length, expected", [
    (0xAB, 1, b"\xab"), (0xBEEF, 2, b"\xef\xbe"), (0x01020304, 4, b"\x04\x03\x02\x01")])
def test_fill_repeats_the_patterns_low_bytes_little_endian(buffers, buf, pattern, length, expected):
    map_fill(buffers.heap, buffers, buf, 8, 16, pattern, length, MASK)
    assert _bytes(buffers, buf) == bytes(8) + expected * (16 // length) + bytes(40)


def test_fill_of_the_whole_buffer_reaches_its_end(buffers, buf):
    map_fill(buffers.heap, buffers, buf, 4, MASK, 0x7F7F7F7F, 4, MASK)
    assert _bytes(buffers, buf) == bytes(4) + b"\x7f" * 60


@pytest.mark.parametrize("offset, length, pattern_length, message", [
    (0, 8, 3, "fill patterns must be 1, 2, or 4 bytes (got 3)"),
    (2, 8, 4, "attempting to fill a range with 4 byte values that is not aligned (offset=2, length=8)"),
    (0, 6, 4, "attempting to fill a range with 4 byte values that is not aligned (offset=0, length=6)"),
    (2, MASK, 4, "attempting to fill a range with 4 byte values that is not aligned (offset=2, length=62)"),
])
def test_fill_refuses_bad_patterns_and_unaligned_ranges(buffers, buf, offset, length, pattern_length,
                                                        message):
    with pytest.raises(StatusError) as info:
        map_fill(buffers.heap, buffers, buf, offset, length, 0, pattern_length, MASK)
    assert (info.value.code, info.value.message) == (StatusCode.INVALID_ARGUMENT, message)
    assert _bytes(buffers, buf) == bytes(64)


def test_an_empty_fill_is_nothing_even_with_a_bad_buffer(buffers):
    """map_fill returns before it maps the buffer when the length is 0."""
    map_fill(buffers.heap, buffers, 0, 0, 0, 0, 4, MASK)


def test_fill_and_write_need_write_access(buffers):
    ptr = buffers.allocate(16, allowed_access=int(A.READ))
    for act in (lambda: map_fill(buffers.heap, buffers, ptr, 0, 4, 1, 1, MASK),
                lambda: map_write(buffers.heap, buffers, ptr, 0, b"x", MASK)):
        with pytest.raises(StatusError) as info:
            act()
        assert info.value.code == StatusCode.PERMISSION_DENIED
        assert info.value.message == ("buffer does not support the requested access type; buffer "
                                      "allows READ, operation requires DISCARD_WRITE")
    buffers.resources.release(ptr)


def test_write_copies_into_the_range(buffers, buf):
    map_write(buffers.heap, buffers, buf, 60, b"\x01\x02\x03\x04", MASK)
    assert _bytes(buffers, buf)[56:] == bytes(4) + b"\x01\x02\x03\x04"
    with pytest.raises(StatusError) as info:
        map_write(buffers.heap, buffers, buf, 62, b"\x01\x02\x03\x04", MASK)
    assert info.value.code == StatusCode.OUT_OF_RANGE


# -- recording -----------------------------------------------------------------------------------


def test_a_command_retains_the_buffers_it_names_until_the_command_buffer_goes(buffers, command_buffers, buf):
    cb_ptr = command_buffers.create(0, int(V.CATEGORY_TRANSFER), 0, 0)
    cb = command_buffers.resources.payload(cb_ptr)
    ran = []
    command_buffers.record(cb, lambda resolver: ran.append(resolver.resolve(BufferRef(buf, 0, 0, 4))),
                           [(buffers.resources, buf)])
    assert buffers.resources.counter(buf) == 2
    command_buffers.end(cb)
    command_buffers.validate_submission(cb, [], MASK, buffers)
    command_buffers.execute(cb, Resolver(buffers, [], MASK))
    assert ran == [(buf, 0, 4)]
    command_buffers.resources.release(cb_ptr)
    assert buffers.resources.counter(buf) == 1


def test_a_command_buffer_not_ended_cannot_be_submitted(buffers, command_buffers):
    cb_ptr = command_buffers.create(0, int(V.CATEGORY_TRANSFER), 0, 0)
    with pytest.raises(StatusError) as info:
        command_buffers.validate_submission(command_buffers.resources.payload(cb_ptr), [], MASK, buffers)
    assert info.value.code == StatusCode.FAILED_PRECONDITION
    command_buffers.resources.release(cb_ptr)
