"""The host's C libraries are loaded by the name `ctypes.util.find_library` gives (the oracle: on
glibc, the soname), without its `ldconfig -p` child process when glibc's soname loads."""
from __future__ import annotations

import ctypes
import ctypes.util
import subprocess
import sys

import pytest

from ireeabi.base import host_libraries


@pytest.mark.parametrize("name, symbol", [("c", "strtod"), ("m", "exp2")])
def test_the_name_is_find_librarys(name, symbol):
    found = host_libraries.library_name(name)
    assert found == ctypes.util.find_library(name)
    assert hasattr(ctypes.CDLL(found), symbol)


def test_a_library_without_a_known_soname_is_searched():
    assert host_libraries.library_name("dl") == ctypes.util.find_library("dl")


def test_no_child_process_for_glibcs_libraries():
    # every subprocess a fresh interpreter starts while naming both libraries (audit events)
    code = ("import sys\nspawned = []\n"
            "sys.addaudithook(lambda e, a: spawned.append(e) if e in ('subprocess.Popen', 'os.posix_spawn', "
            "'os.fork', 'os.exec') else None)\n"
            "from ireeabi.base.host_libraries import library_name\n"
            "assert library_name('c') and library_name('m')\nprint(len(spawned))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "0"
