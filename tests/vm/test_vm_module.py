"""Native modules: sorted export table, binary-search lookup, whole calls with IREE's ref discipline."""
from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest

from ireeabi.abi.errors import IreeAbiError
from ireeabi.abi.generated import DUMP_VARIABLE
from ireeabi.abi.printable import printable

from ireeabi.abi.cconv.codec import CodecError
from ireeabi.vm import module_ref
from ireeabi.vm import ref as R
from ireeabi.vm.buffer import BufferAccess, BufferType
from ireeabi.base.heap import Heap
from ireeabi.vm.native_module import Export, NativeModule, string_view_compare
from ireeabi.vm.ref import Ref
from ireeabi.vm.shims import ON_FRAME_MEMO, CallContext, MarshalError, Shim
from ireeabi.base.status import StatusCode, StatusError
from ireeabi.layouts.ref import RefLayout


def noop(ctx: CallContext, *args: object) -> None:
    return None


def test_string_view_compare_orders_bytes_then_length() -> None:
    words = [b"", b"a", b"ab", b"b", b"B", b"\xff", b"abc", b"aa"]
    for x in words:
        for y in words:
            expected = (x > y) - (x < y)  # bytewise with the shorter prefix first: Python's bytes order
            assert string_view_compare(x, y) == expected


def test_export_table_must_be_sorted(heap: Heap) -> None:
    exports = [Export("b", "0_v", noop), Export("a", "0_v", noop)]
    with pytest.raises(StatusError, match=r"not sorted by name \(export 0 \('b'\) >= 1 \('a'\)\)"):
        NativeModule(heap, "m", exports)
    with pytest.raises(StatusError, match="not sorted"):
        NativeModule(heap, "m", [Export("a", "0_v", noop), Export("a", "0_v", noop)])
    mod = NativeModule(heap, "m", exports, sort=True)
    assert [e.name for e in mod.exports] == ["a", "b"]
    mod.close()


def test_binary_search_finds_every_export_and_only_those(heap: Heap) -> None:
    rng = random.Random(7)
    names = sorted({"".join(rng.choice("abcdefgh._") for _ in range(rng.randint(1, 8))) for _ in range(300)})
    mod = NativeModule(heap, "big", [Export(n, "0_v", noop) for n in names])
    for i, n in enumerate(names):
        assert mod.lookup(n) == i
    for missing in ("", "zzz", names[0] + "\x01", "a" * 20):
        if missing not in names:
            with pytest.raises(StatusError) as e:
                mod.lookup(missing)
            assert (e.value.code, e.value.message) == (
                StatusCode.NOT_FOUND, f"no function `{printable(missing)}` exported by module `big`")
    with pytest.raises(StatusError, match="ordinal out of bounds"):
        mod.call_ordinal(len(names))
    mod.close()


def test_calls_with_scalars_spans_and_results(heap: Heap) -> None:
    def addmul(ctx: CallContext, a: int, b: int, f: float) -> tuple[int, float]:
        return a + b, f * 2

    def total(ctx: CallContext, xs: list[int], pairs: list[tuple[float, int]]) -> int:
        return sum(xs) + sum(i for _, i in pairs)

    mod = NativeModule(heap, "math", [Export("addmul", "0iIF_IF", addmul), Export("total", "0CiDCfID_I", total)],
                       sort=True)
    assert mod.call("addmul", 2, 1 << 40, 1.25) == [2 + (1 << 40), 2.5]
    assert mod.call("total", [1, 2, 3], [(0.5, 10), (1.5, 20)]) == [36]
    bad = NativeModule(heap, "bad", [Export("f", "0_i", noop)])
    with pytest.raises(MarshalError, match="1 result"):
        bad.call("f")
    bad.close()
    mod.close()


def test_failing_calls_still_release_their_arguments(heap: Heap, buffers: BufferType) -> None:
    b = buffers.create(BufferAccess.MUTABLE, 8)
    r = Ref(b, buffers.type)

    def fails(ctx: CallContext, x: Ref) -> None:
        assert buffers.counter(b) == 2  # retained into the argument buffer for the call
        raise StatusError(StatusCode.FAILED_PRECONDITION, "nope")

    def crashes(ctx: CallContext, x: Ref) -> None:
        raise RuntimeError("a bug in a target")

    mod = NativeModule(heap, "m", [Export("crashes", "0r_v", crashes), Export("fails", "0r_v", fails)])
    with pytest.raises(StatusError) as e:
        mod.call("fails", r)
    assert (e.value.code, e.value.message) == (StatusCode.FAILED_PRECONDITION, "nope")
    with pytest.raises(RuntimeError):
        mod.call("crashes", r)
    assert buffers.counter(b) == 1
    buffers.release(b)
    mod.close()


def test_ref_results_move_to_the_caller(heap: Heap, buffers: BufferType) -> None:
    def make(ctx: CallContext, n: int) -> Ref:
        return buffers.move_ref(buffers.create(BufferAccess.MUTABLE, n))

    def same(ctx: CallContext, x: Ref) -> Ref:
        return ctx.retain(x)

    mod = NativeModule(heap, "m", [Export("make", "0i_r", make), Export("same", "0r_r", same)])
    (r,) = mod.call("make", 24)
    b = buffers.check_deref(r)
    assert buffers.length(b) == 24 and buffers.counter(b) == 1  # the caller holds the only reference
    (r2,) = mod.call("same", r)
    assert r2 == r and buffers.counter(b) == 2
    R.release_value(heap, r2)
    R.release_value(heap, r)  # destroyed: the heap fixture checks nothing is left
    mod.close()


def test_module_lifetime_through_module_storage(heap: Heap, buffers: BufferType) -> None:
    mod = NativeModule(heap, "owner", [])
    rodata = heap.malloc(4)
    handle = heap.malloc(heap.machine.view(RefLayout).size * 8)
    buffers.initialize_module_storage(rodata, 4, mod.handle, handle)
    ref = buffers.move_ref(handle)
    mod.close()  # the creator's reference goes; the buffer's keeps the module alive
    assert not mod.destroyed and module_ref.ref_count(heap, mod.handle) == 1
    R.release_value(heap, ref)
    assert mod.destroyed and heap.allocation(mod.handle) is None
    heap.free(handle)
    heap.free(rodata)


# -- planned calls: the interpreter's call sites -------------------------------------------------------


def test_planned_call_agrees_with_call_ordinal(heap: Heap) -> None:
    """Scalars, a span of pairs and results: the planned path returns what the generic one does
    (floats travel as their bit patterns, as registers hold them)."""
    import struct

    def total(ctx: CallContext, n: int, xs: list[tuple[float, int]], f: float) -> tuple[int, float]:
        return n + sum(i for _, i in xs), f + sum(x for x, _ in xs)

    mod = NativeModule(heap, "m", [Export("total", "0iCfIDF_IF", total)])
    f32 = lambda x: struct.unpack("<i", struct.pack("<f", x))[0]  # noqa: E731
    f64 = lambda x: struct.unpack("<q", struct.pack("<d", x))[0]  # noqa: E731
    planned = mod.planned(0, (2,))
    n, bits = planned([5, f32(0.5), 10, f32(1.5), 20, f64(0.25)])
    assert [n, struct.unpack("<d", struct.pack("<q", bits))[0]] == \
        mod.call_ordinal(0, 5, [(0.5, 10), (1.5, 20)], 0.25) == [35, 2.25]
    mod.close()


def test_call_sites_of_one_export_share_its_plan(heap: Heap) -> None:
    """NativeModule.planned: one plan per (ordinal, span counts, moved) for the module's life,
    whichever call sites ask (a default-model context planned one per call site, ~85 for a check
    test's few exports), and a plan runs any number of calls alike."""
    mod = NativeModule(heap, "m", [Export("look", "0rr_v", lambda ctx, a, b: None),
                                   Export("total", "0iCiD_i", lambda ctx, n, xs: n + sum(xs))])
    try:
        plan = mod.planned(1, (2,))
        assert mod.planned(1, (2,)) is plan and mod.planned(1, [2]) is plan
        assert plan([1, 2, 3]) == [6] and plan([10, 20, 30]) == [60]
        three = mod.planned(1, (3,))
        assert three is not plan and three([0, 1, 2, 3]) == [6]
        assert mod.planned(0, (), moved=(0,)) is not mod.planned(0) is mod.planned(0, (), ())
    finally:
        mod.close()


def test_a_shims_call_on_a_frame_serves_every_module_of_its_signature(monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    """Shim.on_frame: one function per shape of the arguments' layout, for every module instance
    and heap whose export has that signature (a Program's modules planned them anew each time);
    with the dump switch set, a new one each time (every text a run makes is written)."""
    def add(ctx: CallContext, a: int, b: int) -> int:
        return a + b

    heaps = [Heap(), Heap()]
    mods = [NativeModule(h, "m", [Export("add", "0ii_i", add)]) for h in heaps]
    try:
        first, second = (m.planned(0) for m in mods)
        assert first is not second and first.on_frame is second.on_frame is not None
        assert first([2, 3]) == second([2, 3]) == [5]
        monkeypatch.setenv(DUMP_VARIABLE, str(tmp_path))
        third = NativeModule(heaps[0], "n", [Export("add", "0ii_i", add)])
        try:
            assert third.planned(0).on_frame is not first.on_frame and third.planned(0)([4, 5]) == [9]
        finally:
            third.close()
    finally:
        for m in mods:
            m.close()
        for h in heaps:
            h.close()


def test_a_shims_frame_functions_are_bounded_by_shape_count(heap: Heap) -> None:
    """A module may call a span export with a new element count at every call site: the shim keeps
    the functions of at most ON_FRAME_MEMO shapes, then starts again (the first shape's is made
    anew), and every plan still calls right."""
    def total(ctx: CallContext, n: int, xs: list) -> int:
        return n + sum(xs)

    mods = [NativeModule(heap, name, [Export("total", "0iCiD_i", total)]) for name in ("a", "b")]
    try:
        first = mods[0].planned(0, (1,)).on_frame
        assert first is not None and mods[1].planned(0, (1,)).on_frame is first  # one shape, one function
        for count in range(2, ON_FRAME_MEMO + 3):
            assert mods[0].planned(0, (count,))([1, *range(count)]) == [1 + sum(range(count))]
        assert mods[1].planned(0, (1,)).on_frame is first  # mods[1]'s own plan, made before
        third = NativeModule(heap, "c", [Export("total", "0iCiD_i", total)])
        try:
            assert third.planned(0, (1,)).on_frame is not first
        finally:
            third.close()
    finally:
        for m in mods:
            m.close()


def test_planned_call_keeps_float_bit_patterns(heap: Heap, monkeypatch: pytest.MonkeyPatch) -> None:
    """A float32 signalling NaN reaches the callee's argument buffer bit for bit (a Python float
    would quiet it), and a float result comes back as its bits."""
    seen = []
    real, real_frame = Shim.__call__, Shim.on_frame

    def spy(self, ctx, flags, args, rets, target):  # the argument buffer as the shim receives it
        seen.append(heap.read(args.data, args.length))
        return real(self, ctx, flags, args, rets, target)

    def frame_spy(self, arguments, results):  # the same, where the shim runs on the call site's frame
        call = real_frame(self, arguments, results)

        def spied(ctx, target, buf, offset, address, results_offset):
            seen.append(bytes(buf[offset:offset + arguments.size]))
            return call(ctx, target, buf, offset, address, results_offset)
        return spied

    monkeypatch.setattr(Shim, "__call__", spy)
    monkeypatch.setattr(Shim, "on_frame", frame_spy)
    mod = NativeModule(heap, "m", [Export("echo", "0f_f", lambda ctx, x: x)])
    assert mod.planned(0)([0x7F800001]) == [0x7FC00001]  # the float target quiets it, as C would
    mod.call_ordinal(0, 1.5)
    assert seen[0] == (0x7F800001).to_bytes(4, "little")  # the planned call's frame
    assert len(seen) == 2  # and the layered call's spans
    mod.close()


def test_planned_call_moves_marked_refs_and_retains_the_rest(heap: Heap, buffers: BufferType) -> None:
    """retain_or_move into the argument buffer: a moved ref is handed over (no retain) and the
    release walk drops it; a borrowed one is retained for the call and released after."""
    b = buffers.create(BufferAccess.MUTABLE, 8)
    r = Ref(b, buffers.type)
    buffers.retain(b)  # two references: one to move, one to lend
    counts = []

    def look(ctx: CallContext, x: Ref, y: Ref) -> None:
        counts.append(buffers.counter(b))

    mod = NativeModule(heap, "m", [Export("look", "0rr_v", look)])
    mod.planned(0, (), moved=(0,))([r, r])
    assert counts == [3]  # the 2 held (one now the buffer's, moved) + 1 retained for the lent slot
    assert buffers.counter(b) == 1  # the moved reference is gone, the lent one is back
    mod.planned(0)([r, Ref(0, 0)])
    assert counts[-1] == 2 and buffers.counter(b) == 1
    other = NativeModule(heap, "n", [Export("f", "0ir_v", look)])
    with pytest.raises(Exception, match="not refs"):
        other.planned(0, (), moved=(0,))
    other.close()
    buffers.release(b)
    mod.close()


def test_planned_call_failure_paths_drop_every_reference(heap: Heap, buffers: BufferType) -> None:
    """A failing target: the arguments (moved or borrowed) are released, ref results the target
    wrote are dropped; a pack failure releases the moved references too."""
    b = buffers.create(BufferAccess.MUTABLE, 8)
    r = Ref(b, buffers.type)

    def fails(ctx: CallContext, x: Ref) -> Ref:
        raise StatusError(StatusCode.ABORTED, "no")

    mod = NativeModule(heap, "m", [Export("fails", "0r_r", fails), Export("two", "0ri_v", noop)])
    buffers.retain(b)
    with pytest.raises(StatusError, match="no"):
        mod.planned(0, (), moved=(0,))([r])
    assert buffers.counter(b) == 1
    with pytest.raises(StatusError, match="no"):
        mod.planned(0)([r])
    assert buffers.counter(b) == 1
    buffers.retain(b)
    with pytest.raises(CodecError, match="'ri'.*not an integer"):  # "x" is no int
        mod.planned(1, (), moved=(0,))([r, "x"])
    assert buffers.counter(b) == 1
    buffers.release(b)
    mod.close()


def test_call_ordinal_moves_marked_refs_as_the_planned_call(heap: Heap, buffers: BufferType) -> None:
    """call_ordinal(moved=...) (the reference path's import call): the argument buffer takes the
    moved reference over, the same counts as the planned call above; a call whose arguments do not
    pack still drops the moved reference; a moved index that is no ref is an ireeabi error."""
    b = buffers.create(BufferAccess.MUTABLE, 8)
    r = Ref(b, buffers.type)
    counts = []

    def look(ctx: CallContext, x: Ref, y: int) -> None:
        counts.append(buffers.counter(b))

    mod = NativeModule(heap, "m", [Export("look", "0ri_v", look)])
    buffers.retain(b)
    mod.call_ordinal(0, r, 5, moved=(0,))
    assert counts == [2] and buffers.counter(b) == 1  # moved: no retain; released by the walk
    buffers.retain(b)
    with pytest.raises(IreeAbiError):  # "x" does not pack as an i32
        mod.call_ordinal(0, r, "x", moved=(0,))
    assert buffers.counter(b) == 1
    with pytest.raises(IreeAbiError, match="not refs"):
        mod.call_ordinal(0, r, 5, moved=(1,))
    assert buffers.counter(b) == 1
    buffers.release(b)
    mod.close()


def test_planned_call_refuses_bad_argument_values(heap: Heap) -> None:
    """Wrong counts, refs that are no (ptr, type) pair, scalars that are no numbers: MarshalError /
    CodecError naming the export, and the scratch stack left as it was."""
    mod = NativeModule(heap, "m", [Export("f", "0ri_v", noop)])
    top = heap.scratch_push(0)
    heap.scratch_pop(top)
    with pytest.raises(MarshalError, match=r"m\.f \(0ri_v\): 2 argument value\(s\) expected, got 1"):
        mod.planned(0)([Ref(0, 0)])
    with pytest.raises(MarshalError, match="bad argument values"):
        mod.planned(0)([5, 1])
    with pytest.raises(MarshalError, match="a ref needs a Ref or"):
        mod.planned(0, (), moved=(0,))([5, 1])
    with pytest.raises(CodecError, match="not an integer"):
        mod.planned(0)([Ref(0, 0), "x"])
    assert heap.scratch_push(0) == top  # every frame was popped
    heap.scratch_pop(top)
    mod.close()


def test_planned_call_scratch_frame_is_the_methods_frame() -> None:
    """The call site pushes and pops its frame inline (Heap.scratch_source): where the frame does not
    fit, after close, and where the target leaves a frame of its own pushed, it fails as
    scratch_push / scratch_pop do (and as the layered call does), and a good call leaves the stack
    as it was."""
    from ireeabi.base.heap import HeapError
    leave: list[int] = []

    def target(ctx: CallContext, x: int) -> int:
        if x < 0:
            leave.append(ctx.heap.scratch_push(16))  # a frame the target never pops
        return x + 1
    heap = Heap(capture_stacks=False, scratch_size=4096)
    mod = NativeModule(heap, "m", [Export("i", "0i_i", target)])
    planned = mod.planned(0)
    top = heap.scratch_push(0)
    heap.scratch_pop(top)
    assert planned([5]) == [6] and mod.call_ordinal(0, 5) == [6]
    assert heap.scratch_push(0) == top  # every frame popped
    heap.scratch_pop(top)
    frames = []
    while heap.scratch_fits(64):
        frames.append(heap.scratch_push(64))
    errors = []  # the call site's one frame (results, then arguments), as scratch_push refuses it
    for call in (lambda: planned([5]), lambda: heap.scratch_push(planned.roff + planned.asize)):
        with pytest.raises(HeapError, match="scratch stack overflow") as e:
            call()
        errors.append(str(e.value))
    assert errors[0] == errors[1]
    with pytest.raises(HeapError, match="scratch stack overflow"):
        mod.call_ordinal(0, 5)
    for frame in reversed(frames):
        heap.scratch_pop(frame)
    errors = []
    for call in (lambda: planned([-1]), lambda: mod.call_ordinal(0, -1)):
        with pytest.raises(HeapError, match="popped out of order") as e:
            call()
        errors.append(str(e.value).split(" 0x")[0])
        heap.scratch_pop(leave.pop())
    assert errors[0] == errors[1]
    assert planned([7]) == [8]
    mod.close()
    heap.close()
    with pytest.raises(HeapError, match="used after close"):
        planned([5])
