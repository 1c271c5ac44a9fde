"""A check-style module's tests, registered and run as iree-check-module runs them.

iree-check-module (IREE's tools/iree-check-module-main.cc) registers one gtest test per exported
function of the module (value parameter: its export ordinal), skipping internal (`__...`) and
special (`$` in the name) functions, and refuses a module whose exports take inputs or return
results. Each test invokes its function in a fresh context with IREE's `check` module; a failed
expectation is a gtest failure (`modules.check.Failure`, module.cc's text) and the function runs
on; a failing call adds IREE_EXPECT_OK's failure after them.

`ireeabi test` (cli/cmd_test.py) prints these failures inside gtest's output; the pytest plugin
(tooling/check_items.py) shows them as a failing item's report. An async-external module's tests
take only a wait and a signal fence, which `Program.call` appends (iree-check-module itself refuses
such a module; here it runs).
"""
from __future__ import annotations

from typing import Any, Sequence

from ..abi.errors import IreeAbiError
from ..modules.check import CHECK_MODULE_NAME, Failure
from ..vm.errors import VmStatusError
from ..vm.bytecode.module_file import ModuleFile
from ..base.status import StatusError

from .execution_model import FENCE_ARGUMENTS, takes_fences
from .program import Program, RunOptions

# Where gtest places IREE_EXPECT_OK(status) of CheckModuleTest::TestBody (the revision modelled).
TOOL_SOURCE = "c/tools/iree-check-module-main.cc"
EXPECT_OK_LINE = 78


class CheckTestError(IreeAbiError):
    """A module iree-check-module refuses (an export with inputs or results), or a test function
    that the module does not have; the message is the tool's status text."""


def check_tests(module: ModuleFile, names: Sequence[str] = ()) -> list[tuple[str, int]]:
    """(function, export ordinal) of every test, as the tool registers them (only those `names`
    when given); CheckTestError (INVALID_ARGUMENT) for an export with inputs or results, as the
    tool refuses it, and (NOT_FOUND) for a name that is no test."""
    tests = []
    for ordinal, f in enumerate(module.exported_functions):
        if f.name.startswith("__") or "$" in f.name:
            continue  # internal or special functions
        if names and f.name not in names:
            continue
        sig = f.signature
        # An async-external test takes only its wait and signal fences, which the run appends.
        fences = "r" * FENCE_ARGUMENTS if takes_fences(f) else ""
        if sig is None or sig.arguments.text != fences or sig.results.text:
            raise CheckTestError(f"INVALID_ARGUMENT; expected function with no inputs or outputs, "
                                 f"but export '{f.name}' has signature '{f.cconv}'")
        tests.append((f.name, ordinal))
    unknown = [n for n in names if n not in {t[0] for t in tests}]
    if unknown:
        raise CheckTestError(f"NOT_FOUND; no test function {', '.join(map(repr, unknown))} in "
                             f"module {module.name} (its tests: "
                             f"{', '.join(t[0] for t in tests) or 'none'})")
    return tests


def run_check_test(module: ModuleFile, name: str, options: RunOptions) -> "list[Failure | str]":
    """One test: a fresh program (context) run as `options` say, whose `modules` must include a
    `check` module; the call, the failures it recorded in order; a failing call adds
    IREE_EXPECT_OK's failure after them. A trap (which crashes the tool) propagates."""
    failures: list[Failure | str] = []
    with Program(module, options) as program:
        state = program.runtime.modules[CHECK_MODULE_NAME].state
        try:
            program.call(name)
        except (StatusError, VmStatusError) as e:  # a failing status; a trap crashes the tool
            failures += take_failures(state)
            failures.append(status_failure(e))
        else:
            failures += take_failures(state)
    return failures


def take_failures(state: Any) -> list:
    """The failures a check module's state recorded (none for one's own without `take`)."""
    take = getattr(state, "take", None)
    return take() if callable(take) else []


def status_failure(e: "StatusError | VmStatusError") -> str:
    """IREE_EXPECT_OK(status) on a failed invoke: gmock's StatusIs(kOk) text."""
    code = e.code.name if hasattr(e.code, "name") else str(e.code)
    message = e.detail if isinstance(e, VmStatusError) else e.status.message
    text = str(e) if isinstance(e, VmStatusError) else e.status.format()
    return (f"{TOOL_SOURCE}:{EXPECT_OK_LINE}: Failure\n"
            f"Value of: ::iree::internal::ConsumeForTest(status)\n"
            f"Expected: error code OK\n"
            f"  Actual: {text}, whose error code is {code}: {message}\n")


def failure_text(failures: "Sequence[Failure | str]") -> str:
    """The failures as gtest prints them, in order (what `ireeabi test` prints between a failing
    test's RUN and FAILED lines)."""
    return "".join(f if isinstance(f, str) else f.report() for f in failures)


__all__ = ["TOOL_SOURCE", "EXPECT_OK_LINE", "CheckTestError", "check_tests", "run_check_test",
           "take_failures", "status_failure", "failure_text"]
