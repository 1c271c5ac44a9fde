"""hal/buffer_view_util.py and hal/string_util.py called directly: a buffer view's text parsed into
an array and printed back (`ireeabi run` reaches them through tooling/function_io.py in
tests/tooling).

Oracle: iree-run-module 3.13 on tests/programs/io_fidelity/echo.mlir, whose functions return their
input's own buffer view, so the tool prints exactly what iree_hal_buffer_view_parse made of the text
(iree_hal_buffer_view_format, with --output_max_element_count); the refusals' statuses are the
tool's (its first line, without the source location and the tool's own annotations).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from ireeabi.hal.buffer_view_util import format_buffer_view, parse_tensor, read_buffer_view, view_size
from ireeabi.hal.string_util import InputParseError, ParseFailure, parse_element_type, parse_shape
from ireeabi.layouts.hal_buffer import ElementType
from support import iree_tools as tools

ECHO = Path(__file__).resolve().parents[1] / "programs" / "io_fidelity" / "echo.mlir"
# (echo function, --input text, --output_max_element_count)
CASES = [
    ("t2d", "2x3xf32=[1 2 3][4 5 6]", 1024), ("t2d", "2x3xf32=1 2 3 4 5 6", 4),
    ("t2d", "2x2xf32=0.5", 1024), ("tf32", "3xf32=1e40 -0 nan", 1024), ("tf16", "3xf16=1 65504 1e-8", 1024),
    ("tbf16", "2xbf16=1.00390625 3.5", 1024), ("tsi8", "3xsi8=-1 127 -128", 1024),
    ("tui64", "2xui64=18446744073709551615 0", 1024), ("t0d", "i32=-7", 1024), ("tf32", "0xf32", 1024),
    ("t2d", '"2x1xf32=[1][2]"', 1), ("tf64", "2xf64=0.1 1e300", 1024),
]
REFUSED = ["2x3xf32=1 2 3 4 5 6 7", "2xq32=1", "2x-1xf32=1", "2xf32=1 x", "x2xf32=1", "2x3xi1=1"]


@pytest.fixture(scope="module")
def echo() -> Path:
    return tools.compile_mlir(ECHO, model="inline-static", extra_flags=("--iree-input-demote-f64-to-f32=false",))


def _printed(stdout: str) -> str:
    """The value line of iree-run-module's one buffer view result."""
    lines = stdout.splitlines()
    assert lines[0].startswith("EXEC @") and lines[1] == "result[0]: hal.buffer_view", stdout
    return lines[2]


@pytest.mark.parametrize("function, text, count", CASES)
def test_parse_then_format_is_what_iree_run_module_prints(echo, function, text, count):
    want = _printed(tools.run_module(echo, function, [text], f"--output_max_element_count={count}"))
    assert format_buffer_view(parse_tensor(text), count) == want


@pytest.mark.parametrize("text", REFUSED)
def test_refusals_carry_the_tools_status(echo, text):
    proc = tools.run_module_failure([echo], "tf32", [text])
    status = next(line for line in proc.stderr.splitlines() if "; " in line)
    with pytest.raises(InputParseError) as info:
        parse_tensor(text)
    code, _, reason = info.value.reason.partition("; ")
    assert status.split(";")[0].endswith(code) and reason.split(";")[0] in status, (status, info.value)


def test_element_types_and_shapes_read_as_iree_names_them():
    """iree_hal_parse_element_type / iree_hal_parse_shape (hal/string_util.c)."""
    assert parse_element_type("f32") == int(ElementType.FLOAT_32)
    assert parse_element_type("i4") == int(ElementType.INT_4)
    assert parse_shape("2x3x4") == [2, 3, 4] and parse_shape("") == []


def test_the_size_of_a_view_overflows_as_iree_run_module_reports():
    """iree_hal_buffer_compute_view_size: OUT_OF_RANGE past iree_device_size_t, checked per
    dimension before anything is allocated; opaque types have no size."""
    assert view_size([2, 3], int(ElementType.FLOAT_32)) == (6, 24)
    assert view_size([3], int(ElementType.INT_4)) == (3, 2)
    with pytest.raises(ParseFailure, match="OUT_OF_RANGE; shape element count overflows device size at "
                                           "dimension 1"):
        view_size([1 << 40, 1 << 40], int(ElementType.FLOAT_32))
    with pytest.raises(ParseFailure, match="OUT_OF_RANGE; packed byte count overflows device size"):
        view_size([1 << 62], int(ElementType.FLOAT_32))
    with pytest.raises(ParseFailure, match="RESOURCE_EXHAUSTED; 24 bytes requested with 16 available"):
        read_buffer_view("2x3xf32=1", max_bytes=16)
