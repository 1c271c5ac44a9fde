"""`ireeabi fixtures build|verify DIR`: the golden packed-buffer fixtures (layouts/fixtures.py)."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from ..layouts import fixtures

from .render import emit


def add_parser(sub: "argparse._SubParsersAction") -> None:
    p = sub.add_parser("fixtures", help="build or verify golden packed-buffer fixtures",
                       description="Packed argument/result buffers of every hal_inline, hal_loader and "
                                   "variadic hal signature on every data model, with JSON sidecars. "
                                   "verify exits 1 naming the first differing offset and field.")
    p.add_argument("action", choices=["build", "verify"])
    p.add_argument("directory", metavar="DIR")


def command(args: argparse.Namespace, out: TextIO) -> int:
    """Exit 1 when `verify` finds a fixture that differs."""
    if args.action == "build":
        emit(build(args.directory), out)
        return 0
    lines, ok = verify(args.directory)
    emit(lines, out)
    return 0 if ok else 1


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


__all__ = ["add_parser", "command", "build", "verify"]
