import ctypes
import gc
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

import pytest

# The tests' helpers are the package tests/support: this file's folder is on the import path (pytest
# puts the folder of its rootdir conftest.py there), so every test imports `from support import ...`.
from support import iree_tools, process_memory

# Python's full garbage collections leave out what a test process holds from its collection to its
# end, and the session's end collects once or twice, not five times (tests/support/long_lived_heap.py).
pytest_plugins = ["support.long_lived_heap"]

# The compile cache this run made and removes at its end (only without pytest's cache).
_own_cache: Path | None = None
# The folder of links to the wheels' tool binaries put first on PATH, and PATH before it.
_wheel_bin: "tuple[Path, str] | None" = None


def _is_xdist_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    # Ctrl-C is under test (KeyboardInterrupt out of kernels, children stopped by SIGINT). A shell
    # that starts pytest in the background without job control hands it SIGINT ignored, which
    # Python then keeps and its children inherit across exec: every such test would wait for its
    # budget instead. Each process of the run (xdist's workers too) takes Python's own handler, as
    # an interactive run has it.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    # One compile cache for the run: the controller (or a serial session) names it before
    # pytest-xdist starts its workers, which inherit the environment, so each module compiles once
    # whatever the number of workers. It lives in pytest's cache folder (`--cache-clear` empties
    # it) and is kept between runs: its keys hold everything the compiler reads (iree_tools.py).
    # Without pytest's cache (`-p no:cacheprovider`), a folder of this run's own, removed at its end.
    global _own_cache, _wheel_bin
    if not _is_xdist_worker(config) and _wheel_bin is None:
        # The wheels' binaries first on PATH, for the whole run (workers inherit it): PATH's
        # iree-compile and iree-run-module are console scripts that start a Python to run the same
        # binary with the same arguments (iree_tools.find_tool), ~0.4 and ~0.2 s of CPU a run.
        folder = Path(tempfile.mkdtemp(prefix="ireeabi-wheel-bin-"))
        _wheel_bin = folder, os.environ.get("PATH", "")
        if iree_tools.link_wheel_binaries(folder):
            os.environ["PATH"] = f"{folder}{os.pathsep}{_wheel_bin[1]}"
    # The generated code's disk cache (abi/generated.py) in pytest's cache folder too, not the
    # user's: `--cache-clear` and a fresh cache_dir empty it with the compiles (unless given).
    from ireeabi.abi.generated import CACHE_VARIABLE
    cache = getattr(config, "cache", None)
    if not _is_xdist_worker(config) and CACHE_VARIABLE not in os.environ and cache is not None:
        os.environ[CACHE_VARIABLE] = str(cache.mkdir("ireeabi-code"))
    if _is_xdist_worker(config) or iree_tools.CACHE_ENV in os.environ:
        return
    if cache is not None:
        os.environ[iree_tools.CACHE_ENV] = str(cache.mkdir("ireeabi-vmfb"))
        iree_tools.prune_cache()
    else:
        _own_cache = Path(tempfile.mkdtemp(prefix="ireeabi-vmfb-"))
        os.environ[iree_tools.CACHE_ENV] = str(_own_cache)


def pytest_unconfigure(config: pytest.Config) -> None:
    global _own_cache, _wheel_bin
    if _wheel_bin is not None:
        os.environ["PATH"] = _wheel_bin[1]
        shutil.rmtree(_wheel_bin[0], ignore_errors=True)
        _wheel_bin = None
    if _own_cache is not None:
        shutil.rmtree(_own_cache, ignore_errors=True)
        os.environ.pop(iree_tools.CACHE_ENV, None)
        _own_cache = None


def pytest_sessionstart(session: pytest.Session) -> None:
    # The README's test command sets up a fresh Debian machine itself: compilers, qemu, sysroots.
    # Once per run: in the controller, before pytest-xdist (whose hook runs last) starts workers.
    if not _is_xdist_worker(session.config):
        from support import debian_tools
        debian_tools.install_missing()
        _write_bytecode()


def _write_bytecode() -> None:
    """Bytecode caches for ireeabi's modules and the tests' helpers, as an installed package has them
    (pip writes them): the suite starts hundreds of `python -m ireeabi` processes, and where
    PYTHONDONTWRITEBYTECODE is set (this sandbox sets it) each would compile every module it imports
    from source, ~40% of a `run`'s start-up. Reading caches is unaffected by that variable; a tree
    that cannot be written just goes without."""
    import compileall
    from support.bytecode import package_folders
    for folder in package_folders():
        compileall.compile_dir(folder, quiet=2)
    compileall.compile_dir(str(Path(__file__).parent / "support"), maxlevels=0, quiet=2)


# pytest keeps each test module's assertion-rewritten code in a cache beside it unless the process
# writes no bytecode: where PYTHONDONTWRITEBYTECODE is set (this sandbox sets it), every process of
# every run (each xdist worker, each pytest a test starts) rewrote all the test modules it imports,
# 7.7 s of CPU in a worker's collection of the suite (17.0 s against 9.3 s with the cache). Only
# the test processes write it, where pytest puts it (tests/**/__pycache__, ignored by git).
sys.dont_write_bytecode = False


# A worker's resident memory past which the end of a test collects garbage: a test's heap or
# tensors held in reference cycles (a Program and its heap refer to each other) would otherwise stay
# resident until a rare full collection, and a worker would carry one test's 512 MiB heap through
# the next tests (tests/tooling/test_heap_limit.py: 1.7 GB for minutes). Checked by reading
# /proc/self/statm (microseconds). After a collection the mark moves to what stayed resident plus
# COLLECT_STEP_BYTES, which bounds the garbage a worker carries between collections. With a fixed
# mark, a worker whose memos and caches keep it above 512 MiB made a full collection after every
# test: in the suite's profile of 2026-12-07, test_vm_buffer's 112 tests took 61.6 s of CPU there
# and 0.5 s alone, and the suite took nearly twice the CPU it takes with the moving mark.
COLLECT_ABOVE_BYTES = 512 << 20
COLLECT_STEP_BYTES = 64 << 20
_collect_mark = [COLLECT_ABOVE_BYTES]


def _resident_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# glibc keeps the heap a test module freed (its Programs, emulated CPUs, tensors) as free lists in
# the process rather than handing it back: a worker that had run test_foreign_kernels stayed 146 MiB
# larger until malloc_trim (372 -> 226 MiB), and two workers' leftovers plus one test's peak made
# the suite's peak. Trimmed at the end of each test file (milliseconds).
_malloc_trim = getattr(ctypes.CDLL(None), "malloc_trim", None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: "pytest.Item | None"):
    yield
    if _resident_bytes() > _collect_mark[0]:
        gc.collect()
        _collect_mark[0] = max(COLLECT_ABOVE_BYTES, _resident_bytes() + COLLECT_STEP_BYTES)
    if _malloc_trim is not None and (nextitem is None or nextitem.path != item.path):
        _malloc_trim(0)


@pytest.fixture
def fresh_module_reads() -> None:
    """For a test that looks at what a module's first context compiles (its generated code, the
    instructions it decodes): the process forgets the modules it has read (read_module's memo), so
    the test's first Program or Context of a module is the module's first, which compiles every
    function (later ones compile a function at its first frame)."""
    from ireeabi.vm.bytecode.module_file import clear_read_memo
    clear_read_memo()


# Test files whose module fixtures cost a process a minute and cannot be shared through the
# compile cache (test_install: a venv with an editable install): under `--dist loadgroup` all of a
# file's tests run on one worker, so the fixture is made once per run, not once per worker.
ONE_WORKER_FILES = ("tests/test_install.py",)


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = item.nodeid.split("::")[0]
        if path in ONE_WORKER_FILES:
            item.add_marker(pytest.mark.xdist_group(path))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: "pytest.Item | None"):
    # IREEABI_TEST_RSS_LOG=FILE: append, for each test, the peak RSS (KiB) of this process and its
    # children, its wall time (s, fixtures set up for it included), the worker and its CPU time (s:
    # this process's and that of the children it waited for, which a loaded machine does not
    # inflate) to FILE (benchmarks/bench_suite.py's way to find the heavy and the slow tests).
    log = os.environ.get("IREEABI_TEST_RSS_LOG")
    if not log:
        yield
        return
    sampler = process_memory.Sampler(os.getpid(), period=0.1, describe=False)
    sampler.start()
    t0, cpu0 = time.monotonic(), _cpu_seconds()
    yield
    seconds, cpu = time.monotonic() - t0, _cpu_seconds() - cpu0
    peak = sampler.stop()
    worker = os.environ.get("PYTEST_XDIST_WORKER", "-")
    with open(log, "a") as f:
        f.write(f"{peak}\t{seconds:.3f}\t{worker}\t{item.nodeid}\t{cpu:.3f}\n")


def _cpu_seconds() -> float:
    """User and system time of this process and of the children it has waited for."""
    import resource
    own, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                          resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
