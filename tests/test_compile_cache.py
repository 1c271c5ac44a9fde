"""The tests' compile cache (tests/support/iree_tools.py) compiles a module once whatever order a
test builds its flags in: iree-compile's options of distinct names do not depend on their order
(checked here against iree-compile itself), so the cache keys and compiles them in one order."""
from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from support import iree_tools as tools
from ireeabi.tooling.check_compile import compile_flags

ADD16 = Path(__file__).resolve().parent / "programs" / "add16.mlir"
# The library's flags for armv7 llvm-cpu kernels, inline-dynamic: five options of distinct names.
FLAGS = compile_flags("inline-dynamic", "armv7", "x86_64")


def _direct(flags: tuple[str, ...], out: Path) -> bytes:
    argv, cwd = tools.compile_argv(ADD16, flags, "-o", str(out))
    subprocess.run(argv, cwd=cwd, check=True, capture_output=True)
    return out.read_bytes()


def test_iree_compile_gives_the_same_bytes_in_either_order(tmp_path):
    assert len(FLAGS) >= 4 and tuple(reversed(FLAGS)) != FLAGS
    forward = _direct(FLAGS, tmp_path / "a.vmfb")
    backward = _direct(tuple(reversed(FLAGS)), tmp_path / "b.vmfb")
    assert hashlib.sha256(forward).digest() == hashlib.sha256(backward).digest()


def test_two_orders_compile_once(tmp_path, monkeypatch: pytest.MonkeyPatch):
    log = tmp_path / "compiles.log"
    monkeypatch.setenv(tools.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(tools.COMPILE_LOG_ENV, str(log))
    first = tools.compile_with_flags(ADD16, FLAGS, tmp_path / "one")
    second = tools.compile_with_flags(ADD16, tuple(reversed(FLAGS)), tmp_path / "two")
    assert first.name == second.name
    assert first.read_bytes() == second.read_bytes()
    assert len(log.read_text().splitlines()) == 1


@pytest.mark.parametrize("flags, expected", [
    (("--b=1", "--a=2"), ("--a=2", "--b=1")),
    # a repeated option (a list option: its order is its meaning) keeps the order given
    (("--iree-hal-target-device=b", "--iree-hal-target-device=a"),
     ("--iree-hal-target-device=b", "--iree-hal-target-device=a")),
    # a value in the next argument: not reordered apart from its option
    (("-o", "x", "--a=1"), ("-o", "x", "--a=1")),
])
def test_canonical_flags(flags, expected):
    assert tools.canonical_flags(flags) == expected
