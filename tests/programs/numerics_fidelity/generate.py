"""Writes ints.vm.mlir, floats.vm.mlir and patched.vm.mlir next to this file.

Run `python generate.py` after changing a table or an op list (the output is deterministic: the
random tables come from a fixed seed). Every generated function sweeps one rodata table of operands
(floats as bit patterns, so NaN payloads and signaling NaNs reach the ops intact) through a list of
ops and returns one !vm.buffer of 8-byte slots: a binary function covers every ordered pair (a, b)
of its table, a unary one every a; each operand (pair) fills len(ops) consecutive slots. An i32/f32
result sits in a slot's low 4 bytes (the bits, little-endian, upper 4 bytes zero), an i64/f64
result fills it. iree-run-module writes a returned buffer to .npy as raw bytes, so a whole sweep
costs one invocation; it dies of SIGSEGV on buffers of about 128 KiB and more (see README.md), so
no buffer is larger than 120 kB.
"""
from __future__ import annotations

import random
import struct
from pathlib import Path

HERE = Path(__file__).parent


def f32b(x: float) -> int:
    return struct.unpack("<i", struct.pack("<f", x))[0]


def f64b(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", x))[0]


def s32(u: int) -> int:
    u &= 0xFFFFFFFF
    return u - (1 << 32) if u >> 31 else u


def s64(u: int) -> int:
    u &= (1 << 64) - 1
    return u - (1 << 64) if u >> 63 else u


# --------------------------------------------------------------------------------------------------
# Operand tables: edges chosen by hand, then pseudo-random samples

INF = float("inf")
I32_EDGES = [0, 1, -1, 2, -2, 3, -3, 5, -7, 31, 32, 33, 63, 64, -31, -32, 255, 256, 0x7FFF, -0x8000,
             0x10000, 0x12345678, 0x55555555, s32(0xAAAAAAAA), 0x7FFFFFFE, 0x7FFFFFFF, -0x80000000,
             -0x7FFFFFFF, 1000000007, -1000000]
# Unary: narrowing/extension edges, int -> float rounding (ties above 2^24, unsigned views).
I32_UNARY_EDGES = sorted(set(I32_EDGES + [
    7, -128, 127, 128, -129, 0x80, 0xFF, 0x100, 0x7F7F, 0x8000, 0xFFFF, 0x18000, s32(0xFFFF8000),
    16777216, 16777217, 16777219, -16777217, 0x7FFFFFC0, 0x7FFFFFBF, 0x7FFFFF40, 0x7FFFFF80,
    s32(0xFFFFFF7F), s32(0xFFFFFF80), s32(0xFFFFFF81), s32(0x80000001), s32(0x800000C0),
    s32(0xC0000000), 0x40000000, 0x00800001, 0x01000003, s32(0xFEDCBA98)]),
    key=lambda v: (abs(v), v))

I64_EDGES = [0, 1, -1, 2, -2, 7, -7, 31, 32, 63, 64, 65, -64, 0xFFFFFFFF, 0x100000000, 0x7FFFFFFF,
             -0x80000000, 0x123456789ABCDEF0, 0x5555555555555555, s64(0xAAAAAAAAAAAAAAAA),
             (1 << 63) - 1, -(1 << 63), -(1 << 63) + 1, (1 << 63) - 2, 1 << 53, (1 << 53) + 1,
             10 ** 18, -(10 ** 18), s64(0x8000000000000001), 0x100000020]
# Unary: i64 -> f32/f64 ties and sticky bits, unsigned values above 2^63.
I64_UNARY_EDGES = sorted(set(I64_EDGES + [
    (1 << 24) + 1, ((1 << 24) + 1) << 20, (1 << 53) + 3, -(1 << 53) - 1, (1 << 62) + 1,
    0x7FFFFF8000000000, 0x7FFFFF8000000001, 0x7FFFFF7FFFFFFFFF, 0x7FFFFFFFFFFFFDFF,
    0x7FFFFFFFFFFFFE00, 0x7FFFFFFFFFFFFC00, s64(0x8000008000000000), s64(0x8000018000000000),
    s64(0xFFFFFF7FFFFFFFFF), s64(0xFFFFFF8000000000), s64(0xFFFFFF8000000001),
    s64(0xFFFFFFFFFFFFF7FF), s64(0xFFFFFFFFFFFFFC00), s64(0xFFFFFFFFFFFFFBFF),
    (1 << 60) + (1 << 36) + 1, (1 << 60) + (1 << 36), (1 << 60) + (3 << 36),
    0x0000000100000001, 0x00000000FFFFFFFF, 0x0000FFFFFFFFFFFF, 0x0001000000000000]),
    key=lambda v: (abs(v), v))

# Quiet NaNs with and without payload and sign; signaling NaNs 0x7F800001, 0xFFA00005, 0x7FBFFFFF.
NAN32 = [0x7FC00000, s32(0xFFC00000), 0x7FC12345, s32(0xFFE00001), 0x7F800001, s32(0xFFA00005),
         0x7FBFFFFF]
# 0x3F800800 * 0x3F800800 + 0xBF801000 is 2^-24 fused, 0 with two roundings (fma's (a, a, b) slot).
F32_EDGES = [f32b(x) for x in (
    0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 2.0, 3.0, -3.0, 0.1, 1e-3, 100.0, -1e10, 16777216.0,
    3.4028234663852886e38, -3.4028234663852886e38, 1e-45, -1e-45, 1.1754943508222875e-38, INF, -INF,
    3.141592653589793, 2.718281828459045, 0.75, 1e30, 1e-30, -0.25, 7.0, 2147483648.0)
] + [0x3F800800, s32(0xBF801000)] + NAN32
# Unary: rounding ties and near-ties, the int range ends of every cast, libm thresholds.
F32_UNARY_EDGES = [f32b(x) for x in (
    0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, -3.5, 0.49999997, -0.49999997, 0.50000006,
    -0.50000006, 1.0, -1.0, 0.3, -0.3, 0.7, -0.7, 8388607.5, -8388607.5, 4194303.5, -4194302.5,
    8388608.0, -8388609.0, 16777216.0, 1e10, -1e10, 2147483520.0, 2147483648.0, -2147483648.0,
    -2147483904.0, 4294967040.0, 4294967296.0, -4294967296.0, 3e9, -3e9, 9223371487098961920.0,
    9223372036854775808.0, -9223372036854775808.0, -9223373136366403584.0, 18446742974197923840.0,
    18446744073709551616.0, 1e20, -1e20, 3.4028234663852886e38, -3.4028234663852886e38, INF, -INF,
    1e-45, -1e-45, 1e-40, 1.1754943508222875e-38, 88.72, 88.73, -87.3, -103.97, -104.0, 128.0,
    127.99, -149.0, -150.0, -126.0, 0.6931472, 1e-8, -1e-8, 100.0, 2.0, 10.0, 0.1, 1.5707964,
    3.1415927, 1e6, 1e38, -0.9999999, -1.5, 4.0, 0.25, 1e-20, 9.0, 1.0000001, 0.99999994, 7.5,
    20.0, -20.0, 5.0, -5.0, 1e15)] + NAN32

NAN64 = [0x7FF8000000000000, s64(0xFFF8000000000000), 0x7FF8000000012345, s64(0xFFFC000000000001),
         0x7FF0000000000001, s64(0xFFF4000000000005), 0x7FF7FFFFFFFFFFFF, 0x7FF8000020000000]
# 1 + 2^-27 and -(1 + 2^-26): fma (a, a, b) is 2^-54 fused, 0 with two roundings.
F64_EDGES = [f64b(x) for x in (
    0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 2.0, 3.0, -3.0, 0.1, 1e-3, 100.0, -1e10,
    9007199254740992.0, 1.7976931348623157e308, -1.7976931348623157e308, 5e-324, -5e-324,
    2.2250738585072014e-308, INF, -INF, 3.141592653589793, 2.718281828459045, 0.75, 1e300, 1e-300,
    -0.25, 7.0, 9223372036854775808.0, 1.0000000074505806, -1.0000000149011612)] + NAN64
# Unary: as for f32, plus f64 -> f32 rounding (ties at FLT_MAX, subnormal halfway points).
F64_UNARY_EDGES = [f64b(x) for x in (
    0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, -3.5, 0.49999999999999994,
    -0.49999999999999994, 0.5000000000000001, -0.5000000000000001, 1.0, -1.0, 0.3, -0.7,
    4503599627370495.5, -4503599627370495.5, 2251799813685247.5, -2251799813685246.5,
    4503599627370496.0, -4503599627370497.0, 9007199254740992.0, 1e10, -1e10, 2147483647.0,
    2147483647.5, 2147483648.0, -2147483648.0, -2147483648.5, -2147483649.0, 4294967295.0,
    4294967295.5, 4294967296.0, 3e9, -3e9, 8388607.5, 8388608.5, 16777217.0, 2147483583.0,
    2147483584.0, 9223372036854774784.0, 9223372036854775808.0, -9223372036854775808.0,
    -9223372036854777856.0, 18446744073709549568.0, 18446744073709551616.0, 1e20, -1e20,
    3.4028234663852886e38, 3.4028235677973366e38, 3.402823567797337e38, -3.5e38, 1e39,
    1.7976931348623157e308, INF, -INF, 5e-324, -5e-324, 1e-310, 2.2250738585072014e-308,
    1.401298464324817e-45, 7.006492321624085e-46, 7.006492321624087e-46, 1e-46,
    1.1754942807573643e-38, 0.1, 1.0000000596046448, 1.0000000596046446, 709.78, 709.79, -745.13,
    -745.14, -708.4, 1024.0, 1023.99, -1074.0, -1075.0, 0.6931471805599453, 1e-17, -1e-17, 100.0,
    2.0, 10.0, 1.5707963267948966, 3.141592653589793, 1e22, 1e300, -0.9999999999, -1.5, 4.0, 0.25,
    9.0, 1.0000000000000002, 0.9999999999999999, 7.5, 30.0, -30.0, 5.0, -5.0, 1e15)] + NAN64

rng = random.Random(20240613)


def random_ints(bits: int, n: int) -> list[int]:
    """Values of every magnitude: a random bit length, then random bits and sign."""
    wrap = s32 if bits == 32 else s64
    return [wrap(rng.getrandbits(rng.randint(1, bits)) * rng.choice((1, -1))) for _ in range(n)]


def random_floats(bits: int, n: int) -> list[int]:
    """Bit patterns: a third uniformly random (any exponent, NaNs included), a third moderate reals,
    a third integers and halves up to 2^40."""
    pack = f32b if bits == 32 else f64b
    wrap = s32 if bits == 32 else s64
    out = []
    for i in range(n):
        kind = i % 3
        if kind == 0:
            out.append(wrap(rng.getrandbits(bits)))
        elif kind == 1:
            out.append(pack(rng.uniform(-1e3, 1e3) * 10.0 ** rng.randint(-8, 8)))
        else:
            out.append(pack(rng.randint(-(1 << 40), 1 << 40) / rng.choice((1, 2))))
    return out


I32_RANDOM, I32_UNARY_RANDOM = random_ints(32, 26), random_ints(32, 300)
I64_RANDOM, I64_UNARY_RANDOM = random_ints(64, 26), random_ints(64, 300)
F32_RANDOM, F32_UNARY_RANDOM = random_floats(32, 27), random_floats(32, 300)
F64_RANDOM, F64_UNARY_RANDOM = random_floats(64, 27), random_floats(64, 300)


# --------------------------------------------------------------------------------------------------
# Op lists: (slot name, MLIR lines producing {r} from %a [and %b], result type)

def binop(m: str, t: str) -> tuple[str, str, str]:
    return m, f"{{r}} = vm.{m} %a, %b : {t}", t


def cmp(m: str, t: str) -> tuple[str, str, str]:
    return m, f"{{r}} = vm.{m} %a, %b : {t}", "i32"


def un(m: str, t: str, rt: str | None = None) -> tuple[str, str, str]:
    return m, f"{{r}} = vm.{m} %a : {t}" + (f" -> {rt}" if rt else ""), rt or t


def test1(m: str, t: str) -> tuple[str, str, str]:
    return m, f"{{r}} = vm.{m} %a : {t}", "i32"


def int_binary(t: str) -> list[tuple[str, str, str]]:
    """%bs is b with 0 replaced by 1, %bd also (INT_MIN, -1) by (INT_MIN, 1): the native runtime
    dies of SIGFPE on those (tested separately); %amt is the i32 shift amount (b's low word)."""
    return [binop(f"add.{t}", t), binop(f"sub.{t}", t), binop(f"mul.{t}", t),
            (f"div.{t}.s", f"{{r}} = vm.div.{t}.s %a, %bd : {t}", t),
            (f"div.{t}.u", f"{{r}} = vm.div.{t}.u %a, %bs : {t}", t),
            (f"rem.{t}.s", f"{{r}} = vm.rem.{t}.s %a, %bd : {t}", t),
            (f"rem.{t}.u", f"{{r}} = vm.rem.{t}.u %a, %bs : {t}", t),
            (f"fma.{t}", f"{{r}} = vm.fma.{t} %a, %b, %a : {t}", t),
            binop(f"min.{t}.s", t), binop(f"min.{t}.u", t), binop(f"max.{t}.s", t),
            binop(f"max.{t}.u", t), binop(f"and.{t}", t), binop(f"or.{t}", t), binop(f"xor.{t}", t),
            (f"shl.{t}", f"{{r}} = vm.shl.{t} %a, %amt : {t}", t),
            (f"shr.{t}.s", f"{{r}} = vm.shr.{t}.s %a, %amt : {t}", t),
            (f"shr.{t}.u", f"{{r}} = vm.shr.{t}.u %a, %amt : {t}", t),
            cmp(f"cmp.eq.{t}", t), cmp(f"cmp.ne.{t}", t), cmp(f"cmp.lt.{t}.s", t),
            cmp(f"cmp.lt.{t}.u", t)]


def int_guard(t: str) -> tuple[list[str], list[str]]:
    lo = "-2147483648" if t == "i32" else "-9223372036854775808"
    consts = [f"%one = vm.const.{t} 1", f"%m1 = vm.const.{t} -1", f"%min = vm.const.{t} {lo}",
              "%zero32 = vm.const.i32 0"]
    lines = [f"%nz = vm.cmp.nz.{t} %b : {t}",
             f"%bs = vm.select.{t} %nz, %b, %one : {t}",
             f"%ism1 = vm.cmp.eq.{t} %b, %m1 : {t}",
             f"%ismin = vm.cmp.eq.{t} %a, %min : {t}",
             "%bad = vm.and.i32 %ism1, %ismin : i32",
             f"%bd = vm.select.{t} %bad, %one, %bs : {t}",
             "%amt = vm.trunc.i64.i32 %b : i64 -> i32" if t == "i64"
             else "%amt = vm.or.i32 %b, %zero32 : i32"]
    return consts, lines


def float_binary(t: str) -> list[tuple[str, str, str]]:
    ops = [binop(f"{m}.{t}", t) for m in ("add", "sub", "mul", "div", "rem", "min", "max", "pow",
                                           "atan2")]
    ops += [(f"fma.{t}(a,b,a)", f"{{r}} = vm.fma.{t} %a, %b, %a : {t}", t),
            (f"fma.{t}(a,a,b)", f"{{r}} = vm.fma.{t} %a, %a, %b : {t}", t)]
    ops += [cmp(f"cmp.{c}.{t}.{o}", t) for c in ("eq", "ne", "lt", "lte") for o in ("o", "u")]
    return ops


def float_unary(t: str) -> list[tuple[str, str, str]]:
    ops = [un(f"{m}.{t}", t) for m in ("ceil", "floor", "round")] + [un(f"round.{t}.even", t)]
    ops += [un(f"{m}.{t}", t) for m in ("abs", "neg", "sqrt", "rsqrt", "exp", "exp2", "expm1",
                                         "log", "log10", "log1p", "log2", "sin", "cos", "atan",
                                         "tanh", "erf")]
    # cast.f64.si32/ui32 have no VM-dialect op in 3.13: patched.vm.mlir covers them.
    ops += [un(f"cast.{t}.{i}", t, "i" + i[2:])
            for i in (("si32", "ui32", "si64", "ui64") if t == "f32" else ("si64", "ui64"))]
    ops.append(un("ext.f32.f64", t, "f64") if t == "f32" else un("trunc.f64.f32", t, "f32"))
    ops.append(test1(f"cmp.nan.{t}", t))
    return ops


# select/switch pick registers holding a signaling and a payload NaN: their bits must survive.
I32_UNARY = [un("abs.i32", "i32"), un("not.i32", "i32"), un("ctlz.i32", "i32"),
             test1("cmp.nz.i32", "i32")]
I32_UNARY += [un(m, "i32", "i32") for m in ("trunc.i32.i8", "trunc.i32.i16", "ext.i8.i32.s",
                                              "ext.i8.i32.u", "ext.i16.i32.s", "ext.i16.i32.u")]
I32_UNARY += [un("ext.i32.i64.s", "i32", "i64"), un("ext.i32.i64.u", "i32", "i64"),
              un("cast.si32.f32", "i32", "f32"), un("cast.ui32.f32", "i32", "f32"),
              ("select.i32", "{r} = vm.select.i32 %a, %i7, %i9 : i32", "i32"),
              ("select.i64", "{r} = vm.select.i64 %a, %l7, %l9 : i64", "i64"),
              ("select.f32", "{r} = vm.select.f32 %a, %snan32, %nan32 : f32", "f32"),
              ("select.f64", "{r} = vm.select.f64 %a, %snan64, %nan64 : f64", "f64"),
              ("switch.i32", "{r} = vm.switch.i32 %a[%i7, %i9, %i11] else %m1 : i32", "i32"),
              ("switch.f32", "{r} = vm.switch.f32 %a[%snan32, %nan32] else %half32 : f32", "f32"),
              # switch.i64 reads the chosen register as one sign-extended i32 (dispatch.c).
              ("switch.i64", "{r} = vm.switch.i64 %a[%l7, %lbig] else %l9 : i64", "i64"),
              ("switch.f64", "{r} = vm.switch.f64 %a[%nan64, %snan64] else %one64 : f64", "f64")]
I32_UNARY_CONSTS = [
    "%i7 = vm.const.i32 7", "%i9 = vm.const.i32 9", "%i11 = vm.const.i32 11",
    "%m1 = vm.const.i32 -1", "%l7 = vm.const.i64 7", "%l9 = vm.const.i64 -9",
    f"%sb32 = vm.const.i32 {0x7F800001}", "%snan32 = vm.bitcast.i32.f32 %sb32 : i32 -> f32",
    f"%nb32 = vm.const.i32 {s32(0xFFC01245)}", "%nan32 = vm.bitcast.i32.f32 %nb32 : i32 -> f32",
    "%half32 = vm.const.f32 0.5",
    f"%sb64 = vm.const.i64 {0x7FF0000000000001}", "%snan64 = vm.bitcast.i64.f64 %sb64 : i64 -> f64",
    f"%nb64 = vm.const.i64 {s64(0xFFF8000000000001)}",
    "%nan64 = vm.bitcast.i64.f64 %nb64 : i64 -> f64", f"%lbig = vm.const.i64 {0x180000007}",
    "%one64 = vm.const.f64 1.0"]
I64_UNARY = [un("abs.i64", "i64"), un("not.i64", "i64"), un("ctlz.i64", "i64"),
             test1("cmp.nz.i64", "i64"), un("trunc.i64.i32", "i64", "i32"),
             un("cast.si64.f32", "i64", "f32"), un("cast.ui64.f32", "i64", "f32"),
             un("cast.si64.f64", "i64", "f64"), un("cast.ui64.f64", "i64", "f64")]


# --------------------------------------------------------------------------------------------------
# Emission

WIDE = {"i64", "f64"}
MAX_BYTES = 120_000


class Sweep:
    def __init__(self, name: str, table: str, values: list[int], ttype: str, ops: list,
                 binary: bool, consts=(), guard=()) -> None:
        self.name, self.table, self.values, self.ttype = name, table, values, ttype
        self.ops, self.binary, self.consts, self.guard = ops, binary, list(consts), list(guard)

    @property
    def raw(self) -> str:
        return "i64" if self.ttype in WIDE else "i32"


def sweeps(name: str, table: str, values: list[int], ttype: str, ops: list, binary: bool,
           consts=(), guard=()) -> list[Sweep]:
    """One function, or as many as it takes to keep each result buffer under MAX_BYTES."""
    per_op = 8 * (len(values) ** 2 if binary else len(values))
    fit = MAX_BYTES // per_op
    parts = -(-len(ops) // fit)
    size = -(-len(ops) // parts)
    return [Sweep(f"{name}_{i}" if parts > 1 else name, table, values, ttype,
                  ops[i * size:(i + 1) * size], binary, consts, guard) for i in range(parts)]


def _load(var: str, idx: str, s: Sweep) -> list[str]:
    raw = s.raw
    if s.ttype == raw:
        return [f"%{var} = vm.buffer.load.{raw} %tab[%{idx}] : !vm.buffer -> {raw}"]
    return [f"%{var}_bits = vm.buffer.load.{raw} %tab[%{idx}] : !vm.buffer -> {raw}",
            f"%{var} = vm.bitcast.{raw}.{s.ttype} %{var}_bits : {raw} -> {s.ttype}"]


def _results(s: Sweep) -> tuple[list[str], set[int]]:
    """The op lines and the stores of their results (slot k + i; %kk = 2k indexes i32 halves)."""
    out, offsets = [], set()
    for i, (_, lines, rt) in enumerate(s.ops):
        r = f"%r{i}"
        out += lines.format(r=r).split("\n")
        if rt in ("f32", "f64"):
            raw = "i32" if rt == "f32" else "i64"
            out.append(f"%r{i}b = vm.bitcast.{rt}.{raw} {r} : {rt} -> {raw}")
            r = f"%r{i}b"
        if rt in WIDE:
            offsets.add(i)
            out += [f"%x{i} = vm.add.i64 %k, %c{i} : i64",
                    f"vm.buffer.store.i64 {r}, %out[%x{i}] : i64 -> !vm.buffer"]
        else:
            offsets.add(2 * i)
            out += [f"%x{i} = vm.add.i64 %kk, %c{2 * i} : i64",
                    f"vm.buffer.store.i32 {r}, %out[%x{i}] : i32 -> !vm.buffer"]
    return out, offsets


def emit(s: Sweep) -> str:
    k, n = len(s.ops), len(s.values)
    size = 8 * k * (n * n if s.binary else n)
    assert size <= MAX_BYTES, (s.name, size)
    lines, offsets = _results(s)
    L = [f"  // {'binary' if s.binary else 'unary'} slots: {' '.join(o[0] for o in s.ops)}",
         f"  vm.func @{s.name}() -> !vm.buffer {{",
         f"    %tab = vm.const.ref.rodata @{s.table} : !vm.buffer",
         f"    %n = vm.const.i64 {n}",
         f"    %size = vm.const.i64 {size}",
         "    %align = vm.const.i32 64",
         "    %out = vm.buffer.alloc %size, %align : !vm.buffer"]
    L += [f"    %c{c} = vm.const.i64 {c}" for c in sorted(offsets | {0, 1, k})]
    L += [f"    {c}" for c in s.consts]
    step = ["%kk = vm.add.i64 %k, %k : i64"] + s.guard + lines + [
        f"%knext = vm.add.i64 %k, %c{k} : i64"]
    if s.binary:
        L += ["    vm.br ^outer(%c0, %c0 : i64, i64)", "  ^outer(%i : i64, %k0 : i64):"]
        L += ["    " + x for x in _load("a", "i", s)]
        L += ["    vm.br ^inner(%c0, %k0 : i64, i64)", "  ^inner(%j : i64, %k : i64):"]
        L += ["    " + x for x in _load("b", "j", s) + step]
        L += ["    %j1 = vm.add.i64 %j, %c1 : i64",
              "    %jmore = vm.cmp.lt.i64.s %j1, %n : i64",
              "    vm.cond_br %jmore, ^inner(%j1, %knext : i64, i64), ^next(%knext : i64)",
              "  ^next(%kn : i64):",
              "    %i1 = vm.add.i64 %i, %c1 : i64",
              "    %imore = vm.cmp.lt.i64.s %i1, %n : i64",
              "    vm.cond_br %imore, ^outer(%i1, %kn : i64, i64), ^done"]
    else:
        L += ["    vm.br ^loop(%c0, %c0 : i64, i64)", "  ^loop(%i : i64, %k : i64):"]
        L += ["    " + x for x in _load("a", "i", s) + step]
        L += ["    %i1 = vm.add.i64 %i, %c1 : i64",
              "    %imore = vm.cmp.lt.i64.s %i1, %n : i64",
              "    vm.cond_br %imore, ^loop(%i1, %knext : i64, i64), ^done"]
    L += ["  ^done:", "    vm.return %out : !vm.buffer", "  }", f"  vm.export @{s.name}", ""]
    return "\n".join(L)


HEADER = """\
// Generated by generate.py (edit that, not this). VM dialect, --compile-from=vm.
// Each function sweeps the rodata table it loads (floats as bit patterns) through the ops on its
// `slots:` line and returns a buffer of 8-byte slots: for a binary sweep, for each a, for each b,
// one slot per op; for a unary sweep, for each a, one slot per op. i32/f32 results sit in a slot's
// low 4 bytes (bits, little-endian), i64/f64 results fill it.
"""


def module(name: str, fns: list[Sweep], note: str = "") -> str:
    tables: dict[str, Sweep] = {}
    for s in fns:
        tables.setdefault(s.table, s)
    text = HEADER + note + f"vm.module @{name} {{\n"
    for t, s in tables.items():
        text += (f"  vm.rodata private @{t} dense<[{', '.join(map(str, s.values))}]> : "
                 f"tensor<{len(s.values)}x{s.raw}>\n")
    return text + "\n" + "\n".join(emit(s) for s in fns) + "}\n"


def main() -> None:
    i32c, i32g = int_guard("i32")
    i64c, i64g = int_guard("i64")
    ints, floats = [], []
    for tag, tables in (("", (I32_EDGES, I64_EDGES, I32_UNARY_EDGES, I64_UNARY_EDGES,
                              F32_EDGES, F64_EDGES, F32_UNARY_EDGES, F64_UNARY_EDGES)),
                        ("_random", (I32_RANDOM, I64_RANDOM, I32_UNARY_RANDOM, I64_UNARY_RANDOM,
                                     F32_RANDOM, F64_RANDOM, F32_UNARY_RANDOM, F64_UNARY_RANDOM))):
        i32b, i64b, i32u, i64u, f32b_, f64b_, f32u, f64u = tables
        ints += sweeps(f"i32_binary{tag}", f"i32_pairs{tag}", i32b, "i32", int_binary("i32"),
                       True, i32c, i32g)
        ints += sweeps(f"i64_binary{tag}", f"i64_pairs{tag}", i64b, "i64", int_binary("i64"),
                       True, i64c, i64g)
        ints += sweeps(f"i32_unary{tag}", f"i32_values{tag}", i32u, "i32", I32_UNARY, False,
                       I32_UNARY_CONSTS)
        ints += sweeps(f"i64_unary{tag}", f"i64_values{tag}", i64u, "i64", I64_UNARY, False)
        floats += sweeps(f"f32_binary{tag}", f"f32_pairs{tag}", f32b_, "f32",
                         float_binary("f32"), True)
        floats += sweeps(f"f32_unary{tag}", f"f32_values{tag}", f32u, "f32", float_unary("f32"),
                         False)
        floats += sweeps(f"f64_binary{tag}", f"f64_pairs{tag}", f64b_, "f64",
                         float_binary("f64"), True)
        floats += sweeps(f"f64_unary{tag}", f"f64_values{tag}", f64u, "f64", float_unary("f64"),
                         False)
    # Stand-ins with the same register shapes (f64 -> 32-bit; 32-bit -> f64), each the only such op
    # in its function: the test overwrites its opcode with the cast's.
    to_i32 = "{r} = vm.trunc.f64.f32 %a : f64 -> f32"
    to_f64 = "%af = vm.bitcast.i32.f32 %a : i32 -> f32\n{r} = vm.ext.f32.f64 %af : f32 -> f64"
    patched = []
    for cast in ("si32", "ui32"):
        patched += sweeps(f"cast_f64_{cast}", "f64_values", F64_UNARY_EDGES + F64_UNARY_RANDOM,
                          "f64", [(f"cast.f64.{cast}", to_i32, "f32")], False)
        patched += sweeps(f"cast_{cast}_f64", "i32_values", I32_UNARY_EDGES + I32_UNARY_RANDOM,
                          "i32", [(f"cast.{cast}.f64", to_f64, "f64")], False)
    (HERE / "ints.vm.mlir").write_text(module("ints", ints))
    (HERE / "floats.vm.mlir").write_text(module("floats", floats))
    (HERE / "patched.vm.mlir").write_text(module("patched", patched, (
        "// iree-compile 3.13 has no VM-dialect cast.f64.si32/ui32 or cast.si32/ui32.f64: each\n"
        "// function's trunc.f64.f32 / ext.f32.f64 (same registers) is a stand-in whose\n"
        "// opcode the test overwrites with the cast's before running the module.\n")))


if __name__ == "__main__":
    main()
