"""`ireeabi test` on VM test modules, as IREE's bytecode_module_test runs them.

The rules come from runtime/src/iree/vm/test/bytecode/bytecode_module_test.cc and
runtime/src/iree/vm/testing/test_runner.{h,cc}: every export is a test named
`<module file>_<function>` in `bytecode/VMBytecodeTest.Check/`, `fail_*` must fail, the output is
gtest's, and the binary exits 1 when a test does not behave. Modules are assembled by
iree-as-module (3.13).
"""
from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest

from support import iree_tools as tools
from ireeabi.cli.main import main

PASS_AND_FAIL = """\
vm.module @mixed version 0
vm.type i32

vm.export @test_returns
vm.func @test_returns() -> () {
^bb0:
  vm.return
}

vm.export @test_fails
vm.func @test_fails() -> () {
^bb0:
  %i0 = vm.const.i32 3
  vm.fail %i0, "wrong expectation"
}

vm.export @fail_returns
vm.func @fail_returns() -> () {
^bb0:
  vm.return
}

vm.export @fail_fails
vm.func @fail_fails() -> () {
^bb0:
  %i0 = vm.const.i32 9
  vm.fail %i0, "as expected"
}
"""


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = main(list(argv), stdout=out, stderr=err)
    return rc, out.getvalue(), err.getvalue()


def _normalized(text: str) -> str:
    return re.sub(r"\(\d+ ms( total)?\)", r"(N ms\1)", text)


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    path = tmp_path / "mixed.vmasm"
    path.write_text(PASS_AND_FAIL)
    return path


def test_wrong_expectations_exit_1_naming_the_tests(mixed):
    """A test_ function that fails and a fail_ function that returns are both failures, each with
    the runner's GTEST_FAIL text (test_runner.h's IREE_VM_TEST_F); the others pass."""
    rc, out, err = cli("test", str(mixed))
    assert (rc, err) == (1, "")
    suite = "bytecode/VMBytecodeTest"
    name = "bytecode/VMBytecodeTest.Check/mixed_vmfb_"
    where = "c/runtime/src/iree/vm/test/bytecode/bytecode_module_test.cc:97: Failure\nFailed\n"
    assert _normalized(out) == (
        "[==========] Running 4 tests from 1 test suite.\n"
        "[----------] Global test environment set-up.\n"
        f"[----------] 4 tests from {suite}\n"
        f"[ RUN      ] {name}test_returns\n"
        f"[       OK ] {name}test_returns (N ms)\n"
        f"[ RUN      ] {name}test_fails\n"
        f"{where}Function expected success but failed with error: INVALID_ARGUMENT; wrong expectation "
        f"(in test_fails at pc 0x8)\n"
        f"[  FAILED  ] {name}test_fails, where GetParam() = mixed_vmfb_test_fails (N ms)\n"
        f"[ RUN      ] {name}fail_returns\n"
        f"{where}Function expected failure but succeeded\n"
        f"[  FAILED  ] {name}fail_returns, where GetParam() = mixed_vmfb_fail_returns (N ms)\n"
        f"[ RUN      ] {name}fail_fails\n"
        f"[       OK ] {name}fail_fails (N ms)\n"
        f"[----------] 4 tests from {suite} (N ms total)\n\n"
        "[----------] Global test environment tear-down\n"
        "[==========] 4 tests from 1 test suite ran. (N ms total)\n"
        "[  PASSED  ] 2 tests.\n"
        "[  FAILED  ] 2 tests, listed below:\n"
        f"[  FAILED  ] {name}test_fails, where GetParam() = mixed_vmfb_test_fails\n"
        f"[  FAILED  ] {name}fail_returns, where GetParam() = mixed_vmfb_fail_returns\n"
        "\n 2 FAILED TESTS\n")


def test_the_status_text_is_iree_run_modules(mixed):
    """vm.fail's code 3 and message, as iree-run-module prints the failed call's status."""
    proc = tools.run_module_status(tools.assemble_vmasm(mixed), "test_fails")
    assert proc.returncode != 0
    code = re.search(r"\b([A-Z_]+); wrong expectation", proc.stderr).group(1)
    assert code == "INVALID_ARGUMENT"
    rc, out, _ = cli("test", str(mixed), "--function", "test_fails")
    assert rc == 1 and f"failed with error: {code}; wrong expectation" in out


def test_passing_functions_exit_0_and_function_selects(mixed):
    rc, out, err = cli("test", str(mixed), "-f", "fail_fails", "-f", "test_returns")
    assert (rc, err) == (0, "")
    runs = re.findall(r"\[ RUN      \] \S+Check/(\S+)", out)
    assert runs == ["mixed_vmfb_test_returns", "mixed_vmfb_fail_fails"]  # the module's order
    assert _normalized(out).endswith("[  PASSED  ] 2 tests.\n")
    rc, out, err = cli("test", str(mixed), "-f", "nope")
    assert (rc, out) == (1, "") and "no exported function 'nope'" in err


def test_an_assembled_vmfb_is_a_vm_test_module_too(mixed):
    """No check imports and every export () -> (): run as bytecode_module_test runs it, the test
    named after the .vmfb file; `--runner check` runs it as iree-check-module would (suite: the
    module's name, fail_* not special)."""
    vmfb = tools.assemble_vmasm(mixed)
    rc, out, _ = cli("test", str(vmfb))
    assert rc == 1 and f"Check/{re.sub('[.:]', '_', vmfb.name)}_test_fails, where" in out
    assert out.count("[  FAILED  ]") == 2 + 1 + 2  # each, the count, the list
    rc, out, _ = cli("test", str(vmfb), "--runner", "check")
    assert rc == 1 and "[ RUN      ] mixed.fail_fails\n" in out
    assert "[  FAILED  ] mixed.fail_fails, where GetParam() = 3 (" in out
    assert out.endswith("Test failed\nOK\n")


@pytest.mark.parametrize("target", ["riscv32", "wasm32"])
def test_same_output_on_other_data_models(mixed, target):
    host = _normalized(cli("test", str(mixed))[1])
    rc, out, err = cli("test", str(mixed), "--target", target)
    assert (rc, err) == (1, "") and _normalized(out) == host


def test_an_assembly_error_names_the_line(tmp_path):
    """iree-as-module's message (`at line N`), with the line quoted."""
    bad = tmp_path / "bad.vmasm"
    bad.write_text(PASS_AND_FAIL.replace("  vm.return\n", "  vm.retrun\n", 1))
    line = PASS_AND_FAIL.split("\n").index("  vm.return") + 1
    rc, out, err = cli("test", str(bad))
    text = " ".join(err.split())
    assert rc != 0 and out == ""
    assert f"{bad}:{line}: iree-as-module cannot assemble it:" in text
    assert f"at line {line} (line {line}: vm.retrun)" in text


def test_a_missing_assembler_is_a_clear_error(mixed, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing there
    monkeypatch.setenv("IREEABI_CACHE_DIR", str(tmp_path / "cache"))
    assert shutil.which("iree-as-module") is None
    rc, out, err = cli("test", str(mixed))
    assert rc != 0 and out == ""
    assert "iree-as-module not found on PATH" in " ".join(err.split())


def test_assembled_modules_are_cached_by_content(mixed, monkeypatch, tmp_path):
    from ireeabi.tooling.vm_test_module import assemble

    monkeypatch.setenv("IREEABI_CACHE_DIR", str(tmp_path / "cache"))
    first = assemble(mixed)
    assert first.is_file() and assemble(mixed) == first
    mixed.write_text(PASS_AND_FAIL.replace("wrong expectation", "another text"))
    second = assemble(mixed)
    assert second != first and b"another text" in second.read_bytes()


def test_an_unresolved_import_fails_each_test_in_setup(tmp_path):
    """The context cannot be made (a non-optional import of a module nobody registers): every test,
    fail_ ones too, fails with SetUp's IREE_ASSERT_OK text; iree-run-module refuses it with the same
    code."""
    src = tmp_path / "needs.vmasm"
    src.write_text("vm.module @needs version 0\nvm.type i32\n"
                   'vm.import @nowhere.fn cconv "0i_i"\n'
                   "vm.export @fail_call\nvm.func @fail_call() -> () {\n^bb0:\n"
                   "  %i0 = vm.const.i32 1\n  %i1 = vm.call @nowhere.fn(%i0)\n  vm.return\n}\n")
    proc = tools.run_module_status(tools.assemble_vmasm(src), "fail_call")
    assert proc.returncode != 0 and "NOT_FOUND; module 'nowhere' required for import" in proc.stderr
    rc, out, err = cli("test", str(src))
    assert (rc, err) == (1, "")
    assert ("c/runtime/src/iree/vm/testing/test_runner.h:123: Failure\n"
            "Value of: ::iree::internal::ConsumeForTest(iree_vm_context_create_with_modules(") in out
    assert "whose error code is NOT_FOUND: import nowhere.fn: module 'nowhere' required" in out
    assert "[  FAILED  ] bytecode/VMBytecodeTest.Check/needs_vmfb_fail_call, where" in out
