"""ireeabi.modules: native modules IREE ships besides the HAL's, as ireeabi runs them (IREE keeps
them in runtime/src/iree/modules).

- `check`: the `check` module of IREE's check tests (expect_true, expect_eq, expect_almost_eq...).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..abi.lazy_face import lazy_face

if TYPE_CHECKING:  # what the face offers; loaded on first use below (PEP 562)
    from .check import CHECK_MODULE, CheckState, Failure

# Importing `ireeabi.modules.hal` (a program's HAL modules) does not load the check module and numpy.
__getattr__, __dir__ = lazy_face(__name__, globals(), {"check": ("CHECK_MODULE", "CheckState", "Failure")})


__all__ = ["CHECK_MODULE", "CheckState", "Failure"]
