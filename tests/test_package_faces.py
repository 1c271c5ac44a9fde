"""Every package face declares what it offers in `__all__`, and every name there imports (a
submodule, or an attribute of the package), also through `from ireeabi.X import *`."""
from __future__ import annotations

import importlib
import subprocess
import sys
import types

import pytest

FACES = ["ireeabi.abi", "ireeabi.abi.cconv", "ireeabi.layouts", "ireeabi.base", "ireeabi.base.internal",
         "ireeabi.vm", "ireeabi.vm.bytecode", "ireeabi.hal", "ireeabi.hal.local", "ireeabi.modules", "ireeabi.modules.hal", "ireeabi.tooling", "ireeabi.cli"]


@pytest.mark.parametrize("face", FACES)
def test_every_name_in_all_imports(face):
    pkg = importlib.import_module(face)
    names = pkg.__all__
    assert isinstance(names, list) and names
    assert len(set(names)) == len(names), [n for n in names if names.count(n) > 1]
    assert pkg.__doc__ and pkg.__doc__.strip()
    for name in names:
        assert isinstance(name, str)
        value = getattr(pkg, name, None)
        if value is None:
            value = importlib.import_module(f"{face}.{name}")  # a submodule not imported eagerly
        assert value is not None, name
        if isinstance(value, types.ModuleType):
            assert value.__name__ == f"{face}.{name}"


@pytest.mark.parametrize("face", FACES)
def test_star_import_in_a_fresh_process(face):
    code = f"from {face} import *\nimport {face} as p\n" \
           "missing = [n for n in p.__all__ if n not in globals()]\nassert not missing, missing\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_the_pytest_plugin_is_left_out_of_star():
    import ireeabi.vm

    assert "testing" not in ireeabi.vm.__all__  # it imports pytest, which a library user may lack
