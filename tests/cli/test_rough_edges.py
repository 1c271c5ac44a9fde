"""Rough edges of the command line (issue 31, item 4), one test each:

(a) `--target` takes the triples iree-compile takes (the architecture field picks the data model;
    clang, given the same triple, lays out the scalars as that data model does), `ireeabi targets`
    says which architecture maps to which model, and a wrong name gets a suggestion;
(b) `--native-module mystats` finds ./mystats.py as `python -m` would, from the installed script;
(c) `ireeabi --help` describes `run` for every execution model, not "inline" modules only;
(d) `--spans -1,3` gets a worded error saying how to pass a value that starts with '-';
(e) `--legacy-loader` on a module that never calls hal_loader's dispatch is refused by name;
(f) a default-model llvm-cpu module on another target: the hint without the compiler's dump of its
    executable targets' configuration.
"""
from __future__ import annotations

import dataclasses
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support import iree_tools as tools
from ireeabi.abi import targets
from ireeabi.abi.errors import IreeAbiError
from ireeabi.abi.oracles import measure_scalars_libclang
from ireeabi.cli.main import main
from ireeabi.layouts import hal_module_dispatch as HMD
from ireeabi.tooling.execution_model import MODEL_FLAGS
from ireeabi.tooling.program import Program, RunOptions, short_device_targets
from ireeabi.base.machine import host as host_machine

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = main(list(argv), stdout=out, stderr=err)
    return rc, out.getvalue(), " ".join(err.getvalue().split())


# -- (a) triples ------------------------------------------------------------------------------------

TRIPLES = [("riscv32-pc-linux-elf", "riscv32"), ("x86_64-unknown-linux-gnu", "x86_64"),
           ("aarch64-linux-gnu", "aarch64"), ("armv7a-pc-linux-elf", "armv7"),
           ("i686-pc-linux-elf", "i386"), ("wasm32-unknown-unknown", "wasm32"),
           ("riscv64-unknown-linux-gnu", "riscv64"), ("arm-linux-gnueabihf", "armv7"),
           ("thumbv7m-none-eabi", "armv7"), ("x86_64-apple-macosx", "x86_64"),
           ("riscv32-unknown-elf", "riscv32"), ("wasm32-unknown-wasi", "wasm32")]
SCALARS = ["void*", "long", "long long", "double", "long double", "size_t", "int64_t"]


@pytest.mark.parametrize("triple,name", TRIPLES)
def test_a_triple_names_the_data_model_clang_gives_it(triple, name):
    """The data model a triple maps to is the one clang lays out for that very triple (size,
    member alignment and GNU __alignof__ of every scalar the layouts depend on)."""
    t = targets.get(triple)
    assert t.name == name and targets.get(triple.upper()) is t
    measured = measure_scalars_libclang(dataclasses.replace(t, triple=triple), SCALARS)
    for c_type in SCALARS:
        info = t.scalar(c_type)
        assert measured[c_type] == (info.size, info.align, info.preferred_align), (triple, c_type)


def test_every_command_takes_iree_compiles_triples():
    for triple, name in TRIPLES[:6]:
        for argv in (["layout", "iree_vm_ref_t"], ["check", "0rIiiiCiDCrIID_v"]):
            assert cli(*argv, "--target", triple) == cli(*argv, "--target", name), (triple, argv)


def test_targets_says_which_architecture_maps_to_which_model(capsys):
    rc, out, _ = cli("targets")
    text = " ".join(out.split())
    assert rc == 0 and "any triple iree-compile takes" in text
    for arch, name in [("riscv32", "riscv32"), ("i686", "i386"), ("arm64", "aarch64"),
                       ("armv5..armv8*", "armv7"), ("amd64", "x86_64")]:
        assert arch in text.split(f" -> {name}")[0].rsplit(";", 1)[-1], (arch, name)
    rc, out, _ = cli("targets", "--json")
    d = {x["name"]: x for x in json.loads(out)}
    for triple, name in TRIPLES:
        arch = triple.split("-")[0]
        listed = d[name]["triple_arches"]
        assert arch in listed or (name == "armv7" and arch.startswith(("arm", "thumb"))), triple
    rc, out, _ = cli("--help")  # argparse prints help on sys.stdout
    assert rc == 0 and "any triple iree-compile takes" in " ".join((out + capsys.readouterr().out).split())


@pytest.mark.parametrize("wrong,suggested", [("riscv-unknown-elf", "riscv32"), ("x86-64", "x86_64"),
                                             ("riscv", "riscv32"), ("aarch46-linux-gnu", "aarch64")])
def test_a_wrong_name_gets_a_suggestion(wrong, suggested):
    rc, out, err = cli("layout", "iree_vm_ref_t", "--target", wrong)
    assert rc == 2 and not out and "Traceback" not in err
    assert f"unknown target '{wrong}'" in err
    assert suggested in err.split("closest:")[1].split(";")[0], err


def test_big_endian_and_unmodelled_architectures_are_named():
    for triple, why in [("armeb-linux-gnueabi", "is big-endian"), ("aarch64_be-linux-gnu", "is big-endian"),
                        ("mips64el-linux-gnuabi64", "is not one of the modelled data models")]:
        with pytest.raises(targets.TripleError) as info:
            targets.get(triple)
        assert f"its architecture '{triple.split('-')[0]}' {why}" in str(info.value)
        rc, _, err = cli("layout", "iree_vm_ref_t", "--target", triple)
        assert rc == 2 and why in err


@pytest.mark.parametrize("triple,model,differs", [
    ("arm64-apple-macosx", "aarch64", "long double"), ("aarch64-apple-ios", "aarch64", "long double"),
    ("x86_64-pc-windows-msvc", "x86_64", "long"), ("i686-pc-windows-msvc", "i386", "long double")])
def test_systems_that_lay_out_c_otherwise_are_refused(triple, model, differs):
    """Apple's arm64 and Windows lay out C otherwise than the architecture's data model (clang on
    the same triple shows the scalar that differs): refused by name, never mapped silently."""
    t = targets.get(model)
    measured = measure_scalars_libclang(dataclasses.replace(t, triple=triple), [differs])
    info = t.scalar(differs)
    assert measured[differs] != (info.size, info.align, info.preferred_align)
    with pytest.raises(targets.TripleError, match="its system .* lays out C for"):
        targets.get(triple)


# -- (b) --native-module from the current directory --------------------------------------------------

def test_native_module_in_the_current_directory(tmp_path):
    """The installed `ireeabi` script (its own directory first on sys.path, not the current one)
    finds ./mystats.py as `python -m` would; the module serves the program's mymod imports."""
    own = Path(__file__).resolve().parents[1] / "support" / "own_native_module.py"  # the tests' own mymod
    (tmp_path / "mystats.py").write_text(own.read_text())
    path = tools.compile_mlir(PROGRAMS / "native" / "own_module.mlir", tools.session_dir(),
                              "inline-static")
    script = Path(sys.executable).parent / "ireeabi"
    argv = [str(script), "run", str(path), "--function", "scale", "--input=2x3xf32=1 2 3 4 5 6"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(argv + ["--native-module", "mystats"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    # 2.5 times the input (mystats' scale by the program's constant 2.5)
    assert proc.stdout == "EXEC @scale\nresult[0]: hal.buffer_view\n2x3xf32=[2.5 5 7.5][10 12.5 15]\n"
    elsewhere = subprocess.run(argv + ["--native-module", "mystats"], cwd=PROGRAMS, env=env,
                               capture_output=True, text=True, timeout=600)
    assert elsewhere.returncode == 1 and "cannot import mystats" in elsewhere.stderr
    assert "mystats" not in " ".join(sys.path)  # nothing left on this process's path


# -- (c) --help ----------------------------------------------------------------------------------------

def test_help_describes_run_for_every_model(capsys):
    rc, out, _ = cli("--help")
    out += capsys.readouterr().out  # argparse prints help on sys.stdout
    run_line = next(line for line in out.splitlines() if line.strip().startswith("run "))
    assert rc == 0 and "inline" not in run_line and "compiled module" in run_line
    rc, out, _ = cli("run", "--help")
    text = " ".join((out + capsys.readouterr().out).split())
    assert "async-external" in text and "default execution model" in text and "host-only" in text


# -- (d) --spans with a value that starts with '-' ----------------------------------------------------

@pytest.mark.parametrize("command", [["layout", "rIiiiCiDCrIID"], ["check", "0rIiiiCiDCrIID_v"]])
def test_a_dash_value_of_spans_is_explained(command, capsys):
    rc, out, err = cli(*command, "--spans", "-1,3")
    err += " ".join(capsys.readouterr().err.split())  # argparse writes to sys.stderr
    assert rc == 2 and "write it in one word: --spans=-1,3" in err
    assert "expected one argument" not in err
    rc, out, err = cli(*command, "--spans=-1,3")
    assert rc == 2 and "--spans '-1,3': '-1' is outside 0..65535" in err
    assert cli(*command, "--spans=4,3")[0] in (0, 1)


# -- (e) --legacy-loader where there is no hal_loader dispatch -----------------------------------------

@pytest.mark.parametrize("model", ["vmvx", "llvm-cpu", "async-external-vmvx", "inline-static"])
def test_legacy_loader_is_refused_where_it_switches_nothing(model):
    """The full `hal` module's dispatch shims read with the same (sizeof) reader before and after
    IREE #24827 (layouts.hal_module_dispatch.IREE_FORM), so a default-model module has no pre-fix
    mode: refused with the reason, never run as if the flag applied; so is an inline-static module
    (no hal_loader at all)."""
    assert HMD.IREE_FORM == "pre-fix"
    path = tools.compile_with_flags(PROGRAMS / "add16.mlir", MODEL_FLAGS[model])
    argv = ["run", str(path), "--function", "add", "--input=16xf32=1", "--input=16xf32=2"]
    assert cli(*argv)[0] == 0
    rc, out, err = cli(*argv, "--legacy-loader")
    assert rc == 1 and not out
    assert "--legacy-loader switches hal_loader's pre-fix dispatch shim (IREE #24827)" in err
    if model == "inline-static":
        assert "never calls hal_loader.executable.dispatch" in err
    else:
        assert "whose shim #24827 left as it was" in err
        with pytest.raises(IreeAbiError, match="no pre-fix mode to run"):
            Program(path, RunOptions(legacy_loader=True))


# -- (f) a short message for llvm-cpu kernels on another target --------------------------------------

def test_foreign_llvm_cpu_kernels_get_a_short_message():
    path = tools.compile_with_flags(PROGRAMS / "add16.mlir", MODEL_FLAGS["llvm-cpu"])
    dump = tools.dump_module(path)
    assert "#hal.device.target<" in dump and "data_layout" in dump  # the compiler's full text
    other = "riscv32" if host_machine().name != "riscv32" else "x86_64"
    rc, out, err = cli("run", str(path), "--function", "add", "--input=16xf32=1",
                       "--input=16xf32=2", "--target", other)
    assert rc == 1
    assert "INCOMPATIBLE; HAL device `__device_0` not found or unavailable" in err
    fmt = f"embedded-elf-{host_machine().name}"
    assert f'#hal.device.target<"local", [llvm-cpu {fmt}]>' in err
    assert f"it runs with --target {host_machine().name} (the host)" in err
    assert f"rebuild it for {other} with `ireeabi compile SOURCE.mlir --target {other} " in err
    assert "data_layout" not in err and "cpu_features" not in err and len(err) < 400, len(err)


def test_short_device_targets():
    text = ('HAL device `d` not found: #hal.device.target<"local", [#hal.executable.target<"llvm-cpu", '
            '"embedded-elf-x86_64", {cpu = "generic", data_layout = "e-m:e-p<x>", n = 16 : i64}>, '
            '#hal.executable.target<"vmvx", "vmvx-bytecode-fb">]> (in __init at pc 0x1)')
    assert short_device_targets(text) == ('HAL device `d` not found: #hal.device.target<"local", '
                                          '[llvm-cpu embedded-elf-x86_64, vmvx vmvx-bytecode-fb]> '
                                          '(in __init at pc 0x1)')
    unbalanced = "x #hal.device.target<\"local\", [#hal.executable.target<"
    assert short_device_targets(unbalanced) == unbalanced


def test_an_input_larger_than_half_the_available_memory_is_refused_before_it_is_filled(tmp_path, monkeypatch):
    """A parsed input is held twice (its array, then its heap buffer): past half the memory the
    host has available, `run` refuses it with RESOURCE_EXHAUSTED instead of filling gigabytes that
    the OOM killer would end (iree-run-module holds it once: 16 GiB here would still fit it)."""
    from ireeabi.cli import cmd_run
    monkeypatch.setattr(cmd_run, "available_memory", lambda: 1 << 30)  # 1 GiB available
    path = tools.compile_mlir(PROGRAMS / "add16.mlir", tools.session_dir(), "inline-static")
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", str(path), "--function", "add", "--input=4294967296xf32=1", "--input=16xf32=2"],
                stdout=out, stderr=err)
    assert code == 1 and "RESOURCE_EXHAUSTED; 17179869184 bytes requested with 536870912 available" in err.getvalue()
    out = io.StringIO()
    assert main(["run", str(path), "--function", "add", "--input=16xf32=1", "--input=16xf32=2"],
                stdout=out, stderr=err) == 0
    assert out.getvalue().endswith("16xf32=3 3 3 3 3 3 3 3 3 3 3 3 3 3 3 3\n")


@pytest.mark.parametrize("name,closest", [("mips", None), ("riscv", "riscv64, riscv32")])
def test_run_names_an_unknown_target_as_layout_does(name, closest):
    """`run --target` and `layout --target` say the same of a name that is no data model (the
    closest ones where there are any, every valid one); `run` exits 1 as iree-run-module exits on
    a flag it refuses (the oracle: its exit for an unknown device), `layout` 2 (bad input)."""
    real = tools.run_tool([tools.find_tool("iree-run-module"), f"--device={name}://"])
    module = tools.compile_mlir(Path(__file__).parents[1] / "programs" / "add16.mlir",
                                     model="inline-static")
    rc_run, _, err_run = cli("run", str(module), f"--target={name}")
    rc_layout, _, err_layout = cli("layout", "iree_vm_ref_t", "--target", name)
    assert (rc_run, rc_layout) == (real.returncode, 2) == (1, 2)
    assert " ".join(err_run.split()) == " ".join(err_layout.split())
    text = " ".join(err_run.split())
    assert f"unknown target '{name}'" in text and "valid: aarch64, armv7, i386" in text
    assert (f"closest: {closest};" in text) if closest else "closest" not in text
