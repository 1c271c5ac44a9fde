"""A pytest plugin that counts Python's garbage collections over a run and what the heap holds at its
end: `PYTHONPATH=tests python -m pytest -p support.gc_stats ...` with IREEABI_GC_STATS=FILE appends
one JSON line per process (each xdist worker, or the serial session) to FILE at the session's end:
the collections per generation, their CPU time (process time between gc.callbacks' start and stop,
which a loaded machine does not inflate), the objects the collector tracks before and after one
full collection, and the most common types among those that survive it. Run by hand on a subset
(benchmarks/RESULTS.md, session 51), not by the suite."""
import atexit
import collections
import gc
import json
import os
import time

import pytest

__all__ = ["GcStats"]


class GcStats:
    """Collections per generation and their process time, from gc.callbacks."""

    def __init__(self) -> None:
        self.count = [0, 0, 0]
        self.seconds = [0.0, 0.0, 0.0]
        self.collected = [0, 0, 0]
        self.longest = 0.0
        self._start = 0.0
        # Full collections made while a test's teardown runs (tests/conftest.py's own gc.collect()
        # when the worker's resident memory passes its mark), apart from the rest.
        self.in_teardown = False
        self.teardown_count = 0
        self.teardown_seconds = 0.0

    def callback(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._start = time.process_time()
            return
        spent = time.process_time() - self._start
        generation = info["generation"]
        self.count[generation] += 1
        self.seconds[generation] += spent
        self.collected[generation] += info["collected"]
        self.longest = max(self.longest, spent)
        if self.in_teardown and generation == 2:
            self.teardown_count += 1
            self.teardown_seconds += spent

    def summary(self) -> dict:
        return {"count": list(self.count), "cpu_seconds": [round(s, 3) for s in self.seconds],
                "collected": list(self.collected), "longest": round(self.longest, 4),
                "teardown_full": [self.teardown_count, round(self.teardown_seconds, 3)]}


def heap_census(top: int = 25) -> dict:
    """The objects the collector tracks now, and the commonest types among them."""
    objects = gc.get_objects()
    kinds = collections.Counter(f"{type(o).__module__}.{type(o).__qualname__}" for o in objects)
    del objects
    return {"tracked": sum(kinds.values()), "frozen": gc.get_freeze_count(),
            "types": kinds.most_common(top)}


_stats = GcStats()
_at_collection: dict = {}


def pytest_configure(config: pytest.Config) -> None:
    gc.callbacks.append(_stats.callback)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    if os.environ.get("IREEABI_GC_STATS"):
        _at_collection.update(heap_census(10), collections=_stats.summary())


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: "pytest.Item | None"):
    _stats.in_teardown = True
    try:
        yield
    finally:
        _stats.in_teardown = False


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    path = os.environ.get("IREEABI_GC_STATS")
    if not path:
        return
    tracked = len(gc.get_objects())
    # One full collection timed here: what each of pytest's end-of-session collections costs.
    start = time.process_time()
    found = gc.collect()
    full = time.process_time() - start
    # after it: what the process holds, not the cyclic garbage awaiting a full collection
    census = heap_census()
    record = {"worker": os.environ.get("PYTEST_XDIST_WORKER", "-"), "pid": os.getpid(),
              "tests": session.testscollected, "collections": _stats.summary(),
              "tracked_before_collection": tracked, "garbage_at_end": found,
              "full_collection_at_end": round(full, 4), "heap": census,
              "at_collection": _at_collection}
    with open(path, "a") as f:
        f.write(json.dumps(record) + "\n")
    # What the process's collections cost from here to its exit: pytest's own at its config's
    # cleanup (five, _pytest/unraisableexception.py) among them.
    before = _stats.summary()
    atexit.register(_after_session, path, record["worker"], before)


def _after_session(path: str, worker: str, before: dict) -> None:
    now = _stats.summary()
    record = {"worker": worker, "pid": os.getpid(), "after_session": {
        "count": [a - b for a, b in zip(now["count"], before["count"])],
        "cpu_seconds": [round(a - b, 4) for a, b in zip(now["cpu_seconds"], before["cpu_seconds"])]}}
    with open(path, "a") as f:
        f.write(json.dumps(record) + "\n")
