"""What reaches the terminal: the commands' output stream (control characters escaped, a failed write
remembered) and each failure's one message (bad input, an OS error; never a traceback)."""
from __future__ import annotations

import errno
import os
import sys
from typing import Any, Sequence, TextIO

from ..abi import cconv
from ..abi.errors import IreeAbiError, UnknownNameError
from ..abi.printable import printable_text

from . import render


def error_lines(e: IreeAbiError) -> list[str]:
    """One readable message (fitting the width) for bad input. Whatever it echoes of a module (a
    function, import or type name) is shown escaped (`abi.printable`): no control character or
    byte that is not UTF-8 reaches the terminal raw."""
    if isinstance(e, UnknownNameError):
        msg = f"unknown {e.what} {e.name!r}"
        if e.closest:
            msg += f"; closest: {', '.join(e.closest)}"
        if len(e.valid) <= 10:
            msg += f"; valid: {', '.join(e.valid)}"
        elif e.what == "struct":
            msg += f" (`ireeabi list` shows all {len(e.valid)})"
        return render.wrap("ireeabi: error: " + printable_text(msg), subsequent=4)
    if isinstance(e, cconv.CconvError):
        lines = render.wrap(f"ireeabi: error: malformed cconv: {printable_text(str(e))}", subsequent=4)
        if len(e.text) < render.WIDTH - 4 and e.text.isprintable():
            lines += ["    " + e.text, "    " + " " * e.index + "^"]
        return lines
    return render.wrap(f"ireeabi: error: {printable_text(str(e))}", subsequent=4)


def os_error_line(e: OSError, output_failed: bool = False) -> str:
    """One line for an OS error: the path(s) involved and the system's reason."""
    reason = e.strerror or str(e) or type(e).__name__
    name = errno.errorcode.get(e.errno, "") if e.errno is not None else ""
    reason += f" ({name})" if name else ""
    paths = [os.fsdecode(p) if isinstance(p, (str, bytes)) else str(p)
             for p in (e.filename, e.filename2) if p is not None]
    if paths:
        return f"ireeabi: error: {' -> '.join(paths)}: {reason}"
    if output_failed:
        return f"ireeabi: error: cannot write the output: {reason}"
    return f"ireeabi: error: {reason}"


def _terminal_safe(text: str) -> str:
    """Output text with every character a module's name may carry that is not printable (NUL, ESC,
    a byte that is not UTF-8, ...) escaped as `abi.printable` shows it, except the newlines and
    tabs of the output's own layout: whatever a command echoes, no control sequence reaches the
    terminal. (Escaped text passes unchanged.)"""
    if text.replace("\n", "").replace("\t", "").isprintable():  # the usual case, at C speed
        return text
    return "\n".join("\t".join(printable_text(part) for part in line.split("\t"))
                     for line in text.split("\n"))


class Output:
    """The commands' output stream (control characters escaped: `_terminal_safe`), remembering
    the OS error a write or flush of it raised (so the report can say the output failed, which
    such an error does not name)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.error: OSError | None = None

    def write(self, text: str) -> int:
        try:
            return self.stream.write(_terminal_safe(text))
        except OSError as e:
            self.error = e
            raise

    def flush(self) -> None:
        try:
            self.stream.flush()
        except OSError as e:
            self.error = e
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def silence_failed_stdout(out: Output) -> None:
    """After a failed write to the process's standard output, point it at the null device, so
    the interpreter's flush at exit cannot fail a second time (with a traceback of its own)."""
    if out.error is not None and out.stream is sys.stdout:
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, out.fileno())
            finally:
                os.close(null)
        except (OSError, ValueError, AttributeError):
            pass


def report(lines: Sequence[str], err: TextIO) -> None:
    """Write a failure's lines to `err`, if it can still take them."""
    try:
        render.emit(lines, err)
        err.flush()
    except (OSError, ValueError):
        pass


__all__ = ["error_lines", "os_error_line", "Output", "silence_failed_stdout", "report"]
