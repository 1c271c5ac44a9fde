"""What a vm.buffer is to the interpreter: `ByteBuffer` and the `BufferFactory` interface.

Buffer ops use only `data` (a memoryview over the buffer's bytes, writable unless the buffer is
read-only), `mutable` and `len()` of what `BufferFactory.deref` returns. The factory is the one
place that knows what a ref register holds:

- this module's `BufferFactory` keeps plain Python objects (ByteBuffer) in ref registers, with no
  reference counting (`counted` False: Python's GC owns them);
- `vm.bytecode.vm_buffer_factory.VmBufferFactory` keeps real `vm.ref.Ref` values of ireeabi.vm.buffer's VM
  buffers in tracked memory, counted in memory (`counted` True: every ref register, global, list
  slot and argument holds one reference, retained and released as IREE does).
"""
from __future__ import annotations

from typing import Any, Union

from ...abi.targets import Target
from ...base.machine import Machine, machine as _machine
from .module_file import ModuleFile, rodata_bytes
from ...base.status import StatusCode
from ..errors import VmStatusError

DEFAULT_MAX_ALLOCATION = 1 << 30


class ByteBuffer:
    """The interpreter's view of a vm.buffer: `data` is a memoryview over its bytes, writable unless
    `mutable` is False (rodata)."""

    __slots__ = ("data", "mutable", "alignment", "origin", "address")

    def __init__(self, data: Union[bytes, bytearray, memoryview], mutable: bool | None = None,
                 alignment: int = 0, origin: str = "", address: int | None = None) -> None:
        view = data if isinstance(data, memoryview) else memoryview(data)
        if mutable is None:
            mutable = not view.readonly
        if mutable and view.readonly:
            raise ValueError("a mutable ByteBuffer needs writable memory")
        self.data = view.cast("B") if view.format != "B" or view.ndim != 1 else view
        if not mutable and not self.data.readonly:
            self.data = self.data.toreadonly()
        self.mutable = mutable
        self.alignment = alignment
        self.origin = origin
        self.address = address  # where `data` lies in target memory (None: Python memory)

    def __len__(self) -> int:
        return self.data.nbytes

    def tobytes(self) -> bytes:
        return self.data.tobytes()

    def __repr__(self) -> str:
        kind = "mutable" if self.mutable else "read-only"
        return f"ByteBuffer({len(self)} B, {kind}{', ' + self.origin if self.origin else ''})"


class BufferFactory:
    """Makes the buffers the interpreter hands out, turns ref register values back into buffers and
    (for counted backends) retains and releases ref values. This base class is the plain-Python
    backend: ByteBuffers, no counting. `machine` is the data model whose iree_host_size_t arithmetic
    the buffer ops use (`target`, the host by default; a counted backend's is its heap's)."""

    counted = False  # whether ref values carry reference counts the interpreter must maintain

    def __init__(self, max_allocation: int = DEFAULT_MAX_ALLOCATION, *,
                 target: "Machine | Target | str | None" = None) -> None:
        self.max_allocation = max_allocation
        self.machine: Machine = _machine(target)

    # -- making buffers ----------------------------------------------------------------------------

    def allocate(self, length: int, alignment: int) -> Any:
        """A zeroed mutable buffer (vm.buffer.alloc): the value a ref register holds (owned)."""
        if length > self.max_allocation:
            raise VmStatusError(StatusCode.RESOURCE_EXHAUSTED,
                                f"buffer allocation of {length} bytes exceeds the interpreter's "
                                f"limit of {self.max_allocation}")
        return ByteBuffer(bytearray(length), True, alignment, "alloc")

    def clone(self, source: Any, offset: int, length: int, alignment: int) -> Any:
        """vm.buffer.clone of [offset, offset + length) of ref value `source` (already bounds
        checked): a new mutable buffer value (owned)."""
        src = self.deref(source)
        clone = self.allocate(length, alignment)
        dst = self.deref(clone)
        assert src is not None and dst is not None  # the op checked its source; a new buffer
        dst.data[:length] = src.data[offset:offset + length]
        return clone

    def wrap_rodata(self, ordinal: int, data: bytes) -> Any:
        """The read-only buffer vm.const.ref.rodata returns for segment `ordinal`."""
        return ByteBuffer(bytes(data), False, 0, f"rodata[{ordinal}]")

    def rodata_buffers(self, module: ModuleFile) -> list:
        """One rodata object per segment of `module` (kept by the context for its lifetime)."""
        return [self.wrap_rodata(s.ordinal, rodata_bytes(s)) for s in module.rodata_segments]

    def rodata_ref(self, rodata: Any) -> Any:
        """The (owned) ref value vm.const.ref.rodata puts in a register for a rodata object."""
        return rodata

    # -- using buffers -----------------------------------------------------------------------------

    def deref(self, value: Any) -> ByteBuffer | None:
        """The buffer a ref register holds, or None (null or not a buffer: iree_vm_buffer_deref)."""
        return value if isinstance(value, ByteBuffer) else None

    def header_span(self, value: Any) -> tuple[int, int]:
        """[start, end) of the target memory `deref(value)` reads besides the liveness of blocks
        (the buffer's header): a write there may change what deref returns. Empty here."""
        return 0, 0

    # -- reference counting (no-ops here) ----------------------------------------------------------

    def retain(self, value: Any) -> None:
        """Add a reference to a non-null ref value."""

    def release(self, value: Any) -> None:
        """Drop a reference to a non-null ref value (destroying it at zero)."""

    def close(self) -> None:
        """Free what the factory allocated for the context (rodata storage); idempotent."""


__all__ = ["ByteBuffer", "BufferFactory", "DEFAULT_MAX_ALLOCATION"]
