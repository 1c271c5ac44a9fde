"""The `ireeabi` command line, run in-process (and once through the installed console script).

Expected numbers come from the engine (itself checked against compilers in test_catalog_oracles /
test_layout_oracles) or, where hard-coded, from the fact sheet's measured tables (cited).
Snapshots of human output live in tests/snapshots/; regenerate them with
`IREEABI_UPDATE_SNAPSHOTS=1 python -m pytest -q tests/cli/test_cli.py`.
"""
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ireeabi import layouts
from ireeabi.abi import cconv, targets
from ireeabi.cli import render
from ireeabi.cli.main import main
from ireeabi.layouts import hal_inline, hal_loader

SNAPSHOTS = Path(__file__).parents[1] / "snapshots"
DISPATCH = "0rIiiiCiDCrIID_v"


def run(capsys, *args):
    rc = main(list(args))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def quiet(*args):
    """In-process run without capsys (for sweeps over many commands)."""
    out, err = io.StringIO(), io.StringIO()
    rc = main(list(args), stdout=out, stderr=err)
    return rc, out.getvalue(), err.getvalue()


# --------------------------------------------------------------------------------------------------
# Parsing the human struct table back


ROW = re.compile(r"^\s*(\d+)(?::(\d+))?\s+(\d+)(b?)\s{2}(.*)$")


def struct_table(out):
    """[(offset, bit, size, is_bits, depth, name, type)] of a single-target struct table."""
    lines = out.splitlines()
    header = next(i for i, l in enumerate(lines) if l.lstrip().startswith("offset") and "field" in l)
    field_col = lines[header].index("field")
    type_col = lines[header].index("type")
    rows = []
    for line in lines[header + 1:]:
        m = ROW.match(line)
        if not m:
            break
        name_part = line[field_col:type_col].rstrip()
        depth = (len(name_part) - len(name_part.lstrip())) // 2
        rows.append((int(m.group(1)), None if m.group(2) is None else int(m.group(2)), int(m.group(3)),
                     m.group(4) == "b", depth, name_part.strip(), line[type_col:].strip()))
    return rows


def fields_by_path(rows):
    """{dotted path: (offset, size)} for the field rows (padding rows skipped)."""
    out, stack = {}, []
    for offset, _bit, size, is_bits, depth, name, _type in rows:
        if name.startswith("<"):
            continue
        stack[depth:] = [name.rstrip("[]")]
        if not is_bits:  # bit-fields are checked by test_bitfields_and_holes_are_rows
            out[".".join(stack)] = (offset, size)
    return out


def engine_paths(name, target):
    lay = layouts.get(name).layout(target)
    out = {}
    for path, f, offset, _ in lay.walk():
        if f.bits is None:
            out[path] = (offset, f.size)
    return out, lay


# --------------------------------------------------------------------------------------------------
# layout: structs


def test_vm_buffer_x86_64(capsys):
    # Fact sheet §6.1 (measured on x86_64 with the real header).
    rc, out, err = run(capsys, "layout", "iree_vm_buffer_t", "--target", "x86_64")
    assert rc == 0 and err == ""
    paths = fields_by_path(struct_table(out))
    assert paths["data"] == (8, 16)
    assert paths["allocator"] == (24, 16)
    assert paths["storage_module"] == (40, 8)
    assert "sizeof 48, alignof 8" in out


def test_vm_buffer_riscv32_matches_engine(capsys):
    rc, out, _ = run(capsys, "layout", "iree_vm_buffer_t", "--target", "riscv32")
    assert rc == 0
    expected, lay = engine_paths("iree_vm_buffer_t", "riscv32")
    assert fields_by_path(struct_table(out)) == expected
    assert f"sizeof {lay.size}, alignof {lay.align}" in out
    assert lay.size != 48  # the ILP32 layout, not the LP64 one


@pytest.mark.parametrize("name", ["iree_hal_executable_environment_v0_t", "iree_hal_inline_storage_buffer_t",
                                  "iree_hal_loader_dispatch_args_t", "iree_hal_buffer_view_t"])
@pytest.mark.parametrize("target", ["x86_64", "i386", "armv7"])
def test_struct_tables_match_engine(capsys, name, target):
    rc, out, _ = run(capsys, "layout", name, "-t", target)
    assert rc == 0
    expected, lay = engine_paths(name, target)
    assert fields_by_path(struct_table(out)) == expected


def test_dispatch_and_workgroup_state_x86_64(capsys):
    # Fact sheet §9.3 (measured with the real header).
    rc, out, _ = run(capsys, "layout", "iree_hal_executable_dispatch_state_v0_t", "--target", "x86_64")
    assert rc == 0
    paths = fields_by_path(struct_table(out))
    assert paths["constant_count"][0] == 10
    assert paths["binding_count"][0] == 23
    assert paths["constants"][0] == 24
    assert "sizeof 48," in out
    rc, out, _ = run(capsys, "layout", "iree_hal_executable_workgroup_state_v0_t", "--target", "x86_64")
    assert rc == 0 and "sizeof 32," in out
    assert any(r[5] == "<tail padding>" for r in struct_table(out))


def test_bitfields_and_holes_are_rows(capsys):
    rc, out, _ = run(capsys, "layout", "iree_hal_buffer_mapping_t")
    rows = {r[5]: r for r in struct_table(out)}
    lay = layouts.get("iree_hal_buffer_mapping_impl_t").layout("x86_64")
    base = layouts.get("iree_hal_buffer_mapping_t").layout("x86_64").offsetof("impl")
    f = lay.field("is_persistent")
    first_bit = (base + f.offset) * 8 + f.bit_offset
    assert rows["is_persistent"][:4] == (first_bit // 8, first_bit % 8, 1, True)
    assert rows["is_persistent"][6] == "uint32_t:1"
    hole = rows["<hole>"]
    assert [(p.offset + base, p.size) for p in lay.padding] == [(hole[0], hole[2])]


def test_flexible_array_row(capsys):
    rc, out, _ = run(capsys, "layout", "iree_hal_buffer_view_t", "-t", "x86_64")
    lay = layouts.get("iree_hal_buffer_view_t").layout("x86_64")
    shape = next(r for r in struct_table(out) if r[5] == "shape[]")
    assert (shape[0], shape[2]) == (lay.flexible.offset, 0)
    assert f"flexible array shape[]: 8 B per element from offset {lay.flexible.offset}" in out


def test_all_targets_marks_differences(capsys):
    rc, out, _ = run(capsys, "layout", "iree_vm_buffer_t", "--all-targets")
    assert rc == 0
    lines = out.splitlines()
    header = next(l for l in lines if l.split()[:1] == ["field"])
    assert header.split()[1:] == targets.names()
    cells = {l.split()[0]: l.split()[1:] for l in lines if l.startswith("  ") and l.split()[0] in
             ("storage_module", "sizeof")}
    ref = None
    for i, name in enumerate(targets.names()):
        lay = layouts.get("iree_vm_buffer_t").layout(name)
        sm = lay.field("storage_module")
        cell = f"{sm.offset}/{sm.size}"
        ref = ref or cell
        assert cells["storage_module"][i] == cell + ("*" if cell != ref else "")
        assert cells["sizeof"][i].rstrip("*") == str(lay.size)
    assert "*" in cells["storage_module"][3]  # riscv32 differs from x86_64


def test_derived_shim_struct(capsys):
    rc, out, _ = run(capsys, "layout", "iree_vm_abi_rIiii_t")
    assert rc == 0 and "derived from its cconv fragment" in out
    # Fact sheet §2.3: LP64 sizeof 40, i1@16 i2@24 i3@28 i4@32.
    paths = fields_by_path(struct_table(out))
    assert [paths[f][0] for f in ("i1", "i2", "i3", "i4")] == [16, 24, 28, 32]


# --------------------------------------------------------------------------------------------------
# layout: cconvs


def test_cconv_layout_text(capsys):
    rc, out, _ = run(capsys, "layout", DISPATCH, "--spans", "4,3", "--target", "x86_64")
    assert rc == 0
    lay = cconv.layout(cconv.parse(DISPATCH).arguments, "x86_64", [4, 3])
    assert f"the VM allocates {lay.size} B" in out
    rows = [l.split() for l in out.splitlines() if re.match(r"^\s+\d+\s+\d+\s+(ref|i32|i64|count|gap)", l)]
    assert [(int(r[0]), int(r[1])) for r in rows if r[2] == "count"] == [(c.offset, 4) for c in lay.counts]
    assert [int(r[0]) for r in rows if r[2] not in ("count", "gap")] == [v.offset for v in lay.values]
    assert [(int(r[0]), int(r[1])) for r in rows if r[2] == "gap"] == [(g.offset, g.size) for g in lay.gaps]
    assert "fixed-struct-sizeof" in out
    assert "results: void" in out


def test_cconv_layout_json_matches_engine(capsys):
    rc, out, _ = run(capsys, "layout", "rIiiiCiDCrIID", "--spans", "4,3", "--json", "-t", "riscv32")
    assert rc == 0
    d = json.loads(out)
    assert isinstance(d, dict)  # one fragment on one target: one object
    assert {"cconv", "target", "size", "values", "counts", "findings"} <= set(d)
    # Fact sheet §2.4, ILP32 worked example (measured): 128 B, counts at 28 and 48.
    assert (d["cconv"], d["target"], d["size"]) == ("rIiiiCiDCrIID", "riscv32", 128)
    assert [c["offset"] for c in d["counts"]] == [28, 48]
    assert [v["offset"] for v in d["values"] if v["kind"] == "ref"] == [0, 56, 80, 104]
    assert all({"kind", "offset"} <= set(v) for v in d["values"])
    assert all({"rule", "message"} <= set(f) for f in d["findings"])


def test_cconv_json_signature_and_all_targets(capsys):
    rc, out, _ = run(capsys, "layout", "0rII_r", "--json")
    d = json.loads(out)
    assert [x["side"] for x in d] == ["arguments", "results"]
    assert all(x["signature"] == "0rII_r" for x in d)
    rc, out, _ = run(capsys, "layout", "rCrD", "--json", "--all-targets", "--spans", "2")
    d = json.loads(out)
    assert [x["target"] for x in d] == targets.names()
    for x in d:
        lay = cconv.layout("rCrD", x["target"], [2])
        assert x["size"] == lay.size
        assert [v["offset"] for v in x["values"]] == [v.offset for v in lay.values]


def test_cconv_all_targets_text(capsys):
    rc, out, _ = run(capsys, "layout", DISPATCH, "--all-targets", "--spans", "4,3")
    assert rc == 0
    line = next(l for l in out.splitlines() if l.strip().startswith("count of span 0"))
    cells = line.split()[4:]
    expected = [str(cconv.layout("rIiiiCiDCrIID", t, [4, 3]).counts[0].offset) for t in targets.names()]
    assert [c.rstrip("*") for c in cells] == expected
    assert cells[3].endswith("*") and not cells[1].endswith("*")


def test_default_spans_note(capsys):
    rc, out, _ = run(capsys, "layout", DISPATCH)
    assert "1 per span (default" in out and "spans [1, 1]" in out


# --------------------------------------------------------------------------------------------------
# check


def test_check_dispatch_all_targets_acceptance(capsys):
    rc, out, err = run(capsys, "check", DISPATCH, "--all-targets")
    assert rc == 1 and err == ""
    # Fact sheet §2.4: the pre-fix shim reads the constant count at sizeof(rIiii) = 40 (LP64) / 32
    # (rv32) while the packer writes it at 36 / 28.
    flat = " ".join(out.split())  # messages are wrapped to the width
    for target, read, packed in (("x86_64", 40, 36), ("riscv32", 32, 28)):
        assert (f"on {target} spans=[1, 1]: the pre-fix reader reads span 0's count at {read}, "
                f"the VM packs it at {packed}") in flat
    assert "reader-fixed" not in out
    assert out.count("fixed agrees in all 16") == len(targets.names())


def test_check_dispatch_json(capsys):
    rc, out, _ = run(capsys, "check", DISPATCH, "--all-targets", "--json")
    d = json.loads(out)
    assert rc == d["exit_code"] == 1
    assert d["instances"] == len(targets.names()) * (16 + 1)  # 4 x 4 span counts + the results
    assert d["spans"] is None and d["sweep"] == {"min": 0, "max": 3}
    assert not [f for f in d["findings"] if f["rule"] == "reader-fixed"]
    for f in d["findings"]:
        assert {"rule", "message", "offset", "target", "side", "cconv", "spans", "bytes", "sample"} <= set(f)
    pre = {(f["target"], tuple(f["spans"])): f for f in d["findings"] if f["rule"] == "reader-pre-fix"}
    for target, packed, read in (("x86_64", 36, 40), ("riscv32", 28, 32)):
        for counts in ((0, 0), (1, 1), (3, 2)):
            f = pre[(target, counts)]
            assert [(b["offset"], b["size"]) for b in f["bytes"]] == [(packed, 4), (read, 4)]
            sample = bytes.fromhex(f["sample"])
            # The sample buffer really holds span 0's count where the VM packs it.
            assert sample[packed:packed + 4] == counts[0].to_bytes(4, "little")


def test_check_i386_binding_alignment(capsys):
    # Fact sheet §2.4, i386 with 4 constants and 3 bindings (measured): the pre-fix shim aligns the
    # binding array to 4 and reads it at 52 instead of 56; the constant count is right.
    rc, out, _ = run(capsys, "check", DISPATCH, "-t", "i386", "--spans", "4,3", "--json")
    d = json.loads(out)
    assert rc == 1 and d["spans"] == [4, 3] and d["instances"] == 2
    [f] = [f for f in d["findings"] if f["rule"] == "reader-pre-fix"]
    assert "at 52, the VM packs it at 56" in f["message"]
    assert [(b["offset"], b["size"]) for b in f["bytes"]] == [(56, 8), (52, 8)]


def test_check_clean_cconv_exits_0(capsys):
    rc, out, _ = run(capsys, "check", "0rII_r")
    assert rc == 0 and "no finding" in out
    clean = all(not cconv.layout(side, t, []).findings for t in targets.names()
                for side in (cconv.parse("0rII_r").arguments, cconv.parse("0rII_r").results))
    rc, _, _ = run(capsys, "check", "0rII_r", "--all-targets")
    assert rc == (0 if clean else 1)


def test_check_shim_findings_show_bytes(capsys):
    # A generic-shim disagreement (not a reader one): the bytes come from the engine's views.
    rc, out, _ = run(capsys, "check", "rIIiiCID", "-t", "i386", "--spans", "1", "--json")
    d = json.loads(out)
    lay = cconv.layout("rIIiiCID", "i386", [1])
    readers = [f for form in cconv.READER_FORMS
               for f in cconv.compare_reader(lay, cconv.span_reader("rIIiiCID", "i386", [1], form=form))]
    assert [f["rule"] for f in d["findings"]] == [f.rule for f in (*lay.findings, *readers)]
    assert rc == (1 if d["findings"] else 0)
    assert any(f["rule"] == "shim-offset" for f in d["findings"])
    for f in d["findings"]:
        if f["rule"] == "shim-offset":
            packed, read = f["bytes"]
            assert packed["offset"] == f["offset"] and read["offset"] in lay.shim.reads


# --------------------------------------------------------------------------------------------------
# targets, list


def test_targets(capsys):
    rc, out, _ = run(capsys, "targets")
    assert rc == 0
    i386 = next(l for l in out.splitlines() if l.startswith("i386"))
    assert "12 (not pow2)" in i386
    rc, out, _ = run(capsys, "targets", "--json")
    d = json.loads(out)
    assert [x["name"] for x in d] == targets.names()
    for x in d:
        t = targets.get(x["name"])
        ref = cconv.IREE_VM_REF_T.layout(t)
        assert (x["pointer_size"], x["max_align"], x["max_align_is_pow2"]) == (
            t.pointer_size, t.max_align, t.max_align_is_pow2)
        assert x["vm_ref"] == {"size": ref.size, "align": ref.align}
        assert x["int64_member_align"] == t.scalar("int64_t").align


def test_list(capsys):
    rc, out, _ = run(capsys, "list", "--json")
    assert rc == 0
    assert [x["name"] for x in json.loads(out)] == layouts.names()


# --------------------------------------------------------------------------------------------------
# JSON schema of structs


def test_struct_json_schema(capsys):
    rc, out, _ = run(capsys, "layout", "iree_hal_inline_storage_buffer_t", "--json")
    d = json.loads(out)
    assert {"name", "target", "size", "align", "fields", "padding"} <= set(d)
    lay = layouts.get("iree_hal_inline_storage_buffer_t").layout("x86_64")
    assert (d["size"], d["align"]) == (lay.size, lay.align)
    by_name = {f["name"]: f for f in d["fields"]}
    for path, f, offset, _ in lay.walk():
        assert {"name", "offset", "size", "type"} <= set(by_name[path])
        assert (by_name[path]["offset"], by_name[path]["size"]) == (offset, f.size)
    bit = by_name["mapping.impl.is_persistent"]  # FieldLayout's meaning (tests/abi/test_bitfields.py)
    assert (bit["offset"], bit["size"], bit["bit_offset"], bit["bits"]) == (
        lay.offsetof("mapping.impl") + 8, 4, 16, 1)
    used = set()
    for path, f, offset, _ in lay.walk():
        if not isinstance(f.type, type(lay.decl)):  # leaves: every byte a field's bits touch
            lo, hi = f.byte_span
            used.update(range(offset - f.offset + lo, offset - f.offset + hi))
    padded = {b for p in d["padding"] for b in range(p["offset"], p["offset"] + p["size"])}
    assert all({"offset", "size"} <= set(p) for p in d["padding"])
    assert padded == set(range(lay.size)) - used and padded
    rc, out, _ = run(capsys, "layout", "iree_hal_inline_storage_buffer_t", "--json", "--all-targets")
    assert [x["target"] for x in json.loads(out)] == targets.names()


# --------------------------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize("args, needle", [
    (["layout", "iree_vm_bufer_t"], "closest: iree_vm_buffer_t"),
    (["layout", "iree_vm_buffer_t", "--target", "x86-64"], "closest: x86_64"),
    (["check", DISPATCH, "--target", "riscv"], "unknown target 'riscv'"),
    (["layout", "0rx_v"], "index 2 ('x')"),
    (["check", "0rCiI_v"], "unterminated span at index 2 ('C')"),
    (["check", "rII_r"], "index 0 ('r')"),
    (["check", "iree_vm_buffer_t"], "is not a calling convention"),
    (["layout", DISPATCH, "--spans", "4"], "2 span(s) but 1 count(s)"),
    (["layout", DISPATCH, "--spans", "4,x"], "'x' is not an integer count"),
    (["check", DISPATCH, "--spans", "4,70000"], "outside 0..65535"),
    (["layout", "iree_vm_buffer_t", "--spans", "1"], "--spans applies to calling conventions"),
])
def test_bad_input_exits_2(capsys, args, needle):
    rc, out, err = run(capsys, *args)
    assert rc == 2
    assert needle in " ".join(err.split())  # messages are wrapped to the width
    assert out == "" and "Traceback" not in err
    assert all(len(l) <= render.WIDTH for l in err.splitlines())


def test_cconv_error_points_at_the_character(capsys):
    rc, _, err = run(capsys, "layout", "0rIiiiCiDCrIqD_v")
    lines = err.splitlines()
    assert rc == 2
    assert lines[-1].index("^") - 4 == 12 and lines[-2][4 + 12] == "q"


@pytest.mark.parametrize("args", [["bogus"], ["layout"], ["layout", "x", "-t", "i386", "--all-targets"]])
def test_usage_errors_exit_2(capsys, args):
    rc, out, err = run(capsys, *args)
    assert rc == 2 and "usage:" in err and "Traceback" not in err


def test_help_exits_0(capsys):
    rc, out, _ = run(capsys)
    assert rc == 0 and "layout" in out
    rc, out, _ = run(capsys, "check", "--help")
    assert rc == 0 and "Exit 0: no finding" in " ".join(out.split())


# --------------------------------------------------------------------------------------------------
# Width


def _width_commands():
    for n in layouts.names():
        yield ["layout", n, "--all-targets"]
        for t in targets.names():
            yield ["layout", n, "-t", t]
    for e in hal_inline.EXPORTS + hal_loader.EXPORTS:
        yield ["layout", e.cconv, "--all-targets"]
        yield ["layout", e.cconv]
        yield ["check", e.cconv, "--all-targets"]
    yield ["layout", "iIfFrCiIfFrDCrDCiD", "--all-targets", "--spans", "3,2,1"]
    yield ["check", "iIfFrCiIfFrDCrDCiD", "-t", "i386"]
    yield ["targets"]
    yield ["list"]


def test_every_human_line_fits_100_columns():
    too_long = []
    for args in _width_commands():
        rc, out, err = quiet(*args)
        assert rc in (0, 1), (args, err)
        too_long += [(args, l) for l in (out + err).splitlines() if len(l) > render.WIDTH]
    assert not too_long


def test_render_fits_by_truncating_and_chunking():
    cols = [render.Column("a"), render.Column("b", shrink=True, min_width=5)]
    lines = render.table(cols, [("x" * 30, "y" * 200)], width=60)
    assert max(map(len, lines)) == 60 and lines[1].endswith(render.ELLIPSIS)
    chunks = render.chunk_columns([20], [10] * 7, width=60)
    assert [list(c) for c in chunks] == [[0, 1, 2], [3, 4, 5], [6]]
    assert all(render.table_width([20] + [10] * len(c)) <= 60 for c in chunks)


def test_hexdump_marks():
    data = bytes(range(40))
    lines = render.hexdump(data, [render.Mark("^", 14, 4), render.Mark("r", 16, 4)], indent=0)
    assert lines[0].startswith("0000  00 01") and lines[2].startswith("0010  10 11")
    assert lines[1].split() == ["^^", "^^"] and lines[3].split() == ["xx", "xx", "rr", "rr"]
    assert render.hexdump(data, [render.Mark("r", 44, 4)], indent=0)[-1].startswith("(r: bytes 44..47")


def test_check_explains_the_overlap_marker(capsys):
    """Where two marked ranges share bytes the dump draws `xx` (i386's `iI`: the value packed at
    8..15, the shim reads 4..11); the line above the dump says what `x` means."""
    assert main(["check", "0iI_rr", "--target", "i386"]) == 1
    lines = capsys.readouterr().out.splitlines()
    dumps = [k for k, line in enumerate(lines) if " xx " in line]
    assert dumps
    for k in dumps:
        legend = next(line for line in reversed(lines[:k]) if "bytes:" in line)
        assert legend.endswith("; x: bytes both of them cover")
    assert not render.marks_overlap([render.Mark("^", 0, 4), render.Mark("r", 4, 4)])
    assert render.marks_overlap([render.Mark("^", 0, 5), render.Mark("r", 4, 4)])


# --------------------------------------------------------------------------------------------------
# Snapshots


SNAPSHOT_CASES = {
    "layout_hal_buffer_mapping_x86_64": ["layout", "iree_hal_buffer_mapping_t", "--target", "x86_64"],
    "layout_vm_buffer_all_targets": ["layout", "iree_vm_buffer_t", "--all-targets"],
    "layout_dispatch_cconv_x86_64": ["layout", DISPATCH, "--spans", "4,3", "--target", "x86_64"],
}


@pytest.mark.parametrize("name", sorted(SNAPSHOT_CASES))
def test_snapshot(capsys, name):
    rc, out, err = run(capsys, *SNAPSHOT_CASES[name])
    assert rc == 0 and err == ""
    path = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("IREEABI_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(out)
    assert path.exists(), f"missing {path}; run with IREEABI_UPDATE_SNAPSHOTS=1 to create it"
    assert out == path.read_text()


# --------------------------------------------------------------------------------------------------
# The installed console script


def test_console_script():
    exe = Path(sys.executable).with_name("ireeabi")
    script = str(exe) if exe.exists() else shutil.which("ireeabi")
    assert script, "the ireeabi console script is not installed (pip install -e .)"
    r = subprocess.run([script, "check", "0rII_r"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout == quiet("check", "0rII_r")[1]
    r = subprocess.run([script, "layout", "iree_vm_bufer_t"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "closest: iree_vm_buffer_t" in r.stderr and "Traceback" not in r.stderr
