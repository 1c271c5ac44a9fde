"""How a bytecode module's calls run (runtime/src/iree/vm/bytecode/dispatch.c): the interpreter's
loop, its calls and returns, and its import calls, for the `Context` of module.py (`Dispatch`).

Calls follow dispatch.c:

- an export's call (`begin_call`, external enter) places its arguments as the function's calling
  convention lays them out (i32/f32 one register each, i64/f64 on the next even register, refs in
  order, each retained: the caller keeps its own references); external leave hands back owned ref
  results;
- internal calls place arguments the same way (each ref retained or moved per its MOVE bit) and
  copy results back by the same widths; leaving a frame releases every ref register it still holds
  (also when an error unwinds the stack);
- import calls gather the operand registers in cconv order (spans as lists of per-element tuples,
  sized by the segment sizes) and hand them to the ImportResolver; ref arguments are borrowed for
  the call, MOVE-marked ones are taken out of their registers first and released after the call
  (whatever its status), as the VM releases its argument buffer; ref results are owned by the
  registers they land in.

Yields (IREE_STATUS_DEFERRED): vm.yield, or a yieldable import call (vm.call.yieldable) whose native
module returns DEFERRED, suspends the whole call stack, each frame where it resumes; the call's
`Invocation` (vm/invocation.py) resumes it (`resume_call`). A plain vm.call of an import with results
that yields is UNIMPLEMENTED, as in IREE; only native modules (`NativeImports`) yield, other
resolvers' calls run to their end. A step budget (`max_steps`) counts instructions across a call's
resumes (DEADLINE_EXCEEDED when used up; not IREE's).

The loops here are the reference; the fast path's generated call sites (an export's entry, the
return to `invoke`'s caller, an import call over a planned native call) are call_sites.py's.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ...abi.printable import printable
from ...base.heap import HeapError
from ...base.status import IreeFaultError, StatusCode, StatusError
from ..errors import ArgumentError, VmError, VmStatusError, VmTrapError, annotate, where
from ..import_resolvers import NativeImports
from ..invocation import Invocation
from ..ops import M32, M64, U32, U64
from .call_sites import (I32_MIN, I64_MIN, SCALARS, U32_END, U64_END, direct_entry_maker,
                                            entry_function, leave_function, native_call_site)
from .decoder import Register, UnsupportedOpError
from .handlers import RETURN, YIELD
from .registers import (Frame, Function, cconv_fragments, release_frame,
                                           retain_or_move, store_ref, store_value, value_chars)


class Dispatch:
    """dispatch.c's part of a bytecode module's Context (module.py), which provides what these
    methods use:"""

    module: Any  # module_file.ModuleFile
    functions: list[Function]
    imports: Any  # the ImportResolver
    resolved: list[bool]  # per import: resolved or not
    retain: Callable[[Any], None]
    release: Callable[[Any], None]
    counted: bool  # the buffer factory counts references (frames release theirs)
    reference: bool  # the reference path: no generated call sites
    max_depth: int
    max_steps: "int | None"
    suspended: set
    _entries: dict
    # (export name, varying indexes) -> (fixed ref indexes, fixed scalars, template bytes, the
    # direct_entry_maker's `make`, None on the reference path)
    _direct_makers: dict
    # the rest of ExecutionState (state.py) and InvokingContext (vm/invocation.py), which the
    # handlers and Invocation are given this context as
    machine: Any  # base.machine.Machine
    buffers: Any  # the BufferFactory
    rwdata: Any  # bytearray, or an mmap when large
    global_refs: Any  # a list, or GlobalRefs when large
    rodata: list
    invoke: Callable[..., list]
    exported: Callable[[str], Any]  # vm/context.py: the export of that name
    run_locked: Callable[..., Any]
    abort_call: Callable[[list], None]
    compile_function: Callable[[Function], Function]  # a function's handlers, before its first frame

    def _counted_entry(self, function_name: str, args: tuple) -> tuple:
        """The export's entry (`_entry`, once per export), `args` counted against its arguments."""
        entry = self._entries.get(function_name)
        if entry is None:
            entry = self._entry(function_name)
        if len(args) != len(entry[1]):
            export = self.exported(function_name)
            raise ArgumentError(f"{printable(function_name)} takes {len(entry[1])} argument(s) "
                                f"({export.cconv}), got {len(args)}")
        return entry

    def begin_call(self, function_name: str, args: tuple) -> "list | Invocation":
        """iree_vm_bytecode_dispatch_begin: the export's arguments placed in its entry frame
        (external enter), then the loop; its results, or the Invocation it suspended in."""
        fn, places, enter = self._counted_entry(function_name, args)
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
        if not fn.ready:
            fn = self.compile_function(fn)
        if fn.cconv_args is None:
            raise ArgumentError(f"export '{printable(function_name)}' has no calling convention")
        if any(c in fn.cconv_args for c in "CD"):
            raise ArgumentError(f"export '{printable(function_name)}' takes spans ({export.cconv}); "
                                f"bytecode functions cannot")
        places: list[tuple[str, int]] = []
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
        fixed = tuple(places)
        enter = None if self.reference else entry_function(fn, fixed, function_name)
        entry = self._entries[function_name] = (fn, fixed, enter)
        return entry

    def direct_call(self, function_name: str, args: tuple, varying: Sequence[int]) -> Callable[..., list]:
        """`call(*values) -> results`: calls of one export with `args`, but for the scalar arguments
        at the indexes `varying`, which each call gives (in that order). It is what IREE's vmvx
        loader does per workgroup (vmvx_module_loader.c: the module's begin_call on the function it
        resolved at load, no invoke): the export is looked up, `args` counted and the fixed scalars
        checked and laid out once, here; each call then places the varying values, retains the
        fixed refs into its frame and runs as `invoke` would (a call that yields is resumed to its
        end, as invoke does). The caller holds the context across the calls (`run_locked`) and
        keeps the fixed refs alive while it uses `call`. On the reference path each call is
        `begin_call` with the whole argument tuple."""
        fn, places, enter = self._counted_entry(function_name, args)
        varying = tuple(varying)
        layout = self._direct_makers.get((function_name, varying))  # once per export and varying
        if layout is None:
            if len(set(varying)) != len(varying) or not all(0 <= i < len(places) and places[i][0] != "r"
                                                            for i in varying):
                raise ArgumentError(f"{printable(function_name)}: the varying arguments {varying} must "
                                    f"be distinct scalar arguments")
            fixed_refs = tuple(i for i, (char, _) in enumerate(places) if char == "r")
            fixed = tuple((i, char, at) for i, (char, at) in enumerate(places) if char != "r" and i not in varying)
            prefix = max((at + (8 if char in "IF" else 4) for char, at in places if char != "r"), default=0)
            make = None if enter is None else direct_entry_maker(fn, places, function_name, varying,
                                                                  fixed_refs, prefix)
            layout = self._direct_makers[function_name, varying] = (fixed_refs, fixed, prefix, make)
        if enter is None:  # the reference path: the whole begin_call per call
            base = list(args)

            def reference_call(*values: Any) -> list:
                full = list(base)
                for i, v in zip(varying, values):
                    full[i] = v
                out = self.begin_call(function_name, tuple(full))
                return out if isinstance(out, list) else out.finish(None)
            return reference_call
        fixed_refs, fixed, prefix, make = layout
        assert make is not None  # made on the fast path, where enter is not None
        template = bytearray(prefix)
        for i, char, at in fixed:  # begin_call's checks and messages, once
            v = args[i]
            if char == "i" and type(v) is int and I32_MIN <= v < U32_END:
                U32.pack_into(template, at, v & M32)
            else:
                store_value(template, at, char, v, f"{printable(function_name)} argument {i}")
        enter_with = make(bytes(template), [args[i] for i in fixed_refs])
        execute = self._execute

        def call(*values: Any) -> list:
            out = execute(enter_with(self, *values), function_name)
            return out if isinstance(out, list) else out.finish(None)
        return call

    def resume_call(self, stack: list, budget: int) -> "list | int":
        """iree_vm_bytecode_dispatch_resume: the loop on from a suspended stack."""
        return self._run(stack, budget)

    def _execute(self, frame: Frame, function_name: str) -> "list | Invocation":
        """Run a call from its entry frame: its results, or the Invocation it suspended in."""
        stack = [frame]
        # counted down per instruction; from -1 an unbounded run never reaches 0
        budget = self._run(stack, self.max_steps + 1 if self.max_steps is not None else -1)
        if isinstance(budget, list):
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
                    err: VmError = VmTrapError("execution ran past the end of the function")
                    raise err.locate(frame.fn.name, _end_pc(frame.fn), _callers(stack))
                handler, payload, inst = code[ip]
                frame.ip = ip + 1
                try:
                    out = handler(self, frame, payload)
                except VmError as e:
                    raise e.locate(frame.fn.name, _pc(frame, handler, inst),
                                   _callers(stack))  # its cause kept: the status it carries
                except StatusError as e:  # a failing status of the memory model (allocation...)
                    raise VmStatusError(e.code, e.message).locate(
                        frame.fn.name, _pc(frame, handler, inst), _callers(stack)) from e
                except HeapError as e:  # what would corrupt memory in the native runtime
                    raise VmTrapError(f"memory error: {e}").locate(
                        frame.fn.name, _pc(frame, handler, inst), _callers(stack)) from e
                except IreeFaultError as e:  # IREE's own runtime would fault here: no status
                    raise e.locate(where(frame.fn.name, _pc(frame, handler, inst), _callers(stack)))
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
        if not callee.ready:
            callee = self.compile_function(callee)
        frame = Frame(callee)
        caller.return_regs = results
        i32_reg = ref_reg = 0
        cregs, fregs = caller.regs, frame.regs
        for char, reg in zip(value_chars(callee.cconv_args or ""), operands):  # checked at the call
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
            for char, src, dst in zip(value_chars(callee.fn.cconv_results or ""), operands,
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
                    ) -> Callable[[Any, Frame, Any], None]:
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

        def call(_ctx: Any, frame: Frame, _payload: Any) -> None:
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
                              resume: int) -> Callable[[Any, Frame, Any], Any]:
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

            def call_then_resume(ctx: Any, frame: Frame, payload: Any) -> None:
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

        def call(ctx: Any, frame: Frame, _payload: Any) -> Any:
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


def _store_results(ctx: Any, frame: Frame, result_plan: tuple, out: Any, full_name: str,
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


__all__ = ["Dispatch"]
