"""CPU executable libraries compiled by iree-compile, loaded and dispatched on the host.

`load_library(format, data)` takes the bytes of an `embedded-elf-<arch>` or `system-elf-<arch>` kernel
library (as iree-compile emits them into a module's rodata), writes them to a private temporary file,
dlopens it, calls `iree_hal_executable_library_query` with an environment_v0 laid out by the catalog,
and reads library v0 — header, imports, exports — checking every pointer it follows against the
loaded image first. `Library.dispatch` builds dispatch_state_v0 and workgroup_state_v0 in packed
memory and runs every workgroup through the C helper in `native.py`.
"""
from __future__ import annotations

import ctypes
import io
import os
import struct
import tempfile
from dataclasses import dataclass, field
from typing import Any, Sequence

from ireeabi.abi import targets
from ireeabi.abi.errors import IreeAbiError
from ireeabi.vm import host
from ireeabi.layouts import executable_library as X

from .native import native


class ExecutableError(IreeAbiError):
    """A kernel library that cannot be loaded or dispatched; `code` is the IREE status code name."""

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        self.message = message
        super().__init__(f"{code}: {message}")


class UnresolvedImportError(ExecutableError):
    """A library needs an import no provider resolves. ireeabi has no import provider; hal_loader
    reports this as IREE does for a NULL provider (see loader_module)."""


# IREE's architecture spellings in executable format strings, by ireeabi host target.
_FORMAT_ARCH = {"x86_64": "x86_64", "aarch64": "arm_64", "riscv64": "riscv_64"}
_ELF_MACHINE = {"x86_64": "EM_X86_64", "aarch64": "EM_AARCH64", "riscv64": "EM_RISCV"}
FORMAT_KINDS = ("embedded-elf", "system-elf")

_RTLD_NOW = 0x2
_RTLD_DI_LINKMAP = 2


def host_formats() -> tuple[str, ...]:
    """The executable formats this host can load."""
    arch = _FORMAT_ARCH.get(host.HOST.name)
    return tuple(f"{k}-{arch}" for k in FORMAT_KINDS) if arch else ()


def query_support(format: str) -> bool:
    """True when `format` names a library kind and architecture this host can run, or Python kernels.
    IREE's ELF loaders test a prefix (`embedded-elf-x86_64` accepts any suffix after it)."""
    from .python_executable import FORMAT as PYTHON_FORMAT
    return format == PYTHON_FORMAT or any(format.startswith(f) for f in host_formats())


@dataclass(frozen=True)
class ExportInfo:
    ordinal: int
    name: str  # decoded for display (invalid UTF-8 replaced)
    function: int  # address of the dispatch function
    constant_count: int
    binding_count: int
    workgroup_size: tuple[int, int, int]
    local_memory_pages: int
    flags: int
    name_bytes: bytes = b""  # the exact C string: lookups compare bytes, as IREE does


@dataclass
class DispatchResult:
    status: int  # the kernel's return value of the last call (0 = success)
    calls: int  # workgroups called


class _Image:
    """The address range a loaded library occupies; every pointer read from it is checked here."""

    def __init__(self, lo: int, hi: int) -> None:
        self.lo, self.hi = lo, hi

    def check(self, address: int, size: int, what: str) -> int:
        if address == 0:
            raise ExecutableError("INVALID_ARGUMENT", f"library {what} is NULL")
        if not (self.lo <= address and address + size <= self.hi):
            raise ExecutableError("INVALID_ARGUMENT",
                                  f"library {what} at 0x{address:x} (+{size}) lies outside the loaded image "
                                  f"[0x{self.lo:x}, 0x{self.hi:x})")
        return address

    def cbytes(self, address: int, what: str) -> bytes:
        self.check(address, 1, what)
        raw = ctypes.string_at(address, self.hi - address)
        end = raw.find(b"\0")
        if end < 0:
            raise ExecutableError("INVALID_ARGUMENT", f"library {what} at 0x{address:x} is not terminated")
        return raw[:end]

    def cstring(self, address: int, what: str) -> str:
        return self.cbytes(address, what).decode("utf-8", "replace")

    def read(self, cls: type, address: int, what: str) -> Any:
        self.check(address, ctypes.sizeof(cls), what)
        return cls.from_address(address)

    def words(self, address: int, count: int, what: str) -> list[int]:
        word = ctypes.c_uint64 if ctypes.sizeof(ctypes.c_void_p) == 8 else ctypes.c_uint32
        return list(self.read(word * count, address, what)) if count else []


def _elf_image_span(data: bytes, host_name: str, embedded: bool) -> tuple[int, int]:
    """(lowest vaddr, highest vaddr end) over PT_LOAD, after the checks IREE's loader makes first.

    An ELF this host cannot load is FAILED_PRECONDITION for the embedded loader (its own ELF reader
    rejects it) and NOT_FOUND for the system loader (dlopen fails). The embedded loader also refuses
    any undefined dynamic symbol (UNAVAILABLE: it links nothing in), before looking up the query."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    bad = "FAILED_PRECONDITION" if embedded else "NOT_FOUND"
    try:
        elf = ELFFile(io.BytesIO(data))
        machine = elf["e_machine"]
        bits = elf.elfclass
        loads = [s for s in elf.iter_segments() if s["p_type"] == "PT_LOAD"]
        dynsym = elf.get_section_by_name(".dynsym")
        syms = list(dynsym.iter_symbols()) if dynsym is not None else []
        names = {s.name for s in syms}
        undefined = [s.name for s in syms[1:] if s["st_shndx"] == "SHN_UNDEF"]  # entry 0 is the null symbol
    except (ELFError, ValueError, KeyError, AttributeError, IndexError, TypeError) as e:
        raise ExecutableError(bad, f"not a loadable ELF library: {e}") from None
    want_bits = targets.get(host_name).pointer_size * 8
    if machine != _ELF_MACHINE.get(host_name) or bits != want_bits:
        raise ExecutableError(bad, f"ELF for {machine} ({bits}-bit) cannot run on this {host_name} host")
    if not loads:
        raise ExecutableError(bad, "ELF library has no PT_LOAD segment")
    if embedded and undefined:
        raise ExecutableError("UNAVAILABLE", f"ELF imports one or more symbols (trying '{undefined[0]}'); "
                              "the embedded ELF loader supports no imports")
    if X.IREE_HAL_EXECUTABLE_LIBRARY_EXPORT_NAME not in names:
        raise ExecutableError("NOT_FOUND", f"exported symbol with name "
                              f"'{X.IREE_HAL_EXECUTABLE_LIBRARY_EXPORT_NAME}' not found in module")
    return min(s["p_vaddr"] for s in loads), max(s["p_vaddr"] + s["p_memsz"] for s in loads)


class _LinkMap(ctypes.Structure):
    _fields_ = [("l_addr", ctypes.c_size_t), ("l_name", ctypes.c_char_p)]


@dataclass(eq=False)
class Library:
    format: str
    name: str
    version: int
    imports: tuple[str, ...]
    exports: tuple[ExportInfo, ...]
    constant_count: int
    _dll: Any = field(repr=False)
    _image: _Image = field(repr=False)
    _env: Any = field(repr=False)  # environment_v0 instance; must outlive every dispatch
    _keep: list = field(default_factory=list, repr=False)
    has_names: bool = True  # exports.names is non-NULL (only a library without exports may lack it)

    @property
    def environment_address(self) -> int:
        return ctypes.addressof(self._env)

    def export(self, name: str) -> ExportInfo:
        for e in self.exports:
            if e.name == name:
                return e
        raise ExecutableError("NOT_FOUND", f"export '{name}' not found in library")

    def issue(self, ordinal: int, dispatch_state: int, workgroup_state: int,
              workgroup_count: tuple[int, int, int]) -> DispatchResult:
        """Run every workgroup of export `ordinal` with a prepared dispatch_state (an address)."""
        if self._dll is None:
            raise ExecutableError("FAILED_PRECONDITION", f"library {self.name} was unloaded")
        if not 0 <= ordinal < len(self.exports):
            raise ExecutableError("INVALID_ARGUMENT", "entry point ordinal out of bounds")
        issue, new = _issue_fn()
        calls = new("uint64_t*")
        x, y, z = workgroup_count
        status = issue(self.exports[ordinal].function, ctypes.addressof(self._env), dispatch_state,
                       workgroup_state, _WG_X, _WG_Y, _WG_Z, x, y, z, calls)
        return DispatchResult(status, calls[0])

    def dispatch(self, ordinal: int, workgroup_count: tuple[int, int, int], constants: Sequence[int] = (),
                 bindings: Sequence[tuple[int, int]] = (), workgroup_size: tuple[int, int, int] = (1, 1, 1),
                 processor_id: int = 0) -> DispatchResult:
        """Dispatch with Python values: constants as uint32, bindings as (address, byte length)."""
        if 0 <= ordinal < len(self.exports):
            check_counts(self.exports[ordinal], len(constants), len(bindings))
        state = DispatchState(len(constants), len(bindings))
        state.set(workgroup_size=workgroup_size, workgroup_count=workgroup_count, constants=constants,
                  bindings=bindings)
        wg = new_workgroup_state(processor_id)
        result = self.issue(ordinal, state.address, ctypes.addressof(wg), workgroup_count)
        if result.status != 0:
            raise ExecutableError("INTERNAL",
                                  f"executable entry point returned catastrophic error {result.status}")
        return result

    def close(self) -> None:
        """Unload (dlclose) the library; later dispatches fail clearly."""
        if self._dll is not None:
            handle = self._dll._handle
            self._dll = None
            ctypes.CDLL(None).dlclose(ctypes.c_void_p(handle))

    def __enter__(self) -> "Library":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _cls(decl: Any) -> type:
    return host.ctype(decl)


def check_counts(export: ExportInfo, constant_count: int, binding_count: int) -> None:
    """Refuse fewer constants or bindings than the export declares: the kernel would read past the
    arrays. IREE's hal_loader makes no such check (its kernel reads whatever lies there); the
    messages are those of IREE's inline command buffer, which does check."""
    if constant_count < export.constant_count:
        raise ExecutableError("INVALID_ARGUMENT", f"constant count mismatch, expected {export.constant_count} "
                              f"but was provided {constant_count}")
    if binding_count < export.binding_count:
        raise ExecutableError("INVALID_ARGUMENT", f"binding count mismatch, expected {export.binding_count} "
                              f"but was provided {binding_count}")


_WG_LAYOUT = X.iree_hal_executable_workgroup_state_v0_t.layout(host.HOST.name)
_WG_OFFSETS = tuple(_WG_LAYOUT.field(f"workgroup_id_{a}").offset for a in "xyz")
_WG_X, _WG_Y, _WG_Z = _WG_OFFSETS
_ISSUE: list = []  # (ireeabi_issue_workgroups, ffi.new) once the helper is built


def _issue_fn() -> tuple[Any, Any]:
    """The C workgroup loop and cffi's `new`, looked up once (the helper builds on first use)."""
    if not _ISSUE:
        lib = native()
        _ISSUE.append((lib.lib.ireeabi_issue_workgroups, lib.ffi.new))
    return _ISSUE[0]


def new_workgroup_state(processor_id: int = 0) -> Any:
    """A zeroed, 64-byte-aligned workgroup_state_v0 as IREE keeps on its stack (ids set per call)."""
    cls = _cls(X.iree_hal_executable_workgroup_state_v0_t)
    raw = ctypes.create_string_buffer(ctypes.sizeof(cls) + 64)
    addr = -(-ctypes.addressof(raw) // 64) * 64
    wg = cls.from_address(addr)
    wg._raw = raw  # keep the backing memory alive with the view
    wg.processor_id = processor_id
    return wg


_DS = host.layout(X.iree_hal_executable_dispatch_state_v0_t)
# The counts part of dispatch_state_v0 (sizes, counts, constant/binding counts, max_concurrency) is
# contiguous: rewritten per dispatch with one pack (constant_count, max_concurrency and binding_count
# are rewritten with the values they already hold, so the bytes stay exactly those of field stores).
_DS_COUNTS_FMT = struct.Struct("<" + "".join(
    {4: "I", 2: "H", 1: "B"}[_DS.field(name).size] for name in (
        "workgroup_size_x", "workgroup_size_y", "workgroup_size_z", "constant_count", "workgroup_count_x",
        "workgroup_count_y", "workgroup_count_z", "max_concurrency", "binding_count")))
assert _DS.offsetof("workgroup_size_x") == 0 and _DS_COUNTS_FMT.size == _DS.offsetof("constants")
assert [_DS.offsetof(n) for n in ("constant_count", "workgroup_count_x", "binding_count")] == [10, 12, 23]
_DS_WORD = host.WORD.format[-1]
_U32 = 0xFFFFFFFF


class DispatchState:
    """dispatch_state_v0 plus the constant and binding arrays it points at, all kept alive together.
    The arrays' codecs are compiled once per (constant count, binding count)."""

    def __init__(self, constant_count: int, binding_count: int) -> None:
        self.state = _cls(X.iree_hal_executable_dispatch_state_v0_t)()
        self.constants = (ctypes.c_uint32 * max(constant_count, 1))()
        self.binding_ptrs = (ctypes.c_size_t * max(binding_count, 1))()
        self.binding_lengths = (ctypes.c_size_t * max(binding_count, 1))()
        # as the (truncating) ctypes stores below leave them
        self.constant_count, self.binding_count = constant_count & 0xFFFF, binding_count & 0xFF
        s = self.state
        s.constant_count = constant_count
        s.binding_count = binding_count
        s.max_concurrency = 1
        s.constants = ctypes.addressof(self.constants)
        s.binding_ptrs = ctypes.addressof(self.binding_ptrs)
        s.binding_lengths = ctypes.addressof(self.binding_lengths)
        self.address = ctypes.addressof(s)
        self._constants_fmt = struct.Struct(f"<{constant_count}I")
        self._bindings_fmt = struct.Struct(f"<{binding_count}{_DS_WORD}")

    def set(self, *, workgroup_size: tuple[int, int, int], workgroup_count: tuple[int, int, int],
            constants: Sequence[int], bindings: Sequence[tuple[int, int]]) -> None:
        # Field stores: any caller's values, truncated as ctypes does (`pack` is the dispatcher's).
        s = self.state
        s.workgroup_size_x, s.workgroup_size_y, s.workgroup_size_z = workgroup_size
        s.workgroup_count_x, s.workgroup_count_y, s.workgroup_count_z = workgroup_count
        for i, c in enumerate(constants):
            self.constants[i] = c & 0xFFFFFFFF
        for i, (ptr, length) in enumerate(bindings):
            self.binding_ptrs[i] = ptr
            self.binding_lengths[i] = length

    def pack(self, counts: tuple[int, int, int], constants: Sequence[int], ptrs: Sequence[int],
             lengths: Sequence[int]) -> None:
        """`set` with workgroup size 1x1x1 for in-range counts (x, y as uint32, z as uint16), exactly
        `constant_count` constants (masked to uint32 here) and `binding_count` binding words."""
        _DS_COUNTS_FMT.pack_into(self.state, 0, 1, 1, 1, self.constant_count, counts[0], counts[1], counts[2],
                                 1, self.binding_count)
        if constants:
            self._constants_fmt.pack_into(self.constants, 0, *[c & _U32 for c in constants])
        if ptrs:
            self._bindings_fmt.pack_into(self.binding_ptrs, 0, *ptrs)
            self._bindings_fmt.pack_into(self.binding_lengths, 0, *lengths)


def load_library(format: str, data: bytes, constants: Sequence[int] = (),
                 processor_data: Sequence[int] | None = None) -> Library:
    """Load a kernel library of `format` from its bytes (see module doc). `processor_data` fills
    environment_v0.processor (default: this host's, as iree_cpu_read_data gives them)."""
    host_name = host.HOST.name
    from . import python_executable
    if format == python_executable.FORMAT:
        return python_executable.load(data, tuple(constants))
    if not isinstance(format, str) or not any(format.startswith(k + "-") for k in FORMAT_KINDS):
        raise ExecutableError("NOT_FOUND",
                              f"no executable loader registered for the given executable format '{format}'")
    if not query_support(format):
        raise ExecutableError("NOT_FOUND", f"executable format '{format}' cannot run on this {host_name} host "
                              f"(supported: {', '.join(host_formats()) or 'none'})")
    embedded = format.startswith("embedded-elf-")
    lo, hi = _elf_image_span(bytes(data), host_name, embedded)
    fd, path = tempfile.mkstemp(prefix="ireeabi-kernel-", suffix=".so")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        try:
            dll = ctypes.CDLL(path, mode=_RTLD_NOW)
        except OSError as e:  # as _elf_image_span: the embedded reader's code, or dlopen's
            raise ExecutableError("FAILED_PRECONDITION" if embedded else "NOT_FOUND",
                                  f"dlopen failed: {e}") from None
    finally:
        os.unlink(path)  # private: gone from the file system once mapped
    try:
        if processor_data is None:
            from .cpu import read_data
            processor_data = read_data()
        return _bind(format, dll, lo, hi, constants, processor_data)
    except BaseException:
        ctypes.CDLL(None).dlclose(ctypes.c_void_p(dll._handle))
        raise


def _image_of(dll: Any, lo: int, hi: int) -> _Image:
    libdl = ctypes.CDLL(None)
    lm = ctypes.POINTER(_LinkMap)()
    if libdl.dlinfo(ctypes.c_void_p(dll._handle), _RTLD_DI_LINKMAP, ctypes.byref(lm)) != 0:
        raise ExecutableError("INTERNAL", "dlinfo could not locate the loaded library")
    base = lm.contents.l_addr
    return _Image(base + lo, base + hi)


def _bind(format: str, dll: Any, lo: int, hi: int, constants: Sequence[int],
          processor_data: Sequence[int]) -> Library:
    image = _image_of(dll, lo, hi)
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

    query_addr = ctypes.cast(getattr(dll, X.IREE_HAL_EXECUTABLE_LIBRARY_EXPORT_NAME), ctypes.c_void_p).value
    query = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p)(query_addr)
    lib_addr = query(X.IREE_HAL_EXECUTABLE_LIBRARY_VERSION_LATEST, ctypes.addressof(env))
    if not lib_addr:
        raise ExecutableError("FAILED_PRECONDITION", "executable does not support this version of the runtime "
                              f"({X.IREE_HAL_EXECUTABLE_LIBRARY_VERSION_LATEST:08X})")
    v0 = image.read(_cls(X.iree_hal_executable_library_v0_t), lib_addr, "library_v0")
    header = image.read(_cls(X.iree_hal_executable_library_header_t), v0.header, "header")
    # header.version is not checked: the query already negotiated it, and neither ELF loader looks.
    if header.sanitizer != X.SanitizerKind.NONE:
        raise ExecutableError("UNAVAILABLE", f"executable requires sanitizer {header.sanitizer}, which "
                              "embedded libraries do not support")
    name = image.cstring(header.name, "name") if header.name else ""

    imports = tuple(image.cstring(p, f"import {i} name")
                    for i, p in enumerate(image.words(v0.imports.symbols, v0.imports.count, "import symbols")))
    required = [s for s in imports if not s.startswith("?")]
    if required:
        raise UnresolvedImportError("UNIMPLEMENTED", f"library {name} imports {', '.join(required)}, which "
                                    "ireeabi does not provide (only optional '?' imports are left unresolved)")
    if imports:  # every import optional: NULL function, NULL context
        funcs = (ctypes.c_void_p * len(imports))()
        ctxs = (ctypes.c_void_p * len(imports))()
        keep += [funcs, ctxs]
        env.import_funcs, env.import_contexts = ctypes.addressof(funcs), ctypes.addressof(ctxs)

    # IREE's library verification, in its order: constants, attrs, names, then per export.
    if v0.constants.count != len(constants):
        raise ExecutableError("FAILED_PRECONDITION", f"executable requires {v0.constants.count} constants but "
                              f"caller provided {len(constants)}; must match")
    exports = _read_exports(image, v0.exports)
    return Library(format, name, header.version, imports, exports, v0.constants.count, dll, image, env, keep,
                   has_names=bool(v0.exports.names))


def _read_exports(image: _Image, table: Any) -> tuple[ExportInfo, ...]:
    count = table.count
    if not table.attrs:  # required even without exports
        raise ExecutableError("FAILED_PRECONDITION", "executable exports must provide dispatch attributes")
    if count and not table.names:
        raise ExecutableError("FAILED_PRECONDITION", "executable exports must provide function names")
    if count == 0:
        return ()
    attrs_cls = _cls(X.iree_hal_executable_dispatch_attrs_v0_t)
    attrs = image.read(attrs_cls * count, table.attrs, "export attrs")
    names = image.words(table.names, count, "export names")
    raw_names = []
    for i in range(count):
        a = attrs[i]
        for what, n, limit in (("constants", a.constant_count, X.IREE_HAL_EXECUTABLE_MAX_CONSTANT_COUNT),
                               ("bindings", a.binding_count, X.IREE_HAL_EXECUTABLE_MAX_BINDING_COUNT)):
            if n > limit:
                raise ExecutableError("OUT_OF_RANGE", f"dispatch requiring {n} {what} exceeds limit of {limit}")
        raw = image.cbytes(names[i], f"export {i} name") if names[i] else b""
        if not raw:
            raise ExecutableError("FAILED_PRECONDITION", f"executable export {i} missing function name")
        raw_names.append(raw)
    # Not checked by IREE (it calls the pointer at dispatch): refused here rather than jumped to.
    fns = image.words(table.ptrs, count, "export pointers")
    out = []
    for i, raw in enumerate(raw_names):
        a = attrs[i]
        nm = raw.decode("utf-8", "replace")
        image.check(fns[i], 1, f"export {nm} function")
        out.append(ExportInfo(i, nm, fns[i], a.constant_count, a.binding_count,
                              (a.workgroup_size_x or 1, a.workgroup_size_y or 1, a.workgroup_size_z or 1),
                              a.local_memory_pages, a.flags, raw))
    return tuple(out)


__all__ = ["ExecutableError", "UnresolvedImportError", "ExportInfo", "check_counts", "Library", "DispatchResult", "DispatchState", "load_library",
           "query_support", "host_formats", "new_workgroup_state"]
