"""hal/resource.py called directly: the ref-counted HAL objects every other HAL type is made of
(each module's test reaches them through its objects).

Expected values from IREE's sources: runtime/src/iree/hal/resource.h (a HAL resource's ref count is
its first field: offsetof_counter 0), vm/ref.h (iree_vm_ref_check: INVALID_ARGUMENT "ref is null" /
"ref type mismatch") and vm/ref.c (iree_vm_ref_release: the type's destroy at zero, once).
"""
from __future__ import annotations

from typing import Iterator

import pytest

from ireeabi.abi import targets
from ireeabi.hal.resource import ResourceType
from ireeabi.vm import ref as R
from ireeabi.base.heap import HeapError
from ireeabi.vm.ref import Ref, TypeRegistry
from ireeabi.base.status import IreeFaultError, StatusCode, StatusError


@pytest.fixture
def things(types: TypeRegistry) -> Iterator[tuple[ResourceType, list]]:
    destroyed: list = []
    rt: ResourceType = ResourceType(types, "hal.thing", lambda ptr, payload: destroyed.append((ptr, payload)))
    yield rt, destroyed
    rt.close()


@pytest.mark.parametrize("target", targets.names())
def test_the_count_is_the_first_word_and_destroy_runs_once_at_zero(things, heap, target):
    rt, destroyed = things
    ptr = rt.create("payload")
    assert rt.ref_type.offsetof_counter == 0 and heap.read_i32(ptr) == rt.counter(ptr) == 1
    rt.retain(ptr)
    assert heap.read_i32(ptr) == 2
    rt.release(ptr)
    assert destroyed == [] and rt.live() == [ptr]
    rt.release(ptr)
    assert destroyed == [(ptr, "payload")] and rt.live() == []
    rt.release(0)  # releasing NULL is nothing, as iree_hal_resource_release(NULL)


def test_deref_checks_the_ref_as_iree_vm_ref_check(things, types):
    rt, _ = things
    other = ResourceType(types, "hal.other", lambda ptr, payload: None)
    ptr = rt.create(7)
    assert rt.deref(rt.move_ref(ptr)) == (ptr, 7) and rt.deref_ptr(rt.move_ref(ptr)) == ptr
    for ref, message in ((R.NULL_REF, "ref is null"), (Ref(ptr, other.type), "ref type mismatch")):
        with pytest.raises(StatusError) as info:
            rt.deref(ref)
        assert (info.value.code, info.value.message) == (StatusCode.INVALID_ARGUMENT, message)
    with pytest.raises(IreeFaultError, match="is not a live hal.thing"):  # a word that is no object:
        # IREE checks the type word only and goes on with the pointer
        rt.deref(Ref(ptr + 16, rt.type))
    rt.release(ptr)
    other.close()


def test_a_forged_reference_reaching_zero_is_refused(things, heap):
    """A block that is no object of the type, released under it down to zero: IREE would call the
    type's destroy on it; ireeabi refuses, naming the address."""
    rt, destroyed = things
    block = heap.malloc(16)
    heap.write_i32(block, 1)
    with pytest.raises(HeapError, match=f"0x{block:x} is not a live hal.thing"):
        rt.release(block)
    assert destroyed == []
    heap.free(block)
