"""Foreign kernels (issue 29): iree-compile's llvm-cpu kernels for riscv32, riscv64, armv7, aarch64
and i686 run in the runtime's emulated CPU (hal/local/emulated_executable.py), and its wasm32
kernels under wasmtime (hal/local/wasm_executable.py), on memory laid out for that target, through
the same hal_loader / `hal` module paths as host kernels.

Oracles nobody here wrote: iree-run-module on the x86_64 build of the same program (what the
program computes), IREE's own aarch64 iree-run-module under qemu-aarch64 on the aarch64 build (what
IREE prints on that machine), and the host kernel run natively (the emulator's differential).
"""
from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import e2e_corpus as corpus
import iree_tools as tools
from debian_tools import debian_file, debian_tool
from ireeabi.cli.main import main
from ireeabi.tooling.program import Program
from ireeabi.vm.bytecode.errors import VmStatusError

# What each triple needs from iree-compile 3.13 (docs/programs.md says why): riscv has no soft-float
# runtime to link (+f, and +d for f64), armv7 divides in hardware only with +hwdiv-arm and its debug
# symbols import an unwinder the embedded loader refuses.
FOREIGN_FLAGS = {
    "riscv32": ("--iree-llvmcpu-target-triple=riscv32-pc-linux-elf",
                "--iree-llvmcpu-target-cpu-features=+m,+f,+d"),
    "riscv64": ("--iree-llvmcpu-target-triple=riscv64-pc-linux-elf",
                "--iree-llvmcpu-target-cpu-features=+m,+f,+d"),
    "armv7": ("--iree-llvmcpu-target-triple=armv7a-pc-linux-elf",
              "--iree-llvmcpu-target-cpu-features=+hwdiv-arm", "--iree-llvmcpu-debug-symbols=false"),
    "aarch64": ("--iree-llvmcpu-target-triple=aarch64-pc-linux-elf",),
    "i386": ("--iree-llvmcpu-target-triple=i686-pc-linux-elf",),
    "wasm32": ("--iree-llvmcpu-target-triple=wasm32-unknown-unknown",),  # system-wasm-wasm_32, wasmtime
}
RUNNING = ("riscv32", "riscv64", "armv7", "aarch64", "wasm32")  # i386: test_i386_fails_where_inspect_predicts

# A float result that really differs by architecture: an invalid operation (inf * 0, -NaN * x) gives
# x86's default NaN, which is negative, and SSE keeps a NaN operand's sign; AArch64 and ARMv7's NEON
# (default-NaN mode) and RISC-V (canonical NaN) give the positive default NaN. Only NaN signs may
# differ in this case; the aarch64 oracle below checks the aarch64 text exactly.
NAN_SIGN_CASE = ("elementwise", "mul_add", 1)


def _cases():
    seen: dict[tuple[str, str], int] = {}
    for name, fn, inputs in corpus.CASES:
        k = seen[name, fn] = seen.get((name, fn), -1) + 1
        yield name, fn, inputs, k


def _compile(name: str, model: str, arch: str | None) -> Path:
    flags = corpus.F64 + (FOREIGN_FLAGS[arch] if arch else ())
    return tools.compile_mlir(corpus.E2E / f"{name}.mlir", model=model, extra_flags=flags)


@pytest.fixture(scope="module")
def programs():
    opened: dict = {}

    def get(name: str, model: str, arch: str, **kw) -> Program:
        key = (name, model, arch, tuple(sorted(kw.items())))
        if key not in opened:
            target = "x86_64" if arch == "x86_64" else arch
            opened[key] = Program(_compile(name, model, None if arch == "x86_64" else arch), target=target, **kw)
        return opened[key]
    yield get
    for p in opened.values():
        p.close()


def _same(expected: str, got: str, case: tuple) -> None:
    if case == NAN_SIGN_CASE:
        expected, got = expected.replace("-NAN", "NAN"), got.replace("-NAN", "NAN")
    assert got == expected


@pytest.mark.parametrize("arch", RUNNING)
def test_inline_dynamic_corpus_prints_what_iree_prints(arch, programs):
    for name, fn, inputs, k in _cases():
        expected = corpus.iree_output(_compile(name, "inline-dynamic", None), fn, tuple(inputs))
        got = corpus.ours(programs(name, "inline-dynamic", arch), fn, list(inputs))
        _same(expected, got, (name, fn, k))


@pytest.mark.parametrize("arch", RUNNING)
def test_default_model_corpus_prints_what_iree_prints(arch, programs):
    """The full `hal` module's command buffers dispatch foreign kernels too (the first case of each
    function: the inline test above covers the inputs)."""
    for name, fn, inputs, k in _cases():
        if k:
            continue
        expected = corpus.iree_output(_compile(name, "llvm-cpu", None), fn, tuple(inputs))
        got = corpus.ours(programs(name, "llvm-cpu", arch), fn, list(inputs))
        _same(expected, got, (name, fn, k))


# --------------------------------------------------------------------------------------------------
# IREE itself on aarch64: the aarch64 wheel's iree-run-module under qemu-aarch64.

def _aarch64_iree_run_module(tmp_root: Path) -> list[str]:
    qemu = debian_tool("qemu-aarch64")
    sysroot = Path("/usr/aarch64-linux-gnu")
    debian_file(str(sysroot / "lib" / "ld-linux-aarch64.so.1"), "libc6-arm64-cross")
    cache = Path(os.environ.get("IREEABI_TEST_CACHE", tmp_root)) / "aarch64-runtime"
    tool = cache / "iree" / "_runtime_libs" / "iree-run-module"
    if not tool.exists():
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                        "--platform", "manylinux_2_28_aarch64", "--python-version", "3.11",
                        "iree-base-runtime==3.13.0", "-d", str(cache)], check=True, timeout=600)
        (wheel,) = cache.glob("iree_base_runtime-3.13.0-*aarch64*.whl")
        zipfile.ZipFile(wheel).extract("iree/_runtime_libs/iree-run-module", cache)
        tool.chmod(0o755)
    return [qemu, "-L", str(sysroot), str(tool)]


@pytest.fixture(scope="module")
def aarch64_iree(tmp_path_factory):
    return _aarch64_iree_run_module(tools.session_dir())


@pytest.mark.parametrize("model", ["inline-dynamic", "llvm-cpu"])
def test_aarch64_prints_what_iree_prints_on_aarch64(model, programs, aarch64_iree):
    for name, fn, inputs, k in _cases():
        if model == "llvm-cpu" and k:
            continue
        path = _compile(name, model, "aarch64")
        proc = subprocess.run([*aarch64_iree, tools.RUN_DEVICE, f"--module={path}", f"--function={fn}",
                               *(f"--input={i}" for i in inputs)], capture_output=True, text=True,
                              timeout=600)
        if proc.returncode:  # iree-run-module refuses the input: so must ireeabi
            with pytest.raises(Exception):
                corpus.ours(programs(name, model, "aarch64"), fn, list(inputs))
            continue
        assert corpus.ours(programs(name, model, "aarch64"), fn, list(inputs)) == proc.stdout, (name, fn, k)


# --------------------------------------------------------------------------------------------------
# The emulator against the host CPU: the same x86_64 kernels natively and emulated.

def test_host_kernels_emulated_give_the_same_bytes(programs):
    for name, fn, inputs, k in _cases():
        native = programs(name, "inline-dynamic", "x86_64")
        emulated = programs(name, "inline-dynamic", "x86_64", emulate_kernels=True)
        chars, _ = native.signature(fn)
        values = [corpus.parse_input(text, char) for text, char in zip(inputs, chars)]
        try:
            a = native.call(fn, *values)
        except VmStatusError as e:
            with pytest.raises(VmStatusError) as raised:
                emulated.call(fn, *values)
            assert str(raised.value) == str(e)
            continue
        b = emulated.call(fn, *values)
        assert len(a) == len(b)
        for x, y in zip(a, b):
            if isinstance(x, np.ndarray):
                assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes(), (name, fn, k)
            else:
                assert repr(x) == repr(y), (name, fn, k)


# --------------------------------------------------------------------------------------------------
# IREE #24827 on the targets it is about, and the data models' own hazards.

def _run_cli(argv: list[str], capsys) -> tuple[int, str]:
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out + out.err


ADD16 = ["--function", "add", "--input=16xf32=1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16", "--input=16xf32=0.5"]


@pytest.mark.parametrize("arch", ["riscv32", "armv7", "wasm32"])
def test_legacy_loader_misreads_a_real_32_bit_kernel_dispatch(arch, capsys):
    """The pre-fix shim reads the bindings' span count at sizeof(iree_vm_abi_rIiii_t) (32 B on these
    targets), inside the packed constants: the kernel's dispatch is refused; the fixed shim runs it."""
    path = tools.compile_mlir(Path(tools.__file__).parent / "programs" / "add16.mlir",
                              model="inline-dynamic", extra_flags=FOREIGN_FLAGS[arch])
    code, out = _run_cli(["run", str(path), "--target", arch, "--legacy-loader", *ADD16], capsys)
    assert code != 0 and "hal_loader.executable.dispatch" in out and "binding count mismatch" in out
    code, out = _run_cli(["run", str(path), "--target", arch, *ADD16], capsys)
    assert code == 0 and "16xf32=1.5 2.5 3.5" in out


def test_i386_fails_where_inspect_predicts(capsys):
    """On i386 hal_inline's buffer_view.assert shim reads a struct the VM packs differently; inspect
    says so before anything runs, and the run stops at that import, as for inline-static."""
    path = tools.compile_mlir(Path(tools.__file__).parent / "programs" / "add16.mlir",
                              model="inline-dynamic", extra_flags=FOREIGN_FLAGS["i386"])
    code, out = _run_cli(["inspect", str(path), "--target", "i386", "--check-imports"], capsys)
    assert "BAD hal_inline.buffer_view.assert 0rriiCID_v: resolves, but IREE's layout rules disagree on i386" \
        in out, out
    code, out = _run_cli(["run", str(path), "--target", "i386", *ADD16], capsys)
    assert code != 0 and "signature mismatch" in out and "hal_inline.buffer_view.assert" in out


# --------------------------------------------------------------------------------------------------
# Faults and runaways end as statuses.

def test_a_runaway_budget_reaches_the_kernel():
    """`max_steps` bounds each emulated kernel call in target instructions: a budget too small for
    one workgroup of add16 ends the call cleanly."""
    path = tools.compile_mlir(Path(tools.__file__).parent / "programs" / "add16.mlir",
                              model="inline-dynamic", extra_flags=FOREIGN_FLAGS["riscv32"])
    a = np.arange(16, dtype=np.float32)
    with Program(path, target="riscv32", max_steps=50) as p:  # the VM's own steps stay under 50
        with pytest.raises(VmStatusError) as raised:
            p.call("add", a, a)
    assert raised.value.code.name == "DEADLINE_EXCEEDED"
    assert "more than 50 instructions" in str(raised.value) and "hal_loader.executable.dispatch" in str(raised.value)
    with Program(path, target="riscv32", max_steps=10**6) as p:
        (out,) = p.call("add", a, a)
        assert out.tobytes() == (a + a).tobytes()


def test_armv7_exp_kernels_as_compiled_fault_cleanly(capsys):
    """iree-compile 3.13's armv7 kernels that expand exp branch (`bl`) to the end of .text and run
    into what follows it: broken as compiled. The run ends with the fault as a status (kernel,
    workgroup, address), never a signal; the riscv32 build of the same program prints what
    iree-run-module prints for x86_64."""
    src = Path(tools.__file__).parent / "programs" / "exp16.mlir"
    args = ["--function", "expf", "--input=16xf32=1"]
    arm = tools.compile_mlir(src, model="inline-dynamic", extra_flags=FOREIGN_FLAGS["armv7"])
    code, out = _run_cli(["run", str(arm), "--target", "armv7", *args], capsys)
    assert code != 0 and "INTERNAL" in out and "kernel expf_dispatch_0" in out and "faulted" in out, out
    assert "the executable cannot be dispatched again" in out
    expected = tools.run_module(tools.compile_mlir(src, model="inline-dynamic"), "expf", ["16xf32=1"])
    rv32 = tools.compile_mlir(src, model="inline-dynamic", extra_flags=FOREIGN_FLAGS["riscv32"])
    code, out = _run_cli(["run", str(rv32), "--target", "riscv32", *args], capsys)
    assert code == 0 and out == expected
