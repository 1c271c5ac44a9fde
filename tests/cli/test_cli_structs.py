"""`ireeabi layout NAME --header FILE.h` and `--dwarf FILE`: the CLI over abi/cheader.py and
abi/dwarf.py (whose layouts tests/abi/test_cheader.py and tests/abi/test_dwarf.py check against libclang and
gcc); here the tables, JSON and errors, with the numbers taken from those checked layouts."""
from __future__ import annotations

import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from ireeabi.abi import cheader
from ireeabi.abi.targets import TARGETS
from ireeabi.cli.main import main

HEADERS = Path(__file__).parents[1] / "fixtures" / "headers"
HEADER = str(HEADERS / "constructs.h")


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = main(list(args), stdout=out, stderr=err)
    return rc, out.getvalue(), err.getvalue()


def test_header_table_on_one_target():
    rc, out, err = run("layout", "wire", "--header", HEADER, "--target", "armv7")
    assert rc == 0 and not err
    assert " ".join(out.split()).startswith(f"struct wire [packed] on armv7 ({HEADER}, checked with "
                                            "libclang) offset size field type")  # (the title wraps)
    lines = out.splitlines()
    lay = cheader.header_struct(HEADER, "wire", "armv7").layout("armv7")
    first = next(i for i, line in enumerate(lines) if line.startswith("offset"))
    assert [line.split()[2] for line in lines[first + 1:first + 7]] == [f.name for f in lay.fields]
    assert "   7:5   40b  big" in out  # byte:bit of the first bit of a packed 40-bit field
    assert f"sizeof {lay.size}, alignof {lay.align}; no padding" in lines


def test_header_all_targets_and_json_use_each_triple():
    rc, out, _ = run("layout", "everything_t", "--header", HEADER, "--all-targets")
    assert rc == 0
    sizeof = next(line for line in out.splitlines() if line.strip().startswith("sizeof"))
    want = [str(cheader.header_struct(HEADER, "everything_t", t).layout(t).size) for t in TARGETS]
    assert [c.rstrip("*") for c in sizeof.split()[1:]] == want
    rc, out, _ = run("layout", "cacheline_t", "--header", HEADER, "--target", "i386", "--json")
    assert rc == 0 and json.loads(out)["size"] == 32


def test_header_include_dirs_and_defines(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "n.h").write_text("typedef N_T n_t;\n")
    (tmp_path / "h.h").write_text('#include "n.h"\nstruct s { char c; n_t n; };\n')
    rc, out, _ = run("layout", "s", "--header", str(tmp_path / "h.h"), "-I", str(tmp_path / "inc"),
                     "-D", "N_T=long long", "--target", "i386")
    assert rc == 0 and "sizeof 12, alignof 4" in out  # i386: long long 4-aligned in structs
    rc, _, err = run("layout", "s", "--header", str(tmp_path / "h.h"))
    assert rc == 2 and "h.h:1: 'n.h' file not found" in " ".join(err.split())


def test_dwarf_table_defaults_to_the_files_own_model(tmp_path):
    gcc = shutil.which("gcc")
    assert gcc, "gcc is needed to build the DWARF test object"
    src = tmp_path / "use.c"
    src.write_text('#include "constructs.h"\nstruct wire w;\n')
    obj = tmp_path / "use.o"
    subprocess.run([gcc, "-m32", "-g", "-c", "-I", str(HEADERS), str(src), "-o", str(obj)], check=True)
    rc, out, _ = run("layout", "wire", "--dwarf", str(obj))
    assert rc == 0 and " ".join(out.split()).startswith(f"struct wire [packed] on i386 (DWARF of {obj} (i386))")
    rc, out, _ = run("layout", "wire", "--dwarf", str(obj), "--all-targets")
    header = next(line for line in out.splitlines() if line.strip().startswith("field"))
    assert rc == 0 and header.split()[:3] == ["field", "i386", "x86_64"]


@pytest.mark.parametrize("args,message", [
    (("layout", "wire", "-I", "x"), "-I and -D apply to --header"),
    (("layout", "wire", "--header", HEADER, "--spans", "1"), "--spans applies to calling conventions"),
    (("layout", "nope", "--header", HEADER), "'nope'"),
    (("layout", "wire", "--header", "missing.h"), "missing.h: no such header file"),
    (("layout", "wire", "--dwarf", "missing.o"), "missing.o: no such file"),
    (("layout", "wire", "--dwarf", HEADER), "not a readable ELF file"),
])
def test_bad_input_is_one_line(args, message):
    rc, out, err = run(*args)
    assert rc == 2 and not out and message in " ".join(err.split()) and err.startswith("ireeabi: error: ")


SHIMS = str(HEADERS / "shim_structs.h")


def test_check_a_header_struct_as_the_fixed_part_of_the_loader_dispatch():
    """The header's copy of IREE's fixed struct gives exactly the catalog struct's findings on every
    target: sizeof past the first count on LP64 and riscv32/armv7/wasm32 (8-aligned int64), none on
    i386."""
    ours = run("check", "rIiiiCiDCrIID", "--header", SHIMS, "--struct", "dispatch_fixed_t",
               "--spans", "2,1", "--all-targets", "--json")
    catalog = run("check", "rIiiiCiDCrIID", "--spans", "2,1", "--all-targets", "--json")
    assert ours[0] == catalog[0] == 1
    ours_j, catalog_j = json.loads(ours[1]), json.loads(catalog[1])
    key = lambda f: (f["target"], f["rule"], f["offset"])  # noqa: E731
    assert sorted(map(key, ours_j["findings"])) == sorted(
        key(f) for f in catalog_j["findings"] if f["rule"].startswith("fixed-struct"))
    assert {f["target"] for f in ours_j["findings"]} == set(TARGETS) - {"i386"}
    assert ours_j["read_through"].startswith("the fragment read through dispatch_fixed_t")


def test_check_a_header_struct_as_the_whole_argument_buffer():
    rc, out, _ = run("check", "0rII_v", "--header", SHIMS, "--struct", "ok_args_t", "--all-targets")
    assert rc == 0 and out.splitlines()[1].startswith("arguments read through ok_args_t")
    rc, out, _ = run("check", "0rII_v", "--header", SHIMS, "--struct", "bad_args_t", "--all-targets",
                     "--json")
    found = {(f["target"], f["rule"]) for f in json.loads(out)["findings"]}
    assert rc == 1 and {r for _, r in found} == {"struct-field-size", "shim-length", "shim-offset"}
    # int64 is 4-aligned in i386 structs only: there the int32 member also moves the last one.
    assert {t for t, r in found if r == "shim-offset"} == {"i386"}


@pytest.mark.parametrize("args,message", [
    (("check", "0rII_v", "--header", SHIMS), "give the struct"),
    (("check", "0rII_v", "--struct", "ok_args_t"), "need --header FILE.h or --dwarf FILE"),
    (("check", "0rII_v", "--header", SHIMS, "--struct", "nope"), "'nope'"),
])
def test_check_bad_struct_input(args, message):
    rc, out, err = run(*args)
    assert rc == 2 and not out and message in " ".join(err.split())
