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

The interval analysis the loop regions use (value_ranges.py) reads an op's rules from here too:

- `@interval_rule(*symbols, constant=False)`: `rule(operands) -> (lo, hi) | None`, the interval of
  the signed value of the op's one integer result from its operands' (value_ranges.Operands; None:
  any value); `constant`: the result depends on no register (folded where it is its slot's one
  write, a widening step). An op without one forgets what it writes;
- `@condition_rule(*symbols, nonzero_test=False)`: `narrow(x, y, truth) -> (x, y) | None`, a
  compare's operand intervals on the edge where its result is `truth` (y (0, 0) for a compare
  with one operand; None: it says nothing there); `nonzero_test`: of a compare's 0 or 1 it is
  that compare's condition;
- `@interval_edges(*symbols)`: `edges(inst) -> [(destination, register copies, test)]`, the ops
  that end a block without going on to the next instruction (test: (condition register, truth)
  on a conditional edge, else None); an op without one goes on to the next instruction and to
  its BRANCH_TARGET fields.

regions.py, blocks.py and value_ranges.py hold the op-independent machinery and look an op's
declarations up here.
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
INTERVAL_RULES: dict[str, Callable[..., Any]] = {}
CONSTANT_RULES: set[str] = set()  # the interval rules marked `constant`
CONDITION_RULES: dict[str, Callable[..., Any]] = {}
NONZERO_TESTS: set[str] = set()  # the condition rules marked `nonzero_test`
INTERVAL_EDGES: dict[str, Callable[[Instruction], list]] = {}
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


def interval_rule(*symbols: str, constant: bool = False) -> Callable[[_F], _F]:
    """Register the result interval rule of op symbols (module docstring)."""
    if constant:
        CONSTANT_RULES.update(symbols)
    return _registrar(INTERVAL_RULES, symbols)


def condition_rule(*symbols: str, nonzero_test: bool = False) -> Callable[[_F], _F]:
    """Register how a compare's result narrows its operands on a branch's edges (module docstring)."""
    if nonzero_test:
        NONZERO_TESTS.update(symbols)
    return _registrar(CONDITION_RULES, symbols)


def interval_edges(*symbols: str) -> Callable[[_F], _F]:
    """Register the edges of ops that end a block elsewhere than the next instruction (module docstring)."""
    return _registrar(INTERVAL_EDGES, symbols)


__all__ = ["Handler", "Maker", "HANDLERS", "RETURN", "YIELD", "op", "REGION_ACCESSES", "REGION_WRITERS",
           "BLOCK_WRITERS", "region_accesses", "region_writer", "block_writer", "INTERVAL_RULES",
           "CONSTANT_RULES", "CONDITION_RULES", "NONZERO_TESTS", "INTERVAL_EDGES", "interval_rule",
           "condition_rule", "interval_edges"]
