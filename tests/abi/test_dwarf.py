"""Structs from DWARF (abi/dwarf.py): objects built by gcc (the host's, and `-m32`) from the
constructs header, read back and compared with the header read by libclang (itself cross-checked
with libclang's layout), on the object's own data model and re-laid on all seven; a struct under
`#pragma pack(2)` read as that pack, and one the engine cannot reproduce an error of its own."""
from __future__ import annotations

import io
import shutil
import subprocess
from pathlib import Path

import pytest

from ireeabi.abi import cheader, dwarf, oracles
from ireeabi.abi.errors import UnknownNameError
from ireeabi.abi.targets import TARGETS
from ireeabi.cli.main import main

HEADERS = Path(__file__).parents[1] / "fixtures" / "headers"
SOURCE = '#include "constructs.h"\neverything_t e; struct wire w; value_t v; cacheline_t l;\n'


def _object(tmp_path: Path, *flags: str) -> Path:
    gcc = shutil.which("gcc")
    assert gcc, "gcc is needed to build the DWARF test objects"
    src = tmp_path / "use.c"
    src.write_text(SOURCE)
    out = tmp_path / f"use{''.join(flags).replace('-', '_')}.o"
    subprocess.run([gcc, "-c", "-I", str(HEADERS), *flags, str(src), "-o", str(out)], check=True)
    return out


def _cells(lay):
    return [(f.name, f.offset, f.size, f.bit_offset, f.bits) for f in lay.fields], lay.size, lay.align


@pytest.mark.parametrize("flags,model", [(("-g",), "x86_64"), (("-m32", "-g"), "i386"),
                                         (("-gdwarf-2",), "x86_64"), (("-gdwarf-4",), "x86_64")])
def test_dwarf_structs_are_the_header_structs_on_every_model(tmp_path, flags, model):
    target, structs = dwarf.dwarf_structs(_object(tmp_path, *flags))
    assert target.name == model
    assert structs["wire"].packed  # inferred: DWARF records no packed attribute
    assert next(f for f in structs["everything_t"].fields if f.name == "packed_member").packed
    for name in ("everything_t", "wire", "value_t", "cacheline_t"):
        for t in sorted(TARGETS):
            header = cheader.header_struct(HEADERS / "constructs.h", name, t)
            assert _cells(structs[name].layout(t)) == _cells(header.layout(t)), (name, t)


def test_dwarf_structs_match_the_host_compiler(tmp_path):
    _, structs = dwarf.dwarf_structs(_object(tmp_path, "-g"))
    decls = [structs["everything_t"], structs["wire"]]
    assert oracles.disagreements(decls, oracles.measure_host_cc(decls), TARGETS["x86_64"]) == {}


def test_bad_files_are_named(tmp_path):
    with pytest.raises(dwarf.DwarfError, match="no DWARF debug information"):
        dwarf.dwarf_structs(_object(tmp_path))
    (tmp_path / "text.o").write_text("not an ELF file")
    with pytest.raises(dwarf.DwarfError, match="not a readable ELF file"):
        dwarf.dwarf_structs(tmp_path / "text.o")
    with pytest.raises(dwarf.DwarfError, match="no such file"):
        dwarf.dwarf_structs(tmp_path / "missing.o")
    with pytest.raises(UnknownNameError, match="nope"):
        dwarf.dwarf_struct(_object(tmp_path, "-g"), "nope")


def test_damaged_objects_give_dwarf_errors(tmp_path):
    """Truncated and byte-flipped objects (fixed seed) are refused with DwarfError, never another
    exception from the ELF/DWARF parser (the full loop and directed shapes: test_dwarf_damaged.py)."""
    import random
    data = _object(tmp_path, "-g").read_bytes()
    rng = random.Random(20261204)
    damaged = tmp_path / "damaged.o"
    refused = 0
    for i in range(120):
        b = bytearray(data)
        if i % 3 == 0:
            b = b[:rng.randrange(64, len(b))]
        else:
            for _ in range(rng.choice((1, 5, 20))):
                b[rng.randrange(64, len(b))] = rng.randrange(256)
        damaged.write_bytes(bytes(b))
        try:
            dwarf.dwarf_structs(damaged)
        except dwarf.DwarfError:  # anything else fails the test
            refused += 1
    assert refused >= 40  # truncations at least


# One struct under `#pragma pack(2)` among ordinary ones (issue 42 item 2), and one whose recorded
# layout strict DWARF 4 cannot explain (its aligned(16) is a DW_AT_alignment only DWARF 5 has).
PACKED_HEADER = """\
#include <stdint.h>
struct plain { int8_t a; int64_t b; };
#pragma pack(push, 2)
struct packed2 { int8_t a; int64_t b; int32_t c; double d; };
#pragma pack(pop)
struct holder { int8_t a; struct packed2 p; };
struct __attribute__((aligned(16))) over { int32_t x; };
struct outer { int8_t a; struct over o; };
"""


def _packed_object(tmp_path: Path, *flags: str) -> Path:
    (tmp_path / "packed.h").write_text(PACKED_HEADER)
    src = tmp_path / "packed.c"
    src.write_text('#include "packed.h"\n'
                   "struct plain a; struct packed2 b; struct holder c; struct over d; struct outer e;\n")
    out = tmp_path / f"packed{''.join(flags).replace('-', '_')}.o"
    subprocess.run([shutil.which("gcc"), "-c", *flags, str(src), "-o", str(out)], check=True)
    return out


@pytest.mark.parametrize("flags,model", [(("-g",), "x86_64"), (("-m32", "-g"), "i386")])
def test_pragma_pack_is_read_as_the_pack_it_implies(tmp_path, flags, model):
    """A struct only `#pragma pack(2)` reproduces is read with pack(2), and it, the struct holding
    it and the file's others lay out on every model as libclang lays out the header; `layout`
    names the pack."""
    obj = _packed_object(tmp_path, *flags)
    for name in ("plain", "packed2", "holder"):
        target, decl = dwarf.dwarf_struct(obj, name)
        assert target.name == model
        for t in sorted(TARGETS):
            header = cheader.header_struct(tmp_path / "packed.h", name, t)
            assert _cells(decl.layout(t)) == _cells(header.layout(t)), (name, t)
    assert dwarf.dwarf_struct(obj, "packed2")[1].max_align == 2
    out = io.StringIO()
    assert main(["layout", "packed2", "--dwarf", str(obj)], stdout=out) == 0
    assert out.getvalue().startswith(f"struct packed2 [#pragma pack(2)] on {model}")


def test_a_struct_the_engine_cannot_reproduce_is_its_own_error(tmp_path):
    """Strict DWARF 4 records `over` 16 bytes long without its alignment (DW_AT_alignment is
    DWARF 5's): `over` and `outer`, which holds it, are errors naming `over`; the file's other
    structs read as the header declares them."""
    obj = _packed_object(tmp_path, "-gdwarf-4", "-gstrict-dwarf")
    for name in ("over", "outer"):
        with pytest.raises(dwarf.DwarfError, match=r": over \(DIE 0x[0-9A-F]+, line 7\): the engine "
                                                   r"cannot reproduce the recorded layout"):
            dwarf.dwarf_struct(obj, name)
    for name in ("plain", "packed2", "holder"):
        _, decl = dwarf.dwarf_struct(obj, name)
        header = cheader.header_struct(tmp_path / "packed.h", name, "x86_64")
        assert _cells(decl.layout("x86_64")) == _cells(header.layout("x86_64")), name
    with pytest.raises(dwarf.DwarfError, match="over"):
        dwarf.dwarf_structs(obj)  # every struct at once: the one that cannot be read fails it
