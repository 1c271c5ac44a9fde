"""The suite's own heap handling (tests/support/long_lived_heap.py, a plugin tests/conftest.py loads): what a test
process holds once collected is frozen, out of every later full collection's traversal, and the
session's end collects until clean before freezing, so that pytest's five end-of-session
collections find what they would have found and traverse nothing."""
from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

# A garbage cycle whose finalizer makes another garbage cycle: the first collection reclaims the
# first and runs the finalizer, the second reclaims the new one, the third finds nothing.
CHAINED_GARBAGE = """\
import gc
from support import long_lived_heap as llh

finalized = []

class Node:
    def __init__(self, depth):
        self.depth, self.me = depth, self
    def __del__(self):
        finalized.append(self.depth)
        if self.depth:
            Node(self.depth - 1)

gc.collect()
gc.disable()  # no automatic collection in between: the counts are the function's
Node(1)
kept = [[i] for i in range(1000)]
made = llh.collect_then_freeze()
young = len(gc.get_objects())  # what a collection now traverses (frozen objects are not listed)
print(made, sorted(finalized), gc.get_freeze_count() >= len(kept), young < 100, gc.collect())
"""


def test_collect_then_freeze_collects_until_clean_then_freezes():
    proc = subprocess.run([sys.executable, "-c", CHAINED_GARBAGE], cwd=TESTS, capture_output=True,
                          text=True, check=True)
    # three collections (the cycle, the cycle its finalizer made, none), both finalizers ran, the
    # survivors frozen, nothing left for a later collection to traverse or reclaim
    assert proc.stdout.split() == ["3", "[0,", "1]", "True", "True", "0"]


def test_collect_then_freeze_stops_at_pytests_count():
    script = CHAINED_GARBAGE.replace("Node(1)", "Node(20)")
    proc = subprocess.run([sys.executable, "-c", script], cwd=TESTS, capture_output=True, text=True,
                          check=True)
    made, *rest = proc.stdout.split()
    assert int(made) == 5  # END_COLLECTIONS, as pytest: the chain's rest is left to pytest's own


# A cycle alive when frozen and dropped after: its finalizer runs at the interpreter's exit only if
# the heap is unfrozen there (nanobind's leak report at exit is the same matter).
DROPPED_AFTER_FREEZE = """\
import os
from support import long_lived_heap as llh

class Cycle:
    def __init__(self):
        self.me = self
    def __del__(self, write=os.write):
        write(1, b"finalized")

cycle = Cycle()
llh.freeze_survivors()
del cycle
"""


def test_the_heap_is_unfrozen_at_exit():
    proc = subprocess.run([sys.executable, "-c", DROPPED_AFTER_FREEZE], cwd=TESTS,
                          capture_output=True, text=True, check=True)
    assert proc.stdout == "finalized"


def test_this_session_froze_its_items(request: pytest.FixtureRequest):
    """This process froze its collected items (support.long_lived_heap, loaded by tests/conftest.py): none
    is among the objects a collection traverses."""
    node = request.node
    assert gc.get_freeze_count() >= len(request.session.items)
    assert not any(o is node for o in gc.get_objects())
