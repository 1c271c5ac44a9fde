"""cconv.layout timing: cached calls and first computations (not a test; run by hand or in CI logs).

    python benchmarks/bench_cconv.py

First computation is measured two ways: a new span-count instance of a fragment whose C structs are
already laid out (the common case: a new dispatch shape), and a fragment never seen before (every
cache cleared, shim structs re-declared and laid out).
"""
from __future__ import annotations

import argparse
import statistics
import time

from ireeabi.abi import cconv, layout, targets

FRAG = "rIiiiCiDCrIID"


def per_call_us(fn, n: int) -> float:
    best = []
    for _ in range(5):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            fn()
        best.append((time.perf_counter_ns() - t0) / n / 1e3)
    return min(best)


def first_us(target, level: str, rounds: int = 500) -> float:
    samples = []
    for _ in range(rounds):
        cconv.findings._layout.cache_clear()  # a span-count instance not computed before
        if level in ("fragment", "process"):
            cconv.shim_struct.cache_clear()
            cconv.parse_fragment.cache_clear()
            layout.layout_of.cache_clear()
            cconv.vm_packing._ref.cache_clear()
            cconv.vm_packing._vm_fields.cache_clear()
            cconv.shim_structs._shim_field.cache_clear()
            if level == "fragment":  # per-target constants stay warm, as after any earlier call
                cconv.vm_packing._vm_fields(target)
        spans = [4, 3]
        t0 = time.perf_counter_ns()
        cconv.layout(FRAG, target, spans)
        samples.append((time.perf_counter_ns() - t0) / 1e3)
    return statistics.median(samples)


def main() -> None:
    t = targets.get("x86_64")
    cconv.layout(FRAG, t, [4, 3])
    cached = per_call_us(lambda: cconv.layout(FRAG, t, [4, 3]), 200_000)
    instance = first_us(t, "instance")
    fragment = first_us(t, "fragment")
    process = first_us(t, "process")
    print(f"cconv.layout({FRAG!r}, x86_64, [4, 3]); medians of 500, best of 5 x 200k for cached")
    print(f"  cached call                              {cached:8.2f} us   (target <= 2 us)")
    print(f"  first computation, new span counts       {instance:8.2f} us   (target <= 50 us)")
    print(f"  first computation, fragment never seen   {fragment:8.2f} us   (target <= 50 us)")
    print(f"  first call in a fresh process/target     {process:8.2f} us   (includes iree_vm_ref_t layout)")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    main()
