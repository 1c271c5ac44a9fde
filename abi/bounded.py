"""A call run in a forked child process under a memory bound and a time bound: foreign code that can
crash, recurse without end or grow without limit (libclang on a hostile header) ends in one exception
of the caller's process instead of taking it down. IREE has no counterpart (its tools are the
process).

The child is forked from the caller, so whatever the caller has imported (clang.cindex, the engine)
is there at no cost: no interpreter start-up, no re-import, as `multiprocessing`'s spawn and
forkserver contexts would pay on every call. The function's value (or exception) comes back
pickled through a pipe; the child's standard error is read beside it, so a native library's crash
report or out-of-memory line is seen by the caller and never printed.

The memory bound is on the child's address space (`RLIMIT_AS`, above what the fork inherits, and
never above a hard limit the caller already has); the time bound is a wall-clock backstop meant to
be generous, after which the child is killed. A child asleep in the open of a FIFO that no process
writes to (libclang given `#include "fifo"`) would wait there until that backstop: it is ended as
`ChildBlocked` once it has slept there for BLOCKED_SECONDS (the kernel names the wait in
/proc/PID/wchan; a kernel that hides it leaves the time bound).
"""
from __future__ import annotations

import faulthandler
import os
import pickle
import resource
import select
import signal
import time
from typing import Any, Callable

from .errors import IreeAbiError

STDERR_KEPT = 64 << 10  # bytes of the child's standard error kept for the report
BLOCKED_SECONDS = 1.0  # asleep this long opening a FIFO: no writer is coming
POLL_SECONDS = 0.1  # how often the child's wait is looked at (never changes a verdict, only its delay)
# Where Linux's open of a FIFO sleeps until the other end is opened (fs/pipe.c; fifo_open if inlined).
FIFO_WAITS = ("wait_for_partner", "fifo_open")
# The syscall numbers of open/openat/openat2 and the argument holding the path, by machine.
_OPEN_PATH_ARG = {"x86_64": {2: 0, 257: 1, 437: 1}, "aarch64": {56: 1, 437: 1}}
OUT_OF_MEMORY_MARKS = (b"out of memory", b"Allocation failed", b"std::bad_alloc")


class BoundedCallError(IreeAbiError):
    """A bounded call that did not return: it crashed, ran out of memory or out of time."""


class ChildCrashed(BoundedCallError):
    """The child died of a signal (or exited) without returning; `signal_name` says which."""

    def __init__(self, signal_name: str, stderr: bytes) -> None:
        self.signal_name = signal_name
        self.stderr = stderr
        super().__init__(f"crashed ({signal_name})")


class ChildOutOfMemory(BoundedCallError):
    """The child exceeded its memory bound (`limit_bytes` of address space above the fork's)."""

    def __init__(self, limit_bytes: int) -> None:
        self.limit_bytes = limit_bytes
        super().__init__(f"exceeded the memory bound of {limit_bytes >> 20} MiB")


class ChildBlocked(BoundedCallError):
    """The child slept BLOCKED_SECONDS opening a FIFO no process writes to; `path` is the FIFO's
    path ("" when the kernel does not show it)."""

    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(f"blocked opening {path or 'a FIFO'}, a FIFO no process writes to")


def _fifo_wait(pid: int) -> "str | None":
    """The path a thread of child `pid` is asleep opening as a FIFO ("" if not shown), or None when
    no thread is in such an open (libclang parses in a thread of its own)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:  # gone
        return None
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/wchan") as f:
                if f.read().strip() not in FIFO_WAITS:
                    continue
        except OSError:  # gone, or a wchan the kernel keeps to itself: only the time bound then
            continue
        try:
            with open(f"/proc/{pid}/task/{tid}/syscall") as f:
                words = f.read().split()
            arg = _OPEN_PATH_ARG.get(os.uname().machine, {}).get(int(words[0]))
            if arg is None:
                return ""
            with open(f"/proc/{pid}/mem", "rb") as mem:
                mem.seek(int(words[1 + arg], 16))
                return mem.read(4096).split(b"\0", 1)[0].decode("utf-8", "replace")
        except (OSError, ValueError, IndexError):  # the path is not shown: the wait is still seen
            return ""
    return None


class ChildTimedOut(BoundedCallError):
    """The child ran past its time bound and was killed."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(f"ran past the time bound of {seconds:g} s")


def _address_space() -> int:
    """This process's mapped address space in bytes (what RLIMIT_AS counts)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * resource.getpagesize()


def _address_limit(memory_bytes: int) -> tuple[int, int]:
    """(the child's RLIMIT_AS, the room that leaves above this process): `memory_bytes` above the
    address space the fork inherits, lowered to any limit this process already has."""
    here = _address_space()
    limit = here + memory_bytes
    for inherited in resource.getrlimit(resource.RLIMIT_AS):
        if inherited != resource.RLIM_INFINITY:
            limit = min(limit, inherited)
    return limit, max(limit - here, 0)


def _child(fn: Callable[..., Any], args: tuple, limit: int, out_fd: int, err_fd: int) -> None:
    """The forked side: bound itself, run `fn`, send ("ok", value) / ("raise", exception) /
    ("oom", None). Never returns (os._exit: the caller's atexit handlers and buffers are not ours)."""
    try:
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.dup2(err_fd, 2)
        faulthandler.disable()  # a crash here is the caller's to report, in its own words
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C reaches the caller, which kills us
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crash leaves no core file behind
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
        try:
            result: tuple[str, Any] = ("ok", fn(*args))
        except MemoryError:
            result = ("oom", None)
        except BaseException as e:  # noqa: BLE001 - handed to the caller, who re-raises it
            result = ("raise", e)
        try:
            data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        except MemoryError:
            data = pickle.dumps(("oom", None))
        except Exception as e:  # noqa: BLE001 - an unpicklable value or exception
            data = pickle.dumps(("raise", BoundedCallError(f"result not transferable: {e}")))
        view = memoryview(data)
        while view:
            view = view[os.write(out_fd, view):]
    finally:
        os._exit(0)


def call_bounded(fn: Callable[..., Any], *args: Any, memory_bytes: int, seconds: float) -> Any:
    """`fn(*args)` in a forked child bounded to `memory_bytes` more address space and `seconds` of
    wall time: its value, or its exception re-raised here; `ChildCrashed`, `ChildOutOfMemory` or
    `ChildTimedOut` when it does not return (`ChildOutOfMemory` names the room the child had, which
    a limit of this process's own may make smaller than `memory_bytes`)."""
    limit, room = _address_limit(memory_bytes)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child (coverage does not follow os._exit)
        os.close(out_r)
        os.close(err_r)
        _child(fn, args, limit, out_w, err_w)
    os.close(out_w)
    os.close(err_w)
    chunks: list[bytes] = []
    stderr = bytearray()
    status = None
    try:
        deadline = time.monotonic() + seconds
        open_fds = {out_r, err_r}
        blocked_since = None  # when the child was first seen asleep opening a FIFO
        while open_fds:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ChildTimedOut(seconds)
            ready, _, _ = select.select(list(open_fds), [], [], min(left, POLL_SECONDS))
            if not ready:
                fifo = _fifo_wait(pid)
                now = time.monotonic()
                blocked_since = None if fifo is None else blocked_since or now
                if blocked_since is not None and now - blocked_since >= BLOCKED_SECONDS:
                    raise ChildBlocked(fifo or "")
            for fd in ready:
                data = os.read(fd, 1 << 16)
                if not data:
                    open_fds.discard(fd)
                elif fd == out_r:
                    chunks.append(data)
                elif len(stderr) < STDERR_KEPT:
                    stderr += data[:STDERR_KEPT - len(stderr)]
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(out_r)
        os.close(err_r)
        if status is None:  # timed out or interrupted: the child is ours to end
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:  # pragma: no cover - it ended on its own meanwhile
                pass
            os.waitpid(pid, 0)
    out_of_memory = any(m in stderr for m in OUT_OF_MEMORY_MARKS)
    payload = b"".join(chunks)
    if os.WIFSIGNALED(status) or not payload:
        if out_of_memory:
            raise ChildOutOfMemory(room)
        how = (signal.Signals(os.WTERMSIG(status)).name if os.WIFSIGNALED(status)
               else f"exit status {os.waitstatus_to_exitcode(status)}")
        raise ChildCrashed(how, bytes(stderr))
    kind, value = pickle.loads(payload)
    if kind == "oom" or (kind == "raise" and out_of_memory):
        # A native library that survived its own allocation failure (libclang's crash recovery
        # turns it into a failed parse) still ran out of the bound: that is the cause to report.
        raise ChildOutOfMemory(room)
    if kind == "raise":
        raise value
    return value


__all__ = ["BoundedCallError", "ChildBlocked", "ChildCrashed", "ChildOutOfMemory", "ChildTimedOut",
           "call_bounded"]
