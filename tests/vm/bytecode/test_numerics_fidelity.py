"""The interpreter's scalar ops against IREE's VM (iree-run-module 3.13), bit for bit.

The sweeps in tests/programs/numerics_fidelity (written by its generate.py) run every integer and
float op over tables of edge values and pseudo-random operands - NaNs with payloads, signaling
NaNs, signed zeros, subnormals, rounding ties, the ends of every integer range - and return all
results in one buffer per function, which iree-run-module writes out raw: one invocation checks
thousands of results. Every expected value comes from iree-run-module; where IREE's behaviour is
worth stating (a signaling NaN kept, a multiply-add not fused), the test reads it from the tool's
output too, and the interpreter must agree.

The runtime is clang-built and calls the host's glibc (the same libm the interpreter binds through
ctypes, with the symbol versions iree-run-module links: exp/log/pow@GLIBC_2.2.5, expf/logf/
powf@GLIBC_2.27), so transcendental results compare exactly.
"""
from __future__ import annotations

import re
import signal
import struct
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from support import iree_tools as tools
from ireeabi.vm.bytecode import isa
from ireeabi.vm.bytecode.decoder import decode_module
from ireeabi.vm.bytecode import Context, VmTrapError
from ireeabi.vm.bytecode.module_file import read_module
from test_interpreter import _arg, _patched, assert_same

PROGRAMS = Path(__file__).parents[2] / "programs" / "numerics_fidelity"
SWEEP_FILES = ("ints.vm.mlir", "floats.vm.mlir", "patched.vm.mlir")
# patched.vm.mlir: function -> (stand-in op in the source, the op its opcode is overwritten with).
PATCHES = {"cast_f64_si32": ("trunc.f64.f32", "cast.f64.si32"),
           "cast_f64_ui32": ("trunc.f64.f32", "cast.f64.ui32"),
           "cast_si32_f64": ("ext.f32.f64", "cast.si32.f64"),
           "cast_ui32_f64": ("ext.f32.f64", "cast.ui32.f64")}


@lru_cache(maxsize=None)
def compiled(name: str) -> Path:
    return tools.compile_with_flags(PROGRAMS / name, tools.VM_INPUT_FLAGS)


@lru_cache(maxsize=None)
def module_for(program: str, function: str) -> Path:
    """The compiled program; for patched.vm.mlir, a copy whose stand-in op is the real cast."""
    path = compiled(program)
    if function not in PATCHES:
        return path
    stand_in, target = PATCHES[function]
    m = read_module(path)
    ordinal = m.exported(function).internal_ordinal
    inst, = [i for i in decode_module(m)[ordinal] if i.mnemonic == stand_in]
    assert inst.prefix == isa.op(target).prefix  # same extension set: only the opcode byte changes
    out = tools.session_dir() / f"{path.stem}.{function}.vmfb"
    out.write_bytes(_patched(path, function, inst.pc + 1, bytes([isa.op(target).opcode])))
    return out


@dataclass(frozen=True)
class Sweep:
    program: str
    function: str
    ops: tuple[str, ...]  # slot names; the op mnemonic is the part before any "("
    values: tuple[int, ...]
    width: int  # bits of one table entry
    binary: bool

    def operands(self, index: int) -> tuple[int, ...]:
        n = len(self.values)
        return (self.values[index // n], self.values[index % n]) if self.binary else \
            (self.values[index],)

    def slot(self, op: str, *operands: int) -> int:
        """The slot index of `op` applied to `operands` (table entries)."""
        n = len(self.values)
        at = [self.values.index(v) for v in operands]
        index = at[0] * n + at[1] if self.binary else at[0]
        return index * len(self.ops) + self.ops.index(op)


def _parse(program: str) -> dict[str, Sweep]:
    text = (PROGRAMS / program).read_text()
    tables = {m[1]: (tuple(int(v) for v in m[2].split(",")), int(m[3][1:])) for m in re.finditer(
        r"vm\.rodata private @(\w+) dense<\[(.*?)\]> : tensor<\d+x(i\d+)>", text)}
    sweeps = {}
    for m in re.finditer(r"// (binary|unary) slots: (.*)\n\s*vm\.func @(\w+)\(\) -> !vm\.buffer \{"
                         r"\n\s*%tab = vm\.const\.ref\.rodata @(\w+)", text):
        values, width = tables[m[4]]
        sweeps[m[3]] = Sweep(program, m[3], tuple(m[2].split()), values, width, m[1] == "binary")
    return sweeps


SWEEPS = {name: s for program in SWEEP_FILES for name, s in _parse(program).items()}


@lru_cache(maxsize=None)
def theirs(function: str) -> np.ndarray:
    """iree-run-module's result buffer as 8-byte slots."""
    s = SWEEPS[function]
    raw, = tools.run_module_results([module_for(s.program, function)], function, [], 1)
    return np.frombuffer(raw.tobytes(), "<u8")


def ours(function: str) -> np.ndarray:
    s = SWEEPS[function]
    result, = Context(module_for(s.program, function)).invoke(function)
    return np.frombuffer(result.tobytes(), "<u8")


def _mismatches(s: Sweep, got: np.ndarray, want: np.ndarray) -> list[str]:
    k, mask = len(s.ops), (1 << s.width) - 1
    lines = []
    for at in np.nonzero(got != want)[0][:25]:
        index, op = divmod(int(at), k)
        args = ", ".join(f"0x{v & mask:0{s.width // 4}X}" for v in s.operands(index))
        lines.append(f"{s.ops[op]}({args}): ours 0x{int(got[at]):X}, iree 0x{int(want[at]):X}")
    return lines


def test_sweeps_cover_every_scalar_op():
    covered = {op.split("(")[0] for s in SWEEPS.values() for op in s.ops}
    scalar = {info.mnemonic for table in isa.OPCODES.values() for info in table.values()
              if re.match(r"(add|sub|mul|div|rem|fma|abs|neg|min|max|not|and|or|xor|shl|shr|ctlz|"
                          r"ceil|floor|round|trunc|ext|cast|bitcast|cmp|select|switch|atan|cos|sin|"
                          r"exp|log|pow|rsqrt|sqrt|tanh|erf)", info.mnemonic)
              and "ref" not in info.mnemonic and "buffer" not in info.mnemonic}
    # The bitcasts carry every float operand and result of the sweeps in and out.
    assert scalar - covered == {"bitcast.i32.f32", "bitcast.f32.i32", "bitcast.i64.f64",
                                "bitcast.f64.i64"}


@pytest.mark.parametrize("function", sorted(SWEEPS))
def test_sweep_matches_iree_run_module(function):
    s = SWEEPS[function]
    m = read_module(module_for(s.program, function))
    ran = {i.mnemonic for i in decode_module(m)[m.exported(function).internal_ordinal]}
    assert {op.split("(")[0] for op in s.ops} <= ran, "an op was folded away or not patched in"
    want = theirs(function)
    n = len(s.values)
    assert len(want) == len(s.ops) * (n * n if s.binary else n)
    got = ours(function)
    assert len(got) == len(want)
    bad = _mismatches(s, got, want)
    assert not bad, f"{function}: {np.count_nonzero(got != want)} slot(s) differ:\n" + \
        "\n".join(bad)


def _f32(x: float) -> int:
    return struct.unpack("<i", struct.pack("<f", x))[0]


def _f64(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", x))[0]


SNAN32, SNAN64 = 0x7F800001, 0x7FF0000000000001
ONE32, ONE64 = _f32(1.0), _f64(1.0)


@pytest.mark.parametrize("function,op,operands,value", [
    # min/max return an operand untouched (a C comparison, no arithmetic): a signaling NaN stays
    # signaling. The interpreter reads f32 registers into Python floats, which quiets them.
    ("f32_binary_0", "min.f32", (SNAN32, ONE32), SNAN32),
    ("f32_binary_0", "max.f32", (SNAN32, ONE32), SNAN32),
    ("f64_binary_0", "min.f64", (SNAN64, ONE64), SNAN64),
    # glibc's powf answers pow(sNaN, 0) and pow(1, sNaN) with x + y, a quiet NaN, not 1.
    ("f32_binary_1", "pow.f32", (SNAN32, 0), 0x7FC00001),
    ("f32_binary_1", "pow.f32", (ONE32, SNAN32), 0x7FC00001),
    ("f32_binary_1", "pow.f32", (0x7FC00000, 0), ONE32),  # a quiet NaN to the 0 is 1
    ("f64_binary_1", "pow.f64", (ONE64, SNAN64), 0x7FF8000000000001),
    # ceil/floor/round of a signaling NaN and x / 0 of one: quieted, payload kept.
    ("f64_unary", "ceil.f64", (SNAN64,), 0x7FF8000000000001),
    ("f64_unary", "floor.f64", (SNAN64,), 0x7FF8000000000001),
    ("f64_unary", "round.f64", (SNAN64,), 0x7FF8000000000001),
    ("f64_unary", "round.f64.even", (SNAN64,), 0x7FF8000000000001),
    ("f64_binary_0", "div.f64", (SNAN64, 0), 0x7FF8000000000001),
    # a * b + c rounds twice (the runtime is not built with FP_FAST_FMA): 2^-24 fused, 0 here.
    ("f32_binary_1", "fma.f32(a,a,b)", (0x3F800800, -0x407FF000), 0),
    ("f64_binary_1", "fma.f64(a,a,b)", (_f64(1 + 2.0 ** -27), _f64(-1 - 2.0 ** -26)), 0),
    # Float -> int: lroundf/llround (half away from zero); out of range: INT64_MIN's low bits.
    ("f32_unary", "cast.f32.si32", (_f32(-2.5),), 0xFFFFFFFD),
    ("f32_unary", "cast.f32.si32", (_f32(3e9),), 3000000000),
    ("f32_unary", "cast.f32.si32", (_f32(1e20),), 0),
    ("f32_unary", "cast.f32.ui64", (_f32(-1.0),), (1 << 64) - 1),
    ("cast_f64_si32", "cast.f64.si32", (_f64(2.5),), 3),  # the patched opcode ran in IREE too
    ("cast_si32_f64", "cast.si32.f64", (-1,), _f64(-1.0)),
    # round.f32.even is IREE's pre-C23 emulation: -0.5 gives +0.0.
    ("f32_unary", "round.f32.even", (_f32(-0.5),), 0),
    ("f32_unary", "round.f32.even", (_f32(-2.5),), _f32(-2.0) & 0xFFFFFFFF),
    # Shift amounts are taken modulo the width; ctlz(0) is the width.
    ("i32_binary_1", "shl.i32", (1, 33), 2),
    ("i32_binary_1", "shr.i32.s", (-0x80000000, -1), 0xFFFFFFFF),
    ("i64_binary_1", "shl.i64", (1, 65), 2),
    ("i32_unary", "ctlz.i32", (0,), 32),
    ("i64_unary", "ctlz.i64", (0,), 64),
    # select/switch take any non-zero condition / the index as signed.
    ("i32_unary", "select.i32", (-0x80000000,), 7),
    ("i32_unary", "switch.i32", (-1,), 0xFFFFFFFF),
    ("i32_unary", "switch.i64", (1,), 0xFFFFFFFF80000007),  # 0x180000007, low word sign-extended
    ("i32_unary", "switch.f64", (1,), SNAN64),
])
def test_pinned_behaviour(function, op, operands, value):
    """Single slots of the sweeps, stated: the value is read from iree-run-module's output."""
    s = SWEEPS[function]
    at = s.slot(op, *operands)
    value &= (1 << 64) - 1  # a slot read as u64 (32-bit results zero-extended)
    assert int(theirs(function)[at]) == value
    assert int(ours(function)[at]) == value


@pytest.mark.parametrize("function,args", [
    ("rem_i32_s", (-2147483648, -1)), ("rem_i32_s", (5, 0)), ("rem_i32_u", (5, 0)),
    ("div_i32_u", (5, 0)), ("div_i64_s", (5, 0)), ("rem_i64_s", (-9223372036854775808, -1)),
    ("rem_i64_u", (5, 0)), ("div_i64_u", (5, 0)),
])
def test_division_traps_where_iree_dies_of_sigfpe(function, args):
    path = compiled("edges.vm.mlir")
    proc = tools.run_module_failure([path], function, [_arg(a) for a in args])
    # The binary's -SIGFPE, or the Python launcher's sys.exit of it.
    assert proc.returncode in (-signal.SIGFPE, 128 + signal.SIGFPE, 256 - signal.SIGFPE)
    assert "result[" not in proc.stdout
    with pytest.raises(VmTrapError, match="division by zero" if args[1] == 0 else "overflow"):
        Context(path).invoke(function, *args)


def test_float_constants_keep_their_bits():
    """const.f32 immediates that are signaling NaNs: the decoder's float is a quieted copy."""
    path = compiled("edges.vm.mlir")
    expected = tools.run_module_results([path], "nan_consts", [], 7)
    assert int(expected[0]) == SNAN32 and int(expected[1]) == -0x400001  # 0xFFBFFFFF
    assert_same(Context(path).invoke("nan_consts"), expected, "nan_consts")
