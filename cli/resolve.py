"""Turn command-line text into engine objects: span counts, structs and cconvs (`layout`, `check`;
targets and module files: `loading`)."""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, Sequence

from ..abi import cconv

from .errors import NotACconvError, SpansArgumentError

if TYPE_CHECKING:
    from ..abi.layout import Struct

SWEEP_MAX = 3  # `check` without --spans tries counts 0..3 per span
# A full sweep is (SWEEP_MAX + 1) ** spans instances: 16 for a dispatch's two spans, 256 for four
# spans, but a million for ten (minutes and gigabytes for one command). Up to SWEEP_CAP the sweep
# is complete; past it `check` lays out a deterministic sample of SWEEP_CAP span-count instances
# per side and target, and says so. 256 keeps every fragment of up to four spans (the catalog's
# have at most two) fully swept, and a sampled check within a few seconds.
SWEEP_CAP = 256
SAMPLE_SEED = 18  # fixed: the same cconv samples the same instances in every run
_DIGIT_BITS = SWEEP_MAX.bit_length()  # bits of one span's count in a sample index
assert SWEEP_MAX + 1 == 1 << _DIGIT_BITS, "a sample index's digits are read as bit fields"
_CCONV_CHARS = set(cconv.KINDS) | {cconv.SPAN_START, cconv.SPAN_END, cconv.VOID, cconv.SPLIT}


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
    from .. import layouts

    return layouts.get(text)  # UnknownNameError names the closest structs


def require_cconv(text: str) -> CconvInput:
    if not looks_like_cconv(text):
        raise NotACconvError(f"{text!r} is not a calling convention: a signature starts with '0' "
                             "(0rII_r), a fragment uses only i I f F r, C...D spans and v (rIiiiCiDCrIID)")
    return parse_cconv(text)


@dataclass(frozen=True)
class Sweep:
    """The span counts `check` tries for a side with `n_spans` spans and no --spans.

    Iterating yields count tuples in lexicographic order without building the product: every
    combination of 0..SWEEP_MAX when there are at most SWEEP_CAP of them, else a sample of
    SWEEP_CAP: all 0, all SWEEP_MAX, each span alone at 1..SWEEP_MAX (the others 0), in that
    priority, then combinations drawn with a fixed seed. The sample holds SWEEP_CAP indices into
    the product (memory independent of its size), so it is the same in every run.
    """

    n_spans: int

    @property
    def total(self) -> int:
        """The number of combinations a full sweep would lay out."""
        return 1 << (self.n_spans * _DIGIT_BITS)  # (SWEEP_MAX + 1) ** n_spans

    @property
    def sampled(self) -> bool:
        return self.total > SWEEP_CAP

    @property
    def checked(self) -> int:
        return min(self.total, SWEEP_CAP)

    def __len__(self) -> int:
        return self.checked

    def __iter__(self) -> Iterator[tuple[int, ...]]:
        if not self.sampled:
            return itertools.product(range(SWEEP_MAX + 1), repeat=self.n_spans)
        return (self._counts(i) for i in sorted(self._sample()))

    def _sample(self) -> set[int]:
        """Indices into the product, span 0 the most significant base-(SWEEP_MAX + 1) digit."""
        base, k, total = SWEEP_MAX + 1, self.n_spans, self.total
        chosen: set[int] = set()
        for i in self._extremes(base, k, total):
            if len(chosen) == SWEEP_CAP:
                return chosen
            chosen.add(i)
        import random  # start-up: only a sampled sweep draws

        rng = random.Random(SAMPLE_SEED)
        while len(chosen) < SWEEP_CAP:
            chosen.add(rng.randrange(total))
        return chosen

    @staticmethod
    def _extremes(base: int, k: int, total: int) -> Iterator[int]:
        yield 0
        yield total - 1
        for span in range(k):
            for count in range(1, base):
                yield count * base ** (k - 1 - span)

    def _counts(self, index: int) -> tuple[int, ...]:
        """The base-(SWEEP_MAX + 1) digits of `index`, span 0 first. The base is a power of two, so
        they are bit fields of its bytes: one pass over the index (dividing the whole index once per
        span made a sampled check quadratic in the number of spans)."""
        import numpy as np  # start-up: only a sampled sweep (5 spans or more) needs it

        weights = np.array([1 << b for b in reversed(range(_DIGIT_BITS))], dtype=np.int64)
        width = self.n_spans * _DIGIT_BITS
        bits = np.unpackbits(np.frombuffer(index.to_bytes((width + 7) // 8, "big"), dtype=np.uint8))
        fields = bits[bits.size - width:].reshape(self.n_spans, _DIGIT_BITS)
        return tuple((fields @ weights).tolist())


def span_instances(side: Side, spans: tuple[int, ...] | None, *, sweep: bool) -> Iterator[tuple[int, ...]]:
    """The span counts to lay a side out with.

    Results never have spans. Given `--spans`, arguments (and a bare fragment) use them. Without
    it, `sweep` tries 0..SWEEP_MAX per span (a `Sweep`: sampled past SWEEP_CAP instances),
    otherwise one element per span.
    """
    if side.label == "results":
        yield ()
        return
    if spans is not None:
        yield spans
        return
    if sweep:
        yield from Sweep(side.n_spans)
    else:
        yield (1,) * side.n_spans


def sweep_of(side: Side, spans: tuple[int, ...] | None) -> Sweep | None:
    """The sweep `check` makes of a side, or None when it lays out one instance (results, --spans)."""
    if side.label == "results" or spans is not None:
        return None
    return Sweep(side.n_spans)


def default_spans_note(sides: Sequence[Side], spans: tuple[int, ...] | None) -> str | None:
    """A note when `layout` picked span counts the user did not give."""
    if spans is None and any(s.n_spans for s in sides):
        return "spans: 1 per span (default; choose with --spans, e.g. --spans 4,3)"
    return None
