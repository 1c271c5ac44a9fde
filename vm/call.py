"""The VM's side of a call: argument and result buffers on the heap, as the bytecode VM fills them.

`pack_arguments` does what iree_vm_bytecode_populate_import_cconv_arguments does
(runtime/src/iree/vm/bytecode/dispatch.c): a zero-filled buffer of the size rule's size
(`cconv.layout(...).size`), every value written where the packer writes it, every ref *retained* into
the buffer. After the callee returns, `release_arguments` walks the buffer and releases every ref,
whatever the call's status, then frees it. Results come back through `unpack_results`, which reads
the result buffer with the same rules and *moves* refs out (the slots are zeroed; the caller now owns
the references). `write_results` is the other end of a result buffer (external leave): refs are
retained or moved in.

Python values: ints and floats; refs as `Ref` (or (ptr, type) pairs); a span as a list of elements,
each a tuple of the element's values (or a bare value when the element has one). The hot path is one
generated `struct` call (`fastcodec`), compiled once per fragment, target and span counts.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ..abi import cconv
from ..abi.cconv import Fragment, FragmentLayout, Span
from ..abi.errors import IreeAbiError
from . import host
from . import ref as _ref
from .fastcodec import fast_codec
from .heap import Heap
from .ref import Ref
from .shims import ByteSpan, MarshalError


class PackOverflowError(IreeAbiError):
    """The packer would write past the buffer the size rule allocates (IREE corrupts memory)."""


@dataclass(eq=False)
class CallBuffer:
    """An argument or result buffer in tracked memory."""

    heap: Heap
    layout: FragmentLayout
    address: int

    @property
    def span(self) -> ByteSpan:
        return ByteSpan(self.address, self.layout.size)

    @property
    def ref_slots(self) -> list[int]:
        return [self.address + v.offset for v in self.layout.values if v.kind == "ref"]

    def bytes(self) -> bytes:
        return self.heap.read(self.address, self.layout.size)


def _as_ref(x: Any, where: str) -> Ref:
    if isinstance(x, Ref):
        return x
    try:
        ptr, typ = x
    except (TypeError, ValueError):
        raise MarshalError(f"{where}: a ref needs a Ref or (ptr, type) pair, got {x!r}") from None
    if not all(isinstance(w, int) and not isinstance(w, bool) and 0 <= w <= host.WORD_MASK for w in (ptr, typ)):
        raise MarshalError(f"{where}: ref words must be pointer-sized unsigned ints, got {x!r}")
    return Ref(ptr, typ)


def flatten(fragment: "Fragment | str", args: Sequence[Any]) -> tuple[list[Any], tuple[int, ...]]:
    """(values in packer order, span counts) of Python arguments for `fragment`."""
    frag = cconv.as_fragment(fragment)
    if len(args) != len(frag.items):
        raise MarshalError(f"{frag.text!r} takes {len(frag.items)} argument(s), got {len(args)}")
    flat: list[Any] = []
    counts: list[int] = []
    for item, arg in zip(frag.items, args):
        if not isinstance(item, Span):
            flat.append(_as_ref(arg, f"{frag.text!r} index {item.index}") if item.char == "r" else arg)
            continue
        if not isinstance(arg, (list, tuple)):
            raise MarshalError(f"{frag.text!r} index {item.index}: a span needs a list, got {arg!r}")
        counts.append(len(arg))
        width = len(item.values)
        for e, element in enumerate(arg):
            fields = element if isinstance(element, (list, tuple)) and not isinstance(element, Ref) else (element,)
            if width == 1 and isinstance(element, Ref):
                fields = (element,)
            if len(fields) != width:
                raise MarshalError(f"{frag.text!r} span at index {item.index} element {e}: {width} value(s) "
                                   f"expected, got {element!r}")
            for v, x in zip(item.values, fields):
                flat.append(_as_ref(x, f"{frag.text!r} span element {e}") if v.char == "r" else x)
    return flat, tuple(counts)


def _layout(frag: Fragment, counts: tuple[int, ...]) -> FragmentLayout:
    lay = cconv.layout(frag, host.HOST, counts)
    if lay.packed_size > lay.size:
        overflow = next(f for f in lay.findings if f.rule == "pack-overflow")
        raise PackOverflowError(overflow.message)
    return lay


def _check_all_countable(heap: Heap, refs: list[Ref]) -> None:
    """Every ref can take all the retains about to happen (several slots may hold one object), so no
    retain fails halfway."""
    per_counter: dict[int, int] = {}
    for r in refs:
        c = _ref.counter_address(r.ptr, r.type)
        per_counter[c] = per_counter.get(c, 0) + 1
    for r in refs:
        _ref.check_countable(heap, r.ptr, r.type, per_counter[_ref.counter_address(r.ptr, r.type)])


def pack_arguments(heap: Heap, fragment: "Fragment | str", args: Sequence[Any]) -> CallBuffer:
    """A new argument buffer holding `args`, refs retained into it."""
    frag = cconv.as_fragment(fragment)
    flat, counts = flatten(frag, args)
    lay = _layout(frag, counts)
    refs = [x for x, v in zip(flat, lay.values) if v.kind == "ref" and x.ptr]
    _check_all_countable(heap, refs)
    address = heap.malloc(lay.size, tag=f"arguments {frag.text!r}")
    try:
        fast_codec(lay).pack_into(heap.view(address, lay.size), 0, flat)
    except BaseException:
        heap.free(address)
        raise
    for r in refs:
        _ref.object_retain(heap, r.ptr, r.type)
    return CallBuffer(heap, lay, address)


def release_arguments(buf: CallBuffer) -> None:
    """iree_vm_bytecode_release_import_cconv_arguments, then free the buffer.

    Every ref slot is released even if one fails (a forged ref); the first error is raised after.
    """
    first: BaseException | None = None
    try:
        for slot in buf.ref_slots:
            try:
                _ref.release(buf.heap, slot)
            except IreeAbiError as e:
                first = first or e
    finally:
        buf.heap.free(buf.address)
    if first is not None:
        raise first


def allocate_results(heap: Heap, fragment: "Fragment | str") -> CallBuffer:
    """A zero-filled result buffer of the size rule's size."""
    frag = cconv.as_fragment(fragment)
    lay = _layout(frag, ())
    return CallBuffer(heap, lay, heap.malloc(lay.size, tag=f"results {frag.text!r}"))


def unpack_results(buf: CallBuffer) -> list[Any]:
    """The results, refs moved out (their slots zeroed: the caller owns them); frees the buffer."""
    heap = buf.heap
    try:
        values = fast_codec(buf.layout).unpack(heap.view(buf.address, buf.layout.size))
        for i, v in enumerate(buf.layout.values):
            if v.kind == "ref":
                values[i] = Ref(*values[i])
                heap.memset(buf.address + v.offset, 0, v.size)
        return values
    finally:
        heap.free(buf.address)


def discard_results(buf: CallBuffer) -> None:
    """Release whatever refs a result buffer holds and free it (a failed call)."""
    release_arguments(buf)


def write_results(buf: CallBuffer, values: Sequence[Any], *, move: "bool | Sequence[bool]" = True) -> None:
    """iree_vm_bytecode_external_leave: write results, each ref retained or moved (per `move`)."""
    lay = buf.layout
    flat, _ = flatten(lay.fragment, values)
    ref_values = [x for x, v in zip(flat, lay.values) if v.kind == "ref"]
    moves = [move] * len(ref_values) if isinstance(move, bool) else list(move)
    if len(moves) != len(ref_values):
        raise MarshalError(f"{len(ref_values)} ref result(s) but {len(moves)} move flag(s)")
    retained = [r for r, is_move in zip(ref_values, moves) if not is_move and r.ptr]
    _check_all_countable(buf.heap, retained)
    fast_codec(lay).pack_into(buf.heap.view(buf.address, lay.size), 0, flat)
    for r in retained:
        _ref.object_retain(buf.heap, r.ptr, r.type)
