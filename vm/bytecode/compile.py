"""Turning decoded instructions into handlers, and which ops the interpreter runs."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable

from . import isa
from .decoder import Instruction, UnsupportedOpError
from . import ops_buffer, ops_control, ops_list, ops_ref  # noqa: F401 - they register handlers
from .state import ExecutionState
from .handlers import HANDLERS, Handler
from ..ops import SIGN_BIT_OPS, PURE_OPS
from .ops_scalar import make_pure, make_sign_bit

if TYPE_CHECKING:
    from .registers import Frame, Function


def compile_instruction(ctx: "ExecutionState", fn: "Function", inst: Instruction) -> tuple[Handler, Any]:
    """The handler and its precomputed payload for one instruction."""
    symbol = inst.op.symbol
    make = HANDLERS.get(symbol)
    if make is not None:
        return make(ctx, fn, inst)
    if symbol in SIGN_BIT_OPS:
        return make_sign_bit(inst)
    if symbol in PURE_OPS:
        return make_pure(inst)
    return _unsupported, inst


def _unsupported(ctx: "ExecutionState", frame: "Frame", inst: Instruction) -> None:
    raise UnsupportedOpError(inst.opcode, inst.pc, inst.prefix, inst.mnemonic)


def handler_maker(symbol: str) -> Callable[..., Any] | None:
    """What makes an op's handler, as compile_instruction picks it (its module is where the op's
    semantics and its fast-path writers are written): its registered maker, make_sign_bit or
    make_pure; None for an op the interpreter does not run."""
    make = HANDLERS.get(symbol)
    if make is not None:
        return make
    if symbol in SIGN_BIT_OPS:
        return make_sign_bit
    if symbol in PURE_OPS:
        return make_pure
    return None


SUPPORTED_OPS: frozenset[str] = frozenset(
    op.symbol for table in isa.OPCODES.values() for op in table.values() if handler_maker(op.symbol) is not None)
UNSUPPORTED_OPS: frozenset[str] = frozenset(
    op.symbol for table in isa.OPCODES.values() for op in table.values()) - SUPPORTED_OPS


def unsupported_in(instructions: Iterable[Instruction]) -> set[str]:
    """Mnemonics among `instructions` this interpreter does not execute."""
    return {i.mnemonic for i in instructions if i.op.symbol in UNSUPPORTED_OPS}


__all__ = ["compile_instruction", "handler_maker", "SUPPORTED_OPS", "UNSUPPORTED_OPS", "unsupported_in"]
