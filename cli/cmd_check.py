"""`ireeabi check CCONV`: every disagreement between IREE's layout rules, with the bytes involved.

Each instance (target x side x span counts) is laid out by `cconv.layout`, whose findings compare
the VM's size rule, its packer and the generic shim structs; fragments with spans are also read by
the hand-written span readers (`cconv.span_reader`, each of `cconv.READER_FORMS`). Every finding
comes with the byte ranges it is about, drawn under a hex dump of a sample buffer packed by
`abi.cconv.codec` with recognisable values (every byte of value #k is k).

A cconv that is the full `hal` module's `command_buffer.dispatch[.indirect]` is also reported as that
shim's sizeof site per target (`layouts.hal_module_dispatch.sizeof_site`): IREE's shim starts the spans
at sizeof of the fixed part's C struct, latent where that reads every instance right, live elsewhere.
"""
from __future__ import annotations

import argparse
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence, TextIO

from ..abi import cconv
from ..abi.cconv import Finding, FragmentLayout, ReaderView
from ..abi.layout import Struct
from ..abi.targets import Target
from ..layouts import hal_module_dispatch
from ..layouts.hal_module_dispatch import SizeofSite

from . import describe, render
from .errors import CliError
from .loading import (add_struct_source_options, add_svg_option, add_target_options, own_struct,
                      select_targets)
from .render import Mark, emit, emit_json, write_svg
from .resolve import (SWEEP_CAP, SWEEP_MAX, CconvInput, Sweep, parse_spans, require_cconv,
                      span_instances, sweep_of)

PACKED, READ, OTHER = "^", "r", "!"
MAX_ALSO = 8  # instances listed by name after the first one of a repeated finding


def add_parser(sub: "argparse._SubParsersAction") -> None:
    p = sub.add_parser("check", help="every disagreement between IREE's layout rules for a cconv",
                       description="Findings of the cconv rules and of the hand-written span readers, "
                                   "with the bytes involved. Without --spans, counts 0..3 per span are "
                                   "swept. Exit 0: no finding, 1: findings, 2: bad input.")
    p.add_argument("cconv", metavar="CCONV")
    add_target_options(p)
    add_struct_source_options(p, "--struct names")
    p.add_argument("--struct", metavar="NAME",
                   help="with --header or --dwarf: the struct a native shim reads the buffer through "
                        "(the whole buffer, or the fixed part before the first span), checked against "
                        "the VM's packing instead of IREE's generic shim struct")
    p.add_argument("--side", choices=["arguments", "results"], default="arguments",
                   help="which buffer of a whole signature --struct describes (default arguments)")
    add_svg_option(p, "each instance's packing against the struct its shim reads, disagreements "
                      "outlined in red")


def command(args: argparse.Namespace, out: TextIO) -> int:
    """Exit 0: no finding, 1: findings."""
    inp = require_cconv(args.cconv)
    spans = parse_spans(args.spans)
    if args.header or args.dwarf:
        if not args.struct:
            raise CliError("--header and --dwarf name the file of --struct NAME; give the struct")
        tgts, struct_for, source = own_struct(args, args.struct)
        for t in tgts:
            struct_for(t)  # a bad header or name is reported before any output
        res = run(inp, tgts, spans, struct_for, args.side)
        side = args.side if inp.signature is not None else "the fragment"
        res.read_through = f"{side} read through {args.struct} ({source})"
    else:
        if args.struct or args.include_dirs or args.defines:
            raise CliError("--struct, -I and -D need --header FILE.h or --dwarf FILE")
        res = run(inp, select_targets(args.target, args.all_targets), spans)
    write_svg(args.svg, lambda picture: picture.check_svg(res))
    if args.json:
        emit_json(data(res), out)
    else:
        emit(text(res, inp), out)
    return res.exit_code


@dataclass(frozen=True)
class Involved:
    label: str
    char: str
    offset: int
    size: int

    def describe(self) -> str:
        end = self.offset + self.size - 1
        span = f"{self.offset}..{end}" if self.size > 1 else f"{self.offset}"
        return f"{self.char} {self.label} {span}"


@dataclass
class Annotated:
    finding: Finding
    involved: list[Involved]


@dataclass(eq=False)  # identity: grouped by object
class Instance:
    target: Target
    side: str
    layout: "FragmentLayout | None"  # None: no finding, and not its target and side's first
    findings: list[Annotated] = field(default_factory=list)
    readers: dict[str, int] = field(default_factory=dict)  # reader form -> its findings here

    @property
    def kept(self) -> FragmentLayout:
        """The layout of an instance that keeps it (one with findings, or its target and side's
        first)."""
        if self.layout is None:
            raise ValueError(f"the layout of a finding-free {self.target.name} {self.side} instance "
                             f"was not kept")
        return self.layout

    def sample(self) -> bytes:
        from ..abi.cconv import codec  # start-up: construct only when a finding shows its bytes

        lay = self.kept
        c = codec.codec(lay)
        buf = bytearray(max(c.struct.size, lay.size))
        c.pack_into(buf, 0, describe.sample_values(lay))
        return bytes(buf)


def involved(f: Finding, lay: FragmentLayout, reader: ReaderView | None = None) -> list[Involved]:
    """The byte ranges a finding is about: where the VM packs a value and where a reader looks."""
    if f.rule.startswith("reader-") and reader is not None:
        who = f"read by the {reader.name} reader"
        if f.offset is None:
            return [Involved(f"needed by the {reader.name} reader", OTHER, lay.size,
                             reader.end - lay.size)]
        for c, r in zip(lay.counts, reader.count_reads):
            if c.offset == f.offset and c.offset != r:
                return [Involved(f"span {c.span} count packed", PACKED, c.offset, c.size),
                        Involved(who, READ, r, c.size)]
        for v, r in zip(lay.values, reader.reads):
            if v.offset == f.offset and v.offset != r:
                return [Involved("value packed", PACKED, v.offset, v.size), Involved(who, READ, r, v.size)]
    if f.rule == "fixed-struct-sizeof" and lay.fixed_struct is not None and lay.counts:
        c = lay.counts[0]
        size = lay.fixed_struct.layout(lay.target).size
        return [Involved("span 0 count packed", PACKED, c.offset, c.size),
                Involved(f"read at sizeof({lay.fixed_struct.name})", READ, size, c.size)]
    if f.rule == "fixed-struct-offset" and lay.fixed_struct is not None:
        flay = lay.fixed_struct.layout(lay.target)
        for v, fl in zip(lay.values, flay.fields):
            if v.offset == f.offset and v.offset != fl.offset:
                return [Involved("value packed", PACKED, v.offset, v.size),
                        Involved(f"{lay.fixed_struct.name}.{fl.name}", READ, fl.offset, fl.size)]
    if f.rule == "shim-offset" and lay.shim is not None:
        who = f"read by {lay.shim.struct.name}"
        if lay.counts and lay.counts[0].offset == f.offset and lay.shim.count_offset is not None:
            return [Involved("span 0 count packed", PACKED, f.offset, 4),
                    Involved(who, READ, lay.shim.count_offset, 4)]
        for v, r in zip(lay.values, lay.shim.reads):
            if v.offset == f.offset and v.offset != r:
                return [Involved("value packed", PACKED, v.offset, v.size), Involved(who, READ, r, v.size)]
    if f.rule == "shim-length" and lay.shim is not None:
        lo, hi = sorted((lay.size, lay.shim.required_length))
        return [Involved(f"between the VM's {lay.size} B and the shim's {lay.shim.required_length} B",
                         OTHER, lo, hi - lo)]
    if f.rule == "struct-field-size" and f.offset is not None:
        struct = lay.fixed_struct or (lay.shim.struct if lay.shim else None)
        fixed = [v for v in lay.values if v.span is None]
        for v, fl in zip(fixed, struct.layout(lay.target).fields if struct else ()):
            if v.offset == f.offset and struct is not None:
                return [Involved("value packed", PACKED, v.offset, v.size),
                        Involved(f"{struct.name}.{fl.name}", READ, fl.offset, fl.size)]
    if f.rule == "pack-overflow":
        return [Involved("written past the allocation", OTHER, lay.size, lay.packed_size - lay.size)]
    return [Involved("offset", OTHER, f.offset, 1)] if f.offset is not None else []


@dataclass
class CheckResult:
    text: str
    targets: list[Target]
    spans: tuple[int, ...] | None
    instances: list[Instance]
    total: int = 0  # instances a full sweep would lay out (= len(instances) unless sampled)
    sweep: Sweep | None = None  # of the side with spans, when swept
    read_through: str | None = None  # "<side> read through <struct> (<source>)" with a struct of one's own
    sites: list[SizeofSite] = field(default_factory=list)  # full-HAL dispatch shims of this cconv

    @property
    def sampled(self) -> bool:
        return self.sweep is not None and self.sweep.sampled

    @property
    def n_findings(self) -> int:
        return sum(len(i.findings) for i in self.instances)

    @property
    def exit_code(self) -> int:
        return 1 if self.n_findings else 0


def run(inp: CconvInput, tgts: Sequence[Target], spans: tuple[int, ...] | None,
        struct_for: Callable[[Target], Struct] | None = None, struct_side: str = "arguments") -> CheckResult:
    """Every instance's findings. `struct_for(target)`: a struct of one's own (a header's or an
    object's) that a native shim reads the `struct_side` buffer through: that side is checked against
    it (`cconv.read_by`) instead of against IREE's generic shim struct and span readers."""
    out: list[Instance] = []
    sweeps = [sweep_of(side, spans) for side in inp.sides]
    total = len(tgts) * sum(1 if sw is None else sw.total for sw in sweeps)
    swept = next((sw for sw in sweeps if sw is not None and sw.n_spans), None)
    drawn: set[tuple[str, str]] = set()
    for t in tgts:
        for side in inp.sides:
            for counts in span_instances(side, spans, sweep=True):
                lay = cconv.layout(side.fragment, t, counts)
                own = struct_for is not None and side.label in (struct_side, "fragment")
                if own and struct_for is not None:
                    vm_rules = [f for f in lay.findings if f.rule == "pack-overflow"]
                    lay = cconv.read_by(lay, struct_for(t))
                    lay_findings = [*vm_rules, *lay.findings]
                else:
                    lay_findings = list(lay.findings)
                inst = Instance(t, side.label, lay)
                inst.findings = [Annotated(f, involved(f, lay)) for f in lay_findings]
                if side.fragment.has_spans and not own:
                    for form in cconv.READER_FORMS:
                        reader = cconv.span_reader(side.fragment, t, counts, form=form)
                        found = cconv.compare_reader(lay, reader)
                        inst.readers[form] = len(found)
                        inst.findings += [Annotated(f, involved(f, lay, reader)) for f in found]
                if not inst.findings and (t.name, side.label) in drawn:
                    # Nothing reads a finding-free instance's layout past the first of its target and
                    # side (the picture's fallback): memory stays one layout per finding, not one
                    # per instance (2,000 spans on every target held 2.2 GB).
                    inst.layout = None
                drawn.add((t.name, side.label))
                out.append(inst)
    shims = [] if struct_for is not None else hal_module_dispatch.shim_for_cconv(inp.text)
    sites = [hal_module_dispatch.sizeof_site(s, t) for t in tgts for s in shims]
    return CheckResult(inp.text, list(tgts), spans, out, total, swept, sites=sites)


# --------------------------------------------------------------------------------------------------
# Text

EXACT_DIGITS = 64  # a count of more decimal digits is written rounded (1.6e1204)


def _rounded(n: int) -> str:
    """`n` to two significant digits (`1.3e1204`), from its top bits: linear in its size."""
    shift = max(n.bit_length() - 64, 0)
    log = math.log10(n >> shift) + shift * math.log10(2)
    exponent = math.floor(log)
    mantissa = round(10 ** (log - exponent), 1)
    if mantissa >= 10:
        mantissa, exponent = 1.0, exponent + 1
    return f"{mantissa}e{exponent}"


def count_text(n: int) -> str:
    """A count of instances or combinations: exact up to EXACT_DIGITS digits, past that `about`
    and rounded (a sampled sweep of thousands of spans has a count of thousands of digits, which
    Python refuses to print past 4300 and takes quadratic time to)."""
    return str(n) if n < 10 ** EXACT_DIGITS else f"about {_rounded(n)}"


def count_json(n: int) -> "int | str":
    """A count in --json: an integer, or past EXACT_DIGITS digits a string, rounded (`1.3e1204`)."""
    return n if n < 10 ** EXACT_DIGITS else _rounded(n)


def _sides_line(inp: CconvInput) -> str:
    parts = []
    for s in inp.sides:
        text = repr(s.fragment.text) if s.fragment.items else "void"
        n = s.n_spans
        parts.append(f"{s.label} {text}" + (f" ({n} span{'s' if n != 1 else ''})" if n else ""))
    return ", ".join(parts)


def text(res: CheckResult, inp: CconvInput) -> list[str]:
    where = res.targets[0].name if len(res.targets) == 1 else f"{len(res.targets)} targets"
    out = render.wrap(f"check {res.text} on {where}: {_sides_line(inp)}", subsequent=2)
    if res.read_through:
        out += render.wrap(res.read_through, subsequent=2)
    if any(s.n_spans for s in inp.sides if s.label != "results"):
        if res.spans is not None:
            out.append(f"span counts: {list(res.spans)}")
        elif res.sampled:
            assert res.sweep is not None  # a sampled run's
            out += render.wrap(
                f"span counts: {res.sweep.checked} of the {count_text(res.sweep.total)} combinations of "
                f"0..{SWEEP_MAX} per span (more than {SWEEP_CAP}: all 0, all {SWEEP_MAX}, each span "
                f"alone, then a fixed-seed sample)", subsequent=2)
        else:
            out.append(f"span counts: every combination of 0..{SWEEP_MAX} per span")
    out.append("sample buffers: every byte of value #k is k; counts are the real counts; gaps are 00")
    for t in res.targets:
        insts = [i for i in res.instances if i.target is t]
        n = sum(len(i.findings) for i in insts)
        out.append("")
        out.append(f"{t.name}: {len(insts)} instance{'s' if len(insts) != 1 else ''}, "
                   f"{n} finding{'s' if n != 1 else ''}")
        for side in inp.sides:
            sinsts = [i for i in insts if i.side == side.label]
            out += _side_text(side.label, sinsts)
            if side.label in ("arguments", "fragment"):
                out += _site_text(side.label, [s for s in res.sites if s.target is t])
    out.append("")
    if res.sampled:
        out.append(f"checked {len(res.instances)} of {count_text(res.total)} instances (span counts "
                   f"sampled)")
    rules = sorted({a.finding.rule for i in res.instances for a in i.findings})
    if rules:
        hit = sum(1 for i in res.instances if i.findings)
        out += render.wrap(f"{res.n_findings} findings in {hit} of {len(res.instances)} instances "
                           f"(rules: {', '.join(rules)}); exit 1")
    else:
        out.append(f"no finding in {len(res.instances)} instances: every rule agrees; exit 0")
    return out


def _site_text(label: str, sites: Sequence[SizeofSite]) -> list[str]:
    """The full-HAL dispatch shims this cconv is: how IREE's shim reads it on the target."""
    out: list[str] = []
    sweep = f"0..{max(hal_module_dispatch.SPAN_SWEEP)} per span"
    for site in sites:
        s = site.shim
        out += render.wrap(f"  {label}: {s.full_name} is read by {s.function} (hal/module.c), which "
                           f"starts the spans at sizeof({s.params.name}) (the "
                           f"{hal_module_dispatch.IREE_FORM} reader above): {site.summary()} ({sweep})",
                           subsequent=4)
    return out


def _side_text(label: str, insts: Sequence[Instance]) -> list[str]:
    out: list[str] = []
    groups: dict[str, list[tuple[Instance, Annotated]]] = {}
    for inst in insts:
        for a in inst.findings:
            groups.setdefault(a.finding.rule, []).append((inst, a))
    for rule, items in groups.items():
        # Show an instance where every span has elements, when there is one: its dump shows them.
        inst, a = next(((i, x) for i, x in items if all(i.kept.spans)), items[0])
        n_inst = len({id(i) for i, _ in items})
        out.append(f"  {label} {rule}: in {n_inst} of {len(insts)} instances, e.g.:")
        out += render.wrap(a.finding.message, indent=4, subsequent=6)
        if a.involved:
            marks = [Mark(x.char, x.offset, x.size) for x in a.involved]
            legend = [x.describe() for x in a.involved]
            if render.marks_overlap(marks):  # the dump marks those bytes 'x'
                legend.append("x: bytes both of them cover")
            out += render.wrap("bytes: " + "; ".join(legend), indent=4, subsequent=6)
            out += render.hexdump(inst.sample(), marks, indent=6)
        others = []
        for i in dict.fromkeys(i for i, _ in items if i is not inst):
            others.append(str(list(i.kept.spans)))
        if others:
            shown = ", ".join(others[:MAX_ALSO]) + (f" and {len(others) - MAX_ALSO} more"
                                                     if len(others) > MAX_ALSO else "")
            out += render.wrap(f"also with spans {shown}", indent=4, subsequent=6)
    with_readers = [i for i in insts if i.readers]
    if with_readers:
        parts = []
        for form in cconv.READER_FORMS:
            bad = sum(1 for i in with_readers if i.readers.get(form))
            parts.append(f"{form} misreads {bad} of {len(with_readers)}" if bad
                         else f"{form} agrees in all {len(with_readers)}")
        out.append(f"  {label} span readers: " + "; ".join(parts))
    if not groups:
        out.append(f"  {label}: no finding")
    return out


# --------------------------------------------------------------------------------------------------
# JSON


def data(res: CheckResult) -> dict[str, Any]:
    findings = []
    for inst in res.instances:
        sample = None
        for a in inst.findings:
            sample = sample or inst.sample().hex()
            d = describe.finding_json(a.finding)
            d.update(target=inst.target.name, side=inst.side, cconv=inst.kept.cconv,
                     spans=list(inst.kept.spans),
                     bytes=[{"label": x.label, "offset": x.offset, "size": x.size} for x in a.involved],
                     sample=sample)
            findings.append(d)
    sweep: dict[str, Any] | None = None if res.spans is not None else {"min": 0, "max": SWEEP_MAX}
    out: dict[str, Any] = {
        "cconv": res.text,
        "targets": [t.name for t in res.targets],
        "spans": list(res.spans) if res.spans is not None else None,
        "sweep": sweep,
        "instances": len(res.instances),
    }
    if res.read_through:
        out["read_through"] = res.read_through
    if res.sites:
        out["sizeof_sites"] = [s.as_dict() for s in res.sites]
    if res.sampled and sweep is not None and res.sweep is not None:  # past SWEEP_CAP: how many of how many were checked
        sweep.update(cap=SWEEP_CAP, combinations=count_json(res.sweep.total), checked=res.sweep.checked)
        out["instances_total"] = count_json(res.total)
    out.update(findings=findings, exit_code=res.exit_code)
    return out


__all__ = ["add_parser", "command", "CheckResult", "Instance", "Involved", "involved", "run", "text",
           "data", "count_text", "count_json", "EXACT_DIGITS"]
