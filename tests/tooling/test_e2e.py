"""Whole programs on the emulated ABI against iree-run-module (tests/programs/e2e).

Every program is compiled for inline-dynamic (hal_inline + hal_loader, kernels in an embedded ELF)
and inline-static (hal_inline only, vmvx-inline kernels as VM bytecode) and run twice: by
iree-run-module, and by `ireeabi.tooling.Program` — the bytecode interpreter on a HalRuntime, with
vm.buffer refs counted in tracked memory, every import call packed into an argument buffer and run
through the hal_inline / hal_loader shims, every dispatch on the real kernel. The inputs are the
same `--input` strings (parsed by `parse_input` per the function's cconv); the expected text is
iree-run-module's stdout, compared byte for byte with `EXEC @f` + `format_results`.
"""
from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import pytest

from support import e2e_corpus as corpus
from support import iree_tools as tools
from support.e2e_corpus import CASES, E2E, TESTS, MODELS, _X37, _floats, ours
from ireeabi.cli.main import main
from ireeabi.modules.hal.runtime import HalRuntime
from ireeabi.layouts import hal_inline as HI
from ireeabi.base.machine import host as _host_machine
from ireeabi.base.heap import HeapError, LeakError, tracked_heap
from ireeabi.vm.bytecode import Context, NativeImports, VmStatusError, VmTrapError
from ireeabi.tooling.program import Program, RunOptions
from ireeabi.base.status import IreeFaultError
from ireeabi.hal.string_util import InputParseError
from ireeabi.tooling.function_io import OpaqueResult, format_results, parse_input
from ireeabi.vm.bytecode.vm_buffer_factory import RodataLeakError, VmBufferFactory
from ireeabi.vm.native_module import NativeModule, PlannedCall
from ireeabi.vm.bytecode.module_file import read_module
from ireeabi.vm.ref import Ref, TypeRegistry
from ireeabi.vm.buffer import BufferType

HOST_M = _host_machine()  # the data model of the default (host) heap

@pytest.fixture(scope="session")
def compiled() -> dict[tuple[str, str], Path]:
    """Every corpus program for both models (compiled once per session)."""
    return corpus.compile_all()


@pytest.fixture(scope="module")
def programs(compiled):
    """One Program per (program, model) on a tracked heap; closing them at the end must leave
    the heap empty."""
    yield from corpus.programs_on_one_heap(compiled)


def test_corpus_covers_the_brief():
    names = {p.stem for p in E2E.glob("*.mlir")}
    assert len(names) >= 10
    assert {"elementwise", "reduction", "matmul", "push_constants", "multi_dispatch", "dynamic",
            "results", "scalars", "counter"} <= names


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("name,function,inputs", CASES,
                         ids=[f"{n}.{f}.{i}" for i, (n, f, _) in enumerate(CASES)])
def test_output_matches_iree_run_module(compiled, programs, model, name, function, inputs):
    expected = corpus.iree_output(compiled[name, model], function, tuple(inputs))
    assert ours(programs(name, model), function, inputs) == expected


@pytest.mark.parametrize("model", MODELS)
def test_numpy_inputs_and_results(compiled, programs, model):
    """The Python API: numpy arrays and scalars in, numpy out, values identical to
    iree-run-module's (read back from its .npy output)."""
    x = _X37
    expected, = tools.run_module_results([compiled["push_constants", model]], "affine",
                                         ["37xf32=" + _floats(x), "1.1", "-0.5"], 1)
    got = programs("push_constants", model).call("affine", x, np.float32(1.1), -0.5)
    assert got.dtype == np.float32 and got.shape == (37,)
    assert got.tobytes() == expected.tobytes()
    wide = programs("scalars", model).call("wide", np.array([1, 2, 3, 0.1]), 0.5, 3)
    exp = tools.run_module_results([compiled["scalars", model]], "wide",
                                   ["4xf64=1 2 3 0.1", "0.5", "3"], 3)
    assert wide[0].tobytes() == exp[0].tobytes()
    # call's scalars are Python's, as iree.runtime returns them; call_results keeps their widths
    assert type(wide[1]) is float and wide[1] == exp[1]
    assert type(wide[2]) is int and wide[2] == exp[2]
    listed = programs("scalars", model).call_results("wide", np.array([1, 2, 3, 0.1]), 0.5, 3)
    assert type(listed[1]) is np.float64 and type(listed[2]) is np.int64


@pytest.mark.parametrize("model", MODELS)
def test_mutable_globals_persist_across_calls(compiled, model):
    """iree-run-module runs one call per process: its first value, then successive calls in one
    context must follow the program's semantics (count += step; total += x)."""
    path = compiled["counter", model]
    steps = [5, -3, 1 << 40, 7]
    first = [int(tools.run_module_results([path], "next", [str(s)], 1)[0]) for s in steps]
    start = first[0] - steps[0]  # the global's initial value, as iree-run-module computed it
    assert all(f - s == start for f, s in zip(first, steps))
    x = np.array([1, 2.5, -3, 0.125], np.float32)
    acc, = tools.run_module_results([path], "accumulate", ["4xf32=" + _floats(x)], 1)
    with tracked_heap() as heap, Program(path, heap=heap) as p:
        values = [int(p.call("next", s)) for s in steps]
        assert values == [start + sum(steps[:k + 1]) for k in range(len(steps))]
        assert values[0] == first[0]
        totals = [p.call("accumulate", x) for _ in range(3)]
        assert totals[0].tobytes() == acc.tobytes()
        np.testing.assert_array_equal(totals[2], 3 * x)
        # A second program is a second context: its globals start over.
        with Program(path, heap=heap) as q:
            assert int(q.call("next", 1)) == start + 1
        assert int(p.call("next", 0)) == values[-1]


# --------------------------------------------------------------------------------------------------
# Failures


def test_legacy_loader_fails_inline_dynamic_dispatch(compiled):
    """The pre-fix hal_loader reads the dispatch spans at sizeof(iree_vm_abi_rIiii_t) = 40: with push
    constants the constant count it reads is the first constant (2.5f, 0x40200000), and it reads the
    binding count 4 x that many bytes on, 4 GiB past the argument buffer, where IREE's own runtime
    dies (tests/tooling/test_legacy_loader_oracle.py: SIGSEGV): refused there, the call failing
    whole; inline-static programs do not use hal_loader and are unaffected."""
    inputs = ["5xf32=1,2,3,4,5", "2.5", "-1"]
    with tracked_heap() as heap:
        with Program(compiled["push_constants", "inline-dynamic"], RunOptions(legacy_loader=True),
                     heap=heap) as p:
            values = [parse_input(t, c) for t, c in zip(inputs, p.signature("affine")[0])]
            with pytest.raises(IreeFaultError, match="past the end of the buffer") as info:
                p.call("affine", *values)
            text = str(info.value)
            assert text.startswith("hal_loader.executable.dispatch: the pre-fix dispatch shim reads "
                                   "constant_count 1075838976 at byte 40")
            assert f"then binding_count at byte {40 + 4 + 4 * 0x40200000}" in text
            # The failed call released everything it held: the next one fails the same way.
            with pytest.raises(IreeFaultError, match="past the end of the buffer"):
                p.call("affine", *values)
        with Program(compiled["push_constants", "inline-static"], RunOptions(legacy_loader=True),
                     heap=heap) as p:
            assert ours(p, "affine", inputs) == tools.run_module(
                compiled["push_constants", "inline-static"], "affine", inputs)
    out, err = io.StringIO(), io.StringIO()
    path = str(compiled["push_constants", "inline-dynamic"])
    argv = ["run", path, "--function", "affine", *(f"--input={i}" for i in inputs)]
    # 1, as iree-run-module exits on a failing call (test_run_io_fidelity checks the real tool).
    assert main(argv + ["--legacy-loader"], stdout=out, stderr=err) == 1
    assert "past the end of the buffer" in " ".join(err.getvalue().split())
    # iree-run-module prints EXEC once the inputs parse, before it invokes (run_module.c); the
    # inline-static run above shows the same inputs parse in the real tool.
    assert out.getvalue() == "EXEC @affine\n"


@pytest.mark.parametrize("model", MODELS)
def test_division_by_zero_traps_where_iree_crashes(compiled, model):
    path = compiled["trap", model]
    inputs = ["4xf32=1", "7", "0"]
    proc = tools.run_module_failure([path], "div_scale", inputs)
    assert proc.stdout == "EXEC @div_scale\n"  # printed (and flushed) before the call; SIGFPE
    with tracked_heap() as heap, Program(path, heap=heap) as p:
        with pytest.raises(VmTrapError, match="division by zero") as info:
            p.call("div_scale", np.ones(4, np.float32), 7, 0)
        assert info.value.function == "div_scale"
        # The unwound frame released its refs; the program still works.
        assert int(p.call("div_scale", np.ones(4, np.float32), 7, 2)[1]) == 3
    out, err = io.StringIO(), io.StringIO()
    assert main(["run", str(path), "--function", "div_scale", *(f"--input={i}" for i in inputs)],
                stdout=out, stderr=err) == 1  # run's error exit; iree-run-module crashes
    assert out.getvalue() == proc.stdout
    assert "division by zero" in err.getvalue()
    assert f"div_scale at pc 0x{info.value.pc:X}" in err.getvalue().replace("\n    ", " ")


@pytest.mark.parametrize("text,char", [
    ("3xf32=1 2", "r"), ("2xf32=1 2 3", "r"), ("i32=5", "i"), ("i64=15", "I"), ("2x=1 2", "r"),
    ("2xq32=1", "r"), ("ax2xf32=1", "r"), ("2.5", "r"), ("0000000000000005", "i"),
    ("9223372036854775808", "I"), ("2xi8=-128 -129", "r"), ("1xf32=" + "0" * 29 + "2.5", "r"),
    ("", "f"),
])
def test_bad_inputs_fail_as_iree_run_module_does(compiled, text, char):
    """Our message is the status text iree-run-module prints for the same input."""
    module = {"r": "push_constants", "i": "trap", "I": "counter", "f": "io_types"}[char]
    function = {"r": "affine", "i": "div_scale", "I": "next", "f": "f32s"}[char]
    inputs = {"r": [text, "1", "2"], "i": ["4xf32=1", text, "1"], "I": [text], "f": [text]}[char]
    proc = tools.run_module_failure([compiled[module, "inline-static"]], function, inputs)
    with pytest.raises(InputParseError) as info:
        parse_input(text, char)
    assert str(info.value) in proc.stderr


def test_parse_input_forms():
    assert parse_input("5") == 5 and parse_input("2.5") == 2.5
    np.testing.assert_array_equal(parse_input("4xf32=1,2,3,4"), parse_input("4xf32=1 2 3 4"))
    assert parse_input("2x2xi32=[1 2][3 4]").tolist() == [[1, 2], [3, 4]]
    splat = parse_input("8x16xf32=0.25")
    assert splat.shape == (8, 16) and splat.dtype == np.float32 and (splat == 0.25).all()
    assert parse_input("3xf32").tolist() == [0, 0, 0]  # no contents: zeros
    assert parse_input("f32=1.5").shape == () and parse_input("f32=1.5") == 1.5
    assert type(parse_input("0x10", "i")) is np.int32 and parse_input("0x10", "i") == 16
    assert parse_input("4294967295", "i") == -1  # strtol's long, cast to int32_t
    assert parse_input("0.1", "f") == np.float32(0.1)  # strtof: one rounding to f32
    assert parse_input("(null)", "r") is None and parse_input("(null)", "F") == 0.0
    with pytest.raises(InputParseError, match="no value specified"):
        parse_input("  ")


def test_format_results_of_each_kind():
    text = format_results([np.int32(-7), np.int64(1 << 40), np.float32(0.1), np.float64(-math.nan),
                           None, OpaqueResult("vm.buffer"), np.zeros((2, 0), np.int8),
                           np.array(True), np.float32(3e-45)])
    assert text == ("result[0]: i32=-7\nresult[1]: i64=1099511627776\nresult[2]: f32=0.1\n"
                    "result[3]: f64=-nan\nresult[4]: (null)\nresult[5]: vm.buffer\n(no printer)\n"
                    "result[6]: hal.buffer_view\n2x0xi8=[][]\nresult[7]: hal.buffer_view\n"
                    "i1=01\nresult[8]: f32=2.8026e-45\n")


# --------------------------------------------------------------------------------------------------
# The real ABI: imports through NativeModule calls, counts in memory, teardown


def test_every_import_goes_through_the_native_modules(compiled, monkeypatch):
    """An inline-dynamic program: `__init` loads its executable through hal_loader, each input is
    made with the HAL's API as iree-run-module makes it (no import call), and every import of the
    call is a NativeModule call (packed argument buffer, shim) — one dispatch, on the real kernel."""
    calls = []
    real, real_planned = NativeModule.call_ordinal, PlannedCall.__call__

    def record(self, ordinal, *args, **kwargs):
        calls.append(f"{self.name}.{self.exports[ordinal].name}")
        return real(self, ordinal, *args, **kwargs)

    def record_planned(self, flat):  # the interpreter's call sites
        calls.append(f"{self.module.name}.{self.export.name}")
        return real_planned(self, flat)

    monkeypatch.setattr(NativeModule, "call_ordinal", record)
    monkeypatch.setattr(PlannedCall, "__call__", record_planned)
    with tracked_heap() as heap, Program(compiled["elementwise", "inline-dynamic"],
                                         heap=heap) as p:
        assert calls == ["hal_loader.executable.query_support", "hal_loader.executable.load"]
        a = np.arange(12, dtype=np.float32).reshape(3, 4)
        del calls[:]
        out = p.call("mul_add", a, np.full((3, 4), 2, np.float32))
        np.testing.assert_array_equal(out, a * 2 + a)
    inline = [c for c in calls if c.startswith("hal_inline")]
    assert calls.count("hal_loader.executable.dispatch") == 1
    assert inline[0] == "hal_inline.buffer_view.assert"  # the module checks its inputs first
    assert "hal_inline.buffer.storage" in inline and "hal_inline.buffer.allocate" in inline
    assert inline[-1] == "hal_inline.buffer_view.create"


def test_refs_are_counted_in_memory(compiled):
    """Ref registers hold vm.ref.Refs whose counters live on the heap: a view passed in is
    retained for the call and given back; rodata buffers are module storage (counter 0 at rest)."""
    with tracked_heap() as heap, Program(compiled["elementwise", "inline-dynamic"],
                                         heap=heap) as p:
        views = p.runtime.views.resources
        view = p.buffer_view(np.ones((3, 4), np.float32))
        assert isinstance(view, Ref) and views.counter(view.ptr) == 1
        out = p.context.invoke("mul_add", view, view)
        assert views.counter(view.ptr) == 1  # the call's retains were all released
        assert views.counter(out[0].ptr) == 1  # the result is ours
        assert p.buffers.rodata_counters() == [0] * len(p.module.rodata_segments)
        assert p.to_numpy(out[0]).tolist() == [[2.0] * 4] * 3
        p.buffers.release(out[0])
        p.buffers.release(view)
        assert views.live() == []
        # The executable loaded by __init is held by a ref global.
        assert [type(g) for g in p.context.global_refs] == [Ref]


def test_close_reports_leaks(compiled):
    """A result reference never released is found at teardown: the program's own heap reports it
    (LeakError); with a rodata ref still held the context refuses to free the storage."""
    p = Program(compiled["elementwise", "inline-static"])
    view = p.buffer_view(np.ones((3, 4), np.float32))  # never released
    assert p.call("mul_add", view, view).shape == (3, 4)
    with pytest.raises(LeakError) as info:
        p.close()
    assert "hal.buffer" in str(info.value) or "buffer" in str(info.value)
    with tracked_heap() as heap:
        rt = HalRuntime(heap)
        factory = VmBufferFactory(rt.vm_buffers)
        ctx = Context(compiled["elementwise", "inline-static"], NativeImports(rt.modules),
                      buffers=factory)
        held = factory.rodata_ref(ctx.rodata[0])
        with pytest.raises(RodataLeakError, match=r"rodata\[0\] has 1"):
            ctx.close()
        factory.release(held)
        factory.close()  # nothing referenced any more: the storage and module head go
        rt.close()


def test_host_programs_on_counted_vm_buffers():
    """Host programs with buffers, lists of buffers and ref globals on the real backend: same
    results as iree-run-module, nothing left on the heap."""
    host = TESTS / "programs" / "host"
    cases = [("buffers.mlir", "copy_slice", [(-5, 8), (9, 4)]),
             ("lists.mlir", "buffer_list", [(8,), (4,)]),
             ("buffer_ops.mlir", "itoa", [(1234567,), (-1,)])]
    for program, function, calls in cases:
        path = tools.compile_with_flags(host / program, tools.HOST_FLAGS)
        cconv = read_module(path).exported(function).cconv
        count = sum(c in "iIfFr" for c in cconv.partition("_")[2])
        with tracked_heap() as heap:
            types = TypeRegistry(heap)
            vmb = BufferType(types)
            with Context(path, buffers=VmBufferFactory(vmb)) as ctx:
                for args in calls:
                    expected = tools.run_module_results([path], function,
                                                        [str(a) for a in args], count)
                    got = ctx.invoke(function, *args)
                    assert got == [int(e) for e in expected], f"{function}{args}"
            vmb.close()
            types.close()


def test_cli_run_prints_what_iree_run_module_prints(compiled):
    inputs = ["8xf32=1 -2 3 -4 5 -6 7 -8", "8xf32=0.5", "-3"]
    for model in MODELS:
        path = compiled["results", model]
        out = io.StringIO()
        assert main(["run", str(path), "--function", "stats",
                     *(f"--input={i}" for i in inputs)], stdout=out) == 0
        assert out.getvalue() == tools.run_module(path, "stats", inputs)
    # 1, as iree-run-module exits for both (test_run_io_fidelity checks the real tool).
    err = io.StringIO()
    assert main(["run", str(path), "--function", "stats", "--input=8xf32=1"],
                stdout=io.StringIO(), stderr=err) == 1
    assert "takes 3 input(s), 1 given" in err.getvalue()
    assert main(["run", str(path), "--function", "nope"], stdout=io.StringIO(),
                stderr=err) == 1
    assert "unknown exported function 'nope'" in err.getvalue()
    # The pre-fix storage wrapper: the results print, then the leak fails the run.
    out, err = io.StringIO(), io.StringIO()
    assert main(["run", str(path), "--function", "stats", "--legacy-inline",
                 *(f"--input={i}" for i in inputs)], stdout=out, stderr=err) == 1
    assert out.getvalue() == tools.run_module(path, "stats", inputs)
    assert "outlived the program" in err.getvalue()


def test_the_pre_fix_modes_on_a_whole_program(compiled):
    """The other pre-fix modes on a whole program: the pre-fix storage wrapper leaks once per
    storage buffer (the tracked heap names it at close); with the pre-fix VM buffer destroy as well,
    the program's release of a storage buffer hands its in-place handle to free_aligned, which the
    heap refuses: a trap naming the function and pc."""
    path = compiled["elementwise", "inline-static"]
    args = (np.ones((3, 4), np.float32), np.ones((3, 4), np.float32))
    p = Program(path, RunOptions(legacy_inline=True))
    assert p.call("mul_add", *args).tolist() == [[2.0] * 4] * 3
    with pytest.raises(LeakError) as info:
        p.close()
    wrapper = HOST_M.layout(HI.iree_hal_inline_storage_buffer_t).size
    assert wrapper in [a.size for a in info.value.leaks]
    p = Program(path, RunOptions(legacy_loader=True, legacy_inline=True, legacy_vm_buffer=True))
    assert (p.runtime.loader.legacy, p.runtime.inline.legacy, p.runtime.vm_buffers.legacy) == \
        (True, True, True)
    with pytest.raises(VmTrapError, match=r"free_aligned of 0x[0-9a-f]+, which malloc_aligned did "
                                          r"not return.*\(in mul_add at pc 0x[0-9A-F]+\)") as info:
        p.call("mul_add", *args)
    assert isinstance(info.value.__cause__, HeapError)
    with pytest.raises((HeapError, LeakError)):
        p.close()
