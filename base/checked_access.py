"""Checked reads and writes of a tracked heap's memory: the accessors of `base.heap.Heap`.

`CheckedAccess` is the part of `Heap` that reads and writes target memory (scalars, words, int32
counters, byte ranges, struct views, cells for a read-modify-write). Every access is checked: each
accessor first tests the block the last check found (inline, one comparison pair) and the scratch
stack, then falls back to `Heap.check_range` (the checked-address memo, the slab chunk or a
bisection), which raises HeapError for anything but a live range. The heap's slots hold the state
these use; this class only adds the methods.

Small fills are a struct pack of a span of a pattern into the block (`SPANS`, `span`): no foreign
call for up to SMALL_FILL bytes.
"""
from __future__ import annotations

import ctypes
import struct
from typing import Any, Callable

from ..abi.layout import Struct

SMALL_FILL = 1024  # fills up to this size are a struct pack into the block, not a foreign memset
ZEROS = bytes(SMALL_FILL)
SPANS: dict[int, struct.Struct] = {}  # n -> Struct("{n}s"): packs the first n bytes of a pattern


def span(n: int) -> struct.Struct:
    """The Struct packing the first `n` bytes of a pattern (made once per size)."""
    s = SPANS.get(n)
    if s is None:
        s = SPANS[n] = struct.Struct(f"{n}s")
    return s


def fill_view(data: Any, start: int, pattern: bytes, count: int) -> None:
    """`count` copies of `pattern` into the writable view `data` from `start`. A span's worth of
    the pattern was one temporary as large as the span (a 512 MiB fill held 1 GiB, IREE 512 MiB):
    here a piece of at most FILL_PIECE bytes is written, then the filled part is copied after itself,
    doubling, so the extra memory is bounded and the work linear in the span."""
    total = count * len(pattern)
    if total <= FILL_PIECE:
        data[start:start + total] = pattern * count
        return
    done = FILL_PIECE // len(pattern) * len(pattern)  # whole copies: the doubling keeps their phase
    data[start:start + done] = pattern * (done // len(pattern))
    while done < total:
        n = min(done, total - done)
        data[start + done:start + done + n] = data[start:start + n]
        done += n


FILL_PIECE = 1 << 16  # bytes of the first piece, at most
_memset = ctypes.memset
_memmove = ctypes.memmove
_I32 = struct.Struct("<i")
_i32_unpack, _i32_pack = _I32.unpack_from, _I32.pack_into


class CheckedAccess:
    """The accessors of `base.heap.Heap` (its base class: the heap's slots and `check_range` are
    what they use)."""

    __slots__ = ()

    # What the accessors use, all slots of the heap (base.heap.Heap sets them up and keeps them).
    _last: Any  # the Allocation check_range found last
    _known: dict  # the checked-address memo: address -> Allocation
    stack_lo: int
    stack_hi: int
    _stack_block: Any  # the scratch stack's Allocation
    _host_delta: int
    _word_size: int
    _word_mask: int
    _word_unpack: Any
    _word_pack: Any
    int32s: memoryview
    machine: Any
    check_range: Callable[[int, int], Any]  # Heap.check_range: the Allocation holding the range

    # The accessors below test the last-found block inline and fall back to check_range (which
    # raises for anything but a live range): the same check, one Python call fewer on a hit.

    def unpack(self, fmt: struct.Struct, address: int) -> tuple:
        """`fmt.unpack` of the bytes at `address` (checked)."""
        n = fmt.size
        a = self._last
        if type(address) is not int or not (a.address <= address and address + n <= a.end):
            a = self.check_range(address, n)
        return fmt.unpack_from(a.raw, address - a.base)

    def pack(self, fmt: struct.Struct, address: int, *values: Any) -> None:
        """Write `fmt.pack(*values)` at `address` (checked)."""
        n = fmt.size
        a = self._last
        if type(address) is not int or not (a.address <= address and address + n <= a.end):
            a = self.check_range(address, n)
        fmt.pack_into(a.raw, address - a.base, *values)

    def read(self, address: int, n: int) -> bytes:
        a = self.check_range(address, n)
        if not n:
            return b""
        off = address - a.base
        return bytes(a.raw[off:off + n])

    def write(self, address: int, data: bytes) -> None:
        n = len(data)
        a = self.check_range(address, n)
        if n:
            off = address - a.base
            a.raw[off:off + n] = data if type(data) is bytes else bytes(data)

    def memset(self, address: int, value: int, n: int) -> None:
        a = self._last
        if type(address) is not int or type(n) is not int or n < 0 or not (
                a.address <= address and address + n <= a.end):
            a = self.check_range(address, n)
        if n:
            if n <= SMALL_FILL and not value & 0xFF:  # zeroing a few bytes
                (SPANS.get(n) or span(n)).pack_into(a.raw, address - a.base, ZEROS)
            else:
                _memset(address + self._host_delta, value & 0xFF, n)

    def fill(self, address: int, pattern: bytes, count: int) -> None:
        """`count` copies of `pattern` from `address` (`fill_view`: no temporary of the span)."""
        n = count * len(pattern)
        a = self.check_range(address, n)
        if n:
            fill_view(a.raw, address - a.base, pattern, count)

    def memmove(self, dst: int, src: int, n: int) -> None:
        self.check_range(src, n)
        self.check_range(dst, n)
        if n:
            _memmove(dst + self._host_delta, src + self._host_delta, n)

    def view(self, address: int, n: int) -> memoryview:
        """A writable byte view of [address, address + n); it keeps the memory alive."""
        if type(address) is int and type(n) is int and n >= 0:
            end = address + n
            if self.stack_lo <= address and end <= self.stack_hi:  # mostly argument frames
                a = self._stack_block
            else:
                a = self._last
                if not (a.address <= address and end <= a.end):
                    a = self.check_range(address, n)
        else:
            a = self.check_range(address, n)
        off = address - a.base
        return a.raw[off:off + n]

    def struct_at(self, decl: Struct, address: int) -> Any:
        """The ctypes view of `decl` laid out for the heap's target at `address` (sharing, and
        keeping alive, the memory)."""
        ct = self.machine.ctype(decl)
        size = ctypes.sizeof(ct)
        a = self._last
        if type(address) is not int or not (a.address <= address and address + size <= a.end):
            a = self.check_range(address, size)
        return ct.from_buffer(a.raw, address - a.base)

    # Scalar accesses go through the arena's bytes (struct.*_from / *_into): no temporary bytes
    # objects on the hot path. A word is the target's pointer width.
    def read_word(self, address: int) -> int:
        p = self._word_size
        if type(address) is int and self.stack_lo <= address and address + p <= self.stack_hi:
            a = self._stack_block  # a slot in a scratch frame
        else:
            a = self._last
            if type(address) is not int or not (a.address <= address and address + p <= a.end):
                a = self.check_range(address, p)
        return self._word_unpack(a.raw, address - a.base)[0]

    def write_word(self, address: int, value: int) -> None:
        p = self._word_size
        if type(address) is int and self.stack_lo <= address and address + p <= self.stack_hi:
            a = self._stack_block  # a slot in a scratch frame
        else:
            a = self._last
            if type(address) is not int or not (a.address <= address and address + p <= a.end):
                a = self.check_range(address, p)
        self._word_pack(a.raw, address - a.base, value & self._word_mask)

    def read_i32(self, address: int) -> int:
        a = self._last
        if type(address) is not int or not (a.address <= address and address + 4 <= a.end):
            a = self.check_range(address, 4)
        return _i32_unpack(a.raw, address - a.base)[0]

    def write_i32(self, address: int, value: int) -> None:
        a = self._last
        if type(address) is not int or not (a.address <= address and address + 4 <= a.end):
            a = self.check_range(address, 4)
        _i32_pack(a.raw, address - a.base, ((value + (1 << 31)) & 0xFFFFFFFF) - (1 << 31))

    def fetch_add_i32(self, address: int, delta: int) -> int:
        """Add to an int32 in memory (wrapping like C's atomics); the value before. One check for
        the read-modify-write."""
        a = self._last
        if type(address) is not int or not (a.address <= address and address + 4 <= a.end):
            a = self.check_range(address, 4)
        off = address - a.base
        old = _i32_unpack(a.raw, off)[0]
        _i32_pack(a.raw, off, ((old + delta + (1 << 31)) & 0xFFFFFFFF) - (1 << 31))
        return old

    def cell(self, address: int, n: int) -> tuple[Any, int]:
        """(buffer, offset) of the checked range [address, address + n), for a read-modify-write of
        that range with one check (`struct.*_from` / `*_into` on the buffer). Only valid until the
        block is freed: use it at once."""
        # check_range's hot path, inlined (cells are mostly ref counters and descriptors of
        # different objects: the memo serves them).
        if type(address) is int and type(n) is int and n >= 0:
            end = address + n
            a = self._last
            if a.address <= address and end <= a.end:
                return a.raw, address - a.base
            a = self._known.get(address)  # a block's start or an address checked before
            if a is not None and end <= a.end:
                self._last = a
                return a.raw, address - a.base
        a = self.check_range(address, n)  # the slab chunk or bisection (memoized), or the error
        return a.raw, address - a.base

    def int32_cell(self, address: int) -> tuple[memoryview, int]:
        """(int32 view, index) of the checked 4 bytes at `address`, for a counter's read-modify-write
        with one check: the arena's `int32s` where the counter is 4-aligned (as IREE's are), a
        one-element view of it otherwise (a forged pointer may be anywhere)."""
        a = self._last
        if type(address) is not int or not (a.address <= address and address + 4 <= a.end):
            a = self._known.get(address) if type(address) is int else None
            if a is None or address + 4 > a.end:
                a = self.check_range(address, 4)  # the bisection (memoized), or the error
        off = address - a.base  # every block's raw is the arena: int32s[off >> 2] is its word
        if off & 3:
            return a.raw[off:off + 4].cast("i"), 0
        return self.int32s, off >> 2


__all__ = ["CheckedAccess", "SMALL_FILL", "ZEROS", "SPANS", "span"]
