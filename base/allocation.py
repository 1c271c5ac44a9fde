"""One block of a tracked heap (`Allocation`) and the Python stacks it keeps.

Every allocation of a `base.heap.Heap` records the stack that made it and, once freed, the stack that
freed it: `capture_stack` takes one cheaply on every malloc and free (code objects and instruction
offsets, no line lookups), `frames` / `format_stack` turn it into (file, line, function) when a
report needs it, and `leak_report` is the text of a tracked heap's leaks. A report starts each stack
at its first frame outside the test harness (pytest, pluggy, runpy: `trim_harness`), where the
user's code begins; `full=True` keeps the whole captured stack.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

STACK_DEPTH = 16  # frames kept per captured stack (the innermost ones)


Frame = tuple[str, int, str]


def capture_stack(skip: int) -> tuple:
    """The caller's stack, outermost first, as one flat tuple (code object, instruction offset, ...):
    cheap to take on every malloc and free (one object, no line lookups); `frames()` /
    `format_stack` turn it into (file, line, function) when a report needs it."""
    flat: list[Any] = []
    append = flat.append
    f: FrameType | None = sys._getframe(skip + 1)
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


# Modules of the harness that runs a test: the outermost frames of every stack a test captures.
HARNESS_MODULES = ("_pytest", "pytest", "pluggy", "runpy")


def _harness_paths() -> tuple[str, ...]:
    """The files (a module) or folders (a package, ending in a separator) of the harness modules
    loaded now: found from sys.modules, so a user's file or folder of the same name never matches."""
    paths = []
    for name in HARNESS_MODULES:
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if not path:
            continue
        if os.path.basename(path) == "__init__.py":
            paths.append(os.path.dirname(path) + os.sep)
        else:
            paths.append(path)
    return tuple(paths)


def is_harness_frame(filename: str, paths: tuple[str, ...] | None = None) -> bool:
    """Whether a frame's file belongs to pytest, pluggy or runpy (`paths`: `_harness_paths()`)."""
    if filename.startswith("<frozen runpy"):
        return True
    for p in _harness_paths() if paths is None else paths:
        if filename.startswith(p) if p.endswith(os.sep) else filename == p:
            return True
    return False


def trim_harness(frames_: tuple[Frame, ...]) -> tuple[Frame, ...]:
    """`frames_` (outermost first) from the first frame outside the test harness: the frames of
    pytest and pluggy that ran the test say nothing about the allocation. Only the leading run goes
    (a test calling back into pytest keeps those frames); a stack wholly of the harness stays whole."""
    paths = _harness_paths()
    for i, (filename, _, _) in enumerate(frames_):
        if not is_harness_frame(filename, paths):
            return frames_[i:]
    return frames_


def format_stack(stack: tuple, indent: str = "    ", *, full: bool = False) -> str:
    """A captured stack as traceback lines ('File "...", line N, in f'), outermost first; from its
    first frame outside pytest and pluggy unless `full`."""
    shown = frames(stack) if full else trim_harness(frames(stack))
    return "\n".join(f'{indent}File "{fn}", line {ln}, in {name}' for fn, ln, name in shown)


def _trims(stack: tuple | None) -> bool:
    whole = frames(stack) if stack else ()
    return len(trim_harness(whole)) < len(whole)


@dataclass(eq=False, slots=True, init=False)
class Allocation:
    address: int
    size: int
    serial: int  # allocation order in its heap
    tag: str
    # as capture_stack took it (code objects and offsets); frames() gives (file, line, function)
    stack: tuple = field(repr=False)
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

    def report(self, *, full: bool = False) -> str:
        """The block and its stacks; each from its first frame outside pytest and pluggy unless
        `full`."""
        text = f"{self.describe()}, allocated at:\n{format_stack(self.stack, full=full)}"
        if self.freed_stack:
            text += f"\n  freed at:\n{format_stack(self.freed_stack, full=full)}"
        return text


def leak_report(leaks: list[Allocation], statuses: list[str], *, full: bool = False) -> str:
    """The text of a LeakError: each leaked allocation with its stacks (from the first frame outside
    pytest and pluggy unless `full`), then the failing statuses nobody consumed."""
    lines = [f"{len(leaks)} leaked allocation(s), {sum(a.size for a in leaks)} bytes"]
    lines += [a.report(full=full) for a in leaks]
    if statuses:
        lines.append(f"{len(statuses)} failing status(es) never consumed: " + "; ".join(statuses))
    if not full and any(_trims(a.stack) or _trims(a.freed_stack) for a in leaks):
        lines.append("(stacks start at the first frame outside pytest and pluggy; "
                     "LeakError.full_report has them whole)")
    return "\n".join(lines)


__all__ = ["STACK_DEPTH", "HARNESS_MODULES", "Frame", "capture_stack", "frames", "is_harness_frame", "trim_harness",
           "format_stack", "Allocation", "leak_report"]
