"""Leak reports of ireeabi's pytest plugin start at the test's own frames (base.allocation.trim_harness).

A test that leaks heap blocks errors at teardown with LeakError, each block with the Python stack that
allocated it. The outermost frames of every such stack are pytest's and pluggy's (the runner, the
hook calls); the report drops that leading run, so its first frame is the test function, and keeps
the whole stack on the error (`LeakError.full_report`, each leak's `stack`). The leaking tests run in
an inner pytest session (`pytester`), through the plugin's installed entry point as a user's would.
"""
from __future__ import annotations

import re

import pytest

from ireeabi.base import allocation
from ireeabi.base.heap import LeakError, tracked_heap

pytest_plugins = ["pytester"]

FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')

LEAKING_TESTS = '''import pytest

def allocate_for(heap):
    return heap.malloc(24, tag="forgotten")

def test_forgets_a_block(heap):
    allocate_for(heap)

@pytest.mark.parametrize("target", ["riscv32"])
def test_forgets_a_block_on_riscv32(heap):
    heap.malloc(8)

def test_forgets_a_runtime_block(runtime):
    runtime.heap.malloc(16, tag="via runtime")

def test_frees_everything(heap):
    heap.free(heap.malloc(4))
'''


def _line_after(text: str, marker: str) -> int:
    """The 1-based number of the line after the one holding `marker` in `text`."""
    return text.splitlines().index(next(l for l in text.splitlines() if marker in l)) + 2


def _reports(output: str) -> dict[str, list[tuple[str, int, str]]]:
    """Each leak report in an inner session's output: test name -> frames of its first stack."""
    reports: dict[str, list[tuple[str, int, str]]] = {}
    current = None
    for line in output.splitlines():
        heading = re.search(r"ERROR at teardown of (\S+)", line)
        if heading:
            current = heading.group(1)
            reports[current] = []
            continue
        m = FRAME.search(line)
        if current is not None and line.startswith("E ") and m:
            reports[current].append((m.group(1), int(m.group(2)), m.group(3)))
    return reports


def test_the_report_starts_at_the_test_function(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_leaky=LEAKING_TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=4, errors=3)
    output = result.stdout.str()
    reports = _reports(output)
    assert set(reports) == {"test_forgets_a_block", "test_forgets_a_block_on_riscv32[riscv32]",
                            "test_forgets_a_runtime_block"}
    first = {name: frames[0] for name, frames in reports.items()}
    for name in ("test_forgets_a_block", "test_forgets_a_block_on_riscv32", "test_forgets_a_runtime_block"):
        line = _line_after(LEAKING_TESTS, f"def {name}(")
        assert first[name + ("[riscv32]" if "riscv32" in name else "")][1:] == (line, name)
    assert all(f[0].endswith("test_leaky.py") for f in first.values())
    # The user's helper follows the test; nothing of the harness anywhere in a reported stack.
    assert [f[2] for f in reports["test_forgets_a_block"]] == ["test_forgets_a_block", "allocate_for"]
    shown = [f[0] for frames in reports.values() for f in frames]
    assert shown and not any("/_pytest/" in f or "/pluggy/" in f for f in shown)
    assert "LeakError.full_report" in output


def test_the_error_keeps_the_whole_stack(pytester: pytest.Pytester) -> None:
    """A test that catches the LeakError itself sees the trimmed message and the whole stack."""
    pytester.makepyfile(test_catches='''
from ireeabi.base.heap import LeakError, tracked_heap
from ireeabi.base.allocation import frames

def test_catches():
    try:
        with tracked_heap() as heap:
            heap.malloc(12)
    except LeakError as e:
        whole = [f for f, _, _ in frames(e.leaks[0].stack)]
        assert any("/_pytest/" in f for f in whole) and any("/pluggy/" in f for f in whole)
        assert "/_pytest/" not in str(e) and "/pluggy/" not in str(e)
        assert "/_pytest/" in e.full_report and "/pluggy/" in e.full_report
        assert str(e).splitlines()[2].strip().endswith("in test_catches")
        print("CAUGHT")
    else:
        raise AssertionError("no LeakError")
''')
    result = pytester.runpytest("-p", "no:cacheprovider", "-s")
    result.assert_outcomes(passed=1)
    assert "CAUGHT" in result.stdout.str()


def test_only_the_leading_run_of_harness_frames_goes() -> None:
    import _pytest.runner
    import pluggy._callers
    runner, callers = _pytest.runner.__file__, pluggy._callers.__file__
    stack = ((runner, 1, "pytest_runtest_call"), (callers, 2, "_multicall"), ("/u/test_x.py", 3, "test_x"),
             (runner, 4, "callback_into_pytest"), ("/u/lib.py", 5, "alloc"))
    assert allocation.trim_harness(stack) == stack[2:]
    assert allocation.trim_harness(stack[:2]) == stack[:2]  # all harness: kept whole
    assert allocation.trim_harness(()) == ()
    # A user's folder or file named like the harness is not the harness.
    assert not allocation.is_harness_frame("/home/u/pytest/test_x.py")
    assert not allocation.is_harness_frame("/home/u/pluggy/_callers.py")
    assert allocation.is_harness_frame("<frozen runpy>")


def test_a_leak_outside_pytest_is_reported_whole() -> None:
    """Captured in this process, the stack has pytest frames; trimmed, it starts here."""
    with pytest.raises(LeakError) as e:
        with tracked_heap() as heap:
            heap.malloc(4)
    shown = [FRAME.search(line) for line in str(e.value).splitlines()]
    shown = [m.group(3) for m in shown if m]
    assert shown[0] == "test_a_leak_outside_pytest_is_reported_whole"
    assert len(allocation.frames(e.value.leaks[0].stack)) > len(shown)
