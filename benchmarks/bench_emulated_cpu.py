"""What running foreign machine code on an emulated CPU (hal/local/emulated_cpu.py) costs.

    python benchmarks/bench_emulated_cpu.py [--calls N] [--elements N] [--targets riscv32,...]

Per target (each compiled by its cross compiler, -O2, as tests/hal/local/test_emulated_cpu.py does):
- make: `EmulatedCpu(heap)` (mapping the window, the trap area, the guarded stack);
- call: one `call` of a trivial function (`x + 1`), median of N;
- add: a float add loop over `--elements` elements (c[i] = a[i] + b[i]), median of 3, with no
  budget (uncounted, preempted by the CPU's thread) and with one (Unicorn's instruction count);
- counting: the same add with the ways of counting instructions the CPU chose between, on raw
  Unicorn over the CPU's own memory: none, Unicorn's `count`, a Python block hook, and a Python
  instruction hook (this one on an add 16 times shorter, scaled up);
- native: the host's own gcc build of the loop, for scale.
"""
from __future__ import annotations

import argparse
import ctypes
import shutil
import statistics
import struct
import subprocess
import tempfile
import time
from pathlib import Path

SOURCE = r"""
int inc(int x) { return x + 1; }
void vadd(const float *a, const float *b, float *c, int n) { for (int i = 0; i < n; i++) c[i] = a[i] + b[i]; }
"""
FLAGS = ["-O2", "-ffreestanding", "-nostdlib", "-fPIC", "-c"]
COMPILERS = {
    "riscv32": ["riscv64-linux-gnu-gcc", "-march=rv32imf", "-mabi=ilp32f", "-mno-relax"],
    "riscv64": ["riscv64-linux-gnu-gcc", "-mno-relax"],
    "armv7": ["arm-linux-gnueabihf-gcc", "-marm", "-mfpu=vfpv3-d16", "-mfloat-abi=hard"],
    "aarch64": ["aarch64-linux-gnu-gcc"],
    "i386": ["gcc", "-m32"],
    "x86_64": ["gcc"],
}


def _functions(obj: Path) -> dict[str, bytes]:
    from elftools.elf.elffile import ELFFile
    with open(obj, "rb") as f:
        elf = ELFFile(f)
        text = elf.get_section_by_name(".text").data()
        return {s.name: text[s["st_value"]:s["st_value"] + s["st_size"]]
                for s in elf.get_section_by_name(".symtab").iter_symbols() if s["st_info"]["type"] == "STT_FUNC"}


def _median(fn, n: int) -> float:
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def bench(target: str, work: Path, calls: int, elements: int) -> None:
    import unicorn
    from ireeabi.hal.local.emulated_cpu import EmulatedCpu
    from ireeabi.base.heap import Heap

    obj = work / f"{target}.o"
    subprocess.run(COMPILERS[target] + FLAGS + ["-o", str(obj), str(work / "k.c")], check=True)
    code = _functions(obj)
    heap = Heap(target=target, capture_stacks=False)
    t0 = time.perf_counter()
    cpu = EmulatedCpu(heap)
    make = time.perf_counter() - t0
    size = (sum(len(c) + 16 for c in code.values()) + 4095) & -4096
    image = heap.malloc(size, align=4096)
    at, offset = {}, 0
    for name, body in code.items():
        heap.write(image + offset, body)
        at[name] = image + offset
        offset += (len(body) + 15) & -16
    cpu.protect(image, size, "r-x")  # as a loader makes a code segment executable
    one = _median(lambda: cpu.call(at["inc"], [41]), calls)
    n = elements
    a, b, c = (heap.malloc(4 * n) for _ in range(3))
    heap.write(a, struct.pack(f"<{n}f", *range(n)))
    heap.write(b, struct.pack(f"<{n}f", *range(n)))
    add = _median(lambda: cpu.call(at["vadd"], [a, b, c, n]), 3)
    budgeted = _median(lambda: cpu.call(at["vadd"], [a, b, c, n], max_instructions=1 << 40), 3)
    instructions = cpu.instructions

    # The counting choices, on the CPU's own Unicorn (hooks added and removed around each).
    uc = cpu.uc

    def raw(count: int, elements: int) -> None:
        cpu._set_up_call([a, b, c, elements])  # the CPU's own argument set-up, then Unicorn alone
        uc.emu_start(at["vadd"], cpu._return, count=count)

    # Unicorn keeps translated code across hook changes: flush it so that each way is really used.
    uc.ctl_flush_tb()
    uncounted = _median(lambda: raw(0, n), 3)
    uc.ctl_flush_tb()
    counted = _median(lambda: raw(1 << 40, n), 3)
    hook = uc.hook_add(unicorn.UC_HOOK_BLOCK, lambda *args: None)
    uc.ctl_flush_tb()
    blocks = _median(lambda: raw(0, n), 1)
    uc.hook_del(hook)
    hook = uc.hook_add(unicorn.UC_HOOK_CODE, lambda *args: None)
    uc.ctl_flush_tb()
    per_insn = _median(lambda: raw(0, n // 16), 1) * 16
    uc.hook_del(hook)
    uc.ctl_flush_tb()  # the CPU's own calls get counted code again
    print(f"{target:8} make {make * 1e3:6.1f} ms  call {one * 1e6:6.1f} us  add {add * 1e3:7.1f} ms "
          f"(budget {budgeted * 1e3:7.1f} ms, {instructions / 1e6:.1f} M insns, "
          f"{instructions / add / 1e6:.0f} M/s)  raw: none {uncounted * 1e3:6.1f}  count {counted * 1e3:6.1f}  "
          f"block hook {blocks * 1e3:7.1f}  insn hook ~{per_insn * 1e3:7.0f} ms")
    cpu.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--calls", type=int, default=2000, help="trivial calls timed per target")
    p.add_argument("--elements", type=int, default=1 << 20, help="elements of the float add")
    p.add_argument("--targets", default=",".join(COMPILERS), help="comma-separated targets")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        work = Path(d)
        (work / "k.c").write_text(SOURCE)
        subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", str(work / "k.so"), str(work / "k.c")], check=True)
        lib = ctypes.CDLL(str(work / "k.so"))
        n = args.elements
        fa, fb, fc = (ctypes.c_float * n)(*range(n)), (ctypes.c_float * n)(*range(n)), (ctypes.c_float * n)()
        native = _median(lambda: lib.vadd(fa, fb, fc, n), 5)
        print(f"native (host gcc) add of {n} elements: {native * 1e3:.2f} ms")
        for target in args.targets.split(","):
            if shutil.which(COMPILERS[target][0]) is None:
                print(f"{target}: {COMPILERS[target][0]} is not installed")
                continue
            bench(target, work, args.calls, n)


if __name__ == "__main__":
    main()
