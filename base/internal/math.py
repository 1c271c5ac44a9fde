"""IREE's own conversions between f32 and its narrow float types (runtime/src/iree/base/internal/
math.h: f16, bf16 and the f8 formats, IREE_MATH_MAKE_FLOAT_TYPE_HELPERS), bit for bit: round to
nearest even, values below half the narrow format's reach flush to zero, NaN an all-ones mantissa
(the FNUZ formats spell it as the negative-zero pattern, and have no negative zero). The types are
named by their HAL element types, as the HAL's string utilities and the tools ask for them.
"""
from __future__ import annotations

import math
import struct
from typing import NamedTuple

from ...layouts.hal_buffer import ElementType

__all__ = ["is_narrow_float", "narrow_float_bits", "widen_float_bits"]


class _Narrow(NamedTuple):
    exp_bits: int
    mantissa_bits: int
    has_inf: bool
    has_nan: bool
    bias_tweak: int  # FNUZ formats bias their exponent one more than IEEE would
    nan_is_neg_zero: bool  # FNUZ formats spell NaN as the negative-zero pattern


_NARROW: dict[int, _Narrow] = {
    ElementType.FLOAT_16: _Narrow(5, 10, True, True, 0, False),
    ElementType.BFLOAT_16: _Narrow(8, 7, True, True, 0, False),
    ElementType.FLOAT_8_E5M2: _Narrow(5, 2, True, True, 0, False),
    ElementType.FLOAT_8_E4M3_FN: _Narrow(4, 3, False, True, 0, False),
    ElementType.FLOAT_8_E5M2_FNUZ: _Narrow(5, 2, False, True, 1, True),
    ElementType.FLOAT_8_E4M3_FNUZ: _Narrow(4, 3, False, True, 1, True),
}


def _round_half_even_bias(value: int, shift: int) -> int:
    """`value` plus the bias that makes a right shift by `shift` round to nearest, ties to even
    (uint32 arithmetic, as the C helper does)."""
    half = (1 << shift) >> 1
    bias = half if value & (1 << shift) else half - 1
    return (value + bias) & 0xFFFFFFFF


def _f32_bits_of(value: float) -> int:
    return struct.unpack("<I", struct.pack("<f", value))[0]


def is_narrow_float(element_type: int) -> bool:
    """Whether `element_type` is one of the narrow float types converted here."""
    return element_type in _NARROW or element_type == ElementType.FLOAT_8_E8M0_FNU


def narrow_float_bits(value: float, element_type: int) -> int:
    """The bits of the f32 `value` in a narrow float type, rounded as IREE rounds them."""
    if element_type == ElementType.FLOAT_8_E8M0_FNU:
        if not math.isfinite(value):
            return 0xFF
        if value <= 0:
            return 0
        mantissa, exp = math.frexp(value)  # mantissa in [0.5, 1): nearer 0.5 rounds down
        biased = exp - (mantissa < 0.75) + 127
        return min(max(biased, 0), 0xFF)
    fmt = _NARROW[element_type]
    e_bits, m_bits = fmt.exp_bits, fmt.mantissa_bits
    sign_shift = e_bits + m_bits
    exp_mask = ((1 << e_bits) - 1) << m_bits
    mantissa_mask = (1 << m_bits) - 1
    bias = fmt.bias_tweak + (1 << (e_bits - 1)) - 1
    u = _f32_bits_of(value)
    sign = (u >> 31) << sign_shift
    f_exp, f_mant = (u >> 23) & 0xFF, u & 0x7FFFFF
    d_exp = d_mant = 0
    make_nan = make_inf = False
    if f_exp == 0xFF:
        make_nan, make_inf = f_mant != 0, f_mant == 0
    elif f_exp == 0:
        if e_bits == 8:  # only bf16 keeps f32 subnormals
            shift = 23 - m_bits
            d_mant = _round_half_even_bias(f_mant, shift) >> shift
    else:
        exp = f_exp - 127
        if exp > (1 << (e_bits - 1)) - fmt.has_inf:
            make_inf = True
        elif exp + bias <= 0:  # a subnormal of the narrow type, or zero
            shift = 23 - m_bits - exp + (1 - bias)
            if 0 <= shift <= 23:
                d_mant = _round_half_even_bias((1 << 23) + f_mant, shift) >> shift
        else:
            shift = 23 - m_bits
            rounded = _round_half_even_bias(f_mant, shift)
            if rounded > 0x7FFFFF:  # rounding carried into the exponent
                rounded = 0
                exp += 1
            d_exp = (exp + bias) << m_bits
            d_mant = rounded >> shift
            if not fmt.has_inf and d_exp > exp_mask:
                make_nan = True
    if make_inf:
        if fmt.has_inf:
            return sign | exp_mask
        if not fmt.has_nan:
            return sign | exp_mask | mantissa_mask  # the largest finite value
        make_nan = True
    if make_nan:
        if not fmt.has_nan:
            return 0
        if fmt.nan_is_neg_zero:
            return 1 << sign_shift
        return sign | exp_mask | mantissa_mask
    if fmt.nan_is_neg_zero and d_exp == 0 and d_mant == 0:
        return 0  # no negative zero: that pattern is NaN
    return sign | d_exp | d_mant


def widen_float_bits(bits: int, element_type: int) -> float:
    """A narrow float's bits as the f32 IREE prints (its NaN has no sign)."""
    if element_type == ElementType.FLOAT_8_E8M0_FNU:
        return math.nan if bits == 0xFF else math.ldexp(1.0, bits - 127)
    fmt = _NARROW[element_type]
    e_bits, m_bits = fmt.exp_bits, fmt.mantissa_bits
    sign_mask = 1 << (e_bits + m_bits)
    exp_mask = ((1 << e_bits) - 1) << m_bits
    mantissa_mask = (1 << m_bits) - 1
    bias = fmt.bias_tweak + (1 << (e_bits - 1)) - 1
    sign = -1.0 if bits & sign_mask else 1.0
    exp, mant = bits & exp_mask, bits & mantissa_mask
    if exp == exp_mask:
        if fmt.has_inf:
            return math.nan if fmt.has_nan and mant else sign * math.inf
        if fmt.has_nan and mant == mantissa_mask and not fmt.nan_is_neg_zero:
            return math.nan
    elif fmt.has_nan and fmt.nan_is_neg_zero and bits == sign_mask:
        return math.nan
    elif exp == 0:
        return sign * math.ldexp(mant, 1 - bias - m_bits)
    return sign * math.ldexp(mant + (1 << m_bits), (exp >> m_bits) - bias - m_bits)
