"""What running libclang in a bounded child costs `layout --header` on an ordinary header (run by hand):

    python benchmarks/bench_cheader_child.py [--header FILE.h] [--target T] [--repeat N] [--ballast MIB]

Side by side, interleaved, in one process (median and 90th percentile of N):

- in-process: the header read as before the child existed (`cheader._read` called directly: parse,
  probe parse, declarations, cross-check);
- child: `cheader.read_header`, the same work in a forked child bounded in memory and time, its
  answer pickled back;
- fork only: `bounded.call_bounded` of a function doing nothing (the round trip alone).

The child's overhead is "child - in-process". A fork copies the parent's page tables, so the
overhead grows with the parent's size: --ballast allocates (and touches) that many MiB first to
show it (a pytest process, say).
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Callable

from ireeabi.abi import bounded, cheader
from ireeabi.abi.targets import get

ROOT = Path(__file__).resolve().parent.parent


def _nothing() -> None:
    return None


def _times(fn: Callable[[], object], n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--header", default=str(ROOT / "tests" / "fixtures" / "headers" / "constructs.h"))
    ap.add_argument("--target", default="x86_64")
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--ballast", type=int, default=0, help="MiB to allocate in the parent first")
    args = ap.parse_args()
    ballast = bytearray(args.ballast << 20)
    ballast[::4096] = b"\x01" * len(ballast[::4096])  # touched: resident, as a real process's heap
    path, target = Path(args.header), get(args.target)
    free = cheader._freestanding_dir()
    cases = {
        "in-process": lambda: cheader._read(path, target, (), (), free),
        "child": lambda: cheader.read_header(path, target),
        "fork only": lambda: bounded.call_bounded(_nothing, memory_bytes=cheader.MEMORY_BYTES, seconds=60),
    }
    for fn in cases.values():  # warm: libclang loaded, caches filled
        fn()
    samples: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(args.repeat):
        for name, fn in cases.items():
            samples[name] += _times(fn, 1)
    print(f"{path.name} on {target.name}, {args.repeat} runs each, parent ballast {args.ballast} MiB")
    for name, ts in samples.items():
        ts.sort()
        print(f"  {name:11} median {statistics.median(ts) * 1e3:7.2f} ms   p90 "
              f"{ts[int(len(ts) * 0.9) - 1] * 1e3:7.2f} ms")
    over = statistics.median(samples["child"]) - statistics.median(samples["in-process"])
    print(f"  child overhead (median child - median in-process): {over * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
