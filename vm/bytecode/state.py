"""What the op handlers, registers and the verifier use of the context that runs them: an
interface (`ExecutionState`), so that none of them needs the context's class (`module.Context` is
the implementation)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, Sequence

from .decoder import Register
from ...base.machine import Machine
from .module_file import ModuleFile

if TYPE_CHECKING:
    from .buffer_factory import BufferFactory


class ExecutionState(Protocol):
    """What op handlers use of the context that runs them (`module.Context` is the one there is):
    an interface, so the ops need not know the context's class."""

    machine: Machine  # the data model of buffer ops and import calls
    module: ModuleFile
    buffers: "BufferFactory"
    rwdata: bytearray  # the module's primitive globals
    global_refs: list
    rodata: list
    resolved: list  # per import: resolved or not

    def retain(self, value: Any) -> None: ...

    def release(self, value: Any) -> None: ...

    def invoke(self, function_name: str, *args: Any) -> list: ...

    def import_call(self, ordinal: int, segment_sizes: "Sequence[int] | None", operands: Sequence[Register],
                    results: Sequence[Register]) -> Any: ...

    def enter_internal(self, caller: Any, ordinal: int, operands: Sequence[Register],
                       results: Sequence[Register]) -> Any: ...

    def yieldable_import_call(self, ordinal: int, segment_sizes: "Sequence[int] | None",
                              operands: Sequence[Register], results: Sequence[Register],
                              resume: int) -> Any: ...


__all__ = ["ExecutionState"]
