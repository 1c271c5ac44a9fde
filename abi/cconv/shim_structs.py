"""The native side of a cconv: the plain C structs shims declare (rule c: runtime/src/iree/vm/
shims.h) and hand-written multi-span readers such as hal_loader's dispatch shim (pre-fix and fixed)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from ..errors import IreeAbiError
from ..layout import Array, Field, Scalar, Struct, align_up, layout_of
from ..targets import Target, get as _get_target
from .syntax import Fragment, Span, Value, as_fragment, parse_fragment
from .vm_packing import (IREE_VM_REF_T, IREE_VM_SIZE_T, RUN_MIN_ELEMENTS, Offsets, Run, check_spans,
                         vm_field, vm_pack)

# Rule (c): the C structs native shims declare


_SHIM_SCALAR = {"i": Scalar("int32_t"), "I": Scalar("int64_t"), "f": Scalar("float"), "F": Scalar("double")}


@lru_cache(maxsize=None)
def _shim_field(char: str, position: int) -> Field:
    if char == "r":
        return Field(f"r{position}", IREE_VM_REF_T)
    prefix = "f" if char in "fF" else "i"
    return Field(f"{prefix}{position}", _SHIM_SCALAR[char])


@lru_cache(maxsize=None)
def shim_struct(fragment_text: str) -> Struct | None:
    """`iree_vm_abi_<types>_t` as IREE_VM_ABI_FIXED_STRUCT / IREE_VM_ABI_VLA_STRUCT declare it.

    Fixed values are named by position (`r0`, `i1`, ...); one trailing span becomes `aK_count` plus a
    zero-length array of `iree_vm_abi_<element>_t`. None when the shim macros cannot express the
    fragment (empty, several spans, or a span followed by more values).
    """
    frag = parse_fragment(fragment_text)
    if not frag.items or any(isinstance(i, Span) for i in frag.items[:-1]):
        return None
    fields: list[Field] = []
    for pos, item in enumerate(frag.items):
        if isinstance(item, Value):
            fields.append(_shim_field(item.char, pos))
        else:
            elem = shim_struct(item.text)
            assert elem is not None  # a span's elements are fixed values, which a struct expresses
            fields.append(Field(f"a{pos}_count", IREE_VM_SIZE_T))
            fields.append(Field(f"a{pos}", Array(elem, None)))
    return Struct(frag.struct_name, fields, doc=f"native shim struct for cconv fragment {frag.text!r}")


@dataclass(frozen=True)
class ShimView:
    """How a generic native shim reads this instance."""

    struct: Struct
    sizeof: int
    required_length: int  # the exact length the shim's checked_deref accepts
    reads: Sequence[int]  # offset of every value, in `vm_pack` order (an `Offsets`)
    count_offset: int | None
    element_size: int | None


def shim_view(fragment: "Fragment | str", target: "Target | str",
              spans: Sequence[int] | None = None) -> ShimView | None:
    frag, t = as_fragment(fragment), _get_target(target)
    return shim_view_instance(frag, t, check_spans(frag, spans))


def shim_view_instance(frag: Fragment, t: Target, counts: tuple[int, ...]) -> ShimView | None:
    s = shim_struct(frag.text)
    if s is None:
        return None
    lay = layout_of(s, t)
    fixed: list[int] = []
    span_run = None
    count_offset = elem_size = None
    for pos, item in enumerate(frag.items):
        if isinstance(item, Value):
            fixed.append(lay.fields[pos].offset)
        else:
            count_offset = lay.fields[pos].offset
            arr = lay.fields[pos + 1]
            assert isinstance(arr.type, Array) and isinstance(arr.type.elem, Struct)
            elay = layout_of(arr.type.elem, t)
            elem_size = elay.size
            field_offsets = tuple(f.offset for f in elay.fields)
            if counts[0] <= RUN_MIN_ELEMENTS:
                fixed += [arr.offset + e * elay.size + f for e in range(counts[0]) for f in field_offsets]
            else:
                span_run = Run(counts[0], elay.size, arr.offset, field_offsets)
    reads = Offsets([Run(1, 0, 0, tuple(fixed))] + ([span_run] if span_run else []))
    required = lay.size + (counts[0] * elem_size if elem_size is not None else 0)
    return ShimView(s, lay.size, required, reads, count_offset, elem_size)


# Hand-written multi-span readers (hal_loader's dispatch shim and its kind)


def reader_cache_clear() -> None:
    """Forget the per-fragment, per-target tables the span readers have cached."""
    _reader_items.cache_clear()


@dataclass(frozen=True)
class ReaderView:
    """Where a reader that copies the fixed C struct and walks spans by hand finds each value."""

    name: str
    reads: Sequence[int]  # values, in `vm_pack` order (an `Offsets`)
    count_reads: tuple[int, ...]
    end: int  # the end it checks against the buffer length


READER_FORMS = ("pre-fix", "fixed")


@lru_cache(maxsize=256)
def _reader_items(text: str, t: Target, skip: int) -> tuple:
    """Per item of fragment `text` after the first `skip` (the fixed prefix), what a span reader
    needs of it, worked out once per fragment and target rather than once per instance (keyed by
    the text, whose hash Python keeps, not the parsed fragment, which would be hashed whole): a value's (VM size, C
    alignment, None, None), a span's (C element size, C element alignment, C field offsets, the
    packer's element alignment). Spans of the same characters share one entry."""
    shapes: dict[str, tuple] = {}
    out = []
    for item in parse_fragment(text).items[skip:]:
        if isinstance(item, Value):
            out.append((vm_field(item.char, t)[0], layout_of(shim_struct(item.char), t).align,
                        None, None))
            continue
        text = item.text
        shape = shapes.get(text)
        if shape is None:
            elay = layout_of(shim_struct(text), t)
            shape = shapes[text] = (elay.size, elay.align, tuple(f.offset for f in elay.fields),
                                    max([4] + [vm_field(v.char, t)[1] for v in item.values]))
        out.append(shape)
    return tuple(out)


def span_reader(fragment: "Fragment | str", target: "Target | str", spans: Sequence[int], *,
                form: str = "fixed", base: int = 0) -> ReaderView:
    """A reader like hal_loader's `iree_vm_shim_dispatch_v`.

    pre-fix: the first span starts at sizeof(C struct of the fixed part) and each span's elements are
    aligned to alignof(C element struct). fixed: the first span starts at the packed size of the fixed
    part and elements are aligned as the packer aligns them. Either way elements have the stride of
    their C struct, and counts are int32 read where the cursor stands.
    """
    if form not in READER_FORMS:
        raise IreeAbiError(f"unknown reader form {form!r}; valid: {', '.join(READER_FORMS)}")
    frag, t = as_fragment(fragment), _get_target(target)
    counts = check_spans(frag, spans)
    prefix = frag.fixed_prefix
    runs: list[Run] = []
    reads: list[int] = []  # not yet in a run
    if prefix:
        play = layout_of(shim_struct(prefix), t)
        reads.extend(f.offset for f in play.fields)
        if form == "pre-fix":
            p = base + play.size
        else:
            p = base + vm_pack(prefix, t)[2]
    else:
        p = base
    count_reads: list[int] = []
    span_no = 0
    for size, align, field_offsets, span_align in _reader_items(frag.text, t, len(prefix)):
        if field_offsets is None:  # a value between/after spans: read in place, C-aligned
            p = align_up(p, align)
            reads.append(p - base)
            p += size
            continue
        count_reads.append(p - base)
        p += 4
        n = counts[span_no]
        if form == "pre-fix":  # aligned to the C element struct, even when empty
            p = align_up(p, align)
        elif n:  # as the packer: empty spans are not aligned
            p = align_up(p, span_align)
        if n <= RUN_MIN_ELEMENTS:
            reads += [p - base + e * size + f for e in range(n) for f in field_offsets]
        else:
            runs += [Run(1, 0, 0, tuple(reads)), Run(n, size, p - base, field_offsets)]
            reads = []
        p += n * size
        span_no += 1
    runs.append(Run(1, 0, 0, tuple(reads)))
    return ReaderView(form, Offsets(runs), tuple(count_reads), p - base)


