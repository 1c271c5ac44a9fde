"""iree_vm_ref_t on real memory: descriptors, counter tags, the ref API, checked derefs, forged pointers."""
from __future__ import annotations

import pytest

from ireeabi.layouts import ref as L
from ireeabi.base import callbacks
from ireeabi.vm import ref as R
from ireeabi.base.callbacks import FunctionPointerError
from ireeabi.base.heap import Heap, HeapError
from ireeabi.vm.ref import Ref, RefCountError, RefError, TypeRegistry
from ireeabi.base.status import StatusCode, StatusError
from ireeabi.layouts.ref import RefLayout



class Objects:
    """Objects of one ref type whose counter sits at ptr + 4 * tag; destroy frees and logs."""

    def __init__(self, heap: Heap, types: TypeRegistry, tag: int = 0, name: str = "test.object") -> None:
        self.heap = heap
        self.destroyed: list[int] = []
        self.tag = tag
        self.type = types.define(name, self.destroy, offsetof_counter=tag)

    def new(self) -> int:
        p = self.heap.malloc(R.COUNTER_UNIT * (self.tag + 1) + 8, tag=self.type.name)
        self.heap.write_i32(R.counter_address(p, self.type.type), 1)
        return p

    def count(self, p: int) -> int:
        return self.heap.read_i32(R.counter_address(p, self.type.type))

    def destroy(self, p: int) -> None:
        self.destroyed.append(p)
        self.heap.free(p)


def ref_slot(heap: Heap, value: Ref = R.NULL_REF) -> int:
    a = heap.malloc(L.iree_vm_ref_t.layout(heap.target).size)
    R.write_ref(heap, a, value)
    return a


def test_descriptor_in_memory(heap: Heap, types: TypeRegistry) -> None:
    objs = Objects(heap, types, tag=3, name="my.type")
    t = objs.type
    assert t.descriptor % R.DESCRIPTOR_ALIGNMENT == 0 and t.type == t.descriptor | 3
    assert R.type_name(heap, t.type) == "my.type"
    view = heap.struct_at(L.iree_vm_ref_type_descriptor_t, t.descriptor)
    assert view.destroy == t.destroy_fn and heap.functions.is_registered(view.destroy)
    assert view.offsetof_counter == 3
    assert types.register(t.descriptor) == t.type  # re-registering yields the same value
    types.unregister(t.descriptor)


def test_registration_rejects_bad_descriptors(heap: Heap, types: TypeRegistry) -> None:
    with pytest.raises(StatusError) as e:
        types.define("bad", None, offsetof_counter=R.TAG_MASK + 1)
    assert e.value.code == StatusCode.INVALID_ARGUMENT
    p = heap.malloc(heap.machine.view(RefLayout).descriptor_size + R.DESCRIPTOR_ALIGNMENT)
    with pytest.raises(StatusError, match=f"aligned to {R.DESCRIPTOR_ALIGNMENT} bytes"):
        types.register(p + 4)
    heap.free(p)


@pytest.mark.parametrize("tag", range(R.TAG_MASK + 1))
def test_counter_lives_at_ptr_plus_4_tag_and_destroy_runs_once(heap: Heap, types: TypeRegistry, tag: int) -> None:
    objs = Objects(heap, types, tag)
    p = objs.new()
    r = Ref(p, objs.type.type)
    R.retain_value(heap, r)
    assert heap.read_i32(p + 4 * tag) == 2
    R.release_value(heap, r)
    assert objs.destroyed == []
    R.release_value(heap, r)
    assert objs.destroyed == [p]
    with pytest.raises(HeapError):  # the object is gone; its counter is freed memory
        R.release_value(heap, r)


def test_retain_release_move_assign(heap: Heap, types: TypeRegistry) -> None:
    objs = Objects(heap, types)
    a, b = objs.new(), objs.new()
    ra, rb = Ref(a, objs.type.type), Ref(b, objs.type.type)
    src, dst = ref_slot(heap, ra), ref_slot(heap, rb)
    R.retain(heap, src, dst)  # dst's old value released (b destroyed), a now counted twice
    assert objs.destroyed == [b] and objs.count(a) == 2 and R.read_ref(heap, dst) == ra
    R.retain(heap, dst, dst)  # aliasing: retain before release keeps the object alive
    assert objs.count(a) == 2
    R.move(heap, src, dst)  # src zeroed, dst's reference released
    assert R.is_null(heap, src) and objs.count(a) == 1 and R.read_ref(heap, dst) == ra
    R.assign(heap, dst, src)  # copy without counting
    assert objs.count(a) == 1 and R.equal(heap, src, dst)
    R.release(heap, src)
    assert objs.destroyed == [b, a] and R.read_ref(heap, src) == R.NULL_REF
    R.write_ref(heap, dst, R.NULL_REF)
    R.release(heap, dst)  # NULL: no-op
    heap.free(src)
    heap.free(dst)


def test_is_null_tests_the_type_word(heap: Heap) -> None:
    s = ref_slot(heap, Ref(0x1000, 0))
    assert R.is_null(heap, s)
    R.write_ref(heap, s, Ref(0, 0x40))
    assert not R.is_null(heap, s)
    heap.free(s)


def test_retain_checked(heap: Heap, types: TypeRegistry) -> None:
    objs, others = Objects(heap, types), Objects(heap, types, name="other")
    p = objs.new()
    src, dst = ref_slot(heap, Ref(p, objs.type.type)), ref_slot(heap)
    with pytest.raises(StatusError) as e:
        R.retain_checked(heap, src, others.type.type, dst)
    assert (e.value.code, e.value.message) == (StatusCode.INVALID_ARGUMENT, "source ref type mismatch")
    assert objs.count(p) == 1 and R.is_null(heap, dst)  # no changes on failure
    R.retain_checked(heap, src, heap.machine.view(RefLayout).type_any, dst)
    assert objs.count(p) == 2
    R.release(heap, dst)
    R.release(heap, src)
    heap.free(src)
    heap.free(dst)


def test_wrap_assign_and_wrap_retain(heap: Heap, types: TypeRegistry) -> None:
    objs = Objects(heap, types)
    p, q = objs.new(), objs.new()
    t = objs.type.type
    out = ref_slot(heap)
    R.wrap_assign(heap, p, t, out)  # takes over the creator's reference
    assert objs.count(p) == 1
    R.wrap_retain(heap, p, t, out)  # same ptr: nothing
    assert objs.count(p) == 1
    R.wrap_retain(heap, q, t, out)  # releases p (destroyed), retains q
    assert objs.destroyed == [p] and objs.count(q) == 2
    with pytest.raises(RefError):
        R.wrap_assign(heap, 0, t, out)
    R.release(heap, out)
    R.release_value(heap, Ref(q, t))
    heap.free(out)


def test_typed_deref_statuses(heap: Heap, types: TypeRegistry) -> None:
    objs, others = Objects(heap, types), Objects(heap, types, name="other")
    p = objs.new()
    good = Ref(p, objs.type.type)
    assert objs.type.check_deref(good) == p and objs.type.isa(good)
    for ref, message in ((R.NULL_REF, "ref is null"), (Ref(p, others.type.type), "ref type mismatch")):
        with pytest.raises(StatusError) as e:
            objs.type.check_deref(ref)
        assert (e.value.code, e.value.message) == (StatusCode.INVALID_ARGUMENT, message)
    assert objs.type.check_deref_or_null(R.NULL_REF) == 0
    assert objs.type.deref(Ref(p, others.type.type)) == 0
    R.release_value(heap, good)


def test_forged_pointers_raise_and_change_nothing(heap: Heap, types: TypeRegistry) -> None:
    objs = Objects(heap, types)
    p = objs.new()
    t = objs.type.type
    for forged in (Ref(0x10, t), Ref(p + 4096, t)):
        with pytest.raises(HeapError):
            R.release_value(heap, forged)
    fake_descriptor = heap.malloc(heap.machine.view(RefLayout).descriptor_size, align=R.DESCRIPTOR_ALIGNMENT)
    heap.struct_at(L.iree_vm_ref_type_descriptor_t, fake_descriptor).destroy = 0xDEAD0  # not a function
    for bad_type in (fake_descriptor, t | 1, t + R.DESCRIPTOR_ALIGNMENT):  # no registration made these
        with pytest.raises(RefError, match="not a registered ref type"):
            R.release_value(heap, Ref(p, bad_type))
    fake_type = types.register(fake_descriptor)
    with pytest.raises(FunctionPointerError, match="0xdead0"):
        R.release_value(heap, Ref(p, fake_type))
    types.unregister(fake_descriptor)
    assert objs.count(p) == 1  # everything validated before the counter moved
    slot = heap.malloc(L.iree_vm_ref_t.layout(heap.target).size)
    with pytest.raises(HeapError):
        R.retain(heap, slot, 0x20)  # bad destination: nothing retained
    assert objs.count(p) == 1
    R.release_value(heap, Ref(p, t))
    with pytest.raises(HeapError):
        R.release_value(heap, Ref(p, t))  # use after free
    heap.free(slot)
    heap.free(fake_descriptor)


def test_over_release_is_reported(heap: Heap, types: TypeRegistry) -> None:
    objs = Objects(heap, types)
    p = objs.new()
    heap.write_i32(R.counter_address(p, objs.type.type), 0)
    with pytest.raises(RefCountError, match="over-release"):
        R.release_value(heap, Ref(p, objs.type.type))
    heap.free(p)
