"""The vmvx module's 2-D elementwise kernels on 32-bit elements, and its copies and fill: the
ukernels of runtime/src/iree/modules/vmvx/elementwise.c (x32b: binary, x32u: unary, on the raw
32-bit words as floats, signed or unsigned ints) as module.c's ukernel shims call them, and module.c's
own copy.2d.x8/x16/x32/x64 and fill.2d.x32.

Each kernel visits (i, j) for i < size0, j < size1 (i outer) at `i * stride0 + j * stride1` of each
operand's mapped span. The shims pass the sizes as the ukernel index type (signed, pointer-sized),
so a size that is negative there visits nothing; the copies loop over host sizes.

Semantics, as the C compiles on the host: float ops in f32 (one rounding each), integer add/sub/mul
wrapping, shifts by the amount modulo 32 (the x86-64 and RISC-V shift instructions; C leaves
>= 32 undefined), division truncating, an integer division by zero or INT_MIN / -1 a trap
(`KernelAccessError`: SIGFPE in the native runtime); abs/neg on the sign bit; exp, log and
rsqrt (1 / sqrtf) through the C math library, as the VM's own f32 math ops (vm/bytecode/numerics);
ctlz of 0 is 32. The ukernels' output is `restrict`: an output overlapping an input other than
element for element is refused (`KernelAccessError`: undefined in C); the copies have no restrict and
run element by element, in order, when they overlap.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...vm.ops import PURE_OPS

from .strided import KernelAccessError, Operand2d

_F32 = np.dtype("<f4")
_I32 = np.dtype("<i4")
_U32 = np.dtype("<u4")


def _as(words: np.ndarray, dt: np.dtype) -> np.ndarray:
    return words.view(dt)


def _libm_f32(name: str) -> Callable[[np.ndarray], np.ndarray]:
    fn = PURE_OPS[name]

    def apply(words: np.ndarray) -> np.ndarray:
        x = _as(words, _F32)
        return np.array([fn(float(v)) for v in x.ravel()], dtype=_F32).reshape(x.shape).view(_U32)
    return apply


def _float_binary(op: Callable) -> Callable[[np.ndarray, np.ndarray, str], np.ndarray]:
    def apply(a: np.ndarray, b: np.ndarray, export: str) -> np.ndarray:
        with np.errstate(all="ignore"):
            return op(_as(a, _F32), _as(b, _F32)).astype(_F32).view(_U32)
    return apply


def _int_binary(op: Callable) -> Callable[[np.ndarray, np.ndarray, str], np.ndarray]:
    def apply(a: np.ndarray, b: np.ndarray, export: str) -> np.ndarray:
        with np.errstate(all="ignore"):
            return op(a, b).astype(_U32)
    return apply


def _divide(signed: bool) -> Callable[[np.ndarray, np.ndarray, str], np.ndarray]:
    def apply(a: np.ndarray, b: np.ndarray, export: str) -> np.ndarray:
        if np.any(b == 0):
            raise KernelAccessError(export, "rhs", "integer division by zero (SIGFPE in the native runtime)")
        if signed:
            x, y = _as(a, _I32).astype(np.int64), _as(b, _I32).astype(np.int64)
            if np.any((x == -(1 << 31)) & (y == -1)):
                raise KernelAccessError(export, "lhs", "signed integer overflow: INT32_MIN / -1 (SIGFPE in "
                                        "the native runtime)")
            q = np.abs(x) // np.abs(y) * np.sign(x) * np.sign(y)  # C truncates toward zero
            return q.astype(np.int64).astype(np.uint32)
        return (a // b).astype(_U32)
    return apply


def _shift(kind: str) -> Callable[[np.ndarray, np.ndarray, str], np.ndarray]:
    def apply(a: np.ndarray, b: np.ndarray, export: str) -> np.ndarray:
        n = (b & 31).astype(_U32)
        if kind == "shl":
            return (a.astype(np.uint64) << n.astype(np.uint64)).astype(np.uint64).astype(_U32) \
                if a.size else a.copy()
        if kind == "shrs":
            return (_as(a, _I32) >> n.astype(_I32)).astype(_I32).view(_U32)
        return (a >> n).astype(_U32)
    return apply


def _ctlz(words: np.ndarray) -> np.ndarray:
    out = np.full(words.shape, 32, dtype=_U32)
    w = words.astype(np.uint64)
    nz = w != 0
    out[nz] = (31 - np.floor(np.log2(w[nz].astype(np.float64)))).astype(_U32)
    return out


def _rsqrt(words: np.ndarray) -> np.ndarray:
    sqrt = PURE_OPS["SqrtF32"]
    x = _as(words, _F32).ravel()
    with np.errstate(all="ignore"):
        roots = np.array([sqrt(float(v)) for v in x], dtype=_F32)
        return (np.float32(1.0) / roots).astype(_F32).reshape(words.shape).view(_U32)


# export name -> the kernel on 32-bit words (binary: (lhs, rhs, export); unary: (in))
BINARY: dict[str, Callable[[np.ndarray, np.ndarray, str], np.ndarray]] = {
    "add.2d.f32": _float_binary(np.add), "sub.2d.f32": _float_binary(np.subtract),
    "mul.2d.f32": _float_binary(np.multiply), "div.2d.f32": _float_binary(np.divide),
    "add.2d.i32": _int_binary(np.add), "sub.2d.i32": _int_binary(np.subtract),
    "mul.2d.i32": _int_binary(np.multiply), "and.2d.i32": _int_binary(np.bitwise_and),
    "or.2d.i32": _int_binary(np.bitwise_or), "xor.2d.i32": _int_binary(np.bitwise_xor),
    "divs.2d.i32": _divide(True), "divu.2d.i32": _divide(False),
    "shl.2d.i32": _shift("shl"), "shrs.2d.i32": _shift("shrs"), "shru.2d.i32": _shift("shru"),
}
UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "abs.2d.f32": lambda w: (w & np.uint32(0x7FFFFFFF)).astype(_U32),
    "neg.2d.f32": lambda w: (w ^ np.uint32(0x80000000)).astype(_U32),
    "ceil.2d.f32": lambda w: np.ceil(_as(w, _F32)).astype(_F32).view(_U32),
    "floor.2d.f32": lambda w: np.floor(_as(w, _F32)).astype(_F32).view(_U32),
    "exp.2d.f32": _libm_f32("ExpF32"), "log.2d.f32": _libm_f32("LogF32"),
    "rsqrt.2d.f32": _rsqrt, "ctlz.2d.i32": _ctlz,
}
COPY_SIZES = {"copy.2d.x8": 1, "copy.2d.x16": 2, "copy.2d.x32": 4, "copy.2d.x64": 8}


def _range(op: Operand2d, idx: np.ndarray) -> tuple[int, int]:
    """The bytes [lo, hi) that `idx` touches in op's span, as addresses."""
    if idx.size == 0:
        return op.address, op.address
    es = op.decl.element_size
    return op.address + int(idx.min()) * es, op.address + (int(idx.max()) + 1) * es


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _same_elements(x: Operand2d, xi: np.ndarray, y: Operand2d, yi: np.ndarray) -> bool:
    """Do x and y visit the same addresses at every (i, j) (an in-place elementwise op)?"""
    es = x.decl.element_size
    return bool(np.array_equal(x.address + xi * es, y.address + yi * es))


def _store(out_array: np.ndarray, out_idx: np.ndarray, values: np.ndarray) -> None:
    """out[idx] = values in loop order: where an output element is visited more than once (an
    output stride of 0), the last visit's value stays, as the C loop leaves it."""
    flat_idx, flat_val = out_idx.ravel(), values.ravel()
    if np.unique(flat_idx).size != flat_idx.size:
        rev = flat_idx[::-1]
        _, first = np.unique(rev, return_index=True)
        flat_idx, flat_val = rev[first], flat_val[::-1][first]
    out_array[flat_idx] = flat_val


def run_binary(heap: Any, export: str, lhs: Operand2d, lhs_idx: np.ndarray, rhs: Operand2d,
               rhs_idx: np.ndarray, out: Operand2d, out_idx: np.ndarray) -> None:
    """One x32b ukernel over the visited elements (indices from Operand2d.indices)."""
    if out_idx.size == 0:
        return
    out_range = _range(out, out_idx)
    for name, op, idx in (("lhs", lhs, lhs_idx), ("rhs", rhs, rhs_idx)):
        if _overlaps(_range(op, idx), out_range) and not _same_elements(op, idx, out, out_idx):
            raise KernelAccessError(export, name, "overlaps the restrict-qualified output other than "
                                    "element for element (undefined in C)")
    a = lhs.array(heap, _U32)[lhs_idx]
    b = rhs.array(heap, _U32)[rhs_idx]
    _store(out.array(heap, _U32), out_idx, BINARY[export](a, b, export))


def run_unary(heap: Any, export: str, src: Operand2d, src_idx: np.ndarray, out: Operand2d,
              out_idx: np.ndarray) -> None:
    """One x32u ukernel over the visited elements."""
    if out_idx.size == 0:
        return
    if _overlaps(_range(src, src_idx), _range(out, out_idx)) and not _same_elements(src, src_idx, out, out_idx):
        raise KernelAccessError(export, "in", "overlaps the restrict-qualified output other than element "
                                "for element (undefined in C)")
    _store(out.array(heap, _U32), out_idx, UNARY[export](src.array(heap, _U32)[src_idx]))


def run_copy(heap: Any, element_size: int, src: Operand2d, src_idx: np.ndarray, out: Operand2d,
             out_idx: np.ndarray) -> None:
    """copy.2d.xN: out[...] = in[...] in loop order (element by element where the two overlap)."""
    if out_idx.size == 0:
        return
    dt = np.dtype(f"<u{element_size}")
    src_array, out_array = src.array(heap, dt), out.array(heap, dt)
    if _overlaps(_range(src, src_idx), _range(out, out_idx)) and not _same_elements(src, src_idx, out, out_idx):
        # Sequential, as the C loop: a later read sees an earlier write.
        src_addr = src.address + src_idx.ravel() * element_size
        out_flat = out_idx.ravel()
        base = out.address
        for k in range(out_flat.size):
            value = heap.read(int(src_addr[k]), element_size)
            heap.write(base + int(out_flat[k]) * element_size, value)
        return
    _store(out_array, out_idx, src_array[src_idx])


def run_fill(heap: Any, value: int, out: Operand2d, out_idx: np.ndarray) -> None:
    """fill.2d.x32: every visited element becomes the 32-bit value."""
    if out_idx.size:
        out.array(heap, _U32)[out_idx.ravel()] = np.uint32(value & 0xFFFFFFFF)


__all__ = ["BINARY", "UNARY", "COPY_SIZES", "run_binary", "run_unary", "run_copy", "run_fill"]
