"""Debian tools the tests build with or compare against, installed when missing.

A test that needs gcc's cross compilers, clang or qemu-user asks for the command here: on a Debian
machine where the tests run as root (a fresh CI machine), a missing package is installed with
apt-get, once per package, under a lock so that parallel workers do not race; anywhere else the
test fails with the package to install. Tests never skip for a missing tool.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

__all__ = ["debian_file", "debian_tool", "install_missing"]

# The package that provides each command the tests run.
PACKAGES = {
    "gcc": "gcc",
    "riscv64-linux-gnu-gcc": "gcc-riscv64-linux-gnu",
    "arm-linux-gnueabihf-gcc": "gcc-arm-linux-gnueabihf",
    "aarch64-linux-gnu-gcc": "gcc-aarch64-linux-gnu",
    "clang": "clang",
    "wasm-ld": "lld",
    "qemu-aarch64": "qemu-user",
    "readelf": "binutils",
}

# What the suite needs, each package with a file that shows it is there (gcc-multilib by the 32-bit
# libgcc that `gcc -m32` links with, which its dependency lib32gcc-12-dev holds).
SUITE = {
    **{package: shutil.which(command) or f"/usr/bin/{command}" for command, package in PACKAGES.items()},
    "gcc-multilib": "/usr/lib/gcc/x86_64-linux-gnu/12/32/libgcc.a",
    "libc6-arm64-cross": "/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1",
    "libcairo2": "/usr/lib/x86_64-linux-gnu/libcairo.so.2",  # cairosvg renders the layout pictures
}

_LOCK = Path("/tmp/ireeabi-tests-apt.lock")


def _apt_install(*packages: str) -> str:
    """'' when installed, else why not."""
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return "not root on a Debian machine"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    with open(_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for argv in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", *packages]):
            proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=1800)
            if proc.returncode != 0:
                return f"{' '.join(argv)} failed: {proc.stderr.strip()[-500:]}"
    return ""


def debian_tool(command: str) -> str:
    """Absolute path of `command`, installing its Debian package first when it is missing."""
    found = shutil.which(command)
    if found is None:
        package = PACKAGES[command]
        why = _apt_install(package)
        found = shutil.which(command)
        if found is None:
            pytest.fail(f"{command} is needed (Debian package {package}; .ci/run installs it): "
                        f"{why or 'apt-get installed the package without it'}")
    return found


def debian_file(path: str, package: str) -> Path:
    """`path`, installing `package` first when it is missing (sysroots, multilib files)."""
    if not Path(path).exists():
        why = _apt_install(package)
        if not Path(path).exists():
            pytest.fail(f"{path} is needed (Debian package {package}; .ci/run installs it): "
                        f"{why or 'apt-get installed the package without it'}")
    return Path(path)


def install_missing() -> None:
    """Install, in one apt-get run, every package of SUITE whose file is missing (at session start,
    so that no test waits on apt). Never fails: a test that still lacks its tool fails by itself."""
    missing = sorted(package for package, path in SUITE.items() if not Path(path).exists())
    if missing:
        _apt_install(*missing)
