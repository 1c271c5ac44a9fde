"""vmvx.query_tile_sizes.2d: iree_uk_query_tile_sizes_2d (runtime/src/iree/builtins/ukernel/
query_tile_sizes.c and arch/*/query_tile_sizes_*_entry_point.c) on the runtime's architecture.

The flags hold an operation (bits 8..15: a matmul element type) and an operand role (bits 0..7:
LHS, RHS, RESULT). The matmul tile (M, K, N) comes from the architecture's table where it has one
(x86_64: by the AVX2+FMA+F16C / AVX-512 / AVX-512 VNNI bits of the runtime's CPU data; arm_64 and
riscv_64 from theirs) and is otherwise the generic 8x4x8; the role picks (M, K), (N, K) or (M, N).
Which architecture a data model's runtime has: x86_64, aarch64 (arm_64), riscv64 (riscv_64); the
other data models build the generic ukernels only. A non-matmul operation or an unknown role leaves
IREE's output uninitialized: refused here (`TileQueryError`).
"""
from __future__ import annotations

from typing import Sequence

from ...abi.errors import IreeAbiError

MATMUL_F32F32F32 = 0x0100
MATMUL_I8I8I32 = 0x0200
MATMUL_OPS = frozenset({0x0100, 0x0200, 0x0300, 0x0400, 0x0500, 0x0600})
ROLE_LHS, ROLE_RHS, ROLE_RESULT = 1, 2, 3

# x86-64 CPU data word 0 bits (runtime/src/iree/schemas/cpu_feature_bits.inl)
_X86_AVX2_FMA = (1 << 15) | (1 << 11) | (1 << 14)  # avx2, fma, f16c
_X86_AVX512_BASE = (1 << 20) | (1 << 24) | (1 << 23) | (1 << 22) | (1 << 21)  # f, bw, dq, vl, cd
_X86_AVX512_VNNI = 1 << 28

UKERNEL_ARCH = {"x86_64": "x86_64", "aarch64": "arm_64", "riscv64": "riscv_64"}


class TileQueryError(IreeAbiError):
    """A query_tile_sizes.2d whose flags IREE's ukernel does not answer (its output left unset)."""

    def __init__(self, flags: int, detail: str) -> None:
        self.flags = flags
        super().__init__(f"vmvx.query_tile_sizes.2d: flags 0x{flags:X}: {detail}; IREE returns "
                         f"uninitialized tile sizes")


def x86_64_avx2_fma(cpu_data: Sequence[int]) -> bool:
    return bool(cpu_data) and cpu_data[0] & _X86_AVX2_FMA == _X86_AVX2_FMA


def x86_64_avx512_base(cpu_data: Sequence[int]) -> bool:
    return x86_64_avx2_fma(cpu_data) and cpu_data[0] & _X86_AVX512_BASE == _X86_AVX512_BASE


def _matmul_tile(arch: str | None, op: int, cpu_data: Sequence[int]) -> tuple[int, int, int]:
    """(M, K, N) for a matmul operation on `arch`."""
    if arch == "x86_64":
        if op == MATMUL_F32F32F32:
            if x86_64_avx512_base(cpu_data):
                return 16, 1, 16
            return (8, 1, 8) if x86_64_avx2_fma(cpu_data) else (8, 1, 4)
        if op == MATMUL_I8I8I32:
            if x86_64_avx512_base(cpu_data) and cpu_data[0] & _X86_AVX512_VNNI:
                return 16, 2, 16
            return (8, 2, 8) if x86_64_avx2_fma(cpu_data) else (8, 2, 4)
    elif arch == "arm_64":
        if op in (MATMUL_F32F32F32, MATMUL_I8I8I32):
            return 8, 1, 8  # ireeabi's CPU data has no arm_64 dotprod / i8mm bits
    elif arch == "riscv_64":
        if op == MATMUL_F32F32F32:
            return 8, 1, 8  # nor the V extension
        if op == MATMUL_I8I8I32:
            return 8, 4, 8
    return 8, 4, 8  # iree_uk_query_matmul_tile_sizes_generic


def query_tile_sizes_2d(machine_name: str, flags: int, cpu_data: Sequence[int]) -> tuple[int, int]:
    """(tile_size0, tile_size1) for the operation and role in `flags`."""
    flags &= 0xFFFFFFFF
    op, role = flags & 0xFF00, flags & 0xFF
    if op not in MATMUL_OPS:
        raise TileQueryError(flags, f"operation 0x{op:X} is not a matmul")
    m, k, n = _matmul_tile(UKERNEL_ARCH.get(machine_name), op, cpu_data)
    if role == ROLE_LHS:
        return m, k
    if role == ROLE_RHS:
        return n, k
    if role == ROLE_RESULT:
        return m, n
    raise TileQueryError(flags, f"operand role {role} is none of LHS (1), RHS (2), RESULT (3)")


__all__ = ["TileQueryError", "query_tile_sizes_2d", "x86_64_avx2_fma", "x86_64_avx512_base",
           "UKERNEL_ARCH"]
