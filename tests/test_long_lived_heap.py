"""The suite's own heap handling (tests/support/long_lived_heap.py, a plugin tests/conftest.py loads):
what a test process holds once collected is frozen, out of every later full collection's traversal;
the session's end collects until clean before freezing, so that pytest's five end-of-session
collections find what they would have found and traverse nothing; the interpreter's exit unfreezes,
so that its last collection reclaims the heap as before; the session collects at the suite's
thresholds."""
from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

# One child Python (the module imports pytest: ~0.3 s of CPU a child) for three cases, in order:
# - a garbage cycle whose finalizer makes another garbage cycle: the first collection reclaims the
#   first and runs the finalizer, the second reclaims the new one, the third finds nothing;
# - a chain of 20 such cycles: pytest's count of collections, no more;
# - a cycle alive when frozen and dropped after: its finalizer runs at the interpreter's exit only
#   if the heap is unfrozen there (nanobind's leak report at exit is the same matter).
SCRIPT = """\
import gc, json, os
from support import long_lived_heap as llh

finalized = []

class Node:
    def __init__(self, depth):
        self.depth, self.me = depth, self
    def __del__(self):
        finalized.append(self.depth)
        if self.depth:
            Node(self.depth - 1)

class Cycle:
    def __init__(self):
        self.me = self
    def __del__(self, write=os.write):
        write(1, b"finalized at exit\\n")

gc.collect()
gc.disable()  # no automatic collection in between: the counts are the function's
for depth in (1, 20):
    finalized.clear()
    Node(depth)
    kept = [[i] for i in range(1000)]
    made = llh.collect_then_freeze()
    print(json.dumps({"depth": depth, "made": made, "finalized": sorted(finalized),
                      "frozen_kept": gc.get_freeze_count() >= len(kept),
                      # what a collection now traverses (frozen objects are not listed)
                      "young": len(gc.get_objects()), "then_collected": gc.collect()}), flush=True)
cycle = Cycle()
llh.freeze_survivors()
del cycle
"""


@pytest.fixture(scope="module")
def child() -> list[str]:
    proc = subprocess.run([sys.executable, "-c", SCRIPT], cwd=TESTS, capture_output=True, text=True,
                          check=True)
    return proc.stdout.splitlines()


def test_collect_then_freeze_collects_until_clean_then_freezes(child):
    first = json.loads(child[0])
    # three collections (the cycle, the cycle its finalizer made, none), both finalizers ran, the
    # survivors frozen, nothing left for a later collection to traverse or reclaim
    assert (first["made"], first["finalized"], first["frozen_kept"]) == (3, [0, 1], True)
    assert first["young"] < 100 and first["then_collected"] == 0


def test_collect_then_freeze_stops_at_pytests_count(child):
    # END_COLLECTIONS, as pytest: the rest of the chain is left to pytest's own collections
    second = json.loads(child[1])
    assert second["made"] == 5 and second["finalized"] == [16, 17, 18, 19, 20]


def test_the_heap_is_unfrozen_at_exit(child):
    assert child[2:] == ["finalized at exit"]


def test_this_session_froze_its_items(request: pytest.FixtureRequest):
    """This process froze its collected items (support.long_lived_heap, loaded by tests/conftest.py):
    none is among the objects a collection traverses."""
    node = request.node
    assert gc.get_freeze_count() >= len(request.session.items)
    assert not any(o is node for o in gc.get_objects())


def test_this_session_collects_at_the_suites_thresholds():
    """Young collections every 10,000 allocations, not 700 (support.long_lived_heap.THRESHOLDS):
    what a test builds for itself mostly dies before a collection promotes it."""
    from support.long_lived_heap import THRESHOLDS
    assert gc.get_threshold() == THRESHOLDS == (10_000, 20, 20)
