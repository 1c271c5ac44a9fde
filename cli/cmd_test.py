"""`ireeabi test MODULE.vmfb [--function F]...`: run a check-style module as iree-check-module does.

iree-check-module (IREE's tools/iree-check-module-main.cc) registers one gtest test per exported
function of the module (suite: the module's name, test: the function, value parameter: its export
ordinal), skipping internal (`__...`) and special (`$` in the name) functions, and refuses a module
whose exports take inputs or return results. Each test invokes its function in a fresh context with
IREE's `check` module; a failed expectation is a gtest failure and the function runs on. The output
is gtest's (its pretty printer: RUN / OK / FAILED lines, each failure with its source location and
message, the summary), then `Test failed` and the run's status when any test failed.

Here every function runs in a fresh `Program` (a fresh context, as the tool's SetUp makes) with
ireeabi's `check` module (`ireeabi.modules.check`) and any `--native-module`; a module of
iree-compile's default execution model gets the full `hal` module there, as with `run`. `--function` runs
only the functions named, in the module's order (the tool selects with --gtest_filter). Times are
the host's, in milliseconds as gtest prints them.

An async-external module's tests take a wait and a signal fence (`iree.abi.model` coarse-fences):
each runs as iree-run-module runs such a function (`Program.call` appends a null wait fence and a
new signal fence, then waits on it). iree-check-module itself counts the fences as arguments and
refuses the module ("expected function with no inputs or outputs"); here it runs.

Exit status: 0 when every test passed, 1 when any failed (or the module cannot run at all).
"""
from __future__ import annotations

import argparse
import time
from typing import Any, TextIO

from ireeabi.modules.check import CHECK_MODULE, CHECK_MODULE_NAME, Failure
from ireeabi.tooling.execution_model import FENCE_ARGUMENTS, takes_fences
from ireeabi.tooling.program import Program
from ireeabi.vm.bytecode.errors import VmStatusError
from ireeabi.vm.status import StatusError

from .cmd_inspect import load as load_module
from .cmd_run import parse_cpu_seconds, parse_heap_limit, parse_max_steps
from .errors import CliError
from .resolve import load_native_modules, resolve_target

# Where gtest places IREE_EXPECT_OK(status) of CheckModuleTest::TestBody (the revision modelled).
TOOL_SOURCE = "c/tools/iree-check-module-main.cc"
EXPECT_OK_LINE = 78


def add_parser(sub: "argparse._SubParsersAction") -> None:
    p = sub.add_parser(
        "test", help="run a check-style module's tests (like iree-check-module)",
        description="Runs every exported function of MODULE (or those --function names), each with "
                    "IREE's check module, and prints what iree-check-module prints. Exit 0 when all "
                    "pass, 1 when any fails.")
    p.add_argument("module", metavar="MODULE.vmfb")
    p.add_argument("--function", "-f", action="append", default=[], metavar="F",
                   help="run only this function (repeatable)")
    p.add_argument("--target", "-t", metavar="T", default=None,
                   help="data model to run on (default: the host's)")
    p.add_argument("--native-module", action="append", default=[], metavar="PKG.MOD[:FACTORY]",
                   help="a native module of one's own to run with (repeatable; see `ireeabi run`)")
    p.add_argument("--heap-limit", type=parse_heap_limit, default=None, metavar="SIZE",
                   help="bound the program's live heap bytes (e.g. 64M, 2G; default: the host's "
                        "memory within the target's address window)")
    p.add_argument("--max-steps", "--max_steps", dest="max_steps", type=parse_max_steps,
                   default=None, metavar="N", help="fail a function after N instructions")
    p.add_argument("--kernel-cpu-time", dest="kernel_cpu_time", type=parse_cpu_seconds,
                   default=None, metavar="SECONDS",
                   help="fail a native kernel dispatch after SECONDS of CPU time (see `ireeabi run`)")


def _plural(n: int, one: str, many: str) -> str:
    """gtest's FormatCountableNoun."""
    return f"{n} {one if n == 1 else many}"


def _ms(seconds: float) -> str:
    return str(int(seconds * 1000))


def command(args: argparse.Namespace, out: TextIO) -> int:
    target = resolve_target(args.target) if args.target is not None else None
    extra = load_native_modules(args.native_module)
    modules = {CHECK_MODULE_NAME: CHECK_MODULE}
    modules.update((d.name, d) for d in extra)  # one's own `check` replaces ireeabi's
    module = load_module(args.module)
    tests = _tests(module, args.function)
    suite = module.name
    out.write(f"[==========] Running {_plural(len(tests), 'test', 'tests')} from 1 test suite.\n"
              f"[----------] Global test environment set-up.\n"
              f"[----------] {_plural(len(tests), 'test', 'tests')} from {suite}\n")
    failed: list[tuple[str, int]] = []
    start = time.monotonic()
    for name, ordinal in tests:
        out.write(f"[ RUN      ] {suite}.{name}\n")
        began = time.monotonic()
        failures = _run_one(module, name, args, target, list(modules.values()))
        for f in failures:
            out.write(f if isinstance(f, str) else f.report())
        took = _ms(time.monotonic() - began)
        if failures:
            failed.append((name, ordinal))
            out.write(f"[  FAILED  ] {suite}.{name}, where GetParam() = {ordinal} ({took} ms)\n")
        else:
            out.write(f"[       OK ] {suite}.{name} ({took} ms)\n")
    total = _ms(time.monotonic() - start)
    out.write(f"[----------] {_plural(len(tests), 'test', 'tests')} from {suite} ({total} ms total)\n\n"
              f"[----------] Global test environment tear-down\n"
              f"[==========] {_plural(len(tests), 'test', 'tests')} from 1 test suite ran. "
              f"({total} ms total)\n"
              f"[  PASSED  ] {_plural(len(tests) - len(failed), 'test', 'tests')}.\n")
    if not failed:
        return 0
    out.write(f"[  FAILED  ] {_plural(len(failed), 'test', 'tests')}, listed below:\n")
    for name, ordinal in failed:
        out.write(f"[  FAILED  ] {suite}.{name}, where GetParam() = {ordinal}\n")
    out.write(f"\n{len(failed):2d} FAILED {'TEST' if len(failed) == 1 else 'TESTS'}\n")
    out.write("Test failed\nOK\n")  # the tool's own line, with its (OK) run status
    return 1


def _tests(module: Any, names: list[str]) -> list[tuple[str, int]]:
    """(function, export ordinal) of every test, as the tool registers them; INVALID_ARGUMENT for an
    export with inputs or results, as the tool refuses it."""
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
            raise CliError(f"INVALID_ARGUMENT; expected function with no inputs or outputs, but "
                           f"export '{f.name}' has signature '{f.cconv}'")
        tests.append((f.name, ordinal))
    unknown = [n for n in names if n not in {t[0] for t in tests}]
    if unknown:
        raise CliError(f"NOT_FOUND; no test function {', '.join(map(repr, unknown))} in module "
                       f"{module.name} (its tests: {', '.join(t[0] for t in tests) or 'none'})")
    return tests


def _run_one(module: Any, name: str, args: argparse.Namespace, target: Any,
             modules: list) -> "list[Failure | str]":
    """One test: a fresh program (context), the call, the failures it recorded in order; a failing
    call adds IREE_EXPECT_OK's failure after them."""
    program = Program(module, target=target, modules=modules, heap_limit=args.heap_limit,
                      max_steps=args.max_steps, kernel_cpu_time=args.kernel_cpu_time)
    failures: list[Failure | str] = []
    try:
        state = program.runtime.modules[CHECK_MODULE_NAME].state
        try:
            program.call(name)
        except (StatusError, VmStatusError) as e:  # a failing status; a trap crashes the tool
            failures += _take(state)
            failures.append(_status_failure(e))
        else:
            failures += _take(state)
    finally:
        program.close()
    return failures


def _take(state: Any) -> list:
    take = getattr(state, "take", None)
    return take() if callable(take) else []


def _status_failure(e: "StatusError | VmStatusError") -> str:
    """IREE_EXPECT_OK(status) on a failed invoke: gmock's StatusIs(kOk) text."""
    code = e.code.name if hasattr(e.code, "name") else str(e.code)
    message = e.detail if isinstance(e, VmStatusError) else e.status.message
    text = str(e) if isinstance(e, VmStatusError) else e.status.format()
    return (f"{TOOL_SOURCE}:{EXPECT_OK_LINE}: Failure\n"
            f"Value of: ::iree::internal::ConsumeForTest(status)\n"
            f"Expected: error code OK\n"
            f"  Actual: {text}, whose error code is {code}: {message}\n")


__all__ = ["add_parser", "command"]
