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

A module that imports nothing from `check` and whose exports all take and return nothing is a VM
test module instead, and runs as IREE's bytecode_module_test runs one (tooling/vm_test_module.py):
every export a test, `fail_*` ones expected to fail, gtest's output under the suite
`bytecode/VMBytecodeTest`. A `.vmasm` file is assembled with iree-as-module first and is always a VM
test module. `--runner check|vm` chooses the way against that rule.

Exit status: 0 when every test passed, 1 when any failed (or the module cannot run at all).
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, Sequence, TextIO

from ..abi.errors import IreeAbiError
from ..modules.check import CHECK_MODULE, CHECK_MODULE_NAME
from ..tooling.check_tests import check_tests, run_check_test
from ..tooling.program import RunOptions
from ..tooling.vm_test_module import (SUITE, assemble, check_loads, is_vm_test_module,
                                            run_vm_test, vm_tests)

from .errors import CliError
from .loading import (load_module, load_native_modules, parse_cpu_seconds, parse_heap_limit,
                      parse_max_steps, resolve_target)

# iree-check-module, as iree-run-module, exits 1 when the module cannot run at all.
ERROR_STATUS = 1

VMASM_SUFFIX = ".vmasm"


RUNNERS = ("auto", "check", "vm")


def add_parser(sub: "argparse._SubParsersAction") -> None:
    p = sub.add_parser(
        "test", help="run a module's tests (like iree-check-module, or IREE's VM test runner)",
        description="Runs every exported function of MODULE (or those --function names), each in a "
                    "fresh context. A check program (it imports IREE's check module) runs with it "
                    "and prints what iree-check-module prints; a VM test module (no check imports, "
                    "every export () -> (); or a .vmasm file, assembled with iree-as-module) runs "
                    "as IREE's bytecode_module_test runs one: fail_* functions must fail, the others "
                    "return. Exit 0 when all pass, 1 when any fails.")
    p.add_argument("module", metavar="MODULE.vmfb|MODULE.vmasm")
    p.add_argument("--function", "-f", action="append", default=[], metavar="F",
                   help="run only this function (repeatable)")
    p.add_argument("--runner", choices=RUNNERS, default="auto",
                   help="check: as iree-check-module; vm: as bytecode_module_test; auto (default): "
                        "vm for a .vmasm file or a module without check imports whose exports all "
                        "take and return nothing, else check")
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


class _Gtest:
    """gtest's pretty printer for one value-parameterized suite: header, RUN / OK / FAILED lines
    (a failed test names its parameter: `, where GetParam() = P`), the summary."""

    def __init__(self, out: TextIO, suite: str, count: int) -> None:
        self.out, self.suite, self.count = out, suite, count
        self.failed: list[tuple[str, str]] = []
        out.write(f"[==========] Running {_plural(count, 'test', 'tests')} from 1 test suite.\n"
                  f"[----------] Global test environment set-up.\n"
                  f"[----------] {_plural(count, 'test', 'tests')} from {suite}\n")
        self.start = time.monotonic()
        self.began = self.start

    def run(self, name: str) -> None:
        self.out.write(f"[ RUN      ] {name}\n")
        self.began = time.monotonic()

    def end(self, name: str, param: str, failures: Sequence[str]) -> None:
        for f in failures:
            self.out.write(f)
        took = _ms(time.monotonic() - self.began)
        if failures:
            self.failed.append((name, param))
            self.out.write(f"[  FAILED  ] {name}, where GetParam() = {param} ({took} ms)\n")
        else:
            self.out.write(f"[       OK ] {name} ({took} ms)\n")

    def finish(self) -> bool:
        """The summary; True when every test passed."""
        n, total = self.count, _ms(time.monotonic() - self.start)
        self.out.write(f"[----------] {_plural(n, 'test', 'tests')} from {self.suite} ({total} ms total)\n\n"
                       f"[----------] Global test environment tear-down\n"
                       f"[==========] {_plural(n, 'test', 'tests')} from 1 test suite ran. "
                       f"({total} ms total)\n"
                       f"[  PASSED  ] {_plural(n - len(self.failed), 'test', 'tests')}.\n")
        if not self.failed:
            return True
        self.out.write(f"[  FAILED  ] {_plural(len(self.failed), 'test', 'tests')}, listed below:\n")
        for name, param in self.failed:
            self.out.write(f"[  FAILED  ] {name}, where GetParam() = {param}\n")
        self.out.write(f"\n{len(self.failed):2d} FAILED {'TEST' if len(self.failed) == 1 else 'TESTS'}\n")
        return False


def _options(args: argparse.Namespace, target: Any, modules: list) -> RunOptions:
    """The run of every test: the command line's target, bounds and native modules."""
    return RunOptions(target=target, modules=modules, heap_limit=args.heap_limit,
                      max_steps=args.max_steps, kernel_cpu_time=args.kernel_cpu_time)


def command(args: argparse.Namespace, out: TextIO) -> int:
    target = resolve_target(args.target) if args.target is not None else None
    extra = load_native_modules(args.native_module)
    path = args.module
    vmasm = path.endswith(VMASM_SUFFIX)
    if vmasm:
        if not Path(path).is_file():
            raise CliError(f"no VM assembly file at {path}")
        path = str(assemble(path))
    module = load_module(path)
    runner = args.runner
    if runner == "auto":
        runner = "vm" if vmasm or is_vm_test_module(module) else "check"
    if runner == "vm":
        file_name = (Path(args.module).stem + ".vmfb") if vmasm else Path(args.module).name
        return _vm_command(module, file_name, args, target, extra, out)
    modules = {CHECK_MODULE_NAME: CHECK_MODULE}
    modules.update((d.name, d) for d in extra)  # one's own `check` replaces ireeabi's
    options = _options(args, target, list(modules.values()))
    tests = check_tests(module, args.function)
    gtest = _Gtest(out, module.name, len(tests))
    for name, ordinal in tests:
        gtest.run(f"{module.name}.{name}")
        failures = run_check_test(module, name, options)
        gtest.end(f"{module.name}.{name}", str(ordinal),
                  [f if isinstance(f, str) else f.report() for f in failures])
    if gtest.finish():
        return 0
    out.write("Test failed\nOK\n")  # the tool's own line, with its (OK) run status
    return 1


def _vm_command(module: Any, file_name: str, args: argparse.Namespace, target: Any,
                extra: list, out: TextIO) -> int:
    """bytecode_module_test's run of one module: every export, fresh context each."""
    try:
        tests = vm_tests(module, file_name, args.function)
    except IreeAbiError as e:
        raise CliError(str(e)) from e
    options = _options(args, target, extra)
    # The module is made (and verified) once before any test, as bytecode_module_test makes it while
    # it lists the tests: a module IREE's verifier refuses aborts the run before any output (the
    # bounds are each test's: a bounded __init fails the tests, not the listing).
    check_loads(module, RunOptions(target=target, modules=extra, heap_limit=args.heap_limit))
    gtest = _Gtest(out, SUITE, len(tests))
    for test in tests:
        gtest.run(test.full_name)
        outcome = run_vm_test(module, test, options)
        failure = outcome.failure()
        gtest.end(test.full_name, test.name, [failure] if failure else [])
    return 0 if gtest.finish() else 1


__all__ = ["add_parser", "command", "ERROR_STATUS"]
