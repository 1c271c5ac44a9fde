"""Fuzzing every export of the full `hal` module (modules/hal/module.py), as the vm fuzzers do for the
shims (tests/vm/test_vm_fuzz.py): each case runs on its own tracked heap with a HalRuntime whose
`hal` module holds real objects of every HAL type (device, allocator, buffers, a view, fences,
command buffers recording and ended, a vmvx executable, vm.buffers).

- whole calls through the VM packer: every argument a real ref of any type (so most are of the
  wrong type), a forged ref word, or an interesting scalar; span counts 0..3;
- raw bytes: random and truncated argument buffers handed straight to the export's shim.

A case passes when it ends in success or an ireeabi exception (never another exception, never a
hang), and when, after everything it made is released, the heap holds nothing: no leak, no double
release. Deterministic (derandomized hypothesis, bounded example counts).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support import iree_tools as tools
from ireeabi.abi import cconv
from ireeabi.abi.errors import IreeAbiError
from ireeabi.modules.hal.runtime import HalRuntime
from ireeabi.layouts import hal_module as HM
from ireeabi.tooling.execution_model import MODEL_FLAGS
from ireeabi.vm import ref as R
from ireeabi.vm.buffer import BufferAccess
from ireeabi.base.heap import tracked_heap
from ireeabi.vm.ref import NULL_REF, Ref
from ireeabi.vm.shims import CALL_BEGIN, ByteSpan, CallContext

from test_hal_module_fidelity import PROGRAMS, _rodata_blobs

CASES = {"calls": 1000, "raw": 500}
SETTINGS = dict(derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
EXPORTS = HM.EXPORTS
SCALARS = [0, 1, 2, 3, 4, 7, 16, 64, -1, -2, 0x7FFFFFFF, -0x80000000, 0xFFFFFFFF, 1 << 40, -(1 << 63),
           (1 << 63) - 1, 0x30, 0xC03, 17]


@lru_cache(maxsize=None)
def vmvx_kernels() -> bytes:
    path = tools.compile_with_flags(PROGRAMS / "e2e" / "multi_dispatch.mlir", MODEL_FLAGS["vmvx"])
    blob, = _rodata_blobs(path)
    return blob


class World:
    """A tracked heap, a HalRuntime with the full HAL, and a pool of live objects of every type."""

    def __init__(self, with_executable: bool) -> None:
        self._cm = tracked_heap()
        self.heap = self._cm.__enter__()
        self.mark = self.heap.mark()
        self.rt = HalRuntime(self.heap, full_hal=True)
        self.owned: list = []
        call = self.call
        dev, = call("devices.get", 0)
        alloc, = call("device.allocator", dev)
        buf, = call("allocator.allocate", alloc, -1, 0x30, 0xC03, 64)
        small, = call("allocator.allocate", alloc, -1, 0x47, 3, 8)
        view = self.rt.api.new_view(np.arange(4, dtype=np.float32))
        self.owned.append(view)
        f1, = call("fence.create", dev, 0)
        f2, = call("fence.create", dev, 0)
        call("fence.signal", f2)
        cb1, = call("command_buffer.create", dev, 1, 3, -1, 4)
        cb2, = call("command_buffer.create", dev, 0, 3, -1, 2)
        call("command_buffer.fill_buffer", cb2, buf, 0, 16, 0, 1, 1, 0)
        call("command_buffer.finalize", cb2)
        text = self.vm_buffer(b"local*")
        data = self.vm_buffer(bytes(range(32)))
        self.pool = [NULL_REF, dev, alloc, buf, small, view, f1, f2, cb1, cb2, text, data]
        if with_executable:
            fmt = self.vm_buffer(b"vmvx-bytecode-fb")
            blob = self.vm_buffer(vmvx_kernels())
            exe, = call("executable.create", dev, -1, fmt, blob, NULL_REF)
            self.pool.append(exe)
        t = [r.type for r in self.pool if r.type]
        b = buf.ptr
        # Forged refs the VM or the module can tell apart: a null pointer with a type, another live
        # object's pointer under a type (HAL objects all count at offset 0: balanced), pointers to no
        # allocation and unregistered type words. (An interior pointer under a registered type is
        # memory corruption IREE cannot see either: its counter write lands in the object.)
        self.forged = [Ref(0, t[0]), Ref(b, dev.type), Ref(dev.ptr, 3), Ref(0xDEADBEEF, buf.type),
                       Ref(b, 0x12345678), Ref(f1.ptr, buf.type), Ref(cb1.ptr, view.type)]

    def call(self, name: str, *args: object) -> list:
        out = self.rt.call(f"hal.{name}", *args)
        self.owned.extend(r for r in out if isinstance(r, Ref) and r.ptr)
        return out

    def vm_buffer(self, data: bytes) -> Ref:
        vmb = self.rt.vm_buffers
        b = vmb.create(BufferAccess.MUTABLE | BufferAccess.ORIGIN_HOST, len(data))
        if data:
            vmb.write_elements(b, 0, data, 1)
        ref = Ref(b, vmb.type)
        self.owned.append(ref)
        return ref

    def close(self) -> None:
        try:
            for r in reversed(self.owned):
                R.release_value(self.heap, r)
            self.rt.close()
            assert self.heap.leaks(self.mark) == []
        finally:
            self._cm.__exit__(None, None, None)


def _values(frag: cconv.Fragment, picks: list[int], counts: list[int], world: World) -> list:
    it = iter(picks * 50)

    def value(char: str) -> object:
        k = next(it)
        if char == "r":
            if k % 5 == 0:
                return world.forged[k % len(world.forged)]
            return world.pool[k % len(world.pool)]
        return float(k) if char in "fF" else SCALARS[k % len(SCALARS)]

    out, spans = [], iter(counts * 4)
    for item in frag.items:
        if isinstance(item, cconv.Value):
            out.append(value(item.char))
        else:
            n = next(spans)
            chars = list(item.text)
            out.append([value(chars[0]) if len(chars) == 1 else tuple(value(c) for c in chars) for _ in range(n)])
    return out


@settings(max_examples=CASES["calls"], **SETTINGS)
@given(which=st.integers(0, len(EXPORTS) - 1), picks=st.lists(st.integers(0, 1 << 16), min_size=24, max_size=24),
       counts=st.lists(st.integers(0, 3), min_size=2, max_size=2), executable=st.booleans())
def test_fuzz_every_export_with_hostile_calls(which: int, picks: list[int], counts: list[int],
                                             executable: bool) -> None:
    export = EXPORTS[which]
    world = World(executable and "dispatch" in export.name or "executable" in export.name)
    try:
        frag = cconv.parse(export.cconv).arguments
        args = _values(frag, picks, counts, world)
        try:
            results = world.rt.call(f"hal.{export.name}", *args)
        except IreeAbiError:
            return
        for r in results:
            if isinstance(r, Ref) and r.ptr:
                R.release_value(world.heap, r)
        # A recorded command buffer replays what was recorded into it: execute the fuzzed ones.
        dev, cb1 = world.pool[1], world.pool[8]
        f = world.call("fence.create", dev, 0)[0]
        try:
            world.call("command_buffer.finalize", cb1)
            world.call("device.queue.execute.indirect", dev, -1, world.pool[7], f, cb1, 0,
                       [(world.pool[3], 0, 64)] * 4)
        except IreeAbiError:
            pass
    finally:
        world.close()


@settings(max_examples=CASES["raw"], **SETTINGS)
@given(which=st.integers(0, len(EXPORTS) - 1), data=st.binary(max_size=160),
       rets=st.one_of(st.none(), st.integers(0, 32)), real_refs=st.booleans())
def test_fuzz_every_shim_with_raw_bytes(which: int, data: bytes, rets: int | None, real_refs: bool) -> None:
    """Random argument bytes (with real ref words planted at the ref slots, or not) into the
    export's shim: only ireeabi errors; the objects' counters end where they began."""
    export = EXPORTS[which]
    world = World(False)
    module = world.rt.hal.module
    heap = world.heap
    try:
        ordinal = module.lookup(export.name)
        lay = cconv.layout(cconv.parse(export.cconv).arguments, heap.machine.target,
                           tuple(0 for _ in cconv.parse(export.cconv).arguments.spans))
        raw = bytearray(data)
        if real_refs:
            for i, v in enumerate(x for x in lay.values if x.kind == "ref"):
                ref = world.pool[1 + i % (len(world.pool) - 1)]
                if v.offset + 2 * heap.pointer_size <= len(raw):
                    raw[v.offset:v.offset + heap.pointer_size] = ref.ptr.to_bytes(heap.pointer_size, "little")
                    raw[v.offset + heap.pointer_size:v.offset + 2 * heap.pointer_size] = \
                        ref.type.to_bytes(heap.pointer_size, "little")
        res_size = cconv.layout(cconv.parse(export.cconv).results, heap.machine.target).size
        n_rets = res_size if rets is None else rets
        before = [heap.read_i32(r.ptr) for r in world.pool[1:]]
        a = heap.malloc(max(len(raw), 1), tag="fuzz arguments")
        r = heap.malloc(max(n_rets, 1), tag="fuzz results")
        try:
            heap.write(a, bytes(raw))
            try:
                module.shims[ordinal](CallContext(heap, module, module.state), CALL_BEGIN,
                                      ByteSpan(a, len(raw)), ByteSpan(r, n_rets), export_function(module, ordinal))
            except IreeAbiError:
                pass
            else:  # results written: the refs among them belong to the caller
                for v in cconv.layout(cconv.parse(export.cconv).results, heap.machine.target).values:
                    if v.kind == "ref" and n_rets == res_size:
                        ptr = int.from_bytes(heap.read(r + v.offset, heap.pointer_size), "little")
                        typ = int.from_bytes(heap.read(r + v.offset + heap.pointer_size, heap.pointer_size),
                                             "little")
                        if ptr:
                            R.release_value(heap, Ref(ptr, typ))
        finally:
            heap.free(r)
            heap.free(a)
        after = [heap.read_i32(r.ptr) for r in world.pool[1:]]
        # Recording retains buffers and the executable; nothing else may move a counter.
        if "command_buffer" not in export.name:
            assert after == before, export.name
    finally:
        world.close()


def export_function(module, ordinal: int):  # noqa: ANN001, ANN201
    return module.exports[ordinal].function


def test_the_fuzzers_reach_every_export():
    """Every export of the 3.13 table is a case of both fuzzers (the strategies index the table)."""
    assert len(EXPORTS) == 60 and len({e.name for e in EXPORTS}) == 60
    assert [e.name for e in EXPORTS] == sorted(e.name for e in EXPORTS)
