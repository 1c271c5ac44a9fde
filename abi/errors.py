"""Exception classes shared by every ireeabi layer."""
from __future__ import annotations

import difflib
from typing import Iterable

from .printable import printable


class IreeAbiError(Exception):
    """Base of every error ireeabi raises on bad input."""


class UnknownNameError(IreeAbiError, KeyError):
    """A name (target, struct, ...) that is not known; lists the valid ones."""

    def __init__(self, what: str, name: str, valid: Iterable[str]) -> None:
        self.what = what
        self.name = name
        self.valid = sorted(valid)
        self.closest = difflib.get_close_matches(name, self.valid, n=3, cutoff=0.5)
        # the names may be a module's: shown escaped (a backslash doubled, as where else they
        # appear), never raw
        shown = f"'{printable(name)}'" if isinstance(name, str) else repr(name)
        hint = f"; closest: {', '.join(map(printable, self.closest))}" if self.closest else ""
        super().__init__(f"unknown {what} {shown}{hint}; valid: {', '.join(map(printable, self.valid))}")

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


class LayoutError(IreeAbiError):
    """A struct declaration that cannot be laid out, or whose views disagree."""
