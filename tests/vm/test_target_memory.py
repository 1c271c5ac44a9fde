"""Runtime memory on all seven data models: structs byte for byte, address spaces, function pointers,
kernels, and the IREE #24827 hazards where the layout rules predict them.

The expected bytes come from the catalog through construct (`views.build`), a builder independent of
the struct codecs the runtime writes with; the catalog itself is checked against the compilers for
every target (test_catalog_oracles.py). Hazard predictions come from `cconv` (the packer rule and
the pre-fix reader, checked against the real packer and the fact sheet's measurements elsewhere).
"""
from __future__ import annotations

import numpy as np
import pytest

from ireeabi.abi import cconv, targets, views
from ireeabi.hal.local import python_executable as PX
from ireeabi.modules.hal.runtime import HalRuntime
from ireeabi.layouts import buffer as LB
from ireeabi.layouts import hal_buffer as HB
from ireeabi.layouts import hal_inline as HI
from ireeabi.layouts import hal_loader as HL
from ireeabi.base import allocator as A
from ireeabi.base import callbacks
from ireeabi.vm import ref as R
from ireeabi.vm.buffer import BufferAccess
from ireeabi.base.heap import HeapError, LeakError, tracked_heap
from ireeabi.vm.ref import Ref
from ireeabi.base.status import IreeFaultError, StatusCode, StatusError
from ireeabi.layouts.hal_inline import StorageWrapperLayout
from ireeabi.layouts.buffer import VmBufferLayout

TARGETS = targets.names()
RW = BufferAccess.MUTABLE | BufferAccess.ORIGIN_HOST
F32 = HB.iree_hal_make_element_type(HB.NumericalType.FLOAT_IEEE, 32)
DISPATCH = HL.export("executable.dispatch").cconv  # 0rIiiiCiDCrIID_v


@pytest.mark.parametrize("target", TARGETS)
def test_vm_buffer_storage_wrapper_and_view_are_the_targets_bytes(target):
    with tracked_heap(target=target) as heap:
        rt = HalRuntime(heap)
        m, host_alloc = heap.machine, rt.inline.host_allocator
        # A VM buffer: one co-allocation, its handle as iree_vm_buffer_t lays it out on the target.
        b = rt.vm_buffers.create(RW, 10)
        prefix = m.view(VmBufferLayout).prefix_size
        want = views.build(LB.iree_vm_buffer_t, target, {
            "ref_object": {"counter": 1}, "access": int(RW | BufferAccess.COALLOCATED),
            "data": {"data": b + prefix, "data_length": 10},
            "allocator": {"self": host_alloc.self, "ctl": host_alloc.ctl}, "storage_module": 0})
        assert heap.read(b, len(want)) == want
        rt.vm_buffers.release(b)
        # A HAL buffer's storage wrapper (hal_inline's buffer.storage) and a buffer view of it.
        buffer = rt.hal_buffers.allocate(24)
        storage = rt.inline.wrap_storage(buffer)
        wrapper = storage.ptr - m.layout(HI.iree_hal_inline_storage_buffer_t).field("vm_buffer").offset
        data = rt.hal_buffers.get(buffer).storage
        want = views.build(HI.iree_hal_inline_storage_buffer_t, target, {
            "host_allocator": {"self": host_alloc.self, "ctl": host_alloc.ctl}, "hal_buffer": buffer,
            "mapping": {"contents": {"data": data, "data_length": 24}, "buffer": buffer,
                        "impl": {"byte_offset": 0, "allowed_access": int(HB.MemoryAccess.ANY),
                                 "is_persistent": 0, "reserved_flags": 0, "reserved": [0]}},
            "vm_buffer": {"ref_object": {"counter": 1}, "access": int(RW),
                          "data": {"data": data, "data_length": 24},
                          "allocator": {"self": wrapper, "ctl": rt.inline._ctl}, "storage_module": 0}})
        assert heap.read(wrapper, len(want)) == want
        view = rt.views.create(buffer, [2, 3], F32, int(HB.EncodingType.DENSE_ROW_MAJOR), host_alloc)
        want = views.build(HB.iree_hal_buffer_view_t, target, {
            "ref_count": 1, "host_allocator": {"self": host_alloc.self, "ctl": host_alloc.ctl},
            "buffer": buffer, "element_type": F32, "encoding_type": int(HB.EncodingType.DENSE_ROW_MAJOR),
            "byte_length": 24, "shape_rank": 2, "shape": []})
        dims = b"".join(d.to_bytes(m.pointer_size, "little") for d in (2, 3))
        assert heap.read(view, len(want) + len(dims)) == want + dims
        assert len(want) == HB.buffer_view_allocation_size(target, 0)
        R.release_value(heap, Ref(view, rt.views.type))
        R.release_value(heap, storage)
        rt.hal_buffers.resources.release(buffer)
        rt.close()


@pytest.mark.parametrize("target", TARGETS)
def test_function_pointers_in_target_memory(target):
    """An allocator's ctl and a ref type's destroy are stored in target memory: real C pointers on
    the host target, handles below the window elsewhere; either way only registered ones are
    called, and a handle is no memory a read may touch."""
    with tracked_heap(target=target) as heap:
        a = A.heap_allocator(heap)
        p = A.malloc(heap, a, 16)  # a call through the ctl pointer
        A.free(heap, a, p)
        if heap.machine.is_host:
            assert isinstance(heap.functions, callbacks.HostFunctions)
        else:
            assert heap.space.code_lo <= a.ctl < heap.space.code_hi == heap.space.base
            with pytest.raises(HeapError, match=f"0x{a.ctl:x} is outside every live allocation"):
                heap.read(a.ctl, 1)
        assert a.ctl <= heap.machine.word_mask
        with pytest.raises(callbacks.FunctionPointerError, match="is not a registered"):
            A.malloc(heap, A.AllocatorT(0, a.ctl + 16 * 4096), 16)
        types = R.TypeRegistry(heap)
        seen: list[int] = []
        t = types.define("probe", seen.append)
        obj = heap.malloc(16)
        heap.write_i32(obj, 1)
        R.release_value(heap, Ref(obj, t.type))  # 1 -> 0: destroy through the stored pointer
        assert seen == [obj]
        heap.free(obj)
        types.close()
        assert not heap.functions.is_registered(t.destroy_fn)


@pytest.mark.parametrize("target", TARGETS)
def test_heap_reports_name_target_addresses(target):
    with tracked_heap(target=target) as heap:
        p = heap.malloc(8)
        assert p + 8 <= heap.space.end and p <= heap.machine.word_mask
        with pytest.raises(HeapError, match=f"access of 1 byte\\(s\\) at 0x{p + 8 + 16:x}"):
            heap.read(p + 8 + 16, 1)  # in the red zone after the block
        heap.free(p)
        with pytest.raises(HeapError, match=f"double free of 0x{p:x}"):
            heap.free(p)
    with pytest.raises(LeakError, match="1 leaked allocation"):
        with tracked_heap(target=target) as heap:
            leaked = heap.malloc(40, tag="leak")
    assert leaked <= heap.machine.word_mask


def _record(d, wg):  # noqa: ANN001, ANN202
    _SEEN.append((tuple(int(c) for c in d.constants), [bytes(b[:4]) for b in d.bindings]))
    return 0


_SEEN: list = []


@pytest.fixture
def python_library():
    PX.register("target.record", {"record": _record})
    yield
    PX.unregister("target.record")


def _dispatch(rt: HalRuntime, constants: list[int], n_bindings: int) -> None:
    """One hal_loader.executable.dispatch through its shim, on Python kernels that record what they
    read from the dispatch state in the target's memory."""
    vmb, heap = rt.vm_buffers, rt.heap
    made = []

    def buffer(data: bytes) -> Ref:
        b = vmb.create(RW, len(data))
        vmb.write_elements(b, 0, data, 1)
        made.append(Ref(b, vmb.type))
        return made[-1]

    try:
        (exe,) = rt.call("hal_loader.executable.load", buffer(PX.FORMAT.encode()),
                         buffer(b"target.record"), R.NULL_REF)
        made.append(exe)
        bindings = [(buffer(bytes([i + 1]) * 8), 0, 8) for i in range(n_bindings)]
        rt.call("hal_loader.executable.dispatch", exe, 0, 1, 1, 1, constants, bindings)
    finally:
        for r in made:
            R.release_value(heap, r)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("counts", [(0, 0), (1, 1), (4, 3), (3, 2), (2, 5)])
def test_loader_dispatch_shim_on_every_target(target, counts, python_library):
    """IREE #24827's loader bug where cconv predicts it: the pre-fix shim reads the spans at
    sizeof(iree_vm_abi_rIiii_t) and aligns bindings to alignof(iree_vm_abi_rII_t); where that reader
    disagrees with the VM's packing for these span counts, the pre-fix run fails (the signature
    mismatch, or a binding read from the wrong bytes is no vm.buffer ref) or hands the kernel other
    values, or reads out of the buffer, where IREE itself would read memory that is not the call's
    or crash (IreeFaultError), and where it agrees (some counts on i386) it reads the buffer right. The one exception
    is measured in the fact sheet: with no constants and no bindings the misplaced count reads land
    on zero bytes, so the pre-fix shim "parses fine". The fixed shim always hands the kernel exactly
    what was packed."""
    n_constants, n_bindings = counts
    constants = [0x100 + i for i in range(n_constants)]
    expected = (tuple(constants), [bytes([i + 1]) * 4 for i in range(n_bindings)])
    frag = cconv.parse(DISPATCH).arguments
    lay = cconv.layout(frag, target, [n_constants, n_bindings])
    pre_fix_misreads = bool(cconv.compare_reader(lay, cconv.span_reader(frag, target, counts, form="pre-fix")))
    for legacy in (False, True):
        _SEEN.clear()
        with tracked_heap(target=target) as heap:
            rt = HalRuntime(heap, legacy_loader=legacy)
            try:
                _dispatch(rt, constants, n_bindings)
                outcome = _SEEN[0] if _SEEN else "no kernel call"
            except StatusError as e:
                assert e.code == StatusCode.INVALID_ARGUMENT, e
                outcome = e.message
            except IreeFaultError as e:  # a misread count sends IREE's reads out of bounds
                assert legacy, e
                outcome = str(e)
            finally:
                rt.close()
        if not legacy or not pre_fix_misreads or counts == (0, 0):
            assert outcome == expected, (target, counts, legacy)
        else:
            assert outcome != expected, (target, counts)


@pytest.mark.parametrize("target", TARGETS)
def test_legacy_inline_and_vm_buffer_bugs_on_every_target(target):
    """The other two #24827 bugs exist on every data model: the pre-fix storage wrapper leaks
    (its allocator and HAL buffer are never recorded), and the pre-fix VM buffer destroy hands an
    in-place handle to free_aligned, which the heap refuses."""
    with pytest.raises(LeakError) as e:
        with tracked_heap(target=target) as heap:
            rt = HalRuntime(heap, legacy_inline=True)
            buffer = rt.hal_buffers.allocate(16)
            R.release_value(heap, rt.inline.wrap_storage(buffer))
            rt.hal_buffers.resources.release(buffer)
            rt.close()
    wrapper = heap.machine.layout(HI.iree_hal_inline_storage_buffer_t).size
    assert wrapper in [a.size for a in e.value.leaks]
    with tracked_heap(target=target) as heap:
        rt = HalRuntime(heap, legacy_vm_buffer=True)
        buffer = rt.hal_buffers.allocate(16)
        storage = rt.inline.wrap_storage(buffer)
        with pytest.raises(HeapError, match=f"free_aligned of 0x{storage.ptr:x}, which malloc_aligned"):
            R.release_value(heap, storage)
        # What the fixed destroy would have done, so the heap closes clean.
        rt.inline._destroy_wrapper(storage.ptr - heap.machine.view(StorageWrapperLayout).vm_buffer_off)
        rt.hal_buffers.resources.release(buffer)
        rt.close()


@pytest.mark.parametrize("target", [t for t in TARGETS if t != "x86_64"])
def test_host_kernels_refuse_other_targets(target):
    """Kernel machine code runs only on the host: a foreign runtime answers query_support for its
    own architecture and refuses to load even a library of that architecture, saying why."""
    from ireeabi.hal.local import elf_executable as X
    with tracked_heap(target=target) as heap:
        rt = HalRuntime(heap)
        assert not X.query_support("embedded-elf-x86_64", rt.machine)
        for fmt in X.formats(rt.machine):
            with pytest.raises(X.ForeignKernelError, match=f"holds {target} machine code"):
                X.load_library(fmt, b"\x7fELF", target=rt.machine)
        rt.close()


def test_numpy_views_of_target_memory():
    """Zero-copy numpy views work on a foreign address space (they see the arena's bytes)."""
    with tracked_heap(target="armv7") as heap:
        rt = HalRuntime(heap)
        b = rt.vm_buffers.create(RW, 16)
        arr = rt.vm_buffers.as_numpy(b, np.float32)
        arr[:] = [1, 2, 3, 4]
        assert heap.read(rt.vm_buffers.data(b), 16) == np.array([1, 2, 3, 4], np.float32).tobytes()
        rt.vm_buffers.release(b)
        rt.close()
