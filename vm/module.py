"""A native module: name, version and an export table sorted by name, as IREE's
iree_vm_native_module_descriptor_t (runtime/src/iree/vm/native_module.h).

Exports are (local name, calling convention, target) with a shim per signature. `lookup` is the
binary search of iree_vm_native_module_lookup_function over names compared as
iree_string_view_compare does (bytes, then length); the table must be strictly sorted, as the
descriptor verifier requires. `call(name, *args)` runs a whole import call the way the bytecode VM
does: pack the arguments (refs retained), issue the call through the export's shim, release the
argument refs whatever the status, and move the results out.

The module itself is a reference-counted iree_vm_module_t head in tracked memory (`handle`), so
module-storage buffers can retain and release it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from ..abi import cconv
from ..abi.errors import IreeAbiError
from . import call as _call
from . import module_ref
from .heap import Heap
from .shims import CALL_BEGIN, CallContext, Shim, Target, shim_for
from .status import StatusCode, StatusError


@dataclass(frozen=True)
class Export:
    """One export descriptor + function pointer pair."""

    name: str
    cconv: str  # the whole signature, e.g. "0rIiiiCiDCrIID_v"
    target: Target
    form: str = "fixed"  # reader form for multi-span arguments (see shims)
    shim: Shim = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name or "\0" in self.name:
            raise IreeAbiError(f"export name must be a non-empty string without NUL, got {self.name!r}")
        object.__setattr__(self, "shim", shim_for(self.cconv, self.form))

    @property
    def signature(self) -> cconv.Signature:
        return self.shim.signature

    @property
    def key(self) -> bytes:
        return self.name.encode()


def string_view_compare(lhs: bytes, rhs: bytes) -> int:
    """iree_string_view_compare: bytewise over the common prefix, then the shorter sorts first."""
    n = min(len(lhs), len(rhs))
    if lhs[:n] != rhs[:n]:
        return -1 if lhs[:n] < rhs[:n] else 1
    return (len(lhs) > len(rhs)) - (len(lhs) < len(rhs))


class NativeModule:
    def __init__(self, heap: Heap, name: str, exports: Sequence[Export], *, version: int = 0,
                 state: Any = None, sort: bool = False) -> None:
        table = sorted(exports, key=lambda e: e.key) if sort else list(exports)
        for i in range(1, len(table)):
            if string_view_compare(table[i - 1].key, table[i].key) >= 0:
                raise StatusError(StatusCode.INVALID_ARGUMENT,
                                  f"module export table is not sorted by name (export {i - 1} "
                                  f"('{table[i - 1].name}') >= {i} ('{table[i].name}'))")
        self.heap = heap
        self.name = name
        self.version = version
        self.exports: tuple[Export, ...] = tuple(table)
        self._ordinals: dict[str, int] = {}  # lookup's memo
        self.state = state
        self.destroyed = False
        self.handle = module_ref.create(heap, self._on_destroy, name=name)

    def _on_destroy(self, _self: int) -> None:
        self.destroyed = True

    # -- lookup -------------------------------------------------------------------------------------

    def lookup(self, name: str) -> int:
        """The export ordinal of `name` (binary search); NOT_FOUND as IREE reports it."""
        found = self._ordinals.get(name) if type(name) is str else None
        if found is not None:  # a name this (immutable) table already resolved
            return found
        key = name.encode()
        lo, hi = 0, len(self.exports) - 1
        while lo <= hi:
            mid = (lo + hi) // 2
            cmp = string_view_compare(self.exports[mid].key, key)
            if cmp == 0:
                if type(name) is str:
                    self._ordinals[name] = mid
                return mid
            if cmp < 0:
                lo = mid + 1
            else:
                hi = mid - 1
        raise StatusError(StatusCode.NOT_FOUND, f"no function `{name}` exported by module `{self.name}`")

    # -- calls --------------------------------------------------------------------------------------

    def call(self, name: str, *args: Any) -> list[Any]:
        """Call an export by name; its results (refs owned by the caller)."""
        return self.call_ordinal(self.lookup(name), *args)

    def call_ordinal(self, ordinal: int, *args: Any) -> list[Any]:
        if not isinstance(ordinal, int) or not 0 <= ordinal < len(self.exports):
            raise StatusError(StatusCode.INVALID_ARGUMENT,
                              f"function ordinal out of bounds: 0 < {ordinal} < {len(self.exports)}")
        export = self.exports[ordinal]
        sig = export.signature
        heap = self.heap
        # Both buffers on the scratch stack, as the VM allocas them: results first, so the argument
        # frame (released first) is on top.
        results = _call.allocate_results(heap, sig.results, scratch=True)
        try:
            arguments = _call.pack_arguments(heap, sig.arguments, args, scratch=True)
        except BaseException:
            _call.discard_results(results)
            raise
        error: BaseException | None = None
        try:
            export.shim(CallContext(heap, self, self.state), CALL_BEGIN, arguments.span, results.span,
                        export.target)
        except BaseException as e:  # noqa: BLE001 - re-raised below, after the VM's cleanup
            error = e
        try:
            _call.release_arguments(arguments)  # whatever the status, as the VM does
        except BaseException as e:  # noqa: BLE001
            error = error or e
        if error is not None:
            _call.discard_results(results)
            raise error
        return _call.unpack_results(results)

    # -- lifetime -----------------------------------------------------------------------------------

    def retain(self) -> None:
        module_ref.retain(self.heap, self.handle)

    def release(self) -> None:
        module_ref.release(self.heap, self.handle)

    def close(self) -> None:
        """Drop the creator's reference (the head is freed when the last one goes)."""
        if not self.destroyed:
            self.release()
