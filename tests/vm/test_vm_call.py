"""The VM side of a call: argument buffers as the packer writes them, refs retained in and released after,
results moved out."""
from __future__ import annotations

import pytest

from ireeabi.abi import cconv
from ireeabi.abi.cconv import codec
from ireeabi.abi.cconv.codec import CodecError
from ireeabi.vm import call as C
from ireeabi.vm import ref as R
from ireeabi.vm.buffer import BufferAccess, BufferType
from ireeabi.base.heap import Heap, HeapError
from ireeabi.vm.ref import Ref
from ireeabi.vm.shims import MarshalError


DISPATCH = cconv.parse("0rIiiiCiDCrIID_v")


def make_buffers(buffers: BufferType, n: int) -> list[int]:
    return [buffers.create(BufferAccess.MUTABLE, 8 * (i + 1)) for i in range(n)]


def test_dispatch_arguments_are_packed_as_the_packer_does(heap: Heap, buffers: BufferType) -> None:
    exe, *bound = make_buffers(buffers, 4)
    t = buffers.type
    args = [Ref(exe, t), 0x1122334455667788, 1, 2, 3, [10, -11, 12, 13],
            [(Ref(b, t), 16 * i, 8 * (i + 1)) for i, b in enumerate(bound)]]
    buf = C.pack_arguments(heap, DISPATCH.arguments, args)
    lay = cconv.layout(DISPATCH.arguments, heap.target, [4, 3])
    assert buf.layout is lay and heap.check_range(buf.address, lay.size)
    flat, counts = C.flatten(DISPATCH.arguments, args, heap.machine.word_mask)
    assert counts == (4, 3)
    assert buf.bytes() == codec.codec(lay).pack(flat)  # the generic abi codec agrees byte for byte
    for v, x in zip(lay.values, flat):  # and every value sits where cconv.layout says
        if v.kind == "ref":
            assert R.read_ref(heap, buf.address + v.offset) == x
    assert [heap.read_i32(buf.address + c.offset) for c in lay.counts] == [4, 3]
    assert all(buffers.counter(b) == 2 for b in [exe, *bound])  # retained into the buffer
    C.release_arguments(buf)
    assert all(buffers.counter(b) == 1 for b in [exe, *bound])
    assert heap.allocation(buf.address) is None
    for b in [exe, *bound]:
        buffers.release(b)


def test_one_object_in_several_slots_is_retained_per_slot(heap: Heap, buffers: BufferType) -> None:
    (b,) = make_buffers(buffers, 1)
    r = Ref(b, buffers.type)
    buf = C.pack_arguments(heap, "rCrD", [r, [r, r, R.NULL_REF]])
    assert buffers.counter(b) == 4
    C.release_arguments(buf)
    assert buffers.counter(b) == 1
    buffers.release(b)


def test_results_are_moved_out(heap: Heap, buffers: BufferType) -> None:
    (b,) = make_buffers(buffers, 1)
    r = Ref(b, buffers.type)
    res = C.allocate_results(heap, "irF")
    C.write_results(res, [7, r, 2.5], move=False)  # external leave, retaining
    assert buffers.counter(b) == 2
    assert C.unpack_results(res) == [7, r, 2.5]  # moved out: no count change
    assert buffers.counter(b) == 2 and heap.allocation(res.address) is None
    R.release_value(heap, r)
    buffers.release(b)


def test_pack_overflow_is_refused(heap: Heap) -> None:
    lay = cconv.layout("CIiD", heap.target, [2])
    assert lay.packed_size > lay.size  # the engine's pack-overflow finding on this target
    mark = heap.mark()
    with pytest.raises(C.PackOverflowError, match="pack-overflow|writes"):
        C.pack_arguments(heap, "CIiD", [[(1, 2), (3, 4)]])
    assert heap.leaks(mark) == [] and heap.live_bytes == 0  # refused before touching memory


def test_bad_python_values(heap: Heap) -> None:
    with pytest.raises(MarshalError, match="takes 2 argument"):
        C.pack_arguments(heap, "ii", [1])
    with pytest.raises(MarshalError, match="needs a list"):
        C.pack_arguments(heap, "CiD", [5])
    with pytest.raises(MarshalError, match="2 value"):
        C.pack_arguments(heap, "CiID", [[(1, 2), (3,)]])
    with pytest.raises(MarshalError, match="ref"):
        C.pack_arguments(heap, "r", ["nope"])
    with pytest.raises(CodecError):
        C.pack_arguments(heap, "i", [1 << 40])
    assert heap.leaks() == []


def test_forged_refs_fail_before_anything_is_retained(heap: Heap, buffers: BufferType) -> None:
    (b,) = make_buffers(buffers, 1)
    good = Ref(b, buffers.type)
    with pytest.raises(HeapError):
        C.pack_arguments(heap, "rr", [good, Ref(0xBAD0, buffers.type)])
    assert buffers.counter(b) == 1
    assert not [a for a in heap.live() if a.tag.startswith("arguments")]  # nothing was allocated
    # The same object under an unregistered type word whose tag bits name the same counter: each
    # slot's type is checked, not only the first of the slots sharing a counter (a fuzz find).
    forged_type = (buffers.type & R.TAG_MASK) | 0x10
    assert forged_type not in heap.known_types
    for args in ([good, Ref(b, forged_type)], [Ref(b, forged_type), good]):
        with pytest.raises(R.RefError, match="not a registered ref type"):
            C.pack_arguments(heap, "rr", args)
        assert buffers.counter(b) == 1
    buffers.release(b)
