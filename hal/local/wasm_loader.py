"""wasm32 kernel libraries (iree-compile's `system-wasm-wasm_32` format) run under wasmtime, with the
runtime's heap as their linear memory.

iree-compile's wasm32 executables are emscripten-style side modules: a `dylink.0` custom section
(first in the module) gives the bytes and alignment of the module's data and the function-table
slots it needs; the module imports its memory, the function table, `__memory_base` (where its data
lives) and `__table_base` (where its functions go in the table), and exports
`iree_hal_executable_library_query` and `__wasm_apply_data_relocs`. The library's function
pointers (export functions, `environment->import_thunk`) are indices into the table.

A `WasmRuntime` serves one heap of the wasm32 data model. Its linear memory IS that heap's window:
wasmtime's host memory creator hands wasmtime the host mapping that starts at target address 0
(`AddressSpace.zero_host`: [0, 64 KiB) inaccessible, the arena above it), so linear-memory offset =
target address, and what the runtime lays out in its heap (dispatch state, bindings, buffers) is what
a kernel reads, and what a kernel writes the heap sees. The memory has no reservation or guard
beyond the window (wasmtime checks bounds explicitly) and cannot grow. The creator is engine-wide,
so every runtime has its own Engine and Store, and one function table shared by its modules. What
the creator's callbacks need (the window, whether the runtime is making its memory) is the runtime's
own `_Window`, reached through the callbacks' env pointer and kept alive by wasmtime's references to
it, not a table of the process (see "the host memory creator" below for the lifetime).

Interface (what hal_loader / the `hal` module build on):

- `WasmRuntime(heap, *, stack_size=..., max_instructions=...)`; `close()` (also a context manager).
- `WasmRuntime.load_side_module(data: bytes, name: str = "") -> WasmSideModule`: parse dylink.0,
  allocate the module's data block in the heap (dylink.0's alignment), grow the table, provide
  `env.memory`, `env.__indirect_function_table`, `env.__memory_base`, `env.__table_base` and, when
  imported, `env.__stack_pointer` (a stack in the heap, shared by the runtime's modules), refuse any
  other import, instantiate, run `__wasm_apply_data_relocs` and `__wasm_call_ctors` when exported.
- `WasmSideModule.lookup(name) -> int`: an exported function as a table index;
  `WasmSideModule.call(table_index, args) -> int` = `WasmRuntime.call`: call the table entry with
  i32 arguments; the i32 result as an unsigned 32-bit int (0 for no result).
- `WasmRuntime.release(module)` (= `WasmSideModule.release()`): unload a module: its table slots are
  emptied and reused by later loads, its data block is freed. wasm cannot drop one instance from a
  store, so once no module is loaded and no caller's host function is in the table, the store (with
  every instance it kept) is dropped and a fresh one made (`stores_made` counts them); with modules
  still loaded, every `REBUILD_AFTER` releases the store is rebuilt: the loaded modules are
  instantiated again (from their compiled code, at their own data blocks and table slots, their
  data bytes kept), host functions and looked-up exports put back at their indices, the old store
  dropped. A module with a start function or globals of its own is not moved (its state would not
  survive), so while one is loaded the store keeps what released modules left. So load/release
  cycles keep the heap, the table and wasmtime's memory flat.
- `WasmRuntime.host_function(fn, params, results, name) -> int`: a Python function put in the table
  (value types "i32", "i64", "f32", "f64"); its index. An exception it raises comes out of `call`.
  Such a function pins the store (its index must stay valid) until the runtime closes.
- `WasmRuntime.import_thunk() -> int`: the environment's import thunk (i32 x4 -> i32), which calls
  the import's table entry with (params, context, reserved), as IREE's thunk calls the function
  pointer; a NULL import traps (INDIRECT_CALL_TO_NULL), as a native call through NULL faults.
- Table index 0 holds no function: it is C's NULL function pointer.
- `parse_dylink(data) -> DylinkInfo`: the dylink.0 facts, refusing a malformed module with the
  byte offset of what is wrong.

Errors: `WasmModuleError` (malformed module, or one wasmtime refuses), `WasmImportError` (an import
the runtime does not provide), `WasmCallError` (a bad table index or arguments), `WasmTrap` (a trap:
out-of-bounds access, unreachable, stack overflow, ...; naming the trap and the function),
`WasmFuelExhausted` (the call ran more than `max_instructions` units of wasmtime fuel, about one per
wasm instruction). All are `ForeignKernelError`s. A SIGINT while wasm runs stops it (epoch
interruption driven by the signal's wakeup fd) and KeyboardInterrupt is raised as usual.

What wasm code may touch: the whole window, as native code may touch its whole address space. The
heap's per-block checks do not apply to its accesses; what traps is target [0, 64 KiB), anything
past the window's end, and the guard pages of guarded blocks (the shadow stack's among them). After
a trap the shadow stack pointer is reset, so the runtime stays usable.

Kernel imports (library v0 `imports`; findings with iree-compile 3.13.0, `--iree-llvmcpu-target-
triple=wasm32-unknown-unknown`, modules read with wasmtime's import list, `llvm-objdump -d` and this
loader; tests/hal/local/test_wasm_loader.py re-checks them):
- Math and conversions need no import: math.exp/tanh/erf/log1p/sin/atan/cbrt/powf/atan2 (f32; exp on
  f64 too), arith.truncf to bf16, i64 division and i64<->f32 conversions compile to modules whose
  only wasm imports are env.memory, env.__indirect_function_table, env.__memory_base,
  env.__table_base (and env.__stack_pointer when a kernel uses the shadow stack), with no library
  imports (imports.count 0): iree-compile expands the functions inline or links its device bitcode.
- Where it cannot, it fails at compile time, not at load: math.round, math.roundeven (undefined
  roundf) and arith.remf on f32 and f64 (undefined fmodf) end in iree-lld "undefined symbol"
  errors; no module exists to load.
- f16 conversions (arith.truncf to f16, arith.extf from f16) produce an invalid module: a kernel
  calls the module's own __truncsfhf2 (__extendhfsf2) with an f32 (i32) where the function's type
  takes an i32 (f32); wasmtime refuses it ("type mismatch: expected i32, found f32") and the load
  ends in `WasmModuleError`, naming wasmtime's reason.
- A dispatch that calls an external function (a `func.call` to a declared `func.func`, as IREE's
  custom-dispatch plugin samples do) is compiled into a library import, as for ELF: the symbol is in
  library v0's import table (required, no '?'), and the kernel calls
  `environment->import_thunk(import_funcs[i], params, import_contexts[i], NULL)` by call_indirect
  of type (i32, i32, i32, i32) -> i32; the module itself has no wasm import for it. Such a library is
  handled as the ELF paths handle theirs: a required import is refused at load
  (`UnresolvedImportError`, UNAVAILABLE "no import provider ..." from hal_loader: ireeabi has no
  import provider), an optional one is left NULL, and a call goes through `import_thunk()` to the
  import's table entry.

Calls: one at a time per runtime (a lock; wasmtime's store is single-threaded and the GIL is
released while wasm runs); a host function may call back in on the same thread, on the running
call's budget. wasmtime's Python `Func` call costs ~20 us in value conversions, so calls go through
`wasmtime_func_call_unchecked` with the types checked once per table entry (~3-5 us per call).
"""
from __future__ import annotations

import ctypes
import os
import signal
import threading
import weakref
from typing import Any, Callable, Sequence

import wasmtime
from wasmtime import _bindings as _ffi
from wasmtime import _func as _wasmtime_func

from ...abi.errors import IreeAbiError
from .executable_library import ExecutableError, ForeignKernelError
from .wasm_dylink import DylinkInfo, WasmModuleError, parse_dylink, section_ids
from ...base.heap import Heap
from ...base.status import StatusCode

WASM_PAGE = 0x10000
DEFAULT_STACK_SIZE = 256 << 10
# Fuel per call: about a minute of a tight loop (~5e9 units/s measured), far past any kernel of the
# test programs (a 1M-element add is ~1e7); then WasmFuelExhausted.
DEFAULT_MAX_INSTRUCTIONS = 1 << 38
_U32 = 0xFFFFFFFF
_GLOBAL_SECTION, _START_SECTION = 6, 8
# Released modules whose instances a store may keep (with a module still loaded) before the store is
# rebuilt with only the loaded ones: bounds what load/release cycles beside a kept module leave.
REBUILD_AFTER = 16
_VALTYPES = {"i32": wasmtime.ValType.i32, "i64": wasmtime.ValType.i64,
             "f32": wasmtime.ValType.f32, "f64": wasmtime.ValType.f64}


class WasmImportError(ForeignKernelError):
    """A side module imports something the runtime does not provide (`import_name`: module.field)."""

    def __init__(self, import_name: str, message: str) -> None:
        self.import_name = import_name
        super().__init__(StatusCode.UNAVAILABLE, message)


class WasmCallError(ForeignKernelError):
    """A call the runtime cannot make: no function at that table index, or arguments that do not fit."""

    def __init__(self, message: str) -> None:
        super().__init__(StatusCode.INVALID_ARGUMENT, message)


class WasmTrap(ForeignKernelError):
    """wasm code trapped; `trap` is wasmtime's trap code name, `function` the function called."""

    def __init__(self, trap: str, function: str, message: str) -> None:
        self.trap, self.function = trap, function
        super().__init__(StatusCode.INTERNAL, message)


class WasmFuelExhausted(ForeignKernelError):
    """A call ran past its instruction budget (wasmtime fuel), as a runaway kernel does."""

    def __init__(self, function: str, budget: int) -> None:
        self.function, self.budget = function, budget
        super().__init__(StatusCode.DEADLINE_EXCEEDED, f"{function} ran past its budget of {budget} wasm instructions")


# -- the host memory creator: the heap's window as linear memory ------------------------------------
#
# wasmtime's C API takes the memory creator as C callbacks plus an opaque `env` pointer. The callbacks
# are module-level functions: code only, no state, and a ctypes callback must exist for as long as
# any C caller may call it, which for an engine's creator is until the engine's last holder (a store,
# a compiled module) is gone, possibly after the runtime that made it. Each runtime's state is its
# own `_Window`, and `env` is that object's address (a PyObject*). Lifetime: the creator owns one
# reference to the window (taken when the engine is made, dropped by `_creator_finalizer`, which
# wasmtime calls when it drops the creator with the engine), and each memory made from it owns one
# more (dropped by `_memory_finalizer`, called when its store drops it). So whatever wasmtime may
# still call reaches a live object, and nothing outlives the engine: no table of runtimes exists.

# Function objects of our own (pythonapi[...] makes a new one; attribute access would share and
# retype the interpreter-wide one), taking the object's address.
_PY_INCREF = ctypes.pythonapi["Py_IncRef"]
_PY_INCREF.argtypes, _PY_INCREF.restype = [ctypes.c_void_p], None
_PY_DECREF = ctypes.pythonapi["Py_DecRef"]
_PY_DECREF.argtypes, _PY_DECREF.restype = [ctypes.c_void_p], None


class _Window:
    """What the memory callbacks of one runtime reach through `env`: the host address of target 0 and
    the window's bytes (both 0 once the runtime is closed), whether the runtime itself is making
    its memory right now (`expecting`; any other memory, a module defining its own, is refused: it
    would be the heap's window again), and how many of its memories wasmtime holds (`memories`)."""
    __slots__ = ("base", "size", "expecting", "memories", "__weakref__")

    def __init__(self, base: int, size: int) -> None:
        self.base, self.size = base, size
        self.expecting = False
        self.memories = 0

    def handed_out(self) -> int:
        """A new reference for wasmtime to own: the object's address, its `env`."""
        _PY_INCREF(id(self))
        return id(self)


def _window(env: "int | None") -> "_Window | None":
    return ctypes.cast(env, ctypes.py_object).value if env else None


def _error(message: str) -> int:
    msg = message.encode()
    return ctypes.cast(_ffi.wasmtime_error_new(msg), ctypes.c_void_p).value or 0


_FINALIZER_T = type(_ffi.wasmtime_memory_creator_t().finalizer)


@_FINALIZER_T
def _creator_finalizer(env: "int | None") -> None:
    if env:
        _PY_DECREF(env)


@_FINALIZER_T
def _memory_finalizer(env: "int | None") -> None:
    window = _window(env)
    if window is not None:
        window.memories -= 1
        del window
        _PY_DECREF(env)


@_ffi.wasmtime_memory_get_callback_t
def _get_memory(env: int, byte_size: Any, max_size: Any) -> int:
    window = _window(env)
    base, size = (window.base, window.size) if window is not None else (0, 0)
    byte_size[0] = size
    max_size[0] = size
    return base


@_ffi.wasmtime_memory_grow_callback_t
def _grow_memory(env: int, new_size: int) -> int:
    window = _window(env)
    size = window.size if window is not None else 0
    if window is not None and window.base and new_size <= size:
        return 0
    return _error(f"the heap's window is fixed at {size} bytes; cannot grow to {new_size}")


@_ffi.wasmtime_new_memory_callback_t
def _new_memory(env: int, request: Any, out: Any) -> int:
    try:
        window = _window(env)
        req = request[0]
        if window is None or not window.base:
            return _error("this runtime's memory is closed")
        if not window.expecting:
            return _error("a side module may not define a memory of its own: its memory is the heap's, "
                          "imported as env.memory")
        size = window.size
        if req.minimum > size or req.reserved_size_in_bytes > size or req.guard_size_in_bytes:
            return _error(f"memory request (minimum {req.minimum}, reservation {req.reserved_size_in_bytes}, "
                          f"guard {req.guard_size_in_bytes}) does not fit the heap's {size}-byte window")
        mem = out[0]
        mem.env = window.handed_out()  # the memory's own reference, dropped by its finalizer
        mem.get_memory = _get_memory
        mem.grow_memory = _grow_memory
        mem.finalizer = _memory_finalizer
        window.expecting = False  # one memory per request
        window.memories += 1
        return 0
    except BaseException as e:  # never let an exception cross into wasmtime
        return _error(f"memory creator failed: {e!r}")


def _engine(window: _Window) -> wasmtime.Engine:
    config = wasmtime.Config()
    config.consume_fuel = True
    config.epoch_interruption = True
    # Compiled in the calling thread: wasmtime's compile thread pool does not survive a fork (a child
    # forked after a compile waits forever for its workers), and kernels are small.
    config.parallel_compilation = False
    # No reservation or guard past the window: bounds are checked explicitly, the memory never moves.
    config.memory_reservation = 0
    config.memory_guard_size = 0
    config.memory_reservation_for_growth = 0
    creator = _ffi.wasmtime_memory_creator_t()
    creator.new_memory = _new_memory  # type: ignore[assignment]  # ctypes takes the callback for the field
    creator.finalizer = _creator_finalizer
    # The creator's reference, dropped when wasmtime drops the creator (with the engine, or with
    # the config should no engine be made of it).
    creator.env = window.handed_out()  # type: ignore[assignment]  # ctypes takes an address for the pointer
    _ffi.wasmtime_config_host_memory_creator_set(config.ptr(), ctypes.byref(creator))  # copied by wasmtime
    return wasmtime.Engine(config)


# wasmtime_func_call_unchecked with untyped arguments: the raw slots are passed as int32 arrays. A
# function object of our own (dll[...] makes a new one), so wasmtime's own prototypes stay as they are.
_CALL_UNCHECKED = _ffi.dll["wasmtime_func_call_unchecked"]
_CALL_UNCHECKED.restype = ctypes.c_void_p
_CALL_UNCHECKED.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]


def _raise_host_exception() -> None:
    """Re-raise what a Python host function raised during the call, as wasmtime's Func call does
    (wasmtime keeps it aside and returns a trap)."""
    _wasmtime_func.maybe_raise_last_exn()


# -- SIGINT while wasm runs ---------------------------------------------------------------------------


class _Interrupter:
    """Turns a SIGINT that arrives while wasm runs into an epoch tick (the wasm then traps with
    INTERRUPT): Python's C-level handler writes the signal number to the wakeup fd, and a thread
    blocked on the other end increments the engine's epoch. Nothing is timed."""

    def __init__(self, engine: wasmtime.Engine) -> None:
        self._r, self._w = os.pipe()
        os.set_blocking(self._w, False)
        self._engine = engine
        self.ticks = 0  # epoch increments made
        self._forward = -1  # the wakeup fd replaced while armed
        self._thread = threading.Thread(target=self._run, name="wasm-interrupter", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            try:
                got = os.read(self._r, 64)
            except OSError:
                return
            if not got:
                return
            forward = self._forward
            if forward >= 0:  # whoever had the wakeup fd (an event loop) still hears of the signal
                try:
                    os.write(forward, got)
                except OSError:
                    pass
            if signal.SIGINT in got:  # after the forward: once the wasm stops, it has been passed on
                self._engine.increment_epoch()
                self.ticks += 1

    def arm(self) -> int | None:
        """Route signals to the wakeup fd for a call; the previous fd (to restore) or None off the
        main thread, where no signal handler runs anyway."""
        if threading.current_thread() is not threading.main_thread():
            return None
        previous = signal.set_wakeup_fd(self._w, warn_on_full_buffer=False)
        if previous != self._w:
            self._forward = previous
        return previous

    def disarm(self, previous: int | None) -> None:
        if previous is not None:
            signal.set_wakeup_fd(previous)
            if previous != self._w:
                self._forward = -1

    def close(self) -> None:
        os.close(self._w)  # the thread's read returns b"" and it ends
        self._thread.join()
        os.close(self._r)
        self._engine = None  # type: ignore[assignment]  # the engine goes with its runtime


# -- the runtime ---------------------------------------------------------------------------------------


class WasmRuntime:
    """wasmtime over one wasm32 heap (see the module docstring)."""

    def __init__(self, heap: Heap, *, stack_size: int = DEFAULT_STACK_SIZE,
                 max_instructions: int = DEFAULT_MAX_INSTRUCTIONS) -> None:
        m = heap.machine
        if m.pointer_size != 4 or m.is_host or heap.space.zero_host is None:
            raise ExecutableError(StatusCode.INVALID_ARGUMENT,
                                  f"a wasm runtime needs a heap of a 32-bit foreign data model "
                                  f"mapped from address 0 (wasm32), not {m.name}")
        if not (isinstance(max_instructions, int) and max_instructions > 0):
            raise ExecutableError(StatusCode.INVALID_ARGUMENT, f"max_instructions must be a positive int, got "
                                  f"{max_instructions!r}")
        if not (isinstance(stack_size, int) and 16 <= stack_size <= 1 << 30):
            raise ExecutableError(StatusCode.INVALID_ARGUMENT, f"stack_size must be an int of 16 bytes to 1 GiB, got "
                                  f"{stack_size!r}")
        self.heap = heap
        self.max_instructions = max_instructions
        self._stack_size = stack_size
        space = heap.space
        size = space.end  # linear memory = target [0, end): whole 64 KiB pages (address_space)
        if size % WASM_PAGE:
            raise ExecutableError(StatusCode.INTERNAL,
                                  f"heap window end 0x{size:x} is not a whole number of wasm pages")
        assert space.zero_host is not None  # checked above
        self._window = _Window(space.zero_host, size)
        self.closed = False
        # wasmtime's store is not thread-safe and the GIL is released while wasm runs: every use of
        # the store holds this (reentrant: host functions call back in on the same thread).
        self._lock = threading.RLock()
        self._blocks: list[int] = []  # heap blocks the runtime owns (data blocks of live modules, the stack)
        self._stack_block = 0
        self._stack_top = 0
        self.engine = _engine(self._window)
        self._depth = 0  # wasm calls running (a host function may call back in)
        self._interrupter = _Interrupter(self.engine)
        # A runtime dropped without close() (or failing here) still ends its thread.
        self._finalizer = weakref.finalize(self, _release, self._interrupter, self._window)
        self.modules: list[WasmSideModule] = []
        self.stores_made = 0  # stores this runtime has had (a new one after its last module went)
        try:
            self._new_store()
        except BaseException:
            self._finalizer()
            raise

    def _new_store(self) -> None:
        """A fresh store with the heap's window as its memory and an empty function table. wasmtime
        keeps every instance, global and function a store made until the store goes, so a store is
        replaced whenever nothing in it is in use any more (`_retire_store`)."""
        self.store = wasmtime.Store(self.engine)
        window = self._window
        pages = window.size // WASM_PAGE
        window.expecting = True
        try:
            self.memory = wasmtime.Memory(self.store, wasmtime.MemoryType(wasmtime.Limits(pages, pages)))
        finally:
            window.expecting = False
        ptr = self.memory.data_ptr(self.store)
        if ptr and ctypes.addressof(ptr.contents) != window.base:
            raise ExecutableError(StatusCode.INTERNAL, "wasmtime did not take the heap's window as linear memory")
        # Slot 0 stays empty: table index 0 is C's NULL function pointer (a module's function there
        # would compare equal to NULL), as the dynamic linking convention reserves it.
        self.table = wasmtime.Table(self.store, wasmtime.TableType(wasmtime.ValType.funcref(),
                                                                   wasmtime.Limits(1, None)), None)
        self._free_slots: list[tuple[int, int]] = []  # (first, count) table ranges free for reuse
        self._stack_pointer: wasmtime.Global | None = None
        self._names: dict[int, str] = {}  # table index -> a name for messages
        # table index -> (i32 params, has a result, raw slots type, reference to its wasmtime_func_t)
        self._funcs: dict[int, tuple[int, bool, Any, Any]] = {}
        self._keep: dict[int, wasmtime.Func] = {}  # the wasmtime_func_t each _funcs reference points at
        # host functions put in the table by callers (index -> type, function): they pin the store
        self._host_slots: dict[int, tuple[wasmtime.FuncType, Callable[..., Any]]] = {}
        self._dead = 0  # modules released since this store was made (their instances stay in it)
        self._thunk = 0  # the import thunk's table index, once made
        self._context = self.store._context()
        self.store.set_epoch_deadline(1)  # moved on only after an interrupt (see _guarded)
        self._ticks_seen = self._interrupter.ticks
        self.stores_made += 1

    def _retire_store(self) -> None:
        """Drop the store (every instance and function it holds) and start a new one: when no module
        is loaded and no caller's host function is in the table (no table index handed out still
        means anything), or for `_rebuild_store`, which then puts back what is in use."""
        self.memory = self.table = self._stack_pointer = None  # type: ignore[assignment]
        self._funcs.clear()
        self._keep.clear()
        self._context = None  # type: ignore[assignment]  # no store: no context
        self.store = None  # type: ignore[assignment]
        self._new_store()

    # -- loading ---------------------------------------------------------------------------------

    def load_side_module(self, data: bytes, name: str = "") -> "WasmSideModule":
        """Load a dylink.0 side module into this runtime (see the module docstring)."""
        with self._lock:
            return self._load(data, name)

    def _load(self, data: bytes, name: str) -> "WasmSideModule":
        self._check_open()
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise WasmModuleError(f"a side module is bytes, not {type(data).__name__}")
        data = bytes(data)
        info = parse_dylink(data)
        sections = section_ids(data)
        name = name or f"side module {len(self.modules)}"
        try:
            module = wasmtime.Module(self.engine, data)
        except wasmtime.WasmtimeError as e:
            raise WasmModuleError(f"{name}: wasmtime refuses the module: {_first_line(e)}") from None
        # Check every import before touching the heap or the table.
        wanted = []
        for imp in module.imports:
            wanted.append(self._check_import(name, imp))
        heap = self.heap
        try:
            data_base = heap.malloc(max(info.memory_size, 1), align=max(info.memory_align, heap.malloc_alignment),
                                    tag=f"wasm data of {name}")
        except IreeAbiError as e:  # RESOURCE_EXHAUSTED past the heap's limit
            raise WasmModuleError(f"{name}: its data block of {info.memory_size} bytes (dylink.0) does not fit "
                                  f"the heap: {e}") from None
        table_base = self._alloc_slots(info.table_size, info.table_align)
        try:
            side = self._instantiate(module, name, info, wanted, data_base, table_base)
        except BaseException:
            # A half-loaded module (its relocations trapped) may have put functions in the table
            # already: they would use the freed data block, so their slots are emptied.
            self._free_range(table_base, info.table_size)
            heap.free(data_base)
            raise
        # Re-instantiable into a new store with its state intact (see _rebuild_store) unless it has a
        # start function (which would run again) or globals of its own (whose values would reset).
        side._movable = _START_SECTION not in sections and _GLOBAL_SECTION not in sections
        self._blocks.append(data_base)
        self.modules.append(side)
        return side

    def _instantiate(self, module: wasmtime.Module, name: str, info: DylinkInfo, wanted: list[str],
                     data_base: int, table_base: int) -> "WasmSideModule":
        instance = self._instance(module, name, wanted, data_base, table_base)
        funcs = _functions(instance.exports(self.store))
        side = WasmSideModule(self, name, info, data_base, table_base, funcs)
        side._compiled, side._wanted = module, wanted
        fuel = self.max_instructions
        for init in ("__wasm_apply_data_relocs", "__wasm_call_ctors"):
            fn = funcs.get(init)
            if fn is None:
                continue
            ty = fn.type(self.store)
            if ty.params or ty.results:
                raise WasmModuleError(f"{name}: export {init} must take and return nothing")
            self._invoke(fn, (), f"{name}:{init}", fuel)
        return side

    def _instance(self, module: wasmtime.Module, name: str, wanted: list[str], data_base: int,
                  table_base: int) -> wasmtime.Instance:
        """Instantiate `module` in the store with its data at `data_base` and its functions at
        `table_base` (its data and element segments written there)."""
        externs: list[Any] = []
        for what in wanted:
            if what == "memory":
                externs.append(self.memory)
            elif what == "table":
                externs.append(self.table)
            elif what == "__memory_base":
                externs.append(_const_i32(self.store, data_base))
            elif what == "__table_base":
                externs.append(_const_i32(self.store, table_base))
            else:
                externs.append(self._stack())
        try:  # runs the module's start function, if any: budgeted and interruptible as a call
            return self._guarded(lambda: wasmtime.Instance(self.store, module, externs),
                                 f"{name} start function", self.max_instructions)
        except WasmTrap as e:
            if e.trap != "error":
                raise
            raise WasmModuleError(f"{name}: instantiation failed: {e.message.split(' failed: ', 1)[-1]}") from None

    def _check_import(self, name: str, imp: wasmtime.ImportType) -> str:
        full = f"{imp.module}.{imp.name}"
        ty = imp.type
        if imp.module == "env":
            if imp.name == "memory" and isinstance(ty, wasmtime.MemoryType):
                if ty.is_64 or getattr(ty, "is_shared", False):
                    raise WasmImportError(full, f"{name}: imports a {'64-bit' if ty.is_64 else 'shared'} memory; "
                                          "the runtime provides a 32-bit unshared one")
                pages = self.memory.type(self.store).limits.min
                if ty.limits.min > pages or (ty.limits.max is not None and ty.limits.max < pages):
                    raise WasmImportError(full, f"{name}: imports a memory of {ty.limits.min}..{ty.limits.max} "
                                          f"pages; the heap's window is {pages} pages")
                return "memory"
            if imp.name == "__indirect_function_table" and isinstance(ty, wasmtime.TableType):
                if str(ty.element) != "funcref":
                    raise WasmImportError(full, f"{name}: imports a table of {ty.element}, not funcref")
                return "table"
            if imp.name in ("__memory_base", "__table_base", "__stack_pointer") and \
                    isinstance(ty, wasmtime.GlobalType):
                mutable = imp.name == "__stack_pointer"
                if str(ty.content) != "i32" or ty.mutable != mutable:
                    raise WasmImportError(full, f"{name}: imports {full} as a {'mutable' if ty.mutable else 'const'} "
                                          f"{ty.content} global; it is a {'mutable' if mutable else 'const'} i32")
                return imp.name
        kind = {"FuncType": "function", "GlobalType": "global", "MemoryType": "memory",
                "TableType": "table"}.get(type(ty).__name__, "extern")
        raise WasmImportError(full, f"{name}: imports {kind} {full!r}, which the runtime does not provide "
                              "(only env.memory, env.__indirect_function_table, env.__memory_base, "
                              "env.__table_base, env.__stack_pointer)")

    def _stack(self) -> wasmtime.Global:
        """The shadow stack (__stack_pointer) of this runtime's modules: a guarded heap block, so
        running off its low end faults (a trap) instead of writing over a neighbour."""
        if self._stack_pointer is None:
            if not self._stack_block:  # the block stays across stores, the global is the store's
                self._stack_block = self.heap.malloc(self._stack_size, align=16, tag="wasm stack", guard=True)
                self._blocks.append(self._stack_block)
                self._stack_top = self._stack_block + self._stack_size & -16
            self._stack_pointer = wasmtime.Global(self.store, wasmtime.GlobalType(wasmtime.ValType.i32(), True),
                                                  wasmtime.Val.i32(_signed(self._stack_top)))
        return self._stack_pointer

    # -- the table -------------------------------------------------------------------------------

    def host_function(self, fn: Callable[..., Any], params: Sequence[str], results: Sequence[str],
                      name: str = "") -> int:
        """Put Python function `fn` in the table as a function of `params` -> `results` (type names
        "i32", "i64", "f32", "f64"); its table index (what C code calls through)."""
        self._check_open()
        try:
            ty = wasmtime.FuncType([_VALTYPES[p]() for p in params], [_VALTYPES[r]() for r in results])
        except (KeyError, TypeError):
            raise WasmCallError(f"host function {name or fn!r}: value types must be among "
                                f"{', '.join(_VALTYPES)}, got {list(params)} -> {list(results)}") from None
        if not callable(fn):
            raise WasmCallError(f"host function {name!r}: {fn!r} is not callable")
        with self._lock:
            self._check_open()
            func = wasmtime.Func(self.store, ty, fn)
            index = self._add(func, name or getattr(fn, "__name__", "host function"))
            self._host_slots[index] = (ty, fn)
            return index

    def import_thunk(self) -> int:
        """The table index of the environment's import thunk, `thunk(fn, params, context, reserved)`:
        it calls table entry `fn` with (params, context, reserved) and returns its i32 result, as
        IREE's import thunk calls the import's function pointer. One per store, shared by every
        library (it holds no state), made on first use."""
        with self._lock:
            self._check_open()
            if not self._thunk:
                ty = wasmtime.FuncType([wasmtime.ValType.i32()] * 4, [wasmtime.ValType.i32()])
                self._thunk = self._add(wasmtime.Func(self.store, ty, self._forward_import), "import_thunk")
            return self._thunk

    def _forward_import(self, fn: int, params: int, context: int, reserved: int) -> int:
        fn &= _U32
        if fn == 0:
            # A NULL import (an optional one left unresolved) called anyway: what a native call
            # through NULL does, a fault of the kernel.
            raise WasmTrap("INDIRECT_CALL_TO_NULL", "import_thunk", "import_thunk trapped: INDIRECT_CALL_TO_NULL "
                           "(the import's function pointer is NULL: an unresolved optional import was called)")
        return _signed(self._call(fn, (params, context, reserved), None))

    def _add(self, func: wasmtime.Func, name: str) -> int:
        with self._lock:
            self._check_open()
            index = self._alloc_slots(1, 1)
            self.table.set(self.store, index, func)
        self._names[index] = name
        return index

    def _alloc_slots(self, count: int, align: int) -> int:
        """The first index of `count` free table slots aligned to `align`: a freed range reused if
        one fits (first fit), else the table grown."""
        for i, (first, n) in enumerate(self._free_slots):
            start = (first + align - 1) & -align
            if start + count <= first + n:
                del self._free_slots[i]
                if start > first:
                    self._free_slots.insert(i, (first, start - first))
                    i += 1
                if start + count < first + n:
                    self._free_slots.insert(i, (start + count, first + n - start - count))
                return start
        old = self.table.size(self.store)
        start = (old + align - 1) & -align
        if start + count > old:
            self.table.grow(self.store, start + count - old, None)
        if start > old:
            self._free_range(old, start - old)
        return start

    def _free_range(self, first: int, count: int) -> None:
        """Empty table slots [first, first + count) and keep them for reuse (merged with neighbours)."""
        if count <= 0:
            return
        for index in range(first, first + count):
            self.table.set(self.store, index, None)
            self._funcs.pop(index, None)
            self._keep.pop(index, None)
            self._names.pop(index, None)
            self._host_slots.pop(index, None)
        ranges = sorted(self._free_slots + [(first, count)])
        merged: list[tuple[int, int]] = []
        for start, n in ranges:
            if merged and merged[-1][0] + merged[-1][1] >= start:
                last, m = merged[-1]
                merged[-1] = (last, max(last + m, start + n) - last)
            else:
                merged.append((start, n))
        self._free_slots = merged

    # -- calls -----------------------------------------------------------------------------------

    def call(self, table_index: int, args: Sequence[int], *, max_instructions: int | None = None) -> int:
        """Call the function at `table_index` with i32 `args` (ints, taken modulo 2**32); its i32
        result as an unsigned int, 0 when it returns nothing. Traps raise WasmTrap, a budget
        overrun WasmFuelExhausted. A call made from inside a host function runs on the budget of
        the call that is running."""
        with self._lock:  # a store runs one call at a time: other threads wait their turn
            return self._call(table_index, args, max_instructions)

    def _call(self, table_index: int, args: Sequence[int], max_instructions: int | None) -> int:
        if self.closed:
            self._check_open()
        entry = self._funcs.get(table_index) if type(table_index) is int else None
        if entry is None:
            entry = self._resolve(table_index)
        n, has_result, raw_type, ref = entry
        if type(args) is not list and type(args) is not tuple:
            try:
                args = tuple(args)
            except TypeError:
                raise WasmCallError(f"arguments are a sequence of ints, not {type(args).__name__}") from None
        if len(args) != n:
            raise WasmCallError(f"{self._names.get(table_index, f'table[{table_index}]')} takes {n} i32 "
                                f"arguments, {len(args)} given")
        raw = raw_type()  # wasmtime_val_raw_t slots (16 bytes: 4 int32s each), arguments then result
        for i, a in enumerate(args):
            if type(a) is not int:
                if not isinstance(a, int) or isinstance(a, bool):
                    raise WasmCallError(f"argument {i} ({a!r}) is not an int")
                a = int(a)
            a &= _U32
            raw[4 * i] = a - (1 << 32) if a >> 31 else a
        budget = self.max_instructions if max_instructions is None else max_instructions
        self._guarded(lambda: self._call_raw(ref, raw), table_index, budget)
        return raw[0] & _U32 if has_result else 0

    def _call_raw(self, ref: Any, raw: Any) -> None:
        """wasmtime_func_call_unchecked: the types were checked once (`_resolve`), so no per-call
        conversion of values (wasmtime's Python Func call costs ~20 us, most of it that)."""
        trap = ctypes.POINTER(_ffi.wasm_trap_t)()
        error = _CALL_UNCHECKED(self._context, ref, raw, len(raw) // 4, ctypes.byref(trap))
        if error:
            _raise_host_exception()
            raise wasmtime.WasmtimeError._from_ptr(ctypes.cast(error, ctypes.POINTER(_ffi.wasmtime_error_t)))
        if trap:
            trapped = wasmtime.Trap._from_ptr(trap)
            _raise_host_exception()  # a host function's exception comes out as itself
            raise trapped

    def _resolve(self, table_index: int) -> tuple[int, bool, Any, Any]:
        if not isinstance(table_index, int) or isinstance(table_index, bool):
            raise WasmCallError(f"a table index is an int, not {type(table_index).__name__}")
        size = self.table.size(self.store)
        if not 0 <= table_index < size:
            raise WasmCallError(f"table index {table_index} is outside the function table (size {size})")
        func = self.table.get(self.store, table_index)
        if not isinstance(func, wasmtime.Func):
            raise WasmCallError(f"table index {table_index} holds no function")
        ty = func.type(self.store)
        if any(str(p) != "i32" for p in ty.params) or [str(r) for r in ty.results] not in ([], ["i32"]):
            raise WasmCallError(f"{self._names.get(table_index, f'table[{table_index}]')} has type "
                                f"({', '.join(map(str, ty.params))}) -> ({', '.join(map(str, ty.results))}); "
                                "call passes i32 arguments and takes at most one i32 result")
        n = len(ty.params)
        self._keep[table_index] = func  # the wasmtime_func_t the reference points at
        entry = self._funcs[table_index] = (n, bool(ty.results), ctypes.c_int32 * (4 * max(n, 1)),
                                            ctypes.byref(func._func))
        return entry

    def _invoke(self, func: wasmtime.Func, args: Sequence[int], what: "int | str", budget: int) -> Any:
        return self._guarded(lambda: func(self.store, *args), what, budget)

    def _guarded(self, run: Callable[[], Any], what: "int | str", budget: int) -> Any:
        """Run wasm with `budget` fuel (set by the outermost call only), interruptible by SIGINT;
        wasmtime's traps and errors become this module's errors."""
        outer = self._depth == 0
        previous = None
        if outer:
            if not (isinstance(budget, int) and 0 < budget < 1 << 64):
                raise WasmCallError(f"max_instructions must be a positive int below 2**64, got {budget!r}")
            if _ffi.wasmtime_context_set_fuel(self._context, budget):
                raise WasmCallError(f"wasmtime refused a budget of {budget}")
            ticks = self._interrupter.ticks
            if ticks != self._ticks_seen:  # an interrupt moved the epoch: a new deadline past it
                _ffi.wasmtime_context_set_epoch_deadline(self._context, 1)
                self._ticks_seen = ticks
            previous = self._interrupter.arm()
        self._depth += 1
        try:
            try:
                return run()
            except BaseException:
                # Nothing unwound the shadow stack: with no wasm frame left (the outermost call),
                # it is empty again.
                if outer and self._stack_pointer is not None:
                    self._stack_pointer.set_value(self.store, wasmtime.Val.i32(_signed(self._stack_top)))
                raise
        except wasmtime.Trap as e:
            label = what if isinstance(what, str) else self._names.get(what, f"table[{what}]")
            if e.trap_code == wasmtime.TrapCode.INTERRUPT:
                # Python's handler runs at the next bytecode (KeyboardInterrupt by default); if it
                # does not raise, the kernel was stopped all the same.
                raise KeyboardInterrupt(f"{label} interrupted") from None
            raise _trap(e, label, budget) from None
        except wasmtime.WasmtimeError as e:
            label = what if isinstance(what, str) else self._names.get(what, f"table[{what}]")
            raise WasmTrap("error", str(label), f"{label} failed: {_first_line(e)}") from None
        finally:
            self._depth -= 1
            if outer:
                self._interrupter.disarm(previous)

    # -- lifetime --------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self.closed:
            raise ExecutableError(StatusCode.FAILED_PRECONDITION, "the wasm runtime is closed")

    def release(self, module: "WasmSideModule") -> None:
        """Unload `module`: its table slots are emptied (and reused by later loads), its data block
        goes back to the heap, and later lookups on it fail. wasm cannot drop one instance from a
        store, so its instance stays in the store until the store goes: that happens as soon as no
        module is loaded and no caller's host function is in the table (a new, empty store replaces
        it), which bounds what a sequence of load/release cycles keeps. Releasing twice is a no-op."""
        with self._lock:
            if module.runtime is not self:
                raise ExecutableError(StatusCode.INVALID_ARGUMENT, f"{module.name} was loaded by another wasm runtime")
            if module.released or self.closed:
                return
            if self._depth:
                raise ExecutableError(StatusCode.FAILED_PRECONDITION,
                                      f"{module.name} cannot be released while a wasm call "
                                      "is running (from a host function)")
            module.released = True
            self._free_range(module.table_base, module.info.table_size)
            for index in module._indices.values():
                self._free_range(index, 1)
            module._indices.clear()
            module._funcs.clear()
            module._compiled = None
            self.modules.remove(module)
            self._blocks.remove(module.data_base)
            if not self.heap.closed:
                self.heap.free(module.data_base)
            if not self.modules and not self._host_slots:
                self._retire_store()
                return
            self._dead += 1
            if self._dead >= REBUILD_AFTER and all(m._movable for m in self.modules):
                self._rebuild_store()

    def _rebuild_store(self) -> None:
        """Move what is in use into a new store and drop the old one with every released module's
        instance: each loaded module is instantiated again from its compiled code at its own data
        block and table slots (its data block's bytes are kept as they are, not reset to its data
        segments: `_movable` modules have no other state), and host functions, the import thunk and
        looked-up exports go back to the table indices handed out. No table index changes."""
        snapshots = [(m, self.heap.read(m.data_base, m.info.memory_size)) for m in self.modules]
        table_size = self.table.size(self.store)
        free_slots = list(self._free_slots)
        hosts = dict(self._host_slots)
        thunk = self._thunk
        names = dict(self._names)
        self._retire_store()
        if table_size > 1:
            self.table.grow(self.store, table_size - 1, None)
        self._free_slots = free_slots
        for index, (ty, fn) in hosts.items():
            self.table.set(self.store, index, wasmtime.Func(self.store, ty, fn))
            self._host_slots[index] = (ty, fn)
        if thunk:
            ty = wasmtime.FuncType([wasmtime.ValType.i32()] * 4, [wasmtime.ValType.i32()])
            self.table.set(self.store, thunk, wasmtime.Func(self.store, ty, self._forward_import))
            self._thunk = thunk
        for module, data in snapshots:
            assert module._compiled is not None  # a live module's
            instance = self._instance(module._compiled, module.name, module._wanted, module.data_base,
                                      module.table_base)
            module._funcs = _functions(instance.exports(self.store))
            self.heap.write(module.data_base, data)
            for export, index in module._indices.items():
                self.table.set(self.store, index, module._funcs[export])
        self._names = names

    def close(self) -> None:
        """Free the runtime's heap blocks and stop its interrupt thread; later use is an error."""
        with self._lock:
            self._close()

    def _close(self) -> None:
        if self.closed:
            return
        if self._depth:
            raise ExecutableError(StatusCode.FAILED_PRECONDITION,
                                  "the wasm runtime cannot close while a call is running "
                                  "(from a host function)")
        self.closed = True
        self._finalizer.detach()
        self._interrupter.close()
        self._funcs.clear()
        self._keep.clear()
        self._context = None  # type: ignore[assignment]  # no store: no context
        for module in self.modules:
            module.released = True
            module._funcs.clear()
            module._indices.clear()
            module._compiled = None  # it holds the engine
        self.modules.clear()
        # Drop wasmtime's objects: the store frees the memory (its finalizer drops its reference to
        # the window), the engine its creator (the other reference), unless someone still holds them;
        # either way the window answers as closed from here on.
        self.memory = self.table = self._stack_pointer = None  # type: ignore[assignment]
        self.store = None  # type: ignore[assignment]
        self.engine = None  # type: ignore[assignment]
        self._window.base = self._window.size = 0
        for block in self._blocks:
            if not self.heap.closed:
                self.heap.free(block)
        self._blocks.clear()
        self._stack_block = 0

    def __enter__(self) -> "WasmRuntime":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _release(interrupter: _Interrupter, window: _Window) -> None:
    interrupter.close()
    window.base = window.size = 0


class WasmSideModule:
    """One loaded side module: its data block in the heap (`data_base`, `info.memory_size` bytes),
    its table slots from `table_base`, and its exported functions."""

    def __init__(self, runtime: WasmRuntime, name: str, info: DylinkInfo, data_base: int, table_base: int,
                 funcs: dict[str, wasmtime.Func]) -> None:
        self.runtime, self.name, self.info = runtime, name, info
        self.data_base, self.table_base = data_base, table_base
        self._funcs = funcs
        self._indices: dict[str, int] = {}
        self.released = False
        self._compiled: wasmtime.Module | None = None  # what a store rebuild instantiates again
        self._wanted: list[str] = []
        self._movable = False

    @property
    def exports(self) -> tuple[str, ...]:
        """Names of the exported functions."""
        return tuple(self._funcs)

    def lookup(self, name: str) -> int:
        """The table index of exported function `name` (put in the table on first lookup)."""
        if not isinstance(name, str):
            raise ExecutableError(StatusCode.INVALID_ARGUMENT, f"an export name is a str, not {type(name).__name__}")
        index = self._indices.get(name)
        if index is None:
            if self.released:
                raise ExecutableError(StatusCode.FAILED_PRECONDITION, f"{self.name} was released")
            func = self._funcs.get(name)
            if func is None:
                raise ExecutableError(StatusCode.NOT_FOUND, f"{self.name} exports no function {name!r} (it exports "
                                      f"{', '.join(sorted(self._funcs)) or 'none'})")
            index = self._indices[name] = self.runtime._add(func, f"{self.name}:{name}")
        return index

    def call(self, table_index: int, args: Sequence[int], *, max_instructions: int | None = None) -> int:
        """`WasmRuntime.call` (any table entry, this module's or not)."""
        return self.runtime.call(table_index, args, max_instructions=max_instructions)

    def release(self) -> None:
        """`WasmRuntime.release` of this module."""
        self.runtime.release(self)


def _functions(exports: Any) -> dict[str, wasmtime.Func]:
    return {name: ext for name, ext in exports.items() if isinstance(ext, wasmtime.Func)}


def _const_i32(store: wasmtime.Store, value: int) -> wasmtime.Global:
    return wasmtime.Global(store, wasmtime.GlobalType(wasmtime.ValType.i32(), False), wasmtime.Val.i32(_signed(value)))


def _signed(v: int) -> int:
    v &= _U32
    return v - (1 << 32) if v >> 31 else v


def _first_line(e: BaseException) -> str:
    """wasmtime's error text in one line: its causes ("Caused by:" lines) when it lists them (the
    first line is then only a backtrace header), else its first line."""
    lines = [line.strip() for line in str(e).strip().splitlines()]
    if "Caused by:" in lines:
        causes = [line.split(": ", 1)[-1] for line in lines[lines.index("Caused by:") + 1:] if line]
        return "; ".join(causes)
    return lines[0] if lines and lines[0] else type(e).__name__


def _trap(e: "wasmtime.Trap", label: str, budget: int) -> ForeignKernelError:
    code = e.trap_code
    if code == wasmtime.TrapCode.OUT_OF_FUEL:
        return WasmFuelExhausted(label, budget)
    code_name = code.name if code is not None else "trap"
    where = ""
    try:
        frames = e.frames
        if frames:
            inner = frames[0].func_name or f"function {frames[0].func_index}"
            where = f" in {inner}"
    except Exception:  # frames are a nicety of the message
        pass
    return WasmTrap(code_name, label, f"{label} trapped: {code_name}{where} ({_first_line(e)})")


__all__ = ["WasmRuntime", "WasmSideModule", "WasmImportError", "WasmCallError", "WasmTrap", "WasmFuelExhausted",
           "DEFAULT_MAX_INSTRUCTIONS", "DEFAULT_STACK_SIZE", "REBUILD_AFTER"]
