"""libclang used in-process leaves the process's fault handlers as they were.

clang_createIndex enables LLVM's crash recovery unless LIBCLANG_DISABLE_CRASH_RECOVERY is set, and
that installs LLVM's handlers for SIGSEGV, SIGILL, SIGBUS, SIGFPE, ... for the rest of the process,
over wasmtime's (which turn a wasm kernel's fault into a trap). Chained with the native helper's
handlers, a wasm fault then went round LLVM's handler and ours until the stack overflowed: an
xdist worker died in test_wasm_loader's mutants after a layout cross-check had run in it.
The handlers are read from the kernel (sigaction), before and after.
"""
from __future__ import annotations

import ctypes
import signal
import subprocess
import sys
import textwrap

import wasmtime

from ireeabi.abi import oracles
from ireeabi.abi.layout import Field, Scalar, Struct
from ireeabi.abi.targets import get as get_target

FAULTS = (signal.SIGSEGV, signal.SIGILL, signal.SIGBUS, signal.SIGFPE, signal.SIGABRT, signal.SIGTRAP)


class _SigAction(ctypes.Structure):  # struct sigaction of x86_64 glibc: handler, mask, flags, restorer
    _fields_ = [("handler", ctypes.c_void_p), ("mask", ctypes.c_ulong * 16), ("flags", ctypes.c_int),
                ("restorer", ctypes.c_void_p)]


def _handlers() -> dict[int, tuple[int, int]]:
    libc = ctypes.CDLL(None, use_errno=True)
    out = {}
    for sig in FAULTS:
        sa = _SigAction()
        assert libc.sigaction(int(sig), None, ctypes.byref(sa)) == 0
        out[int(sig)] = (sa.handler or 0, sa.flags)
    return out


def test_a_libclang_cross_check_installs_no_fault_handler() -> None:
    before = _handlers()
    s = Struct("probe_t", [Field("a", Scalar("uint8_t")), Field("b", Scalar("uint64_t"))])
    measured = oracles.measure_libclang([s], get_target("x86_64"))
    assert measured["probe_t"].size == 16  # the parse really ran
    assert _handlers() == before


def test_a_wasm_fault_after_libclang_between_trapped_calls_is_a_trap() -> None:
    """The worker's sequence, in a fresh interpreter: wasmtime's handlers, a trapped native call
    (the helper's handlers over them), libclang in-process, another trapped call, then a wasm
    fault (a load past the memory: a SIGSEGV wasmtime must see). It died by SIGSEGV before."""
    script = textwrap.dedent("""
        import ctypes
        import wasmtime
        from ireeabi.abi import oracles
        from ireeabi.abi.layout import Field, Scalar, Struct
        from ireeabi.abi.targets import get as get_target
        from ireeabi.hal.local.native import native
        engine = wasmtime.Engine()
        store = wasmtime.Store(engine)
        module = wasmtime.Module(engine, '(module (memory 1) (func (export "f") (result i32) '
                                         'i32.const 0x7ffffff0 i32.load))')
        lib = native()
        harmless = ctypes.cast(ctypes.CDLL(None).getpid, ctypes.c_void_p).value
        def trapped_call():
            result, fault = lib.ffi.new("uintptr_t*"), lib.ffi.new("ireeabi_fault_t*")
            assert lib.lib.ireeabi_call_guarded(harmless, 0, 0, 0, result, fault, 0, 0) == 0
        trapped_call()
        oracles.measure_libclang([Struct("p", [Field("a", Scalar("int"))])], get_target("x86_64"))
        trapped_call()
        try:
            wasmtime.Instance(store, module, []).exports(store)["f"](store)
        except wasmtime.Trap as e:
            print("trap", e.trap_code)
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, (r.returncode, r.stderr[-3000:])
    assert r.stdout.strip() == f"trap {wasmtime.TrapCode.MEMORY_OUT_OF_BOUNDS}", r.stdout
