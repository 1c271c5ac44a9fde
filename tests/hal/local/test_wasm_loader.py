"""wasm32 side modules run by hal.local.wasm_loader under wasmtime, the wasm32 heap as linear memory.

Oracles: (a) the same C compiled by clang for wasm32 (a dylink.0 side module) and by gcc for the
host, run natively through ctypes; (b) iree-compile's wasm32 output for add16, checked against the
same program compiled for the host (its embedded ELF loaded natively), the compiler's VM IR and
iree-dump-module, and its kernel's output against numpy; (c) mutated modules end in this module's
errors; (d) the runtime's own state and lifetime (wasmtime's finalizers), executables released
through hal_loader 200 times with the heap, the table and the live memories counted, the store
rebuilt around a kept module; (e) a real iree-compile import (a dispatch calling an external
function) through the environment's thunk, refused without a provider as ireeabi refuses the host
build and as iree-run-module fails on it, and what iree-compile 3.13 emits for wasm32 math and
conversions. No verdict depends on time.
"""
from __future__ import annotations

import ctypes
import gc
import os
import random
import signal
import struct
import subprocess
import threading
import time
import weakref
from pathlib import Path

import numpy as np
import pytest
import wasmtime

from support import iree_tools
from support.forked import run_forked
from support.debian_tools import debian_tool
from support import vm_ir
from support.hal_programs import program
from ireeabi.hal.local import elf_executable, elf_loader
from ireeabi.hal.local import wasm_loader as W
from ireeabi.hal.local import wasm_dylink as D
from ireeabi.hal.local.executable_library import (DispatchState, ExecutableError, ForeignKernelError,
                                                  write_workgroup_state)
from ireeabi.hal.local import wasm_executable as WE
from ireeabi.hal.local.executable_library import UnresolvedImportError
from ireeabi.layouts import executable_library as X
from ireeabi.modules.hal.runtime import HalRuntime
from ireeabi.vm import ref as R
from ireeabi.vm.bytecode import module_file as mf
from ireeabi.base.heap import Heap
from support.hal_session import Session
from ireeabi.base.status import IreeFaultError, StatusCode, StatusError
from ireeabi.layouts.executable_library import DispatchLayout

PROGRAMS = Path(__file__).parents[2] / "programs"

# The same source for both compilers. Exported functions are visible; everything else is hidden so
# that no GOT import appears (a side module reaches its own data through __memory_base).
KERNELS_C = r"""
#define EXPORT __attribute__((visibility("default")))
typedef int (*binop_t)(int, int);

static int primes[6] = {2, 3, 5, 7, 11, 13};
/* Data relocations: pointers in data to other data. */
static int *picks[3] = {&primes[4], &primes[1], &primes[5]};
static const char greeting[] = "side module data";
static const char *greeting_ptr = greeting;
static volatile int sink;

EXPORT int weighted_sum(const int *a, int n) {
  int s = 0;
  for (int i = 0; i < n; ++i) s += a[i] * (i + 1) - (a[i] >> 2);
  return s;
}
EXPORT void float_mix(const float *scale, const float *x, float *y, int n) {
  for (int i = 0; i < n; ++i) {
    float v = x[i];
    y[i] = *scale * v + y[i] / (1.0f + v * v) - __builtin_sqrtf(v * v + 2.0f);
  }
}
EXPORT void double_stats(const double *x, int n, double *out) {
  double s = 0.0, q = 0.0;
  for (int i = 0; i < n; ++i) { s += x[i]; q += x[i] * x[i]; }
  out[0] = s / n;
  out[1] = __builtin_sqrt(q / n - (s / n) * (s / n));
  out[2] = (double)(float)(s * 1e-3);
}
EXPORT int call_through(binop_t f, int x) { return f(x, 7) * 3 + f(x + 1, x); }
EXPORT int pick(int i) { return *picks[i % 3]; }
EXPORT const char *greeting_address(void) { return greeting_ptr; }
EXPORT void store_at(int *p, int v) { *p = v; }
EXPORT int depth(int n) {
  if (n <= 0) return sink;
  int r = depth(n - 1);
  sink = r;
  return r + 1;
}
EXPORT int local_array(int n) {
  volatile int buf[64];
  for (int i = 0; i < 64; ++i) buf[i] = i * n;
  int s = 0;
  for (int i = 0; i < 64; i += 3) s += buf[i];
  return s;
}
EXPORT int deep_locals(int n) {
  volatile int buf[64];
  for (int i = 0; i < 64; ++i) buf[i] = n + i;
  if (n <= 0) return buf[7];
  return deep_locals(n - 1) + buf[n & 63];
}
EXPORT void die(void) { __builtin_trap(); }
EXPORT void spin(volatile int *flag) {
  flag[0] = 1;
  for (;;) flag[1]++;
}
"""


def _run(argv: list[str]) -> None:
    proc = subprocess.run(argv, capture_output=True, text=True)
    assert proc.returncode == 0, f"{' '.join(argv)} failed:\n{proc.stderr}"


def _tool(name: str) -> str:
    return debian_tool(name)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(wasm side module bytes, host ctypes library) of KERNELS_C."""
    d = tmp_path_factory.mktemp("wasm_kernels")
    src = d / "kernels.c"
    src.write_text(KERNELS_C)
    # clang 14 keeps PIC only for the emscripten OS; the object is then linked with the flags
    # iree-compile's wasm linker passes wasm-ld (a dylink.0 side module).
    flags = ["-O2", "-ffp-contract=off", "-fvisibility=hidden"]
    _run([_tool("clang"), "--target=wasm32-unknown-emscripten", "-fPIC", "-nostdlib", *flags, "-c", str(src),
          "-o", str(d / "kernels.o")])
    _run([_tool("wasm-ld"), "--no-entry", "--fatal-warnings", "--experimental-pic", "--shared", str(d / "kernels.o"),
          "-o", str(d / "kernels.wasm")])
    _run([_tool("gcc"), "-shared", "-fPIC", *flags, str(src), "-o", str(d / "kernels.so")])
    return (d / "kernels.wasm").read_bytes(), ctypes.CDLL(str(d / "kernels.so"))


@pytest.fixture
def heap():
    h = Heap(target="wasm32", name="wasm heap")
    yield h
    h.close()


@pytest.fixture
def runtime(heap):
    rt = W.WasmRuntime(heap)
    yield rt
    rt.close()


@pytest.fixture
def side(runtime, built):
    return runtime.load_side_module(built[0], "kernels")


def _block(heap: Heap, data: bytes, align: int = 16) -> int:
    a = heap.malloc(len(data), align=align)
    heap.write(a, data)
    return a


def _s32(v: int) -> int:
    return v - (1 << 32) if v >> 31 else v


# -- (a) clang's side module against gcc's host build -------------------------------------------------


def test_dylink_section_matches_what_the_module_needs(built, runtime):
    wasm = built[0]
    info = D.parse_dylink(wasm)
    # The facts are wasm-ld's: check them against the module's own imports through wasmtime.
    assert info.memory_align >= 4 and info.needed == ()
    side = runtime.load_side_module(wasm, "kernels")
    assert side.data_base % info.memory_align == 0
    assert runtime.heap.allocation(side.data_base).size == info.memory_size
    assert {"weighted_sum", "float_mix", "call_through", "pick", "store_at"} <= set(side.exports)


def test_integer_array_kernel_matches_host(side, heap, built):
    host = built[1]
    rng = random.Random(5)
    for n in (0, 1, 7, 100):
        values = [rng.randrange(-2**20, 2**20) for _ in range(n)]
        a = _block(heap, struct.pack(f"<{n}i", *values) or b"\0")
        got = _s32(side.call(side.lookup("weighted_sum"), [a, n]))
        arr = (ctypes.c_int * max(n, 1))(*values)
        assert got == host.weighted_sum(arr, n)


def test_float_kernels_write_the_hosts_bytes_into_the_heap(side, heap, built):
    host = built[1]
    rng = np.random.default_rng(3)
    x = rng.standard_normal(33).astype(np.float32)
    y = rng.standard_normal(33).astype(np.float32)
    scale = np.float32(1.25)
    px, py, ps = _block(heap, x.tobytes()), _block(heap, y.tobytes()), _block(heap, scale.tobytes())
    assert side.call(side.lookup("float_mix"), [ps, px, py, 33]) == 0
    expect = y.copy()
    host_scale = np.array([scale], np.float32)
    host.float_mix(host_scale.ctypes.data_as(ctypes.c_void_p), x.ctypes.data_as(ctypes.c_void_p),
                   expect.ctypes.data_as(ctypes.c_void_p), 33)
    # What the kernel wrote, read back through the heap at the same target addresses.
    assert heap.read(py, 33 * 4) == expect.tobytes()
    assert heap.read(px, 33 * 4) == x.tobytes()

    d = rng.standard_normal(20)
    pd, out = _block(heap, d.tobytes(), 8), heap.malloc(24, align=8)
    side.call(side.lookup("double_stats"), [pd, 20, out])
    host_out = np.zeros(3)
    host.double_stats(d.ctypes.data_as(ctypes.c_void_p), 20, host_out.ctypes.data_as(ctypes.c_void_p))
    assert heap.read(out, 24) == host_out.tobytes()


def test_function_pointer_into_a_host_function(side, runtime, built):
    host = built[1]
    calls = []

    def binop(a: int, b: int) -> int:
        calls.append((a, b))
        return a * 10 - b

    index = runtime.host_function(binop, ["i32", "i32"], ["i32"], "binop")
    got = _s32(side.call(side.lookup("call_through"), [index, 4]))
    c_binop = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_int)(lambda a, b: a * 10 - b)
    host.call_through.argtypes = [ctypes.c_void_p, ctypes.c_int]
    assert got == host.call_through(ctypes.cast(c_binop, ctypes.c_void_p), 4)
    assert calls == [(4, 7), (5, 4)]
    # A host function may call back into wasm (the table entry of another export).
    pick = side.lookup("pick")
    reenter = runtime.host_function(lambda a, b: side.call(pick, [a]) + b, ["i32", "i32"], ["i32"], "reenter")
    c_reenter = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_int)(lambda a, b: host.pick(a) + b)
    assert side.call(side.lookup("call_through"), [reenter, 2]) == \
        host.call_through(ctypes.cast(c_reenter, ctypes.c_void_p), 2)
    # An exception in the host function comes out of the call as itself.
    def broken(a: int, b: int) -> int:
        raise LookupError("host side failed")
    bad = runtime.host_function(broken, ["i32", "i32"], ["i32"], "broken")
    with pytest.raises(LookupError, match="host side failed"):
        side.call(side.lookup("call_through"), [bad, 1])


def test_data_relocations_point_into_the_modules_data_block(side, heap, built):
    host = built[1]
    for i in range(3):
        assert side.call(side.lookup("pick"), [i]) == host.pick(i)
    host.greeting_address.restype = ctypes.c_char_p
    address = side.call(side.lookup("greeting_address"), [])
    base, size = side.data_base, side.info.memory_size
    assert base <= address < base + size
    text = host.greeting_address()
    assert heap.read(address, len(text) + 1) == text + b"\0"


def test_shadow_stack_and_recursion(side, built):
    host = built[1]
    for n in (1, 3, 1000):
        assert side.call(side.lookup("local_array"), [n]) == host.local_array(n)
        assert side.call(side.lookup("depth"), [n]) == host.depth(n)


@pytest.mark.parametrize("address", [0, 0x100, 0xFFFF, 0xFFFFFFFC])
def test_out_of_bounds_write_is_a_trap(side, heap, address):
    with pytest.raises(W.WasmTrap) as e:
        side.call(side.lookup("store_at"), [address, 1])
    assert e.value.trap == "MEMORY_OUT_OF_BOUNDS" and "store_at" in str(e.value)
    # The process and the runtime carry on.
    a = heap.malloc(4)
    side.call(side.lookup("store_at"), [a, 0x1234])
    assert heap.read_i32(a) == 0x1234


def test_past_the_window_end_is_a_trap(side, heap):
    with pytest.raises(W.WasmTrap, match="MEMORY_OUT_OF_BOUNDS"):
        side.call(side.lookup("store_at"), [heap.space.end, 1])


def test_unreachable_and_stack_overflow_traps(side):
    with pytest.raises(W.WasmTrap) as e:
        side.call(side.lookup("die"), [])
    assert e.value.trap == "UNREACHABLE" and "kernels:die" in str(e.value)
    with pytest.raises(W.WasmTrap) as e:
        side.call(side.lookup("depth"), [1 << 30])
    assert e.value.trap == "STACK_OVERFLOW"
    assert side.call(side.lookup("depth"), [5]) == 5  # the stack unwound


def test_running_off_the_shadow_stack_is_a_trap(side, heap, built):
    host = built[1]
    assert side.call(side.lookup("deep_locals"), [50]) == host.deep_locals(50)
    stack = [a for a in heap.live() if a.tag == "wasm stack"]
    assert len(stack) == 1
    # Far deeper than the shadow stack's frames (256 B each) fit: it runs into the guard page
    # below the stack block, never into the block below it.
    below = heap.malloc(4096)
    heap.write(below, b"\x5a" * 4096)
    frames = W.DEFAULT_STACK_SIZE // 256 * 2
    with pytest.raises(W.WasmTrap) as e:
        side.call(side.lookup("deep_locals"), [frames])
    assert e.value.trap == "MEMORY_OUT_OF_BOUNDS" and "deep_locals" in str(e.value)
    assert heap.read(below, 4096) == b"\x5a" * 4096
    assert side.call(side.lookup("deep_locals"), [50]) == host.deep_locals(50)


def test_fuel_bounds_a_runaway_kernel(side, heap):
    flag = heap.malloc(8)
    with pytest.raises(W.WasmFuelExhausted) as e:
        side.call(side.lookup("spin"), [flag], max_instructions=100_000)
    assert e.value.budget == 100_000 and "spin" in str(e.value)
    spins = heap.read_i32(flag + 4)
    assert heap.read_i32(flag) == 1 and 0 < spins < 100_000
    # A larger budget runs proportionally longer before it stops.
    heap.write(flag, bytes(8))
    with pytest.raises(W.WasmFuelExhausted):
        side.call(side.lookup("spin"), [flag], max_instructions=1_000_000)
    assert heap.read_i32(flag + 4) > 5 * spins


def test_sigint_stops_a_running_kernel(side, heap):
    if threading.current_thread() is not threading.main_thread():
        pytest.fail("signals are delivered to the main thread only")
    flag = heap.malloc(8)
    cell = heap.view(flag, 4)

    def interrupt() -> None:
        # Wait (no timing) until the kernel is inside its loop, then signal the process.
        while cell[0] == 0:
            pass
        os.kill(os.getpid(), signal.SIGINT)

    # A wakeup fd someone else set (an event loop's) is restored after the call and still hears
    # of the signal.
    r, w = os.pipe()
    os.set_blocking(w, False)
    os.set_blocking(r, False)
    old = signal.set_wakeup_fd(w)
    t = threading.Thread(target=interrupt)
    t.start()
    try:
        # Only the interrupt ends this call with KeyboardInterrupt; were it lost, the budget (many
        # seconds of spinning) would end it with WasmFuelExhausted and fail the test, not hang it.
        with pytest.raises(KeyboardInterrupt):
            side.call(side.lookup("spin"), [flag], max_instructions=50_000_000_000)
    finally:
        t.join()
        restored = signal.set_wakeup_fd(old)
    try:
        assert restored == w
        assert signal.SIGINT in os.read(r, 64)
    finally:
        os.close(r)
        os.close(w)
    assert heap.read_i32(flag + 4) > 0
    assert side.call(side.lookup("depth"), [4]) == 4  # usable afterwards


def test_calls_from_two_threads_take_turns(side, heap, runtime):
    """The store runs one call at a time: a second thread's call waits for the running one."""
    flag = heap.malloc(8)
    cell = heap.view(flag, 4)
    outcome = []

    def runaway() -> None:
        try:
            side.call(side.lookup("spin"), [flag], max_instructions=50_000_000)
        except W.WasmFuelExhausted:
            outcome.append("exhausted")

    t = threading.Thread(target=runaway)
    t.start()
    try:
        while cell[0] == 0:  # the other thread's kernel is running
            pass
        assert side.call(side.lookup("depth"), [9]) == 9
        outcome.append("second call")
    finally:
        t.join()
    assert outcome == ["exhausted", "second call"]
    # Closing from inside a call (a host function) is refused, not a crash.
    closer = runtime.host_function(lambda a, b: runtime.close() or 0, ["i32", "i32"], ["i32"], "closer")
    with pytest.raises(ExecutableError, match="cannot close while a call is running"):
        side.call(side.lookup("call_through"), [closer, 1])


def test_call_errors_name_what_is_wrong(side, runtime):
    size = runtime.table.size(runtime.store)
    with pytest.raises(W.WasmCallError, match=f"table index {size} is outside the function table"):
        runtime.call(size, [])
    with pytest.raises(W.WasmCallError, match="takes 2 i32 arguments, 1 given"):
        side.call(side.lookup("weighted_sum"), [0])
    with pytest.raises(W.WasmCallError, match="is not an int"):
        side.call(side.lookup("pick"), ["1"])
    with pytest.raises(ExecutableError, match="exports no function 'nope'"):
        side.lookup("nope")
    with pytest.raises(ExecutableError, match="an export name is a str, not list"):
        side.lookup(["pick"])
    with pytest.raises(W.WasmCallError, match="arguments are a sequence of ints, not int"):
        side.call(side.lookup("pick"), 1)
    assert side.call(side.lookup("pick"), iter([1])) == side.call(side.lookup("pick"), (1,))
    with pytest.raises(D.WasmModuleError, match="a side module is bytes, not str"):
        runtime.load_side_module("\0asm")
    with pytest.raises(W.WasmCallError, match="max_instructions must be a positive int"):
        side.call(side.lookup("pick"), [1], max_instructions=0)
    f = runtime.host_function(lambda x: x, ["f64"], ["f64"], "f")
    with pytest.raises(W.WasmCallError, match=r"f has type \(f64\) -> \(f64\)"):
        runtime.call(f, [1])
    with pytest.raises(W.WasmCallError, match="value types"):
        runtime.host_function(lambda: 0, ["i8"], [], "bad")


def test_runtime_needs_a_wasm32_heap():
    h = Heap(target="x86_64")
    try:
        with pytest.raises(ExecutableError, match="32-bit foreign data model"):
            W.WasmRuntime(h)
    finally:
        h.close()


def test_linear_memory_is_the_heaps_window(runtime, heap):
    space = heap.space
    assert space.zero_host is not None and space.zero_host + space.base == space.host_base
    ptr = runtime.memory.data_ptr(runtime.store)
    assert ctypes.addressof(ptr.contents) == space.zero_host
    assert runtime.memory.data_len(runtime.store) == space.end
    # A write through wasmtime's view lands at the same target address in the heap.
    a = heap.malloc(16)
    runtime.memory.write(runtime.store, b"through wasmtime", a)
    assert heap.read(a, 16) == b"through wasmtime"


def test_close_frees_the_runtimes_blocks(heap, built):
    before = {a.address for a in heap.live()}
    rt = W.WasmRuntime(heap)
    side = rt.load_side_module(built[0], "kernels")
    side.call(side.lookup("local_array"), [2])  # the module imports __stack_pointer: a stack block
    assert len(heap.live()) == len(before) + 2
    rt.close()
    assert {a.address for a in heap.live()} == before
    with pytest.raises(ExecutableError, match="closed"):
        rt.call(0, [])


# -- imports and dylink.0 refusals ----------------------------------------------------------------------


def _leb(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def _custom(name: str, body: bytes) -> bytes:
    payload = _leb(len(name)) + name.encode() + body
    return b"\0" + _leb(len(payload)) + payload


def _dylink(mem: int = 0, align: int = 2, table: int = 0, talign: int = 0, extra: bytes = b"") -> bytes:
    sub = _leb(mem) + _leb(align) + _leb(table) + _leb(talign)
    return _custom("dylink.0", b"\1" + _leb(len(sub)) + sub + extra)


def _import_section(entries: list[bytes]) -> bytes:
    body = _leb(len(entries)) + b"".join(entries)
    return b"\2" + _leb(len(body)) + body


def _str(s: str) -> bytes:
    return _leb(len(s)) + s.encode()


HEADER = b"\0asm\1\0\0\0"


def test_an_unknown_import_is_refused_by_name(runtime):
    # (type section: () -> ()) then an import of env.printf as a function.
    types = b"\1\4\1\x60\0\0"
    imports = _import_section([_str("env") + _str("printf") + b"\0\0"])
    with pytest.raises(W.WasmImportError, match="function 'env.printf'") as e:
        runtime.load_side_module(HEADER + _dylink() + types + imports)
    assert e.value.import_name == "env.printf"
    got = _import_section([_str("GOT.mem") + _str("table") + b"\3\x7f\1"])  # a GOT global
    with pytest.raises(W.WasmImportError, match="global 'GOT.mem.table'"):
        runtime.load_side_module(HEADER + _dylink() + got)
    mutable_base = _import_section([_str("env") + _str("__memory_base") + b"\3\x7f\1"])
    with pytest.raises(W.WasmImportError, match="mutable i32 global; it is a const i32"):
        runtime.load_side_module(HEADER + _dylink() + mutable_base)
    assert runtime.heap.live() == [a for a in runtime.heap.live() if "wasm data" not in a.tag]


def test_a_minimal_side_module_loads(runtime):
    imports = _import_section([_str("env") + _str("memory") + b"\2\0\1",
                               _str("env") + _str("__memory_base") + b"\3\x7f\0"])
    side = runtime.load_side_module(HEADER + _dylink(mem=40, align=6) + imports, "tiny")
    assert side.data_base % 64 == 0 and side.exports == ()
    assert runtime.heap.allocation(side.data_base).size == 40


# Offsets in the modules _dylink builds: the first subsection, its fields, the one after it.
SUB = len(HEADER) + 2 + len(_str("dylink.0"))
FIELDS = SUB + 2
NEXT = SUB + 6


@pytest.mark.parametrize("data, message, offset", [
    (b"", "no \\\\0asm magic", 0),
    (b"\0asm\2\0\0\0", "unsupported wasm version", 4),
    (HEADER, "no sections", len(HEADER)),
    (HEADER + b"\1\4\1\x60\0\0", "first section is section id 1", len(HEADER)),
    (HEADER + _custom("name", b""), "first section is custom section 'name'", len(HEADER)),
    (HEADER + _custom("dylink", b"\1\4\0\0\0\0"), "legacy 'dylink'", len(HEADER)),
    (HEADER + b"\0\x80\x80\x80\x80\x10", "does not fit in 32 bits", len(HEADER) + 1),
    (HEADER + b"\0\x20\x08dylink.0", "runs past the module", len(HEADER)),
    (HEADER + _custom("dylink.0", b"\1\5\0\0\0\0"), "subsection 1 of 5 bytes runs past the section", SUB),
    (HEADER + _custom("dylink.0", b"\1\3\0\0\0"), "truncated LEB128 dylink.0 table alignment", FIELDS + 3),
    (HEADER + _custom("dylink.0", b"\1\5\0\0\0\0\0"), "1 bytes past its four fields", FIELDS + 4),
    (HEADER + _dylink(extra=b"\1\4\0\0\0\0"), "second memory info", NEXT),
    (HEADER + _dylink(align=17), "memory alignment 2\\*\\*17", FIELDS),
    (HEADER + _dylink(table=1 << 20), "table slots", FIELDS),
    (HEADER + _dylink(extra=b"\2\6\1\4libc"), "needs other libraries \\(libc\\)", NEXT + 2),
    (HEADER + _dylink(extra=b"\2\2\3\0"), "needed list of 3 names", NEXT + 2),
])
def test_malformed_dylink_is_refused_with_its_offset(runtime, data, message, offset):
    with pytest.raises(D.WasmModuleError, match=message) as e:
        runtime.load_side_module(data)
    assert e.value.offset == offset and f"at byte {offset}" in str(e.value)


def test_unknown_dylink_subsections_are_skipped():
    info = D.parse_dylink(HEADER + _dylink(mem=8, align=3, table=2, talign=1, extra=b"\x09\2\xff\xff"))
    assert info == D.DylinkInfo(8, 8, 2, 2)


# -- (b) iree-compile's wasm32 executable ---------------------------------------------------------------

WASM_FLAGS = ("--iree-llvmcpu-target-triple=wasm32-unknown-unknown",)
SIMD_FLAGS = WASM_FLAGS + ("--iree-llvmcpu-target-cpu-features=+simd128",)


def _compile_wasm(program: str, out: Path, flags: tuple[str, ...]) -> tuple[str, bytes, str, Path]:
    """(format, side module bytes, VM IR, .vmfb path) of a test program compiled for wasm32 with
    the inline-dynamic model's flags plus `flags`."""
    src = PROGRAMS / f"{program}.mlir"
    vmfb = iree_tools.compile_mlir(src, out, "inline-dynamic", flags)
    segments = [mf.rodata_bytes(s) for s in mf.read_module(vmfb).rodata_segments]
    formats = [s.decode() for s in segments if s.startswith(b"system-wasm-")]
    binaries = [s for s in segments if s[:4] == b"\0asm"]
    assert formats == ["system-wasm-wasm_32"] and len(binaries) == 1
    proc = subprocess.run([iree_tools.find_tool("iree-compile"), str(src), *iree_tools.compile_flags("inline-dynamic"),
                           *flags, "--compile-to=vm"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return formats[0], binaries[0], proc.stdout, vmfb


@pytest.fixture(scope="module")
def wasm_out(tmp_path_factory):
    return tmp_path_factory.mktemp("wasm_programs")


@pytest.fixture(scope="module")
def add16_wasm(wasm_out):
    return _compile_wasm("add16", wasm_out, WASM_FLAGS)


@pytest.fixture(scope="module")
def add16_host():
    """add16's host library (embedded ELF, loaded natively): the oracle for the library's fields."""
    m = mf.read_module(iree_tools.compile_mlir(PROGRAMS / "add16.mlir"))
    segments = [mf.rodata_bytes(s) for s in m.rodata_segments]
    (fmt,) = [s.decode() for s in segments if s.startswith(b"embedded-elf-")]
    elf = next(s for s in segments if s[:4] == b"\x7fELF")
    return fmt, elf


def _cstring(heap: Heap, address: int, limit: int = 4096) -> bytes:
    out = bytearray()
    while len(out) < limit:
        c = heap.read(address + len(out), 1)
        if c == b"\0":
            return bytes(out)
        out += c
    raise AssertionError(f"no NUL within {limit} bytes at 0x{address:x}")


def _host_query(fmt: str, elf: bytes, version: int) -> int:
    """The host library's own query answer for `version` (NULL or not), called natively."""
    module = elf_loader.load(elf)
    try:
        env = (ctypes.c_char * 256)()
        addr = elf_loader.lookup_export(module, X.IREE_HAL_EXECUTABLE_LIBRARY_EXPORT_NAME)
        return elf_loader.query(module, addr, version, ctypes.addressof(env))
    finally:
        module.close()


def test_iree_wasm_library_query_and_header(add16_wasm, add16_host, runtime, heap):
    fmt, wasm, ir, vmfb = add16_wasm
    info = D.parse_dylink(wasm)
    side = runtime.load_side_module(wasm, "add16")
    assert set(side.exports) == {X.IREE_HAL_EXECUTABLE_LIBRARY_EXPORT_NAME, "__wasm_apply_data_relocs"}
    m = heap.machine
    env_layout = m.layout(X.iree_hal_executable_environment_v0_t)
    env = heap.malloc(env_layout.size, align=env_layout.align)  # zeroed environment_v0 for wasm32
    query = side.lookup(X.IREE_HAL_EXECUTABLE_LIBRARY_EXPORT_NAME)

    # Version negotiation answers as the host build of the same program does (native oracle).
    host_fmt, elf = add16_host
    for version in (0, X.IREE_HAL_EXECUTABLE_LIBRARY_VERSION_LATEST):
        assert bool(side.call(query, [version, env])) == bool(_host_query(host_fmt, elf, version))
    lib = side.call(query, [X.IREE_HAL_EXECUTABLE_LIBRARY_VERSION_LATEST, env])
    assert side.data_base <= lib < side.data_base + info.memory_size

    host = elf_executable.load_library(host_fmt, elf)
    with host:
        v0 = heap.struct_at(X.iree_hal_executable_library_v0_t, lib)
        header = heap.struct_at(X.iree_hal_executable_library_header_t, v0.header)
        assert header.version == host.version
        assert _cstring(heap, header.name).decode() == host.name
        assert header.sanitizer == X.SanitizerKind.NONE and header.features == 0
        assert v0.imports.count == len(host.imports) and v0.constants.count == host.constant_count
        exports = v0.exports
        assert exports.count == len(host.exports)
        names = [_cstring(heap, heap.read_word(exports.names + 4 * i)).decode() for i in range(exports.count)]
        assert names == [e.name for e in host.exports]
        for i, e in enumerate(host.exports):
            attrs = heap.struct_at(X.iree_hal_executable_dispatch_attrs_v0_t,
                                   exports.attrs + i * m.layout(X.iree_hal_executable_dispatch_attrs_v0_t).size)
            assert attrs.binding_count == e.binding_count and attrs.constant_count == e.constant_count
    # The export names are the compiler's: in the VM IR and in iree-dump-module's rodata listing.
    assert all(f'"{n}"' in ir for n in names)
    dump = iree_tools.dump_module(vmfb)
    assert "system-wasm-wasm_32" in dump and all(n[:32] in dump for n in names)


def _dispatch(side: W.WasmSideModule, heap: Heap, d: "vm_ir.Dispatch", inputs: list[np.ndarray],
              out_dtype=np.float32, env: int | None = None, status: int = 0) -> np.ndarray:
    """Run dispatch `d` of the library in `side` over every workgroup, as hal_loader lays it out:
    environment_v0 (zeroed unless `env` is given), dispatch_state_v0 with its constants and
    bindings, workgroup_state_v0, input and output buffers all in the heap; each workgroup must
    return `status`; the output read back from the heap."""
    m = heap.machine
    env_layout = m.layout(X.iree_hal_executable_environment_v0_t)
    if env is None:
        env = heap.malloc(env_layout.size, align=env_layout.align)
    lib = side.call(side.lookup(X.IREE_HAL_EXECUTABLE_LIBRARY_EXPORT_NAME),
                    [X.IREE_HAL_EXECUTABLE_LIBRARY_VERSION_LATEST, env])
    v0 = heap.struct_at(X.iree_hal_executable_library_v0_t, lib)
    names = [_cstring(heap, heap.read_word(v0.exports.names + 4 * i)).decode() for i in range(v0.exports.count)]
    ordinal = names.index(d.export_name)
    fn = heap.read_word(v0.exports.ptrs + 4 * ordinal)  # a table index, relocated at load
    assert side.table_base <= fn < side.table_base + side.info.table_size
    attrs = heap.struct_at(X.iree_hal_executable_dispatch_attrs_v0_t,
                           v0.exports.attrs + ordinal * m.layout(X.iree_hal_executable_dispatch_attrs_v0_t).size)
    assert attrs.constant_count == len(d.constants) and attrs.binding_count == len(d.bindings)

    out_bytes = d.bindings[-1][2]
    buffers = [_block(heap, a.tobytes(), 64) for a in inputs] + [heap.malloc(out_bytes, align=64)]
    assert [heap.allocation(p).size for p in buffers] == [n for _, _, n in d.bindings]
    L = m.view(DispatchLayout)
    size = L.block_size(len(d.constants), len(d.bindings))
    block = heap.malloc(size, align=L.align)
    state = DispatchState(m, len(d.constants), len(d.bindings), heap.view(block, size), 0, block)
    state.set(workgroup_size=(attrs.workgroup_size_x or 1, attrs.workgroup_size_y or 1, attrs.workgroup_size_z or 1),
              workgroup_count=d.workgroups, constants=d.constants,
              bindings=[(p, n) for p, (_, _, n) in zip(buffers, d.bindings)])
    wg = heap.malloc(L.wg_size, align=L.wg_align)
    write_workgroup_state(m, heap.view(wg, L.wg_size), 0)
    x_off, y_off, z_off = L.wg_ids
    for z in range(d.workgroups[2]):
        for y in range(d.workgroups[1]):
            for x in range(d.workgroups[0]):
                heap.write(wg + x_off, struct.pack("<I", x))
                heap.write(wg + y_off, struct.pack("<I", y))
                heap.write(wg + z_off, struct.pack("<H", z))
                assert side.call(fn, [env, block, wg]) == status
    return np.frombuffer(heap.read(buffers[-1], out_bytes), out_dtype)


@pytest.mark.parametrize("program, flags", [("add16", WASM_FLAGS), ("add16", SIMD_FLAGS), ("add1m", SIMD_FLAGS),
                                            ("push_constants", WASM_FLAGS)],
                         ids=["add16", "add16-simd128", "add1m-simd128", "push_constants"])
def test_iree_wasm_kernels_match_numpy(program, flags, wasm_out, runtime, heap):
    """The dispatch state, bindings and buffers laid out in the heap are what the kernel reads;
    workgroup counts, constants and binding sizes come from the compiler's VM IR."""
    fmt, wasm, ir, _ = _compile_wasm(program, wasm_out, flags)
    side = runtime.load_side_module(wasm, program)
    rng = np.random.default_rng(29)
    if program == "push_constants":
        n, scale = 10000, 2.5
        (d,) = vm_ir.dispatches(ir, "scale", [None, scale], {0: [n]})
        assert d.constants
        x = rng.standard_normal(n, np.float32)
        np.testing.assert_array_equal(_dispatch(side, heap, d, [x]), x * np.float32(scale))
        return
    (d,) = vm_ir.dispatches(ir, "add", [None, None])
    n = d.bindings[0][2] // 4
    a, b = rng.standard_normal(n, np.float32), rng.standard_normal(n, np.float32)
    np.testing.assert_array_equal(_dispatch(side, heap, d, [a, b]), a + b)
    # The SIMD builds do use wasm SIMD: an engine without it refuses them (and takes the others).
    config = wasmtime.Config()
    config.wasm_relaxed_simd = False
    config.wasm_simd = False
    uses_simd = False
    try:
        wasmtime.Module(wasmtime.Engine(config), wasm)
    except wasmtime.WasmtimeError:
        uses_simd = True
    assert uses_simd == (flags == SIMD_FLAGS)


# -- (c) hostile input ------------------------------------------------------------------------------------


def _mutants(seed_bytes: bytes, seed: int, count: int):
    rng = random.Random(seed)
    n = len(seed_bytes)
    for i in range(count):
        kind = i % 4
        data = bytearray(seed_bytes)
        if kind == 0:  # truncation
            yield bytes(data[:rng.randrange(n)])
            continue
        if kind == 1:  # byte flips, most near the start where the headers and dylink.0 are
            for _ in range(rng.randrange(1, 4)):
                pos = rng.randrange(min(n, 64)) if rng.random() < 0.6 else rng.randrange(n)
                data[pos] = rng.randrange(256)
        elif kind == 2:  # a big LEB in the dylink.0 fields
            pos = rng.randrange(9, min(n, 40))
            data[pos:pos + 1] = bytes([0xFF, 0xFF, 0xFF, 0xFF, rng.randrange(16)])
        else:  # a bit flip anywhere
            pos = rng.randrange(n)
            data[pos] ^= 1 << rng.randrange(8)
        yield bytes(data)


@pytest.mark.parametrize("which", ["clang", "iree"])
def test_mutated_side_modules_end_in_clear_errors(which, built, add16_wasm, heap):
    """Hostile modules reach wasmtime and the fault signal handlers: in a forked child, so that a
    crash fails this test (naming the signal) instead of killing the pytest worker."""
    seed_bytes = built[0] if which == "clang" else add16_wasm[1]

    def mutate() -> dict[str, int]:
        outcomes = {"loaded": 0, "refused": 0}
        with W.WasmRuntime(heap, max_instructions=200_000) as rt:
            for data in _mutants(seed_bytes, 29, 200):
                try:
                    side = rt.load_side_module(data, "mutant")
                except ForeignKernelError as e:
                    assert str(e) and e.code
                    outcomes["refused"] += 1
                    continue
                outcomes["loaded"] += 1
                if X.IREE_HAL_EXECUTABLE_LIBRARY_EXPORT_NAME in side.exports:
                    env = heap.malloc(256)
                    try:
                        side.call(side.lookup(X.IREE_HAL_EXECUTABLE_LIBRARY_EXPORT_NAME), [6, env])
                    except ForeignKernelError:
                        pass
        return outcomes

    outcomes = run_forked(mutate)
    assert outcomes["refused"] > 50 and sum(outcomes.values()) == 200


# -- the wasm32 heap's address space (base.address_space) ------------------------------------------------


@pytest.mark.parametrize("limit", [1 << 20, 100_000_001, None])
def test_a_wasm32_window_is_whole_wasm_pages_from_address_zero(limit):
    h = Heap(target="wasm32", limit=limit)
    try:
        space = h.space
        assert space.end % W.WASM_PAGE == 0 and space.base == W.WASM_PAGE
        assert space.zero_host + space.base == space.host_base == h.host_address(space.base)
        # The prefix's pages are PROT_NONE: an access from wasm traps (see the out-of-bounds tests);
        # the host side reads them only through ctypes at its own risk, so nothing here touches them.
    finally:
        h.close()


def test_large_free_returns_its_own_pages_not_its_neighbours():
    """Pages given back to the OS are the freed block's: the mapping's 64 KiB prefix shifts every
    arena offset, and a neighbour just below the block keeps its bytes."""
    h = Heap(target="wasm32")
    try:
        low = h.malloc(60000)
        h.write(low, b"\x5a" * 60000)
        big = h.malloc(32 << 20)
        assert 0 < big - (low + 60000) < W.WASM_PAGE  # within one prefix of each other
        h.write(big + 3 * 4096, b"\x77" * 4096)
        arena, offset = h.space.bytes, big - h.space.base
        h.free(big)
        assert h.read(low, 60000) == b"\x5a" * 60000
        assert bytes(arena[offset + 3 * 4096:offset + 4 * 4096]) == bytes(4096)  # returned: zero again
    finally:
        h.close()


def test_a_module_defining_its_own_memory_is_refused(runtime, heap):
    body = wasmtime.wat2wasm('(module (memory 1) (data (i32.const 0) "x"))')
    with pytest.raises(D.WasmModuleError, match="may not define a memory of its own"):
        runtime.load_side_module(body[:8] + _dylink() + body[8:], "own memory")
    assert not [a for a in heap.live() if "own memory" in a.tag]


def test_a_module_whose_relocations_trap_leaves_nothing_callable(runtime, heap):
    body = wasmtime.wat2wasm("""(module
      (import "env" "memory" (memory 0))
      (import "env" "__indirect_function_table" (table 1 funcref))
      (import "env" "__table_base" (global $tb i32))
      (func $f (result i32) i32.const 7)
      (elem (global.get $tb) $f)
      (func (export "__wasm_apply_data_relocs") unreachable))""")
    before = runtime.table.size(runtime.store)
    with pytest.raises(W.WasmTrap) as e:
        runtime.load_side_module(body[:8] + _dylink(mem=16, table=1) + body[8:], "bad relocs")
    assert e.value.trap == "UNREACHABLE" and "__wasm_apply_data_relocs" in str(e.value)
    # Its function was in the table (the element segment ran); its slot is empty now.
    assert runtime.table.size(runtime.store) == before + 1
    with pytest.raises(W.WasmCallError, match=f"table index {before} holds no function"):
        runtime.call(before, [])
    assert not [a for a in heap.live() if "bad relocs" in a.tag]


def test_wasm_traps_and_native_kernel_faults_share_the_fault_signals(session, side):
    """wasmtime's fault handlers and the native helper's (hal/local/native.py) chain to each other:
    a host kernel's fault stays an IreeFaultError and a wasm access to the NULL range stays a trap,
    whichever ran first."""
    def native_fault() -> None:
        prog = program("add1m")
        (d,) = prog.dispatches("add", [None, None])
        exe = session.load(prog)
        fid = session.function(exe, d.export_name)
        bindings = []
        for _, off, length in d.bindings:
            _, storage = session.allocate(length)
            bindings.append((storage, off, length))
        x, y, z = d.workgroups
        with pytest.raises(IreeFaultError) as e:
            session.call("hal_loader.executable.dispatch", exe, fid, x + 5, y, z, d.constants, bindings)
        assert f"signal {signal.SIGSEGV}" in str(e.value)

    def wasm_trap() -> None:
        with pytest.raises(W.WasmTrap, match="MEMORY_OUT_OF_BOUNDS"):
            side.call(side.lookup("store_at"), [0x200, 1])

    for step in (wasm_trap, native_fault, wasm_trap, native_fault):
        step()


def test_a_process_forked_after_a_compile_compiles_too(side, built):
    """A compile in this process (the `side` fixture), then one in a forked child: a child must not
    wait for compile workers that only the parent has (ireeabi's mutation campaign forks per mutant).
    The child's exit status is the verdict; the bound only keeps a hang from hanging the suite."""
    pid = os.fork()
    if pid == 0:  # the child: its own heap and runtime, the same module compiled again
        code = 1
        try:
            h = Heap(target="wasm32", name="forked")
            rt = W.WasmRuntime(h)
            rt.load_side_module(built[0], "kernels")
            rt.close()
            h.close()
            code = 0
        finally:
            os._exit(code)
    for _ in range(12000):  # up to 120 s
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.01)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail("the forked child did not finish compiling the side module")
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


# -- runtime state per runtime ------------------------------------------------------------------------


def test_memory_creator_state_is_the_runtimes_and_lives_while_wasmtime_holds_it(heap, built):
    """Each runtime's window is its own object; wasmtime's creator (with the engine) and memory (with
    the store) each hold it, so it outlives a closed runtime exactly as long as its engine does, and
    a memory asked of a closed runtime's engine is refused, not handed the unmapped window."""
    other_heap = Heap(target="wasm32", name="other")
    try:
        rt, other = W.WasmRuntime(heap), W.WasmRuntime(other_heap)
        assert rt._window is not other._window
        assert (rt._window.base, other._window.base) == (heap.space.zero_host, other_heap.space.zero_host)
        assert rt._window.memories == other._window.memories == 1
        window = weakref.ref(rt._window)
        engine = rt.engine  # kept past close: the window must live as long as it
        rt.close()
        del rt
        gc.collect()
        assert window() is not None and window().base == 0
        assert window().memories == 0  # the store went, and its memory's reference with it
        with pytest.raises(wasmtime.WasmtimeError, match="this runtime's memory is closed"):
            wasmtime.Memory(wasmtime.Store(engine), wasmtime.MemoryType(wasmtime.Limits(1, 1)))
        del engine
        gc.collect()
        assert window() is None  # the creator's finalizer dropped the last reference
        # The other runtime is untouched by all of that.
        side = other.load_side_module(built[0], "kernels")
        assert side.call(side.lookup("pick"), [1]) == built[1].pick(1)
        other.close()
    finally:
        other_heap.close()


def test_no_runtime_state_at_module_level():
    """wasm_loader keeps no mutable registry of its own: its module-level values are constants,
    functions, classes and the ctypes callbacks (code)."""
    mutable = {name for name, value in vars(W).items()
               if isinstance(value, (dict, set, list)) and not name.startswith("__") and name != "_VALTYPES"}
    assert mutable == set()


# -- release per executable -------------------------------------------------------------------------------


def _heap_state(heap: Heap) -> tuple[int, int]:
    live = heap.live()
    return len(live), sum(a.size for a in live)


def test_released_modules_give_back_their_slots_blocks_and_store(runtime, heap, built, add16_wasm):
    wasm = add16_wasm[1]
    keep = runtime.load_side_module(built[0], "kept")
    keep.call(keep.lookup("local_array"), [1])  # the shadow stack block exists from here on
    stores, start = runtime.stores_made, _heap_state(heap)
    table = None
    for i in range(30):
        side = runtime.load_side_module(wasm, f"add16 #{i}")
        assert side.lookup(X.IREE_HAL_EXECUTABLE_LIBRARY_EXPORT_NAME) > 0
        side.release()
        side.release()  # a second release is a no-op
        size = runtime.table.size(runtime.store)
        table = size if table is None else table
        assert size == table  # the freed slots are reused
        assert _heap_state(heap) == start
    with pytest.raises(ExecutableError, match="was released"):
        side.lookup("__wasm_apply_data_relocs")
    # While a module is loaded, the store stays; the kept module still works.
    assert runtime.stores_made == stores and keep.call(keep.lookup("pick"), [2]) == built[1].pick(2)
    keep.release()
    assert runtime.stores_made == stores + 1 and runtime._window.memories == 1
    assert runtime.table.size(runtime.store) == 1  # only the NULL slot
    assert [a.tag for a in heap.live()] == ["wasm stack"]  # the runtime's own, freed at close
    runtime.close()
    assert heap.live() == []


def test_a_host_function_pins_the_store(runtime, built):
    side = runtime.load_side_module(built[0], "kernels")
    index = runtime.host_function(lambda a, b: a + b, ["i32", "i32"], ["i32"], "add")
    side.release()
    assert runtime.call(index, [2, 3]) == 5  # still the store it was made in
    assert runtime.stores_made == 1


def test_two_hundred_executable_cycles_stay_flat(wasm_out):
    """hal_loader.executable.load and the executable's release, 200 times on a wasm32 runtime: the
    heap's live blocks and bytes, the function table and the number of live wasmtime memories (one
    per store: a store that was not freed would keep its own) are back where they started each time."""
    fmt, wasm, ir, _ = _compile_wasm("add16", wasm_out, WASM_FLAGS)
    (d,) = vm_ir.dispatches(ir, "add", [None, None])
    n = d.bindings[0][2] // 4
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal(n, np.float32), rng.standard_normal(n, np.float32)
    with HalRuntime(target="wasm32") as rt:
        session = Session(rt)
        vmb = rt.vm_buffers
        storages = []
        for (_, off, length), x in zip(d.bindings, [a, b, None]):
            _, storage = session.allocate(length)
            if x is not None:
                vmb.as_numpy(storage.ptr, np.float32)[:] = x
            storages.append(storage)
        bindings = [(st, off, length) for st, (_, off, length) in zip(storages, d.bindings)]
        fmt_ref, data_ref = session.bytes_buffer(fmt.encode()), session.bytes_buffer(wasm)
        name = session.bytes_buffer(d.export_name.encode())

        def cycle(dispatch: bool) -> None:
            (exe,) = rt.call("hal_loader.executable.load", fmt_ref, data_ref, R.NULL_REF)
            try:
                if dispatch:
                    (fid,) = rt.call("hal_loader.executable.lookup.function", exe, name)
                    rt.call("hal_loader.executable.dispatch", exe, fid, *d.workgroups, d.constants, bindings)
            finally:
                R.release_value(rt.heap, exe)

        cycle(True)
        np.testing.assert_array_equal(vmb.as_numpy(storages[-1].ptr, np.float32), a + b)
        wasm_rt = rt.runners.wasm.runtime()
        start, stores, table = _heap_state(rt.heap), wasm_rt.stores_made, wasm_rt.table.size(wasm_rt.store)
        for i in range(200):
            vmb.as_numpy(storages[-1].ptr, np.float32)[:] = 0
            cycle(i % 50 == 49)
            assert _heap_state(rt.heap) == start, f"cycle {i}"
            assert wasm_rt.table.size(wasm_rt.store) == table and wasm_rt._window.memories == 1
        assert wasm_rt.stores_made == stores + 200
        np.testing.assert_array_equal(vmb.as_numpy(storages[-1].ptr, np.float32), a + b)
        session.release_all()


# -- kernel imports ---------------------------------------------------------------------------------------

# A dispatch calling an external function (the shape of IREE's custom-dispatch plugin samples):
# iree-compile makes `ext_twice` a library import called through the environment's thunk.
IMPORT_MLIR = """
module @imports {
  stream.executable private @exe {
    stream.executable.export public @twice workgroups(%n: index) -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func private @ext_twice(%src: memref<f32>, %src_offset: index, %dst: memref<f32>,
                                   %dst_offset: index, %n: index) attributes {llvm.bareptr = true}
      func.func @twice(%b0: !stream.binding, %b1: !stream.binding, %n: index) {
        %c0 = arith.constant 0 : index
        %m0 = stream.binding.subspan %b0[%c0] : !stream.binding -> memref<?xf32>{%n}
        %m1 = stream.binding.subspan %b1[%c0] : !stream.binding -> memref<?xf32>{%n}
        %p0, %o0, %s0, %t0 = memref.extract_strided_metadata %m0 : memref<?xf32> -> memref<f32>, index, index, index
        %p1, %o1, %s1, %t1 = memref.extract_strided_metadata %m1 : memref<?xf32> -> memref<f32>, index, index, index
        func.call @ext_twice(%p0, %o0, %p1, %o1, %n) : (memref<f32>, index, memref<f32>, index, index) -> ()
        return
      }
    }
  }
  func.func @run(%a: tensor<?xf32>) -> tensor<?xf32> {
    %c0 = arith.constant 0 : index
    %n = tensor.dim %a, %c0 : tensor<?xf32>
    %0 = flow.dispatch @exe::@twice[%n](%a, %n) : (tensor<?xf32>{%n}, index) -> tensor<?xf32>{%n}
    return %0 : tensor<?xf32>
  }
}
"""


@pytest.fixture(scope="module")
def import_program(tmp_path_factory):
    """(wasm32 vmfb, its side module, its VM IR, host vmfb) of IMPORT_MLIR."""
    d = tmp_path_factory.mktemp("wasm_imports")
    src = d / "imports.mlir"
    src.write_text(IMPORT_MLIR)
    fmt, wasm, ir, vmfb = _compile_wasm_source(src, d, WASM_FLAGS)
    host = iree_tools.compile_mlir(src, d / "host", "inline-dynamic")
    return vmfb, wasm, ir, host


def _compile_wasm_source(src: Path, out: Path, flags: tuple[str, ...]) -> tuple[str, bytes, str, Path]:
    vmfb = iree_tools.compile_mlir(src, out, "inline-dynamic", flags)
    segments = [mf.rodata_bytes(s) for s in mf.read_module(vmfb).rodata_segments]
    (wasm,) = [s for s in segments if s[:4] == b"\0asm"]
    proc = subprocess.run([iree_tools.find_tool("iree-compile"), str(src), *iree_tools.compile_flags("inline-dynamic"),
                           *flags, "--compile-to=vm"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return "system-wasm-wasm_32", wasm, proc.stdout, vmfb


def test_iree_wasm_import_goes_through_the_environments_thunk(import_program, runtime, heap):
    """The import is in library v0's table (not a wasm import of the module), and the kernel calls
    it as `import_thunk(import_funcs[0], params, import_contexts[0], NULL)`: with a host function in
    import_funcs, the runtime's thunk forwards the call, the parameter struct (IREE's
    packIntoParameterStruct: the call's operands in order, pointers and indices i32 on wasm32) holds
    the bindings and the count, and the kernel returns the import's status."""
    _, wasm, ir, _ = import_program
    module = wasmtime.Module(wasmtime.Engine(), wasm)
    assert {f"{i.module}.{i.name}" for i in module.imports} <= {
        "env.memory", "env.__indirect_function_table", "env.__memory_base", "env.__table_base", "env.__stack_pointer"}
    side = runtime.load_side_module(wasm, "imports")
    m = heap.machine
    env_layout = m.layout(X.iree_hal_executable_environment_v0_t)
    env = heap.malloc(env_layout.size, align=env_layout.align)
    lib = side.call(side.lookup(X.IREE_HAL_EXECUTABLE_LIBRARY_EXPORT_NAME),
                    [X.IREE_HAL_EXECUTABLE_LIBRARY_VERSION_LATEST, env])
    v0 = heap.struct_at(X.iree_hal_executable_library_v0_t, lib)
    symbols = [_cstring(heap, heap.read_word(v0.imports.symbols + 4 * i)).decode() for i in range(v0.imports.count)]
    assert symbols == ["ext_twice"]  # the callee of IMPORT_MLIR, required (no '?')

    calls = []
    status = [0]

    def ext_twice(params: int, context: int, reserved: int) -> int:
        src, src_off, dst, dst_off, count = struct.unpack("<5I", heap.read(params, 20))
        calls.append((context, reserved, count))
        x = np.frombuffer(heap.read(src + 4 * src_off, 4 * count), np.float32)
        heap.write(dst + 4 * dst_off, (x * np.float32(2)).tobytes())
        return status[0]

    fn = runtime.host_function(ext_twice, ["i32"] * 3, ["i32"], "ext_twice")
    tables = heap.malloc(8)
    heap.write(tables, struct.pack("<II", fn, 0xC0FFEE))
    fields = m.ctype(X.iree_hal_executable_environment_v0_t).from_buffer_copy(heap.read(env, env_layout.size))
    fields.import_thunk = runtime.import_thunk()
    fields.import_funcs, fields.import_contexts = tables, tables + 4
    heap.write(env, bytes(fields))

    n = 37
    (d,) = vm_ir.dispatches(ir, "run", [None], {0: [n]})
    x = np.random.default_rng(11).standard_normal(n, np.float32)
    np.testing.assert_array_equal(_dispatch(side, heap, d, [x], env=env), x * np.float32(2))
    assert calls == [(0xC0FFEE, 0, n)]
    # A failing import's status is the kernel's.
    status[0] = 7
    _dispatch(side, heap, d, [x], env=env, status=7)
    # A NULL import reached anyway traps, as a native call through NULL faults.
    heap.write(tables, bytes(4))
    with pytest.raises(W.WasmTrap, match="INDIRECT_CALL_TO_NULL"):
        _dispatch(side, heap, d, [x], env=env)


def test_a_required_import_is_refused_as_on_elf(import_program, wasm_out):
    """Loaded through hal_loader, the wasm32 build is refused exactly as ireeabi refuses the host
    build's embedded ELF (a required import, no import provider), by name at the library level; and
    iree-run-module cannot run the host build either: it fails at the same call. Its status differs:
    iree-run-module always has an executable plugin manager as import provider, whose miss is
    NOT_FOUND and ends in "no executable loader registered for the given executable format", where
    ireeabi's hal_loader models a NULL provider (UNAVAILABLE): a difference of hal_loader's ELF and
    wasm paths alike (modules/hal/loader.py), pinned here so a change on either side shows."""
    vmfb, wasm, _, host = import_program
    heap = Heap(target="wasm32")
    kernels = WE.WasmKernels(heap)
    try:
        with pytest.raises(UnresolvedImportError, match="imports ext_twice"):
            WE.load(WE.FORMAT, wasm, kernels)
        kernels.close()
        assert heap.live() == []  # the refused library left nothing behind
    finally:
        kernels.close()
        heap.close()

    def load_status(target: str, path: Path) -> tuple[int, str]:
        segments = [mf.rodata_bytes(s) for s in mf.read_module(path).rodata_segments]
        (fmt,) = [s.decode() for s in segments if s.startswith((b"system-wasm-", b"embedded-elf-"))]
        (data,) = [s for s in segments if s[:4] in (b"\0asm", b"\x7fELF")]
        with HalRuntime(target=target) as rt:
            session = Session(rt)
            try:
                with pytest.raises(StatusError) as e:
                    session.call("hal_loader.executable.load", session.bytes_buffer(fmt.encode()),
                                 session.bytes_buffer(data), R.NULL_REF)
            finally:
                session.release_all()
        assert isinstance(e.value.__cause__, UnresolvedImportError) and "ext_twice" in str(e.value.__cause__)
        return e.value.code, e.value.message

    assert load_status("wasm32", vmfb) == load_status(None, host) == (
        StatusCode.UNAVAILABLE, "no import provider registered for resolving required executable imports")
    failure = iree_tools.run_module_failure([host], "run", ["4xf32=1 2 3 4"])
    (host_fmt,) = [s.decode() for s in map(mf.rodata_bytes, mf.read_module(host).rodata_segments)
                   if s.startswith(b"embedded-elf-")]
    assert f"NOT_FOUND; no executable loader registered for the given executable format '{host_fmt}'; " \
           "while invoking native function hal_loader.executable.load" in failure.stderr


def test_table_index_zero_is_null(runtime, built):
    """Index 0 is C's NULL function pointer: no module's function goes there."""
    side = runtime.load_side_module(built[0], "kernels")
    assert side.table_base >= 1 and runtime.import_thunk() >= 1
    with pytest.raises(W.WasmCallError, match="table index 0 holds no function"):
        runtime.call(0, [])


ELEMENTWISE = "func.func @f(%a: tensor<16x{src}>) -> tensor<16x{dst}> {{\n  %0 = {op} : {types}\n  return %0 : tensor<16x{dst}>\n}}\n"


@pytest.mark.parametrize("op, src, dst, outcome", [
    ("math.erf %a", "f32", "f32", "no imports"),
    ("arith.truncf %a", "f32", "bf16", "no imports"),
    ("arith.remf %a, %a", "f32", "f32", "undefined symbol: fmodf"),
    ("arith.truncf %a", "f32", "f16", "type mismatch: expected i32, found f32"),
])
def test_what_iree_compile_emits_for_wasm32(op, src, dst, outcome, tmp_path, heap):
    """wasm_loader's docstring findings: math needs no import (neither a wasm import nor a library
    import), fmodf is left to the linker (which fails), f16 conversions give a module wasmtime
    refuses, ending in WasmModuleError."""
    types = f"tensor<16x{src}>" + ("" if src == dst else f" to tensor<16x{dst}>")
    path = tmp_path / "op.mlir"
    path.write_text(ELEMENTWISE.format(op=op, src=src, dst=dst, types=types))
    if outcome.startswith("undefined"):
        with pytest.raises(iree_tools.IreeToolError, match=outcome):
            iree_tools.compile_mlir(path, tmp_path, "inline-dynamic", WASM_FLAGS)
        return
    _, wasm, _, _ = _compile_wasm_source(path, tmp_path, WASM_FLAGS)
    kernels = WE.WasmKernels(heap)
    try:
        if outcome == "no imports":
            module = wasmtime.Module(wasmtime.Engine(), wasm)
            assert {f"{i.module}.{i.name}" for i in module.imports} <= {
                "env.memory", "env.__indirect_function_table", "env.__memory_base", "env.__table_base",
                "env.__stack_pointer"}
            lib = WE.load(WE.FORMAT, wasm, kernels)
            assert lib.imports == () and len(lib.exports) == 1
            lib.close()
        else:
            with pytest.raises(D.WasmModuleError, match=outcome):
                WE.load(WE.FORMAT, wasm, kernels)
    finally:
        kernels.close()
    assert heap.live() == []


def test_store_is_rebuilt_around_a_kept_module(runtime, heap, add16_wasm, wasm_out):
    """Beside a loaded module, every REBUILD_AFTER releases move the loaded module, the host
    functions and the import thunk into a new store at the same table indices, the module's data
    bytes as they were; the old store (and its memory) goes. The kept library still answers its
    query with the same library and its kernel still adds."""
    fmt, wasm, ir, _ = add16_wasm
    kept = runtime.load_side_module(wasm, "kept")
    query = kept.lookup(X.IREE_HAL_EXECUTABLE_LIBRARY_EXPORT_NAME)
    env = heap.malloc(256)
    lib = kept.call(query, [X.IREE_HAL_EXECUTABLE_LIBRARY_VERSION_LATEST, env])
    data = heap.read(kept.data_base, kept.info.memory_size)
    host = runtime.host_function(lambda x: x * 3, ["i32"], ["i32"], "triple")
    thunk = runtime.import_thunk()
    stores, start = runtime.stores_made, _heap_state(heap)
    for i in range(3 * W.REBUILD_AFTER):
        runtime.release(runtime.load_side_module(wasm, f"churn {i}"))
        assert _heap_state(heap) == start and runtime._window.memories == 1
    assert runtime.stores_made == stores + 3
    assert heap.read(kept.data_base, kept.info.memory_size) == data
    assert kept.lookup(X.IREE_HAL_EXECUTABLE_LIBRARY_EXPORT_NAME) == query and runtime.import_thunk() == thunk
    assert kept.call(query, [X.IREE_HAL_EXECUTABLE_LIBRARY_VERSION_LATEST, env]) == lib
    assert runtime.call(host, [14]) == 42
    # The import thunk at its old index still forwards (to the host function, 3 arguments ignored
    # but the first).
    forward = runtime.host_function(lambda p, c, r: p + c + r, ["i32"] * 3, ["i32"], "sum3")
    assert runtime.call(thunk, [forward, 1, 2, 3]) == 6
    (d,) = vm_ir.dispatches(ir, "add", [None, None])
    n = d.bindings[0][2] // 4
    a, b = np.arange(n, dtype=np.float32), np.full(n, 0.5, np.float32)
    np.testing.assert_array_equal(_dispatch(kept, heap, d, [a, b]), a + b)


def test_a_module_with_a_start_function_is_not_moved(runtime, heap, built, add16_wasm):
    """clang's side module has a start section: it would run again in a new store, so while it is
    loaded the store is not rebuilt (released modules' instances stay until it goes)."""
    kept = runtime.load_side_module(built[0], "kernels")
    stores = runtime.stores_made
    for i in range(W.REBUILD_AFTER + 1):
        runtime.release(runtime.load_side_module(add16_wasm[1], f"churn {i}"))
    assert runtime.stores_made == stores
    assert kept.call(kept.lookup("pick"), [0]) == built[1].pick(0)
    kept.release()
    assert runtime.stores_made == stores + 1
