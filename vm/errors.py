"""The VM's exceptions: traps, failing statuses, import resolution, argument and state errors
(ireeabi's own: IREE returns statuses; these carry them, located where the interpreter ran).

Every class derives from `ireeabi.abi.errors.IreeAbiError` and carries the offending detail: the
function and pc of the instruction that failed (and its callers), the status code, the import name.
"""
from __future__ import annotations

from typing import Sequence

from ireeabi.abi.errors import IreeAbiError
from ireeabi.abi.printable import printable, printable_text
from ireeabi.base.status import STATUS_CODE_MASK, Status, StatusCode, as_code, code_string


class VmError(IreeAbiError):
    """A failure while running bytecode; names the function and pc when known, and the callers."""

    def __init__(self, message: str, function: str | None = None, pc: int | None = None) -> None:
        self.message = message
        self.function = function
        self.pc = pc
        self.stack: tuple[tuple[str, int], ...] = ()  # callers, innermost first
        super().__init__(message)

    def locate(self, function: str, pc: int, stack: Sequence[tuple[str, int]] = ()) -> "VmError":
        """Record where the error happened (the first location recorded wins)."""
        if self.function is None:
            self.function, self.pc, self.stack = function, pc, tuple(stack)
        return self

    def __str__(self) -> str:
        if self.function is None or self.pc is None:
            return self.message
        return f"{self.message} ({where(self.function, self.pc, self.stack)})"


def where(function: str, pc: int, stack: Sequence[tuple[str, int]] = ()) -> str:
    """"in F at pc 0x.., called from G at pc 0x..": a bytecode location and its callers."""
    return f"in {function} at pc 0x{pc:X}" + "".join(f", called from {name} at pc 0x{at:X}"
                                                      for name, at in stack)


class VmTrapError(VmError):
    """What would crash or abort the native runtime: integer division by zero, signed division
    overflow, running off the end of a function, an access outside a buffer that IREE's wrapping
    bounds check lets through."""


class VmStatusError(VmError):
    """A failing iree_status_t the runtime would return (bounds, null refs, import failures...)."""

    def __init__(self, code: "StatusCode | int", message: str, function: str | None = None,
                 pc: int | None = None) -> None:
        self.code = status_code(code)
        # iree_status_code_string: "" for the unnamed codes, so the text starts with "; " as IREE's
        super().__init__(f"{code_string(self.code)}; {message}", function, pc)
        self.detail = message

    @property
    def status(self) -> Status:
        return Status(self.code, self.detail)


def annotate(message: str, note: str) -> str:
    """A status message with an annotation appended as IREE appends it (no empty segment when the
    status had no message of its own)."""
    return f"{message}; {note}" if message else note


class VmFailError(VmStatusError):
    """vm.fail with a nonzero status: the program's own failure (`code`, `detail` = its message)."""


class ImportResolutionError(IreeAbiError):
    """A required import no resolver provides. The message shows the module's names escaped
    (`abi.printable`): the import's unambiguously, the reason's control characters."""

    def __init__(self, full_name: str, reason: str) -> None:
        self.full_name = full_name
        super().__init__(f"import {printable(full_name)}: {printable_text(reason)}")


class ArgumentError(IreeAbiError):
    """Arguments to `Context.invoke` (or import results) that do not match the cconv."""


class ContextClosedError(IreeAbiError):
    """A call on a Context or Program after `close()`."""


class InvocationStateError(IreeAbiError):
    """The results of an Invocation asked for before it finished (it yielded, failed or was
    aborted)."""


class ContextBusyError(IreeAbiError):
    """A call on a Context while another thread runs one: a context (and the heap under it) is owned
    by one thread at a time, as an IREE VM context is."""


def status_code(code: "StatusCode | int") -> StatusCode:
    """The StatusCode of a raw code, masked as IREE masks it; codes status.h leaves unnamed (19..31)
    stay themselves, as every code within the mask is valid."""
    return as_code(int(code) & STATUS_CODE_MASK)


__all__ = ["VmError", "VmTrapError", "VmStatusError", "VmFailError", "where",
           "ImportResolutionError", "ArgumentError", "ContextClosedError", "ContextBusyError",
           "InvocationStateError", "status_code"]
