"""A native kernel can always be stopped: Ctrl-C ends it with CANCELLED, a CPU-time budget with
DEADLINE_EXCEEDED, and the process goes on as before (hal/local/native.py, native_build.py).

The runaway kernel is real compiled code made to loop: iree-compile's embedded ELF of a two-function
module, with the first instructions of one dispatch function (found through the compiler's DWARF)
replaced by `jmp .` (EB FE), or by a `write(2, ..., 1)` of a marker byte and then `jmp .`, so that a
test knows the kernel is running before it sends SIGINT. iree-run-module would spin on it forever;
the other function's kernel is untouched, and runs after the stop as iree-run-module runs it.
No verdict depends on the clock: the budgets are CPU time of the kernel's own thread, and the
waits for a marker have generous backstops only.
"""
from __future__ import annotations

import ctypes
import io
import mmap
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from elftools.elf.elffile import ELFFile

from support import iree_tools
from ireeabi.hal.local import native
from ireeabi.tooling.program import Program, RunOptions
from ireeabi.vm.bytecode import module_file as mf
from ireeabi.base.heap import LeakError
from ireeabi.base.status import StatusCode

SOURCE = """
func.func @spin(%a: tensor<16xf32>) -> tensor<16xf32> {
  %0 = arith.addf %a, %a : tensor<16xf32>
  return %0 : tensor<16xf32>
}
func.func @mul(%a: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<16xf32> {
  %0 = arith.mulf %a, %b : tensor<16xf32>
  return %0 : tensor<16xf32>
}
"""
SPIN = b"\xeb\xfe"  # jmp .
MARKER = 0xBA  # the byte the marker variant writes: the first byte of `mov edx, 1`, lea's target
# mov eax, 1 (write); mov edi, 2; lea rsi, [rip]; mov edx, 1; syscall; jmp .
MARK_THEN_SPIN = (b"\xb8\x01\x00\x00\x00" b"\xbf\x02\x00\x00\x00" b"\x48\x8d\x35\x00\x00\x00\x00"
                  b"\xba\x01\x00\x00\x00" b"\x0f\x05" + SPIN)
BACKSTOP_S = 300  # only for a run that never ends: no verdict waits on it
A = np.arange(16, dtype=np.float32)
B = np.full(16, 3, dtype=np.float32)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    d = tmp_path_factory.mktemp("native_stop")
    src = d / "spin_and_mul.mlir"
    src.write_text(SOURCE)
    return iree_tools.compile_mlir(src, d)


def _kernel(data: bytes, prefix: str) -> tuple[int, str, int]:
    """(file offset in the .vmfb, name, size) of the dispatch function whose name starts with
    `prefix`, from the embedded ELF's DWARF (the compiler's own record of where it put it)."""
    module = mf.read_module(data)
    (seg,) = [s for s in module.rodata_segments if mf.rodata_bytes(s)[:4] == b"\x7fELF"]
    elf = ELFFile(io.BytesIO(data[seg.offset:seg.offset + seg.length]))
    found = [die for cu in elf.get_dwarf_info().iter_CUs() for die in cu.iter_DIEs()
             if die.tag == "DW_TAG_subprogram" and "DW_AT_name" in die.attributes
             and die.attributes["DW_AT_name"].value.decode().startswith(prefix)]
    assert len(found) == 1, found
    name = found[0].attributes["DW_AT_name"].value.decode()
    low, size = found[0].attributes["DW_AT_low_pc"].value, found[0].attributes["DW_AT_high_pc"].value
    (load,) = [s for s in elf.iter_segments() if s["p_type"] == "PT_LOAD"
               and s["p_vaddr"] <= low < s["p_vaddr"] + s["p_filesz"] and s["p_flags"] & 1]  # PF_X
    return seg.offset + load["p_offset"] + low - load["p_vaddr"], name, size


def _mutant(compiled: Path, code: bytes, out: Path) -> tuple[Path, str]:
    """The module with @spin's kernel starting with `code`; (its path, the kernel's name)."""
    data = bytearray(compiled.read_bytes())
    at, name, size = _kernel(bytes(data), "spin_dispatch")
    assert len(code) <= size
    data[at:at + len(code)] = code
    out.write_bytes(bytes(data))
    return out, name


@pytest.fixture(scope="module")
def spin(compiled, tmp_path_factory):
    return _mutant(compiled, SPIN, tmp_path_factory.mktemp("spin") / "spin.vmfb")


@pytest.fixture(scope="module")
def marked(compiled, tmp_path_factory):
    return _mutant(compiled, MARK_THEN_SPIN, tmp_path_factory.mktemp("marked") / "marked.vmfb")


@pytest.fixture(scope="module")
def mul_oracle(spin):
    """iree-run-module's result of the untouched kernel, in the mutant."""
    (out,) = iree_tools.run_module_results([spin[0]], "mul", ["16xf32=" + " ".join(map(str, A)),
                                                              "16xf32=" + " ".join(map(str, B))], 1)
    return out


def _cli(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "ireeabi.cli.main", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)


def _finish(proc: subprocess.Popen) -> tuple[int, str, bytes]:
    try:
        out, err = proc.communicate(timeout=BACKSTOP_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise AssertionError(f"the run did not end within {BACKSTOP_S} s")
    return proc.returncode, out.decode(), err


def _one_line(text: str) -> str:
    return " ".join(text.split())


# --------------------------------------------------------------------------------------------------
# `ireeabi run`


def test_a_budget_ends_a_runaway_kernel_with_deadline_exceeded(spin):
    path, kernel = spin
    rc, out, err = _finish(_cli("run", str(path), "--function", "spin", "--input=16xf32=2",
                                "--kernel-cpu-time", "0.25"))
    text = _one_line(err.decode())
    assert rc == 1 and out == "EXEC @spin\n", (rc, out, text)
    assert "Traceback" not in text
    assert text.startswith(f"ireeabi: error: DEADLINE_EXCEEDED; kernel {kernel} ran past its budget of "
                           f"0.25 s of CPU time (stopped in workgroup (0, 0, 0))"), text
    assert "hal_loader.executable.dispatch (in spin at pc" in text


def test_the_default_execution_model_is_bounded_too(tmp_path):
    """iree-compile's default model (the full `hal` module, its command buffers) dispatches through
    the same trap: --max-steps alone bounds the native kernel."""
    src = tmp_path / "spin_and_mul.mlir"
    src.write_text(SOURCE)
    path, kernel = _mutant(iree_tools.compile_mlir(src, tmp_path, model="llvm-cpu"), SPIN, tmp_path / "m.vmfb")
    rc, out, err = _finish(_cli("run", str(path), "--function", "spin", "--input=16xf32=2",
                                "--max-steps", "1000000"))
    text = _one_line(err.decode())
    assert rc == 1 and out == "EXEC @spin\n" and "Traceback" not in text, (rc, out, text)
    assert text.startswith(f"ireeabi: error: DEADLINE_EXCEEDED; kernel {kernel} ran past its budget of "
                           f"{native.MIN_CPU_TIME:g} s of CPU time"), text


def test_ctrl_c_ends_a_runaway_kernel_with_cancelled(marked):
    """No option at all: SIGINT once the kernel has written its marker (so it runs) ends the run."""
    path, kernel = marked
    proc = _cli("run", str(path), "--function", "spin", "--input=16xf32=2")
    try:
        first = proc.stderr.read(1)  # blocks until the kernel writes (or the process ends)
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    if first != bytes([MARKER]):
        os.killpg(proc.pid, signal.SIGKILL)
        raise AssertionError(f"no marker from the kernel: {first + proc.communicate()[1]!r}")
    proc.send_signal(signal.SIGINT)
    rc, out, err = _finish(proc)
    text = _one_line(err.decode())
    assert rc == 1 and out == "EXEC @spin\n", (rc, out, text)
    assert "Traceback" not in text
    assert text.startswith(f"ireeabi: error: CANCELLED; kernel {kernel} was interrupted (Ctrl-C) in "
                           "workgroup (0, 0, 0)"), text


@pytest.mark.parametrize("bad", ["0", "-1", "nan", "inf", "ten", "", "1e400"])
def test_the_budget_must_be_positive_cpu_seconds(spin, bad, capsys):
    from ireeabi.cli.main import main
    rc = main(["run", str(spin[0]), "--function", "spin", "--input=16xf32=2", f"--kernel-cpu-time={bad}"])
    assert rc == 2
    assert f"--kernel-cpu-time: {bad!r} is not a positive number of CPU seconds" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------------
# In process: the thread and the program after a stop


class _StackT(ctypes.Structure):
    _fields_ = [("ss_sp", ctypes.c_void_p), ("ss_flags", ctypes.c_int), ("ss_size", ctypes.c_size_t)]


def _altstack() -> tuple[int | None, int, int]:
    libc = ctypes.CDLL(None, use_errno=True)
    old = _StackT()
    assert libc.sigaltstack(None, ctypes.byref(old)) == 0
    return old.ss_sp, old.ss_flags, old.ss_size


def _mask() -> set:
    return set(signal.pthread_sigmask(signal.SIG_BLOCK, []))


def _stopped(call, code: str, kernel: str) -> str:
    with pytest.raises(Exception) as raised:
        call()
    e = raised.value
    assert getattr(e, "code", None) is not None and e.code.name == code, repr(e)
    assert f"kernel {kernel}" in str(e)
    return str(e)


def _guard_faults(heap) -> bool:
    """A guarded block's guard page still faults (written from C in a child process)."""
    import faulthandler
    p = heap.malloc(100, align=64, guard=True)
    guard = -(-(p + 100) // mmap.PAGESIZE) * mmap.PAGESIZE
    pid = os.fork()
    if pid == 0:
        faulthandler.disable()
        ctypes.memset(heap.host_address(guard), 0, 1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    heap.free(p)
    return os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGSEGV


def test_after_a_stop_the_thread_and_the_program_go_on(spin, mul_oracle):
    path, kernel = spin
    mask = _mask()
    lib = native.native().lib
    with Program(path, RunOptions(kernel_cpu_time=0.2)) as prog:
        message = _stopped(lambda: prog.call("spin", A), "DEADLINE_EXCEEDED", kernel)
        assert "ran past its budget of 0.2 s of CPU time (stopped in workgroup (0, 0, 0))" in message
        sp, flags, size = _altstack()
        assert sp and size and not flags & 1  # SS_ONSTACK: the jump left the handler's stack
        assert _mask() == mask
        assert lib.ireeabi_timer_remaining_ns() == 0  # disarmed
        # The other kernel of the same library runs, as iree-run-module runs it.
        out = prog.call("mul", A, B)
        assert out.tobytes() == mul_oracle.tobytes()
        # The stopped one runs (and stops) again: the library stays usable.
        _stopped(lambda: prog.call("spin", A), "DEADLINE_EXCEEDED", kernel)
        assert _altstack() == (sp, flags, size)  # the same alternate stack: none leaked per stop
        assert _mask() == mask
        assert _guard_faults(prog.heap)
    # closed above: every allocation of the program was released (else LeakError)


def test_an_instruction_budget_bounds_native_kernels_too(spin):
    """`max_steps` alone: the native kernel gets max_steps / 1e8 CPU seconds, at least 1 s."""
    path, kernel = spin
    with Program(path, RunOptions(max_steps=10**6)) as prog:
        message = _stopped(lambda: prog.call("spin", A), "DEADLINE_EXCEEDED", kernel)
    assert f"budget of {native.MIN_CPU_TIME:g} s of CPU time" in message
    assert native.default_cpu_time(10**6) == native.MIN_CPU_TIME
    assert native.default_cpu_time(5 * 10**8) == 5.0
    assert native.default_cpu_time(None) is None


def _interrupt_main_after_cpu(seconds: float, done: threading.Event) -> threading.Thread:
    """A thread that sends SIGINT to the main thread once the main thread used `seconds` more of
    CPU time (it then spins in the kernel: the GIL is released there)."""
    main = threading.main_thread().ident
    clock = time.pthread_getcpuclockid(main)
    start = time.clock_gettime(clock)

    def run() -> None:
        while not done.is_set() and time.clock_gettime(clock) - start < seconds:
            done.wait(0.01)
        if not done.is_set():
            signal.pthread_kill(main, signal.SIGINT)
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def _stopped_by_interrupt(prog: Program, kernel: str, after_cpu: float, code: str) -> None:
    """`spin` called with SIGINT sent to the main thread after `after_cpu` s of CPU: ends with `code`."""
    done = threading.Event()
    t = _interrupt_main_after_cpu(after_cpu, done)
    try:
        _stopped(lambda: prog.call("spin", A), code, kernel)
    finally:
        done.set()
        t.join()


def test_ctrl_c_in_process_is_the_calls_cancelled_status(spin, mul_oracle):
    """With Python's own SIGINT handler the interrupt is the call's CANCELLED (no KeyboardInterrupt
    later); a handler of one's own runs as well; an ignored SIGINT leaves the kernel to its budget."""
    assert threading.current_thread() is threading.main_thread()
    path, kernel = spin
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with Program(path, RunOptions(kernel_cpu_time=60.0)) as prog:
        _stopped_by_interrupt(prog, kernel, 0.2, "CANCELLED")
        for _ in range(1000):  # a pending KeyboardInterrupt would be raised in here
            pass
        out = prog.call("mul", A, B)
        assert out.tobytes() == mul_oracle.tobytes()

        seen = []
        previous = signal.signal(signal.SIGINT, lambda sig, frame: seen.append(sig))
        try:
            _stopped_by_interrupt(prog, kernel, 0.2, "CANCELLED")
            for _ in range(1000):
                pass
            assert seen == [signal.SIGINT]
        finally:
            signal.signal(signal.SIGINT, previous)

    with Program(path, RunOptions(kernel_cpu_time=0.5)) as prog:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            _stopped_by_interrupt(prog, kernel, 0.1, "DEADLINE_EXCEEDED")
        finally:
            signal.signal(signal.SIGINT, previous)


def test_a_budget_holds_in_any_thread(spin, mul_oracle):
    """The timer is the calling thread's: a kernel run from another thread stops there, and that
    thread's exit takes its timer and alternate stack with it."""
    path, kernel = spin
    results = {}

    def run() -> None:
        with Program(path, RunOptions(kernel_cpu_time=0.2)) as prog:
            try:
                prog.call("spin", A)
            except Exception as e:  # noqa: BLE001 - checked below
                results["error"] = e
            results["mul"] = prog.call("mul", A, B)
    timers = _posix_timers()
    for _ in range(3):
        t = threading.Thread(target=run)
        t.start()
        t.join(BACKSTOP_S)
        assert not t.is_alive()
        assert results["error"].code.name == "DEADLINE_EXCEEDED" and f"kernel {kernel}" in str(results["error"])
        assert results["mul"].tobytes() == mul_oracle.tobytes()
        _wait_gone(t.native_id)  # join returns before the OS thread has finished exiting
        assert _posix_timers() == timers  # the thread's timer went with it


def _wait_gone(tid: int) -> None:
    end = time.monotonic() + BACKSTOP_S
    while os.path.exists(f"/proc/self/task/{tid}"):
        assert time.monotonic() < end, f"thread {tid} did not exit"
        time.sleep(0.01)


def _posix_timers() -> int:
    """The process's POSIX timers, as the kernel lists them."""
    return Path("/proc/self/timers").read_text().count("ID:")


def test_a_leaked_program_is_still_refused_after_a_stop(spin):
    """The stop goes through the VM's own error path: the call releases what it held, so a program
    closes clean; a leak would still be reported (the check is not switched off by the stop)."""
    path, kernel = spin
    prog = Program(path, RunOptions(kernel_cpu_time=0.2))
    _stopped(lambda: prog.call("spin", A), "DEADLINE_EXCEEDED", kernel)
    leaked = prog.buffer_view(A)  # never released: close must report it
    with pytest.raises(LeakError):
        prog.close()
    del leaked


def test_library_code_outside_kernels_is_stopped_the_same_way():
    """ireeabi_call_guarded (a library's initializers and query) takes the same budget: a `jmp .`
    on an executable page ends with DEADLINE_EXCEEDED, and the loader's error says so."""
    page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(SPIN)
    address = ctypes.addressof(ctypes.c_char.from_buffer(page))
    mod = native.native()
    result, fault = mod.ffi.new("uintptr_t*"), mod.ffi.new("ireeabi_fault_t*")
    status = mod.lib.ireeabi_call_guarded(address, 0, 0, 0, result, fault, native.budget_ns(0.1), 0)
    assert status == native.DEADLINE_EXCEEDED
    assert fault.signal == mod.lib.ireeabi_timer_signal()
    error = native.stopped(status, "initializer", 0.1)
    assert error.code == StatusCode.DEADLINE_EXCEEDED and "initializer ran past its budget of 0.1 s" in error.message
    assert mod.lib.ireeabi_timer_remaining_ns() == 0
    # No budget: the same page, patched to return at once, runs to its end.
    page.seek(0)
    page.write(b"\xc3")  # ret
    assert mod.lib.ireeabi_call_guarded(address, 0, 0, 0, result, fault, 0, 0) == 0
    # A forked child has none of its parent's timers: the budget makes its own there.
    page.seek(0)
    page.write(SPIN)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = 0 if mod.lib.ireeabi_call_guarded(address, 0, 0, 0, result, fault, native.budget_ns(0.1),
                                                     0) == native.DEADLINE_EXCEEDED else 2
        finally:
            os._exit(code)
    end = time.monotonic() + BACKSTOP_S
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > end:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise AssertionError("the forked child's budget did not stop it")
        time.sleep(0.01)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    del address
    page.close()
