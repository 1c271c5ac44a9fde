"""The handler registry: one maker per op symbol, turning a decoded instruction into a closure;
beside it, the fast-path writers of the ops the compiled code writes inline.

A maker `make(ctx, fn, inst) -> (handler, payload)` runs once per instruction when a function is
prepared; it precomputes register offsets and constants so the handler does no decoding. At run time
`handler(ctx, frame, payload)` returns None (next instruction), a new Frame (a call: push it),
`RETURN` (the payload is then the tuple of returned registers) or `YIELD` (the call stack suspends,
frame.ip where it resumes: vm.yield, or a yieldable import call that yielded).

An op the fast path writes inline declares how, in the ops_*.py file of its handler (one file per
op: tests/test_architecture.py checks it), with the decorators below:

- `@region_accesses(*symbols)`: `accesses(ctx, inst) -> [(r/w, first register, registers, kind)]`,
  the register accesses region_plan.py plans a loop region's locals from (kind: int, f32, f64, or
  raw = bits copied); an op without one is called as its handler there;
- `@region_writer(*symbols)`: `write(emitter, i, end, lines, pad)` appends instruction i of a
  region block ending at `end` to `lines`, with regions.py's LocalsEmitter (locals, temporaries,
  the region's buffer memo) as `emitter`;
- `@block_writer(*symbols)`: `write(emitter, i, lines, pad) -> bool` appends instruction i inline
  with blocks.py's emitter (byte registers), or answers False for its handler call.

regions.py and blocks.py hold the op-independent machinery and look an op's writer up here.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, TypeVar

from .decoder import Instruction
from .state import ExecutionState

if TYPE_CHECKING:
    from .registers import Frame, Function


Handler = Callable[[ExecutionState, "Frame", Any], Any]
Maker = Callable[[ExecutionState, "Function", Instruction], "tuple[Handler, Any]"]

HANDLERS: dict[str, Maker] = {}
# op symbol -> its fast-path declarations (the module docstring)
REGION_ACCESSES: dict[str, Callable[[ExecutionState, Instruction], list]] = {}
REGION_WRITERS: dict[str, Callable[..., None]] = {}
BLOCK_WRITERS: dict[str, Callable[..., bool]] = {}
RETURN = object()  # a handler's "leave this frame" answer
YIELD = object()  # a handler's "suspend the stack" answer (IREE's IREE_STATUS_DEFERRED)


def op(*symbols: str) -> Callable[[Maker], Maker]:
    """Register a maker for op symbols (isa.OpInfo.symbol, e.g. "AddI32")."""
    def register(make: Maker) -> Maker:
        for s in symbols:
            HANDLERS[s] = make
        return make
    return register


_F = TypeVar("_F", bound=Callable[..., Any])


def _registrar(table: dict, symbols: tuple[str, ...]) -> Callable[[_F], _F]:
    def register(f: _F) -> _F:
        for s in symbols:
            assert s not in table, s  # one declaration per op
            table[s] = f
        return f
    return register


def region_accesses(*symbols: str) -> Callable[[_F], _F]:
    """Register the register accesses of ops a loop region writes inline (module docstring)."""
    return _registrar(REGION_ACCESSES, symbols)


def region_writer(*symbols: str) -> Callable[[_F], _F]:
    """Register the loop-region writer of op symbols (module docstring)."""
    return _registrar(REGION_WRITERS, symbols)


def block_writer(*symbols: str) -> Callable[[_F], _F]:
    """Register the straight-block writer of op symbols (module docstring)."""
    return _registrar(BLOCK_WRITERS, symbols)


__all__ = ["Handler", "Maker", "HANDLERS", "RETURN", "YIELD", "op", "REGION_ACCESSES", "REGION_WRITERS",
           "BLOCK_WRITERS", "region_accesses", "region_writer", "block_writer"]
