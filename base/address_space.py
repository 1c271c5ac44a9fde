"""An emulated address space: a window of target addresses backed by one host mapping (the arena).

Every byte a runtime touches lives in its heap's address space. Address `a` is byte `a - base` of
one anonymous host mapping, reserved once (pages are committed only when touched), so a block is
real host memory that struct codecs, memoryviews and numpy read and write in place.

- On the host target the window is the mapping itself: `base` is its host address, so a pointer into
  it is a real pointer that C code (allocator ctl functions, kernels) can follow.
- On any other target the window lies where the target's pointers reach: from 64 KiB up, below
  4 GiB for a 32-bit pointer, and at 2**44 for a foreign 64-bit one, never where host memory is. A
  host pointer stored in target memory is then an unknown address, as a stale one would be.
- Function pointers stored in target memory (allocator ctl, ref destroy) point into a code range
  right below the window that no allocation can cover: a call through them is dispatched by the
  heap's function table (`callbacks`), and a read through them is an out-of-bounds access.
- A 32-bit foreign window is mapped from target address 0: the host mapping starts with
  FOREIGN_BASE_32 inaccessible bytes (target [0, 64 KiB): NULL page and code range) and the arena
  follows, its size a multiple of 64 KiB. `zero_host` is then the host address of target 0, so a
  foreign runtime can use [zero_host, zero_host + end) as its own memory with offset = target
  address (a wasm32 linear memory of whole 64 KiB pages: `hal.local.wasm_loader`); a touch of the
  first 64 KiB faults.

Ranges (chunks) are handed out by a small allocator. Chunks up to SLAB_CHUNK_MAX bytes come from
size-class slabs: runs of whole pages holding chunks of one size (a multiple of the granule) side by
side, so the chunk holding an address is found by arithmetic (`slab_chunk`), with a free list per
size. Larger chunks up to 64 KiB come from exact-size free lists, page-sized chunks beyond that from
a coalescing free list, and all of them from a bump pointer over memory never used. A freed chunk
keeps its bytes until it is reused (a stale view sees them), except that chunks of RETURN_PAGES_MIN
bytes and more give their pages back to the OS at once (past a prefix the heap asks to keep), so the
resident size of programs with large tensors follows their live set. The heap (`base.heap`) puts
blocks, red zones and the checks on top.

Protections (guard pages): `protect` makes whole pages of the arena inaccessible or accessible
again, and the space records which pages are inaccessible now (`protected`). An inaccessible range
is enforced by the host's page tables (`host=True`: `mprotect`, so native code faults on it) or only
recorded (`host=False`: where no native code runs, for emulators alone). Emulators running code on
the arena (`hal.local.emulated_cpu`) subscribe with `add_protection_listener(fn)`: `fn(offset, size,
accessible)` learns every protected range at once, then hears of each change: an inaccessible range
before the host protects it (an emulator must never touch a host-protected page: that would kill the
process), an accessible one after the host made it accessible again.
"""
from __future__ import annotations

import bisect
import ctypes
import mmap
from typing import Callable

from ..abi.errors import IreeAbiError
from .host_libraries import library_name

PAGE = mmap.PAGESIZE
GRANULE = 16  # chunk sizes and starts are multiples of this (the largest MALLOC_ALIGNMENT)
SMALL_MAX = 64 << 10  # chunks up to this size are reused by exact size; larger ones are page-sized
SLAB_CHUNK_MAX = 4096  # chunks up to this size come from size-class slabs
SLAB_SIZE = 64 << 10  # a slab's pages (rounded as a page-sized chunk)
RETURN_PAGES_MIN = 16 << 20  # freed chunks this large give their pages back to the OS at once
CODE_SIZE = 0xF000  # the function handle range below the window
FOREIGN_BASE_32 = 0x10000  # a 32-bit target's window starts here (NULL page and code range below)
FOREIGN_BASE_64 = 1 << 44  # a foreign 64-bit target's window, far from any host mapping
LINEAR_PAGE = 0x10000  # a 32-bit foreign window's size is a multiple of this (a wasm32 page)
TOP_GUARD_32 = 0x10000  # unmapped bytes kept below 2**32, so wrapped pointer arithmetic lands nowhere
_MAP_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000)  # Linux's value; not exported before 3.13
_DONTNEED = getattr(mmap, "MADV_DONTNEED", None)
_PROT_NONE, _PROT_RW = 0, mmap.PROT_READ | mmap.PROT_WRITE
_libc = None


def _mprotect() -> Callable[..., int]:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(library_name("c"), use_errno=True)
        _libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        _libc.mprotect.restype = ctypes.c_int
    return _libc.mprotect


class AddressSpaceError(IreeAbiError):
    """The window is full, or the host refused the mapping."""


# listener(arena offset, size, accessible): told of a protection change of whole pages.
ProtectionListener = Callable[[int, int, bool], None]


def window_limit(pointer_size: int, host: bool) -> int:
    """The most bytes a window can span: what a target pointer can address above the window base
    (32-bit targets), or no practical limit."""
    if pointer_size == 4 and not host:
        return (1 << 32) - TOP_GUARD_32 - FOREIGN_BASE_32
    return 1 << 46


class AddressSpace:
    """One arena of `size` bytes seen at target addresses [base, base + size) (see the module
    docstring). `host` places the window at the mapping's own host address."""

    def __init__(self, size: int, *, pointer_size: int, host: bool, name: str = "") -> None:
        limit = window_limit(pointer_size, host)
        from_zero = pointer_size == 4 and not host
        unit = LINEAR_PAGE if from_zero else PAGE  # window limits are multiples of both
        size = min(-(-size // unit) * unit, limit // unit * unit)
        self.name = name
        self.pointer_size = pointer_size
        # Host mapping = prefix (target [0, base), inaccessible) + arena; the prefix is empty unless
        # the window is mapped from target 0.
        self._prefix = FOREIGN_BASE_32 if from_zero else 0
        self.memory = self._map(self._prefix + size)
        self.size = size
        # The arena's bytes as one writable memoryview: the buffer every block's codecs run on.
        self.bytes = memoryview(self.memory)[self._prefix:] if self._prefix else memoryview(self.memory)
        mapping = ctypes.addressof(ctypes.c_char.from_buffer(self.memory))
        self.host_base = mapping + self._prefix
        # The host address of target address 0 when the mapping starts there, else None.
        self.zero_host: int | None = mapping if from_zero else None
        if from_zero and _mprotect()(mapping, self._prefix, _PROT_NONE) != 0:
            raise AddressSpaceError(f"{self.name or 'address space'}: mprotect of the NULL range failed "
                                    f"(errno {ctypes.get_errno()})")
        if host:
            self.base = self.host_base
        else:
            self.base = FOREIGN_BASE_32 if pointer_size == 4 else FOREIGN_BASE_64
        self.end = self.base + size
        self.code_lo, self.code_hi = self.base - CODE_SIZE, self.base
        self._top = 0  # arena offset: everything from here on has never been handed out (zero)
        self._small: dict[int, list[int]] = {}  # chunk size -> free chunk offsets
        self._large: list[int] = []  # free large ranges: sorted offsets
        self._large_size: dict[int, int] = {}  # offset -> size
        # Slabs: page number -> (slab offset, chunk size, end of its last chunk) for every page of
        # every slab; per chunk size, the free chunks (LIFO) and the part of its newest slab never
        # handed out, [next, end, fresh].
        self.slab_pages: dict[int, tuple[int, int, int]] = {}
        self._slab_free: dict[int, list[int]] = {}
        self._slab_rest: dict[int, list] = {}
        # Inaccessible pages: arena offset of the page -> whether the host's page tables enforce it.
        self._protected: dict[int, bool] = {}
        self._listeners: list[ProtectionListener] = []

    def _map(self, size: int) -> mmap.mmap:
        flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_NORESERVE
        try:
            return mmap.mmap(-1, size, flags=flags)
        except OSError as e:
            raise AddressSpaceError(f"{self.name or 'address space'}: the host refused a {size}-byte "
                                    f"reservation ({e})") from None

    # -- translation -------------------------------------------------------------------------------

    def host_address(self, address: int) -> int:
        """The host address of target address `address` (the same number on the host target)."""
        return address - self.base + self.host_base

    def contains(self, address: int, n: int = 1) -> bool:
        return self.base <= address and address + n <= self.end

    # -- chunks --------------------------------------------------------------------------------------

    def allocate(self, n: int) -> tuple[int, int, bool]:
        """(arena offset, chunk size, fresh) of a free chunk that holds `n` bytes: its size rounded to
        the granule up to SMALL_MAX, to the page beyond; `fresh` means it was never handed out before,
        so its bytes are zero. The chunk size is what `release` takes back."""
        if n <= SLAB_CHUNK_MAX:
            chunk = (n + GRANULE - 1) & -GRANULE
            free = self._slab_free.get(chunk)
            if free:  # the common case: a chunk of this size came back before
                return free.pop(), chunk, False
            return self._from_slab(chunk)
        if n <= SMALL_MAX:
            chunk = (n + GRANULE - 1) & -GRANULE
            free = self._small.get(chunk)
            if free:  # the common case: a chunk of this size came back before
                return free.pop(), chunk, False
        else:
            chunk = self.pages_chunk_size(n)
            found = self._take_large(chunk)
            if found is not None:
                return found, chunk, False
        offset = self._top
        if chunk > SMALL_MAX and offset % PAGE:
            gap = PAGE - offset % PAGE  # large chunks start on a page; the gap becomes free space
            self._give(offset, gap)
            offset += gap
        if offset + chunk > self.size:
            if chunk <= SMALL_MAX:  # the bump pointer is spent: carve it from a free large range
                pages = -(-chunk // PAGE) * PAGE
                found = self._take_large(pages)
                if found is not None:
                    self._give(found + chunk, pages - chunk)
                    return found, chunk, False
            raise AddressSpaceError(f"{self.name or 'address space'}: no room for a {chunk}-byte chunk "
                                    f"({self.in_use} of {self.size} bytes in use)")
        self._top = offset + chunk
        return offset, chunk, True

    def _from_slab(self, chunk: int) -> tuple[int, int, bool]:
        """A chunk never handed out from the newest slab of its size, or from a new slab."""
        rest = self._slab_rest.get(chunk)
        if rest is None or rest[0] + chunk > rest[1]:
            slab, size, fresh = self.allocate_pages(SLAB_SIZE)
            end = slab + size // chunk * chunk  # past the last whole chunk
            for page in range(slab // PAGE, (slab + size) // PAGE):
                self.slab_pages[page] = (slab, chunk, end)
            rest = self._slab_rest[chunk] = [slab, end, fresh]
        offset = rest[0]
        rest[0] = offset + chunk
        return offset, chunk, rest[2]

    def slab_chunk(self, offset: int) -> tuple[int, int] | None:
        """(chunk offset, chunk size) of the slab chunk holding arena offset `offset`; None outside
        every slab and in a slab's tail, which no chunk covers."""
        found = self.slab_pages.get(offset // PAGE)
        if found is None:
            return None
        slab, chunk, end = found
        start = slab + (offset - slab) // chunk * chunk
        return (start, chunk) if start < end else None

    @staticmethod
    def pages_chunk_size(n: int) -> int:
        """The size of the chunk `allocate_pages(n)` hands out."""
        return (max(n, SMALL_MAX + 1) + PAGE - 1) & -PAGE

    def allocate_pages(self, n: int) -> tuple[int, int, bool]:
        """As `allocate`, for a chunk that starts on a page and spans whole pages (guard pages are
        protected a page at a time): always taken from the large ranges, never an exact-size list."""
        return self.allocate(max(n, SMALL_MAX + 1))

    def protect(self, offset: int, size: int, accessible: bool, host: bool = True) -> None:
        """Make whole pages of the arena inaccessible (a guard) or readable and writable again.
        `host`: an inaccessible range is enforced by the host (any host access faults) as well as
        told to the listeners; False tells the listeners only. Making pages accessible undoes
        whichever was done. Listeners hear of an inaccessible range before the host protects it and
        of an accessible one after."""
        if offset % PAGE or size % PAGE or not 0 <= offset <= self.size - size:
            raise AddressSpaceError(f"{self.name or 'address space'}: protect of [{offset}, +{size}) "
                                    "is not whole pages of the arena")
        pages = range(offset, offset + size, PAGE)
        protected = self._protected
        if not accessible:
            for listener in list(self._listeners):
                listener(offset, size, False)
            if host and _mprotect()(self.host_base + offset, size, _PROT_NONE) != 0:
                errno = ctypes.get_errno()
                for page in pages:  # as it was: accessible where it was
                    if page not in protected:
                        for listener in list(self._listeners):
                            listener(page, PAGE, True)
                raise AddressSpaceError(f"{self.name or 'address space'}: mprotect failed (errno {errno})")
            for page in pages:
                protected[page] = host or protected.get(page, False)
            return
        if any(protected.get(page) for page in pages):  # some pages are protected by the host
            if _mprotect()(self.host_base + offset, size, _PROT_RW) != 0:
                raise AddressSpaceError(f"{self.name or 'address space'}: mprotect failed "
                                        f"(errno {ctypes.get_errno()})")
        for page in pages:
            protected.pop(page, None)
        for listener in list(self._listeners):
            listener(offset, size, True)

    def protected(self) -> list[tuple[int, int]]:
        """The inaccessible ranges now: (arena offset, size) of runs of protected pages, in order."""
        out: list[tuple[int, int]] = []
        for page in sorted(self._protected):
            if out and out[-1][0] + out[-1][1] == page:
                out[-1] = (out[-1][0], out[-1][1] + PAGE)
            else:
                out.append((page, PAGE))
        return out

    def add_protection_listener(self, listener: ProtectionListener) -> None:
        """Subscribe `listener` to protection changes (see the module docstring); it is told every
        range inaccessible now first."""
        for offset, size in self.protected():
            listener(offset, size, False)
        self._listeners.append(listener)

    def remove_protection_listener(self, listener: ProtectionListener) -> None:
        """Unsubscribe `listener` (no-op when it is not subscribed)."""
        if listener in self._listeners:
            self._listeners.remove(listener)

    def release(self, offset: int, chunk: int, keep: int = 0) -> None:
        """Give a chunk back. One of RETURN_PAGES_MIN bytes or more returns its pages to the OS past
        its first `keep` bytes (what is left there, e.g. poison, stays readable until reuse)."""
        if chunk <= SMALL_MAX:  # to its size's free list: in the slabs, or of exact sizes
            lists = self._slab_free if chunk <= SLAB_CHUNK_MAX else self._small
            free = lists.get(chunk)
            if free is None:
                free = lists[chunk] = []
            free.append(offset)
            return
        if chunk >= RETURN_PAGES_MIN and _DONTNEED is not None:
            lo = -(-(offset + keep) // PAGE) * PAGE
            hi = offset + chunk
            if hi > lo:
                self.memory.madvise(_DONTNEED, self._prefix + lo, hi - lo)
        self._give(offset, chunk)

    @property
    def in_use(self) -> int:
        """Bytes of chunks handed out and not given back (counted when asked: not on the hot path)."""
        free = sum(size * len(offsets) for size, offsets in self._small.items())
        free += sum(size * len(offsets) for size, offsets in self._slab_free.items())
        free += sum(end - start for start, end, _ in self._slab_rest.values())
        slab_size = self.pages_chunk_size(SLAB_SIZE)
        free += sum(slab + slab_size - end for slab, _, end in set(self.slab_pages.values()))  # tails
        return self._top - free - sum(self._large_size.values())

    def _give(self, offset: int, size: int) -> None:
        """Put a free range into the large list, merged with free neighbours; sub-page pieces
        (alignment gaps) are kept as small chunks."""
        if size < PAGE or offset % PAGE:
            if size >= GRANULE:
                self._small.setdefault(size, []).append(offset)
            return
        starts, sizes = self._large, self._large_size
        i = bisect.bisect_left(starts, offset)
        if i < len(starts) and offset + size == starts[i]:  # merge with the next range
            size += sizes.pop(starts.pop(i))
        if i > 0 and starts[i - 1] + sizes[starts[i - 1]] == offset:  # and with the previous one
            sizes[starts[i - 1]] += size
            return
        starts.insert(i, offset)
        sizes[offset] = size

    def _take_large(self, chunk: int) -> int | None:
        """Best fit among the free large ranges (there are few); the rest of the range stays free."""
        best = None
        for start in self._large:
            size = self._large_size[start]
            if size >= chunk and (best is None or size < self._large_size[best]):
                best = start
                if size == chunk:
                    break
        if best is None:
            return None
        size = self._large_size.pop(best)
        self._large.remove(best)
        if size > chunk:
            self._give(best + chunk, size - chunk)
        return best

    def describe(self) -> str:
        return (f"{self.name or 'address space'}: window 0x{self.base:x}..0x{self.end:x} "
                f"({self.size} bytes reserved, {self.in_use} in use)")


__all__ = ["AddressSpace", "AddressSpaceError", "CODE_SIZE", "FOREIGN_BASE_32", "GRANULE", "LINEAR_PAGE", "PAGE",
           "ProtectionListener", "SLAB_CHUNK_MAX", "SMALL_MAX", "window_limit"]
