"""The C helper (its source and build: `native_build.py`): the workgroup loop, the fault trap and the
import thunk that kernels run through.

An install builds it as the extension `ireeabi.hal.local._native` (setup.py, through cffi's setuptools
integration), so running a kernel needs no C compiler. When that extension is missing (installed with
IREEABI_NO_NATIVE=1, or a tree not installed since the helper came) or was built from another
version of `native_build.py` (an editable install edited since), the same source is compiled on first
use into a cache folder keyed by its digest, which does need a compiler; without one the error says
what is missing in one line.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
import tempfile
from functools import lru_cache
from pathlib import Path
from types import ModuleType

from ireeabi.abi.errors import IreeAbiError

from ireeabi.hal.local.native_build import DIGEST, INSTALLED_NAME, make_ffi

FAULTED = -0x7E11  # ireeabi_issue_workgroups / ireeabi_call_guarded: a signal was trapped


class NativeBuildError(IreeAbiError):
    """The C helper could not be compiled (no C compiler?)."""


def _cache_dir() -> Path:
    base = os.environ.get("IREEABI_CACHE_DIR") or os.path.join(tempfile.gettempdir(), f"ireeabi-{os.getuid()}")
    path = Path(base)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def built_digest(mod: ModuleType) -> str:
    """The digest of the C text `mod` was built from (`native_build.DIGEST` when current)."""
    return mod.ffi.string(mod.lib.ireeabi_native_digest()).decode()


def _installed() -> tuple[ModuleType | None, str]:
    """The extension the install built, if current, else None and why not."""
    try:
        mod = importlib.import_module(INSTALLED_NAME)
    except ImportError:
        return None, f"{INSTALLED_NAME} is not installed"
    if built_digest(mod) != DIGEST:
        return None, f"{INSTALLED_NAME} was built from another version of native_build.py"
    return mod, ""


def _build_at_run_time(why: str) -> ModuleType:
    digest = hashlib.sha256((DIGEST + sys.version).encode()).hexdigest()[:16]
    name = f"_ireeabi_native_{digest}"
    out = _cache_dir() / name
    built = sorted(out.glob(f"{name}*.so")) if out.exists() else []
    if not built:
        tmp = Path(tempfile.mkdtemp(prefix=name, dir=_cache_dir()))
        try:
            lib_path = make_ffi(name).compile(tmpdir=str(tmp), verbose=False)
        except Exception as e:  # setuptools' CompileError and friends
            reason = " ".join(str(e).split()) or type(e).__name__
            raise NativeBuildError(
                f"the C helper that runs kernels is missing ({why}) and building it now failed "
                f"({reason}): install a C compiler, or reinstall ireeabi where one is (pip install "
                f"-e .) or from a wheel built there (pip wheel .)") from e
        out.mkdir(exist_ok=True)
        final = out / Path(lib_path).name
        os.replace(lib_path, final)  # atomic: concurrent builders end with one complete file
        built = [final]
    spec = importlib.util.spec_from_file_location(name, built[0])
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@lru_cache(maxsize=None)
def native() -> ModuleType:
    """The helper module (`.ffi`, `.lib`): the installed extension, else one built now."""
    mod, why = _installed()
    return mod if mod is not None else _build_at_run_time(why)
