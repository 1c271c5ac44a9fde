"""Generated Python source that can be read: what every fast-path generator compiles through.

The fast paths (codecs, planned calls, shims, compiled blocks and regions, call sites) are Python
text made at plan time and `exec`ed. `define` compiles such text under a unique filename
(`<kind detail #N>`) and registers the text with `linecache`, so a traceback through the generated
function shows its lines and `inspect.getsource` finds them. The entry is the kind linecache keeps
for sources that are no file (no modification time: `linecache.checkcache` leaves it), and it goes
when the last namespace running that code goes and the memo below has dropped it, so a process
making contexts over and over holds the texts of the live ones and of the memo only.

The same text (of the same kind and detail) is compiled once: contexts of one module generate the
same blocks, shims and call sites again and again (a VM test module's tests, the plugin's items,
one Program per test), and Python's `compile()` was most of what each cost. The memo keeps the
code of the most recently used texts up to `MEMO_BYTES` of source; namespaces built from one text
share its code and its filename.

With `IREEABI_DUMP_GENERATED=DIR` in the environment, each text is also written to
`DIR/<kind>-<N>.py` (the same N as its filename), exactly as it was compiled.

Nothing here touches process memory: it compiles text.
"""
from __future__ import annotations

import itertools
import linecache
import os
import re
import threading
import weakref
from collections import OrderedDict
from pathlib import Path
from types import CodeType
from typing import Any

from .errors import IreeAbiError

DUMP_VARIABLE = "IREEABI_DUMP_GENERATED"
# Source bytes whose code the memo keeps (one check corpus file's texts in two models: 0.9 MiB).
MEMO_BYTES = 4 << 20

_numbers = itertools.count(1)  # next() on a count is atomic under the GIL: filenames stay unique
# The memo and the users' counts (contexts are made on several threads). Reentrant: a collection
# while the lock is held may finalize a namespace, whose `_release` takes it again.
_lock = threading.RLock()
_memo: "OrderedDict[tuple[str, str, str], CodeType]" = OrderedDict()  # least recently used first
_memo_bytes = 0
_memo_files: set[str] = set()  # the filenames of the memo's codes
_users: dict[str, int] = {}  # filename -> namespaces alive that run its code


class DumpError(IreeAbiError):
    """The dump directory named by IREEABI_DUMP_GENERATED cannot take a generated source."""


class _Lifetime:
    """Kept in a generated namespace: when the namespace goes, its linecache entry goes too."""

    __slots__ = ("__weakref__",)


def dump_directory() -> Path | None:
    """The directory IREEABI_DUMP_GENERATED names (None when unset or empty)."""
    value = os.environ.get(DUMP_VARIABLE, "")
    return Path(value) if value else None


def compile_source(source: str, kind: str, detail: str) -> CodeType:
    """`source` compiled under the unique filename `<kind detail #N>`, its text registered with
    linecache (until `forget` drops it) and, when the dump switch is set, written to a file."""
    number = next(_numbers)
    filename = f"<{kind} {detail} #{number}>"
    code = compile(source, filename, "exec")  # a syntax error names the generator too
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    directory = dump_directory()
    if directory is not None:
        path = directory / f"{re.sub(r'[^A-Za-z0-9]+', '-', kind)}-{number:06d}.py"
        try:
            directory.mkdir(parents=True, exist_ok=True)
            path.write_text(source, encoding="utf-8", newline="")
        except OSError as e:
            forget(filename)
            raise DumpError(f"{DUMP_VARIABLE}={str(directory)!r}: cannot write {str(path)!r}: "
                            f"{e.strerror or e}") from e
    return code


def _shared_code(source: str, kind: str, detail: str) -> CodeType:
    """The code of `source`: the memo's when this text was compiled before, else compiled now and
    remembered, the least recently used texts dropped past MEMO_BYTES. The caller holds the lock
    and counts itself a user of the code."""
    global _memo_bytes
    key = (source, kind, detail)
    code = _memo.get(key)
    if code is not None:
        _memo.move_to_end(key)
        return code
    code = compile_source(source, kind, detail)
    _memo[key] = code
    _memo_files.add(code.co_filename)
    _memo_bytes += len(source)
    while _memo_bytes > MEMO_BYTES and len(_memo) > 1:
        (old, _, _), dropped = _memo.popitem(last=False)
        _memo_bytes -= len(old)
        _memo_files.discard(dropped.co_filename)
        if not _users.get(dropped.co_filename):
            forget(dropped.co_filename)
    return code


def _release(filename: str) -> None:
    """A namespace running `filename`'s code is gone: its text goes when no other namespace runs
    that code and the memo no longer holds it."""
    with _lock:
        left = _users.get(filename, 0) - 1
        if left > 0:
            _users[filename] = left
            return
        _users.pop(filename, None)
        if filename not in _memo_files:
            forget(filename)


def forget(filename: str) -> None:
    """Drop a generated source's linecache entry (when its code can no longer run)."""
    linecache.cache.pop(filename, None)


def define(source: str, kind: str, detail: str, namespace: dict[str, Any], name: str) -> Any:
    """Run the generated `source` in `namespace` and return the object it defines as `name`; the
    other names it defines stay in `namespace`. The code is compiled by `compile_source`, once per
    text while the memo keeps it (with the dump switch set, every time, so that each text run is
    written). The source's linecache entry lives as long as a namespace running it (every
    generated function holds its namespace as its globals) or the memo."""
    if dump_directory() is not None:
        code = compile_source(source, kind, detail)
        with _lock:
            _users[code.co_filename] = _users.get(code.co_filename, 0) + 1
    else:
        with _lock:
            code = _shared_code(source, kind, detail)
            _users[code.co_filename] = _users.get(code.co_filename, 0) + 1
    token = _Lifetime()
    namespace["__generated_source__"] = token
    # no atexit: the entries die with the process anyway
    weakref.finalize(token, _release, code.co_filename).atexit = False
    exec(code, namespace)
    return namespace[name]


def clear_memo() -> None:
    """Drop the memo's codes (their texts go from linecache when no namespace runs them)."""
    global _memo_bytes
    with _lock:
        dropped = [code.co_filename for code in _memo.values()]
        _memo.clear()
        _memo_files.clear()
        _memo_bytes = 0
        for filename in dropped:
            if not _users.get(filename):
                forget(filename)


__all__ = ["DUMP_VARIABLE", "DumpError", "MEMO_BYTES", "clear_memo", "compile_source", "define",
           "dump_directory", "forget"]
