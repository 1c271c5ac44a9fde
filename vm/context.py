"""A context: the module instance calls run in, as IREE's iree_vm_context_t holds it
(runtime/src/iree/vm/context.c), whatever kind of module it is.

What IREE's context does that does not depend on the module's kind lives here:

- registering a module resolves its imports (`resolve_imports`, iree_vm_context_resolve_module_
  imports): its dependencies, then each import against the modules the resolver stands for, with
  IREE's statuses and messages (`ImportStatusError`);
- calls by export name: `invoke` runs a call to its end, `begin` gives its `Invocation`
  (vm/invocation.py), which the module kind begins (`begin_call`) and resumes (`resume_call`);
- its lifetime: `close` aborts the invocations left suspended, then the module kind releases its
  state (`release_state`).

Not IREE's: a context and the heap under it belong to one thread at a time, as IREE documents but
does not check (`run_locked`: another thread's call is refused at once, ContextBusyError).

The bytecode module's context is `ireeabi.vm.bytecode.module.Context`.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

from ..abi.printable import printable
from ..base.status import StatusCode, StatusError
from .errors import ContextBusyError, ContextClosedError, ImportResolutionError
from .import_resolvers import ContextImports, FunctionImports, ImportResolver, NativeImports
from .invocation import Invocation
from .releases import import_signature_note


class Context:
    """One module instance (`module`: its name, version, dependencies, imported and exported
    functions) and what serves its imports (`imports`). A module kind derives from it and provides
    `begin_call`, `resume_call`, `abort_call` and `release_state`."""

    def __init__(self, module: Any, imports: ImportResolver | None) -> None:
        self.module = module
        self.imports = imports
        # One thread at a time runs the context (the heap under it has no locks, as IREE's VM
        # context has none): another thread's invoke is refused at once, never interleaved.
        self._busy = threading.Lock()
        self._owner: int | None = None
        self.closed = False
        # Invocations that yielded and were not resumed to the end (close aborts them)
        self.suspended: set[Invocation] = set()

    # ---------------------------------------------------------------------------------- public API

    def invoke(self, function_name: str, *args: Any) -> list:
        """Call an export with Python values (ints, floats, ref values) per its cconv; return its
        results (ref results owned by the caller)."""
        if self.closed:
            raise ContextClosedError(f"invoke of '{printable(function_name)}' on a closed context "
                                     f"(module {printable(self.module.name)})")
        if not self._busy.acquire(False):  # non-blocking (positional: a keyword costs 0.25 us)
            if self._owner == threading.get_ident():  # a nested invoke on the running thread
                out = self.begin_call(function_name, args)
                return out if isinstance(out, list) else out.finish(None)
            raise ContextBusyError(f"invoke of '{printable(function_name)}' while another thread runs "
                                   f"a call on this context (module {printable(self.module.name)}): a context and "
                                   "its heap belong to one thread at a time")
        self._owner = threading.get_ident()
        try:
            out = self.begin_call(function_name, args)
            if not isinstance(out, list):  # it yielded: resumed until done, as iree_vm_invoke does
                out = out.finish(None)
            return out
        finally:
            self._owner = None
            self._busy.release()

    def begin(self, function_name: str, *args: Any) -> Invocation:
        """Begin a call of an export (iree_vm_begin_invoke): it runs until it returns or yields
        (vm.yield, or a yieldable import that yields). The Invocation says which; `resume()` goes on
        after a yield, `finish()` resumes until done. `invoke` is begin + finish."""
        out = self.run_locked(f"begin of '{printable(function_name)}'", self.begin_call, function_name, args)
        if type(out) is list:
            return Invocation(self, function_name, None, 0, out)
        return out

    def run_locked(self, what: str, run: Callable, *args: Any) -> Any:
        """`run(*args)` holding the context, as invoke holds it (a nested call on the running
        thread goes through); `what` names the call in the errors."""
        if self.closed:
            raise ContextClosedError(f"{what} on a closed context (module {self.module.name})")
        if not self._busy.acquire(False):
            if self._owner == threading.get_ident():
                return run(*args)
            raise ContextBusyError(f"{what} while another thread runs a call on this context "
                                   f"(module {self.module.name}): a context and its heap belong "
                                   "to one thread at a time")
        self._owner = threading.get_ident()
        try:
            return run(*args)
        finally:
            self._owner = None
            self._busy.release()

    def close(self) -> None:
        """Abort the suspended invocations (their frames' references go first), then release the
        module's state; later invokes raise ContextClosedError. Idempotent; every release runs,
        the first error is raised after them."""
        if self.closed:
            return
        self.closed = True
        first: BaseException | None = None
        for invocation in list(self.suspended):
            try:
                invocation.abort()
            except BaseException as e:  # noqa: BLE001 - release everything, then report
                first = first or e
        try:
            self.release_state()
        except BaseException as e:  # noqa: BLE001
            first = first or e
        if first is not None:
            raise first

    def __enter__(self) -> "Context":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------- what a module kind provides

    def begin_call(self, function_name: str, args: tuple) -> "list | Invocation":
        """Run a call of an export until it returns (its results) or yields (its Invocation)."""
        raise NotImplementedError

    def resume_call(self, stack: list, budget: int) -> "list | int":
        """Run a suspended call on from `stack`: its results, or the budget left at its next yield."""
        raise NotImplementedError

    def abort_call(self, stack: list) -> None:
        """Drop a suspended call's `stack`, releasing what its frames hold."""
        raise NotImplementedError

    def release_state(self) -> None:
        """Release the module's state (`close`, after the suspended invocations)."""
        raise NotImplementedError

    # -------------------------------------------------------------------------- import resolution

    def resolve_imports(self) -> list[bool]:
        """Which imports resolve, or the first failure IREE reports (iree_vm_context_resolve_module_
        imports): the module's dependencies in table order (a required one must be registered, at
        its minimum version or later), then each import in order: a fully-qualified name, its
        module registered and exporting the function (else skipped when optional), the export's
        cconv equal to the import's when the import declares one (optional imports too), a cconv
        version the call can use. The resolver's modules are the registered ones: a ContextImports'
        contexts, a NativeImports' modules, the module names of a FunctionImports' functions (whose
        cconvs and versions are not known, so not checked); another resolver's `resolves` decides
        alone. Failures raise `ImportStatusError` with IREE's code and message."""
        m, imports = self.module, self.imports
        registered = _registered_modules(imports)
        if registered is not None:
            for dep in m.dependencies:  # iree_vm_context_check_module_dependency
                if dep.name in registered:
                    version = registered[dep.name]
                    if not dep.required or version is None or version >= dep.minimum_version:
                        continue  # an optional one is fine at any version
                    reason = (f"required module '{printable(dep.name)}' version mismatch; have {version} but "
                              f"require {dep.minimum_version}")
                elif dep.optional:
                    continue
                else:  # required, or flagged neither way
                    reason = f"required module '{printable(dep.name)}' not registered on the context"
                first = next((i.full_name for i in m.imported_functions if i.module == dep.name),
                             dep.name)
                raise self._import_error(StatusCode.NOT_FOUND, reason, first)
        resolved = []
        for imp in m.imported_functions:
            full_name = imp.full_name
            module_name, dot, function = full_name.partition(".")
            if not dot:
                raise self._import_error(StatusCode.INVALID_ARGUMENT, f"import name not fully-"
                                         f"qualified (module.func): '{printable(full_name)}'", full_name)
            if registered is None:
                assert imports is not None  # only another resolver's modules are not known
                ok = imports.resolves(full_name, imp.cconv)
                if not ok and not imp.optional:
                    raise self._import_error(StatusCode.NOT_FOUND, "required import not resolved "
                                             "(the resolver does not provide it)", full_name)
                resolved.append(ok)
                continue
            if imports is None or module_name not in registered:  # (no resolver: none registered)
                found: "tuple[StatusCode, str] | str | None" = (
                    StatusCode.NOT_FOUND, f"module '{printable(module_name)}' required for import "
                    f"'{printable(full_name)}' not registered with the context")
            else:
                found = _lookup_export(imports, module_name, function)
            if isinstance(found, tuple):
                if found[0] == StatusCode.NOT_FOUND and imp.optional:
                    resolved.append(False)  # left unresolved: calls fail, import.resolved is 0
                    continue
                raise self._import_error(found[0], found[1], full_name)
            if imp.cconv and found is not None and found != imp.cconv:
                raise self._import_error(
                    StatusCode.INTERNAL, f"import function {printable(full_name)} signature mismatch "
                    f"between {printable(m.name)} and source {printable(module_name)}; expected "
                    f"{printable(imp.cconv)} but got {printable(found)}",
                    full_name, import_signature_note(full_name, imp.cconv))
            cconv = found if found is not None else imp.cconv
            if cconv and cconv[0] != "0":  # iree_vm_function_call_get_cconv_fragments
                raise self._import_error(StatusCode.UNIMPLEMENTED,
                                         f"unsupported cconv version {cconv[0]}", full_name)
            assert imports is not None  # its module is registered
            if not imports.resolves(full_name, imp.cconv or None):  # the resolver agrees
                raise self._import_error(StatusCode.NOT_FOUND, "the resolver does not provide it",
                                         full_name)
            resolved.append(True)
        return resolved

    def _import_error(self, code: StatusCode, reason: str, full_name: str,
                      note: str | None = None) -> "ImportStatusError":
        """IREE's status; `note` (ireeabi's: which IREE releases the import is of) after it."""
        return ImportStatusError(full_name, code, f"{reason}; resolving module "
                                 f"'{printable(self.module.name)}' imports"
                                 + (f" (why: {note})" if note else ""))


class ImportStatusError(ImportResolutionError):
    """An import IREE's context would not resolve: `code` is the StatusCode it reports, the message
    its message (after `import <full_name>: `); `full_name` is the import's name (for a missing
    required module, its first import from that module, else the module's name)."""

    def __init__(self, full_name: str, code: StatusCode, reason: str) -> None:
        super().__init__(full_name, reason)
        self.code = code
        self.reason = reason

    def __reduce__(self) -> tuple:
        return (type(self), (self.full_name, self.code, self.reason))


def _registered_modules(imports: ImportResolver | None) -> "dict[str, int | None] | None":
    """Module name -> version (None: not known) of the modules a resolver stands for; None for a
    resolver whose modules are not known."""
    if imports is None:
        return {}
    if isinstance(imports, ContextImports):
        return {name: ctx.module.version for name, ctx in imports.contexts.items()}
    if isinstance(imports, NativeImports):
        return {name: module.version for name, module in imports.modules.items()}
    if isinstance(imports, FunctionImports):
        return {name.partition(".")[0]: None for name in imports.functions if "." in name}
    return None


def _lookup_export(imports: ImportResolver, module_name: str,
                   function: str) -> "tuple[StatusCode, str] | str | None":
    """The export's cconv (None when not known), or (code, message) as the module's
    lookup_function fails: a bytecode module (module.c) or a native one (native_module.c)."""
    if isinstance(imports, ContextImports):
        if not function:
            return StatusCode.INVALID_ARGUMENT, "function name required for query"
        module = imports.contexts[module_name].module
        for e in module.exported_functions:
            if e.name == function:
                return e.cconv or ""
        return StatusCode.NOT_FOUND, f"no function `{printable(function)}` exported by module"
    if isinstance(imports, NativeImports):
        native = imports.modules[module_name]
        try:
            ordinal = native.lookup(function)
        except StatusError as e:
            return StatusCode(e.code), e.message
        return native.exports[ordinal].cconv or ""
    assert isinstance(imports, FunctionImports)  # the one other resolver with registered modules
    if f"{module_name}.{function}" in imports.functions:
        return None
    return StatusCode.NOT_FOUND, (f"no function `{printable(function)}` exported by module "
                                  f"`{printable(module_name)}`")


__all__ = ["Context", "ImportStatusError"]
