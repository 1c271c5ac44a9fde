"""`ireeabi fixtures build|verify DIR`: the golden packed-buffer fixtures (layouts/fixtures.py)."""
from __future__ import annotations

from pathlib import Path

from ireeabi.layouts import fixtures


def build(directory: str) -> list[str]:
    n = fixtures.build(directory)
    return [f"wrote {n} fixtures (.bin + .json each) under {Path(directory)}"]


def verify(directory: str) -> tuple[list[str], bool]:
    """Lines to print and whether every fixture matched."""
    bad = fixtures.verify(directory)
    if not bad:
        n = sum(1 for _ in fixtures.instances())
        return [f"all {n} fixtures under {Path(directory)} match the engine"], True
    lines = [f"{len(bad)} fixture(s) differ from the engine:"]
    lines += [f"  {m}" for m in bad[:50]]
    if len(bad) > 50:
        lines.append(f"  ... and {len(bad) - 50} more")
    return lines, False
