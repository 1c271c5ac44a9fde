"""One block of a tracked heap (`Allocation`) and the Python stacks it keeps.

Every allocation of a `vm.heap.Heap` records the stack that made it and, once freed, the stack that
freed it: `capture_stack` takes one cheaply on every malloc and free (code objects and instruction
offsets, no line lookups), `frames` / `format_stack` turn it into (file, line, function) when a
report needs it, and `leak_report` is the text of a tracked heap's leaks.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

STACK_DEPTH = 16  # frames kept per captured stack (the innermost ones)


Frame = tuple[str, int, str]


def capture_stack(skip: int) -> tuple:
    """The caller's stack, outermost first, as one flat tuple (code object, instruction offset, ...):
    cheap to take on every malloc and free (one object, no line lookups); `frames()` /
    `format_stack` turn it into (file, line, function) when a report needs it."""
    flat = []
    append = flat.append
    f = sys._getframe(skip + 1)
    for _ in range(STACK_DEPTH):
        if f is None:
            break
        append(f.f_lasti)
        append(f.f_code)
        f = f.f_back
    flat.reverse()  # (code, offset) pairs, outermost first
    return tuple(flat)


def _line_of(code: Any, offset: int) -> int:
    """The source line of the instruction at byte `offset` of `code` (what frame.f_lineno says)."""
    for start, end, line in code.co_lines():
        if start <= offset < end and line is not None:
            return line
    return code.co_firstlineno


def frames(stack: tuple) -> tuple[Frame, ...]:
    """A captured stack as (file, line, function) frames."""
    return tuple((stack[i].co_filename, _line_of(stack[i], stack[i + 1]), stack[i].co_name)
                 for i in range(0, len(stack), 2))


def format_stack(stack: tuple, indent: str = "    ") -> str:
    """A captured stack as traceback lines ('File "...", line N, in f'), outermost first."""
    return "\n".join(f'{indent}File "{fn}", line {ln}, in {name}' for fn, ln, name in frames(stack))


@dataclass(eq=False, slots=True, init=False)
class Allocation:
    address: int
    size: int
    serial: int  # allocation order in its heap
    tag: str
    stack: tuple  # as capture_stack took it (code objects and offsets); frames() gives (file, line, function)
    raw: Any = field(repr=False)  # the arena's bytes (a memoryview); None once the chunk is given back
    internal: bool = False  # the heap's own blocks (scratch stack): never leaks, never user-freed
    freed_stack: tuple | None = field(default=None, repr=False)  # likewise
    base: int = field(default=0, repr=False)  # target address of raw[0]: address p is raw[p - base]
    end: int = field(default=-1, repr=False)  # address + size, fixed at creation (hot path)
    chunk: int = field(default=0, repr=False)  # the arena range holding the block and its red zones
    chunk_size: int = field(default=0, repr=False)
    guarded: bool = field(default=False, repr=False)  # ends at an inaccessible page (malloc guard=True)

    # Written by hand rather than generated: one Allocation per malloc, so its construction is hot.
    def __init__(self, address: int, size: int, serial: int, tag: str, stack: tuple, raw: Any,
                 internal: bool = False, base: int = 0, chunk: int = 0, chunk_size: int = 0) -> None:
        self.address = address
        self.size = size
        self.serial = serial
        self.tag = tag
        self.stack = stack
        self.raw = raw
        self.internal = internal
        self.freed_stack = None
        self.base = base
        self.end = address + size
        self.chunk = chunk
        self.chunk_size = chunk_size
        self.guarded = False

    def describe(self) -> str:
        tag = f" [{self.tag}]" if self.tag else ""
        return f"{self.size}-byte allocation #{self.serial} at 0x{self.address:x}{tag}"

    def report(self) -> str:
        text = f"{self.describe()}, allocated at:\n{format_stack(self.stack)}"
        if self.freed_stack:
            text += f"\n  freed at:\n{format_stack(self.freed_stack)}"
        return text


def leak_report(leaks: list[Allocation], statuses: list[str]) -> str:
    """The text of a LeakError: each leaked allocation with its stacks, then the failing statuses
    nobody consumed."""
    lines = [f"{len(leaks)} leaked allocation(s), {sum(a.size for a in leaks)} bytes"]
    lines += [a.report() for a in leaks]
    if statuses:
        lines.append(f"{len(statuses)} failing status(es) never consumed: " + "; ".join(statuses))
    return "\n".join(lines)


__all__ = ["STACK_DEPTH", "Frame", "capture_stack", "frames", "format_stack", "Allocation", "leak_report"]
