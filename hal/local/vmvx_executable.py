"""vmvx executables: the kernels of iree-compile's vmvx backend, one VM bytecode module per executable
(format `vmvx-bytecode-fb`), run by ireeabi's VM interpreter as IREE's vmvx module loader runs them
(runtime/src/iree/hal/local/loaders/vmvx_module_loader.c).

- load: the data is a bytecode module, instantiated in its own context (its imports served by the
  runtime's native modules, IREE's `vmvx` microkernel module among them: modules/vmvx); every
  export must have the entry calling convention `0rrriiiiiiiii_v`
  (iree_hal_vmvx_executable_verify_entry_point's status otherwise); the export's reflection
  attributes `constant_count`, `binding_count` and `local_memory` (bytes, in 4 KiB pages) give its
  dispatch attributes; executable-level constants go to `__set_constants` as a vm.buffer, or are
  refused where the module has none (and the reverse).
- dispatch: each workgroup (z outer, x inner) calls the export with (local memory, push constants,
  a vm.list of the bindings as vm.buffers, workgroup id x/y/z, size x/y/z, count x/y/z), as
  iree_hal_vmvx_executable_issue_call does: a direct call of the export resolved once (the
  context's `direct_call`, held for the whole dispatch), which lays out what every workgroup shares
  once and places only the workgroup id per call; on the reference path each workgroup is a whole
  `invoke` by name instead. The vm.buffers are views of the mapped binding memory
  (IREE initializes them on its stack with a null allocator): handles in the heap, freed after the
  dispatch; one still referenced then (a kernel that kept it) is an error, where IREE would leave a
  dangling pointer. The inline command buffer runs the dispatch with denormals flushed to zero
  (base/internal/fpu_state.py): the interpreter's float ops, Python and numpy arithmetic on the host
  thread, then flush as IREE's interpreter does under that state.

Bytecode runs on every data model, so vmvx executables load on every target.
"""
from __future__ import annotations

from typing import Any, Sequence

from ...abi.errors import IreeAbiError
from ...layouts.buffer import BufferAccess
from ...base import allocator as _alloc
from ...vm.bytecode.module import Context
from ...vm.import_resolvers import NativeImports
from ...vm.list import VmList
from ...vm.bytecode.vm_buffer_factory import VmBufferFactory
from ...vm.bytecode.module_file import read_module
from ...vm.buffer import AbortError
from ...vm.ref import Ref
from ...base.status import IreeFaultError, StatusCode, StatusError

from .executable_library import ExecutableError, ExportInfo
from ...layouts.buffer import VmBufferLayout

FORMAT = "vmvx-bytecode-fb"
ENTRY_SIGNATURE = "0rrriiiiiiiii_v"  # IREE_VMVX_ENTRY_SIGNATURE
LOCAL_MEMORY_PAGE_SIZE = 4096  # IREE_HAL_EXECUTABLE_WORKGROUP_LOCAL_MEMORY_PAGE_SIZE
_MUTABLE = int(BufferAccess.ORIGIN_HOST | BufferAccess.MUTABLE)
_READ_ONLY = int(BufferAccess.ORIGIN_HOST)


def _atoi_u32(text: str) -> int:
    """iree_string_view_atoi_uint32 as the loader uses it: a decimal that does not parse is 0."""
    try:
        value = int(text, 10)
    except ValueError:
        return 0
    return value if 0 <= value <= 0xFFFFFFFF else 0


class VmvxLibrary:
    """One loaded vmvx executable: its context and export table (ExportInfo per entry point)."""

    def __init__(self, runtime: Any, image: bytes, constants: Sequence[int]) -> None:
        self.heap = runtime.heap
        self._vm_buffers = runtime.vm_buffers
        try:
            module = read_module(image, ref_types=runtime.types.names())  # the instance's types
        except IreeAbiError as err:  # the status code of IREE's bytecode module verifier
            code = getattr(err, "code", StatusCode.INVALID_ARGUMENT)
            raise ExecutableError(StatusCode(code), f"vmvx executable is not a valid bytecode module: "
                                  f"{err}") from None
        self.name = module.name
        self.has_names = True
        exports = []
        for i, e in enumerate(module.exported_functions):
            if e.cconv != ENTRY_SIGNATURE:
                raise ExecutableError(StatusCode.INVALID_ARGUMENT,
                                      f"executable entry point does not match the expected "
                                      f"calling convention; expected '{ENTRY_SIGNATURE}' but got "
                                      f"'{e.cconv}', possible ABI version mismatch")
            attrs = {a.key: a.value for a in e.attrs}
            exports.append(ExportInfo(i, e.name, 0, _atoi_u32(attrs.get("constant_count", "")) & 0xFF,
                                      _atoi_u32(attrs.get("binding_count", "")) & 0xFF, (1, 1, 1),
                                      (_atoi_u32(attrs.get("local_memory", "")) // LOCAL_MEMORY_PAGE_SIZE)
                                      & 0xFFFF, 0, e.name.encode()))
        self.exports = tuple(exports)
        self._factory = VmBufferFactory(runtime.vm_buffers)
        try:
            # the heap's reference switch (RunOptions.reference) reaches the kernels' interpreter too
            self.context = Context(module, NativeImports(dict(runtime.modules)), buffers=self._factory,
                                   reference=bool(getattr(self.heap, "reference", False)))
        except IreeAbiError as e:
            self._factory.close()
            raise ExecutableError(StatusCode.UNAVAILABLE, f"vmvx executable {module.name}: {e}") from None
        self._blocks: list[int] = []
        try:
            self._set_constants(module, list(constants))
        except BaseException:
            self.close()
            raise

    def _set_constants(self, module: Any, constants: list[int]) -> None:
        has = any(e.name == "__set_constants" for e in module.exported_functions)
        if not has:
            if constants:
                raise ExecutableError(StatusCode.INVALID_ARGUMENT, f"executable has no executable-level constants but "
                                      f"{len(constants)} constants were provided")
            return
        if not constants:
            raise ExecutableError(StatusCode.INVALID_ARGUMENT, "executable requires executable-level constants but "
                                  "none were provided")
        data = b"".join((c & 0xFFFFFFFF).to_bytes(4, "little") for c in constants)
        ref, block = self._view_of_bytes(data, _READ_ONLY)
        try:
            self._invoke("__set_constants", ref)
        finally:
            self._drop_view(ref, block)

    def lookup(self, name: bytes) -> int:
        """iree_hal_vmvx_executable_lookup_export_by_name: the bytecode module's lookup of an export
        by name (its statuses), mapped to the entry point's index."""
        if not name:
            raise StatusError(StatusCode.INVALID_ARGUMENT, "function name required for query")
        for e in self.exports:
            if e.name_bytes == name:
                return e.ordinal
        raise StatusError(StatusCode.NOT_FOUND, f"no function `{name.decode('utf-8', 'replace')}` exported "
                          f"by module")

    # -- vm.buffer views over memory ---------------------------------------------------------------

    def _view(self, data: int, length: int, access: int) -> Ref:
        """A vm.buffer handle (counter 1, null allocator) over [data, data + length)."""
        vmb = self._vm_buffers
        size = self.heap.machine.view(VmBufferLayout).size
        handle = self.heap.malloc(size, tag="vmvx binding vm.buffer")
        raw, off = self.heap.cell(handle, size)
        vmb.write_handle(raw, off, 1, access, data, length, _alloc.allocator_null(), 0)
        return Ref(handle, vmb.type)

    def _view_of_bytes(self, payload: bytes, access: int) -> tuple[Ref, int]:
        block = self.heap.malloc(max(len(payload), 1), tag="vmvx dispatch bytes")
        if payload:
            self.heap.write(block, payload)
        return self._view(block, len(payload), access), block

    def _drop_view(self, ref: Ref, block: int = 0) -> None:
        counter = self.heap.read_i32(ref.ptr)
        self.heap.free(ref.ptr)
        if block:
            self.heap.free(block)
        if counter != 1:
            # vmvx_module_loader.c deinitializes its stack buffers, whose counter must be 1 again:
            # iree_atomic_ref_count_abort_if_uses aborts the process otherwise.
            raise AbortError(f"a vmvx kernel kept a reference to a dispatch buffer (counter {counter}): "
                             "IREE's iree_vm_buffer_deinitialize aborts its process there (iree_abort)")

    def _invoke(self, name: str, *args: Any) -> None:
        self._calling(name, self.context.invoke, name, *args)

    def _calling(self, name: str, run: Any, *args: Any) -> None:
        """`run(*args)`, a call of kernel `name`, its errors as the loader's statuses."""
        try:
            run(*args)
        except (StatusError, IreeFaultError):  # a status, or where IREE itself faults: as they are
            raise
        except IreeAbiError as e:
            code = getattr(e, "code", StatusCode.INTERNAL)
            raise StatusError(StatusCode(int(code)) if int(code) in _CODES else StatusCode.INTERNAL,
                              f"vmvx kernel {name}: {e}") from e

    # -- dispatch ------------------------------------------------------------------------------------

    def run_workgroups(self, ordinal: int, counts: tuple[int, int, int], constants: Sequence[int],
                       bindings: Sequence[tuple[int, int]]) -> None:
        """Every workgroup of export `ordinal`: constants as uint32, bindings as mapped (address,
        length)."""
        export = self.exports[ordinal]
        local_size = export.local_memory_pages * LOCAL_MEMORY_PAGE_SIZE
        local_ref, local_block = self._view_of_bytes(bytes(local_size), _MUTABLE)
        const_ref, const_block = self._view_of_bytes(
            b"".join((c & 0xFFFFFFFF).to_bytes(4, "little") for c in constants), _READ_ONLY)
        views = [self._view(p, n, _MUTABLE) for p, n in bindings]
        blist = VmList("!vm.buffer", len(views))
        blist.items = list(views)
        for v in views:
            self._factory.retain(v)
        try:
            cx, cy, cz = counts
            if self.context.reference:  # the reference path: each workgroup a whole invoke by name
                for z in range(cz):
                    for y in range(cy):
                        for x in range(cx):
                            self._invoke(export.name, local_ref, const_ref, blist, x, y, z, 1, 1, 1, cx, cy, cz)
            else:
                self._calling(export.name, self.context.run_locked, f"dispatch of '{export.name}'",
                              self._direct_workgroups, export.name, counts, (local_ref, const_ref, blist))
        finally:
            blist.refs = 1
            self._factory.release(blist)  # drops the list's references to the views
            errors = []
            for ref, block in [(local_ref, local_block), (const_ref, const_block)] + [(v, 0) for v in views]:
                try:
                    self._drop_view(ref, block)
                except StatusError as e:
                    errors.append(e)
            if errors:
                raise errors[0]

    def _direct_workgroups(self, name: str, counts: tuple[int, int, int], refs: tuple) -> None:
        """Every workgroup's call of `name` (the context held for them all), z outer, x inner: what
        the dispatch keeps (the export, its fixed arguments: the three refs, workgroup size and
        count) is laid out once; each call places its workgroup id, retains the refs into its frame
        and releases them when it returns, as each of IREE's issue_call calls does."""
        cx, cy, cz = counts
        call = self.context.direct_call(name, (*refs, 0, 0, 0, 1, 1, 1, cx, cy, cz), (3, 4, 5))
        for z in range(cz):
            for y in range(cy):
                for x in range(cx):
                    call(x, y, z)

    def close(self) -> None:
        context, self.context = getattr(self, "context", None), None  # type: ignore[assignment]  # closed
        if context is not None:
            try:
                context.close()
            finally:
                self._factory.close()


def load(runtime: Any, image: bytes, constants: Sequence[int]) -> VmvxLibrary:
    """The vmvx module loader's try_load: a loaded executable, or ExecutableError."""
    return VmvxLibrary(runtime, image, constants)


_CODES = {int(c) for c in StatusCode}

__all__ = ["FORMAT", "ENTRY_SIGNATURE", "VmvxLibrary", "load"]
