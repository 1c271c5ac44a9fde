"""Opening the files a user names without blocking or reading without end: what every command's
file options go through (`--dwarf`, `--native-module FILE`, `--input=@FILE`, `--output=@FILE`,
`--trace-file`, `--svg`). IREE's tools open such paths with fopen and block or read on; ireeabi
ends instead.

- `open_input(path)`: opened for reading without blocking on a FIFO that has no writer (it then
  reads as empty: end of file at once); a directory is refused (IsADirectoryError). The stream
  blocks as usual afterwards, so a pipe with a writer (`<(...)`) reads as the writer writes.
- `read_bounded(path, limit, what)`: the whole contents of an input of at most `limit` bytes;
  past it (a regular file's size, or what a device or pipe gave: /dev/zero never ends) an
  `InputTooLarge` naming the path and the limit, after reading at most `limit + 1` bytes.
- `open_output(path, text)`: opened for writing (truncated, or appended with `append`) without
  blocking on a FIFO that has no reader: that is an OSError (ENXIO) whose message says so.
- `require_regular(f, path)`: an OSError unless the open file is a regular file (for readers that
  seek and map, as pyelftools does).
"""
from __future__ import annotations

import errno
import fcntl
import io
import os
import stat
from typing import IO, BinaryIO

from .errors import IreeAbiError


class InputTooLarge(IreeAbiError):
    """An input file past the bytes its reader takes."""

    def __init__(self, path: str, limit: int, what: str) -> None:
        self.path, self.limit = path, limit
        super().__init__(f"{path}: {what} larger than {limit} bytes (or a device or pipe that does not end): "
                         "refused")


def _blocking(fd: int) -> int:
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    return fd


def open_input(path: "str | os.PathLike") -> BinaryIO:
    """`path` open for binary reading (see the module docstring)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        return os.fdopen(_blocking(fd), "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bounded(path: "str | os.PathLike", limit: int, what: str = "the file is") -> bytes:
    """At most `limit` bytes: the whole of `path`, or InputTooLarge (see the module docstring)."""
    with open_input(path) as f:
        st = os.fstat(f.fileno())
        if stat.S_ISREG(st.st_mode) and st.st_size > limit:
            raise InputTooLarge(str(path), limit, what)
        # a regular file's size, not the bound: read(n) allocates n bytes before it reads (one
        # that grew since is read on, to the bound)
        data = f.read(min(st.st_size, limit) + 1) if stat.S_ISREG(st.st_mode) else f.read(limit + 1)
        if stat.S_ISREG(st.st_mode) and len(data) > st.st_size and len(data) <= limit:
            data += f.read(limit + 1 - len(data))
    if len(data) > limit:
        raise InputTooLarge(str(path), limit, what)
    return data


def open_output(path: "str | os.PathLike", text: bool = True, append: bool = False) -> IO:
    """`path` open for writing (text in UTF-8, or binary), created if missing (see the module
    docstring)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | \
        (os.O_APPEND if append else os.O_TRUNC)
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as e:
        if e.errno == errno.ENXIO:  # a FIFO that no process reads
            raise OSError(errno.ENXIO, "a FIFO with no reader (writing would block until one opens it)",
                          str(path)) from None
        raise
    try:
        _blocking(fd)
        raw = os.fdopen(fd, "ab" if append else "wb")
    except BaseException:
        os.close(fd)
        raise
    return io.TextIOWrapper(raw, encoding="utf-8") if text else raw


def file_kind(mode: int) -> str:
    """What a file of `st_mode` `mode` is, in words: "a regular file", "a directory", "a FIFO", ..."""
    return ("a regular file" if stat.S_ISREG(mode) else "a directory" if stat.S_ISDIR(mode) else
            "a FIFO" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")


def require_regular(f: IO, path: "str | os.PathLike") -> None:
    """OSError unless `f` is open on a regular file."""
    mode = os.fstat(f.fileno()).st_mode
    if not stat.S_ISREG(mode):
        raise OSError(errno.EINVAL, f"{file_kind(mode)}, not a regular file", str(path))


__all__ = ["open_input", "read_bounded", "open_output", "require_regular", "file_kind", "InputTooLarge"]
