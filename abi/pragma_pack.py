"""`#pragma pack` across a translation unit, as gcc and clang follow it: one state (the value in force
and the stack of pushed ones) that the preprocessor carries through the header and every file it
includes, in the order it reads them. `abi/cheader.py` gives each record the value in force where it
is defined; this module holds the rules, free of libclang:

- the spellings: a `#pragma pack(...)` directive line, and the `_Pragma("pack(...)")` operator,
  written in the text or produced by a macro's expansion (how real headers spell it:
  `#define PACK_BEGIN _Pragma("pack(push, 1)")`), whose pack operations `macro_operations` finds
  in the macro's body, through the macros it names;
- the arguments, read as clang reads them (`operation`): push or pop with an optional label and
  value, a value, nothing (back to none), show (no change);
- the walk (`checkpoints`): the state entering a file is the one its includer had at the
  `#include`, and what the file leaves in force (a header that pushes and never pops) holds after
  the `#include` in the includer; a file included twice (an unguarded push-header) acts twice.
  Each file gets, for the first time the preprocessor reads it, the value in force from each of
  its operations and includes on.

Not modelled (the cross-check of every record against libclang reports the difference): a value
that is no integer literal, and directives inside `#if` blocks that are skipped.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, NamedTuple, Sequence

# A #pragma pack directive at the start of a line (a byte pattern: libclang's offsets are bytes).
DIRECTIVE_RE = re.compile(rb"^[ \t]*#[ \t]*pragma[ \t]+pack[ \t]*\(([^)\n]*)\)", re.M)
# The _Pragma operator with a pack string: `_Pragma ( "pack(push, 1)" )`.
OPERATOR_RE = re.compile(rb'\b_Pragma[ \t]*\([ \t]*"[ \t]*pack[ \t]*\(([^)"\n]*)\)[ \t]*"[ \t]*\)')
# The string of one _Pragma operator as a macro body's token spells it.
_STRING_RE = re.compile(r'^"\s*pack\s*\(([^)"]*)\)\s*"$')

class Operation(NamedTuple):
    kind: str  # "push", "pop", "set", "show"
    value: "int | str | None"  # the value it sets (None: none); a str says why it is not modelled
    has_value: bool  # push with a value, or a set
    line: int  # the line of the directive or of the macro's expansion


def operation(arguments: str, line: int) -> Operation:
    """One `pack(...)` argument list, as clang reads it: `push[, label][, N]`, `pop[, label][, N]`,
    `N`, nothing, `show`."""
    args = [a.strip() for a in arguments.split(",") if a.strip()]
    values = [a for a in args if a[:1].isdigit()]
    value: int | str | None = None
    if values:
        try:
            value = int(values[-1].rstrip("uUlL"), 0)
        except ValueError:
            value = f"#pragma pack value {values[-1]!r} at line {line} is not modelled"
    if args[:1] in (["push"], ["pop"], ["show"]):
        return Operation(args[0], value, bool(values), line)
    if args and not values:
        return Operation("set", f"#pragma pack({', '.join(args)}) at line {line} is not modelled", True, line)
    return Operation("set", value, True, line)


@dataclass
class PackState:
    """The value in force and the pushed ones, as the preprocessor carries them."""
    current: "int | str | None" = None
    stack: list = field(default_factory=list)

    def apply(self, op: Operation) -> None:
        if op.kind == "show":
            return
        if op.kind == "push":
            self.stack.append(self.current)
            if not op.has_value:
                return
            value = op.value
        elif op.kind == "pop":
            value = self.stack.pop() if self.stack else None
            if op.has_value:  # pop, then set (clang: `pack(pop, N)`)
                value = op.value
        else:
            value = op.value
        if isinstance(value, int) and (value <= 0 or value & (value - 1)):
            value = None if value == 0 else f"#pragma pack({value}) at line {op.line} is not a power of two"
        self.current = value


def line_counter(text: bytes) -> Callable[[int], int]:
    """A function from a byte offset to its 1-based line, for offsets asked in increasing order
    (linear in the text)."""
    at = [0, 1]  # offset counted to, its line

    def line_of(offset: int) -> int:
        if offset < at[0]:
            at[0], at[1] = 0, 1
        at[1] += text.count(b"\n", at[0], offset)
        at[0] = offset
        return at[1]
    return line_of


def text_operations(text: bytes, skip: Sequence[tuple[int, int]] = ()) -> list[tuple[int, Operation]]:
    """(byte offset, operation) of every `#pragma pack` directive and `_Pragma("pack(...)")` operator
    spelled in a file's text, in order; operators inside the byte ranges `skip` (the file's macro
    definitions: they act where the macro expands) are left out."""
    found = [(m.start(), m.group(1)) for m in DIRECTIVE_RE.finditer(text)]
    if b"_Pragma" in text:
        starts = sorted(skip)
        for m in OPERATOR_RE.finditer(text):
            if not any(s <= m.start() < e for s, e in starts):
                found.append((m.start(), m.group(1)))
        found.sort()
    line_of = line_counter(text)
    return [(offset, operation(args.decode(errors="replace"), line_of(offset))) for offset, args in found]


class MacroBody(NamedTuple):
    """What a macro's definition says for packing: its parameters and body tokens (spellings)."""
    parameters: tuple[str, ...]
    tokens: tuple[str, ...]


def macro_operations(name: str, macros: "dict[str, MacroBody]", memo: dict,
                     line: int = 0) -> tuple[list[Operation], list[Operation]]:
    """The pack operations one expansion of macro `name` performs, at `line`: (those before its first
    use of a parameter, those after), so a record written in the macro's argument sits between them.
    Found in the body's `_Pragma ( "pack(...)" )` operators and, in order, in the macros the body
    names (each macro's worked out once, in `memo`; a macro naming itself stops there, as in C)."""
    before, after = _macro_arguments(name, macros, memo, frozenset())
    return [operation(a, line) for a in before], [operation(a, line) for a in after]


def _macro_arguments(name: str, macros: "dict[str, MacroBody]", memo: dict,
                     active: frozenset) -> tuple[list[str], list[str]]:
    """The `pack(...)` argument lists of macro `name`'s expansion (before, after its parameters)."""
    if name in memo:
        return memo[name]
    body = macros.get(name)
    if body is None or name in active:
        return [], []
    active = active | {name}
    before: list[str] = []
    after: list[str] = []
    into = before
    toks = body.tokens
    i = 0
    while i < len(toks):
        t = toks[i]
        if t in body.parameters or t == "__VA_ARGS__":
            into = after
        elif t == "_Pragma" and i + 3 < len(toks) and toks[i + 1] == "(" and toks[i + 3] == ")":
            m = _STRING_RE.match(toks[i + 2])
            if m:
                into.append(m.group(1))
            i += 3
        elif t in macros:
            first, rest = _macro_arguments(t, macros, memo, active)
            into.extend(first + rest)
        i += 1
    memo[name] = (before, after)
    return before, after


@dataclass
class FileVisit:
    """One time the preprocessor reads a file: the file, and the files it includes from it, each at
    the byte offset of its #include."""
    name: str
    includes: list = field(default_factory=list)  # [(offset, FileVisit)]


def inclusion_tree(main: str, inclusions: Iterable[tuple[str, int, str, int]]) -> FileVisit:
    """The visits from libclang's inclusions in the order it made them, each (includer, offset of the
    #include, included file, depth: 1 for the main file's): a visit at depth d is one of the latest
    visit at depth d - 1."""
    root = FileVisit(main)
    open_at = [root]  # the latest visit at each depth
    for _, offset, included, depth in inclusions:
        if depth < 1 or depth > len(open_at):
            continue  # not reached through the visits seen (libclang lists only entered files)
        visit = FileVisit(included)
        open_at[depth - 1].includes.append((offset, visit))
        del open_at[depth:]
        open_at.append(visit)
    return root


def checkpoints(root: FileVisit, operations_of: Callable[[str], list[tuple[int, Operation]]]
                ) -> dict[str, tuple[list[int], list]]:
    """For each file, at its first visit: (byte offsets, the value in force from each on), from
    offset -1 (what the includer had in force) on; `operations_of(file)` gives the file's own pack
    operations, by offset. Iterative: include chains as deep as the compiler allows."""
    out: dict[str, tuple[list[int], list]] = {}
    state = PackState()
    stack: list[list] = []  # [file, its events (offset, 0: operation / 1: include, what), next, first visit]

    def enter(visit: FileVisit) -> None:
        first = visit.name not in out
        if first:
            out[visit.name] = ([-1], [state.current])
        events = [(o, 0, op) for o, op in operations_of(visit.name)] + [(o, 1, v) for o, v in visit.includes]
        events.sort(key=lambda e: (e[0], e[1]))  # an operation before an #include at the same offset
        stack.append([visit.name, events, 0, first])

    enter(root)
    while stack:
        frame = stack[-1]
        name, events, i, first = frame
        if i == len(events):
            stack.pop()
            if stack and stack[-1][3]:  # what the included file left in force holds after its #include
                includer = stack[-1]
                offsets, values = out[includer[0]]
                offsets.append(includer[1][includer[2] - 1][0])
                values.append(state.current)
            continue
        offset, kind, what = events[i]
        frame[2] = i + 1
        if kind == 1:
            enter(what)
            continue
        state.apply(what)
        if first:
            out[name][0].append(offset)
            out[name][1].append(state.current)
    return out


__all__ = ["DIRECTIVE_RE", "OPERATOR_RE", "Operation", "operation", "PackState", "line_counter",
           "text_operations", "MacroBody", "macro_operations", "FileVisit", "inclusion_tree", "checkpoints"]
