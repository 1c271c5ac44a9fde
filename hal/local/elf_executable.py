"""CPU executable libraries compiled by iree-compile, loaded and dispatched on the host.

`load_library(format, data)` takes the bytes of an `embedded-elf-<arch>` or `system-elf-<arch>` kernel
library (as iree-compile emits them into a module's rodata), writes them to a private temporary file,
dlopens it, calls `iree_hal_executable_library_query` with an environment_v0 laid out by the catalog,
and reads library v0 — header, imports, exports — checking every pointer it follows against the
loaded image first. `DispatchState` lays out dispatch_state_v0 and its arrays in packed memory for a
data model, and `Library.issue` runs every workgroup through the C helper in `native.py`.

Kernels are machine code: a library runs only when its architecture is the host's, and only with
memory laid out for the host (the heap of a runtime whose target is the host). A runtime of another
target answers `query_support` as IREE on that target would (its own architecture's formats), and a
load of such a library stops with an error that says which target can run it.
"""
from __future__ import annotations

import ctypes
import io
import os
import struct
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ...abi import targets
from ...base.machine import Machine, host as _host_machine, machine as _machine
from ...layouts import executable_library as X

from .executable_library import (DispatchResult, DispatchState, ExecutableError,
                                                  ExportInfo, ForeignKernelError, LoadedLibrary,
                                                  UnresolvedImportError, check_counts,
                                                  write_workgroup_state)
from . import elf_loader
from .native import FAULTED, budget_ns, check_cpu_time, native, stop_flags, stopped
from ...layouts.executable_library import DispatchLayout
from ...base.status import StatusCode


# IREE's architecture spellings in executable format strings (IREE_ARCH), by ireeabi target; wasm32
# has no ELF loader.
FORMAT_ARCH = {"x86_64": "x86_64", "aarch64": "arm_64", "riscv64": "riscv_64", "riscv32": "riscv_32",
                "armv7": "arm_32", "i386": "x86_32"}
_ELF_MACHINE = {"x86_64": "EM_X86_64", "aarch64": "EM_AARCH64", "riscv64": "EM_RISCV", "riscv32": "EM_RISCV",
                "armv7": "EM_ARM", "i386": "EM_386"}
FORMAT_KINDS = ("embedded-elf", "system-elf")

_RTLD_NOW = 0x2
_RTLD_DI_LINKMAP = 2


def formats(target: "Machine | str | None" = None) -> tuple[str, ...]:
    """The ELF executable formats IREE's loaders accept on a data model (the host by default)."""
    arch = FORMAT_ARCH.get(_machine(target).name)
    return tuple(f"{k}-{arch}" for k in FORMAT_KINDS) if arch else ()


def foreign_arch(format: str, target: "Machine | str | None" = None) -> str | None:
    """The ireeabi target whose machine code an ELF `format` holds, when that is not `target`'s
    (None for any other format)."""
    m = _machine(target)
    for name, arch in FORMAT_ARCH.items():
        if name != m.name and arch != FORMAT_ARCH.get(m.name) and \
                any(format.startswith(f"{k}-{arch}") for k in FORMAT_KINDS):
            return name
    return None


def query_support(format: str, target: "Machine | str | None" = None) -> bool:
    """True when IREE's ELF loaders on `target` (the host by default) accept `format`: they test a
    prefix (`embedded-elf-x86_64` accepts any suffix after it)."""
    return any(format.startswith(f) for f in formats(target))


class Image:
    """The address range a loaded library occupies, in the memory its code runs in; every pointer
    read from it is checked here. Structs are read as `machine` lays them out (the host's for host
    code; the target's for a library in a runtime's heap, whose addresses are target addresses
    `read_bytes` reads)."""

    def __init__(self, lo: int, hi: int, machine: Machine | None = None,
                 read_bytes: Callable[[int, int], bytes] = ctypes.string_at) -> None:
        self.lo, self.hi = lo, hi
        self.machine = machine if machine is not None else _host_machine()
        self._read_bytes = read_bytes

    def check(self, address: int, size: int, what: str) -> int:
        if address == 0:
            raise ExecutableError(StatusCode.INVALID_ARGUMENT, f"library {what} is NULL")
        if not (self.lo <= address and address + size <= self.hi):
            raise ExecutableError(StatusCode.INVALID_ARGUMENT,
                                  f"library {what} at 0x{address:x} (+{size}) lies outside the loaded image "
                                  f"[0x{self.lo:x}, 0x{self.hi:x})")
        return address

    def cbytes(self, address: int, what: str) -> bytes:
        self.check(address, 1, what)
        raw = self._read_bytes(address, self.hi - address)
        end = raw.find(b"\0")
        if end < 0:
            raise ExecutableError(StatusCode.INVALID_ARGUMENT, f"library {what} at 0x{address:x} is not terminated")
        return raw[:end]

    def cstring(self, address: int, what: str) -> str:
        return self.cbytes(address, what).decode("utf-8", "replace")

    def read(self, cls: Any, address: int, what: str) -> Any:  # cls: a ctypes type
        n = ctypes.sizeof(cls)
        self.check(address, n, what)
        return cls.from_buffer_copy(self._read_bytes(address, n))

    def words(self, address: int, count: int, what: str) -> list[int]:
        word = ctypes.c_uint64 if self.machine.pointer_size == 8 else ctypes.c_uint32
        return list(self.read(word * count, address, what)) if count else []


def _elf_image_span(data: bytes, host_name: str, embedded: bool) -> tuple[int, int]:
    """(lowest vaddr, highest vaddr end) over PT_LOAD, after the checks IREE's loader makes first.

    An ELF this host cannot load is FAILED_PRECONDITION for the embedded loader (its own ELF reader
    rejects it) and NOT_FOUND for the system loader (dlopen fails). The embedded loader also refuses
    any undefined dynamic symbol (UNAVAILABLE: it links nothing in), before looking up the query."""
    from elftools.common.exceptions import ELFError
    from elftools.construct import ConstructError
    from elftools.elf.elffile import ELFFile

    bad = StatusCode.FAILED_PRECONDITION if embedded else StatusCode.NOT_FOUND
    try:
        elf = ELFFile(io.BytesIO(data))
        machine = elf["e_machine"]
        bits = elf.elfclass
        loads = [s for s in elf.iter_segments() if s["p_type"] == "PT_LOAD"]
        dynsym = elf.get_section_by_name(".dynsym")
        # (a .dynsym that is no symbol table has no iter_symbols: the AttributeError is caught below)
        syms = list(dynsym.iter_symbols()) if dynsym is not None else []  # type: ignore[attr-defined]
        names = {s.name for s in syms}
        undefined = [s.name for s in syms[1:] if s["st_shndx"] == "SHN_UNDEF"]  # entry 0 is the null symbol
    except (ELFError, ValueError, KeyError, AttributeError, IndexError, TypeError, OverflowError,
            struct.error, ConstructError) as e:  # pyelftools on hostile bytes
        raise ExecutableError(bad, f"not a loadable ELF library: {e}") from None
    want_bits = targets.get(host_name).pointer_size * 8
    if machine != _ELF_MACHINE.get(host_name) or bits != want_bits:
        raise ExecutableError(bad, f"ELF for {machine} ({bits}-bit) cannot run on this {host_name} host")
    if not loads:
        raise ExecutableError(bad, "ELF library has no PT_LOAD segment")
    if embedded and undefined:
        raise ExecutableError(StatusCode.UNAVAILABLE, f"ELF imports one or more symbols (trying '{undefined[0]}'); "
                              "the embedded ELF loader supports no imports")
    if X.IREE_HAL_EXECUTABLE_LIBRARY_EXPORT_NAME not in names:
        raise ExecutableError(StatusCode.NOT_FOUND, f"exported symbol with name "
                              f"'{X.IREE_HAL_EXECUTABLE_LIBRARY_EXPORT_NAME}' not found in module")
    return min(s["p_vaddr"] for s in loads), max(s["p_vaddr"] + s["p_memsz"] for s in loads)


class _LinkMap(ctypes.Structure):
    _fields_ = [("l_addr", ctypes.c_size_t), ("l_name", ctypes.c_char_p)]


@dataclass(eq=False)
class Library(LoadedLibrary):
    """A library of host machine code, loaded natively (see the module docstring)."""
    _unload: "Callable[[], None] | None" = field(repr=False)  # releases the loaded image
    _image: Image = field(repr=False)
    _env: Any = field(repr=False)  # environment_v0 instance; must outlive every dispatch
    _keep: list = field(default_factory=list, repr=False)
    has_names: bool = True  # exports.names is non-NULL (only a library without exports may lack it)
    # workgroup_state_v0's id offsets on the host, for the C loop (the library is host code)
    _wg_ids: tuple = field(default_factory=lambda: _host_machine().view(DispatchLayout).wg_ids, repr=False)
    _dll: Any = field(default=None, repr=False)  # a system library's handle
    unusable: str = ""  # why no dispatch may run any more (a kernel faulted), or ""
    # CPU seconds one dispatch may use before it ends with DEADLINE_EXCEEDED (None: no bound)
    cpu_time: "float | None" = None

    @property
    def environment_address(self) -> int:
        return ctypes.addressof(self._env)

    def issue(self, ordinal: int, dispatch_state: int, workgroup_state: int,
              workgroup_count: tuple[int, int, int], heap: Any = None) -> DispatchResult:
        """Run every workgroup of export `ordinal` with a prepared dispatch_state and workgroup_state
        laid out for the host: addresses in `heap` (whose target must be the host), or host
        addresses without one."""
        if heap is not None:
            if not heap.machine.is_host:
                raise ForeignKernelError(StatusCode.FAILED_PRECONDITION, f"library {self.name} is host machine code; "
                                         f"it cannot read memory laid out for {heap.machine.name}")
            dispatch_state, workgroup_state = heap.host_address(dispatch_state), heap.host_address(workgroup_state)
        if self._unload is None:
            raise ExecutableError(StatusCode.FAILED_PRECONDITION, f"library {self.name} was unloaded")
        if self.unusable:
            raise ExecutableError(StatusCode.FAILED_PRECONDITION, f"library {self.name} is unusable: {self.unusable}")
        if not 0 <= ordinal < len(self.exports):
            raise ExecutableError(StatusCode.INVALID_ARGUMENT, "entry point ordinal out of bounds")
        issue, new = _issue_fn()
        calls, fault = new("uint64_t*"), new("ireeabi_fault_t*")
        x, y, z = workgroup_count
        wx, wy, wz = self._wg_ids
        status = issue(self.exports[ordinal].function, ctypes.addressof(self._env), dispatch_state,
                       workgroup_state, wx, wy, wz, x, y, z, calls, fault, budget_ns(self.cpu_time),
                       stop_flags())
        if status < FAULTED:  # stopped (Ctrl-C, its budget): the library stays usable
            where = f" in workgroup ({fault.x}, {fault.y}, {fault.z})"
            error = stopped(status, f"kernel {self.exports[ordinal].name}", self.cpu_time, where)
            if error is not None:
                raise error
        if status == FAULTED:  # the kernel's memory may be anything now: no dispatch of it again
            workgroup = (fault.x, fault.y, fault.z)
            self.unusable = (f"export {self.exports[ordinal].name} faulted at workgroup {workgroup} "
                             f"(signal {fault.signal}, address 0x{fault.address:x})")
            return DispatchResult(status, calls[0], (fault.signal, fault.address, workgroup))
        return DispatchResult(status, calls[0])

    def dispatch(self, ordinal: int, workgroup_count: tuple[int, int, int], constants: Sequence[int] = (),
                 bindings: Sequence[tuple[int, int]] = (), workgroup_size: tuple[int, int, int] = (1, 1, 1),
                 processor_id: int = 0) -> DispatchResult:
        """Dispatch with Python values: constants as uint32, bindings as (address, byte length)."""
        if 0 <= ordinal < len(self.exports):
            check_counts(self.exports[ordinal], len(constants), len(bindings))
        m = _host_machine()
        block = ctypes.create_string_buffer(m.view(DispatchLayout).block_size(len(constants), len(bindings)) + 8)
        address = -(-ctypes.addressof(block) // 8) * 8
        state = DispatchState(m, len(constants), len(bindings), block, address - ctypes.addressof(block), address)
        state.set(workgroup_size=workgroup_size, workgroup_count=workgroup_count, constants=constants,
                  bindings=bindings)
        _wg, wg_address = new_workgroup_state(processor_id)
        result = self.issue(ordinal, state.address, wg_address, workgroup_count)
        if result.fault is not None:
            raise ExecutableError(StatusCode.INTERNAL, f"library {self.name}: {self.unusable}")
        if result.status != 0:
            raise ExecutableError(StatusCode.INTERNAL,
                                  f"executable entry point returned catastrophic error {result.status}")
        return result

    def close(self) -> None:
        """Unload the library (its image unmapped, or dlclose); later dispatches fail clearly."""
        if self._unload is not None:
            unload, self._unload, self._dll = self._unload, None, None
            unload()

    def __enter__(self) -> "Library":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _cls(decl: Any) -> type:
    """A catalog struct as the host lays it out: libraries are host code reading host memory."""
    return _host_machine().ctype(decl)


_ISSUE: list = []  # (ireeabi_issue_workgroups, ffi.new) once the helper is built


def _issue_fn() -> tuple[Any, Any]:
    """The C workgroup loop and cffi's `new`, looked up once (the helper builds on first use)."""
    if not _ISSUE:
        lib = native()
        _ISSUE.append((lib.lib.ireeabi_issue_workgroups, lib.ffi.new))
    return _ISSUE[0]


def new_workgroup_state(processor_id: int = 0) -> tuple[Any, int]:
    """(keep-alive buffer, host address) of a zeroed, 64-byte-aligned workgroup_state_v0 in host
    memory, as IREE keeps it on its stack (for `Library.dispatch`)."""
    L = _host_machine().view(DispatchLayout)
    raw = ctypes.create_string_buffer(L.wg_size + L.wg_align)
    address = -(-ctypes.addressof(raw) // L.wg_align) * L.wg_align
    write_workgroup_state(_host_machine(), raw, address - ctypes.addressof(raw), processor_id)
    return raw, address


def load_library(format: str, data: bytes, constants: Sequence[int] = (),
                 processor_data: Sequence[int] | None = None,
                 target: "Machine | str | None" = None, cpu_time: "float | None" = None) -> Library:
    """Load an ELF kernel library of `format` from its bytes (see module doc) for a runtime of
    `target` (the host by default). `processor_data` fills environment_v0.processor (default: this
    host's, as iree_cpu_read_data gives them). `cpu_time`: the CPU seconds each dispatch may use
    (None: no bound; Ctrl-C stops a kernel either way), and so may each initializer and the query."""
    cpu_time = check_cpu_time(cpu_time, "cpu_time")
    m = _machine(target)
    if not isinstance(format, str) or not any(format.startswith(k + "-") for k in FORMAT_KINDS):
        raise ExecutableError(StatusCode.NOT_FOUND,
                              f"no executable loader registered for the given executable format '{format}'")
    if not query_support(format, m):
        raise ExecutableError(StatusCode.NOT_FOUND, f"executable format '{format}' cannot run on {m.name} "
                              f"(supported: {', '.join(formats(m)) or 'none'})")
    host = _host_machine()
    if not m.is_host:
        raise ForeignKernelError(
            StatusCode.UNAVAILABLE, f"executable format '{format}' holds {m.name} machine code, which ireeabi cannot "
            f"run: kernels run only on the host ({host.name}; run the module with --target {host.name} and "
            f"kernels compiled for it), or compile for inline-static (vmvx-inline), whose kernels are VM "
            f"bytecode that runs on every target")
    if processor_data is None:
        from ...base.internal.cpu import read_data
        processor_data = read_data()
    if format.startswith("embedded-elf-"):
        library = _load_embedded(format, bytes(data), constants, processor_data, cpu_time)
    else:
        library = _load_system(format, bytes(data), host.name, constants, processor_data, cpu_time)
    library.cpu_time = cpu_time
    return library


def _load_embedded(format: str, data: bytes, constants: Sequence[int], processor_data: Sequence[int],
                   cpu_time: "float | None") -> Library:
    """IREE's embedded ELF loader (`elf_loader`): no system loader involved."""
    module = elf_loader.load(data, cpu_time)
    try:
        query_addr = elf_loader.lookup_export(module, X.IREE_HAL_EXECUTABLE_LIBRARY_EXPORT_NAME)

        def query(version: int, environment: int) -> int:
            return elf_loader.query(module, query_addr, version, environment, cpu_time)
        return _bind(format, query, Image(module.base, module.end), module.close, constants, processor_data)
    except BaseException:
        module.close()
        raise


def _load_system(format: str, data: bytes, host_name: str, constants: Sequence[int],
                 processor_data: Sequence[int], cpu_time: "float | None") -> Library:
    """A system library: the checks of `_elf_image_span`, then dlopen from an anonymous memory file
    (nothing is left on disk, whatever happens in dlopen)."""
    lo, hi = _elf_image_span(data, host_name, embedded=False)
    try:
        elf_loader.validate(data)
    except ExecutableError as e:  # dlopen would fail, or crash the process, on what it refuses
        raise ExecutableError(StatusCode.NOT_FOUND, f"not a loadable system library: {e.message}") from None
    # The file stays open while the library is loaded: glibc knows a loaded object by its path, and
    # /proc/self/fd/N must name this library only.
    fd = os.memfd_create("ireeabi-kernel", getattr(os, "MFD_CLOEXEC", 1))
    try:
        os.write(fd, data)
        dll = ctypes.CDLL(f"/proc/self/fd/{fd}", mode=_RTLD_NOW)
    except OSError as e:
        os.close(fd)
        raise ExecutableError(StatusCode.NOT_FOUND, f"dlopen failed: {e}") from None

    def unload() -> None:
        ctypes.CDLL(None).dlclose(ctypes.c_void_p(dll._handle))
        os.close(fd)

    try:
        try:
            fn = ctypes.cast(getattr(dll, X.IREE_HAL_EXECUTABLE_LIBRARY_EXPORT_NAME), ctypes.c_void_p).value
        except AttributeError:
            raise ExecutableError(StatusCode.NOT_FOUND, f"exported symbol with name "
                                  f"'{X.IREE_HAL_EXECUTABLE_LIBRARY_EXPORT_NAME}' not found in module") from None
        image = _image_of(dll, lo, hi)
        assert fn is not None  # ctypes found the symbol (dlsym gives no symbol at NULL)

        def query(version: int, environment: int) -> int:
            return _guarded_query(fn, version, environment, cpu_time)
        library = _bind(format, query, image, unload, constants, processor_data)
        library._dll = dll
        return library
    except BaseException:
        unload()
        raise


def _guarded_query(fn: int, version: int, environment: int, cpu_time: "float | None") -> int:
    lib = native()
    result, fault = lib.ffi.new("uintptr_t*"), lib.ffi.new("ireeabi_fault_t*")
    status = lib.lib.ireeabi_call_guarded(fn, 1, version, environment, result, fault, budget_ns(cpu_time),
                                          stop_flags())
    if status == FAULTED:
        raise ExecutableError(StatusCode.INTERNAL, f"iree_hal_executable_library_query faulted (signal {fault.signal} "
                              f"at address 0x{fault.address:x})")
    error = stopped(status, "iree_hal_executable_library_query", cpu_time)
    if error is not None:
        raise error
    return result[0]


def _image_of(dll: Any, lo: int, hi: int) -> Image:
    libdl = ctypes.CDLL(None)
    lm = ctypes.POINTER(_LinkMap)()
    if libdl.dlinfo(ctypes.c_void_p(dll._handle), _RTLD_DI_LINKMAP, ctypes.byref(lm)) != 0:
        raise ExecutableError(StatusCode.INTERNAL, "dlinfo could not locate the loaded library")
    base = lm.contents.l_addr
    return Image(base + lo, base + hi)


def _bind(format: str, query: Callable[[int, int], int], image: Image, unload: Callable[[], None],
          constants: Sequence[int], processor_data: Sequence[int]) -> Library:
    keep: list = []
    env_cls = _cls(X.iree_hal_executable_environment_v0_t)
    env = env_cls()
    env.import_thunk = native().lib.ireeabi_import_thunk_address()
    for i, word in enumerate(processor_data[:X.IREE_HAL_PROCESSOR_DATA_CAPACITY_V0]):
        env.processor.data[i] = word
    if constants:
        arr = (ctypes.c_uint32 * len(constants))(*[c & 0xFFFFFFFF for c in constants])
        keep.append(arr)
        env.constants = ctypes.addressof(arr)

    lib_addr = query(X.IREE_HAL_EXECUTABLE_LIBRARY_VERSION_LATEST, ctypes.addressof(env))
    info = read_library(image, lib_addr, constants)
    if info.imports:  # every import optional: NULL function, NULL context
        funcs = (ctypes.c_void_p * len(info.imports))()
        ctxs = (ctypes.c_void_p * len(info.imports))()
        keep += [funcs, ctxs]
        env.import_funcs, env.import_contexts = ctypes.addressof(funcs), ctypes.addressof(ctxs)
    return Library(format, info.name, info.version, info.imports, info.exports, info.constant_count, unload,
                   image, env, keep, has_names=info.has_names)


@dataclass(frozen=True)
class LibraryInfo:
    """What library v0 declares, verified as IREE's loaders verify it."""
    name: str
    version: int
    imports: tuple[str, ...]  # every one optional ('?'-prefixed): the others are refused
    exports: tuple[ExportInfo, ...]
    constant_count: int
    has_names: bool  # exports.names is non-NULL (only a library without exports may lack it)


def read_library(image: Image, lib_addr: int, constants: Sequence[int],
                 check_function: "Callable[[int, str], None] | None" = None) -> LibraryInfo:
    """Library v0 at `lib_addr` (what the query returned), read from `image` as its machine lays it
    out, with IREE's checks in IREE's order. `check_function` refuses an export's function pointer
    ireeabi would not call (default: one outside the image; wasm's are table indices)."""
    if not lib_addr:
        raise ExecutableError(StatusCode.FAILED_PRECONDITION, "executable does not support this version of the runtime "
                              f"({X.IREE_HAL_EXECUTABLE_LIBRARY_VERSION_LATEST:08X})")
    m = image.machine
    v0 = image.read(m.ctype(X.iree_hal_executable_library_v0_t), lib_addr, "library_v0")
    header = image.read(m.ctype(X.iree_hal_executable_library_header_t), v0.header, "header")
    # header.version is not checked: the query already negotiated it, and neither ELF loader looks.
    if header.sanitizer != X.SanitizerKind.NONE:
        raise ExecutableError(StatusCode.UNAVAILABLE, f"executable requires sanitizer {header.sanitizer}, which "
                              "embedded libraries do not support")
    name = image.cstring(header.name, "name") if header.name else ""

    imports = tuple(image.cstring(p, f"import {i} name")
                    for i, p in enumerate(image.words(v0.imports.symbols, v0.imports.count, "import symbols")))
    required = [s for s in imports if not s.startswith("?")]
    if required:
        raise UnresolvedImportError(StatusCode.UNIMPLEMENTED, f"library {name} imports {', '.join(required)}, which "
                                    "ireeabi does not provide (only optional '?' imports are left unresolved)")

    # IREE's library verification, in its order: constants, attrs, names, then per export.
    if v0.constants.count != len(constants):
        raise ExecutableError(StatusCode.FAILED_PRECONDITION, f"executable requires {v0.constants.count} constants but "
                              f"caller provided {len(constants)}; must match")
    exports = _read_exports(image, v0.exports, check_function)
    return LibraryInfo(name, header.version, imports, exports, v0.constants.count, bool(v0.exports.names))


def _read_exports(image: Image, table: Any,
                  check_function: "Callable[[int, str], None] | None") -> tuple[ExportInfo, ...]:
    count = table.count
    if not table.attrs:  # required even without exports
        raise ExecutableError(StatusCode.FAILED_PRECONDITION, "executable exports must provide dispatch attributes")
    if count and not table.names:
        raise ExecutableError(StatusCode.FAILED_PRECONDITION, "executable exports must provide function names")
    if count == 0:
        return ()
    attrs_cls = image.machine.ctype(X.iree_hal_executable_dispatch_attrs_v0_t)
    attrs = image.read(attrs_cls * count, table.attrs, "export attrs")
    names = image.words(table.names, count, "export names")
    raw_names = []
    for i in range(count):
        a = attrs[i]
        for what, n, limit in (("constants", a.constant_count, X.IREE_HAL_EXECUTABLE_MAX_CONSTANT_COUNT),
                               ("bindings", a.binding_count, X.IREE_HAL_EXECUTABLE_MAX_BINDING_COUNT)):
            if n > limit:
                raise ExecutableError(StatusCode.OUT_OF_RANGE,
                                      f"dispatch requiring {n} {what} exceeds limit of {limit}")
        raw = image.cbytes(names[i], f"export {i} name") if names[i] else b""
        if not raw:
            raise ExecutableError(StatusCode.FAILED_PRECONDITION, f"executable export {i} missing function name")
        raw_names.append(raw)
    # Not checked by IREE (it calls the pointer at dispatch): refused here rather than jumped to.
    fns = image.words(table.ptrs, count, "export pointers")
    out = []
    for i, raw in enumerate(raw_names):
        a = attrs[i]
        nm = raw.decode("utf-8", "replace")
        if check_function is None:
            image.check(fns[i], 1, f"export {nm} function")
        else:
            check_function(fns[i], f"export {nm} function")
        out.append(ExportInfo(i, nm, fns[i], a.constant_count, a.binding_count,
                              (a.workgroup_size_x or 1, a.workgroup_size_y or 1, a.workgroup_size_z or 1),
                              a.local_memory_pages, a.flags, raw))
    return tuple(out)


__all__ = ["Library", "load_library", "query_support", "formats", "foreign_arch", "new_workgroup_state", "Image",
           "LibraryInfo", "read_library", "FORMAT_ARCH"]
