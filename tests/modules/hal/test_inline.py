"""hal_inline's exports through packed arguments, and the storage wrapper before and after IREE #24827."""
import numpy as np
import pytest

from ireeabi.modules.hal.runtime import HalRuntime
from ireeabi.layouts import hal_buffer as HB
from ireeabi.layouts import hal_inline as HI
from ireeabi.layouts.buffer import BufferAccess
from ireeabi.vm import ref as R
from ireeabi.base.heap import HeapError, LeakError, tracked_heap
from ireeabi.base.status import StatusCode, StatusError

from ireeabi.base.machine import host as _host_machine

HOST_M = _host_machine()  # the data model of the default (host) heap

F32 = HB.iree_hal_make_element_type(HB.NumericalType.FLOAT_IEEE, 32)
I32 = HB.iree_hal_make_element_type(HB.NumericalType.INTEGER, 32)
SI32 = HB.iree_hal_make_element_type(HB.NumericalType.INTEGER_SIGNED, 32)
DENSE = 1  # IREE_HAL_ENCODING_TYPE_DENSE_ROW_MAJOR


def test_every_export_is_registered_with_ireees_cconv(session):
    m = session.rt.inline.module
    assert [(e.name, e.cconv) for e in m.exports] == [(e.name, e.cconv) for e in HI.EXPORTS]
    assert m.version == 0 and m.name == "hal_inline"


def test_allocate_length_storage(session):
    buf, storage = session.allocate(40)
    assert session.call("hal_inline.buffer.length", buf) == [40]
    vmb = session.rt.vm_buffers
    assert vmb.length(storage.ptr) == 40
    assert vmb.access(storage.ptr) == BufferAccess.ORIGIN_HOST | BufferAccess.MUTABLE
    assert not vmb.is_coallocated(storage.ptr)  # initialized in place inside the wrapper
    view = vmb.as_numpy(storage.ptr, np.int32)
    view[:] = np.arange(10)
    (again,) = session.call("hal_inline.buffer.storage", buf)  # a new wrapper over the same bytes
    assert again.ptr != storage.ptr
    np.testing.assert_array_equal(vmb.as_numpy(again.ptr, np.int32), np.arange(10))


def test_allocate_initialized_and_bounds(session):
    src = session.bytes_buffer(bytes(range(32)))
    buf, storage = session.call("hal_inline.buffer.allocate.initialized", 16, src, 8, 16)
    assert session.rt.heap.read(session.rt.vm_buffers.data(storage.ptr), 16) == bytes(range(8, 24))
    with pytest.raises(StatusError) as e:
        session.call("hal_inline.buffer.allocate.initialized", 16, src, 24, 16)
    assert e.value.status.code == StatusCode.OUT_OF_RANGE


def test_subspan_and_wrap(session):
    buf, _ = session.allocate(64)
    (sub,) = session.call("hal_inline.buffer.subspan", buf, 16, 32)
    assert session.call("hal_inline.buffer.length", sub) == [32]
    with pytest.raises(StatusError, match="invalid subspan of an existing buffer") as e:
        session.call("hal_inline.buffer.subspan", buf, 48, 32)
    assert e.value.status.code == StatusCode.OUT_OF_RANGE
    with pytest.raises(StatusError) as e:
        session.call("hal_inline.buffer.wrap", session.bytes_buffer(b"x" * 8), 0, 8)
    assert e.value.status.code == StatusCode.UNIMPLEMENTED
    with pytest.raises(StatusError, match="ref type mismatch"):
        session.call("hal_inline.buffer.wrap", buf, 0, 8)


def test_buffer_views(session):
    buf, _ = session.allocate(2 * 3 * 4)
    (view,) = session.call("hal_inline.buffer_view.create", buf, 0, 24, F32, DENSE, [2, 3])
    assert session.call("hal_inline.buffer_view.rank", view) == [2]
    assert session.call("hal_inline.buffer_view.element_type", view) == [F32]
    assert session.call("hal_inline.buffer_view.encoding_type", view) == [DENSE]
    assert session.call("hal_inline.buffer_view.dim", view, 1) == [3]
    assert session.call("hal_inline.buffer_view.dim", view, 5) == [0]  # index > rank
    (b,) = session.call("hal_inline.buffer_view.buffer", view)
    assert b == buf
    assert session.rt.views.byte_length(view.ptr) == 24
    msg = session.bytes_buffer(b"input0")
    session.call("hal_inline.buffer_view.assert", view, msg, F32, DENSE, [2, 3])
    with pytest.raises(StatusError, match="input0 shape dimension 1 mismatch"):
        session.call("hal_inline.buffer_view.assert", view, msg, F32, DENSE, [2, 4])
    with pytest.raises(StatusError, match="input0 shape rank mismatch"):
        session.call("hal_inline.buffer_view.assert", view, msg, F32, DENSE, [6])
    with pytest.raises(StatusError, match="element type mismatch"):
        session.call("hal_inline.buffer_view.assert", view, msg, I32, DENSE, [2, 3])
    with pytest.raises(StatusError, match="encoding mismatch"):
        session.call("hal_inline.buffer_view.assert", view, msg, F32, 7, [2, 3])
    with pytest.raises(StatusError) as e:
        session.call("hal_inline.buffer_view.create", buf, 0, 24, F32, DENSE, [1] * 129)
    assert e.value.status.code == StatusCode.OUT_OF_RANGE
    session.call("hal_inline.buffer_view.trace", msg, [view, view])


def test_integer_element_types_of_one_width_are_compatible(session):
    buf, _ = session.allocate(16)
    (view,) = session.call("hal_inline.buffer_view.create", buf, 0, 16, SI32, DENSE, [4])
    session.call("hal_inline.buffer_view.assert", view, session.bytes_buffer(b"x"), I32, DENSE, [4])


def test_view_subspan_when_not_whole(session):
    buf, _ = session.allocate(64)
    (view,) = session.call("hal_inline.buffer_view.create", buf, 16, 32, F32, DENSE, [8])
    (b,) = session.call("hal_inline.buffer_view.buffer", view)
    assert b != buf and session.call("hal_inline.buffer.length", b) == [32]


def test_device_query(session):
    # Keys are the LLVM feature names of IREE's cpu_feature_bits.inl; the host's answer is its
    # /proc/cpuinfo flag, read independently here.
    flags = set(next(line for line in open("/proc/cpuinfo") if line.startswith("flags")).split(":")[1].split())
    cat = session.bytes_buffer(b"hal.cpu")
    for key, flag in [("avx2", "avx2"), ("sse3", "pni"), ("sse4.1", "sse4_1"), ("avx512f", "avx512f")]:
        got = session.call("hal_inline.device.query.i64", cat, session.bytes_buffer(key.encode()))
        assert got == [1, int(flag in flags)], key
    unknown = session.bytes_buffer(b"no-such-feature")
    assert session.call("hal_inline.device.query.i64", cat, unknown) == [0, 0]  # NOT_FOUND -> ok 0
    avx2 = session.bytes_buffer(b"avx2")
    assert session.call("hal_inline.device.query.i64", session.bytes_buffer(b"hal.other"), avx2) == [0, 0]
    session.rt.cpu_data[0] ^= 1 << 15  # the answer comes from the processor data words
    assert session.call("hal_inline.device.query.i64", cat, avx2) == [1, int("avx2" not in flags)]


def test_storage_wrapper_fixed_is_clean():
    with tracked_heap() as heap:
        rt = HalRuntime(heap)
        buf, storage = rt.call("hal_inline.buffer.allocate", 64, 256)
        # ours + the wrapper's hal_buffer retain + the SCOPED mapping's retain
        assert rt.hal_buffers.resources.counter(buf.ptr) == 3
        R.release_value(heap, storage)  # the VM buffer's destroy frees the wrapper through its ctl
        assert rt.hal_buffers.resources.counter(buf.ptr) == 1
        R.release_value(heap, buf)
        rt.close()  # tracked_heap raises LeakError here if anything was left


def test_storage_wrapper_pre_fix_leak_is_reported():
    # Before the fix: the wrapper never recorded its allocator or buffer, and VM buffer destroy handed
    # the in-place handle to free_aligned. The tracked heap refuses that free (the handle was not
    # aligned-allocated) and the wrapper with its mapping stays live: a reported leak.
    with pytest.raises((HeapError, LeakError)) as e:
        with tracked_heap() as heap:
            rt = HalRuntime(heap, legacy_inline=True, legacy_vm_buffer=True)
            buf, storage = rt.call("hal_inline.buffer.allocate", 64, 256)
            try:
                R.release_value(heap, storage)
            finally:
                R.release_value(heap, buf)
    assert "free_aligned" in str(e.value) or "leak" in str(e.value).lower()


def test_storage_wrapper_pre_fix_wrapper_alone_leaks():
    # Only the wrapper half of the bug (VM buffer destroy fixed): FREE reaches the wrapper's ctl, the
    # mapping is released, but the wrapper cannot free itself.
    with pytest.raises(LeakError) as e:
        with tracked_heap() as heap:
            rt = HalRuntime(heap, legacy_inline=True)
            buf, storage = rt.call("hal_inline.buffer.allocate", 64, 256)
            R.release_value(heap, storage)
            assert rt.hal_buffers.resources.counter(buf.ptr) == 1  # mapping retain dropped
            R.release_value(heap, buf)
            rt.close()
    sizes = [a.size for a in e.value.leaks]
    assert HOST_M.layout(HI.iree_hal_inline_storage_buffer_t).size in sizes
