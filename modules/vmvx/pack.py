"""vmvx.pack and vmvx.unpack: module.c's iree_vmvx_pack / iree_vmvx_unpack and the ukernels they
call, iree_uk_pack / iree_uk_unpack (runtime/src/iree/builtins/ukernel/pack.c, pack_tile.c,
unpack.c, unpack_tile.c).

pack copies a 2-D source (in_size0 x in_size1, strides in_stride0/in_stride1) into a grid of tiles
OUT[out_size0][out_size1][out_size2][out_size3]: tile rows out_stride0 apart, tiles within a row
out_size2 * out_size3 apart (the ukernel ignores its out_stride1 argument), each tile row-major.
Source element (r * T0 + t0, c * T1 + t1) goes to tile (r, c) at (t0, t1); elements past the source
are the padding value (its low 8 * element-size bits). TRANSPOSE_INNER (0x100) swaps the tile's two
dimensions (the tile is stored transposed), TRANSPOSE_OUTER (0x200) the grid's (tile (r, c) at grid
position (c, r)). unpack is the inverse without padding: the out_size0 x out_size1 result
(strides out_stride0/out_stride1) takes each element from its tile. Types: pack f32 (0x01), i8
(0x02), i32 (0x03); unpack f32 (0x01), i32 (0x03); others INVALID_ARGUMENT "unhandled flags".

Arguments IREE's ukernels only assert on in debug builds (negative sizes or strides, a source
larger than the tile grid, a tile larger than the 4 KiB scratch buffer when some tile is partial)
make the release build write past the grid or loop forever: refused here (`KernelArgumentError`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...abi.errors import IreeAbiError

from .strided import KernelAccessError, KernelLimitError, MAX_ITERATIONS, Operand2d, signed

TRANSPOSE_INNER = 0x100
TRANSPOSE_OUTER = 0x200
PACK_SIZES = {0x01: 4, 0x02: 1, 0x03: 4}
UNPACK_SIZES = {0x01: 4, 0x03: 4}
TMP_BUF_SIZE = 4096  # iree_uk_pack_tmp_buf_size / the unpack helper's


class KernelArgumentError(IreeAbiError):
    """Arguments a vmvx ukernel asserts on in debug builds only (release builds misbehave)."""

    def __init__(self, export: str, detail: str) -> None:
        self.export = export
        super().__init__(f"vmvx.{export}: {detail} (IREE_UK_ASSERT in debug builds; a release build "
                         f"runs off the tile grid)")


def _ceil_log2(n: int) -> int:
    return 0 if n <= 1 else (n - 1).bit_length()


def _grid(export: str, sizes: tuple[int, int, int, int], flags: int, dense: tuple[int, int],
          host_bits: int) -> tuple[int, int, int, int]:
    """(outer0, outer1, tile0, tile1) in the dense array's orientation, after the transposes; the
    ukernel's debug assertions checked."""
    outer0, outer1, tile0, tile1 = sizes
    if flags & TRANSPOSE_OUTER:
        outer0, outer1 = outer1, outer0
    if flags & TRANSPOSE_INNER:
        tile0, tile1 = tile1, tile0
    if outer0 * tile0 < dense[0] or outer1 * tile1 < dense[1]:
        raise KernelArgumentError(export, f"the {dense[0]}x{dense[1]} array exceeds the tile grid "
                                  f"({outer0}x{tile0} by {outer1}x{tile1})")
    return outer0, outer1, tile0, tile1


def _positions(outer0: int, outer1: int, tile0: int, tile1: int, stride_outer0: int, stride_outer1: int,
               flags: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For every tiled element: its dense row, dense column, and tiled index."""
    r = np.arange(outer0, dtype=np.int64)[:, None, None, None]
    c = np.arange(outer1, dtype=np.int64)[None, :, None, None]
    t0 = np.arange(tile0, dtype=np.int64)[None, None, :, None]
    t1 = np.arange(tile1, dtype=np.int64)[None, None, None, :]
    within = t1 * tile0 + t0 if flags & TRANSPOSE_INNER else t0 * tile1 + t1
    tiled = r * stride_outer0 + c * stride_outer1 + within
    shape = (outer0, outer1, tile0, tile1)
    return (np.broadcast_to(r * tile0 + t0, shape).ravel(), np.broadcast_to(c * tile1 + t1, shape).ravel(),
            np.broadcast_to(tiled, shape).ravel())


def _check(export: str, op: Operand2d, name: str, idx: np.ndarray) -> None:
    elements = op.span_length // op.decl.element_size
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= elements):
        raise KernelAccessError(export, name, f"elements {int(idx.min())}..{int(idx.max())} of a "
                                f"{elements}-element mapping")


def _signed_all(export: str, values: dict[str, int], host_bits: int) -> dict[str, int]:
    out = {k: signed(v, host_bits) for k, v in values.items()}
    for k, v in out.items():
        if v < 0:
            raise KernelArgumentError(export, f"{k} is {v}")
    return out


def _tile_positions(export: str, a: dict[str, int], tiled: str, flat: str, flags: int, element_size: int,
                    host_bits: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The element positions of a pack or unpack: the flat side's row and column and the tiled
    side's index of each element (`tiled`/`flat` name the argument groups, "in" or "out"), and which
    of them fall inside the flat side (the rest is padding), after the ukernel's checks."""
    sizes = (a[f"{tiled}_size0"], a[f"{tiled}_size1"], a[f"{tiled}_size2"], a[f"{tiled}_size3"])
    outer0, outer1, tile0, tile1 = _grid(export, sizes, flags, (a[f"{flat}_size0"], a[f"{flat}_size1"]), host_bits)
    tile_elems = sizes[2] * sizes[3]
    # The scratch-buffer path: a partial tile, a strided flat row, or a tile width that is no
    # power of two (the ukernel's count of whole tiles rounds it up).
    partial = (a[f"{flat}_size0"] < outer0 * tile0 or a[f"{flat}_size1"] < outer1 * tile1
               or a[f"{flat}_stride1"] != 1 or tile1 & (tile1 - 1))
    if partial and TMP_BUF_SIZE >> _ceil_log2(tile_elems * element_size) == 0:
        raise KernelArgumentError(export, f"a {tile0}x{tile1} tile of {element_size}-byte elements does "
                                  f"not fit the {TMP_BUF_SIZE}-byte scratch buffer")
    count = outer0 * outer1 * tile0 * tile1
    if count > MAX_ITERATIONS:
        raise KernelLimitError(export, count)
    stride_l0, stride_l1 = a[f"{tiled}_stride0"], tile_elems
    if flags & TRANSPOSE_OUTER:
        stride_l0, stride_l1 = stride_l1, stride_l0
    rows, cols, tiled_idx = _positions(outer0, outer1, tile0, tile1, stride_l0, stride_l1, flags)
    inside = (rows < a[f"{flat}_size0"]) & (cols < a[f"{flat}_size1"])
    return rows, cols, tiled_idx, inside


def run_pack(heap: Any, src: Operand2d, out: Operand2d, args: dict[str, int], flags: int,
             element_size: int, host_bits: int) -> None:
    """iree_uk_pack on the mapped operands; `args` holds the call's strides and sizes."""
    a = _signed_all("pack", args, host_bits)
    if 0 in (a["out_size0"], a["out_size1"], a["out_size2"], a["out_size3"]):
        return  # iree_uk_pack_early
    rows, cols, tiled, inside = _tile_positions("pack", a, "out", "in", flags, element_size, host_bits)
    src_idx = rows[inside] * a["in_stride0"] + cols[inside] * a["in_stride1"]
    _check("pack", src, "in", src_idx)
    _check("pack", out, "out", tiled)
    dt = np.dtype(f"<u{element_size}")
    values = np.full(tiled.shape, args["padding_value"] & ((1 << (8 * element_size)) - 1), dtype=dt)
    values[inside] = src.array(heap, dt)[src_idx]
    out.array(heap, dt)[tiled] = values


def run_unpack(heap: Any, src: Operand2d, out: Operand2d, args: dict[str, int], flags: int,
               element_size: int, host_bits: int) -> None:
    """iree_uk_unpack on the mapped operands."""
    a = _signed_all("unpack", args, host_bits)
    if a["out_size0"] == 0 or a["out_size1"] == 0:
        return  # iree_uk_unpack_early
    rows, cols, tiled, inside = _tile_positions("unpack", a, "in", "out", flags, element_size, host_bits)
    tiled = tiled[inside]
    dst_idx = rows[inside] * a["out_stride0"] + cols[inside] * a["out_stride1"]
    _check("unpack", src, "in", tiled)
    _check("unpack", out, "out", dst_idx)
    dt = np.dtype(f"<u{element_size}")
    out.array(heap, dt)[dst_idx] = src.array(heap, dt)[tiled]


__all__ = ["run_pack", "run_unpack", "KernelArgumentError", "PACK_SIZES", "UNPACK_SIZES",
           "TRANSPOSE_INNER", "TRANSPOSE_OUTER"]
