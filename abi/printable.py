"""How a name that comes from outside (a module's function, import, module and type names, an
executable's format string, an attribute key) is shown in a message or an output line.

Such names are bytes of the input: IREE compares them as bytes and never decodes them. ireeabi
reads them as UTF-8 with `surrogateescape` (a byte that is not UTF-8 becomes one lone surrogate, so
the name still round-trips to its bytes). Printed raw, a NUL, an ESC sequence or a newline in a
name would corrupt a terminal or forge a line of output; so they are escaped:

- `printable(name)`: the name with every character that is not printable as `\\xNN` (a byte that
  is not UTF-8, or an ASCII control character), `\\uNNNN` / `\\UNNNNNNNN` (any other, e.g. U+0085),
  and a backslash as `\\\\`, so the text is unambiguous: two different names never print the same.
- `printable_text(text)`: a whole message or line that may already hold escaped names: the
  non-printable characters alone are escaped (backslashes are left as they are), so applying it
  twice changes nothing; the last pass before text leaves the command line.
"""
from __future__ import annotations

__all__ = ["printable", "printable_text"]


def _escape(ch: str) -> str:
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: one byte that is not UTF-8
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x80:  # an ASCII control character (one byte too)
        return f"\\x{code:02x}"
    # a character of several bytes: \xNN of 0x80 and above always means one raw byte
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def printable(name: "str | bytes") -> str:
    """`name` (bytes are read as UTF-8 with surrogateescape) with its non-printable characters as
    `\\xNN` / `\\uNNNN` / `\\UNNNNNNNN` and backslashes doubled."""
    if isinstance(name, (bytes, bytearray, memoryview)):
        name = bytes(name).decode("utf-8", "surrogateescape")
    if name.isprintable() and "\\" not in name:
        return name
    return "".join("\\\\" if ch == "\\" else ch if ch.isprintable() else _escape(ch) for ch in name)


def printable_text(text: str) -> str:
    """One line of `text`: its non-printable characters (newlines included) escaped as by
    `printable`, backslashes and tabs left alone (already-escaped text is unchanged; a tab moves
    the cursor and nothing else, and an echoed `--input` keeps it as iree-run-module prints it)."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch == "\t" else _escape(ch) for ch in text)
