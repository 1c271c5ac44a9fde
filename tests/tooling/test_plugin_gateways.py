"""The pytest plugin's check items on pytest-xdist's remote gateways (docs/pytest-plugin.md,
"Workers on other machines"): two execnet socket servers on loopback, each in a folder of its own
and with a user cache of its own (as two machines would be), run two files of the check corpus and failing.mlir
in an inline model (`--tx socket=127.0.0.1:PORT` twice, the files sent by `--rsyncdir`), and the
junit XML is the one `-n 2` (local workers) writes: the same items, outcomes and failure texts.
Each remote worker compiles into the cache of its own machine ($XDG_CACHE_HOME/ireeabi/vmfb
there), not the controller's: its rsync folder is emptied at each run, and nothing of the
controller's tree is its (tooling/check_items.py, _remote_worker). The servers' caches are folders
of the suite's shared cache, so that a later suite run compiles nothing again."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from support import check_corpus as cc
from support import iree_tools as tools

pytest_plugins = ["pytester"]

# Part of the corpus in one model, on the host: where an item runs is the point here, not what it
# runs (tests/tooling/test_plugin_collect.py runs the whole corpus in every model, serial against
# `-n 2`). Each item builds a Program: with both models and every file this test took 165 s of CPU
# warm, with one model 66 s (111 s on a loaded machine); two files and the failing one (24 items,
# passing and failing, enough for both workers) keep the point.
MODELS = ("inline-static",)
FILES = ("elementwise", "dynamic", "failing")
_LISTENING = re.compile(r"Entering Accept loop \('127\.0\.0\.1', (\d+)\)")


def _junit(path: Path) -> dict[tuple[str, str], tuple[str, str]]:
    """(classname, name) -> (outcome, failure text) of every testcase of a junit XML (its times and
    the host's name are left out: they differ in every run)."""
    cases = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        shown = case.find("failure")
        if shown is None:
            shown = case.find("error")
        outcome = "passed" if shown is None and case.find("skipped") is None else \
            "skipped" if shown is None else shown.tag
        cases[case.get("classname"), case.get("name")] = (outcome, (shown.text or "") if shown is not None else "")
    return cases


class _SocketServer:
    """`python -m execnet.script.socketserver 127.0.0.1:0` in `folder` (a machine of its own: its
    working folder and its user cache), the port it listens on read from its first line."""

    def __init__(self, folder: Path, cache: Path) -> None:
        self.folder, self.cache = folder, cache
        folder.mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in os.environ.items()
               if k not in (tools.CACHE_ENV, "PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT")}
        env["XDG_CACHE_HOME"] = str(cache)
        self.proc = subprocess.Popen(
            [sys.executable, "-u", "-m", "execnet.script.socketserver", "127.0.0.1:0"],
            cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        first = self.proc.stdout.readline()
        found = _LISTENING.search(first)
        if found is None:
            self.close()
            raise RuntimeError(f"execnet's socket server did not start: {first!r}")
        self.spec = f"socket=127.0.0.1:{found[1]}"

    def close(self) -> None:
        self.proc.kill()
        self.proc.communicate()


@pytest.fixture
def gateways(tmp_path: Path):
    caches = tools.shared_cache_dir("gateways")
    servers = []
    try:
        for name in ("a", "b"):
            servers.append(_SocketServer(tmp_path / f"machine-{name}", caches / name))
        yield servers
    finally:
        for server in servers:
            server.close()


def test_two_socket_gateways_give_the_junit_of_n_2(pytester, gateways):
    files = [cc.CHECK_DIR / f"{name}.mlir" for name in FILES]
    checks = pytester.path / "checks"
    checks.mkdir()
    for path in files:
        shutil.copy(path, checks / path.name)
    (checks / "pytest.ini").write_text(
        "[pytest]\nireeabi_collect = true\n"
        f"ireeabi_models = {', '.join(MODELS)}\nireeabi_compile_flags = {cc.F64[0]}\n")
    expected = sum(len(cc.parse(p.read_text(), str(p))) for p in files) * len(MODELS)

    # the local workers' cache: the suite's (one compile per run); the remote ones keep their own
    local = pytester.runpytest_subprocess("-p", "no:randomly", "-n", "2",
                                          f"--ireeabi-cache-dir={cc.plugin_cache()}",
                                          f"--junitxml={pytester.path / 'local.xml'}", checks)
    remote = pytester.runpytest_subprocess(
        "-p", "no:randomly", "-W", "ignore::DeprecationWarning",  # xdist 3's note on --rsyncdir
        *(f"--tx={g.spec}" for g in gateways), "--dist=load", f"--rsyncdir={checks}",
        f"--junitxml={pytester.path / 'remote.xml'}", checks)
    failing = 7 * len(MODELS)
    local.assert_outcomes(passed=expected - failing, failed=failing)
    remote.assert_outcomes(passed=expected - failing, failed=failing)
    assert re.search(r"created: 2/2 workers", local.stdout.str())
    # Each machine got the files in its own folder and keeps its modules in its own cache, none in
    # the folder the controller fills (the pytest cache there goes at the next run: a worker
    # compiling into it would compile every module again on every run).
    for g in gateways:
        assert sorted(p.name for p in (g.folder / "pyexecnetcache" / "checks").glob("*.mlir")) == \
            sorted(p.name for p in files)
        assert not list(g.folder.rglob("*.vmfb"))
        compiled = {p.name.split(".")[0] for p in (g.cache / "ireeabi" / "vmfb").glob("*.vmfb")}
        assert {p.stem for p in files} <= compiled  # the cache outlives runs of other files
    cases = _junit(pytester.path / "local.xml")
    assert len(cases) == expected
    assert _junit(pytester.path / "remote.xml") == cases
