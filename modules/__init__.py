"""ireeabi.modules: native modules IREE ships besides the HAL's, as ireeabi runs them (IREE keeps
them in runtime/src/iree/modules).

- `check`: the `check` module of IREE's check tests (expect_true, expect_eq, expect_almost_eq...).
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what the face offers; loaded on first use below (PEP 562)
    from .check import CHECK_MODULE, CheckState, Failure

_LAZY = {"CHECK_MODULE": "check", "CheckState": "check", "Failure": "check"}


def __getattr__(name: str) -> Any:
    """A re-exported name imported from its submodule on first use, then kept: importing
    `ireeabi.modules.hal` (a program's HAL modules) does not load the check module and numpy."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = ["CHECK_MODULE", "CheckState", "Failure"]
