"""Denormals flushed to zero around the inline command buffer's dispatches (base/internal/fpu_state.py).

Oracles: iree-run-module 3.13 on this x86_64 host for every execution model (the default model's
dispatches run flushed, hal_loader's and inline-static's do not), IREE's own aarch64 iree-run-module
under qemu-aarch64 for aarch64 kernels, and for the other emulated targets what IREE's
runtime/src/iree/base/internal/fpu_state.c sets on each architecture (MXCSR FTZ|DAZ, FPCR FZ|FZ16,
FPSCR FZ; nothing on riscv and wasm) together with what the architecture then does.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from support import e2e_corpus as corpus
from support import iree_tools as tools
from ireeabi.tooling.check_compile import KERNEL_TARGET_FLAGS
from support.debian_tools import debian_tool
from ireeabi.hal.local.emulated_cpu import EmulatedCpu
from ireeabi.tooling.function_io import parse_inputs
from ireeabi.tooling.program import Program, RunOptions
from ireeabi.base.heap import Heap
from ireeabi.base.status import IreeFaultError, StatusError
from ireeabi.base.internal.fpu_state import FLUSH_BITS, flushes, pushed
from ireeabi.hal.local.inline_command_buffer import dispatch_scope
from ireeabi.hal.local.native import host_fpu
from ireeabi.base.address_space import PAGE

from support.hal_programs import program as hal_program

PROGRAM = Path(tools.__file__).parents[1] / "programs" / "denormals" / "denormals.mlir"
F64 = ("--iree-input-demote-f64-to-f32=false",)
MICROKERNELS = ("--iree-vmvx-enable-microkernels",)

# (function, inputs): denormal inputs (1e-40, 1e-39; 1e-310 in f64) and products that underflow to a
# denormal (1e-20 * 1e-20), with a negative one: a flushed result keeps its sign (-0).
CASES = [
    ("add", ("4xf32=1e-40 1e-39 1 0", "4xf32=1e-39 0 1e-39 1e-40")),
    ("mul", ("4xf32=1e-20 -1e-40 1e-39 2", "4xf32=1e-20 1 1e10 1e-39")),
    ("mul", ("4xf32=-1e-20 3e-20 1e-19 1e-18", "4xf32=1e-20 1e-20 1e-20 2e-20")),
    ("add64", ("4xf64=1e-310 1e-300 1 0", "4xf64=1e-310 0 1e-310 1e-320")),
]
# What a flushing FPU prints for the cases, and what IEEE arithmetic prints (iree-run-module's text;
# the tests below check both against iree-run-module itself before using them).
FLUSHED = ["4xf32=0 0 1 0", "4xf32=0 -0 0 0", "4xf32=-0 0 0 2E-38", "4xf64=0 1E-300 1 0"]
KEPT = ["4xf32=1.1E-39 1E-39 1 9.99995E-41", "4xf32=9.99995E-41 -9.99995E-41 1E-29 2E-39",
        "4xf32=-9.99995E-41 3E-40 1E-39 2E-38", "4xf64=2E-310 1E-300 1 9.99989E-321"]

# Unicorn's x86 (QEMU 5.0's target/i386) applies MXCSR.FZ to its x87 status instead of the SSE one:
# under the pushed state an emulated x86 kernel reads denormal inputs as zero (DAZ) but keeps a
# denormal result. The cases with such results (index in CASES -> what DAZ alone prints): 1e-20 *
# 1e-20 stays 9.99995E-41 (-1e-40 * 1, 1e-39 * 1e10 and 2 * 1e-39 have a denormal input, zeroed);
# every product of the next case is normal inputs giving denormal results, all kept.
UNICORN_X86_FTZ = {1: "4xf32=9.99995E-41 -0 0 0", 2: KEPT[2]}

# Host execution models: (name, iree_tools model, extra flags, Program options).
HOST_MODELS = {
    "llvm-cpu": ("llvm-cpu", F64, {}),
    "vmvx": ("vmvx", F64, {}),
    "vmvx-reference": ("vmvx", F64, {"reference": True}),  # the interpreter's per-op handlers
    "vmvx-microkernels": ("vmvx", F64 + MICROKERNELS, {}),  # the `vmvx` module's ukernels
    "async-external-llvm-cpu": ("async-external-llvm-cpu", F64, {}),
    "llvm-cpu-emulated": ("llvm-cpu", F64, {"emulate_kernels": True}),  # x86_64 under Unicorn
    "inline-dynamic": ("inline-dynamic", F64, {}),
    "inline-dynamic-emulated": ("inline-dynamic", F64, {"emulate_kernels": True}),
    "inline-static": ("inline-static", F64, {}),
}
# The models whose dispatches IREE runs through the inline command buffer (or a task worker).
FLUSHING_MODELS = {"llvm-cpu", "vmvx", "vmvx-reference", "vmvx-microkernels", "async-external-llvm-cpu",
                   "llvm-cpu-emulated"}


def _lines(text: str) -> list[str]:
    """The value lines of a one-result output (past "EXEC @fn" and "result[0]: hal.buffer_view")."""
    return [line.strip() for line in text.strip().splitlines()[1:] if not line.startswith("result[")]


def _ours(path: Path, function: str, inputs: tuple[str, ...], **options) -> str:
    with Program(path, RunOptions(**options)) as p:
        return corpus.ours(p, function, list(inputs))


def _iree(path: Path, function: str, inputs: tuple[str, ...]) -> str:
    return corpus.iree_output(path, function, inputs)


def test_the_microkernel_build_calls_the_vmvx_module():
    """The vmvx-microkernels model really runs the `vmvx` module's add/mul ukernels."""
    path = tools.compile_mlir(PROGRAM, model="vmvx", extra_flags=F64 + MICROKERNELS)
    data = path.read_bytes()
    assert b"add.2d.f32" in data and b"mul.2d.f32" in data


@pytest.mark.parametrize("name", list(HOST_MODELS))
def test_prints_what_iree_run_module_prints(name):
    """Each execution model on the host, every case: exactly iree-run-module's output; the default
    model's dispatches flush (FLUSHED), hal_loader's and inline-static's keep denormals (KEPT)."""
    model, flags, options = HOST_MODELS[name]
    path = tools.compile_mlir(PROGRAM, model=model, extra_flags=flags)
    expected = FLUSHED if name in FLUSHING_MODELS else KEPT
    for k, ((function, inputs), want) in enumerate(zip(CASES, expected)):
        iree = _iree(path, function, inputs)
        got = _ours(path, function, inputs, **options)
        assert _lines(iree) == [want], (name, function, inputs, iree)  # the facts used here
        if name == "llvm-cpu-emulated" and k in UNICORN_X86_FTZ:
            assert _lines(got) == [UNICORN_X86_FTZ[k]], (name, function, inputs, got)
        else:
            assert got == iree, (name, function, inputs)


# MXCSR's low six bits are its sticky exception flags (IE DE ZE OE UE PE), raised by any SSE
# operation of the thread, not state a push sets: the run raises DE (denormal operand) outside any
# dispatch, when ctypes widens strtof's denormal result (1e-40) to a Python float while the inputs
# are parsed. The control bits (masks, rounding, DAZ, FTZ) are what a push changes and a pop restores.
MXCSR_FLAGS = 0x3F


def test_the_host_fpu_is_restored_after_a_run():
    """The thread's MXCSR control bits are what they were before a flushing run (read through the C
    helper), and it was flushing inside the dispatch (the result)."""
    fpu = host_fpu()
    assert fpu.flush_bits == FLUSH_BITS["x86_64"]
    path = tools.compile_mlir(PROGRAM, model="llvm-cpu", extra_flags=F64)
    before = fpu.fpu_control()
    assert before & fpu.flush_bits == 0  # Python's thread starts with IEEE denormals
    assert _lines(_ours(path, *CASES[0])) == [FLUSHED[0]]
    assert fpu.fpu_control() & ~MXCSR_FLAGS == before & ~MXCSR_FLAGS


def test_parsing_a_denormal_input_raises_only_a_sticky_flag():
    """The cause of the flag bit the test above masks: parsing the inputs alone (no dispatch) sets
    DE and leaves every control bit as it was."""
    fpu = host_fpu()
    fpu.set_fpu_control(fpu.fpu_control() & ~MXCSR_FLAGS)
    before = fpu.fpu_control()
    parse_inputs(list(CASES[0][1]), "rr")
    after = fpu.fpu_control()
    assert after & ~MXCSR_FLAGS == before & ~MXCSR_FLAGS
    assert after & MXCSR_FLAGS & 0x2  # DE


def test_the_host_fpu_is_restored_after_a_kernel_fault(session):
    """A kernel that faults inside the pushed state (its signal handler runs with the default FPU
    state, which the trap's jump keeps): the thread's register is back as it was, flush bits
    included when they were set before."""
    fpu = host_fpu()
    before = fpu.fpu_control()
    prog = hal_program("add1m")
    (d,) = prog.dispatches("add", [None, None])
    exe = session.load(prog)
    fid = session.function(exe, d.export_name)
    bindings = []
    for _, off, length in d.bindings:
        _, storage = session.allocate(length)
        bindings.append((storage, off, length))
    x, y, z = d.workgroups
    fpu.set_fpu_control(before | fpu.flush_bits)  # push then changes nothing: only the error path restores
    try:
        with pytest.raises(IreeFaultError, match="faulted"):
            with pushed(fpu):
                session.call("hal_loader.executable.dispatch", exe, fid, x + 5, y, z, d.constants, bindings)
        assert fpu.fpu_control() == before | fpu.flush_bits
    finally:
        fpu.set_fpu_control(before)


def test_the_host_fpu_is_restored_after_an_error_or_ctrl_c():
    fpu = host_fpu()
    before = fpu.fpu_control()
    for exc in (StatusError, KeyboardInterrupt):
        with pytest.raises(exc):
            with pushed(fpu):
                assert fpu.fpu_control() == before | fpu.flush_bits
                raise exc(13, "stop") if exc is StatusError else exc()
        assert fpu.fpu_control() == before


class _Fpu:
    """A control register that records its writes."""

    def __init__(self, value: int, bits: int) -> None:
        self.value, self.flush_bits, self.writes = value, bits, []

    def fpu_control(self) -> int:
        return self.value

    def set_fpu_control(self, value: int) -> None:
        self.writes.append(value)
        self.value = value


def test_push_and_pop_write_only_what_changes():
    """iree_fpu_state_push / pop: one write each way when the bits were clear, none when set."""
    f = _Fpu(0x1F80, 0x8040)
    with pushed(f):
        assert f.value == 0x9FC0
    assert f.writes == [0x9FC0, 0x1F80]
    f = _Fpu(0x9FC0, 0x8040)
    with pushed(f):
        pass
    assert f.writes == []
    f = _Fpu(0, 0)  # riscv: nothing to set
    with pushed(f):
        pass
    assert f.writes == []


def test_which_targets_flush():
    """fpu_state.c sets bits on x86 and ARM only."""
    assert {t for t in ("x86_64", "i386", "aarch64", "armv7", "riscv32", "riscv64", "wasm32") if flushes(t)} \
        == {"x86_64", "i386", "aarch64", "armv7"}
    assert FLUSH_BITS == {"x86_64": 0x8040, "i386": 0x8040, "aarch64": 0x1080000, "armv7": 0x1000000}


def test_a_wasm_library_pushes_nothing():
    """wasmtime's code runs on the host thread, but IREE's wasm build sets nothing: a library with no
    FPU (`fpu` None) leaves the host register alone, whatever the data model says."""
    class WasmLike:
        fpu = None
    before = host_fpu().fpu_control()
    with dispatch_scope(WasmLike(), "x86_64"):
        assert host_fpu().fpu_control() == before


# --------------------------------------------------------------------------------------------------
# Emulated CPUs: one f32 add of two denormal bit patterns per target, with and without the push.

# One f32 add of two bit patterns passed as integer arguments, result bits returned; per target:
# (compiler and options, assembly).
ADD_F32 = {
    "i386": (["gcc", "-m32"], "movss 4(%esp), %xmm0\naddss 8(%esp), %xmm0\nmovd %xmm0, %eax\nret\n"),
    "x86_64": (["gcc"], "movd %edi, %xmm0\nmovd %esi, %xmm1\naddss %xmm1, %xmm0\nmovd %xmm0, %eax\nret\n"),
    "aarch64": (["aarch64-linux-gnu-gcc"], "fmov s0, w0\nfmov s1, w1\nfadd s0, s0, s1\nfmov w0, s0\nret\n"),
    "armv7": (["arm-linux-gnueabihf-gcc", "-marm", "-mfpu=vfpv3-d16", "-mfloat-abi=hard"],
              "vmov s0, r0\nvmov s1, r1\nvadd.f32 s0, s0, s1\nvmov r0, s0\nbx lr\n"),
    "riscv32": (["riscv64-linux-gnu-gcc", "-march=rv32imf", "-mabi=ilp32f"],
                "fmv.w.x fa0, a0\nfmv.w.x fa1, a1\nfadd.s fa0, fa0, fa1\nfmv.x.w a0, fa0\nret\n"),
    "riscv64": (["riscv64-linux-gnu-gcc"],
                "fmv.w.x fa0, a0\nfmv.w.x fa1, a1\nfadd.s fa0, fa0, fa1\nfmv.x.w a0, fa0\nret\n"),
}
DENORMAL_1E40 = 0x000116C2  # 1e-40 as f32
DENORMAL_1E39 = 0x000AE398  # 1e-39 as f32


def _code(target: str, tmp: Path) -> bytes:
    """The assembled function: the object's .text (position-independent, no relocations)."""
    compiler, asm = ADD_F32[target]
    src, obj = tmp / f"{target}.s", tmp / f"{target}.o"
    src.write_text(".text\n.globl f\nf:\n" + asm)
    subprocess.run([debian_tool(compiler[0]), *compiler[1:], "-c", str(src), "-o", str(obj)], check=True)
    with open(obj, "rb") as f:
        return ELFFile(f).get_section_by_name(".text").data()


@pytest.mark.parametrize("target", list(ADD_F32))
def test_the_emulated_cpu_flushes_as_its_architecture(target, tmp_path):
    """With the pushed state the guest's SSE / VFP / AArch64 FP add flushes 1e-40 + 1e-39 to +0; riscv
    has nothing to set and keeps the denormal sum; the register is back after the scope."""
    code = _code(target, tmp_path)
    heap = Heap(target=target)
    try:
        _add_with_and_without_the_push(heap, target, code)
    finally:
        heap.close()


@pytest.mark.parametrize("target", ["i386", "x86_64"])
def test_unicorn_x86_keeps_denormal_results(target, tmp_path):
    """The emulator's known gap (UNICORN_X86_FTZ): with MXCSR FTZ|DAZ an emulated addss of two
    normal floats whose sum is denormal keeps it (real SSE gives +0). When this fails, Unicorn
    flushes SSE results: drop UNICORN_X86_FTZ and the note in fpu_state.py."""
    code = _code(target, tmp_path)
    heap = Heap(target=target)
    try:
        with EmulatedCpu(heap) as cpu:
            address = _place_code(heap, cpu, code)
            # 1.5 * 2^-126 + (-1 * 2^-126) = 2^-127, a denormal result of normal operands
            a, b = 0x00C00000, 0x80800000
            with dispatch_scope(_Emulated(cpu), target):
                assert cpu.fpu_control() & 0x8040 == 0x8040
                assert cpu.call(address, [a, b]) == 0x00400000
            heap.free(address)
    finally:
        heap.close()


def _place_code(heap: Heap, cpu: EmulatedCpu, code: bytes) -> int:
    """`code` on a page of the heap made executable in the CPU, as a loader's code segment is."""
    address = heap.malloc(PAGE, align=PAGE, tag="code")
    heap.write(address, code)
    cpu.protect(address, PAGE, "r-x")
    return address


def _add_with_and_without_the_push(heap: Heap, target: str, code: bytes) -> None:
    with EmulatedCpu(heap) as cpu:
        address = _place_code(heap, cpu, code)
        add = lambda: cpu.call(address, [DENORMAL_1E40, DENORMAL_1E39])  # noqa: E731
        exact = add()
        assert exact == DENORMAL_1E40 + DENORMAL_1E39  # IEEE: denormals add as integers
        before = cpu.fpu_control()
        with dispatch_scope(_Emulated(cpu), target):
            flushed = add()
            inside = cpu.fpu_control()
        assert cpu.fpu_control() == before
        if flushes(target):
            assert cpu.flush_bits == FLUSH_BITS[target]
            # FZ16 is RES0 on an AArch64 CPU without half-precision arithmetic (Unicorn's): it
            # reads back clear, as on such hardware; FZ, the bit that flushes f32/f64, is set.
            # (The add itself sets sticky exception flags, e.g. FPSCR.IDC: only the flush bits count.)
            assert inside & FLUSH_BITS[target] == FLUSH_BITS[target] & ~(0x80000 if target == "aarch64" else 0)
            assert flushed == 0
        else:
            assert cpu.flush_bits == 0 and flushed == exact
        assert add() == exact
        heap.free(address)


class _Emulated:
    """A library whose code runs on `cpu` (as the loader marks emulated libraries)."""

    def __init__(self, cpu: EmulatedCpu) -> None:
        self.fpu = cpu


# --------------------------------------------------------------------------------------------------
# Foreign kernels in whole programs.

FOREIGN_FLAGS = {t: KERNEL_TARGET_FLAGS[t] for t in ("riscv32", "riscv64", "armv7", "aarch64", "wasm32")}


def _foreign_expected(target: str, model: str) -> list[str]:
    """The default model's dispatches flush where fpu_state.c sets bits (aarch64, armv7); hal_loader
    pushes nothing. armv7's f32 kernels are NEON code, which flushes denormals whatever FPSCR says
    (ARM's Advanced SIMD has no denormals), so its f32 cases flush in both models; its f64 ones are
    VFP code and follow FPSCR.FZ."""
    flushed = model == "llvm-cpu" and flushes(target)
    out = []
    for (function, _), f, k in zip(CASES, FLUSHED, KEPT):
        neon = target == "armv7" and function != "add64"
        out.append(f if flushed or neon else k)
    return out


@pytest.mark.parametrize("model", ["llvm-cpu", "inline-dynamic"])
@pytest.mark.parametrize("target", list(FOREIGN_FLAGS))
def test_foreign_kernels_flush_as_iree_on_their_architecture(target, model):
    path = tools.compile_mlir(PROGRAM, model=model, extra_flags=F64 + FOREIGN_FLAGS[target])
    with Program(path, RunOptions(target=target)) as p:
        for (function, inputs), want in zip(CASES, _foreign_expected(target, model)):
            assert _lines(corpus.ours(p, function, list(inputs))) == [want], (target, model, function, inputs)
        if flushes(target):  # the guest's register is back as it started (0: Linux's default)
            assert p.runtime.runners.elf.cpu().fpu_control() & FLUSH_BITS[target] == 0


@pytest.mark.parametrize("model", ["llvm-cpu", "inline-dynamic", "vmvx"])
def test_aarch64_prints_what_iree_prints_on_aarch64(model):
    """IREE's aarch64 build (FPCR.FZ pushed around the default model's dispatches) against ireeabi
    on an aarch64 heap: emulated kernels with the guest's FPCR, vmvx on the host thread's MXCSR."""
    flags = F64 + (FOREIGN_FLAGS["aarch64"] if model != "vmvx" else ())
    path = tools.compile_mlir(PROGRAM, model=model, extra_flags=flags)
    tool = tools.aarch64_iree_run_module()
    with Program(path, RunOptions(target="aarch64")) as p:
        for function, inputs in CASES:
            proc = subprocess.run([*tool, tools.RUN_DEVICE, f"--module={path}", f"--function={function}",
                                   *(f"--input={i}" for i in inputs)], capture_output=True, text=True,
                                  timeout=600, check=True)
            assert corpus.ours(p, function, list(inputs)) == proc.stdout, (model, function, inputs)
