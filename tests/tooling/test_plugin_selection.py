"""The plugin's items are ordinary pytest items to pytest's selection (issue 42 item 1): `-k`,
`-m`, `--lf`, `--deselect`, `--co` and node ids select them as they select any test.

The items run from two modules compiled once (the suite's cache): sort_topk.mlir's check functions
(all pass) and failing.mlir's (all fail), inline-static, on two data models. The expected ids come
from the sources' functions (tests/support/check_corpus.py parses them), the outcomes from what
test_plugin_collect.py holds them to (corpus passes, failing.mlir fails). Runs are in-process
(pytester.runpytest): selection needs no subprocess.
"""
from __future__ import annotations

import re
import shutil

import pytest

from support import check_corpus as cc

pytest_plugins = ["pytester"]

TARGETS = ("x86_64", "riscv32")
PASSING = [f.name for f in cc.parse((cc.CHECK_DIR / "sort_topk.mlir").read_text())]
FAILING = [f.name for f in cc.parse((cc.CHECK_DIR / "failing.mlir").read_text())]


@pytest.fixture
def checks(pytester):
    """A folder `checks/` with both modules and the plugin turned on for both data models."""
    folder = pytester.mkdir("checks")
    for name in ("sort_topk", "failing"):
        vmfb = cc.compile_check(cc.CHECK_DIR / f"{name}.mlir", "inline-static")
        shutil.copy(vmfb, folder / f"{name}.vmfb")
    # addopts: without hypothesis' plugin in the nested runs (pytester's in-process runs import
    # afresh what each run imports, and hypothesis' terminal summary imports its modules, which
    # this session's assertion rewriting rewrites again each time: most of these tests' cost)
    pytester.makeini(f"""
        [pytest]
        addopts = -p no:hypothesispytest
        ireeabi_collect = true
        ireeabi_targets = {", ".join(TARGETS)}
        """)
    return pytester


def _ids(file: str, functions: list[str], targets=TARGETS) -> list[str]:
    return [f"checks/{file}::{f}[inline-static-{t}]" for f in functions for t in targets]


def _collected(result) -> list[str]:
    return [line for line in result.stdout.lines if "::" in line]


def _ran(result) -> list[str]:
    return re.findall(r"^(\S+::\S+) (?:PASSED|FAILED)", result.stdout.str(), re.M)


def test_collect_only_lists_every_item(checks):
    result = checks.runpytest("--co", "-q", "-p", "no:randomly")
    assert result.ret == pytest.ExitCode.OK
    assert sorted(_collected(result)) == sorted(_ids("sort_topk.vmfb", PASSING)
                                                + _ids("failing.vmfb", FAILING))


def test_k_selects_by_function_file_and_id(checks):
    function = PASSING[0]
    result = checks.runpytest("-v", "-p", "no:randomly", "-k", function)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert _ran(result) == _ids("sort_topk.vmfb", [function])
    result.assert_outcomes(passed=len(TARGETS))
    # the file name and the parameter part are keywords as for any parametrized test
    result = checks.runpytest("--co", "-q", "-p", "no:randomly", "-k", "sort_topk and riscv32")
    assert _collected(result) == _ids("sort_topk.vmfb", PASSING, ("riscv32",))


def test_m_selects_by_the_ireeabi_marker(checks):
    # the marker is registered: --strict-markers accepts it
    result = checks.runpytest("--co", "-q", "-p", "no:randomly", "--strict-markers", "-m",
                              "ireeabi(target='riscv32')", "checks/sort_topk.vmfb")
    assert _collected(result) == _ids("sort_topk.vmfb", PASSING, ("riscv32",))
    result = checks.runpytest("--co", "-q", "-p", "no:randomly", "-m",
                              f"ireeabi(function='{FAILING[0]}')")
    assert _collected(result) == _ids("failing.vmfb", FAILING[:1])
    result = checks.runpytest("-p", "no:randomly", "-m", "not ireeabi")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    # and `pytest --markers` explains it
    assert "ireeabi(kind, function, model, path, target)" in \
        checks.runpytest("--markers").stdout.str()


def test_node_ids_and_deselect(checks):
    wanted = _ids("sort_topk.vmfb", PASSING[:1], ("riscv32",))[0]
    result = checks.runpytest("-v", "-p", "no:randomly", wanted)
    assert _ran(result) == [wanted]
    result.assert_outcomes(passed=1)
    dropped = _ids("sort_topk.vmfb", PASSING[:1], ("x86_64",))[0]
    result = checks.runpytest("--co", "-q", "-p", "no:randomly", "checks/sort_topk.vmfb",
                              f"--deselect={dropped}")
    assert _collected(result) == [i for i in _ids("sort_topk.vmfb", PASSING) if i != dropped]
    assert f"{len(PASSING) * len(TARGETS) - 1}/{len(PASSING) * len(TARGETS)} tests collected " \
           "(1 deselected)" in result.stdout.str()


def test_last_failed_reruns_only_the_failures(checks):
    first = checks.runpytest("-p", "no:randomly", "checks/", "-k",
                             f"riscv32 and ({PASSING[0]} or {FAILING[0]})")
    first.assert_outcomes(passed=1, failed=1)
    again = checks.runpytest("-v", "-p", "no:randomly", "--lf", "checks/")
    assert _ran(again) == _ids("failing.vmfb", FAILING[:1], ("riscv32",))
    again.assert_outcomes(failed=1)
    assert "rerun previous 1 failure" in again.stdout.str()
