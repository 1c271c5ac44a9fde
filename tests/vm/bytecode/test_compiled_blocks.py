"""Compiled basic blocks (vm/bytecode/blocks.py) against the reference per-instruction handlers.

Every host program case of the interpreter tests and every case of the e2e corpus (both execution
models) runs twice, on the reference path (`reference=True`) and on the compiled blocks: the
results must be the same bits, a failure the same exception type and text (function and pc
included), and the heap must see the same allocations (count and live bytes after each call). The
reference path's own results are checked against iree-run-module by test_interpreter.py and
test_e2e.py.
"""
from __future__ import annotations

import re

import struct
import weakref
from pathlib import Path

import numpy as np
import pytest

from support import e2e_corpus as corpus
from ireeabi.abi.errors import IreeAbiError
from ireeabi.tooling.function_io import format_results, parse_input
from ireeabi.tooling.program import Program, RunOptions
from ireeabi.base.allocator import allocator_null
from ireeabi.vm.buffer import BufferAccess, BufferType
from ireeabi.base.heap import Heap, tracked_heap
from ireeabi.vm.bytecode.vm_buffer_factory import VmBufferFactory
from ireeabi.vm.ref import Ref, TypeRegistry
from ireeabi.vm.bytecode import Context
from ireeabi.vm.bytecode.module_file import clear_read_memo
from ireeabi.vm.bytecode.region_plan import RegionPlan
from test_interpreter import CASES as HOST_CASES, host
from ireeabi.layouts.buffer import VmBufferLayout


def _bits(values: list) -> list:
    """Results as comparable bits (NaN payloads and signed zeros kept)."""
    out = []
    for v in values:
        if isinstance(v, float):
            out.append(("f", struct.pack("<d", v)))
        elif isinstance(v, (np.floating, np.integer)):
            out.append(("n", v.dtype.str, v.tobytes()))
        else:
            out.append(v)
    return out


def _outcome(call):
    try:
        return ("ok", _bits(call()))
    except IreeAbiError as e:
        return ("error", type(e).__name__, str(e))


def test_compiled_contexts_use_blocks():
    """The switch works both ways: the compiled path replaces entries with block functions, the
    reference path (argument or IREEABI_REFERENCE=1) keeps one handler per instruction."""
    path = host("control.mlir")
    with Context(path) as fast, Context(path, reference=True) as ref:
        assert any(entry[0].__name__ == "run" and entry[0].__code__.co_filename.startswith("<block")
                   for fn in fast.compile_all() for entry in fn.code)
        assert not any(entry[0].__code__.co_filename.startswith("<block")
                       for fn in ref.compile_all() for entry in fn.code)


def test_a_first_context_compiles_handlers_at_load_and_blocks_at_a_first_frame():
    """The first context of a module finds what IREE refuses at load by compiling every function's
    handlers; a function's blocks (the generated fast path, which refuses nothing) are made at its
    first frame, so a function never run costs no generated code."""
    clear_read_memo()  # a module no context of this process has made
    with Context(host("control.mlir")) as ctx:
        assert all(fn.handled and not fn.ready and fn.code for fn in ctx.functions)
        assert not any(hasattr(entry[0], "is_block") for fn in ctx.functions for entry in fn.code)
        assert ctx.invoke("sum_squares", 10) == [sum(i * i for i in range(10))]  # the scf.for's
        ran = {fn.name for fn in ctx.functions if fn.ready}
        assert "sum_squares" in ran and "collatz" not in ran
        assert all(any(hasattr(entry[0], "is_block") for entry in fn.code) == (fn.name in ran)
                   for fn in ctx.functions)


def test_environment_forces_the_reference_path(monkeypatch):
    monkeypatch.setenv("IREEABI_REFERENCE", "1")
    with Context(host("control.mlir")) as ctx:
        assert not any(entry[0].__code__.co_filename.startswith("<block")
                       for fn in ctx.compile_all() for entry in fn.code)


def test_a_reference_program_takes_the_heap_allocator_through_its_pointer(corpus_modules):
    """Program(reference=True) puts its heap on the reference path before the runtime makes
    anything (the allocator's direct path off), a default Program leaves the direct path on."""
    path = corpus_modules[(corpus.CASES[0][0], "inline-dynamic")]
    with Program(path.read_bytes(), RunOptions(reference=True)) as ref, Program(path.read_bytes()) as fast:
        assert ref.heap.reference and ref.heap.direct_allocator is None
        assert not fast.heap.reference and fast.heap.direct_allocator is not None


@pytest.mark.parametrize("name, function, calls", HOST_CASES, ids=[f"{c[0]}:{c[1]}" for c in HOST_CASES])
def test_host_programs_agree(name, function, calls):
    path = host(name)
    with Context(path, reference=True) as ref, Context(path) as fast:
        for args in calls:
            want = _outcome(lambda: ref.invoke(function, *args))
            got = _outcome(lambda: fast.invoke(function, *args))
            assert got == want, (function, args)


# The failing calls of test_interpreter.py (their statuses checked there against iree-run-module)
# and the wrapped buffer offset it traps: the compiled path names the same function, pc and text.
ERROR_CASES = [("buffers.mlir", "copy_slice", (-5, 16)), ("buffers.mlir", "copy_slice", (-5, -4)),
               ("buffers.mlir", "copy_slice", (9, 1 << 62)), ("lists.mlir", "list_oob", (2,)),
               ("fail.mlir", "checked_div", (5, 0)), ("fail.mlir", "status", (5,)),
               ("divrem.mlir", "div_i32", (1, 0)), ("loops.vm.mlir", "oob", (9,)),
               ("index_math.vm.mlir", "div_steps", (5, -2, 5)), ("index_math.vm.mlir", "div_steps", (-2147483648, -1, 1)),
               ("index_math.vm.mlir", "window", (-5, 10)), ("index_math.vm.mlir", "window32", (-1, 3))]


@pytest.mark.parametrize("name, function, args", ERROR_CASES, ids=[f"{c[0]}:{c[1]}{c[2]}" for c in ERROR_CASES])
def test_failing_calls_agree(name, function, args):
    with Context(host(name), reference=True) as ref, Context(host(name)) as fast:
        want = _outcome(lambda: ref.invoke(function, *args))
        assert want[0] == "error"
        assert _outcome(lambda: fast.invoke(function, *args)) == want


def _heap_relative(text: str, heap) -> str:
    """`text` with host addresses in the heap's window made relative to its base; an address with
    only its low word stored over (its high word one of the window's) is named by that low word."""
    space = heap.space

    def name(m: re.Match) -> str:
        a = int(m[0], 16)
        if space.base <= a <= space.end:
            return f"<heap+{a - space.base:#x}>"
        if a >> 32 and space.base >> 32 <= a >> 32 <= space.end >> 32:
            return f"<heap high word:{a & 0xFFFFFFFF:#x}>"
        return m[0]
    return re.sub(r"0x[0-9a-f]+", name, text)


@pytest.mark.parametrize("field, value", [("length", 0), ("length", 4), ("data", 0), ("access", 0)])
def test_a_store_onto_a_buffer_handle_is_seen_by_the_next_access(field, value):
    """The compiled path remembers a buffer it dereferenced (the region's memo) until something may
    change what deref would read; a store that overlaps the buffer's handle is such a thing. Buffer
    b's handle lies inside buffer a's data; poke() loads from b, stores into a over one field of b's
    handle, and loads from b again: both paths give the same result or error."""
    path = host("alias.vm.mlir")
    outcomes = []
    for reference in (True, False):
        with tracked_heap() as heap:
            types = TypeRegistry(heap)
            vmb = BufferType(types)
            factory = VmBufferFactory(vmb)
            a = factory.allocate(256, 16)
            b_data = factory.allocate(16, 16)
            L = heap.machine.view(VmBufferLayout)
            a_data = vmb.data(a.ptr)
            handle = a_data + 64  # b's handle: inside a's data
            vmb.initialize(BufferAccess.MUTABLE | BufferAccess.ORIGIN_HOST, vmb.data(b_data.ptr), 16,
                           allocator_null(), handle)
            heap.write(vmb.data(b_data.ptr), struct.pack("<i", 7))
            b = Ref(handle, factory.type)
            offset = {"length": L.length_off, "data": L.data_off, "access": L.access_off}[field]
            assert (64 + offset) % 4 == 0
            with Context(path, buffers=factory, reference=reference) as ctx:
                outcome = _outcome(lambda: ctx.invoke("poke", a, b, (64 + offset) // 4, value))
                assert ctx.reference is reference
            # The two heaps need not be mapped at the same host address: compared relative to it.
            outcomes.append(tuple(_heap_relative(x, heap) if isinstance(x, str) else x for x in outcome))
            heap.write(handle, bytes(L.size))  # b's handle was never counted: nothing to release
            factory.release(a)
            factory.release(b_data)
            vmb.close()
            types.close()
    assert outcomes[0] == outcomes[1]
    if (field, value) in (("access", 0), ("length", 4)):  # a load reads no access bits; 4 bytes hold it
        assert outcomes[0] == ("ok", [14])
    else:  # the second load sees the new handle: no bytes, or no memory
        assert outcomes[0][0] == "error", outcomes


@pytest.fixture(scope="module")
def corpus_modules():
    return corpus.compile_all()


class _Recorder:
    """Heap events of every heap in the process, in order: allocations and frees (serial, address,
    size, tag), retains and releases of counted references (object, type), and after each import
    call the bytes of every live allocation (so every ref counter, every buffer and every struct an
    import left behind)."""

    def __init__(self, monkeypatch, snapshots: bool) -> None:
        self.monkeypatch = monkeypatch
        self.snapshots = snapshots
        self.heaps: list = []  # weak references to every heap that allocated
        self.reset()
        allocate, release, import_call = Heap._allocate, Heap._release, Context.import_call

        def _allocate(heap, size, *args, **kwargs):
            if not any(r() is heap for r in self.heaps):
                self.heaps.append(weakref.ref(heap))
                heap.ref_events = self.events
            a = allocate(heap, size, *args, **kwargs)
            self.events.append(("malloc", a.serial, a.address if snapshots else None, size, a.tag))
            return a

        def _release(heap, a, stack):
            self.events.append(("free", a.serial, a.address if snapshots else None, a.size))
            return release(heap, a, stack)

        def _import_call(ctx, ordinal, *args):
            handler = import_call(ctx, ordinal, *args)
            name = ctx.module.imported_functions[ordinal].full_name
            heap = ctx.buffers.heap

            def recorded(c, frame, payload):
                try:
                    return handler(c, frame, payload)
                finally:
                    self.events.append(("import", name, [
                        (a.serial, a.address, bytes(heap.read(a.address, a.size)))
                        for a in heap.live() if not a.internal] if snapshots else None))
            return recorded

        monkeypatch.setattr(Heap, "_allocate", _allocate)
        monkeypatch.setattr(Heap, "_release", _release)
        monkeypatch.setattr(Context, "import_call", _import_call)

    def reset(self) -> None:
        """A new event list, which also receives every known heap's retains and releases
        (Heap.ref_events; a heap is known from its first allocation)."""
        self.events = _CountedTrace(self.heaps)
        for ref in self.heaps:
            if (heap := ref()) is not None:
                heap.ref_events = self.events


class _CountedTrace(list):
    """Heap.ref_events for the recorder: a retain or release of the object at `ptr` is recorded as
    (kind, serial of the live allocation holding the object, offset in it, type tag bits), so the
    two paths compare on host heaps mapped at different addresses."""

    def __init__(self, heaps: list) -> None:
        super().__init__()
        self.heaps = heaps

    def _where(self, ptr: int) -> tuple:
        for ref in self.heaps:
            heap = ref()
            if heap is not None and not heap.closed:
                a = heap._find_live(ptr)
                if a is not None:
                    return a.serial, ptr - a.address
        return None, ptr  # not in a tracked allocation (module storage in the image, say)

    def append(self, event: tuple) -> None:
        if event[0] in ("retain", "release"):
            kind, ptr, type_word = event
            event = (kind, *self._where(ptr), type_word & 7)
        super().append(event)

    def extend(self, events) -> None:
        for e in events:
            self.append(e)


def _run_case(path, function, inputs, target, reference):
    with Program(path.read_bytes(), RunOptions(target=target, reference=reference)) as prog:
        chars, _ = prog.signature(function)
        try:
            values = [parse_input(text, char) for text, char in zip(inputs, chars)]
            return format_results(prog.call_results(function, *values))
        except IreeAbiError as e:
            return f"{type(e).__name__}: {e}"


# riscv32 runs the vmvx-inline kernels of inline-static only: inline-dynamic's kernels are host code.
@pytest.mark.parametrize("model, target", [(m, None) for m in corpus.MODELS] + [("inline-static", "riscv32")],
                         ids=[f"{m}-host" for m in corpus.MODELS] + ["inline-static-riscv32"])
def test_e2e_corpus_agrees_with_heap_events(corpus_modules, model, target, monkeypatch):
    """Reference path (per-instruction handlers, layered import calls) against the fast path
    (compiled blocks, planned import call sites): the same printed results or error, and the same
    heap events. On riscv32 the address space is the program's own, so addresses and the memory
    after each import must match too; on the host, addresses are the host allocator's."""
    recorder = _Recorder(monkeypatch, snapshots=target is not None)
    counted = set()
    for program, function, inputs in corpus.CASES:
        path = corpus_modules[(program, model)]
        seen = []
        for reference in (True, False):
            recorder.reset()
            text = _run_case(path, function, inputs, target, reference)
            seen.append((text, list(recorder.events)))
        assert seen[0][1], "the recorder saw no heap events"
        counted |= {e[0] for e in seen[0][1] if e[0] in ("retain", "release")}
        assert seen[1][0] == seen[0][0], (program, function, inputs)
        assert seen[1][1] == seen[0][1], (program, function, inputs)
    assert counted == {"retain", "release"}, "the recorder saw no retains or releases"


def _region_functions(ctx) -> dict[str, list]:
    """function name -> the distinct loop-region functions (registers as locals) in its code."""
    out: dict[str, list] = {}
    for fn in ctx.compile_all():
        for entry in fn.code:
            run = entry[0]
            if "locals region" in run.__code__.co_filename and run not in out.setdefault(fn.name, []):
                out[fn.name].append(run)
    return out


def test_loops_keep_their_registers_in_locals():
    """Every loop of loops.vm.mlir runs in a region function whose loop counters and accumulators
    are Python locals (regions.py names them L<register>_<count>), not reads of the register bytes."""
    with Context(host("loops.vm.mlir")) as ctx:
        regions = _region_functions(ctx)
        for name in ("copy_f32", "f32_acc", "nested", "handlers", "widths", "oob"):
            names = {v for run in regions[name] for v in run.__code__.co_varnames}
            assert any(re.fullmatch(r"L\d+_[12]", v) for v in names), (name, sorted(names))


def _count_calls(ctx, prefix: str) -> list:
    """Wrap every name bound with `prefix` in the region functions' namespaces with a counter."""
    calls = [0]
    for runs in _region_functions(ctx).values():
        for run in runs:
            namespace = run.__globals__
            for key, value in list(namespace.items()):
                if key.startswith(prefix) and key[len(prefix):].isdigit() and callable(value):
                    def counted(*args, _f=value):
                        calls[0] += 1
                        return _f(*args)
                    namespace[key] = counted
    return calls


def test_a_signaling_nan_load_runs_the_load_handler():
    """A float local cannot hold an f32 signaling NaN's bits (Python's f32 reader quiets it): the
    region hands such a load to the instruction's own handler and returns to the interpreter loop.
    copy_f32's copy loop adds each element to an accumulator before storing it: each of the 5
    signaling NaNs takes that path once (a quiet NaN, 0x7FC00001, stays in the region); the
    accumulator, now a quiet NaN, enters the loop again without the byte-register region. The copy
    keeps the bits, as iree-run-module's does (test_interpreter.py)."""
    handled, fallbacks = {}, {}
    for bits in (0x3FC00000, 0x7F800001, 0x7FC00001):
        with Context(host("loops.vm.mlir")) as ctx:
            calls, fb = _count_calls(ctx, "h"), _count_calls(ctx, "fb")
            first, last, _ = ctx.invoke("copy_f32", bits, 5)
            assert first == last == (bits if bits < 1 << 31 else bits - (1 << 32))
            handled[bits], fallbacks[bits] = calls[0], fb[0]
    assert handled[0x7F800001] - handled[0x3FC00000] == 5
    assert handled[0x7FC00001] == handled[0x3FC00000]
    assert set(fallbacks.values()) == {0}


def test_a_loop_entered_with_a_signaling_nan_runs_the_byte_register_region():
    """An f32 loop local entered holding a signaling NaN would lose its bits: that run goes to
    blocks.py's byte-register region (the fallback), with the reference path's result; a quiet NaN
    keeps its bits in a Python float and stays in the region. float_bits_loop's running min starts
    from the bits given, its max from their negation."""
    for start, fallbacks in ((0x3F800000, 0), (0x7FC00001, 0), (-4194303, 0), (0x7F800001, 1),
                             (-8388607, 1)):
        args = (0x3F800000, -0x200000, start, 0.5, 4)
        with Context(host("loops.vm.mlir")) as ctx, Context(host("loops.vm.mlir"), reference=True) as ref:
            calls = _count_calls(ctx, "fb")
            got = ctx.invoke("float_bits_loop", *args)
            assert _bits(got) == _bits(ref.invoke("float_bits_loop", *args))
            assert calls[0] == fallbacks, start
    for start in (1.0, float("nan")):
        with Context(host("loops.vm.mlir")) as ctx, Context(host("loops.vm.mlir"), reference=True) as ref:
            calls = _count_calls(ctx, "fb")
            assert _bits(ctx.invoke("f32_acc", start, 1.5, 4)) == _bits(ref.invoke("f32_acc", start, 1.5, 4))
            assert calls[0] == 0


def test_float_bits_ops_in_a_loop_are_inlined():
    """float_bits_loop's min/max/pow/neg/abs of f32 and f64 are written inline in its loop region
    (no handler of theirs is bound there); test_host_programs_agree compares its results on both
    paths, and test_interpreter.py with iree-run-module."""
    with Context(host("loops.vm.mlir")) as ctx:
        assert _region_functions(ctx)["float_bits_loop"]
        assert _handlers_bound(ctx, _INLINE_MAKERS, "float_bits_loop") == []


@pytest.mark.parametrize("args", [(5, -7), ("x", 1), (1 << 40, 1), (None, 1), (1.5, 2), (True, 3), (1,)])
def test_generated_entries_and_returns_agree(args):
    """The fast path's per-export entry (arguments into registers) and per-return-site exit (results
    out of them) are `_invoke`'s and `_leave_external`'s loops generated: the same results, and the
    same error type and text for every bad argument."""
    path = host("arith.mlir")
    with Context(path, reference=True) as ref, Context(path) as fast:
        for _ in range(2):  # the second call runs the generated exit
            want = _outcome(lambda: ref.invoke("i32_ops", *args))
            assert _outcome(lambda: fast.invoke("i32_ops", *args)) == want
        assert fast._entries["i32_ops"][2] is not None and ref._entries["i32_ops"][2] is None


KERNELS = Path(__file__).resolve().parents[2] / "programs" / "kernels"


def _argmax_rows(k: int) -> np.ndarray:
    """6 rows of 37 f32: ramps, ties, -inf, zeros of both signs; with `k`, NaNs (quiet, signaling
    and negative) in rows 3-5, which every comparison keeps out of the maximum."""
    x = ((np.arange(6 * 37, dtype=np.float32) * 7) % 11 - 5).reshape(6, 37)
    x[1] = 2.0  # all tied: index 0
    x[2, :] = -np.inf
    x[2, 20] = -0.0
    x[2, 30] = 0.0
    if k:
        bits = x.view(np.uint32)
        bits[3, 0], bits[4, 5], bits[5, 36] = 0x7F800001, 0x7FC00000, 0xFFC00001
    return x


def _select_handlers(ctx) -> int:
    """How many select handlers the loop-region functions hold: regions.py binds one only where it
    leaves a select to its handler (operands held in different kinds)."""
    return sum(1 for runs in _region_functions(ctx).values() for run in runs
               for value in run.__globals__.values()
               if callable(value) and getattr(value, "__qualname__", "").startswith("_make_select."))


@pytest.mark.parametrize("target", [None, "riscv32"], ids=["host", "riscv32"])
def test_selects_in_a_loop_are_inlined_and_agree(target, tmp_path):
    """vmvx-inline's row argmax keeps its running maximum and index with vm.select.f32/.i32: in its
    loop region both are written inline (no select handler is bound there), and both paths, and
    iree-run-module on the host, give the same indices, NaN rows included (a loaded NaN runs the
    load's handler, and the loop goes on)."""
    from support import iree_tools as tools  # noqa: PLC0415
    path = tools.compile_mlir(KERNELS / "argmax_small.mlir", tools.session_dir(), "inline-static")
    for k in (0, 1):
        x = _argmax_rows(k)
        outs = []
        for reference in (True, False):
            with Program(path.read_bytes(), RunOptions(target=target, reference=reference)) as prog:
                if not reference:
                    assert _region_functions(prog.context)["argmax"]
                    assert _select_handlers(prog.context) == 0, "a select is left to its handler"
                indices = prog.call("argmax", x)
                outs.append(indices.tolist())
        assert outs[0] == outs[1]
        expected = [int(np.argmax(row)) for row in np.where(np.isnan(x), -np.inf, x)]
        if k:
            expected = outs[0]  # NaN rows: checked against iree-run-module below
        assert outs[0] == expected
        if target is None:
            np.save(tmp_path / "x.npy", x)
            text = tools.run_module(path, "argmax", [f"@{tmp_path / 'x.npy'}"])
            assert text.split("6xi32=")[1].split() == [str(v) for v in outs[0]]


_SPECIALS = np.array([0x7FC00000, 0x7F800001, 0xFFC00001, 0x7F800000, 0xFF800000, 0x00000001, 0x807FFFFF,
                      0x80000000, 0x00000000, 0x3F800000, 0xBF800000, 0x42B20000], dtype=np.uint32).view(np.float32)


def _float_inputs(n: int, k: int, specials: bool, nans: bool) -> np.ndarray:
    """n f32: a ramp of both signs, with (if `specials`) NaNs (quiet, signaling, negative: if
    `nans`), infinities, denormals, zeros of both signs, +-1 and 89 (whose exp overflows) at the
    front. (A sum of two NaNs of different payloads keeps either payload, as the C compiler or
    Python's interpreter orders the operands: the sums of products run without input NaNs.)"""
    x = ((np.arange(n, dtype=np.float32) * (3 + k)) % 13 - 6) * np.float32(0.375)
    if specials:
        values = _SPECIALS if nans else _SPECIALS[~np.isnan(_SPECIALS)]
        x[:len(values)] = np.roll(values, k)
    return x


# Handlers (by their maker) a loop region binds only for the ops it leaves to them: none of these
# may be left in the kernels' loop regions.
_INLINE_MAKERS = ("_make_select.", "_make_min_max_f32.", "_make_pow_f32.", "make_sign_bit.", "make_pure.")


def _handlers_bound(ctx, makers: tuple, function: str) -> list:
    return [value.__qualname__ for run in _region_functions(ctx)[function] for value in run.__globals__.values()
            if callable(value) and getattr(value, "__qualname__", "").startswith(makers)]


@pytest.mark.parametrize("kernel, function, shapes, nans", [
    ("softmax_small", "softmax", [(5, 37)], True), ("elementwise_small", "chain", [(48,), (48,)], True),
    ("matmul_small", "matmul", [(7, 9), (9, 5)], False),
    ("conv2d_small", "conv2d", [(1, 6, 6, 3), (3, 3, 3, 4)], False)])
@pytest.mark.parametrize("target", [None, "riscv32"], ids=["host", "riscv32"])
def test_float_kernels_run_inline_and_agree(kernel, function, shapes, nans, target, tmp_path):
    """vmvx-inline's softmax (max reduction from a NaN, cmp.lt.f32.u, cmp.nan, select, exp, div),
    an elementwise chain (exp, tanh, pow, neg, abs, div), a matmul and a convolution (fma.f32,
    fma.i64, loop nests whose levels reuse registers with other widths): their loop regions leave
    none of these ops to its handler, a loaded quiet NaN stays in the region (no byte-register
    fallback runs), and both paths and iree-run-module (host) give the same bits, special values
    included."""
    from support import iree_tools as tools  # noqa: PLC0415
    path = tools.compile_mlir(KERNELS / f"{kernel}.mlir", tools.session_dir(), "inline-static")
    for specials in (False, True):
        inputs = [_float_inputs(int(np.prod(s)), k, specials, nans).reshape(s) for k, s in enumerate(shapes)]
        outs = []
        for reference in (True, False):
            with Program(path.read_bytes(), RunOptions(target=target, reference=reference)) as prog:
                if not reference:
                    assert _region_functions(prog.context)[function]
                    assert _handlers_bound(prog.context, _INLINE_MAKERS, function) == []
                    fallbacks = _count_calls(prog.context, "fb")
                results = prog.call_results(function, *inputs)
                outs.append([r.tobytes() for r in results])
                if not reference and not specials:
                    assert fallbacks[0] == 0
        assert outs[0] == outs[1]
        if target is None:
            files = []
            for k, x in enumerate(inputs):
                np.save(tmp_path / f"x{k}.npy", x)
                files.append(f"@{tmp_path / f'x{k}.npy'}")
            theirs = tools.run_module_results([path], function, files, len(outs[0]))
            assert [t.tobytes() for t in theirs] == outs[0]


def _plans(monkeypatch) -> list:
    """Every RegionPlan made from now on (compile_blocks makes one per function with loops)."""
    plans: list = []
    make = RegionPlan.__init__

    def recorded(self, *args, **kwargs):
        make(self, *args, **kwargs)
        plans.append(self)
    monkeypatch.setattr(RegionPlan, "__init__", recorded)
    return plans


@pytest.mark.parametrize("kernel, function, shapes", [
    ("softmax_3d_small", "softmax_3d", [(12, 128, 64)]), ("softmax_small", "softmax", [(5, 37)]),
    ("matmul_small", "matmul", [(7, 9), (9, 5)]), ("conv2d_small", "conv2d", [(1, 6, 6, 3), (3, 3, 3, 4)]),
    ("argmax_small", "argmax", [(6, 37)])])
def test_a_loop_keeps_its_blocks_in_one_set_of_locals(kernel, function, shapes, monkeypatch, tmp_path):
    """RegionPlan splits a loop nest level by level at each loop's head (the block entered from
    outside it): every back edge (to a block at or before its source) stays inside one set of
    locals, so no iteration writes its locals back and reads another set's. (softmax_3d's pass
    nest once had its innermost loop's body taken for a head: each element of the last pass then
    crossed between two sets, 20 register reads and 10 writes.) The fast path's results are
    iree-run-module's."""
    from support import iree_tools as tools  # noqa: PLC0415
    path = tools.compile_mlir(KERNELS / f"{kernel}.mlir", tools.session_dir(), "inline-static")
    plans = _plans(monkeypatch)
    inputs = [_float_inputs(int(np.prod(s)), k, False, False).reshape(s) for k, s in enumerate(shapes)]
    with Program(path.read_bytes()) as prog:
        results = prog.call(function, *inputs)
    results = list(results) if isinstance(results, (list, tuple)) else [results]  # one result or several
    assert plans, "no loop region was planned"
    for plan in plans:
        assert len(plan.locals_of) >= 2
        for s, targets in plan.succ.items():
            for t in targets:
                if t is not None and t <= s:
                    assert plan.loop_of.get(s) == plan.loop_of.get(t), (kernel, s, t)
    files = []
    for k, x in enumerate(inputs):
        np.save(tmp_path / f"x{k}.npy", x)
        files.append(f"@{tmp_path / f'x{k}.npy'}")
    theirs = tools.run_module_results([path], function, files, len(results))
    assert [t.tobytes() for t in theirs] == [r.tobytes() for r in results]


def test_libm_calls_of_regions_give_the_reference_bits():
    """Loop regions call each C library function of PURE_OPS (expf, tanhf, powf, their f64
    forms...) through a cffi pointer to the ctypes function's own address (regions.c_call): for
    every one, on special values (NaNs with payloads, infinities, denormals, signed zeros) and a
    ramp, the result has the bits of the reference path's ctypes call."""
    import ctypes  # noqa: PLC0415
    import itertools  # noqa: PLC0415
    from ireeabi.vm.ops import PURE_OPS  # noqa: PLC0415
    from ireeabi.vm.bytecode.regions import c_call  # noqa: PLC0415
    values = [float(v) for v in _SPECIALS] + [float(v) for v in _float_inputs(40, 1, False, False)] + [1e-40, 7e37]
    checked = 0
    for name, f in sorted(PURE_OPS.items()):
        if not isinstance(f, ctypes._CFuncPtr):
            continue
        fast = c_call(f)
        assert fast is not f and type(fast).__module__ != "ctypes", name
        arity = len(f.argtypes)
        for args in itertools.product(values[::3] if arity == 2 else values, repeat=arity):
            assert struct.pack("<d", fast(*args)) == struct.pack("<d", f(*args)), (name, args)
        checked += 1
    assert checked >= 30


@pytest.mark.parametrize("target", [None, "riscv32"], ids=["host", "riscv32"])
def test_temporaries_dead_around_a_loop_stay_out_of_the_register_bytes(target, tmp_path):
    """A loop region writes a temporary back to the register bytes only where code may read it:
    a later block of the region, a handler (the registers its operands name) or the code outside
    the region (what its operands name: RegionPlan.exit_live). softmax_3d's three per-element
    loops load f32 values into registers their next iteration overwrites as an i64 index: once
    written back at every back edge (4 register writes per element), now only when a loop is left
    (some 20 per row of 64). The results are iree-run-module's, on the host's heap and riscv32's."""
    from support import iree_tools as tools  # noqa: PLC0415
    path = tools.compile_mlir(KERNELS / "softmax_3d_small.mlir", tools.session_dir(), "inline-static")
    x = _float_inputs(12 * 128 * 64, 0, True, True).reshape(12, 128, 64)
    x[3] = -x[3]  # rows of negative values (softmax's max starts from -NaN: the first load replaces it)
    with Program(path.read_bytes(), RunOptions(target=target)) as prog:
        writes = [_count_calls(prog.context, p) for p in ("PI", "Pf")]
        results = prog.call("softmax_3d", x)
        results = list(results) if isinstance(results, (list, tuple)) else [results]
    assert sum(w[0] for w in writes) < x.size // 2, writes  # was 4.35 per element, now 0.35
    np.save(tmp_path / "x.npy", x)
    theirs = tools.run_module_results([path], "softmax_3d", [f"@{tmp_path / 'x.npy'}"], 1)
    assert [t.tobytes() for t in theirs] == [r.tobytes() for r in results]
