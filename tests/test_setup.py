"""The set-up adds packages and never takes one away (tests/support/debian_tools.py, run by .ci/run and at
session start).

apt-get's simulation (`-s`) answers what an install would do without doing it: the README's package
list installs on this Debian with nothing removed, gcc-multilib (the old README's choice) would
remove the cross compilers, and the provisioning passes --no-remove, so such a set is refused
instead of carried out.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from support import debian_tools

README = Path(__file__).resolve().parent.parent / "README.md"


def _simulate(*packages: str) -> subprocess.CompletedProcess:
    apt = shutil.which("apt-get")
    if apt is None:
        pytest.fail("apt-get is needed: the set-up under test is Debian's")
    return subprocess.run([apt, "install", "-s", "--no-remove", *packages], capture_output=True,
                          text=True, timeout=600)


def _readme_packages() -> list[str]:
    text = " ".join(README.read_text().split())
    (line,) = re.findall(r"`apt-get install --no-remove ([^`]+)`", text)
    # the README names Debian 12's versioned packages; this machine's gcc decides
    gcc = next(p for p in debian_tools.suite_packages() if p.startswith("lib32gcc-")).split("-")[1]
    return [n.replace("-12-", f"-{gcc}-") for n in line.split()]


def test_the_readme_lists_what_the_suite_installs():
    listed = set(_readme_packages())
    needed = set(debian_tools.suite_packages()) - {"gcc", "binutils"}  # on every Debian with a C compiler
    assert listed == needed, (sorted(listed - needed), sorted(needed - listed))


def test_the_readme_packages_install_without_removing_any():
    proc = _simulate(*_readme_packages())
    assert proc.returncode == 0, proc.stderr[-800:]
    assert re.search(r"\b0 to remove\b", proc.stdout), proc.stdout[-800:]


def test_gcc_multilib_would_remove_the_cross_compilers_and_is_refused():
    # why the set-up has the 32-bit libraries without gcc-multilib
    debian_tools.debian_tool("riscv64-linux-gnu-gcc")
    proc = _simulate("gcc-multilib")
    assert proc.returncode != 0
    assert "Packages need to be removed but remove is disabled" in proc.stderr, proc.stderr[-800:]


def test_the_provisioning_never_removes(monkeypatch):
    seen: list[list[str]] = []

    def run(argv, **kwargs):
        seen.append(list(argv))
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(debian_tools.subprocess, "run", run)
    monkeypatch.setattr(debian_tools, "_installed", lambda package: False)
    monkeypatch.setattr(debian_tools.os, "geteuid", lambda: 0)
    assert debian_tools._apt_install("some-package") == ""
    installs = [argv for argv in seen if "install" in argv]
    assert installs and all("--no-remove" in argv for argv in installs), seen


def test_gcc_m32_links_a_program_that_needs_the_asm_headers(tmp_path):
    # <errno.h> includes <asm/errno.h>: gcc-multilib's /usr/include/asm link, here a folder of our own
    src = tmp_path / "e.c"
    src.write_text("#include <errno.h>\n#include <signal.h>\nint main(void) { return errno; }\n")
    argv = ["gcc", "-m32", str(src), "-o", str(tmp_path / "e")]
    bare = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    with_dir = subprocess.run([*argv, "-isystem", str(debian_tools.m32_include_dir())],
                              capture_output=True, text=True, timeout=120)
    assert with_dir.returncode == 0, with_dir.stderr
    if not Path("/usr/include/asm").exists():  # no gcc-multilib here: the folder is what makes it build
        assert bare.returncode != 0 and "asm/errno.h" in bare.stderr
    assert subprocess.run([str(tmp_path / "e")], timeout=60).returncode == 0


def test_the_bytecode_caches_cover_every_package():
    """The session writes bytecode caches for every package pyproject installs (conftest, with
    support.bytecode's folders): a fixed list of folders missed `base`, so in a fresh clone, where
    PYTHONDONTWRITEBYTECODE is set, every `python -m ireeabi` of the suite compiled it from source."""
    import importlib.util
    import tomllib
    from support.bytecode import package_folders
    pyproject = tomllib.loads((README.parent / "pyproject.toml").read_text())
    folders = [Path(f) for f in package_folders()]
    for package in pyproject["tool"]["setuptools"]["packages"]:
        spec = importlib.util.find_spec(package)
        assert spec is not None and spec.submodule_search_locations, package
        where = Path(list(spec.submodule_search_locations)[0])
        assert any(where == f or f in where.parents for f in folders), (package, where)


def test_test_modules_keep_their_rewritten_code():
    """pytest's assertion-rewritten code of this module is cached beside it, whatever
    PYTHONDONTWRITEBYTECODE says (conftest): each process of a run rewrote every test module."""
    import sys
    cached = list((Path(__file__).parent / "__pycache__").glob(
        f"{Path(__file__).stem}.{sys.implementation.cache_tag}-pytest-*.pyc"))
    assert cached, "no rewritten pyc of this module"
