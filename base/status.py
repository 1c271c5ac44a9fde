"""iree_status_t as Python values, and how they cross a C function-pointer boundary.

IREE's status codes are those of runtime/src/iree/base/status.h (`iree_status_code_e`). A status is a
pointer: NULL is OK, anything else is a failure whose low bits (`IREE_STATUS_CODE_MASK`) hold the code
and whose remaining bits point at heap storage with the message. Python callbacks behind a C function
pointer (allocator ctl functions) return such a pointer: the code sits in the low bits exactly as in
IREE, the rest is a token into the runtime's `StatusTable` (a Heap owns one, `heap.statuses`)
holding the Python `Status`. A failing status must be consumed (`take`) or ignored (`ignore`) once,
like IREE's, or it is reported as a leak (by `base.heap.tracked_heap`, for its heap's table).

A pointer with no bits above the code (`from_code`, what IREE returns when statuses are built
without storage or storage could not be allocated) is a complete status too: it has a code and no
message. Every code that fits the mask is valid; the unnamed ones (19..31) are `as_code(n)`
values, which IREE prints as an empty code string. `Status.format` (and a table's `to_string` of a
pointer) give the text of iree_status_format: the code string, then "; " before the message and
before each annotation.
"""
from __future__ import annotations

import enum
import itertools
import operator
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


def _unnamed(value: int) -> StatusCode:
    # A pseudo-member: an int-valued StatusCode for a code status.h leaves unnamed. StatusCode(n)
    # still rejects the raw int (callers that map unnamed codes elsewhere keep doing so), but a value
    # made here passes through StatusCode(...) unchanged, so Status and StatusError accept it.
    member = int.__new__(StatusCode, value)
    member._name_ = f"CODE_{value}"
    member._value_ = value
    return member


# The named codes by value, and every value of the low bits indexed by itself (one lookup for code_of).
_NAMED: dict[int, StatusCode] = {int(c): c for c in StatusCode}
_CODES: tuple[StatusCode, ...] = tuple(_NAMED.get(v) or _unnamed(v) for v in range(STATUS_CODE_MASK + 1))


def as_code(value: int) -> StatusCode:
    """The StatusCode of any code that fits IREE_STATUS_CODE_MASK, named or not (status.h: every
    code within the mask is valid); ValueError for anything else."""
    return _as_code(value)


def _as_code(code: "StatusCode | int") -> StatusCode:
    if type(code) is StatusCode:
        return code
    try:
        value = operator.index(code)
    except TypeError:
        value = -1
    if not 0 <= value <= STATUS_CODE_MASK:
        raise ValueError(f"status code {code!r} is not a value of IREE_STATUS_CODE_MASK (0..31)")
    return _CODES[value]


def code_string(code: "StatusCode | int") -> str:
    """iree_status_code_string: the enumerator's name for the 19 named codes, "" for any other."""
    code = int(code)
    member = _NAMED.get(code)
    return member.name if member is not None else ""


def _text(message: str, annotations: "tuple[str, ...]") -> str:
    # iree_status_format_message: "; " before a non-empty message and before every payload
    # (an annotation's text, empty or not).
    text = f"; {message}" if message else ""
    for note in annotations:
        text += f"; {note}"
    return text


@dataclass(frozen=True)
class Status:
    """A status value: `message` is the storage message (iree_status_message), `annotations` the
    message payloads iree_status_annotate appended after it."""

    code: StatusCode
    message: str = ""
    annotations: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.code == StatusCode.OK

    def raise_if_error(self) -> None:
        if not self.ok:
            raise StatusError(self.code, self.message, self.annotations)

    def annotate(self, message: str) -> "Status":
        """iree_status_annotate: OK and an empty message change nothing; a status without a
        message takes it as its message; otherwise it is appended as an annotation."""
        if self.ok or not message:
            return self
        if not self.message:
            return Status(self.code, message, self.annotations)
        return Status(self.code, self.message, self.annotations + (message,))

    def format(self) -> str:
        """iree_status_format without a source location: "CODE; message; annotation..."."""
        return code_string(self.code) + _text(self.message, self.annotations)

    def __str__(self) -> str:
        return self.format()


OK = Status(StatusCode.OK)


class StatusError(IreeAbiError):
    """A failing iree_status_t raised in Python; `code` and `message` as IREE would report them
    (`annotations`: what was appended to the status after its message)."""

    def __init__(self, code: "StatusCode | int", message: str = "",
                 annotations: "tuple[str, ...]" = ()) -> None:
        self.code = code if type(code) is StatusCode else _as_code(code)
        self.message = message
        self.annotations = tuple(annotations)
        # Python's text keeps "CODE: message"; the IREE text is self.status.format().
        text = message + "".join(f"; {a}" for a in self.annotations) if message else \
            "; ".join(self.annotations)
        super().__init__(f"{self.code.name}: {text}" if text else self.code.name)

    @property
    def status(self) -> Status:
        return Status(self.code, self.message, self.annotations)


class IreeFaultError(IreeAbiError):
    """Where IREE's own runtime would read or write out of bounds, or crash, ireeabi refuses instead
    of going on with made-up memory: not a status (IREE returns none there), and the message says
    what IREE reads or writes, from where, and what its runtime does then. The VM records where
    its bytecode was when the fault reached it (`locate`: a text such as "in main at pc 0x1C"),
    so a fault inside an import or a kernel names the call that led there."""

    where: str | None = None

    def locate(self, where: str) -> "IreeFaultError":
        """Record where the fault happened (the first location recorded wins)."""
        if self.where is None:
            self.where = where
        return self

    def __str__(self) -> str:
        text = super().__str__()
        return text if self.where is None else f"{text} ({self.where})"


class StatusTokenError(IreeAbiError):
    """A status pointer that is not a live token (consumed twice, or never made here)."""


def from_code(code: "StatusCode | int") -> int:
    """iree_status_from_code: a status without storage, the code masked into the low bits (so a
    multiple of 32 gives OK, i.e. NULL). Nothing to take or ignore, though both accept it."""
    return int(code) & STATUS_CODE_MASK


def code_of(pointer: int) -> StatusCode:
    """iree_status_code(): the code in the pointer's low bits, without consuming it."""
    return _CODES[pointer & STATUS_CODE_MASK]


class StatusTable:
    """The failing statuses of one runtime that crossed a C function pointer (a `Heap` owns one:
    `heap.statuses`): token (the pointer value without its code bits) -> Status. A pointer made by
    one table is unknown to every other, as IREE's status storage belongs to its allocator."""

    __slots__ = ("_live", "_serial")

    def __init__(self) -> None:
        self._live: dict[int, Status] = {}
        # Tokens are multiples of 32 so the code fits the low bits, and never 0.
        self._serial = itertools.count(1)

    def to_pointer(self, status: Status) -> int:
        """The iree_status_t pointer value of `status` (0 for OK); a failure must be taken or ignored."""
        if status.ok:
            return 0
        code = _as_code(status.code)  # a code wider than the mask would corrupt the token bits
        token = next(self._serial) << 5
        self._live[token] = status
        return token | code

    def _lookup(self, pointer: int) -> Status:
        """The Status a non-NULL pointer stands for, without consuming it."""
        token = pointer & ~STATUS_CODE_MASK
        if not token:  # code only: no storage, so no message (status.c frees nothing for it)
            return Status(_CODES[pointer])
        found = self._live.get(token)
        if found is None:
            raise StatusTokenError(f"status pointer 0x{pointer:x} is not a live status")
        if int(found.code) != pointer & STATUS_CODE_MASK:
            # IREE reads the code from the pointer bits; ours were set from the Status, so a
            # mismatch means the pointer was altered after it was made.
            stored = code_string(found.code) or int(found.code)
            raise StatusTokenError(f"status pointer 0x{pointer:x} carries code {pointer & STATUS_CODE_MASK}"
                                   f" but its storage holds a {stored} status")
        return found

    def take(self, pointer: int) -> Status:
        """Consume a status pointer and return its Status (OK for NULL)."""
        if not pointer:
            return OK
        found = self._lookup(pointer)
        self._live.pop(pointer & ~STATUS_CODE_MASK, None)
        return found

    def ignore(self, pointer: int) -> None:
        """iree_status_ignore: drop a status (a failure is freed, as IREE frees its storage)."""
        if pointer:
            self.take(pointer)

    def consume_code(self, pointer: int) -> StatusCode:
        """iree_status_consume_code: the code, the status freed."""
        code = code_of(pointer)
        self.ignore(pointer)
        return code

    def annotate(self, pointer: int, message: str) -> int:
        """iree_status_annotate on a pointer: OK or an empty message returns it unchanged; a status
        without storage gets storage (a new pointer); otherwise the same pointer, its status
        annotated."""
        if not pointer or not message:
            return pointer
        found = self._lookup(pointer)
        token = pointer & ~STATUS_CODE_MASK
        if not token:
            return self.to_pointer(found.annotate(message))
        self._live[token] = found.annotate(message)
        return pointer

    def to_string(self, pointer: int) -> str:
        """iree_status_to_string / iree_status_format of a pointer, without consuming it ("OK" for
        NULL)."""
        return self._lookup(pointer).format() if pointer else code_string(StatusCode.OK)

    def format_status(self, status: "Status | int") -> str:
        """The IREE text of a Status value or a status pointer of this table."""
        return status.format() if isinstance(status, Status) else self.to_string(status)

    def check(self, pointer: int) -> None:
        """Consume a status pointer and raise StatusError if it is a failure."""
        if pointer:
            self.take(pointer).raise_if_error()

    def live_tokens(self) -> set[int]:
        """Failing statuses not yet taken or ignored (for leak checks)."""
        return set(self._live)

    def describe_live(self, tokens: "set[int]") -> list[str]:
        """The text of each live status among `tokens`, in the order they were made."""
        live = self._live
        return [str(live[t]) for t in sorted(tokens) if t in live]

    def discard(self, tokens: "set[int]") -> None:
        """Drop leaked statuses after they were reported, so one leak is reported once."""
        for t in tokens:
            self._live.pop(t, None)


__all__ = ["StatusCode", "STATUS_CODE_MASK", "as_code", "code_string", "Status", "OK", "StatusError", "IreeFaultError",
           "StatusTokenError", "StatusTable", "from_code", "code_of"]
