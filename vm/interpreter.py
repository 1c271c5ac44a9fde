"""Compatibility module: the bytecode interpreter now lives in the package `ireeabi.vm.interp`
(one concept per module; see its docstring). Every public name is re-exported here."""
from __future__ import annotations

from .interp import *  # noqa: F401,F403
from .interp import __all__  # noqa: F401
from .interp.buffers import DEFAULT_MAX_ALLOCATION  # noqa: F401
from .interp.context import DEFAULT_MAX_DEPTH  # noqa: F401
from .interp.numerics import M32, M64, PURE_OPS  # noqa: F401
