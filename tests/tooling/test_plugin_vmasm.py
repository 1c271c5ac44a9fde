"""The pytest plugin's VM test module items (tooling/check_items.py over tooling/vm_test_module.py),
run by pytest (pytester).

- The VM op corpus (tests/programs/vm/*.vmasm, which tests/vm/bytecode/test_vm_op_corpus.py holds
  to iree-run-module) and a deliberately wrong module of this file's, collected on x86_64 and
  riscv32 on both interpreter paths: one item per export (iree-dump-module lists them: the oracle),
  path and data model; every corpus item passes; each wrong item fails with exactly the text
  `ireeabi test` prints for it (bytecode_module_test's GTEST_FAIL text: a `test_` that fails, a
  `fail_` that returns, a test that yields past test_runner.h's resume limit) and no traceback;
  the junit XML lists every item; `-n 2` runs the same items to the same outcomes and texts.
- An assembled VM test module (.vmfb without check imports) is collected the same way; a .vmasm
  iree-as-module refuses is one failing item naming the line, the other files still run; ids carry
  the path only when the paths option is set; a bad path is a usage error.
- The assembler's cache: one assembly per key however many threads ask at once (a stand-in
  assembler counts its runs), a refusal cached, another tool version another key.
"""
from __future__ import annotations

import io
import re
import shutil
import stat
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from importlib.metadata import version
from pathlib import Path

import pytest

from support import iree_tools as tools
from support import long_lived_heap as llh
from ireeabi.cli.main import main
from ireeabi.tooling.check_compile import Assembler, CompileError

pytest_plugins = ["pytester"]

CORPUS = Path(__file__).resolve().parents[1] / "programs" / "vm"
TARGETS = ("x86_64", "riscv32")
PATHS = ("fast", "reference")

# A VM test module whose tests do not behave, and one of each that does.
WRONG = """\
vm.module @wrong version 0
vm.type i32

vm.export @test_passes
vm.func @test_passes() -> () {
^bb0:
  vm.return
}

vm.export @test_fails
vm.func @test_fails() -> () {
^bb0:
  %i0 = vm.const.i32 5
  vm.fail %i0, "deliberately wrong"
}

vm.export @fail_returns
vm.func @fail_returns() -> () {
^bb0:
  vm.return
}

vm.export @fail_fails
vm.func @fail_fails() -> () {
^bb0:
  %i0 = vm.const.i32 3
  vm.fail %i0, "as expected"
}

vm.export @test_yields_forever
vm.func @test_yields_forever() -> () {
^bb0:
  vm.yield ^bb0()
^bb1:
  vm.return
}
"""
WRONG_FAILING = ("test_fails", "fail_returns", "test_yields_forever")


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory) -> Path:
    """One assembled-module cache for every pytest run of this file."""
    return tmp_path_factory.mktemp("plugin-vmasm")


def _ini(pytester, cache: Path, paths=PATHS, targets=TARGETS) -> None:
    lines = ["[pytest]", "ireeabi_collect = true", f"ireeabi_targets = {', '.join(targets)}",
             f"ireeabi_cache_dir = {cache}"]
    if paths:
        lines.append(f"ireeabi_paths = {', '.join(paths)}")
    pytester.makeini("\n".join(lines) + "\n")


def _exports(src: Path) -> list[str]:
    """The module's exports, as iree-dump-module lists them for IREE's own assembly of it."""
    text = tools.dump_module(tools.assemble_vmasm(src), "--output=metadata")
    return re.findall(r"^\s*\[\s*\d+\] (\w+)\(", text.split("Exported Functions:")[1], re.M)


def _expected_items(files: list[Path], suffix: str = ".vmasm") -> dict[str, str]:
    """`file::function[path-target]` -> the function, for every export of `files`."""
    return {f"{path.stem}{suffix}::{f}[{p}-{t}]": f
            for path in files for f in _exports(path) for p in PATHS for t in TARGETS}


def _junit(path: Path) -> dict[str, tuple[str, str]]:
    """`file::name` -> (outcome, failure text) of every testcase of a junit XML."""
    cases = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        file = case.get("classname").rpartition(".")[0].replace(".", "/") + ".vmasm"
        shown = case.find("failure") if case.find("failure") is not None else case.find("error")
        outcome = "passed" if shown is None else shown.tag
        key = f"{file}::{case.get('name')}"
        assert key not in cases, key
        cases[key] = (outcome, (shown.text or "") if shown is not None else "")
    return cases


def _ireeabi_test_failures(src: Path, target: str, reference: bool, monkeypatch) -> dict[str, str]:
    """function -> the text `ireeabi test` prints between its RUN and FAILED lines."""
    monkeypatch.setenv("IREEABI_REFERENCE", "1" if reference else "0")
    out = io.StringIO()
    assert main(["test", "--target", target, str(src)], stdout=out) == 1, out.getvalue()
    blocks = re.findall(r"^\[ RUN      \] bytecode/VMBytecodeTest\.Check/wrong_vmfb_(\w+)\n"
                        r"([^\[]*?)^\[  FAILED  \] bytecode/VMBytecodeTest\.Check/wrong_vmfb_\1, ",
                        out.getvalue(), re.M | re.S)
    assert len(blocks) == len(WRONG_FAILING), out.getvalue()
    return dict(blocks)


def test_corpus_and_wrong_module_items_serial_junit_and_xdist(pytester, cache_dir, monkeypatch):
    corpus = sorted(CORPUS.glob("*.vmasm"))
    for path in corpus:
        shutil.copy(path, pytester.path / path.name)
    wrong = pytester.path / "wrong.vmasm"
    wrong.write_text(WRONG)
    _ini(pytester, cache_dir)
    passing = _expected_items(corpus)
    wrong_items = _expected_items([wrong])
    failing = {k: f for k, f in wrong_items.items() if f in WRONG_FAILING}
    passing.update({k: f for k, f in wrong_items.items() if f not in WRONG_FAILING})
    assert len(failing) == 3 * 4 and len(passing) >= (76 + 13 + 2) * 4

    # in this process (a pytest of its own would start and import everything again to run the
    # same items); the `-n 2` run below is the one in processes of their own
    serial = pytester.runpytest_inprocess("-p", "no:randomly", "-rN",
                                          f"--junitxml={pytester.path / 'serial.xml'}")
    serial.assert_outcomes(passed=len(passing), failed=len(failing))
    cases = _junit(pytester.path / "serial.xml")
    assert set(cases) == set(passing) | set(failing)  # the report lists every item
    assert {k for k, (o, _) in cases.items() if o == "passed"} == set(passing)

    # Each failure is `ireeabi test`'s text for that function, data model and path.
    expected = {(t, p): _ireeabi_test_failures(wrong, t, p == "reference", monkeypatch)
                for t in TARGETS for p in PATHS}
    for key, function in failing.items():
        outcome, text = cases[key]
        path, target = re.search(r"\[(\w+)-(\w+)\]$", key).groups()
        assert outcome == "failure", key
        assert text == expected[target, path][function].rstrip("\n"), key
        assert "Traceback" not in text and ".py:" not in text, key
    by_function = {f: cases[k][1] for k, f in failing.items()}
    prefix = "c/runtime/src/iree/vm/test/bytecode/bytecode_module_test.cc:97: Failure\nFailed\n"
    assert by_function["fail_returns"] == prefix + "Function expected failure but succeeded"
    assert by_function["test_fails"].startswith(
        prefix + "Function expected success but failed with error: NOT_FOUND; "
                 "deliberately wrong")
    assert by_function["test_yields_forever"] == (
        prefix + "Function expected success but failed with error: RESOURCE_EXHAUSTED; resume "
                 "limit (10000) exceeded for function 'test_yields_forever'; possible infinite "
                 "yield loop")
    assert "Traceback" not in serial.stdout.str()

    # with the suite's heap plugin: fewer collections at each session's end
    monkeypatch.setenv("PYTHONPATH", llh.child_environment()["PYTHONPATH"])
    parallel = pytester.runpytest_subprocess("-p", "no:randomly", "-n", "2", *llh.CHILD_ARGS,
                                             f"--junitxml={pytester.path / 'parallel.xml'}")
    parallel.assert_outcomes(passed=len(passing), failed=len(failing))
    assert re.search(r"created: 2/2 workers", parallel.stdout.str())
    assert _junit(pytester.path / "parallel.xml") == cases  # same items, outcomes and texts


def test_an_assembled_vm_test_module_is_collected_too(pytester, cache_dir, tmp_path):
    src = tmp_path / "wrong.vmasm"
    src.write_text(WRONG)
    shutil.copy(tools.assemble_vmasm(src), pytester.path / "wrong_module.vmfb")
    _ini(pytester, cache_dir, targets=("riscv32",))
    result = pytester.runpytest("-p", "no:randomly", "-q", "--collect-only")
    names = [line for line in result.stdout.lines if "::" in line]
    assert names == [f"wrong_module.vmfb::{f}[{p}-riscv32]" for f in _exports(src) for p in PATHS]
    run = pytester.runpytest("-p", "no:randomly")
    run.assert_outcomes(passed=2 * 2, failed=3 * 2)
    assert "Function expected failure but succeeded" in run.stdout.str()


def test_ids_carry_the_path_only_when_asked(pytester, cache_dir):
    (pytester.path / "wrong.vmasm").write_text(WRONG)
    _ini(pytester, cache_dir, paths=(), targets=("x86_64",))
    plain = pytester.runpytest("-q", "--collect-only")
    assert "wrong.vmasm::test_passes[x86_64]" in plain.stdout.lines
    asked = pytester.runpytest("-q", "--collect-only", "--ireeabi-paths=reference")
    assert "wrong.vmasm::test_passes[reference-x86_64]" in asked.stdout.lines
    assert not any(line.endswith("[x86_64]") for line in asked.stdout.lines)


def test_bad_path_is_a_usage_error(pytester):
    result = pytester.runpytest("--ireeabi-paths=fast,slow")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "unknown interpreter path 'slow'; valid: fast, reference" in result.stderr.str()


def test_an_assembly_error_is_one_failing_item(pytester, cache_dir):
    (pytester.path / "wrong.vmasm").write_text(WRONG)
    bad = pytester.path / "bad.vmasm"
    bad.write_text(WRONG.replace("  vm.return\n", "  vm.retrun\n", 1))
    line = WRONG.split("\n").index("  vm.return") + 1
    refusal = _assembler_refusal(bad)
    assert f"at line {line}" in refusal
    _ini(pytester, cache_dir, paths=(), targets=("x86_64",))
    result = pytester.runpytest("-p", "no:randomly", "-rf")
    result.assert_outcomes(passed=2, failed=1 + 3)
    out = result.stdout.str()
    assert "FAILED bad.vmasm::iree-as-module" in out
    assert f"{bad}:{line}: iree-as-module cannot assemble it: {refusal}" in out
    assert "Traceback" not in out


def _assembler_refusal(src: Path) -> str:
    """iree-as-module's own message for `src` (run directly: the oracle)."""
    proc = subprocess.run([tools.find_tool("iree-as-module"), "--output=/dev/null", str(src)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0
    return proc.stderr.strip()


# ------------------------------------------------------------------------ the assembler's cache

FAKE_ASSEMBLER = """#!{python}
import sys, time
# {tag}
log = {log!r}
source = sys.stdin.read()
with open(log, "a") as f:
    f.write(" ".join(sys.argv[1:]) + "\\n")
if "BAD" in source:
    sys.stderr.write("parser.c:1: INVALID_ARGUMENT; BAD is no VM assembly; at line 1\\n")
    sys.exit(1)
time.sleep(0.5)  # long enough for the other threads to arrive while it runs
out = sys.argv[1].partition("=")[2]
with open(out, "w") as f:
    f.write("module of " + source)
"""


def _fake_assembler(tmp_path: Path, tag: str = "one") -> tuple[Path, Path]:
    exe, log = tmp_path / "fake-iree-as-module", tmp_path / "assembles.log"
    exe.write_text(FAKE_ASSEMBLER.format(python=sys.executable, log=str(log), tag=tag))
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    if not log.exists():
        log.write_text("")
    return exe, log


def test_concurrent_assemblies_of_one_key_run_the_assembler_once(tmp_path):
    exe, log = _fake_assembler(tmp_path)
    src = tmp_path / "m.vmasm"
    src.write_text("vm.module @m version 0\n")
    cache = tmp_path / "cache"
    results: list = []

    def assemble_once() -> None:  # each thread its own Assembler, as each xdist worker has
        results.append(Assembler(cache, path=str(exe)).assemble(src))

    threads = [threading.Thread(target=assemble_once) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4 and len(set(results)) == 1
    assert results[0].read_text() == "module of vm.module @m version 0\n"
    assert log.read_text().count("\n") == 1  # one assembly, three readers
    assert not list(cache.glob("*.tmp"))
    # Another version of the tool is another key; the same one hits the cache.
    _fake_assembler(tmp_path, tag="two")
    again = Assembler(cache, path=str(exe)).assemble(src)
    assert again != results[0] and log.read_text().count("\n") == 2
    assert Assembler(cache, path=str(exe)).assemble(src) == again
    assert log.read_text().count("\n") == 2


def test_an_assembly_refusal_is_cached_and_reported_again(tmp_path):
    exe, log = _fake_assembler(tmp_path)
    src = tmp_path / "bad.vmasm"
    src.write_text("BAD\n")
    for _ in range(2):
        with pytest.raises(CompileError) as e:
            Assembler(tmp_path / "cache", path=str(exe)).assemble(src)
        assert e.value.returncode == 1 and e.value.tool == "iree-as-module"
        assert "BAD is no VM assembly; at line 1" in e.value.stderr
    assert log.read_text().count("\n") == 1


def test_the_real_assemblers_version_names_its_wheel(tmp_path):
    assert f"iree-base-runtime {version('iree-base-runtime')}" in Assembler(tmp_path).version
