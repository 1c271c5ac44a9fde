"""Debian tools the tests build with or compare against, installed when missing.

    python tests/support/debian_tools.py     # what .ci/run runs: install what is missing, then check

A test that needs gcc's cross compilers, clang or qemu-user asks for the command here: on a Debian
machine where the tests run as root (a fresh CI machine), a missing package is installed with
apt-get, under a lock so that parallel workers do not race; anywhere else the test fails with the
package to install. Tests never skip for a missing tool.

Installing only ever adds: apt-get runs with --no-remove, so a package set that would take another
package away (gcc-multilib and Debian's cross gccs conflict: both own /usr/include/asm) is refused
and reported instead. `gcc -m32` therefore comes from the 32-bit libraries without gcc-multilib
(libc6-dev-i386, lib32gcc-N-dev); what gcc-multilib adds beyond them, the /usr/include/asm link,
is `m32_include_dir()`, a folder of the tests' own. What is installed is said on stderr.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["PACKAGES", "suite_packages", "debian_file", "debian_tool", "install_missing",
           "m32_include_dir"]

# The package that provides each command the tests run.
PACKAGES = {
    "gcc": "gcc",
    "riscv64-linux-gnu-gcc": "gcc-riscv64-linux-gnu",
    "arm-linux-gnueabihf-gcc": "gcc-arm-linux-gnueabihf",
    "aarch64-linux-gnu-gcc": "gcc-aarch64-linux-gnu",
    "riscv64-linux-gnu-g++": "g++-riscv64-linux-gnu",  # IREE's runtime, built as an oracle
    "arm-linux-gnueabihf-g++": "g++-arm-linux-gnueabihf",
    "aarch64-linux-gnu-g++": "g++-aarch64-linux-gnu",
    "clang": "clang",
    "wasm-ld": "lld",
    "qemu-aarch64": "qemu-user",
    "qemu-arm": "qemu-user",  # IREE's runtime built as an oracle, run on armv7 and riscv64
    "qemu-riscv64": "qemu-user",
    "patch": "patch",  # the oracle builds' source patches (tests/oracle_patches)
    "readelf": "binutils",
}

_LOCK = Path("/tmp/ireeabi-tests-apt.lock")


def _gcc_major() -> str:
    try:
        return subprocess.run(["gcc", "-dumpversion"], capture_output=True, text=True,
                              timeout=60).stdout.strip().split(".")[0] or "12"
    except OSError:
        return "12"  # no gcc yet: Debian 12's, installed with the rest


def suite_packages() -> dict[str, str]:
    """What the suite needs: each package with a file that shows it is there."""
    major = _gcc_major()
    return {
        **{package: shutil.which(command) or f"/usr/bin/{command}"
           for command, package in PACKAGES.items()},
        # gcc -m32 without gcc-multilib (which conflicts with the cross gccs)
        f"lib32gcc-{major}-dev": f"/usr/lib/gcc/x86_64-linux-gnu/{major}/32/libgcc.a",
        "libc6-dev-i386": "/usr/lib32/libc.so",
        f"lib32stdc++-{major}-dev": f"/usr/lib/gcc/x86_64-linux-gnu/{major}/32/libstdc++.so",
        "libc6-arm64-cross": "/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1",
        "libc6-armhf-cross": "/usr/arm-linux-gnueabihf/lib/ld-linux-armhf.so.3",
        "libc6-riscv64-cross": "/usr/riscv64-linux-gnu/lib/ld-linux-riscv64-lp64d.so.1",
        "libcairo2": "/usr/lib/x86_64-linux-gnu/libcairo.so.2",  # cairosvg renders the pictures
    }


def _apt_install(*packages: str) -> str:
    """'' when installed, else why not. Never removes a package (--no-remove)."""
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return "not root on a Debian machine"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    with open(_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        missing = [p for p in packages if not _installed(p)]
        if not missing:
            return ""
        print(f"ireeabi tests: installing {' '.join(missing)} (apt-get, nothing removed)",
              file=sys.stderr, flush=True)
        for argv in (["apt-get", "update", "-qq"],
                     ["apt-get", "install", "-y", "-qq", "--no-remove", *missing]):
            proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=1800)
            if proc.returncode != 0:
                return f"{' '.join(argv)} failed: {proc.stderr.strip()[-500:]}"
    return ""


def _installed(package: str) -> bool:
    path = suite_packages().get(package)
    return path is not None and Path(path).exists()


def _fail(message: str) -> None:
    import pytest
    pytest.fail(message)


def debian_tool(command: str) -> str:
    """Absolute path of `command`, installing its Debian package first when it is missing."""
    found = shutil.which(command)
    if found is None:
        package = PACKAGES[command]
        why = _apt_install(package)
        found = shutil.which(command)
        if found is None:
            _fail(f"{command} is needed (Debian package {package}; .ci/run installs it): "
                  f"{why or 'apt-get installed the package without it'}")
    return found or ""


def debian_file(path: str, package: str) -> Path:
    """`path`, installing `package` first when it is missing (sysroots, 32-bit libraries)."""
    if not Path(path).exists():
        why = _apt_install(package)
        if not Path(path).exists():
            _fail(f"{path} is needed (Debian package {package}; .ci/run installs it): "
                  f"{why or 'apt-get installed the package without it'}")
    return Path(path)


def install_missing() -> list[str]:
    """Install, in one apt-get run, every package the suite needs whose file is missing (at session
    start, so that no test waits on apt). Returns what is still missing; a test that lacks its
    tool fails by itself."""
    wanted = suite_packages()
    missing = sorted(p for p, path in wanted.items() if not Path(path).exists())
    if missing:
        why = _apt_install(*missing)
        if why:
            print(f"ireeabi tests: {why}", file=sys.stderr)
    return sorted(p for p, path in suite_packages().items() if not Path(path).exists())


def m32_include_dir() -> Path:
    """A folder for `gcc -m32 -isystem`: `asm` -> the host's asm headers (x86_64-linux-gnu/asm,
    which serve i386 too), the one thing gcc-multilib adds to the 32-bit libraries (its
    /usr/include/asm link). <errno.h> and <signal.h> need it under -m32."""
    folder = Path(tempfile.gettempdir()) / "ireeabi-m32-include"
    link = folder / "asm"
    if not link.exists():
        folder.mkdir(exist_ok=True)
        tmp = folder / f"asm.{os.getpid()}"
        tmp.unlink(missing_ok=True)
        tmp.symlink_to("/usr/include/x86_64-linux-gnu/asm")
        os.replace(tmp, link)
    return folder


def main() -> int:
    missing = install_missing()
    if missing:
        print(f"ireeabi tests: still missing after apt-get: {' '.join(missing)}", file=sys.stderr)
        return 1
    probe = subprocess.run(["gcc", "-m32", "-isystem", str(m32_include_dir()), "-x", "c", "-",
                            "-o", os.devnull], input="#include <errno.h>\nint main(void){return errno;}\n",
                           capture_output=True, text=True, timeout=120)
    if probe.returncode != 0:
        print(f"ireeabi tests: gcc -m32 cannot link a program: {probe.stderr.strip()[-500:]}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
