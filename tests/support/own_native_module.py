"""A native module of one's own for tests/modules/test_native_modules.py (`mymod`): found by
`--native-module support.own_native_module` (its `native_module`), or by a tiny installed distribution's
entry point in the discovery test. Its implementations use only the public ModuleApi."""
from __future__ import annotations

import numpy as np

from ireeabi.layouts.modules import ModuleDescriptor
from ireeabi.vm.native_module import Export


def _scale(ctx, view, factor):
    """A new view: the elements times `factor` (f32), same shape and element type."""
    v = ctx.state.view(view)
    return ctx.state.new_view(v.array() * np.float32(factor), v.element_type)


def _byte_sum(ctx, buffer):
    """1000 * the buffer's length + the sum of its bytes."""
    b = ctx.state.buffer(buffer)
    return 1000 * b.length + int(b.data.astype(np.int64).sum())


MYMOD = ModuleDescriptor("mymod", 3, (Export("scale", "0rf_r", _scale),
                                      Export("byte_sum", "0r_I", _byte_sum)), source="tests")
native_module = MYMOD
