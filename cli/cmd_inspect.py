"""`ireeabi inspect MODULE.vmfb`: a compiled module's interface and, with --check-imports, whether its
imports resolve against the emulated native modules (layouts.modules) and lay out cleanly."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ireeabi.abi import cconv
from ireeabi.abi.targets import Target
from ireeabi.layouts import modules
from ireeabi.vm import imports as import_check
from ireeabi.vm import module_file as mf

from . import render
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


def load(path: str) -> mf.ModuleFile:
    data = Path(path).read_bytes() if Path(path).is_file() else None
    if data is None:
        raise mf.ModuleFileError(f"no module file at {path}", 0)
    return mf.read_module(data)


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
