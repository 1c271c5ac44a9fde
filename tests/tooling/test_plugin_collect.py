"""The pytest plugin's check program items (tooling/check_items.py), run by pytest (pytester).

- The check corpus (tests/programs/check, which tests/modules/test_check_corpus.py holds to
  iree-run-module's values) and failing.mlir, collected for both inline models and the default
  model on x86_64 and riscv32: one item per function (tests/support/check_corpus.py parses them from the
  sources), model and data model; every corpus item passes, every failing.mlir item fails with
  exactly the text `ireeabi test` prints for that function on that module and data model
  (module.cc's messages), and no Python traceback; the junit XML lists every item with its
  outcome (one nested run per model and data model, so that xdist spreads them); `-n 2`
  (pytest-xdist) runs the same items to the same outcomes and texts (a corpus file and
  failing.mlir, an inline model and the default one, both data models: what the comparison needs
  at a fraction of the cost).
  Modules compile into the plugin's cache in the suite's shared one (check_corpus.plugin_cache), once
  per run or less, whoever asks first: these runs, this file's own tests or test_check_corpus.py
  (check_corpus.compile_check compiles as the plugin does, under the same keys).
- Collection is opt-in and limited to the files asked for; a file's default models follow what it
  can compile for (a tensor check op: the default model only, as inline_issues/tensor_check_op.mlir
  pins); a model that does not compile is one failing item with iree-compile's error; a `.vmfb`
  runs in the model its imports name; bad options are usage errors naming the value.
- The compiled-module cache: one compile per key however many threads ask at once (a stand-in
  compiler counts its runs), a compile error cached and reported again without compiling.
- `--ireeabi-paths=fast,reference` runs each item on both interpreter paths (the path in its id).
(tests/tooling/test_plugin_vmasm.py: the plugin's VM test module items.)
"""
from __future__ import annotations

import functools
import io
import re
import shutil
import stat
import sys
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from support import check_corpus as cc
from support import iree_tools as tools
from support import long_lived_heap as llh
from ireeabi.cli.main import main
from ireeabi.tooling.check_compile import CompileError, Compiler

pytest_plugins = ["pytester"]

MODELS = ("inline-static", "inline-dynamic", "default")
TARGETS = ("x86_64", "riscv32")
HOST = "x86_64"
F64 = cc.F64[0]
FAILING = cc.CHECK_DIR / "failing.mlir"
TENSOR_CHECK = cc.CHECK_DIR / "inline_issues" / "tensor_check_op.mlir"


@pytest.fixture(scope="module")
def cache_dir() -> Path:
    """The plugin's compiled-module cache for every pytest run of this file: a folder of the suite's
    shared compile cache (check_corpus.plugin_cache), so that each module compiles once per run
    whatever the worker, and not again in a run that keeps pytest's cache (the plugin's keys hold
    the source's bytes, the flags and the compiler's version). tests/modules/test_check_corpus.py
    compiles the corpus's inline modules into it (check_corpus.compile_check): the same keys."""
    return cc.plugin_cache()


def _ini(pytester, cache: Path, models=MODELS, targets=TARGETS) -> None:
    pytester.makeini(f"""
        [pytest]
        ireeabi_collect = true
        ireeabi_models = {", ".join(models)}
        ireeabi_targets = {", ".join(targets)}
        ireeabi_compile_flags = {F64}
        ireeabi_cache_dir = {cache}
        """)


def _junit(path: Path) -> dict[str, tuple[str, str]]:
    """nodeid-like `file::name` -> (outcome, failure text) of every testcase of a junit XML."""
    cases = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        file = case.get("classname").rpartition(".")[0].replace(".", "/") + ".mlir"
        failed = case.find("failure")
        error = case.find("error")
        outcome = "failed" if failed is not None else "error" if error is not None else \
            "skipped" if case.find("skipped") is not None else "passed"
        shown = failed if failed is not None else error
        text = (shown.text or "") if shown is not None else ""
        key = f"{file}::{case.get('name')}"
        assert key not in cases, key
        cases[key] = (outcome, text)
    return cases


def _expected_items(files: list[Path], models=MODELS, targets=TARGETS) -> dict[str, str]:
    """`file::function[model-target]` -> the function's name, for every function of `files`."""
    out = {}
    for path in files:
        for f in cc.parse(path.read_text(), str(path)):
            for m in models:
                for t in targets:
                    out[f"{path.name}::{f.name}[{m}-{t}]"] = f.name
    return out


@functools.cache  # the xdist test asks for the texts the corpus tests of its process asked for
def _ireeabi_test_failures(model: str, target: str) -> dict[str, str]:
    """function -> the text `ireeabi test` prints between its RUN and FAILED lines, for failing.mlir
    compiled for `model` on `target` (the module the plugin's items run: its cache, its flags)."""
    vmfb = cc.compile_check(FAILING, model, target)
    out = io.StringIO()
    assert main(["test", "--target", target, str(vmfb)], stdout=out) == 1, out.getvalue()
    blocks = re.findall(r"^\[ RUN      \] module\.(\w+)\n(.*?)^\[  FAILED  \] module\.\1, ",
                        out.getvalue(), re.M | re.S)
    assert len(blocks) == 7, out.getvalue()
    return dict(blocks)


def _check_failures(cases: dict[str, tuple[str, str]], failing: dict[str, str]) -> None:
    """Each failing.mlir item failed with `ireeabi test`'s text for its function, model and data
    model, and no traceback."""
    expected: dict[tuple[str, str], dict[str, str]] = {}
    for key, function in failing.items():
        outcome, text = cases[key]
        model, target = re.search(r"\[(.*)-(\w+)\]$", key).groups()
        if (model, target) not in expected:
            expected[model, target] = _ireeabi_test_failures(model, target)
        assert outcome == "failed", key
        assert text == expected[model, target][function].rstrip("\n"), key
        assert "Traceback" not in text and ".py:" not in text, key


# The whole corpus, one nested run per model and data model (xdist spreads them); every item passes.
COMBOS = [(m, t) for m in MODELS for t in TARGETS]
# What the serial and the `-n 2` runs are compared on: a corpus file and failing.mlir, an inline
# model and the default one (their items run differently: no HAL, the full HAL), on both targets.
XDIST_FILES = [cc.CHECK_DIR / "sort_topk.mlir", FAILING]
XDIST_MODELS = ("inline-static", "default")


@pytest.mark.parametrize("model,target", COMBOS, ids=[f"{m}-{t}" for m, t in COMBOS])
def test_corpus_items_pass_and_fail_as_ireeabi_test(pytester, cache_dir, model, target):
    corpus = cc.corpus_files()
    for path in [*corpus, FAILING]:
        shutil.copy(path, pytester.path / path.name)
    _ini(pytester, cache_dir, models=(model,), targets=(target,))
    passing = _expected_items(corpus, (model,), (target,))
    failing = _expected_items([FAILING], (model,), (target,))
    assert len(passing) == 59 and len(failing) == 7

    serial = pytester.runpytest_inprocess("-p", "no:randomly", "-rN",
                                          f"--junitxml={pytester.path / 'serial.xml'}")
    serial.assert_outcomes(passed=len(passing), failed=len(failing))
    # The modules the run compiled are those check_corpus.compile_check gives the other tests (the
    # same keys: a run compiles each once), not modules of their own.
    made = set(cache_dir.glob("*.vmfb"))
    assert {cc.compile_check(path, model, target) for path in [*corpus, FAILING]} <= made
    cases = _junit(pytester.path / "serial.xml")
    assert set(cases) == set(passing) | set(failing)  # the report lists every item
    assert {k for k, (o, _) in cases.items() if o == "passed"} == set(passing)
    _check_failures(cases, failing)
    out = serial.stdout.str()
    assert ("module.cc:369: Failure\nValue of: operand\n  Actual: false\nExpected: true\n"
            "Expected 0 to be nonzero.\n") in out
    assert "Traceback" not in out


def test_xdist_runs_the_same_items_to_the_same_outcomes(pytester, cache_dir, monkeypatch):
    """`-n 2` is held to what the serial runs of test_corpus_items_pass_and_fail_as_ireeabi_test
    are held to, item by item (the same items, these passed, those failed with `ireeabi test`'s
    text for their function, model and data model): as those runs include every item here
    (sort_topk.mlir and failing.mlir in inline-static and default, on both data models), both
    runs give each item the same outcome and text without a serial run of its own here."""
    for path in XDIST_FILES:
        shutil.copy(path, pytester.path / path.name)
    _ini(pytester, cache_dir, models=XDIST_MODELS)
    passing = _expected_items(XDIST_FILES[:1], XDIST_MODELS)
    failing = _expected_items([FAILING], XDIST_MODELS)
    assert len(passing) == 4 * 4 and len(failing) == 7 * 4
    assert all((m, t) in COMBOS for m in XDIST_MODELS for t in TARGETS)

    # as a user runs it (with the suite's heap plugin: fewer collections at each session's end)
    monkeypatch.setenv("PYTHONPATH", llh.child_environment()["PYTHONPATH"])
    parallel = pytester.runpytest_subprocess("-p", "no:randomly", "-n", "2", *llh.CHILD_ARGS,
                                             f"--junitxml={pytester.path / 'parallel.xml'}")
    parallel.assert_outcomes(passed=len(passing), failed=len(failing))
    assert re.search(r"created: 2/2 workers", parallel.stdout.str())
    cases = _junit(pytester.path / "parallel.xml")
    assert set(cases) == set(passing) | set(failing)
    assert {k for k, (o, _) in cases.items() if o == "passed"} == set(passing)
    assert all(cases[k] == ("passed", "") for k in passing)
    _check_failures(cases, failing)


def test_collection_is_opt_in_and_limited(pytester, cache_dir):
    shutil.copy(cc.CHECK_DIR / "elementwise.mlir", pytester.path / "elementwise.mlir")
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    off = pytester.runpytest("--collect-only", "-q")
    assert off.stdout.lines[0] == "test_plain.py::test_plain"
    assert "elementwise" not in off.stdout.str()
    other = pytester.runpytest("--collect-only", "-q", "--ireeabi-collect",
                               "--ireeabi-files=checks/*.mlir")
    assert "elementwise" not in other.stdout.str()
    on = pytester.runpytest("--collect-only", "-q", "--ireeabi-collect",
                            "--ireeabi-files=*.mlir", "--ireeabi-models=inline-static",
                            f"--ireeabi-compile-flags={F64}", f"--ireeabi-cache-dir={cache_dir}")
    names = [f.name for f in cc.parse((cc.CHECK_DIR / "elementwise.mlir").read_text())]
    expected = [f"elementwise.mlir::{n}[inline-static-{HOST}]" for n in names]
    listed = [line for line in on.stdout.lines if "::" in line]
    assert listed == expected + ["test_plain.py::test_plain"]


def test_default_models_follow_what_the_file_compiles_for(pytester, cache_dir):
    shutil.copy(TENSOR_CHECK, pytester.path / "tensor_check_op.mlir")
    shutil.copy(cc.CHECK_DIR / "control_flow.mlir", pytester.path / "control_flow.mlir")
    args = ("-p", "no:randomly", "--ireeabi-collect", f"--ireeabi-compile-flags={F64}",
            f"--ireeabi-cache-dir={cache_dir}")
    # The items each file gets (collected only: that control_flow's items pass in each model on the
    # host is test_corpus_items_pass_and_fail_as_ireeabi_test's, from the same modules; that the
    # tensor check passes in the default model, the run below).
    result = pytester.runpytest_inprocess(*args, "--collect-only", "-q")
    functions = [f.name for f in cc.parse((cc.CHECK_DIR / "control_flow.mlir").read_text())]
    expected = [f"control_flow.mlir::{f}[{m}-{HOST}]" for f in functions for m in MODELS]
    # tensor check ops: the default model only
    expected.append(f"tensor_check_op.mlir::tensor_check[default-{HOST}]")
    assert [line for line in result.stdout.lines if "::" in line] == expected

    # Asked for an inline model, the tensor op does not compile: one failing item, the compiler's
    # error (the one inline_issues/README records), no traceback.
    forced = pytester.runpytest_inprocess(*args, "-v", "--ireeabi-models=inline-static,default",
                                          "tensor_check_op.mlir")
    forced.assert_outcomes(passed=1, failed=1)
    out = forced.stdout.str()
    assert f"\ntensor_check_op.mlir::tensor_check[default-{HOST}] PASSED" in out
    assert f"FAILED tensor_check_op.mlir::iree-compile[inline-static-{HOST}]" in out
    assert "error: failed to legalize unresolved source materialization" in out
    assert "Traceback" not in out


def test_a_vmfb_runs_in_its_model_on_each_target(pytester):
    vmfb = cc.compile_check(cc.CHECK_DIR / "sort_topk.mlir", "inline-static")
    shutil.copy(vmfb, pytester.path / "sort_topk.vmfb")
    result = pytester.runpytest_inprocess("-p", "no:randomly", "-v", "--ireeabi-collect",
                                          "--ireeabi-targets=riscv32,wasm32",
                                          "--ireeabi-models=default")  # does not apply to a .vmfb
    functions = [f.name for f in cc.parse((cc.CHECK_DIR / "sort_topk.mlir").read_text())]
    expected = [f"sort_topk.vmfb::{f}[inline-static-{t}]" for f in functions
                for t in ("riscv32", "wasm32")]
    assert re.findall(r"^(\S+::\S+) PASSED", result.stdout.str(), re.M) == expected
    result.assert_outcomes(passed=len(expected))


@pytest.mark.parametrize("model", ["inline-static", "vmvx"])
def test_an_i386_item_names_the_layout_hazard(pytester, model):
    """On i386 the shims of hal_inline (inline-static) and of the full hal (vmvx kernels, whose
    initializer calls hal.device.query.i64) refuse the VM's packing: the item's failure adds what
    `ireeabi run` adds, that inspect predicts the hazard (import_check.hazard_hint)."""
    vmfb = cc.compile_check(cc.CHECK_DIR / "sort_topk.mlir", model)
    shutil.copy(vmfb, pytester.path / "sort_topk.vmfb")
    result = pytester.runpytest_inprocess("-p", "no:randomly", "-x", "--ireeabi-collect",
                                          "--ireeabi-targets=i386")
    text = result.stdout.str()
    assert "argument/result signature mismatch" in text
    assert re.search(r"^this is the layout hazard `ireeabi inspect MODULE --check-imports --target "
                     r"i386` predicts for hal(_inline)?\.\S+ \(shim-length\)$", text, re.M), text
    result.assert_outcomes(failed=1)


def test_interpreter_paths_parametrize_check_items(pytester):
    """--ireeabi-paths runs each item on the fast path and on the reference path (one handler per
    instruction); the path is then in the id, before the target."""
    vmfb = cc.compile_check(cc.CHECK_DIR / "sort_topk.mlir", "inline-static")
    shutil.copy(vmfb, pytester.path / "sort_topk.vmfb")
    result = pytester.runpytest_inprocess("-p", "no:randomly", "-v", "--ireeabi-collect",
                                          "--ireeabi-targets=riscv32",
                                          "--ireeabi-paths=fast,reference")
    functions = [f.name for f in cc.parse((cc.CHECK_DIR / "sort_topk.mlir").read_text())]
    expected = [f"sort_topk.vmfb::{f}[inline-static-{p}-riscv32]" for f in functions
                for p in ("fast", "reference")]
    assert re.findall(r"^(\S+::\S+) PASSED", result.stdout.str(), re.M) == expected
    result.assert_outcomes(passed=len(expected))


def test_a_module_iree_check_module_refuses_is_a_collection_error(pytester):
    vmfb = tools.compile_mlir(tools_program("add16.mlir"), model="inline-static")
    shutil.copy(vmfb, pytester.path / "add16.vmfb")
    result = pytester.runpytest("--ireeabi-collect")
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    assert "CheckTestError: INVALID_ARGUMENT; expected function with no inputs or outputs, but " \
           "export 'add' has signature" in out
    assert "Traceback" not in out


def tools_program(name: str) -> Path:
    return cc.TESTS / "programs" / name


@pytest.mark.parametrize("option,value,message", [
    ("--ireeabi-targets", "x86_64,riscv33", "unknown target 'riscv33'"),
    ("--ireeabi-models", "inline-static,inline", "unknown execution model 'inline'"),
])
def test_bad_options_are_usage_errors(pytester, option, value, message):
    result = pytester.runpytest(f"{option}={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


# --------------------------------------------------------------------------- the module cache

FAKE_COMPILER = """#!{python}
import sys, time
log = {log!r}
if sys.argv[1:] == ["--version"]:
    print("fake iree-compile 1.0")
    sys.exit(0)
source = sys.stdin.read()
with open(log, "a") as f:
    f.write(" ".join(sys.argv[1:]) + "\\n")
if "BAD" in source:
    sys.stderr.write("<stdin>:1:1: error: BAD is not MLIR\\n")
    sys.exit(1)
time.sleep(0.5)  # a compile long enough for the other threads to arrive while it runs
out = sys.argv[sys.argv.index("-o") + 1]
with open(out, "w") as f:
    f.write("module of " + source)
"""


def _fake_compiler(tmp_path: Path) -> tuple[Path, Path]:
    exe, log = tmp_path / "fake-iree-compile", tmp_path / "compiles.log"
    exe.write_text(FAKE_COMPILER.format(python=sys.executable, log=str(log)))
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    log.write_text("")
    return exe, log


def test_concurrent_compiles_of_one_key_run_the_compiler_once(tmp_path):
    exe, log = _fake_compiler(tmp_path)
    src = tmp_path / "prog.mlir"
    src.write_text("func.func @f() { return }\n")
    cache = tmp_path / "cache"
    results: list = []

    def compile_once() -> None:  # each thread its own Compiler, as each xdist worker has
        results.append(Compiler(cache, path=str(exe)).compile(src, ("--flag-a",)))

    threads = [threading.Thread(target=compile_once) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4 and len(set(results)) == 1
    assert results[0].read_text() == "module of func.func @f() { return }\n"
    assert log.read_text().count("\n") == 1  # one compile, three readers
    assert not list(cache.glob("*.tmp"))
    # Another flag or another source is another key; the same ones hit the cache.
    Compiler(cache, path=str(exe)).compile(src, ("--flag-b",))
    Compiler(cache, path=str(exe)).compile(src, ("--flag-a",))
    assert log.read_text().count("\n") == 2


def test_a_compile_error_is_cached_and_reported_again(tmp_path):
    exe, log = _fake_compiler(tmp_path)
    src = tmp_path / "bad.mlir"
    src.write_text("BAD\n")
    for _ in range(2):
        with pytest.raises(CompileError) as e:
            Compiler(tmp_path / "cache", path=str(exe)).compile(src, ())
        assert e.value.returncode == 1
        assert e.value.stderr == f"{src}:1:1: error: BAD is not MLIR\n"
    assert log.read_text().count("\n") == 1


def test_a_collection_error_that_is_not_bad_input_is_reported_by_pytest(pytester):
    """A check file's collection error other than ireeabi's (IreeAbiError: its message alone) gets
    pytest's own report (a Collector's repr_failure takes no traceback style)."""
    path = pytester.makefile(".mlir", planted="")
    pytester.makeini("[pytest]\nireeabi_collect = true\n")
    node = pytester.getpathnode(path)
    assert type(node).__name__ == "CheckFile"
    try:
        raise RuntimeError("planted failure")
    except RuntimeError:
        excinfo = pytest.ExceptionInfo.from_current()
    assert "RuntimeError: planted failure" in str(node.repr_failure(excinfo))
