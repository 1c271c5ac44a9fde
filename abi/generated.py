"""Generated Python source that can be read: what every fast-path generator compiles through.

The fast paths (codecs, planned calls, shims, compiled blocks and regions, call sites) are Python
text made at plan time and `exec`ed. `define` compiles such text under a unique filename
(`<kind detail #N>`) and registers the text with `linecache`, so a traceback through the generated
function shows its lines and `inspect.getsource` finds them. The entry is the kind linecache keeps
for sources that are no file (no modification time: `linecache.checkcache` leaves it), and it goes
when the generated code's namespace does (nothing else can run or show that code then), so a
process making contexts over and over holds the text of the live ones only.

With `IREEABI_DUMP_GENERATED=DIR` in the environment, each text is also written to
`DIR/<kind>-<N>.py` (the same N as its filename), exactly as it was compiled.

Nothing here touches process memory: it compiles text.
"""
from __future__ import annotations

import itertools
import linecache
import os
import re
import weakref
from pathlib import Path
from types import CodeType
from typing import Any

from .errors import IreeAbiError

DUMP_VARIABLE = "IREEABI_DUMP_GENERATED"

_numbers = itertools.count(1)  # next() on a count is atomic under the GIL: filenames stay unique


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


def forget(filename: str) -> None:
    """Drop a generated source's linecache entry (when its code can no longer run)."""
    linecache.cache.pop(filename, None)


def define(source: str, kind: str, detail: str, namespace: dict[str, Any], name: str) -> Any:
    """Run the generated `source` in `namespace` (compiled by `compile_source`) and return the
    object it defines as `name`; the other names it defines stay in `namespace`. The source's
    linecache entry lives as long as the namespace (every generated function holds it as its
    globals)."""
    code = compile_source(source, kind, detail)
    token = _Lifetime()
    namespace["__generated_source__"] = token
    # no atexit: the entries die with the process anyway
    weakref.finalize(token, forget, code.co_filename).atexit = False
    exec(code, namespace)
    return namespace[name]


__all__ = ["DUMP_VARIABLE", "DumpError", "compile_source", "define", "dump_directory", "forget"]
