"""iree_vm_ref_t on real memory: type descriptors, counting, and the ref API of runtime/src/iree/vm/ref.c.

A ref is two words {ptr, type}. `type` is the address of an 8-aligned iree_vm_ref_type_descriptor_t
OR'ed with a 3-bit tag: the object's int32 counter is at ptr + 4 * tag. When a release takes the
counter from 1 to 0 the descriptor's `destroy` function pointer is called, once, through C.

Refs, descriptors and counters are laid out for the heap's data model. Descriptors live in tracked
memory and their `destroy` is a function registered in the heap's address space (a real C callback on
the host target). Every ref read from memory may be forged, so each pointer is checked against the
heap before it is read or written, a type word is only used to count if a registration on that heap
produced it (a forged tag could otherwise make a release decrement any word of a live object), and a
descriptor's destroy pointer is only called if it is a registered function. IREE checks ref arguments only with IREE_VM_REF_PARANOID (IREE_VM_REF_ASSERT);
the model follows the default build wherever it gives a NULL a meaning (wrap_retain and X_move_ref of
NULL, releasing a NULL ref) and raises `RefError` where it would count through a NULL or unregistered
type, and for wrap_assign's NULL ptr/type (the paranoid assert). Counter underflow (a release with the
counter already at 0) raises `RefCountError` instead of going negative silently, and a retain past
INT32_MAX instead of wrapping.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

from ..abi.errors import IreeAbiError
from ..layouts import ref as _ref
from ..base import callbacks
from ..base.heap import Heap
from ..base.status import StatusCode, StatusError
from ..layouts.ref import RefLayout

TAG_MASK = _ref.REF_TYPE_TAG_MASK
DESCRIPTOR_ALIGNMENT = 1 << _ref.REF_TYPE_TAG_BITS
COUNTER_UNIT = _ref.REF_COUNTER_ALIGNMENT
TYPE_NULL = _ref.REF_TYPE_NULL


class RefError(IreeAbiError):
    """A precondition IREE only asserts (NULL ptr or type where one is required)."""


class RefCountError(IreeAbiError):
    """A release of an object whose counter is already 0 or negative."""

    def __init__(self, message: str, address: int) -> None:
        self.address = address
        super().__init__(message)


class Ref(NamedTuple):
    """An iree_vm_ref_t value."""

    ptr: int
    type: int

    @property
    def is_null(self) -> bool:
        """iree_vm_ref_is_null tests the type word only."""
        return self.type == TYPE_NULL

    @property
    def tag(self) -> int:
        return self.type & TAG_MASK

    @property
    def descriptor(self) -> int:
        return self.type & ~TAG_MASK

    def __repr__(self) -> str:
        return f"Ref(ptr=0x{self.ptr:x}, type=0x{self.type:x})"


NULL_REF = Ref(0, 0)


# -- refs in memory ---------------------------------------------------------------------------------


def read_ref(heap: Heap, address: int) -> Ref:
    return Ref(*heap.unpack(heap.machine.view(RefLayout).fmt, address))


def write_ref(heap: Heap, address: int, ref: Ref) -> None:
    m = heap.machine
    heap.pack(m.view(RefLayout).fmt, address, ref.ptr & m.word_mask, ref.type & m.word_mask)


def _zero(heap: Heap, address: int) -> None:
    heap.memset(address, 0, heap.machine.view(RefLayout).size)


# -- counters and destroy ---------------------------------------------------------------------------


def counter_address(ptr: int, type_word: int) -> int:
    return ptr + COUNTER_UNIT * (type_word & TAG_MASK)


def _destroy_target(heap: Heap, type_word: int) -> "callbacks.Registered | None":
    """The descriptor's destroy function, validated (memory and, if non-NULL, registration): the
    registered function itself, None for a NULL destroy pointer."""
    L = heap.machine.view(RefLayout)
    raw, off = heap.cell(type_word & L.descriptor_mask, L.descriptor_size)  # the whole descriptor
    fn = L.word.unpack_from(raw, off + L.destroy_off)[0]
    if fn:
        functions = heap.functions
        r = functions.find(fn)
        if r is None or r.prototype is not _DESTROY_FN:  # the message only when it is needed
            r = functions.lookup(fn, _DESTROY_FN, f"destroy of ref type 0x{type_word:x}")
        return r
    return None


_DESTROY_FN = callbacks.DESTROY_FN
_PARKED = callbacks.PARKED


# Every iree_vm_ref_type_t a TypeRegistry of the heap handed out (descriptor | its counter tag) ->
# registrations: `heap.known_types`. IREE trusts type words; here a word that no registration on the
# heap produced is refused before the counter it designates is touched, so a forged ref cannot count
# (and corrupt) an arbitrary word of a live object.
def is_registered_type(heap: Heap, type_word: int) -> bool:
    return type_word in heap.known_types


def check_registered(heap: Heap, ptr: int, type_word: int) -> None:
    """RefError unless `type_word` is a ref type registered on the heap."""
    if type_word not in heap.known_types:
        raise RefError(f"ref to 0x{ptr:x} has type 0x{type_word:x}, which is not a registered ref type")


INT32_MAX = (1 << 31) - 1


def countable_value(heap: Heap, ptr: int, type_word: int, retains: int = 1) -> tuple[int, int]:
    """(counter address, value) of a ref that can take `retains` more references (see check_countable)."""
    counter, value, _, _ = countable_cell(heap, ptr, type_word, retains)
    return counter, value


def countable_cell(heap: Heap, ptr: int, type_word: int,
                   retains: int = 1) -> tuple[int, int, memoryview, int]:
    """`countable_value` plus (int32 view, index) of the checked counter (Heap.int32_cell), for a
    retain that writes it without a second check (nothing may be freed in between)."""
    if type_word not in heap.known_types:
        check_registered(heap, ptr, type_word)
    counter = ptr + COUNTER_UNIT * (type_word & TAG_MASK)
    cells, i = heap.int32_cell(counter)
    value = cells[i]
    if value < 0 or value > INT32_MAX - retains:
        raise RefCountError(f"ref to 0x{ptr:x} (type 0x{type_word:x}) has counter {value} at 0x{counter:x}: "
                            "not a live object", ptr)
    return counter, value, cells, i


def check_countable(heap: Heap, ptr: int, type_word: int, retains: int = 1) -> int:
    """The counter address of a ref (ptr, type), ptr != 0, if it can take `retains` more references:
    registered type, counter in memory, value not negative and not overflowing. (A release refuses a
    counter <= 0, so retaining such a word would leave it changed for good.)"""
    return countable_value(heap, ptr, type_word, retains)[0]


def object_retain(heap: Heap, ptr: int, type_word: int) -> None:
    """iree_vm_ref_object_retain: counter += 1 (NULL ptr: nothing). The checks of check_countable,
    on one checked access of the counter."""
    if not ptr:
        return
    if type_word not in heap.known_types:
        check_registered(heap, ptr, type_word)
    counter = ptr + COUNTER_UNIT * (type_word & TAG_MASK)
    cells, i = heap.int32_cell(counter)
    value = cells[i]
    if value < 0 or value >= INT32_MAX:
        raise RefCountError(f"ref to 0x{ptr:x} (type 0x{type_word:x}) has counter {value} at 0x{counter:x}: "
                            "not a live object", ptr)
    cells[i] = value + 1
    if heap.ref_events is not None:
        heap.ref_events.append(("retain", ptr, type_word))


def object_release(heap: Heap, ptr: int, type_word: int) -> None:
    """iree_vm_ref_object_release: counter -= 1; at 1 -> 0 the descriptor's destroy runs once."""
    if not ptr:
        return
    if type_word not in heap.known_types:
        check_registered(heap, ptr, type_word)
    counter = ptr + COUNTER_UNIT * (type_word & TAG_MASK)
    cells, i = heap.int32_cell(counter)  # one check for the read-modify-write
    old = cells[i]
    if heap.ref_events is not None and old > 0:
        heap.ref_events.append(("release", ptr, type_word))
    if old > 1:
        cells[i] = old - 1
        return
    if old <= 0:
        raise RefCountError(f"release of object 0x{ptr:x} (type 0x{type_word:x}) whose counter at "
                            f"0x{counter:x} is {old}: over-release", ptr)
    r = _destroy_target(heap, type_word)  # validated before anything changes
    cells[i] = 0  # nothing was freed in between: still the checked counter
    if r is None:
        return
    r.pointer(ptr)  # callbacks.call_registered, inlined
    if _PARKED.errors:
        callbacks.reraise_parked(None)


def release_value(heap: Heap, ref: Ref) -> None:
    """iree_vm_ref_release on a local copy: no-op for a NULL type or ptr."""
    if ref.type == TYPE_NULL or not ref.ptr:
        return
    object_release(heap, ref.ptr, ref.type)


def retain_value(heap: Heap, ref: Ref) -> None:
    """iree_vm_ref_retain_inplace on a local copy."""
    if ref.ptr:
        object_retain(heap, ref.ptr, ref.type)


# -- the ref API (ref.c), on refs in memory ---------------------------------------------------------


def retain_inplace(heap: Heap, ref: int) -> None:
    retain_value(heap, read_ref(heap, ref))


def retain(heap: Heap, ref: int, out_ref: int) -> None:
    """iree_vm_ref_retain: retain src first (they may alias), release the old dst, copy."""
    src = read_ref(heap, ref)
    dst = read_ref(heap, out_ref)
    retain_value(heap, src)
    if dst.ptr:
        release_value(heap, dst)
    write_ref(heap, out_ref, src)


def _type_matches(heap: Heap, src: Ref, type_word: int) -> bool:
    return src.type == TYPE_NULL or src.type == type_word or type_word == heap.machine.view(RefLayout).type_any


def retain_checked(heap: Heap, ref: int, type_word: int, out_ref: int) -> None:
    """iree_vm_ref_retain_checked: INVALID_ARGUMENT "source ref type mismatch" changes nothing."""
    if not _type_matches(heap, read_ref(heap, ref), type_word):
        raise StatusError(StatusCode.INVALID_ARGUMENT, "source ref type mismatch")
    retain(heap, ref, out_ref)


def retain_or_move(heap: Heap, is_move: bool, ref: int, out_ref: int) -> None:
    if is_move:
        move(heap, ref, out_ref)
    else:
        retain(heap, ref, out_ref)


def retain_or_move_checked(heap: Heap, is_move: bool, ref: int, type_word: int, out_ref: int) -> None:
    if not _type_matches(heap, read_ref(heap, ref), type_word):
        raise StatusError(StatusCode.INVALID_ARGUMENT, "source ref type mismatch")
    retain_or_move(heap, is_move, ref, out_ref)


def release(heap: Heap, ref: int) -> None:
    """iree_vm_ref_release: decrement (maybe destroy), then zero the ref."""
    value = read_ref(heap, ref)
    if value.type == TYPE_NULL or not value.ptr:
        return
    object_release(heap, value.ptr, value.type)
    _zero(heap, ref)


def assign(heap: Heap, ref: int, out_ref: int) -> None:
    """iree_vm_ref_assign: copy without counting, releasing the old dst."""
    if ref == out_ref:
        return
    src = read_ref(heap, ref)
    dst = read_ref(heap, out_ref)
    if dst.ptr:
        release_value(heap, dst)
    write_ref(heap, out_ref, src)


def move(heap: Heap, ref: int, out_ref: int) -> None:
    """iree_vm_ref_move: zero src, release the old dst, copy."""
    if ref == out_ref:
        return
    src = read_ref(heap, ref)
    dst = read_ref(heap, out_ref)
    _zero(heap, ref)
    if dst.ptr:
        release_value(heap, dst)
    write_ref(heap, out_ref, src)


def _require(ptr: int, type_word: int, what: str) -> None:
    if not ptr or not type_word:
        raise RefError(f"{what}: ptr and type must be non-NULL (ptr=0x{ptr:x}, type=0x{type_word:x})")


def wrap_assign(heap: Heap, ptr: int, type_word: int, out_ref: int) -> None:
    """iree_vm_ref_wrap_assign: take over a reference the caller already holds. NULL ptr or type
    raise RefError (IREE asserts them only under IREE_VM_REF_PARANOID; a default build stores the
    pair as given). The counter is checked (in memory, not negative) but needs no headroom: IREE
    adds no reference."""
    _require(ptr, type_word, "wrap_assign")
    check_countable(heap, ptr, type_word, 0)
    out = read_ref(heap, out_ref)
    if out.ptr and out.ptr != ptr:
        release(heap, out_ref)
    write_ref(heap, out_ref, Ref(ptr, type_word))


def wrap_retain(heap: Heap, ptr: int, type_word: int, out_ref: int) -> None:
    """iree_vm_ref_wrap_retain: same ptr -> nothing (ref.c compares before anything else, whatever
    the types); else release old, store, retain. A NULL ptr is legal in the build IREE ships
    (X_retain_ref(NULL) relies on it): the old value is released and {NULL, type} stored, uncounted."""
    out = read_ref(heap, out_ref)
    if out.ptr == ptr:
        return
    if ptr:
        _require(ptr, type_word, "wrap_retain")
        check_countable(heap, ptr, type_word)
    if out.ptr:
        release(heap, out_ref)
    write_ref(heap, out_ref, Ref(ptr, type_word))
    object_retain(heap, ptr, type_word)  # NULL ptr: nothing


def is_null(heap: Heap, ref: int) -> bool:
    return read_ref(heap, ref).is_null


def equal(heap: Heap, lhs: int, rhs: int) -> bool:
    size = heap.machine.view(RefLayout).size
    return lhs == rhs or heap.read(lhs, size) == heap.read(rhs, size)


def check(ref: Ref, type_word: int) -> None:
    """iree_vm_ref_check: INVALID_ARGUMENT "ref is null" / "ref type mismatch"."""
    if ref.type != type_word:
        raise StatusError(StatusCode.INVALID_ARGUMENT,
                          "ref is null" if ref.type == TYPE_NULL else "ref type mismatch")


# -- type descriptors -------------------------------------------------------------------------------


class RefType:
    """A ref type registered in tracked memory: descriptor, name bytes, destroy callback."""

    def __init__(self, registry: "TypeRegistry", descriptor: int, name: str, offsetof_counter: int,
                 destroy_fn: int, name_data: int) -> None:
        self.registry = registry
        self.heap = registry.heap
        self.descriptor = descriptor
        self.name = name
        self.offsetof_counter = offsetof_counter
        self.destroy_fn = destroy_fn
        self._name_data = name_data
        self.type = descriptor | offsetof_counter  # iree_vm_ref_type_t
        self.closed = False

    def isa(self, ref: Ref) -> bool:
        return ref.type == self.type

    def deref(self, ref: Ref) -> int:
        return ref.ptr if self.isa(ref) else 0

    def check_deref(self, ref: Ref) -> int:
        check(ref, self.type)
        return ref.ptr

    def check_deref_or_null(self, ref: Ref) -> int:
        if ref.type == TYPE_NULL:
            return 0
        return self.check_deref(ref)

    def retain_ref(self, ptr: int) -> Ref:
        """X_retain_ref: a new ref holding one more reference (NULL stays NULL)."""
        if not ptr:
            return NULL_REF
        object_retain(self.heap, ptr, self.type)
        return Ref(ptr, self.type)

    def move_ref(self, ptr: int) -> Ref:
        """X_move_ref: a ref taking over a reference the caller holds. It is wrap_assign into a zeroed
        ref, which stores the type even for a NULL ptr: {NULL, type} (is_null is false), unlike
        retain_ref's {0, 0}."""
        return Ref(ptr, self.type)

    def close(self) -> None:
        """Unregister and free the descriptor (objects of this type must be gone). Idempotent."""
        if self.closed:
            return
        self.closed = True
        if self.destroy_fn:
            self.heap.functions.forget(self.destroy_fn)
        self.registry.unregister(self.descriptor)
        self.registry._types.remove(self)
        self.heap.free(self._name_data)
        self.heap.free(self.descriptor)

    def __repr__(self) -> str:
        return f"RefType({self.name!r}, type=0x{self.type:x})"


class TypeRegistry:
    """The instance's type table (iree_vm_instance_register_type / unregister_type). `capacity` is
    iree_vm_instance_create's type_capacity (stored as uint16 there; IREE's tools pass
    IREE_VM_TYPE_CAPACITY_DEFAULT = 32); None: unbounded."""

    def __init__(self, heap: Heap, *, capacity: int | None = None) -> None:
        self.heap = heap
        self.capacity = None if capacity is None else capacity & 0xFFFF
        self._counts: dict[int, int] = {}
        self._words: dict[int, int] = {}
        self._types: list[RefType] = []

    def register(self, descriptor: int) -> int:
        """Validate a descriptor in memory and register it; its iree_vm_ref_type_t."""
        if descriptor & TAG_MASK:
            raise StatusError(StatusCode.INVALID_ARGUMENT,
                              f"type descriptors must be aligned to {DESCRIPTOR_ALIGNMENT} bytes")
        view = self.heap.struct_at(_ref.iree_vm_ref_type_descriptor_t, descriptor)
        word = descriptor | view.offsetof_counter
        # A new descriptor needs a free slot; re-registering one only counts (instance.c order).
        if self.capacity is not None and descriptor not in self._counts \
                and len(self._counts) + 1 > self.capacity:
            raise StatusError(StatusCode.RESOURCE_EXHAUSTED,
                              f"too many user-defined types registered; new type {type_name(self.heap, word)} "
                              f"would exceed capacity of {self.capacity}")
        self._counts[descriptor] = self._counts.get(descriptor, 0) + 1
        self._words[descriptor] = word
        known = self.heap.known_types
        known[word] = known.get(word, 0) + 1
        return word

    def unregister(self, descriptor: int) -> None:
        word = self._words.get(descriptor)
        if word is None:
            return
        n = self._counts[descriptor] - 1
        if n <= 0:
            del self._counts[descriptor], self._words[descriptor]
        else:
            self._counts[descriptor] = n
        known = self.heap.known_types
        left = known.get(word, 0) - 1
        if left <= 0:
            known.pop(word, None)
        else:
            known[word] = left

    def is_registered(self, type_word: int) -> bool:
        return self._words.get(type_word & ~TAG_MASK) == type_word

    def names(self) -> frozenset[str]:
        """The names of the registered types, read from their descriptors in memory: what a module's
        types table resolves against (iree_vm_instance_lookup_type)."""
        return frozenset(type_name(self.heap, word) for word in self._words.values())

    def define(self, name: str, destroy: Callable[[int], None] | None, *,
               offsetof_counter: int = 0) -> RefType:
        """Allocate a descriptor for `name` whose destroy calls `destroy(ptr)`, and register it."""
        if not isinstance(offsetof_counter, int) or not 0 <= offsetof_counter <= TAG_MASK:
            raise StatusError(StatusCode.INVALID_ARGUMENT, "types must have offsets within the first few "
                              f"words of their structures (offsetof_counter {offsetof_counter!r})")
        encoded = name.encode()
        heap = self.heap
        L = heap.machine.view(RefLayout)
        descriptor = heap.malloc(L.descriptor_size, align=L.descriptor_align,
                                 tag=f"ref type descriptor {name}")
        name_data = heap.malloc(len(encoded), tag=f"ref type name {name}")
        heap.write(name_data, encoded)
        destroy_fn = 0
        if destroy is not None:
            park = callbacks.park

            def destroy_thunk(ptr: int | None) -> None:  # registered as is: it parks what make would
                try:
                    destroy(ptr or 0)
                except BaseException as e:  # noqa: BLE001 - nothing may unwind through C
                    park(e)
            destroy_fn = heap.functions.make_raw(callbacks.DESTROY_FN, destroy_thunk, name=f"destroy {name}")
        heap.write_word(descriptor + L.destroy_off, destroy_fn)
        heap.write_word(descriptor + L.name_data_off, name_data)
        heap.write_word(descriptor + L.name_size_off, len(encoded))
        heap.struct_at(_ref.iree_vm_ref_type_descriptor_t, descriptor).offsetof_counter = offsetof_counter
        try:
            self.register(descriptor)
        except BaseException:  # e.g. the capacity is used up: nothing of this type is left behind
            if destroy_fn:
                heap.functions.forget(destroy_fn)
            heap.free(name_data)
            heap.free(descriptor)
            raise
        t = RefType(self, descriptor, name, offsetof_counter, destroy_fn, name_data)
        self._types.append(t)
        return t

    def close(self) -> None:
        """Unregister and free every type `define` made."""
        for t in reversed(list(self._types)):
            t.close()


def type_name(heap: Heap, type_word: int) -> str:
    """iree_vm_ref_type_name, read from the descriptor in memory."""
    L = heap.machine.view(RefLayout)
    descriptor = type_word & L.descriptor_mask
    heap.check_range(descriptor, L.descriptor_size)
    data = heap.read_word(descriptor + L.name_data_off)
    size = heap.read_word(descriptor + L.name_size_off)
    return heap.read(data, size).decode("utf-8", "replace")
