"""ireeabi.modules.yieldable_test: IREE's `yieldable_test` native module (runtime/src/iree/vm/
testing/yieldable_test_module.h), whose exports yield a given number of times: the imports of IREE's
VM async tests (vm.call.yieldable)."""
from .module import (YIELDABLE_TEST_MODULE, YIELDABLE_TEST_MODULE_NAME, YIELDABLE_TEST_MODULE_VERSION,
                     YieldableState, native_module)

__all__ = ["YIELDABLE_TEST_MODULE", "YIELDABLE_TEST_MODULE_NAME", "YIELDABLE_TEST_MODULE_VERSION",
           "YieldableState", "native_module"]
