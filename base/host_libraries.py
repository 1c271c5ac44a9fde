"""The host's C libraries (libc, libm) as the runtime loads them with ctypes (for mmap and
mprotect, the C number parsers IREE's string utilities call, the math functions of the VM's ops).

`ctypes.util.find_library` runs `ldconfig -p` in a child process on every call (milliseconds each,
and several modules ask), so `library_name` tries glibc's soname first, which the dynamic loader
resolves without a search, and asks `find_library` only where that soname does not load; each
answer is kept for the process.
"""
from __future__ import annotations

import ctypes
import ctypes.util
from functools import lru_cache

# glibc's sonames of the libraries the runtime loads (what find_library answers on glibc).
GLIBC_SONAMES = {"c": "libc.so.6", "m": "libm.so.6"}


@lru_cache(maxsize=None)
def library_name(name: str) -> "str | None":
    """The name `ctypes.CDLL` loads the C library `name` ("c", "m") by: glibc's soname when it
    loads, else `ctypes.util.find_library(name)` (None when nothing is found)."""
    soname = GLIBC_SONAMES.get(name)
    if soname is not None:
        try:
            ctypes.CDLL(soname)
        except OSError:
            pass
        else:
            return soname
    return ctypes.util.find_library(name)


__all__ = ["GLIBC_SONAMES", "library_name"]
