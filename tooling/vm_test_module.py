"""VM test modules: every export a test, `fail_*` expected to fail, as IREE's bytecode VM tests run.

IREE tests its bytecode interpreter with modules written in VM assembly
(runtime/src/iree/vm/test/*.vmasm, assembled by `iree-as-module`), run by
runtime/src/iree/vm/test/bytecode/bytecode_module_test.cc through the shared fixture
runtime/src/iree/vm/testing/test_runner.h:

- every exported function of the module is a test (no name is skipped: `__init` too); the test's
  name is `<module file>_<function>` with ':' and '.' made '_' (the file is `x.vmfb`, so
  `x_vmfb_test_add`), in the gtest suite `bytecode/VMBytecodeTest`, test `Check/<name>`;
- each test gets a fresh context (the prerequisite modules, then the module under test) and calls
  its function with no arguments and no result storage, resuming it after each yield up to
  test_runner.h's limit of 10000 resumes (then RESOURCE_EXHAUSTED, "resume limit ... exceeded");
- a function whose name starts with `fail_` passes when the call returns a failing status and fails
  ("Function expected failure but succeeded") when it returns; any other passes when the call
  returns OK and fails with the status text otherwise ("Function expected success but failed with
  error: ...").

What is not a status is not a failure there: an integer division by zero or a signed division
overflow is undefined in IREE's VM (vm/ops.h divides natively: SIGFPE on x86) and kills the test
binary, so a trap (`VmTrapError`) is not caught here either.

Here each test runs in a fresh `Program` (tooling/program.py: a context on a fresh heap of the
target's data model, with the native modules the module imports). bytecode_module_test always puts
IREE's `yieldable_test` native module first; here a module that imports it gets it where a
registered native module of that name exists (as any other import). An export that takes inputs
cannot be called with none: it fails with INVALID_ARGUMENT before it runs. Results of an export
that returns some are released unread.

A `.vmasm` file is assembled with `iree-as-module` (from iree-base-runtime) through the cache of
tooling/check_compile.py (`Assembler`: keyed by the source's bytes and the tool's version; in
`IREEABI_CACHE_DIR`, else `$TMPDIR/ireeabi-<uid>`, or the pytest plugin's cache folder); a missing
tool or a failed assembly is a `VmAsmError` naming the line.
"""
from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..abi.errors import IreeAbiError
from ..vm.errors import ArgumentError, ImportResolutionError, VmStatusError
from ..vm.list import VmList
from ..layouts.modules import ModuleDescriptor
from ..vm.invocation import TEST_RUNNER_MAX_RESUMES
from ..vm.bytecode.module_file import ModuleFile
from ..vm.ref import Ref
from ..base.status import StatusCode, StatusError

from .check_compile import ASSEMBLER, Assembler, AssemblerNotFoundError, CompileError
from .check_compile import find_assembler as _find_assembler
from .program import Program, RunOptions

SUITE = "bytecode/VMBytecodeTest"
CHECK_MODULE_NAME = "check"
FAIL_PREFIX = "fail_"
# Where gtest places the runner's GTEST_FAIL()s: IREE_VM_TEST_F(VMBytecodeTest) in
# bytecode_module_test.cc (the revision read), under the wheel's source prefix `c/`.
TEST_SOURCE = "c/runtime/src/iree/vm/test/bytecode/bytecode_module_test.cc"
TEST_LINE = 97
# VMTestRunner::SetUp's IREE_ASSERT_OK of the context's creation (test_runner.h, same revision).
SETUP_SOURCE = "c/runtime/src/iree/vm/testing/test_runner.h"
SETUP_LINE = 123
SETUP_EXPRESSION = ("iree_vm_context_create_with_modules( instance_, IREE_VM_CONTEXT_FLAG_NONE, "
                    "modules.size(), modules.data(), iree_allocator_system(), &context_)")
_LINE = re.compile(r"at line (\d+)")


class VmAsmError(IreeAbiError):
    """A `.vmasm` file that could not be assembled: the tool is missing, or it refused the source
    (`line`: the 1-based line iree-as-module named, None when it named none)."""

    def __init__(self, path: str, message: str, line: int | None = None) -> None:
        self.path = path
        self.line = line
        super().__init__(message)


@dataclass(frozen=True)
class VmTest:
    """One test: the export it calls, its gtest name, and whether it must fail."""

    function: str
    name: str  # `<file>_vmfb_<function>`, the parameter's printed name

    @property
    def expects_failure(self) -> bool:
        return self.function.startswith(FAIL_PREFIX)

    @property
    def full_name(self) -> str:
        """gtest's `suite.test` name of the test."""
        return f"{SUITE}.Check/{self.name}"


@dataclass(frozen=True)
class VmTestOutcome:
    """What a test's call did: `status` is the failing status it returned (None: it returned OK)."""

    test: VmTest
    status: "StatusError | VmStatusError | None"
    setup: "StatusError | None" = None  # the context could not be made: the test fails in SetUp

    @property
    def passed(self) -> bool:
        return self.setup is None and (self.status is not None) == self.test.expects_failure

    def failure(self) -> str | None:
        """gtest's failure text for the runner's GTEST_FAIL, or for SetUp's IREE_ASSERT_OK of the
        context (None when the test passed)."""
        if self.passed:
            return None
        if self.setup is not None:
            return (f"{SETUP_SOURCE}:{SETUP_LINE}: Failure\n"
                    f"Value of: ::iree::internal::ConsumeForTest({SETUP_EXPRESSION})\n"
                    f"Expected: error code OK\n"
                    f"  Actual: {status_text(self.setup)}, whose error code is "
                    f"{self.setup.code.name}: {self.setup.message}\n")
        if self.status is None:
            message = "Function expected failure but succeeded"
        else:
            message = f"Function expected success but failed with error: {status_text(self.status)}"
        return f"{TEST_SOURCE}:{TEST_LINE}: Failure\nFailed\n{message}\n"


def status_text(e: "StatusError | VmStatusError") -> str:
    """The IREE text of a failing status (`CODE; message; annotations`)."""
    return str(e) if isinstance(e, VmStatusError) else e.status.format()


def imports_check(module: ModuleFile) -> bool:
    """True when the module imports from IREE's `check` module (a check program, as
    iree-check-module runs it)."""
    return any(f.module == CHECK_MODULE_NAME for f in module.imported_functions)


def is_vm_test_module(module: ModuleFile) -> bool:
    """True for what bytecode_module_test runs rather than iree-check-module: no `check` imports,
    and every export takes and returns nothing."""
    if imports_check(module):
        return False
    for f in module.exported_functions:
        sig = f.signature
        if sig is None or sig.arguments.text or sig.results.text:
            return False
    return True


def gtest_name(file_name: str, function: str) -> str:
    """test_runner.cc's printed parameter: `<module file>_<function>`, ':' and '.' as '_'."""
    return re.sub(r"[:.]", "_", f"{file_name}_{function}")


def vm_tests(module: ModuleFile, file_name: str, functions: Sequence[str] = ()) -> list[VmTest]:
    """The module's tests in export order (every export; only those `functions` names when given,
    each of which must be an export)."""
    exports = [f.name for f in module.exported_functions]
    unknown = [n for n in functions if n not in exports]
    if unknown:
        raise IreeAbiError(f"NOT_FOUND; no exported function {', '.join(map(repr, unknown))} in "
                           f"module {module.name} (its exports: {', '.join(exports) or 'none'})")
    return [VmTest(f, gtest_name(file_name, f)) for f in exports if not functions or f in functions]


def run_vm_test(module: ModuleFile, test: VmTest, options: RunOptions = RunOptions()) -> VmTestOutcome:
    """Run one test in a fresh program (context) made as `options` say and record the status its
    call returned; an import no module resolves fails the test in SetUp, as the context's creation
    fails in IREE."""
    try:
        program = Program(module, options)
    except ImportResolutionError as e:
        code = getattr(e, "code", StatusCode.NOT_FOUND)
        return VmTestOutcome(test, None, StatusError(code, str(e)))
    with program:
        inputs = program.input_chars(test.function)
        if inputs:  # the runner passes no arguments; the call cannot begin
            return VmTestOutcome(test, StatusError(
                StatusCode.INVALID_ARGUMENT,
                f"export '{test.function}' takes {len(inputs)} input(s) "
                f"({program.context.exported(test.function).cconv}); the test runner passes none"))
        try:
            # resumed after each yield as the runner resumes, at most TEST_RUNNER_MAX_RESUMES times
            results = program.context.begin(test.function).finish(TEST_RUNNER_MAX_RESUMES)
            for value in results:  # unread: the runner gives the call no result storage
                if isinstance(value, (Ref, VmList)):
                    program.buffers.release(value)
        except (StatusError, VmStatusError) as e:
            return VmTestOutcome(test, e)
        except ArgumentError as e:  # the call refused to begin: a failing status all the same
            return VmTestOutcome(test, StatusError(StatusCode.INVALID_ARGUMENT, str(e)))
        return VmTestOutcome(test, None)


def check_loads(module: ModuleFile, options: RunOptions = RunOptions()) -> None:
    """Make the module's context once (as `options` say) and drop it: the verifier's refusal
    (BytecodeVerifyError) propagates; an unresolved import does not (each test reports it in its
    SetUp). bytecode_module_test creates every module while it lists its tests (IREE_CHECK_OK: a
    module the verifier refuses aborts the binary before any test runs)."""
    try:
        program = Program(module, options)
    except ImportResolutionError:
        return
    program.close()


# ------------------------------------------------------------------------------- assembling

def cache_dir() -> Path:
    """Where assembled modules are kept (IREEABI_CACHE_DIR, else $TMPDIR/ireeabi-<uid>)."""
    base = os.environ.get("IREEABI_CACHE_DIR") or os.path.join(tempfile.gettempdir(),
                                                               f"ireeabi-{os.getuid()}")
    path = Path(base) / "vmasm"
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def find_assembler() -> str:
    """The path of iree-as-module; VmAsmError when it is not installed."""
    try:
        return _find_assembler()
    except AssemblerNotFoundError as e:
        raise VmAsmError("", str(e)) from None


def assemble(path: "str | os.PathLike", out_dir: "str | os.PathLike | None" = None) -> Path:
    """The `.vmfb` iree-as-module makes of a `.vmasm` file, through tooling/check_compile.py's
    content-addressed cache in `out_dir` (default `cache_dir()`): keyed by the source's bytes and
    the tool's version, made once under a lock however many processes ask (xdist workers), a
    refusal cached too. VmAsmError, naming the line, when the tool is missing or refuses it."""
    src = Path(path)
    try:
        text = src.read_bytes()
    except OSError as e:
        raise VmAsmError(str(src), f"{src}: cannot read: {e.strerror}") from e
    assembler = Assembler(out_dir if out_dir is not None else cache_dir(), find_assembler())
    try:
        return assembler.assemble(src)
    except CompileError as e:
        message = e.stderr.strip() or f"exit status {e.returncode}"
        raise _assembly_error(src, text, message) from None


def _assembly_error(src: Path, text: bytes, message: str) -> VmAsmError:
    """The tool's message, with the source line it names quoted."""
    found = _LINE.findall(message)
    line = int(found[-1]) if found else None
    where = f"{src}:{line}" if line is not None else str(src)
    quoted = ""
    lines = text.decode("utf-8", "replace").split("\n")
    if line is not None and 1 <= line <= len(lines):
        quoted = f" (line {line}: {lines[line - 1].strip()})"
    return VmAsmError(str(src), f"{where}: {ASSEMBLER} cannot assemble it: {message}{quoted}", line)


__all__ = ["VmAsmError", "VmTest", "VmTestOutcome", "SUITE", "FAIL_PREFIX", "assemble", "cache_dir",
           "check_loads", "find_assembler", "imports_check", "is_vm_test_module", "run_vm_test",
           "status_text", "gtest_name", "vm_tests"]
