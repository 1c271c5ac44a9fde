"""C function pointers backed by Python, and calls through pointers read from memory.

IREE calls allocators and ref destructors through function pointers stored in structs. Here those
pointers are real: `make()` turns a Python function into a ctypes callback (kept alive in a registry)
and returns its address, which is written into memory; `call()` reads nothing itself but calls the
address it is given through a ctypes function pointer, so a pointer written by any code is honoured.

Two guarantees keep that safe and honest:
- only addresses in the registry are ever called: a forged or stale pointer raises
  `FunctionPointerError` instead of jumping into the void;
- an exception raised in a Python callback cannot cross C (ctypes would print and drop it), so it is
  parked and re-raised by `call()` as soon as the C call returns. Memory errors (HeapError) therefore
  surface in the Python caller even when IREE ignores the status they travelled through.
"""
from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass
from typing import Any, Callable

from ..abi.errors import IreeAbiError

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
    prototype: Any  # the CFUNCTYPE class
    name: str
    thunk: Any  # the ctypes callback object (keeps the C trampoline alive)
    pointer: Any = None  # prototype(address): the function pointer `call()` calls through


_registry: dict[int, Registered] = {}


class _Parked(threading.local):
    """Per thread: exceptions raised by callbacks, waiting for `call()` to re-raise the first."""

    def __init__(self) -> None:
        self.errors: list[BaseException] = []  # always present: no failing getattr per call


_parked = _Parked()


def park(exc: BaseException) -> None:
    """Park an exception for the `call()` in progress (what a C function made by `make_raw` does with
    anything it cannot return through C)."""
    _parked.errors.append(exc)


# The per-thread parked list holder and the registry's lookup, for the hot callers that inline
# `call()` (allocator, ref release): `find(address)` is the Registered or None, and after the call a
# non-empty `PARKED.errors` means `reraise_parked(result, cleanup)` must run.
PARKED = _parked


def _take_parked() -> BaseException | None:
    stack = _parked.errors
    if not stack:
        return None
    first = stack[0]
    stack.clear()
    return first


def make(prototype: Any, fn: Callable[..., Any], *, name: str = "", on_error: Any = None) -> int:
    """Register `fn` as a C function of `prototype`; its address.

    If `fn` raises, the exception is parked for `call()` and the C caller gets `on_error(exc)` (or
    `on_error` itself if it is not callable) as the return value.
    """
    def thunk(*args: Any) -> Any:
        try:
            return fn(*args)
        except BaseException as e:  # noqa: BLE001 - nothing may unwind through C
            park(e)
            return on_error(e) if callable(on_error) else on_error

    return make_raw(prototype, thunk, name=name or getattr(fn, "__name__", "?"))


def make_raw(prototype: Any, fn: Callable[..., Any], *, name: str = "") -> int:
    """Register `fn` itself as a C function of `prototype` (one Python frame less per call than
    `make`); its address. `fn` must never raise: it catches everything itself and parks what the
    caller must see (`park`), as `make`'s wrapper does."""
    cfunc = prototype(fn)
    address = ctypes.cast(cfunc, ctypes.c_void_p).value
    _registry[address] = Registered(address, prototype, name or getattr(fn, "__name__", "?"), cfunc,
                                    prototype(address))
    return address


def forget(address: int) -> None:
    """Unregister a function (its address then fails `call()` like any unknown pointer)."""
    _registry.pop(address, None)


def lookup(address: int, prototype: Any, what: str) -> Registered:
    if not address:
        raise FunctionPointerError(f"{what}: call through a NULL function pointer", 0)
    r = _registry.get(address)
    if r is None:
        raise FunctionPointerError(f"{what}: 0x{address:x} is not a registered C function", address)
    if r.prototype is not prototype:
        raise FunctionPointerError(f"{what}: 0x{address:x} ({r.name}) has another signature", address)
    return r


def call(address: int, prototype: Any, *args: Any, what: str = "call", cleanup: Callable[[Any], None]
         | None = None) -> Any:
    """Call the C function at `address` (which must be registered with `prototype`).

    An exception parked by a callback during the call is re-raised here, after `cleanup(result)`
    disposes of what the C function returned.
    """
    r = _registry.get(address)
    if r is None or r.prototype is not prototype:
        r = lookup(address, prototype, what)  # raises
    result = r.pointer(*args)  # call_registered's body (one frame fewer)
    if _parked.errors:
        reraise_parked(result, cleanup)
    return result


def call_registered(r: Registered, *args: Any, cleanup: Callable[[Any], None] | None = None) -> Any:
    """`call()` through a function `lookup` just returned (no second registry lookup)."""
    # The pointer object made at registration for this very address (a call through the address,
    # not the Python function: what C does with it is what happens).
    result = r.pointer(*args)
    if _parked.errors:
        reraise_parked(result, cleanup)
    return result


def reraise_parked(result: Any, cleanup: Callable[[Any], None] | None = None) -> None:
    """After a call during which a callback parked an exception: `cleanup(result)`, then raise it."""
    parked = _take_parked()
    if cleanup is not None:
        cleanup(result)
    raise parked  # type: ignore[misc]


find = _registry.get  # address -> Registered | None (the registry dict is never rebound)


def is_registered(address: int) -> bool:
    return address in _registry
