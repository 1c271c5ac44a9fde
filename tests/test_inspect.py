"""`ireeabi inspect` and the import checker on real modules from iree-compile."""
import json
from pathlib import Path

import pytest

import iree_tools
from ireeabi.cli.main import main
from ireeabi.layouts import hal_loader, modules
from ireeabi.layouts.hal_inline import ModuleExport
from ireeabi.vm import imports, module_file as mf

PROGRAMS = Path(__file__).parent / "programs"


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
