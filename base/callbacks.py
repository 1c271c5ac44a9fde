"""Function pointers in target memory backed by Python, and calls through pointers read from memory.

IREE calls allocators and ref destructors through function pointers stored in structs. Here each
heap has a `FunctionTable` that turns a Python function into such a pointer (`make`, `make_raw`)
and calls through a pointer it is given (`call`), so a pointer written by any code is honoured:

- on the host target (`HostFunctions`) the pointers are real: a ctypes callback (kept alive by the
  heap's table) whose address C code can call as well; a Python caller calls the Python function
  directly, or through C when the table was made for the reference path (`reference`, which the
  heap reads once, at its creation);
- on any other target (`HandleFunctions`) C cannot call into target memory, so a pointer is a
  handle in the address space's code range (below every allocation), and `call` dispatches it to
  the Python function in the table of that address space.

Two guarantees keep that safe and honest on both:
- only registered addresses are ever called: a forged or stale pointer raises
  `FunctionPointerError` instead of jumping into the void;
- an exception raised in a Python callback cannot cross C (ctypes would print and drop it), so it is
  parked and re-raised by `call()` as soon as the call returns. Memory errors (HeapError) therefore
  surface in the Python caller even when IREE ignores the status they travelled through. Handle
  calls park and re-raise exactly the same way, so the two tables behave alike.
"""
from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass
from typing import Any, Callable

from ..abi.errors import IreeAbiError
from ..abi.generated import define

# iree_status_t (*)(void* self, iree_allocator_command_t command, const void* params, void** inout_ptr)
CTL_FN = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
# void (*)(void* ptr): iree_vm_ref_destroy_t, iree_vm_module_t.destroy
DESTROY_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class FunctionPointerError(IreeAbiError):
    """A call through a function pointer that is NULL, unknown, or of another signature."""

    def __init__(self, message: str, address: int) -> None:
        self.address = address
        super().__init__(message)


@dataclass(frozen=True)
class Registered:
    address: int
    prototype: Any  # the CFUNCTYPE class: the signature, whichever table holds the function
    name: str
    thunk: Any  # what keeps the function alive (the ctypes callback object, or the Python function)
    pointer: Any = None  # what `call()` calls: prototype(address) through C, or the Python function


class _Parked(threading.local):
    """Per thread: exceptions raised by callbacks, waiting for `call()` to re-raise the first."""

    def __init__(self) -> None:
        self.errors: list[BaseException] = []  # always present: no failing getattr per call


_parked = _Parked()


def park(exc: BaseException) -> None:
    """Park an exception for the `call()` in progress (what a function made by `make_raw` does with
    anything it cannot return through C)."""
    _parked.errors.append(exc)


# The per-thread parked list, for the hot callers that inline `call()` (allocator, ref release):
# after the call a non-empty `PARKED.errors` means `reraise_parked(result, cleanup)` must run.
PARKED = _parked


def _take_parked() -> BaseException | None:
    stack = _parked.errors
    if not stack:
        return None
    first = stack[0]
    stack.clear()
    return first


def reraise_parked(result: Any, cleanup: Callable[[Any], None] | None = None) -> None:
    """After a call during which a callback parked an exception: `cleanup(result)`, then raise it."""
    parked = _take_parked()
    if cleanup is not None:
        cleanup(result)
    raise parked  # type: ignore[misc]


def call_registered(r: Registered, *args: Any, cleanup: Callable[[Any], None] | None = None) -> Any:
    """`call()` through a function `lookup` just returned (no second registry lookup)."""
    # The pointer made at registration for this very address (through C on the host: what C does
    # with it is what happens).
    result = r.pointer(*args)
    if _parked.errors:
        reraise_parked(result, cleanup)
    return result


def _parking(fn: Callable[..., Any], on_error: Any) -> Callable[..., Any]:
    def thunk(*args: Any) -> Any:
        try:
            return fn(*args)
        except BaseException as e:  # noqa: BLE001 - nothing may unwind through C
            park(e)
            return on_error(e) if callable(on_error) else on_error
    return thunk


class FunctionTable:
    """The function pointers of one address space (see the module docstring). `find(address)` is
    the Registered at `address` or None (a dict lookup, for the hot callers). `reference`: Python
    callers go through C where the table can (a host table), as the reference path does."""

    kind = "function"  # what an address of this table is, for messages

    def __init__(self, registry: dict[int, Registered], reference: bool = False) -> None:
        self._registry = registry
        self.find = registry.get  # the registry dict is never rebound
        self._shared: dict[str, int] = {}
        self.reference = reference

    def _register(self, prototype: Any, fn: Callable[..., Any], name: str) -> Registered:
        raise NotImplementedError

    def make(self, prototype: Any, fn: Callable[..., Any], *, name: str = "", on_error: Any = None) -> int:
        """Register `fn` as a function of `prototype`; its address. If `fn` raises, the exception is
        parked for `call()` and the caller gets `on_error(exc)` (or `on_error` itself if it is not
        callable) as the return value."""
        return self.make_raw(prototype, _parking(fn, on_error), name=name or getattr(fn, "__name__", "?"))

    def make_raw(self, prototype: Any, fn: Callable[..., Any], *, name: str = "") -> int:
        """Register `fn` itself as a function of `prototype` (one Python frame less per call than
        `make`); its address. `fn` must never raise: it catches everything itself and parks what the
        caller must see (`park`), as `make`'s wrapper does."""
        return self._register(prototype, fn, name or getattr(fn, "__name__", "?")).address

    def shared(self, key: str, prototype: Any, fn: Callable[..., Any]) -> int:
        """One registration of `fn` per table under `key` (e.g. the heap allocator's ctl)."""
        address = self._shared.get(key)
        if address is None:
            address = self._shared[key] = self.make_raw(prototype, fn, name=key)
        return address

    def forget(self, address: int) -> None:
        """Unregister a function (its address then fails `call()` like any unknown pointer)."""
        self._registry.pop(address, None)

    def is_registered(self, address: int) -> bool:
        return address in self._registry

    def lookup(self, address: int, prototype: Any, what: str) -> Registered:
        if not address:
            raise FunctionPointerError(f"{what}: call through a NULL function pointer", 0)
        r = self._registry.get(address)
        if r is None:
            raise FunctionPointerError(f"{what}: 0x{address:x} is not a registered {self.kind}", address)
        if r.prototype is not prototype:
            raise FunctionPointerError(f"{what}: 0x{address:x} ({r.name}) has another signature", address)
        return r

    def call(self, address: int, prototype: Any, *args: Any, what: str = "call",
             cleanup: Callable[[Any], None] | None = None) -> Any:
        """Call the function at `address` (which must be registered with `prototype`). An exception
        parked by a callback during the call is re-raised here, after `cleanup(result)` disposes of
        what the function returned."""
        r = self._registry.get(address)
        if r is None or r.prototype is not prototype:
            r = self.lookup(address, prototype, what)  # raises
        result = r.pointer(*args)
        if _parked.errors:
            reraise_parked(result, cleanup)
        return result


_WORD_MASK = (1 << (8 * ctypes.sizeof(ctypes.c_void_p))) - 1


def _pointer_value(x: Any) -> int | None:
    """A void* argument or result as ctypes hands it over: the host word, NULL as None."""
    if x is None:
        return None
    if type(x) is not int and not isinstance(x, int):
        raise ctypes.ArgumentError(f"wrong type for a pointer: {type(x).__name__}")
    return (x & _WORD_MASK) or None


def _int_value(x: Any) -> int:
    """A C int argument as ctypes hands it over: wrapped to 32 bits, signed."""
    if type(x) is not int and not isinstance(x, int):
        raise ctypes.ArgumentError(f"wrong type for an int: {type(x).__name__}")
    return ((x & 0xFFFFFFFF) ^ 0x80000000) - 0x80000000


_CONVERT = {ctypes.c_void_p: "_pointer_value", ctypes.c_int: "_int_value"}


def direct_call(prototype: Any, fn: Callable[..., Any]) -> Callable[..., Any]:
    """What calling `prototype(address)` of a callback of `fn` does, without going through C: each
    argument and the result converted as ctypes converts them on the way through, an exception
    parked (C would print and drop it, returning 0). Generated from the prototype's types."""
    names = [f"a{i}" for i in range(len(prototype._argtypes_))]
    # An int argument is converted inline (the functions' own expressions); anything else goes
    # through the function, which says what ctypes would refuse.
    inline = {ctypes.c_void_p: "({n} & _WORD_MASK or None)",
              ctypes.c_int: "((({n} & 0xFFFFFFFF) ^ 0x80000000) - 0x80000000)"}
    converted = "".join(f"    c{n[1:]} = {inline[t].format(n=n)} if type({n}) is int else {_CONVERT[t]}({n})\n"
                        for t, n in zip(prototype._argtypes_, names))
    args = ", ".join(f"c{n[1:]}" for n in names)
    restype = prototype._restype_
    result = f"fn({args})\n        return None" if restype is None else f"return {_CONVERT[restype]}(fn({args}))"
    # The arguments are converted at the call (a wrong type raises there, as ctypes does); what
    # the function raises, or a result that is no pointer, is parked (C would print and drop it).
    source = (f"def call({', '.join(names)}):\n{converted}    try:\n        {result}\n"
              f"    except BaseException as e:\n        park(e)\n        return None\n")
    namespace = {"fn": fn, "ctypes": ctypes, "park": park, "_pointer_value": _pointer_value,
                 "_int_value": _int_value, "_WORD_MASK": _WORD_MASK}
    return define(source, "direct call", getattr(fn, '__name__', '?'), namespace, "call")


class HostFunctions(FunctionTable):
    """Real C function pointers (ctypes callbacks) on the host target, one table per heap. The
    pointer is what C code, kernels and ctypes callers get; a Python caller going through the table
    (`call`, `pointer`) calls the Python function directly (`direct_call`), unless the table is on
    the reference path (`reference`: then through C)."""

    kind = "C function"

    def __init__(self, reference: bool = False) -> None:
        super().__init__({}, reference)

    def _register(self, prototype: Any, fn: Callable[..., Any], name: str) -> Registered:
        cfunc = prototype(fn)
        address = ctypes.cast(cfunc, ctypes.c_void_p).value
        assert address is not None  # ctypes' callback thunks are never NULL
        pointer = prototype(address) if self.reference else direct_call(prototype, fn)
        r = Registered(address, prototype, name, cfunc, pointer)
        self._registry[address] = r
        return r


class HandleFunctions(FunctionTable):
    """Function pointers of a foreign target: handles in [lo, hi), 16 bytes apart, dispatched to the
    Python function they were made for. Freed handles are reused."""

    STRIDE = 16
    kind = "function handle"

    def __init__(self, lo: int, hi: int) -> None:
        super().__init__({})
        self._lo, self._hi = lo, hi
        self._next = lo
        self._free: list[int] = []

    def _register(self, prototype: Any, fn: Callable[..., Any], name: str) -> Registered:
        if self._free:
            address = self._free.pop()
        elif self._next + self.STRIDE <= self._hi:
            address = self._next
            self._next += self.STRIDE
        else:
            raise FunctionPointerError(f"no free function handle left in 0x{self._lo:x}..0x{self._hi:x}",
                                       self._hi)
        r = Registered(address, prototype, name, fn, fn)
        self._registry[address] = r
        return r

    def forget(self, address: int) -> None:
        if self._registry.pop(address, None) is not None:
            self._free.append(address)


__all__ = ["CTL_FN", "DESTROY_FN", "FunctionPointerError", "Registered", "park", "PARKED", "reraise_parked",
           "call_registered", "FunctionTable", "direct_call", "HostFunctions", "HandleFunctions"]
