"""`Program`: a compiled module running on the emulated inline HAL, called with numpy values, as
iree-run-module runs one (IREE's runtime/src/iree/tooling/run_module.c: tooling, not the VM).

    with Program("model.vmfb", RunOptions(target="riscv32")) as prog:  # options: `RunOptions`
        a, b = np.ones(16, np.float32), np.arange(16, dtype=np.float32)
        out = prog.call("add", a, b)             # as iree.runtime: one result itself, none None,
                                                  # several a tuple
        print(format_results(prog.call_results("add", a, b)))  # the results' list, printed exactly
                                                  # as iree-run-module prints them
    # closed: everything released; LeakError if anything outlived the program on its own heap

One `HalRuntime` (hal_inline and hal_loader as native modules on a tracked heap), one bytecode
`Context` on it with the real backend (`VmBufferFactory`: vm.buffer refs counted in memory, rodata
as module-storage buffers) and `NativeImports` (every import call packed into an argument buffer and
run through the export's shim). The context, and so the module's globals, live across calls.

Native modules of one's own (`RunOptions(modules=[...])`, `layouts.modules.ModuleDescriptor`s with
implementations) run next to hal_inline and hal_loader; a module the program imports and nobody
passed is looked up among the registered ones (`layouts.modules.register`) and those installed
packages declare (`layouts.module_sources.installed`). Each is instantiated with the overloads the
program's imports ask for (`ModuleDescriptor.select`).

`RunOptions.heap_limit` bounds the program's live heap bytes (default: the host's memory, within the
target's address window; RESOURCE_EXHAUSTED past it).

The program runs on one data model (`RunOptions.target`, the host by default; or the given heap's):
every struct,
argument buffer and shim is laid out for it, so a module runs as it would on a riscv32, armv7, wasm32
or i386 device. Kernels of host machine code (inline-dynamic) run only when the target is the host.

Threads: a program's calls (and `buffer_view`, `to_numpy`, `close`) from several threads run one after
another under the program's lock; the heap, runtime and context under it have no locks of their own and
belong to one thread at a time (a `Context` refuses another thread's invoke with ContextBusyError).

Inputs are converted as iree-run-module feeds them, through the HAL's C API and not the VM's: a numpy
array (or anything np.asarray takes) for a ref argument becomes a hal.buffer_view over a new heap
buffer (64-byte aligned, the bytes copied in, as iree_hal_buffer_view_allocate_buffer_copy makes
it) — and None is a null ref; a Python or numpy scalar for an `i`/`I`/`f`/`F` argument is range-checked and
converted (f32 rounds to nearest). Results come back as numpy arrays copied out of the result buffer
views (shape, element type -> dtype), scalars for primitive results (`call`: Python int / float,
as iree.runtime returns them; `call_results`: np.int32 / np.int64 / np.float32 / np.float64, so
`format_results` prints their width), None for null refs, Python lists
for vm.list results (`ResultList`: buffer views as numpy arrays, value slots as Python ints /
floats, empty slots and null refs as None, nested lists as lists; each keeps its items' VM value
types so `format_results` prints it as iree-run-module does) and `OpaqueResult(type name)` for
other refs; every reference a call produced is released before `call` returns.
"""
from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..abi.errors import IreeAbiError
from ..abi.targets import Target
from ..modules.hal.runtime import HalRuntime, run_module_type_names
from ..modules.vmvx.module import VMVX_MODULE_NAME
from ..layouts import modules as _modules
from ..layouts.modules import ModuleDescriptor
from ..vm import ref as _ref
from ..base.allocation import leak_report
from ..base.heap import Heap, LeakError
from ..vm.bytecode.module import DEFAULT_MAX_DEPTH, Context
from ..vm.errors import ArgumentError, ContextClosedError
from ..vm.import_resolvers import NativeImports
from ..vm.list import VmList
from ..vm.bytecode.registers import cconv_fragments, value_chars
from ..vm.bytecode.vm_buffer_factory import VmBufferFactory
from ..base.machine import Machine, machine as _machine
from ..vm.bytecode.module_file import ModuleFile, read_module
from ..vm.ref import Ref
from ..base.status import StatusCode, StatusError

from . import execution_model
from .function_io import OpaqueResult, ResultList, Value, list_item

if TYPE_CHECKING:
    from .trace import Trace

_SCALARS = {"i": np.int32, "I": np.int64, "f": np.float32, "F": np.float64}


MAX_STEPS_LIMIT = 2**64 - 1  # the largest count the emulators take (Unicorn's, wasmtime's fuel: u64)


def instruction_count(text: str) -> int:
    """A `max_steps` written as text (the CLI's --max-steps, the pytest plugin's
    ireeabi_max_steps): a positive decimal count up to MAX_STEPS_LIMIT, read as an integer (no float
    conversion: every count a user may mean is exact); ValueError naming the text otherwise."""
    s = text.strip()
    if not s.isascii() or not s.isdigit() or not s.strip("0"):
        raise ValueError(f"{text!r} is not a positive instruction count")
    s = s.lstrip("0")
    if len(s) > len(str(MAX_STEPS_LIMIT)) or int(s) > MAX_STEPS_LIMIT:  # (no int() of 10,000 digits)
        raise ValueError(f"{text!r} is past the largest instruction count, 2**64 - 1 ({MAX_STEPS_LIMIT})")
    return int(s)


@dataclass(frozen=True)
class RunOptions:
    """How a `Program` runs its module; every field has iree-run-module's default (the host, no
    bound, the fast path, the fixed runtime). One value serves any number of programs.

    `target`: the data model to run on (a name such as "riscv32", a Target or a Machine; the host by
    default; a Program given a heap runs on the heap's).
    `modules`: native modules of one's own (see the module docstring).
    `heap_limit`: the live bytes of the program's own heap (see the module docstring).
    `max_steps`: instructions one call may run before it fails with DEADLINE_EXCEEDED (None: no
    bound, as iree-run-module); it also bounds each emulated kernel call (in target instructions;
    wasm instructions under wasmtime). `max_depth`: the VM's call depth.
    `kernel_cpu_time`: host kernels run natively, where no instruction can be counted: this bounds
    each of their dispatches in CPU seconds (DEADLINE_EXCEEDED past it); without it, `max_steps`
    gives them max_steps / 1e8 s, at least 1 s (hal/local/native.py), and without either no bound.
    Ctrl-C stops a native kernel either way: the call fails with CANCELLED.
    `reference`: the reference path everywhere: the interpreter's per-instruction handlers instead
    of its compiled basic blocks (vm/bytecode/blocks.py), layered import calls instead of planned
    call sites, and the heap's allocator through its function pointer (`Heap.force_reference`, also
    on a heap given); IREEABI_REFERENCE=1 does the same for every program.
    `emulate_kernels`: host kernels run in the emulated CPU too (kernels of another architecture
    than the host's always do: hal/local/emulated_executable.py; wasm32 kernels under wasmtime:
    hal/local/wasm_executable.py).
    `legacy_loader` / `legacy_inline` / `legacy_vm_buffer`: the HalRuntime's pre-fix modes (IREE
    #24827). `cpu_data`: the processor data words kernels see (HalRuntime's; default the host's).
    `trace`: an execution trace (tooling/trace.py): a `Trace`, or a level ("imports", "calls",
    "instructions"; True is "imports") for a new one per program, keeping its events in
    `program.trace.events`; it runs the interpreter on the reference path.
    """

    target: "Machine | Target | str | None" = None
    modules: Sequence[ModuleDescriptor] = ()
    heap_limit: int | None = None
    max_steps: int | None = None
    max_depth: int = DEFAULT_MAX_DEPTH
    kernel_cpu_time: float | None = None
    reference: bool = False
    emulate_kernels: bool = False
    legacy_loader: bool = False
    legacy_inline: bool = False
    legacy_vm_buffer: bool = False
    cpu_data: Sequence[int] | None = None
    trace: "Trace | str | bool | None" = None



def _as_python(value: Any) -> Any:
    """A numpy scalar as the Python int / float iree.runtime returns for a primitive result."""
    return value.item() if isinstance(value, np.generic) else value


class Program:
    """A module loaded into a HalRuntime-backed interpreter context (see the module docstring), run
    as `options` say (`RunOptions`).

    `heap`: the tracked heap to run on (e.g. from `base.heap.tracked_heap()`), whose target is then
    the program's; without one the program makes its own and `close()` raises LeakError if
    anything outlived it. A context manager: leaving the `with` closes the program; when the body
    raised, that error is the one that propagates (the leaks of a failed run are not reported, as
    `tracked_heap` reports none on an error).
    """

    def __init__(self, module: "ModuleFile | str | os.PathLike | bytes",
                 options: RunOptions = RunOptions(), *, heap: Heap | None = None) -> None:
        if not isinstance(options, RunOptions):
            raise IreeAbiError(f"Program options are a RunOptions, got {type(options).__name__}")
        self.options = options
        target, modules, trace = options.target, options.modules, options.trace
        traced = None
        if trace is not None and trace is not False:  # the tracer (and the disassembler) only then
            from .trace import as_trace
            traced = as_trace(trace)  # checked before anything is made
        # Read before the runtime exists (the module says which one it needs): its types resolve
        # against those of iree-run-module's instance.
        self.module = module if isinstance(module, ModuleFile) else \
            read_module(module, ref_types=run_module_type_names())
        # iree-compile's default execution model imports the full `hal` module: served by the
        # runtime's local-sync device unless a `hal` module of one's own is given.
        full_hal = execution_model.needs_full_hal(self.module, [d.name for d in modules])
        refusal = execution_model.legacy_loader_refusal(self.module) if options.legacy_loader and full_hal else None
        if refusal is not None:  # never silently ignored
            raise IreeAbiError(refusal)
        if heap is not None and target is not None and _machine(target) is not heap.machine:
            raise IreeAbiError(f"Program target {_machine(target).name} differs from its heap's "
                               f"({heap.machine.name})")
        if heap is not None and options.heap_limit is not None:
            raise IreeAbiError("heap_limit applies to the program's own heap; the given heap has its "
                               "own limit")
        declared = native_modules_for(self.module, modules)
        # Calls from several threads are serialized: the heap, the runtime and the context under
        # the program have no locks of their own (a context refuses a second thread's invoke).
        self._lock = threading.RLock()
        self._own_heap = heap is None
        self.heap = heap if heap is not None else Heap(target=target, limit=options.heap_limit,
                                                        name=f"program {self.module.name}")
        if options.reference:  # the runtime's own calls below take the reference path too
            self.heap.force_reference()
        self.machine = self.heap.machine
        self._mark = self.heap.mark()
        self.closed = False
        self.trace = traced
        self._signatures: dict[str, tuple[str, str]] = {}
        self._fenced: dict[str, bool] = {}
        try:
            self.runtime = HalRuntime(self.heap, legacy_vm_buffer=options.legacy_vm_buffer,
                                      legacy_inline=options.legacy_inline,
                                      legacy_loader=options.legacy_loader,
                                      cpu_data=None if options.cpu_data is None else list(options.cpu_data),
                                      modules=declared, full_hal=full_hal,
                                      emulate_kernels=options.emulate_kernels,
                                      max_kernel_instructions=options.max_steps,
                                      kernel_cpu_time=options.kernel_cpu_time, trace=self.trace)
        except BaseException:  # e.g. a module of one's own that cannot be made
            if self._own_heap:
                self.heap.close()
            self.closed = True
            raise
        self.buffers = VmBufferFactory(self.runtime.vm_buffers)
        self.imports = NativeImports(self.runtime.modules)
        try:
            self.context = Context(self.module, self.imports, buffers=self.buffers,
                                   max_depth=options.max_depth, max_steps=options.max_steps,
                                   reference=options.reference, trace=self.trace)
        except BaseException as e:
            foreign = dict(self.runtime.loader.foreign_formats)
            self.runtime.close()
            if self._own_heap:
                self.heap.close()
            self.closed = True
            if foreign and isinstance(e, IreeAbiError):
                raise _foreign_kernels(e, foreign, self.machine) from e
            raise

    # ---------------------------------------------------------------------------------- calling

    def signature(self, function: str) -> tuple[str, str]:
        """(argument chars, result chars) of an export's cconv, e.g. ("rrf", "r")."""
        known = self._signatures.get(function)
        if known is not None:  # the module is immutable: derived once per export
            return known
        args, results = cconv_fragments(self.context.exported(function).cconv)
        if args is None:
            raise ArgumentError(f"export {function!r} has no calling convention")
        known = self._signatures[function] = ("".join(value_chars(args)),
                                              "".join(value_chars(results or "")))
        return known

    def takes_fences(self, function: str) -> bool:
        """True for an async-external export (`iree.abi.model` coarse-fences): its last two
        arguments are a wait and a signal fence, which `call` appends unless given."""
        known = self._fenced.get(function)
        if known is None:
            known = self._fenced[function] = execution_model.takes_fences(self.context.exported(function))
        return known

    def input_chars(self, function: str) -> str:
        """The argument chars a caller gives values for: the cconv's, without the two fences of an
        async-external export."""
        chars = self.signature(function)[0]
        return chars[:-execution_model.FENCE_ARGUMENTS] if self.takes_fences(function) else chars

    def new_fence(self) -> Ref:
        """A new fence of the program's device (owned by the caller; release it with
        `release_fence`): a semaphore at 0, reached when it is 1. Pass it as `wait=` (after
        `signal_fence`) or `signal=` of an async-external call."""
        with self._lock:
            return self.runtime.fence_device().new_fence()

    def signal_fence(self, fence: Ref) -> None:
        """Signal a fence of one's own (iree_hal_fence_signal)."""
        with self._lock:
            self.runtime.fence_device().signal_fence(fence)

    def fence_status(self, fence: "Ref | None") -> "StatusError | None":
        """iree_hal_fence_query: None when reached, StatusError(DEFERRED) while pending, or the
        status a failed semaphore holds."""
        with self._lock:
            return self.runtime.fence_device().fence_status(fence)

    def release_fence(self, fence: "Ref | None") -> None:
        """Release a fence of one's own (None and null refs are nothing to release)."""
        if fence is not None:
            with self._lock:
                _ref.release_value(self.heap, fence)

    def call(self, function: str, *inputs: Any, wait: "Ref | None" = None,
             signal: "Ref | None" = None) -> "Value | tuple[Value, ...] | None":
        """Run an export on numpy arrays / scalars; its results as numpy values (see the module
        docstring), returned as iree.runtime's function invoker returns them: the value itself for
        one result, None for none, a tuple for several, a primitive result as a Python int or
        float (iree.runtime's type; `call_results` keeps the numpy scalar). The module state persists across calls.
        Calls from several threads run one after another.

        An async-external export (`takes_fences`) is called as iree-run-module calls it: after the
        inputs, the wait fence (`wait`, default a null fence: begin at once) and the signal fence
        (`signal`, default a new one the program makes and releases); the program waits on the
        signal fence before it reads the results. One's own fences may also be passed as the last
        two inputs. A fence given stays the caller's (retained by the call, never released here)."""
        with self._lock:
            results = [_as_python(v) for v in self._call(function, inputs, wait, signal)]
        if len(results) == 1:
            return results[0]
        return tuple(results) if results else None

    def call_results(self, function: str, *inputs: Any, wait: "Ref | None" = None,
                     signal: "Ref | None" = None) -> list[Value]:
        """`call`, its results in a list, one item per result (empty for none): iree-run-module's
        output list, what `format_results` and `compare_results` take. (`call`'s None does not
        tell a null ref result from no result; the list does.)"""
        with self._lock:
            return self._call(function, inputs, wait, signal)

    def _call(self, function: str, inputs: tuple, wait: "Ref | None" = None,
              signal: "Ref | None" = None) -> list[Value]:
        if self.closed:
            raise ContextClosedError(f"call of {function!r} on a closed program")
        arg_chars, result_chars = self.signature(function)
        fenced = self.takes_fences(function)
        if not fenced:
            if wait is not None or signal is not None:
                raise ArgumentError(f"{function} is synchronous (no iree.abi.model coarse-fences): "
                                    f"it takes no wait or signal fence")
            if len(inputs) != len(arg_chars):
                raise ArgumentError(f"{function} takes {len(arg_chars)} input(s) "
                                    f"({self.context.exported(function).cconv}), got {len(inputs)}")
            return self._invoke(function, inputs, arg_chars, result_chars, None)
        count = len(arg_chars) - execution_model.FENCE_ARGUMENTS
        if len(inputs) == len(arg_chars) and wait is None and signal is None:
            *values, wait, signal = inputs  # one's own fences, as the last two inputs
            inputs = tuple(values)
            if signal is None:
                raise ArgumentError(f"{function}: the signal fence (its last argument) is None; pass "
                                    f"a fence of one's own or leave both fences out")
        if len(inputs) != count:
            raise ArgumentError(f"{function} takes {count} input(s), then a wait and a signal fence "
                                f"(iree.abi.model coarse-fences; {self.context.exported(function).cconv}"
                                f"), got {len(inputs)} input(s)")
        device = self.runtime.fence_device(function)
        for name, fence in (("wait", wait), ("signal", signal)):
            if fence is not None and not isinstance(fence, Ref):
                raise ArgumentError(f"{function}: the {name} fence must be a hal.fence Ref (from "
                                    f"Program.new_fence) or None, got {type(fence).__name__}")
        own = device.new_fence() if signal is None else None
        try:
            return self._invoke(function, inputs + (wait, own or signal), arg_chars, result_chars,
                                own or signal)
        finally:
            if own is not None:
                _ref.release_value(self.heap, own)

    def _invoke(self, function: str, inputs: tuple, arg_chars: str, result_chars: str,
                signal: "Ref | None") -> list[Value]:
        """Convert the inputs, invoke, wait on the signal fence (async-external), convert results."""
        owned: list[Ref] = []
        args: list[Any] = []
        try:
            for i, (char, value) in enumerate(zip(arg_chars, inputs)):
                if char == "r":
                    if value is None or isinstance(value, Ref):
                        args.append(value)
                    else:
                        view = self._buffer_view(value)
                        owned.append(view)
                        args.append(view)
                else:
                    args.append(_scalar(char, value, f"{function} input {i}"))
            if self.trace is None:
                results = self.context.invoke(function, *args)
            else:
                results = self._traced_invoke(function, args)
        finally:
            for view in owned:
                _ref.release_value(self.heap, view)
        if signal is not None:
            try:
                self._wait_signal(function, signal)
            except BaseException:
                for value in results:
                    if isinstance(value, (Ref, VmList)):
                        self._release(value)
                raise
        return self._convert_results(results, result_chars)

    def _traced_invoke(self, function: str, args: list) -> list:
        trace = self.trace
        assert trace is not None  # invoked through this only when tracing
        trace.invoke(function)
        try:
            results = self.context.invoke(function, *args)
        except BaseException as e:
            trace.invoked(function, e)
            raise
        trace.invoked(function, None)
        return results

    def _wait_signal(self, function: str, signal: Ref) -> None:
        """iree-run-module's wait on the finish fence before it reads the results: a failed
        semaphore's status, or (nothing runs in the background here) an error where IREE would
        wait forever."""
        status = self.runtime.fence_device(function).fence_status(signal)
        if status is None:
            return
        if status.code == StatusCode.DEFERRED:
            raise StatusError(StatusCode.FAILED_PRECONDITION,
                              f"{function} returned without signalling its signal fence, and nothing "
                              f"else can signal it (single-threaded local-sync device: IREE would "
                              f"block forever)", ("waiting on finish fence",))
        raise StatusError(status.code, status.message, status.annotations + ("waiting on finish fence",))

    def buffer_view(self, array: Any) -> Ref:
        """A new hal.buffer_view ref (owned by the caller) holding a copy of `array`, made with the
        HAL's API as iree-run-module makes its inputs (iree_hal_buffer_view_allocate_buffer_copy:
        a device-local, host-visible heap buffer, the bytes copied in, a dense row-major view)."""
        with self._lock:
            return self._buffer_view(array)

    def _buffer_view(self, array: Any) -> Ref:
        return self.runtime.api.new_view(array)

    def to_numpy(self, view: Ref) -> np.ndarray:
        """A copy of a hal.buffer_view's contents as a numpy array of its shape and element type."""
        with self._lock:
            return self._to_numpy(view)

    def _to_numpy(self, view: Ref) -> np.ndarray:
        return self.runtime.api.to_numpy(view)

    def _convert_results(self, results: list, chars: str) -> list[Value]:
        out: list[Value] = []
        for i, (char, value) in enumerate(zip(chars, results)):
            if char != "r":
                out.append(_SCALARS[char](value))
                continue
            try:
                out.append(self._convert_ref(value))
            except BaseException:
                for later in results[i:]:
                    if isinstance(later, (Ref, VmList)):
                        self._release(later)
                raise
            self._release(value)
        return out

    def _convert_ref(self, value: Any) -> Value:
        if value is None:
            return None
        if isinstance(value, VmList):
            return self._convert_list(value)
        if value.type == self.runtime.views.type:
            return self._to_numpy(value)
        return OpaqueResult(_ref.type_name(self.heap, value.type))

    def _convert_list(self, value: VmList) -> ResultList:
        """A vm.list's items, converted; the list keeps its references (released with it)."""
        items: list = []
        types: list = []
        for item in value.items:
            if type(item) is tuple:  # a value slot: (value type, raw bits)
                items.append(list_item(*item).item())
                types.append(item[0])
            else:
                items.append(self._convert_ref(item))
                types.append(None)
        return ResultList(items, types)

    def _release(self, value: Any) -> None:
        if value is not None:
            self.buffers.release(value)

    # ---------------------------------------------------------------------------------- teardown

    def close(self) -> None:
        """Release the module state, the runtime's modules and types; with a heap of its own,
        LeakError if any allocation outlived the program. Idempotent."""
        with self._lock:
            self._close()

    def _close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self.context.close()
        finally:
            self.runtime.close()
        if self._own_heap:
            leaks = self.heap.leaks(self._mark)
            self.heap.close()
            if leaks:
                raise LeakError(leak_report(leaks, []), leaks, [])

    def __enter__(self) -> "Program":
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc is None:
            self.close()
            return
        try:
            self.close()
        except Exception:  # noqa: BLE001 - the body's error is the one to report
            pass


class KernelTargetError(IreeAbiError):
    """A module whose kernels are machine code of another target than the program's."""


def _foreign_kernels(error: IreeAbiError, formats: dict[str, str], machine: Machine) -> IreeAbiError:
    """The module's load failed after the loader refused kernels of another architecture: say which
    target runs them (IREE's own status first, as it reported it)."""
    which = ", ".join(f"{fmt} ({arch} machine code)" for fmt, arch in sorted(formats.items()))
    runs = sorted(set(formats.values()))
    host = _machine(None).name
    if host in runs:
        where = f"it runs with --target {host} (the host)"
    else:
        how = ["wasmtime" if arch == "wasm32" else "the emulated CPU" for arch in runs]
        where = " or ".join(f"it runs with --target {arch} (under {h})" if h == "wasmtime"
                            else f"it runs with --target {arch} (in {h})" for arch, h in zip(runs, how))
    return KernelTargetError(f"{short_device_targets(str(error))}; the module's kernels are {which}, "
                             f"not {machine.name} kernels: {where}; or rebuild it for "
                             f"{machine.name} with `ireeabi compile SOURCE.mlir --target "
                             f"{machine.name} --model MODEL`")


_DEVICE_TARGET = "#hal.device.target<"
_EXECUTABLE_TARGET = re.compile(r'#hal\.executable\.target<"([^"]*)", "([^"]*)"')


def short_device_targets(text: str) -> str:
    """`text` with each `#hal.device.target<...>` attribute the compiler wrote into a status (its
    executable targets' whole configuration: hundreds of characters) cut to the device and the
    backend/format name of each executable target, e.g. `#hal.device.target<"local",
    [llvm-cpu embedded-elf-x86_64]>` (the module's own text keeps the full attribute)."""
    out: list[str] = []
    at = 0
    while True:
        start = text.find(_DEVICE_TARGET, at)
        if start < 0:
            return "".join(out) + text[at:]
        depth, i, quoted = 0, start, False
        while i < len(text):  # the matching '>' (brackets inside quoted strings do not count)
            c = text[i]
            if c == '"' and text[i - 1] != "\\":
                quoted = not quoted
            elif not quoted and c == "<":
                depth += 1
            elif not quoted and c == ">":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        if depth:  # unbalanced: leave the rest as it is
            return "".join(out) + text[at:]
        attr = text[start:i + 1]
        device = re.match(r'#hal\.device\.target<("[^"]*")', attr)
        names = ", ".join(f"{b} {f}" for b, f in _EXECUTABLE_TARGET.findall(attr))
        out.append(text[at:start] + f"#hal.device.target<{device.group(1) if device else '?'}, "
                   f"[{names}]>")
        at = i + 1


def _scalar(char: str, value: Any, what: str) -> Any:
    """A Python value for a primitive argument (numpy scalars unwrapped; the context checks the
    type and range against the cconv character)."""
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        value = value.item()
    if char in "iI" and isinstance(value, float):
        raise ArgumentError(f"{what}: expected an integer for {char!r}, got {value!r}")
    return value


def native_modules_for(module: ModuleFile, given: Sequence[ModuleDescriptor] = ()) -> list[ModuleDescriptor]:
    """The native modules of one's own a program runs with: every one `given` (a name given twice is
    an error), then, for each module the program imports from that neither they nor hal_inline and
    hal_loader provide, the registered or installed runnable declaration of that name (registered
    first). Each with the overloads the program's imports ask for. The installed ones are loaded
    only when a module is left that the runtime does not make (`vmvx`, the full `hal`) or one
    installed has the name of one it makes (`module_sources.installed_names`)."""
    wanted: dict[str, dict[str, "str | None"]] = {}
    for dep in module.dependencies:
        wanted.setdefault(dep.name, {})
    for imp in module.imported_functions:
        mod, _, fn = imp.full_name.partition(".")
        wanted.setdefault(mod, {})[fn] = imp.cconv
    chosen: dict[str, ModuleDescriptor] = {}
    for d in given:
        if not isinstance(d, ModuleDescriptor):
            raise IreeAbiError(f"modules= takes ModuleDescriptors, got {d!r}")
        if d.name in chosen:
            raise IreeAbiError(f"native module {d.name!r} is given twice")
        chosen[d.name] = d
    missing = [n for n in wanted if n not in chosen and n not in _modules.BUILTIN]
    if missing:
        from ..layouts import module_sources  # start-up: package metadata only when needed

        known = [d for d in _modules.registered() if d.name not in _modules.BUILTIN]
        # The runtime makes `vmvx`, and the full `hal` unless one's own is given: a program that
        # imports only those needs the installed modules only if one has such a name (which then
        # meets the runtime's, as always); their names alone say so, and they are kept on disk.
        served = {VMVX_MODULE_NAME}
        if execution_model.needs_full_hal(module, [d.name for d in given]):
            served.add(execution_model.FULL_HAL_MODULE)
        if not served.issuperset(missing) or module_sources.installed_names().intersection(missing):
            known += module_sources.installed()
        for name in missing:
            found = next((d for d in known if d.name == name and d.runnable), None)
            if found is not None:  # else the context reports the module as not registered
                chosen[name] = found
    return [d.select(wanted.get(d.name, {})) for d in chosen.values()]


__all__ = ["MAX_STEPS_LIMIT", "Program", "RunOptions", "instruction_count", "KernelTargetError", "native_modules_for", "short_device_targets"]
