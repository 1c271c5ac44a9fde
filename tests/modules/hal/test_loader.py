"""hal_loader on the emulated ABI: real kernels from iree-compile dispatched through packed arguments.

Workgroup counts, push constants and binding sizes are what the compiler's VM IR passes (vm_ir.py).
"""
import struct

import numpy as np
import pytest

from ireeabi.vm.shims import SIGNATURE_MISMATCH
from ireeabi.base.status import IreeFaultError, StatusCode, StatusError

from ireeabi.modules.hal.runtime import HalRuntime
from ireeabi.tooling.trace import Trace
from ireeabi.base.heap import tracked_heap

from support.hal_programs import program
from support.hal_session import Session


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


def test_pre_fix_loader_reads_the_counts_from_other_values():
    """IREE before #24827 on x86_64 (module.c iree_vm_shim_dispatch_v): the constant count is read at
    sizeof(iree_vm_abi_rIiii_t) = 40, 4 bytes after the VM packed it. With no constants that is the
    binding count (3); the binding count is then read 4 + 3 x 4 bytes on, at byte 56: the low half of
    bindings[0]'s ref type word, an address. What IREE does next follows from it with the C code's
    pointer arithmetic: its one bounds check is `array + count x 32 > end` (array: byte 60 aligned
    to 8, absolute); failing, the signature mismatch; passing with a negative count (the product
    wraps below the array), the dispatch allocas a negative size (undefined: refused, saying so).
    Which one depends on the heap's addresses: the expectation is computed from the bytes the shim
    received, as the C code computes it."""
    prog = program("add16")
    (d,) = prog.dispatches("add", [None, None])
    trace = Trace("imports")
    with tracked_heap() as heap:
        rt = HalRuntime(heap, legacy_loader=True, trace=trace)
        s = Session(rt)
        vm_buffer_type = rt.vm_buffers.type
        try:
            with pytest.raises((StatusError, IreeFaultError)) as e:
                _run(s, prog, d, [np.ones(16, np.float32)] * 2)
        finally:
            s.release_all()
            rt.close()
    (event,) = [ev for ev in trace.events if ev["import"] == "hal_loader.executable.dispatch"]
    data, address = bytes.fromhex(event["arguments"]["bytes"]), event["arguments"]["address"]
    count = struct.unpack_from("<i", data, 56)[0]
    assert struct.unpack_from("<i", data, 40)[0] == 3  # the binding count, read as the constant count
    assert struct.unpack_from("<Q", data, 56)[0] == vm_buffer_type  # bindings[0].r0's type word
    mask = (1 << 64) - 1
    array = -(-(address + 60) // 8) * 8
    if (array + (count & mask) * 32) & mask > address + len(data):
        assert isinstance(e.value, StatusError) and e.value.status.code == StatusCode.INVALID_ARGUMENT
        assert e.value.status.message == SIGNATURE_MISMATCH
        return
    assert count < 0 and isinstance(e.value, IreeFaultError)
    text = " ".join(str(e.value).split())
    assert "the count is half an address, so what IREE does changes with where that lies" in text
    assert (f"reads constant_count 3 at byte 40 (sizeof(iree_vm_abi_rIiii_t), where the VM packed the "
            f"binding count) and binding_count {count} at byte 56 (where the VM packed bindings[0].r0's type "
            f"word, an address)") in text
    assert "allocas binding_count x sizeof(void*) bytes (a negative size)" in text


def test_pre_fix_loader_reads_the_binding_count_past_the_buffer(legacy_loader_session):
    """With push constants the pre-fix shim takes the first constant for the count: 2.0f is
    0x40000000, and the binding count it then reads lies 4 GiB past the 120-byte buffer (IREE reads
    memory that is not the call's): refused, naming both reads."""
    prog = program("push_constants")
    (d,) = prog.dispatches("scale", [None, 2.0], {0: [1000]})
    assert d.constants[0] == 0x40000000
    with pytest.raises(IreeFaultError) as f:
        _run(legacy_loader_session, prog, d, [np.ones(d.bindings[0][2] // 4, np.float32)])
    assert ("reads constant_count 1073741824 at byte 40 of the 120-byte argument buffer (where the VM "
            "packed constants[0]), then binding_count at byte 4294967340 (40 + 4 + 4 x 1073741824, in "
            "iree_host_size_t arithmetic), past the end of the buffer") in str(f.value)


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
