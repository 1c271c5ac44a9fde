"""`ireeabi inspect --check-imports` and `ireeabi check` on the full HAL: every import a module of
iree-compile's default execution model makes (llvm-cpu and vmvx) resolves, and the two dispatch
shims are reported as IREE's sizeof sites per data model (layouts/hal_module_dispatch.py).

Oracles: iree-dump-module lists the imports; the real 3.13 `hal` module (iree.runtime's
create_hal_module on local-sync) lists its exports and cconvs, against which the export table of
tests/data/hal_module_exports_3_13.json is checked (the snapshot's runtime/src/iree/modules/hal/
exports.inl, 58 entries, plus command_buffer.flush_buffer and .invalidate_buffer, `0rirII_v`, that
3.13 adds).
"""
import io
import json
import re
from pathlib import Path

import pytest

from support import iree_tools
from ireeabi.abi import targets
from ireeabi.cli import cmd_inspect
from ireeabi.layouts import module_sources
from ireeabi.cli.main import main
from ireeabi.layouts import hal_module_dispatch as H

HERE = Path(__file__).parents[1]
TABLE = HERE / "data" / "hal_module_exports_3_13.json"
FLAGS = {b: ("--iree-hal-target-device=local", f"--iree-hal-local-target-device-backends={b}")
         for b in ("llvm-cpu", "vmvx")}
PROGRAMS = {"add16": HERE / "programs" / "add16.mlir", "dynamic": HERE / "programs" / "e2e" / "dynamic.mlir",
            "multi_dispatch": HERE / "programs" / "e2e" / "multi_dispatch.mlir"}


def cli(*argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = main(list(argv), stdout=out, stderr=err)
    return rc, out.getvalue()


@pytest.fixture(scope="module")
def modules() -> dict[tuple[str, str], Path]:
    return {(p, b): iree_tools.compile_with_flags(src, FLAGS[b])
            for p, src in PROGRAMS.items() for b in FLAGS}


def _table() -> dict[str, str]:
    return {e["name"]: e["cconv"] for e in json.loads(TABLE.read_text())["exports"]}


def test_table_is_the_runtime_hal_module():
    import iree.runtime as rt
    m = rt.create_hal_module(rt.VmInstance(), rt.get_device("local-sync"))
    real = {n: re.search(r"\((0[^)]*)\)", repr(m.lookup_function(n))).group(1) for n in m.function_names}
    assert real == _table()
    assert m.version == json.loads(TABLE.read_text())["version"]
    for s in H.SHIMS:
        assert real[s.export] == s.cconv


def test_default_declaration_agrees_with_the_table():
    """layouts.hal_module declares IREE 3.13's table, name for name with its cconv (the declaration
    inspect falls back to when no `hal` module is registered or given)."""
    d = module_sources.hal_declaration()
    table = _table()
    assert d.name == "hal" and d.exports
    assert {e.name: e.cconv for e in d.exports} == table
    for s in H.SHIMS:
        assert d.export(s.export) is not None and d.export(s.export).cconv == s.cconv


@pytest.mark.parametrize("key", [(p, b) for p in PROGRAMS for b in FLAGS], ids="-".join)
def test_check_imports_covers_every_import(modules, key):
    path = str(modules[key])
    dumped = iree_tools.dump_module(path, "--output=metadata")
    imports = re.findall(r"^\s+\[\s*\d+\] \??(hal\.[\w.]+)\(", dumped.split("Exported Functions")[0], re.M)
    assert "hal.command_buffer.dispatch" in imports
    rc, out = cli("inspect", path, "--check-imports", "--json", "--native-module", str(TABLE))
    d = json.loads(out)
    assert [r["name"] for r in d["import_check"]] == imports
    assert all(r["status"] == "ok" for r in d["import_check"]), d["import_check"]
    assert rc == 0 and d["compatible"]
    # without the flag: IREE's table from layouts.hal_module, never "module not registered"
    rc, out = cli("inspect", path, "--check-imports", "--json")
    d = json.loads(out)
    assert [r["name"] for r in d["import_check"]] == imports
    assert not any(r["status"] == "no-module" for r in d["import_check"])


@pytest.mark.parametrize("name", targets.names())
def test_check_imports_reports_the_sizeof_site(modules, name):
    path = str(modules["add16", "vmvx"])
    rc, out = cli("inspect", path, "--check-imports", "--json", "--target", name,
                  "--native-module", str(TABLE))
    d = json.loads(out)
    (r,) = [r for r in d["import_check"] if r["name"] == "hal.command_buffer.dispatch"]
    site = H.sizeof_site(H.SHIMS[0], name)
    assert r["sizeof_site"] == {**site.as_dict(), "module_spans": [[0, 3]]}
    assert r["sizeof_site"]["state"] == ("live" if name == "i386" else "latent")
    assert {"rule": "sizeof-site", "message": f"{H.SHIMS[0].function} starts the spans at sizeof: "
                                              f"{site.summary()}"} in r["notes"]
    assert r["compatible"] == (name != "i386")
    assert any(f["rule"] == "reader-sizeof" for f in r["findings"]) == (name == "i386")
    if name != "i386":
        assert rc == 0
    rc, out = cli("inspect", path, "--check-imports", "--target", name, "--native-module", str(TABLE))
    flat = " ".join(out.split())
    assert f"note sizeof-site: {H.SHIMS[0].function} starts the spans at sizeof: {site.summary()}" in flat
    assert all(len(line) <= 100 for line in out.splitlines())
    assert ("BAD hal.command_buffer.dispatch" in out) == (name == "i386")


@pytest.mark.parametrize("key", [(p, b) for p in PROGRAMS for b in FLAGS], ids="-".join)
def test_check_imports_reads_the_spans_the_module_passes(modules, key):
    """The span counts of every `vm.call.variadic @hal.command_buffer.dispatch` (iree-dump-module's
    disassembly: the segment sizes at the two span positions) are checked too: read right on the
    host, misread on i386."""
    path = str(modules[key])
    dumped = iree_tools.dump_module(path, "--output=all")
    passed = []
    for seg in re.findall(r"vm\.call\.variadic @hal\.command_buffer\.dispatch segments\[([\d, ]+)\]", dumped):
        spans = [int(x) for x in seg.split(",")][-2:]
        if spans not in passed:
            passed.append(spans)
    assert passed
    for name, ok in (("x86_64", True), ("i386", False)):
        rc, out = cli("inspect", path, "--check-imports", "--json", "--target", name,
                      "--native-module", str(TABLE))
        (r,) = [r for r in json.loads(out)["import_check"] if r["name"] == "hal.command_buffer.dispatch"]
        assert r["sizeof_site"]["module_spans"] == passed
        shown = ", ".join(str(x) for x in passed)
        said = "reads each right" if ok else f"misreads {len(passed)} of {len(passed)}"
        assert {"rule": "sizeof-site",
                "message": f"the module's calls pass spans {shown}: the shim {said}"} in r["notes"]
        spans_found = [f for f in r["findings"] if "spans=" in f["message"]
                       and any(f"spans={x}" in f["message"] for x in passed)]
        assert bool(spans_found) == (not ok)


# The hazard table of docs/data-models.md, full-HAL rows: what --check-imports finds incompatible in add16.
I386_BAD_ADD16 = ["hal.buffer_view.create", "hal.buffer_view.assert", "hal.command_buffer.create",
                  "hal.command_buffer.dispatch", "hal.device.query.i64", "hal.device.queue.execute.indirect",
                  "hal.fence.await"]


@pytest.mark.parametrize("backend", FLAGS)
def test_readme_rows_incompatible_imports_per_target(modules, backend):
    for name in targets.names():
        rc, out = cli("inspect", str(modules["add16", backend]), "--check-imports", "--json",
                      "--target", name, "--native-module", str(TABLE))
        bad = [r["name"] for r in json.loads(out)["import_check"] if not r["compatible"]]
        assert bad == (I386_BAD_ADD16 if name == "i386" else []), name
        assert rc == (1 if name == "i386" else 0)


def test_check_imports_groups_a_missing_module():
    """A module nobody declares is still one grouped line (the default-model hal never is)."""
    own = iree_tools.compile_mlir(HERE / "programs" / "native" / "own_module.mlir", iree_tools.session_dir(),
                                  "inline-static")
    rc, out = cli("inspect", str(own), "--check-imports")
    assert rc == 1
    assert "  BAD mymod.* (2 imports): no-module - no native module `mymod` is registered" in out


def test_check_text_names_the_site():
    rc, out = cli("check", H.DISPATCH_CCONV)
    flat = " ".join(out.split())
    assert rc == 0
    site = H.sizeof_site(H.SHIMS[0], "x86_64")
    assert (f"arguments: hal.command_buffer.dispatch is read by {H.SHIMS[0].function} (hal/module.c), "
            f"which starts the spans at sizeof(iree_vm_abi_rrIiiiI_t) (the pre-fix reader above): "
            f"{site.summary()} (0..3 per span)") in flat
    rc, out = cli("check", H.DISPATCH_INDIRECT_CCONV, "--target", "i386")
    flat = " ".join(out.split())
    assert rc == 1
    assert ("live sizeof site on i386: sizeof(iree_vm_abi_rrIirII_t) 52 != packed fixed part 56; the "
            "shim misreads 16 of 16 instances") in flat
    assert all(len(line) <= 100 for line in out.splitlines())


def test_check_json_sites_on_every_target():
    for s in H.SHIMS:
        rc, out = cli("check", s.cconv, "--all-targets", "--json")
        d = json.loads(out)
        assert d["sizeof_sites"] == [H.sizeof_site(s, t).as_dict() for t in targets.names()]
        live = [x["target"] for x in d["sizeof_sites"] if x["state"] == "live"]
        assert live == ["i386"] and rc == 1
    rc, out = cli("check", "0rIiiiCiDCrIID_v", "--json")  # hal_loader's: not a full-HAL site
    assert "sizeof_sites" not in json.loads(out)


def test_site_for_an_import_without_cconv_and_none_for_a_mismatch():
    """An import that declares no cconv resolves to the export's (vm/bytecode/import_check.py) and gets its site;
    one whose cconv differs does not resolve (mismatch) and gets none."""
    from ireeabi.vm.bytecode.import_check import ImportReport
    bare = ImportReport("hal.command_buffer.dispatch", None, "ok", "", H.DISPATCH_CCONV).as_dict()
    r = cmd_inspect._with_sizeof_site(bare, targets.get("i386"))
    assert r["sizeof_site"]["state"] == "live" and not r["compatible"]
    other = ImportReport("hal.command_buffer.dispatch", "0rrIiiiCiDCiirIID_v", "mismatch", "",
                         H.DISPATCH_CCONV).as_dict()
    assert "sizeof_site" not in cmd_inspect._with_sizeof_site(other, targets.get("i386"))


def test_damaged_bytecode_is_never_a_traceback(modules, tmp_path):
    """Reading the dispatch calls' span counts decodes the bytecode: 300 deterministic byte flips in
    a default-model module's bytecode end in a report (exit 0/1) or a named error (exit 2), never
    an exception; when the bytecode does not decode the swept counts still stand."""
    import random
    from ireeabi.vm.bytecode import decoder, module_file as mf
    data = modules["add16", "vmvx"].read_bytes()
    code = mf.read_module(data).bytecode
    start = data.find(code)
    assert start > 0 and data.find(code, start + 1) < 0
    rng = random.Random(20261204)
    path = tmp_path / "m.vmfb"
    seen, undecodable = set(), 0
    for _ in range(300):
        b = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            b[start + rng.randrange(len(code))] = rng.randrange(256)
        path.write_bytes(bytes(b))
        try:
            decoder.decode_module(mf.read_module(bytes(b)))
        except decoder.DecodeError:
            undecodable += 1
        out, err = io.StringIO(), io.StringIO()
        rc = main(["inspect", str(path), "--check-imports", "--json", "--native-module", str(TABLE)],
                  stdout=out, stderr=err)
        assert rc in (0, 1, 2) and "Traceback" not in err.getvalue()
        seen.add(rc)
    assert 0 in seen or 1 in seen
    assert undecodable > 50  # the damage reaches the decoder


@pytest.mark.parametrize("name", targets.names())
def test_run_does_what_the_rows_say(modules, name, capsys):
    """The hazard table of docs/data-models.md, full-HAL rows: a vmvx module of the default model runs on every target
    --check-imports finds compatible and prints what iree-run-module prints; on i386 it fails at the
    first incompatible import `__init` calls, with IREE's generic-shim status."""
    path = str(modules["add16", "vmvx"])
    inputs = ["16xf32=1", "16xf32=2"]
    rc = main(["run", path, "--function", "add", "--target", name, *(f"--input={i}" for i in inputs)])
    out, err = capsys.readouterr()
    if name == "i386":
        assert rc == 1 and not out
        assert ("INVALID_ARGUMENT; argument/result signature mismatch; while calling import "
                "hal.device.query.i64") in " ".join(err.split())
        assert "hal.device.query.i64" in I386_BAD_ADD16
    else:
        assert rc == 0 and out == iree_tools.run_module(path, "add", inputs)
