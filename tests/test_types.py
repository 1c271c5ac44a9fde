"""mypy over the product packages, as a checkout is imported: a folder holding an `ireeabi` link to the
repository root (the root is the package; pyproject's package-dir maps each top-level folder to
`ireeabi.<folder>`), checked with the repository's own configuration (pyproject's [tool.mypy]).

mypy's incremental cache lives in pytest's cache folder, one per mypy version, with the link at a
fixed place beside it, so a warm run re-checks only what changed; a cold run checks everything.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "pyproject.toml"


def _product_packages() -> list[str]:
    """The top-level product packages pyproject maps (ireeabi.abi, ...), so a new one is checked."""
    package_dir = tomllib.loads(CONFIG.read_text())["tool"]["setuptools"]["package-dir"]
    return sorted(name for name, folder in package_dir.items()
                  if name.count(".") == 1 and folder == name.split(".")[1])


def _mypy_version() -> str:
    run = subprocess.run([sys.executable, "-m", "mypy", "--version"], capture_output=True,
                         text=True)
    assert run.returncode == 0, ("mypy is not installed for this Python (pip install -e '.[test]' "
                                 f"installs it): {run.stderr.strip()}")
    return re.sub(r"[^\w.]+", "-", run.stdout.split()[1])  # "mypy 2.4.1 (compiled: yes)"


def _cache_dir(config: pytest.Config, tmp_path: Path, name: str) -> Path:
    cache = getattr(config, "cache", None)
    if cache is None:  # -p no:cacheprovider: a cold run in this test's own folder
        return tmp_path / name
    return Path(cache.mkdir(f"mypy-{_mypy_version()}-{name}"))


def run_mypy(package_root: Path, packages: list[str], cache: Path) -> tuple[int, str]:
    """mypy over `packages` of the tree at `package_root`, imported as `ireeabi` through a link."""
    home = cache / "checkout"
    home.mkdir(parents=True, exist_ok=True)
    link = home / "ireeabi"
    if link.is_symlink() and Path(os.readlink(link)) != package_root:
        link.unlink()
    if not link.is_symlink():
        link.symlink_to(package_root, target_is_directory=True)
    argv = [sys.executable, "-m", "mypy", "--config-file", str(CONFIG),
            "--cache-dir", str(cache / "mypy"), "--no-color-output", "--no-error-summary"]
    for package in packages:
        argv += ["-p", package]
    run = subprocess.run(argv, cwd=home, capture_output=True, text=True,
                         env={**os.environ, "MYPY_FORCE_COLOR": "0"})
    return run.returncode, run.stdout + run.stderr


def test_product_packages_type_check_clean(pytestconfig: pytest.Config, tmp_path: Path) -> None:
    packages = _product_packages()
    assert "ireeabi.abi" in packages and "ireeabi.cli" in packages, packages
    code, output = run_mypy(ROOT, packages, _cache_dir(pytestconfig, tmp_path, "product"))
    assert code == 0 and not output.strip(), f"mypy found errors:\n{output}"


def test_planted_type_errors_are_found(pytestconfig: pytest.Config, tmp_path: Path) -> None:
    # A tree of the same shape with one wrong assignment, and a function without annotations in a
    # layer whose functions must all be typed (pyproject: disallow_untyped_defs for abi).
    tree = tmp_path / "tree"
    (tree / "abi").mkdir(parents=True)
    (tree / "abi" / "__init__.py").write_text("")
    (tree / "abi" / "planted.py").write_text('count: int = "three"\n\n\ndef untyped(x):\n'
                                             '    return x\n')
    code, output = run_mypy(tree, ["ireeabi.abi"], _cache_dir(pytestconfig, tmp_path, "planted"))
    assert code == 1, output
    assert re.search(r"planted\.py:1: error: .*\[assignment\]", output), output
    assert re.search(r"planted\.py:4: error: Function is missing a type annotation "
                     r".*\[no-untyped-def\]", output), output
