"""Python kernels through the same hal_loader path as real ones, and a system-elf real kernel."""
import numpy as np
import pytest

from support import iree_tools
from ireeabi.hal.local import python_executable as PX
from ireeabi.vm import ref as R
from ireeabi.base.status import StatusError

from support.hal_programs import PROGRAMS, Program


def _scale(d, wg):
    # constants: [n, scale bits]; one workgroup per 4 elements
    n, bits = int(d.constants[0]), int(d.constants[1])
    s = np.array([bits], np.uint32).view(np.float32)[0]
    x, y = d.bindings[0].view(np.float32), d.bindings[1].view(np.float32)
    lo = wg[0] * 4
    y[lo:min(lo + 4, n)] = x[lo:min(lo + 4, n)] * s
    return 0


def _fail(d, wg):
    return 9 if wg == (1, 0, 0) else 0


@pytest.fixture
def library():
    PX.register("teach", {"scale": _scale, "fail": _fail})
    yield
    PX.unregister("teach")


def test_python_kernel_via_loader(session, library):
    fmt = session.bytes_buffer(PX.FORMAT.encode())
    assert session.call("hal_loader.executable.query_support", fmt) == [1]
    (exe,) = session.call("hal_loader.executable.load", fmt, session.bytes_buffer(b"teach"), R.NULL_REF)
    fid = session.function(exe, "scale")
    x = np.arange(10, dtype=np.float32)
    _, sx = session.allocate(40)
    _, sy = session.allocate(40)
    session.rt.vm_buffers.as_numpy(sx.ptr, np.float32)[:] = x
    bits = int(np.array([2.5], np.float32).view(np.uint32)[0])
    bits_i32 = bits - (1 << 32) if bits >= 1 << 31 else bits
    session.call("hal_loader.executable.dispatch", exe, fid, 3, 1, 1, [10, bits_i32],
                 [(sx, 0, 40), (sy, 0, 40)])
    np.testing.assert_array_equal(session.rt.vm_buffers.as_numpy(sy.ptr, np.float32), x * np.float32(2.5))
    with pytest.raises(StatusError, match="catastrophic error 9"):
        session.call("hal_loader.executable.dispatch", exe, session.function(exe, "fail"), 3, 1, 1, [], [])


def test_unknown_python_library(session):
    with pytest.raises(StatusError, match="no python executable library"):
        session.call("hal_loader.executable.load", session.bytes_buffer(PX.FORMAT.encode()),
                     session.bytes_buffer(b"missing"), R.NULL_REF)


def test_system_elf_kernel(session):
    # iree-compile's system-elf format (a plain shared library) through the same loader.
    path = iree_tools.compile_mlir(PROGRAMS / "add16.mlir", extra_flags=["--iree-llvmcpu-link-embedded=false"])
    from ireeabi.vm.bytecode import module_file as mf
    segs = [mf.rodata_bytes(s) for s in mf.read_module(path).rodata_segments]
    fmt = next(s for s in segs if s.startswith(b"system-elf-"))
    elf = next(s for s in segs if s[:4] == b"\x7fELF")
    (exe,) = session.call("hal_loader.executable.load", session.bytes_buffer(fmt), session.bytes_buffer(elf),
                          R.NULL_REF)
    (d,) = Program("add16").dispatches("add", [None, None])
    fid = session.function(exe, d.export_name)
    a, b = np.arange(16, dtype=np.float32), np.full(16, 0.5, np.float32)
    st = []
    for arr in (a, b, None):
        _, s = session.allocate(64)
        if arr is not None:
            session.rt.vm_buffers.as_numpy(s.ptr, np.float32)[:] = arr
        st.append(s)
    session.call("hal_loader.executable.dispatch", exe, fid, *d.workgroups, d.constants,
                 [(s, 0, 64) for s in st])
    np.testing.assert_array_equal(session.rt.vm_buffers.as_numpy(st[2].ptr, np.float32), a + b)
