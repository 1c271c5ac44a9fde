"""Check programs and VM test modules as pytest items: what iree-check-module and IREE's
bytecode_module_test run, one item per test function, execution model, interpreter path and data
model.

IREE's check tests are modules whose exported functions take nothing, return nothing and call the
`check` module (iree-check-module runs one gtest test per function: tooling/check_tests.py). The
pytest plugin (tooling/testing.py) collects such programs when asked to (`--ireeabi-collect` or ini
`ireeabi_collect = true`; nothing is collected otherwise), from the files matching
`ireeabi_check_files` (default `*.mlir *.vmfb *.vmasm`):

- an `.mlir` source is compiled (tooling/check_compile.py, a cache keyed by content) for every
  execution model of `ireeabi_models` on every data model of `ireeabi_targets`, and each exported
  test function becomes the item `FUNCTION[MODEL-TARGET]` (e.g. `matmul[inline-static-riscv32]`).
  Without `ireeabi_models`, the models the file can run: the check module's tensor ops
  (`check.expect_eq(%t, %u) : tensor<...>`) lower only in iree-compile's default execution model
  (tests/programs/check/inline_issues/tensor_check_op.mlir), so such a file runs in `default`; a
  file calling check imports declared on buffer views runs in inline-static, inline-dynamic and
  default. A model that does not compile gives one failing item `iree-compile[MODEL-TARGET]` with
  the compiler's errors; the other models run.
- a `.vmfb` was compiled for one model (its imports say which: `hal` for the default model,
  `hal_loader` for inline-dynamic, `hal_inline` for inline-static); its items are
  `FUNCTION[MODEL-TARGET]` for each data model of `ireeabi_targets` (`ireeabi_models` does not
  apply).
- a `.vmasm` file (VM assembly) is assembled by iree-as-module through the same kind of cache
  (`check_compile.Assembler`, keyed by the source and the tool's version) and is a VM test module,
  as is a `.vmfb` without `check` imports whose exports all take and return nothing: every export
  is the item `FUNCTION[TARGET]`, run as bytecode_module_test runs it (tooling/vm_test_module.py:
  a `fail_*` function must fail, any other return). A file iree-as-module refuses is one failing
  item `iree-as-module` with the tool's message and the line.

Without `ireeabi_targets`, the host's data model. `ireeabi_paths` (fast, reference) runs every item
on each of the interpreter's paths, the path then in the id before the target
(`FUNCTION[MODEL-PATH-TARGET]`, `FUNCTION[PATH-TARGET]`); without it, the fast path. Each item runs
its function in a fresh `Program` (nothing shared between items but the read-only module file, so
they run in any order and on any xdist worker); it fails with the tool's own text, as `ireeabi
test` prints it (module.cc's failures and IREE_EXPECT_OK's for a failing call; the VM test runner's
GTEST_FAIL text), without a Python traceback.
"""
from __future__ import annotations

import fnmatch
import os
import re
import shlex
import signal
import threading
from contextlib import contextmanager
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import pytest

from ..abi import targets as _targets
from ..abi.errors import IreeAbiError
from ..modules.check import CHECK_MODULE
from ..modules.hal.runtime import run_module_type_names
from ..vm.bytecode.module_file import ModuleFile, read_module

from .check_compile import (CompileError, Compiler, canonical_model, compile_flags,
                            user_cache_dir)
from .check_tests import check_tests, failure_text, run_check_test
from .execution_model import FULL_HAL_MODULE, takes_fences
from .program import RunOptions, instruction_count
from .vm_test_module import (VmAsmError, VmTest, assemble, check_loads, is_vm_test_module,
                             run_vm_test, vm_tests)

# The models a check program calling check imports on buffer views runs in (in this order).
ALL_MODELS = ("inline-static", "inline-dynamic", "default")
# The check module's tensor ops (CheckOps.td), not a `@check.` import or its call.
_TENSOR_CHECK_OP = re.compile(r"(?<![@\w.])check\.expect_\w+\s*\(")
_COMMENT = re.compile(r"//.*$", re.MULTILINE)
DEFAULT_FILES = ("*.mlir", "*.vmfb", "*.vmasm")
SUFFIXES = (".mlir", ".vmfb", ".vmasm")
# The interpreter's paths: its compiled blocks and loop regions, or one handler per instruction.
PATHS = ("fast", "reference")


class CheckFailed(Exception):
    """A check item's expectations failed: the text iree-check-module prints for them."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


@dataclass
class Settings:
    """The plugin's options for one session (one per process: each xdist worker parses its own)."""

    collect: bool
    files: tuple[str, ...]
    models: tuple[str, ...]  # empty: the models each file can run
    targets: tuple[str, ...]
    compile_flags: tuple[str, ...]
    cache_dir: Path
    jobs: int
    paths: tuple[str, ...] = ("fast",)
    paths_given: bool = False  # the path is part of each item's id only when the option is set
    max_steps: int | None = None  # RunOptions.max_steps of every item (None: no bound)
    host: str = field(default_factory=lambda: _targets.host().name)
    _compiler: Compiler | None = None

    @property
    def compiler(self) -> Compiler:
        if self._compiler is None:  # found on first use: a run that collects no .mlir needs none
            self._compiler = Compiler(self.cache_dir)
        return self._compiler


SETTINGS = pytest.StashKey[Settings]()


def add_options(parser: pytest.Parser) -> None:
    """The plugin's command-line and ini options (each command-line option overrides its ini)."""
    g = parser.getgroup("ireeabi", "ireeabi check programs (tooling/check_items.py)")
    g.addoption("--ireeabi-collect", action="store_true", default=None,
                help="collect check programs (.mlir, .vmfb) and VM test modules (.vmasm, .vmfb) "
                     "as tests (ini: ireeabi_collect)")
    g.addoption("--ireeabi-files", default=None, metavar="GLOBS",
                help="comma-separated patterns of the check program files to collect: a file name "
                     "pattern, or a path pattern relative to the rootdir when it has a `/` "
                     "(ini: ireeabi_check_files; default: *.mlir,*.vmfb,*.vmasm)")
    g.addoption("--ireeabi-models", default=None, metavar="MODELS",
                help="comma-separated execution models to compile .mlir check programs for "
                     "(inline-static, inline-dynamic, default, or any of execution_model."
                     "MODEL_FLAGS; ini: ireeabi_models; default: those the file can run)")
    g.addoption("--ireeabi-targets", default=None, metavar="TARGETS",
                help="comma-separated data models to run on (x86_64, riscv32, ...; ini: "
                     "ireeabi_targets; default: the host's)")
    g.addoption("--ireeabi-paths", default=None, metavar="PATHS",
                help="comma-separated interpreter paths to run each item on: fast (compiled "
                     "blocks), reference (one handler per instruction); ini: ireeabi_paths; "
                     "default: fast, and the path is then not in the item's id")
    g.addoption("--ireeabi-compile-flags", default=None, metavar="FLAGS",
                help="more iree-compile flags, shell-quoted (added to ini: ireeabi_compile_flags)")
    g.addoption("--ireeabi-cache-dir", default=None, metavar="DIR",
                help="where compiled modules are kept (ini: ireeabi_cache_dir; default: "
                     "ireeabi-vmfb in pytest's cache dir, else (no pytest cache, or an xdist worker on "
                     "another machine) ~/.cache/ireeabi/vmfb)")
    parser.addini("ireeabi_collect", "collect check programs as tests", type="bool", default=False)
    parser.addini("ireeabi_check_files", "patterns of the check program files to collect",
                  type="args", default=list(DEFAULT_FILES))
    parser.addini("ireeabi_models", "execution models of .mlir check programs", default="")
    parser.addini("ireeabi_targets", "data models to run check programs on", default="")
    parser.addini("ireeabi_paths", "interpreter paths to run items on (fast, reference)",
                  default="")
    parser.addini("ireeabi_compile_flags", "more iree-compile flags", type="args", default=[])
    parser.addini("ireeabi_cache_dir", "where compiled check modules are kept", default="")
    parser.addini("ireeabi_compile_jobs", "iree-compile processes at once (default: cores)",
                  default="")
    g.addoption("--ireeabi-max-steps", default=None, metavar="N",
                help="instructions one call of an item may run (its kernels' budget too), as "
                     "`ireeabi run --max-steps`; past it the item fails with DEADLINE_EXCEEDED "
                     "(ini: ireeabi_max_steps; default: no bound)")
    parser.addini("ireeabi_max_steps", "instructions one call of an item may run", default="")


def _names(text: str) -> tuple[str, ...]:
    return tuple(n for n in re.split(r"[,\s]+", text) if n)


def configure(config: pytest.Config) -> None:
    """Read and check the options (pytest.UsageError naming a bad value) into the config's stash."""
    opt = config.getoption
    collect = opt("--ireeabi-collect")
    files = opt("--ireeabi-files")
    models = _names(opt("--ireeabi-models") or config.getini("ireeabi_models"))
    for m in models:
        try:
            canonical_model(m)
        except IreeAbiError as e:
            raise pytest.UsageError(f"--ireeabi-models / ireeabi_models: {e}") from None
    targets = []
    for t in _names(opt("--ireeabi-targets") or config.getini("ireeabi_targets")):
        try:
            targets.append(_targets.get(t).name)
        except IreeAbiError as e:
            raise pytest.UsageError(f"--ireeabi-targets / ireeabi_targets: {e}") from None
    paths = _names(opt("--ireeabi-paths") or config.getini("ireeabi_paths"))
    for p in paths:
        if p not in PATHS:
            raise pytest.UsageError(f"--ireeabi-paths / ireeabi_paths: unknown interpreter path "
                                    f"{p!r}; valid: {', '.join(PATHS)}")
    jobs_text = config.getini("ireeabi_compile_jobs")
    if jobs_text and not (jobs_text.isdigit() and int(jobs_text) > 0):
        raise pytest.UsageError(f"ireeabi_compile_jobs: {jobs_text!r} is not a positive count")
    steps_text = opt("--ireeabi-max-steps") or config.getini("ireeabi_max_steps")
    try:
        max_steps = instruction_count(steps_text) if steps_text else None
    except ValueError as e:
        raise pytest.UsageError(f"--ireeabi-max-steps / ireeabi_max_steps: {e}") from None
    cache = opt("--ireeabi-cache-dir") or config.getini("ireeabi_cache_dir")
    if cache:
        cache_dir = Path(cache) if os.path.isabs(cache) or config.inipath is None \
            else config.inipath.parent / cache
    elif getattr(config, "cache", None) is not None and not _remote_worker(config):
        cache_dir = config.cache.mkdir("ireeabi-vmfb")  # the cacheprovider plugin is on
    else:
        cache_dir = user_cache_dir() / "vmfb"
    config.addinivalue_line("markers", MARKER_HELP)
    config.stash[SETTINGS] = Settings(
        collect=bool(config.getini("ireeabi_collect") if collect is None else collect),
        files=_names(files) if files else tuple(config.getini("ireeabi_check_files")),
        models=models,
        targets=tuple(dict.fromkeys(targets)) or (_targets.host().name,),
        compile_flags=tuple(config.getini("ireeabi_compile_flags"))
        + tuple(shlex.split(opt("--ireeabi-compile-flags") or "")),
        cache_dir=cache_dir,
        jobs=int(jobs_text) if jobs_text else (os.cpu_count() or 1),
        paths=tuple(dict.fromkeys(paths)) or ("fast",),
        paths_given=bool(paths),
        max_steps=max_steps,
    )


# The controller's rootdir, handed to each xdist worker (configure_node).
_CONTROLLER_ROOT = "ireeabi_controller_rootpath"


def configure_node(node: Any) -> None:
    """pytest-xdist's pytest_configure_node, in the controller: tell each worker the controller's
    rootdir, so that a worker can see whether it shares the controller's tree (_remote_worker)."""
    node.workerinput[_CONTROLLER_ROOT] = str(node.config.rootpath)


def _remote_worker(config: pytest.Config) -> bool:
    """Whether this process is an xdist worker in a tree of its own: a remote gateway (`--tx
    socket=HOST:PORT`, `--tx ssh=HOST`) or a local one with a folder of its own (`popen//chdir=`),
    which pytest-xdist fills by rsync from the controller (`--rsyncdir`) and empties at the start
    of each run, the pytest cache in it included. Such a worker keeps its compiled modules in the
    user's cache of its own machine, where the next run finds them; local workers share the
    controller's tree and its cache (one compile per module for all of them)."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None or _CONTROLLER_ROOT not in workerinput:
        return False
    return workerinput[_CONTROLLER_ROOT] != str(config.rootpath)


def collect_file(file_path: Path, parent: pytest.Collector) -> "CheckFile | None":
    """A CheckFile for a check program the options select, else None."""
    settings = parent.config.stash.get(SETTINGS, None)
    if settings is None or not settings.collect or file_path.suffix not in SUFFIXES:
        return None
    try:
        relative = file_path.relative_to(parent.config.rootpath).as_posix()
    except ValueError:
        relative = file_path.as_posix()
    for pattern in settings.files:
        if fnmatch.fnmatchcase(relative if "/" in pattern else file_path.name, pattern):
            return CheckFile.from_parent(parent, path=file_path)
    return None


def runnable_models(source: str) -> tuple[str, ...]:
    """The execution models a check program's source compiles for (see the module docstring)."""
    return ("default",) if _TENSOR_CHECK_OP.search(_COMMENT.sub("", source)) else ALL_MODELS


def module_model(module: ModuleFile) -> str:
    """The execution model a compiled module was built for, by the HAL modules it imports."""
    imported = {f.module for f in module.imported_functions}
    if FULL_HAL_MODULE in imported:
        fenced = any(takes_fences(f) for f in module.exported_functions)
        return "async-external" if fenced else "default"
    if "hal_loader" in imported:
        return "inline-dynamic"
    if "hal_inline" in imported:
        return "inline-static"
    return "host-only"


def _read(data: bytes) -> ModuleFile:
    return read_module(data, ref_types=run_module_type_names())


def _short(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


class CheckFile(pytest.File):
    """A check program (.mlir or .vmfb): its items over the selected models and data models."""

    def collect(self) -> Iterable[pytest.Item]:
        settings = self.config.stash[SETTINGS]
        if self.path.suffix == ".vmasm":
            try:
                vmfb = assemble(self.path, settings.cache_dir)
            except VmAsmError as e:
                yield ToolFailureItem.from_parent(self, name="iree-as-module", error=e)
                return
            # bytecode_module_test's name of the module file: the .vmfb the source assembles to
            yield from self._vm_items(_read(vmfb.read_bytes()), self.path.stem + ".vmfb")
            return
        if self.path.suffix == ".vmfb":
            module = _read(self.path.read_bytes())
            if is_vm_test_module(module):
                yield from self._vm_items(module, self.path.name)
                return
            variants = [(module_model(module), t, module) for t in settings.targets]
            yield from self._items(variants)
            return
        source = self.path.read_text(errors="replace")
        models = settings.models or runnable_models(source)
        jobs = [(m, t) for m in models for t in settings.targets]
        flags = [compile_flags(m, t, settings.host) + settings.compile_flags for m, t in jobs]
        compiler = settings.compiler
        with ThreadPoolExecutor(max(1, min(settings.jobs, len(jobs)))) as pool:
            built = list(pool.map(lambda f: _compiled(compiler, self.path, f), flags))
        variants, read = [], {}
        for (model, target), result in zip(jobs, built):
            if isinstance(result, CompileError):
                yield ToolFailureItem.from_parent(self, name=f"iree-compile[{model}-{target}]",
                                                  error=result, model=model, target=target)
                continue
            if result not in read:  # one compile serves every data model of a bytecode model
                read[result] = _read(result.read_bytes())
            variants.append((model, target, read[result]))
        yield from self._items(variants)

    def _items(self, variants: Sequence[tuple[str, str, ModuleFile]]) -> Iterator["CheckItem"]:
        """One item per test function and variant, functions outermost, then models, paths and
        targets (as pytest orders a parametrized test's ids)."""
        settings = self.config.stash[SETTINGS]
        tests = {id(m): check_tests(m) for _, _, m in variants}
        models = list(dict.fromkeys(m for m, _, _ in variants))
        order = []
        for model, target, module in variants:
            for p, path in enumerate(settings.paths):
                rank = (models.index(model), p, settings.targets.index(target))
                order += [(ordinal, rank, name, model, path, target, module)
                          for name, ordinal in tests[id(module)]]
        for ordinal, _, name, model, path, target, module in sorted(order, key=lambda o: o[:2]):
            variant = _variant_id(settings, model, path, target)
            yield CheckItem.from_parent(self, name=f"{name}[{variant}]", function_name=name,
                                        ordinal=ordinal, model=model, target=target,
                                        module=module, reference=path == "reference",
                                        path_name=path)

    def _vm_items(self, module: ModuleFile, file_name: str) -> Iterator["VmTestItem"]:
        """A VM test module's items, as bytecode_module_test lists its tests (every export): one
        per export, interpreter path and data model, exports outermost. The module is made once
        per data model first, as the test binary makes it while listing: a module IREE's
        verifier refuses is a collection error (the binary aborts before any test)."""
        settings = self.config.stash[SETTINGS]
        for target in settings.targets:
            check_loads(module, RunOptions(target=target))
        for test in vm_tests(module, file_name):
            for path in settings.paths:
                for target in settings.targets:
                    yield VmTestItem.from_parent(
                        self, name=f"{test.function}[{_variant_id(settings, None, path, target)}]",
                        test=test, target=target, module=module, reference=path == "reference")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> Any:
        if isinstance(excinfo.value, IreeAbiError):  # bad input: its message, not a traceback
            return f"{self.path}: {_short(excinfo.value)}"
        return super().repr_failure(excinfo)  # a Collector's takes no style


def _variant_id(settings: Settings, model: str | None, path: str, target: str) -> str:
    """The item's parameter id: `MODEL-TARGET` (VM test items: `TARGET`), with the interpreter
    path before the target when the paths option is set (`MODEL-PATH-TARGET`)."""
    parts = [model] if model is not None else []
    if settings.paths_given:
        parts.append(path)
    return "-".join([*parts, target])


# The marker every plugin item carries, so that `-m` selects them like any test
# (`-m ireeabi`, `-m "ireeabi(target='riscv32')"`, `-m "not ireeabi(model='default')"`).
MARKER = "ireeabi"
MARKER_HELP = (f"{MARKER}(kind, function, model, path, target): an item of ireeabi's pytest plugin "
               "(kind: check, vm-test, iree-compile, iree-as-module); select with -m")


def _mark(item: pytest.Item, kind: str, function: str, model: str | None, path: str,
          target: str) -> None:
    item.add_marker(pytest.mark.ireeabi(kind=kind, function=function, model=model, path=path,
                                        target=target))


def _compiled(compiler: Compiler, path: Path, flags: tuple[str, ...]) -> "Path | CompileError":
    try:
        return compiler.compile(path, flags)
    except CompileError as e:
        return e


class _ModuleItem(pytest.Item):
    """An item that runs a module's function: its failure is the text the tool prints, no
    traceback."""

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> Any:
        if isinstance(excinfo.value, CheckFailed):
            text = excinfo.value.text.rstrip("\n")
            hint = self.hazard_hint(text)
            return text + (f"\n{hint}" if hint else "")
        if isinstance(excinfo.value, IreeAbiError):  # a status the run could not get past, a trap
            hint = self.hazard_hint(str(excinfo.value))
            return _short(excinfo.value) + (f"\n{hint}" if hint else "")
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.name

    def hazard_hint(self, text: str) -> str:
        """Where a shim's signature mismatch is a layout hazard the import check predicts on the
        item's data model (i386's shims), the words `ireeabi run` adds (import_check.hazard_hint)."""
        from ..layouts import module_sources  # only for a failure's report
        from ..vm.bytecode import import_check

        module, target = getattr(self, "module", None), getattr(self, "target", None)
        if module is None or target is None:
            return ""
        reports = import_check.check_imports(module, module_sources.checked_against(module), target)
        return import_check.hazard_hint(text, reports, target)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


@contextmanager
def interruptible() -> Iterator[None]:
    """An item's run, stopped by Ctrl-C wherever the signal lands. Under Python's own SIGINT handler
    (pytest's) a native kernel's trapped call takes Ctrl-C as its CANCELLED status alone
    (hal/local/native.py `stop_flags`): the item failed with it and the session went on to the next
    item, so a looping module's items ignored Ctrl-C whenever it landed in a kernel rather than in
    Python (the race). A handler of the item's own, raising KeyboardInterrupt as Python's does,
    makes the trap pass the signal on too: the session stops. Main thread only (where signal
    handlers live); a handler set by someone else is left as it is."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield
        return
    signal.signal(signal.SIGINT, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


class CheckItem(_ModuleItem):
    """One test function of a check module on one execution model, interpreter path and data
    model."""

    def __init__(self, *, function_name: str, ordinal: int, model: str, target: str,
                 module: ModuleFile, reference: bool = False, path_name: str = "fast",
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # `function_name`, not `function`: pytest reads an item's `function` as the Python
        # function of a test (its __dict__ holds keywords for -k), which a check item has none of.
        self.function_name, self.ordinal, self.model = function_name, ordinal, model
        self.target, self.module, self.reference = target, module, reference
        _mark(self, "check", function_name, model, path_name, target)

    def runtest(self) -> None:
        options = RunOptions(target=self.target, modules=(CHECK_MODULE,), reference=self.reference,
                             max_steps=self.config.stash[SETTINGS].max_steps)
        with interruptible():
            failures = run_check_test(self.module, self.function_name, options)
        if failures:
            raise CheckFailed(failure_text(failures))


class VmTestItem(_ModuleItem):
    """One export of a VM test module on one interpreter path and data model, as
    bytecode_module_test runs it (tooling/vm_test_module.py): a `fail_*` function must end in a
    failing status, any other must return; the failure is the runner's gtest text."""

    def __init__(self, *, test: VmTest, target: str, module: ModuleFile, reference: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.test, self.target, self.module, self.reference = test, target, module, reference
        _mark(self, "vm-test", test.function, None, "reference" if reference else "fast", target)

    def runtest(self) -> None:
        options = RunOptions(target=self.target, reference=self.reference,
                             max_steps=self.config.stash[SETTINGS].max_steps)
        with interruptible():
            failure = run_vm_test(self.module, self.test, options).failure()
        if failure is not None:
            raise CheckFailed(failure)


class ToolFailureItem(pytest.Item):
    """A tool's refusal as one failing item: a `.vmasm` file iree-as-module refuses (or that cannot be
    assembled without the tool), or a model the source does not compile for. It fails with the
    tool's errors naming the line; the session's other files and models still run."""

    def __init__(self, *, error: "VmAsmError | CompileError", model: str | None = None,
                 target: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error
        kind = error.tool if isinstance(error, CompileError) else "iree-as-module"
        self.add_marker(pytest.mark.ireeabi(kind=kind, model=model, target=target))

    def runtest(self) -> None:
        raise self.error

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> Any:
        return str(excinfo.value)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.name


__all__ = ["ALL_MODELS", "MARKER", "DEFAULT_FILES", "SUFFIXES", "PATHS", "CheckFailed", "Settings",
           "SETTINGS", "add_options", "configure", "configure_node", "collect_file", "interruptible",
           "runnable_models", "module_model", "CheckFile", "CheckItem", "VmTestItem", "ToolFailureItem"]
