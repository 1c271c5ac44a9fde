"""`ireeabi inspect MODULE.vmfb`: a compiled module's interface and, with --check-imports, whether its
imports resolve against the emulated native modules (layouts.modules) and lay out cleanly."""
from __future__ import annotations

import mmap
import os
from pathlib import Path
from typing import Any

from ireeabi.abi import cconv
from ireeabi.abi.targets import Target
from ireeabi.layouts import modules
from ireeabi.vm import imports as import_check
from ireeabi.vm import module_file as mf

from . import render
from .errors import CliError
from .render import Column


def _sizes(sig: cconv.Signature | None, target: Target) -> tuple[str, str]:
    """Argument/result buffer sizes on `target` (spans at 1 element, marked `+`)."""
    if sig is None:
        return "?", "?"
    out = []
    for frag in (sig.arguments, sig.results):
        n = len(frag.spans)
        lay = cconv.layout(frag, target, (1,) * n)
        out.append(f"{lay.size}{'+' if n else ''}")
    return out[0], out[1]


# The module reader's own first two steps (vm/module_file.py, bound here so a rename fails at
# import): the archive and FlatBuffer header checks (zip framing, minimum size, size prefix within
# the file, alignment, identifier), then flatcc's verification of the FlatBuffer itself. Both read
# only the bytes they check, so on a memory map they touch a few pages, not the file.
_check_framing = mf._locate
_verify_flatbuffer = mf._verify_flatbuffer


def load(path: str) -> mf.ModuleFile:
    """Read a module file for `inspect` and `run`. The file is memory-mapped (read-only) and its
    header and FlatBuffer are checked there first, so a large file that is no module is refused
    without being read; only a file that passes is read whole. OS errors (permissions...)
    propagate as OSError (the command line reports them)."""
    p = Path(path)
    if not p.exists():
        raise CliError(f"no module file at {path}")
    if not p.is_file():
        raise CliError(f"{path} is not a regular file (a module file is needed)")
    try:
        return mf.read_module(_read_checked(p))
    except OSError as e:
        if e.filename is not None:
            raise
        raise OSError(e.errno, e.strerror or str(e), path) from None  # a read names no path


def _read_checked(p: Path) -> bytes:
    with open(p, "rb") as f:
        view = None
        if os.fstat(f.fileno()).st_size >= mf.MIN_MODULE_BYTES:
            try:
                view = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError):  # a file that cannot be mapped is read as it is
                view = None
        if view is not None:
            with view:
                try:
                    _, fb, length = _check_framing(view)
                    _verify_flatbuffer(view, fb, length)
                except mf.ModuleFileError:
                    raise
                except Exception:  # noqa: BLE001 - left to the full read, which reports it
                    pass
        return f.read()


def data(m: mf.ModuleFile, target: Target, check: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": m.name, "version": m.version, "target": target.name,
        "requirements": list(m.requirement_names),
        "dependencies": [{"name": d.name, "minimum_version": d.minimum_version, "required": d.required}
                         for d in m.dependencies],
        "imports": [], "exports": [],
        "rodata": [{"ordinal": s.ordinal, "kind": s.kind, "offset": s.offset, "length": s.length}
                   for s in m.rodata_segments],
    }
    for f in m.imported_functions:
        a, r = _sizes(f.signature, target)
        out["imports"].append({"name": f.full_name, "cconv": f.cconv, "optional": f.optional,
                               "argument_bytes": a, "result_bytes": r})
    for f in m.exported_functions:
        a, r = _sizes(f.signature, target)
        out["exports"].append({"name": f.name, "cconv": f.cconv, "argument_bytes": a, "result_bytes": r})
    if check:
        reports = import_check.check_imports(m, modules.registered(), target)
        out["import_check"] = [r.as_dict() for r in reports]
        out["compatible"] = all(r.compatible for r in reports)
    return out


def text(d: dict[str, Any]) -> list[str]:
    lines = [f"module {d['name']} version {d['version']} on {d['target']}"
             f"; requires: {', '.join(d['requirements']) or 'nothing'}"]
    deps = ", ".join(f"{x['name']} >= {x['minimum_version']}{'' if x['required'] else ' (optional)'}"
                     for x in d["dependencies"])
    lines.append(f"dependencies: {deps or 'none'}")
    cols = [Column("#", ">"), Column("import", shrink=True, min_width=20), Column("cconv"),
            Column("args B", ">"), Column("results B", ">")]
    lines.append("")
    lines += render.table(cols, [(str(i), x["name"] + (" (optional)" if x["optional"] else ""),
                                  x["cconv"] or "-", x["argument_bytes"], x["result_bytes"])
                                 for i, x in enumerate(d["imports"])])
    cols[1] = Column("export", shrink=True, min_width=20)
    lines.append("")
    lines += render.table(cols, [(str(i), x["name"], x["cconv"] or "-", x["argument_bytes"],
                                  x["result_bytes"]) for i, x in enumerate(d["exports"])])
    lines.append("(sizes with + are for 1 element per span)")
    lines.append("")
    lines += render.table([Column("rodata", ">"), Column("kind"), Column("file offset", ">"),
                           Column("bytes", ">")],
                          [(str(s["ordinal"]), s["kind"], str(s["offset"]), str(s["length"]))
                           for s in d["rodata"]])
    if "import_check" in d:
        lines.append("")
        bad = [r for r in d["import_check"] if not r["compatible"]]
        lines.append(f"import check on {d['target']}: "
                     + ("all compatible" if not bad else f"{len(bad)} of {len(d['import_check'])} "
                        "imports incompatible"))
        for r in d["import_check"]:
            mark = "ok " if r["compatible"] else "BAD"
            status = r["status"]
            if status == "ok":
                status = "resolves" + ("" if r["compatible"] else f", but IREE's layout rules disagree "
                                       f"on {d['target']}")
            lines += render.wrap(f"  {mark} {r['name']} {r['cconv'] or ''}: {status}"
                                 + (f" - {r['message']}" if r["message"] else ""), subsequent=8)
            for f in r["findings"]:
                lines += render.wrap(f"{f['rule']}: {f['message']}", indent=8, subsequent=10)
            for f in r["notes"]:
                lines += render.wrap(f"note {f['rule']}: {f['message']}", indent=8, subsequent=10)
    return lines
