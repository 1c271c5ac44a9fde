"""Reference values of the check-style corpus (tests/programs/check), computed with numpy from the
same inputs the .mlir files spell out: for each function, one value per check call, in call order —
the value the checked computation must produce (for expect_true/expect_false, the i32 operand).
"""
from __future__ import annotations

from typing import Callable

import numpy as np


def f32(*v: float) -> np.ndarray:
    return np.array(v, np.float32)


def i32(*v: int) -> np.ndarray:
    return np.array(v, np.int32)


REFERENCE: dict[str, Callable[[], list]] = {}


def ref(fn: Callable[[], list]) -> Callable[[], list]:
    REFERENCE[fn.__name__] = fn
    return fn


# --- elementwise.mlir -------------------------------------------------------------------------

@ref
def abs_f32():
    return [np.abs(f32(-1, 2, -3.5, 0))]


@ref
def exp_f32():
    return [np.exp(f32(0, 1, -1, 2.5))]


@ref
def tanh_f32():
    return [np.tanh(f32(-3, -0.5, 0, 0.5, 3))]


@ref
def sqrt_f32():
    return [np.sqrt(f32(4, 2, 0.25, 9, 1e6))]


@ref
def add_mul_f32():
    a, b = f32(1.5, -2, 0.25, 4, -0.5, 3), f32(0.5, 2, -1, -4, 1.5, 0.25)
    return [(a + b) * a]


@ref
def minmax_nan_f32():
    a, b = f32(1, -2, 3, np.nan), f32(0.5, 4, 3, 1)
    return [np.maximum(a, b), np.minimum(a, b)]


@ref
def cmp_select_f32():
    a, b = f32(3, 1, -1, 5, 0), f32(1, 2, -2, 5, -0.5)
    return [np.where(a > b, a - b, b + b)]


@ref
def int_arith_i32():
    a, b = i32(7, -8, 100, -1), i32(2, 3, 7, 31)
    return [a * b + (a >> 1), np.fmod(a, b)]  # fmod: C's truncating remainder, as remsi


@ref
def casts_i32_f32():
    return [i32(-3, 0, 16777217, 5).astype(np.float32),
            np.trunc(f32(2.25, -2.25, 0.25, 1000)).astype(np.int32)]


@ref
def broadcast_add_f32():
    row, col = f32(1, 2, 3, 4), f32(10, 20, 30)
    return [col[:, None] + row[None, :]]


@ref
def powf_f32():
    return [np.power(f32(2, 9, 0.5, 10), f32(3, 0.5, -2, -1))]


# --- reductions.mlir --------------------------------------------------------------------------

def pattern(shape: tuple[int, ...], dtype, offset: int, mul: int = 7, mod: int = 11) -> np.ndarray:
    """The corpus's pseudo-random pattern ((n * mul) mod mod) - offset over the row-major index n
    (the .mlir computes it with linalg.index in a kernel)."""
    return ((np.arange(int(np.prod(shape))) * mul) % mod - offset).reshape(shape).astype(dtype)


@ref
def sum_iota_f32():
    return [np.array(np.arange(100, dtype=np.float32).sum(), np.float32)]


@ref
def row_max_f32():
    return [pattern((3, 4), np.float32, 5).max(axis=1)]


@ref
def col_sum_i32():
    return [pattern((3, 4), np.int32, 5).sum(axis=0, dtype=np.int32)]


@ref
def mean_f32():
    return [np.array(f32(1, 2, 3, 4, 10).mean(), np.float32)]


@ref
def argmax_f32():
    x = f32(3, -1, 7, 7, 2)
    return [np.array(x.max(), np.float32), np.array(np.argmax(x), np.int32)]  # the first maximum


@ref
def all_true_i32_f32():
    x = i32(1, 5, 9, 2)
    xf = x.astype(np.float32) - 3
    return [(x > 0).astype(np.int32), xf * xf + 1]


@ref
def softmax_f32():
    x = f32(1, 2, 3, 0.5)
    e = np.exp(x - x.max())
    return [e / e.sum()]


@ref
def sum_host_compare_i32():
    s = int(np.arange(100).sum())
    return [np.int32(s == 4950), np.int32(s != 4950)]


# --- linalg.mlir ------------------------------------------------------------------------------

def matmul_inputs(dtype) -> tuple[np.ndarray, np.ndarray]:
    return pattern((4, 8), dtype, 5), pattern((8, 3), dtype, 3, 5, 7)


@ref
def matmul_f32():
    a, b = matmul_inputs(np.float32)
    return [a @ b]


@ref
def matmul_i32():
    a, b = matmul_inputs(np.int32)
    return [a @ b]


@ref
def batch_matmul_f32():
    return [pattern((2, 3, 4), np.float32, 5) @ pattern((2, 4, 2), np.float32, 3, 5, 7)]


@ref
def matvec_f32():
    a, _ = matmul_inputs(np.float32)
    return [a @ pattern((8,), np.float32, 3, 5, 7)]


@ref
def dot_f32():
    return [np.array(pattern((8,), np.float32, 5) @ pattern((8,), np.float32, 3, 5, 7), np.float32)]


CONV_KERNEL = f32(1, 0, -1, 0.5, 1, 0, 0, -1, 1, 0.5, 0.5, 0.5, 1, -1, 1, 0, 0, 1).reshape(3, 3, 1, 2)


@ref
def conv2d_nhwc_f32():
    x = pattern((1, 5, 5, 1), np.float32, 5)
    out = np.zeros((1, 3, 3, 2), np.float32)
    for h in range(3):
        for w in range(3):
            # out[n, h, w, f] = sum over (kh, kw, c) of x[n, h + kh, w + kw, c] * k[kh, kw, c, f]
            out[0, h, w] = np.einsum("hwc,hwcf->f", x[0, h:h + 3, w:w + 3], CONV_KERNEL)
    return [out]


@ref
def depthwise_conv_f32():
    x = pattern((1, 4, 4, 2), np.float32, 5)
    k = pattern((2, 2, 2), np.float32, 3, 5, 7)
    out = np.zeros((1, 3, 3, 2), np.float32)
    for h in range(3):
        for w in range(3):
            out[0, h, w] = (x[0, h:h + 2, w:w + 2] * k).sum(axis=(0, 1))
    return [out]


@ref
def max_pool_f32():
    x = pattern((1, 4, 4, 1), np.float32, 5)
    return [x.reshape(1, 2, 2, 2, 2, 1).max(axis=(2, 4))]


# --- gather_scatter.mlir ----------------------------------------------------------------------

@ref
def gather_rows_f32():
    return [pattern((4, 3), np.float32, 5)[[2, 0, 3, 2]]]


@ref
def gather_linalg_ext_f32():
    return [pattern((4, 3), np.float32, 5)[[3, 1]]]


@ref
def take_i32():
    return [i32(10, 20, 30, 40, 50)[[4, 4, 0, 2]]]


@ref
def scatter_add_f32():
    out = np.ones(5, np.float32)
    np.add.at(out, [4, 0, 4], f32(10, 20, 30))  # duplicate indices accumulate
    return [out]


@ref
def scatter_rows_f32():
    out = np.zeros((4, 3), np.float32)
    out[[3, 1]] = pattern((2, 3), np.float32, 3, 5, 7)
    return [out]


# --- sort_topk.mlir ---------------------------------------------------------------------------

@ref
def sort_f32():
    return [np.sort(f32(3, -1, 2.5, 0, 7, -4.5))]


@ref
def sort_pairs_desc_i32():
    keys = i32(3, -1, 9, 0, 5)
    order = np.argsort(-keys, kind="stable")
    return [keys[order], order.astype(np.int32)]


@ref
def sort_rows_f32():
    return [np.sort(pattern((3, 5), np.float32, 5), axis=1)]


@ref
def topk_f32():
    x = pattern((10,), np.float32, 5)
    order = np.argsort(-x, kind="stable")[:3]
    return [x[order], order.astype(np.int32)]


# --- control_flow.mlir ------------------------------------------------------------------------

V4 = (1.5, -2, 0.25, 3)


@ref
def if_then_f32():
    v = f32(*V4)
    return [v + v, np.int32(1)]


@ref
def if_else_f32():
    v = f32(*V4)
    return [v * v, np.int32(0)]


@ref
def while_doubling():
    i, t = 1, f32(1.5, -0.5)
    while i < 100:
        i, t = i * 2, t + t
    return [np.int32(i == 128), t]


@ref
def for_accumulate_f32():
    v, acc = f32(*V4), np.zeros(4, np.float32)
    for k in range(5):
        acc = acc + v * np.float32(k)
    return [acc]


@ref
def while_tensor_cond_i32():
    t = i32(1, 2)
    while t.sum() < 100:
        t = t * 2 + 1
    return [t]


@ref
def for_if_parity_f32():
    v, acc = f32(*V4), np.zeros(4, np.float32)
    for k in range(6):
        acc = acc + v * np.float32(k) if k % 2 == 0 else acc - v
    return [acc]


@ref
def if_scalar_max_i32():
    return [np.int32(max(9, 4) == 9), np.int32(max(9, 4) == 4)]


# --- element_types.mlir -----------------------------------------------------------------------

def bf16_bits(x: np.ndarray) -> np.ndarray:
    """f32 -> bf16 bit patterns rounding to nearest even (no NaNs here), as arith.truncf does."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def bf16(x: np.ndarray) -> np.ndarray:
    """bf16 values as ireeabi holds them: uint16 bits tagged with the bf16 element type."""
    from ireeabi.hal.element_types import dtype_of
    from ireeabi.hal.string_util import parse_element_type
    return bf16_bits(x).view(dtype_of(parse_element_type("bf16")))


BF16_IN = (1.5, -2.3, 1e-3, 65504, 3.14159, 1e38)
F16_BITS = (0x3C00, 0xC000, 0x7BFF, 0x0001, 0x3555, 0x8000)  # 1, -2, 65504, 2^-24, ~1/3, -0


@ref
def i1_logic():
    a, b = np.array([1, 0, 1, 0], bool), np.array([1, 1, 0, 0], bool)
    return [a & b, a ^ b]


@ref
def i8_wrap():
    a, b = np.array([100, -128, 127, 5], np.int8), np.array([100, -1, 1, -10], np.int8)
    with np.errstate(over="ignore"):
        return [a + b, a * b]


@ref
def i16_ops():
    a, b = np.array([300, -32768, 1000, 7], np.int16), np.array([300, 1, -1000, 3], np.int16)
    return [a * b, a - b]


@ref
def i64_wrap():
    a = np.array([2 ** 40, -3, 2 ** 62, 5], np.int64)
    b = np.array([3, 2 ** 33, 4, -7], np.int64)
    return [a * b, a + b]


@ref
def f64_math():
    x = np.array([0.1, 1e300, -2.5, 1 / 3], np.float64)
    return [x * 3 + 1, x + x]


@ref
def f64_sum():
    return [np.array(np.full(10, 0.1).sum(), np.float64)]


@ref
def bf16_round_trip():
    x = f32(*BF16_IN)
    back = (bf16_bits(x).astype(np.uint32) << 16).view(np.float32)
    return [bf16(x), back]


@ref
def f16_reverse():
    h = np.array(F16_BITS, np.uint16).view(np.float16)[::-1].copy()
    return [h, h]


@ref
def all_true_i8_i64_f64():
    x8 = np.array([1, -1, 127, -128], np.int8)
    x64 = np.array([2 ** 40, -1, 1, 7], np.int64)
    xf = np.array([1e-300, -0.5, np.inf, 2], np.float64)
    return [x8 | 1, x64 + x64, -xf]


@ref
def int_ext_trunc():
    x8 = np.array([-1, 127, -128, 5], np.int8)
    x64 = np.array([65537, -1, 2 ** 40 + 5, -65536], np.int64)
    return [x8.astype(np.int32), x8.view(np.uint8).astype(np.int32), x64.astype(np.int16)]


# --- dynamic.mlir -----------------------------------------------------------------------------

@ref
def dyn_iota_f32():
    return [np.arange(7, dtype=np.float32) * 0.5]


@ref
def dyn_slice_f32():
    return [f32(1, 2, 3, 4, 5, 6, 7, 8)[2:6]]


@ref
def dyn_transpose_i32():
    return [np.arange(6, dtype=np.int32).reshape(2, 3).T.copy()]


@ref
def dyn_concat_f32():
    x = f32(1, 2, 3, 4, 5, 6, 7, 8)
    return [np.concatenate([x[5:8], x[0:2]])]


@ref
def dyn_matmul_f32():
    return [pattern((3, 4), np.float32, 5) @ pattern((4, 2), np.float32, 3, 5, 7)]


@ref
def dyn_sum_f32():
    return [np.array(np.arange(37, dtype=np.float32).sum() * np.float32(0.25), np.float32)]
