"""IREE's `yieldable_test` native module (runtime/src/iree/vm/testing/yieldable_test_module.h), the
imports of IREE's VM async tests: exports that yield a given number of times before they return.

    yield_n(arg: i32, yield_count: i32) -> i32                 0ii_i
    yield_variadic_sum(values: i32..., yield_count: i32) -> i32  0CiDi_i

Both keep their coroutine in the module state (`YieldableState`, one per runtime, as IREE's is one
per context, so neither is reentrant): the begin sets the counter to `yield_count` and the
accumulator to `arg` (or to the int32 sum of the values); then each call, the begin included,
yields (DEFERRED) while the counter is above zero, adding 1 to the accumulator and taking 1 from the
counter; the first call that finds it at zero (or below: a negative count yields never) returns the
accumulator. So `yield_n(a, n)` yields max(n, 0) times and returns a + max(n, 0), and
`yield_variadic_sum(v..., n)` returns sum(v) + max(n, 0), with int32 wraparound throughout.

A bytecode module calls them with vm.call.yieldable (vm.call.variadic.yieldable): the interpreter
runs the shim with the BEGIN flag and the arguments, then with the RESUME flag and no arguments at
each resume (`NativeModule.resume_ordinal`). The shims here are the generic ones of the cconvs,
which read the same packed buffers IREE's hand-written ones read (the VM packs them): a RESUME
reaches the function with no arguments.
"""
from __future__ import annotations

from typing import Any

from ...layouts.modules import ModuleDescriptor
from ...vm.native_module import Export
from ...vm.shims import CallContext
from ...base.status import StatusCode, StatusError

YIELDABLE_TEST_MODULE_NAME = "yieldable_test"
YIELDABLE_TEST_MODULE_VERSION = 0


def _i32(value: int) -> int:
    """An int32 as C's int32_t arithmetic leaves it (wrapping)."""
    return (value + 0x80000000) % 0x100000000 - 0x80000000


class YieldableState:
    """yieldable_test_module_state_t: the counter of yields left and the accumulator."""

    def __init__(self, api: Any = None) -> None:
        self.yield_count = 0
        self.accumulator = 0

    def begin(self, accumulator: int, yield_count: int) -> int:
        """A call's begin: the coroutine restarted, then its first step."""
        self.yield_count = yield_count
        self.accumulator = accumulator
        return self.step()

    def step(self) -> int:
        """One step: yield (StatusError DEFERRED) while yields are left, else the accumulator."""
        if self.yield_count > 0:
            self.accumulator = _i32(self.accumulator + 1)
            self.yield_count -= 1
            raise StatusError(StatusCode.DEFERRED, "")
        return self.accumulator


def _yield_n(ctx: CallContext, *args: int) -> int:
    if not args:  # RESUME: the generic shim passes no arguments
        return ctx.state.step()
    arg, yield_count = args
    return ctx.state.begin(arg, yield_count)


def _yield_variadic_sum(ctx: CallContext, *args: Any) -> int:
    if not args:
        return ctx.state.step()
    values, yield_count = args
    total = 0
    for v in values:
        total = _i32(total + v)
    return ctx.state.begin(total, yield_count)


EXPORTS = (
    Export("yield_n", "0ii_i", _yield_n),
    Export("yield_variadic_sum", "0CiDi_i", _yield_variadic_sum),
)

YIELDABLE_TEST_MODULE = ModuleDescriptor(YIELDABLE_TEST_MODULE_NAME, YIELDABLE_TEST_MODULE_VERSION,
                                         EXPORTS, state=YieldableState,
                                         source="ireeabi.modules.yieldable_test")
native_module = YIELDABLE_TEST_MODULE  # what `--native-module ireeabi.modules.yieldable_test` takes

__all__ = ["YIELDABLE_TEST_MODULE", "YIELDABLE_TEST_MODULE_NAME", "YIELDABLE_TEST_MODULE_VERSION",
           "YieldableState", "native_module"]
