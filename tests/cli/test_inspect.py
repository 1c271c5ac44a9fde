"""`ireeabi inspect` and the import checker on real modules from iree-compile."""
import json
import re
from pathlib import Path

import pytest

from support import iree_tools
from ireeabi.abi import cconv
from ireeabi.cli.main import main
from ireeabi.tooling.program import Program
from ireeabi.tooling.execution_model import INLINE_MODELS, MODEL_FLAGS, ExecutionModelError, require_inline
from ireeabi.layouts import hal_loader, modules
from ireeabi.layouts.hal_inline import ModuleExport
from ireeabi.vm.bytecode import import_check as imports
from ireeabi.vm.bytecode import module_file as mf
from ireeabi.vm.bytecode.archive import describe_content
from ireeabi.vm.bytecode.module_errors import ModuleFileError, NotAModuleError

PROGRAMS = Path(__file__).parents[1] / "programs"


@pytest.fixture(scope="module")
def add16():
    return iree_tools.compile_mlir(PROGRAMS / "add16.mlir")


def test_check_imports_all_compatible_on_host(add16, capsys):
    assert main(["inspect", str(add16), "--check-imports"]) == 0
    out = capsys.readouterr().out
    assert "all compatible" in out
    m = mf.read_module(add16)
    reports = imports.check_imports(m, modules.registered(), "x86_64")
    assert len(reports) == len(m.imported_functions) == 9
    assert all(r.compatible and r.status == "ok" for r in reports)
    assert all(len(line) <= 100 for line in out.splitlines())


def test_check_imports_json(add16, capsys):
    assert main(["inspect", str(add16), "--check-imports", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    names = [i["name"] for i in d["imports"]]
    m = mf.read_module(add16)
    assert names == [f.full_name for f in m.imported_functions]
    assert d["compatible"] is True and len(d["import_check"]) == 9
    dispatch = next(r for r in d["import_check"] if r["name"].endswith("executable.dispatch"))
    assert [n["rule"] for n in dispatch["notes"]] == ["fixed-struct-sizeof"]


def test_i386_generic_shims_disagree(add16, capsys):
    # The VM aligns i64 to 8 while i386 C structs align it to 4: hal_inline's iI/rIIiiCID shims
    # would reject the VM's buffers there.
    assert main(["inspect", str(add16), "--check-imports", "--target", "i386"]) == 1
    bad = [r for r in imports.check_imports(mf.read_module(add16), modules.registered(), "i386")
           if not r.compatible]
    assert {r.full_name for r in bad} >= {"hal_inline.buffer.allocate", "hal_inline.buffer_view.create"}
    assert all(r.status == "ok" for r in bad)


def test_mismatch_missing_and_version(add16):
    m = mf.read_module(add16)
    loader = modules.get("hal_loader")
    changed = tuple(ModuleExport(e.name, "0rr_i", e.shim) if e.name == "executable.lookup.function" else e
                    for e in loader.exports if e.name != "executable.load")
    fake = modules.ModuleDescriptor("hal_loader", loader.version, changed)
    inline = modules.get("hal_inline")
    by = {r.full_name: r for r in imports.check_imports(m, [inline, fake])}
    assert by["hal_loader.executable.load"].status == "missing"
    assert by["hal_loader.executable.lookup.function"].status == "mismatch"
    old = modules.ModuleDescriptor("hal_loader", 0, loader.exports)
    by = {r.full_name: r for r in imports.check_imports(m, [inline, old])}
    assert by["hal_loader.executable.dispatch"].status == "version"
    by = {r.full_name: r for r in imports.check_imports(m, [inline])}
    assert by["hal_loader.executable.dispatch"].status == "no-module"
    assert hal_loader.IREE_HAL_LOADER_MODULE_VERSION_LATEST == loader.version


def test_bad_module_file_is_exit_2(tmp_path, capsys):
    p = tmp_path / "x.vmfb"
    p.write_bytes(b"\0" * 10)
    assert main(["inspect", str(p)]) == 2
    assert "ireeabi: error" in capsys.readouterr().err
    assert main(["inspect", str(tmp_path / "missing.vmfb")]) == 2


# --------------------------------------------------------------------------------------------------
# JSON sizes are numbers


def test_json_sizes_are_numbers(add16, capsys):
    assert main(["inspect", str(add16), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    m = mf.read_module(add16)
    for entry, f in zip(d["imports"], m.imported_functions):
        for side, frag in (("argument", f.signature.arguments), ("result", f.signature.results)):
            base, elems = entry[f"{side}_bytes"], entry[f"{side}_span_element_bytes"]
            assert type(base) is int and all(type(e) is int for e in elems)
            n = len(frag.spans)
            assert base == cconv.vm_size(frag, "x86_64", (0,) * n)  # what the VM allocates
            assert len(elems) == n
            for k in range(n):  # an element's bytes: the stride between consecutive elements
                lay = cconv.layout(frag, "x86_64", tuple(2 if j == k else 0 for j in range(n)))
                starts = [min(v.offset for v in lay.values if v.span == k and v.element == e)
                          for e in (0, 1)]
                assert starts[1] - starts[0] == elems[k], (f.full_name, k)
    dispatch = next(x for x in d["imports"] if x["name"] == "hal_loader.executable.dispatch")
    assert (dispatch["argument_bytes"], dispatch["argument_span_element_bytes"]) == (48, [4, 32])
    assert (dispatch["result_bytes"], dispatch["result_span_element_bytes"]) == (0, [])


def test_text_sizes_name_the_element_bytes(add16, capsys):
    assert main(["inspect", str(add16)]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "hal_loader.executable.dispatch " in line)
    assert row.split()[-2:] == ["48+4n+32m", "0"]
    assert all(len(line) <= 100 for line in out.splitlines())


# --------------------------------------------------------------------------------------------------
# Files that are no module


def _not_modules(tmp_path):
    import numpy as np

    mlir = tmp_path / "add16.mlir"
    mlir.write_text((PROGRAMS / "add16.mlir").read_text())
    npy = tmp_path / "x.npy"
    np.save(npy, np.arange(64, dtype=np.float32))
    empty = tmp_path / "empty.vmfb"
    empty.write_bytes(b"")
    noise = tmp_path / "noise.vmfb"
    noise.write_bytes(bytes((i * 197 + 11) % 256 for i in range(4096)))
    notes = tmp_path / "notes.txt"  # prose that names a module and a percentage is no MLIR
    notes.write_text("hello world\nthe module runs 50% faster, module by module\n")
    vm = tmp_path / "ops.mlir"  # MLIR without func.func: VM ops, an SSA value assigned
    vm.write_text("vm.module @m {\n  vm.func @f() {\n    %c1 = vm.const.i32 1\n  }\n}\n")
    return {mlir: "MLIR text (first line '//", npy: "a NumPy .npy array", empty: "is empty",
            noise: "binary data starting 0b d0 95", notes: "plain text (first line 'hello world')",
            vm: "MLIR text (first line 'vm.module @m {')"}


def test_not_a_vmfb_module(tmp_path, capsys):
    from ireeabi.tooling import Program

    for path, looks in _not_modules(tmp_path).items():
        # the oracle: iree-run-module refuses the file too
        proc = iree_tools.run_module_failure([path], "add", [])
        assert proc.returncode != 0
        for command, code in (("inspect", 2), ("run", 1)):
            assert main([command, str(path)]) == code
            err = capsys.readouterr().err
            assert err.startswith("ireeabi: error: not a .vmfb module: the file ")
            assert looks in " ".join(err.split()), (command, path.name, err)
            assert "Traceback" not in err
        with pytest.raises(NotAModuleError, match="^not a .vmfb module") as info:
            mf.read_module(path)
        assert info.value.looks_like == describe_content(path.read_bytes())
        with pytest.raises(NotAModuleError, match="^not a .vmfb module"):
            Program(path)


def test_a_broken_module_is_not_called_not_a_module(add16):
    # a real module cut inside its FlatBuffer: a module, broken (flatcc's verdict), not "no module"
    data = add16.read_bytes()
    m = mf.read_module(data)
    with pytest.raises(ModuleFileError) as info:
        mf.read_module(data[:m.flatbuffer_offset + m.flatbuffer_length // 2])
    assert not isinstance(info.value, NotAModuleError)


# --------------------------------------------------------------------------------------------------
# The default execution model (the full HAL)

FULL_HAL_FLAGS = ("--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=vmvx")


@pytest.fixture(scope="module")
def full_hal_add16():
    return iree_tools.compile_with_flags(PROGRAMS / "add16.mlir", FULL_HAL_FLAGS)


def test_default_execution_model_runs_and_require_inline_still_names_the_flags(full_hal_add16, capsys):
    """A module of iree-compile's default execution model imports the full `hal` module: `run` and
    Program (and `test`) serve it with the local-sync device (modules/hal/module.py) and print what
    iree-run-module prints; `require_inline`, for callers that serve only the inline HAL, still
    refuses it with the iree-compile flags of the inline models, which compile modules that run."""
    tool = iree_tools.dump_module(full_hal_add16, "--output=metadata")
    hal_imports = re.findall(r"^\s+\[\s*\d+\] (hal\.[\w.]+)\(", tool, re.M)
    assert len(hal_imports) >= 10
    inputs = ["16xf32=1", "16xf32=2"]
    argv = ["--function", "add", *(f"--input={i}" for i in inputs)]
    assert main(["run", str(full_hal_add16), "--device=local-sync", *argv]) == 0
    assert capsys.readouterr().out == iree_tools.run_module(full_hal_add16, "add", inputs)
    with Program(full_hal_add16) as p:  # the Python API runs it too
        assert p.runtime.hal is not None
    with pytest.raises(ExecutionModelError) as info:
        require_inline(mf.read_module(full_hal_add16))
    assert info.value.imports == tuple(hal_imports)
    err = " ".join(str(info.value).split())
    assert "compiled for iree-compile's default execution model" in err
    assert f"({hal_imports[0]} and {len(hal_imports) - 1} more)" in err
    for model in INLINE_MODELS:
        assert f"{model}: iree-compile {' '.join(MODEL_FLAGS[model])}" in err
    assert main(["test", str(full_hal_add16)]) == 1  # `test` runs it too, and refuses `add`'s inputs
    out, err = capsys.readouterr()
    assert not out and "expected function with no inputs or outputs, but export 'add'" in " ".join(err.split())
    # every model's flags compile modules that run (and print what iree-run-module prints)
    for model in MODEL_FLAGS:
        runnable = iree_tools.compile_with_flags(PROGRAMS / "add16.mlir", MODEL_FLAGS[model])
        if model in INLINE_MODELS:
            require_inline(mf.read_module(runnable))
        assert main(["run", str(runnable), *argv]) == 0
        assert capsys.readouterr().out == iree_tools.run_module(runnable, "add", inputs)


def test_check_imports_resolves_the_full_hal(full_hal_add16, capsys):
    """The default model's hal.* imports are checked against IREE's `hal` export table
    (module_sources.hal_declaration), one report each, never a module-not-registered group;
    tests/cli/test_hal_module_dispatch_cli.py checks every status and the grouping of a missing module."""
    main(["inspect", str(full_hal_add16), "--check-imports"])
    out = capsys.readouterr().out
    m = mf.read_module(full_hal_add16)
    n = sum(1 for f in m.imported_functions if f.module == "hal")
    assert "no-module" not in out
    assert sum(1 for line in out.splitlines() if re.match(r"  (ok |BAD) hal\.", line)) == n
    assert all(len(line) <= 100 for line in out.splitlines())
    main(["inspect", str(full_hal_add16), "--check-imports", "--json"])
    d = json.loads(capsys.readouterr().out)
    assert len(d["import_check"]) == n and not any(r["status"] == "no-module" for r in d["import_check"])
