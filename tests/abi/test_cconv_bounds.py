"""Issue 18, bounded work: `check` without --spans samples past a fixed number of span-count
instances, and a cconv layout's memory does not grow by a slot object per span value."""
from __future__ import annotations

import io
import itertools
import json
import os
import subprocess
import sys
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
    rc, out = quiet("check", TEN_SPANS)
    assert rc == 0
    # bounded by the instances it checks (the cap below), not all 7**10 of them
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
        cconv.clear_caches()  # count the layouts this check makes, not earlier tests'
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


# --------------------------------------------------------------------------------------------------
# (b) a cconv layout of a 65535-element span: a few bytes per value, offsets as the small case says

BYTES_PER_VALUE = 48  # the bound: "a few dozen bytes per value" (was ~190 retained, ~300 peak)


def test_layout_of_a_65535_element_span_is_a_few_bytes_per_value():
    n = cconv.MAX_SPAN_COUNT
    cconv.clear_caches()
    tracemalloc.start()
    lay = cconv.layout("CrIifFD", "x86_64", [n])
    walked = sum(1 for _ in lay.values) + sum(1 for _ in lay.gaps)  # walking builds slots one at a time
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    n_values = len(lay.values)
    assert n_values == 5 * n and walked == n_values + len(lay.gaps)
    assert current / n_values <= BYTES_PER_VALUE, f"{current / n_values:.1f} B/value retained"
    assert peak / n_values <= BYTES_PER_VALUE, f"{peak / n_values:.1f} B/value at peak"


def _element_offsets(lay: cconv.FragmentLayout, e: int) -> list[int]:
    """Offsets of span 0's element `e`, found by index arithmetic (fixed values come first)."""
    k = len(lay.fragment.spans[0].values)
    fixed = sum(1 for v in lay.values[:len(lay.fragment.items)] if v.span is None)
    got = [lay.values[fixed + e * k + j] for j in range(k)]
    assert {v.element for v in got} == {e}
    return [v.offset for v in got]


def _reference_offsets(frag: str, target: str, n: int) -> list[int]:
    """Where the packer writes each value, slot by slot: every field of every element re-aligned
    to its own alignment, the element area aligned to the largest (a single trailing span)."""
    parsed = cconv.parse_fragment(frag)
    out, p = [], 0
    for item in parsed.items:
        if isinstance(item, cconv.Value):
            size, align = cconv.vm_field(item.char, target)
            p = -(-p // align) * align
            out.append(p)
            p += size
            continue
        p += 4
        fields = [cconv.vm_field(v.char, target) for v in item.values]
        if n:
            p = -(-p // max(4, *(a for _, a in fields))) * max(4, *(a for _, a in fields))
        for _ in range(n):
            for size, align in fields:
                p = -(-p // align) * align
                out.append(p)
                p += size
    return out


def test_offsets_of_a_65535_element_span_follow_the_small_case():
    n = cconv.MAX_SPAN_COUNT
    for frag, target in (("CrIifFD", "x86_64"), ("CrIifFD", "riscv32"), ("iCiIiD", "x86_64"),
                         ("rCIiD", "i386"), ("CiD", "wasm32")):
        small = cconv.layout(frag, target, [3])
        first, second, third = (_element_offsets(small, e) for e in range(3))
        stride = third[0] - second[0]  # elements after the first repeat with this stride
        big = cconv.layout(frag, target, [n])
        assert _element_offsets(big, 0) == first and _element_offsets(big, 1) == second
        last = [o + (n - 2) * stride for o in second]
        assert _element_offsets(big, n - 1) == last, (frag, target)
        assert big.values[-1].element == n - 1 and big.values[-1].end == big.packed_size
        assert big.size == cconv.vm_size(frag, target, [n])
        assert [v.offset for v in big.values] == _reference_offsets(frag, target, n), (frag, target)
        # The shim reads and the gaps are runs too: spot-check them against the small case.
        if big.shim is not None:
            assert big.shim.reads[:len(small.shim.reads)] == small.shim.reads[:len(small.shim.reads)]
            assert len(big.shim.reads) == len(big.values)
        # Every byte up to the larger of the allocation and the packed end is a slot or a gap.
        assert sum(g.size for g in big.gaps) + sum(v.size for v in big.values) + 4 * len(big.counts) \
            == max(big.size, big.packed_size)


def test_small_layouts_keep_their_tuples_and_compare_equal_to_them():
    lay = cconv.layout("rIiiiCiDCrIID", "x86_64", [4, 3])
    assert lay.values == tuple(lay.values) and tuple(lay.values) == lay.values
    assert lay.values[1:3] == tuple(lay.values)[1:3]
    assert list(reversed(lay.values)) == list(tuple(lay.values))[::-1]
    assert [(g.offset, g.size) for g in lay.gaps] == [(60, 4)]
    big = cconv.layout("CiD", "x86_64", [1000])
    assert big.values == tuple(big.values) and hash(big.values) == hash(tuple(big.values))
    assert big.values[-1] == cconv.ValueSlot("i32", "i", 4 + 4 * 999, 4, 1, 0, 999)


# Measured by a fresh interpreter: tracemalloc counts every thread's allocations, and a test
# process may have others (xdist's execnet thread, bench_suite --profile's memory sampler).
_STREAMED_PEAKS = """
import io, json, sys, tracemalloc
from ireeabi.abi import cconv
from ireeabi.cli.main import main

class Sink(io.TextIOBase):
    lines = 0
    def write(self, s):
        self.lines += s.count("\\n")
        return len(s)

out = {}
for extra in ([], ["--all-targets"]):
    for n in (1000, 4000):
        cconv.clear_caches()
        sink = Sink()
        main(["layout", "iCiD", "--spans", "3", *extra], stdout=Sink())  # imports, caches
        tracemalloc.start()
        rc = main(["layout", "iCiD", "--spans", str(n), *extra], stdout=sink, stderr=io.StringIO())
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        out[" ".join(extra) + str(n)] = (rc, sink.lines, peak)
print(json.dumps(out))
"""


def test_layout_command_streams_its_table():
    # Under tracemalloc every allocation is slow: a few thousand elements show the growth per row.
    proc = subprocess.run([sys.executable, "-c", _STREAMED_PEAKS], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    runs = json.loads(proc.stdout.splitlines()[-1])
    for extra in ("", "--all-targets"):
        peaks = {}
        for n in (1000, 4000):
            rc, lines, peaks[n] = runs[f"{extra}{n}"]
            assert rc == 0 and lines > n  # a row per value
        # The rows are made as they are written: four times the rows, not four times the memory.
        assert peaks[4000] < 1.5 * peaks[1000], (extra, peaks)
        assert peaks[4000] / 4000 <= BYTES_PER_VALUE, (extra, peaks)
