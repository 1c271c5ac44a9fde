"""What running wasm32 kernels under wasmtime costs (hal.local.wasm_loader), run by hand:

    python benchmarks/bench_wasm.py [--calls N] [--loads N] [--cycles N]

- runtime: a WasmRuntime over a fresh wasm32 heap (engine, store, linear memory = the heap's window);
- load: `load_side_module` of add16's iree-compile wasm32 executable (compilation by wasmtime,
  instantiation, __wasm_apply_data_relocs) and of a one-function side module;
- call: `WasmRuntime.call` of a trivial export (i32 -> i32), against wasmtime's own Func call (the
  floor: what the loader adds is the fuel/epoch reset, the SIGINT wakeup fd and argument checks);
- dispatch: one add16 workgroup (3 arguments) through the table, the kernel reading and writing heap
  memory; and add1m (+simd128) over all its workgroups, with its bounds-checked linear memory;
- cycles: add16 loaded and released N times (`WasmRuntime.release`), alone (the store is replaced
  once it is empty) and beside a module kept loaded (the store is rebuilt every REBUILD_AFTER
  releases): time per cycle, and what grows: the process's resident memory (RSS, from
  /proc/self/statm), the heap's live blocks, the function table and the stores made.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
import tests_support  # noqa: E402,F401 - tests/ on the import path, for `support`

import numpy as np  # noqa: E402
import wasmtime  # noqa: E402

from support import iree_tools  # noqa: E402
from support import vm_ir  # noqa: E402
from ireeabi.hal.local import wasm_loader as W  # noqa: E402
from ireeabi.hal.local.executable_library import DispatchState, write_workgroup_state  # noqa: E402
from ireeabi.layouts import executable_library as X  # noqa: E402
from ireeabi.vm.bytecode import module_file as mf  # noqa: E402
from ireeabi.base.heap import Heap  # noqa: E402
from ireeabi.layouts.executable_library import DispatchLayout  # noqa: E402

TRIVIAL_WAT = """(module
  (import "env" "memory" (memory 0))
  (import "env" "__memory_base" (global i32))
  (func (export "ident") (param i32) (result i32) local.get 0 i32.const 1 i32.add))"""


def trivial_side_module() -> bytes:
    """A one-function module with a dylink.0 section (memory 0, table 0) put first."""
    body = wasmtime.wat2wasm(TRIVIAL_WAT)
    name = b"dylink.0"
    sub = b"\x01\x04\x00\x00\x00\x00"
    payload = bytes([len(name)]) + name + sub
    return body[:8] + b"\x00" + bytes([len(payload)]) + payload + body[8:]


WASM = ("--iree-llvmcpu-target-triple=wasm32-unknown-unknown",)


def program_wasm(program: str, flags: tuple[str, ...] = WASM) -> bytes:
    vmfb = iree_tools.compile_mlir(ROOT / "tests" / "programs" / f"{program}.mlir", None, "inline-dynamic", flags)
    return next(mf.rodata_bytes(s) for s in mf.read_module(vmfb).rodata_segments
                if mf.rodata_bytes(s)[:4] == b"\0asm")


def program_ir(program: str, flags: tuple[str, ...]) -> str:
    import subprocess
    src = ROOT / "tests" / "programs" / f"{program}.mlir"
    return subprocess.run([iree_tools.find_tool("iree-compile"), str(src), *iree_tools.compile_flags("inline-dynamic"),
                           *flags, "--compile-to=vm"], capture_output=True, text=True, check=True).stdout


def add1m_ms(rt: W.WasmRuntime, heap: Heap) -> float:
    """All workgroups of add1m's kernel (wasm SIMD), the kernel's memory in the heap."""
    flags = WASM + ("--iree-llvmcpu-target-cpu-features=+simd128",)
    side = rt.load_side_module(program_wasm("add1m", flags), "add1m")
    (d,) = vm_ir.dispatches(program_ir("add1m", flags), "add", [None, None])
    m = heap.machine
    env = heap.malloc(m.layout(X.iree_hal_executable_environment_v0_t).size)
    lib = rt.call(side.lookup(X.IREE_HAL_EXECUTABLE_LIBRARY_EXPORT_NAME),
                  [X.IREE_HAL_EXECUTABLE_LIBRARY_VERSION_LATEST, env])
    fn = heap.read_word(heap.struct_at(X.iree_hal_executable_library_v0_t, lib).exports.ptrs)
    n = d.bindings[0][2]
    bufs = [heap.malloc(n, align=64) for _ in range(3)]
    heap.write(bufs[0], np.arange(n // 4, dtype=np.float32).tobytes())
    heap.write(bufs[1], np.ones(n // 4, np.float32).tobytes())
    L = m.view(DispatchLayout)
    size = L.block_size(len(d.constants), 3)
    block = heap.malloc(size, align=L.align)
    DispatchState(m, len(d.constants), 3, heap.view(block, size), 0, block).set(
        workgroup_size=(1, 1, 1), workgroup_count=d.workgroups, constants=d.constants,
        bindings=[(p, n) for p in bufs])
    wg = heap.malloc(L.wg_size, align=L.wg_align)
    write_workgroup_state(m, heap.view(wg, L.wg_size), 0)
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        for x in range(d.workgroups[0]):
            heap.write(wg + L.wg_ids[0], x.to_bytes(4, "little"))
            rt.call(fn, [env, block, wg])
        best = min(best, time.perf_counter() - t)
    assert np.array_equal(np.frombuffer(heap.read(bufs[2], n), np.float32), np.arange(n // 4, dtype=np.float32) + 1)
    print(f"add1m (+simd128): {d.workgroups[0]} workgroups, {best * 1e3:.2f} ms")
    return best * 1e3


def rss_kib() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def cycles(add16: bytes, trivial: bytes, n: int) -> None:
    """add16 loaded and released `n` times, alone and beside a kept module (see the docstring); RSS
    growth over the first and the second half of the cycles apart (the first half includes the
    allocators' warm-up)."""
    for kept in (False, True):
        heap = Heap(target="wasm32")
        rt = W.WasmRuntime(heap)
        keep = rt.load_side_module(add16, "kept") if kept else None
        rt.release(rt.load_side_module(add16, "warm-up"))
        blocks, table, stores = len(heap.live()), rt.table.size(rt.store), rt.stores_made
        rss, t = [rss_kib()], time.perf_counter()
        for i in range(n):
            side = rt.load_side_module(add16, "add16")
            side.lookup(X.IREE_HAL_EXECUTABLE_LIBRARY_EXPORT_NAME)
            rt.release(side)
            if i + 1 in (n // 2, n):
                rss.append(rss_kib())
        per_cycle = (time.perf_counter() - t) / n * 1e3
        print(f"{n} load/release cycles {'beside a kept module' if kept else 'alone'}: {per_cycle:.2f} ms each; "
              f"RSS +{rss[1] - rss[0]} KiB over the first half, +{rss[2] - rss[1]} KiB over the second; heap blocks "
              f"{blocks} -> {len(heap.live())}, table {table} -> {rt.table.size(rt.store)}, stores made "
              f"+{rt.stores_made - stores}")
        if keep is not None:
            rt.release(keep)
        rt.close()
        heap.close()


def per_call_us(fn, n: int, repeats: int = 5) -> float:
    best = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        best.append((time.perf_counter() - t) / n * 1e6)
    return min(best)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=20000, help="calls per timing run")
    ap.add_argument("--loads", type=int, default=10, help="module loads to time")
    ap.add_argument("--cycles", type=int, default=1000, help="load/release cycles to measure")
    args = ap.parse_args()

    heap = Heap(target="wasm32")
    t = time.perf_counter()
    rt = W.WasmRuntime(heap)
    print(f"runtime: {(time.perf_counter() - t) * 1e3:.2f} ms")
    trivial, add16 = trivial_side_module(), program_wasm("add16")
    for label, data in (("trivial", trivial), ("add16", add16)):
        times = []
        for _ in range(args.loads):
            t = time.perf_counter()
            side = rt.load_side_module(data, label)
            times.append((time.perf_counter() - t) * 1e3)
        print(f"load {label} ({len(data)} bytes): median {statistics.median(times):.2f} ms, "
              f"first {times[0]:.2f} ms")

    side = rt.load_side_module(trivial, "trivial")
    ident = side.lookup("ident")
    assert rt.call(ident, [41]) == 42
    func = side._funcs["ident"]
    store = rt.store
    print(f"call trivial export: {per_call_us(lambda: rt.call(ident, [41]), args.calls):.2f} us "
          f"(wasmtime Func call: {per_call_us(lambda: func(store, 41), args.calls):.2f} us)")

    side = rt.load_side_module(add16, "add16")
    m = heap.machine
    env = heap.malloc(m.layout(X.iree_hal_executable_environment_v0_t).size)
    query = side.lookup(X.IREE_HAL_EXECUTABLE_LIBRARY_EXPORT_NAME)
    lib = rt.call(query, [X.IREE_HAL_EXECUTABLE_LIBRARY_VERSION_LATEST, env])
    v0 = heap.struct_at(X.iree_hal_executable_library_v0_t, lib)
    fn = heap.read_word(v0.exports.ptrs)
    L = m.view(DispatchLayout)
    size = L.block_size(0, 3)
    block = heap.malloc(size, align=L.align)
    state = DispatchState(m, 0, 3, heap.view(block, size), 0, block)
    a, b = np.arange(16, dtype=np.float32), np.ones(16, np.float32)
    bufs = [heap.malloc(64, align=64) for _ in range(3)]
    heap.write(bufs[0], a.tobytes())
    heap.write(bufs[1], b.tobytes())
    state.pack((1, 1, 1), [], bufs, [64, 64, 64])
    wg = heap.malloc(L.wg_size, align=L.wg_align)
    write_workgroup_state(m, heap.view(wg, L.wg_size), 0)
    print(f"query: {per_call_us(lambda: rt.call(query, [6, env]), args.calls):.2f} us")
    print(f"add16 workgroup: {per_call_us(lambda: rt.call(fn, [env, block, wg]), args.calls):.2f} us")
    assert np.array_equal(np.frombuffer(heap.read(bufs[2], 64), np.float32), a + b)
    add1m_ms(rt, heap)
    rt.close()
    cycles(add16, trivial, args.cycles)


if __name__ == "__main__":
    main()
