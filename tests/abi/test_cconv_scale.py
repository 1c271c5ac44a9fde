"""Issue 30 item 4, `check` of a fragment with thousands of spans: work linear in the spans.

A sampled check lays out a fixed number of instances, each linear in the spans; what was not linear
is reading a sampled index's span counts (one division of the whole index, a number of ~2 bits per
span, for every span: quadratic) and printing the count of combinations (quadratic in its digits,
refused by Python past 4300 digits: 7,200 spans crashed). Work is counted (profiler events), never
timed.
"""
from __future__ import annotations

import io
import json
import sys
from decimal import Decimal, localcontext

from ireeabi.cli.cmd_check import EXACT_DIGITS, count_json, count_text
from ireeabi.cli.main import main
from ireeabi.cli.resolve import SWEEP_MAX, Sweep


def _events(fn) -> int:
    """Python and C function calls made by fn() (each C call here is linear in its operands)."""
    calls = [0]

    def profile(frame, event, arg):
        if event in ("call", "c_call"):
            calls[0] += 1
    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return calls[0]


def _reference_counts(index: int, k: int) -> tuple[int, ...]:
    out = []
    for _ in range(k):
        index, digit = divmod(index, SWEEP_MAX + 1)
        out.append(digit)
    return tuple(reversed(out))


def test_the_span_counts_of_a_sampled_index_take_a_fixed_number_of_calls():
    events = {}
    for k in (1000, 2000, 4000):
        sweep = Sweep(k)
        index = (sweep.total - 1) // 3  # digits 1, 1, ... (a pattern every digit takes part in)
        got = sweep._counts(index)
        assert got == _reference_counts(index, k) == (1,) * k
        events[k] = _events(lambda: sweep._counts(index))
    # One pass over the index whatever its size (it was a division of the whole index per span).
    assert events[1000] == events[2000] == events[4000], events


def test_sampled_counts_are_the_base_4_digits_of_the_sample():
    for k in (5, 17, 300):
        sweep = Sweep(k)
        for index in sorted(sweep._sample())[:40]:
            assert sweep._counts(index) == _reference_counts(index, k)


def test_check_work_grows_linearly_with_the_spans():
    def run(n: int) -> int:
        text = "0" + "CiD" * n
        main(["check", text], stdout=io.StringIO(), stderr=io.StringIO())  # caches warm
        return _events(lambda: main(["check", text], stdout=io.StringIO(), stderr=io.StringIO()))

    counts = {n: run(n) for n in (50, 100, 200)}
    per_span_low = (counts[100] - counts[50]) / 50
    per_span_high = (counts[200] - counts[100]) / 100
    # Linear: the same calls per added span (within what the sampled counts vary); quadratic work
    # would double it.
    assert per_span_high <= 1.25 * per_span_low, counts


def _decimal_prefix(n: int) -> tuple[str, int]:
    """Oracle: the two significant digits and the exponent of `n`, by decimal arithmetic."""
    with localcontext() as ctx:
        ctx.prec = 2
        d = +Decimal(n)
    sign, digits, exp = d.as_tuple()
    return f"{digits[0]}.{digits[1] if len(digits) > 1 else 0}", exp + len(digits) - 1


def test_huge_counts_are_written_rounded_and_small_ones_exactly():
    assert count_text(4 ** 10) == "1048576" and count_json(4 ** 10) == 4 ** 10
    small = 10 ** EXACT_DIGITS - 1
    assert count_text(small) == str(small) and count_json(small) == small
    for n in (10 ** EXACT_DIGITS, 4 ** 2000, 7 * (4 ** 2000 + 1), 4 ** 7200, 4 ** 40000 + 1):
        mantissa, exponent = _decimal_prefix(n)
        assert count_json(n) == f"{mantissa}e{exponent}", n.bit_length()
        assert count_text(n) == f"about {mantissa}e{exponent}"
        json.dumps({"combinations": count_json(n)})  # Python refuses to print the integer
