"""Structs from DWARF (abi/dwarf.py): objects built by gcc (the host's, and `-m32`) from the
constructs header, read back and compared with the header read by libclang (itself cross-checked
with libclang's layout), on the object's own data model and re-laid on all seven."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ireeabi.abi import cheader, dwarf, oracles
from ireeabi.abi.errors import UnknownNameError
from ireeabi.abi.targets import TARGETS

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
