"""Turn command-line text into engine objects: targets, span counts, structs and cconvs."""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Iterator, Sequence

from ireeabi import layouts
from ireeabi.abi import cconv, targets
from ireeabi.abi.layout import Struct
from ireeabi.abi.targets import Target

from .errors import CliError, NotACconvError, SpansArgumentError

DEFAULT_TARGET = "x86_64"
SWEEP_MAX = 3  # `check` without --spans tries counts 0..3 per span
_CCONV_CHARS = set(cconv.KINDS) | {cconv.SPAN_START, cconv.SPAN_END, cconv.VOID, cconv.SPLIT}


def resolve_target(name: str) -> Target:
    """A `--target` value: a data model name (an empty one is an error, not the default)."""
    if not name.strip():
        raise CliError(f"--target is empty; valid targets: {', '.join(targets.names())}")
    return targets.get(name)


def select_targets(name: str | None, all_targets: bool) -> list[Target]:
    """`--target NAME` (default x86_64) or every target with `--all-targets`."""
    if all_targets:
        return [targets.get(n) for n in targets.names()]
    return [resolve_target(name) if name is not None else targets.get(DEFAULT_TARGET)]


def parse_spans(text: str | None) -> tuple[int, ...] | None:
    """`"4,3"` -> (4, 3); `""` -> (); None (option absent) -> None."""
    if text is None:
        return None
    if text.strip() == "":
        return ()
    out: list[int] = []
    for item in text.split(","):
        s = item.strip()
        if not s or not (s.isdigit() or (s[0] in "+-" and s[1:].isdigit())):
            raise SpansArgumentError(text, item, "is not an integer count")
        n = int(s)
        if n < 0 or n > cconv.MAX_SPAN_COUNT:
            raise SpansArgumentError(text, item, f"is outside 0..{cconv.MAX_SPAN_COUNT}")
        out.append(n)
    return tuple(out)


@dataclass(frozen=True)
class Side:
    """One fragment to lay out: the arguments or results of a signature, or a bare fragment."""

    label: str  # "arguments", "results" or "fragment"
    fragment: cconv.Fragment

    @property
    def n_spans(self) -> int:
        return len(self.fragment.spans)


@dataclass(frozen=True)
class CconvInput:
    text: str
    signature: cconv.Signature | None
    sides: tuple[Side, ...]


def looks_like_cconv(text: str) -> bool:
    return text.startswith(cconv.VERSION) or (text != "" and set(text) <= _CCONV_CHARS)


def parse_cconv(text: str) -> CconvInput:
    """A whole signature (`0...`) or a bare fragment (`rIiiiCiDCrIID`); raises CconvError."""
    if text.startswith(cconv.VERSION) or cconv.SPLIT in text:
        sig = cconv.parse(text)  # without the leading 0 this names index 0 as a bad version
        return CconvInput(text, sig, (Side("arguments", sig.arguments), Side("results", sig.results)))
    return CconvInput(text, None, (Side("fragment", cconv.parse_fragment(text)),))


def resolve(text: str) -> "Struct | CconvInput":
    """A catalog struct (or derived `iree_vm_abi_*_t`) by name, else a cconv by its shape."""
    if looks_like_cconv(text):
        return parse_cconv(text)
    return layouts.get(text)  # UnknownNameError names the closest structs


def require_cconv(text: str) -> CconvInput:
    if not looks_like_cconv(text):
        raise NotACconvError(f"{text!r} is not a calling convention: a signature starts with '0' "
                             "(0rII_r), a fragment uses only i I f F r, C...D spans and v (rIiiiCiDCrIID)")
    return parse_cconv(text)


def span_instances(side: Side, spans: tuple[int, ...] | None, *, sweep: bool) -> Iterator[tuple[int, ...]]:
    """The span counts to lay a side out with.

    Results never have spans. Given `--spans`, arguments (and a bare fragment) use them. Without
    it, `sweep` tries 0..SWEEP_MAX per span, otherwise one element per span.
    """
    if side.label == "results":
        yield ()
        return
    if spans is not None:
        yield spans
        return
    if sweep:
        yield from itertools.product(range(SWEEP_MAX + 1), repeat=side.n_spans)
    else:
        yield (1,) * side.n_spans


def default_spans_note(sides: Sequence[Side], spans: tuple[int, ...] | None) -> str | None:
    """A note when `layout` picked span counts the user did not give."""
    if spans is None and any(s.n_spans for s in sides):
        return "spans: 1 per span (default; choose with --spans, e.g. --spans 4,3)"
    return None
