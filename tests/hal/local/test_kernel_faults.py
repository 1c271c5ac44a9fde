"""A kernel that runs past its bindings faults on a guard page, and the fault is an error.

IREE's process dies by SIGSEGV when a kernel, given a workgroup count larger than its bindings hold,
walks past them. ireeabi maps every binding's storage (hal buffers and VM buffers on the host heap)
with an inaccessible page right behind it and one at the front of its chunk, runs kernels under a
fault trap (hal/local/native.py), and turns the fault into an IreeFaultError (not a status: IREE's
process has none, it dies) naming the export, the workgroup, the address and the binding it lies
past; the executable is unusable afterwards. What
this cannot catch: an access that lands inside another live binding, or within a block's alignment
slack before its guard page.
"""
import mmap
import re
import signal

import numpy as np
import pytest

from ireeabi.hal.local.executable_library import ExecutableError
from ireeabi.base.heap import Heap
from ireeabi.base.status import IreeFaultError, StatusCode, StatusError

from support.hal_programs import program


def _prepare(session, name, function, args):
    prog = program(name)
    (d,) = prog.dispatches(function, args)
    vmb = session.rt.vm_buffers
    exe = session.load(prog)
    fid = session.function(exe, d.export_name)
    bindings = []
    for _, off, length in d.bindings:
        _, storage = session.allocate(length)
        vmb.as_numpy(storage.ptr, np.uint8)[:] = 1
        bindings.append((storage, off, length))
    return d, exe, fid, bindings


def test_a_kernel_past_its_bindings_faults_on_the_guard_page(session):
    d, exe, fid, bindings = _prepare(session, "add1m", "add", [None, None])
    x, y, z = d.workgroups
    assert (y, z) == (1, 1) and x > 1
    with pytest.raises(IreeFaultError) as e:
        session.call("hal_loader.executable.dispatch", exe, fid, x + 5, y, z, d.constants, bindings)
    assert "; IREE's own runtime dies there (nothing in it catches a kernel's fault)" in str(e.value)
    m = re.search(r"kernel (\S+) faulted in workgroup \((\d+), 0, 0\): signal (\d+) at address "
                  r"0x[0-9a-f]+, (\d+) byte\(s\) past the end of binding (\d) \((\d+) bytes\)",
                  str(e.value))
    assert m, str(e.value)
    export, wg, sig, past, binding, length = m.groups()
    assert export == d.export_name
    assert int(wg) == x  # the first workgroup the bindings do not hold
    assert int(sig) == signal.SIGSEGV
    assert int(past) < mmap.PAGESIZE  # on the guard page right behind the binding
    assert int(length) == d.bindings[int(binding)][2]
    # The executable is unusable from now on, even with the right counts.
    with pytest.raises(IreeFaultError, match="cannot be dispatched again: export .* faulted"):
        session.call("hal_loader.executable.dispatch", exe, fid, x, y, z, d.constants, bindings)


def test_guarded_blocks_end_at_an_inaccessible_page():
    """malloc(guard=True): the block's end lies within its alignment of a page boundary, the page
    there and the chunk's first page cannot be touched (a write from C faults: checked in a child
    process), the heap's own bounds checks still refuse the bytes in between, and no protected
    page ends up in the free lists."""
    import ctypes
    import faulthandler
    import os
    heap = Heap()
    for size, align in ((1, 16), (100, 64), (4096, 64), (70000, 16)):
        p = heap.malloc(size, align=align, guard=True)
        end = p + size
        guard = -(-end // mmap.PAGESIZE) * mmap.PAGESIZE
        assert guard - end < align
        assert heap.read(p, size) == bytes(size)
        heap.write(p, b"\xab" * size)
        pid = os.fork()
        if pid == 0:  # the child writes one byte on the guard page: it must die by SIGSEGV
            faulthandler.disable()  # (pytest's would print the child's stack)
            ctypes.memset(heap.host_address(guard), 0, 1)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGSEGV, (size, align)
        heap.free(p)
    q = heap.malloc(200000)  # reuses the freed pages, guard pages included, as plain memory
    heap.write(q, b"\x01" * 200000)
    heap.free(q)
    heap.close()


def test_freed_guarded_chunks_are_reused_with_their_guards(monkeypatch):
    """A freed guarded block's chunk, guards still protected, serves the next guarded block of its
    size with no mprotect either way (held in quarantine first on the default heap); past GUARD_POOL
    chunks of one size the rest lose their guards and go back as ordinary memory."""
    import ctypes
    import faulthandler
    import os
    from ireeabi.base import heap as heap_mod
    for quarantine in (0, 1024):
        heap = Heap(quarantine=quarantine, quarantine_bytes=0)  # held blocks dropped at once
        calls = []
        real = heap.space.protect
        monkeypatch.setattr(heap.space, "protect", lambda *a: (calls.append(a), real(*a)))
        p = heap.malloc(100, align=64, guard=True)
        assert len(calls) == 2  # a fresh chunk: its two guard pages
        heap.free(p)
        assert len(calls) == 2  # pooled, guards kept
        q = heap.malloc(100, align=64, guard=True)
        assert q == p and len(calls) == 2 and heap.read(q, 100) == bytes(100)
        guard = -(-(q + 100) // mmap.PAGESIZE) * mmap.PAGESIZE
        pid = os.fork()
        if pid == 0:  # the reused chunk's guard page still faults
            faulthandler.disable()
            ctypes.memset(heap.host_address(guard), 0, 1)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGSEGV
        blocks = [q] + [heap.malloc(100, align=64, guard=True) for _ in range(heap_mod.GUARD_POOL)]
        before = len(calls)
        for b in blocks:
            heap.free(b)
        assert len(calls) - before == 2  # the one past the pool: both guards lifted
        heap.close()


def test_guards_only_where_native_code_runs():
    """guarded_allocations() guards on a host heap only: a foreign target's memory is never touched
    by host machine code."""
    for target, guarded in ((None, True), ("riscv32", False)):
        heap = Heap(target=target)
        with heap.guarded_allocations():
            p = heap.malloc(64)
        assert heap._live[p].guarded is guarded
        heap.free(p)
        heap.close()


def test_the_trap_survives_another_handler_and_leaves_other_faults_fatal(session):
    """Python's faulthandler enabled after the first trapped call replaces our SIGSEGV handler: the
    next kernel fault is still caught (the trap puts its handlers back). A fault outside any trapped
    call still kills the process by its signal (in a child), as it would without ireeabi."""
    import ctypes
    import faulthandler
    import os
    d, exe, fid, bindings = _prepare(session, "add1m", "add", [None, None])
    x, y, z = d.workgroups
    session.call("hal_loader.executable.dispatch", exe, fid, x, y, z, d.constants, bindings)
    was = faulthandler.is_enabled()
    faulthandler.enable()
    try:
        with pytest.raises(IreeFaultError, match="faulted in workgroup"):
            session.call("hal_loader.executable.dispatch", exe, fid, x + 5, y, z, d.constants,
                         bindings)
    finally:
        if not was:
            faulthandler.disable()
    pid = os.fork()
    if pid == 0:
        faulthandler.disable()
        ctypes.string_at(0x10, 1)  # a fault no trap is waiting for
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGSEGV
