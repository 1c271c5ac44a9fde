"""The data model of the machine this Python runs on.

Everything in `ireeabi.vm` works on real host memory, so every size and offset comes from the host's
`Target` and the catalog layouts laid out for it, never from constants: the same code is correct on an
LP64 and an ILP32 host.
"""
from __future__ import annotations

import ctypes
import platform
import struct
import sys
from functools import lru_cache

from ..abi import targets, views
from ..abi.errors import IreeAbiError
from ..abi.layout import Struct, StructLayout
from ..abi.targets import Target

# platform.machine() spellings of the modelled data models.
_MACHINES = {
    "x86_64": "x86_64", "amd64": "x86_64",
    "aarch64": "aarch64", "arm64": "aarch64",
    "riscv64": "riscv64", "riscv32": "riscv32",
    "i386": "i386", "i486": "i386", "i586": "i386", "i686": "i386", "x86": "i386",
    "armv7l": "armv7", "armv7": "armv7",
    "wasm32": "wasm32",
}


class HostError(IreeAbiError):
    """This Python runs on a data model ireeabi does not model."""


def _host_target() -> Target:
    machine = platform.machine().lower()
    name = _MACHINES.get(machine)
    pointer = ctypes.sizeof(ctypes.c_void_p)
    if name in ("x86_64", "i386") and pointer == 4:
        name = "i386"  # a 32-bit Python on a 64-bit kernel
    if name is None:
        raise HostError(f"host machine {machine!r} is not one of the modelled data models")
    t = targets.get(name)
    if t.pointer_size != pointer or sys.byteorder != t.endian:
        raise HostError(f"host {machine!r}: ctypes pointer size {pointer} / {sys.byteorder} endian does "
                        f"not match target {t.name}")
    return t


HOST: Target = _host_target()
POINTER_SIZE: int = HOST.pointer_size
WORD = struct.Struct("<Q" if POINTER_SIZE == 8 else "<I")  # one unsigned pointer-sized word
I32 = struct.Struct("<i")
U32 = struct.Struct("<I")
WORD_MASK = (1 << (8 * POINTER_SIZE)) - 1


def layout(decl: Struct) -> StructLayout:
    """`decl` laid out for the host."""
    return decl.layout(HOST)


@lru_cache(maxsize=None)
def ctype(decl: Struct) -> type:
    """The packed ctypes view of `decl` on the host (checked against the layout by `views`)."""
    return views.ctypes_class(decl, HOST)


def align_up(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment
