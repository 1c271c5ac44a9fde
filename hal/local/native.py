"""The C helper (its source and build: `native_build.py`): the workgroup loop, the fault trap and the
import thunk that kernels run through.

An install builds it as the extension `ireeabi.hal.local._native` (setup.py, through cffi's setuptools
integration), so running a kernel needs no C compiler. When that extension is missing (installed with
IREEABI_NO_NATIVE=1, or a tree not installed since the helper came) or was built from another
version of `native_build.py` (an editable install edited since), the same source is compiled on first
use into a cache folder keyed by its digest, which does need a compiler; without one the error says
what is missing in one line.

How a trapped call ends besides returning: FAULTED (a fault signal), CANCELLED (Ctrl-C) and
DEADLINE_EXCEEDED (past its budget of CPU time); `stopped(...)` makes the last two the error a caller
raises. A budget is CPU seconds of the calling thread, not instructions: native code can be bounded
by an instruction count only through a hardware counter (perf_event_open's
PERF_COUNT_HW_INSTRUCTIONS), which many virtual machines lack. `default_cpu_time` derives a budget
from an instruction budget (`max_steps`), so that a run bounded in instructions does not run a
native kernel forever.
"""
from __future__ import annotations

import _signal  # signal.getsignal wraps this one in an enum lookup that costs microseconds
import hashlib
import importlib
import importlib.util
import math
import os
import signal
import sys
import tempfile
from functools import lru_cache
from pathlib import Path
from types import ModuleType

from ...abi.errors import IreeAbiError

from .executable_library import ExecutableError
from .native_build import DIGEST, INSTALLED_NAME, make_ffi
from ...base.status import StatusCode

# What ireeabi_issue_workgroups / ireeabi_call_guarded return when the trap ended the call:
FAULTED = -0x7E11  # a fault signal was trapped
CANCELLED = -0x7E12  # SIGINT (Ctrl-C) on the calling thread
DEADLINE_EXCEEDED = -0x7E13  # the call used up its budget of CPU time
NO_TIMER = -0x7E14  # the budget's timer could not be made (nothing ran)
CHAIN_INTERRUPT = 1  # flag: a SIGINT that stops a call goes to the handler before ours too

# An instruction budget as CPU time (`default_cpu_time`): this many instructions per CPU second,
# about the slowest a host core runs kernel code, and never less than MIN_CPU_TIME.
INSTRUCTIONS_PER_CPU_SECOND = 10**8
MIN_CPU_TIME = 1.0
# The largest budget the helper's timer takes (budget_ns is an int64_t of nanoseconds: ~292 years).
MAX_CPU_TIME = float((2**63 - 1) // 10**9)


class NativeBuildError(IreeAbiError):
    """The C helper could not be compiled (no C compiler?)."""


def _cache_dir() -> Path:
    base = os.environ.get("IREEABI_CACHE_DIR") or os.path.join(tempfile.gettempdir(), f"ireeabi-{os.getuid()}")
    path = Path(base)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def built_digest(mod: ModuleType) -> str:
    """The digest of the C text `mod` was built from (`native_build.DIGEST` when current)."""
    return mod.ffi.string(mod.lib.ireeabi_native_digest()).decode()


def _installed() -> tuple[ModuleType | None, str]:
    """The extension the install built, if current, else None and why not."""
    try:
        mod = importlib.import_module(INSTALLED_NAME)
    except ImportError:
        return None, f"{INSTALLED_NAME} is not installed"
    if built_digest(mod) != DIGEST:
        return None, f"{INSTALLED_NAME} was built from another version of native_build.py"
    return mod, ""


def _build_at_run_time(why: str) -> ModuleType:
    digest = hashlib.sha256((DIGEST + sys.version).encode()).hexdigest()[:16]
    name = f"_ireeabi_native_{digest}"
    out = _cache_dir() / name
    built = sorted(out.glob(f"{name}*.so")) if out.exists() else []
    if not built:
        tmp = Path(tempfile.mkdtemp(prefix=name, dir=_cache_dir()))
        try:
            lib_path = make_ffi(name).compile(tmpdir=str(tmp), verbose=False)
        except Exception as e:  # setuptools' CompileError and friends
            reason = " ".join(str(e).split()) or type(e).__name__
            raise NativeBuildError(
                f"the C helper that runs kernels is missing ({why}) and building it now failed "
                f"({reason}): install a C compiler, or reinstall ireeabi where one is (pip install "
                f"-e .) or from a wheel built there (pip wheel .)") from e
        out.mkdir(exist_ok=True)
        final = out / Path(lib_path).name
        os.replace(lib_path, final)  # atomic: concurrent builders end with one complete file
        built = [final]
    spec = importlib.util.spec_from_file_location(name, built[0])
    assert spec is not None and spec.loader is not None  # a file named .so: an extension's loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check_cpu_time(seconds: "float | None", what: str = "kernel_cpu_time") -> "float | None":
    """`seconds` as a budget of CPU time (None: no budget); ExecutableError for anything but a
    positive finite number of seconds."""
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) \
            or seconds <= 0 or seconds > MAX_CPU_TIME:
        raise ExecutableError(StatusCode.INVALID_ARGUMENT, f"{what} must be a positive number of CPU seconds, "
                              f"got {seconds!r}")
    return float(seconds)


def default_cpu_time(max_instructions: "int | None") -> "float | None":
    """The CPU time a native kernel dispatch gets when only an instruction budget is given: that
    many instructions at INSTRUCTIONS_PER_CPU_SECOND, at least MIN_CPU_TIME (None: no budget)."""
    if max_instructions is None:
        return None
    # Integer division first: an instruction count of any size (2**64 - 1 included) is no float
    # overflow, and past MAX_CPU_TIME the budget is as good as none.
    return max(MIN_CPU_TIME, float(min(max_instructions // INSTRUCTIONS_PER_CPU_SECOND, int(MAX_CPU_TIME))))


def budget_ns(seconds: "float | None") -> int:
    """The `budget_ns` argument of a trapped call (0: none)."""
    return 0 if seconds is None else max(1, round(seconds * 1e9))


def stop_flags() -> int:
    """The `flags` of a trapped call made now: under Python's own SIGINT handler (the one raising
    KeyboardInterrupt) Ctrl-C becomes the call's CANCELLED status alone; a handler of one's own
    runs as well."""
    return 0 if _signal.getsignal(signal.SIGINT) is signal.default_int_handler else CHAIN_INTERRUPT


def stopped(status: int, what: str, seconds: "float | None", where: str = "") -> "ExecutableError | None":
    """The error for a trapped call of `what` that the trap stopped (CANCELLED, DEADLINE_EXCEEDED,
    NO_TIMER), else None. `where`: e.g. " in workgroup (0, 0, 0)"."""
    if status == CANCELLED:
        return ExecutableError(StatusCode.CANCELLED, f"{what} was interrupted (Ctrl-C){where}")
    if status == DEADLINE_EXCEEDED:
        return ExecutableError(StatusCode.DEADLINE_EXCEEDED, f"{what} ran past its budget of {seconds:g} s of CPU "
                               f"time (stopped{where})")
    if status == NO_TIMER:
        return ExecutableError(StatusCode.RESOURCE_EXHAUSTED, f"{what}: no CPU-time timer for its budget could be "
                               "armed (timer_create or timer_settime failed)")
    return None


@lru_cache(maxsize=None)
def native() -> ModuleType:
    """The helper module (`.ffi`, `.lib`): the installed extension, else one built now."""
    mod, why = _installed()
    return mod if mod is not None else _build_at_run_time(why)


class HostFpu:
    """The calling thread's floating-point control register (`fpu_state.FpuControl`), through the
    helper's accessors; its flush bits are the host architecture's."""

    def __init__(self) -> None:
        lib = native().lib
        self._read, self._write = lib.ireeabi_fpu_control, lib.ireeabi_set_fpu_control
        self.flush_bits = int(lib.ireeabi_fpu_flush_bits())

    def fpu_control(self) -> int:
        return int(self._read())

    def set_fpu_control(self, value: int) -> None:
        self._write(value)


@lru_cache(maxsize=None)
def host_fpu() -> HostFpu:
    """The calling thread's FPU control (the helper's functions, loaded on first use; the register
    itself is each thread's own)."""
    return HostFpu()
