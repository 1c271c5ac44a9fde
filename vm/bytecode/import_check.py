"""Check a compiled module's imports against native module descriptors before running it.

Mirrors what IREE's context does when it resolves imports (runtime/src/iree/vm/context.c): a
dependency must be registered (unless optional) with at least its minimum version; each imported
function must exist in its module (unless optional) and, when the import declares a cconv, match the
export's byte for byte ("signature mismatch" otherwise). On top, every resolved signature is run
through the layout rules of `abi.cconv` for the chosen data model, so an import that would resolve but
misread its arguments is reported too.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from ...abi import cconv, targets
from ...abi.cconv import Finding  # not cconv.Finding: the field `cconv` hides the module
from ...abi.printable import printable
from ...abi.targets import Target
from ...layouts.modules import ModuleDescriptor

from .module_file import ModuleFile
from ..releases import import_signature_note
from ..shims import SIGNATURE_MISMATCH

SPAN_SWEEP = range(0, 4)  # span counts tried per span when checking layout rules
# Findings about the C struct of a multi-span fragment's fixed part are hazards for a reader that
# starts at its sizeof; the emulated modules read such fragments with the fixed reader, whose own
# comparison is what decides compatibility. They are reported as notes.
HAZARD_RULES = ("fixed-struct-sizeof", "fixed-struct-offset")


@dataclass
class ImportReport:
    full_name: str
    cconv: str | None
    status: str  # "ok", "missing", "mismatch", "version", "no-module", "optional-missing"
    message: str = ""
    export_cconv: str | None = None
    findings: list[Finding] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.rule not in HAZARD_RULES]

    @property
    def notes(self) -> list[Finding]:
        return [f for f in self.findings if f.rule in HAZARD_RULES]

    @property
    def compatible(self) -> bool:
        return self.status in ("ok", "optional-missing") and not self.errors

    def as_dict(self) -> dict:
        return {"name": self.full_name, "cconv": self.cconv, "status": self.status, "message": self.message,
                "export_cconv": self.export_cconv, "compatible": self.compatible,
                "findings": [{"rule": f.rule, "message": f.message} for f in self.errors],
                "notes": [{"rule": f.rule, "message": f.message} for f in self.notes]}


def _findings(sig: cconv.Signature, target: Target) -> list[cconv.Finding]:
    out: list[cconv.Finding] = []
    seen: set[tuple[str, str]] = set()
    for frag in (sig.arguments, sig.results):
        n = len(frag.spans)
        for spans in itertools.product(SPAN_SWEEP, repeat=n):
            lay = cconv.layout(frag, target, spans)
            found = list(lay.findings)
            if n > 1:  # several spans: read by a hand-written reader, checked in its fixed form
                found += cconv.compare_reader(lay, cconv.span_reader(frag, target, spans, form="fixed"))
            for f in found:
                if (f.rule, frag.text) not in seen:  # one example per rule and fragment
                    seen.add((f.rule, frag.text))
                    out.append(f)
    return out


def check_imports(module: ModuleFile, descriptors: list[ModuleDescriptor],
                  target: "Target | str" = "x86_64") -> list[ImportReport]:
    t = targets.get(target)
    by_name = {d.name: d for d in descriptors}
    deps = {d.name: d for d in module.dependencies}
    reports: list[ImportReport] = []
    for imp in module.imported_functions:
        mod_name, _, fn = imp.full_name.partition(".")
        desc = by_name.get(mod_name)
        if desc is None:
            status = "optional-missing" if imp.optional else "no-module"
            reports.append(ImportReport(imp.full_name, imp.cconv, status,
                                        f"no native module `{printable(mod_name)}` is registered"))
            continue
        dep = deps.get(mod_name)
        if dep is not None and desc.version < dep.minimum_version:
            reports.append(ImportReport(imp.full_name, imp.cconv, "version",
                                        f"module `{printable(mod_name)}` has version {desc.version}, the program "
                                        f"requires at least {dep.minimum_version}"))
            continue
        export = desc.export(fn)
        if export is None:
            status = "optional-missing" if imp.optional else "missing"
            reports.append(ImportReport(imp.full_name, imp.cconv, status,
                                        f"`{printable(mod_name)}` exports no function `{printable(fn)}`"))
            continue
        if imp.cconv is not None and imp.cconv != export.cconv:
            note = import_signature_note(imp.full_name, imp.cconv)
            reports.append(ImportReport(imp.full_name, imp.cconv, "mismatch",
                                        f"import signature {printable(imp.cconv)} != export signature {export.cconv}"
                                        + (f"; {note}" if note else ""),
                                        export.cconv))
            continue
        sig = cconv.parse(export.cconv)
        reports.append(ImportReport(imp.full_name, imp.cconv, "ok", "", export.cconv, _findings(sig, t)))
    return reports


def hazard_hint(error_text: str, reports: "list[ImportReport]", target: str) -> str:
    """For a shim's signature mismatch (`error_text` has vm.shims' SIGNATURE_MISMATCH) at an import
    whose layout on `target` the import check (`reports`) already finds wrong: the words that say
    so and the command that shows it; else ''."""
    if SIGNATURE_MISMATCH not in error_text:
        return ""
    for r in reports:
        if r.errors and r.full_name in error_text:
            return (f"this is the layout hazard `ireeabi inspect MODULE --check-imports --target "
                    f"{target}` predicts for {r.full_name} ({r.errors[0].rule})")
    return ""
