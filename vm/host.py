"""The data model of the machine this Python runs on.

Everything in `ireeabi.vm` works on real host memory, so every size and offset comes from the host's
`Target` and the catalog layouts laid out for it, never from constants: the same code is correct on an
LP64 and an ILP32 host.
"""
from __future__ import annotations

import struct
from functools import lru_cache

from ..abi import targets, views
from ..abi.layout import Struct, StructLayout
from ..abi.targets import Target

HostError = targets.HostError

HOST: Target = targets.host()
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
