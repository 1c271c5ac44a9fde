"""Keeping the test processes' long-lived heap out of Python's full garbage collections.

A full collection traverses every object the collector tracks, garbage or not. What a test process
holds from its collection to its end (the test modules, their items, the library's modules) is
traversed again by each of the run's automatic full collections and by the five that pytest makes
when a session ends (_pytest/unraisableexception.py: to report exceptions raised in finalizers),
in each xdist worker; gc.freeze() moves the objects alive at a point into a generation no
collection looks at (CPython's gc module). Sound only where what is frozen outlives the session
or dies by reference counting: a frozen object that later becomes garbage in a reference cycle
is never reclaimed (tests/conftest.py says where each freeze is made and why it holds there).
"""
from __future__ import annotations

import gc

__all__ = ["END_COLLECTIONS", "freeze_survivors", "collect_then_freeze"]

# The collections pytest makes at a session's end ("a single collection doesn't necessarily
# collect everything": finalizers can make new garbage).
END_COLLECTIONS = 5


def freeze_survivors() -> int:
    """Collect garbage, then freeze what survives; the number of objects frozen now."""
    gc.collect()
    before = gc.get_freeze_count()
    gc.freeze()
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
    gc.freeze()
    return made
