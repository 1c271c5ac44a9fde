"""Keeping the test processes' long-lived heap out of Python's full garbage collections: a pytest
plugin (tests/conftest.py loads it; the plugin tests' child pytest runs get it with
`-p support.long_lived_heap` and tests/ on PYTHONPATH, CHILD_ARGS and child_environment()).

A full collection traverses every object the collector tracks, garbage or not. What a test process
holds from its collection to its end (the test modules, their items, the library's modules) is
traversed again by each of the run's automatic full collections and by the five that pytest makes
when a session ends (_pytest/unraisableexception.py: to report exceptions raised in finalizers),
in each xdist worker; gc.freeze() moves the objects alive at a point into a generation no
collection looks at (CPython's gc module). Sound only where what is frozen outlives the session
or dies by reference counting: a frozen object that later becomes garbage in a reference cycle
is never reclaimed.

- Once collected (pytest_collection_finish): what is alive then lives until the session ends (the
  items are the session's, the test modules and the library's modules sys.modules'), so nothing
  frozen is garbage a later collection would have reclaimed. A worker's collected suite is
  180,000 tracked objects, 0.1 s of CPU a full collection, and a worker makes 20-40 of those.
- At the session's end (pytest_sessionfinish): collect until clean, then freeze, so that pytest's
  five collections after it find what they would have found (nothing) without traversing the heap.
- At the interpreter's exit (atexit): unfrozen, so that its last collection reclaims the heap as
  it did before: nanobind (iree.runtime's bindings) reports every instance and type it finds
  unreclaimed at exit as a leak ("nanobind: leaked 40 types!"), and a frozen cycle's finalizers
  would never run.
- The collection thresholds (gc.set_threshold, at the plugin's configure): 10,000 allocations a
  young collection, not CPython's 700; 20 of those a middle one, 20 of those (and a quarter more
  long-lived objects) a full one. A test builds programs of thousands of objects that live for the
  test: at 700, most of them were promoted before they died, and the full collections that the
  promotions set off were most of the collector's cost (the differential and the plugin
  collection in one process, idle machine: 56 full collections, 13.9 of the collector's 18.9 s;
  at 10,000: 6 full, 10.3 s in all, the process's CPU 75.2 -> 66.7 s). Garbage in reference cycles
  lives a little longer; the suite's peak is bench_suite's to watch.
(benchmarks/RESULTS.md, session 51, has the numbers.)
"""
from __future__ import annotations

import atexit
import gc
import os
from pathlib import Path

import pytest

__all__ = ["CHILD_ARGS", "END_COLLECTIONS", "THRESHOLDS", "child_environment", "collect_then_freeze",
           "freeze_survivors"]

# What a child pytest a test starts needs to load this plugin (with child_environment()).
CHILD_ARGS = ("-p", "support.long_lived_heap")
TESTS = Path(__file__).resolve().parents[1]

# The collections pytest makes at a session's end ("a single collection doesn't necessarily
# collect everything": finalizers can make new garbage).
END_COLLECTIONS = 5

# gc.set_threshold's (young, middle, full) for a test process (the docstring says why).
THRESHOLDS = (10_000, 20, 20)


def _freeze() -> None:
    """gc.freeze(), undone at the interpreter's exit (once per process)."""
    if not _unfreeze_at_exit:
        atexit.register(gc.unfreeze)
        _unfreeze_at_exit.append(True)
    gc.freeze()


_unfreeze_at_exit: list = []  # whether this process has registered it


def freeze_survivors() -> int:
    """Collect garbage, then freeze what survives; the number of objects frozen now."""
    gc.collect()
    before = gc.get_freeze_count()
    _freeze()
    return gc.get_freeze_count() - before


def collect_then_freeze(limit: int = END_COLLECTIONS) -> int:
    """Collect until a collection finds no garbage (the garbage finalizers made included), at most
    `limit` times, then freeze the survivors: pytest's end-of-session collections, which follow,
    then find what they would have found (nothing: every unreachable object was reclaimed here,
    its finalizers' exceptions reported to the same hook) without traversing the heap again.
    Returns the collections made."""
    made = 0
    while made < limit:
        made += 1
        if gc.collect() == 0:
            break
    _freeze()
    return made


def child_environment(env: "dict[str, str] | None" = None) -> dict[str, str]:
    """`env` (os.environ if None) with tests/ first on PYTHONPATH, where CHILD_ARGS finds the plugin."""
    out = dict(os.environ if env is None else env)
    out["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TESTS), out.get("PYTHONPATH", "")]))
    return out


def pytest_configure(config: pytest.Config) -> None:
    gc.set_threshold(*THRESHOLDS)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    freeze_survivors()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    collect_then_freeze()
