"""IREE #24827's pre-fix dispatch on armv7, against IREE's own armv7 runtime (tests/support/iree_oracle.py:
the snapshot before the fix as shipped, and with the loader's fix; qemu-arm runs them).

The shipped runtime's hal_loader shim reads the constant count at sizeof(iree_vm_abi_rIiii_t) = 32,
where the VM packed the binding count, and the binding count at byte 48, the low half of
bindings[0]'s offset (0): its bounds check passes, and the add kernel gets 0 bindings where it reads
3. It loads binding_ptrs[0..2] from the stack past the arrays module.c allocas and dereferences them:
the process dies by a signal (SIGBUS: under gdb, the kernel's first load `vld1.32 {d16-d17}, [r1
:128]` through binding_ptrs[1], a stack address 8 bytes off the 16-byte alignment the load demands).
`ireeabi run --legacy-loader --target armv7` refuses there, with exit 1 and an error that names both
misread counts and the fault; with the fix both print the same results.
"""
from __future__ import annotations

import io
import signal
import subprocess
from pathlib import Path

import pytest

from support import iree_oracle
from support import iree_tools as tools
from ireeabi.cli.main import main
from ireeabi.tooling.check_compile import KERNEL_TARGET_FLAGS

ADD16 = Path(__file__).resolve().parent.parent / "programs" / "add16.mlir"
INPUTS = ["--input=16xf32=1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16", "--input=16xf32=0.5"]


@pytest.fixture(scope="module")
def module() -> Path:
    return tools.compile_mlir(ADD16, model="inline-dynamic", extra_flags=KERNEL_TARGET_FLAGS["armv7"])


def _ireeabi(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", *argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_the_shipped_armv7_runtime_dies_where_the_legacy_loader_refuses(module):
    real = subprocess.run([*iree_oracle.oracle_argv("armv7", "shipped"), "--device=local-sync",
                           f"--module={module}", "--function=add", *INPUTS],
                          capture_output=True, text=True, timeout=600)
    assert real.returncode == -signal.SIGBUS, (real.returncode, real.stderr)
    assert real.stdout == "EXEC @add\n"  # it dies inside the call, before any result
    code, out, err = _ireeabi(str(module), "--target", "armv7", "--function", "add", *INPUTS,
                              "--legacy-loader")
    text = " ".join(err.split())
    assert code == 1 and out == "EXEC @add\n"
    assert text.startswith(
        "ireeabi: error: hal_loader.executable.dispatch: the pre-fix dispatch shim reads constant_count 3 "
        "at byte 32 (sizeof(iree_vm_abi_rIiii_t), where the VM packed the binding count) and binding_count "
        "0 at byte 48 (where the VM packed bindings[0].i1); IREE hands kernel "
        "add_dispatch_0_elementwise_16_f32 0 of the 3 bindings it reads: the kernel loads "
        "binding_ptrs[0..2] from IREE's stack, past the arrays IREE allocas, and dereferences them: "
        "IREE's own runtime faults there"), text


def test_the_fixed_armv7_runtime_prints_what_ireeabi_run_prints(module):
    real = tools.run_tool([*iree_oracle.oracle_argv("armv7", "fixed"), "--device=local-sync",
                           f"--module={module}", "--function=add", *INPUTS])
    assert real.returncode == 0, real.stderr
    code, out, _ = _ireeabi(str(module), "--target", "armv7", "--function", "add", *INPUTS)
    assert code == 0 and out == real.stdout
    assert "16xf32=1.5 2.5 3.5 4.5" in out


@pytest.mark.parametrize("target, sizeof", [("armv7", 32), ("aarch64", 40)])
def test_a_push_constant_read_as_the_count_sends_both_past_the_buffer(target, sizeof):
    """With push constants the shipped shim takes the first constant for the constant count (2.5f:
    0x40200000) and reads the binding count 4 x that many bytes on, far past the argument buffer:
    IREE's own runtime dies by SIGSEGV there, on both data models; ireeabi refuses at that read,
    naming it (byte sizeof + 4 + 4 x count, in iree_host_size_t arithmetic)."""
    from support import e2e_corpus as corpus

    module = tools.compile_mlir(corpus.E2E / "push_constants.mlir", model="inline-dynamic",
                                extra_flags=corpus.F64 + KERNEL_TARGET_FLAGS[target])
    inputs = ["--input=5xf32=1,2,3,4,5", "--input=2.5", "--input=-1"]
    real = subprocess.run([*iree_oracle.oracle_argv(target, "shipped"), "--device=local-sync",
                           f"--module={module}", "--function=affine", *inputs],
                          capture_output=True, text=True, timeout=600)
    assert real.returncode == -signal.SIGSEGV, (real.returncode, real.stderr)
    count = 0x40200000  # 2.5f, the first constant
    bits = 32 if target == "armv7" else 64
    at = (sizeof + 4 + 4 * count) % (1 << bits)
    code, out, err = _ireeabi(str(module), "--target", target, "--function", "affine", *inputs,
                              "--legacy-loader")
    text = " ".join(err.split())
    assert code == 1 and out == "EXEC @affine\n"
    assert (f"the pre-fix dispatch shim reads constant_count {count} at byte {sizeof} of the ") in text
    assert (f"(where the VM packed constants[0]), then binding_count at byte {at} ({sizeof} + 4 + 4 x {count}, "
            "in iree_host_size_t arithmetic), past the end of the buffer: it reads memory that is not the "
            "call's") in text, text
