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
each a tuple of the element's values (or a bare value when the element has one). Buffers are laid out
for the heap's data model. The hot path is one generated `struct` call (`abi.cconv.codec`), compiled once
per fragment, target and span counts.
"""
from __future__ import annotations


from dataclasses import dataclass, field
from typing import Any, Sequence

from ..abi import cconv
from ..abi.cconv import Fragment, FragmentLayout, Span
from ..abi.errors import IreeAbiError
from . import ref as _ref
from ..abi.cconv.codec import codec as _codec
from ..base.heap import Heap
from ..base.machine import Machine, machine as _machine
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
    scratch: bool = False  # on the heap's scratch stack (the VM's alloca) rather than malloc'd
    plan: "Any" = field(default=None, repr=False, compare=False)  # the Plan of `layout`, if known

    @property
    def span(self) -> ByteSpan:
        return ByteSpan(self.address, self.layout.size)

    @property
    def ref_slots(self) -> list[int]:
        return [self.address + v.offset for v in self.layout.values if v.kind == "ref"]

    def bytes(self) -> bytes:
        return self.heap.read(self.address, self.layout.size)


def as_ref(x: Any, where: str, word_mask: int) -> Ref:
    if isinstance(x, Ref):
        return x
    try:
        ptr, typ = x
    except (TypeError, ValueError):
        raise MarshalError(f"{where}: a ref needs a Ref or (ptr, type) pair, got {x!r}") from None
    if not all(isinstance(w, int) and not isinstance(w, bool) and 0 <= w <= word_mask for w in (ptr, typ)):
        raise MarshalError(f"{where}: ref words must be pointer-sized unsigned ints, got {x!r}")
    return Ref(ptr, typ)


def flatten(fragment: "Fragment | str", args: Sequence[Any], word_mask: int) -> tuple[list[Any], tuple[int, ...]]:
    """(values in packer order, span counts) of Python arguments for `fragment`; ref words must fit
    `word_mask` (the data model's pointer width)."""
    frag = cconv.as_fragment(fragment)
    if len(args) != len(frag.items):
        raise MarshalError(f"{frag.text!r} takes {len(frag.items)} argument(s), got {len(args)}")
    flat: list[Any] = []
    counts: list[int] = []
    append = flat.append
    for item, arg in zip(frag.items, args):
        if type(item) is not Span:
            if item.char != "r":
                append(arg)
            elif type(arg) is Ref:  # the common case, without the general checks
                append(arg)
            else:
                append(as_ref(arg, f"{frag.text!r} index {item.index}", word_mask))
            continue
        if not isinstance(arg, (list, tuple)):
            raise MarshalError(f"{frag.text!r} index {item.index}: a span needs a list, got {arg!r}")
        counts.append(len(arg))
        chars = item.text
        width = len(chars)
        refs_at = _ref_positions(chars)
        for e, element in enumerate(arg):
            if width == 1:
                fields = (element,) if type(element) is Ref or not isinstance(element, (list, tuple)) \
                    else element
            else:
                fields = element if isinstance(element, (list, tuple)) and type(element) is not Ref else (element,)
            if len(fields) != width:
                raise MarshalError(f"{frag.text!r} span at index {item.index} element {e}: {width} value(s) "
                                   f"expected, got {element!r}")
            for j in refs_at:
                if type(fields[j]) is not Ref:
                    fields = list(fields)
                    for k in refs_at:
                        if type(fields[k]) is not Ref:
                            fields[k] = as_ref(fields[k], f"{frag.text!r} span element {e}", word_mask)
                    break
            flat.extend(fields)
    return flat, tuple(counts)


_REF_POSITIONS: dict[str, tuple[int, ...]] = {}


def _ref_positions(chars: str) -> tuple[int, ...]:
    pos = _REF_POSITIONS.get(chars)
    if pos is None:
        pos = _REF_POSITIONS[chars] = tuple(i for i, c in enumerate(chars) if c == "r")
    return pos


class Plan:
    """What is fixed per (fragment, span counts) on one data model: the layout (checked for pack
    overflow), its codec, where the refs are (flat value indices and byte offsets), the tags."""

    __slots__ = ("layout", "codec", "size", "ref_index", "ref_slots", "arg_tag", "res_tag")

    def __init__(self, frag: Fragment, counts: tuple[int, ...], machine: Machine) -> None:
        lay = cconv.layout(frag, machine.target, counts)
        if lay.packed_size > lay.size:
            overflow = next(f for f in lay.findings if f.rule == "pack-overflow")
            raise PackOverflowError(overflow.message)
        self.layout = lay
        self.codec = _codec(lay)
        self.size = lay.size
        self.ref_index = tuple(i for i, v in enumerate(lay.values) if v.kind == "ref")
        self.ref_slots = tuple((i, v.offset, v.size) for i, v in enumerate(lay.values) if v.kind == "ref")
        self.arg_tag = f"arguments {frag.text!r}"
        self.res_tag = f"results {frag.text!r}"


# (target name, fragment text, span counts) -> plan; keyed by the text (its hash is cached, a
# Fragment's is not).
_PLANS: dict[tuple[str, str, tuple[int, ...]], Plan] = {}


def plan_for(frag: Fragment, counts: tuple[int, ...], machine: Machine) -> Plan:
    """The Plan of `frag` with `counts` spans' elements on `machine`, made once and kept."""
    key = (machine.name, frag.text, counts)
    plan = _PLANS.get(key)
    if plan is None:
        plan = Plan(frag, counts, machine)  # raises PackOverflowError: not cached
        if len(_PLANS) > 16384:
            _PLANS.clear()
        _PLANS[key] = plan
    return plan


def _plan_of(lay: FragmentLayout, known: "Plan | None" = None) -> Plan:
    if known is not None and known.layout is lay:
        return known
    plan = _PLANS.get((lay.target.name, lay.fragment.text, lay.spans))
    return plan if plan is not None and plan.layout is lay else \
        Plan(lay.fragment, lay.spans, _machine(lay.target))


def _counts_per_object(heap: Heap, refs: list[Ref]) -> dict[int, tuple[int, int]]:
    """counter address -> (its value, retains about to happen), after checking every object can take
    them all (several slots may hold one object), so no retain fails halfway."""
    return {c: (value, n) for c, (value, n, _, _) in retain_plan(heap, refs).items()}


def retain_plan(heap: Heap, refs: list[Ref]) -> dict[int, tuple[int, int, memoryview, int]]:
    """counter address -> (value, retains, int32 view, index): `_counts_per_object` plus where each
    checked counter is, so the retains write it without a second check (nothing is freed between)."""
    per_counter: dict[int, list] = {}  # counter -> [first ref, retains]
    unit, tag_mask, known = _ref.COUNTER_UNIT, _ref.TAG_MASK, heap.known_types
    for r in refs:
        if r.type not in known:  # every type word, not only the first of those sharing a counter
            _ref.check_registered(heap, r.ptr, r.type)
        c = r.ptr + unit * (r.type & tag_mask)
        e = per_counter.get(c)
        if e is None:
            per_counter[c] = [r, 1]
        else:
            e[1] += 1
    out: dict[int, tuple[int, int, memoryview, int]] = {}
    countable_cell = _ref.countable_cell
    for c, (r, n) in per_counter.items():
        _, value, cells, i = countable_cell(heap, r.ptr, r.type, n)  # every check of a retain
        out[c] = (value, n, cells, i)
    return out


def _check_all_countable(heap: Heap, refs: list[Ref]) -> None:
    _counts_per_object(heap, refs)


def pack_arguments(heap: Heap, fragment: "Fragment | str", args: Sequence[Any], *,
                   scratch: bool = False, moved: tuple[int, ...] = ()) -> CallBuffer:
    """A new argument buffer holding `args`, refs retained into it (those at the packer-order
    indices `moved` are taken over instead, as the VM's retain_or_move of a MOVE-marked register);
    with `scratch`, on the heap's scratch stack as the VM allocas it (release it before any later
    scratch frame is popped)."""
    frag = cconv.as_fragment(fragment)
    flat, counts = flatten(frag, args, heap.machine.word_mask)
    plan = plan_for(frag, counts, heap.machine)
    lay = plan.layout
    bad = [i for i in moved if i not in plan.ref_index]
    if bad:
        raise IreeAbiError(f"{frag.text!r}: moved value(s) {bad} are not refs")
    refs = [r for r in (flat[i] for i in plan.ref_index if i not in moved) if r.ptr]
    retains = retain_plan(heap, refs) if refs else {}
    if scratch:
        buf = CallBuffer(heap, lay, heap.scratch_push(plan.size), True, plan)
    else:
        buf = CallBuffer(heap, lay, heap.malloc(plan.size, tag=plan.arg_tag), False, plan)
    try:
        plan.codec.pack_into(heap.view(buf.address, plan.size), 0, flat)
    except BaseException:
        _free(buf)
        raise
    # Checked above: each object takes all its retains; the views are the checked counters' own.
    for value, n, cells, i in retains.values():
        cells[i] = value + n
    if heap.ref_events is not None:
        heap.ref_events.extend(("retain", r.ptr, r.type) for r in refs)
    return buf


def release_arguments(buf: CallBuffer) -> None:
    """iree_vm_bytecode_release_import_cconv_arguments, then free the buffer.

    Every ref slot is released even if one fails (a forged ref); the first error is raised after.
    """
    first: BaseException | None = None
    heap, lay = buf.heap, buf.layout
    try:
        plan = _plan_of(lay, buf.plan)
        # One read of the whole buffer as it is after the call, then each ref slot released and
        # zeroed as iree_vm_ref_release does.
        if plan.ref_slots:
            values = plan.codec.unpack(heap.view(buf.address, lay.size))
            for i, offset, size in plan.ref_slots:
                ptr, typ = values[i]
                if typ == _ref.TYPE_NULL or not ptr:
                    continue
                try:
                    _ref.object_release(heap, ptr, typ)
                except IreeAbiError as e:
                    first = first or e
                    continue
                if not buf.scratch:  # a scratch frame is popped right after: zeroing it is unobservable
                    heap.memset(buf.address + offset, 0, size)
        elif lay.values:  # no refs: the buffer is still read (and checked) as the VM's walk does
            heap.view(buf.address, lay.size)
    finally:
        _free(buf)
    if first is not None:
        raise first


def empty_block(heap: Heap) -> int:
    """One zero-byte block per heap, shared by every void result buffer (the VM's empty alloca):
    a valid non-NULL pointer that nothing may read or write."""
    block = heap.empty_block
    if block is None or heap.allocation(block) is None:
        block = heap.empty_block = heap.malloc_internal(0, tag="empty result buffer (shared)")
    return block


def allocate_results(heap: Heap, fragment: "Fragment | str", *, scratch: bool = False) -> CallBuffer:
    """A zero-filled result buffer of the size rule's size; with `scratch`, on the heap's scratch
    stack as the VM allocas it (pushed before the arguments, so they pop in order)."""
    frag = cconv.as_fragment(fragment)
    plan = plan_for(frag, (), heap.machine)
    lay = plan.layout
    if plan.size == 0:
        return CallBuffer(heap, lay, empty_block(heap), False, plan)
    if scratch:
        return CallBuffer(heap, lay, heap.scratch_push(plan.size), True, plan)
    return CallBuffer(heap, lay, heap.malloc(plan.size, tag=plan.res_tag), False, plan)


def _free(buf: CallBuffer) -> None:
    if buf.scratch:
        buf.heap.scratch_pop(buf.address)
    elif buf.layout.size or buf.address != buf.heap.empty_block:
        buf.heap.free(buf.address)


def unpack_results(buf: CallBuffer) -> list[Any]:
    """The results, refs moved out (their slots zeroed: the caller owns them); frees the buffer."""
    heap = buf.heap
    try:
        plan = _plan_of(buf.layout, buf.plan)
        values = plan.codec.unpack(heap.view(buf.address, plan.size))
        for i, offset, size in plan.ref_slots:
            values[i] = Ref(*values[i])
            heap.memset(buf.address + offset, 0, size)
        return values
    finally:
        _free(buf)


def discard_results(buf: CallBuffer) -> None:
    """Release whatever refs a result buffer holds and free it."""
    release_arguments(buf)


def abandon_results(buf: CallBuffer) -> None:
    """Free a result buffer unread, as the bytecode VM drops its alloca'd results after a failed
    import call (runtime/src/iree/vm/bytecode/dispatch.c, iree_vm_bytecode_issue_import_call): the
    callee's failure leaves the results to nobody, and nothing in them is released."""
    _free(buf)


def write_results(buf: CallBuffer, values: Sequence[Any], *, move: "bool | Sequence[bool]" = True) -> None:
    """iree_vm_bytecode_external_leave: write results, each ref retained or moved (per `move`)."""
    lay = buf.layout
    flat, _ = flatten(lay.fragment, values, buf.heap.machine.word_mask)
    ref_values = [x for x, v in zip(flat, lay.values) if v.kind == "ref"]
    moves = [move] * len(ref_values) if isinstance(move, bool) else list(move)
    if len(moves) != len(ref_values):
        raise MarshalError(f"{len(ref_values)} ref result(s) but {len(moves)} move flag(s)")
    retained = [r for r, is_move in zip(ref_values, moves) if not is_move and r.ptr]
    _check_all_countable(buf.heap, retained)
    _codec(lay).pack_into(buf.heap.view(buf.address, lay.size), 0, flat)
    for r in retained:
        _ref.object_retain(buf.heap, r.ptr, r.type)
