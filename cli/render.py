"""Plain-text rendering: column tables that fit a width, wrapped text and marked hex dumps; and
writing a command's lines, JSON object or picture."""
from __future__ import annotations

import textwrap
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Callable, Iterable, Iterator, Sequence, TextIO

from ..abi.files import open_output

from .errors import CliError

WIDTH = 100  # every human output line fits in this many columns
ELLIPSIS = "..."


@dataclass(frozen=True)
class Column:
    header: str
    align: str = "<"  # "<" left, ">" right
    shrink: bool = False  # may be truncated (with "...") to fit the width
    min_width: int = 8


def truncate(text: str, width: int) -> str:
    if len(text) <= width:
        return text
    if width <= len(ELLIPSIS):
        return text[:width]
    return text[: width - len(ELLIPSIS)] + ELLIPSIS


def table(columns: Sequence[Column], rows: Iterable[Sequence[str]], *, indent: int = 0,
          gap: int = 2, width: int = WIDTH) -> list[str]:
    """Rows under a header line; shrinkable columns are truncated if the table is too wide."""
    rows = [list(r) for r in rows]
    return list(table_lines(columns, rows, natural_widths(columns, rows), indent=indent, gap=gap,
                            width=width))


def natural_widths(columns: Sequence[Column], rows: Iterable[Sequence[str]]) -> list[int]:
    """Each column's width before fitting: its header's or its longest cell's."""
    widths = [len(c.header) for c in columns]
    for r in rows:
        for i, cell in enumerate(r):
            if len(cell) > widths[i]:
                widths[i] = len(cell)
    return widths


def table_lines(columns: Sequence[Column], rows: Iterable[Sequence[str]], widths: Sequence[int], *,
                indent: int = 0, gap: int = 2, width: int = WIDTH) -> Iterator[str]:
    """`table` one line at a time, given the `natural_widths` of the rows: a table of a million
    rows can then be produced by two passes over a generator instead of held in memory."""
    widths = list(widths)
    total = indent + sum(widths) + gap * (len(columns) - 1)
    for i in sorted(range(len(columns)), key=lambda k: -widths[k]):
        if total <= width:
            break
        if columns[i].shrink:
            new = max(columns[i].min_width, widths[i] - (total - width))
            total -= widths[i] - new
            widths[i] = new
    yield _line([c.header for c in columns], columns, widths, indent, gap)
    for r in rows:
        yield _line(r, columns, widths, indent, gap)


def _line(cells: Sequence[str], columns: Sequence[Column], widths: Sequence[int], indent: int,
          gap: int) -> str:
    parts = []
    for cell, col, w in zip(cells, columns, widths):
        cell = truncate(cell, w)
        parts.append(cell.rjust(w) if col.align == ">" else cell.ljust(w))
    return (" " * indent + (" " * gap).join(parts)).rstrip()


def table_width(widths: Sequence[int], indent: int = 0, gap: int = 2) -> int:
    return indent + sum(widths) + gap * (len(widths) - 1)


def chunk_columns(fixed: Sequence[int], repeated: Sequence[int], *, indent: int = 0, gap: int = 2,
                  width: int = WIDTH) -> list[range]:
    """Split the `repeated` columns (one per target) into runs that fit beside the `fixed` ones."""
    chunks: list[range] = []
    start = 0
    while start < len(repeated):
        end = start + 1
        while end < len(repeated) and table_width([*fixed, *repeated[start:end + 1]], indent, gap) <= width:
            end += 1
        chunks.append(range(start, end))
        start = end
    return chunks


def wrap(text: str, *, indent: int = 0, subsequent: int | None = None, width: int = WIDTH) -> list[str]:
    """Word-wrapped lines (long words are broken so that no line exceeds `width`)."""
    first = " " * indent
    rest = " " * (indent if subsequent is None else subsequent)
    return textwrap.wrap(text, width=width, initial_indent=first, subsequent_indent=rest,
                         break_long_words=True, break_on_hyphens=False) or [first.rstrip()]


# --------------------------------------------------------------------------------------------------
# Hex dumps

ROW = 16


@dataclass(frozen=True)
class Mark:
    char: str  # drawn under every byte of [offset, offset + size)
    offset: int
    size: int


def marks_overlap(marks: Sequence[Mark]) -> bool:
    """Whether two marks cover a byte in common (`hexdump` shows such bytes as 'x')."""
    return any(a.offset < b.offset + b.size and b.offset < a.offset + a.size
               for k, a in enumerate(marks) for b in marks[k + 1:])


def hexdump(data: bytes, marks: Sequence[Mark], *, indent: int = 4, context: int = 0) -> list[str]:
    """The 16-byte rows of `data` that hold a marked byte (plus `context` rows around them), each
    followed by a line of mark characters under the marked bytes ('x' where marks overlap)."""
    if not data:
        return [" " * indent + "(empty buffer)"]
    n_rows = -(-len(data) // ROW)
    wanted: set[int] = set()
    beyond = []
    for m in marks:
        lo, hi = m.offset, m.offset + max(m.size, 1)
        if lo >= len(data):
            beyond.append(m)
            continue
        for r in range(lo // ROW, (min(hi, len(data)) - 1) // ROW + 1):
            wanted.update(range(max(0, r - context), min(n_rows, r + context + 1)))
        if hi > len(data):
            beyond.append(m)
    if not wanted:
        wanted.add(n_rows - 1)
    out: list[str] = []
    prev = None
    for r in sorted(wanted):
        if prev is not None and r != prev + 1:
            out.append(" " * indent + "....")
        prev = r
        base = r * ROW
        chunk = data[base: base + ROW]
        cells, under = [], []
        for i in range(ROW):
            sep = " " if i == 8 else ""
            if i < len(chunk):
                cells.append(sep + f"{chunk[i]:02x}")
                under.append(sep + _mark_at(base + i, marks) * 2)
            else:
                cells.append(sep + "  ")
                under.append(sep + "  ")
        out.append((" " * indent + f"{base:04x}  " + " ".join(cells)).rstrip())
        line = (" " * indent + "      " + " ".join(under)).rstrip()
        if line.strip():
            out.append(line)
    for m in beyond:
        out.append(" " * indent + f"({m.char}: bytes {m.offset}..{m.offset + m.size - 1} lie beyond "
                                  f"the {len(data)}-byte buffer)")
    return out


def _mark_at(offset: int, marks: Sequence[Mark]) -> str:
    chars = {m.char for m in marks if m.offset <= offset < m.offset + m.size}
    if not chars:
        return " "
    return chars.pop() if len(chars) == 1 else "x"


# --------------------------------------------------------------------------------------------------
# Writing a command's output


def emit(lines: Iterable[str], out: TextIO) -> None:
    """Each line to `out`, newline-terminated."""
    for line in lines:
        out.write(line + "\n")


def emit_json(obj: Any, out: TextIO) -> None:
    import json

    out.write(json.dumps(obj, indent=2) + "\n")


def write_svg(path: str | None, draw: Callable[[ModuleType], str]) -> None:
    """The picture `draw(picture)` makes with the module `cli.picture` into `path` (nothing without
    --svg: drawsvg is imported only to draw); the text output goes on as usual."""
    if path is None:
        return
    from . import picture

    text = draw(picture)
    try:
        with open_output(path) as f:  # (a FIFO no process reads is refused, not waited on)
            f.write(text)
    except OSError as e:
        raise CliError(f"--svg {path}: {e.strerror or e}") from None
