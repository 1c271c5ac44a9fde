"""A tracked heap in an emulated address space, with the checks of a memory sanitizer.

A `Heap` runs on one data model (`target`, default: the host): its `machine` gives every size and
codec, and its `space` (`base.address_space`) is a window of that target's addresses backed by one
host mapping. Every byte the VM model touches lives in a `Heap` allocation there: real host memory,
which struct codecs and numpy read in place, and a view of it (memoryview, numpy) keeps the memory
alive even after the heap frees it or closes: no view can make Python crash. On the host target an
address is the real host address, so C function pointers and kernels can use it; on any other
target it is what a pointer of that target holds (4 bytes on ILP32). Each allocation records its
address, size and the Python stack that made it (`base.allocation`).

Bytes produced by anyone (packed argument buffers, refs in memory, fuzz input) may hold forged
pointers, so nothing reads or writes through a pointer without `check_range` first: a range outside
every live allocation raises `HeapError` naming the address, as do a double free, a free of an unknown
or interior pointer, and an aligned free of a pointer the aligned allocator did not return.

Freed blocks are poisoned and sit in a quarantine so that a double free is recognised as such and a
stale pointer is reported as pointing into freed memory. The quarantine remembers the last
`quarantine` freed blocks (enough to name a double free); of those, the memory itself is kept (never
reused) only for blocks of at most `quarantine_large` bytes, up to `quarantine_bytes` in all: larger
or older blocks go back to the address space's free lists right after poisoning, so a stale pointer
into them may later land in a new block (a double free of them is still reported while they are
remembered). On a heap whose kernels run in an emulated CPU, the memory of the last GUARD_HELD
guarded blocks only is kept (each guard page is a region of the emulator's, and regions cost in
proportion to their number); older ones go to the pool of guarded chunks. Every block has
unaddressable red zones on both sides.

Blocks up to a few KiB (with red zones) live in size-class slabs (`base.address_space`), so the block
holding an address is found by arithmetic on its chunk; larger blocks by bisecting their sorted
starts. A check looks in a memo first: every live block's start, and each interior address (a
counter or descriptor at a fixed offset of its object) found once by either way. A freed block's end
becomes -1, so its memo entries fail every range test. Ref counters are read and written through
the arena seen as native int32s (`Heap.int32_cell`). The accessors are `base.checked_access`'s
`CheckedAccess`, the heap's base class.

Fills are bounded as AddressSanitizer bounds them (its max_malloc_fill_size, 4096): a MALLOC
(uninitialized) block shows UNINITIALIZED_BYTE in its first `MAX_FILL` bytes only, the rest reads as
zero; and a freed block larger than `quarantine_large`, whose memory goes straight back to the free
lists, is poisoned in its first `MAX_FILL` bytes only. Blocks that stay quarantined (and every
block of at most `quarantine_large` bytes) are poisoned whole; CALLOC (zero=True) memory is all zero.
Filling megabytes that nobody may read again would cost more than the rest of a call.
"""
from __future__ import annotations

import bisect
import collections
import ctypes
import os
import sys
from contextlib import contextmanager
from typing import Any, Iterator

from ..abi.errors import IreeAbiError
from ..abi.targets import Target
from . import callbacks
from .address_space import GRANULE, PAGE, SLAB_CHUNK_MAX, AddressSpace, AddressSpaceError, window_limit
from .allocation import Allocation, Frame, capture_stack, leak_report
from .checked_access import SMALL_FILL, SPANS, ZEROS, CheckedAccess, span
from .machine import Machine, machine as _machine
from .reference_path import reference_forced
from .status import StatusCode, StatusError, StatusTable

UNINITIALIZED_BYTE = 0xCD  # MALLOC (not CALLOC) memory: visibly not zero
FREED_BYTE = 0xDD  # poison written over freed blocks


def host_memory() -> int:
    """The host's physical memory in bytes (what any program on it can hold at most)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # no sysconf: a 64-bit host's practical bound
        return 1 << 40


def available_memory() -> int:
    """Bytes the host can give a new allocation now without swapping or the OOM killer
    (/proc/meminfo's MemAvailable; the physical memory where that is unknown)."""
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return host_memory()


def default_limit(machine: Machine) -> int:
    """Live bytes a heap of `machine` allows by default: the host's physical memory, bounded by the
    addresses the target's pointers reach (a 32-bit target's window is below 4 GiB). Only past it do
    allocations fail with RESOURCE_EXHAUSTED."""
    return min(host_memory(), window_limit(machine.pointer_size, machine.is_host))
MAX_FILL = 4096  # ASan's max_malloc_fill_size: bytes of a large block that fills write
REDZONE = 32  # unaddressable bytes around every block
QUARANTINE_BYTES = 16 << 20  # freed memory kept unreusable, in all
QUARANTINE_LARGE = 1 << 20  # freed blocks larger than this are released right after poisoning
MEMO_INTERIOR = 4096  # interior addresses the checked-address memo keeps (more with more live blocks)
GUARD_POOL = 4  # freed guarded chunks kept per chunk size with their guard pages still protected
GUARD_HELD = 16  # guarded blocks whose memory a quarantine holds, on a heap of emulated kernels


# The fill patterns' first SMALL_FILL bytes (a pack of a span of them poisons or marks a block).
_POISON = bytes([FREED_BYTE]) * SMALL_FILL
_UNINIT = bytes([UNINITIALIZED_BYTE]) * SMALL_FILL
_memset = ctypes.memset
_memmove = ctypes.memmove
_bisect_left = bisect.bisect_left
_bisect_right = bisect.bisect_right
MAX_RESERVATION = 1 << 40  # address space reserved per heap at most, whatever its limit


class HeapError(IreeAbiError):
    """A memory error: bad free, out-of-bounds or freed-memory access. `address` is the offender."""

    def __init__(self, message: str, address: int | None = None) -> None:
        self.address = address
        super().__init__(message)


class LeakError(HeapError):
    """Allocations (or failing statuses) still live when a tracked heap closed. The message starts
    each stack at its first frame outside pytest and pluggy; `full_report` is the same report with
    the whole captured stacks (each leak's `stack` holds them too)."""

    def __init__(self, message: str, leaks: "list[Allocation]", statuses: list[str]) -> None:
        self.leaks = leaks
        self.statuses = statuses
        super().__init__(message, leaks[0].address if leaks else None)

    @property
    def full_report(self) -> str:
        return leak_report(self.leaks, self.statuses, full=True)


class _Guarding:
    """`Heap.guarded_allocations`' context (a class, not a generator: every HAL buffer allocation
    enters one)."""

    __slots__ = ("heap", "before")

    def __init__(self, heap: "Heap") -> None:
        self.heap = heap
        self.before = False

    def __enter__(self) -> None:
        heap = self.heap
        self.before = heap.guarding
        heap.guarding = heap.native_kernels or heap.emulated_kernels

    def __exit__(self, *exc: object) -> None:
        self.heap.guarding = self.before


# Stands for "no block" in Heap._last: its range [1, 0) holds no address.
_NOWHERE = Allocation(1, 0, 0, "", (), None, True)
_NOWHERE.end = 0


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


class Heap(CheckedAccess):
    """Tracked memory of one data model. Addresses are plain ints of the target's address space;
    see the module docstring for the checks. `target` is a data model name, Target or Machine
    (default: the host); `limit` caps the live bytes (RESOURCE_EXHAUSTED past it; by default
    `default_limit`: the host's memory within the target's address window)."""

    # Slots: every access goes through a few of these, and CPython's attribute fast path for plain
    # instances stops at 30 attributes.
    __slots__ = ("machine", "target", "name", "limit", "capture_stacks", "strict_aligned", "malloc_alignment",
                 "pointer_size", "_word_size", "_word_mask", "_word_unpack", "_word_pack", "space", "_raw",
                 "_base", "_take_chunk", "_give_chunk", "_host_delta", "functions", "live_bytes", "guarding", "native_kernels",
                 "emulated_kernels",
                 "closed", "_live", "_known", "int32s", "_starts", "_blocks", "_slab_blocks",
                 "_freed", "_quarantine", "_quarantine_max", "_held", "_held_bytes", "_held_max", "_held_large",
                 "_held_guards",
                 "_aligned", "known_types", "_last", "_serial",
                 "stack_lo", "stack_hi", "_stack_block", "stack_top", "_stack_raw", "_stack_base",
                 "_scratch_frames", "_guard_pool", "direct_allocator", "reference", "allocator_value", "statuses",
                 "ref_events", "empty_block", "__weakref__")

    def __init__(self, *, target: "Machine | Target | str | None" = None, limit: int | None = None,
                 capture_stacks: bool = True, strict_aligned: bool = True, quarantine: int = 1024,
                 scratch_size: int = 64 << 10, quarantine_bytes: int = QUARANTINE_BYTES,
                 quarantine_large: int = QUARANTINE_LARGE, name: str = "heap") -> None:
        self.machine: Machine = _machine(target)
        self.target: Target = self.machine.target
        self.name = name
        if limit is None:
            limit = default_limit(self.machine)
        elif not _is_int(limit) or limit <= 0:
            raise IreeAbiError(f"heap limit must be a positive number of bytes, got {limit!r}")
        # A trace for differential tests: ("retain" | "release", ptr, type word) appended for each
        # counted reference taken or dropped on this heap; None in use.
        self.ref_events: list | None = None
        # The VM's shared zero-byte block for void result buffers (vm/call.py), made on first use.
        self.empty_block: int | None = None
        self.limit = limit
        self.capture_stacks = capture_stacks
        # strict: free_aligned of a pointer malloc_aligned did not return is a HeapError (what a
        # sanitizer reports); lenient: IREE's arithmetic runs on it, so its effects can be observed.
        self.strict_aligned = strict_aligned
        self.malloc_alignment = self.machine.malloc_alignment
        m = self.machine
        self.pointer_size = self._word_size = m.pointer_size
        self._word_mask = m.word_mask
        self._word_unpack, self._word_pack = m.word.unpack_from, m.word.pack_into
        # One arena: the limit with room for red zones, fragmentation and the quarantine, within what
        # the target's pointers reach.
        reserve = min(max(limit + limit // 2, 64 << 20) + scratch_size, MAX_RESERVATION,
                      window_limit(m.pointer_size, m.is_host))
        self.space = AddressSpace(reserve, pointer_size=m.pointer_size, host=m.is_host,
                                  name=f"{name} ({m.name})")
        self._raw = self.space.bytes
        # The arena as native int32s: a 4-aligned counter at arena offset `off` is
        # `int32s[off >> 2]`, read and written without a codec. Native is the target's order only
        # on a little-endian host (every Machine is little-endian).
        if sys.byteorder != "little":
            raise HeapError(f"{name}: the heap reads target memory with native views, which needs a "
                            f"little-endian host; this one is {sys.byteorder}-endian")
        self.int32s = self._raw.cast("i")
        self._base = self.space.base
        self._take_chunk, self._give_chunk = self.space.allocate, self.space.release
        self._host_delta = self.space.host_base - self.space.base
        # The reference path everywhere on this heap (IREEABI_REFERENCE=1, read here once, or a
        # reference Context on it: `force_reference`). Otherwise `direct_allocator` is the libc
        # allocator value base.allocator made over this heap (None before), whose commands may skip
        # the function pointer and the scratch words: allocator.py gives both paths the same rule
        # and falls back to the layered one for every failure.
        self.reference = reference_forced()
        self.direct_allocator: Any = None
        self.allocator_value: Any = None  # base.allocator.heap_allocator's value, made once
        # Function pointers stored in this heap's memory: real C pointers on the host (called
        # through C from Python on the reference path), handles in the address space's code range
        # elsewhere.
        self.functions: callbacks.FunctionTable = (
            callbacks.HostFunctions(self.reference) if m.is_host
            else callbacks.HandleFunctions(self.space.code_lo, self.space.code_hi))
        # Failing statuses made on this heap that crossed a C function pointer (allocator ctl
        # functions): taken once, or reported as leaks by tracked_heap.
        self.statuses = StatusTable()
        self.live_bytes = 0
        self.guarding = False  # see guarded_allocations
        # Host machine code (kernels through the C helper) may touch this heap's memory: only the
        # host's, and not when the runtime runs its kernels in an emulator (KernelRunners says so).
        self.native_kernels = self.machine.is_host
        # Machine code in an emulated CPU may touch it (the runtime's KernelEmulator says so): its
        # guard pages are the emulator's alone where no native code runs (see guarded_allocations).
        self.emulated_kernels = False
        self.closed = False
        self._live: dict[int, Allocation] = {}
        # The checked-address memo: every live block's start, and each interior address a check
        # found before (counters and descriptors at fixed offsets of their objects), so a repeated
        # check is one dict lookup. Entries of freed blocks fail the range test (a released block's
        # end is -1) and are overwritten or dropped when the memo is rebuilt.
        self._known: dict[int, Allocation] = {}
        # Blocks in slab chunks (all small ones) are found by the chunk holding an address: arena
        # offset of the chunk -> its block. The others (large, guarded, the scratch stack) by
        # bisection: their addresses, sorted, and the block at each.
        self._slab_blocks: dict[int, Allocation] = {}
        self._starts: list[int] = []
        self._blocks: list[Allocation] = []
        self._freed: dict[int, Allocation] = {}
        self._quarantine: collections.deque[Allocation] = collections.deque()
        self._quarantine_max = quarantine
        self._held: collections.deque[Allocation] = collections.deque()  # quarantined, memory kept
        self._held_bytes = 0
        self._held_max = quarantine_bytes
        self._held_large = quarantine_large
        self._held_guards: collections.deque[Allocation] = collections.deque()  # see GUARD_HELD
        self._aligned: dict[int, int] = {}  # pointer malloc_aligned returned -> its base allocation
        self.known_types: dict[int, int] = {}  # ref type words registered on this heap -> count
        # The live block check_range found last (never a freed one: _release resets it).
        self._last: Allocation = _NOWHERE
        self._serial = 0
        self.stack_lo, self.stack_hi = 1, 0  # empty until the scratch block exists
        self._stack_block = self._allocate(scratch_size, True, self.malloc_alignment, "scratch stack",
                                           internal=True, skip=1)
        self.stack_top = self._stack_block.address
        self._stack_raw = self._stack_block.raw
        self._stack_base = self._stack_block.base
        # The scratch block's bounds, tested before any bisection (most accesses are argument frames).
        # stack_top (the next free byte) and stack_hi are public: the call sites scratch_source
        # writes push and pop frames on them.
        self.stack_lo, self.stack_hi = self._stack_block.address, self._stack_block.end
        self._scratch_frames: list[int] = []
        # Chunk size -> chunks of freed guarded blocks, their guard pages still protected: the next
        # guarded block of that size reuses one without two protection changes each way.
        self._guard_pool: dict[int, list[int]] = {}

    def host_address(self, address: int) -> int:
        """The host address of `address` (itself on the host target): only for C code that runs on
        the host's data model (kernels), after a check of the range."""
        return address + self._host_delta

    # -- allocation ------------------------------------------------------------------------------

    def malloc(self, size: int, *, zero: bool = True, align: int | None = None, tag: str = "",
               guard: bool | None = None) -> int:
        """A new block of `size` bytes (zeroed, or filled with UNINITIALIZED_BYTE); its address.
        `align` defaults to the target's malloc alignment.

        `guard`: the block ends where an inaccessible page begins (as close as its alignment allows)
        and its chunk starts with another one, so machine code running past either end (a kernel
        walking past its binding, native or in an emulated CPU) faults at once instead of landing in
        a neighbouring block. The pages are the host's (mprotect) where native kernels run, else
        the emulators' only (see `guarded_allocations`). It costs a chunk of whole pages, at least
        68 KiB of address space (untouched pages take no memory). Where the host has no room for
        more protected ranges (Linux's map count), the block is placed as an ordinary one. None
        (the default): as the heap's `guarding` says (see `guarded_allocations`).

        Size 0 gives a unique address, as glibc's malloc(0) does. Past the heap's limit (or when
        the address space has no room) this raises StatusError(RESOURCE_EXHAUSTED), which allocator
        control functions pass on as a status.
        """
        return self._allocate(size, zero, self.malloc_alignment if align is None else align, tag,
                              skip=1, guard=guard).address

    def malloc_internal(self, size: int, *, tag: str = "") -> int:
        """A zeroed block owned by the heap itself: never a leak, never freed by callers."""
        return self._allocate(size, True, self.malloc_alignment, tag, internal=True, skip=1).address

    def free_internal(self, address: int) -> None:
        """Free a block `malloc_internal` returned (a runtime component giving back its own state)."""
        a = self._live.get(address)
        if a is None or not a.internal or a is self._stack_block:
            raise HeapError(f"{self.name}: free_internal of 0x{address:x}, which malloc_internal did not return",
                            address)
        self._release(a, ())

    def _allocate(self, size: int, zero: bool, align: int, tag: str, *, internal: bool = False,
                  skip: int = 0, guard: bool | None = False) -> Allocation:
        if self.closed:
            self._check_open()
        if (type(size) is not int and not _is_int(size)) or size < 0:
            raise HeapError(f"{self.name}: allocation size must be a non-negative int, got {size!r}")
        if (type(align) is not int and not _is_int(align)) or align <= 0 or align & (align - 1):
            raise HeapError(f"{self.name}: alignment must be a power of two, got {align!r}")
        if not internal and self.live_bytes + size > self.limit:
            raise StatusError(StatusCode.RESOURCE_EXHAUSTED,
                              f"{self.name}: {size} bytes requested with {self.live_bytes} of "
                              f"{self.limit} in use")
        # Red zones on both sides belong to no allocation, so an access just outside a block is
        # always reported.
        base = self._base
        if guard is None:
            guard = self.guarding
        try:
            placed = self._guarded_chunk(size, align) if guard else None
            if placed is not None:
                chunk, chunk_size, fresh, address = placed
            else:
                guard = False
                chunk, chunk_size, fresh = self._take_chunk(
                    REDZONE + (size or 1) + (align - GRANULE if align > GRANULE else 0) + REDZONE)
                address = (base + chunk + REDZONE + align - 1) & -align  # align_up (power of two)
        except AddressSpaceError as e:
            raise StatusError(StatusCode.RESOURCE_EXHAUSTED, f"{self.name}: {size} bytes requested: {e}") \
                from None
        raw = self._raw
        if size and not fresh:  # a reused chunk holds old bytes: the block starts zeroed, as new memory
            if size <= SMALL_FILL:
                (SPANS.get(size) or span(size)).pack_into(raw, address - base, ZEROS)
            else:
                _memset(address + self._host_delta, 0, size)
        if not zero and size:
            if size <= SMALL_FILL:
                (SPANS.get(size) or span(size)).pack_into(raw, address - base, _UNINIT)
            else:  # ASan's max_malloc_fill_size: only the first MAX_FILL bytes show the pattern
                _memset(address + self._host_delta, UNINITIALIZED_BYTE, size if size <= MAX_FILL else MAX_FILL)
        self._serial += 1
        stack = capture_stack(skip + 1) if self.capture_stacks else ()
        a = Allocation(address, size, self._serial, tag, stack, raw, internal, base, chunk, chunk_size)
        if guard:
            a.guarded = True
        self._live[address] = a
        self._known[address] = a
        if not internal:  # the caller writes into it next: the first check finds it at once
            self._last = a
        if chunk_size <= SLAB_CHUNK_MAX:
            self._slab_blocks[chunk] = a
        else:
            starts = self._starts
            if not starts or address > starts[-1]:
                starts.append(address)
                self._blocks.append(a)
            else:
                i = _bisect_left(starts, address)
                starts.insert(i, address)
                self._blocks.insert(i, a)
        if not internal:
            self.live_bytes += size
        return a

    def _guarded_chunk(self, size: int, align: int) -> tuple[int, int, bool, int] | None:
        """(chunk, chunk size, fresh, block address) for malloc(guard=True): whole pages, the first
        and the last made inaccessible, the block aligned down against the last one. None where the
        host refuses the protection."""
        space = self.space
        need = PAGE + REDZONE + (size or 1) + align + PAGE
        pooled = self._guard_pool.get(space.pages_chunk_size(need))
        if pooled:
            chunk = pooled.pop()
            chunk_size = space.pages_chunk_size(need)
            back = chunk + chunk_size - PAGE
            return chunk, chunk_size, False, (self._base + back - (size or 1)) & -align
        chunk, chunk_size, fresh = space.allocate_pages(need)
        back = chunk + chunk_size - PAGE
        # Emulator-only guards where kernels run emulated and none natively (the host's page tables
        # untouched: cheaper, and no host mapping split); else the host's (wasmtime's compiled code
        # and C code reach this memory natively).
        host = self.native_kernels or not self.emulated_kernels
        try:
            space.protect(chunk, PAGE, False, host)
            space.protect(back, PAGE, False, host)
        except AddressSpaceError:
            space.protect(chunk, PAGE, True)
            space.protect(back, PAGE, True)
            space.release(chunk, chunk_size)
            return None
        return chunk, chunk_size, fresh, (self._base + back - (size or 1)) & -align

    def guarded_allocations(self) -> "_Guarding":
        """Within the block, mallocs that do not say otherwise (those an allocator's ctl function
        makes for IREE's buffer code included) are guarded, on a heap kernels' machine code runs on:
        natively (`native_kernels`: the host's, unless its kernels are emulated), where the guard
        pages are the host's own (`mprotect`), or in an emulated CPU (`emulated_kernels`), where
        they are the emulator's only when no kernel runs natively (the address space records them
        for its listeners; no host page is protected). Elsewhere (wasm32, whose guard pages
        wasmtime's code would need from the host; interpreted kernels) blocks stay ordinary."""
        return _Guarding(self)

    def free(self, address: int) -> None:
        """Free a block malloc returned; NULL is a no-op as in C."""
        if self.closed:
            self._check_open()
        if type(address) is not int and not _is_int(address):
            raise HeapError(f"{self.name}: free of a non-integer pointer {address!r}")
        if address == 0:
            return
        a = self._live.get(address)
        if a is None or a.internal:
            raise HeapError(self._bad_free_message(address), address)
        self._release(a, capture_stack(1) if self.capture_stacks else ())

    def realloc(self, address: int, size: int, *, tag: str = "") -> int:
        """realloc: a new block with the old contents (NULL acts as malloc); the old block is freed."""
        if address == 0:
            return self._allocate(size, False, self.malloc_alignment, tag, skip=1).address
        old = self._live.get(address)
        if old is None or old.internal:
            raise HeapError(self._bad_free_message(address, "realloc"), address)
        new = self._allocate(size, False, self.malloc_alignment, tag or old.tag, skip=1)
        n = min(size, old.size)
        if n:
            _memmove(new.address + self._host_delta, old.address + self._host_delta, n)
        self._release(old, new.stack)
        return new.address

    def _release(self, a: Allocation, stack: tuple[Frame, ...]) -> None:
        if a is self._last:
            self._last = _NOWHERE
        address = a.address
        del self._live[address]
        del self._known[address]
        a.end = -1  # memo entries of the block fail every range test from now on
        if a.chunk_size <= SLAB_CHUNK_MAX:
            del self._slab_blocks[a.chunk]
        else:
            starts = self._starts
            if starts[-1] == address:
                starts.pop()
                self._blocks.pop()
            else:
                i = _bisect_left(starts, address)
                del starts[i]
                del self._blocks[i]
        size = a.size
        if not a.internal:
            self.live_bytes -= size
        # The memory stays unreusable only for small blocks, up to _held_max bytes in all; the rest
        # goes back to the free lists now (the record stays, to name a double free).
        held = size <= self._held_large and self._quarantine_max > 0
        if size:
            if size <= SMALL_FILL:
                (SPANS.get(size) or span(size)).pack_into(a.raw, address - a.base, _POISON)
            elif size <= self._held_large:  # kept (or small enough): poisoned whole
                _memset(address + self._host_delta, FREED_BYTE, size)
            else:  # about to go back to the free lists: a bounded fill, as ASan's
                _memset(address + self._host_delta, FREED_BYTE, size if size <= MAX_FILL else MAX_FILL)
        a.freed_stack = stack
        if not self._quarantine_max:  # no quarantine: nothing is remembered, the memory goes back now
            self._give_back(a)
            return
        self._freed[address] = a
        quarantine = self._quarantine
        quarantine.append(a)
        if held:
            self._held.append(a)
            self._held_bytes += size
            while self._held_bytes > self._held_max:
                self._drop_memory(self._held.popleft())
            if a.guarded and self.emulated_kernels:
                # An emulator keeps each guard page as a region of its own, and every new region
                # costs in proportion to their number: hold the memory of the last GUARD_HELD
                # guarded blocks only (older ones go to the pool; their records stay).
                guards = self._held_guards
                guards.append(a)
                while guards and (guards[0].raw is None or len(guards) > GUARD_HELD):
                    self._drop_memory(guards.popleft())
        else:
            self._give_back(a)
        if len(quarantine) > self._quarantine_max:
            while len(quarantine) > self._quarantine_max:
                old = quarantine.popleft()
                self._drop_memory(old)
                if self._freed.get(old.address) is old:
                    del self._freed[old.address]
            held_q = self._held
            while held_q and held_q[0].raw is None:  # dropped by the count limit above
                held_q.popleft()

    def _give_back(self, a: Allocation) -> None:
        """The chunk of a freed block goes back to the free lists; a guarded one to the pool of its
        size while that has room (guards kept: the chunk is as inaccessible at its ends as ever).
        The poisoned prefix stays readable until the chunk is reused."""
        a.raw = None
        if a.guarded and self._pool_guarded(a):
            return
        self._give_chunk(a.chunk, a.chunk_size, a.address - a.base - a.chunk + MAX_FILL)

    def _pool_guarded(self, a: Allocation) -> bool:
        """Keep a freed guarded block's chunk, guards and all, for the next guarded block of its
        size; False (and the guards removed) when the pool of that size is full."""
        pool = self._guard_pool.get(a.chunk_size)
        if pool is None:
            pool = self._guard_pool[a.chunk_size] = []
        if len(pool) < GUARD_POOL:
            a.guarded = False
            pool.append(a.chunk)
            return True
        self._unguard(a)
        return False

    def _unguard(self, a: Allocation) -> None:
        a.guarded = False
        self.space.protect(a.chunk, PAGE, True)
        self.space.protect(a.chunk + a.chunk_size - PAGE, PAGE, True)

    def _drop_memory(self, a: Allocation) -> None:
        """Let a held freed block's memory go back to the free lists (views still see the arena)."""
        if a.raw is not None:
            a.raw = None
            self._held_bytes -= a.size
            if a.guarded and self._pool_guarded(a):
                return
            if self.space is not None:
                self.space.release(a.chunk, a.chunk_size, keep=a.chunk_size)

    def _bad_free_message(self, address: int, what: str = "free") -> str:
        if address in self._freed:
            return f"{self.name}: double {what} of 0x{address:x}: {self._freed[address].report()}"
        inside = self._find_live(address)
        if inside is not None and not inside.internal:
            hint = (" (a pointer malloc_aligned returned: release it with free_aligned)"
                    if address in self._aligned else "")
            return (f"{self.name}: {what} of 0x{address:x}, which points {address - inside.address} bytes "
                    f"into the {inside.describe()}{hint}")
        if inside is not None:
            return f"{self.name}: {what} of 0x{address:x}, which is inside the heap's own {inside.tag}"
        return f"{self.name}: {what} of 0x{address:x}, which no allocation of this heap returned"

    # -- the aligned scheme's bookkeeping (allocator.malloc_aligned / free_aligned) --------------

    def note_aligned(self, pointer: int, base: int) -> None:
        self._aligned[pointer] = base

    def is_aligned(self, pointer: int) -> bool:
        return pointer in self._aligned

    def forget_aligned(self, pointer: int) -> int | None:
        return self._aligned.pop(pointer, None)

    # -- checked access --------------------------------------------------------------------------

    def _holder(self, address: int) -> Allocation | None:
        """The live block whose slab chunk holds `address` (red zones included), else the last other
        block starting at or before it (none covers a slab's page); None when there is none. The
        caller checks the range."""
        found = self.space.slab_chunk(address - self._base)
        if found is not None:
            return self._slab_blocks.get(found[0])
        i = _bisect_right(self._starts, address) - 1
        return self._blocks[i] if i >= 0 else None

    def _find_live(self, address: int) -> Allocation | None:
        a = self._holder(address)
        if a is None or address < a.address:
            return None
        return a if address < a.end or (address == a.address) else None

    def check_range(self, address: int, n: int) -> Allocation:
        """The live allocation holding all of [address, address + n); HeapError otherwise."""
        # Hot path (every access): exact-int test, the block found last, the scratch stack (argument
        # frames), the memo (block starts, addresses found before), then the slab chunk or a
        # bisection. The accessors below inline the first step.
        if type(address) is int and type(n) is int and n >= 0:
            end = address + n
            a: Allocation | None  # the last block, then the memo's and the holder's
            a = self._last
            if a.address <= address and end <= a.end:
                return a
            if self.stack_lo <= address and end <= self.stack_hi:
                return self._stack_block
            a = self._known.get(address)  # a block's start or an address checked before
            if a is not None and end <= a.end:
                self._last = a
                return a
            a = self._holder(address)
            if a is not None and a.address <= address and end <= a.end:
                self._last = a
                self._remember(address, a)
                return a
        self._check_open()
        if not _is_int(address) or not _is_int(n) or n < 0:
            raise HeapError(f"{self.name}: bad range {address!r} + {n!r}",
                            address if _is_int(address) else None)
        raise HeapError(self._range_message(address, n), address)

    def _remember(self, address: int, a: Allocation) -> None:
        """Memoize an interior address found by its chunk or by bisection. Past MEMO_INTERIOR
        interior entries, or as many as there are live blocks if more (so the rebuild's copy stays
        a constant cost per entry), the memo starts again from the live blocks' starts."""
        known = self._known
        live = len(self._live)
        if len(known) - live >= (MEMO_INTERIOR if live < MEMO_INTERIOR else live):
            known = self._known = dict(self._live)
        known[address] = a

    def _range_message(self, address: int, n: int) -> str:
        what = f"{self.name}: access of {n} byte(s) at 0x{address:x}"
        inside = self._find_live(address)
        if inside is not None:
            return (f"{what} runs {address + n - inside.end} byte(s) past the end of the "
                    f"{inside.describe()}")
        for a in reversed(self._quarantine):
            if a.address <= address < a.address + max(a.size, 1):
                return f"{what} is inside freed memory: {a.report()}"
        return f"{what} is outside every live allocation"

    @contextmanager
    def scratch(self, n: int) -> Iterator[int]:
        """`n` zeroed bytes of tracked stack memory for the duration of a call (LIFO)."""
        start = self.scratch_push(n)
        try:
            yield start
        finally:
            self.scratch_pop(start)

    def scratch_push(self, n: int) -> int:
        """Like `scratch`, for callers that pop explicitly (`scratch_pop`), as an alloca'd frame."""
        if self.closed:
            self._check_open()
        top = self.stack_top
        align = self.malloc_alignment
        start = (top + align - 1) & -align  # align_up (a power of two)
        if start + n > self.stack_hi:
            raise HeapError(f"{self.name}: scratch stack overflow ({n} bytes requested)", start)
        self._scratch_frames.append(top)
        self.stack_top = start + n
        if n:
            if n <= SMALL_FILL:  # a struct pack into the block: no foreign call
                (SPANS.get(n) or span(n)).pack_into(self._stack_raw, start - self._stack_base, ZEROS)
            else:
                _memset(start + self._host_delta, 0, n)
        return start

    def scratch_source(self, n: int) -> tuple[list[str], list[str], dict[str, Any]]:
        """`frame = scratch_push(n)` and `scratch_pop(frame)` as lines of Python, for a generated
        caller that pushes a fixed `n` bytes (vm.native_module's import call sites), with the names they
        use. The lines take the methods' steps (align, bound, record, zero; check the order,
        restore) and call the methods themselves for anything out of the ordinary, which raise
        their own errors: a closed heap, an overflow, a frame popped out of order. Sizes the
        methods zero with a foreign memset are pushed by the method."""
        ns: dict[str, Any] = {"_scratch_heap": self, "_scratch_push": self.scratch_push,
                              "_scratch_pop": self.scratch_pop, "_scratch_frames": self._scratch_frames}
        pop = ["if _scratch_frames and frame >= _scratch_frames[-1]:",
               "    _scratch_heap.stack_top = _scratch_frames.pop()",
               "else:",
               "    _scratch_pop(frame)  # raises"]
        if not 0 < n <= SMALL_FILL:
            return [f"frame = _scratch_push({n})"], pop, ns
        align = self.malloc_alignment
        ns.update(_scratch_zero=span(n).pack_into, _scratch_raw=self._stack_raw,
                  _scratch_base=self._stack_base, _SCRATCH_ZEROS=ZEROS)
        push = ["top = _scratch_heap.stack_top",
                f"frame = (top + {align - 1}) & {-align}",
                f"if _scratch_heap.closed or frame + {n} > _scratch_heap.stack_hi:",
                f"    frame = _scratch_push({n})  # raises",
                "else:",
                "    _scratch_frames.append(top)",
                f"    _scratch_heap.stack_top = frame + {n}",
                "    _scratch_zero(_scratch_raw, frame - _scratch_base, _SCRATCH_ZEROS)"]
        return push, pop, ns

    def scratch_fits(self, n: int) -> bool:
        """Whether `scratch_push(n)` would find room (a fast path that pushes no frame stays where
        the reference path would not overflow)."""
        align = self.malloc_alignment
        return ((self.stack_top + align - 1) & -align) + n <= self.stack_hi

    def force_reference(self) -> None:
        """The reference path from now on for everything on this heap (see `reference`)."""
        self.reference = True
        self.direct_allocator = None

    def scratch_memory(self) -> tuple[Any, int]:
        """(buffer, base) of the scratch stack: the bytes of a frame this caller pushed are
        `buffer[address - base:]`, for `struct.*_from` / `*_into` on its own frame without a
        check per access (the VM writes its alloca'd argument buffer directly). Frames it did
        not push, or popped ones, are not its to touch."""
        if self.closed:
            self._check_open()
        return self._stack_raw, self._stack_base

    def scratch_pop(self, start: int) -> None:
        frames_ = self._scratch_frames
        if not frames_ or start + 0 < frames_[-1]:
            raise HeapError(f"{self.name}: scratch frame 0x{start:x} popped out of order", start)
        self.stack_top = frames_.pop()

    # -- reporting -------------------------------------------------------------------------------

    def allocation(self, address: int) -> Allocation | None:
        """The live allocation starting at `address`, if any."""
        return self._live.get(address)

    def live(self) -> list[Allocation]:
        return [a for a in self._live.values() if not a.internal]

    def blocks(self, *, freed: bool = False) -> list[Allocation]:
        """Every live block, oldest first: the callers' and the heap's own (`internal`: the scratch
        stack, the dispatch state runtimes keep); with `freed`, also the freed blocks the quarantine
        still remembers (their `end` is -1), where stale pointers in live memory may point. For a
        differential that compares all of two heaps' memory."""
        found = list(self._live.values())
        if freed:
            found += self._quarantine
        return sorted(found, key=lambda a: a.serial)

    def leaks(self, since: int = 0) -> list[Allocation]:
        """Live allocations (made after serial `since`), oldest first, with size and stack."""
        return sorted((a for a in self.live() if a.serial > since), key=lambda a: a.serial)

    def mark(self) -> int:
        """A serial to pass to `leaks(since=...)`."""
        return self._serial

    def close(self) -> None:
        """Forget every block; later use raises HeapError. Views handed out stay valid memory."""
        self.closed = True
        self._last = _NOWHERE
        self.stack_lo, self.stack_hi = 1, 0  # the fast paths must not find the scratch block
        self._live.clear()
        self._known.clear()
        self._starts.clear()
        self._blocks.clear()
        self._slab_blocks.clear()
        self._freed.clear()
        self._quarantine.clear()
        self._held.clear()
        self._held_guards.clear()
        self._held_bytes = 0
        self._aligned.clear()

    def _check_open(self) -> None:
        if self.closed:
            raise HeapError(f"{self.name}: used after close")


@contextmanager
def tracked_heap(**kwargs: Any) -> Iterator[Heap]:
    """A fresh Heap; on a normal exit, LeakError if any allocation or failing status outlived it."""
    heap = Heap(**kwargs)
    statuses = heap.statuses
    try:
        yield heap
    except BaseException:
        heap.close()
        raise
    leaks = heap.leaks()
    new_statuses = statuses.live_tokens()
    described = statuses.describe_live(new_statuses)
    statuses.discard(new_statuses)
    heap.close()
    if leaks or new_statuses:
        raise LeakError(leak_report(leaks, described), leaks, described)


__all__ = ["UNINITIALIZED_BYTE", "FREED_BYTE", "MAX_FILL", "REDZONE", "QUARANTINE_BYTES", "QUARANTINE_LARGE",
           "MEMO_INTERIOR", "GUARD_POOL", "GUARD_HELD", "MAX_RESERVATION", "host_memory", "default_limit", "HeapError",
           "LeakError", "Heap", "tracked_heap"]
