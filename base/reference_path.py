"""The switch that forces the reference path everywhere.

The fast paths (compiled blocks and planned import call sites in the interpreter, direct calls of
Python callbacks on the host) are generated from the same rules as the reference path and must give
the same bytes, results, statuses and heap events. IREEABI_REFERENCE=1 in the environment turns
them all off: every Context runs the per-instruction handlers and layered import calls, and a heap
made then calls its host function pointers through C (the heap reads the variable once, when it is
made, and its function table takes the switch from it).
"""
from __future__ import annotations

import os


def reference_forced() -> bool:
    """IREEABI_REFERENCE=1 (any value but "" and "0") in the environment."""
    return os.environ.get("IREEABI_REFERENCE", "") not in ("", "0")


__all__ = ["reference_forced"]
