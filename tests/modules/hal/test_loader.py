"""hal_loader on the emulated ABI: real kernels from iree-compile dispatched through packed arguments.

Workgroup counts, push constants and binding sizes are what the compiler's VM IR passes (vm_ir.py).
"""
import numpy as np
import pytest

from ireeabi.vm.shims import SIGNATURE_MISMATCH
from ireeabi.vm.status import StatusCode, StatusError

from support.hal_programs import program


def _run(session, prog, d, inputs):
    """Dispatch `d` with HAL buffers holding `inputs` and one zeroed output; the output array."""
    vmb = session.rt.vm_buffers
    exe = session.load(prog)
    fid = session.function(exe, d.export_name)
    storages = []
    for (_, off, length), x in zip(d.bindings, list(inputs) + [None]):
        _, storage = session.allocate(length)
        if x is not None:
            vmb.as_numpy(storage.ptr, np.float32)[:] = x
        storages.append(storage)
    session.call("hal_loader.executable.dispatch", exe, fid, *d.workgroups, d.constants,
                 [(s, off, length) for s, (_, off, length) in zip(storages, d.bindings)])
    return vmb.as_numpy(storages[-1].ptr, np.float32).copy()


@pytest.mark.parametrize("name", ["add16", "add1m"])
def test_add_kernels(session, name):
    prog = program(name)
    (d,) = prog.dispatches("add", [None, None])
    n = d.bindings[0][2] // 4
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal(n, np.float32), rng.standard_normal(n, np.float32)
    np.testing.assert_array_equal(_run(session, prog, d, [a, b]), a + b)


def test_push_constant_kernel(session):
    prog = program("push_constants")
    n, s = 1000, -1.75
    (d,) = prog.dispatches("scale", [None, s], {0: [n]})
    assert d.constants  # the kernel does take push constants
    x = np.random.default_rng(6).standard_normal(n, np.float32)
    np.testing.assert_array_equal(_run(session, prog, d, [x]), x * np.float32(s))


def test_several_bindings_kernel(session):
    prog = program("bindings")
    (d,) = prog.dispatches("muladd", [None] * 3)
    a, b, c = (np.random.default_rng(i).standard_normal(64, np.float32) for i in range(3))
    np.testing.assert_allclose(_run(session, prog, d, [a, b, c]), a * b + c, rtol=1e-6)


@pytest.mark.parametrize("name, function, args, shapes", [
    ("add16", "add", [None, None], None),
    ("push_constants", "scale", [None, 2.0], {0: [1000]}),
])
def test_pre_fix_loader_rejects_real_arguments(legacy_loader_session, name, function, args, shapes):
    # IREE before #24827: every inline-dynamic dispatch failed with the signature mismatch.
    prog = program(name)
    (d,) = prog.dispatches(function, args, shapes)
    with pytest.raises(StatusError, match=SIGNATURE_MISMATCH) as e:
        _run(legacy_loader_session, prog, d, [np.ones(d.bindings[0][2] // 4, np.float32)])
    assert e.value.status.code == StatusCode.INVALID_ARGUMENT


def test_loader_statuses(session):
    prog = program("add16")
    (d,) = prog.dispatches("add", [None, None])
    exe = session.load(prog)
    _, st = session.allocate(64)
    bind = [(st, 0, 64)] * 3

    def dispatch(fid=0, bindings=bind, wg=(1, 1, 1)):
        session.call("hal_loader.executable.dispatch", exe, fid, *wg, [], bindings)

    with pytest.raises(StatusError, match=r"function id 1 out of range \(count: 1\)"):
        dispatch(fid=1)
    with pytest.raises(StatusError, match="out of range"):
        dispatch(fid=-1)
    with pytest.raises(StatusError, match="too many bindings") as e:
        dispatch(bindings=[(st, 0, 64)] * 33)
    assert e.value.status.code == StatusCode.RESOURCE_EXHAUSTED
    with pytest.raises(StatusError) as e:
        dispatch(bindings=[(st, 0, 64), (st, 8, 64), (st, 0, 64)])
    assert e.value.status.code == StatusCode.OUT_OF_RANGE
    with pytest.raises(StatusError, match="ref type mismatch|ref is null"):
        session.call("hal_loader.executable.dispatch", st, 0, 1, 1, 1, [], bind)
    with pytest.raises(StatusError, match="not found in library") as e:
        session.function(exe, "nope")
    assert e.value.status.code == StatusCode.NOT_FOUND


def test_load_statuses(session):
    prog = program("add16")
    fmt = session.bytes_buffer(b"embedded-elf-arm_64")
    assert session.call("hal_loader.executable.query_support", fmt) == [0]
    assert session.call("hal_loader.executable.query_support",
                        session.bytes_buffer(prog.format.encode())) == [1]
    with pytest.raises(StatusError) as e:
        session.call("hal_loader.executable.load", fmt, session.bytes_buffer(prog.elf),
                     session.bytes_buffer(b""))
    assert e.value.status.code == StatusCode.NOT_FOUND
    with pytest.raises(StatusError, match="multiple of 4") as e:
        session.call("hal_loader.executable.load", session.bytes_buffer(prog.format.encode()),
                     session.bytes_buffer(prog.elf), session.bytes_buffer(b"abc"))
    assert e.value.status.code == StatusCode.INVALID_ARGUMENT
    with pytest.raises(StatusError) as e:  # a library with no constants given one
        session.call("hal_loader.executable.load", session.bytes_buffer(prog.format.encode()),
                     session.bytes_buffer(prog.elf), session.bytes_buffer(b"abcd"))
    assert e.value.status.code == StatusCode.FAILED_PRECONDITION


def test_executable_unloads_on_release(session):
    exe = session.load(program("add16"))
    _, payload = session.rt.executables.deref(exe)
    session.held.remove(exe)
    from ireeabi.vm import ref as R
    R.release_value(session.rt.heap, exe)
    assert payload.library._dll is None  # dlclosed with its last reference
