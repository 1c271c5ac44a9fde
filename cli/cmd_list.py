"""`ireeabi list`: the catalog's struct names, each with the module of `ireeabi.layouts` declaring it."""
from __future__ import annotations

import argparse
from typing import TextIO

from .. import layouts

from . import render
from .render import emit, emit_json


def add_parser(sub: "argparse._SubParsersAction") -> None:
    p = sub.add_parser("list", help="the catalog's struct names")
    p.add_argument("--json", action="store_true")


def command(args: argparse.Namespace, out: TextIO) -> int:
    names = layouts.names()
    if args.json:
        emit_json([{"name": n, "module": layouts.module_of(n)} for n in names], out)
        return 0
    cols = [render.Column("struct"), render.Column("declared in")]
    rows = [(n, layouts.module_of(n)) for n in names]
    emit(render.table(cols, rows) + ["plus iree_vm_abi_<fragment>_t for any fragment a generic "
                                     "shim can express"], out)
    return 0


__all__ = ["add_parser", "command"]
