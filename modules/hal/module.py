"""The full `hal` native module (version 0.7) on the emulated VM ABI: iree-compile's default
execution model, served by one local-sync CPU device.

Every export of runtime/src/iree/modules/hal/exports.inl (layouts.hal_module.EXPORTS, checked
against the installed runtime's table) is registered with its exact cconv and called through
ireeabi.vm's shims on packed memory: the generic fixed and single-span shims, and for
`command_buffer.dispatch` / `dispatch.indirect` (two spans, `EXPORT_FN_CUSTOM`) the multi-span
reader in module.c's form: the constants at sizeof(iree_vm_abi_rrIiiiI_t), the bindings at
alignof(iree_vm_abi_iirII_t) (layouts.hal_module_dispatch). That agrees with the VM's packing on
every target but i386, where IREE's shim misreads the count (`ireeabi check` reports the site).

What each export does follows runtime/src/iree/modules/hal/module.c (argument checks in its order,
its status codes and messages) over:
- the device and its heap allocator (hal/device.py, sync_device.c, allocator_heap.c);
- buffers and buffer views (hal/buffer.py, hal/buffer_view.py); the buffer-view exports and
  buffer.length/subspan are the hal_inline module's own functions, as module.c and
  inline/module.c share them (utils/buffer_diagnostics.c);
- semaphores and fences (hal/semaphore.py): every queue operation waits for its wait fence (an
  unreached one is an error: nothing else could signal it), runs, and signals its signal fence, or
  fails it with the operation's status and returns that status (sync_device.c queue_op_begin/end);
- command buffers (hal/command_buffer.py), replayed on queue.execute with the binding table;
- executables: ELF kernels (embedded-elf / system-elf of the host) through hal/local/elf_executable.py and
  vmvx bytecode through hal/local/vmvx_executable.py; dispatches through hal/local/inline_command_buffer.py.

Files (ex.file.from_memory, queue.read/write) are memory files (hal/file.py). Not modelled
(UNIMPLEMENTED with the reason): channels and collectives (the compiler emits them only for
multi-device programs).
"""
from __future__ import annotations

from typing import Any, Callable

from ...layouts import hal_buffer as HB
from ...layouts import hal_module as HM
from ...layouts import hal_module_dispatch as HMD
from ...layouts.buffer import BufferAccess
from ...vm import ref as R
from ...vm.native_module import Export, NativeModule
from ...vm.ref import TYPE_NULL, NULL_REF, Ref
from ...vm.shims import CallContext
from ...base.status import StatusCode, StatusError

from ...hal import command_buffer_validation as V
from ...hal.command_buffer import (BufferRef, CommandBuffer, CommandBufferTypes, Resolver, null_hal_buffer,
                                        map_fill, map_write)
from ...layouts.hal_buffer import HEAP_BUFFER_ALIGNMENT
from ...hal.device import DeviceTypes, compatible_params
from ...hal.file import FileTypes, validate_access as validate_file_access
from ...hal.flag_names import buffer_usage_text, memory_type_text
from ...hal.local.executable_library import ExecutableError, UnresolvedImportError
from .loader import (DispatchArgs, DispatchShim, LoadedExecutable, executable_constants,
                                        no_loader_status)
from ...base.status import IreeFaultError
from ...hal.local.inline_command_buffer import LocalDispatcher
from ...hal.resource import ResourceType
from ...hal.semaphore import Fence, SemaphoreTypes
from ...hal.local import library_loader, vmvx_executable

MAX_DESCRIPTOR_BINDING_COUNT = 32  # IREE_HAL_MODULE_MAX_DESCRIPTOR_BINDING_COUNT (module.c)
MAX_FENCE_AWAIT = 32  # IREE_VM_ABI_VLA_STACK_DEREF_OR_NULL bound in fence.await
_U32 = 0xFFFFFFFF
_INFINITE_TIMEOUT = 0xFFFFFFFF



class CommandBufferDispatchShim(DispatchShim):
    """module.c's `iree_hal_module_command_buffer_dispatch_shim` and `..._dispatch_indirect_shim`:
    the code of hal_loader's dispatch shim (`DispatchShim`) over their own structs, reading from
    sizeof of the fixed part (layouts.hal_module_dispatch)."""

    @property
    def WHERE(self) -> str:  # type: ignore[override]
        indirect = self.signature.text == HMD.DISPATCH_INDIRECT_CCONV
        return "hal.command_buffer.dispatch" + (".indirect" if indirect else "")

    @property
    def VALUE_NAMES(self) -> tuple[str, ...]:  # type: ignore[override]
        if self.signature.text == HMD.DISPATCH_INDIRECT_CCONV:
            return tuple(f.name for f in HMD.iree_hal_module_command_buffer_dispatch_indirect_args_named_t.fields)
        return ("command_buffer", "executable", "function_id", "workgroup_count[0]", "workgroup_count[1]",
                "workgroup_count[2]", "flags")

class HalModule:
    """The `hal` module of one HalRuntime (its heap, ref types, hal_inline and hal_loader modules,
    whose buffer-view and executable-lookup functions it shares)."""

    def __init__(self, runtime: Any) -> None:
        self.runtime = runtime
        self.heap = runtime.heap
        self.machine = runtime.machine
        self._mask = self.machine.word_mask
        self._vm_buffers = runtime.vm_buffers
        self._buffers = runtime.hal_buffers
        self._executables = runtime.executables
        self._inline = runtime.inline
        self.devices = DeviceTypes(runtime.types, self._buffers, runtime.cpu_data, self.supports_format)
        self.semaphores = SemaphoreTypes(runtime.types)
        self.command_buffers = CommandBufferTypes(runtime.types)
        self.files = FileTypes(runtime.types, self._buffers)
        # Registered as iree_hal_module_register_all_types registers them, though no object of
        # either is ever made here: a module naming them in its types table loads, as in IREE.
        self.channels: ResourceType[None] = ResourceType(runtime.types, "hal.channel", lambda p, c: None)
        self.events: ResourceType[None] = ResourceType(runtime.types, "hal.event", lambda p, e: None)
        self.dispatcher = LocalDispatcher(self.heap, self._buffers)
        # Preserve counts of allocated buffers (iree_hal_buffer_t.preserve_count, 1 when allocated):
        # root address -> (its payload, count).
        self._preserve: dict[int, tuple[Any, int]] = {}
        inline = runtime.inline
        targets: dict[str, Callable] = {
            "allocator.allocate": self._allocator_allocate,
            "allocator.import": self._allocator_import,
            "allocator.select": self._allocator_select,
            "buffer.allocation.discard": self._allocation_discard,
            "buffer.allocation.is_terminal": self._allocation_is_terminal,
            "buffer.allocation.preserve": self._allocation_preserve,
            "buffer.assert": self._buffer_assert,
            "buffer.length": inline.buffer_length,
            "buffer.load": self._buffer_load,
            "buffer.store": self._buffer_store,
            "buffer.subspan": inline.buffer_subspan,
            "buffer_view.assert": inline.buffer_view_assert,
            "buffer_view.buffer": inline.buffer_view_buffer,
            "buffer_view.create": inline.buffer_view_create,
            "buffer_view.dim": inline.buffer_view_dim,
            "buffer_view.element_type": inline.buffer_view_element_type,
            "buffer_view.encoding_type": inline.buffer_view_encoding_type,
            "buffer_view.rank": inline.buffer_view_rank,
            "buffer_view.trace": inline.buffer_view_trace,
            "channel.create": self._channel_create,
            "channel.rank_and_count": self._channel_unavailable,
            "channel.split": self._channel_unavailable,
            "command_buffer.advise_buffer": self._cb_advise_buffer,
            "command_buffer.begin_debug_group": self._cb_begin_debug_group,
            "command_buffer.collective": self._cb_collective,
            "command_buffer.copy_buffer": self._cb_copy_buffer,
            "command_buffer.create": self._cb_create,
            "command_buffer.dispatch": self._cb_dispatch,
            "command_buffer.dispatch.indirect": self._cb_dispatch_indirect,
            "command_buffer.end_debug_group": self._cb_end_debug_group,
            "command_buffer.execution_barrier": self._cb_execution_barrier,
            "command_buffer.fill_buffer": self._cb_fill_buffer,
            "command_buffer.finalize": self._cb_finalize,
            "command_buffer.flush_buffer": self._cb_flush_buffer,
            "command_buffer.invalidate_buffer": self._cb_flush_buffer,
            "command_buffer.update_buffer": self._cb_update_buffer,
            "device.allocator": self._device_allocator,
            "device.query.i64": self._device_query_i64,
            "device.queue.alloca": self._queue_alloca,
            "device.queue.barrier": self._queue_barrier,
            "device.queue.copy": self._queue_copy,
            "device.queue.dealloca": self._queue_dealloca,
            "device.queue.execute": self._queue_execute,
            "device.queue.execute.indirect": self._queue_execute_indirect,
            "device.queue.fill": self._queue_fill,
            "device.queue.flush": self._queue_flush,
            "device.queue.read": self._queue_read,
            "device.queue.update": self._queue_update,
            "device.queue.write": self._queue_write,
            "devices.count": self._devices_count,
            "devices.get": self._devices_get,
            "ex.file.from_memory": self._file_from_memory,
            "executable.create": self._executable_create,
            "executable.lookup.function": self._lookup_function,
            "fence.await": self._fence_await,
            "fence.create": self._fence_create,
            "fence.fail": self._fence_fail,
            "fence.join": self._fence_join,
            "fence.query": self._fence_query,
            "fence.signal": self._fence_signal,
        }
        # The two dispatch exports read their spans as module.c's custom shims do: from sizeof of the
        # fixed part, bindings at the C struct's alignment (layouts.hal_module_dispatch.IREE_FORM;
        # the packing agrees on every target but i386, where IREE misreads and so does this module).
        dispatch = {shim.export for shim in HMD.SHIMS}
        exports = [Export(e.name, e.cconv, targets[e.name], form=HMD.IREE_FORM, shim=CommandBufferDispatchShim)
                   if e.name in dispatch else Export(e.name, e.cconv, targets[e.name]) for e in HM.EXPORTS]
        self.module = NativeModule(self.heap, HM.IREE_HAL_MODULE_NAME, exports,
                                   version=HM.IREE_HAL_MODULE_VERSION_LATEST)

    def close(self) -> None:
        self.module.close()
        self.dispatcher.close()
        self.devices.close()
        self.command_buffers.close()
        self.files.close()
        self.semaphores.close()
        self.events.close()
        self.channels.close()

    # -- helpers ------------------------------------------------------------------------------------

    def supports_format(self, fmt: str) -> bool:
        """The device's executable loaders: IREE's ELF loaders for the heap's architecture and the
        vmvx module loader (any data model). An ELF format of another architecture is noted in the
        loader's `foreign_formats`, so a program can say which target runs the kernels."""
        if fmt == vmvx_executable.FORMAT or library_loader.query_support(fmt, self.machine):
            return True
        arch = library_loader.foreign_arch(fmt, self.machine)
        if arch is not None:
            self.runtime.loader.foreign_formats[fmt] = arch
        return False

    def _device(self, ref: Ref) -> Any:
        return self.devices.devices.deref(ref)[1]

    def _fence(self, ref: Ref) -> Fence | None:
        """iree_hal_fence_deref: a fence, or NULL for a null ref or a ref of another type."""
        if ref.type != self.semaphores.fences.type or not ref.ptr:
            return None
        return self.semaphores.fences.payload(ref.ptr)

    def _fence_or_null(self, ref: Ref) -> Fence | None:
        """iree_hal_fence_check_deref_or_null: a null ref is NULL, another type an error."""
        if ref.type == TYPE_NULL:
            return None
        return self.semaphores.fences.deref(ref)[1]

    def _buffer_or_null(self, ref: Ref) -> int:
        """iree_hal_buffer_check_deref_or_null: 0 for a null ref."""
        if ref.type == TYPE_NULL:
            return 0
        return self._buffers.deref(ref)[0]

    def _queue_op(self, wait: Ref, signal: Ref, what: str, body: Callable[[], Any]) -> Any:
        """One local-sync queue operation: wait, run, then signal the signal fence, or fail it with
        the body's status and return that status."""
        wait_fence, signal_fence = self._fence(wait), self._fence(signal)
        self.semaphores.wait(wait_fence, what)
        try:
            result = body()
        except StatusError as e:
            self.semaphores.fail(signal_fence, e)
            raise
        self.semaphores.signal(signal_fence)
        return result

    def _cb(self, ref: Ref) -> CommandBuffer:
        return self.command_buffers.resources.deref(ref)[1]

    def _buffer_ref(self, slot: int, buffer: Ref, offset: int, length: int) -> BufferRef:
        return BufferRef(self._buffer_or_null(buffer), slot & _U32, offset & self._mask, length & self._mask)

    def _span(self, buffer: int, offset: int, length: int) -> tuple[int, int]:
        return Resolver(self._buffers, (), self._mask).span(BufferRef(buffer, 0, offset, length), "target")

    # -- allocators and buffers ---------------------------------------------------------------------

    def _allocator_allocate(self, ctx: CallContext, allocator: Ref, queue_affinity: int, memory_types: int,
                            buffer_usage: int, allocation_size: int) -> Ref:
        self.devices.allocators.deref(allocator)
        return self._buffers.resources.move_ref(
            self.devices.allocate(memory_types & _U32, buffer_usage & _U32, allocation_size))

    def _allocator_import(self, ctx: CallContext, allocator: Ref, try_import: int, queue_affinity: int,
                          memory_types: int, buffer_usage: int, source: Ref, offset: int, length: int) -> Ref:
        """iree_hal_module_allocator_import over the heap allocator's import_buffer: a hal.buffer
        aliasing [offset, offset + length) of a vm.buffer (retained until the hal.buffer goes);
        read-only sources only for SHARING_IMMUTABLE usage; data not 64-byte aligned is refused by
        iree_hal_heap_buffer_wrap (OUT_OF_RANGE), which `try_import` turns into a null result."""
        self.devices.allocators.deref(allocator)
        vmb = self._vm_buffers
        src = vmb.check_deref(source)
        available = vmb.length(src)
        offset, length = _i64(offset), _i64(length)
        if length == -1:
            length = available
        if length < 0 or offset < 0 or offset > available or offset + length > available:
            raise StatusError(StatusCode.INVALID_ARGUMENT, f"byte range out of bounds (requested "
                              f"{offset & self._mask}-{(offset + length - 1) & self._mask} of available "
                              f"{available})")
        access = int(HB.MemoryAccess.READ)
        immutable = buffer_usage & int(HB.BufferUsage.SHARING_IMMUTABLE)
        if not int(vmb.access(src)) & int(BufferAccess.MUTABLE):
            if not immutable:
                raise StatusError(StatusCode.PERMISSION_DENIED, "source buffer is immutable and can only be "
                                  "imported for constant usage")
        elif not immutable:
            access |= int(HB.MemoryAccess.WRITE)
        data = vmb.data(src) + offset
        if data % HEAP_BUFFER_ALIGNMENT:
            if try_import:
                return NULL_REF
            raise StatusError(StatusCode.OUT_OF_RANGE, f"imported heap buffer data must be aligned to "
                              f"{HEAP_BUFFER_ALIGNMENT}; got 0x{data:x}")
        memory_type, usage = compatible_params(memory_types & _U32, buffer_usage & _U32)
        vmb.retain(src)
        heap, vm_type = self.heap, vmb.type
        buffer = self._buffers.wrap(data, length, memory_type=memory_type, allowed_access=access,
                                    allowed_usage=usage,
                                    release=lambda: R.release_value(heap, Ref(src, vm_type)))
        return self._buffers.resources.move_ref(buffer)

    def _allocator_select(self, ctx: CallContext, memory_types: int, buffer_usage: int, flags: int,
                          pairs: list[tuple[Ref, int]]) -> tuple[Ref, int]:
        # No device policy is set (IREE's tools set none): the first pair is chosen.
        if not pairs:
            raise StatusError(StatusCode.INVALID_ARGUMENT,
                              "at least one device/queue affinity pair must be provided")
        device_ref, affinity = pairs[0]
        ptr, _ = self.devices.devices.deref(device_ref)
        self.devices.devices.retain(ptr)
        return Ref(ptr, self.devices.devices.type), affinity

    def _preserve_count(self, buffer: Ref) -> tuple[int, Any]:
        """(root buffer address, its payload): the allocated buffer whose preserve count a buffer
        shares (buffer.c: a subspan uses its allocated buffer's)."""
        ptr, b = self._buffers.deref(buffer)
        root = b.parent or ptr
        return root, self._buffers.get(root)

    def _preserve_get(self, root: int, payload: Any) -> int:
        held = self._preserve.get(root)
        # A count kept for an earlier buffer at the same address is not this one's: it starts at 1.
        return held[1] if held is not None and held[0] is payload else 1

    def _allocation_preserve(self, ctx: CallContext, buffer: Ref) -> None:
        root, payload = self._preserve_count(buffer)
        self._preserve[root] = (payload, (self._preserve_get(root, payload) + 1) & _U32)

    def _allocation_discard(self, ctx: CallContext, buffer: Ref) -> int:
        # iree_hal_buffer_allocation_discard: fetch_sub of the preserve count; true when it was 1.
        root, payload = self._preserve_count(buffer)
        old = self._preserve_get(root, payload)
        self._preserve[root] = (payload, (old - 1) & _U32)
        return 1 if old == 1 else 0

    def _allocation_is_terminal(self, ctx: CallContext, buffer: Ref) -> int:
        root, payload = self._preserve_count(buffer)
        return 1 if self._preserve_get(root, payload) == 1 else 0

    def _buffer_assert(self, ctx: CallContext, buffer: Ref, message: Ref, allocator: Ref, minimum_length: int,
                       memory_types: int, buffer_usage: int) -> None:
        _, b = self._buffers.deref(buffer)
        vmb = self._vm_buffers
        vmb.check_deref(message)  # the message's text is read only for a failure, as IREE formats it then
        minimum_length &= self._mask
        if b.byte_length < minimum_length:
            raise StatusError(StatusCode.INVALID_ARGUMENT, f"{vmb.text(message)} buffer byte length "
                              f"{b.byte_length} less than expected minimum {minimum_length}")
        required = memory_types & _U32
        if b.memory_type & required != required:
            raise StatusError(StatusCode.PERMISSION_DENIED, f"{vmb.text(message)} buffer memory type is not "
                              f"compatible; buffer has {memory_type_text(b.memory_type)}, operation requires "
                              f"{memory_type_text(required)}")
        usage = buffer_usage & _U32
        if b.allowed_usage & usage != usage:
            raise StatusError(StatusCode.PERMISSION_DENIED, f"{vmb.text(message)} requested usage was not "
                              "specified when the buffer was allocated; buffer allows "
                              f"{buffer_usage_text(b.allowed_usage)}, operation requires {buffer_usage_text(usage)}")
        self.devices.allocators.deref(allocator)

    def _buffer_load(self, ctx: CallContext, buffer: Ref, offset: int, length: int) -> int:
        ptr, _ = self._buffers.deref(buffer)
        n = length & _U32
        if n > 4:
            raise StatusError(StatusCode.INVALID_ARGUMENT, f"load length byte count {_i32(n)} exceeds max")
        V.validate_access(self._buffers.get(ptr).allowed_access, int(HB.MemoryAccess.READ))  # map_read
        address, n = self._span(ptr, offset, n)
        return _i32(int.from_bytes(self.heap.read(address, n) + bytes(4 - n), "little"))

    def _buffer_store(self, ctx: CallContext, value: int, buffer: Ref, offset: int, length: int) -> None:
        ptr, b = self._buffers.deref(buffer)
        n = length & _U32
        if n > 4:
            raise StatusError(StatusCode.INVALID_ARGUMENT, f"store length byte count {_i32(n)} exceeds max")
        off = offset & self._mask
        if off + n > b.byte_length:
            raise StatusError(StatusCode.OUT_OF_RANGE, f"store out of bounds (target_offset={off}, length={n} "
                              f"into max {b.byte_length})")
        map_write(self.heap, self._buffers, ptr, off, (value & _U32).to_bytes(4, "little")[:n], self._mask)

    # -- channels and files (not modelled) ----------------------------------------------------------

    def _channel_create(self, ctx: CallContext, device: Ref, queue_affinity: int, flags: int, id: Ref,
                        group: Ref, rank: int, count: int) -> Ref:
        self._device(device)
        raise StatusError(StatusCode.UNIMPLEMENTED, "collectives not implemented")

    def _channel_unavailable(self, ctx: CallContext, channel: Ref, *args: Any) -> Any:
        raise StatusError(StatusCode.INVALID_ARGUMENT, "ref type mismatch" if channel.type != TYPE_NULL
                          else "ref is null")

    def _cb_collective(self, ctx: CallContext, cb: Ref, channel: Ref, *args: Any) -> None:
        self._cb(cb)
        self._channel_unavailable(ctx, channel)

    def _file_from_memory(self, ctx: CallContext, device: Ref, queue_affinity: int, access: int, buffer: Ref,
                          offset: int, length: int, flags: int) -> Ref:
        """ex.file.from_memory: a read-only memory file over a range of a vm.buffer (retained until
        the file's storage goes)."""
        self._device(device)
        vmb = self._vm_buffers
        src = vmb.check_deref(buffer)
        if access & _U32 & ~int(HB.MemoryAccess.READ):
            raise StatusError(StatusCode.PERMISSION_DENIED,
                              "only read-only memory can be accessed via a file handle (today)")
        data, n = vmb.map_ro(src, offset & self._mask, length & self._mask, 1)
        vmb.retain(src)
        heap, vm_type = self.heap, vmb.type
        file = self.files.wrap(access & _U32, data, n, lambda: R.release_value(heap, Ref(src, vm_type)))
        return self.files.files.move_ref(file)

    def _queue_read(self, ctx: CallContext, device: Ref, queue_affinity: int, wait: Ref, signal: Ref,
                    source: Ref, source_offset: int, target: Ref, target_offset: int, length: int,
                    flags: int) -> None:
        """sync_device.c queue_read of a memory file: a queue copy from its storage buffer."""
        self._device(device)
        _, f = self.files.files.deref(source)
        tptr, _ = self._buffers.deref(target)
        validate_file_access(f, int(HB.MemoryAccess.READ))
        length &= self._mask
        if length == 0:
            self._queue_op(wait, signal, "queue.read", _nothing_now)
            return
        start = source_offset & ((1 << 64) - 1)
        if f.length > 0 and start + length > f.length:
            raise StatusError(StatusCode.OUT_OF_RANGE, f"read range [{start}, {start + length}) exceeds file "
                              f"length {f.length}")
        self._copy(wait, signal, "queue.read", f.storage, start, tptr, target_offset, length)

    def _queue_write(self, ctx: CallContext, device: Ref, queue_affinity: int, wait: Ref, signal: Ref,
                     source: Ref, source_offset: int, target: Ref, target_offset: int, length: int,
                     flags: int) -> None:
        """sync_device.c queue_write: memory files from ex.file.from_memory are read-only."""
        self._device(device)
        sptr, _ = self._buffers.deref(source)
        _, f = self.files.files.deref(target)
        validate_file_access(f, int(HB.MemoryAccess.WRITE))
        if length & self._mask == 0:
            self._queue_op(wait, signal, "queue.write", _nothing_now)
            return
        self._copy(wait, signal, "queue.write", sptr, source_offset, f.storage, target_offset, length)

    # -- command buffers ----------------------------------------------------------------------------

    def _cb_create(self, ctx: CallContext, device: Ref, modes: int, categories: int, queue_affinity: int,
                   binding_capacity: int) -> Ref:
        self._device(device)
        ptr = self.command_buffers.create(modes & _U32, categories & _U32, queue_affinity,
                                          binding_capacity & self._mask)
        return self.command_buffers.resources.move_ref(ptr)

    def _cb_finalize(self, ctx: CallContext, cb: Ref) -> None:
        self.command_buffers.end(self._cb(cb))

    def _cb_begin_debug_group(self, ctx: CallContext, cb: Ref, label: Ref) -> None:
        c = self._cb(cb)
        self._vm_buffers.check_deref(label)
        if c.validation is not None:
            c.validation.debug_group_depth += 1
        self.command_buffers.record(c, _nothing)

    def _cb_end_debug_group(self, ctx: CallContext, cb: Ref) -> None:
        c = self._cb(cb)
        if c.validation is not None:
            c.validation.debug_group_depth -= 1
        self.command_buffers.record(c, _nothing)

    def _cb_execution_barrier(self, ctx: CallContext, cb: Ref, source_stage: int, target_stage: int,
                              flags: int) -> None:
        # Not validated (any command buffer may barrier); commands replay in order in one thread, so a
        # barrier has nothing left to order.
        self.command_buffers.record(self._cb(cb), _nothing)

    def _validate_ref(self, c: CommandBuffer, ref: BufferRef, req: V.Requirements) -> None:
        if c.validation is not None:
            V.buffer_ref(c.validation, self._buffers, ref.buffer, ref.slot, ref.offset, ref.length, req, self._mask)

    def _cb_advise_buffer(self, ctx: CallContext, cb: Ref, buffer: Ref, flags: int, arg0: int, arg1: int,
                          slot: int) -> None:
        c = self._cb(cb)
        ref = self._buffer_ref(slot, buffer, 0, -1)
        if c.validation is not None:
            V.categories(c.validation, V.CATEGORY_TRANSFER)
            self._validate_ref(c, ref, V.Requirements(type=int(HB.MemoryType.DEVICE_VISIBLE),
                                                      max_byte_offset=(ref.offset + ref.length) & self._mask))
        self.command_buffers.record(c, _nothing, [(self._buffers.resources, ref.buffer)])

    def _cb_flush_buffer(self, ctx: CallContext, cb: Ref, slot: int, buffer: Ref, offset: int,
                         length: int) -> None:
        # In the 3.13 table only; heap memory is host-coherent: nothing to flush or invalidate.
        c = self._cb(cb)
        ref = self._buffer_ref(slot, buffer, offset, length)
        self.command_buffers.record(c, _nothing, [(self._buffers.resources, ref.buffer)])

    def _cb_fill_buffer(self, ctx: CallContext, cb: Ref, target: Ref, offset: int, length: int, slot: int,
                        pattern: int, pattern_length: int, flags: int) -> None:
        c = self._cb(cb)
        ref = self._buffer_ref(slot, target, offset, length)
        n = pattern_length & _U32
        if c.validation is not None:  # iree_hal_command_buffer_fill_buffer_validation
            V.categories(c.validation, V.CATEGORY_TRANSFER)
            if n not in (1, 2, 4):
                raise StatusError(StatusCode.INVALID_ARGUMENT, f"fill value length is not one of the "
                                  f"supported values (pattern_length={n})")
            if ref.offset % n or ref.length % n:
                raise StatusError(StatusCode.INVALID_ARGUMENT, f"binding offset and/or length do not match the "
                                  f"required alignment of one or more command (offset={ref.offset}, "
                                  f"length={ref.length}, pattern_length={n})")
            self._validate_ref(c, ref, V.transfer_requirements(True, (ref.offset + ref.length) & self._mask, n))
        if n > 8:
            raise StatusError(StatusCode.INVALID_ARGUMENT, "fill patterns must be < 8 bytes")
        heap, buffers, mask = self.heap, self._buffers, self._mask
        value = pattern & ((1 << (8 * n)) - 1) if n else 0

        def fill(resolver: Resolver) -> None:
            buffer, off, count = resolver.resolve(ref)
            if not buffer:
                raise null_hal_buffer("fill target")
            map_fill(heap, buffers, buffer, off, count, value, n, mask)
        self.command_buffers.record(c, fill, [(self._buffers.resources, ref.buffer)])

    def _cb_update_buffer(self, ctx: CallContext, cb: Ref, source: Ref, source_offset: int, target: Ref,
                          target_offset: int, length: int, slot: int, flags: int) -> None:
        c = self._cb(cb)
        src = self._vm_buffers.check_deref(source)
        ref = self._buffer_ref(slot, target, target_offset, length)
        data, n = self._vm_buffers.map_ro(src, source_offset & self._mask, length & self._mask, 1)
        if c.validation is not None:
            V.categories(c.validation, V.CATEGORY_TRANSFER)
            self._validate_ref(c, ref, V.transfer_requirements(True, (ref.offset + ref.length) & self._mask))
        payload = self.heap.read(data, n)  # copied at record time, as the deferred command buffer does
        heap, buffers, mask = self.heap, self._buffers, self._mask

        def update(resolver: Resolver) -> None:
            buffer, off, count = resolver.resolve(ref)
            if not buffer:
                raise null_hal_buffer("update target")
            map_write(heap, buffers, buffer, off, payload[:count], mask)
        self.command_buffers.record(c, update, [(self._buffers.resources, ref.buffer)])

    def _cb_copy_buffer(self, ctx: CallContext, cb: Ref, source_slot: int, target_slot: int, source: Ref,
                        source_offset: int, target: Ref, target_offset: int, length: int, flags: int) -> None:
        c = self._cb(cb)
        src = self._buffer_ref(source_slot, source, source_offset, length)
        dst = self._buffer_ref(target_slot, target, target_offset, length)
        mask = self._mask
        if c.validation is not None:  # iree_hal_command_buffer_copy_buffer_validation
            V.categories(c.validation, V.CATEGORY_TRANSFER)
            self._validate_ref(c, src, V.transfer_requirements(False, (src.offset + src.length) & mask))
            self._validate_ref(c, dst, V.transfer_requirements(True, (dst.offset + dst.length) & mask))
            if src.buffer and dst.buffer and self._overlap(src, dst):
                raise StatusError(StatusCode.INVALID_ARGUMENT,
                                  "source and target ranges overlap within the same buffer")
        heap = self.heap

        def copy(resolver: Resolver) -> None:
            s, sn = resolver.span(src, "copy source")
            d, dn = resolver.span(dst, "copy target")
            heap.memmove(d, s, min(sn, dn))
        self.command_buffers.record(c, copy, [(self._buffers.resources, src.buffer),
                                              (self._buffers.resources, dst.buffer)])

    def _overlap(self, a: BufferRef, b: BufferRef) -> bool:
        """iree_hal_buffer_test_overlap(...) != DISJOINT for two direct references."""
        pa, pb = self._buffers.get(a.buffer), self._buffers.get(b.buffer)
        if (pa.parent or a.buffer) != (pb.parent or b.buffer):
            return False
        mask = self._mask
        la = pa.byte_length - a.offset if a.length == mask else a.length
        lb = pb.byte_length - b.offset if b.length == mask else b.length
        oa, ob = pa.byte_offset + a.offset, pb.byte_offset + b.offset
        if not la or not lb:
            return False
        return (oa == ob and la == lb) or (oa + la > ob and ob + lb > oa)

    def _bindings(self, args: DispatchArgs) -> list[BufferRef]:
        b = args.binding_count
        if b > MAX_DESCRIPTOR_BINDING_COUNT:  # a signed compare: a negative count passes
            raise StatusError(StatusCode.OUT_OF_RANGE, f"binding count {b & self._mask} > "
                              f"{MAX_DESCRIPTOR_BINDING_COUNT}")
        if b < 0:
            shim = args.shim
            raise IreeFaultError(
                f"{shim.WHERE}: {shim.reading(args)}; its bounds check passes (binding_count x "
                f"sizeof({shim.element_struct}) wraps below the array), and module.c then allocas "
                f"binding_count x sizeof(iree_hal_buffer_ref_t) bytes (a negative size) and reads bindings "
                f"from byte {args.bindings_at} on for (iree_host_size_t){b} of them: undefined in IREE "
                "(its stack pointer and the loop run past the buffer; its own runtime crashes there)")
        return [self._buffer_ref(slot, buffer, offset, length) for _, slot, buffer, offset, length in args.bindings()]

    @staticmethod
    def _constants(args: DispatchArgs) -> list[int]:
        """The constant_count x 4 bytes module.c hands iree_hal_command_buffer_dispatch, which copies
        them: past the argument buffer (or a negative count, a size that wraps) it reads memory that
        is not the call's."""
        c, at, n = args.constant_count, args.constants_at, len(args.view)
        if c < 0 or at + 4 * c > n:
            shim = args.shim
            raise IreeFaultError(
                f"{shim.WHERE}: {shim.reading(args)}; module.c hands the command buffer constant_count x 4 = "
                f"{(4 * c) & shim.mask} bytes of constants from byte {at}, past the end of the {n}-byte "
                "argument buffer: the command buffer copies memory that is not the call's")
        return args.constants(c)

    def _validate_dispatch(self, c: CommandBuffer, refs: list[BufferRef], count_ref: BufferRef | None) -> None:
        """iree_hal_command_buffer_dispatch_validation (constants are whole uint32s here)."""
        v = c.validation
        if v is None:
            return
        mask = self._mask
        V.categories(v, V.CATEGORY_DISPATCH)
        if count_ref is not None:
            if count_ref.offset % 4:
                raise StatusError(StatusCode.INVALID_ARGUMENT, f"workgroup count offset does not match the "
                                  f"required natural alignment of uint32_t (offset={count_ref.offset}, "
                                  f"min_byte_alignment=4)")
            end_ = count_ref.offset + 12
            if end_ > mask:
                raise StatusError(StatusCode.OUT_OF_RANGE, f"workgroup count offset overflows device size "
                                  f"(offset={count_ref.offset}, length=12)")
            req = V.Requirements(V.COMPAT_QUEUE_DISPATCH, int(HB.BufferUsage.DISPATCH_INDIRECT_PARAMETERS),
                                 int(HB.MemoryAccess.READ), int(HB.MemoryType.DEVICE_VISIBLE), end_, 4)
            V.buffer_ref(v, self._buffers, count_ref.buffer, count_ref.slot, count_ref.offset, 12, req, mask)
        for i, r in enumerate(refs):
            try:
                self._validate_ref(c, r, V.dispatch_requirements((r.offset + r.length) & mask))
            except StatusError as e:
                raise StatusError(e.code, e.message, e.annotations + (f"binding[{i}]",)) from None

    def _cb_dispatch(self, ctx: CallContext, args: DispatchArgs) -> None:
        cb, executable, function_id, x, y, z, flags = args.values
        c = self._cb(cb)
        exe_ptr, exe = self._executables.deref(executable)
        refs = self._bindings(args)
        self._validate_dispatch(c, refs, None)
        consts = self._constants(args)
        counts = (x & _U32, y & _U32, z & _U32)
        self._record_dispatch(c, exe_ptr, exe, function_id, lambda resolver: counts, consts, refs)

    def _cb_dispatch_indirect(self, ctx: CallContext, args: DispatchArgs) -> None:
        cb, executable, function_id, workgroups_slot, workgroups_buffer, workgroups_offset, flags = args.values
        c = self._cb(cb)
        exe_ptr, exe = self._executables.deref(executable)
        count_ref = self._buffer_ref(workgroups_slot, workgroups_buffer, workgroups_offset, 12)
        refs = self._bindings(args)
        self._validate_dispatch(c, refs, count_ref)
        consts = self._constants(args)
        heap = self.heap

        def counts(resolver: Resolver) -> tuple[int, int, int]:
            address, _ = resolver.span(count_ref, "workgroup count")
            raw = heap.read(address, 12)
            return tuple(int.from_bytes(raw[i:i + 4], "little") for i in (0, 4, 8))  # type: ignore[return-value]
        self._record_dispatch(c, exe_ptr, exe, function_id, counts, consts, refs,
                              [(self._buffers.resources, count_ref.buffer)])

    def _record_dispatch(self, c: CommandBuffer, exe_ptr: int, exe: LoadedExecutable, function_id: int,
                         counts: Callable[[Resolver], tuple[int, int, int]], consts: list[int],
                         refs: list[BufferRef], extra: list | None = None) -> None:
        dispatcher = self.dispatcher

        def dispatch(resolver: Resolver) -> None:
            resolved = [resolver.resolve(r) for r in refs]
            dispatcher.dispatch(exe.library, function_id, counts(resolver), consts, resolved)
        retain = [(self._executables, exe_ptr)] + [(self._buffers.resources, r.buffer) for r in refs]
        self.command_buffers.record(c, dispatch, retain + (extra or []))

    # -- devices ------------------------------------------------------------------------------------

    def _devices_count(self, ctx: CallContext) -> int:
        return 1

    def _devices_get(self, ctx: CallContext, index: int) -> Ref:
        if index != 0:
            return NULL_REF
        return self.devices.devices.retain_ref(self.devices.device)

    def _device_allocator(self, ctx: CallContext, device: Ref) -> Ref:
        return self.devices.allocators.retain_ref(self._device(device).allocator)

    def _device_query_i64(self, ctx: CallContext, device: Ref, category: Ref, key: Ref) -> tuple[int, int]:
        d = self._device(device)
        cat = self._vm_buffers.text(category)
        k = self._vm_buffers.text(key)
        ok, value = self.devices.query_i64(d, cat, k)
        return (1 if ok else 0), value

    def _queue_alloca(self, ctx: CallContext, device: Ref, queue_affinity: int, wait: Ref, signal: Ref,
                      pool: int, memory_types: int, buffer_usage: int, allocation_size: int, flags: int) -> Ref:
        self._device(device)
        if pool != 0:
            raise StatusError(StatusCode.UNIMPLEMENTED, "VM queue allocation pools are not supported")
        ptr = self._queue_op(wait, signal, "queue.alloca",
                             lambda: self.devices.allocate(memory_types & _U32, buffer_usage & _U32,
                                                           allocation_size))
        return self._buffers.resources.move_ref(ptr)

    def _queue_dealloca(self, ctx: CallContext, device: Ref, queue_affinity: int, wait: Ref, signal: Ref,
                        buffer: Ref, flags: int) -> None:
        self._device(device)
        self._buffers.deref(buffer)
        # Heap buffers are not transient: the memory goes with the buffer's last reference.
        self._queue_op(wait, signal, "queue.dealloca", _nothing_now)

    def _queue_barrier(self, ctx: CallContext, device: Ref, queue_affinity: int, wait: Ref, signal: Ref,
                       flags: int) -> None:
        self._device(device)
        self._queue_op(wait, signal, "queue.barrier", _nothing_now)

    def _queue_fill(self, ctx: CallContext, device: Ref, queue_affinity: int, wait: Ref, signal: Ref,
                    target: Ref, target_offset: int, length: int, pattern: int, pattern_length: int,
                    flags: int) -> None:
        self._device(device)
        ptr, _ = self._buffers.deref(target)
        n = pattern_length & self._mask
        mask = self._mask
        self._queue_op(wait, signal, "queue.fill", lambda: map_fill(
            self.heap, self._buffers, ptr, target_offset & mask, length & mask, pattern, n, mask))

    def _queue_update(self, ctx: CallContext, device: Ref, queue_affinity: int, wait: Ref, signal: Ref,
                      source: Ref, source_offset: int, target: Ref, target_offset: int, length: int,
                      flags: int) -> None:
        self._device(device)
        src = self._vm_buffers.check_deref(source)
        ptr, _ = self._buffers.deref(target)
        data, n = self._vm_buffers.map_ro(src, source_offset & self._mask, length & self._mask, 1)
        payload = self.heap.read(data, n)
        self._queue_op(wait, signal, "queue.update", lambda: map_write(
            self.heap, self._buffers, ptr, target_offset & self._mask, payload, self._mask))

    def _queue_copy(self, ctx: CallContext, device: Ref, queue_affinity: int, wait: Ref, signal: Ref,
                    source: Ref, source_offset: int, target: Ref, target_offset: int, length: int,
                    flags: int) -> None:
        self._device(device)
        sptr, _ = self._buffers.deref(source)
        tptr, _ = self._buffers.deref(target)
        self._copy(wait, signal, "queue.copy", sptr, source_offset, tptr, target_offset, length)

    def _copy(self, wait: Ref, signal: Ref, what: str, sptr: int, source_offset: int, tptr: int,
              target_offset: int, length: int) -> None:
        """sync_device.c queue_copy: map the source range (READ), map_write it into the target."""
        def copy() -> None:
            V.validate_access(self._buffers.get(sptr).allowed_access, int(HB.MemoryAccess.READ))
            s, sn = self._span(sptr, source_offset, length)
            map_write(self.heap, self._buffers, tptr, target_offset & self._mask, self.heap.read(s, sn),
                      self._mask)
        self._queue_op(wait, signal, what, copy)

    def _queue_execute(self, ctx: CallContext, device: Ref, queue_affinity: int, wait: Ref, signal: Ref,
                       cb: Ref, flags: int) -> None:
        self._device(device)
        c = self._cb(cb)
        self.command_buffers.validate_submission(c, (), self._mask, self._buffers)
        resolver = Resolver(self._buffers, (), self._mask)
        self._queue_op(wait, signal, "queue.execute", lambda: self.command_buffers.execute(c, resolver))

    def _queue_execute_indirect(self, ctx: CallContext, device: Ref, queue_affinity: int, wait: Ref, signal: Ref,
                                cb: Ref, flags: int, table: list[tuple[Ref, int, int]]) -> None:
        self._device(device)
        c = self._cb(cb)
        entries = [(self._buffer_or_null(buffer), offset, length) for buffer, offset, length in table]
        self.command_buffers.validate_submission(c, entries, self._mask, self._buffers)
        resolver = Resolver(self._buffers, entries, self._mask)
        self._queue_op(wait, signal, "queue.execute", lambda: self.command_buffers.execute(c, resolver))

    def _queue_flush(self, ctx: CallContext, device: Ref, queue_affinity: int) -> None:
        self._device(device)  # local-sync operations complete in their calls: nothing is buffered

    # -- executables --------------------------------------------------------------------------------

    def _executable_create(self, ctx: CallContext, device: Ref, queue_affinity: int, format: Ref, data: Ref,
                           constants: Ref) -> Ref:
        self._device(device)
        vmb = self._vm_buffers
        fmt = vmb.text(format)
        dbuf = vmb.check_deref(data)
        ptr, n = vmb.map_ro(dbuf, 0, vmb.length(dbuf), 1)
        consts = executable_constants(vmb, constants)
        if not self.supports_format(fmt):
            raise no_loader_status(fmt)
        image = self.heap.read(ptr, n)
        library: "library_loader.KernelLibrary | vmvx_executable.VmvxLibrary"
        try:
            if fmt == vmvx_executable.FORMAT:
                library = vmvx_executable.load(self.runtime, image, consts)
            else:
                library = library_loader.load_library(fmt, image, consts, self.runtime.cpu_data, self.machine,
                                                      self.runtime.runners)
        except UnresolvedImportError as e:
            raise StatusError(StatusCode.UNAVAILABLE, "no import provider registered for resolving required "
                              "executable imports") from e
        except ExecutableError as e:
            if e.code in (StatusCode.NOT_FOUND, StatusCode.CANCELLED):
                raise no_loader_status(fmt) from e
            raise
        return self._executables.move_ref(self._executables.create(LoadedExecutable(library),
                                                                    tag=f"hal.executable {library.name}"))

    def _lookup_function(self, ctx: CallContext, executable: Ref, name: Ref) -> int:
        """The executable's lookup by name: a vmvx module's own (its bytecode module's statuses), an
        ELF library's as hal_loader looks it up (local_executable.c, the same library tables)."""
        _, exe = self._executables.deref(executable)
        if isinstance(exe.library, vmvx_executable.VmvxLibrary):
            vmb = self._vm_buffers
            buf = vmb.check_deref(name)
            return exe.library.lookup(self.heap.read(vmb.data(buf), vmb.length(buf)))
        return self.runtime.loader.lookup_function(ctx, executable, name)

    # -- fences -------------------------------------------------------------------------------------

    # A caller's own fences (not exports): what iree-run-module makes around an async-external
    # call (tooling/function_util.c) and what a Python caller passes in their place.

    def new_fence(self) -> Ref:
        """A new signal fence, owned by the caller: a new semaphore at 0 and a fence reached when
        it is 1 (iree_hal_semaphore_create + iree_hal_fence_create_at, as
        iree_tooling_append_async_fences makes the one it appends)."""
        return self.semaphores.fences.move_ref(self.semaphores.new_timeline_fence())

    def signal_fence(self, fence: "Ref | None") -> None:
        """iree_hal_fence_signal on a caller's fence (None, a null fence, is already reached)."""
        self.semaphores.signal(self._callers_fence(fence, "signal"))

    def fence_status(self, fence: "Ref | None") -> StatusError | None:
        """iree_hal_fence_query: None when every timepoint is reached (a null fence is),
        StatusError(DEFERRED) while one is pending, or a failed semaphore's status."""
        return self.semaphores.query(self._callers_fence(fence, "query"))

    def wait_fence(self, fence: "Ref | None", what: str) -> None:
        """iree_hal_fence_wait with an infinite timeout on a caller's fence: returns when it is
        reached, raises a failed semaphore's status, and (nothing runs in the background here)
        FAILED_PRECONDITION naming `what` when it is pending, where IREE would block forever."""
        self.semaphores.wait(self._callers_fence(fence, "wait"), what)

    def _callers_fence(self, fence: "Ref | None", op: str) -> Fence | None:
        if fence is None or (isinstance(fence, Ref) and fence.type == TYPE_NULL):
            return None
        if not isinstance(fence, Ref) or fence.type != self.semaphores.fences.type:
            raise StatusError(StatusCode.INVALID_ARGUMENT,
                              f"fence {op}: expected a hal.fence ref (or None), got {fence!r}")
        return self.semaphores.fences.deref(fence)[1]

    def _fence_create(self, ctx: CallContext, device: Ref, flags: int) -> Ref:
        self._device(device)
        return self.semaphores.fences.move_ref(self.semaphores.new_timeline_fence())

    def _fence_join(self, ctx: CallContext, flags: int, fences: list[Ref]) -> Ref:
        found = [self._fence_or_null(ref) for ref in fences]  # every one checked first
        if not sum(len(f.timepoints) for f in found if f is not None):
            return NULL_REF  # all empty: immediately signalled
        sems = self.semaphores
        joined = sems.create_fence()
        payload = sems.fences.payload(joined)
        for f in found:
            if f is not None:
                for sem, value in f.timepoints:
                    sems.insert(payload, sem, value)
        return sems.fences.move_ref(joined)

    def _fence_query(self, ctx: CallContext, fence: Ref) -> int:
        _, f = self.semaphores.fences.deref(fence)
        status = self.semaphores.query(f)
        return 0 if status is None else int(status.code)

    def _fence_signal(self, ctx: CallContext, fence: Ref) -> None:
        _, f = self.semaphores.fences.deref(fence)
        self.semaphores.signal(f)

    def _fence_fail(self, ctx: CallContext, fence: Ref, status: int) -> None:
        _, f = self.semaphores.fences.deref(fence)
        code = status & 0x1F  # IREE_STATUS_CODE_MASK
        self.semaphores.fail(f, StatusError(StatusCode(code)) if code in _CODES else
                             StatusError(StatusCode.UNKNOWN))

    def _fence_await(self, ctx: CallContext, timeout_millis: int, flags: int, fences: list[Ref]) -> int:
        if len(fences) > MAX_FENCE_AWAIT:  # IREE_VM_ABI_VLA_STACK_DEREF_OR_NULL
            raise StatusError(StatusCode.OUT_OF_RANGE, f"count {len(fences)} of iree_hal_fence > {MAX_FENCE_AWAIT}")
        found = [self._fence_or_null(ref) for ref in fences]
        pending = False
        for f in found:  # iree_hal_module_fence_elide_reached: reached ones drop, failures propagate
            status = self.semaphores.query(f)
            if status is None:
                continue
            if status.code != StatusCode.DEFERRED:
                raise status
            pending = True
        if not pending:
            return 0
        if timeout_millis & _U32 != _INFINITE_TIMEOUT:
            return int(StatusCode.DEADLINE_EXCEEDED)  # nothing can signal it before the deadline
        raise StatusError(StatusCode.DEADLINE_EXCEEDED,
                          "fence.await with an infinite timeout on a fence that is not signalled and that "
                          "nothing can signal (single-threaded local-sync device: IREE would block forever)")


def _nothing(resolver: Resolver) -> None:
    return None


def _nothing_now() -> None:
    return None


def _i64(v: int) -> int:
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >> 63 else v


def _i32(v: int) -> int:
    v &= _U32
    return v - (1 << 32) if v >> 31 else v


_CODES = {int(c) for c in StatusCode}

__all__ = ["HalModule", "MAX_DESCRIPTOR_BINDING_COUNT"]
