"""The full `hal` module (modules/hal/module.py) against IREE's own: every call below runs on iree.runtime
3.13's `hal` module over a local-sync device and on ireeabi's, and must give the same results or the
same status (code and message). The real runtime's iree_vm_invoke cannot pass variadic spans, so the
exports with spans (dispatch, buffer views, fence.join/await, execute.indirect, allocator.select)
are checked through the programs iree-compile emits (tests/tooling/test_default_model.py) and in
test_hal_module.py against module.c.

Where the real runtime crashes (a status it frees twice, a range its replay never checks), the call
runs in a child process, which must die, while ireeabi returns a status.
"""
from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from support import iree_tools as tools
from support.full_hal_oracle import Both, Handle, Str
from ireeabi.tooling.execution_model import MODEL_FLAGS
from ireeabi.base.heap import tracked_heap

TESTS = Path(__file__).resolve().parents[2]  # where a child runs, to import support.full_hal_oracle
PROGRAMS = TESTS / "programs"
DEVICE_LOCAL_TYPE = 0x30
DISPATCH_USAGE = 0xC03


@pytest.fixture
def both():
    with tracked_heap() as heap:
        b = Both(heap)
        yield b
        b.close()  # every reference released: the tracked heap reports any leak


def _same(b: Both) -> None:
    bad = b.mismatches()
    assert not bad, "\n".join(f"{n}{a}: real {r} ours {o}" for n, a, r, o in bad)


def test_devices_and_queries(both):
    """module.c devices.count/get (one device; an index past it is a null ref) and device.query.i64
    over sync_device.c iree_hal_sync_device_query_i64: hal.device.id patterns, the loaders' formats,
    concurrency, hal.cpu, unknown keys (ok = 0); wrong ref types as iree_vm_ref_check reports them."""
    b = both
    dev = b("devices.get", 0)
    b("devices.count")
    b("devices.get", 1)
    b("devices.get", -1)
    for cat, key in [("hal.device.id", "local*"), ("hal.device.id", "local-sync"), ("hal.device.id", "local-task"),
                     ("hal.device.id", "*"), ("hal.device.id", ""), ("hal.device.id", "l?cal-sync"),
                     ("hal.device.id", "*sync"), ("hal.device.id", "LOCAL*"),
                     ("hal.executable.format", "embedded-elf-x86_64"),
                     ("hal.executable.format", "vmvx-bytecode-fb"),
                     ("hal.executable.format", "embedded-elf-arm_64"), ("hal.executable.format", "bogus"),
                     ("hal.device", "concurrency"), ("hal.dispatch", "concurrency"), ("hal.device", "x"),
                     ("hal.cpu", "bogus"), ("bogus", "x"), ("", "")]:
        b("device.query.i64", dev, Str(cat), Str(key), nres=2)
    b("device.query.i64", Str("not a device"), Str("a"), Str("b"), nres=2)
    b("device.query.i64", dev, dev, Str("b"), nres=2)
    b("device.allocator", dev)
    b("device.allocator", Str("x"))
    b("device.queue.flush", dev, -1, nres=0)
    _same(b)


def test_buffers(both):
    """allocator.allocate through the heap allocator's compatibility rules (allocator_heap.c),
    buffer.length/subspan/load/store (module.c, their statuses), buffer.assert's three checks
    (utils/buffer_diagnostics.c, bitfields formatted as iree_bitfield_format_inline does) and the
    preserve count of allocation.preserve/discard/is_terminal (buffer.c), shared by subspans."""
    b = both
    dev = b("devices.get", 0)
    alloc = b("device.allocator", dev)
    buf = b("allocator.allocate", alloc, -1, DEVICE_LOCAL_TYPE, DISPATCH_USAGE, 64)
    host = b("allocator.allocate", alloc, -1, 0x47, 3, 16)
    b("buffer.length", buf)
    b("buffer.length", host)
    b("buffer.length", dev)
    for args in [(64, 16, DISPATCH_USAGE), (65, 16, DISPATCH_USAGE), (64, 0x40, DISPATCH_USAGE),
                 (64, 16, 0x1000), (64, 0x4F, -1), (64, -1, 3)]:
        b("buffer.assert", buf, Str("tensor"), alloc, *args, nres=0)
    b("buffer.assert", host, Str("input0"), alloc, 8, 16, 3, nres=0)
    b("buffer.assert", buf, Str("tensor"), dev, 64, 16, DISPATCH_USAGE, nres=0)
    for off, n in [(8, 16), (60, 16), (0, 64), (64, 0), (0, -1), (65, 0)]:
        b("buffer.subspan", buf, off, n)
    b("buffer.store", 0x11223344, buf, 4, 4, nres=0)
    for off, n in [(4, 4), (5, 2), (4, 1), (4, 0), (4, 5), (62, 4), (64, 0)]:
        b("buffer.load", buf, off, n)
    b("buffer.store", 1, buf, 62, 4, nres=0)
    b("buffer.store", 1, buf, 60, 5, nres=0)
    b("buffer.store", 7, buf, 63, 1, nres=0)
    b("buffer.load", buf, 60, 4)
    b("buffer.allocation.is_terminal", buf)
    b("buffer.allocation.preserve", buf, nres=0)
    sub = b("buffer.subspan", buf, 8, 8)
    b("buffer.allocation.is_terminal", sub)
    b("buffer.allocation.discard", sub)
    b("buffer.allocation.is_terminal", buf)
    b("buffer.allocation.discard", buf)
    b("buffer.allocation.discard", buf)
    b("buffer.allocation.is_terminal", buf)
    b("allocator.allocate", alloc, -1, DEVICE_LOCAL_TYPE, DISPATCH_USAGE, 0)
    _same(b)


def test_allocator_import(both):
    """allocator.import (module.c) over the heap allocator's import_buffer and
    iree_hal_heap_buffer_wrap: a buffer aliasing the vm.buffer's bytes (writes through it show in
    the vm.buffer's memory and back); the byte-range check (offsets printed as device sizes);
    read-only sources only for SHARING_IMMUTABLE usage; data not 64-byte aligned is OUT_OF_RANGE, or
    a null result with try_import."""
    b = both
    dev = b("devices.get", 0)
    alloc = b("device.allocator", dev)
    data = bytes(range(128))
    imported = b("allocator.import", alloc, 0, -1, 0x30, 0xC03, Str(data, 64), 0, -1)
    b("buffer.length", imported)
    b("buffer.load", imported, 4, 4)
    b("buffer.store", 0x01020304, imported, 64, 4, nres=0)
    b("buffer.load", imported, 64, 4)
    inner = b("allocator.import", alloc, 0, -1, 0x30, 0xC03, Str(data, 64), 64, 32)
    b("buffer.length", inner)
    b("buffer.load", inner, 0, 4)
    b("buffer.assert", imported, Str("t"), alloc, 128, 0x30, 0xC03, nres=0)
    b("allocator.import", alloc, 0, -1, 0x30, 0xC03, Str(data, 64), 8, 16)
    b("allocator.import", alloc, 1, -1, 0x30, 0xC03, Str(data, 64), 8, 16)
    b("allocator.import", alloc, 0, -1, 0x30, 0xC03, Str(data, 64, mutable=False), 0, -1)
    ro = b("allocator.import", alloc, 0, -1, 0x30, 0xC03 | (1 << 19), Str(data, 64, mutable=False), 0, -1)
    b("buffer.store", 1, ro, 0, 4, nres=0)
    b("allocator.import", alloc, 0, -1, 0x30, 0xC03, Str(data, 64), 0, 200)
    b("allocator.import", alloc, 0, -1, 0x30, 0xC03, Str(data, 64), -1, 4)
    b("allocator.import", dev, 0, -1, 0x30, 0xC03, Str(data, 64), 0, -1)
    bad = b.mismatches()
    # The misaligned address is printed with %p: the codes and the text before it agree.
    assert [(n, r[0], o[0]) for n, _, r, o in bad] == [("allocator.import", "OUT_OF_RANGE", "OUT_OF_RANGE")]
    assert bad[0][2][1].split(" got ")[0] == bad[0][3][1].split(" got ")[0]


def test_memory_files(both):
    """ex.file.from_memory (module.c: read-only access only, the vm.buffer range checked) and the
    local-sync queue's read/write of a memory file (sync_device.c: access checked, the read range
    against the file's length, the transfer a queue copy through the file's storage buffer), for
    64-byte aligned and unaligned contents."""
    b = both
    dev = b("devices.get", 0)
    alloc = b("device.allocator", dev)
    data = bytes(range(100))
    w = b("fence.create", dev, 0)
    b("fence.signal", w, nres=0)
    for alignment, offset in ((64, 0), (64, 3)):
        f = b("ex.file.from_memory", dev, -1, 1, Str(data, alignment), offset, 64, 0)
        dst = b("allocator.allocate", alloc, -1, 0x30, 0xC03, 32)
        s1 = b("fence.create", dev, 0)
        b("device.queue.read", dev, -1, w, s1, f, 8, dst, 0, 32, 0, nres=0)
        b("fence.query", s1)
        for at in (0, 4, 28):
            b("buffer.load", dst, at, 4)
        s2 = b("fence.create", dev, 0)
        b("device.queue.read", dev, -1, w, s2, f, 40, dst, 0, 32, 0, nres=0)
        b("device.queue.read", dev, -1, w, s2, f, 0, dst, 0, 0, 0, nres=0)
        b("fence.query", s2)
        s3 = b("fence.create", dev, 0)
        b("device.queue.write", dev, -1, w, s3, dst, 0, f, 0, 4, 0, nres=0)
    b("ex.file.from_memory", dev, -1, 3, Str(data, 64), 0, 64, 0)
    b("ex.file.from_memory", dev, -1, 1, Str(data, 64), 90, 64, 0)
    b("ex.file.from_memory", alloc, -1, 1, Str(data, 64), 0, 64, 0)
    _same(b)


def test_channels_and_the_remaining_commands(both):
    """Channels: the local-sync device creates none (UNIMPLEMENTED, as iree.runtime 3.13 answers);
    channel.rank_and_count/split and command_buffer.collective refuse a non-channel; advise_buffer
    and the 3.13 table's flush_buffer/invalidate_buffer record (nothing to do on host memory)."""
    b = both
    dev = b("devices.get", 0)
    alloc = b("device.allocator", dev)
    buf = b("allocator.allocate", alloc, -1, DEVICE_LOCAL_TYPE, DISPATCH_USAGE, 64)
    b("channel.create", dev, -1, 0, Str(""), Str(""), 0, 1)
    b("channel.create", dev, -1, 0, Str("id"), Str("group"), -1, -1)
    b("channel.create", alloc, -1, 0, Str(""), Str(""), 0, 1)
    b("channel.rank_and_count", dev, nres=2)
    b("channel.split", dev, 0, 0, 0)
    cb = b("command_buffer.create", dev, 1, 3, -1, 0)
    b("command_buffer.collective", cb, dev, 0, 0, 0, 0, buf, buf, 0, 4, 0, 4, 1, nres=0)
    b("command_buffer.advise_buffer", cb, buf, 0, 0, 0, 0, nres=0)
    b("command_buffer.flush_buffer", cb, 0, buf, 0, 4, nres=0)
    b("command_buffer.invalidate_buffer", cb, 0, buf, 0, 4, nres=0)
    b("command_buffer.finalize", cb, nres=0)
    _same(b)


def test_fences(both):
    """fence.create (a new semaphore at 0, payload 1), fence.query (DEFERRED = 17 pending, 0
    reached), fence.signal twice (iree_async_semaphore_signal_untainted: "already signaled past"),
    fence.fail then signal (the timeline check ignores the failure)."""
    b = both
    dev = b("devices.get", 0)
    f = b("fence.create", dev, 0)
    b("fence.query", f)
    b("fence.signal", f, nres=0)
    b("fence.query", f)
    b("fence.signal", f, nres=0)
    f2 = b("fence.create", dev, 0)
    b("fence.fail", f2, 13, nres=0)
    b("fence.signal", f2, nres=0)
    b("fence.signal", f2, nres=0)
    b("fence.create", Str("x"), 0)
    b("fence.query", dev)
    _same(b)


def test_command_buffers_and_queues(both):
    """command_buffer.create/finalize and the transfer commands with command_buffer_validation.c's
    record-time checks (state, categories, pattern length and alignment, usage/compatibility,
    binding capacity, overlap), replayed by queue.execute after the submission checks; the queue
    operations of sync_device.c (alloca, dealloca, fill, update, copy, barrier) with their fences."""
    b = both
    dev = b("devices.get", 0)
    alloc = b("device.allocator", dev)
    buf = b("allocator.allocate", alloc, -1, DEVICE_LOCAL_TYPE, DISPATCH_USAGE, 64)
    host = b("allocator.allocate", alloc, -1, 0x47, 3, 16)
    cb = b("command_buffer.create", dev, 1, 3, -1, 0)
    b("command_buffer.finalize", cb, nres=0)
    b("command_buffer.finalize", cb, nres=0)
    b("command_buffer.execution_barrier", cb, 28, 13, 0, nres=0)
    b("command_buffer.fill_buffer", cb, buf, 0, 4, 0, 1, 1, 0, nres=0)
    b("command_buffer.create", dev, 16, 3, -1, 0)
    b("command_buffer.create", dev, 17, 3, -1, 2)
    cb2 = b("command_buffer.create", dev, 1, 3, -1, 0)
    b("command_buffer.fill_buffer", cb2, buf, 0, 16, 0, 0xAB, 1, 0, nres=0)
    b("command_buffer.fill_buffer", cb2, buf, 16, 16, 0, 0x01020304, 4, 0, nres=0)
    b("command_buffer.fill_buffer", cb2, buf, 2, 3, 0, 0x0102, 2, 0, nres=0)
    b("command_buffer.fill_buffer", cb2, buf, 0, 16, 0, 0x0102, 9, 0, nres=0)
    b("command_buffer.fill_buffer", cb2, buf, 0, 16, 0, 0x0102, 3, 0, nres=0)
    b("command_buffer.fill_buffer", cb2, host, 0, 16, 0, 0x0102, 1, 0, nres=0)
    b("command_buffer.update_buffer", cb2, Str(b"0123456789"), 2, buf, 40, 8, 0, 0, nres=0)
    b("command_buffer.update_buffer", cb2, Str(b"0123456789"), 4, buf, 40, 8, 0, 0, nres=0)
    b("command_buffer.copy_buffer", cb2, 0, 0, buf, 0, buf, 48, 8, 0, nres=0)
    b("command_buffer.copy_buffer", cb2, 0, 0, buf, 0, buf, 4, 8, 0, nres=0)
    b("command_buffer.copy_buffer", cb2, 0, 0, host, 0, buf, 4, 8, 0, nres=0)
    b("command_buffer.finalize", cb2, nres=0)
    cb4 = b("command_buffer.create", dev, 1, 3, -1, 0)  # a direct range checked only on replay
    b("command_buffer.fill_buffer", cb4, buf, 60, 16, 0, 1, 1, 0, nres=0)
    b("command_buffer.finalize", cb4, nres=0)
    w = b("fence.create", dev, 0)
    s = b("fence.create", dev, 0)
    b("fence.signal", w, nres=0)
    b("device.queue.execute", dev, -1, w, s, cb2, 0, nres=0)
    b("fence.query", s)
    s0 = b("fence.create", dev, 0)
    b("device.queue.execute", dev, -1, w, s0, cb4, 0, nres=0)  # (a failed fence is never queried)
    for off in (0, 4, 16, 40, 44, 48, 52, 60):
        b("buffer.load", buf, off, 4)
    cb3 = b("command_buffer.create", dev, 1, 3, -1, 0)
    b("device.queue.execute", dev, -1, w, s, cb3, 0, nres=0)
    b("command_buffer.finalize", cb3, nres=0)
    s2 = b("fence.create", dev, 0)
    b("device.queue.execute", dev, -1, w, s2, cb3, 0, nres=0)
    b("device.queue.execute", dev, -1, w, s2, cb3, 0, nres=0)  # its signal is past: the op fails
    s3 = b("fence.create", dev, 0)
    nb = b("device.queue.alloca", dev, -1, w, s3, 0, DEVICE_LOCAL_TYPE, DISPATCH_USAGE, 32, 0)
    b("fence.query", s3)
    b("buffer.length", nb)
    b("device.queue.alloca", dev, -1, w, s3, 1, DEVICE_LOCAL_TYPE, DISPATCH_USAGE, 32, 0)
    s4 = b("fence.create", dev, 0)
    b("device.queue.fill", dev, -1, w, s4, nb, 0, 32, 0x7, 1, 0, nres=0)
    b("buffer.load", nb, 28, 4)
    s5 = b("fence.create", dev, 0)
    b("device.queue.fill", dev, -1, w, s5, nb, 2, 4, 0x7, 4, 0, nres=0)
    b("device.queue.fill", dev, -1, w, s5, nb, 0, 4, 0x7, 3, 0, nres=0)
    s6 = b("fence.create", dev, 0)
    b("device.queue.update", dev, -1, w, s6, Str(b"abcdefgh"), 0, nb, 8, 8, 0, nres=0)
    b("buffer.load", nb, 8, 4)
    s7 = b("fence.create", dev, 0)
    b("device.queue.copy", dev, -1, w, s7, nb, 8, buf, 0, 8, 0, nres=0)
    b("buffer.load", buf, 4, 4)
    s8 = b("fence.create", dev, 0)
    b("device.queue.barrier", dev, -1, w, s8, 0, nres=0)
    b("fence.query", s8)
    s9 = b("fence.create", dev, 0)
    b("device.queue.dealloca", dev, -1, w, s9, nb, 0, nres=0)
    b("fence.query", s9)
    _same(b)


def test_indirect_command_buffer_slots(both):
    """Indirect references (a null buffer and a binding table slot): past the binding capacity at
    record time, then the submission checks of command_buffer.c (no table, a short table) with
    queue.execute (which passes none)."""
    b = both
    dev = b("devices.get", 0)
    cb = b("command_buffer.create", dev, 1, 3, -1, 2)
    alloc = b("device.allocator", dev)
    buf = b("allocator.allocate", alloc, -1, DEVICE_LOCAL_TYPE, DISPATCH_USAGE, 64)
    b("command_buffer.copy_buffer", cb, 0, 5, buf, 0, buf, 32, 8, 0, nres=0)
    b("command_buffer.finalize", cb, nres=0)
    w = b("fence.create", dev, 0)
    b("fence.signal", w, nres=0)
    s = b("fence.create", dev, 0)
    b("device.queue.execute", dev, -1, w, s, cb, 0, nres=0)
    _same(b)


def _rodata_blobs(path: Path) -> list[bytes]:
    dump = tools.dump_module(path)
    return [bytes.fromhex(h) for h in re.findall(r"^vm\.rodata\[\d+\] = ([0-9A-F]+)$", dump, re.M) if len(h) > 512]


@pytest.mark.parametrize("model,fmt", [("llvm-cpu", "embedded-elf-x86_64"), ("vmvx", "vmvx-bytecode-fb")])
def test_executables(both, model, fmt):
    """executable.create of a real kernel image (the one iree-compile put in the module) and
    executable.lookup.function of its exports and of missing names; executable.create of a format
    no loader takes and of bytes no loader can read (module.c, local_executable_cache.c)."""
    import platform
    if model == "llvm-cpu":
        fmt = f"embedded-elf-{platform.machine()}"
    path = tools.compile_with_flags(PROGRAMS / "e2e" / "multi_dispatch.mlir", MODEL_FLAGS[model])
    blob, = _rodata_blobs(path)
    b = both
    dev = b("devices.get", 0)
    exe = b("executable.create", dev, -1, Str(fmt), Str(blob), Str(b""))
    for name in ("normalize_dispatch_0_elementwise_16_f32", "normalize_dispatch_1_reduction_16_f32",
                 "missing", ""):
        b("executable.lookup.function", exe, Str(name))
    b("executable.lookup.function", dev, Str("x"))
    b("executable.create", dev, -1, Str("bogus-format"), Str(b"xx"), Str(b""))
    b("executable.create", dev, -1, Str(fmt), Str(b"x" * 64), Str(b""))
    b("executable.create", dev, -1, Str(fmt), Str(blob), Str(b"abc"))
    bad = b.mismatches()
    # Our bytecode reader words an unreadable vmvx module its own way; the code is IREE's.
    bad = [m for m in bad if not (fmt.startswith("vmvx") and m[0] == "executable.create" and
                                  isinstance(m[2], tuple) and m[2][0] == m[3][0])]
    assert not bad, bad


def test_negative_sizes_are_refused_where_iree_allocates_a_wrapped_slab(both):
    """allocator.allocate of -1 bytes: IREE's heap allocator adds its header to the size, the total
    wraps to a small slab and it returns a buffer that claims 2^64-1 bytes; ireeabi refuses (the
    buffer would overrun its slab)."""
    b = both
    dev = b("devices.get", 0)
    alloc = b("device.allocator", dev)
    b("allocator.allocate", alloc, -1, DEVICE_LOCAL_TYPE, DISPATCH_USAGE, -1)
    (_, _, real, ours), = b.calls[-1:]
    assert real == [("ref", "hal.buffer")]
    assert ours[0] == "REFUSED" and "wraps to" in ours[1]


_CRASH_PRELUDE = textwrap.dedent("""
    from support.full_hal_oracle import RealHal, Str, Handle
    r = RealHal()
    r.call("devices.get", (0,), 1)
    """)


def _real_crashes(body: str) -> subprocess.CompletedProcess:
    """`body` after the prelude in a child, run in tests/ (`python -c` puts that folder on the path)."""
    code = _CRASH_PRELUDE + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=TESTS)


def test_where_the_real_runtime_crashes_ireeabi_reports(both):
    """fence.query of a failed fence kills iree.runtime 3.13's process (the module consumes the
    query's failure status for its code, then ignores the consumed status); ireeabi returns the
    failure's code (13 = INTERNAL). So does an unbalanced end_debug_group."""
    proc = _real_crashes("""
        r.call("fence.create", (Handle(0), 0), 1)
        r.call("fence.fail", (Handle(1), 13), 0)
        print("query", r.call("fence.query", (Handle(1),), 1), flush=True)
        """)
    assert proc.returncode < 0 and "query" not in proc.stdout
    b = both
    dev = b("devices.get", 0)
    f = b("fence.create", dev, 0)
    b("fence.fail", f, 13, nres=0)
    assert b.ours.call("fence.query", (f,), 1) == [13]

    # command_buffer.end_debug_group with no group open kills it too; ireeabi records the depth
    # going to -1 and finalize reports it (command_buffer_validation.c end_validation).
    proc = _real_crashes("""
        r.call("command_buffer.create", (Handle(0), 1, 3, -1, 0), 1)
        print(r.call("command_buffer.end_debug_group", (Handle(1),), 0), flush=True)
        print("done", flush=True)
        """)
    assert proc.returncode < 0 and "done" not in proc.stdout
    assert b.ours.call("command_buffer.create", (dev, 1, 3, -1, 0), 1) == [("ref", "hal.command_buffer")]
    cb = Handle(len(b.ours.results) - 1)
    assert b.ours.call("command_buffer.end_debug_group", (cb,), 0) == []
    assert b.ours.call("command_buffer.finalize", (cb,), 0) == (
        "FAILED_PRECONDITION", "unbalanced debug group depth (expected 0, is -1)")

