"""Run a piece of a test in a forked child: what can kill a process (hostile input reaching native
code, signal handlers, a runtime's traps) kills the child, never the pytest worker. A dead worker
fails its test and, under pytest-xdist's `--dist loadgroup`, leaves the rest of the run to the
other workers; here the test fails with the signal that ended the child instead.

The child returns what the function returns (pickled through a pipe), or the text of the exception
it raised; it ends with os._exit (no atexit handler, no pytest teardown runs twice).
"""
from __future__ import annotations

import os
import pickle
import signal
import traceback
from typing import Callable, TypeVar

T = TypeVar("T")


class ChildDied(AssertionError):
    """The forked child ended without an answer (a signal, or an exit status)."""


def run_forked(fn: Callable[[], T]) -> T:
    """fn() in a forked child: its result, its exception re-raised as an AssertionError with the
    child's traceback, or ChildDied naming the signal or status that ended it."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read_end)
        try:
            try:
                payload = pickle.dumps((True, fn()))
            except BaseException:
                payload = pickle.dumps((False, traceback.format_exc()))
            with os.fdopen(write_end, "wb") as f:
                f.write(payload)
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        raise ChildDied(f"the child was killed by {signal.Signals(sig).name}")
    if not data:
        raise ChildDied(f"the child exited with {os.waitstatus_to_exitcode(status)} and no answer")
    ok, value = pickle.loads(data)
    if not ok:
        raise AssertionError(f"in the forked child:\n{value}")
    return value
