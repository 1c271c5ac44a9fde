"""The emulated CPU runs foreign machine code on the heap's own memory.

Small freestanding C functions (KERNELS) are compiled by each target's cross compiler, their .text
placed in a heap of that target and called through `EmulatedCpu`; the same source compiled by the
host's gcc and called natively (ctypes) on the same inputs gives every expected value. Float
inputs are small integers and powers of two, so every result is exact in float and the x87
(i386) and SSE (host) results must agree bit for bit.
"""
from __future__ import annotations

import ctypes
import os
import signal
import struct
import subprocess
import sys
import threading
from dataclasses import dataclass

import pytest
from elftools.elf.elffile import ELFFile
from unicorn import arm64_const as A64
from unicorn import arm_const as ARM
from unicorn import riscv_const as RV

from support.debian_tools import debian_tool

from ireeabi.hal.local.emulated_cpu import (EmulatedCpu, EmulatedCpuError, EmulatedFault,
                                            InstructionBudgetExceeded)
from ireeabi.hal.local.executable_library import ForeignKernelError
from ireeabi.base import callbacks
from ireeabi.base.address_space import PAGE
from ireeabi.base.heap import Heap

KERNELS = r"""
int mix3(int a, int b, int c) { return a * 7 + b - c; }

unsigned bits(unsigned a, unsigned b) { return ((a << 3) ^ (b >> 2)) + (a & b) * 5u; }

int weighted_sum(const int *p, int n) {
  int s = 0;
  for (int i = 0; i < n; i++) s += p[i] * (i + 1);
  return s;
}

int many(int a0, int a1, int a2, int a3, int a4, int a5, int a6, int a7, int a8, int a9) {
  return a0 + 2 * a1 + 3 * a2 + 4 * a3 + 5 * a4 + 6 * a5 + 7 * a6 + 8 * a7 + 9 * a8 + 10 * a9;
}

void vadd(const float *a, const float *b, float *c, int n) {
  for (int i = 0; i < n; i++) c[i] = a[i] + b[i];
}

void fmath(const float *x, const float *y, int n, float *out) {
  float dot = 0, quot = 0, prod = y[0];
  for (int i = 0; i < n; i++) {
    dot += x[i] * y[i];
    quot += x[i] / y[i];
    if (i) prod *= y[i];
  }
  out[0] = dot;
  out[1] = quot;
  out[2] = prod;
  out[3] = (float)n / y[0];
}

int call_host(int (*f)(int, int), int a, int b) { return f(a, b) * 3 + f(b, a); }

int call_host9(int (*f)(int, int, int, int, int, int, int, int, int), int x) {
  return f(x, x + 1, x + 2, x + 3, x + 4, x + 5, x + 6, x + 7, x + 8) - x;
}

int call_host_loop(int (*f)(int, int), int n) {
  int s = 0;
  for (int i = 0; i < n; i++) s += f(i, s);
  return s;
}

void call_destroy(void (*destroy)(void *), void *p) { destroy(p); }

void fill(int *p, int n) {
  for (int i = 0; i < n; i++) p[i] = i;
}

int spin(volatile int *flag) {
  int n = 0;
  while (*flag == 0) n++;
  return n;
}

int spin_after(void (*notify)(void), volatile int *flag) {
  int n = 0;
  notify();
  while (*flag == 0) n++;
  return n;
}

typedef int (*deep_fn)(void *, int);

int deep(void *self, int n) { /* recursion through a pointer to itself: no relocation */
  volatile int frame[64];
  frame[n & 63] = n;
  return n ? ((deep_fn)self)(self, n - 1) + frame[n & 63] : 0;
}

void trap(void) { __builtin_trap(); }
"""

# -fno-reorder-functions keeps `trap` (noreturn) in .text rather than .text.unlikely
FLAGS = ["-O2", "-fno-reorder-functions", "-ffreestanding", "-nostdlib", "-fPIC", "-c"]
# target -> (heap target, compiler and its options, Thumb code)
TOOLCHAINS = {
    "riscv32": ("riscv32", ["riscv64-linux-gnu-gcc", "-march=rv32imf", "-mabi=ilp32f", "-mno-relax"], False),
    "riscv64": ("riscv64", ["riscv64-linux-gnu-gcc", "-mno-relax"], False),
    "armv7": ("armv7", ["arm-linux-gnueabihf-gcc", "-marm", "-mfpu=vfpv3-d16", "-mfloat-abi=hard"], False),
    "armv7-thumb": ("armv7", ["arm-linux-gnueabihf-gcc", "-mthumb", "-mfpu=vfpv3-d16", "-mfloat-abi=hard"], True),
    "aarch64": ("aarch64", ["aarch64-linux-gnu-gcc"], False),
    "i386": ("i386", ["gcc", "-m32"], False),
    "x86_64": ("x86_64", ["gcc"], False),
}
# Relocations the assembler has already resolved: RISC-V branches and jumps to labels of .text
# (R_RISCV_BRANCH, _JAL, _RVC_BRANCH, _RVC_JUMP by their psABI numbers; pyelftools has no names for
# them). The assembler keeps them for the linker even with -mno-relax. (Calls are not resolved:
# the functions here call only through pointers.)
_RISCV_LOCAL_BRANCHES = {16, 17, 44, 45}


def _s32(x: int) -> int:
    return ((x & 0xFFFFFFFF) ^ 0x80000000) - 0x80000000


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("emulated_cpu")
    (d / "kernels.c").write_text(KERNELS)
    return d


@pytest.fixture(scope="module")
def native(build_dir):
    """The same source, built for the host and loaded: the oracle."""
    so = build_dir / "kernels_host.so"
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", str(so), str(build_dir / "kernels.c")], check=True)
    lib = ctypes.CDLL(str(so))
    i, u, p = ctypes.c_int, ctypes.c_uint, ctypes.c_void_p
    for name, res, args in [("mix3", i, [i, i, i]), ("bits", u, [u, u]), ("weighted_sum", i, [p, i]),
                            ("many", i, [i] * 10), ("vadd", None, [p, p, p, i]), ("fmath", None, [p, p, i, p]),
                            ("call_host", i, [p, i, i]), ("call_host9", i, [p, i]),
                            ("call_host_loop", i, [p, i]), ("deep", i, [p, i]),
                            ("call_destroy", None, [p, p]), ("fill", None, [p, i])]:
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    return lib


@dataclass
class Rig:
    name: str
    heap: Heap
    cpu: EmulatedCpu
    functions: dict[str, tuple[int, int]]  # name -> (address, size)
    code: tuple[int, int]  # the executable pages holding them: (address, size)

    def new_cpu(self, **kwargs) -> EmulatedCpu:
        """Another CPU on the rig's heap, the code's pages executable in it too."""
        cpu = EmulatedCpu(self.heap, **kwargs)
        cpu.protect(*self.code, "r-x")
        return cpu

    def fn(self, name: str) -> int:
        return self.functions[name][0]

    def call(self, function: int, args: list, **kwargs) -> int:
        """cpu.call, bounded: a CPU that went astray ends the test instead of hanging it."""
        kwargs.setdefault("max_instructions", 10**8)
        return self.cpu.call(function, args, **kwargs)

    def array(self, fmt: str, values: list) -> int:
        data = struct.pack(f"<{len(values)}{fmt}", *values)
        address = self.heap.malloc(len(data))
        self.heap.write(address, data)
        return address


def _text_and_symbols(obj: str) -> tuple[bytes, dict[str, tuple[int, int]]]:
    """.text and its functions (offset, size); refuses any relocation the assembler left open."""
    with open(obj, "rb") as f:
        elf = ELFFile(f)
        text_index = next(i for i, s in enumerate(elf.iter_sections()) if s.name == ".text")
        text = elf.get_section(text_index).data()
        symtab = elf.get_section_by_name(".symtab")
        functions = {s.name: (s["st_value"], s["st_size"]) for s in symtab.iter_symbols()
                     if s["st_info"]["type"] == "STT_FUNC" and s["st_shndx"] == text_index}
        for section in elf.iter_sections():
            if section.header["sh_type"] not in ("SHT_REL", "SHT_RELA") or section["sh_info"] != text_index:
                continue
            for r in section.iter_relocations():
                kind = r.entry.r_info_type
                sym = symtab.get_symbol(r["r_info_sym"])
                assert elf["e_machine"] == "EM_RISCV" and kind in _RISCV_LOCAL_BRANCHES \
                    and sym["st_shndx"] == text_index, \
                    f"{obj}: relocation type {kind} against {sym.name} at 0x{r['r_offset']:x}"
    return text, functions


@pytest.fixture(scope="module", params=list(TOOLCHAINS))
def rig(request, build_dir):
    heap_target, compiler, thumb = TOOLCHAINS[request.param]
    compiler = [debian_tool(compiler[0]), *compiler[1:]]
    obj = build_dir / f"kernels_{request.param}.o"
    subprocess.run(compiler + FLAGS + ["-o", str(obj), str(build_dir / "kernels.c")], check=True)
    text, symbols = _text_and_symbols(str(obj))
    heap = Heap(target=heap_target, name=f"heap-{request.param}")
    cpu = EmulatedCpu(heap)
    # Whole pages made executable, as a loader protects a code segment: the heap's own memory is not.
    size = (len(text) + PAGE - 1) & -PAGE
    image = heap.malloc(size, align=PAGE, tag="kernels")
    heap.write(image, text)
    cpu.invalidate(image, len(text))
    cpu.protect(image, size, "r-x")
    # A Thumb function's symbol has bit 0 set already (the ELF says how to call it).
    if heap_target == "armv7":
        assert all(off & 1 == thumb for off, _ in symbols.values()), symbols
    functions = {name: (image + off, size) for name, (off, size) in symbols.items()}
    yield Rig(request.param, heap, cpu, functions, (image, size))
    cpu.close()
    heap.close()


# -- integers, loops, arguments ----------------------------------------------------------------------

def test_integer_arithmetic_matches_the_host(rig, native):
    for a, b, c in [(3, 4, 5), (-100, 7, 1 << 20), (0x7FFFFFF, -1, -0x1234567)]:
        assert _s32(rig.call(rig.fn("mix3"), [a, b, c])) == native.mix3(a, b, c)
    for a, b in [(0xDEADBEEF, 0x12345678), (1, 0xFFFFFFFF)]:
        assert rig.call(rig.fn("bits"), [a, b]) & 0xFFFFFFFF == native.bits(a, b)


def test_ten_arguments_reach_registers_and_stack(rig, native):
    args = [3, -5, 7, 11, -13, 17, 19, -23, 29, 31]
    assert _s32(rig.call(rig.fn("many"), args)) == native.many(*args)


def test_a_loop_over_an_array_python_wrote(rig, native):
    values = [(i * 37) % 101 - 50 for i in range(1000)]
    p = rig.array("i", values)
    arr = (ctypes.c_int * len(values))(*values)
    assert _s32(rig.call(rig.fn("weighted_sum"), [p, len(values)])) == native.weighted_sum(arr, len(values))
    rig.heap.free(p)


def test_a_call_longer_than_a_chunk_resumes_where_it_stopped(rig, native):
    """A CPU with chunks of 100 instructions stops and resumes hundreds of times in one call (in
    the middle of the loop, and in Thumb state on armv7-thumb)."""
    values = [(i * 13) % 29 for i in range(2000)]
    p = rig.array("i", values)
    arr = (ctypes.c_int * len(values))(*values)
    with rig.new_cpu(chunk=100) as cpu:
        result = cpu.call(rig.fn("weighted_sum"), [p, len(values)], max_instructions=10**7)
        assert cpu.instructions >= 2000
    assert _s32(result) == native.weighted_sum(arr, len(values))
    rig.heap.free(p)


# -- floats (the FPU is on) and the heap seeing what the code wrote ------------------------------------

def test_float_math_matches_the_host_bit_for_bit(rig, native):
    n = 24
    xs = [float((i * 5) % 11 - 5) for i in range(n)]
    ys = [(0.5, 1.0, 2.0, 0.25)[i % 4] for i in range(n)]
    x, y = rig.array("f", xs), rig.array("f", ys)
    out = rig.array("f", [0.0] * 4)
    rig.call(rig.fn("fmath"), [x, y, n, out])
    cx, cy = (ctypes.c_float * n)(*xs), (ctypes.c_float * n)(*ys)
    expected = (ctypes.c_float * 4)()
    native.fmath(cx, cy, n, expected)
    assert rig.heap.read(out, 16) == bytes(expected)
    for address in (x, y, out):
        rig.heap.free(address)


def test_vector_add_writes_heap_memory_the_heap_reads(rig, native):
    n = 1000
    a, b = [float(i % 97) for i in range(n)], [float(-(i % 31)) / 8 for i in range(n)]
    pa, pb, pc = rig.array("f", a), rig.array("f", b), rig.array("f", [7.0] * n)
    rig.call(rig.fn("vadd"), [pa, pb, pc, n])
    ca, cb, cc = (ctypes.c_float * n)(*a), (ctypes.c_float * n)(*b), (ctypes.c_float * n)()
    native.vadd(ca, cb, cc, n)
    assert bytes(rig.heap.view(pc, 4 * n)) == bytes(cc)
    for address in (pa, pb, pc):
        rig.heap.free(address)


def _outcome(cpu: EmulatedCpu, function: int, args: list) -> tuple:
    """What a call came to: its result, or its fault's kind, pc and address."""
    try:
        return ("result", cpu.call(function, args, max_instructions=10**8))
    except EmulatedFault as e:
        return ("fault", e.kind, e.pc, e.address)


def _overflow(cpu: EmulatedCpu, deep: int) -> tuple:
    """A stack overflow's fault, its address from the CPU's own stack (each CPU has its own)."""
    kind, *rest = _outcome(cpu, deep, [deep, 1 << 20])
    return (kind, rest[0], rest[1], rest[2] - cpu._stack) if kind == "fault" else (kind, *rest)


def test_the_mmus_tlb_and_the_fill_agree(rig, native):
    """The reference path (Unicorn's TLB filled by the CPU's MMU, `reference=True`, which a heap
    forced to the reference path picks) and the TLB the C helper fills run the same calls to the
    same results, memory and faults: stores, float math, a guarded block's end, the null page, the
    stack's guard page and heap memory never made executable."""
    assert not rig.cpu.reference and rig.cpu._code_pages is not None  # the fill is the default
    assert rig.cpu.uc.ctl_get_page_size() == PAGE  # a TLB entry per 4 KiB page (ARM's are 1 KiB unless set)
    reference = rig.new_cpu(reference=True)
    assert reference.reference and reference._code_pages is None
    n = 64
    xs, ys = [float(i % 13 - 6) for i in range(n)], [(0.5, 2.0, 0.25, 1.0)[i % 4] for i in range(n)]
    guarded = rig.heap.malloc(4 * n, guard=True)
    code = rig.heap.malloc(PAGE, align=PAGE)
    rig.heap.write(code, rig.heap.read(rig.fn("mix3") & ~1, rig.functions["mix3"][1]))
    deep = rig.fn("deep")
    x, y, out, c = rig.array("f", xs), rig.array("f", ys), rig.array("f", [0.0] * 4), rig.array("f", [7.0] * n)
    # Sums that round (the fast path computes floats on the host's FPU from the first operation).
    tenths, thirds = rig.array("f", [i / 10 for i in range(n)]), rig.array("f", [i / 3 for i in range(n)])
    outcomes = []
    for cpu in (rig.cpu, reference):
        for address in (out, c, guarded):  # the same memory for both, its outputs cleared
            rig.heap.write(address, bytes(16 if address == out else 4 * n))
        cpu.call(rig.fn("fmath"), [x, y, n, out])  # (void functions: their result register is not compared)
        cpu.call(rig.fn("vadd"), [x, y, c, n])
        rounded = rig.array("f", [0.0] * n)
        cpu.call(rig.fn("vadd"), [tenths, thirds, rounded, n])
        cpu.call(rig.fn("fmath"), [tenths, thirds, n, out])  # inexact quotients and products
        seen = [rig.heap.read(rounded, 4 * n), rig.heap.read(out, 16), rig.heap.read(c, 4 * n),
                _outcome(cpu, rig.fn("fill"), [guarded, n + 4]), rig.heap.read(guarded, 4 * n),
                _outcome(cpu, rig.fn("fill"), [0x100, 4]), _overflow(cpu, deep),
                _outcome(cpu, code | (rig.fn("mix3") & 1), [3, 4, 5]), _outcome(cpu, deep, [deep, 10])]
        outcomes.append(seen)
        rig.heap.free(rounded)
    for address in (x, y, out, c, tenths, thirds):
        rig.heap.free(address)
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][3][:2] == ("fault", "write to protected memory") and outcomes[0][3][3] == guarded + 4 * n
    assert outcomes[0][7][1] == "fetch from protected memory" and outcomes[0][-1][0] == "result"
    reference.close()
    rig.heap.free(guarded)
    rig.heap.free(code)


def _inexact_flag(cpu: EmulatedCpu) -> int:
    """The guest's cumulative inexact flag (-1: a target where the CPU leaves it alone)."""
    reg, bit = {"riscv32": (RV.UC_RISCV_REG_FFLAGS, 0x1), "riscv64": (RV.UC_RISCV_REG_FFLAGS, 0x1),
                "aarch64": (A64.UC_ARM64_REG_FPSR, 0x10), "armv7": (ARM.UC_ARM_REG_FPSCR, 0x10)}.get(
                    cpu.target, (None, 0))
    return -1 if reg is None else int(bool(cpu.uc.reg_read(reg) & bit))


def test_the_fast_path_starts_with_the_inexact_flag_set(rig):
    """QEMU computes floats on the host's FPU only once the inexact flag is set: a fast-path CPU
    starts with it set, a reference one clear; on armv7 an uncounted call enters through the stub
    that rounds once on NEON (its own flags), leaving d16 = 0, a counted one does not."""
    reference, fast = rig.new_cpu(reference=True), rig.new_cpu()  # new: no float op has run on them
    assert _inexact_flag(reference) in (0, -1) and _inexact_flag(fast) in (1, -1)
    if fast.target == "armv7":
        for cpu, budget, entered in ((fast, None, True), (fast, 10**6, False), (reference, None, False)):
            cpu.uc.reg_write(ARM.UC_ARM_REG_D16, 0x4141414141414141)
            assert cpu.call(rig.fn("mix3"), [3, 4, 5], max_instructions=budget) == 7 * 3 + 4 - 5
            assert (cpu.uc.reg_read(ARM.UC_ARM_REG_D16) == 0) is entered
    reference.close()
    fast.close()


def test_a_heap_forced_to_the_reference_path_gets_the_mmus_tlb():
    heap = Heap(target="riscv64")
    heap.force_reference()
    with EmulatedCpu(heap) as cpu:
        assert cpu.reference and cpu._code_pages is None and _inexact_flag(cpu) == 0
    heap.close()


# -- host functions ----------------------------------------------------------------------------------------

def test_emulated_code_calls_a_host_function(rig, native):
    def f(a, b):
        return _s32(a) * 10 - _s32(b)
    emulated_calls, native_calls = [], []
    address = rig.cpu.host_function(lambda a, b: emulated_calls.append((_s32(a), _s32(b))) or f(a, b), 2, "f")
    cb = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_int)(
        lambda a, b: native_calls.append((a, b)) or f(a, b))
    for a, b in [(4, 9), (-3, 1000)]:
        assert _s32(rig.call(rig.fn("call_host"), [address, a, b])) == native.call_host(cb, a, b)
    assert emulated_calls == native_calls


@pytest.mark.parametrize("chunk", [1, 2, 3, 5])
def test_a_chunk_ending_at_a_host_call_calls_it_once(rig, native, chunk):
    """Chunks of a few instructions end at every instruction of the call in turn, the host
    function's handle included: it still runs once per call, as natively."""
    emulated_calls, native_calls = [], []
    cb = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_int)(lambda a, b: native_calls.append((a, b)) or a - b)
    with rig.new_cpu(chunk=chunk) as cpu:
        address = cpu.host_function(lambda a, b: emulated_calls.append((a, b)) or a - b, 2, "once")
        result = cpu.call(rig.fn("call_host"), [address, 9, 4], max_instructions=10_000)
    assert _s32(result) == native.call_host(cb, 9, 4)
    assert emulated_calls == native_calls


def test_preempted_calls_without_a_budget_resume_exactly(rig, native):
    """Without a budget the CPU's thread stops the emulation every `quantum` seconds (here 0.2 ms,
    so a call is stopped dozens of times at unforeseeable places, host calls included): results
    and the host function's calls are those of the native run."""
    values = [(i * 7) % 23 - 11 for i in range(200_000)]
    p = rig.array("i", values)
    arr = (ctypes.c_int * len(values))(*values)
    emulated_calls, native_calls = [], []
    with rig.new_cpu(quantum=0.0002) as cpu:
        assert _s32(cpu.call(rig.fn("weighted_sum"), [p, len(values)])) == native.weighted_sum(arr, len(values))
        address = cpu.host_function(lambda a, b: emulated_calls.append(_s32(a)) or (_s32(a) ^ _s32(b)) & 0xFF,
                                    2, "loop")
        result = cpu.call(rig.fn("call_host_loop"), [address, 3000])
    cb = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_int)(
        lambda a, b: native_calls.append(a) or (a ^ b) & 0xFF)
    assert _s32(result) == native.call_host_loop(cb, 3000)
    assert emulated_calls == native_calls
    rig.heap.free(p)


def test_a_host_function_of_nine_arguments_reads_the_stack(rig, native):
    def f(*args):
        return sum((i + 1) * _s32(a) for i, a in enumerate(args))
    address = rig.cpu.host_function(f, 9, "f9")
    cb = ctypes.CFUNCTYPE(ctypes.c_int, *[ctypes.c_int] * 9)(f)
    for x in (5, -40):
        assert _s32(rig.call(rig.fn("call_host9"), [address, x])) == native.call_host9(cb, x)


@pytest.mark.parametrize("rig", [n for n, t in TOOLCHAINS.items() if t[0] != "x86_64"], indirect=True)
def test_a_pointer_of_the_heaps_function_table_is_callable(rig, native):
    """On a foreign heap, a function pointer the VM model stores (here a ref destroy) is a handle of
    the heap's function table, and emulated code calling it reaches the Python function (the host
    heap's pointers are real C pointers, not handles)."""
    seen, native_seen = [], []
    handle = rig.heap.functions.make(callbacks.DESTROY_FN, lambda p: seen.append(p), name="destroy")
    block = rig.heap.malloc(8)
    rig.call(rig.fn("call_destroy"), [handle, block])
    native.call_destroy(callbacks.DESTROY_FN(lambda p: native_seen.append(p)), block)
    assert seen == native_seen == [block]
    rig.heap.functions.forget(handle)
    rig.heap.free(block)


def test_an_exception_in_a_host_function_comes_out_of_call(rig):
    def bad(a, b):
        raise ValueError(f"bad {a}")
    address = rig.cpu.host_function(bad, 2, "bad")
    with pytest.raises(ValueError, match="bad 6"):
        rig.call(rig.fn("call_host"), [address, 6, 7])
    assert _s32(rig.call(rig.fn("mix3"), [1, 2, 3])) == 6  # the CPU still works


def test_a_host_function_cannot_call_back_into_the_cpu(rig):
    address = rig.cpu.host_function(lambda a, b: rig.call(rig.fn("mix3"), [a, b, 0]), 2, "reenter")
    with pytest.raises(EmulatedCpuError, match="already running"):
        rig.call(rig.fn("call_host"), [address, 1, 2])


# -- faults and runaways -------------------------------------------------------------------------------

def test_writing_past_a_guarded_block_is_a_clean_fault(rig, native):
    n = 16
    block = rig.heap.malloc(4 * n, guard=True)  # made after the CPU: its guard pages are mirrored
    with pytest.raises(EmulatedFault) as e:
        rig.call(rig.fn("fill"), [block, n + 8], what="fill")
    f = e.value
    assert isinstance(f, ForeignKernelError)
    assert f.kind == "write to protected memory" and f.address == block + 4 * n, f
    start, size = rig.functions["fill"]
    assert start & ~1 <= f.pc < start + size
    assert f"0x{block + 4 * n:x}" in str(f) and "fill" in str(f)
    expected = (ctypes.c_int * n)()
    native.fill(expected, n)
    assert rig.heap.read(block, 4 * n) == bytes(expected)  # what it wrote before the fault
    rig.heap.free(block)  # unguarded again: the pages are accessible to the CPU as well
    reused = rig.heap.malloc(4 * n)
    rig.call(rig.fn("fill"), [reused, n])
    rig.heap.free(reused)


def test_a_read_past_a_guarded_block_faults_every_time():
    """A faulting access leaves no TLB entry of the guard page behind: the same read faults again,
    on both paths, with host guard pages and emulator-only ones. Before, the second read hit the
    entry the first one's fault had filled: it read on (0) past an emulator-only guard, and killed
    the process by SIGSEGV past a host-protected one. Run in a child for that reason."""
    code = (
        "import struct\n"
        "from ireeabi.base.heap import Heap\n"
        "from ireeabi.hal.local.emulated_cpu import EmulatedCpu, EmulatedFault\n"
        "from ireeabi.hal.local.emulated_executable import KernelEmulator\n"
        "seen = []\n"
        "for emulator_only in (False, True):\n"
        "    for reference in (False, True):\n"
        "        heap = Heap(target='riscv32')\n"
        "        if emulator_only:\n"
        "            KernelEmulator(heap)  # marks the heap: its guard pages are the emulator's only\n"
        "        cpu = EmulatedCpu(heap, reference=reference)\n"
        "        block = heap.malloc(64, guard=True)\n"
        "        read = heap.malloc(4096, align=4096)\n"
        "        heap.write(read, struct.pack('<II', 0x00052503, 0x00008067))  # lw a0, 0(a0); ret\n"
        "        cpu.protect(read, 4096, 'r-x')\n"
        "        for _ in range(3):\n"
        "            try:\n"
        "                seen.append(('read', cpu.call(read, [block + 64])))\n"
        "            except EmulatedFault as e:\n"
        "                seen.append((e.kind, e.address - block))\n"
        "        cpu.close()\n"
        "print(sorted(set(seen)))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert proc.stdout.strip() == "[('read of protected memory', 64)]"


def test_recursion_runs_on_the_cpus_stack_and_overflowing_it_faults(rig, native):
    deep, native_deep = rig.fn("deep"), ctypes.cast(native.deep, ctypes.c_void_p).value
    assert _s32(rig.call(deep, [deep, 100])) == native.deep(native_deep, 100)
    with pytest.raises(EmulatedFault) as e:
        rig.call(deep, [deep, 1 << 20])  # some 256 MiB of frames: past the stack's guard page
    assert e.value.kind == "write to protected memory", e.value
    assert _s32(rig.call(deep, [deep, 10])) == native.deep(native_deep, 10)  # the CPU still works


def test_a_host_function_returning_no_int_is_an_error(rig):
    address = rig.cpu.host_function(lambda a, b: "seven", 2, "stringy")
    with pytest.raises(EmulatedCpuError, match="stringy.*'seven'"):
        rig.call(rig.fn("call_host"), [address, 1, 2])


def test_writing_to_the_null_page_is_a_clean_fault(rig):
    with pytest.raises(EmulatedFault) as e:
        rig.call(rig.fn("fill"), [0x100, 4])
    assert e.value.kind == "write to unmapped memory" and e.value.address == 0x100


def test_calling_an_unmapped_address_is_a_fetch_fault(rig):
    with pytest.raises(EmulatedFault) as e:
        rig.call(0x40, [])
    assert e.value.kind == "fetch from unmapped memory" and e.value.address == 0x40


def test_calling_an_unregistered_handle_is_a_fault(rig):
    address = rig.cpu.host_function(lambda a, b: 0, 2, "h") + 4  # inside the handle's slot
    with pytest.raises(EmulatedFault) as e:
        rig.call(rig.fn("call_host"), [address, 1, 2])
    assert e.value.kind == "call of an unregistered function handle" and e.value.address == address


def test_a_trap_instruction_is_a_fault(rig):
    start, size = rig.functions["trap"]
    with pytest.raises(EmulatedFault) as e:
        rig.call(start, [])
    assert start & ~1 <= e.value.pc < start + size
    assert e.value.kind in ("invalid instruction", "breakpoint instruction")


@pytest.mark.parametrize("rig", ["riscv32", "riscv64", "aarch64"], indirect=True)
def test_an_invalid_instruction_is_a_fault(rig):
    """An all-zero word is defined illegal on RISC-V and is UDF on AArch64 (elsewhere it is a
    valid instruction; there __builtin_trap's ud2 / udf is the invalid one, tested above)."""
    block = rig.heap.malloc(PAGE, align=PAGE, zero=True)
    rig.cpu.invalidate(block, PAGE)
    rig.cpu.protect(block, PAGE, "r-x")
    with pytest.raises(EmulatedFault) as e:
        rig.call(block, [])
    assert e.value.kind == "invalid instruction" and e.value.pc == block
    rig.cpu.protect(block, PAGE, "rw-")
    rig.heap.free(block)


def test_running_heap_memory_never_made_executable_is_a_fetch_fault(rig, native):
    """The heap's memory is data, as on a device (IREE's loader makes only an image's code
    segments executable): a call into a copy of a working function outside them faults at its
    first instruction."""
    address, size = rig.functions["mix3"]
    code = rig.heap.malloc(PAGE, align=PAGE)
    rig.heap.write(code, rig.heap.read(address & ~1, size))
    rig.cpu.invalidate(code, PAGE)
    with pytest.raises(EmulatedFault) as e:
        rig.call(code | (address & 1), [3, 4, 5])
    assert e.value.kind == "fetch from protected memory" and e.value.pc == e.value.address == code
    rig.cpu.protect(code, PAGE, "r-x")  # the same bytes made executable run
    assert _s32(rig.call(code | (address & 1), [3, 4, 5])) == native.mix3(3, 4, 5)
    rig.cpu.protect(code, PAGE, "rw-")
    rig.heap.free(code)


def test_an_endless_loop_exceeds_its_budget(rig):
    flag = rig.array("i", [0])
    with pytest.raises(InstructionBudgetExceeded) as e:
        rig.call(rig.fn("spin"), [flag], max_instructions=100_000, what="spin")
    assert e.value.limit == 100_000 and "spin" in str(e.value)
    start, size = rig.functions["spin"]
    assert start & ~1 <= e.value.pc < start + size
    rig.heap.write(flag, struct.pack("<i", 1))
    assert rig.call(rig.fn("spin"), [flag], max_instructions=100) == 0  # a short call fits
    rig.heap.free(flag)


def test_the_budget_counts_instructions(rig, native):
    """A loop of 1000 iterations runs more than 1000 instructions and fewer than 100 per iteration."""
    p = rig.array("i", list(range(1000)))
    with pytest.raises(InstructionBudgetExceeded):
        rig.call(rig.fn("weighted_sum"), [p, 1000], max_instructions=1000)
    rig.call(rig.fn("weighted_sum"), [p, 1000], max_instructions=100_000)
    rig.heap.free(p)


# -- Ctrl-C ----------------------------------------------------------------------------------------------

def test_ctrl_c_in_a_host_function_raises_keyboard_interrupt(rig):
    address = rig.cpu.host_function(lambda a, b: signal.raise_signal(signal.SIGINT), 2, "interrupt")
    with pytest.raises(KeyboardInterrupt):
        rig.call(rig.fn("call_host"), [address, 1, 2])
    assert _s32(rig.call(rig.fn("mix3"), [1, 2, 3])) == 6


def test_ctrl_c_during_a_long_emulation_raises_keyboard_interrupt(rig):
    """The emulated code tells a thread to send SIGINT, then loops for ever: the interrupt comes out
    at the next chunk boundary. (Were it lost, the budget would end the call instead.)"""
    flag = rig.array("i", [0])
    threads = []

    def notify():
        t = threading.Thread(target=os.kill, args=(os.getpid(), signal.SIGINT))
        threads.append(t)
        t.start()

    address = rig.cpu.host_function(notify, 0, "notify")
    with pytest.raises(KeyboardInterrupt):
        rig.call(rig.fn("spin_after"), [address, flag], max_instructions=10**11)
    threads[0].join()
    rig.heap.free(flag)


def test_ctrl_c_during_a_long_emulation_without_a_budget(rig):
    """The same without a budget: the preemption thread lets the interrupt out. (Were it lost, the
    sending thread would end the loop after a minute by setting the flag, and the test would fail
    on a normal return.)"""
    flag = rig.array("i", [0])
    interrupted = threading.Event()

    def send():
        os.kill(os.getpid(), signal.SIGINT)
        if not interrupted.wait(60):
            rig.heap.write(flag, struct.pack("<i", 1))

    threads = []

    def notify():
        threads.append(threading.Thread(target=send))
        threads[0].start()

    address = rig.cpu.host_function(notify, 0, "notify")
    try:
        with pytest.raises(KeyboardInterrupt):
            rig.cpu.call(rig.fn("spin_after"), [address, flag])
    finally:
        interrupted.set()
        threads[0].join()
    rig.heap.free(flag)


# -- set-up and bad input ----------------------------------------------------------------------------

def test_a_guard_page_made_before_the_cpu_is_mirrored():
    """Guard pages the host protected before the CPU existed are learnt from the address space's
    record (the CPU subscribes to it) and kept inaccessible in the emulator. Run in a child: were
    they not, the child would die of SIGSEGV."""
    code = (
        "from ireeabi.base.heap import Heap\n"
        "from ireeabi.hal.local.emulated_cpu import EmulatedCpu, EmulatedFault\n"
        "import struct\n"
        "heap = Heap(target='riscv32')\n"
        "block = heap.malloc(64, guard=True)\n"
        "cpu = EmulatedCpu(heap)\n"
        "code = heap.malloc(4096, align=4096)\n"
        "heap.write(code, struct.pack('<II', 0x00052023, 0x00008067))  # sw zero, 0(a0); ret\n"
        "cpu.protect(code, 4096, 'r-x')\n"
        "cpu.call(code, [block + 60])\n"
        "try:\n"
        "    cpu.call(code, [block + 64])\n"
        "except EmulatedFault as e:\n"
        "    print(e.kind, e.address - block)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "write to protected memory 64"


def test_targets_without_a_cpu_and_bad_arguments_are_refused():
    with pytest.raises(EmulatedCpuError, match="wasm32"):
        EmulatedCpu(Heap(target="wasm32"))
    heap = Heap(target="riscv32")
    cpu = EmulatedCpu(heap)
    with pytest.raises(EmulatedCpuError, match="argument 1"):
        cpu.call(0x10000, [1, "two"])
    with pytest.raises(EmulatedCpuError, match="function address"):
        cpu.call(0, [])
    with pytest.raises(EmulatedCpuError, match="function address"):
        cpu.call(1 << 32, [])
    with pytest.raises(EmulatedCpuError, match="do not fit"):
        cpu.call(0x10000, list(range(1 << 20)))
    with pytest.raises(EmulatedCpuError, match="max_instructions"):
        cpu.call(0x10000, [], max_instructions=-1)
    with pytest.raises(EmulatedCpuError, match="arity"):
        cpu.host_function(lambda: 0, -1, "f")
    with pytest.raises(EmulatedCpuError, match="not callable"):
        cpu.host_function(3, 0, "f")  # type: ignore[arg-type]
    with pytest.raises(EmulatedCpuError, match="whole pages"):
        cpu.protect(heap.space.base + 1, PAGE, "r-x")
    with pytest.raises(EmulatedCpuError, match="permissions"):
        cpu.protect(heap.space.base, PAGE, "rwz")
    cpu.close()
    cpu.close()
    with pytest.raises(EmulatedCpuError, match="after close"):
        cpu.call(0x10000, [])
    assert not heap.leaks()  # the stack went back


def test_protect_makes_pages_read_only_to_the_cpu(rig, native):
    page = rig.heap.malloc(2 * PAGE)
    start = (page + PAGE - 1) & -PAGE
    rig.cpu.protect(start, PAGE, "r--")
    with pytest.raises(EmulatedFault) as e:
        rig.call(rig.fn("fill"), [start, 4])
    assert e.value.kind == "write to protected memory" and e.value.address == start
    rig.cpu.protect(start, PAGE, "rwx")
    rig.call(rig.fn("fill"), [start, 4])
    expected = (ctypes.c_int * 4)()
    native.fill(expected, 4)
    assert rig.heap.read(start, 16) == bytes(expected)
    rig.heap.free(page)
