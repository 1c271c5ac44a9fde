"""vmvx.mmt4d: module.c's iree_vmvx_mmt4d and the ukernel it calls, iree_uk_mmt4d
(runtime/src/iree/builtins/ukernel/mmt4d.c, mmt4d_tile_generic.c, arch/*/mmt4d_*_entry_point.c).

The operands are row-major 4-D tiles: LHS MxKxM0xK0, RHS NxKxN0xK0, OUT MxNxM0xN0, each with one
outer row stride (elements). The module maps each as a 2-D operand (M rows of K*M0*K0, ...), and
only the f32*f32->f32 and s8*s8->s32 types (flags bits 0..7) are accepted (else INVALID_ARGUMENT
"unhandled flags"). The ukernel returns early for M == 0, N == 0, or K == 0 with ACCUMULATE (0x100);
otherwise each OUT tile is its accumulator (the tile's old value with ACCUMULATE, else 0) plus, in
order over k < K then k0 < K0, lhs[k][i0][k0] * rhs[k][j0][k0].

Floats: the generic tile rounds each product and each sum to f32 (no fused multiply-add: the C as
the x86-64 host compiles it). Where IREE has an architecture tile function for the shape (x86_64 with
AVX2+FMA+F16C: M0 in 1, 2, 4, 8, N0 8, K0 1; with AVX-512: N0 16, M0 up to 16; arm_64: M0 in 1, 2, 4,
8, N0 8, K0 1) the accumulation is fused (one rounding per step), as their FMA instructions do. The
integers accumulate in int32 modulo 2^32 (any order gives the same). Without an architecture tile
and without ALLOW_GENERIC_FALLBACK (0x200) IREE calls a NULL tile function: refused here.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .strided import KernelAccessError, KernelLimitError, MAX_ITERATIONS, Operand2d, signed
from .tile_sizes import UKERNEL_ARCH, x86_64_avx2_fma, x86_64_avx512_base

TYPE_F32F32F32 = 0x01
TYPE_S8S8S32 = 0x02
ACCUMULATE = 0x100
ALLOW_GENERIC_FALLBACK = 0x200


def element_sizes(flags: int) -> tuple[int, int] | None:
    """(input, output) element sizes of the types the module accepts; None for others."""
    t = flags & 0xFF
    return {TYPE_F32F32F32: (4, 4), TYPE_S8S8S32: (1, 4)}.get(t)


def has_arch_tile(machine_name: str, flags: int, m0: int, n0: int, k0: int, cpu_data: Sequence[int]) -> bool:
    """iree_uk_mmt4d_select_tile_func_arch found a tile function (only the f32 ones matter here: the
    integer results do not depend on it)."""
    arch = UKERNEL_ARCH.get(machine_name)
    t = flags & 0xFF
    if arch == "x86_64":
        if t == TYPE_F32F32F32 and k0 == 1:
            if n0 == 8 and m0 in (1, 2, 4, 8) and x86_64_avx2_fma(cpu_data):
                return True
            if n0 == 16 and m0 in (1, 2, 4, 8, 16) and x86_64_avx512_base(cpu_data):
                return True
        if t == TYPE_S8S8S32 and k0 == 2 and n0 == 8 and m0 in (1, 2, 4, 8) and x86_64_avx2_fma(cpu_data):
            return True
        return False
    if arch == "arm_64":
        return t == TYPE_F32F32F32 and k0 == 1 and n0 == 8 and m0 in (1, 2, 4, 8)
    return False


def _fma_f32(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """round_f32(a * b + c) with one rounding: the f32 product is exact in f64; the f64 sum is
    rounded to odd (TwoSum's error term), which makes its rounding to f32 the correct one."""
    p = a.astype(np.float64) * b.astype(np.float64)
    c64 = c.astype(np.float64)
    with np.errstate(all="ignore"):
        s = p + c64
        bb = s - p
        err = (p - (s - bb)) + (c64 - bb)
        bits = s.view(np.int64)
        fix = np.isfinite(s) & np.isfinite(err) & (err != 0) & ((bits & 1) == 0)
        s = np.where(fix, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
        return s.astype(np.float32)


def run(heap: Any, machine_name: str, cpu_data: Sequence[int], lhs: Operand2d, rhs: Operand2d,
        out: Operand2d, m: int, n: int, k: int, m0: int, n0: int, k0: int, flags: int, host_bits: int) -> None:
    """iree_uk_mmt4d on the mapped operands (offsets already in the mappings, as the module calls it)."""
    M, N, K = signed(m, host_bits), signed(n, host_bits), signed(k, host_bits)
    if M == 0 or N == 0 or (K == 0 and flags & ACCUMULATE):
        return
    arch_tile = has_arch_tile(machine_name, flags, m0, n0, k0, cpu_data)
    fused = arch_tile and flags & 0xFF == TYPE_F32F32F32
    if not arch_tile and not flags & ALLOW_GENERIC_FALLBACK:
        raise KernelAccessError("mmt4d", "flags", f"no architecture tile function for {m0}x{n0}x{k0} and "
                                f"ALLOW_GENERIC_FALLBACK (0x200) not set: IREE calls a NULL tile function")
    M, N = signed(M, 32), signed(N, 32)  # the loops' int32 bounds
    M0, N0, K0 = signed(m0, 16), signed(n0, 16), signed(k0, 16)  # the tile's int16 sizes
    if M <= 0 or N <= 0 or M0 <= 0 or N0 <= 0:
        return  # the loops run no tile, or the tiles have no element
    K, K0 = max(K, 0), max(K0, 0)
    work = M * N * M0 * N0 * max(K * K0, 1)
    if work > MAX_ITERATIONS:
        raise KernelLimitError("mmt4d", work)
    ls0, rs0, os0 = (signed(op.decl.stride0, host_bits) for op in (lhs, rhs, out))
    in_dt = np.dtype("<f4") if flags & 0xFF == TYPE_F32F32F32 else np.dtype("i1")
    out_dt = np.dtype("<f4") if flags & 0xFF == TYPE_F32F32F32 else np.dtype("<i4")
    lhs_idx = np.arange(M, dtype=np.int64)[:, None] * ls0 + np.arange(K * M0 * K0, dtype=np.int64)[None, :]
    rhs_idx = np.arange(N, dtype=np.int64)[:, None] * rs0 + np.arange(K * N0 * K0, dtype=np.int64)[None, :]
    out_idx = (np.arange(M, dtype=np.int64)[:, None, None] * os0
               + np.arange(N, dtype=np.int64)[None, :, None] * (M0 * N0)
               + np.arange(M0 * N0, dtype=np.int64)[None, None, :])
    for name, op, idx in (("lhs", lhs, lhs_idx), ("rhs", rhs, rhs_idx), ("out", out, out_idx)):
        elements = op.span_length // op.decl.element_size
        if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= elements):
            raise KernelAccessError("mmt4d", name, f"elements {int(idx.min())}..{int(idx.max())} of a "
                                    f"{elements}-element mapping (M={M} N={N} K={K}, tile {M0}x{N0}x{K0})")
    out_array = out.array(heap, out_dt)
    L = lhs.array(heap, in_dt)[lhs_idx].reshape(M, K, M0, K0)
    R = rhs.array(heap, in_dt)[rhs_idx].reshape(N, K, N0, K0)
    acc0 = out_array[out_idx].reshape(M, N, M0, N0) if flags & ACCUMULATE else np.zeros((M, N, M0, N0), out_dt)
    if out_dt == np.dtype("<i4"):
        # (M, K, M0, K0) x (N, K, N0, K0) -> (M, N, M0, N0), exact in int64, wrapped to int32.
        total = np.einsum("akix,bkjx->abij", L.astype(np.int64), R.astype(np.int64)) + acc0.astype(np.int64)
        result = (total & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
    else:
        acc = acc0.astype(np.float32)
        with np.errstate(all="ignore"):
            for kk in range(K):
                for x in range(K0):
                    a = L[:, None, kk, :, None, x]
                    b = R[None, :, kk, None, :, x]
                    if fused:
                        acc = _fma_f32(np.broadcast_to(a, acc.shape), np.broadcast_to(b, acc.shape), acc)
                    else:
                        acc = (acc + (a * b).astype(np.float32)).astype(np.float32)
        result = acc
    out_array[out_idx.ravel()] = result.reshape(-1)


__all__ = ["run", "element_sizes", "has_arch_tile", "TYPE_F32F32F32", "TYPE_S8S8S32", "ACCUMULATE",
           "ALLOW_GENERIC_FALLBACK"]
