"""`Context`: one instance of a bytecode module — its state, its prepared functions, the run loop.

Creating a Context reads the module (path, bytes or `vm.bytecode.module_file.ModuleFile`), makes its rodata
buffers (through the buffer factory), decodes and verifies every function (IREE does when it
creates the module, before any context sees it), resolves its imports (as iree_vm_context_register_
modules does: `_resolve_imports`), compiles every function, allocates the module state (a zeroed globals blob of `global_bytes_capacity` bytes plus
`global_ref_count` ref slots) and runs the `__init` export. `invoke(name, *args) -> list` then calls
exports, keeping the state across calls; `close()` releases the state's references and what the
factory allocated.

Calls follow runtime/src/iree/vm/bytecode/dispatch.c:

- internal calls place arguments as the callee's calling convention lays them out (i32/f32 one
  register each, i64/f64 on the next even register, refs in order, each ref retained or moved per
  its MOVE bit) and copy results back by the same widths; leaving a frame releases every ref
  register it still holds (also when an error unwinds the stack);
- import calls gather the operand registers in cconv order (spans as lists of per-element tuples,
  sized by the segment sizes) and hand them to the ImportResolver; ref arguments are borrowed for
  the call, MOVE-marked ones are taken out of their registers first and released after the call
  (whatever its status), as the VM releases its argument buffer; ref results are owned by the
  registers they land in;
- `invoke` retains its ref arguments (the caller keeps its own references) and hands back owned ref
  results.

Yields (runtime/src/iree/vm/invocation.c, the IREE_STATUS_DEFERRED of dispatch.c): vm.yield, or a
yieldable import call (vm.call.yieldable) whose native module returns DEFERRED, suspends the whole
call stack, each frame where it resumes. `begin(name, *args)` runs a call until it returns or yields
and gives its `Invocation`; `Invocation.resume()` runs it on from the innermost frame,
`Invocation.finish()` resumes until it is done. `invoke` is begin and finish: it resumes until the
call returns, as IREE's VM test runner does (iree-run-module never finishes a call that yields: its
resume loop spins); `max_steps` bounds the whole call, across its resumes. A plain vm.call of an
import with results that yields is UNIMPLEMENTED, as in IREE; only native modules (`NativeImports`)
yield, other resolvers' calls run to their end.

The loops here are the reference; the fast path's generated call sites (an export's entry, the
return to `invoke`'s caller, an import call over a planned native call) are call_sites.py's.
"""
from __future__ import annotations

import os
import threading
from typing import Any, Callable, Sequence

from ireeabi.abi.errors import UnknownNameError
from ireeabi.abi.printable import printable
from ireeabi.vm.bytecode.decoder import (DecodeError, Register, UnsupportedOpError, decode_function,
                                         function_bytecode, function_names)
from ireeabi.base.heap import HeapError
from ireeabi.vm.bytecode.module_file import ExportedFunction, ModuleFile, read_module
from ireeabi.base.status import StatusCode, StatusError
from ireeabi.base.reference_path import reference_forced
from ireeabi.vm.bytecode.blocks import compile_blocks
from ireeabi.vm.bytecode.buffer_factory import BufferFactory
from ireeabi.vm.bytecode.call_sites import (I32_MIN, I64_MIN, SCALARS, U32_END, U64_END, entry_function,
                                            leave_function, native_call_site)
from ireeabi.vm.bytecode.compile import compile_instruction
from ireeabi.vm.errors import (ArgumentError, BytecodeVerifyError, ContextBusyError, ContextClosedError,
                               ImportResolutionError, InvocationStateError, VmError, VmStatusError,
                               VmTrapError, annotate)
from ireeabi.vm.bytecode.handlers import RETURN, YIELD
from ireeabi.vm.bytecode.module_state import global_bytes, global_refs, held_refs
from ireeabi.vm.import_resolvers import ContextImports, FunctionImports, ImportResolver, NativeImports
from ireeabi.vm.ops import M32, M64, U32, U64
from ireeabi.vm.bytecode.registers import (Frame, Function, cconv_fragments, release_frame,
                                           retain_or_move, store_ref, store_value, value_chars)
from ireeabi.vm.bytecode.verifier import (clamp_type_ids, function_layout, verify_function,
                                         verify_prefix_feature)

DEFAULT_MAX_DEPTH = 1024  # frames; IREE limits the stack by bytes instead


def _trap(ctx: Any, frame: Frame, reason: str) -> None:
    """The handler of an instruction IREE runs on memory outside its frame or globals (verifier
    `FrameUse.traps`): what IREE reads there is no reproducible value, or it crashes."""
    raise VmTrapError(f"{reason}; IREE would read or write memory it does not own here")


class Context:
    """One module instance: its state (globals) lives across `invoke` calls."""

    def __init__(self, module: "ModuleFile | str | os.PathLike | bytes",
                 imports: ImportResolver | None = None, *, buffers: BufferFactory | None = None,
                 max_depth: int = DEFAULT_MAX_DEPTH, max_steps: int | None = None,
                 run_init: bool = True, reference: bool = False, trace: Any = None) -> None:
        self.module = module if isinstance(module, ModuleFile) else read_module(module)
        # An execution trace (tooling/trace.py's Trace: `wrap` gives each handler traced); it runs
        # on the reference path, whose handlers are one per instruction.
        self.trace = trace
        self.imports = imports
        self.buffers = buffers if buffers is not None else BufferFactory()
        self.machine = self.buffers.machine  # the data model of every buffer op and import call
        self.retain: Callable[[Any], None] = self.buffers.retain
        self.release: Callable[[Any], None] = self.buffers.release
        self.counted = self.buffers.counted
        self.max_depth = max_depth
        if max_steps is not None and (type(max_steps) is not int or max_steps < 1):
            raise ArgumentError(f"max_steps must be a positive instruction count, not {max_steps!r}")
        # Instructions one invoke may run (None: unbounded, as IREE). Not IREE behaviour: a bound a
        # caller sets so that a module that loops forever ends in an error instead of a hang.
        self.max_steps = max_steps
        # The reference path (per-instruction handlers, imports through the resolver's layered
        # call) when asked for; else compiled basic blocks (blocks.py) and planned import call
        # sites. A step budget counts single instructions, so it runs without blocks.
        self.reference = reference or reference_forced() or trace is not None
        heap = getattr(self.buffers, "heap", None)  # counted backends run on a heap
        if self.reference and heap is not None:
            heap.force_reference()
        self.compiled = not self.reference and max_steps is None
        # One thread at a time runs the context (the heap under it has no locks, as IREE's VM
        # context has none): another thread's invoke is refused at once, never interleaved.
        self._busy = threading.Lock()
        self._owner: int | None = None
        self.closed = False
        # Invocations that yielded and were not resumed to the end (close aborts them)
        self.suspended: set[Invocation] = set()
        m = self.module
        # allocated as IREE callocs them: what the file declares costs only what is touched
        self.rwdata = global_bytes(m.global_bytes_capacity)
        self.global_refs = global_refs(m.global_ref_count)
        self.rodata: list = []
        self._entries: dict[str, tuple[Function, tuple[tuple[str, int], ...], Callable | None]] = {}
        try:
            self.rodata = self.buffers.rodata_buffers(m)
            names = function_names(m)
            self.functions: list[Function] = [self._prepare(i, names[i])
                                              for i in range(len(m.function_descriptors))]
            self.resolved = self._resolve_imports()
            for fn in self.functions:
                self._compile(fn)
            if run_init and any(e.name == "__init" for e in m.exported_functions):
                self.invoke("__init")
        except BaseException:
            self.close()
            raise

    # ---------------------------------------------------------------------------------- public API

    def exported(self, name: str) -> ExportedFunction:
        for e in self.module.exported_functions:
            if e.name == name:
                return e
        raise UnknownNameError("exported function", name,
                               [e.name for e in self.module.exported_functions])

    def invoke(self, function_name: str, *args: Any) -> list:
        """Call an export with Python values (ints, floats, ref values) per its cconv; return its
        results (ref results owned by the caller)."""
        if self.closed:
            raise ContextClosedError(f"invoke of '{printable(function_name)}' on a closed context "
                                     f"(module {printable(self.module.name)})")
        if not self._busy.acquire(False):  # non-blocking (positional: a keyword costs 0.25 us)
            if self._owner == threading.get_ident():  # a nested invoke on the running thread
                out = self._invoke(function_name, args)
                return out if type(out) is list else out.finish(None)
            raise ContextBusyError(f"invoke of '{printable(function_name)}' while another thread runs "
                                   f"a call on this context (module {printable(self.module.name)}): a context and "
                                   "its heap belong to one thread at a time")
        self._owner = threading.get_ident()
        try:
            out = self._invoke(function_name, args)
            if type(out) is not list:  # it yielded: resumed until done, as iree_vm_invoke does
                out = out.finish(None)
            return out
        finally:
            self._owner = None
            self._busy.release()

    def begin(self, function_name: str, *args: Any) -> "Invocation":
        """Begin a call of an export (iree_vm_begin_invoke): it runs until it returns or yields
        (vm.yield, or a yieldable import that yields). The Invocation says which; `resume()` goes on
        after a yield, `finish()` resumes until done. `invoke` is begin + finish."""
        out = self._locked(f"begin of '{printable(function_name)}'", self._invoke, function_name, args)
        if type(out) is list:
            return Invocation(self, function_name, None, 0, out)
        return out

    def _locked(self, what: str, run: Callable, *args: Any) -> Any:
        """`run(*args)` holding the context, as invoke holds it (a nested call on the running
        thread goes through); `what` names the call in the errors."""
        if self.closed:
            raise ContextClosedError(f"{what} on a closed context (module {self.module.name})")
        if not self._busy.acquire(False):
            if self._owner == threading.get_ident():
                return run(*args)
            raise ContextBusyError(f"{what} while another thread runs a call on this context "
                                   f"(module {self.module.name}): a context and its heap belong "
                                   "to one thread at a time")
        self._owner = threading.get_ident()
        try:
            return run(*args)
        finally:
            self._owner = None
            self._busy.release()

    def _invoke(self, function_name: str, args: tuple) -> "list | Invocation":
        entry = self._entries.get(function_name)
        if entry is None:
            entry = self._entry(function_name)
        fn, places, enter = entry
        if len(args) != len(places):
            export = self.exported(function_name)
            raise ArgumentError(f"{printable(function_name)} takes {len(places)} argument(s) "
                                f"({export.cconv}), got {len(args)}")
        if enter is not None:  # the fast path: the loop below, generated for this export
            return self._execute(enter(self, args), function_name)
        frame = Frame(fn)
        try:
            refs, regs = frame.refs, frame.regs
            for index, ((char, at), value) in enumerate(zip(places, args)):
                if char == "r":
                    if value is not None:
                        self.retain(value)
                    refs[at] = value
                elif char == "I" and type(value) is int and I64_MIN <= value < U64_END:
                    U64.pack_into(regs, at, value & M64)  # as write_i64 stores it
                elif char == "i" and type(value) is int and I32_MIN <= value < U32_END:
                    U32.pack_into(regs, at, value & M32)
                else:  # the general case, with its checks and messages
                    store_value(regs, at, char, value, f"{printable(function_name)} argument {index}")
        except BaseException:
            release_frame(self, frame)
            raise
        return self._execute(frame, function_name)

    def _entry(self, function_name: str) -> tuple[Function, tuple[tuple[str, int], ...], Callable | None]:
        """(function, where each argument goes: (cconv char, ref index or register byte offset))
        of an export, checked once and kept for later invokes."""
        export = self.exported(function_name)
        fn = self.functions[export.internal_ordinal]
        if fn.cconv_args is None:
            raise ArgumentError(f"export '{printable(function_name)}' has no calling convention")
        if any(c in fn.cconv_args for c in "CD"):
            raise ArgumentError(f"export '{printable(function_name)}' takes spans ({export.cconv}); "
                                f"bytecode functions cannot")
        places = []
        i32_reg = ref_reg = 0
        for char in value_chars(fn.cconv_args):
            if char == "r":
                places.append((char, ref_reg))
                ref_reg += 1
                continue
            if char in "IF":
                i32_reg += i32_reg & 1
            places.append((char, 4 * i32_reg))
            i32_reg += 2 if char in "IF" else 1
        places = tuple(places)
        enter = None if self.reference else entry_function(fn, places, function_name)
        entry = self._entries[function_name] = (fn, places, enter)
        return entry

    def close(self) -> None:
        """Release the module state's references (ref globals) and the factory's rodata; later
        invokes raise ContextClosedError. Idempotent."""
        if self.closed:
            return
        self.closed = True
        first: BaseException | None = None
        for invocation in list(self.suspended):  # their frames' references go first
            try:
                invocation.abort()
            except BaseException as e:  # noqa: BLE001 - release everything, then report
                first = first or e
        refs = self.global_refs
        for i, value in held_refs(refs):
            refs[i] = None
            try:
                self.release(value)
            except BaseException as e:  # noqa: BLE001 - release everything, then report
                first = first or e
        try:
            self.buffers.close()
        except BaseException as e:  # noqa: BLE001
            first = first or e
        if first is not None:
            raise first

    def __enter__(self) -> "Context":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --------------------------------------------------------------------------------- preparation

    def _resolve_imports(self) -> list[bool]:
        """Which imports resolve, or the first failure IREE reports (iree_vm_context_resolve_module_
        imports): the module's dependencies in table order (a required one must be registered, at
        its minimum version or later), then each import in order: a fully-qualified name, its
        module registered and exporting the function (else skipped when optional), the export's
        cconv equal to the import's when the import declares one (optional imports too), a cconv
        version the call can use. The resolver's modules are the registered ones: a ContextImports'
        contexts, a NativeImports' modules, the module names of a FunctionImports' functions (whose
        cconvs and versions are not known, so not checked); another resolver's `resolves` decides
        alone. Failures raise `ImportStatusError` with IREE's code and message."""
        m, imports = self.module, self.imports
        registered = _registered_modules(imports)
        if registered is not None:
            for dep in m.dependencies:  # iree_vm_context_check_module_dependency
                if dep.name in registered:
                    version = registered[dep.name]
                    if not dep.required or version is None or version >= dep.minimum_version:
                        continue  # an optional one is fine at any version
                    reason = (f"required module '{printable(dep.name)}' version mismatch; have {version} but "
                              f"require {dep.minimum_version}")
                elif dep.optional:
                    continue
                else:  # required, or flagged neither way
                    reason = f"required module '{printable(dep.name)}' not registered on the context"
                first = next((i.full_name for i in m.imported_functions if i.module == dep.name),
                             dep.name)
                raise self._import_error(StatusCode.NOT_FOUND, reason, first)
        resolved = []
        for imp in m.imported_functions:
            full_name = imp.full_name
            module_name, dot, function = full_name.partition(".")
            if not dot:
                raise self._import_error(StatusCode.INVALID_ARGUMENT, f"import name not fully-"
                                         f"qualified (module.func): '{printable(full_name)}'", full_name)
            if registered is None:
                ok = imports.resolves(full_name, imp.cconv)
                if not ok and not imp.optional:
                    raise self._import_error(StatusCode.NOT_FOUND, "required import not resolved "
                                             "(the resolver does not provide it)", full_name)
                resolved.append(ok)
                continue
            if module_name not in registered:
                found: "tuple[StatusCode, str] | str | None" = (
                    StatusCode.NOT_FOUND, f"module '{printable(module_name)}' required for import "
                    f"'{printable(full_name)}' not registered with the context")
            else:
                found = _lookup_export(imports, module_name, function)
            if isinstance(found, tuple):
                if found[0] == StatusCode.NOT_FOUND and imp.optional:
                    resolved.append(False)  # left unresolved: calls fail, import.resolved is 0
                    continue
                raise self._import_error(found[0], found[1], full_name)
            if imp.cconv and found is not None and found != imp.cconv:
                raise self._import_error(
                    StatusCode.INTERNAL, f"import function {printable(full_name)} signature mismatch "
                    f"between {printable(m.name)} and source {printable(module_name)}; expected "
                    f"{printable(imp.cconv)} but got {printable(found)}",
                    full_name)
            cconv = found if found is not None else imp.cconv
            if cconv and cconv[0] != "0":  # iree_vm_function_call_get_cconv_fragments
                raise self._import_error(StatusCode.UNIMPLEMENTED,
                                         f"unsupported cconv version {cconv[0]}", full_name)
            if not imports.resolves(full_name, imp.cconv or None):  # the resolver agrees
                raise self._import_error(StatusCode.NOT_FOUND, "the resolver does not provide it",
                                         full_name)
            resolved.append(True)
        return resolved

    def _import_error(self, code: StatusCode, reason: str, full_name: str) -> "ImportStatusError":
        return ImportStatusError(full_name, code, f"{reason}; resolving module "
                                 f"'{printable(self.module.name)}' imports")

    def _prepare(self, ordinal: int, name: str) -> Function:
        """Decode and verify one function; its frame is IREE's (`verifier.function_layout`) plus
        the registers past it that IREE's checks allow (`verify_function`)."""
        m = self.module
        d = m.function_descriptors[ordinal]
        args, results = cconv_fragments(m.function_signatures[ordinal].cconv)
        code = function_bytecode(m, ordinal)
        layout = function_layout(self, ordinal)
        try:
            insts = decode_function(code, name)
        except DecodeError as e:
            if e.pc != len(code) - 1:
                # IREE decodes and verifies op by op: what its walk rejects before the op that
                # does not decode comes first
                self._verify_prefix(Function(ordinal, name, layout.i32, layout.ref,
                                             d.requirements, args, results,
                                             decode_function(code[:e.pc], name)), code, e.pc)
                raise
            # An op starting at the last byte: IREE's verifier walks pc < length - 1 and never
            # decodes it, so a lone opcode byte there is no error of its own (the function then
            # loads if a terminator precedes it, else lacks one).
            insts = decode_function(code[:-1], name)
        fn = Function(ordinal, name, layout.i32, layout.ref, d.requirements, args, results, insts)
        fn.result_chars = tuple(value_chars(results or ""))
        for i, inst in enumerate(insts):
            if inst.is_block:
                fn.block_index[inst.pc] = i + 1
        try:
            fn.i32_count, fn.ref_count, fn.traps = verify_function(self, fn)
        except BytecodeVerifyError as e:
            raise e.in_function(name) from None
        clamp_type_ids(self, fn)
        fn.too_big = layout.too_big
        return fn

    def _verify_prefix(self, fn: Function, code: bytes, pc: int) -> None:
        """What IREE's walk rejects up to the op at `pc`, which does not decode: the ops before it,
        then the feature bits of its ext prefix (checked before the rest of the op is read)."""
        try:
            verify_function(self, fn, complete=False)
            verify_prefix_feature(fn, code, pc)
        except BytecodeVerifyError as e:
            raise e.in_function(fn.name) from None

    def _compile(self, fn: Function) -> None:
        if fn.too_big:
            return  # never entered: its Frame raises RESOURCE_EXHAUSTED, as IREE's stack does
        for index, inst in enumerate(fn.instructions):
            if index in fn.traps:  # IREE would address memory outside its frame here
                fn.code.append((_trap, fn.traps[index], inst))
                continue
            try:
                handler, payload = compile_instruction(self, fn, inst)
            except BytecodeVerifyError as e:
                raise e.in_function(fn.name) from None
            fn.code.append((handler, payload, inst))
        if self.trace is not None:  # the trace hook (not compiled: the reference path)
            fn.code = [(self.trace.wrap(self, fn, i, h, inst), p, inst) for i, (h, p, inst) in enumerate(fn.code)]
        if self.compiled and not fn.traps:  # the reference path runs the traps
            fn.code = compile_blocks(self, fn)

    # ----------------------------------------------------------------------------------- execution

    def _execute(self, frame: Frame, function_name: str) -> "list | Invocation":
        """Run a call from its entry frame: its results, or the Invocation it suspended in."""
        stack = [frame]
        # counted down per instruction; from -1 an unbounded run never reaches 0
        budget = self._run(stack, self.max_steps + 1 if self.max_steps is not None else -1)
        if type(budget) is list:
            return budget
        invocation = Invocation(self, function_name, stack, budget, None)
        self.suspended.add(invocation)
        return invocation

    def _run(self, stack: list, budget: int) -> "list | int":
        """The loop: run the frame on top of `stack` until the bottom one returns (its results), or
        a handler yields (the budget left; `stack` kept as it stands, each frame's ip where it
        resumes). `budget` counts down per instruction (an exhausted one: DEADLINE_EXCEEDED)."""
        frame = stack[-1]
        try:
            code = frame.fn.code
            end = len(code)
            while True:
                budget -= 1
                if not budget:
                    raise self._out_of_steps(frame, stack)
                ip = frame.ip
                if ip >= end:
                    err = VmTrapError("execution ran past the end of the function")
                    raise err.locate(frame.fn.name, _end_pc(frame.fn), _callers(stack))
                handler, payload, inst = code[ip]
                frame.ip = ip + 1
                try:
                    out = handler(self, frame, payload)
                except VmError as e:
                    raise e.locate(frame.fn.name, _pc(frame, handler, inst),
                                   _callers(stack)) from None
                except StatusError as e:  # a failing status of the memory model (allocation...)
                    raise VmStatusError(e.code, e.message).locate(
                        frame.fn.name, _pc(frame, handler, inst), _callers(stack)) from e
                except HeapError as e:  # what would corrupt memory in the native runtime
                    raise VmTrapError(f"memory error: {e}").locate(
                        frame.fn.name, _pc(frame, handler, inst), _callers(stack)) from e
                except UnsupportedOpError as e:
                    raise e.in_function(frame.fn.name) from None
                if out is None:
                    continue
                if out is RETURN:
                    stack.pop()
                    if not stack:
                        leave = frame.fn.leavers.get(id(payload))
                        if leave is None:
                            return self._leave_external(frame, payload)
                        return leave(self, frame)
                    caller = stack[-1]
                    self._leave_internal(frame, payload, caller)
                    frame = caller
                    code = frame.fn.code
                    end = len(code)
                    continue
                if out is YIELD:  # suspended: frame.ip is where the frame resumes
                    return budget
                if len(stack) >= self.max_depth:
                    release_frame(self, out)
                    err = VmStatusError(StatusCode.RESOURCE_EXHAUSTED,
                                        f"call depth exceeds {self.max_depth} frames")
                    raise err.locate(frame.fn.name, _pc(frame, handler, inst), _callers(stack))
                stack.append(out)
                frame = out
                code = frame.fn.code
                end = len(code)
        except BaseException:
            if self.counted:  # unwinding: every frame still on the stack releases its refs
                for f in reversed(stack):
                    try:
                        release_frame(self, f)
                    except BaseException:  # noqa: BLE001 - the original error matters more
                        pass
            raise

    def _out_of_steps(self, frame: Frame, stack: list) -> VmStatusError:
        ip = frame.ip
        pc = frame.fn.code[ip][2].pc if ip < len(frame.fn.code) else _end_pc(frame.fn)
        err = VmStatusError(StatusCode.DEADLINE_EXCEEDED,
                            f"the call ran {self.max_steps} instructions, its max_steps budget")
        return err.locate(frame.fn.name, pc, _callers(stack))

    def enter_internal(self, caller: Frame, ordinal: int, operands: Sequence[Register],
                       results: Sequence[Register]) -> Frame:
        """The callee's frame with its arguments in place (refs retained or moved)."""
        callee = self.functions[ordinal]
        frame = Frame(callee)
        caller.return_regs = results
        i32_reg = ref_reg = 0
        cregs, fregs = caller.regs, frame.regs
        for char, reg in zip(value_chars(callee.cconv_args), operands):
            if char == "r":
                retain_or_move(self, caller.refs, reg, frame.refs, ref_reg)
                ref_reg += 1
                continue
            width = 8 if char in "IF" else 4
            if width == 8:
                i32_reg += i32_reg & 1
            src = 4 * reg.ordinal
            fregs[4 * i32_reg:4 * i32_reg + width] = cregs[src:src + width]
            i32_reg += width // 4
        return frame

    def _leave_internal(self, callee: Frame, operands: Sequence[Register], caller: Frame) -> None:
        try:
            for char, src, dst in zip(value_chars(callee.fn.cconv_results), operands,
                                      caller.return_regs):
                if char == "r":
                    retain_or_move(self, callee.refs, src, caller.refs, dst.ordinal)
                else:
                    width = 8 if char in "IF" else 4
                    caller.regs[4 * dst.ordinal:4 * dst.ordinal + width] = \
                        callee.regs[4 * src.ordinal:4 * src.ordinal + width]
            caller.return_regs = ()
            if caller.pending is not None:  # a vm.call.yieldable: on at its resume block
                caller.ip = caller.pending
                caller.pending = None
        finally:
            if self.counted:
                release_frame(self, callee)

    def _leave_external(self, frame: Frame, operands: Sequence[Register]) -> list:
        if not self.reference:  # next time: this loop generated for the return site
            frame.fn.leavers[id(operands)] = leave_function(frame.fn, operands, self.counted)
        out: list = []
        try:
            for char, reg in zip(frame.fn.result_chars, operands):
                if char == "r":
                    value = frame.refs[reg.ordinal]
                    if reg.move:
                        frame.refs[reg.ordinal] = None
                    elif value is not None:
                        self.retain(value)
                    out.append(value)
                else:
                    out.append(SCALARS[char].unpack_from(frame.regs, 4 * reg.ordinal)[0])
        except BaseException:
            for value in out:
                if value is not None and not isinstance(value, (int, float)):
                    self.release(value)
            raise
        finally:
            if self.counted:
                release_frame(self, frame)
        return out

    def import_call(self, ordinal: int, segment_sizes: Sequence[int] | None,
                    operands: Sequence[Register], results: Sequence[Register]
                    ) -> Callable[["Context", Frame, Any], None]:
        """The instruction handler `(ctx, frame, payload)` calling import `ordinal` from a frame:
        operand registers gathered per the import's cconv (planned here, once per call site),
        results stored in `results`."""
        imp = self.module.imported_functions[ordinal]
        full_name, cconv = imp.full_name, imp.cconv
        resolved = self.resolved[ordinal]
        args_cc, results_cc = cconv_fragments(cconv)
        plan = _gather_plan(args_cc, segment_sizes, operands, full_name) if resolved else ()
        if resolved and not self.reference and isinstance(self.imports, NativeImports):
            direct = native_call_site(self, full_name, cconv, plan, results_cc, results)
            if direct is not None:
                return direct
        gather = _gatherer(plan)
        result_plan = tuple((char, reg, SCALARS.get(char)) for char, reg in
                            zip(value_chars(results_cc or ""), results))
        imports = self.imports
        native = isinstance(imports, NativeImports)

        def call(_ctx: "Context", frame: Frame, _payload: Any) -> None:
            if not resolved:
                raise VmStatusError(StatusCode.NOT_FOUND, f"optional import `{printable(full_name)}` "
                                    f"(ordinal {ordinal}) not resolved")
            args, moved = gather(frame)
            try:
                if native:  # the argument buffer takes the moved references over, as the VM's does
                    # (call_ordinal releases them itself if the buffer never takes them)
                    handed, moved = tuple(i for i, _ in moved), ()
                    out = imports.call(full_name, cconv, args, moved=handed)
                else:
                    out = imports.call(full_name, cconv, args)
            except VmError:
                raise
            except StatusError as e:  # a native module's failing status
                raise VmStatusError(e.code, annotate(e.message, f"while calling import {printable(full_name)}")) \
                    from e
            finally:
                for _, value in moved:  # borrowed by other resolvers: released whatever the status
                    self.release(value)
            _store_results(self, frame, result_plan, out, full_name, cconv)
        return call

    def yieldable_import_call(self, ordinal: int, segment_sizes: Sequence[int] | None,
                              operands: Sequence[Register], results: Sequence[Register],
                              resume: int) -> Callable[["Context", Frame, Any], Any]:
        """The handler of a vm.call.yieldable / vm.call.variadic.yieldable of import `ordinal`
        (iree_vm_bytecode_call_import_yieldable, bytecode/dispatch.c): the first time it runs it
        begins the call, arguments gathered as `import_call` gathers them; when the call yields
        (DEFERRED) the frame stays at this instruction, marked `pending`, and the stack suspends
        (`YIELD`); each time it runs again it resumes the call (the export's shim with the RESUME
        flag and a fresh results buffer). When the call is done its results land in `results` and
        the frame goes on at the resume block (instruction index `resume`). Only native modules
        yield: another resolver's call is the plain import call, then the resume block."""
        imports = self.imports
        if not isinstance(imports, NativeImports):
            plain = self.import_call(ordinal, segment_sizes, operands, results)

            def call_then_resume(ctx: "Context", frame: Frame, payload: Any) -> None:
                plain(ctx, frame, payload)
                frame.ip = resume
            return call_then_resume
        imp = self.module.imported_functions[ordinal]
        full_name, cconv = imp.full_name, imp.cconv
        resolved = self.resolved[ordinal]
        args_cc, results_cc = cconv_fragments(cconv)
        plan = _gather_plan(args_cc, segment_sizes, operands, full_name) if resolved else ()
        gather = _gatherer(plan)
        result_plan = tuple((char, reg, SCALARS.get(char)) for char, reg in
                            zip(value_chars(results_cc or ""), results))
        note = f"while calling {'variadic ' if segment_sizes is not None else ''}import {printable(full_name)}"

        def call(ctx: "Context", frame: Frame, _payload: Any) -> Any:
            if not resolved:
                raise VmStatusError(StatusCode.NOT_FOUND, f"optional import `{printable(full_name)}` "
                                    f"(ordinal {ordinal}) not resolved")
            try:
                if frame.pending is None:  # begin: the argument buffer takes the moved refs over
                    args, moved = gather(frame)
                    out = imports.call(full_name, cconv, args, moved=tuple(i for i, _ in moved),
                                       yieldable=True)
                else:
                    out = imports.resume(full_name, cconv)
            except StatusError as e:
                if e.code == StatusCode.DEFERRED:  # run this instruction again on resume
                    frame.pending = full_name
                    frame.ip -= 1  # the loop (or the block ending here) set it one past
                    return YIELD
                frame.pending = None
                raise VmStatusError(e.code, annotate(e.message, note)) from e
            except BaseException:
                frame.pending = None
                raise
            frame.pending = None
            _store_results(self, frame, result_plan, out, full_name, cconv)
            frame.ip = resume
            return None
        return call


def _store_results(ctx: Context, frame: Frame, result_plan: tuple, out: Any, full_name: str,
                   cconv: str) -> None:
    """An import's results into their registers (refs owned by them); a wrong count is INTERNAL,
    a value its register cannot hold the ArgumentError of store_value (the later refs released)."""
    out = list(out) if out is not None else []
    if len(out) != len(result_plan):
        for value in out:
            if value is not None and not isinstance(value, (int, float)):
                ctx.release(value)
        raise VmStatusError(StatusCode.INTERNAL,
                            f"import {printable(full_name)} ({printable(cconv)}) returned {len(out)} "
                            f"result(s), expected {len(result_plan)}")
    regs, refs = frame.regs, frame.refs
    for i, ((char, reg, _), value) in enumerate(zip(result_plan, out)):
        if char == "r":
            store_ref(ctx, refs, reg.ordinal, value)
        else:
            try:
                store_value(regs, 4 * reg.ordinal, char, value,
                            f"{printable(full_name)} result {i}", import_result=True)
            except BaseException:
                for later in out[i + 1:]:
                    if later is not None and not isinstance(later, (int, float)):
                        ctx.release(later)
                raise


# --------------------------------------------------------------------------------------------------
# Invocations


# IREE's VM test runner (runtime/src/iree/vm/testing/test_runner.h, kMaxResumeCount): the resumes it
# allows one test function before it fails it as a likely infinite yield loop.
TEST_RUNNER_MAX_RESUMES = 10000


class Invocation:
    """One call of an export from its begin to its end (iree_vm_invoke_state_t, runtime/src/iree/
    vm/invocation.c): `Context.begin` runs it until it returns or yields. While `deferred`, its
    stack is kept, each frame where it resumes; `resume()` runs it on (the bytecode module's
    resume_call, dispatch_resume: the innermost frame goes on) until the next yield or the end;
    `finish()` resumes until done, as iree_vm_invoke and IREE's VM test runner do. Then `results`
    holds its results (ref results owned by the caller). A step budget (`Context(max_steps=)`)
    bounds the whole invocation, across its resumes. An error ends it (its frames released);
    `abort()` drops a deferred one (iree_vm_abort_invoke), as `Context.close` does."""

    def __init__(self, context: Context, function_name: str, stack: "list | None", budget: int,
                 results: "list | None") -> None:
        self.context = context
        self.function_name = function_name
        self.resumes = 0  # resumes run so far
        self._stack = stack  # None once done (or failed, or aborted)
        self._budget = budget
        self._results = results

    @property
    def deferred(self) -> bool:
        """Whether the call yielded and waits for a resume (IREE: DEFERRED)."""
        return self._stack is not None

    @property
    def results(self) -> list:
        if self._results is None:
            state = "has yielded and not finished" if self._stack is not None else "did not finish"
            raise InvocationStateError(f"results of '{printable(self.function_name)}': the call {state}")
        return self._results

    def resume(self) -> bool:
        """Run the call on from where it yielded; True when it is done. A call that is not
        deferred fails as IREE's resume of an empty stack does (FAILED_PRECONDITION)."""
        return self.context._locked(f"resume of '{printable(self.function_name)}'", self._resume)

    def _resume(self) -> bool:
        stack = self._stack
        if stack is None:
            raise VmStatusError(StatusCode.FAILED_PRECONDITION, "no frame at top of stack to resume")
        self.resumes += 1
        try:
            out = self.context._run(stack, self._budget)
        except BaseException:
            self._end()  # the loop released the frames
            raise
        if type(out) is list:
            self._end()
            self._results = out
            return True
        self._budget = out
        return False

    def finish(self, max_resumes: int | None = None) -> list:
        """Resume until done; the results. Past `max_resumes` resumes (None: no bound, as
        iree_vm_invoke; IREE's VM test runner allows TEST_RUNNER_MAX_RESUMES) the call is aborted
        and fails as that runner fails it (RESOURCE_EXHAUSTED)."""
        while self._stack is not None:
            if max_resumes is not None and self.resumes >= max_resumes:
                self.abort()
                raise VmStatusError(StatusCode.RESOURCE_EXHAUSTED,
                                    f"resume limit ({max_resumes}) exceeded for function "
                                    f"'{self.function_name}'; possible infinite yield loop")
            self.resume()
        return self.results

    def abort(self) -> None:
        """Drop a deferred call: every frame's references released. Idempotent."""
        stack = self._stack
        if stack is None:
            return
        self._end()
        ctx = self.context
        if ctx.counted:
            first: BaseException | None = None
            for f in reversed(stack):
                try:
                    release_frame(ctx, f)
                except BaseException as e:  # noqa: BLE001 - release everything, then report
                    first = first or e
            if first is not None:
                raise first

    def _end(self) -> None:
        self._stack = None
        self.context.suspended.discard(self)


# --------------------------------------------------------------------------------------------------
# Import resolution


class ImportStatusError(ImportResolutionError):
    """An import IREE's context would not resolve: `code` is the StatusCode it reports, the message
    its message (after `import <full_name>: `); `full_name` is the import's name (for a missing
    required module, its first import from that module, else the module's name)."""

    def __init__(self, full_name: str, code: StatusCode, reason: str) -> None:
        super().__init__(full_name, reason)
        self.code = code
        self.reason = reason

    def __reduce__(self):
        return (type(self), (self.full_name, self.code, self.reason))


def _registered_modules(imports: ImportResolver | None) -> "dict[str, int | None] | None":
    """Module name -> version (None: not known) of the modules a resolver stands for; None for a
    resolver whose modules are not known."""
    if imports is None:
        return {}
    if isinstance(imports, ContextImports):
        return {name: ctx.module.version for name, ctx in imports.contexts.items()}
    if isinstance(imports, NativeImports):
        return {name: module.version for name, module in imports.modules.items()}
    if isinstance(imports, FunctionImports):
        return {name.partition(".")[0]: None for name in imports.functions if "." in name}
    return None


def _lookup_export(imports: ImportResolver, module_name: str,
                   function: str) -> "tuple[StatusCode, str] | str | None":
    """The export's cconv (None when not known), or (code, message) as the module's
    lookup_function fails: a bytecode module (module.c) or a native one (native_module.c)."""
    if isinstance(imports, ContextImports):
        if not function:
            return StatusCode.INVALID_ARGUMENT, "function name required for query"
        module = imports.contexts[module_name].module
        for e in module.exported_functions:
            if e.name == function:
                return e.cconv or ""
        return StatusCode.NOT_FOUND, f"no function `{printable(function)}` exported by module"
    if isinstance(imports, NativeImports):
        native = imports.modules[module_name]
        try:
            ordinal = native.lookup(function)
        except StatusError as e:
            return StatusCode(e.code), e.message
        return native.exports[ordinal].cconv or ""
    if f"{module_name}.{function}" in imports.functions:  # FunctionImports
        return None
    return StatusCode.NOT_FOUND, (f"no function `{printable(function)}` exported by module "
                                  f"`{printable(module_name)}`")


# --------------------------------------------------------------------------------------------------
# Import argument gathering

# A plan entry: (0, struct, byte offset) a scalar; (1, ref ordinal, move) a ref; (2, elements, _) a
# span, elements being a tuple of per-element plans.


def _gather_plan(cconv: str | None, segment_sizes: Sequence[int] | None,
                 operands: Sequence[Register], name: str) -> tuple:
    if cconv is None:
        raise VmStatusError(StatusCode.INVALID_ARGUMENT,
                            f"import {printable(name)} has no calling convention")
    regs = iter(operands)

    def one(char: str) -> tuple:
        reg = next(regs)
        if char == "r":
            return (1, reg.ordinal, reg.move)
        return (0, SCALARS[char], 4 * reg.ordinal)

    plan: list = []
    i = seg = 0
    try:
        while i < len(cconv):
            char = cconv[i]
            if char == "C":
                end = cconv.index("D", i)
                if segment_sizes is None:
                    raise VmStatusError(StatusCode.INVALID_ARGUMENT,
                                        f"import {printable(name)} is variadic but was called without "
                                        f"segment sizes")
                body = [c for c in cconv[i + 1:end] if c in "iIfFr"]
                elements = tuple(tuple([one(c) for c in body])
                                 for _ in range(segment_sizes[seg]))
                plan.append((2, elements, None))
                i = end
            elif char in "iIfFr":
                plan.append(one(char))
            i += 1
            seg += 1
    except (StopIteration, IndexError):
        raise VmStatusError(StatusCode.INVALID_ARGUMENT,
                            f"operands of the call to {printable(name)} do not match its cconv "
                            f"'{printable(cconv)}' "
                            f"(segment sizes {segment_sizes})") from None
    return tuple(plan)


def _gatherer(plan: tuple) -> Callable[[Frame], tuple[list, Sequence]]:
    """The gathering function of a plan: a single comprehension when no operand is a span or a
    MOVE-marked ref (the common case), `_gather` otherwise."""
    if any(kind == 2 or (kind == 1 and b) for kind, _, b in plan):
        return lambda frame: _gather(plan, frame)
    no_moves: tuple = ()

    def simple(frame: Frame) -> tuple[list, Sequence]:
        regs, refs = frame.regs, frame.refs
        return [a.unpack_from(regs, b)[0] if kind == 0 else refs[a] for kind, a, b in plan], \
            no_moves
    return simple


def _gather(plan: tuple, frame: Frame) -> tuple[list, list]:
    """(arguments, moved refs as (index in packer order, ref)): MOVE-marked refs are taken out of
    their registers (in order, as the VM's retain_or_move into the argument buffer does); the
    argument buffer takes them over, or the caller releases them after the call."""
    regs, refs = frame.regs, frame.refs
    moved: list = []
    index = [0]  # the value's position in packer order (spans flattened)

    def value(entry: tuple) -> Any:
        kind, a, b = entry
        index[0] += 1
        if kind == 0:
            return a.unpack_from(regs, b)[0]
        v = refs[a]
        if b:
            refs[a] = None
            if v is not None:
                moved.append((index[0] - 1, v))
        return v

    out: list = []
    for entry in plan:
        if entry[0] == 2:
            out.append([tuple([value(e) for e in element]) for element in entry[1]])
        else:
            out.append(value(entry))
    return out, moved


def _pc(frame: Frame, handler: Any, inst: Any) -> int:
    """The pc of the instruction that raised or called: a block function leaves frame.ip one past
    it; a single handler is its own instruction."""
    if getattr(handler, "is_block", False):
        return frame.fn.code[frame.ip - 1][2].pc
    return inst.pc


def _callers(stack: list) -> list[tuple[str, int]]:
    return [(f.fn.name, f.fn.code[f.ip - 1][2].pc) for f in reversed(stack[:-1])]


def _end_pc(fn: Function) -> int:
    last = fn.instructions[-1] if fn.instructions else None
    return last.pc + last.length if last else 0


__all__ = ["Context", "DEFAULT_MAX_DEPTH", "ImportStatusError", "Invocation", "TEST_RUNNER_MAX_RESUMES"]
