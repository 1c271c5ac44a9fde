"""Issue 18, bounded work: `check` without --spans samples past a fixed number of span-count
instances, and a cconv layout's memory does not grow by a slot object per span value."""
from __future__ import annotations

import io
import itertools
import json
import os
import subprocess
import sys
import time
import tracemalloc

from ireeabi.abi import cconv
from ireeabi.cli.main import main
from ireeabi.cli.resolve import SWEEP_CAP, SWEEP_MAX, Sweep

TEN_SPANS = "0" + "CiD" * 10 + "_v"  # 4^10 = 1048576 span-count combinations
TEN_WITH_FINDINGS = "0rIiiiCiDCrIIDCiDCIDCiDCrDCiDCiDCFDCiD_v"  # a fixed part: reader findings


def quiet(*args: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = main(list(args), stdout=out, stderr=err)
    assert err.getvalue() == ""
    return rc, out.getvalue()


# --------------------------------------------------------------------------------------------------
# (a) check of a ten-span cconv: bounded, says how much it checked, the same every run


def test_check_of_ten_spans_is_bounded_and_says_what_it_checked():
    t0 = time.perf_counter()
    rc, out = quiet("check", TEN_SPANS)
    took = time.perf_counter() - t0
    assert rc == 0
    assert took < 60, f"check of ten spans took {took:.1f} s"  # the full sweep took minutes
    total = (SWEEP_MAX + 1) ** 10 + 1  # every argument combination + the results instance
    assert f"checked {SWEEP_CAP + 1} of {total} instances" in out
    assert f"{SWEEP_CAP} of the {(SWEEP_MAX + 1) ** 10} combinations" in " ".join(out.split())
    assert f"no finding in {SWEEP_CAP + 1} instances" in out


def test_check_json_reports_checked_and_total():
    rc, out = quiet("check", TEN_WITH_FINDINGS, "--json")
    d = json.loads(out)
    assert rc == d["exit_code"] == 1
    assert d["instances"] == SWEEP_CAP + 1
    assert d["instances_total"] == 4 ** 10 + 1
    assert d["sweep"] == {"min": 0, "max": SWEEP_MAX, "cap": SWEEP_CAP, "combinations": 4 ** 10,
                          "checked": SWEEP_CAP}
    swept = {tuple(f["spans"]) for f in d["findings"] if f["side"] == "arguments"}
    assert (0,) * 10 in swept and (SWEEP_MAX,) * 10 in swept  # the fixed part misread in each


def test_sampled_check_is_the_same_in_every_run_and_process():
    _, first = quiet("check", TEN_WITH_FINDINGS, "--json", "-t", "riscv32")
    _, again = quiet("check", TEN_WITH_FINDINGS, "--json", "-t", "riscv32")
    env = dict(os.environ, PYTHONHASHSEED="12345")
    other = subprocess.run([sys.executable, "-m", "ireeabi.cli.main", "check", TEN_WITH_FINDINGS, "--json",
                            "-t", "riscv32"], capture_output=True, text=True, timeout=300, env=env)
    assert first == again == other.stdout
    _, text1 = quiet("check", TEN_SPANS, "--all-targets")
    _, text2 = quiet("check", TEN_SPANS, "--all-targets")
    assert text1 == text2


def test_sweeps_up_to_the_cap_are_complete_and_unchanged():
    for k in range(5):
        sweep = Sweep(k)
        assert not sweep.sampled and sweep.checked == sweep.total == (SWEEP_MAX + 1) ** k
        assert list(sweep) == list(itertools.product(range(SWEEP_MAX + 1), repeat=k))
    rc, out = quiet("check", "0rIiiiCiDCrIID_v", "--json")
    d = json.loads(out)
    assert d["sweep"] == {"min": 0, "max": 3} and "instances_total" not in d and d["instances"] == 17
    _, text = quiet("check", "0rIiiiCiDCrIID_v")
    assert "span counts: every combination of 0..3 per span" in text and "checked" not in text


def test_check_memory_does_not_grow_with_the_number_of_spans():
    peaks = {}
    for k in (10, 20):
        text = "0" + "CiD" * k + "_v"
        cconv._layout.cache_clear()  # count the layouts this check makes, not earlier tests'
        tracemalloc.start()
        quiet("check", text)
        peaks[k] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    # 4^20 combinations against 4^10: the same number of instances, each twice as long.
    assert peaks[20] < 3 * peaks[10], peaks
    assert peaks[20] < 64 << 20, peaks


# --------------------------------------------------------------------------------------------------
# (c) which instances a sample holds


def test_sample_holds_the_extremes_and_each_span_alone():
    k = 10
    sample = list(Sweep(k))
    assert len(sample) == len(set(sample)) == SWEEP_CAP
    assert sample == sorted(sample)  # the product's order
    assert sample[0] == (0,) * k and sample[-1] == (SWEEP_MAX,) * k
    got = set(sample)
    for span in range(k):
        for count in range(1, SWEEP_MAX + 1):
            alone = tuple(count if i == span else 0 for i in range(k))
            assert alone in got, alone
    assert all(len(c) == k and all(0 <= n <= SWEEP_MAX for n in c) for c in sample)
    assert list(Sweep(k)) == sample  # deterministic


def test_sample_of_very_many_spans_stays_at_the_cap():
    sweep = Sweep(400)  # 4^400 combinations: only the indices of the sample are held
    sample = list(sweep)
    assert sweep.sampled and len(sample) == sweep.checked == SWEEP_CAP
    assert sample[0] == (0,) * 400 and (SWEEP_MAX,) * 400 in sample
