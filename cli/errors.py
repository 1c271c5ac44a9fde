"""Errors of the command line: bad input that is not a struct, target or cconv error (exit 2)."""
from __future__ import annotations

from ..abi.errors import IreeAbiError


class CliError(IreeAbiError):
    """Bad command-line input; the message names the offending value."""


class SpansArgumentError(CliError):
    """A `--spans` value that is not a comma-separated list of counts."""

    def __init__(self, text: str, item: str, reason: str) -> None:
        self.text = text
        self.item = item
        super().__init__(f"--spans {text!r}: {item!r} {reason}")


class NotACconvError(CliError):
    """`check` was given something that is not a calling convention (e.g. a struct name)."""
