"""`ireeabi inspect MODULE.vmfb`: what iree-dump-module shows of a compiled module (typed signatures
and reflection attributes, the function table, the module state, `--disassemble`), the argument and
result buffer sizes of every import and export on a data model, and with --check-imports, whether
the imports resolve against the emulated native modules (layouts.modules) and lay out cleanly.

A module of iree-compile's default execution model imports the full `hal` module: unless a `hal`
declaration is registered or given, its imports are checked against IREE's export table
(`layouts.hal_module`), and each import of a span-reading dispatch shim gets that shim's sizeof site
on the target (`layouts.hal_module_dispatch`): a note where IREE's shim reads every instance right
(latent), findings and incompatible where it misreads some (live).

With --check-imports, inspect also lists every executable the module makes (module_executables: the
format and image each `hal.executable.create` / `hal_loader.executable.load` call passes) and where
it would run on the target (`hal.local.library_loader.place_library`: natively, in the emulated CPU,
under wasmtime, in the vmvx interpreter, or refused with the status the load would end with). Of
the variants of one executable (one per format, the same global) the module creates the first the
device supports, as iree-compile's initializers choose."""
from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, Sequence, TextIO

from ..abi import cconv
from ..abi.printable import printable, printable_text
from ..vm.bytecode import module_file as mf
from ..vm import releases

from . import render
from .errors import CliError
from .loading import DEFAULT_TARGET, load_module, load_native_modules, parse_max_steps, select_targets
from .render import Column, emit_json

# Start-up: what only some inspections show (the disassembler, the import checker, the executables'
# placement, the full HAL's declarations) is imported by the functions that show it.
if TYPE_CHECKING:
    from ..abi.targets import Target
    from ..layouts.modules import ModuleDescriptor


_SPAN_LETTERS = "nmkl"  # element counts of a fragment's spans, in order, in the text's sizes


def add_parser(sub: "argparse._SubParsersAction") -> None:
    p = sub.add_parser("inspect", help="a compiled .vmfb module's imports, exports and rodata",
                       description="Reads a .vmfb. --check-imports resolves every import against the "
                                   "emulated native modules (hal_inline, hal_loader, and any registered): "
                                   "missing functions, cconv mismatches, versions and layout findings on "
                                   "the target. Exit 1 when an import is incompatible.")
    p.add_argument("module", metavar="MODULE.vmfb")
    p.add_argument("--target", "-t", metavar="T", help=f"data model (default {DEFAULT_TARGET})")
    p.add_argument("--check-imports", action="store_true",
                   help="check every import, and say where each executable of the module runs on the "
                        "target (natively, emulated CPU, wasmtime, vmvx interpreter) or why it is refused")
    p.add_argument("--emulate-kernels", action="store_true",
                   help="with --check-imports: place host kernels in the emulated CPU, as `run "
                        "--emulate-kernels` runs them")
    p.add_argument("--native-module", action="append", default=[], metavar="PKG.MOD[:FACTORY]|FILE",
                   help="with --check-imports: resolve against this native module too (a "
                        "declaration in Python, or a .toml/.json file of its exports; repeatable)")
    p.add_argument("--max-steps", "--max_steps", dest="max_steps", type=parse_max_steps, default=None,
                   metavar="N", help="with --check-imports: the instructions each call of a library's load "
                        "(its initializers, its query) may run, emulated or under wasmtime, before the "
                        "load is refused with DEADLINE_EXCEEDED (default 10000000; inspect runs no "
                        "module code natively, so no CPU-time bound is needed)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--disassemble", action="store_true",
                   help="append the bytecode disassembly, as iree-dump-module --output=disassembly "
                        "prints it (with --json: each function's lines)")
    p.add_argument("--bytecode-offsets", "--bytecode_offsets", dest="bytecode_offsets",
                   action="store_true", help="with --disassemble: prefix each op's [offset]")


def command(args: argparse.Namespace, out: TextIO) -> int:
    """Exit 1 when --check-imports finds an incompatible import (see `output`)."""
    (target,) = select_targets(args.target, False)
    native = load_native_modules(args.native_module)
    if native and not args.check_imports:
        raise CliError("--native-module applies to --check-imports")
    if args.emulate_kernels and not args.check_imports:
        raise CliError("--emulate-kernels applies to --check-imports")
    if args.max_steps is not None and not args.check_imports:
        raise CliError("--max-steps applies to --check-imports")
    result, status = output(load_module(args.module, any_version=True), target, args.check_imports, args.json,
                            args.disassemble, args.bytecode_offsets, native, args.emulate_kernels,
                            args.max_steps)
    if args.json:
        emit_json(result, out)
    else:
        out.write(result)
    return status


def _span_element_bytes(frag: cconv.Fragment, target: Target) -> list[int]:
    """Bytes one element of each span adds to the packed buffer: the span's values, aligned among
    themselves as the VM packs them (an element is not rounded up to its alignment)."""
    lay = cconv.layout(frag, target, (1,) * len(frag.spans))
    out = []
    for k in range(len(frag.spans)):
        vals = [v for v in lay.values if v.span == k]
        out.append(max(v.offset + v.size for v in vals) - min(v.offset for v in vals) if vals else 0)
    return out


def _sizes(sig: cconv.Signature | None, target: Target) -> dict[str, Any]:
    """Argument/result buffer sizes on `target`: the bytes the VM allocates with every span empty,
    and the bytes each element of each span adds (null when the cconv does not parse)."""
    out: dict[str, Any] = {}
    for side, frag in (("argument", sig.arguments if sig else None),
                       ("result", sig.results if sig else None)):
        if frag is None:
            out[f"{side}_bytes"] = out[f"{side}_span_element_bytes"] = None
            continue
        out[f"{side}_bytes"] = cconv.vm_size(frag, target, (0,) * len(frag.spans))
        out[f"{side}_span_element_bytes"] = _span_element_bytes(frag, target)
    return out


def _size_cell(base: int | None, elements: list[int] | None) -> str:
    """`48`, or `48+4n+24m` with spans (n, m: their element counts), `?` when unknown."""
    if base is None or elements is None:
        return "?"
    return f"{base}" + "".join(f"+{e}{_SPAN_LETTERS[k % 4]}" for k, e in enumerate(elements))


def _typed(cconv_text: str | None) -> str | None:
    """`(i32, i64) -> (!vm.ref<?>)` as iree-dump-module prints a signature (None without a cconv;
    the cconv itself when IREE's printer would refuse it)."""
    from ..tooling import disassemble as dis

    if cconv_text is None:
        return None
    try:
        return dis.signature_text(cconv_text)
    except ValueError:
        return cconv_text


def _attrs(attrs: tuple[mf.Attr, ...]) -> list[dict[str, str]]:
    return [{"key": a.key, "value": a.value} for a in attrs]


def executables(m: mf.ModuleFile, target: Target, emulate_kernels: bool = False,
                max_steps: int | None = None) -> list[dict[str, Any]]:
    """Each executable the module makes, with where it runs on `target` (see the module docstring):
    its call site, format, image segment, global, placement (library_loader.Placement.as_dict) and
    `selected`: whether it is the variant the module would create on the target. `max_steps`: the
    instruction budget of each call the load makes (None: library_loader.PLACE_MAX_INSTRUCTIONS)."""
    from ..hal.local import library_loader
    from ..base.machine import machine as _machine

    from . import module_executables

    machine = _machine(target.name)
    out: list[dict[str, Any]] = []
    for e in module_executables.executables(m):
        formats = e.formats(m)
        image = e.image(m)
        x: dict[str, Any] = {
            "function": e.function, "pc": e.pc, "import": e.import_name,
            "format": formats[0] if len(formats) == 1 else None, "format_rodata": list(e.format_rodata),
            "image_rodata": list(e.image_rodata), "image_bytes": len(image) if image is not None else None,
            "global": e.global_ordinal}
        if len(formats) == 1:
            x.update(library_loader.place_library(formats[0], image, machine,
                                                  vmvx=e.import_name == "hal.executable.create",
                                                  emulate_host=emulate_kernels,
                                                  max_instructions=max_steps or
                                                  library_loader.PLACE_MAX_INSTRUCTIONS).as_dict())
        else:
            x.update({"format": None, "target": target.name, "placement": "refused", "runs": False,
                      "where": library_loader.PLACES["refused"], "status": None, "message": "",
                      "reason": "the format operand is not one rodata segment: its format is unknown",
                      "runs_on": None, "checked": False})
        out.append(x)
    # The module asks the device for each variant's format and creates the first one supported: a
    # variant refused with no loader is passed over; the first other one is the one created.
    groups: dict[Any, list[dict[str, Any]]] = {}
    for x in out:
        groups.setdefault(x["global"] if x["global"] is not None else ("pc", x["pc"]), []).append(x)
    for n, variants in enumerate(groups.values()):
        supported = [x for x in variants if x["runs"] or x["checked"]]
        for x in variants:
            x["executable"] = n
            x["selected"] = bool(supported) and x is supported[0]
            x["executable_runs"] = bool(supported) and supported[0]["runs"]
    return out


def kernels_run(executables: list[dict[str, Any]]) -> bool:
    """True when every executable of the module gets a variant that runs."""
    return all(x["executable_runs"] for x in executables)


def data(m: mf.ModuleFile, target: Target, check: bool, disassemble: bool = False,
         bytecode_offsets: bool = False, native_modules: Sequence[ModuleDescriptor] = (),
         emulate_kernels: bool = False, max_steps: int | None = None) -> dict[str, Any]:
    """Everything `inspect` reports, as the documented JSON object."""
    from ..layouts.module_sources import checked_against
    from ..layouts.ref import iree_vm_ref_t
    from ..tooling import disassemble as dis
    from ..vm.bytecode import import_check as import_check

    ref_size = iree_vm_ref_t.layout(target).size
    # A module of another release's bytecode version is listed as far as its FlatBuffer goes (as
    # iree-dump-module lists it); its bytecode is another ISA's, so nothing decodes it.
    taken = mf.takes_bytecode_version(m.bytecode_version_major, m.bytecode_version_minor)
    hal_minimum, hal_imports = mf.hal_needs(m.dependencies, m.imported_functions)
    if not taken:
        refusal: tuple[str, str] | None = (
            "INVALID_ARGUMENT, bytecode version mismatch",
            releases.bytecode_version_refusal(m.bytecode_version_major, m.bytecode_version_minor,
                                              hal_minimum, hal_imports))
    else:  # a module of this bytecode whose hal imports are another release's (IREE 3.11's)
        why = None if any(d.name == "hal" for d in native_modules) else \
            releases.hal_signature_refusal(hal_imports)
        refusal = ("INTERNAL, import signature mismatch", why) if why else None
    out: dict[str, Any] = {
        "name": m.name, "version": m.version, "target": target.name,
        "bytecode_version": f"{m.bytecode_version_major}.{m.bytecode_version_minor}",
        "runtime_takes": refusal is None,
        "refusal_status": refusal[0] if refusal else None,
        "refusal": refusal[1] if refusal else None,
        "requirements": list(m.requirement_names),
        "attributes": _attrs(m.attrs),
        "types": list(m.types),
        "dependencies": [{"name": d.name, "minimum_version": d.minimum_version, "required": d.required}
                         for d in m.dependencies],
        "imports": [], "exports": [], "functions": [],
        "state": {"global_bytes": m.global_bytes_capacity, "global_refs": m.global_ref_count,
                  "ref_bytes": ref_size,
                  "total_bytes": m.global_bytes_capacity + ref_size * m.global_ref_count},
        "rodata": [{"ordinal": s.ordinal, "kind": s.kind, "offset": s.offset, "length": s.length}
                   for s in m.rodata_segments],
        "rwdata": list(m.rwdata_segments),
        "flatbuffer_bytes": m.flatbuffer_length, "bytecode_bytes": len(m.bytecode),
    }
    for f in m.imported_functions:
        out["imports"].append({"ordinal": f.ordinal, "name": f.full_name, "cconv": f.cconv,
                               "signature": _typed(f.cconv), "optional": f.optional,
                               "attributes": _attrs(f.attrs), **_sizes(f.signature, target)})
    for e in m.exported_functions:
        out["exports"].append({"ordinal": e.ordinal, "name": e.name,
                               "internal_ordinal": e.internal_ordinal, "cconv": e.cconv,
                               "signature": _typed(e.cconv), "attributes": _attrs(e.attrs),
                               **_sizes(e.signature, target)})
    for d in m.function_descriptors:
        fn: dict[str, Any] = {
            "ordinal": d.ordinal, "name": dis.function_name(m, d.ordinal),
            "bytecode_offset": d.bytecode_offset, "bytecode_length": d.bytecode_length,
            "block_count": d.block_count, "i32_register_count": d.i32_register_count,
            "ref_register_count": d.ref_register_count, "requirements": d.requirements,
            "requirement_names": list(mf.feature_names(d.requirements)),
            "aliases": [e.name for e in m.exported_functions if e.internal_ordinal == d.ordinal]}
        if disassemble and taken:
            fn["disassembly"] = dis.function_lines(m, d.ordinal, bytecode_offsets)
        out["functions"].append(fn)
    if check:
        reports = import_check.check_imports(m, checked_against(m, native_modules), target)
        passed = _dispatch_call_spans(m) if taken else {}
        out["import_check"] = [_with_sizeof_site(r.as_dict(), target, passed.get(k, ()))
                               for k, r in enumerate(reports)]
        out["compatible"] = all(r["compatible"] for r in out["import_check"])
        if taken:
            out["executables"] = executables(m, target, emulate_kernels, max_steps)
            out["kernels_run"] = kernels_run(out["executables"])
    return out


def _dispatch_call_spans(m: mf.ModuleFile) -> dict[int, list[tuple[int, ...]]]:
    """Import ordinal of each full-HAL dispatch import -> the span counts the module's
    `vm.call.variadic`s of it pass (their segment sizes at the span positions), in bytecode order.
    Empty when the module imports no such shim or its bytecode does not decode (the import check
    then rests on the swept counts alone)."""
    from ..layouts import hal_module_dispatch
    from ..vm.bytecode import decoder, isa

    wanted = {k: f.signature.arguments for k, f in enumerate(m.imported_functions)
              if f.signature is not None and any(s.full_name == f.full_name and s.cconv == f.cconv
                                                 for s in hal_module_dispatch.SHIMS)}
    if not wanted:
        return {}
    try:
        decoded = decoder.decode_module(m)
    except decoder.DecodeError:
        return {}
    out: dict[int, list[tuple[int, ...]]] = {}
    for insts in decoded.values():
        for inst in insts:
            callee, sizes = inst.operands.get("callee"), inst.operands.get("segment_sizes")
            if sizes is None or not isinstance(callee, int) or not callee & isa.FUNCTION_ORDINAL_IMPORT_BIT:
                continue
            frag = wanted.get(callee & ~isa.FUNCTION_ORDINAL_IMPORT_BIT)
            if frag is None or len(sizes) != len(frag.items):
                continue  # a malformed call: the VM refuses it before any shim reads it
            spans = tuple(n for n, item in zip(sizes, frag.items) if isinstance(item, cconv.Span))
            if all(n <= cconv.MAX_SPAN_COUNT for n in spans):
                counts = out.setdefault(callee & ~isa.FUNCTION_ORDINAL_IMPORT_BIT, [])
                if spans not in counts:
                    counts.append(spans)
    return out


def _with_sizeof_site(r: dict[str, Any], target: Target,
                      passed: Sequence[tuple[int, ...]] = ()) -> dict[str, Any]:
    """An import report of a full-HAL dispatch shim with IREE's shim's sizeof site on `target`
    (`sizeof_site`, 0..3 elements per span) and the instances the module's calls pass (`passed`):
    a note when all are read right; otherwise their findings, and incompatible."""
    from ..layouts import hal_module_dispatch

    cc = r["cconv"] or r["export_cconv"]  # an import without a cconv takes the export's
    shims = [s for s in hal_module_dispatch.SHIMS if s.full_name == r["name"] and s.cconv == cc]
    if r["status"] != "ok" or not shims:
        return r
    site = hal_module_dispatch.sizeof_site(shims[0], target)
    r["sizeof_site"] = site.as_dict()
    r["notes"].append({"rule": "sizeof-site", "message": f"{site.shim.function} starts the spans at "
                                                         f"sizeof: {site.summary()}"})
    found = list(site.findings)
    frag = cconv.parse(site.shim.cconv).arguments
    misread = []
    for spans in passed:
        bad = cconv.compare_reader(cconv.layout(frag, target, spans),
                                   hal_module_dispatch.reader(site.shim, target, spans))
        if bad:
            misread.append(spans)
            found += bad[:1]
    if passed:
        shown = ", ".join(str(list(x)) for x in passed)
        r["sizeof_site"]["module_spans"] = [list(x) for x in passed]
        r["notes"].append({"rule": "sizeof-site", "message": (
            f"the module's calls pass spans {shown}: the shim "
            + ("reads each right" if not misread else f"misreads {len(misread)} of {len(passed)}"))})
    if found:
        r["findings"] += [{"rule": f.rule, "message": f.message} for f in found]
        r["compatible"] = False
    return r


def _signature_lines(label: str, entries: list[dict[str, Any]]) -> list[str]:
    """iree-dump-module's listing: `[  N] name(types) -> (types)`, then each attribute indented
    (a line longer than the width continues further indented)."""
    lines = [label]
    for x in entries:
        sig = x["signature"]
        mark = "?" if x.get("optional") else ""
        lines += render.wrap(f"[{x['ordinal']:3d}] {mark}{printable(x['name'])}{sig if sig else ''}", indent=2,
                             subsequent=10)
        for a in x["attributes"]:
            lines += render.wrap(f"{printable_text(a['key'])}: {printable_text(a['value'])}", indent=8, subsequent=10)
    return lines


def _missing_modules(reports: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Imports whose module is not registered at all, by module (one line each in the text)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in reports:
        if r["status"] == "no-module":
            groups.setdefault(r["name"].split(".", 1)[0], []).append(r)
    return groups


def _import_check_lines(d: dict[str, Any]) -> list[str]:
    lines = [""]
    bad = [r for r in d["import_check"] if not r["compatible"]]
    lines.append(f"import check on {d['target']}: "
                 + ("all compatible" if not bad else f"{len(bad)} of {len(d['import_check'])} "
                    "imports incompatible"))
    missing = _missing_modules(d["import_check"])
    shown: set[str] = set()
    for r in d["import_check"]:
        module = r["name"].split(".", 1)[0]
        if module in missing:
            if module in shown:
                continue
            shown.add(module)
            n = len(missing[module])
            lines += render.wrap(f"  BAD {printable(module)}.* ({n} import{'s' if n > 1 else ''}): no-module - "
                                 f"no native module `{printable(module)}` is registered", subsequent=8)
            continue
        mark = "ok " if r["compatible"] else "BAD"
        status = r["status"]
        if status == "ok":
            status = "resolves" + ("" if r["compatible"] else f", but IREE's layout rules disagree "
                                   f"on {d['target']}")
        lines += render.wrap(f"  {mark} {printable(r['name'])} {printable(r['cconv'] or '')}: {status}"
                             + (f" - {r['message']}" if r["message"] else ""), subsequent=8)
        for f in r["findings"]:
            lines += render.wrap(f"{f['rule']}: {f['message']}", indent=8, subsequent=10)
        for f in r["notes"]:
            lines += render.wrap(f"note {f['rule']}: {f['message']}", indent=8, subsequent=10)
    return lines


def text(d: dict[str, Any]) -> list[str]:
    lines = [f"module '{printable(d['name'])}' version {d['version']} on {d['target']}"
             f"; requires: {', '.join(d['requirements']) or 'nothing'}"]
    deps = ", ".join(f"{printable(x['name'])} >= {x['minimum_version']}{'' if x['required'] else ' (optional)'}"
                     for x in d["dependencies"])
    lines.append(f"dependencies: {deps or 'none'}")
    for a in d["attributes"]:
        lines += render.wrap(f"attribute {printable_text(a['key'])}: {printable_text(a['value'])}", subsequent=4)
    st = d["state"]
    lines.append(f"module state: {st['global_bytes']} bytes, {st['global_refs']} refs, "
                 f"~{st['total_bytes']} bytes total on {d['target']} (iree_vm_ref_t: "
                 f"{st['ref_bytes']} bytes)")
    lines.append("")
    lines += _signature_lines("imported functions:", d["imports"])
    lines.append("")
    lines += _signature_lines("exported functions:", d["exports"])
    cols = [Column("#", ">"), Column("import", shrink=True, min_width=20), Column("cconv"),
            Column("args B", ">"), Column("results B", ">")]
    lines.append("")
    lines += render.table(cols, [(str(x["ordinal"]), x["name"] + (" (optional)" if x["optional"] else ""),
                                  x["cconv"] or "-", _size_cell(x["argument_bytes"],
                                                                x["argument_span_element_bytes"]),
                                  _size_cell(x["result_bytes"], x["result_span_element_bytes"]))
                                 for x in d["imports"]])
    cols[1] = Column("export", shrink=True, min_width=20)
    lines.append("")
    lines += render.table(cols, [(str(x["ordinal"]), x["name"], x["cconv"] or "-",
                                  _size_cell(x["argument_bytes"], x["argument_span_element_bytes"]),
                                  _size_cell(x["result_bytes"], x["result_span_element_bytes"]))
                                 for x in d["exports"]])
    lines += render.wrap("(buffer bytes on the target with every span empty; +Nn, +Nm: bytes each "
                         "element of the first, second span adds before alignment)")
    lines.append("")
    lines += render.table(
        [Column("function", ">"), Column("offset"), Column("length", ">"), Column("blocks", ">"),
         Column("i32 #", ">"), Column("ref #", ">"), Column("requires"),
         Column("aliases", shrink=True, min_width=12)],
        [(str(f["ordinal"]), f"{f['bytecode_offset']:08X}", str(f["bytecode_length"]),
          str(f["block_count"]), str(f["i32_register_count"]), str(f["ref_register_count"]),
          " | ".join(f["requirement_names"]) or "-", ", ".join(f["aliases"]) or "-")
         for f in d["functions"]])
    lines.append(f"(bytecode: {d['bytecode_bytes']} bytes; FlatBuffer: {d['flatbuffer_bytes']} bytes)")
    lines.append("")
    lines += render.table([Column("rodata", ">"), Column("kind"), Column("file offset", ">"),
                           Column("bytes", ">")],
                          [(str(s["ordinal"]), s["kind"], str(s["offset"]), str(s["length"]))
                           for s in d["rodata"]])
    if "import_check" in d:
        lines += _import_check_lines(d)
    if "executables" in d:
        lines += _executable_lines(d)
    if not d["runtime_takes"]:
        lines += ["", *render.wrap(f"this runtime refuses the module ({d['refusal_status']}): "
                                   f"{d['refusal']}", subsequent=4)]
    return lines


def _executable_lines(d: dict[str, Any]) -> list[str]:
    exes = d["executables"]
    lines = [""]
    if not exes:
        return lines + [f"executables on {d['target']}: none (the module makes no executable)"]
    verdicts = {x["executable"]: x["executable_runs"] for x in exes}
    refused = sum(not v for v in verdicts.values())
    lines.append(f"executables on {d['target']}: "
                 + (f"{len(verdicts)} of {len(verdicts)} run" if not refused else
                    f"{refused} of {len(verdicts)} refused"))
    for x in exes:
        mark = "ok " if x["runs"] else "BAD" if not x["executable_runs"] else "-  "
        where = x["where"] if x["runs"] else f"refused, {x['status']}" if x["status"] else "refused"
        lines += render.wrap(f"  {mark} {printable(x['format']) if x['format'] else '?'}: {where}"
                             + (f" - {x['message']}" if x["message"] else ""), subsequent=8)
        if x["reason"]:
            lines += render.wrap(x["reason"], indent=8, subsequent=10)
        image = f"rodata {x['image_rodata'][0]} ({x['image_bytes']} bytes)" if x["image_bytes"] is not None \
            else "an image not known before it runs"
        lines += render.wrap(f"made by {printable(x['import'])} in {printable(x['function'])} at pc 0x{x['pc']:X} from {image}",
                             indent=8, subsequent=10)
        if not x["selected"] and x["runs"]:
            lines += render.wrap("note: another variant of this executable comes first", indent=8,
                                 subsequent=10)
    if any(not x["executable_runs"] and not x["checked"] for x in exes):
        lines += render.wrap("(no loader: a module iree-compile made asks the device for each format "
                             "first and, none supported, stops with its own failure before any load)")
    return lines


def output(module: mf.ModuleFile, target: Target, check: bool, as_json: bool,
           disassemble: bool, bytecode_offsets: bool,
           native_modules: Sequence[ModuleDescriptor] = (), emulate_kernels: bool = False,
           max_steps: int | None = None) -> tuple[Any, int]:
    """(output: the JSON object or the text, exit status) of `inspect`: 1 when this runtime refuses
    the module's bytecode version (another IREE release's; listed all the same) or --check-imports
    finds an incompatible import (executables refused on the target are reported, in `kernels_run`
    and the text, without changing the status: a module of host kernels inspected for another
    target is a question, not an error). `--disassemble` appends iree-dump-module's disassembly
    text verbatim (its lines are as long as the tool's), or adds each function's lines to the JSON."""
    d = data(module, target, check, disassemble and as_json, bytecode_offsets, native_modules, emulate_kernels,
             max_steps)
    status = 1 if check and not d["compatible"] or not d["runtime_takes"] else 0
    if as_json:
        return d, status
    out = "".join(line + "\n" for line in text(d))
    if disassemble and mf.takes_bytecode_version(module.bytecode_version_major,
                                                 module.bytecode_version_minor):
        from ..tooling import disassemble as dis

        out += "\n" + dis.disassembly(module, bytecode_offsets=bytecode_offsets)
    elif disassemble:
        out += f"\n(no disassembly: bytecode {d['bytecode_version']} is another release's ISA)\n"
    return out, status


__all__ = ["add_parser", "command", "output", "data", "text", "executables", "kernels_run"]
