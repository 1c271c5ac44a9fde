"""Builds the C helper (hal/local/native_build.py) into the extension ireeabi.hal.local._native at install time,
through cffi's setuptools integration, so running a kernel needs no C compiler afterwards. Everything
else about the package is in pyproject.toml.

Without a working C compiler the install stops and says so. IREEABI_NO_NATIVE=1 installs without
the helper instead: the library then builds it on first use, which needs a compiler at run time.
"""
from __future__ import annotations

import os
import shutil
from typing import Any

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CCompilerError, ExecError, PlatformError

NO_NATIVE = "IREEABI_NO_NATIVE"


class BuildNative(build_ext):
    """build_ext whose compiler failure is one clear message instead of the compiler driver's trace,
    and whose in-place copy (an editable install) replaces the helper atomically."""

    def copy_file(self, infile: str, outfile: str, *args: Any, **kwargs: Any) -> tuple[str, bool]:
        # A process that has the old helper loaded keeps its mapping; rewriting the file in place
        # (what the default copy does) could pull the pages from under it.
        tmp = f"{outfile}.{os.getpid()}.tmp"
        shutil.copy2(infile, tmp)
        os.replace(tmp, outfile)
        return outfile, True

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except (CCompilerError, ExecError, PlatformError) as e:
            raise SystemExit(
                f"ireeabi: building the C helper {ext.name} (the workgroup loop and fault trap that "
                f"kernels run through) needs a C compiler, and none worked: {e}. Install one "
                f"(Debian: apt-get install gcc) and install again; or install a wheel built where one "
                f"is (pip wheel .); or set {NO_NATIVE}=1 to install without the helper (running an "
                f"inline-dynamic module then needs a C compiler at run time).") from e


native = os.environ.get(NO_NATIVE, "") != "1"
setup(cmdclass={"build_ext": BuildNative},
      cffi_modules=["hal/local/native_build.py:make_ffi"] if native else [])
