"""iree-run-module's `--expected_output`: comparing results with their expected values, byte for byte
as IREE's runtime/src/iree/tooling/comparison.cc and buffer_view_matchers.c print it.
"""
from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import numpy as np

from ..abi.errors import IreeAbiError
from ..layouts.hal_buffer import ElementType, iree_hal_element_bit_count
from ..layouts.hal_buffer import iree_hal_format_element_type as format_element_type
from ..hal.buffer_view_util import format_buffer_view
from ..hal.element_types import element_type_of
from ..base.string_view import c_atof
from ..hal.string_util import format_elements

from .function_io import ListResult, OpaqueResult, StorageInput, Value

_F32 = np.float32
DEFAULT_F16_ATOL = float(_F32(0.001))  # float flags: the threshold is held as a C float
DEFAULT_F32_ATOL = float(_F32(0.0001))
DEFAULT_F64_ATOL = 0.0001
DEFAULT_BF16_ATOL = float(_F32(0.01))
DEFAULT_RTOL = 1e-5
COMPARE_MAX_ELEMENT_COUNT = 1024  # comparison.cc prints both views with this count, whatever
#                                   --output_max_element_count says
_TYPE_NAME_CAPACITY = 8  # iree_hal_append_element_type_string formats into `char temp[8]`
SUCCESS_LINE = "[SUCCESS] all function outputs matched their expected values.\n"


class ComparisonAbortError(IreeAbiError):
    """A comparison iree-run-module cannot finish: formatting a mismatch message needs the name of
    an element type (`f8E4M3FN`, `f8E5M2FNUZ`, `f8E4M3FNUZ`, `f8E8M0FNU`) that does not fit the
    8-byte scratch IREE formats it into; the status is OUT_OF_RANGE, which the tool's
    IREE_CHECK_OK turns into an abort (nothing of the comparison is printed)."""

    def __init__(self, index: int, type_name: str) -> None:
        self.index = index
        self.type_name = type_name
        super().__init__(f"OUT_OF_RANGE; iree-run-module aborts comparing result[{index}]: the "
                         f"element type name `{type_name}` ({len(type_name)} characters) does "
                         f"not fit the {_TYPE_NAME_CAPACITY}-byte buffer its mismatch message "
                         f"formats it into")


class Equality(NamedTuple):
    """iree_hal_buffer_equality_t as iree-run-module builds it from its flags."""

    mode: str = "approximate"  # or "exact": a byte compare that ignores the tolerances
    f16_atol: float = DEFAULT_F16_ATOL
    f32_atol: float = DEFAULT_F32_ATOL
    f64_atol: float = DEFAULT_F64_ATOL
    bf16_atol: float = DEFAULT_BF16_ATOL
    rtol: float = DEFAULT_RTOL


def parse_double_flag(text: str) -> float:
    """An IREE `double` flag value (--expected_f64_threshold, --expected_rtol): atof; empty is 0."""
    return c_atof(text) if text else 0.0


def parse_float_flag(text: str) -> float:
    """An IREE `float` flag value (--expected_f32_threshold...): atof, then cast to float."""
    with np.errstate(over="ignore"):
        return float(_F32(parse_double_flag(text)))


def parse_equality_mode(text: str) -> str:
    """--equality_mode as iree-run-module reads it: a string flag (one pair of surrounding `"`
    stripped when longer than 2), `approximate` or `exact`; anything else leaves the equality
    zero-initialised, which is IREE_HAL_BUFFER_EQUALITY_EXACT."""
    if len(text) > 2 and text[0] == '"' and text[-1] == '"':
        text = text[1:-1]
    return "approximate" if text == "approximate" else "exact"


def variant_type_name(value: Any) -> str:
    """The type comparison.cc names for a value in a mismatch message: `empty` for an empty slot
    or a null ref, the value type (`i32`, `f64`) or the ref type (`hal.buffer_view`, `vm.list`)."""
    if value is None:
        return "empty"
    if isinstance(value, StorageInput):
        return "hal.buffer"
    if isinstance(value, np.ndarray):
        return "hal.buffer_view"
    if isinstance(value, (ListResult, list)):
        return "vm.list"
    if isinstance(value, OpaqueResult):
        return value.type_name
    if isinstance(value, (bool, np.bool_)):
        return "i32"
    if isinstance(value, (np.integer, np.floating)):
        return f"{'i' if isinstance(value, np.integer) else 'f'}{8 * value.dtype.itemsize}"
    if isinstance(value, int):
        return "i64"
    if isinstance(value, float):
        return "f64"
    raise TypeError(f"no IREE variant type for a {type(value).__name__}")


def _type_name(element_type: int, index: int) -> str:
    name = format_element_type(element_type)
    if len(name) >= _TYPE_NAME_CAPACITY:
        raise ComparisonAbortError(index, name)
    return name


def _metadata(shape: Sequence[int], element_type: int, index: int) -> str:
    """iree_hal_append_shape_and_element_type_string: `2x3xf32`, `i32` for rank 0."""
    return "".join(f"{d}x" for d in shape) + _type_name(element_type, index)


def _as_f64(raw: np.ndarray, element_type: int) -> np.ndarray | None:
    """The elements (rows of bytes) of a float type approximate mode compares, as doubles."""
    flat = np.ascontiguousarray(raw).reshape(-1)
    if element_type == ElementType.FLOAT_32:
        return flat.view(np.float32).astype(np.float64)
    if element_type == ElementType.FLOAT_64:
        return flat.view(np.float64).copy()
    if element_type == ElementType.FLOAT_16:
        return flat.view(np.float16).astype(np.float64)
    if element_type == ElementType.BFLOAT_16:  # iree_math_bf16_to_f32: the top half of an f32
        return (flat.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return None


def _first_mismatch(expected: np.ndarray, actual: np.ndarray, element_type: int,
                    equality: Equality) -> int | None:
    """The index of the first element that differs (iree_hal_compare_buffer_elements_elementwise),
    or None: exact mode and non-float types compare bytes; approximate mode takes f16, f32, f64
    and bf16 as equal when `actual == expected`, both are NaN, or, for a finite expected value,
    `|actual - expected| <= atol + rtol * |expected|` in double precision."""
    count = expected.size
    if count == 0:
        return None
    size = (iree_hal_element_bit_count(element_type) + 7) // 8
    e_raw = np.frombuffer(np.ascontiguousarray(expected).tobytes(), np.uint8)
    a_raw = np.frombuffer(np.ascontiguousarray(actual).tobytes(), np.uint8)
    atols: dict[int, float] = {ElementType.FLOAT_16: equality.f16_atol, ElementType.FLOAT_32: equality.f32_atol,
                               ElementType.FLOAT_64: equality.f64_atol, ElementType.BFLOAT_16: equality.bf16_atol}
    atol = atols.get(element_type)
    if equality.mode == "approximate" and atol is not None:
        e, a = _as_f64(e_raw, element_type), _as_f64(a_raw, element_type)
        assert e is not None and a is not None  # a float type (it has an atol)
        with np.errstate(invalid="ignore", over="ignore"):
            ok = (a == e) | (np.isnan(a) & np.isnan(e)) | \
                (np.isfinite(e) & (np.abs(a - e) <= atol + equality.rtol * np.abs(e)))
        bad = ~ok
    else:
        bad = (e_raw.reshape(count, size) != a_raw.reshape(count, size)).any(axis=1)
    where = np.flatnonzero(bad)
    return int(where[0]) if where.size else None


def _element_text(array: np.ndarray, index: int, element_type: int) -> str:
    size = (iree_hal_element_bit_count(element_type) + 7) // 8
    raw = np.ascontiguousarray(array).tobytes()[index * size:(index + 1) * size]
    return format_elements(raw, element_type, 1)[0]


def _compare_views(index: int, expected: np.ndarray, actual: np.ndarray,
                   equality: Equality) -> str:
    """iree_tooling_compare_buffer_views: "" when they match, else the [FAILED] entry."""
    e_type = element_type_of(expected.dtype) & 0xFFFFFFFF
    a_type = element_type_of(actual.dtype) & 0xFFFFFFFF
    if list(expected.shape) != list(actual.shape) or e_type != a_type:
        why = (f"metadata is {_metadata(actual.shape, a_type, index)}; expected that the view "
               f"matches {_metadata(expected.shape, e_type, index)}")
    else:
        at = _first_mismatch(expected, actual, e_type, equality)
        if at is None:
            return ""
        why = (f"element at index {at} ({_element_text(actual, at, a_type)}) does not match the "
               f"expected ({_element_text(expected, at, e_type)})")
    why += (f"; expected that the view is equal to contents of a view of "
            f"{_metadata(expected.shape, e_type, index)}")
    return (f"[FAILED] result[{index}]: {why}\n  expected:\n"
            f"{format_buffer_view(expected, COMPARE_MAX_ELEMENT_COUNT, e_type)}\n  actual:\n"
            f"{format_buffer_view(actual, COMPARE_MAX_ELEMENT_COUNT, a_type)}\n")


def compare_results(expected: Sequence[Value], actual: Sequence[Value],
                    equality: Equality = Equality()) -> tuple[bool, str]:
    """iree_tooling_compare_variant_lists as iree-run-module 3.13 runs it for --expected_output:
    (all matched, the text it prints before `[SUCCESS] ...` - one `[FAILED] ...` entry per
    mismatch, or one line when the counts differ). `expected` holds the values the flags parse
    to against the results' cconv (`parse_inputs`): None (`(ignored)` / `(null)` for a ref
    result) matches anything; two buffer views compare by metadata, then elements
    (`equality`); any other pair is a "variant types mismatch" - two primitive values included,
    as the 3.13 tool compares values only when their types differ, which the cconv rules out.
    Raises ComparisonAbortError where the tool aborts."""
    if len(expected) != len(actual):
        return False, (f"[FAILED] expected {len(expected)} list elements but {len(actual)} "
                       f"provided\n")
    text: list[str] = []
    for i, (want, got) in enumerate(zip(expected, actual)):
        if want is None:
            continue
        if isinstance(want, np.ndarray) and isinstance(got, np.ndarray):
            text.append(_compare_views(i, want, got, equality))
            continue
        text.append(f"[FAILED] result[{i}]: variant types mismatch; expected "
                    f"{variant_type_name(want)} but got {variant_type_name(got)}\n")
    return not any(text), "".join(text)


__all__ = ["Equality", "ComparisonAbortError", "compare_results", "variant_type_name", "parse_float_flag", "parse_double_flag", "parse_equality_mode", "SUCCESS_LINE", "COMPARE_MAX_ELEMENT_COUNT"]
