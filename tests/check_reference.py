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
