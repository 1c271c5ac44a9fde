"""A small C helper, built once with cffi, for the two things Python must not do per workgroup.

- `ireeabi_issue_workgroups`: the inline workgroup loop of IREE's local executables (z outer, x
  inner), writing the workgroup ids into a workgroup_state whose field offsets the caller passes from
  the catalog layout (no struct is declared in C, so the catalog stays the one source of truth).
- `ireeabi_import_thunk`: the environment's import thunk (`fn(params, context, reserved)`).

The module is compiled on first use into a cache folder keyed by the source's hash, then imported.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
from functools import lru_cache
from pathlib import Path
from types import ModuleType

from ireeabi.abi.errors import IreeAbiError

_CDEF = """
int ireeabi_issue_workgroups(uintptr_t fn, uintptr_t environment, uintptr_t dispatch_state,
                             uintptr_t workgroup_state, uint32_t off_x, uint32_t off_y, uint32_t off_z,
                             uint32_t count_x, uint32_t count_y, uint32_t count_z, uint64_t* calls);
uintptr_t ireeabi_import_thunk_address(void);
"""

_SOURCE = r"""
#include <stdint.h>
#include <string.h>

typedef int (*ireeabi_dispatch_fn_t)(const void*, const void*, const void*);
typedef int (*ireeabi_import_fn_t)(void*, void*, void*);

static int ireeabi_import_thunk(ireeabi_import_fn_t fn, void* params, void* context, void* reserved) {
  return fn(params, context, reserved);
}

uintptr_t ireeabi_import_thunk_address(void) { return (uintptr_t)&ireeabi_import_thunk; }

/* As IREE's inline issue: an error leaves only the x loop; y and z go on, and the result is the
   status of the last call made. The z id is 16-bit in workgroup_state_v0. */
int ireeabi_issue_workgroups(uintptr_t fn, uintptr_t environment, uintptr_t dispatch_state,
                             uintptr_t workgroup_state, uint32_t off_x, uint32_t off_y, uint32_t off_z,
                             uint32_t count_x, uint32_t count_y, uint32_t count_z, uint64_t* calls) {
  ireeabi_dispatch_fn_t f = (ireeabi_dispatch_fn_t)fn;
  unsigned char* wg = (unsigned char*)workgroup_state;
  int ret = 0;
  uint64_t n = 0;
  for (uint32_t z = 0; z < count_z; ++z) {
    uint16_t z16 = (uint16_t)z;
    memcpy(wg + off_z, &z16, sizeof z16);
    for (uint32_t y = 0; y < count_y; ++y) {
      memcpy(wg + off_y, &y, sizeof y);
      for (uint32_t x = 0; x < count_x; ++x) {
        memcpy(wg + off_x, &x, sizeof x);
        ret = f((const void*)environment, (const void*)dispatch_state, wg);
        ++n;
        if (ret != 0) break;
      }
    }
  }
  *calls = n;
  return ret;
}
"""


class NativeBuildError(IreeAbiError):
    """The C helper could not be compiled (no C compiler?)."""


def _cache_dir() -> Path:
    base = os.environ.get("IREEABI_CACHE_DIR") or os.path.join(tempfile.gettempdir(), f"ireeabi-{os.getuid()}")
    path = Path(base)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


@lru_cache(maxsize=None)
def native() -> ModuleType:
    """The compiled helper module (`.ffi`, `.lib`)."""
    import cffi

    digest = hashlib.sha256((_CDEF + _SOURCE + sys.version).encode()).hexdigest()[:16]
    name = f"_ireeabi_native_{digest}"
    out = _cache_dir() / name
    built = sorted(out.glob(f"{name}*.so")) if out.exists() else []
    if not built:
        ffi = cffi.FFI()
        ffi.cdef(_CDEF)
        ffi.set_source(name, _SOURCE, extra_compile_args=["-O2"])
        tmp = Path(tempfile.mkdtemp(prefix=name, dir=_cache_dir()))
        try:
            lib_path = ffi.compile(tmpdir=str(tmp), verbose=False)
        except Exception as e:  # setuptools' CompileError and friends
            raise NativeBuildError(f"building the ireeabi C helper failed: {e}") from e
        out.mkdir(exist_ok=True)
        final = out / Path(lib_path).name
        os.replace(lib_path, final)  # atomic: concurrent builders end with one complete file
        built = [final]
    spec = importlib.util.spec_from_file_location(name, built[0])
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
