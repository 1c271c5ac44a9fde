"""`Context`: a context holding one bytecode module (runtime/src/iree/vm/bytecode/module.c): the
module created, its state, and the context's calls run by the interpreter.

Creating a Context reads the module (path, bytes or `module_file.ModuleFile`), makes its rodata
buffers (through the buffer factory), decodes and verifies every function (IREE does when it creates
the module, before any context sees it: `_prepare`), resolves its imports (as
iree_vm_context_register_modules does: vm/context.py's `resolve_imports`), compiles every function
into handlers (ireeabi's own: compile.py; the first context of a module on its terms, where the
load refusals are found) and each function's blocks at its first frame (blocks.py, unless on the
reference path), allocates the
module state (a zeroed globals blob of `global_bytes_capacity` bytes plus `global_ref_count` ref
slots: module_state.py) and runs the `__init` export. `invoke(name, *args) -> list` then calls
exports (vm/context.py), keeping the state across calls, each run by dispatch.py; `close()` aborts
suspended invocations, releases the state's references and what the factory allocated.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Any, Callable

from ...abi.errors import UnknownNameError
from ...base.reference_path import reference_forced
from .. import context
from ..errors import ArgumentError
from ..import_resolvers import ImportResolver
from .blocks import compile_blocks
from .buffer_factory import BufferFactory
from .compile import compile_instruction
from .decoder import DecodeError, decode_function, function_bytecode, function_names
from .dispatch import Dispatch
from .module_file import ExportedFunction, ModuleFile, read_module
from .module_state import global_bytes, global_refs, held_refs
from .registers import Frame, Function, cconv_fragments, release_frame, value_chars
from .verifier import (BytecodeVerifyError, clamp_type_ids, function_layout,
                                          verify_function, verify_prefix_feature)
from ..errors import VmTrapError

DEFAULT_MAX_DEPTH = 1024  # frames; IREE limits the stack by bytes instead


def _trap(ctx: Any, frame: Frame, reason: str) -> None:
    """The handler of an instruction IREE runs on memory outside its frame or globals (verifier
    `FrameUse.traps`): what IREE reads there is no reproducible value, or it crashes."""
    raise VmTrapError(f"{reason}; IREE would read or write memory it does not own here")


class Context(Dispatch, context.Context):
    """One bytecode module instance: its state (globals) lives across `invoke` calls."""

    def __init__(self, module: "ModuleFile | str | os.PathLike | bytes",
                 imports: ImportResolver | None = None, *, buffers: BufferFactory | None = None,
                 max_depth: int = DEFAULT_MAX_DEPTH, max_steps: int | None = None,
                 run_init: bool = True, reference: bool = False, trace: Any = None) -> None:
        super().__init__(module if isinstance(module, ModuleFile) else read_module(module), imports)
        # An execution trace (tooling/trace.py's Trace: `wrap` gives each handler traced); it runs
        # on the reference path, whose handlers are one per instruction.
        self.trace = trace
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
        m = self.module
        # allocated as IREE callocs them: what the file declares costs only what is touched
        self.rwdata = global_bytes(m.global_bytes_capacity)
        self.global_refs = global_refs(m.global_ref_count)
        self.rodata: list = []
        self._entries: dict[str, tuple[Function, tuple[tuple[str, int], ...], Callable | None]] = {}
        self._direct_makers: dict[tuple[str, tuple[int, ...]], tuple] = {}
        try:
            self.rodata = self.buffers.rodata_buffers(m)
            self.functions: list[Function] = self._prepared()
            self.resolved = self.resolve_imports()
            # IREE refuses a module at load for what compiling finds (call lists, returns): the
            # first context on these terms compiles every function's handlers, where those
            # refusals are found; later ones, which would find the same, compile each function at
            # its first frame (`ready`), so that a context costs what it runs, not the module's
            # size (one per test of a VM test module). Blocks (the fast path's generated code,
            # which refuses nothing) are made at a function's first frame in every context.
            terms = ("compiled", self.machine.name, self.reference, self.compiled, tuple(self.resolved))
            if self.trace is not None or terms not in m.memo:
                for fn in self.functions:
                    self.compile_handlers(fn)
                if self.trace is None:
                    m.memo[terms] = True
            if run_init and "__init" in self._exports():
                self.invoke("__init")
        except BaseException:
            self.close()
            raise

    def exported(self, name: str) -> ExportedFunction:
        """The export `name` (iree_vm_bytecode_module_lookup_function's export table)."""
        found = self._exports().get(name)
        if found is not None:
            return found
        raise UnknownNameError("exported function", name,
                               [e.name for e in self.module.exported_functions])

    def _exports(self) -> dict[str, ExportedFunction]:
        """name -> export, the first of a name as the table's walk finds it (once per module)."""
        exports = self.module.memo.get("exports")
        if exports is None:
            exports = {}
            for e in self.module.exported_functions:
                exports.setdefault(e.name, e)
            self.module.memo["exports"] = exports
        return exports

    def release_state(self) -> None:
        """Release the module state's references (ref globals) and the factory's rodata (every
        release runs; the first error is raised after them)."""
        first: BaseException | None = None
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

    def abort_call(self, stack: list) -> None:
        """Release every frame of a suspended call's stack (innermost first; every release runs,
        the first error is raised after them)."""
        if self.counted:
            first: BaseException | None = None
            for f in reversed(stack):
                try:
                    release_frame(self, f)
                except BaseException as e:  # noqa: BLE001 - release everything, then report
                    first = first or e
            if first is not None:
                raise first

    # --------------------------------------------------------------------------------- preparation

    def _prepared(self) -> list[Function]:
        """The module's functions decoded and verified on this data model: done once per module
        and data model (`ModuleFile.memo`; the verifier reads only those). They are shared, not
        ready: `compile_function` puts the context's own compiled copy in their place."""
        m = self.module
        key = ("prepared", self.machine.name)
        shared = m.memo.get(key)
        if shared is None:
            names = function_names(m)
            shared = [self._prepare(i, names[i]) for i in range(len(m.function_descriptors))]
            m.memo[key] = shared
        return list(shared)

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

    def compile_all(self) -> list[Function]:
        """Every function compiled now, as the first context of a module on its terms compiles them
        at load (a later one compiles a function at its first frame): for what looks at the code a
        context runs (its generated blocks and regions) without running it all."""
        for fn in list(self.functions):
            if not fn.ready:
                self.compile_function(fn)
        return list(self.functions)

    def compile_handlers(self, shared: Function) -> Function:
        """The context's own copy of the prepared function `shared` with its handlers (one per
        instruction: what IREE refuses at load is found here), in its place in `functions`; not yet
        `ready` unless it is never entered. A copy that has its handlers already is returned as it
        is."""
        if shared.handled:
            return shared
        fn = dataclasses.replace(shared, code=[], leavers={}, ready=False, handled=True)
        self.functions[fn.ordinal] = fn
        if fn.too_big:
            fn.ready = True
            return fn  # never entered: its Frame raises RESOURCE_EXHAUSTED, as IREE's stack does
        for index, inst in enumerate(fn.instructions):
            if index in fn.traps:  # IREE would address memory outside its frame here
                fn.code.append((_trap, fn.traps[index], inst))
                continue
            try:
                handler, payload = compile_instruction(self, fn, inst)
            except BytecodeVerifyError as e:
                raise e.in_function(fn.name) from None
            fn.code.append((handler, payload, inst))
        return fn

    def compile_function(self, shared: Function) -> Function:
        """The function `shared` (prepared, or the context's copy with its handlers) compiled for
        its first frame: handlers (`compile_handlers`), the trace's wrappers when tracing, and
        blocks on the compiled path; `ready`, in its place in `functions`."""
        fn = self.compile_handlers(shared)
        if fn.ready:
            return fn
        if self.trace is not None:  # the trace hook (not compiled: the reference path)
            fn.code = [(self.trace.wrap(self, fn, i, h, inst), p, inst) for i, (h, p, inst) in enumerate(fn.code)]
        if self.compiled and not fn.traps:  # the reference path runs the traps
            fn.code = compile_blocks(self, fn)
        fn.ready = True
        return fn

    # ----------------------------------------------------------------------------------- execution


__all__ = ["Context", "DEFAULT_MAX_DEPTH"]
