"""ireeabi.modules: native modules IREE ships besides the HAL's, as ireeabi runs them (IREE keeps
them in runtime/src/iree/modules).

- `check`: the `check` module of IREE's check tests (expect_true, expect_eq, expect_almost_eq...).
"""
from .check import CHECK_MODULE, CheckState, Failure

__all__ = ["CHECK_MODULE", "CheckState", "Failure"]
