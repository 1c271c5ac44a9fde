"""The text of a calling convention: its characters, their parse into fragments and spans, and
IREE's own verdict on the same text (modelled apart from this stricter parser)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from ..errors import IreeAbiError

VERSION = "0"
KINDS = {"i": "i32", "I": "i64", "f": "f32", "F": "f64", "r": "ref"}
SPAN_START, SPAN_END, VOID, SPLIT = "C", "D", "v", "_"
MAX_SPAN_COUNT = 0xFFFF  # segment sizes are uint16 registers (iree_vm_register_list_t)


# Errors


class CconvError(IreeAbiError):
    """A malformed calling convention; `index` and `char` point at the offending character.

    `iree_status` names IREE's own verdict on the same text (`iree_verdict`): this parser is stricter
    than IREE's walkers in places, and the property says where (None: IREE accepts it).
    """

    def __init__(self, text: str, index: int, reason: str) -> None:
        self.text = text
        self.index = index
        self.char = text[index] if 0 <= index < len(text) else ""
        self.reason = reason
        self.source: str | None = text  # what was parsed (None: not a string at all)
        self.fragment = False  # parsed as a bare fragment rather than a whole signature
        where = f"index {index} ({self.char!r})" if self.char else f"index {index} (end of string)"
        super().__init__(f"{reason} at {where} in {text!r}")

    @property
    def iree_status(self) -> "tuple[str, str] | None":
        """(status code name, message) IREE reports for this text, or None where IREE accepts it."""
        if self.source is None:
            return None
        return iree_verdict(self.source, fragment=self.fragment)


class UnknownTypeError(CconvError):
    pass


class SpanSyntaxError(CconvError):
    pass


class VersionError(CconvError):
    pass


class SpanCountError(IreeAbiError):
    """Span counts that do not fit the fragment (missing, extra, negative, > 65535)."""


# Parsing


class Value(NamedTuple):
    char: str
    index: int  # type: ignore[assignment]  # shadows tuple.index; in the text parsed

    @property
    def kind(self) -> str:
        return KINDS[self.char]


class Span(NamedTuple):
    values: tuple[Value, ...]
    index: int  # type: ignore[assignment]  # shadows tuple.index; of its 'C'

    @property
    def text(self) -> str:
        return "".join(v.char for v in self.values)


Item = "Value | Span"


@dataclass(frozen=True)
class Fragment:
    text: str  # the fragment's own characters ("" for `v`/empty)
    items: tuple  # Value | Span, in order

    @property
    def spans(self) -> tuple[Span, ...]:
        return tuple(i for i in self.items if isinstance(i, Span))

    @property
    def has_spans(self) -> bool:
        return any(isinstance(i, Span) for i in self.items)

    @property
    def fixed_prefix(self) -> str:
        """The characters before the first span."""
        out = []
        for i in self.items:
            if isinstance(i, Span):
                break
            out.append(i.char)
        return "".join(out)

    @property
    def struct_name(self) -> str:
        return f"iree_vm_abi_{self.text or 'v'}_t"

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Signature:
    text: str
    arguments: Fragment
    results: Fragment

    def __str__(self) -> str:
        return self.text


def _parse_items(full: str, start: int, end: int, *, allow_spans: bool) -> tuple:
    items: list = []
    i = start
    if end - start == 1 and full[start] == VOID:
        return ()
    while i < end:
        c = full[i]
        if c in KINDS:
            items.append(Value(c, i))
            i += 1
        elif c == SPAN_START:
            if not allow_spans:
                raise SpanSyntaxError(full, i, "spans are not allowed in results")
            j = i + 1
            values = []
            while j < end and full[j] != SPAN_END:
                if full[j] == SPAN_START:
                    raise SpanSyntaxError(full, j, "nested span")
                if full[j] not in KINDS:
                    raise UnknownTypeError(full, j, _unknown_reason(full[j]))
                values.append(Value(full[j], j))
                j += 1
            if j >= end:
                raise SpanSyntaxError(full, i, "unterminated span")
            if not values:
                raise SpanSyntaxError(full, i, "empty span")
            items.append(Span(tuple(values), i))
            i = j + 1
        elif c == SPAN_END:
            raise SpanSyntaxError(full, i, "span end without a span start")
        elif c == VOID:
            raise UnknownTypeError(full, i, "'v' is only valid as a whole fragment")
        else:
            raise UnknownTypeError(full, i, _unknown_reason(c))
    return tuple(items)


def _unknown_reason(c: str) -> str:
    if c == SPLIT:
        return "second '_' (a signature has one argument/result split)"
    return f"unknown type character (expected one of {''.join(KINDS)}, C...D or v)"


@lru_cache(maxsize=4096)
def parse(text: str) -> Signature:
    """Parse a whole signature: `0` + arguments [+ `_` + results]. Empty text is ()->()."""
    if not isinstance(text, str):
        raise _not_text(CconvError(repr(text), 0, "a calling convention must be a string"))
    if text == "":
        return Signature("", Fragment("", ()), Fragment("", ()))
    if text[0] != VERSION:
        raise VersionError(text, 0, "unsupported cconv version (only '0')")
    split = text.find(SPLIT)
    arg_end = len(text) if split < 0 else split
    args = Fragment(_frag_text(text, 1, arg_end), _parse_items(text, 1, arg_end, allow_spans=True))
    if split < 0:
        results = Fragment("", ())
    else:
        results = Fragment(_frag_text(text, split + 1, len(text)),
                           _parse_items(text, split + 1, len(text), allow_spans=False))
    return Signature(text, args, results)


def _frag_text(text: str, start: int, end: int) -> str:
    t = text[start:end]
    return "" if t == VOID else t


@lru_cache(maxsize=4096)
def parse_fragment(text: str) -> Fragment:
    """Parse one fragment (`rIiiiCiDCrIID`, `v` or empty); indices are into `text`."""
    if not isinstance(text, str):
        raise _not_text(CconvError(repr(text), 0, "a fragment must be a string"))
    if text[:1] == VERSION:
        raise CconvError(text, 0, "this is a whole signature; pass parse(text).arguments or .results")
    try:
        items = _parse_items(text, 0, len(text), allow_spans=True)
    except CconvError as e:
        e.fragment = True  # IREE's verdict is then the one on a fragment (iree_verdict)
        raise
    return Fragment("" if text == VOID else text, items)


def _not_text(e: CconvError) -> CconvError:
    e.source = None
    return e


# IREE's own verdict on a cconv text, modelled apart from the (stricter) parser above


_IREE_VALUE_CHARS = frozenset("viIfFr")  # 'v' is skipped wherever IREE's walkers meet it
_NO_SEGMENTS = ("INVALID_ARGUMENT", "variadic argument found but segment size list is missing/underflowed")


def _c_char(ch: str) -> str:
    """A character as C's `%c` prints the first byte of its UTF-8 form (latin-1 for one byte)."""
    return ch.encode("utf-8", "surrogatepass")[:1].decode("latin-1")


def _iree_walk(frag: str, segments: bool) -> "tuple[str, str] | None":
    """iree_vm_function_call_compute_cconv_fragment_size's character checks (module.c): unknown
    characters fail, 'v' is skipped, a span runs to its 'D' or to the end of the fragment, a span
    without a segment size list fails."""
    i, n = 0, len(frag)
    while i < n:
        c = frag[i]
        if c == SPAN_START:
            if not segments:
                return _NO_SEGMENTS
            i += 1
            while i < n and frag[i] != SPAN_END:
                if frag[i] not in _IREE_VALUE_CHARS:
                    return ("UNIMPLEMENTED", f"unsupported cconv span type '{_c_char(frag[i])}'")
                i += 1
        elif c not in _IREE_VALUE_CHARS:
            return ("UNIMPLEMENTED", f"unsupported cconv type '{_c_char(c)}'")
        i += 1
    return None


def iree_verdict(text: str, *, fragment: bool = False) -> "tuple[str, str] | None":
    """How IREE judges `text`: None when it accepts it, else (status code name, message).

    A whole signature goes through what resolving an import does (runtime/src/iree/vm/bytecode/
    module.c, iree_vm_bytecode_module_resolve_import): the fragment split and version check of
    iree_vm_function_call_get_cconv_fragments, the size walk of non-variadic arguments and of the
    results (no segment sizes: a span there fails), and, for variadic arguments, the walk each call
    makes with the caller's segment sizes (assumed present). A bare fragment gets that last walk.
    IREE accepts things `parse` refuses ('v' among values, empty or unterminated spans): the two
    verdicts are kept apart so the disagreement has a name.
    """
    if fragment:
        return _iree_walk(text, True)
    if text == "":
        return None  # no cconv: ()->()
    if text[0] != VERSION:
        return ("UNIMPLEMENTED", f"unsupported cconv version {_c_char(text[0])}")
    args, _, results = text[1:].partition(SPLIT)
    args = "" if args == VOID else args
    results = "" if results == VOID else results
    variadic = SPAN_START in args  # iree_vm_function_call_is_variadic_cconv
    return ((None if variadic else _iree_walk(args, False)) or _iree_walk(results, False)
            or (_iree_walk(args, True) if variadic else None))


def as_fragment(fragment: "Fragment | str") -> Fragment:
    return fragment if isinstance(fragment, Fragment) else parse_fragment(fragment)
