"""Shared pieces of the vm fuzzers (hypothesis tests and the atheris harness).

A `World` is a tracked heap with the vm.buffer type, a few live buffers and a native module whose
exports cover every kind of shim (void, fixed, VLA, several spans in both reader forms, a value after a
span). Fuzz input is fed straight into a shim as the argument bytes; targets dereference every ref they
receive as a vm.buffer and read its contents, so forged pointers are exercised end to end. A fuzz case
passes when it raises nothing or only ireeabi errors, leaves every real object's counter where it was,
and leaks nothing.
"""
from __future__ import annotations

import struct
from typing import Any

import numpy as np

from ireeabi.abi import cconv
from ireeabi.abi.errors import IreeAbiError
from ireeabi.vm import call as C
from ireeabi.vm.buffer import BufferAccess, BufferType
from ireeabi.base.heap import Heap, tracked_heap
from ireeabi.vm.ref import NULL_REF, Ref, TypeRegistry
from ireeabi.vm.shims import CALL_BEGIN, ByteSpan, CallContext, shim_for
from ireeabi.layouts import hal_loader as HL
from ireeabi.modules.hal.loader import DispatchArgs, DispatchShim

from ireeabi.base.machine import host as _host_machine

HOST_M = _host_machine()  # the data model of the default (host) heap

# (signature, reader form): every shim kind.
SIGNATURES: list[tuple[str, str]] = [
    ("0v_v", "fixed"),
    ("0iIfF_i", "fixed"),
    ("0rr_r", "fixed"),
    ("0rIIiiCID_r", "fixed"),
    ("0rCrD_v", "fixed"),
    ("0CrIID_v", "fixed"),
    ("0rIiiiCiDCrIID_v", "fixed"),
    ("0rIiiiCiDCrIID_v", "pre-fix"),
    ("0CiDi_I", "fixed"),
]
N_OBJECTS = 3


def _walk(values: Any) -> list[Any]:
    out: list[Any] = []
    for v in values:
        if isinstance(v, Ref):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            out.extend(_walk(v))
    return out


class World:
    def __init__(self) -> None:
        self._cm = tracked_heap(quarantine=64)
        self.heap: Heap = self._cm.__enter__()
        self.types = TypeRegistry(self.heap)
        self.bt = BufferType(self.types)
        self.objects = [self.bt.create(BufferAccess.MUTABLE | BufferAccess.ORIGIN_HOST, 8 * (i + 1), 16)
                        for i in range(N_OBJECTS)]
        freed = self.bt.create(BufferAccess.MUTABLE, 8)
        self.bt.release(freed)
        self.freed = freed  # a dangling handle: its memory is in the heap's quarantine
        self.other = self.types.define("fuzz.other", None)
        self.derefs = 0

    @property
    def refs(self) -> list[Ref]:
        return [NULL_REF] + [Ref(b, self.bt.type) for b in self.objects]

    def counters(self) -> list[int]:
        return [self.bt.counter(b) for b in self.objects]

    def forged_words(self) -> list[int]:
        """Pointer words worth trying: NULL, junk, near-misses around real objects, freed memory, types."""
        b = self.objects[0]
        return [0, 1, 0x10, 0x1000, HOST_M.word_mask, HOST_M.word_mask - 7, b, b + 4, b - 8, b + 4096,
                self.freed, self.bt.type, self.bt.type | 3, self.other.type, self.bt.data(b),
                self.bt.ref_type.descriptor, 0xDEADBEEF & HOST_M.word_mask]

    def target(self, result_chars: str):  # noqa: ANN201
        def run(ctx: CallContext, *args: Any) -> Any:
            if len(args) == 1 and isinstance(args[0], DispatchArgs):  # hal_loader's dispatch shim
                read = args[0]
                args = read.values + (tuple(read.bindings()) if 0 <= read.binding_count <= 32 else ())
            for r in _walk(args):
                try:
                    buf = self.bt.check_deref_or_null(r)
                    if buf:
                        arr = self.bt.as_numpy(buf, np.uint8)
                        int(arr.sum())
                        self.derefs += 1
                except IreeAbiError:
                    pass
            out = [{"i": 0, "I": 0, "f": 0.0, "F": 0.0, "r": NULL_REF}[c] for c in result_chars]
            return tuple(out) if len(out) != 1 else out[0]
        return run

    def feed(self, signature: str, form: str, args: bytes | None, rets_len: int | None = None) -> None:
        """Run `args` through the signature's shim (correct results span unless `rets_len` says)."""
        # hal_loader's dispatch cconv is read by its own shim (modules/hal/loader.py)
        shim = DispatchShim(cconv.parse(signature), form, HOST_M) if signature == HL.DISPATCH_CCONV \
            else shim_for(signature, form)
        res_lay = cconv.layout(shim.signature.results, HOST_M.target)
        n_rets = res_lay.size if rets_len is None else rets_len
        heap = self.heap
        a = heap.malloc(len(args), tag="fuzz arguments") if args is not None else 0
        r = heap.malloc(n_rets, tag="fuzz results")
        try:
            if args:
                heap.write(a, args)
            shim(CallContext(heap), CALL_BEGIN, ByteSpan(a, len(args) if args is not None else 0),
                 ByteSpan(r, n_rets), self.target(shim.signature.results.text))
        finally:
            heap.free(r)
            if a:
                heap.free(a)

    def valid_arguments(self, signature: str, counts: list[int], seed: int) -> tuple[bytes, cconv.FragmentLayout]:
        """The bytes the VM packs for `signature` with real refs; the refs are released again."""
        frag = cconv.parse(signature).arguments
        refs = self.refs
        k = [seed]

        def value(char: str) -> Any:
            k[0] = (k[0] * 1103515245 + 12345) & 0x7FFFFFFF
            if char == "r":
                return refs[k[0] % len(refs)]
            return float(k[0] % 97) if char in "fF" else k[0] % 1000
        buf = C.pack_arguments(self.heap, frag, arguments_for(frag, counts, value))
        try:
            return buf.bytes(), buf.layout
        finally:
            C.release_arguments(buf)

    def close(self) -> None:
        """Release what the world made (robustly), then the leak check of the tracked heap."""
        errors: list[BaseException] = []
        for b in self.objects:
            try:
                self.bt.release(b)
            except IreeAbiError as e:
                errors.append(e)
        self.bt.close()
        self.types.close()
        self._cm.__exit__(None, None, None)  # raises LeakError on leaks
        if errors:
            raise errors[0]


def span_count(signature: str) -> int:
    return len(cconv.parse(signature).arguments.spans)


def put_word(data: bytearray, offset: int, value: int) -> None:
    if 0 <= offset <= len(data) - HOST_M.pointer_size:
        data[offset:offset + HOST_M.pointer_size] = HOST_M.word.pack(value & HOST_M.word_mask)


def put_i32(data: bytearray, offset: int, value: int) -> None:
    if 0 <= offset <= len(data) - 4:
        struct.pack_into("<i", data, offset, ((value + (1 << 31)) & 0xFFFFFFFF) - (1 << 31))


def arguments_for(frag: cconv.Fragment, counts: list[int], value: Any, *, repeat: bool = False) -> list[Any]:
    """Python arguments for `frag`: `value(char)` per scalar/ref, `counts[k]` elements per span (one
    element repeated with `repeat`, fresh values per element otherwise)."""
    args: list[Any] = []
    span_no = 0
    for item in frag.items:
        if isinstance(item, cconv.Value):
            args.append(value(item.char))
            continue
        n = counts[span_no]
        span_no += 1
        if repeat:
            elem = tuple(value(v.char) for v in item.values)
            elems = [elem] * n
        else:
            elems = [tuple(value(v.char) for v in item.values) for _ in range(n)]
        args.append([e[0] if len(e) == 1 else e for e in elems])
    return args

