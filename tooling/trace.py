"""Execution traces of a program: every import call with both views of its packed bytes, and, on
request, the VM's calls and returns and every executed instruction.

IREE's only execution trace is the bytecode interpreter's per-instruction disassembly
(`iree_vm_bytecode_trace_disassembly`, runtime/src/iree/vm/bytecode/disassembler.c, compiled in by
IREE_VM_EXECUTION_TRACING_ENABLE: iree-run-module's `--trace_execution`, which the release wheels
lack). ireeabi knows more at an import call: the argument buffer as the VM packed it and as the
export's shim reads it (tooling/trace_layout.py). A `Trace` is a per-program parameter
(`RunOptions(trace=...)` of a `Program`, `HalRuntime(trace=...)`), never a global:

- level "imports": one `import` event per import call, in order: the caller function and pc, the
  import and its cconv, the argument buffer (every byte's field: values, span counts and elements,
  padding), the shim's reading (struct, each field's offset and value, and a `disagreement` where
  it reads bytes the VM packed for another field, padding, or past the buffer; the check that
  fails), the result buffer and the status;
- "calls": also `invoke` / `call` / `return` events of the VM's functions;
- "instructions": also one `instruction` event per executed instruction, whose `text` is IREE's
  trace line (`[module.function+PC]    op with inline values`), the function named as the function
  table names it (`wrap` says where IREE's own label differs).

Events go to `out` as text (tooling/trace_format.py: lines within 100 columns, a longer one
continued on indented lines), to `jsonl` as one JSON object a line (the instruction lines whole,
as IREE writes them), and are kept in `events` when `keep` is true.

How it attaches: `install(module)` wraps each export's shim of a NativeModule (the runtime calls it
for its modules), so the bytes are those the shim received, read before it runs; `wrap(...)` wraps
the interpreter's instruction handlers (the Context calls it when it compiles a function with a
trace, on the reference path: per-instruction handlers, no compiled blocks), which tells the shim
wrapper which function and pc is calling. Without a trace nothing is wrapped: the fast path is as
it was.
"""
from __future__ import annotations

import json
from typing import IO, Any, Callable

from ..abi.errors import IreeAbiError
from ..abi.files import open_output
from ..vm import ref as _ref
from ..vm.bytecode.handlers import RETURN
from ..vm.list import VmList
from ..vm.bytecode.registers import Frame
from ..vm.native_module import NativeModule
from ..vm.ref import Ref
from ..vm.shims import ByteSpan, CallContext, NativeFunction
from ..base.status import StatusError

from . import trace_layout as TL
from .disassemble import RegisterValues, function_name, instruction_text
from .trace_format import format_event

LEVELS = ("imports", "calls", "instructions")
_CALLS = frozenset({"call", "call_variadic", "yieldable_call", "call_variadic_yieldable"})
_BRANCHES = frozenset({"branch", "conditional_branch", "branch_table", "conditional_break"})


class TraceError(IreeAbiError):
    """A trace asked for with a level it does not have."""


class Trace:
    """One program's (or runtime's) trace; see the module docstring."""

    def __init__(self, level: str = "imports", *, out: "IO[str] | None" = None,
                 jsonl: "IO[str] | None" = None, keep: bool = True) -> None:
        if level not in LEVELS:
            raise TraceError(f"trace level {level!r}: expected one of {', '.join(LEVELS)}")
        self.level = level
        self.calls = level in ("calls", "instructions")
        self.instructions = level == "instructions"
        self.out = out
        self.jsonl = jsonl
        self.keep = keep
        self.events: list[dict] = []
        self.site: tuple[str, int] | None = None  # (function, pc) of the running call instruction
        self.depth = 0  # VM frames below the current one (calls level)
        self._active: list[str] = []  # import calls in progress (a kernel's own imports nest)
        self._seq = 0

    # ------------------------------------------------------------------------------------ output

    def emit(self, event: dict) -> None:
        event = {"seq": self._seq, **event}
        self._seq += 1
        if self.keep:
            self.events.append(event)
        if self.jsonl is not None:
            self.jsonl.write(json.dumps(event, default=_json_default) + "\n")
        if self.out is not None:
            self.out.write(format_event(event))

    # ------------------------------------------------------------------------- the runtime's hook

    def install(self, module: NativeModule) -> None:
        """Wrap every export shim of `module` (HalRuntime calls this for each of its modules)."""
        module.shims = tuple(_TracedShim(self, module, i, shim)  # type: ignore[misc]  # called as a Shim is
                             for i, shim in enumerate(module.shims))

    def import_call(self, module: NativeModule, ordinal: int, data: bytes, address: int,
                    results: bytes, error: BaseException | None) -> None:
        """The `import` event of one call (the bytes as the shim received them)."""
        export = module.exports[ordinal]
        sig = export.signature
        t = module.machine.target
        full = f"{module.name}.{export.name}"
        event: dict = {"event": "import", "import": full, "cconv": export.cconv, "target": t.name,
                       "caller": self.site[0] if self.site else None,
                       "pc": self.site[1] if self.site else None,
                       "nested_in": self._active[-2] if len(self._active) > 1 else None}
        try:
            packed = TL.packed_fields(full, sig.arguments, t, data)
        except TL.TraceLayoutError as e:
            packed = {"fragment": sig.arguments.text, "spans": None, "size": len(data), "fields": [],
                      "omitted": 0, "error": str(e)}
        packed["address"] = address
        packed["bytes"] = data.hex()
        reading = TL.shim_fields(full, sig.arguments, t, export.form, data)
        TL.mark_disagreements(packed, reading, len(data))
        event["arguments"] = packed
        event["shim"] = reading
        res = TL.result_fields(sig.results, t, results) if error is None else \
            {"fragment": sig.results.text, "size": len(results), "fields": [],
             "dropped": "the call failed: the VM drops its results unread"}
        res["bytes"] = results.hex()
        event["results"] = res
        event["status"] = _status(error)
        self.emit(event)

    # --------------------------------------------------------------------- the interpreter's hook

    def wrap(self, ctx: Any, fn: Any, index: int, handler: Callable, inst: Any) -> Callable:
        """The handler of instruction `index` of `fn`, traced (Context._compile calls this)."""
        encoding = inst.op.encoding
        is_call = encoding in _CALLS
        if not self.instructions and not self.calls and not is_call:
            return handler
        trace = self
        name, pc = fn.name, inst.pc
        module = ctx.module
        # The function the instruction belongs to, named as the function table names it (its
        # export, else its debug-database name: iree-dump-module's `vm.func @name`). IREE's own
        # tracing asks the debug database for entry `ordinal`, but iree-compile lists there only
        # the functions with source locations, in its own order: add16's `add` (ordinal 0) would
        # be labelled `__init` (entry 0) and `__init` (ordinal 1) `@1`.
        shown = f"{module.name}.{function_name(module, fn.ordinal)}"
        prefix = f"[{shown}+{pc:08X}]    "
        branch = encoding in _BRANCHES

        def traced(c: Any, frame: Frame, payload: Any) -> Any:
            trace.site = (name, pc)
            if trace.instructions:
                trace.instruction(ctx, frame, inst, prefix)
            out = handler(c, frame, payload)
            if trace.calls:
                if type(out) is Frame:
                    trace.depth += 1
                    trace.emit({"event": "call", "caller": name, "pc": pc, "callee": out.fn.name,
                                "depth": trace.depth})
                elif out is RETURN:
                    trace.emit({"event": "return", "function": name, "pc": pc, "depth": trace.depth})
                    trace.depth = max(trace.depth - 1, 0)
            if branch and trace.instructions and out is None:
                landed = frame.ip - 1  # the interpreter jumps past the block marker IREE executes
                code = frame.fn.code
                if 0 <= landed < len(code) and landed != index and code[landed][2].is_block:
                    trace.instruction(ctx, frame, code[landed][2],
                                      f"[{shown}+{code[landed][2].pc:08X}]    ")
            return out
        return traced

    def instruction(self, ctx: Any, frame: Frame, inst: Any, prefix: str) -> None:
        heap = getattr(ctx.buffers, "heap", None)
        values = RegisterValues(frame.regs, frame.refs, lambda v: _ref_text(heap, v),
                                ctx.rwdata, ctx.global_refs)
        try:
            text = instruction_text(inst, ctx.module, None, values)
        except IreeAbiError:
            text = "<<disassembly failed>>"  # as IREE prints a line it cannot write
            prefix = ""
        self.emit({"event": "instruction", "function": frame.fn.name, "pc": inst.pc,
                   "text": prefix + text})

    # ------------------------------------------------------------------------- the program's hook

    def invoke(self, function: str) -> None:
        if self.calls:
            self.depth = 0
            self.emit({"event": "invoke", "function": function})

    def invoked(self, function: str, error: BaseException | None) -> None:
        if self.calls:
            self.emit({"event": "invoked", "function": function, "status": _status(error)})
        self.site = None


class _TracedShim:
    """An export's shim with the trace around it: the argument bytes read before it runs, the
    result bytes after, the status it ends with."""

    __slots__ = ("trace", "module", "ordinal", "shim")

    def __init__(self, trace: Trace, module: NativeModule, ordinal: int, shim: Any) -> None:
        self.trace, self.module, self.ordinal, self.shim = trace, module, ordinal, shim

    def __call__(self, ctx: CallContext, flags: int, args: ByteSpan, rets: ByteSpan,
                 function: NativeFunction) -> None:
        heap = ctx.heap
        data = heap.read(args.data, args.length) if args.data and args.length else b""
        trace = self.trace
        export = self.module.exports[self.ordinal]
        trace._active.append(f"{self.module.name}.{export.name}")
        error: BaseException | None = None
        try:
            self.shim(ctx, flags, args, rets, function)
        except BaseException as e:
            error = e
            raise
        finally:
            try:
                results = heap.read(rets.data, rets.length) if rets.data and rets.length else b""
                trace.import_call(self.module, self.ordinal, data, args.data, results, error)
            finally:
                trace._active.pop()


def _status(error: BaseException | None) -> dict:
    if error is None:
        return {"code": "OK"}
    if isinstance(error, StatusError):
        return {"code": error.code.name, "message": error.message}
    return {"code": type(error).__name__, "message": str(error)}


def _ref_text(heap: Any, value: Any) -> str:
    """A ref register's `!type/pointer` as IREE prints it (`%p`: 0x and lower-case hex); a vm.list,
    which lives as a Python object here, shows its object id."""
    if isinstance(value, Ref) and heap is not None:
        try:
            name = _ref.type_name(heap, value.type)
        except IreeAbiError:
            name = "?"
        return f"!{name}/0x{value.ptr:x}"
    if isinstance(value, VmList):
        return f"!vm.list/0x{id(value):x}"
    return f"!{type(value).__name__}/0x{id(value):x}"


def _json_default(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def as_trace(value: "Trace | str | bool | None") -> "Trace | None":
    """A Program's `trace=` argument as a Trace: None/False none, True "imports", a level name a
    new Trace keeping its events, a Trace itself."""
    if value is None or value is False:
        return None
    if value is True:
        return Trace()
    if isinstance(value, str):
        return Trace(value)
    if isinstance(value, Trace):
        return value
    raise TraceError(f"trace= takes a Trace, a level ({', '.join(LEVELS)}), True or None, got {value!r}")





def open_trace(level: "str | None", path: "str | None", out: "IO[str] | None" = None) -> "Trace | None":
    """The CLI's trace (`ireeabi run --trace[=LEVEL] --trace-file FILE`): text to stderr (as IREE
    writes its execution trace; the results on `out` stay iree-run-module's) when a level is given,
    JSON lines to `path` when given; None when neither is. Events are not kept in memory."""
    import sys
    if level is None and path is None:
        return None
    jsonl = None
    if path is not None:
        try:
            jsonl = open_output(path)  # (a FIFO no process reads is refused, not waited on)
        except OSError as e:
            raise TraceError(f"--trace-file {path}: cannot write it ({e.strerror})") from None
    return Trace(level or "imports", out=sys.stderr if level is not None else None, jsonl=jsonl,
                 keep=False)


def close_trace(trace: "Trace | None") -> None:
    """Close the JSON lines file `open_trace` opened."""
    if trace is not None and trace.jsonl is not None:
        trace.jsonl.close()
__all__ = ["LEVELS", "Trace", "TraceError", "as_trace", "open_trace", "close_trace"]
