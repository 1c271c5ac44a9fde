"""`accumulate`: a native module of one's own, declared once for ireeabi.

Two exports, each with the calling convention a compiled program would import it with:

- `scale(view, factor) -> view` (`0rf_r`): a fixed shim. It takes a hal.buffer_view and an f32
  and returns a new buffer view, every element multiplied by the factor.
- `dot(bias, scale, a, b) -> i64` (`0IiCiDCiD_I`): a variadic shim. After two fixed values (i64,
  i32) come two spans of i32, each packed as a count followed by its elements. It returns
  bias + scale * sum(a[k] * b[k]). Spans of different lengths are INVALID_ARGUMENT.

`native_module()` is the declaration: a program can import it (`Program(..., RunOptions(modules=[...]))`,
`ireeabi run --native-module accumulate`), `inspect --check-imports` can check against it, and
tests run it through the `runtime` fixture.

`prefix_reader_module()` declares the same module with a deliberately wrong shim for `dot`. Its
reader starts the first span at sizeof of the fixed part's C struct `{int64_t; int32_t}` instead
of where the VM packs the first count. That is the hal_loader dispatch bug fixed in IREE #24827.
The struct is 16 bytes wherever int64_t is 8-aligned, but the VM packs the two values in 12.
"""
from __future__ import annotations

import numpy as np

from ireeabi.layouts.modules import ModuleDescriptor
from ireeabi.vm.native_module import Export
from ireeabi.vm.ref import Ref
from ireeabi.vm.shims import CallContext
from ireeabi.base.status import StatusCode, StatusError

NAME = "accumulate"
VERSION = 1


def scale(ctx: CallContext, view: Ref, factor: float) -> Ref:
    """New view = view * factor; `ctx.state` is the runtime's ModuleApi."""
    v = ctx.state.view(view)
    return ctx.state.new_view(v.array() * np.float32(factor))


def dot(ctx: CallContext, bias: int, scale: int, a: list[int], b: list[int]) -> int:
    if len(a) != len(b):
        raise StatusError(StatusCode.INVALID_ARGUMENT, f"span lengths differ: {len(a)} and {len(b)}")
    total = bias + scale * sum(x * y for x, y in zip(a, b))
    return ((total + (1 << 63)) % (1 << 64)) - (1 << 63)  # as int64_t arithmetic wraps


def native_module() -> ModuleDescriptor:
    return ModuleDescriptor(NAME, VERSION, (Export("scale", "0rf_r", scale),
                                            Export("dot", "0IiCiDCiD_I", dot)))


def prefix_reader_module() -> ModuleDescriptor:
    """The same module, `dot` read by the pre-#24827 span reader (form="pre-fix")."""
    return ModuleDescriptor(NAME, VERSION, (Export("scale", "0rf_r", scale),
                                            Export("dot", "0IiCiDCiD_I", dot, form="pre-fix")))
