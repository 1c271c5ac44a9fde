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

Across processes, the code of a text is kept on disk: `compile()` of the ~180 texts a default-model
`ireeabi run` generates was a tenth of its whole start-up, paid again by every process. The cache
folder (`IREEABI_CODE_CACHE=DIR`; unset: `$XDG_CACHE_HOME/ireeabi/code`, else
`~/.cache/ireeabi/code`; set but empty: no cache) holds one file per text, named by the SHA-256 of
the text and of what else decides its code (Python's bytecode magic number, the optimization level,
this format's version): the magic number, that digest, then the code's `marshal` bytes, as a .pyc
holds a module's. The code read back is given the text's filename of this process (its nested
functions' too), so the linecache entry, tracebacks and `inspect` are as for a text compiled here.
A file is written under a temporary name and renamed (another process sees it whole or not at
all); a folder that cannot be made or written, or a file that cannot be read or is not one this
Python wrote (one past `MAX_ENTRY_BYTES` is not read whole), only costs the compile. The folder is
bounded (`CACHE_BYTES`): past it, the oldest files go, checked at a process's first write and every
`PRUNE_EVERY` writes after.

With `IREEABI_DUMP_GENERATED=DIR` in the environment, each text is also written to
`DIR/<kind>-<N>.py` (the same N as its filename), exactly as it was compiled (always by `compile()`:
the dump switch bypasses the disk cache).

Nothing here touches process memory: it compiles text.
"""
from __future__ import annotations

import __future__
import hashlib
import itertools
import linecache
import marshal
import os
import re
import sys
import threading
import weakref
from collections import OrderedDict
from pathlib import Path
from importlib.util import MAGIC_NUMBER
from types import CodeType
from typing import Any

from .errors import IreeAbiError

DUMP_VARIABLE = "IREEABI_DUMP_GENERATED"
CACHE_VARIABLE = "IREEABI_CODE_CACHE"
# The disk cache's bound (a whole test suite's texts in both paths and every data model: ~60 MiB).
CACHE_BYTES = 128 << 20
PRUNE_EVERY = 512  # writes of one process between two checks of the bound
# The largest file the cache reads or writes (a generated text's code is kilobytes; a bigger file is
# not one of its own, and is not read whole).
MAX_ENTRY_BYTES = 64 << 20
_CACHE_FORMAT = b"ireeabi generated code 1\0"  # in every key: a new format misses the old files
# What every text is compiled with, whatever this file's own imports: annotations left unevaluated
# (PEP 563, as the generators write them). In the cache key too.
COMPILE_FLAGS = __future__.annotations.compiler_flag
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
_unwritable: set[str] = set()  # cache folders this process failed to write (not tried again)
_writes = itertools.count()  # this process's cache writes, for the bound's checks


class DumpError(IreeAbiError):
    """The dump directory named by IREEABI_DUMP_GENERATED cannot take a generated source."""


class _Lifetime:
    """Kept in a generated namespace: when the namespace goes, its linecache entry goes too."""

    __slots__ = ("__weakref__",)


def dump_directory() -> Path | None:
    """The directory IREEABI_DUMP_GENERATED names (None when unset or empty)."""
    value = os.environ.get(DUMP_VARIABLE, "")
    return Path(value) if value else None


def cache_directory() -> Path | None:
    """The disk cache's folder: IREEABI_CODE_CACHE, else the user's cache folder's `ireeabi/code`
    (None when the variable is set but empty: no disk cache)."""
    folder = _cache_folder()
    return Path(folder) if folder else None


_folders: dict[tuple, str] = {}  # (the variables it is made of) -> the cache folder ("": none)


def _cache_folder() -> str:
    """`cache_directory` as a string ("" for none), memoized on the variables it is made of."""
    env = os.environ
    given, xdg, home = env.get(CACHE_VARIABLE), env.get("XDG_CACHE_HOME"), env.get("HOME")
    folder = _folders.get((given, xdg, home))
    if folder is None:
        if given is not None:
            folder = given
        else:
            folder = os.path.join(xdg or os.path.join(os.path.expanduser("~"), ".cache"), "ireeabi", "code")
        if len(_folders) > 16:  # the environment changes only in tests
            _folders.clear()
        _folders[(given, xdg, home)] = folder
    return folder


def cache_key(source: str) -> str:
    """The hex SHA-256 naming `source`'s file in the disk cache: of the text and of what else
    decides its code (the bytecode's magic number, the optimization level, the compile flags, this
    format)."""
    digest = hashlib.sha256(MAGIC_NUMBER + bytes([sys.flags.optimize & 0xFF]) + _CACHE_FORMAT
                            + COMPILE_FLAGS.to_bytes(8, "little"))
    digest.update(source.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _compile(source: str, filename: str) -> CodeType:
    return compile(source, filename, "exec", flags=COMPILE_FLAGS, dont_inherit=True)


def _renamed(code: CodeType, filename: str) -> CodeType:
    """`code` and the code objects it holds (its functions', classes', comprehensions') under
    `filename`."""
    consts = tuple(_renamed(c, filename) if isinstance(c, CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def _cache_read(path: str, key: str) -> CodeType | None:
    """The code a cache file holds, or None when it is absent, unreadable or not this Python's."""
    head = MAGIC_NUMBER + bytes.fromhex(key)
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > MAX_ENTRY_BYTES:
                return None
            # the file's size, not the bound: read(n) allocates n bytes before it reads
            data = f.read(size)
    except OSError:
        return None
    if not data.startswith(head):
        return None
    try:
        code = marshal.loads(memoryview(data)[len(head):])
    except (EOFError, ValueError, TypeError):
        return None
    return code if isinstance(code, CodeType) else None


def _cache_write(folder: str, path: str, key: str, code: CodeType) -> None:
    """Write `code` to the cache file `path` whole (a temporary name, then renamed); a folder that
    cannot be written is remembered and left alone."""
    if folder in _unwritable:
        return
    data = MAGIC_NUMBER + bytes.fromhex(key) + marshal.dumps(code)
    if len(data) > MAX_ENTRY_BYTES:
        return
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        _unwritable.add(folder)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return
    if next(_writes) % PRUNE_EVERY == 0:
        prune_cache(Path(folder))


def prune_cache(directory: Path, limit: int | None = None) -> None:
    """Bring the disk cache under `limit` bytes (default CACHE_BYTES), to three quarters of it,
    dropping the oldest files first. Files another process removes meanwhile are skipped."""
    limit = CACHE_BYTES if limit is None else limit
    files = []
    try:
        for shard in os.scandir(directory):
            if shard.is_dir(follow_symlinks=False):
                for entry in os.scandir(shard.path):
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    files.append((st.st_mtime, st.st_size, entry.path))
    except OSError:
        return
    total = sum(size for _, size, _ in files)
    if total <= limit:
        return
    for _, size, name in sorted(files):
        if total <= limit * 3 // 4:
            break
        try:
            os.unlink(name)
        except OSError:
            continue
        total -= size


def _compiled(source: str, filename: str) -> CodeType:
    """`source`'s code under `filename`: from the disk cache when it holds the text, else compiled
    (and written there)."""
    folder = _cache_folder()
    if not folder:
        return _compile(source, filename)
    key = cache_key(source)
    path = os.path.join(folder, key[:2], key)
    code = _cache_read(path, key)
    if code is not None:
        return _renamed(code, filename)
    code = _compile(source, filename)  # a syntax error names the generator too
    _cache_write(folder, path, key, code)
    return code


def compile_source(source: str, kind: str, detail: str) -> CodeType:
    """`source` compiled under the unique filename `<kind detail #N>` (or its code read from the
    disk cache), its text registered with linecache (until `forget` drops it) and, when the dump
    switch is set, compiled by `compile()` and written to a file."""
    number = next(_numbers)
    filename = f"<{kind} {detail} #{number}>"
    directory = dump_directory()
    if directory is None:
        code = _compiled(source, filename)
    else:
        code = _compile(source, filename)  # a syntax error names the generator too
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
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


__all__ = ["CACHE_BYTES", "CACHE_VARIABLE", "COMPILE_FLAGS", "DUMP_VARIABLE", "DumpError",
           "MAX_ENTRY_BYTES", "MEMO_BYTES", "PRUNE_EVERY", "cache_directory", "cache_key", "clear_memo",
           "compile_source", "define", "dump_directory", "forget", "prune_cache"]
