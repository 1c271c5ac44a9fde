"""ireeabi as a dependency, installed as a user installs it, in fresh virtual environments.

- `pip install -e .` without the test extra builds the C helper (setup.py, cffi_modules) at install
  time, so an inline-dynamic module runs with no C compiler on PATH: its output is iree-run-module's,
  and nothing is compiled at run time (the run-time build cache stays empty);
- `python -m ireeabi` and `ireeabi --version` (the version from the package metadata);
- `pip wheel .` gives a wheel with the helper, `py.typed` and the license, which runs the module
  without a compiler too;
- an install where no compiler is present stops with one message saying so, and with
  IREEABI_NO_NATIVE=1 installs without the helper: the run then names what is missing.

Each venv is new (`python -m venv --without-pip`: the test environment's pip installs into it with
`--python`, pip's way of installing into another interpreter), so this takes tens of seconds; it
never skips: a venv or an install that cannot be made fails the test with pip's output. Two venvs,
not three: the editable install's, and one where the install without a compiler is tried and then
the wheel is installed (over the IREEABI_NO_NATIVE=1 install, whose run the fixture has recorded
first), so the dependencies are installed into each venv once. pip installs with `--no-compile`:
the byte-compiling of every dependency's files is nothing these tests look at.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import NamedTuple

import pytest

from support import iree_tools

REPO = Path(__file__).resolve().parents[1]
PROGRAM = REPO / "tests" / "programs" / "add16.mlir"
INPUTS = ["16xf32=1", "16xf32=2"]
COMPILERS = ("cc", "gcc", "clang", "c99", "x86_64-linux-gnu-gcc")
TIMEOUT_S = 300


def _run(argv: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None,
         check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=TIMEOUT_S)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited {proc.returncode}\n--- stdout ---\n"
                             f"{proc.stdout[-6000:]}\n--- stderr ---\n{proc.stderr[-6000:]}")
    return proc


def _source_copy(dst: Path) -> Path:
    """The project's files (tracked, and new ones not ignored), as a fresh clone would have them."""
    files = _run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO).stdout
    for name in filter(None, files.split("\0")):
        src = REPO / name
        if src.is_file():
            (dst / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / name)
    return dst


def _venv(path: Path) -> Path:
    """A new venv without a copy of pip of its own (ensurepip's install of pip was about 7 s of CPU
    per venv, a quarter of the file's): this process's pip installs into it (`_pip`)."""
    _run([sys.executable, "-m", "venv", "--without-pip", str(path)])
    return path / "bin"


def _pip(bin_dir: Path, *args: str) -> list[str]:
    """`pip ARGS` run for the venv's interpreter (`--python`, pip >= 22.3): pip re-runs itself with
    that interpreter, so the build and the install happen in the venv as with the venv's own pip."""
    return [sys.executable, "-m", "pip", "--python", str(bin_dir / "python"), *args]


def _install(bin_dir: Path, *args: str) -> list[str]:
    """`pip install ARGS` into the venv, without byte-compiling what it installs (~2 s of CPU an
    install, for files nothing here imports twice)."""
    return _pip(bin_dir, "install", "-q", "--no-compile", *args)


def _no_compiler_env(bin_dir: Path, tmp: Path) -> dict[str, str]:
    """An environment whose PATH holds the venv's scripts and nothing else: no C compiler."""
    path = str(bin_dir)
    found = [c for c in COMPILERS if shutil.which(c, path=path)]
    assert not found, f"a compiler is still on PATH: {found}"
    cache = tmp / "runtime-build-cache"
    cache.mkdir(exist_ok=True)
    return {"PATH": path, "HOME": str(tmp), "IREEABI_CACHE_DIR": str(cache), "LC_ALL": "C.UTF-8"}


@pytest.fixture(scope="module")
def module_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """add16 compiled for inline-dynamic by the system's iree-compile, copied out of the cache."""
    out = tmp_path_factory.mktemp("module") / "add16.vmfb"
    shutil.copy(iree_tools.compile_mlir(PROGRAM, model="inline-dynamic"), out)
    return out


@pytest.fixture(scope="module")
def expected(module_file: Path) -> str:
    return iree_tools.run_module(module_file, "add", INPUTS)


@pytest.fixture(scope="module")
def editable(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(venv bin, source copy): `pip install -e .` of a copy of the project, no test extra."""
    tmp = tmp_path_factory.mktemp("editable")
    src = _source_copy(tmp / "src")
    bin_dir = _venv(tmp / "venv")
    _run(_install(bin_dir, "-e", str(src)))
    return bin_dir, src


def _run_module(bin_dir: Path, module_file: Path, tmp: Path) -> subprocess.CompletedProcess:
    env = _no_compiler_env(bin_dir, tmp)
    return _run([str(bin_dir / "ireeabi"), "run", str(module_file), "--function", "add",
                 *(f"--input={i}" for i in INPUTS)], env=env, cwd=tmp, check=False)


def test_editable_install_runs_inline_dynamic_without_a_compiler(editable, module_file, expected,
                                                                 tmp_path):
    bin_dir, src = editable
    assert list((src / "hal" / "local").glob("_native*.so")), "the install did not build the C helper"
    proc = _run_module(bin_dir, module_file, tmp_path)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == expected
    assert list((tmp_path / "runtime-build-cache").iterdir()) == []  # nothing built at run time


def test_version_and_python_m(editable, tmp_path):
    bin_dir, _ = editable
    env = _no_compiler_env(bin_dir, tmp_path)
    meta = _run([str(bin_dir / "python"), "-c",
                 "import importlib.metadata as m; print(m.version('ireeabi'))"], env=env).stdout
    assert meta.strip() == "0.1.0"
    for argv in ([str(bin_dir / "ireeabi"), "--version"],
                 [str(bin_dir / "python"), "-m", "ireeabi", "--version"]):
        assert _run(argv, env=env, cwd=tmp_path).stdout == f"ireeabi {meta.strip()}\n"
    via_m = _run([str(bin_dir / "python"), "-m", "ireeabi", "targets"], env=env, cwd=tmp_path)
    assert via_m.stdout == _run([str(bin_dir / "ireeabi"), "targets"], env=env, cwd=tmp_path).stdout
    assert via_m.stdout.startswith("data models")


def test_wheel_carries_the_helper_and_runs_without_a_compiler(editable, no_compiler, module_file,
                                                              expected, tmp_path):
    bin_dir, _ = editable
    src = _source_copy(tmp_path / "src")  # a copy of its own: the wheel's build leaves files
    wheels = tmp_path / "wheels"
    _run(_pip(bin_dir, "wheel", "-q", "--no-deps", "-w", str(wheels), str(src)))
    (wheel,) = wheels.glob("ireeabi-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert [n for n in names if n.startswith("ireeabi/hal/local/_native") and n.endswith(".so")]
    assert "ireeabi/__main__.py" in names
    for pkg in ("abi", "abi/cconv", "layouts", "vm", "vm/bytecode", "hal", "hal/local", "modules", "modules/hal", "modules/vmvx",
                "tooling", "cli"):
        assert f"ireeabi/{pkg}/py.typed" in names
    assert (REPO / "LICENSE").read_bytes() == zipfile.ZipFile(wheel).read(
        next(n for n in names if n.endswith(".dist-info/licenses/LICENSE")))
    meta = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/METADATA")))
    assert b"\nLicense-Expression: Apache-2.0\n" in meta

    # Into the venv of the install without a compiler (its outcomes recorded by its fixture), over
    # the IREEABI_NO_NATIVE=1 install: pip replaces that install; the dependencies are there.
    wheel_bin = no_compiler.bin_dir
    _run(_install(wheel_bin, str(wheel)))
    proc = _run_module(wheel_bin, module_file, tmp_path)
    assert (proc.returncode, proc.stderr, proc.stdout) == (0, "", expected)
    assert list((tmp_path / "runtime-build-cache").iterdir()) == []
    env = _no_compiler_env(wheel_bin, tmp_path)
    assert _run([str(wheel_bin / "python"), "-m", "ireeabi", "--version"], env=env,
                cwd=tmp_path).stdout == "ireeabi 0.1.0\n"


class NoCompiler(NamedTuple):
    bin_dir: Path
    failed: subprocess.CompletedProcess  # the install with no compiler on PATH
    helper_built: bool  # whether that install left a helper in the source
    run: subprocess.CompletedProcess  # the module run after the IREEABI_NO_NATIVE=1 install


@pytest.fixture(scope="module")
def no_compiler(tmp_path_factory: pytest.TempPathFactory, module_file: Path) -> NoCompiler:
    """A new venv, PATH without a compiler: `pip install -e` with IREEABI_NO_NATIVE=1 and a run of
    the module; then the same install without the variable (it fails: the dependencies are already
    there, so it is the build alone that is tried, and it leaves the first install in place)."""
    tmp = tmp_path_factory.mktemp("no-compiler")
    src = _source_copy(tmp / "src")
    bin_dir = _venv(tmp / "venv")
    env = _no_compiler_env(bin_dir, tmp)
    pip = _install(bin_dir, "-e", str(src))
    _run(pip, env={**env, "IREEABI_NO_NATIVE": "1"})
    run = _run_module(bin_dir, module_file, tmp)
    failed = _run(pip, env=env, check=False)
    return NoCompiler(bin_dir, failed, bool(list((src / "hal" / "local").glob("_native*.so"))), run)


def test_install_without_a_compiler_says_so(no_compiler):
    proc = no_compiler.failed
    assert proc.returncode != 0
    out = " ".join((proc.stdout + proc.stderr).split())
    assert "ireeabi: building the C helper ireeabi.hal.local._native" in out
    assert "needs a C compiler, and none worked" in out
    assert "IREEABI_NO_NATIVE=1" in out
    assert not no_compiler.helper_built

    # IREEABI_NO_NATIVE=1 installs without the helper; a run then says in one message what is
    # missing (and that building it needs a compiler), as an error line, not a traceback.
    proc = no_compiler.run
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    message = " ".join(proc.stderr.split())
    assert message.startswith("ireeabi: error: ")
    assert "ireeabi.hal.local._native is not installed" in message
    assert "C compiler" in message


def test_every_package_folder_is_installed():
    """Each folder of the tree holding an __init__.py is a package pyproject installs (a package
    left out of the list is missing from the wheel and fails only when imported)."""
    import tomllib
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {v: k for k, v in config["package-dir"].items()}
    found = set()
    for top, name in folders.items():
        if top == "ireeabi":
            continue
        for init in (REPO / top).rglob("__init__.py"):
            rel = init.parent.relative_to(REPO / top).parts
            found.add(".".join((name, *rel)))
    assert found <= set(config["packages"]), sorted(found - set(config["packages"]))
    assert len(found) >= 10
