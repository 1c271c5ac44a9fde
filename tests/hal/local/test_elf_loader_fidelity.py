"""IREE's embedded ELF loader checks, one broken kernel at a time, against iree-run-module.

A real inline-dynamic module (add16) gets one field of its embedded kernel ELF broken in place — each
field one of the checks of IREE's hal/local/elf/elf_module.c and arch/x86_64.c looks at — and both
iree-run-module and `ireeabi run` are given the same file. Both must fail (or both succeed), and
ireeabi's message must carry IREE's status code and text. Field positions are found with pyelftools,
not assumed.
"""
from __future__ import annotations

import io
import re
import struct
import subprocess
from functools import lru_cache
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from support import iree_tools as tools
from ireeabi.cli.main import main
from ireeabi.vm.bytecode.module_file import read_module

PROGRAM = Path(__file__).parents[2] / "programs" / "add16.mlir"
INPUTS = ["--function=add", "--input=16xf32=1", "--input=16xf32=2"]
DT = {"DT_NULL": 0, "DT_RELA": 7, "DT_RELAENT": 9, "DT_SYMTAB": 6, "DT_SYMENT": 11, "DT_DEBUG": 21,
      "DT_PLTREL": 20, "DT_REL": 17}


def u16(v: int) -> bytes:
    return struct.pack("<H", v)


def u64(v: int) -> bytes:
    return struct.pack("<Q", v)


@lru_cache(maxsize=None)
def _module() -> tuple[bytes, int, ELFFile]:
    data = tools.compile_mlir(PROGRAM, None, "inline-dynamic").read_bytes()
    seg = next(s for s in read_module(data).rodata_segments if data[s.offset:s.offset + 4] == b"\x7fELF")
    return data, seg.offset, ELFFile(io.BytesIO(data[seg.offset:seg.offset + seg.length]))


def _dyn_entry(elf: ELFFile, tag: str) -> int:
    """File offset (in the ELF) of the .dynamic entry with `tag`."""
    dyn = next(s for s in elf.iter_segments() if s.header.p_type == "PT_DYNAMIC")
    for i, t in enumerate(dyn.iter_tags()):
        if t.entry.d_tag == tag:
            return dyn.header.p_offset + 16 * i
    raise AssertionError(f"no {tag} in the kernel's .dynamic")


def _phdr(elf: ELFFile, p_type: str) -> int:
    for i, s in enumerate(elf.iter_segments()):
        if s.header.p_type == p_type:
            return elf.header.e_phoff + i * elf.header.e_phentsize
    raise AssertionError(p_type)


def _edits(elf: ELFFile, case: str) -> list[tuple[int, bytes]]:
    rela = elf.get_section_by_name(".rela.dyn").header.sh_offset
    return {
        "identifier": lambda: [(1, b"X")],
        "class": lambda: [(4, b"\x01")],
        "endianness": lambda: [(5, b"\x02")],
        "version (not checked)": lambda: [(6, b"\x00")],
        "machine": lambda: [(18, u16(0x28))],
        "type": lambda: [(16, u16(2))],
        "phentsize": lambda: [(54, u16(elf.header.e_phentsize + 1))],
        "shentsize": lambda: [(58, u16(elf.header.e_shentsize + 1))],
        "no phdrs": lambda: [(56, u16(0))],
        "shdr table past the file": lambda: [(60, u16(0xFFFF))],
        "PT_LOAD past the file": lambda: [(_phdr(elf, "PT_LOAD") + 32, u64(1 << 20))],
        "no PT_DYNAMIC": lambda: [(_phdr(elf, "PT_DYNAMIC"), b"\0\0\0\0")],
        "DT_SYMENT": lambda: [(_dyn_entry(elf, "DT_SYMENT") + 8, u64(25))],
        "DT_RELAENT": lambda: [(_dyn_entry(elf, "DT_RELAENT") + 8, u64(25))],
        "no DT_SYMTAB": lambda: [(_dyn_entry(elf, "DT_SYMTAB"), u64(DT["DT_DEBUG"]))],
        "DT_PLTREL of DT_REL": lambda: [(_dyn_entry(elf, "DT_FLAGS_1"), u64(DT["DT_PLTREL"]) + u64(DT["DT_REL"]))],
        "DT_REL": lambda: [(_dyn_entry(elf, "DT_FLAGS"), u64(DT["DT_REL"]) + u64(rela))],
        "relocation type": lambda: [(rela + 8, u64(99))],
        "relocation symbol": lambda: [(rela + 8, u64((0xFFFF << 32) | 1))],
    }[case]()


CASES = ["identifier", "class", "endianness", "version (not checked)", "machine", "type", "phentsize",
         "shentsize", "no phdrs", "shdr table past the file", "PT_LOAD past the file", "no PT_DYNAMIC",
         "DT_SYMENT", "DT_RELAENT", "no DT_SYMTAB", "DT_PLTREL of DT_REL", "DT_REL", "relocation type",
         "relocation symbol"]


@pytest.mark.parametrize("case", CASES)
def test_broken_kernel_elf_gets_iree_loader_status(case, tmp_path):
    data, at, elf = _module()
    broken = bytearray(data)
    for off, raw in _edits(elf, case):
        broken[at + off:at + off + len(raw)] = raw
    path = tmp_path / "broken.vmfb"
    path.write_bytes(bytes(broken))
    iree = subprocess.run([tools.find_tool("iree-run-module"), tools.RUN_DEVICE, f"--module={path}",
                           *INPUTS], capture_output=True, text=True, timeout=120)
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", str(path), *INPUTS], stdout=out, stderr=err)
    assert code == iree.returncode, (iree.stderr, err.getvalue())
    if iree.returncode == 0:
        assert out.getvalue() == iree.stdout
        return
    # IREE: "<file>.c:<line>: CODE; message; while invoking native function hal_loader.executable.load"
    m = re.search(r"\.c:\d+: ([A-Z_]+; .*?); while invoking native function hal_loader\.executable\.load",
                  iree.stderr)
    assert m, iree.stderr
    ours = " ".join(err.getvalue().split())
    assert f"{m.group(1)}; while calling import hal_loader.executable.load" in ours, (m.group(1), ours)
