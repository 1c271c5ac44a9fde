"""The compiled test programs of the hal tests (a module of its own: test files import it by name,
which a `conftest` import cannot do reliably when several test folders each have a conftest.py)."""
from __future__ import annotations

from pathlib import Path

from . import iree_tools
from . import vm_ir
from ireeabi.vm.bytecode import module_file as mf

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"


class Program:
    """A compiled inline-dynamic test program: its kernel library and the compiler's dispatches."""

    def __init__(self, name: str) -> None:
        src = PROGRAMS / f"{name}.mlir"
        self.module = mf.read_module(iree_tools.compile_mlir(src))
        segs = [mf.rodata_bytes(s) for s in self.module.rodata_segments]
        self.elf = next(s for s in segs if s[:4] == b"\x7fELF")
        self.format = next(s for s in segs if s.startswith(b"embedded-elf-")).decode()
        self.ir = vm_ir.vm_ir(src)

    def dispatches(self, function, args, shapes=None):
        return vm_ir.dispatches(self.ir, function, args, shapes)


_programs: dict[str, Program] = {}


def program(name: str) -> Program:
    if name not in _programs:
        _programs[name] = Program(name)
    return _programs[name]
