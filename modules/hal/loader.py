"""The `hal_loader` native module (version 1) on the emulated VM ABI.

executable.query_support / load / lookup.function use generic shims; executable.dispatch
(`0rIiiiCiDCrIID_v`, two spans) has its own shim, declared here as module.c declares
`iree_vm_shim_dispatch_v` (`DispatchShim`), which reads the buffer with the C code's arithmetic:

- fixed (IREE #24827): the constant count at the packed size of the fixed part, the binding array
  where the VM packs it;
- `legacy=True`: the constant count at sizeof(iree_vm_abi_rIiii_t) and the binding array aligned to
  alignof(iree_vm_abi_rII_t), as before the fix. On real argument buffers the counts then come from
  other values' bytes; what IREE does with them is modelled to its end: the shim's one bounds check
  (INVALID_ARGUMENT "argument/result signature mismatch"), then the dispatch's checks, then the kernel
  with the constants and bindings IREE hands it.

Dispatch then follows the loader: executable ref check, function id range, at most 32 bindings, each
binding a vm.buffer mapped read-only over (offset, length), a dispatch_state_v0 with workgroup size
1x1x1 and the parsed counts (in the heap, laid out for its data model, as IREE keeps it on its stack),
and every workgroup issued through the kernel library. The constants are a pointer into the argument
buffer, as module.c hands them: a kernel that reads more than the count it was handed (IREE does not
compare it with the export's) reads the buffer's next words, and runs on them as in IREE. Where IREE
reads past the argument buffer, or its kernel reads past it or past the binding arrays IREE allocas,
ireeabi raises IreeFaultError saying what IREE reads and where, instead of running on with made-up
memory.

Libraries of host machine code load only on a runtime whose target is the host; other targets
answer query_support for their own architecture and refuse the load with a message naming the target
that can run the kernels (executable.ForeignKernelError). Python kernels run on every target.

Load follows module.c's loader loop: a format no loader supports, or a loader answering NOT_FOUND or
CANCELLED, ends in NOT_FOUND "no executable loader registered ..."; required library imports fail as
with IREE's NULL import provider (UNAVAILABLE).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ...abi import cconv
from ...abi.layout import layout_of
from ...layouts import hal_loader as HL
from ...vm.buffer import BufferType
from ...base.machine import Machine
from ...vm.native_module import Export, NativeModule
from ...vm.ref import TYPE_NULL, Ref
from ...vm.shims import (ByteSpan, CallContext, MarshalError, NativeFunction, Shim, StructReader,
                              signature_mismatch, struct_reader)
from ...base.status import IreeFaultError, StatusCode, StatusError

from ...hal.local import library_loader, python_executable
from ...hal.local.library_loader import KernelRunners
from ...hal.local.executable_library import (DispatchState, ExecutableError,
                                                  UnresolvedImportError, issue_dispatch,
                                                  write_workgroup_state)
from ...hal.resource import ResourceType
from ...layouts.executable_library import DispatchLayout

if TYPE_CHECKING:
    from ...hal.local.vmvx_executable import VmvxLibrary

MAX_DISPATCH_BINDINGS = 32  # hal_loader's own limit (the library-level maximum is 64)
_U32 = 0xFFFFFFFF
_I32 = struct.Struct("<i")
# A count read from an address's bytes: its sign, and so what IREE does, follows where the object lies.
_ADDRESS_NOTE = ("; the count is half an address, so what IREE does changes with where that lies "
                 "(from run to run under ASLR: a negative half crashes, any other is the signature mismatch)")


# -- the dispatch shim ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class DispatchArgs:
    """What a two-span dispatch shim hands its function (module.c's args struct): the fixed part's
    values, each count as the int32 read and the byte of the argument buffer it was read from, where
    the constants and the binding array start (byte offsets from the buffer's start), and the buffer
    itself (its bytes, address and the shim that read it, for messages)."""

    values: tuple[Any, ...]  # the fixed part (hal_loader: executable, function_id, workgroup x, y, z)
    constant_count: int
    constant_count_at: int
    constants_at: int
    binding_count: int
    binding_count_at: int
    bindings_at: int
    view: memoryview
    address: int
    shim: "DispatchShim"

    def constants(self, count: int) -> list[int]:
        """The first `count` uint32 words from `constants_at` (the caller checked they are inside)."""
        return list(struct.unpack_from(f"<{count}I", self.view, self.constants_at))

    def bindings(self) -> list[tuple[Any, ...]]:
        """The binding_count elements from `bindings_at` (0 <= count; the shim's bounds check put
        them inside the buffer)."""
        es = self.shim.element
        return [es.element(es.struct.unpack_from(self.view, self.bindings_at + i * es.size))
                for i in range(self.binding_count)]

    def packed_as(self, offset: int, size: int = 4) -> str:
        """What the VM packed at bytes [offset, offset+size) of this buffer, as far as the buffer
        says (its own counts, read where the VM packs them): "the binding count", "bindings[0].i1",
        "padding", or "" when the buffer is not one the VM packed."""
        return self.shim.packed_as(self.view, offset, size)


class DispatchShim(Shim):
    """hal_loader's `iree_vm_shim_dispatch_v` (runtime/src/iree/modules/hal/loader/module.c) for a
    cconv `<fixed part>CiDC<element>D_v`, on one data model, with the C code's arithmetic:

    1. length < sizeof(fixed struct) + 2 x sizeof(iree_vm_size_t): signature mismatch (the C code
       first copies sizeof(fixed struct) bytes into its args union; the copy is then dropped, so a
       short buffer's over-read changes nothing IREE reports);
    2. the constant count: the int32 at `start` (pre-fix: sizeof of the fixed part's C struct;
       fixed, IREE #24827: the packed size of the fixed part); the constants right after it;
    3. the binding count: the int32 after `constant count` uint32s, computed in iree_host_size_t
       arithmetic (a negative or huge count wraps), read before any bounds check: outside the
       buffer IREE reads memory that is not the call's, which ireeabi refuses (IreeFaultError);
    4. the binding array after it, aligned (absolute address; pre-fix: to the C element struct's
       alignment, even when empty; fixed: to the VM's element alignment when the count is > 0);
       the check `array + count x
       sizeof(element) > end` (pointer arithmetic that wraps: a negative count passes it) is the
       signature mismatch, as is a non-empty results span (a NULL one is fine, never touched);
       the flags are not looked at (no RESUME case) and the function gets a `DispatchArgs`.

    A NULL argument span, which the C code dereferences, is refused (IreeFaultError)."""

    # Names of the fixed part's values, for messages (module.c's args struct members).
    VALUE_NAMES: tuple[str, ...] = tuple(f.name for f in HL.iree_hal_loader_dispatch_args_named_t.fields)
    WHERE = "hal_loader.executable.dispatch"
    # Set once by __post_init__ (the shim is frozen): the fixed part's and an element's readers,
    # where the constant count is, the binding array's alignment, C names for messages.
    prefix: StructReader
    packed_prefix: int
    start: int
    element: StructReader
    align: int
    element_struct: str
    fixed_struct: str
    members: tuple[str, ...]
    mask: int

    def __post_init__(self) -> None:
        super().__post_init__()
        m = self.machine
        frag = self.signature.arguments
        prefix_text = frag.fixed_prefix
        rest = frag.items[len(prefix_text):]
        if self.signature.results.items or len(rest) != 2 or any(isinstance(i, cconv.Value) for i in rest) \
                or rest[0].text != "i":
            raise MarshalError(f"{self.signature.text!r} is not a dispatch shim's cconv "
                               "(<fixed part>CiDC<element>D_v)")
        elem_text = rest[1].text
        set_ = object.__setattr__
        set_(self, "prefix", struct_reader(prefix_text, m))
        set_(self, "packed_prefix", cconv.vm_pack(prefix_text, m.target)[2])
        set_(self, "start", self.prefix.size if self.form == "pre-fix" else self.packed_prefix)
        set_(self, "element", struct_reader(elem_text, m))
        c_align = layout_of(cconv.shim_struct(elem_text), m.target).align
        vm_align = max(cconv.vm_field(c, m.target)[1] for c in "i" + elem_text)
        set_(self, "align", c_align if self.form == "pre-fix" else vm_align)
        set_(self, "element_struct", f"iree_vm_abi_{elem_text}_t")
        set_(self, "fixed_struct", f"iree_vm_abi_{prefix_text}_t")
        elem_struct = cconv.shim_struct(elem_text)
        assert elem_struct is not None  # an element's values are fixed
        set_(self, "members", tuple(f.name for f in elem_struct.fields))
        set_(self, "mask", m.word_mask)

    @property
    def kind(self) -> str:
        return "dispatch"

    def read(self, view: memoryview, address: int) -> DispatchArgs:
        """Steps 1-4 of the class docstring on the argument bytes `view` at `address`."""
        n, start = len(view), self.start
        if n < start + 8:
            raise signature_mismatch()
        values = tuple(self.prefix.read(view, 0))
        c = _I32.unpack_from(view, start)[0]
        mask = self.mask
        at = ((address + start + 4 + (((c & mask) * 4) & mask)) & mask) - address
        if at < 0 or at + 4 > n:
            raise IreeFaultError(
                f"{self.WHERE}: the {self._shim_name} reads constant_count {c} at byte {start} of the "
                f"{n}-byte argument buffer{self._packed_note(view, start)}, then binding_count at byte "
                f"{at} ({start} + 4 + 4 x {c}, in iree_host_size_t arithmetic), "
                f"{'before' if at < 0 else 'past the end of'} the buffer: it reads memory that is not "
                "the call's (its own runtime goes on with whatever count lies there, or faults)")
        b = _I32.unpack_from(view, at)[0]
        array = address + at + 4
        if b > 0 or self.form == "pre-fix":  # the fix aligns a non-empty array only
            array = -(-array // self.align) * self.align
        wrapped = ((b & mask) * self.element.size) & mask
        if (array + wrapped) & mask > address + n:
            # A pointer sum past the address space wraps: IREE's check passes for a binding array
            # at or above `mask + 1 - wrapped`, so the status follows where the buffer lies.
            wraps_at = mask + 1 - wrapped
            if wraps_at <= mask >> 1 and array < wraps_at:
                raise StatusError(StatusCode.INVALID_ARGUMENT, (
                    f"{signature_mismatch().message} (ireeabi: the {self._shim_name} reads "
                    f"binding_count {b} at byte {at}{self._packed_note(view, at)}; the binding "
                    f"array at 0x{array:x} plus {b} x {self.element.size} bytes stays below "
                    f"2^{mask.bit_length()} here and ends past the buffer; for an array at or above "
                    f"0x{wraps_at:x}, as IREE's VM stack lies, the sum wraps, the check passes, and "
                    + ("IREE's dispatch refuses the count: RESOURCE_EXHAUSTED, too many bindings)"
                       if b > MAX_DISPATCH_BINDINGS else "IREE goes on with that count)")))
            raise signature_mismatch()
        return DispatchArgs(values, c, start, start + 4, b, at, array - address, view, address, self)

    @property
    def _shim_name(self) -> str:
        return "pre-fix dispatch shim" if self.form == "pre-fix" else "dispatch shim"

    def _packed_note(self, view: memoryview, offset: int, size: int = 4, why: str = "") -> str:
        what = self.packed_as(view, offset, size)
        notes = [why] * bool(why) + [f"where the VM packed {what}"] * bool(what)
        return f" ({', '.join(notes)})" if notes else ""

    def packed_as(self, view: memoryview, offset: int, size: int = 4) -> str:
        """See DispatchArgs.packed_as."""
        n, p = len(view), self.packed_prefix
        if p + 4 > n:
            return ""
        c = _I32.unpack_from(view, p)[0]
        b_at = p + 4 + 4 * c
        if not 0 <= c <= cconv.MAX_SPAN_COUNT or b_at + 4 > n:
            return ""
        b = _I32.unpack_from(view, b_at)[0]
        if not 0 <= b <= cconv.MAX_SPAN_COUNT:
            return ""
        lay = cconv.layout(self.signature.arguments, self.machine.target, (c, b))
        if lay.size > n:
            return ""
        end = offset + size
        found = []
        for k in lay.counts:
            if k.offset < end and offset < k.end:
                found.append("the constant count" if k.span == 0 else "the binding count")
        first = None  # the fragment index of an element's first value
        for v in lay.values:
            if v.offset >= end:
                break
            if v.span == 1 and first is None:
                first = v.index
            if offset < v.end:
                if v.span is None:
                    name = self.VALUE_NAMES[v.index] if v.index < len(self.VALUE_NAMES) else f"value {v.index}"
                elif v.span == 0:
                    name = f"constants[{v.element}]"
                else:
                    name = f"bindings[{v.element}].{self.members[v.index - first]}"
                if v.char == "r":  # iree_vm_ref_t: the object's pointer, then its type (a descriptor's address)
                    ps = self.machine.pointer_size
                    words = [w for w, lo in (("pointer", v.offset), ("type", v.offset + ps))
                             if lo < end and offset < lo + ps]
                    name += f"'s {' and '.join(words)} word{'s' * (len(words) > 1)}, an address"
                found.append(name)
        if not found:
            return "padding"
        return " and ".join(dict.fromkeys(found))

    def reading(self, args: DispatchArgs) -> str:
        """How the shim came by its counts, for messages."""
        why = f"sizeof({self.fixed_struct})" if self.form == "pre-fix" else ""
        return (f"the {self._shim_name} reads constant_count {args.constant_count} at byte "
                f"{args.constant_count_at}{self._packed_note(args.view, args.constant_count_at, why=why)} "
                f"and binding_count {args.binding_count} at byte {args.binding_count_at}"
                f"{self._packed_note(args.view, args.binding_count_at)}")

    def decode_arguments(self, heap: Any, flags: int, args: ByteSpan) -> list[Any] | None:
        if not args.data:
            raise self._null_arguments()
        return [self.read(heap.view(args.data, args.length), args.data)]

    def check_results(self, heap: Any, rets: ByteSpan) -> memoryview:
        if rets.length != 0:  # rets_storage.data_length > 0 (an unsigned size)
            raise signature_mismatch()
        return memoryview(b"")

    def _null_arguments(self) -> IreeFaultError:
        return IreeFaultError(f"{self.WHERE}: a NULL argument span: the {self._shim_name} copies "
                              f"sizeof({self.fixed_struct}) bytes from it without a check (its own "
                              "runtime faults there)")

    def __call__(self, ctx: CallContext, flags: int, args: ByteSpan, rets: ByteSpan,
                 function: NativeFunction) -> None:
        data, length = args
        if not data:
            raise self._null_arguments()
        read = self.read(ctx.heap.view(data, length), data)
        if rets[1] != 0:
            raise signature_mismatch()
        result = function(ctx, read)
        if result is not None and result != () and result != []:  # void results, as the generic shims take them
            raise MarshalError(f"native function {self.signature.text!r}: a dispatch returns nothing, the "
                               f"function returned {result!r}")


@dataclass
class LoadedExecutable:
    # (the full hal module loads vmvx ones too)
    library: "library_loader.KernelLibrary | python_executable.PythonLibrary | VmvxLibrary"
    # export name -> ordinal, built on the first lookup (a loaded library's export table is fixed)
    ordinals: dict[str, int] | None = None
    # per ordinal, the (constant count, binding count) its attrs declare: dispatch's last check
    needs: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        self.needs = tuple((e.constant_count, e.binding_count) for e in self.library.exports)


def no_loader_status(fmt: str) -> StatusError:
    return StatusError(StatusCode.NOT_FOUND,
                       f"no executable loader registered for the given executable format '{fmt}'")


class HalLoaderModule:
    """hal_loader over a heap's VM buffers and its hal.executable type; the processor data is what
    kernels get in environment_v0."""

    def __init__(self, vm_buffers: BufferType, executables: "ResourceType[LoadedExecutable]",
                 cpu_data: list[int], *, legacy: bool = False, runners: KernelRunners | None = None) -> None:
        self.heap = vm_buffers.heap
        self.cpu_data = cpu_data  # the runtime's words (shared: a change shows in both modules)
        self.runners = runners  # the runtime's emulators for foreign kernels (None: host kernels only)
        self._vm_buffers = vm_buffers
        self.legacy = legacy
        targets: dict[str, Callable[..., Any]] = {
            "executable.dispatch": self._dispatch,
            "executable.load": self._load,
            "executable.lookup.function": self.lookup_function,
            "executable.query_support": self._query_support,
        }
        form = "pre-fix" if legacy else "fixed"
        exports = [Export(e.name, e.cconv, targets[e.name], form=form,
                          shim=DispatchShim if e.cconv == HL.DISPATCH_CCONV else None) for e in HL.EXPORTS]
        self.module = NativeModule(self.heap, HL.IREE_HAL_LOADER_MODULE_NAME, exports,
                                   version=HL.IREE_HAL_LOADER_MODULE_VERSION_LATEST)
        self.machine = self.heap.machine
        self._executables = executables
        # The states of the dispatches, in the heap's memory: one workgroup_state, and one
        # dispatch_state block per (constant count, binding count, constants in the argument
        # buffer), reused.
        L = self.machine.view(DispatchLayout)
        self._blocks = [self.heap.malloc_internal(L.wg_size + L.wg_align, tag="workgroup_state_v0")]
        self._workgroup_address = -(-self._blocks[0] // L.wg_align) * L.wg_align
        raw, off = self.heap.cell(self._workgroup_address, L.wg_size)
        write_workgroup_state(self.machine, raw, off, 0)
        self._states: dict[tuple[int, int, bool], DispatchState] = {}
        # ELF formats of another architecture this runtime answered "unsupported" for: the formats
        # a module would need another --target for (Program says which).
        self.foreign_formats: dict[str, str] = {}

    def close(self) -> None:
        self.module.close()
        if not self.heap.closed:
            for block in self._blocks:
                self.heap.free_internal(block)
        self._blocks = []
        self._states.clear()

    def _dispatch_state(self, key: tuple[int, int, bool]) -> DispatchState:
        size = self.machine.view(DispatchLayout).block_size(key[0], key[1])
        address = self.heap.malloc_internal(size, tag=f"dispatch_state_v0 ({key[0]} constants, {key[1]} bindings)")
        self._blocks.append(address)
        raw, off = self.heap.cell(address, size)
        state = self._states[key] = DispatchState(self.machine, key[0], key[1], raw, off, address)
        return state

    def _supports(self, fmt: str) -> bool:
        """The loaders of this runtime: IREE's ELF loaders (for the target's architecture) and
        ireeabi's Python kernels (any target)."""
        return fmt == python_executable.FORMAT or library_loader.query_support(fmt, self.machine)

    def _query_support(self, ctx: CallContext, format: Ref) -> int:
        fmt = self._vm_buffers.text(format)
        if self._supports(fmt):
            return 1
        arch = library_loader.foreign_arch(fmt, self.machine)
        if arch is not None:
            self.foreign_formats[fmt] = arch
        return 0

    def _load(self, ctx: CallContext, format: Ref, data: Ref, constants: Ref) -> Ref:
        vmb = self._vm_buffers
        fmt = self._vm_buffers.text(format)
        dbuf = vmb.check_deref(data)
        ptr, n = vmb.map_ro(dbuf, 0, vmb.length(dbuf), 1)
        consts = executable_constants(vmb, constants, " (not a multiple of 4)")
        if not self._supports(fmt):  # no loader takes the format: none is tried
            raise no_loader_status(fmt)
        library: "library_loader.KernelLibrary | python_executable.PythonLibrary"
        try:
            if fmt == python_executable.FORMAT:
                library = python_executable.load(self.heap.read(ptr, n), tuple(consts))
            else:
                library = library_loader.load_library(fmt, self.heap.read(ptr, n), consts, self.cpu_data,
                                                      self.machine, self.runners)
        except UnresolvedImportError as e:
            raise StatusError(StatusCode.UNAVAILABLE, "no import provider registered for resolving required "
                              "executable imports") from e
        except ExecutableError as e:
            # IREE moves on to the next loader on NOT_FOUND / CANCELLED and, none left, reports the
            # format (the python loader is ireeabi's own and keeps its message).
            if e.code in (StatusCode.NOT_FOUND, StatusCode.CANCELLED) and fmt != python_executable.FORMAT:
                raise no_loader_status(fmt) from e
            raise
        return self._executables.move_ref(self._executables.create(LoadedExecutable(library),
                                                                       tag=f"hal.executable {library.name}"))

    def lookup_function(self, ctx: CallContext, executable: Ref, name: Ref) -> int:
        _, exe = self._executables.deref(executable)
        wanted = self._vm_buffers.text(name)  # read from memory every call
        if "\ufffd" in wanted:  # maybe invalid UTF-8, which text() replaced: compare the exact bytes
            return self._lookup_bytes(exe, name)
        ordinals = exe.ordinals
        if ordinals is None:
            ordinals = exe.ordinals = {}
            for e in reversed(exe.library.exports):  # the first of duplicate names wins, as the scan
                if "\ufffd" not in e.name:  # a replaced name matches only through _lookup_bytes
                    ordinals[e.name] = e.ordinal
        ordinal = ordinals.get(wanted)
        if ordinal is not None:
            return ordinal
        return self._not_found(exe, wanted)

    def _lookup_bytes(self, exe: LoadedExecutable, name: Ref) -> int:
        vmb = self._vm_buffers
        buf = vmb.check_deref(name)
        wanted = self.heap.read(vmb.data(buf), vmb.length(buf))
        for e in exe.library.exports:
            if e.name_bytes == wanted:
                return e.ordinal
        return self._not_found(exe, wanted.decode("utf-8", "replace"))

    @staticmethod
    def _not_found(exe: LoadedExecutable, wanted: str) -> int:
        if not exe.library.has_names:  # only a library without exports may have no names table
            raise StatusError(StatusCode.UNAVAILABLE, "function names not available in library")
        raise StatusError(StatusCode.NOT_FOUND, f"export '{wanted}' not found in library")

    def _dispatch(self, ctx: CallContext, args: DispatchArgs) -> None:
        """iree_hal_loader_module_executable_dispatch on what the shim read (module.c)."""
        executable, function_id = args.values[0], args.values[1]
        _, exe = self._executables.deref(executable)
        library = exe.library
        fid = function_id & 0xFFFFFFFFFFFFFFFF
        n_exports = len(library.exports)
        if fid > _U32 or fid >= n_exports:
            raise StatusError(StatusCode.OUT_OF_RANGE, f"function id {fid} out of range (count: {n_exports})")
        b = args.binding_count
        if b > MAX_DISPATCH_BINDINGS:  # a signed compare: a negative count passes
            raise StatusError(StatusCode.RESOURCE_EXHAUSTED, "too many bindings")
        shim = args.shim
        if b < 0:
            raise IreeFaultError(
                f"{shim.WHERE}: {shim.reading(args)}; its bounds check passes (binding_count x "
                f"sizeof({shim.element_struct}) wraps below the array), and the dispatch then allocas "
                f"binding_count x sizeof(void*) bytes (a negative size) and reads bindings[0], [1], ... "
                f"from byte {args.bindings_at} on for (iree_host_size_t){b} bindings: undefined in IREE "
                "(its stack pointer and the loop run past the buffer; its own runtime crashes there)"
                + _ADDRESS_NOTE * ("an address" in shim.packed_as(args.view, args.binding_count_at)))
        map_ro_ref = self._vm_buffers.map_ro_ref
        ptrs, lengths = [], []
        for ref, offset, length in args.bindings():
            p, n = map_ro_ref(ref, offset, length, 1)  # = map_ro(check_deref(ref), ...)
            ptrs.append(p)
            lengths.append(n)
        need_constants, need_bindings = exe.needs[fid]
        # IREE hands the kernel these counts without comparing them with the export's (only the
        # inline command buffer does): fewer than it reads and the kernel reads past the arrays.
        if b < need_bindings:
            raise IreeFaultError(
                f"{shim.WHERE}: {shim.reading(args)}; IREE hands kernel {library.exports[fid].name} {b} "
                f"of the {need_bindings} bindings it reads: the kernel loads binding_ptrs"
                f"[{b}{f'..{need_bindings - 1}' if need_bindings - b > 1 else ''}] from IREE's stack, past "
                "the arrays IREE allocas, and dereferences them: IREE's own runtime faults there")
        c16 = args.constant_count & 0xFFFF  # dispatch_state_v0.constant_count is a uint16_t
        end = args.constants_at + 4 * need_constants
        if end > len(args.view):
            raise IreeFaultError(
                f"{shim.WHERE}: {shim.reading(args)}; IREE then hands kernel {library.exports[fid].name} "
                f"{c16} constant(s) (dispatch_state.constant_count, a uint16) where it reads "
                f"{need_constants}: the kernel reads constants[{c16}]"
                f"{f'..[{need_constants - 1}]' if need_constants - c16 > 1 else ''} from bytes up to "
                f"{end - 1}, past the end of the {len(args.view)}-byte argument buffer: memory that is "
                "not the call's (IREE's own runtime reads on, unchecked, or faults)")
        # module.c hands the kernel a pointer into the argument buffer (args->constants) and the count
        # it read; the kernel reads as many constants as it was compiled for, unchecked. Fewer handed
        # than read: the kernel reads the buffer's next words, whatever the VM packed there, as IREE's
        # runtime does (the state points into the buffer); otherwise the state holds a copy.
        short = c16 < need_constants
        key = (c16 if short else min(c16, (len(args.view) - args.constants_at) // 4), len(ptrs), short)
        state = self._states.get(key)
        if state is None:
            state = self._dispatch_state(key)
        if short:
            state.point_constants(args.address + args.constants_at)
            constants: list[int] = []
        else:
            constants = args.constants(key[0])
        wx, wy, wz = args.values[2:5]
        counts = (wx & _U32, wy & _U32, wz & 0xFFFF)
        state.pack(counts, constants, ptrs, lengths)  # workgroup size 1x1x1
        issue_dispatch(library, fid, state.address, self._workgroup_address, counts, self.heap, ptrs, lengths)


def executable_constants(vmb: BufferType, constants: Ref, detail: str = "") -> list[int]:
    """The u32 words of an executable's optional constants vm.buffer (none for a null or non-buffer
    ref), as both modules' executable creation reads them; a length not a multiple of 4 is
    INVALID_ARGUMENT (`detail` ends the message: the loader module says why, module.c does not)."""
    if constants.type == TYPE_NULL or not vmb.ref_type.isa(constants):
        return []
    cbuf = vmb.check_deref(constants)
    clen = vmb.length(cbuf)
    if clen % 4:
        raise StatusError(StatusCode.INVALID_ARGUMENT, "constant buffer data must contain 4-byte elements "
                          f"but data length is {clen}{detail}")
    cptr, _ = vmb.map_ro(cbuf, 0, clen, 1)
    raw = vmb.heap.read(cptr, clen)
    return [int.from_bytes(raw[i:i + 4], "little") for i in range(0, clen, 4)]


__all__ = ["DispatchArgs", "DispatchShim", "HalLoaderModule", "LoadedExecutable", "MAX_DISPATCH_BINDINGS"]
