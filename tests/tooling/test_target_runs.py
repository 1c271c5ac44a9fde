"""The inline-static corpus on all seven data models, against iree-run-module on the host.

The corpus is tests/programs/e2e (through the Python API) and the inline-static I/O fidelity cases of
tests/programs/io_fidelity (through `ireeabi run --target T`, every element type in and out).

Every case of tests/programs/e2e, compiled for inline-static (vmvx-inline: no machine code), runs in
a Program whose heap is laid out for each target: every struct, argument buffer and shim of that
data model. The oracle is twofold:

- iree-run-module's output on the host: a run on any target must print it byte for byte, unless
- `check_imports` (the layout rules, checked against the compilers and the real packer elsewhere)
  predicts an import of the module incompatible on that target: then the run must fail on exactly
  the first such import the case calls (the host run's call trace says which), with IREE's
  "argument/result signature mismatch" naming it, and on no other import or target.

While the corpus runs, every import call's argument buffer is read from the emulated memory and
checked against `cconv.layout(fragment, target, spans)` slot by slot (each value, span count and
gap where that layout puts it). Every program is closed on a tracked heap: nothing may leak.
"""
from __future__ import annotations

import re
import struct

import numpy as np
import pytest

from support import e2e_corpus as corpus
from support import iree_tools as tools
from support.e2e_corpus import CASES
from test_run_io_fidelity import OK as IO_CASES
from test_run_io_fidelity import PROGRAMS as IO_PROGRAMS
from test_run_io_fidelity import iree as iree_run, ours as ireeabi_run
from ireeabi.abi import cconv, targets
from ireeabi.layouts import modules
from ireeabi.vm import shims as _shims
from ireeabi.base.heap import tracked_heap
from ireeabi.vm.bytecode.import_check import check_imports
from ireeabi.vm.bytecode import VmStatusError
from ireeabi.tooling.program import Program
from ireeabi.vm.native_module import PlannedCall
from ireeabi.modules.hal.loader import DispatchShim
from ireeabi.vm.bytecode.module_file import read_module
from ireeabi.base.status import StatusCode

MODEL = "inline-static"
TARGETS = targets.names()
_IMPORT = re.compile(r"while calling import (\S+)")


@pytest.fixture(scope="module")
def compiled():
    return corpus.compile_all()


@pytest.fixture(scope="module")
def incompatible(compiled):
    """(target, program) -> the imports check_imports predicts incompatible there."""
    descriptors = modules.registered()
    out = {}
    for (name, model), path in compiled.items():
        if model != MODEL:
            continue
        module = read_module(path)
        for t in TARGETS:
            out[t, name] = {r.full_name for r in check_imports(module, descriptors, t) if not r.compatible}
    return out


class Recorder:
    """Import calls as the interpreter makes them: the call trace, and each argument buffer as the
    shim sees it in memory, with the values the call site packed."""

    def __init__(self) -> None:
        self.trace: list[str] = []
        self.buffers: list[tuple[cconv.FragmentLayout, list, bytes]] = []
        self._site: list = []

    def install(self, monkeypatch) -> None:  # noqa: ANN001
        real_call, real_shim, real_loader = PlannedCall.__call__, _shims.Shim.__call__, DispatchShim.__call__
        rec = self

        def planned(self, flat):  # noqa: ANN001, ANN202
            rec.trace.append(f"{self.module.name}.{self.export.name}")
            rec._site.append((self.args.layout, list(flat)))
            try:
                return real_call(self, flat)
            finally:
                rec._site.pop()

        def seen(real):  # noqa: ANN001, ANN202
            def shim(self, ctx, flags, args, rets, function):  # noqa: ANN001, ANN202
                if rec._site and args.data:
                    lay, flat = rec._site[-1]
                    rec.buffers.append((lay, flat, ctx.heap.read(args.data, args.length)))
                return real(self, ctx, flags, args, rets, function)
            return shim

        real_frame = _shims.Shim.on_frame

        def framed(self, arguments, results):  # noqa: ANN001, ANN202 - a generic shim on the call site's frame
            call = real_frame(self, arguments, results)

            def recorded(ctx, function, buf, offset, address, results_offset):  # noqa: ANN001, ANN202
                if rec._site:
                    lay, flat = rec._site[-1]
                    rec.buffers.append((lay, flat, bytes(buf[offset:offset + arguments.size])))
                return call(ctx, function, buf, offset, address, results_offset)
            return None if call is None else recorded

        monkeypatch.setattr(PlannedCall, "__call__", planned)
        monkeypatch.setattr(_shims.Shim, "on_frame", framed)
        monkeypatch.setattr(_shims.Shim, "__call__", seen(real_shim))
        monkeypatch.setattr(DispatchShim, "__call__", seen(real_loader))


_SCALAR = {"i32": "<i", "i64": "<q", "f32": "<i", "f64": "<q"}  # floats travel as their bit patterns


def check_packing(lay: cconv.FragmentLayout, flat: list, data: bytes) -> None:
    """The argument buffer in memory holds each value, span count and zero gap where `lay` (the
    layout rules of cconv, for this target and span counts) puts them."""
    assert len(data) == lay.size, (lay.cconv, lay.target.name)
    word = "<Q" if lay.target.pointer_size == 8 else "<I"
    p = lay.target.pointer_size
    for slot, value in zip(lay.values, flat, strict=True):
        if slot.kind == "ref":
            got = struct.unpack_from(word, data, slot.offset)[0], struct.unpack_from(word, data, slot.offset + p)[0]
            assert got == (value[0], value[1]), (lay.cconv, slot)
        else:
            assert struct.unpack_from(_SCALAR[slot.kind], data, slot.offset)[0] == value, (lay.cconv, slot)
    for c, n in zip(lay.counts, lay.spans, strict=True):
        assert struct.unpack_from("<i", data, c.offset)[0] == n
    for g in lay.gaps:
        assert data[g.offset:g.offset + g.size] == bytes(g.size), (lay.cconv, g)


@pytest.fixture(scope="module")
def host_traces(compiled):
    """The import calls each case makes on the host (where every import is compatible)."""
    out = {}
    mp = pytest.MonkeyPatch()
    try:
        rec = Recorder()
        rec.install(mp)
        with tracked_heap() as heap:
            programs: dict = {}
            for i, (name, function, inputs) in enumerate(CASES):
                p = programs.get(name) or programs.setdefault(name, Program(compiled[name, MODEL], heap=heap))
                del rec.trace[:]
                corpus.ours(p, function, inputs)
                out[i] = list(rec.trace)
            for p in programs.values():
                p.close()
    finally:
        mp.undo()
    return out


@pytest.mark.parametrize("target", TARGETS)
def test_corpus_on_every_target(target, compiled, incompatible, host_traces, monkeypatch):
    rec = Recorder()
    rec.install(monkeypatch)
    failures = {}
    with tracked_heap(target=target) as heap:
        programs: dict = {}
        for i, (name, function, inputs) in enumerate(CASES):
            p = programs.get(name) or programs.setdefault(name, Program(compiled[name, MODEL], heap=heap))
            expected = corpus.iree_output(compiled[name, MODEL], function, tuple(inputs))
            bad = incompatible[target, name]
            fails_at = next((imp for imp in host_traces[i] if imp in bad), None)
            if fails_at is None:
                assert corpus.ours(p, function, inputs) == expected, (target, name, function, inputs)
                continue
            with pytest.raises(VmStatusError) as e:
                corpus.ours(p, function, inputs)
            assert e.value.code == StatusCode.INVALID_ARGUMENT
            assert "argument/result signature mismatch" in str(e.value)
            assert _IMPORT.search(str(e.value)).group(1) == fails_at, (target, name, function)
            failures[name, function] = fails_at
        for p in programs.values():
            p.close()
    # The tracked heap closed with nothing live: no program leaked on this target.
    assert rec.buffers, "no import call was recorded"
    for lay, flat, data in rec.buffers:
        assert lay.target.name == target
        check_packing(lay, flat, data)
    # Where the rules predict no incompatible import, no case fails (asserted above); where they do,
    # the cases that call one fail on it: i386 is the one such target of the corpus.
    if any(incompatible[target, n] for n, _, _ in CASES):
        assert failures, f"{target}: incompatible imports predicted but no case failed"


@pytest.mark.parametrize("target", TARGETS)
def test_counter_keeps_its_state_on_every_target(target, compiled, incompatible):
    """Mutable globals persist across calls in one context, whatever the data model. The module's
    __init allocates its tensor global with hal_inline.buffer.allocate: where that import is
    predicted incompatible (i386's `0iI_rr`), loading the module fails on it instead."""
    path = compiled["counter", MODEL]
    if "hal_inline.buffer.allocate" in incompatible[target, "counter"]:
        with tracked_heap(target=target) as heap:
            with pytest.raises(VmStatusError, match=r"signature mismatch; while calling import "
                                                    r"hal_inline\.buffer\.allocate \(in __init"):
                Program(path, heap=heap)
        return
    first = int(corpus.iree_output(path, "next", ("5",)).split("\n")[1].split("=")[-1])
    start = first - 5
    steps = [5, -3, 1 << 40, 7]
    with tracked_heap(target=target) as heap, Program(path, heap=heap) as p:
        values = [int(p.call("next", s)) for s in steps]
    assert values == [start + sum(steps[:k + 1]) for k in range(len(steps))]


def test_ilp32_addresses_fit_a_32_bit_pointer(compiled):
    """On an ILP32 target every address the program's memory uses fits 4 bytes, and the heap's
    reports name such addresses."""
    path = compiled["elementwise", MODEL]
    with tracked_heap(target="riscv32") as heap, Program(path, heap=heap) as p:
        out = p.call("mul_add", np.ones((3, 4), np.float32), np.ones((3, 4), np.float32))
        assert out.tolist() == [[2.0] * 4] * 3
        live = heap.live()
        assert live and all(a.address + a.size < (1 << 32) for a in live)
        assert heap.space.end <= 1 << 32


def _nans_on(text: str, target: str) -> str:
    """iree-run-module's output as it prints on `target`: on RISC-V every f32 (f16, bf16) it prints
    goes through fcvt.d.s, which makes a NaN positive (the riscv64 runtime prints so:
    test_oracle_differential's NaN test); f64 lines keep their signs."""
    if not target.startswith("riscv"):
        return text
    return "\n".join(re.sub(r"-(nan|NAN)\b", r"\1", line) if re.search(r"(^|[\sx])b?f(32|16)=", line) else line
                     for line in text.split("\n"))


def _dims_on(text: str, target: str) -> str:
    """iree-run-module's output as the same tool prints it on `target`: hal/string_util.c
    iree_hal_parse_shape parses each dim as an int64 and stores it in an iree_hal_dim_t (size_t),
    so on ILP32 a dim past 32 bits keeps its low 32 (the `sizeof(iree_hal_dim_t) == 32` branch that
    would refuse it compares bytes with bits and is never taken)."""
    mask = (1 << (8 * targets.get(target).pointer_size)) - 1

    def line(m: re.Match) -> str:
        return "".join(f"{int(d) & mask}x" for d in m.group(1).split("x")[:-1]) + m.group(2)
    return re.sub(r"^((?:\d+x)+)([a-z]\w*=)", line, text, flags=re.M)


@pytest.fixture(scope="module")
def io_programs():
    return {name: tools.compile_mlir(IO_PROGRAMS / f"{name}.mlir", model=MODEL, extra_flags=corpus.F64)
            for name in ("echo", "compute")}


@pytest.fixture(scope="module")
def io_expected(io_programs):
    """Per I/O case: iree-run-module's stdout and the import calls the case makes on the host."""
    out = {}
    mp = pytest.MonkeyPatch()
    try:
        rec = Recorder()
        rec.install(mp)
        for i, (program, function, inputs, flags) in enumerate(IO_CASES):
            rc, stdout, stderr = iree_run(io_programs[program], function, inputs, flags)
            assert rc == 0, stderr
            del rec.trace[:]
            assert ireeabi_run(io_programs[program], function, inputs, flags) == (0, stdout, "")
            out[i] = (stdout, list(rec.trace))
    finally:
        mp.undo()
    return out


# The I/O cases IREE's strtol refuses on a target whose `long` is 32 bits (ERANGE; on LP64 the
# value wraps to int32): as IREE's own i386 and armv7 runtimes answer (test_oracle_differential's
# integer input test), and strtol itself under gcc -m32 and the armv7 cross gcc (test_string_view_long).
PAST_A_32_BIT_LONG = {("echo", "i32s", ("4294967295",))}


@pytest.mark.parametrize("target", TARGETS)
def test_io_fidelity_on_every_target(target, io_programs, io_expected):
    """`ireeabi run --target T` prints what iree-run-module prints for every element type and value
    form, or fails exactly on the first import of the case that the layout rules predict
    incompatible on T."""
    descriptors = modules.registered()
    bad = {name: {r.full_name for r in check_imports(read_module(path), descriptors, target) if not r.compatible}
           for name, path in io_programs.items()}
    failed = 0
    for i, (program, function, inputs, flags) in enumerate(IO_CASES):
        stdout, trace = io_expected[i]
        fails_at = next((imp for imp in trace if imp in bad[program]), None)
        rc, out, err = ireeabi_run(io_programs[program], function, inputs, [*flags, f"--target={target}"])
        if (program, function, tuple(inputs)) in PAST_A_32_BIT_LONG and targets.get(target).scalar("long").size == 4:
            assert rc == 1 and err.startswith("ireeabi: error: INVALID_ARGUMENT; parsing value"), (target, err)
            continue
        if fails_at is None:
            assert (rc, out, err) == (0, _nans_on(_dims_on(stdout, target), target), ""), \
                (target, program, function, inputs)
        else:
            assert rc == 1 and "Traceback" not in err, err
            squashed = "".join(err.split())
            assert f"signaturemismatch;whilecallingimport{fails_at}(" in squashed, (target, function, err)
            failed += 1
    # The echo functions return their inputs and make no import call: they run even on i386; the
    # compute ones call hal_inline and fail there.
    assert bool(failed) == any(bad.values()), (target, failed)
