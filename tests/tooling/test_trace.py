"""Execution traces (tooling/trace.py): every import call's packed bytes with both views, checked
against the bytes the import really received (captured by a wrapper of the test's own), the shim
struct layouts of the catalog (layouts/) and IREE #24827's misread on riscv32; the instruction
trace against iree-dump-module's disassembly of the same pcs (IREE's trace line is that text with
inline values, disassembler.c); JSON lines against the events."""
from __future__ import annotations

import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

from support import e2e_corpus as corpus
from support import iree_tools as tools
from ireeabi.abi import cconv
from ireeabi.abi.targets import get as get_target
from ireeabi.cli.main import main
from ireeabi.layouts import get as catalog_struct
from ireeabi.layouts import hal_loader as HL
from ireeabi.modules.hal.runtime import HalRuntime
from ireeabi.tooling.check_compile import KERNEL_TARGET_FLAGS
from ireeabi.tooling.function_io import parse_input
from ireeabi.tooling.program import Program, RunOptions
from ireeabi.tooling.disassemble import function_name
from ireeabi.tooling.trace import Trace, TraceError
from ireeabi.tooling.trace_format import WIDTH, format_event
from ireeabi.base.status import IreeFaultError

HERE = Path(__file__).resolve().parent.parent
RISCV32 = KERNEL_TARGET_FLAGS["riscv32"]
ADD16_INPUTS = (np.arange(16, dtype=np.float32), np.full(16, 0.5, np.float32))


class Received:
    """The argument bytes each import's shim is handed, read by a wrapper around the (traced) shims:
    independent of the trace's own reading."""

    def __init__(self, program: Program) -> None:
        self.calls: list[tuple[str, bytes]] = []
        for module in program.runtime.modules.values():
            module.shims = tuple(self._wrap(module, i, s) for i, s in enumerate(module.shims))

    def _wrap(self, module, ordinal, shim):  # noqa: ANN001, ANN202
        name = f"{module.name}.{module.exports[ordinal].name}"

        def seen(ctx, flags, args, rets, function):  # noqa: ANN001, ANN202
            data = ctx.heap.read(args.data, args.length) if args.data and args.length else b""
            self.calls.append((name, data))
            return shim(ctx, flags, args, rets, function)
        return seen


def _check_event(event: dict, target: str) -> None:
    """One import event against the catalog: the packed fields tile the buffer and hold its bytes;
    each field the shim reads sits where the catalog's struct has it."""
    t = get_target(target)
    data = bytes.fromhex(event["arguments"]["bytes"])
    packed = event["arguments"]
    assert packed["size"] == len(data)
    at = 0
    for f in packed["fields"]:  # every byte in exactly one field, in order
        assert f["offset"] == at, (event["import"], f)
        assert bytes.fromhex(f["bytes"]) == data[at:at + f["size"]]
        at += f["size"]
    assert at == len(data) or packed.get("omitted")
    shim = event["shim"]
    frag = cconv.parse(event["cconv"]).arguments
    if shim["kind"] in ("fixed", "vla"):
        struct = catalog_struct(shim["struct"])
        offsets = {f.name: f.offset for f in struct.layout(t).fields}
        for f in shim["fields"]:
            if "element" not in f:
                assert f["offset"] == offsets[f["name"]], (shim["struct"], f)
    elif event["import"] == "hal_loader.executable.dispatch":
        assert shim["struct"] == HL.iree_hal_loader_dispatch_args_t.name
        params = HL.iree_vm_abi_rIiii_t.layout(t)
        named = [f.name for f in HL.iree_hal_loader_dispatch_args_named_t.fields]
        by_name = {f["name"]: f["offset"] for f in shim["fields"]}
        for name, field in zip(named, params.fields):
            assert by_name[name] == field.offset
    for f in shim["fields"]:
        assert bytes.fromhex(f["bytes"]) == data[f["offset"]:f["offset"] + f["size"]]
    assert frag.text == packed["fragment"]


def _run_traced(path: Path, function: str, inputs: list[str], **kw) -> tuple[Trace, Received, str]:
    trace = Trace("imports")
    with Program(path, RunOptions(trace=trace, **kw)) as p:
        received = Received(p)
        init_events = len(trace.events)  # __init's imports ran before the wrapper was in place
        del trace.events[:init_events]
        out = corpus.ours(p, function, inputs)
    return trace, received, out


@pytest.fixture(scope="module")
def compiled():
    return corpus.compile_all()


# One case per corpus program (and function), each on both inline models and the default one.
_FIRST = list({(p, f): (p, f, i) for p, f, i in reversed(corpus.CASES) if p != "io_types"}.values())


@pytest.mark.parametrize("model", corpus.MODELS + ("llvm-cpu",))
def test_corpus_traces_every_import_byte_for_byte(model, compiled):
    default = ("elementwise", "push_constants", "results")  # the default model: three programs
    cases = _FIRST if model != "llvm-cpu" else [c for c in _FIRST if c[0] in default]
    seen = 0
    for program, function, inputs in cases:
        path = compiled[program, model] if model in corpus.MODELS else \
            tools.compile_mlir(corpus.E2E / f"{program}.mlir", model=model, extra_flags=corpus.F64)
        trace, received, out = _run_traced(path, function, inputs)
        # tracing changes nothing the program prints
        assert out == corpus.iree_output(path, function, tuple(inputs)), (program, function)
        events = [e for e in trace.events if e["event"] == "import"]
        assert [e["import"] for e in events] == [name for name, _ in received.calls]
        for e, (name, data) in zip(events, received.calls):
            assert bytes.fromhex(e["arguments"]["bytes"]) == data, (program, name)
            assert e["caller"] == function and isinstance(e["pc"], int)
            assert e["status"] == {"code": "OK"}
            assert e["shim"]["disagreements"] == 0 and e["shim"]["failure"] is None, e["import"]
            _check_event(e, "x86_64")
        seen += len(events)
    assert seen > 10


def _add16_riscv32() -> Path:
    return tools.compile_mlir(HERE / "programs" / "add16.mlir", model="inline-dynamic",
                              extra_flags=RISCV32)


def test_riscv32_legacy_loader_trace_shows_the_misread_count():
    """The pre-fix dispatch shim reads the constant count at sizeof(iree_vm_abi_rIiii_t), where the
    VM packed the binding count; the fixed one reads everything where it was packed."""
    path = _add16_riscv32()
    t = get_target("riscv32")
    sizeof = HL.iree_vm_abi_rIiii_t.layout(t).size
    trace = Trace("imports")
    with Program(path, RunOptions(target="riscv32", legacy_loader=True, trace=trace)) as p:
        received = Received(p)
        with pytest.raises(IreeFaultError, match=r"IREE hands kernel \S+ 0 of the 3 bindings it reads"):
            p.call("add", *ADD16_INPUTS)
    dispatch = [e for e in trace.events if e["import"] == "hal_loader.executable.dispatch"][-1]
    data = [d for n, d in received.calls if n == "hal_loader.executable.dispatch"][-1]
    assert bytes.fromhex(dispatch["arguments"]["bytes"]) == data
    _check_event(dispatch, "riscv32")
    lay = cconv.layout(cconv.parse(HL.DISPATCH_CCONV).arguments, t, (0, 3))
    packed_binding_count = lay.counts[1].offset
    misread = next(f for f in dispatch["shim"]["fields"] if f["name"] == "constant_count")
    assert misread["offset"] == sizeof == packed_binding_count == 32
    assert misread["packed_as"] == ["binding_count"] and misread["value"] == 3
    assert "binding_count (+32, 4 B)" in misread["disagreement"]
    assert dispatch["shim"]["disagreements"] >= 1
    assert dispatch["status"]["code"] == "IreeFaultError"
    packed = {f["name"]: f["offset"] for f in dispatch["arguments"]["fields"]}
    assert packed["constant_count"] == lay.counts[0].offset == 28

    fixed = Trace("imports")
    with Program(path, RunOptions(target="riscv32", trace=fixed)) as p:
        p.call("add", *ADD16_INPUTS)
    events = [e for e in fixed.events if e["event"] == "import"]
    assert any(e["import"] == "hal_loader.executable.dispatch" for e in events)
    for e in events:
        assert e["shim"]["disagreements"] == 0 and e["status"] == {"code": "OK"}, e["import"]
        _check_event(e, "riscv32")


def test_riscv32_legacy_loader_reads_a_constant_as_the_count():
    """With push constants, the pre-fix shim's count at sizeof(iree_vm_abi_rIiii_t) is the first
    constant's bits (2.5f here, 0x40200000): module.c then reads the binding count 4 x that count
    bytes on, far past the buffer (memory that is not the call's), which is refused saying so."""
    path = tools.compile_mlir(corpus.E2E / "push_constants.mlir", model="inline-dynamic", extra_flags=RISCV32)
    trace = Trace("imports")
    with Program(path, RunOptions(target="riscv32", legacy_loader=True, trace=trace)) as p:
        received = Received(p)
        with pytest.raises(IreeFaultError, match=r"then binding_count at byte 8388644 \(32 \+ 4 \+ 4 x 1075838976, .* past the end of the buffer"):
            p.call("affine", np.arange(5, dtype=np.float32), np.float32(2.5), np.float32(-1))
    dispatch = [e for e in trace.events if e["import"] == "hal_loader.executable.dispatch"][-1]
    assert bytes.fromhex(dispatch["arguments"]["bytes"]) == \
        [d for n, d in received.calls if n == "hal_loader.executable.dispatch"][-1]
    _check_event(dispatch, "riscv32")
    sizeof = HL.iree_vm_abi_rIiii_t.layout(get_target("riscv32")).size
    count = next(f for f in dispatch["shim"]["fields"] if f["name"] == "constant_count")
    constant0 = next(f for f in dispatch["arguments"]["fields"] if f["name"] == "constants[0]")
    assert count["offset"] == sizeof == constant0["offset"] == 32
    assert count["packed_as"] == ["constants[0]"] and count["bytes"] == constant0["bytes"]
    assert dispatch["shim"]["failure"].endswith("IREE reads memory that is not the call's")
    assert dispatch["status"]["code"] == "IreeFaultError"


def test_cli_trace_text_and_json_lines(tmp_path, capsys):
    """`ireeabi run --trace --trace-file`: stdout stays iree-run-module's, the text trace (stderr)
    marks the misread, and every JSON line parses and carries the events a kept trace has."""
    path = _add16_riscv32()
    jsonl = tmp_path / "trace.jsonl"
    argv = ["run", str(path), "--target", "riscv32", "--function", "add",
            "--input=16xf32=1", "--input=16xf32=0.5"]
    assert main(argv + ["--legacy-loader", "--trace", "--trace-file", str(jsonl)]) != 0
    captured = capsys.readouterr()
    assert "constant_count read at +32 (4 B) holds bytes the VM packed as binding_count" in captured.err
    events = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert events and all(e["event"] == "import" for e in events)
    kept = Trace("imports")
    with Program(path, RunOptions(target="riscv32", legacy_loader=True, trace=kept)) as p:
        with pytest.raises(Exception):
            p.call("add", np.ones(16, np.float32), np.full(16, 0.5, np.float32))
    # The same run in a Program: the riscv32 heap is an emulated address space laid out the same
    # way each time, so even the addresses agree: every fact of every event.
    assert events == [json.loads(json.dumps(e)) for e in kept.events]
    assert main(argv + ["--trace"]) == 0
    captured = capsys.readouterr()
    assert "16xf32=1.5" in captured.out and "[import]" not in captured.out
    assert "MISREAD" not in captured.err and "[import] hal_loader.executable.dispatch" in captured.err


def test_hal_runtime_trace_on_i386_places_the_int64_in_padding():
    """HalRuntime(trace=...) without a VM: on i386 int64 members are 4-aligned in C, so
    iree_vm_abi_iI_t is 12 B with i1 at +4 where the VM packed padding and half of i1 (at +8):
    the shim's size check refuses the 16 B buffer, and the trace shows why."""
    trace = Trace("imports")
    t = get_target("i386")
    with HalRuntime(target="i386", trace=trace) as rt:
        with pytest.raises(Exception, match="argument/result signature mismatch"):
            rt.call("hal_inline.buffer.allocate", 64, 128)
    (e,) = trace.events
    assert e["caller"] is None and e["import"] == "hal_inline.buffer.allocate"
    _check_event(e, "i386")
    c = {f.name: f.offset for f in catalog_struct("iree_vm_abi_iI_t").layout(t).fields}
    packed = {f["name"]: f["offset"] for f in e["arguments"]["fields"] if f["kind"] != "padding"}
    assert packed == {"i0": 0, "i1": cconv.layout("iI", t).values[1].offset} == {"i0": 0, "i1": 8}
    i1 = next(f for f in e["shim"]["fields"] if f["name"] == "i1")
    assert i1["offset"] == c["i1"] == 4 and i1["read"] is False
    assert i1["packed_as"] == ["padding", "i1"] and e["shim"]["disagreements"] == 1
    assert "12 B" in e["shim"]["failure"] and e["status"]["code"] == "INVALID_ARGUMENT"


def test_trace_levels_are_checked():
    with pytest.raises(TraceError, match="trace level 'everything'"):
        Trace("everything")


# --------------------------------------------------------------------------------------------------
# The instruction trace

_VALUE = re.compile(r"(%[iRr]\d+(?::\d+)?|\])\((?:[^()]*)\)")
_LINE = re.compile(r"^\[(\w+)(?:\.(\w+)|@(\d+))\+([0-9A-F]{8})\]    (.*)$")
_VM_OPS = [("int_misc", (-5, 0xF0, -(1 << 40), 1 << 20)), ("f32_math", (0.5, 2.0)),
           ("f64_math", (2.5, -0.75, 0)), ("f64_cmp_cast", (2.5, -1.5, -3)),
           ("buffers", (0x1234, -2, 1.5, -0.25)), ("branch_table", (1, 5)),
           ("switch_f64", (1, 1.5, 2.5)), ("refs", (1, 5)), ("lists", (1.5, -2.5)),
           ("optional_import", (4,))]


def _dump_by_pc(path: Path) -> dict[tuple[int, int], str]:
    """iree-dump-module's disassembly, per (function ordinal, pc), as the trace writes it: without a
    block list (IREE's trace passes none) blocks are `<block>` and branch targets `^%08X`."""
    text = tools.dump_module(path, "--output=disassembly", "--bytecode_offsets")
    out: dict[tuple[int, int], str] = {}
    fn = None
    ordinal = -1
    lines: list[tuple[int, str]] = []

    def flush() -> None:
        blocks = [pc for pc, body in lines if re.fullmatch(r"\^bb\d+:", body)]
        for pc, body in lines:
            body = re.sub(r"\^bb(\d+)", lambda m: f"^{blocks[int(m.group(1))]:08X}", body)
            out[ordinal, pc] = "<block>" if re.fullmatch(r"\^[0-9A-F]{8}:", body) else body
    for line in text.splitlines():
        m = re.match(r"vm\.func @(\w+)\(", line)
        if m:  # functions are listed in ordinal order
            fn, lines, ordinal = m.group(1), [], ordinal + 1
            continue
        m = re.match(r"\[([0-9A-F]{8})\]\s*(.*)$", line)
        if m and fn is not None:
            lines.append((int(m.group(1), 16), m.group(2)))
        elif line == "}" and fn is not None:
            flush()
            fn = None
    return out


def _instruction_lines(path: Path, calls: list) -> tuple[list[tuple[int, str]], dict]:
    """(function ordinal, trace line) of each executed instruction, and the tool's text by pc."""
    trace = Trace("instructions")
    with Program(path, RunOptions(trace=trace)) as p:
        for function, args in calls:
            p.call(function, *args)
        module = p.module
    names = [function_name(module, i) for i in range(len(module.function_descriptors))]
    out = []
    for e in trace.events:
        if e["event"] == "instruction":
            m = _LINE.match(e["text"])
            assert m, e["text"]
            out.append((int(m.group(3)) if m.group(3) else names.index(m.group(2)), e["text"]))
    return out, _dump_by_pc(path)


def test_instruction_trace_is_iree_disassembly_with_values():
    host = HERE / "programs" / "host"
    runs = [_instruction_lines(tools.compile_with_flags(host / "vm_ops.vm.mlir", tools.VM_INPUT_FLAGS), _VM_OPS),
            _instruction_lines(tools.compile_with_flags(host / "calls.mlir", tools.HOST_FLAGS),
                               [("caller", (3, 1 << 33, 0.5, -2.25))]),
            _instruction_lines(tools.compile_with_flags(host / "globals.mlir", tools.HOST_FLAGS),
                               [("next", (2,)), ("next", (5,))])]
    lines = [line for run, _ in runs for _, line in run]
    assert len(lines) > 100
    mnemonics = set()
    for run, dump in runs:
        # IREE 3.13's disassembler reads vm.switch.ref without its type id (test_disassemble.py): its
        # text of a function is garbage from that op on, so the comparison stops there.
        garbled: dict[str, int] = {}
        for fn, line in run:
            m = _LINE.match(line)
            pc, body = int(m.group(4), 16), m.group(5)
            mnemonics.update(re.findall(r"vm\.[a-z_.0-9]+", body))
            if "= vm.switch.ref " in body:
                garbled.setdefault(fn, pc)
            if pc >= garbled.get(fn, pc + 1):
                continue
            assert _VALUE.sub(r"\1", body) == dump[fn, pc], line
    # every family ran: arithmetic, f32/f64 math, compares, casts, buffers, branches, switches,
    # refs, lists, calls, returns, globals, import.resolved
    for op in ("vm.abs.i32", "vm.xor.i64", "vm.atan.f32", "vm.cmp.lt.f64.u", "vm.buffer.store.f64",
               "vm.br_table", "vm.switch.f64", "vm.select.ref", "vm.list.set.f64", "vm.return",
               "vm.import.resolved", "vm.cond_br", "vm.call", "vm.global.load.i32",
               "vm.global.store.i32", "vm.global.load.ref", "vm.cast.si64.f64"):
        assert any(m.startswith(op) for m in mnemonics), op
    # the values, as disassembler.c prints them: i32 signed, i64 whole, f32 %.9g, f64 %.17g
    assert any("vm.abs.i32 %i0(-5)" in line for line in lines)
    assert any("vm.abs.i64 %i2:3(-1099511627776)" in line for line in lines)
    assert any(re.search(r"vm\.atan\.f32 %i\d+\(0\.5\)", line) for line in lines)
    assert any(re.search(r"vm\.cmp\.lt\.f64\.u %i\d+:\d+\(2\.5\), %i\d+:\d+\(-1\.5\)", line) for line in lines)
    # a return's list prints each register's low 32 bits unsigned (no widths in a list)
    returns = [line.partition("vm.return ")[2] for line in lines if "vm.return " in line]
    assert returns and not any(re.search(r"%i\d+\(-", r) for r in returns)
    assert any("(4294967291)" in r for r in returns)  # -5 in a list: its 32 bits unsigned



def test_calls_level_traces_invoke_calls_and_returns():
    path = tools.compile_with_flags(HERE / "programs" / "host" / "calls.mlir", tools.HOST_FLAGS)
    trace = Trace("calls")
    with Program(path, RunOptions(trace=trace)) as p:
        export = p.module.exported_functions[0].name
        chars = p.signature(export)[0]
        p.call(export, *[parse_input("3", c) for c in chars])
    kinds = [e["event"] for e in trace.events]
    assert kinds[0] == "invoke" and kinds[-1] == "invoked" and "call" in kinds and "return" in kinds
    calls = [e for e in trace.events if e["event"] == "call"]
    returns = [e for e in trace.events if e["event"] == "return"]
    assert len(returns) == len(calls) + 1  # every call returns, then the export itself
    assert not any(e["event"] == "instruction" for e in trace.events)


def test_trace_is_per_program():
    """Two programs, one traced: the other's calls reach no trace, and its modules' shims are
    unwrapped."""
    path = _add16_riscv32()
    trace = Trace("imports", out=io.StringIO())
    with Program(path, RunOptions(target="riscv32", trace=trace)) as traced, \
            Program(path, RunOptions(target="riscv32")) as plain:
        before = len(trace.events)  # the traced program's __init
        plain.call("add", *ADD16_INPUTS)
        assert len(trace.events) == before
        traced.call("add", *ADD16_INPUTS)
        assert len(trace.events) > before
        assert all(type(s).__name__ != "_TracedShim" for m in plain.runtime.modules.values()
                   for s in m.shims)
    assert "[import] hal_loader.executable.dispatch" in trace.out.getvalue()


def test_instructions_are_labelled_with_their_function():
    """Each instruction line names the function it belongs to, as the function table (and the JSON
    event) names it: add16's debug database lists only `__init`, at entry 0, so a label read from
    entry `ordinal` (IREE's trace) would call `add`'s instructions `__init`'s. The names are
    iree-dump-module's `vm.func @NAME`, in ordinal order."""
    path = tools.compile_mlir(HERE / "programs" / "add16.mlir", model="inline-dynamic")
    dumped = re.findall(r"^vm\.func @(\w+)\(", tools.dump_module(path), re.M)
    assert dumped == ["add", "__init"]
    trace = Trace("instructions")
    with Program(path, RunOptions(trace=trace)) as p:
        p.call("add", *ADD16_INPUTS)
    seen = set()
    for e in trace.events:
        if e["event"] == "instruction":
            m = _LINE.match(e["text"])
            assert m and m.group(2) == e["function"], e
            seen.add(m.group(2))
    assert seen == {"add", "__init"}


def test_human_trace_lines_fit_100_columns():
    """The text trace of a dispatch on riscv32 with the pre-fix shim (instruction lines with inline
    values, refs' words beside their bytes, MISREAD notes, a fault's status): every line within
    100 columns, and each wrapped instruction line, its breaks read as single spaces, is the
    JSON event's text (IREE's line, whole)."""
    path = _add16_riscv32()
    out = io.StringIO()
    trace = Trace("instructions", out=out)
    with Program(path, RunOptions(target="riscv32", legacy_loader=True, trace=trace)) as p:
        with pytest.raises(IreeFaultError):
            p.call("add", *ADD16_INPUTS)
    lines = out.getvalue().splitlines()
    assert max(len(line) for line in lines) <= WIDTH == 100
    assert any("MISREAD" in line for line in lines)
    wrapped = 0
    for e in trace.events:
        shown = format_event(e).splitlines()
        if e["event"] == "instruction":
            assert shown[0] + "".join(" " + c[8:] for c in shown[1:]) == e["text"]
            wrapped += len(shown) > 1
    assert wrapped and max(len(e["text"]) for e in trace.events if "text" in e) > WIDTH
