"""What guard pages for emulated kernels (hal/local/emulated_cpu.py, base/heap.py) cost.

    python benchmarks/bench_emulated_guards.py [--rounds N] [--live N] [--elements N] [--targets riscv32,...]

On a foreign heap with an emulated CPU, HAL-buffer-like allocations (`Heap.guarded_allocations`,
64-byte aligned, `--elements` floats each) under three schemes:
- none: no guards (what a foreign heap had before: `emulated_kernels` off);
- naive: guard pages protected by the host (mprotect) and mirrored into Unicorn by one
  `mem_protect` per change, straight on the window's regions (what the CPU's mirror did before),
  the quarantine holding guarded blocks' memory as any other's (no `GUARD_HELD` bound);
- guards: the scheme in use: emulator-only guard pages (the address space records them, no host
  mprotect), boundaries made by halving a region to at most `GRAIN` first, pages protected once
  staying regions of their own, the quarantine holding the memory of `GUARD_HELD` guarded blocks.
Workloads, each on a fresh heap and CPU:
- cycle: `--rounds` rounds of allocate 3 buffers, one dispatch (c = a + b, one emulated call), free
  the 3: mean, median and max per allocation (malloc + free), mean per dispatch (the call right
  after the allocations: retranslation included), and Unicorn's region count at the end;
- live: `--live` buffers allocated and kept (every one a fresh chunk): mean, median and max per
  allocation, then one dispatch.
Times are wall clock on whatever machine runs it (label a loaded machine's figures as such).
"""
from __future__ import annotations

import argparse
import gc
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench_emulated_cpu import COMPILERS, FLAGS, SOURCE  # the same vadd, built the same way

SCHEMES = ("none", "naive", "guards")
_HELD: list[int] = []  # base.heap.GUARD_HELD as the module has it (the naive scheme lifts it for its runs)


def _vadd(obj: Path) -> bytes:
    from elftools.elf.elffile import ELFFile
    with open(obj, "rb") as f:
        elf = ELFFile(f)
        text = elf.get_section_by_name(".text").data()
        (sym,) = [s for s in elf.get_section_by_name(".symtab").iter_symbols() if s.name == "vadd"]
        return text[sym["st_value"]:sym["st_value"] + sym["st_size"]]


def _rig(target: str, code: bytes, scheme: str):
    from ireeabi.hal.local.emulated_cpu import EmulatedCpu
    from ireeabi.base import heap as heap_module
    from ireeabi.base.heap import Heap
    if not _HELD:
        _HELD.append(heap_module.GUARD_HELD)
    heap_module.GUARD_HELD = 1 << 30 if scheme == "naive" else _HELD[0]
    heap = Heap(target=target, capture_stacks=False)
    heap.emulated_kernels = scheme != "none"
    if scheme == "naive":
        heap.native_kernels = True  # guard pages the host protects (and the CPU mirrors)
    cpu = EmulatedCpu(heap)
    if scheme == "naive":  # one Unicorn protection per change, on whatever region holds the pages
        cpu._set_perms = lambda address, size, perms: cpu.uc.mem_protect(address, size, perms)
    size = (len(code) + 4095) & -4096  # whole pages, made executable as a loader's code segment
    fn = heap.malloc(size, align=4096)
    heap.write(fn, code)
    cpu.invalidate(fn, len(code))
    cpu.protect(fn, size, "r-x")
    return heap, cpu, fn


def _dispose(heap, cpu) -> None:
    cpu.close()
    heap.close()


def _allocate(heap, nbytes: int) -> int:
    with heap.guarded_allocations():
        return heap.malloc(nbytes, align=64)


def cycle(target: str, code: bytes, scheme: str, rounds: int, n: int) -> tuple[float, float, float, float, int]:
    heap, cpu, fn = _rig(target, code, scheme)
    allocs, dispatches = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        a, b, c = (_allocate(heap, 4 * n) for _ in range(3))
        t1 = time.perf_counter()
        cpu.call(fn, [a, b, c, n])
        t2 = time.perf_counter()
        for p in (a, b, c):
            heap.free(p)
        t3 = time.perf_counter()
        allocs.append(((t1 - t0) + (t3 - t2)) / 3)
        dispatches.append(t2 - t1)
    regions = len(list(cpu.uc.mem_regions()))
    _dispose(heap, cpu)
    return statistics.mean(allocs), statistics.median(allocs), max(allocs), statistics.mean(dispatches), regions


def live(target: str, code: bytes, scheme: str, count: int, n: int) -> tuple[float, float, float, float, int]:
    heap, cpu, fn = _rig(target, code, scheme)
    blocks, allocs = [], []
    for _ in range(count):
        t0 = time.perf_counter()
        blocks.append(_allocate(heap, 4 * n))
        allocs.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    cpu.call(fn, [blocks[0], blocks[1], blocks[2], n])
    dispatch = time.perf_counter() - t0
    regions = len(list(cpu.uc.mem_regions()))
    _dispose(heap, cpu)
    return statistics.mean(allocs), statistics.median(allocs), max(allocs), dispatch, regions


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=300, help="allocate/dispatch/free rounds of the cycle workload")
    p.add_argument("--live", type=int, default=200, help="buffers the live workload keeps")
    p.add_argument("--elements", type=int, default=4096, help="floats per buffer")
    p.add_argument("--targets", default="riscv32,aarch64", help="comma-separated targets")
    p.add_argument("--schemes", default=",".join(SCHEMES), help="comma-separated schemes")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        work = Path(d)
        (work / "k.c").write_text(SOURCE)
        for target in args.targets.split(","):
            if shutil.which(COMPILERS[target][0]) is None:
                print(f"{target}: {COMPILERS[target][0]} is not installed")
                continue
            obj = work / f"{target}.o"
            subprocess.run(COMPILERS[target] + FLAGS + ["-o", str(obj), str(work / "k.c")], check=True)
            code = _vadd(obj)
            for scheme in args.schemes.split(","):
                # Each workload's CPU is freed right after it, untimed: a Unicorn instance with
                # thousands of regions takes seconds to free, which would otherwise land in a later
                # measurement whenever the collector gets to it (the CPU is in a reference cycle).
                gc.collect()
                am, amed, ax, dm, regions = cycle(target, code, scheme, args.rounds, args.elements)
                print(f"{target:8} {scheme:6} cycle: alloc+free mean {am * 1e3:8.3f} median {amed * 1e3:7.3f} "
                      f"max {ax * 1e3:7.1f} ms  dispatch mean {dm * 1e3:6.3f} ms  regions {regions}")
                gc.collect()
                am, amed, ax, dm, regions = live(target, code, scheme, args.live, args.elements)
                print(f"{target:8} {scheme:6} live:  alloc      mean {am * 1e3:8.3f} median {amed * 1e3:7.3f} "
                      f"max {ax * 1e3:7.1f} ms  dispatch      {dm * 1e3:6.3f} ms  regions {regions}")


if __name__ == "__main__":
    main()
