"""The full `hal` module's exports that the real runtime cannot be driven through from Python (spans:
iree_vm_invoke passes no variadic segments) and the dispatch path, each against the IREE function the
docstring cites (runtime/src/iree/modules/hal/module.c unless named otherwise), on LP64 and ILP32.

The fixed-signature exports are compared with iree.runtime's own module in
test_hal_module_fidelity.py; whole programs in tests/tooling/test_default_model.py.
"""
from __future__ import annotations

import struct

import numpy as np
import pytest

from support import iree_tools as tools
from ireeabi.modules.hal.runtime import HalRuntime
from ireeabi.layouts import hal_module as HM
from ireeabi.tooling.execution_model import MODEL_FLAGS
from ireeabi.vm import ref as R
from ireeabi.vm.buffer import BufferAccess
from ireeabi.base.heap import tracked_heap
from ireeabi.vm.ref import NULL_REF, Ref
from ireeabi.base.status import StatusCode, StatusError

from test_hal_module_fidelity import PROGRAMS, _rodata_blobs

AFFINE = "affine_dispatch_0_elementwise_D_f32"  # push_constants.mlir: y = x * s + t, 4 constants


class Hal:
    """A HalRuntime with the full HAL on a tracked heap; every ref it hands out is released at close."""

    def __init__(self, heap) -> None:  # noqa: ANN001
        self.heap = heap
        self.rt = HalRuntime(heap, full_hal=True)
        self.owned: list[Ref] = []
        self.dev = self("devices.get", 0)[0]
        self.alloc = self("device.allocator", self.dev)[0]

    def __call__(self, name: str, *args: object) -> list:
        out = self.rt.call(f"hal.{name}", *args)
        self.owned.extend(r for r in out if isinstance(r, Ref) and r.ptr)
        return out

    def text(self, data: "str | bytes") -> Ref:
        raw = data.encode() if isinstance(data, str) else data
        vmb = self.rt.vm_buffers
        b = vmb.create(BufferAccess.MUTABLE | BufferAccess.ORIGIN_HOST, len(raw))
        if raw:
            vmb.write_elements(b, 0, raw, 1)
        ref = Ref(b, vmb.type)
        self.owned.append(ref)
        return ref

    def buffer(self, data: bytes, usage: int = 0xC03) -> Ref:
        buf = self("allocator.allocate", self.alloc, -1, 0x30, usage, len(data))[0]
        self.heap.write(self.rt.hal_buffers.get(buf.ptr).storage, data)
        return buf

    def read(self, buf: Ref) -> bytes:
        b = self.rt.hal_buffers.get(buf.ptr)
        return self.heap.read(b.storage, b.byte_length)

    def signalled_fence(self) -> Ref:
        f = self("fence.create", self.dev, 0)[0]
        self("fence.signal", f)
        return f

    def close(self) -> None:
        for r in reversed(self.owned):
            R.release_value(self.heap, r)
        self.rt.close()


@pytest.fixture(params=[None, "riscv32"], ids=["host", "riscv32"])
def hal(request):
    with tracked_heap(target=request.param) as heap:
        mark = heap.mark()
        h = Hal(heap)
        yield h
        h.close()
        assert heap.leaks(mark) == []


@pytest.fixture(scope="module")
def affine_kernels() -> bytes:
    path = tools.compile_with_flags(PROGRAMS / "e2e" / "push_constants.mlir", MODEL_FLAGS["vmvx"])
    blob, = _rodata_blobs(path)
    return blob


def test_export_table_is_the_installed_runtimes():
    """layouts.hal_module.EXPORTS: iree.runtime 3.13's `hal` module, name for name (in its sorted
    order) and cconv for cconv; the module version the compiler requires (`hal, version >= 7`)."""
    import iree.runtime as rt
    real = rt.create_hal_module(rt.VmInstance(), rt.get_device("local-sync"))
    theirs = [(n, repr(real.lookup_function(n)).split("(")[1].split(")")[0]) for n in real.function_names]
    assert theirs == [(e.name, e.cconv) for e in HM.EXPORTS]
    assert HM.IREE_HAL_MODULE_VERSION_LATEST == 7
    assert [e.name for e in HM.VARIADIC_EXPORTS] == [e.name for e in HM.EXPORTS if "C" in e.cconv]


# -- fences ----------------------------------------------------------------------------------------


def test_fence_join(hal):
    """iree_hal_module_fence_join: every entry checked first (null or a fence); no timepoints at all
    gives a null fence; the joined fence holds each semaphore once at the larger value
    (iree_hal_fence_insert), so it is reached only when every input is."""
    a = hal("fence.create", hal.dev, 0)[0]
    b = hal("fence.create", hal.dev, 0)[0]
    assert hal("fence.join", 0, []) == [NULL_REF]
    assert hal("fence.join", 0, [NULL_REF, NULL_REF]) == [NULL_REF]
    with pytest.raises(StatusError, match="ref type mismatch"):
        hal("fence.join", 0, [a, hal.dev])
    j = hal("fence.join", 0, [a, NULL_REF, b, a])[0]
    payload = hal.rt.hal.semaphores.fences.payload(j.ptr)
    assert len(payload.timepoints) == 2
    assert hal("fence.query", j) == [int(StatusCode.DEFERRED)]
    hal("fence.signal", a)
    assert hal("fence.query", j) == [int(StatusCode.DEFERRED)]
    hal("fence.signal", b)
    assert hal("fence.query", j) == [0]


def test_fence_await(hal):
    """iree_hal_module_fence_await: reached and null fences elide (0); more than 32 fences is
    IREE_VM_ABI_VLA_STACK_DEREF_OR_NULL's OUT_OF_RANGE; a failed fence gives its status; a pending
    fence with a finite timeout ends in DEADLINE_EXCEEDED (returned as the code) — nothing else can
    signal it — and with the infinite timeout (-1) IREE would block forever: ireeabi raises."""
    done = hal.signalled_fence()
    pending = hal("fence.create", hal.dev, 0)[0]
    assert hal("fence.await", -1, 0, [done, NULL_REF]) == [0]
    assert hal("fence.await", -1, 0, []) == [0]
    with pytest.raises(StatusError, match=r"count 33 of iree_hal_fence > 32"):
        hal("fence.await", -1, 0, [done] * 33)
    assert hal("fence.await", 0, 0, [done, pending]) == [int(StatusCode.DEADLINE_EXCEEDED)]
    assert hal("fence.await", 100, 0, [pending]) == [int(StatusCode.DEADLINE_EXCEEDED)]
    with pytest.raises(StatusError) as e:
        hal("fence.await", -1, 0, [pending])
    assert e.value.code == StatusCode.DEADLINE_EXCEEDED and "block forever" in e.value.message
    failed = hal("fence.create", hal.dev, 0)[0]
    hal("fence.fail", failed, int(StatusCode.ABORTED))
    with pytest.raises(StatusError) as e:
        hal("fence.await", -1, 0, [done, failed])
    assert e.value.code == StatusCode.ABORTED


def test_queue_operations_wait_for_their_wait_fence(hal):
    """sync_device.c queue_op_begin waits on the wait fence with an infinite timeout: with one
    thread, a fence nobody signalled is an error here, and the signal fence is left untouched."""
    pending = hal("fence.create", hal.dev, 0)[0]
    signal = hal("fence.create", hal.dev, 0)[0]
    with pytest.raises(StatusError) as e:
        hal("device.queue.alloca", hal.dev, -1, pending, signal, 0, 0x30, 0xC03, 16, 0)
    assert e.value.code == StatusCode.FAILED_PRECONDITION and "queue.alloca waits on a fence" in e.value.message
    assert hal("fence.query", signal) == [int(StatusCode.DEFERRED)]
    # A null wait fence (or a ref of another type: iree_hal_fence_deref) waits for nothing.
    buf = hal("device.queue.alloca", hal.dev, -1, NULL_REF, hal.dev, 0, 0x30, 0xC03, 16, 0)[0]
    assert hal("buffer.length", buf) == [16]


def test_allocator_select(hal):
    """iree_hal_module_allocator_select without a device policy: the first (device, affinity);
    none is INVALID_ARGUMENT; the first must be a device."""
    assert hal("allocator.select", 0x30, 0xC03, 0, [(hal.dev, 5), (hal.dev, 7)]) == [hal.dev, 5]
    with pytest.raises(StatusError, match="at least one device/queue affinity pair must be provided"):
        hal("allocator.select", 0x30, 0xC03, 0, [])
    with pytest.raises(StatusError, match="ref type mismatch"):
        hal("allocator.select", 0x30, 0xC03, 0, [(hal.alloc, 5)])


def test_buffer_views_are_the_shared_utilities(hal):
    """buffer_view.create/assert/buffer/rank/dim/element_type (module.c) are the same code as the
    inline module's (utils/buffer_diagnostics.c): a view over a subspan, its fields, the assert's
    element type message."""
    buf = hal.buffer(bytes(range(64)))
    view = hal("buffer_view.create", buf, 16, 32, 0x20000020, 1, [2, 4])[0]
    assert hal("buffer_view.rank", view) == [2]
    assert hal("buffer_view.dim", view, 1) == [4]
    assert hal("buffer_view.element_type", view) == [0x20000020]
    inner = hal("buffer_view.buffer", view)[0]
    assert hal("buffer.length", inner) == [32]
    hal("buffer_view.assert", view, hal.text("x"), 0x20000020, 1, [2, 4])
    with pytest.raises(StatusError, match="x element type mismatch"):
        hal("buffer_view.assert", view, hal.text("x"), 0x21000020, 1, [2, 4])


# -- dispatch --------------------------------------------------------------------------------------


def _affine(hal: Hal, kernels: bytes) -> tuple[Ref, int]:
    exe = hal("executable.create", hal.dev, -1, hal.text("vmvx-bytecode-fb"), hal.text(kernels), NULL_REF)[0]
    fid, = hal("executable.lookup.function", exe, hal.text(AFFINE))
    return exe, fid


def _constants(s: float, t: float, n: int) -> list[int]:
    bits = lambda f: struct.unpack("<i", struct.pack("<f", f))[0]  # noqa: E731
    return [bits(s), bits(t), n & 0xFFFFFFFF, n >> 32]


def _execute(hal: Hal, cb: Ref, table: list | None = None) -> None:
    signal = hal("fence.create", hal.dev, 0)[0]
    if table is None:
        hal("device.queue.execute", hal.dev, -1, hal.signalled_fence(), signal, cb, 0)
    else:
        hal("device.queue.execute.indirect", hal.dev, -1, hal.signalled_fence(), signal, cb, 0, table)
    assert hal("fence.query", signal) == [0]


def test_dispatch_reads_both_spans_and_runs_the_kernel(hal, affine_kernels):
    """command_buffer.dispatch (`0rrIiiiICiDCiirIID_v`, two spans read by the custom shim): the
    four constants and both bindings reach the vmvx kernel (vmvx_module_loader.c issue_call), on
    LP64 and ILP32; direct bindings and binding-table slots give the same result."""
    exe, fid = _affine(hal, affine_kernels)
    x = np.linspace(-2, 3, 37, dtype=np.float32)
    src, dst = hal.buffer(x.tobytes()), hal.buffer(bytes(4 * 37))
    cb = hal("command_buffer.create", hal.dev, 1, 3, -1, 0)[0]
    hal("command_buffer.dispatch", cb, exe, fid, 1, 1, 1, 0, _constants(2.5, -1.0, 37),
        [(0, 0, src, 0, 4 * 37), (0, 0, dst, 0, 4 * 37)])
    hal("command_buffer.finalize", cb)
    _execute(hal, cb)
    expected = (x * np.float32(2.5) + np.float32(-1.0)).astype(np.float32)
    assert np.frombuffer(hal.read(dst), np.float32).tobytes() == expected.tobytes()
    # The same through binding table slots (reusable command buffer, as the compiler records __init's).
    out2 = hal.buffer(bytes(4 * 37))
    cb2 = hal("command_buffer.create", hal.dev, 0, 3, -1, 2)[0]
    hal("command_buffer.dispatch", cb2, exe, fid, 1, 1, 1, 0, _constants(2.5, -1.0, 37),
        [(0, 1, NULL_REF, 0, 4 * 37), (0, 0, NULL_REF, 0, 4 * 37)])
    hal("command_buffer.finalize", cb2)
    _execute(hal, cb2, [(out2, 0, -1), (src, 0, -1)])
    assert hal.read(out2) == expected.tobytes()
    with pytest.raises(StatusError, match="indirect command buffer requires at least 2 bindings but only 1"):
        _execute(hal, cb2, [(out2, 0, -1)])


def test_dispatch_checks(hal, affine_kernels):
    """The record-time checks (module.c: more than 32 bindings; command_buffer_validation.c) and the
    inline command buffer's at replay (inline_command_buffer.c: function id range, exact constant
    and binding counts, NULL bindings); a failed execution fails its signal fence."""
    exe, fid = _affine(hal, affine_kernels)
    src, dst = hal.buffer(bytes(16)), hal.buffer(bytes(16))
    binds = [(0, 0, src, 0, 16), (0, 0, dst, 0, 16)]
    cb = hal("command_buffer.create", hal.dev, 1, 3, -1, 0)[0]
    with pytest.raises(StatusError, match="binding count 33 > 32"):
        hal("command_buffer.dispatch", cb, exe, fid, 1, 1, 1, 0, [], [(0, 0, src, 0, 4)] * 33)
    with pytest.raises(StatusError, match="ref type mismatch"):
        hal("command_buffer.dispatch", cb, hal.dev, fid, 1, 1, 1, 0, [], binds)
    transfer_only = hal("command_buffer.create", hal.dev, 1, 1, -1, 0)[0]
    with pytest.raises(StatusError, match="operation requires categories DISPATCH but command buffer only "
                                          "supports TRANSFER"):
        hal("command_buffer.dispatch", transfer_only, exe, fid, 1, 1, 1, 0, [], binds)
    cases = [
        ((5, 1, 1, 1, 0, _constants(1, 0, 4), binds), StatusCode.OUT_OF_RANGE, "function id 5 out of range (count: 1)"),
        ((fid, 1, 1, 1, 0, _constants(1, 0, 4)[:3], binds), StatusCode.INVALID_ARGUMENT,
         "constant count mismatch, expected 4 but was provided 3"),
        ((fid, 1, 1, 1, 0, _constants(1, 0, 4), binds[:1]), StatusCode.INVALID_ARGUMENT,
         "binding count mismatch, expected 2 but was provided 1"),
    ]
    for args, code, message in cases:
        c = hal("command_buffer.create", hal.dev, 1, 3, -1, 0)[0]
        hal("command_buffer.dispatch", c, exe, *args)
        hal("command_buffer.finalize", c)
        signal = hal("fence.create", hal.dev, 0)[0]
        with pytest.raises(StatusError) as e:
            hal("device.queue.execute", hal.dev, -1, hal.signalled_fence(), signal, c, 0)
        assert (e.value.code, e.value.message) == (code, message)
        with pytest.raises(StatusError) as failed:  # the signal fence failed with the same status
            hal("fence.await", 0, 0, [signal])
        assert failed.value.code == code
    # A binding-table slot with no table: resolved to NULL, refused by the replay.
    c = hal("command_buffer.create", hal.dev, 1, 3, -1, 2)[0]
    hal("command_buffer.dispatch", c, exe, fid, 1, 1, 1, 0, _constants(1, 0, 4),
        [(0, 0, NULL_REF, 0, 16), (0, 1, NULL_REF, 0, 16)])
    hal("command_buffer.finalize", c)
    with pytest.raises(StatusError, match="indirect command buffer requires at least 2 bindings but no binding "
                                          "table was provided"):
        _execute(hal, c)


def test_dispatch_indirect_reads_the_workgroup_count_buffer(hal, affine_kernels):
    """command_buffer.dispatch.indirect (`0rrIirIICiDCiirIID_v`): the workgroup counts come from
    three uint32 in a buffer when the command runs (inline_command_buffer.c); the buffer must allow
    DISPATCH_INDIRECT_PARAMETERS and its offset be 4-aligned (command_buffer_validation.c)."""
    exe, fid = _affine(hal, affine_kernels)
    x = np.arange(8, dtype=np.float32)
    src, dst = hal.buffer(x.tobytes()), hal.buffer(bytes(32))
    plain = hal.buffer(struct.pack("<4I", 0, 1, 1, 1))
    counts = hal.buffer(struct.pack("<4I", 0, 1, 1, 1), 0xC03 | 0x100)  # + DISPATCH_INDIRECT_PARAMETERS
    cb = hal("command_buffer.create", hal.dev, 1, 3, -1, 0)[0]
    with pytest.raises(StatusError, match="operation requires DISPATCH_INDIRECT_PARAMETERS"):
        hal("command_buffer.dispatch.indirect", cb, exe, fid, 0, plain, 4, 0, _constants(3, 1, 8),
            [(0, 0, src, 0, 32), (0, 0, dst, 0, 32)])
    with pytest.raises(StatusError, match="workgroup count offset does not match the required natural alignment"):
        hal("command_buffer.dispatch.indirect", cb, exe, fid, 0, counts, 2, 0, _constants(3, 1, 8),
            [(0, 0, src, 0, 32), (0, 0, dst, 0, 32)])
    hal("command_buffer.dispatch.indirect", cb, exe, fid, 0, counts, 4, 0, _constants(3, 1, 8),
        [(0, 0, src, 0, 32), (0, 0, dst, 0, 32)])
    hal("command_buffer.finalize", cb)
    _execute(hal, cb)
    assert hal.read(dst) == (x * 3 + 1).astype(np.float32).tobytes()


@pytest.mark.parametrize("target", ["x86_64", "riscv32", "i386"])
def test_dispatch_exports_read_their_spans_as_module_c(target):
    """The runtime's command_buffer.dispatch[.indirect] shims read their spans in module.c's form
    (layouts.hal_module_dispatch.IREE_FORM: constants at sizeof of the fixed struct, bindings at its
    C alignment): a buffer the VM packs with two constants and one binding decodes to them where
    `ireeabi check` calls the site latent, and not on i386, where it calls it live."""
    from ireeabi.layouts import hal_module_dispatch as HMD
    from ireeabi.vm import call as C

    with tracked_heap(target=target) as heap:
        rt = HalRuntime(heap, full_hal=True)
        try:
            module = rt.hal.module
            for s in HMD.SHIMS:
                ordinal = module.lookup(s.export)
                shim = module.shims[ordinal]
                assert shim.form == HMD.IREE_FORM
                items = module.exports[ordinal].signature.arguments.items
                fixed = [NULL_REF if getattr(it, "char", "") == "r" else 7 for it in items[:-2]]
                args = fixed + [[(1,), (2,)], [(3, 4, NULL_REF, 0, 8)]]
                buf = C.pack_arguments(heap, module.exports[ordinal].signature.arguments, args)
                try:
                    try:
                        (read,) = shim.decode_arguments(heap, 0, buf.span)
                        right = read.constant_count == 2 and read.constants(2) == [1, 2] and \
                            read.binding_count == 1 and [tuple(b) for b in read.bindings()] == [(3, 4, NULL_REF, 0, 8)]
                    except StatusError:
                        right = False
                finally:
                    C.release_arguments(buf)
                assert right == (HMD.sizeof_site(s, target).state == "latent"), (target, s.export)
        finally:
            rt.close()
