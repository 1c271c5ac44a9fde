"""Which C helper `native()` loads: the extension the install built when it was built from the current
`native_build.py`, else the same source compiled now (tests/test_install.py covers the installs)."""
from __future__ import annotations

import importlib

from ireeabi.hal.local import native, native_build


def test_the_install_built_the_current_helper():
    mod = importlib.import_module(native_build.INSTALLED_NAME)  # `pip install -e .` builds it
    assert native.built_digest(mod) == native_build.DIGEST
    assert native._installed() == (mod, "")


def test_a_helper_built_from_other_source_is_not_used(monkeypatch, tmp_path):
    monkeypatch.setattr(native, "DIGEST", "0" * 16)  # as if native_build.py was edited since
    mod, why = native._installed()
    assert mod is None
    assert why == "ireeabi.hal.local._native was built from another version of native_build.py"

    monkeypatch.undo()
    monkeypatch.setenv("IREEABI_CACHE_DIR", str(tmp_path))
    built = native._build_at_run_time(why)
    assert built.__name__.startswith("_ireeabi_native_")
    assert native.built_digest(built) == native_build.DIGEST
    assert built.lib.ireeabi_import_thunk_address() != 0
    assert list((tmp_path / built.__name__).glob("*.so"))  # in the cache folder, keyed by digest
