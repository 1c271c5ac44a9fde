"""The pytest plugin's items never run away (issue 41, item 5): a check item whose kernel loops stops
the session on Ctrl-C, wherever the signal lands and wherever the kernel runs (natively, in the
emulated CPU with or without a budget, under wasmtime), and `ireeabi_max_steps` in the ini bounds every
item (the VM's instructions and, through the budget they imply, its kernels).

The sessions that run items run in a child `python -m pytest` under RLIMIT_CPU (CPU time, not wall time: a
runaway dies by SIGXCPU whatever the machine's load). The Ctrl-C is sent by the child's own
conftest, from a thread, once the running item has used a second of CPU: by then the item is in its
looping kernel (loading the module takes a fraction of that), which is where the signal used to be
taken as the kernel call's CANCELLED status alone, failing the item and going on to the next one.
"""
from __future__ import annotations

import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ireeabi.tooling.check_compile import KERNEL_TARGET_FLAGS
from support import hostile_kernels as hk
from support import iree_tools as tools
from support import long_lived_heap as llh

pytest_plugins = ["pytester"]

CPU_LIMIT = 60  # seconds of CPU for a session (each needs a few)

TWO_DISPATCHES = """\
util.func private @check.expect_eq(%lhs: !hal.buffer_view, %rhs: !hal.buffer_view)

util.func private @ones() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c = arith.constant 1.0 : f32
  %b = util.optimization_barrier %c : f32
  %x = tensor.from_elements %b, %b, %b, %b : tensor<4xf32>
  util.return %x : tensor<4xf32>
}

func.func @first() {
  %x = util.call @ones() : () -> (tensor<4xf32>)
  %r = arith.addf %x, %x : tensor<4xf32>
  %r_v = hal.tensor.export %r : tensor<4xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%r_v, %r_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

func.func @second() {
  %x = util.call @ones() : () -> (tensor<4xf32>)
  %r = arith.mulf %x, %x : tensor<4xf32>
  %r_v = hal.tensor.export %r : tensor<4xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%r_v, %r_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}
"""

# Sends SIGINT to the main thread once, when the running item has used a second of CPU.
CTRL_C_CONFTEST = """\
import os, signal, threading, time

def _watch(start, main):
    while time.process_time() - start < 1.0:
        time.sleep(0.02)
    signal.pthread_kill(main, signal.SIGINT)

def pytest_runtest_call(item):
    if not getattr(pytest_runtest_call, "sent", False):
        pytest_runtest_call.sent = True
        threading.Thread(target=_watch, args=(time.process_time(), threading.main_thread().ident),
                         daemon=True).start()
"""

VM_LOOP = """\
vm.module @loop version 0
vm.type i32

vm.export @test_loop
vm.func @test_loop() -> () {
^bb0:
  %i0 = vm.const.i32 1
  vm.br ^bb1()
^bb1:
  vm.cond_br %i0, ^bb1(), ^bb2()
^bb2:
  vm.return
}
"""


def _limit_cpu() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_LIMIT, CPU_LIMIT))


def _session(folder: Path, *args: str) -> subprocess.CompletedProcess:
    # with the suite's heap plugin: one or two collections at the session's end, not five
    return subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider",
                           "-p", "no:randomly", *llh.CHILD_ARGS, *args], cwd=folder,
                          capture_output=True, text=True, preexec_fn=_limit_cpu,
                          env=llh.child_environment())


def _looping_check_module(tmp_path: Path, target: str = "") -> Path:
    src = tmp_path / "two.mlir"
    src.write_text(TWO_DISPATCHES)
    data = tools.compile_mlir(src, tmp_path, "inline-dynamic",
                              extra_flags=KERNEL_TARGET_FLAGS[target] if target else ()).read_bytes()
    folder = tmp_path / "session"
    folder.mkdir()
    (folder / "two_loop.vmfb").write_bytes(hk.looping(data, "dispatch"))
    return folder


# (data model, ini budget, the file the item's traceback must pass through: where the kernel ran)
KERNELS = [
    ("", "", "hal/local/elf_executable.py"),  # the host's native kernel, in a trapped call
    ("riscv64", "", "hal/local/emulated_cpu.py"),  # Unicorn uncounted: its preemption thread
    ("armv7", "1000000000000000", "hal/local/emulated_cpu.py"),  # counted: between two chunks
    ("wasm32", "", "hal/local/wasm_loader.py"),  # wasmtime: an epoch tick from the wakeup fd
]


@pytest.mark.parametrize("target,budget,where", KERNELS, ids=["native", "riscv64", "armv7-budget", "wasm32"])
def test_ctrl_c_in_a_looping_kernel_stops_the_session(tmp_path, target, budget, where):
    """Wherever the kernel runs: natively, in the emulated CPU (Unicorn's emu_start) with or
    without a budget, or under wasmtime; the KeyboardInterrupt's traceback shows the signal was
    taken in the kernel's call, not in the VM between two calls."""
    folder = _looping_check_module(tmp_path, target)
    (folder / "pytest.ini").write_text("[pytest]\nireeabi_collect = true\n"
                                       + (f"ireeabi_targets = {target}\n" if target else "")
                                       + (f"ireeabi_max_steps = {budget}\n" if budget else ""))
    (folder / "conftest.py").write_text(CTRL_C_CONFTEST)
    proc = _session(folder, "--tb=short", "--full-trace")
    # killed at its CPU limit (SIGXCPU, then SIGKILL at the hard limit): it ran on past Ctrl-C
    assert proc.returncode not in (-signal.SIGXCPU, -signal.SIGKILL), proc.stdout[-3000:]
    # pytest's exit status for an interrupted session; the second item never started
    assert proc.returncode == 2, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "KeyboardInterrupt" in proc.stdout
    assert "two_loop.vmfb::first" in proc.stdout and "two_loop.vmfb::second" not in proc.stdout
    assert where in proc.stdout, proc.stdout[-3000:]


def test_max_steps_in_the_ini_ends_looping_items(tmp_path):
    """A VM loop and a kernel loop each fail with DEADLINE_EXCEEDED under ireeabi_max_steps."""
    folder = _looping_check_module(tmp_path)
    (folder / "loop.vmasm").write_text(VM_LOOP)
    (folder / "pytest.ini").write_text("[pytest]\nireeabi_collect = true\nireeabi_max_steps = 100000\n")
    proc = _session(folder, "-q")
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "3 failed" in proc.stdout, proc.stdout[-3000:]
    assert proc.stdout.count("DEADLINE_EXCEEDED") >= 3, proc.stdout[-3000:]


def test_a_bad_max_steps_is_a_usage_error(pytester):
    # In this process (pytester): a usage error ends the session before any item runs, so there is
    # no runaway to bound, and a child pytest's start-up (~2 s of CPU) buys nothing.
    (pytester.path / "pytest.ini").write_text("[pytest]\nireeabi_collect = true\nireeabi_max_steps = 1e22\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:randomly")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "ireeabi_max_steps: '1e22' is not a positive instruction count" in result.stderr.str()
