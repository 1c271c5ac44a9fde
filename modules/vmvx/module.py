"""IREE's `vmvx` native module (runtime/src/iree/modules/vmvx/module.c, its export table
exports.inl): the microkernels that vmvx kernels compiled with `--iree-vmvx-enable-microkernels`
import, as a native module of ireeabi on any data model.

IREE registers it in the context of every vmvx executable (hal/local/loaders/vmvx_module_loader.c)
and, for a program that depends on `vmvx` itself (inline-static with vmvx-inline),
iree-run-module's module resolver (tooling/modules/resolver.c) adds it: here `HalRuntime` puts one
on every runtime (modules/hal/runtime.py), which serves both.

"vmvx", version 0, 32 exports with exports.inl's calling conventions (each `0<args>_<results>`):

    <op>.2d.<type>       x32b binary  rIIIrIIIrIIIII_v  (lhs, rhs, out: buffer, offset, stride0,
                                                         stride1; size0, size1)
    <op>.2d.<type>       x32u unary   rIIIrIIIII_v      (in, out; size0, size1)
    copy.2d.x8/16/32/64               rIIIrIIIII_v
    fill.2d.x32                       irIIII_v          (value, out, offset, row stride, size0, size1)
    mmt4d                             rIIrIIrIIIIIiiii_v
    pack                              rIIIrIIIIIIIIIIi_v
    unpack                            rIIIrIIIIIIIIIi_v
    query_tile_sizes.2d               IIi_II

Every buffer operand is checked and mapped as module.c's MAP_BUFFER_2D macros do, in the order the
C declares them (modules/vmvx/strided.py), before its kernel runs on the mapped spans in the
program's heap; a ukernel's non-zero return (an unknown opcode, which the table never passes) would
be INVALID_ARGUMENT. The kernels: modules/vmvx/elementwise.py, mmt4d.py, pack.py, tile_sizes.py.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ...vm.buffer import BufferType
from ...base.heap import Heap
from ...vm.native_module import Export, NativeModule
from ...vm.ref import Ref
from ...vm.shims import CallContext
from ...base.status import StatusCode, StatusError

from . import elementwise, mmt4d, pack, tile_sizes
from .strided import declare_2d, map_2d

VMVX_MODULE_NAME = "vmvx"
VMVX_MODULE_VERSION = 0  # IREE_VMVX_MODULE_VERSION_LATEST

X32B_CCONV = "0rIIIrIIIrIIIII_v"
X32U_CCONV = "0rIIIrIIIII_v"
UNARY2D_CCONV = "0rIIIrIIIII_v"
FILL2D_CCONV = "0irIIII_v"
MMT4D_CCONV = "0rIIrIIrIIIIIiiii_v"
PACK_CCONV = "0rIIIrIIIIIIIIIIi_v"
UNPACK_CCONV = "0rIIIrIIIIIIIIIi_v"
QUERY_TILE_SIZES_CCONV = "0IIi_II"


class VmvxState:
    """What the module's functions use: the runtime's heap, its vm.buffer type, and its CPU data
    (iree_cpu_data_fields: the query and the mmt4d tile selection read it)."""

    def __init__(self, heap: Heap, vm_buffers: BufferType, cpu_data: Sequence[int]) -> None:
        self.heap = heap
        self.vm_buffers = vm_buffers
        self.cpu_data = tuple(cpu_data)
        self.machine_name = heap.machine.name
        self.host_bits = heap.machine.pointer_size * 8


def _operand(state: VmvxState, export: str, name: str, element_size: int, ref: Ref, offset: int,
             stride0: int, stride1: int, size0: int, size1: int, *, writable: bool) -> Any:
    decl = declare_2d(name, element_size, offset, stride0, stride1, size0, size1, state.host_bits)
    return map_2d(state.vm_buffers, ref, decl, writable=writable)


def _x32b(export: str) -> Callable[..., None]:
    def call(ctx: CallContext, lhs_ref: Ref, lhs_offset: int, lhs_s0: int, lhs_s1: int, rhs_ref: Ref,
             rhs_offset: int, rhs_s0: int, rhs_s1: int, out_ref: Ref, out_offset: int, out_s0: int,
             out_s1: int, size0: int, size1: int) -> None:
        st: VmvxState = ctx.state
        lhs = _operand(st, export, "lhs", 4, lhs_ref, lhs_offset, lhs_s0, lhs_s1, size0, size1, writable=False)
        rhs = _operand(st, export, "rhs", 4, rhs_ref, rhs_offset, rhs_s0, rhs_s1, size0, size1, writable=False)
        out = _operand(st, export, "out", 4, out_ref, out_offset, out_s0, out_s1, size0, size1, writable=True)
        s0, s1 = (_index(v, st) for v in (out.decl.size0, out.decl.size1))
        idx = [op.indices(export, s0, s1, _index(op.decl.stride0, st), _index(op.decl.stride1, st))
               for op in (lhs, rhs, out)]
        elementwise.run_binary(st.heap, export, lhs, idx[0], rhs, idx[1], out, idx[2])
    return call


def _x32u(export: str) -> Callable[..., None]:
    def call(ctx: CallContext, in_ref: Ref, in_offset: int, in_s0: int, in_s1: int, out_ref: Ref,
             out_offset: int, out_s0: int, out_s1: int, size0: int, size1: int) -> None:
        st: VmvxState = ctx.state
        src = _operand(st, export, "in", 4, in_ref, in_offset, in_s0, in_s1, size0, size1, writable=False)
        out = _operand(st, export, "out", 4, out_ref, out_offset, out_s0, out_s1, size0, size1, writable=True)
        s0, s1 = (_index(v, st) for v in (out.decl.size0, out.decl.size1))
        idx = [op.indices(export, s0, s1, _index(op.decl.stride0, st), _index(op.decl.stride1, st))
               for op in (src, out)]
        elementwise.run_unary(st.heap, export, src, idx[0], out, idx[1])
    return call


def _index(value: int, st: VmvxState) -> int:
    """A host size as the ukernels' signed, pointer-sized index type holds it."""
    bits = st.host_bits
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _copy(export: str, element_size: int) -> Callable[..., None]:
    def call(ctx: CallContext, in_ref: Ref, in_offset: int, in_s0: int, in_s1: int, out_ref: Ref,
             out_offset: int, out_s0: int, out_s1: int, size0: int, size1: int) -> None:
        st: VmvxState = ctx.state
        src = _operand(st, export, "in", element_size, in_ref, in_offset, in_s0, in_s1, size0, size1,
                       writable=False)
        out = _operand(st, export, "out", element_size, out_ref, out_offset, out_s0, out_s1, size0, size1,
                       writable=True)
        # The copy loops run over host sizes (unsigned); strides wrap modulo the address space, as
        # negative ones there.
        s0, s1 = out.decl.size0, out.decl.size1
        idx = [op.indices(export, s0, s1, _index(op.decl.stride0, st), _index(op.decl.stride1, st))
               for op in (src, out)]
        elementwise.run_copy(st.heap, element_size, src, idx[0], out, idx[1])
    return call


def _fill(ctx: CallContext, value: int, out_ref: Ref, out_offset: int, row_stride: int, size0: int,
          size1: int) -> None:
    st: VmvxState = ctx.state
    out = _operand(st, "fill.2d.x32", "out", 4, out_ref, out_offset, row_stride, 1, size0, size1, writable=True)
    idx = out.indices("fill.2d.x32", out.decl.size0, out.decl.size1, _index(out.decl.stride0, st), 1)
    elementwise.run_fill(st.heap, value, out, idx)


def _mmt4d(ctx: CallContext, lhs_ref: Ref, lhs_offset: int, lhs_row_stride: int, rhs_ref: Ref,
           rhs_offset: int, rhs_row_stride: int, out_ref: Ref, out_offset: int, out_row_stride: int,
           m: int, n: int, k: int, m0: int, n0: int, k0: int, flags: int) -> None:
    st: VmvxState = ctx.state
    mask = (1 << st.host_bits) - 1
    flags &= 0xFFFFFFFF
    sizes = mmt4d.element_sizes(flags)
    if sizes is None:
        raise StatusError(StatusCode.INVALID_ARGUMENT, "unhandled flags")
    in_es, out_es = sizes
    M, N, K = m & mask, n & mask, k & mask  # (iree_host_size_t) casts
    M0, N0, K0 = m0 & mask, n0 & mask, k0 & mask  # int32 -> size_t: sign-extended, then wrapped
    lhs = _operand(st, "mmt4d", "lhs", in_es, lhs_ref, lhs_offset, lhs_row_stride, 1, M,
                   (K * ((M0 * K0) & mask)) & mask, writable=False)
    rhs = _operand(st, "mmt4d", "rhs", in_es, rhs_ref, rhs_offset, rhs_row_stride, 1, N,
                   (K * ((N0 * K0) & mask)) & mask, writable=False)
    out = _operand(st, "mmt4d", "out", out_es, out_ref, out_offset, out_row_stride, 1, M,
                   (N * ((M0 * N0) & mask)) & mask, writable=True)
    mmt4d.run(st.heap, st.machine_name, st.cpu_data, lhs, rhs, out, M, N, K, m0, n0, k0, flags, st.host_bits)


def _pack(ctx: CallContext, in_ref: Ref, in_offset: int, in_s0: int, in_s1: int, out_ref: Ref,
          out_offset: int, out_s0: int, out_s1: int, in_size0: int, in_size1: int, out_size0: int,
          out_size1: int, out_size2: int, out_size3: int, padding_value: int, flags: int) -> None:
    st: VmvxState = ctx.state
    flags &= 0xFFFFFFFF
    es = pack.PACK_SIZES.get(flags & 0xFF)
    if es is None:
        raise StatusError(StatusCode.INVALID_ARGUMENT, "unhandled flags")
    tile = (out_size2 * out_size3) & ((1 << st.host_bits) - 1)
    src = _operand(st, "pack", "in", es, in_ref, in_offset, in_s0, in_s1, in_size0, in_size1, writable=False)
    out = _operand(st, "pack", "out", es, out_ref, out_offset, out_s0, 1, out_size0, out_size1 * tile,
                   writable=True)
    args = dict(in_stride0=in_s0, in_stride1=in_s1, out_stride0=out_s0, out_stride1=out_s1,
                in_size0=in_size0, in_size1=in_size1, out_size0=out_size0, out_size1=out_size1,
                out_size2=out_size2, out_size3=out_size3)
    pack.run_pack(st.heap, src, out, {**args, "padding_value": padding_value}, flags, es, st.host_bits)


def _unpack(ctx: CallContext, in_ref: Ref, in_offset: int, in_s0: int, in_s1: int, out_ref: Ref,
            out_offset: int, out_s0: int, out_s1: int, in_size0: int, in_size1: int, in_size2: int,
            in_size3: int, out_size0: int, out_size1: int, flags: int) -> None:
    st: VmvxState = ctx.state
    flags &= 0xFFFFFFFF
    es = pack.UNPACK_SIZES.get(flags & 0xFF)
    if es is None:
        raise StatusError(StatusCode.INVALID_ARGUMENT, "unhandled flags")
    tile = (in_size2 * in_size3) & ((1 << st.host_bits) - 1)
    src = _operand(st, "unpack", "in", es, in_ref, in_offset, in_s0, 1, in_size0, in_size1 * tile, writable=False)
    out = _operand(st, "unpack", "out", es, out_ref, out_offset, out_s0, out_s1, out_size0, out_size1,
                   writable=True)
    args = dict(in_stride0=in_s0, in_stride1=in_s1, out_stride0=out_s0, out_stride1=out_s1,
                in_size0=in_size0, in_size1=in_size1, in_size2=in_size2, in_size3=in_size3,
                out_size0=out_size0, out_size1=out_size1)
    pack.run_unpack(st.heap, src, out, args, flags, es, st.host_bits)


def _query_tile_sizes(ctx: CallContext, size0: int, size1: int, flags: int) -> tuple[int, int]:
    st: VmvxState = ctx.state
    return tile_sizes.query_tile_sizes_2d(st.machine_name, flags, st.cpu_data)


def exports() -> list[Export]:
    """The module's export table (exports.inl's names and calling conventions)."""
    table = [Export(name, X32B_CCONV, _x32b(name)) for name in elementwise.BINARY]
    table += [Export(name, X32U_CCONV, _x32u(name)) for name in elementwise.UNARY]
    table += [Export(name, UNARY2D_CCONV, _copy(name, size)) for name, size in elementwise.COPY_SIZES.items()]
    table += [Export("fill.2d.x32", FILL2D_CCONV, _fill), Export("mmt4d", MMT4D_CCONV, _mmt4d),
              Export("pack", PACK_CCONV, _pack), Export("unpack", UNPACK_CCONV, _unpack),
              Export("query_tile_sizes.2d", QUERY_TILE_SIZES_CCONV, _query_tile_sizes)]
    return table


def create_vmvx_module(heap: Heap, vm_buffers: BufferType, cpu_data: Sequence[int]) -> NativeModule:
    """iree_vmvx_module_create on a runtime's heap: the native module, its state made of the
    runtime's vm.buffer type and CPU data."""
    return NativeModule(heap, VMVX_MODULE_NAME, exports(), version=VMVX_MODULE_VERSION,
                        state=VmvxState(heap, vm_buffers, cpu_data), sort=True)


__all__ = ["VMVX_MODULE_NAME", "VMVX_MODULE_VERSION", "VmvxState", "exports", "create_vmvx_module"]
