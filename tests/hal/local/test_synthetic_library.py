"""Kernel libraries built here with gcc from the catalog's own C declarations (abi.cdecl), for the
paths iree-compile's small kernels never take: imports through the environment's import thunk and a
kernel that fails."""
import ctypes
import subprocess
from pathlib import Path

import numpy as np
import pytest

from ireeabi.abi.cdecl import c_source
from ireeabi.hal.local import elf_executable as X
from ireeabi.layouts import executable_library as L

_BODY = r"""
static const char* names[] = {"store42", "fail", "call_import"};
static const char* imports[] = {IMPORTS};
static int store42(const iree_hal_executable_environment_v0_t* env,
                   const iree_hal_executable_dispatch_state_v0_t* st,
                   const iree_hal_executable_workgroup_state_v0_t* wg) {
  void** ptrs = (void**)st->binding_ptrs;
  ((uint32_t*)ptrs[0])[wg->workgroup_id_x] = 42u + st->constant_count;
  return 0;
}
static int fail(const void* env, const void* st, const void* wg) { return 5; }
typedef int (*thunk_t)(void* fn, void* params, void* context, void* reserved);
static int call_import(const iree_hal_executable_environment_v0_t* env,
                       const iree_hal_executable_dispatch_state_v0_t* st,
                       const iree_hal_executable_workgroup_state_v0_t* wg) {
  void** funcs = (void**)env->import_funcs;
  if (!funcs || !funcs[0]) return 7;  /* optional import left unresolved */
  return ((thunk_t)env->import_thunk)(funcs[0], 0, 0, 0);
}
static void* fns[] = {(void*)store42, (void*)fail, (void*)call_import};
static iree_hal_executable_dispatch_attrs_v0_t attrs[3];
static iree_hal_executable_library_header_t header;
static iree_hal_executable_library_v0_t library;
const void* iree_hal_executable_library_query(uint32_t max_version, const void* env) {
  header.version = 6; header.name = (void*)"synthetic";
  library.header = (void*)&header;
  library.imports.count = sizeof(imports) / sizeof(imports[0]) - 1;
  library.imports.symbols = (void*)imports;
  library.exports.count = 3; library.exports.ptrs = (void*)fns;
  library.exports.attrs = (void*)attrs; library.exports.names = (void*)names;
  return max_version >= 6 ? &library : 0;
}
"""


def _build(tmp_path: Path, imports: str) -> bytes:
    src = c_source([L.iree_hal_executable_library_header_t, L.iree_hal_executable_library_v0_t,
                    L.iree_hal_executable_environment_v0_t,
                    L.iree_hal_executable_dispatch_state_v0_t, L.iree_hal_executable_workgroup_state_v0_t,
                    L.iree_hal_executable_dispatch_attrs_v0_t])
    c = tmp_path / "lib.c"
    c.write_text(src + _BODY.replace("IMPORTS", imports + ("," if imports else "") + " 0"))
    so = tmp_path / "lib.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-o", str(so), str(c)], check=True, capture_output=True)
    return so.read_bytes()


def test_required_import_is_refused(tmp_path):
    with pytest.raises(X.ExecutableError, match="UNIMPLEMENTED.*needed_fn"):
        X.load_library("system-elf-x86_64", _build(tmp_path, '"needed_fn"'))


def test_optional_import_is_null_and_kernels_run(tmp_path):
    with X.load_library("system-elf-x86_64", _build(tmp_path, '"?maybe_fn"')) as lib:
        assert lib.imports == ("?maybe_fn",)
        out = np.zeros(4, np.uint32)
        lib.dispatch(lib.export("store42").ordinal, (4, 1, 1), [9, 9], [(out.ctypes.data, out.nbytes)])
        np.testing.assert_array_equal(out, 44)  # 42 + constant_count read from dispatch_state_v0
        with pytest.raises(X.ExecutableError, match="INTERNAL.*catastrophic error 5"):
            lib.dispatch(lib.export("fail").ordinal, (1, 1, 1))
        # The unresolved optional import reaches the kernel as NULL in import_funcs.
        with pytest.raises(X.ExecutableError, match="catastrophic error 7"):
            lib.dispatch(lib.export("call_import").ordinal, (1, 1, 1))


def test_import_thunk_calls_through(tmp_path):
    # The environment's thunk (the C helper) forwards (params, context, reserved) to the import.
    seen = []
    proto = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)

    @proto
    def import_fn(params, context, reserved):
        seen.append((params, context))
        return 3

    thunk = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(
        X.native().lib.ireeabi_import_thunk_address())
    assert thunk(ctypes.cast(import_fn, ctypes.c_void_p).value, 11, 22, None) == 3
    assert seen == [(11, 22)]


def _dyn_entry_offset(data: bytes, tag: str) -> int:
    import io
    from elftools.elf.elffile import ELFFile
    elf = ELFFile(io.BytesIO(data))
    dyn = next(s for s in elf.iter_segments() if s.header.p_type == "PT_DYNAMIC")
    for i, t in enumerate(dyn.iter_tags()):
        if t.entry.d_tag == tag:
            return dyn.header.p_offset + 16 * i
    raise AssertionError(f"no {tag} in the library's .dynamic")


def _dlopen_dies(path: Path) -> int:
    """The signal a child process dies of when the system loader opens `path` (0: it did not die)."""
    import os
    pid = os.fork()
    if pid == 0:
        import faulthandler
        faulthandler.disable()
        os.close(2)  # (ld.so's assertion text)
        try:
            ctypes.CDLL(str(path))
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0


def test_system_library_that_would_crash_dlopen_is_refused_first(tmp_path):
    """A relocation whose target lies outside the library's image: the system loader writes there
    and the process dies (shown in a child process). ireeabi refuses the system library before
    dlopen sees it, with NOT_FOUND as a failed dlopen reports."""
    import struct
    data = bytearray(_build(tmp_path, ""))
    rela = struct.unpack_from("<Q", data, _dyn_entry_offset(bytes(data), "DT_RELA") + 8)[0]
    struct.pack_into("<Q", data, rela, 1 << 40)  # the first entry's r_offset
    bad = tmp_path / "bad.so"
    bad.write_bytes(bytes(data))
    assert _dlopen_dies(bad) != 0
    with pytest.raises(X.ExecutableError, match="NOT_FOUND.*relocation 0 targets 0x10000000000, "
                                                "outside the loaded image"):
        X.load_library("system-elf-x86_64", bytes(data))


def test_system_library_header_checks_come_before_dlopen(tmp_path):
    """A system library whose program headers point past the file is refused with IREE's text."""
    import struct
    data = bytearray(_build(tmp_path, ""))
    phoff = struct.unpack_from("<Q", data, 32)[0]
    struct.pack_into("<Q", data, phoff + 32, 1 << 40)  # the first phdr's p_filesz
    with pytest.raises(X.ExecutableError, match="NOT_FOUND.*(phdr reference outside of file extents|"
                                                "not a loadable ELF library)"):
        X.load_library("system-elf-x86_64", bytes(data))


def test_system_library_offsets_past_any_integer_are_refused(tmp_path):
    """e_phoff of 2**63: pyelftools raises OverflowError seeking there (the campaign's escape); the
    library is refused as not loadable, as dlopen refuses it."""
    import struct
    data = bytearray(_build(tmp_path, ""))
    struct.pack_into("<Q", data, 32, 1 << 63)
    with pytest.raises(X.ExecutableError, match="NOT_FOUND; not a loadable ELF library|NOT_FOUND: not a"):
        X.load_library("system-elf-x86_64", bytes(data))


def test_library_without_the_query_symbol_is_not_found_and_leaves_no_file(tmp_path):
    """A shared object that does not export iree_hal_executable_library_query: NOT_FOUND with
    IREE's text (the campaign's AttributeError), for both loaders; and no kernel file is left in the
    temporary folder by any load, failed or not."""
    import glob
    import tempfile
    c = tmp_path / "other.c"
    c.write_text("int not_the_query(void) { return 0; }\n")
    so = tmp_path / "other.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-nostdlib", "-Wl,--hash-style=sysv", "-o", str(so), str(c)],
                   check=True, capture_output=True)
    before = set(glob.glob(f"{tempfile.gettempdir()}/ireeabi-kernel-*"))
    for fmt in ("system-elf-x86_64", "embedded-elf-x86_64"):
        with pytest.raises(X.ExecutableError, match="NOT_FOUND.*exported symbol with name "
                                                    "'iree_hal_executable_library_query' not found"):
            X.load_library(fmt, so.read_bytes())
    with X.load_library("system-elf-x86_64", _build(tmp_path, "")):
        pass
    assert set(glob.glob(f"{tempfile.gettempdir()}/ireeabi-kernel-*")) == before
