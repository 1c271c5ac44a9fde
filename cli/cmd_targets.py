"""`ireeabi targets`: the data models and the numbers IREE's layout rules depend on."""
from __future__ import annotations

import argparse
from typing import Any, TextIO

from ..abi import cconv, targets
from ..abi.targets import Target

from . import render
from .render import Column, emit, emit_json


def add_parser(sub: "argparse._SubParsersAction") -> None:
    p = sub.add_parser("targets", help="the data models and their ABI numbers")
    p.add_argument("--json", action="store_true")


def command(args: argparse.Namespace, out: TextIO) -> int:
    if args.json:
        emit_json(data(), out)
    else:
        emit(text(), out)
    return 0


def _ref(t: Target) -> tuple[int, int]:
    lay = cconv.IREE_VM_REF_T.layout(t)
    return lay.size, lay.align


def target_json(t: Target) -> dict[str, Any]:
    i64 = t.scalar("int64_t")
    ld = t.scalar("long double")
    ref_size, ref_align = _ref(t)
    return {
        "name": t.name, "triple": t.triple, "description": t.description,
        "aliases": [a for a, n in targets.ALIASES.items() if n == t.name],
        "triple_arches": [a for a, n in targets.TRIPLE_ARCHES.items() if n == t.name] +
                         (["arm", "armv5..armv8*", "thumbv5..thumbv8*"] if t.name == "armv7" else []),
        "pointer_size": t.pointer_size,
        "int64_member_align": i64.align, "int64_gnu_alignof": i64.preferred_align,
        "long_double": {"size": ld.size, "align": ld.align},
        "max_align": t.max_align, "max_align_is_pow2": t.max_align_is_pow2,
        "vm_ref": {"size": ref_size, "align": ref_align},
    }


def data() -> list[dict[str, Any]]:
    return [target_json(targets.get(n)) for n in targets.names()]


def text() -> list[str]:
    cols = [Column("target"), Column("triple"), Column("ptr", ">"), Column("i64", ">"),
            Column("i64 GNU", ">"), Column("long double", ">"), Column("iree_max_align_t", ">"),
            Column("vm_ref_t", ">")]
    rows = []
    for d in data():
        ld = d["long_double"]
        rows.append([d["name"], d["triple"], str(d["pointer_size"]), str(d["int64_member_align"]),
                     str(d["int64_gnu_alignof"]), f"{ld['size']}/{ld['align']}",
                     f"{d['max_align']} ({'pow2' if d['max_align_is_pow2'] else 'not pow2'})",
                     f"{d['vm_ref']['size']}/{d['vm_ref']['align']}"])
    out = ["data models (bytes; S/A = sizeof/alignment)"]
    out += render.table(cols, rows)
    out.append("i64: alignment of int64_t/double as a struct member (C11 _Alignof); i64 GNU: __alignof__,")
    out.append("  which iree_alignof uses; vm_ref_t: iree_vm_ref_t; iree_max_align_t: sizeof(long double)")
    out.append("  off Windows, the unit iree_sizeof_struct rounds to")
    aliases = "; ".join(f"{' '.join(d['aliases'])} ({d['name']})" for d in data() if d["aliases"])
    out += render.wrap(f"--target takes a name, its triple or an alias: {aliases}", subsequent=2)
    out += render.wrap(f"and any triple iree-compile takes (arch-vendor-os[-env], e.g. "
                       f"riscv32-pc-linux-elf): its architecture picks the data model: "
                       f"{targets.triple_arches_text()}", subsequent=2)
    return out


__all__ = ["add_parser", "command", "target_json", "data", "text"]
