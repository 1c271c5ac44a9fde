"""A Python executable format, for tests and teaching: kernels written with numpy, dispatched through
exactly the same hal_loader path and dispatch_state_v0 / workgroup_state_v0 memory as real kernels.

Register kernels under a library name, then load format `ireeabi-python` with the name's UTF-8 bytes as
the executable data:

    register("scale", {"scale_f32": scale})   # def scale(d: Dispatch, wg: tuple) -> int (0 = ok)

Each call receives a `Dispatch` read from the dispatch_state_v0 the loader built in memory (push
constants as uint32, each binding as a zero-copy uint8 numpy view of the mapped VM buffer range) and
the workgroup id; it runs once per workgroup, z outer to x inner, as the native loop does. Python
kernels are no machine code: they run on every target, reading the dispatch state laid out for the
runtime's data model from its heap.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from ...layouts import executable_library as X
from ...base.heap import Heap
from ...base.machine import host as _host_machine

from .executable_library import DispatchResult, ExecutableError, ExportInfo
from ...base.status import StatusCode

FORMAT = "ireeabi-python"

Kernel = Callable[["Dispatch", tuple[int, int, int]], int]
_LIBRARIES: dict[str, dict[str, Kernel]] = {}


def register(name: str, exports: Mapping[str, Kernel]) -> None:
    """Make a library of Python kernels loadable as `ireeabi-python` with data `name.encode()`."""
    if not exports:
        raise ExecutableError(StatusCode.INVALID_ARGUMENT, f"python library {name!r} has no exports")
    _LIBRARIES[name] = dict(exports)


def unregister(name: str) -> None:
    _LIBRARIES.pop(name, None)


@dataclass
class Dispatch:
    workgroup_size: tuple[int, int, int]
    workgroup_count: tuple[int, int, int]
    constants: np.ndarray  # uint32
    bindings: list[np.ndarray]  # uint8 views of each binding's mapped bytes


def _read_dispatch(state_address: int, heap: Heap | None) -> Dispatch:
    """The dispatch_state_v0 at `state_address`: in `heap`, laid out for its data model, every array
    read (and checked) through the heap; without a heap, host memory laid out for the host."""
    if heap is None:
        st = _host_machine().ctype(X.iree_hal_executable_dispatch_state_v0_t).from_address(state_address)
        word = ctypes.c_uint64 if ctypes.sizeof(ctypes.c_void_p) == 8 else ctypes.c_uint32

        def array(ctype: Any, n: int, address: int) -> np.ndarray:
            return np.ctypeslib.as_array((ctype * n).from_address(address))
    else:
        st = heap.struct_at(X.iree_hal_executable_dispatch_state_v0_t, state_address)
        word = ctypes.c_uint64 if heap.pointer_size == 8 else ctypes.c_uint32

        def array(ctype: Any, n: int, address: int) -> np.ndarray:
            return np.frombuffer(heap.view(address, n * ctypes.sizeof(ctype)), dtype=np.dtype(ctype))
    n_c, n_b = st.constant_count, st.binding_count
    constants = array(ctypes.c_uint32, n_c, st.constants).copy() if n_c else np.zeros(0, np.uint32)
    ptrs = [int(p) for p in array(word, n_b, st.binding_ptrs)] if n_b else []
    lengths = [int(n) for n in array(word, n_b, st.binding_lengths)] if n_b else []
    bindings = [array(ctypes.c_uint8, n, p) if n else np.zeros(0, np.uint8) for p, n in zip(ptrs, lengths)]
    return Dispatch((st.workgroup_size_x, st.workgroup_size_y, st.workgroup_size_z),
                    (st.workgroup_count_x, st.workgroup_count_y, st.workgroup_count_z), constants, bindings)


@dataclass(eq=False)
class PythonLibrary:
    format: str
    name: str
    exports: tuple[ExportInfo, ...]
    kernels: tuple[Kernel, ...]
    closed: bool = False
    has_names: bool = True  # as Library: register() refuses a library without exports

    def issue(self, ordinal: int, dispatch_state: int, workgroup_state: int,
              workgroup_count: tuple[int, int, int], heap: Heap | None = None) -> DispatchResult:
        """Run every workgroup; the states are in `heap` (any data model) or, without one, in host
        memory laid out for the host."""
        if self.closed:
            raise ExecutableError(StatusCode.FAILED_PRECONDITION, f"library {self.name} was unloaded")
        if not 0 <= ordinal < len(self.exports):
            raise ExecutableError(StatusCode.INVALID_ARGUMENT, "entry point ordinal out of bounds")
        d = _read_dispatch(dispatch_state, heap)
        fn = self.kernels[ordinal]
        status, calls = 0, 0
        for z in range(workgroup_count[2]):
            for y in range(workgroup_count[1]):
                for x in range(workgroup_count[0]):
                    status = int(fn(d, (x, y, z)) or 0)
                    calls += 1
                    if status:
                        break  # as the native loop: only x is left, the status is the last call's
        return DispatchResult(status, calls)

    def export(self, name: str) -> ExportInfo:
        for e in self.exports:
            if e.name == name:
                return e
        raise ExecutableError(StatusCode.NOT_FOUND, f"export '{name}' not found in library")

    def close(self) -> None:
        self.closed = True


def load(data: bytes, constants: tuple = ()) -> PythonLibrary:
    name = bytes(data).decode("utf-8", "replace")
    if name not in _LIBRARIES:
        raise ExecutableError(StatusCode.NOT_FOUND, f"no python executable library registered as {name!r}")
    if constants:  # IREE's library verification text: python libraries declare none
        raise ExecutableError(StatusCode.FAILED_PRECONDITION,
                              f"executable requires 0 constants but caller provided {len(constants)}; must match")
    table = _LIBRARIES[name]
    exports = tuple(ExportInfo(i, n, 0, 0, 0, (1, 1, 1), 0, 0, n.encode("utf-8", "surrogatepass"))
                    for i, n in enumerate(table))
    return PythonLibrary(FORMAT, name, exports, tuple(table.values()))
