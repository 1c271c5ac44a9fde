"""A native module: name, version and an export table sorted by name, as IREE's
iree_vm_native_module_descriptor_t (runtime/src/iree/vm/native_module.h).

Exports are (local name, calling convention, function): the Python implementation, run by the shim of
its signature on the module's data model (the heap's). `lookup` is the
binary search of iree_vm_native_module_lookup_function over names compared as
iree_string_view_compare does (bytes, then length); the table must be strictly sorted, as the
descriptor verifier requires. `call(name, *args)` runs a whole import call the way the bytecode VM
does: pack the arguments (refs retained), issue the call through the export's shim, release the
argument refs whatever the status, and move the results out. A yieldable call (`call_ordinal(...,
yieldable=True)`) that yields (StatusError DEFERRED) is continued by `resume_ordinal`, the shim run
again with the RESUME flag, as native_module.c's resume_call does.

The module itself is a reference-counted iree_vm_module_t head in tracked memory (`handle`), so
module-storage buffers can retain and release it.

Reflection follows runtime/src/iree/vm/native_module.c: `signature`, `get_function`,
`get_function_attr`, `get_module_attr` and `lookup_function` (with a linkage) give IREE's values and
statuses. A failing call is annotated as iree_vm_native_module_issue_call annotates it (a note on the
StatusError, its message left as the status had it); its results are dropped unread, as the bytecode
VM drops them; a DEFERRED status from an import with results becomes the VM's UNIMPLEMENTED.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple, Sequence

from ..abi import cconv
from ..abi.cconv import Signature  # not cconv.Signature: the field `cconv` hides the module
from ..abi.cconv.codec import codec
from ..abi.errors import IreeAbiError
from ..abi.printable import printable
from ..abi.generated import define
from . import call as _call
from . import module_ref
from ..base.heap import Heap
from ..base.machine import Machine
from .ref import Ref, countable_cell, object_release
from .call import as_ref
from .shims import READER_FORMS, CALL_BEGIN, CALL_RESUME, ByteSpan, CallContext, MarshalError, NativeFunction, Shim, shim_for
from ..base.status import StatusCode, StatusError


@dataclass(frozen=True)
class Export:
    """One export: descriptor (name, calling convention, reflection attributes) and the Python
    function the shim of its signature calls with the decoded arguments (`function(ctx, *args)`).
    The shim itself is made per data model (`shim_on`): the generic one of the signature, or, for a
    signature IREE's generic shims cannot express, the module's own (`shim`: a Shim subclass, made
    as `shim(signature, form, machine)`, declared beside the module as IREE declares it in C)."""

    name: str
    cconv: str  # the whole signature, e.g. "0rIiiiCiDCrIID_v"
    function: NativeFunction
    form: str = "fixed"  # reader form for multi-span arguments (see shims)
    attrs: tuple[tuple[str, str], ...] = ()  # function-level reflection attributes (key, value)
    shim: "Callable[[Signature, str, Machine], Shim] | None" = None  # the module's own shim
    signature: Signature = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name or "\0" in self.name:
            raise IreeAbiError(f"export name must be a non-empty string without NUL, got {self.name!r}")
        object.__setattr__(self, "attrs", _attr_pairs(self.attrs, f"export {self.name!r} attrs"))
        if self.form not in READER_FORMS:
            raise IreeAbiError(f"export {self.name!r}: unknown reader form {self.form!r}; valid: "
                               f"{', '.join(READER_FORMS)}")
        object.__setattr__(self, "signature", cconv.parse(self.cconv))

    def shim_on(self, machine: Machine) -> Shim:
        """The shim of this export's signature on a data model."""
        if self.shim is not None:
            return self.shim(self.signature, self.form, machine)
        return shim_for(self.cconv, self.form, machine)

    @property
    def key(self) -> bytes:
        return self.name.encode()


def _attr_pairs(attrs: Any, what: str) -> tuple[tuple[str, str], ...]:
    try:
        pairs = tuple((k, v) for k, v in attrs)
    except (TypeError, ValueError):
        raise IreeAbiError(f"{what} must be (key, value) string pairs, got {attrs!r}") from None
    for k, v in pairs:
        if not isinstance(k, str) or not isinstance(v, str):
            raise IreeAbiError(f"{what} must be (key, value) string pairs, got {(k, v)!r}")
    return pairs


def string_view_compare(lhs: bytes, rhs: bytes) -> int:
    """iree_string_view_compare: strncmp over the common prefix, then the shorter sorts first.

    strncmp stops at a NUL both sides share, so bytes after it never decide (b"a\0x" and b"a\0y"
    compare equal when their lengths are)."""
    n = min(len(lhs), len(rhs))
    a, b = lhs[:n], rhs[:n]
    if a != b:
        i = next(k for k in range(n) if a[k] != b[k])
        if 0 not in a[:i]:  # no shared NUL before the first difference: it decides
            return -1 if a[i] < b[i] else 1
    return (len(lhs) > len(rhs)) - (len(lhs) < len(rhs))


class Linkage(enum.IntEnum):
    """iree_vm_function_linkage_t (runtime/src/iree/vm/module.h)."""

    INTERNAL = 0
    IMPORT = 1
    EXPORT = 2
    IMPORT_OPTIONAL = 3
    EXPORT_OPTIONAL = 4


_EXPORT_LINKAGES = (Linkage.EXPORT, Linkage.EXPORT_OPTIONAL)
_IMPORT_LINKAGES = (Linkage.IMPORT, Linkage.IMPORT_OPTIONAL)


class Function(NamedTuple):
    """iree_vm_function_t: the module, a linkage and a uint16 ordinal."""

    module: "NativeModule"
    linkage: Linkage
    ordinal: int


class ModuleSignature(NamedTuple):
    """iree_vm_module_signature_t as iree_vm_native_module_signature fills it."""

    version: int
    attr_count: int
    import_function_count: int
    export_function_count: int
    internal_function_count: int


def _index(value: Any, what: str) -> int:
    """An ordinal or index argument (iree_host_size_t): an int, or a clear error."""
    if type(value) is not int and not (isinstance(value, int) and not isinstance(value, bool)):
        raise IreeAbiError(f"{what} must be an int, got {value!r}")
    return int(value)


def _linkage(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise IreeAbiError(f"linkage must be a Linkage (int), got {value!r}")
    return int(value)


def _name_key(name: Any) -> bytes:
    """A function name as the bytes of its iree_string_view_t (str as UTF-8, bytes as they are; a
    byte that is not UTF-8, read from a module or argv, is a surrogateescape'd one)."""
    if isinstance(name, (bytes, bytearray)):
        return bytes(name)
    if not isinstance(name, str):
        raise IreeAbiError(f"function name must be a str or bytes, got {name!r}")
    try:
        return name.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as e:
        raise IreeAbiError(f"function name {name!r} is not encodable as UTF-8 (index {e.start})") from None


def _shim_failure(error: BaseException, module: str, export: str, results_size: int,
                  yieldable: bool = False) -> BaseException:
    """What a failing native call turns into by the time the calling VM sees it.

    iree_vm_native_module_issue_call (native_module.c) annotates every failing status but DEFERRED
    with the function's name (a note here: the message stays the status's own); the VM's
    iree_vm_bytecode_issue_import_call (bytecode/dispatch.c) cannot resume an import that has
    results, so a DEFERRED one becomes UNIMPLEMENTED, unless the call is yieldable
    (vm.call.yieldable: iree_vm_bytecode_call_import_yieldable resumes it)."""
    if not isinstance(error, StatusError):
        return error  # not a status: a Python bug in a target, passed on as it is
    if error.code == StatusCode.DEFERRED:
        if not results_size or yieldable:
            return error
        failed = StatusError(StatusCode.UNIMPLEMENTED, "yield in imports with results not supported")
        failed.__cause__ = error
        return failed
    note = f"while invoking native function {module}.{export}"
    add_note = getattr(error, "add_note", None)
    if add_note is not None:
        add_note(note)
    else:  # Python 3.10: the attribute add_note would have set
        setattr(error, "__notes__", [*getattr(error, "__notes__", ()), note])  # (3.10 declares none)
    return error


class NativeModule:
    def __init__(self, heap: Heap, name: str, exports: Sequence[Export], *, version: int = 0,
                 state: Any = None, sort: bool = False, attrs: Sequence[tuple[str, str]] = ()) -> None:
        table = sorted(exports, key=lambda e: e.key) if sort else list(exports)
        for i in range(1, len(table)):
            if string_view_compare(table[i - 1].key, table[i].key) >= 0:
                raise StatusError(StatusCode.INVALID_ARGUMENT,
                                  f"module export table is not sorted by name (export {i - 1} "
                                  f"('{table[i - 1].name}') >= {i} ('{table[i].name}'))")
        self.heap = heap
        self.machine = heap.machine
        self.name = name
        self.version = version
        self.attrs = _attr_pairs(attrs, f"module {name!r} attrs")
        self.exports: tuple[Export, ...] = tuple(table)
        # Each export's shim on the heap's data model, by ordinal.
        self.shims: tuple[Shim, ...] = tuple(e.shim_on(self.machine) for e in self.exports)
        self._ordinals: dict[str, int] = {}  # lookup's memo
        # planned's memo: call sites of one export with the same span counts and moved refs share
        # one plan (a plan keeps nothing of a call between calls: its frame is pushed per call)
        self._plans: dict[tuple[int, tuple[int, ...], tuple[int, ...]], "PlannedCall"] = {}
        self.state = state
        self.destroyed = False
        self.handle = module_ref.create(heap, self._on_destroy, name=name)

    def _on_destroy(self, _self: int) -> None:
        self.destroyed = True

    # -- lookup -------------------------------------------------------------------------------------

    def lookup(self, name: "str | bytes") -> int:
        """The export ordinal of `name` (binary search); NOT_FOUND as IREE reports it."""
        found = self._ordinals.get(name) if type(name) is str else None
        if found is not None:  # a name this (immutable) table already resolved
            return found
        key = _name_key(name)
        ordinal = self._search(key)
        if ordinal is None:
            raise StatusError(StatusCode.NOT_FOUND, f"no function `{printable(name)}` exported by module "
                                                    f"`{printable(self.name)}`")
        if type(name) is str:
            self._ordinals[name] = ordinal
        return ordinal

    def _search(self, key: bytes) -> int | None:
        """iree_vm_native_module_lookup_function's binary search over the sorted export names."""
        lo, hi = 0, len(self.exports) - 1
        while lo <= hi:
            mid = (lo + hi) // 2
            cmp = string_view_compare(self.exports[mid].key, key)
            if cmp == 0:
                return mid
            if cmp < 0:
                lo = mid + 1
            else:
                hi = mid - 1
        return None

    def lookup_function(self, name: "str | bytes", linkage: int = Linkage.EXPORT) -> Function:
        """iree_vm_native_module_lookup_function: only export linkages are searched (others are
        UNIMPLEMENTED); a missing EXPORT_OPTIONAL name is a bare NOT_FOUND; the function found is
        returned as get_function gives it (linkage EXPORT whichever export linkage was asked)."""
        if _linkage(linkage) not in _EXPORT_LINKAGES:
            raise StatusError(StatusCode.UNIMPLEMENTED,
                              "native modules do not support import/internal function queries")
        if linkage == Linkage.EXPORT:
            return self.get_function(self.lookup(name))[0]
        ordinal = self._search(_name_key(name))
        if ordinal is None:
            raise StatusError(StatusCode.NOT_FOUND)  # a lightweight failure: no message
        return self.get_function(ordinal, linkage)[0]

    # -- reflection ---------------------------------------------------------------------------------

    def signature(self) -> ModuleSignature:
        """iree_vm_native_module_signature (native modules here have no imports)."""
        return ModuleSignature(self.version, len(self.attrs), 0, len(self.exports), 0)

    def get_module_attr(self, index: int) -> tuple[str, str]:
        """iree_vm_native_module_get_module_attr: OUT_OF_RANGE (no message) past the last one."""
        index = _index(index, "attr index")
        if not 0 <= index < len(self.attrs):
            raise StatusError(StatusCode.OUT_OF_RANGE)
        return self.attrs[index]

    def get_function(self, ordinal: int, linkage: int = Linkage.EXPORT) -> tuple[Function, str, str]:
        """iree_vm_native_module_get_function: (function, name, calling convention), statuses as
        IREE's (an out-of-range export ordinal, any import ordinal: INVALID_ARGUMENT; other linkages
        UNIMPLEMENTED)."""
        ordinal = _index(ordinal, "function ordinal")
        linkage = _linkage(linkage)
        if linkage in _IMPORT_LINKAGES:
            raise StatusError(StatusCode.INVALID_ARGUMENT,
                              f"import ordinal out of range (0 < {ordinal} < 0)")
        if linkage not in _EXPORT_LINKAGES:
            raise StatusError(StatusCode.UNIMPLEMENTED,
                              "native modules do not support internal function queries")
        if not 0 <= ordinal < len(self.exports):
            raise StatusError(StatusCode.INVALID_ARGUMENT,
                              f"export ordinal out of range (0 < {ordinal} < {len(self.exports)})")
        export = self.exports[ordinal]
        return Function(self, Linkage.EXPORT, ordinal & 0xFFFF), export.name, export.cconv

    def get_function_attr(self, ordinal: int, index: int, linkage: int = Linkage.EXPORT) -> tuple[str, str]:
        """iree_vm_native_module_get_function_attr: the linkage, then the ordinal, then the index."""
        ordinal, index = _index(ordinal, "function ordinal"), _index(index, "attr index")
        if _linkage(linkage) not in _EXPORT_LINKAGES:
            raise StatusError(StatusCode.INVALID_ARGUMENT, "only exported functions can be queried")
        if not 0 <= ordinal < len(self.exports):
            raise StatusError(StatusCode.INVALID_ARGUMENT,
                              f"function ordinal out of range (0 < {ordinal} < {len(self.exports)})")
        attrs = self.exports[ordinal].attrs
        if not 0 <= index < len(attrs):
            raise StatusError(StatusCode.OUT_OF_RANGE)
        return attrs[index]

    # -- calls --------------------------------------------------------------------------------------

    def call(self, name: str, *args: Any) -> list[Any]:
        """Call an export by name; its results (refs owned by the caller)."""
        return self.call_ordinal(self.lookup(name), *args)

    def call_ordinal(self, ordinal: int, *args: Any, moved: tuple[int, ...] = (),
                     yieldable: bool = False) -> list[Any]:
        """Call export `ordinal` with Python arguments (spans as lists of element tuples) through
        its shim on packed memory; `moved`: packer-order indices of refs whose references the
        caller hands over to the argument buffer (released with it) instead of having them retained.
        `yieldable`: the call may yield (StatusError DEFERRED, whatever its results), to be
        continued by `resume_ordinal`."""
        if not isinstance(ordinal, int) or not 0 <= ordinal < len(self.exports):
            raise StatusError(StatusCode.INVALID_ARGUMENT,
                              f"function ordinal out of bounds: 0 < {ordinal} < {len(self.exports)}")
        export = self.exports[ordinal]
        sig = export.signature
        heap = self.heap
        # Both buffers on the scratch stack, as the VM allocas them: results first, so the argument
        # frame (released first) is on top.
        try:
            results = _call.allocate_results(heap, sig.results, scratch=True)
        except BaseException:
            _release_moved(heap, sig.arguments, args, moved)
            raise
        try:
            arguments = _call.pack_arguments(heap, sig.arguments, args, scratch=True, moved=moved)
        except BaseException:
            _call.abandon_results(results)
            _release_moved(heap, sig.arguments, args, moved)
            raise
        error: BaseException | None = None
        try:
            self.shims[ordinal](CallContext(heap, self, self.state), CALL_BEGIN, arguments.span,
                                results.span, export.function)
        except BaseException as e:  # noqa: BLE001 - re-raised below, after the VM's cleanup
            error = _shim_failure(e, self.name, export.name, results.layout.size, yieldable)
        try:
            _call.release_arguments(arguments)  # whatever the status, as the VM does
        except BaseException as e:  # noqa: BLE001
            error = error or e
        if error is not None:
            _call.abandon_results(results)  # unread: the VM moves nothing out of a failed call
            raise error
        return _call.unpack_results(results)

    def resume_ordinal(self, ordinal: int) -> list[Any]:
        """Continue a call of export `ordinal` that yielded (iree_vm_native_module_resume_call): its
        shim again with the RESUME flag, no arguments and a fresh results buffer; the results, or
        StatusError(DEFERRED) while it yields again."""
        if not isinstance(ordinal, int) or not 0 <= ordinal < len(self.exports):
            raise StatusError(StatusCode.INVALID_ARGUMENT,
                              f"function ordinal out of bounds: 0 < {ordinal} < {len(self.exports)}")
        export = self.exports[ordinal]
        heap = self.heap
        results = _call.allocate_results(heap, export.signature.results, scratch=True)
        try:
            self.shims[ordinal](CallContext(heap, self, self.state), CALL_RESUME, ByteSpan(0, 0),
                                results.span, export.function)
        except BaseException as e:  # noqa: BLE001 - re-raised as the VM sees it
            _call.abandon_results(results)
            raise _shim_failure(e, self.name, export.name, results.layout.size, True)
        return _call.unpack_results(results)

    def planned(self, ordinal: int, span_counts: tuple[int, ...] = (),
                moved: tuple[int, ...] = ()) -> "PlannedCall":
        """`call_ordinal` planned once for a call site (fixed span counts), taking its arguments
        flattened in packer order; `moved` lists the flat indices of refs whose references the
        caller hands over (MOVE-marked registers) instead of having them retained. One plan per
        (ordinal, span counts, moved) for the module's life, whichever call sites ask."""
        if not isinstance(ordinal, int) or not 0 <= ordinal < len(self.exports):
            raise StatusError(StatusCode.INVALID_ARGUMENT,
                              f"function ordinal out of bounds: 0 < {ordinal} < {len(self.exports)}")
        key = (ordinal, tuple(span_counts), tuple(moved))
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = PlannedCall(self, *key)
        return plan

    # -- lifetime -----------------------------------------------------------------------------------

    def retain(self) -> None:
        module_ref.retain(self.heap, self.handle)

    def release(self) -> None:
        module_ref.release(self.heap, self.handle)

    def close(self) -> None:
        """Drop the creator's reference (the head is freed when the last one goes)."""
        if not self.destroyed:
            self.release()


class PlannedCall:
    """One import call site of the bytecode VM, planned once: what `NativeModule.call_ordinal` does,
    with the argument layout, codecs and ref slots fixed for the call site's span counts.

    `plan(flat)` takes the argument values already flattened in packer order (refs as `Ref`, NULL
    as NULL_REF, floats as their bit patterns as registers hold them, span counts implied by the
    plan) and returns the flattened results the same way (refs owned by the caller). As
    iree_vm_bytecode_populate_import_cconv_arguments does, each ref is retained into the buffer,
    except the `moved` ones, whose references the buffer takes over; the release walk after the
    call drops every reference the buffer holds, whatever the status. A failed call's results are
    dropped unread, as the VM drops them (`_shim_failure` says what the failure becomes).
    """

    __slots__ = ("module", "export", "shim", "heap", "args", "results", "acodec", "rcodec", "asize",
                 "rsize", "retained", "moved", "arg_refs", "res_refs", "empty", "_ctx", "stack", "roff",
                 "nvalues", "where", "word_mask", "on_frame", "run")

    def __init__(self, module: NativeModule, ordinal: int, span_counts: tuple[int, ...],
                 moved: tuple[int, ...]) -> None:
        export = module.exports[ordinal]
        sig = export.signature
        self.module, self.export, self.heap = module, export, module.heap
        self.shim = module.shims[ordinal]
        m = module.machine
        self.word_mask = m.word_mask
        self.args = _call.plan_for(sig.arguments, span_counts, m)
        self.results = _call.plan_for(sig.results, (), m)
        self.asize, self.rsize = self.args.size, self.results.size
        self.acodec = codec(self.args.layout, True)
        self.rcodec = codec(self.results.layout, True)
        ref_index = self.args.ref_index
        bad = [i for i in moved if i not in ref_index]
        if bad:
            raise IreeAbiError(f"{module.name}.{export.name}: moved value(s) {bad} are not refs")
        self.moved = moved
        self.retained = tuple(i for i in ref_index if i not in moved)
        self.arg_refs = tuple(i for i, _, _ in self.args.ref_slots)
        self.res_refs = tuple(i for i, _, _ in self.results.ref_slots)
        self.empty = 0  # void results: the shared empty block, made at the first call as the layered path makes it
        self._ctx = CallContext(self.heap, module, module.state)
        # The scratch block is the heap's for its whole life (scratch_push refuses a closed heap).
        self.stack = self.heap.scratch_memory()
        # One scratch frame holds both buffers, as the VM allocas them: results, then arguments
        # (MALLOC_ALIGNMENT apart); void results use the shared empty block.
        align = self.heap.malloc_alignment
        self.roff = -(-self.rsize // align) * align
        self.nvalues = len(self.args.layout.values)
        self.where = f"{module.name}.{export.name} ({export.cconv})"
        # A generic shim runs on this frame's bytes (its spans are this call's own); a custom
        # one gets the spans.
        self.on_frame = self.shim.on_frame(self.args.layout, self.results.layout) \
            if isinstance(self.shim, Shim) else None
        self.run = self._generate()

    def _empty(self) -> int:
        self.empty = _call.empty_block(self.heap)
        return self.empty

    def __call__(self, flat: list) -> list:
        return self.run(flat)

    def _generate(self) -> Callable[[list], list]:
        """This call site's call as one function, generated from the plan: the value count, the
        frame size and offsets, which values are retained, moved and released, and which results
        are refs are fixed in its text. What it does, in order: check the count; take the moved
        refs; push one scratch frame (results, then arguments, as the VM allocas them); check every
        counter a retain will write, pack the arguments, then write the retains (nothing can fail
        between); run the shim (on the frame when it is a generic one); walk the argument buffer
        as the callee left it, releasing every ref even if one fails (the first failure is the
        call's error); read the results; pop the frame. A failed call's results are dropped unread,
        as the VM drops them (`_shim_failure` says what the failure becomes)."""
        module, export = self.module, self.export
        stack, base = self.stack
        roff, asize, rsize = self.roff, self.asize, self.rsize
        retained, moved = self.retained, self.moved
        ns: dict[str, Any] = {
            "_self": self, "_heap": self.heap, "_module": module, "_stack": stack, "_base": base,
            "_where": self.where, "_mask": self.word_mask, "_Ref": Ref, "as_ref": as_ref,
            "_MarshalError": MarshalError, "_IreeAbiError": IreeAbiError, "_release_all": _release_all,
            "_pop": self.heap.scratch_pop,
            "_pack_args": self.acodec.pack_into, "_unpack_args": self.acodec.unpack,
            "_unpack_results": self.rcodec.unpack, "_countable_cell": countable_cell,
            "_retain_plan": _call.retain_plan, "_CallContext": CallContext,
            "_on_frame": self.on_frame, "_shim": self.shim, "_function": export.function,
            "_shim_failure": _shim_failure, "_object_release": object_release, "_new": _new,
            "_ByteSpan": ByteSpan, "_CALL_BEGIN": CALL_BEGIN}
        flat_at = ", ".join
        L = ["def call(flat):",
             f"    if len(flat) != {self.nvalues}:",
             f"        raise _MarshalError(f'{{_where}}: {self.nvalues} argument value(s) expected, got {{len(flat)}}')"]
        if moved:
            L.append(f"    moved = [r if type(r) is _Ref else as_ref(r, _where, _mask) for r in "
                     f"({flat_at(f'flat[{i}]' for i in moved)},)]")
        else:
            L.append("    moved = ()")
        L += ["    try:"]
        if not rsize:
            L.append("        raddr = _self.empty or _self._empty()")
        push, pop, scratch_names = self.heap.scratch_source(roff + asize)
        ns.update(scratch_names)
        L += ["        " + line for line in push]
        L += ["    except BaseException:",
              "        _release_all(_heap, moved)",
              "        raise"]
        if rsize:
            L.append("    raddr = frame")
        L += [f"    aoff = frame + {roff} - _base  # the arguments' offset in the scratch block", "    try:"]
        if len(retained) == 1:
            L += [f"        r = flat[{retained[0]}]",
                  "        one = _countable_cell(_heap, r[0], r[1]) if r[0] else None"]
        elif retained:
            L += [f"        refs = [r for r in ({flat_at(f'flat[{i}]' for i in retained)},) if r[0]]",
                  "        retains = _retain_plan(_heap, refs) if refs else None"]
        L += ["        _pack_args(_stack, aoff, flat)",
              "    except BaseException as e:",
              "        _pop(frame)",
              "        _release_all(_heap, moved)",
              "        if isinstance(e, (TypeError, ValueError, IndexError)):  # a ref that is no (ptr, type)",
              "            raise _MarshalError(f'{_where}: bad argument values {flat!r}: {e}') from None",
              "        raise"]
        if len(retained) == 1:  # every counter was checked above and nothing freed since
            L += ["    if one is not None:", "        one[2][one[3]] = one[1] + 1"]
        elif retained:
            L += ["    if retains:", "        for value, n, cells, i in retains.values():",
                  "            cells[i] = value + n"]
        if retained:  # in argument order, as the layered path reports them
            L += ["    if _heap.ref_events is not None:",
                  f"        _heap.ref_events.extend(('retain', r[0], r[1]) for r in "
                  f"({flat_at(f'flat[{i}]' for i in retained)},) if r[0])"]
        L += ["    error = None",
              "    ctx = _self._ctx",
              "    if ctx.state is not _module.state:  # the module's state was replaced since planning",
              "        ctx = _self._ctx = _CallContext(_heap, _module, _module.state)",
              "    try:"]
        if self.on_frame is not None:
            L.append(f"        _on_frame(ctx, _function, _stack, aoff, frame + {roff}, "
                     f"{'frame - _base' if rsize else '0'})")
        else:
            L.append(f"        _shim(ctx, _CALL_BEGIN, _new(_ByteSpan, (frame + {roff}, {asize})), "
                     f"_new(_ByteSpan, (raddr, {rsize})), _function)")
        L += ["    except BaseException as e:",
              f"        error = _shim_failure(e, {module.name!r}, {export.name!r}, {rsize})"]
        # The VM's release walk over the argument buffer as the callee left it.
        L += ["    try:", "        values = _unpack_args(_stack, aoff)"]
        for i in self.arg_refs:
            L += [f"        ptr, typ = values[{i}]", "        if ptr and typ:", "            try:",
                  "                _object_release(_heap, ptr, typ)",
                  "            except _IreeAbiError as e:", "                error = error or e"]
        L.append(f"        values = {'_unpack_results(_stack, frame - _base)' if rsize else '[]'}")
        L += ["    except BaseException as e:  # reading its own frame: the heap closed",
              "        _pop(frame)", "        raise error or e",
              *("    " + line for line in pop),
              "    if error is not None:  # a failed call: the results are dropped unread",
              "        raise error"]
        for i in self.res_refs:
            L.append(f"    values[{i}] = _new(_Ref, values[{i}])")
        L.append("    return values")
        return define("\n".join(L) + "\n", "planned call", self.where, ns, "call")


_new = tuple.__new__  # a NamedTuple from a tuple, without its Python-level __new__


def _release_moved(heap: Heap, fragment: Any, args: Sequence[Any], moved: tuple[int, ...]) -> None:
    """The moved references of a call whose argument buffer never took them over."""
    if not moved:
        return
    try:
        flat, _ = _call.flatten(fragment, args, heap.machine.word_mask)
    except IreeAbiError:  # arguments that do not fit the cconv: the refs cannot be found in them
        return
    _release_all(heap, [flat[i] for i in moved if i < len(flat) and isinstance(flat[i], Ref)])


def _release_all(heap: Heap, refs: list) -> None:
    for r in refs:
        if r[0] and r[1]:
            object_release(heap, r[0], r[1])
