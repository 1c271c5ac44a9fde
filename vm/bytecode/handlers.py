"""The handler registry: one maker per op symbol, turning a decoded instruction into a closure.

A maker `make(ctx, fn, inst) -> (handler, payload)` runs once per instruction when a function is
prepared; it precomputes register offsets and constants so the handler does no decoding. At run time
`handler(ctx, frame, payload)` returns None (next instruction), a new Frame (a call: push it),
`RETURN` (the payload is then the tuple of returned registers) or `YIELD` (the call stack suspends,
frame.ip where it resumes: vm.yield, or a yieldable import call that yielded).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from .decoder import Instruction
from .state import ExecutionState

if TYPE_CHECKING:
    from .registers import Frame, Function


Handler = Callable[[ExecutionState, "Frame", Any], Any]
Maker = Callable[[ExecutionState, "Function", Instruction], "tuple[Handler, Any]"]

HANDLERS: dict[str, Maker] = {}
RETURN = object()  # a handler's "leave this frame" answer
YIELD = object()  # a handler's "suspend the stack" answer (IREE's IREE_STATUS_DEFERRED)


def op(*symbols: str) -> Callable[[Maker], Maker]:
    """Register a maker for op symbols (isa.OpInfo.symbol, e.g. "AddI32")."""
    def register(make: Maker) -> Maker:
        for s in symbols:
            HANDLERS[s] = make
        return make
    return register


__all__ = ["Handler", "Maker", "HANDLERS", "RETURN", "YIELD", "op"]
