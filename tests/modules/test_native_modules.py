"""Native modules of one's own (issue 16): one declaration (`layouts.modules.ModuleDescriptor`) runs
in `Program`/`HalRuntime`/`ireeabi run --native-module`, checks imports in `inspect
--check-imports --native-module`, and is found through the `ireeabi.native_modules` entry points of
an installed distribution; its implementations read and make buffer views and buffers through
`modules.hal.module_api.ModuleApi` on any data model.

Oracles: IREE's compiler (the programs' imports and cconvs, tests/programs/native/own_module.mlir),
numpy (the values a module computes), importlib.metadata reading a real dist-info directory (the
entry points), IREE's context.c rules as `vm.bytecode.import_check.check_imports` models them.
"""
from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from support import iree_tools as tools
from support import own_native_module
from support.recorded_imports import RECORD_IMPORTS
from ireeabi.cli.main import main
from ireeabi.modules.hal.runtime import HalRuntime
from ireeabi.layouts.hal_buffer import ElementType
from ireeabi.layouts import module_sources
from ireeabi.layouts.modules import ModuleDeclarationError, ModuleDescriptor, ModuleExport
from ireeabi.modules.check import CHECK_MODULE
from ireeabi.tooling.program import Program, RunOptions, native_modules_for
from ireeabi.base.heap import tracked_heap
from ireeabi.vm.ref import release_value

HERE = Path(__file__).parents[1]
OWN = HERE / "programs" / "native" / "own_module.mlir"
MODELS = ("inline-static", "inline-dynamic")


@pytest.fixture(scope="module")
def own() -> dict[str, Path]:
    return {m: tools.compile_mlir(OWN, tools.session_dir(), m) for m in MODELS}


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = main(list(argv), stdout=out, stderr=err)
    return rc, out.getvalue(), err.getvalue()


# -- running ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("model", MODELS)
def test_program_runs_a_module_of_ones_own(own, model):
    """The module is instantiated on the program's heap; its implementation reads the view (shape,
    element type, bytes) and returns a new one, which the program imports as its result."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 1.5
    with tracked_heap() as heap:
        with Program(own[model], RunOptions(modules=[own_native_module.MYMOD]), heap=heap) as prog:
            out = prog.call("scale", x)
            assert out.dtype == np.float32 and out.shape == (2, 3)
            np.testing.assert_array_equal(out, x * np.float32(2.5))
            data = np.array([1, 2, 3, 250, 7], dtype=np.uint8).view(np.int8)
            assert prog.call("byte_sum", data) == 5 * 1000 + 263
            assert prog.runtime.modules["mymod"].version == 3


@pytest.mark.parametrize("target", ["riscv32", "i386"])
def test_program_runs_it_on_a_foreign_target(own, target):
    """The same declaration on a 32-bit data model: its views and buffers are that target's."""
    x = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32)
    with Program(own["inline-static"], RunOptions(target=target, modules=[own_native_module.MYMOD])) as prog:
        assert prog.machine.pointer_size == 4
        np.testing.assert_array_equal(prog.call("scale", x), x * np.float32(2.5))
        assert prog.call("byte_sum", np.arange(5, dtype=np.int8)) == 5010


def test_without_the_module_the_context_refuses_as_iree(own):
    """No module named mymod anywhere: IREE's context error (iree_vm_context_resolve_module_imports)."""
    with pytest.raises(Exception, match="required module 'mymod'.* not registered on the context"):
        Program(own["inline-static"])


@pytest.mark.parametrize("target", [None, "riscv32"])
def test_module_api_on_a_runtime(target):
    """ModuleApi directly: a new view's fields and bytes, its buffer's length and mapping, a view
    over an existing buffer, and a native call through the declared module (packed on the target)."""
    with HalRuntime(target=target, modules=[own_native_module.MYMOD]) as rt:
        api = rt.api
        arr = np.array([[1.5, -2.0], [3.25, 8.0]], dtype=np.float32)
        view = api.new_view(arr)
        v = api.view(view)
        assert (v.element_type, v.shape, v.encoding_type, v.byte_length) == (int(ElementType.FLOAT_32), (2, 2), 1, 16)
        assert bytes(v.data) == arr.tobytes()
        np.testing.assert_array_equal(v.array(), arr)
        v.array()[0, 0] = 9.0  # a view of the heap's memory: writes reach the buffer
        assert api.to_numpy(view)[0, 0] == 9.0
        buf = api.new_buffer(b"\x01\x02\x03")
        b = api.buffer(buf)
        assert (b.length, bytes(b.data)) == (3, b"\x01\x02\x03")
        over = api.new_view(None, int(ElementType.INT_8), shape=[3], buffer=buf)  # i8 over the buffer
        np.testing.assert_array_equal(api.view(over).array(), np.array([1, 2, 3], np.int8))
        scaled = rt.call("mymod.scale", view, 2.0)[0]
        np.testing.assert_array_equal(api.to_numpy(scaled), np.array([[18, -4], [6.5, 16]], np.float32))
        assert rt.call("mymod.byte_sum", buf) == [3006]
        for r in (view, buf, over, scaled):
            release_value(rt.heap, r)


# -- declarations -----------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs,match", [
    ({"name": "a.b"}, "without '.'"),
    ({"name": ""}, "non-empty"),
    ({"version": -1}, "uint32"),
    ({"version": 1 << 32}, "uint32"),
    ({"exports": (ModuleExport("f", "0rZ_v", ""),)}, "malformed cconv"),
    ({"exports": (ModuleExport("f", "0r_v", ""), ModuleExport("f", "0r_v", ""))}, "declared twice"),
    ({"exports": ("f",)}, "needs a name and a cconv"),
])
def test_bad_declarations_name_the_part(kwargs, match):
    base = {"name": "m", "version": 0, "exports": ()}
    with pytest.raises(ModuleDeclarationError, match=match):
        ModuleDescriptor(**{**base, **kwargs})


def test_select_keeps_the_overload_the_imports_ask_for():
    d = CHECK_MODULE
    assert d.select({"expect_eq": "0rr_v"}).export("expect_eq").cconv == "0rr_v"
    assert d.select({"expect_eq": "0rrr_v"}).export("expect_eq").cconv == "0rrr_v"
    assert d.select().export("expect_eq").cconv == "0rrr_v"  # the first declared: IREE's
    assert len(d.select().exports) == 5


def test_exports_only_declarations_do_not_run(own, tmp_path):
    only = ModuleDescriptor("mymod", 3, (ModuleExport("scale", "0rf_r", ""),))
    with pytest.raises(ModuleDeclarationError, match="exports only"):
        Program(own["inline-static"], RunOptions(modules=[only]))
    with pytest.raises(ModuleDeclarationError, match="already on the runtime"):
        HalRuntime(modules=[ModuleDescriptor("hal_inline", 0, ())])


def test_specs_and_files(tmp_path):
    assert module_sources.load("ireeabi.modules.check") == [CHECK_MODULE]
    assert module_sources.load("ireeabi.modules.check:CHECK_MODULE") == [CHECK_MODULE]
    assert module_sources.load("support.own_native_module") == [own_native_module.MYMOD]
    toml = tmp_path / "mymod.toml"
    toml.write_text('name = "mymod"\nversion = 3\n[[exports]]\nname = "scale"\ncconv = "0rf_r"\n')
    jsn = tmp_path / "mymod.json"
    jsn.write_text(json.dumps({"name": "mymod", "version": 3,
                               "exports": [{"name": "byte_sum", "cconv": "0r_I"}]}))
    (t,), (j,) = module_sources.load(str(toml)), module_sources.load(str(jsn))
    assert (t.name, t.version, [(e.name, e.cconv) for e in t.exports]) == ("mymod", 3, [("scale", "0rf_r")])
    assert [(e.name, e.cconv) for e in j.exports] == [("byte_sum", "0r_I")] and not j.runnable
    bad = tmp_path / "bad.json"
    for text, match in (('{"name": "m", "exports": [{"name": "f"}]}', r"exports\[0\] must have"),
                        ('{"name": "m", "extra": 1}', "unknown key"), ("{", "not valid JSON")):
        bad.write_text(text)
        with pytest.raises(ModuleDeclarationError, match=match):
            module_sources.load(str(bad))
    for spec, match in (("no_such_pkg_xyz.mod", "cannot import"), ("ireeabi.modules.check:nope", "has no"),
                        ("not a spec", "is not PKG.MOD"), ("json:JSONDecoder", "gave")):
        with pytest.raises(ModuleDeclarationError, match=match):
            module_sources.load(spec)


# -- discovery through entry points -----------------------------------------------------------------


def _install_dist(root: Path, entry: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A minimal installed distribution on `root`, put on sys.path: a dist-info with an entry point
    in the group, and the module it names (what pip leaves in site-packages)."""
    monkeypatch.delitem(sys.modules, "mymod_pkg", raising=False)
    monkeypatch.syspath_prepend(str(root))
    (root / "mymod_pkg.py").write_text(
        "from support.own_native_module import MYMOD\n"
        "def make():\n    return [MYMOD]\n")
    info = root / "mymod_dist-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mymod-dist\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[ireeabi.native_modules]\nmymod = {entry}\n")


def test_installed_distribution_adds_its_modules(own, tmp_path, monkeypatch):
    """importlib.metadata finds the dist-info on sys.path (no mock of the discovery itself): the
    program runs with the installed module without being given it; inspect resolves against it."""
    assert "mymod" not in {d.name for d in module_sources.installed()}
    _install_dist(tmp_path, "mymod_pkg:make", monkeypatch)
    found = {d.name: d for d in module_sources.installed()}
    assert found["mymod"] is own_native_module.MYMOD
    assert found["check"] is CHECK_MODULE  # ireeabi's own entry point (pyproject.toml)
    with Program(own["inline-static"]) as prog:
        assert prog.call("byte_sum", np.zeros(5, np.int8)) == 5000
    rc, out, _ = cli("inspect", str(own["inline-static"]), "--check-imports")
    assert rc == 0 and "ok  mymod.scale 0rf_r: resolves" in out


def test_an_install_into_a_folder_already_on_the_path_is_seen(own, tmp_path, monkeypatch):
    """The entry points are read once per state of the import path (installed() runs for every
    Program): a distribution installed later into a folder already on sys.path is found, as
    importlib.metadata finds it."""
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "mymod" not in {d.name for d in module_sources.installed()}
    monkeypatch.undo()
    _install_dist(tmp_path, "mymod_pkg:make", monkeypatch)
    assert "mymod" in {d.name for d in module_sources.installed()}


def test_a_broken_entry_point_is_one_line(own, tmp_path, monkeypatch):
    _install_dist(tmp_path, "mymod_pkg:missing", monkeypatch)
    with pytest.raises(ModuleDeclarationError, match="entry point mymod = mymod_pkg:missing"):
        native_modules_for(_file(own))
    rc, out, err = cli("run", str(own["inline-static"]), "--function", "byte_sum", "--input=5xi8=1")
    assert rc == 1 and out == "" and err.count("\n") <= 2 and "mymod_pkg:missing" in err


# A default-model program imports only modules the runtime makes itself (hal, hal_loader...): its
# run needs the installed modules only when one has such a name, which their names, kept on disk,
# say without reading every distribution's metadata.
HAL_PLUGIN = """
from ireeabi.layouts.modules import ModuleDescriptor
from ireeabi.vm.native_module import Export
def make():
    return [ModuleDescriptor("hal", 0, (Export("noop", "0v_v", lambda ctx: None),), source="a plugin")]
"""


@pytest.fixture(scope="module")
def add16_default(tmp_path_factory) -> Path:
    return tools.compile_mlir(HERE / "programs" / "add16.mlir", tmp_path_factory.mktemp("vmfb"),
                              model="llvm-cpu")


def _run_recorded(tmp_path: Path, vmfb: Path, env: dict, cwd: "Path | None" = None) -> tuple[int, str, set[str]]:
    import subprocess

    record = tmp_path / "modules.json"
    proc = subprocess.run([sys.executable, "-c", RECORD_IMPORTS, str(record), "run", str(vmfb),
                           "--function=add", "--input=16xf32=1", "--input=16xf32=2"], capture_output=True,
                          text=True, timeout=600, env=env, cwd=cwd)
    return proc.returncode, proc.stdout + proc.stderr, set(json.loads(record.read_text()))


def test_a_run_of_a_default_model_program_reads_no_package_metadata_once_the_names_are_kept(
        tmp_path, add16_default):
    import os

    env = {**os.environ, "IREEABI_CODE_CACHE": str(tmp_path / "cache")}
    work = tmp_path / "work"  # the first folder of `python -c`'s import path
    work.mkdir()
    first = _run_recorded(tmp_path, add16_default, env, work)
    second = _run_recorded(tmp_path, add16_default, env, work)
    (work / "an output").write_text("")  # a folder of the path changed: read again, file replaced
    third = _run_recorded(tmp_path, add16_default, env, work)
    for status, out, _ in (first, second, third):
        assert status == 0 and "16xf32=3 3 3" in out, out
    assert "importlib.metadata" in first[2]  # the names read once, and kept
    assert "importlib.metadata" not in second[2] and "ireeabi.modules.check" not in second[2]
    assert "importlib.metadata" in third[2]
    assert len(list((tmp_path / "cache" / "entry-points").iterdir())) == 1


def test_an_installed_module_named_as_the_runtimes_meets_it_as_before(tmp_path, add16_default):
    """An installed package's `hal` module still meets the runtime's own for a default-model
    program (the names kept on disk say it is there), as when every run read the metadata; an
    inline program, which imports no `hal`, still runs without it."""
    import os

    site = tmp_path / "site"
    site.mkdir()
    (site / "hal_plugin_pkg.py").write_text(HAL_PLUGIN)
    info = site / "hal_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hal-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[ireeabi.native_modules]\nhal = hal_plugin_pkg:make\n")
    env = {**os.environ, "IREEABI_CODE_CACHE": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    for _ in range(2):  # the metadata read, then the names kept
        status, out, _ = _run_recorded(tmp_path, add16_default, env)
        assert status == 1 and "native module 'hal' (a plugin): a module named 'hal' is already on the " \
            "runtime" in out, out


def _file(own):
    from ireeabi.vm.bytecode.module_file import read_module
    return read_module(own["inline-static"])


# -- the command line -------------------------------------------------------------------------------


@pytest.mark.parametrize("model", MODELS)
def test_run_native_module_flag(own, model):
    rc, out, err = cli("run", str(own[model]), "--function", "scale", "--native-module",
                       "support.own_native_module", "--input=2x3xf32=1 2 3 4 5 6")
    assert (rc, err) == (0, "")
    assert out == "EXEC @scale\nresult[0]: hal.buffer_view\n2x3xf32=[2.5 5 7.5][10 12.5 15]\n"
    rc, out, err = cli("run", str(own[model]), "--function", "byte_sum",
                       "--native-module=support.own_native_module:MYMOD", "--input=5xi8=1 2 3 4 -1")
    assert (rc, out) == (0, "EXEC @byte_sum\nresult[0]: i64=5265\n")


def test_run_native_module_errors_are_one_line(own, tmp_path):
    for spec, match in (("no_such_pkg_xyz", "cannot import"),
                        (str(tmp_path / "missing.toml"), "missing.toml")):
        rc, out, err = cli("run", str(own["inline-static"]), "--function", "scale",
                           "--native-module", spec, "--input=2x3xf32=1")
        assert rc == 1 and out == "" and match in " ".join(err.split()) and "Traceback" not in err
    toml = tmp_path / "mymod.toml"
    toml.write_text('name = "mymod"\nversion = 3\n[[exports]]\nname = "scale"\ncconv = "0rf_r"\n')
    rc, out, err = cli("run", str(own["inline-static"]), "--function", "scale", "--native-module",
                       str(toml), "--input=2x3xf32=1")
    assert rc == 1 and "declares exports only" in " ".join(err.split())


def test_a_declaration_file_without_a_name_says_so(own, tmp_path):
    """An empty declaration file (as a FIFO reads once its writer closes) is named as empty, not
    taken for a module whose name is None."""
    for text, detail in (("", "(the file is empty)"), ('version = 1\n', "")):
        toml = tmp_path / "empty.toml"
        toml.write_text(text)
        rc, out, err = cli("run", str(own["inline-static"]), "--function", "scale", "--native-module",
                           str(toml), "--input=2x3xf32=1")
        said = " ".join(err.split())
        assert rc == 1 and out == "" and "no module name: a declaration file needs name, version and exports" in said
        assert (detail in said) and "None" not in said and "Traceback" not in err


def test_inspect_check_imports_native_module(own, tmp_path):
    """--check-imports resolves against a declaration from Python or a file, as IREE's context
    would: the version, each function by name, the cconv byte for byte."""
    path = str(own["inline-static"])
    rc, out, _ = cli("inspect", path, "--check-imports")
    assert rc == 1 and "no native module `mymod` is registered" in out
    rc, out, _ = cli("inspect", path, "--check-imports", "--native-module", "support.own_native_module")
    assert rc == 0 and "all compatible" in out
    toml = tmp_path / "mymod.toml"
    toml.write_text('name = "mymod"\nversion = 3\n[[exports]]\nname = "scale"\ncconv = "0rf_r"\n'
                    '[[exports]]\nname = "byte_sum"\ncconv = "0r_i"\n')
    rc, out, _ = cli("inspect", path, "--check-imports", "--native-module", str(toml))
    assert rc == 1 and "mymod.byte_sum 0r_I: mismatch - import signature 0r_I != export signature 0r_i" in out
    rc, out, err = cli("inspect", path, "--native-module", str(toml))
    assert rc == 2 and "--native-module applies to --check-imports" in err
