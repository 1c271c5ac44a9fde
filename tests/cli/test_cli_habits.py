"""CLI habits a user expects: `--version`, `--help` explaining calling conventions, and target names
given as names, triples or aliases wherever a target is named (one resolver: `targets.get`).

The meaning of each cconv character in `--help` is checked against iree-compile's output: the
cconv it writes for a function (iree-dump-module's flatbuffer JSON) against the typed signature
iree-dump-module prints for it.
"""
from __future__ import annotations

import importlib.metadata
import json
import re
from pathlib import Path

import pytest

from support import iree_tools
from ireeabi.abi import cconv, targets
from ireeabi.cli.main import main
from ireeabi.tooling import Program, RunOptions
from ireeabi.base import machine

ROOT = Path(__file__).parents[1]


def run(capsys, *args):
    rc = main(list(args))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def test_version(capsys):
    rc, out, err = run(capsys, "--version")
    assert (rc, out, err) == (0, f"ireeabi {importlib.metadata.version('ireeabi')}\n", "")


def _help_meanings(text: str) -> dict[str, str]:
    """{character: what --help says it is} from the help's calling-convention section."""
    section = text[text.index("calling conventions (CCONV)"):]
    kinds_line = next(l for l in section.splitlines() if l.strip().startswith("i I f F r"))
    chars = kinds_line.split()[:5]
    types = re.search(r"one value each: ([^(;]+)", kinds_line).group(1).split(", ")
    return dict(zip(chars, (t.strip() for t in types)))


DUMP_TYPES = {"i32": "i32", "i64": "i64", "f32": "f32", "f64": "f64", "!vm.ref<?>": "ref"}


def test_help_explains_cconv_characters_as_iree_compile_writes_them(capsys, tmp_path):
    rc, out, _ = run(capsys, "--help")
    assert rc == 0
    meanings = _help_meanings(out)
    assert meanings == {"i": "i32", "I": "i64", "f": "f32", "F": "f64", "r": "ref"}
    section = out[out.index("calling conventions (CCONV)"):]
    for char, words in [("0", "version prefix"), ("C...D", "a span: a count"), ("v", "no values"),
                        ("_", "ends the arguments; the results follow")]:
        assert re.search(rf"^  {re.escape(char)} +{words}", section, re.M), char

    # The oracle: a function of every kind, and one of none, compiled by iree-compile.
    src = tmp_path / "kinds.mlir"
    src.write_text(
        "func.func @kinds(%a: i32, %b: i64, %c: f32, %d: f64, %e: !util.buffer) -> "
        "(i32, i64, f32, f64, !util.buffer) {\n"
        "  return %a, %b, %c, %d, %e : i32, i64, f32, f64, !util.buffer\n}\n"
        "func.func @nothing() {\n  return\n}\n")
    vmfb = iree_tools.compile_with_flags(src, iree_tools.HOST_FLAGS)
    fb = json.loads(iree_tools.dump_module(vmfb, "--output=flatbuffer-json"))
    names = [e["local_name"] for e in fb["exported_functions"]]
    cconvs = dict(zip(names, (s["calling_convention"] for s in fb["function_signatures"])))
    meta = iree_tools.dump_module(vmfb, "--output=metadata")
    sig = re.search(r"\] kinds\(([^)]*)\) -> \(([^)]*)\)", meta)
    arg_types = [DUMP_TYPES[t.strip()] for t in sig.group(1).split(",")]
    res_types = [DUMP_TYPES[t.strip()] for t in sig.group(2).split(",")]
    version, rest = cconvs["kinds"][0], cconvs["kinds"][1:]
    args, results = rest.split("_")
    assert version == "0"
    assert [meanings[c] for c in args] == arg_types
    assert [meanings[c] for c in results] == res_types
    assert cconvs["nothing"] == "0v_v"  # `v`: a side with no values, `_` between the sides

    # The example: hal_loader's dispatch as an inline-dynamic module imports it, spans and all.
    add16 = iree_tools.compile_mlir(ROOT / "programs" / "add16.mlir", model="inline-dynamic")
    assert 'vm.import @hal_loader.executable.dispatch cconv "0rIiiiCiDCrIID_v"' in \
        iree_tools.dump_module(add16)
    assert "0rIiiiCiDCrIID_v is hal_loader's executable.dispatch" in section


@pytest.mark.parametrize("name", targets.names())
def test_triples_name_their_target(name):
    t = targets.get(name)
    assert targets.get(t.triple) is t
    assert targets.get(t.triple.upper()) is t


@pytest.mark.parametrize("alias,name", [("amd64", "x86_64"), ("arm64", "aarch64"), ("x86", "i386"),
                                        ("wasm", "wasm32"), ("i686", "i386"), ("armv7l", "armv7")])
def test_aliases(alias, name):
    assert targets.get(alias) is targets.get(name)
    assert machine.machine(alias) is machine.machine(name)


def test_targets_lists_the_aliases(capsys):
    rc, out, _ = run(capsys, "targets", "--json")
    assert rc == 0
    d = {x["name"]: x for x in json.loads(out)}
    assert d["x86_64"]["aliases"] == ["amd64", "x64"]
    assert d["wasm32"]["aliases"] == ["wasm"]
    for x in d.values():
        for spelling in [x["triple"], *x["aliases"]]:
            assert targets.get(spelling).name == x["name"]
    rc, out, _ = run(capsys, "targets")
    assert "--target takes a name, its triple or an alias: amd64 x64 (x86_64); arm64 (aarch64)" in out


def test_every_command_takes_a_triple_or_alias(capsys, tmp_path):
    for spelling, name in [("riscv32-unknown-elf", "riscv32"), ("arm64", "aarch64"), ("x86", "i386"),
                           ("wasm", "wasm32"), ("AMD64", "x86_64")]:
        for argv in (["layout", "iree_vm_buffer_t"], ["layout", "0rIiiiCiDCrIID_v", "--spans", "4,3"],
                     ["check", "0rIiiiCiDCrIID_v"], ["layout", "iree_vm_buffer_t", "--json"]):
            got = run(capsys, *argv, "--target", spelling)
            assert got == run(capsys, *argv, "--target", name), (argv, spelling)
            assert got[0] in (0, 1)
    add16 = iree_tools.compile_mlir(ROOT / "programs" / "add16.mlir", model="inline-static")
    assert run(capsys, "inspect", str(add16), "--target", "wasm") == \
        run(capsys, "inspect", str(add16), "--target", "wasm32")
    inputs = ["--function", "add", "--input=16xf32=1", "--input=16xf32=2"]
    rc, out, err = run(capsys, "run", str(add16), "--target", "riscv32-unknown-elf", *inputs)
    assert (rc, err) == (0, "")
    assert (rc, out, err) == run(capsys, "run", str(add16), "--target", "riscv32", *inputs)
    prog = Program(add16, RunOptions(target="arm64"))
    try:
        assert prog.machine.name == "aarch64"
    finally:
        prog.close()


def test_unknown_target_still_names_the_closest(capsys):
    rc, _, err = run(capsys, "layout", "iree_vm_buffer_t", "--target", "riscv")
    assert rc == 2
    assert "unknown target 'riscv'" in err
    assert "closest: riscv64, riscv32" in err
