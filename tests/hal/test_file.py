"""hal/file.py called directly: memory files over host bytes (the `hal` module's ex.file.from_memory
and the queue reads and writes reach them in tests/modules/hal).

Expected values from IREE's sources: runtime/src/iree/hal/utils/memory_file.c
(iree_hal_memory_file_try_import_buffer: the storage buffer's params; iree_hal_memory_file_destroy:
the storage released with the file), hal/allocator_heap.c (the compatible params an import gets),
hal/file.c (iree_hal_file_validate_access and its message) and base/bitfield.c
(iree_bitfield_format with hal/buffer.c's iree_hal_memory_access_mappings: combined names first,
unnamed bits as `%Xh`).
"""
from __future__ import annotations

from typing import Iterator

import pytest

from ireeabi.hal.buffer import BufferTypes
from ireeabi.hal.device import compatible_params
from ireeabi.hal.file import FileTypes, validate_access
from ireeabi.layouts import hal_buffer as HB
from ireeabi.vm.ref import TypeRegistry
from ireeabi.base.status import StatusCode, StatusError

A, M, U = HB.MemoryAccess, HB.MemoryType, HB.BufferUsage


@pytest.fixture
def files(types: TypeRegistry) -> Iterator[FileTypes]:
    buffers = BufferTypes(types)
    f = FileTypes(types, buffers)
    yield f
    f.close()
    buffers.close()


@pytest.fixture
def block(heap):  # noqa: ANN001, ANN201 - 64-byte aligned host bytes to wrap, freed after the test
    ptr = heap.malloc(256, align=64)
    yield ptr
    heap.free(ptr)


@pytest.mark.parametrize("access, usage", [
    (A.READ, U.TRANSFER_SOURCE), (A.WRITE, U.TRANSFER_TARGET),
    (A.READ | A.WRITE, U.TRANSFER_SOURCE | U.TRANSFER_TARGET)])
def test_the_storage_buffer_has_the_import_params(files, block, access, usage):
    released = []
    file_ptr = files.wrap(int(access), block, 100, lambda: released.append(True))
    f = files.files.payload(file_ptr)
    assert (f.access, f.length) == (int(access), 100)
    b = files.buffers.get(f.storage)
    assert (b.storage, b.byte_length) == (block, 100)
    assert (b.memory_type, b.allowed_usage) == compatible_params(
        int(M.OPTIMAL_FOR_HOST | M.DEVICE_VISIBLE), int(U.MAPPING_SCOPED | U.MAPPING_ACCESS_SEQUENTIAL_WRITE | usage))
    assert b.allowed_access == int(access | A.DISCARD)  # aligned data: no UNALIGNED
    files.files.release(file_ptr)
    assert released == [True]  # the storage went with the file


def test_data_off_the_heap_buffer_alignment_is_unaligned(files, block):
    file_ptr = files.wrap(int(A.READ), block + 4, 8, lambda: None)
    b = files.buffers.get(files.files.payload(file_ptr).storage)
    assert b.allowed_access == int(A.READ | A.DISCARD | A.UNALIGNED)
    files.files.release(file_ptr)


@pytest.mark.parametrize("allowed, required, message", [
    (A.READ, A.WRITE, "file allows READ, operation requires WRITE"),
    (A.WRITE | A.DISCARD, A.READ, "file allows DISCARD_WRITE, operation requires READ"),
    (A.READ | A.UNALIGNED, A.READ | A.WRITE, "file allows READ|10h, operation requires READ|WRITE"),
    (0, A.READ | A.WRITE | A.DISCARD, "file allows , operation requires ALL"),
])
def test_validate_access_names_both_sides(files, block, allowed, required, message):
    file_ptr = files.wrap(int(allowed), block, 16, lambda: None)
    f = files.files.payload(file_ptr)
    validate_access(f, int(allowed))  # what it allows passes
    with pytest.raises(StatusError) as info:
        validate_access(f, int(required))
    assert info.value.code == StatusCode.PERMISSION_DENIED
    assert info.value.message == f"file operation cannot be performed; {message}"
    files.files.release(file_ptr)
