"""Issue 30 item 4, inputs: a large `--input` costs its own size, not an object per element.

A long list of plain decimal elements is read by numpy a slice at a time (no C-library call per
element), a splat fills, an .npy or raw file is read straight into the array; the values are the C
library's (strtof / strtod / strtol, what IREE's parser calls: the oracle here), and a bad element in
a long list gets the same error as in a short one. Work is bounded by counts (C-library calls) and
memory (tracemalloc peaks), never by time.
"""
from __future__ import annotations

import ctypes
import random
import tracemalloc

import numpy as np
import pytest

from ireeabi.base import string_view
from ireeabi.base.string_view import atod, atof, atoi_int32
from ireeabi.hal.string_util import InputParseError
from ireeabi.tooling.function_io import InputFiles, parse_inputs

N = 2_000_000  # elements of the long inputs (8 MB of f32)
SLACK = 48 << 20  # a constant: the slice being parsed, numpy's own buffers
HEAD_CALLS = 2  # C-library calls for the shape's one dimension and the element type's bit count


@pytest.fixture
def c_calls(monkeypatch):
    """How many numbers the C library parsed (one call per element on the slow path)."""
    calls = [0]
    real = string_view.c_parse

    def counted(*args):
        calls[0] += 1
        return real(*args)
    monkeypatch.setattr(string_view, "c_parse", counted)
    return calls


def _peak(fn):
    tracemalloc.start()
    try:
        value = fn()
        return value, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _strtof_all(tokens: list[str]) -> bytes:
    return np.array([atof(t) for t in tokens], dtype=np.float32).tobytes()


def test_a_long_f32_list_is_the_c_librarys_values_without_a_call_per_element(c_calls):
    rng = random.Random(7)
    sample = ["%.9g" % rng.uniform(-1e6, 1e6) for _ in range(2000)] + \
        [repr(rng.uniform(-1e30, 1e30)) for _ in range(2000)] + \
        ["0", "-0", "5.", ".5", "+1.5E+07", "1e-40", "3.4028235e38", "3.5e38", "-8e-46"]
    tokens = sample * (N // len(sample))
    spec = f"{len(tokens)}xf32=[" + ", ".join(tokens) + "]"
    value, peak = _peak(lambda: parse_inputs([spec], "r")[0])
    assert c_calls[0] == HEAD_CALLS
    assert value.shape == (len(tokens),)
    assert value.tobytes() == _strtof_all(sample) * (N // len(sample))
    assert peak <= value.nbytes + SLACK, peak


@pytest.mark.parametrize("type_name, dtype, tokens", [
    ("i8", np.int8, ["255", "-128", "7", "+0"]),
    ("ui16", np.uint16, ["65535", "0", "+12"]),
    ("i32", np.int32, ["4294967295", "-2147483648", "123456789012345"]),  # wraps as IREE's cast
    ("si8", np.int8, ["-3000", "127"]),
    ("i64", np.int64, ["-999999999999999999", "999999999999999999", "0"]),
    ("ui64", np.uint64, ["999999999999999999", "1"]),
    ("f64", np.float64, ["0.1", "-2.5e-99", "1e99", "6.02214076e23"]),
])
def test_long_lists_of_each_type_match_one_by_one_parsing(c_calls, type_name, dtype, tokens):
    n = 300_000
    reps = n // len(tokens)
    spec = f"{reps * len(tokens)}x{type_name}=" + " ".join(tokens * reps)
    value = parse_inputs([spec], "r")[0]
    assert c_calls[0] == HEAD_CALLS
    one_by_one = parse_inputs([f"{len(tokens)}x{type_name}=" + " ".join(tokens)], "r")[0]
    assert value.view(np.uint8).tobytes() == one_by_one.view(np.uint8).tobytes() * reps
    assert value.dtype.itemsize == np.dtype(dtype).itemsize


def test_the_short_list_oracle_is_the_c_library():
    # The one-by-one parse of the test above, for i32: strtol, then the cast to int32_t.
    got = parse_inputs(["3xi32=4294967295 -2147483648 123456789012345"], "r")[0]
    assert got.tolist() == [atoi_int32(t) for t in ("4294967295", "-2147483648", "123456789012345")]
    assert got.tolist() == [-1, -2147483648, ctypes.c_int32(123456789012345).value]
    assert parse_inputs(["2xf64=0.1 1e99"], "r")[0].tolist() == [atod("0.1"), atod("1e99")]


def test_a_splat_of_many_elements_fills_without_a_copy(c_calls):
    n = 20_000_000
    value, peak = _peak(lambda: parse_inputs([f"{n}xf32=1.5"], "r")[0])
    assert c_calls[0] == HEAD_CALLS
    assert value.shape == (n,) and value[0] == value[-1] == np.float32(1.5)
    assert peak <= value.nbytes + (1 << 20), peak


def test_text_the_vectorized_parser_is_unsure_of_goes_through_the_c_library(c_calls):
    # hex and octal integers, trailing junk, `inf`, a three-digit exponent: IREE's reading
    tokens = ["0x10", "010", "08", "7abc", "1e", "inf", "1e100", "-nan", "1.5.5"]
    value = parse_inputs([f"{len(tokens)}xf64=" + " ".join(tokens)], "r")[0]
    assert c_calls[0] >= len(tokens)
    assert value.tobytes() == np.array([atod(t) for t in tokens], dtype=np.float64).tobytes()
    assert parse_inputs(["4xi32=0x10 010 08 7abc"], "r")[0].tolist() == [16, 8, 0, 7]


def test_f32_text_exactly_between_two_f32_in_f64_is_rounded_by_strtof():
    # 16777217 and the next decimal above it are both 2**24 + 1 in f64: halfway between two f32.
    # strtof rounds the text itself: the first to even (2**24), the second up.
    tokens = ["16777217", "16777217.000000000000000001"] * 1000
    value = parse_inputs([f"{len(tokens)}xf32=" + " ".join(tokens)], "r")[0]
    assert value.tobytes() == _strtof_all(tokens)
    assert value[:2].tolist() == [16777216.0, 16777218.0]


@pytest.mark.parametrize("bad, message", [
    ("1e-50", "INVALID_ARGUMENT; parsing input"),  # underflows f32 to zero: refused
    ("abc", "INVALID_ARGUMENT; parsing input"),
])
def test_a_bad_element_at_the_end_of_a_long_list_is_reported_as_in_a_short_one(bad, message):
    n = 500_000
    long_spec = f"{n}xf32=" + "1 " * (n - 1) + bad
    short_spec = f"2xf32=1 {bad}"
    with pytest.raises(InputParseError) as long_err:
        parse_inputs([long_spec], "r")
    with pytest.raises(InputParseError) as short_err:
        parse_inputs([short_spec], "r")
    assert long_err.value.reason == short_err.value.reason
    assert long_err.value.detail == short_err.value.detail.replace("element 1 ", f"element {n - 1} ")
    assert long_err.value.element == bad and message in str(long_err.value)


def test_counts_that_do_not_fit_are_reported_as_before():
    n = 100_000
    with pytest.raises(InputParseError) as err:
        parse_inputs([f"{n}xi32=" + "1 " * (n + 2)], "r")  # token n has a separator after it
    assert err.value.reason == (f"OUT_OF_RANGE; output data buffer overflow: element_capacity={n} "
                                f"< dst_i={n}+")
    with pytest.raises(InputParseError) as err:
        parse_inputs([f"{n}xi32=" + "1 " * (n - 1)], "r")
    assert err.value.reason == (f"OUT_OF_RANGE; input data string underflow: dst_i={n - 1} < "
                                f"element_capacity={n}")


def test_npy_and_raw_file_inputs_are_read_into_their_array(tmp_path):
    n = 5_000_000
    array = np.arange(n, dtype=np.float32)
    np.save(tmp_path / "a.npy", array)
    array.tofile(tmp_path / "a.bin")
    with InputFiles() as files:
        value, peak = _peak(lambda: parse_inputs([f"@{tmp_path / 'a.npy'}"], "r", files)[0])
    assert np.array_equal(value, array) and peak <= array.nbytes + (1 << 20), peak
    with InputFiles() as files:
        value, peak = _peak(lambda: parse_inputs([f"{n}xf32=@{tmp_path / 'a.bin'}"], "r",
                                                 files)[0])
    assert np.array_equal(value, array) and peak <= array.nbytes + (1 << 20), peak
    (tmp_path / "short.bin").write_bytes(array.tobytes()[:-3])
    with pytest.raises(InputParseError) as err:
        parse_inputs([f"{n}xf32=@{tmp_path / 'short.bin'}"], "r")
    assert err.value.reason == "OUT_OF_RANGE; end-of-file encountered during read"
    assert err.value.detail == "the file ends 3 byte(s) early"
