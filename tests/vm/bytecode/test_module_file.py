"""vm.bytecode.module_file against real iree-compile output, checked by iree-dump-module; plus fuzzing."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ireeabi.abi.cconv import parse
from ireeabi.modules.hal.runtime import HalRuntime
from ireeabi.vm.bytecode.module_errors import ModuleFileError
from ireeabi.vm.bytecode.module_file import ModuleFile, feature_names, read_module, rodata_bytes
from ireeabi.base.status import StatusCode

from support.iree_tools import compile_mlir, dump_module, run_module

PROGRAMS = Path(__file__).parents[2] / "programs"
MODELS = ("inline-dynamic", "inline-static")


@pytest.fixture(scope="session")
def vmfb_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("vmfb")


@pytest.fixture(scope="session", params=MODELS)
def add16(request, vmfb_dir) -> Path:
    return compile_mlir(PROGRAMS / "add16.mlir", vmfb_dir, model=request.param)


@pytest.fixture(scope="session")
def add16_dynamic(vmfb_dir) -> Path:
    return compile_mlir(PROGRAMS / "add16.mlir", vmfb_dir, model="inline-dynamic")


@pytest.fixture(scope="session")
def add16_static(vmfb_dir) -> Path:
    return compile_mlir(PROGRAMS / "add16.mlir", vmfb_dir, model="inline-static")


# --------------------------------------------------------------------------------------------------
# An independent reading of iree-dump-module's text output


def _split_top(text: str) -> list[str]:
    """Split a type list at commas outside <...>."""
    out, depth, cur = [], 0, ""
    for c in text:
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        if c == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += c
    if cur.strip():
        out.append(cur.strip())
    return out


_SCALAR = {"i32": "i", "i64": "I", "f32": "f", "f64": "F"}


def _type_char(t: str) -> str:
    if t in _SCALAR:
        return _SCALAR[t]
    if t.startswith("!"):  # !vm.ref<?>, !hal.buffer, ...
        return "r"
    if t.startswith("tuple<") and t.endswith(">..."):
        return "C" + "".join(_type_char(x) for x in _split_top(t[len("tuple<"):-len(">...")])) + "D"
    raise AssertionError(f"dump type {t!r} not understood")


def _cconv_from_types(args: str, results: str) -> str:
    a = "".join(_type_char(t) for t in _split_top(args)) or "v"
    r = "".join(_type_char(t) for t in _split_top(results)) or "v"
    return f"0{a}_{r}"


def _section(text: str, title: str) -> list[str]:
    """Indented lines following `title:` up to the next blank line."""
    lines = text.splitlines()
    i = lines.index(title + ":")
    out = []
    for line in lines[i + 1:]:
        if not line.strip():
            break
        out.append(line)
    return out


def parse_dump(text: str) -> dict:
    d: dict = {}
    m = re.search(r"^// @(\S+) : version (\d+)$", text, re.M)
    d["name"], d["version"] = m.group(1), int(m.group(2))
    d["types"] = [re.match(r"\s*\[\s*\d+\] (.*)$", l).group(1) for l in _section(text, "Required Types")]
    d["dependencies"] = [
        re.match(r"\s*(\S+), version >= (\d+), (\w+)$", l).groups()
        for l in _section(text, "Module Dependencies")] if "Module Dependencies:" in text else []
    # `vm.import @name cconv "..."` lines of the disassembly, in import order.
    d["imports"] = re.findall(r'^vm\.import @(\S+) cconv "([^"]*)"$', text, re.M)
    d["import_names"] = [re.match(r"\s*\[\s*\d+\] ([^(]+)\(", l).group(1)
                         for l in _section(text, "Imported Functions")] \
        if "Imported Functions:" in text else []
    exports = []
    for line in _section(text, "Exported Functions"):
        m = re.match(r"\s*\[\s*(\d+)\] ([^(]+)\((.*)\) -> \((.*)\)$", line)
        if m:
            exports.append({"name": m.group(2), "cconv": _cconv_from_types(m.group(3), m.group(4)),
                            "attrs": []})
        else:
            key, value = line.strip().split(": ", 1)
            exports[-1]["attrs"].append((key, value))
    d["exports"] = exports
    d["rodata"] = [
        (int(i), kind, int(size), int(off) if off else None)
        for i, kind, size, off in re.findall(
            r"^\s+\.rodata\[\s*(\d+)\] (embedded|external)\s+(\d+) bytes(?: \(offset (\d+) /)?",
            text, re.M)]
    d["rodata_hex"] = {int(i): bytes.fromhex(h) for i, h in re.findall(r"^vm\.rodata\[(\d+)\] = ([0-9A-F]*)$",
                                                                       text, re.M)}
    d["flatbuffer_bytes"] = int(re.search(r"^FlatBuffer: (\d+) bytes$", text, re.M).group(1))
    d["bytecode_bytes"] = int(re.search(r"^\s+Bytecode: (\d+) bytes$", text, re.M).group(1))
    d["functions"] = [
        tuple(int(x, 16) if k == 1 else int(x) for k, x in enumerate(row))
        for row in re.findall(r"^\s*(\d+) \| ([0-9A-F]{8}) \|\s+(\d+) \|\s+(\d+) \|\s+(\d+) \|\s+(\d+) \|",
                              text, re.M)]
    return d


@pytest.fixture(scope="session")
def dumped(add16):
    return read_module(add16), parse_dump(dump_module(add16)), add16


# --------------------------------------------------------------------------------------------------
# The reader agrees with iree-dump-module


def test_imports_match_dump(dumped):
    mod, dump, _ = dumped
    assert dump["imports"], "iree-dump-module listed no vm.import lines"
    assert [n for n, _ in dump["imports"]] == dump["import_names"]
    assert [(f.full_name, f.cconv) for f in mod.imported_functions] == dump["imports"]
    for f in mod.imported_functions:
        assert f.signature == parse(f.cconv)
        assert f.module in {d.name for d in mod.dependencies}


def test_exports_match_dump(dumped):
    mod, dump, _ = dumped
    assert [(f.name, f.cconv) for f in mod.exported_functions] == \
        [(e["name"], e["cconv"]) for e in dump["exports"]]
    assert [list(f.attrs) for f in mod.exported_functions] == [e["attrs"] for e in dump["exports"]]
    assert "add" in {f.name for f in mod.exported_functions}


def test_rodata_matches_dump(dumped):
    mod, dump, _ = dumped
    assert [(s.ordinal, s.kind, s.length) for s in mod.rodata_segments] == \
        [(i, kind, size) for i, kind, size, _ in dump["rodata"]]
    for s in mod.rodata_segments:
        if not s.embedded:
            assert s.external_data_offset == [o for i, _, _, o in dump["rodata"] if i == s.ordinal][0]
            assert s.offset == mod.external_rodata_offset + s.external_data_offset
        assert rodata_bytes(s) == dump["rodata_hex"][s.ordinal]


def test_metadata_matches_dump(dumped):
    mod, dump, _ = dumped
    assert (mod.name, mod.version) == (dump["name"], dump["version"])
    assert list(mod.types) == dump["types"]
    assert [(d.name, d.minimum_version, "required" if d.required else "optional")
            for d in mod.dependencies] == [(n, int(v), f) for n, v, f in dump["dependencies"]]
    assert mod.flatbuffer_length == dump["flatbuffer_bytes"]
    assert len(mod.bytecode) == dump["bytecode_bytes"]
    assert [(f.ordinal, f.bytecode_offset, f.bytecode_length, f.block_count, f.i32_register_count,
             f.ref_register_count) for f in mod.function_descriptors] == dump["functions"]


def test_types_resolve_against_the_callers_registry(add16):
    """The types table resolves against the ref types its caller's registry holds, as IREE's loader
    resolves it against its instance (module.c): the VM's builtin types alone leave the HAL's
    unresolved (NOT_FOUND, naming the first), the registry of a runtime that serves the module
    resolves them, and without a registry (iree-dump-module's reading) the table is only read."""
    mod = read_module(add16)
    hal = [t for t in mod.types if t.startswith("!hal.")]
    assert hal, mod.types  # the inline HAL's buffers and buffer views
    with HalRuntime() as runtime:
        names = runtime.types.names()
        assert {t[1:] for t in hal} <= names
        assert read_module(add16, ref_types=names) == mod
    with pytest.raises(ModuleFileError, match=re.escape(f"no type registered with name '{hal[0]}'")) \
            as info:
        read_module(add16, ref_types=())
    assert info.value.code == StatusCode.NOT_FOUND


# program -> (function, iree-run-module inputs, expected output line)
RUNS = {
    "add16": ("add", ["16xf32=1", "16xf32=2"], "16xf32=3 3 3 3 3 3 3 3 3 3 3 3 3 3 3 3"),
    "add1m": ("add", ["1048576xf32=1", "1048576xf32=2"], None),  # output is 1M numbers
    "push_constants": ("scale", ["4xf32=1,2,3,4", "2.5"], "4xf32=2.5 5 7.5 10"),
    "bindings": ("muladd", ["64xf32=2", "64xf32=3", "64xf32=1"], "64xf32=" + " ".join(["7"] * 64)),
}


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("program", sorted(RUNS))
def test_every_program_compiles_reads_and_runs(vmfb_dir, program, model):
    path = compile_mlir(PROGRAMS / f"{program}.mlir", vmfb_dir, model=model)
    mod = read_module(path)
    dump = parse_dump(dump_module(path, "--output=metadata"))
    assert [f.full_name for f in mod.imported_functions] == dump["import_names"]
    assert [(f.name, f.cconv) for f in mod.exported_functions] == \
        [(e["name"], e["cconv"]) for e in dump["exports"]]
    assert [(s.kind, s.length) for s in mod.rodata_segments] == [(k, n) for _, k, n, _ in dump["rodata"]]
    function, inputs, expected = RUNS[program]
    if expected is not None:
        assert expected in run_module(path, function, inputs).splitlines()


def test_everything_matches_flatbuffer_json(add16):
    """iree-dump-module --output=flatbuffer-json (flatcc's own reading) agrees field by field."""
    mod = read_module(add16)
    j = json.loads(dump_module(add16, "--output=flatbuffer-json"))
    assert mod.name == j["name"] and mod.version == j.get("version", 0)
    assert set(feature_names(mod.requirements)) == set(j.get("requirements", "").split()) - {""}
    assert [i.full_name for i in mod.imported_functions] == [i["full_name"] for i in j["imported_functions"]]
    assert [i.flags for i in mod.imported_functions] == \
        [1 if "flags" not in i else {"REQUIRED": 1, "OPTIONAL": 2}[i["flags"]] for i in j["imported_functions"]]
    assert [(e.name, e.internal_ordinal) for e in mod.exported_functions] == \
        [(e["local_name"], e.get("internal_ordinal", 0)) for e in j["exported_functions"]]
    assert [(s.cconv, [list(a) for a in s.attrs]) for s in mod.function_signatures] == \
        [(s.get("calling_convention"), [[a["key"], a["value"]] for a in s.get("attrs", [])])
         for s in j["function_signatures"]]
    for seg, js in zip(mod.rodata_segments, j["rodata_segments"], strict=True):
        if seg.embedded:
            assert list(rodata_bytes(seg)) == js["embedded_data"]
        else:
            assert (seg.external_data_offset, seg.external_data_length) == \
                (js.get("external_data_offset", 0), js.get("external_data_length", 0))
    state = j.get("module_state", {})
    assert (mod.global_bytes_capacity, mod.global_ref_count) == \
        (state.get("global_bytes_capacity", 0), state.get("global_ref_count", 0))
    fields = ("bytecode_offset", "bytecode_length", "reserved", "block_count", "i32_register_count",
              "ref_register_count")
    assert [[getattr(f, k) for k in fields] for f in mod.function_descriptors] == \
        [[d.get(k, 0) for k in fields] for d in j["function_descriptors"]]
    assert [set(feature_names(f.requirements)) for f in mod.function_descriptors] == \
        [set(d.get("requirements", "").split()) - {""} for d in j["function_descriptors"]]
    assert mod.bytecode_version == j["bytecode_version"]
    assert list(mod.bytecode) == j["bytecode_data"]


# --------------------------------------------------------------------------------------------------
# Framing and contents


def test_inline_dynamic_embeds_the_kernel_library(add16_dynamic):
    mod = read_module(add16_dynamic)
    assert mod.zip_header and mod.external_rodata_offset % 64 == 0
    assert [d.name for d in mod.dependencies] == ["hal_loader", "hal_inline"]
    external = [s for s in mod.rodata_segments if not s.embedded]
    assert len(external) == 1
    elf = rodata_bytes(external[0])
    assert elf[:4] == b"\x7fELF" and b"iree_hal_executable_library_query\0" in elf
    formats = {rodata_bytes(s) for s in mod.rodata_segments if s.embedded}
    assert any(f.startswith(b"embedded-elf-") for f in formats)  # the executable format string
    assert mod.imported("hal_loader.executable.dispatch").cconv == "0rIiiiCiDCrIID_v"
    data = add16_dynamic.read_bytes()
    for s in mod.rodata_segments:
        assert data[s.offset:s.offset + s.length] == rodata_bytes(s)
    for f in mod.function_descriptors:
        assert data[f.file_offset:f.file_offset + f.bytecode_length] == \
            mod.bytecode[f.bytecode_offset:f.bytecode_offset + f.bytecode_length]
    assert data[mod.bytecode_offset:mod.bytecode_offset + len(mod.bytecode)] == mod.bytecode


def test_inline_static_has_no_executables(add16_static):
    mod = read_module(add16_static)
    assert [d.name for d in mod.dependencies] == ["hal_inline"]
    assert all(f.module == "hal_inline" for f in mod.imported_functions)
    assert all(s.embedded for s in mod.rodata_segments)
    assert "EXT_F32" in feature_names(mod.requirements)  # the kernel runs as f32 VM bytecode


def test_unzipped_module_reads_the_same(vmfb_dir, add16_dynamic):
    plain = compile_mlir(PROGRAMS / "add16.mlir", vmfb_dir, model="inline-dynamic",
                         extra_flags=["--iree-vm-emit-polyglot-zip=false"])
    a, b = read_module(add16_dynamic), read_module(plain)
    assert not b.zip_header and b.flatbuffer_offset == 4
    assert a.imported_functions == b.imported_functions
    assert a.exported_functions == b.exported_functions
    assert [rodata_bytes(s) for s in a.rodata_segments] == [rodata_bytes(s) for s in b.rodata_segments]
    assert read_module(plain.read_bytes()) == b == read_module(str(plain))


# --------------------------------------------------------------------------------------------------
# Malformed input


def _check_outcome(data: bytes) -> ModuleFile | None:
    """Parse; only ModuleFileError may escape, never from the catch-all, with a sane offset."""
    try:
        mod = read_module(data)
    except ModuleFileError as e:
        assert not e.reason.startswith("unreadable module"), f"unguarded read: {e!r} from {e.__cause__!r}"
        assert isinstance(e.offset, int) and 0 <= e.offset <= len(data), e
        return None
    for s in mod.rodata_segments:
        assert 0 <= s.offset and s.offset + s.length <= len(data)
        assert len(rodata_bytes(s)) == s.length
    for f in mod.function_descriptors:
        assert 0 <= f.bytecode_offset and f.bytecode_offset + f.bytecode_length <= len(mod.bytecode)
    return mod


@pytest.mark.parametrize("model", MODELS)
def test_every_truncation(vmfb_dir, model):
    """Cutting anywhere before the end of the last rodata segment is an error; after it, no change."""
    path = compile_mlir(PROGRAMS / "add16.mlir", vmfb_dir, model=model)
    data = path.read_bytes()
    full = read_module(data)
    needed = max([full.flatbuffer_offset + full.flatbuffer_length]
                 + [s.offset + s.length for s in full.rodata_segments if not s.embedded])
    for n in range(len(data)):
        mod = _check_outcome(data[:n])
        if n < needed:
            assert mod is None, f"truncated to {n} of {needed} needed bytes yet parsed"
        else:
            assert mod.imported_functions == full.imported_functions
            assert [rodata_bytes(s) for s in mod.rodata_segments] == \
                [rodata_bytes(s) for s in full.rodata_segments]


_FUZZ = settings(max_examples=300, derandomize=True, deadline=None,
                 suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@st.composite
def _mutations(draw, size: int):
    """Up to 8 overwrites of 1, 2 or 4 bytes (offsets are 4 bytes: whole-word hits matter)."""
    edits = draw(st.lists(st.tuples(st.integers(0, size - 1), st.sampled_from([1, 2, 4]),
                                    st.integers(0, 2**32 - 1)), min_size=1, max_size=8))
    cut = draw(st.one_of(st.none(), st.integers(0, size)))
    return edits, cut


def _apply(data: bytes, edits, cut) -> bytes:
    b = bytearray(data)
    for pos, width, value in edits:
        chunk = value.to_bytes(4, "little")[:width]
        b[pos:pos + width] = chunk[:max(0, len(b) - pos)]
    return bytes(b if cut is None else b[:cut])


@pytest.mark.parametrize("model", MODELS)
def test_fuzz_mutations(vmfb_dir, model):
    data = compile_mlir(PROGRAMS / "add16.mlir", vmfb_dir, model=model).read_bytes()
    region = read_module(data).external_rodata_offset  # mutate the archive header and FlatBuffer

    @_FUZZ
    @given(_mutations(region))
    def run(mutation):
        _check_outcome(_apply(data, *mutation))

    run()


def test_malformed_inputs_name_what_was_read(tmp_path):
    cases = {
        b"": "module header",
        b"PK\x03\x04" + bytes(22) + b"\xff\xff\x00\x00": "zip local file header",
        (100).to_bytes(4, "little") + bytes(20): "size prefix",
        (20).to_bytes(4, "little") + (12).to_bytes(4, "little") + b"NOPE" + bytes(12): "identifier",
        (20).to_bytes(4, "little") + (200).to_bytes(4, "little") + b"IREE" + bytes(12): "BytecodeModuleDef",
    }
    for blob, what in cases.items():
        with pytest.raises(ModuleFileError, match=what) as info:
            read_module(blob)
        assert isinstance(info.value.offset, int)
    with pytest.raises(ModuleFileError, match="cannot read"):
        read_module(tmp_path / "missing.vmfb")


def test_a_module_is_read_once_per_bytes_and_its_functions_verified_once(add16_dynamic, monkeypatch):
    """read_module's memo: the same bytes give the same ModuleFile (so a second Program of them
    decodes and verifies no function again, and prints what iree-run-module prints); other bytes,
    or other ref types, another read; the memo stays within its bounds."""
    import numpy as np
    from ireeabi.tooling.program import Program
    from ireeabi.vm.bytecode import module as context_module
    from ireeabi.vm.bytecode import module_file as mf
    data = add16_dynamic.read_bytes()
    mf.clear_read_memo()
    first = read_module(data)
    assert read_module(bytearray(data)) is first
    from ireeabi.modules.hal.runtime import run_module_type_names
    typed = read_module(data, ref_types=run_module_type_names())
    assert typed is not first and read_module(data, ref_types=list(run_module_type_names())) is typed
    prepared = []
    real = context_module.Context._prepare
    monkeypatch.setattr(context_module.Context, "_prepare",
                        lambda self, *a: prepared.append(a) or real(self, *a))
    outputs = []
    for _ in range(3):
        with Program(data) as prog:
            outputs.append(prog.call("add", np.ones(16, np.float32), np.arange(16, dtype=np.float32)))
    functions = len(first.function_descriptors)
    assert len(prepared) == functions  # the first Program's; none for the next two
    assert all(np.array_equal(o, np.arange(1, 17, dtype=np.float32)) for o in outputs)
    assert run_module(add16_dynamic, "add", ["16xf32=1", "16xf32=" + ",".join(map(str, range(16)))]) \
        .endswith("16xf32=1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n")
    for i in range(mf.READ_MEMO_ENTRIES + 8):  # distinct bytes (a trailing byte the reader ignores)
        read_module(data + bytes([i % 256]) * (1 + i // 256))
    assert len(mf._READ) <= mf.READ_MEMO_ENTRIES and read_module(data) is not first
