"""Tests of the `accumulate` module on packed memory, on two data models, through ireeabi's pytest
plugin (its fixtures come from the installed entry point: no conftest, no `-p` flag).

Run them with `python -m pytest examples/custom_module`. The wrong-shim test is an expected failure;
to see the failure it shows, run `python -m pytest examples/custom_module -k prefix --runxfail`.
"""
from __future__ import annotations

import numpy as np
import pytest

import accumulate
from ireeabi.base.status import StatusCode, StatusError

TARGETS = ["x86_64", "riscv32"]  # LP64 and ILP32: pointers, refs and the packing differ


@pytest.fixture
def native_modules():
    return [accumulate.native_module()]


@pytest.mark.parametrize("target", TARGETS)
def test_scale_returns_a_new_view(runtime):
    view = runtime.api.new_view(np.arange(6, dtype=np.float32).reshape(2, 3))
    (out,) = runtime.call("accumulate.scale", view, 2.5)
    result = runtime.api.view(out)
    assert result.shape == (2, 3)
    assert (result.array() == np.arange(6, dtype=np.float32).reshape(2, 3) * 2.5).all()
    runtime.api.release(out)
    runtime.api.release(view)


@pytest.mark.parametrize("target", TARGETS)
def test_dot_reads_both_spans(runtime):
    assert runtime.call("accumulate.dot", 10, 3, [1, 2, 3], [4, 5, 6]) == [10 + 3 * 32]
    assert runtime.call("accumulate.dot", -1, 7, [], []) == [-1]  # empty spans: counts of 0


@pytest.mark.parametrize("target", TARGETS)
def test_dot_refuses_spans_of_different_lengths(runtime):
    with pytest.raises(StatusError) as e:
        runtime.call("accumulate.dot", 0, 1, [1, 2], [3])
    assert e.value.code == StatusCode.INVALID_ARGUMENT


@pytest.mark.xfail(strict=True, raises=StatusError,
                   reason="the pre-#24827 reader starts the spans at sizeof(struct {int64_t; int32_t}) "
                          "= 16, where the VM packed the first count at 12: it reads a first element "
                          "as a count, and spans of the wrong lengths")
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("native_modules", [[accumulate.prefix_reader_module()]])
def test_prefix_reader_misreads_the_spans(runtime):
    assert runtime.call("accumulate.dot", 10, 3, [1, 2, 3], [4, 5, 6]) == [10 + 3 * 32]


@pytest.mark.parametrize("target", TARGETS)
def test_the_checker_names_the_prefix_reader_before_anything_runs(target):
    """`ireeabi check 0IiCiDCiD_I` (cconv.compare_reader) flags the pre-fix reader on these models."""
    from ireeabi.abi import cconv
    lay = cconv.layout("IiCiDCiD", target, (3, 3))
    assert cconv.compare_reader(lay, cconv.span_reader("IiCiDCiD", target, (3, 3), form="pre-fix"))
    assert not cconv.compare_reader(lay, cconv.span_reader("IiCiDCiD", target, (3, 3), form="fixed"))
