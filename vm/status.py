"""iree_status_t as Python values, and how they cross a C function-pointer boundary.

IREE's status codes are those of runtime/src/iree/base/status.h (`iree_status_code_e`). A status is a
pointer: NULL is OK, anything else is a failure whose low bits (`IREE_STATUS_CODE_MASK`) hold the code
and whose remaining bits point at heap storage with the message. Python callbacks behind a C function
pointer (allocator ctl functions) return such a pointer: the code sits in the low bits exactly as in
IREE, the rest is a token into a side table holding the Python `Status`. A failing status must be
consumed (`take`) or ignored (`ignore`) once, like IREE's, or it is reported as a leak.
"""
from __future__ import annotations

import enum
import itertools
from dataclasses import dataclass

from ..abi.errors import IreeAbiError


class StatusCode(enum.IntEnum):
    """iree_status_code_t (status.h)."""

    OK = 0
    CANCELLED = 1
    UNKNOWN = 2
    INVALID_ARGUMENT = 3
    DEADLINE_EXCEEDED = 4
    NOT_FOUND = 5
    ALREADY_EXISTS = 6
    PERMISSION_DENIED = 7
    RESOURCE_EXHAUSTED = 8
    FAILED_PRECONDITION = 9
    ABORTED = 10
    OUT_OF_RANGE = 11
    UNIMPLEMENTED = 12
    INTERNAL = 13
    UNAVAILABLE = 14
    DATA_LOSS = 15
    UNAUTHENTICATED = 16
    DEFERRED = 17
    INCOMPATIBLE = 18


STATUS_CODE_MASK = 0x1F  # IREE_STATUS_CODE_MASK: the code lives in the pointer's low 5 bits


@dataclass(frozen=True)
class Status:
    code: StatusCode
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.code == StatusCode.OK

    def raise_if_error(self) -> None:
        if not self.ok:
            raise StatusError(self.code, self.message)

    def __str__(self) -> str:
        return self.code.name + (f": {self.message}" if self.message else "")


OK = Status(StatusCode.OK)


class StatusError(IreeAbiError):
    """A failing iree_status_t raised in Python; `code` and `message` as IREE would report them."""

    def __init__(self, code: "StatusCode | int", message: str = "") -> None:
        self.code = StatusCode(code)
        self.message = message
        super().__init__(f"{self.code.name}: {message}" if message else self.code.name)

    @property
    def status(self) -> Status:
        return Status(self.code, self.message)


class StatusTokenError(IreeAbiError):
    """A status pointer that is not a live token (consumed twice, or never made here)."""


# Live failing statuses: token (the pointer value without its code bits) -> Status.
_live: dict[int, Status] = {}
# Tokens are multiples of 32 so the code fits the low bits, and never 0.
_serial = itertools.count(1)


def to_pointer(status: Status) -> int:
    """The iree_status_t pointer value of `status` (0 for OK); a failure must be taken or ignored."""
    if status.ok:
        return 0
    token = next(_serial) << 5
    _live[token] = status
    return token | int(status.code)


def code_of(pointer: int) -> StatusCode:
    """iree_status_code(): the code in the pointer's low bits, without consuming it."""
    return StatusCode(pointer & STATUS_CODE_MASK)


def take(pointer: int) -> Status:
    """Consume a status pointer and return its Status (OK for NULL)."""
    if not pointer:
        return OK
    try:
        return _live.pop(pointer & ~STATUS_CODE_MASK)
    except KeyError:
        raise StatusTokenError(f"status pointer 0x{pointer:x} is not a live status") from None


def ignore(pointer: int) -> None:
    """iree_status_ignore: drop a status (a failure is freed, as IREE frees its storage)."""
    if pointer:
        take(pointer)


def check(pointer: int) -> None:
    """Consume a status pointer and raise StatusError if it is a failure."""
    if pointer:
        take(pointer).raise_if_error()


def live_tokens() -> set[int]:
    """Failing statuses not yet taken or ignored (for leak checks)."""
    return set(_live)


def describe_live(tokens: "set[int]") -> list[str]:
    return [str(_live[t]) for t in sorted(tokens) if t in _live]


def discard(tokens: "set[int]") -> None:
    """Drop leaked statuses after they were reported, so one leak is reported once."""
    for t in tokens:
        _live.pop(t, None)
