"""Ctrl-C in the `ireeabi` process: IREE's CANCELLED status line and exit 1, wherever it lands.

Python's own SIGINT handler raises KeyboardInterrupt at whatever bytecode runs next: inside a
library's import, a `__del__`, a finally block, after `main` returned. Such an exception can be
swallowed (an import helper's bare `except`), printed as "Exception ignored" with a traceback, or
leave the interpreter, which then prints a traceback and kills itself with SIGINT. So the process
entry (`cli/__main__.py`) replaces that handler first thing with an `Interrupts`, which has two
modes:

- *recording* (start-up, and after the command returned): the handler only notes the signal; the
  entry reports it at its next check (after the imports, after the command), so nothing is ever
  raised inside another package's code;
- *raising* (while the command runs): the handler raises KeyboardInterrupt, which stops the work
  (the VM, an emulated kernel, wasm, a blocked read or write); the command line reports it.

Either way the signal ends in one `CANCELLED_LINE` on stderr and exit status 1, and the process
never dies by SIGINT. Library callers of `cli.main.main` are untouched: only the entry installs it.
What runs before the entry's first line (the interpreter's start-up, `site`, the console script's
own `import re, sys`) is the interpreter's; a SIGINT there behaves as in any Python program.
"""
from __future__ import annotations

import os
import signal
import sys
from types import FrameType, TracebackType
from typing import TextIO

__all__ = ["CANCELLED_LINE", "Interrupts", "install", "report_cancelled"]

CANCELLED_LINE = "ireeabi: CANCELLED; interrupted (Ctrl-C)"
EXIT_CANCELLED = 1


class Interrupts:
    """The process's SIGINT handler (see the module docstring). `interrupted`: a SIGINT arrived;
    `reported`: its status line is written (no second one, and later signals change nothing)."""

    def __init__(self) -> None:
        self.interrupted = False
        self.reported = False
        self.raising = False

    def __call__(self, signum: int, frame: "FrameType | None") -> None:
        self.interrupted = True
        if self.raising and not self.reported:
            raise KeyboardInterrupt

    def start_raising(self) -> None:
        """Enter raising mode; a signal recorded before it is raised now (so none is lost in
        between: the mode changes first, then the record is read)."""
        self.raising = True
        if self.interrupted and not self.reported:
            raise KeyboardInterrupt

    def stop_raising(self) -> None:
        self.raising = False

    def excepthook(self, kind: type[BaseException], value: BaseException,
                   tb: "TracebackType | None") -> None:
        """The last resort for a KeyboardInterrupt that left every handler (Python's default
        handler firing just before `install` replaced it): the status line and exit 1 at once,
        instead of a traceback and a death by SIGINT."""
        if not issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, value, tb)
            return
        self.reported, code = True, EXIT_CANCELLED
        for stream in (sys.stdout, sys.stderr):
            try:
                if stream is sys.stderr:
                    stream.write(CANCELLED_LINE + "\n")
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        os._exit(code)  # past this point the interpreter would re-raise SIGINT on itself


def install() -> Interrupts:
    """Make this process's SIGINT an `Interrupts` (recording) and its last-resort excepthook; the
    entry's first call. Main thread only (where Python runs signal handlers)."""
    interrupts = Interrupts()
    sys.excepthook = interrupts.excepthook
    signal.signal(signal.SIGINT, interrupts)
    return interrupts


def report_cancelled(err: TextIO) -> int:
    """Write `CANCELLED_LINE` to `err` (if it can still take it), once per process when an
    `Interrupts` is installed; exit status 1."""
    handler = signal.getsignal(signal.SIGINT)
    if isinstance(handler, Interrupts):
        if handler.reported:
            return EXIT_CANCELLED
        handler.reported = True  # first: a later SIGINT no longer raises
    try:
        err.write(CANCELLED_LINE + "\n")
        err.flush()
    except (OSError, ValueError):
        pass
    return EXIT_CANCELLED
