"""Marshalling cost of hal_loader's dispatch buffer (not a test; run by hand):

    python benchmarks/bench_marshal.py

`0rIiiiCiDCrIID` with 4 constants and 3 bindings on the host, pack + unpack of the same values, side by
side in one run:

- ireeabi: `abi.cconv.codec` for the instance (generated straight-line struct code, compiled once), values in packer order
  with refs as (ptr, type) pairs; also with the per-call `cconv.layout` + codec lookups included;
- a hand-written precompiled `struct.Struct` doing the same work (flatten refs, insert the counts,
  rebuild the value list) — target: ireeabi <= 1.5x its time;
- construct: build + parse of the same layout (`abi.cconv.codec.construct_of`) — target: ireeabi >= 20x
  faster;
- for information, the whole VM-side path on real memory: `vm.call.pack_arguments` (heap buffer, refs
  retained) + `release_arguments`.
"""
from __future__ import annotations

import argparse
import struct
import time
from typing import Callable

from ireeabi.abi import cconv
from ireeabi.abi.cconv import codec
from ireeabi.vm import call
from ireeabi.base.machine import host
from ireeabi.vm.buffer import BufferAccess, BufferType
from ireeabi.abi.cconv.codec import codec as fast_codec
from ireeabi.base.heap import Heap
from ireeabi.vm.ref import Ref, TypeRegistry

FRAG = "rIiiiCiDCrIID"
SPANS = (4, 3)


def best_us(fn: Callable[[], object], n: int, rounds: int = 7) -> float:
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter_ns() - t0) / n / 1e3)
    return best


def values() -> list:
    v: list = [(0x5EED1000, 0x7E9EE000), 0x0123456789ABCDEF, 0x11, 0x22, 0x33]
    v += [0x0C000000 + k for k in range(SPANS[0])]
    for k in range(SPANS[1]):
        v += [(0x5EED2000 + 0x1000 * k, 0x7E9EB000), 0x0FF5E700 + k, 0x1E900 + k]
    return v


def main() -> None:
    if host().pointer_size != 8:
        raise SystemExit("the hand-written struct below is for an LP64 host")
    lay = cconv.layout(FRAG, host().target, SPANS)
    vals = values()
    buf = bytearray(lay.size)

    # ireeabi
    fc = fast_codec(lay)

    def ireeabi_codec() -> object:
        fc.pack_into(buf, 0, vals)
        return fc.unpack(buf)

    def ireeabi_lookup() -> object:
        c = fast_codec(cconv.layout(FRAG, host().target, SPANS))
        c.pack_into(buf, 0, vals)
        return c.unpack(buf)

    # Hand-written, LP64: ref = two u64 words, i64 'q', i32 'i'; 4 bytes of padding before the bindings.
    hand = struct.Struct("<QQqiii" "i" "iiii" "i" "4x" "QQqq" "QQqq" "QQqq")

    def handwritten() -> object:
        v = vals
        hand.pack_into(buf, 0, v[0][0], v[0][1], v[1], v[2], v[3], v[4], 4, v[5], v[6], v[7], v[8], 3,
                       v[9][0], v[9][1], v[10], v[11], v[12][0], v[12][1], v[13], v[14],
                       v[15][0], v[15][1], v[16], v[17])
        t = hand.unpack_from(buf, 0)
        return [(t[0], t[1]), t[2], t[3], t[4], t[5], t[7], t[8], t[9], t[10],
                (t[12], t[13]), t[14], t[15], (t[16], t[17]), t[18], t[19], (t[20], t[21]), t[22], t[23]]

    # construct
    cons = codec.construct_of(lay)
    names = [f"v{i}_{v.kind}" for i, v in enumerate(lay.values)]
    as_dict = {n: ({"ptr": x[0], "type": x[1]} if isinstance(x, tuple) else x) for n, x in zip(names, vals)}
    as_dict.update({f"count{c.span}": c.count for c in lay.counts})

    def construct_path() -> object:
        data = cons.build(as_dict)
        return cons.parse(data)

    # Everyone produces the same bytes and values.
    for fn in (ireeabi_codec, ireeabi_lookup, handwritten):
        buf[:] = bytes(len(buf))
        assert fn() == vals, fn.__name__
        assert bytes(buf) == fc.pack(vals), fn.__name__
    assert cons.build(as_dict) == fc.pack(vals)

    # The VM path on real memory, for information.
    heap = Heap(capture_stacks=False)
    types = TypeRegistry(heap)
    bt = BufferType(types)
    objs = [bt.create(BufferAccess.MUTABLE, 64) for _ in range(4)]
    t = bt.type
    py_args = [Ref(objs[0], t), 0x0123456789ABCDEF, 0x11, 0x22, 0x33, [0x0C000000 + k for k in range(4)],
               [(Ref(b, t), 0, 64) for b in objs[1:]]]

    def vm_path() -> None:
        call.release_arguments(call.pack_arguments(heap, FRAG, py_args))

    n = 100_000
    t_fc = best_us(ireeabi_codec, n)
    t_lookup = best_us(ireeabi_lookup, n)
    t_hand = best_us(handwritten, n)
    t_cons = best_us(construct_path, 2_000)
    t_vm = best_us(vm_path, 5_000)
    for b in objs:
        bt.release(b)
    types.close()

    print(f"pack + unpack of {FRAG!r} spans={list(SPANS)} on {host().name} ({lay.size} B); best of 7 rounds")
    print(f"  hand-written struct.Struct          {t_hand:8.2f} us")
    print(f"  ireeabi (abi.cconv.codec)                 {t_fc:8.2f} us   {t_fc / t_hand:5.2f}x hand-written (target <= 1.5x)")
    print(f"  ireeabi incl. layout/codec lookup   {t_lookup:8.2f} us   {t_lookup / t_hand:5.2f}x hand-written")
    print(f"  construct build + parse             {t_cons:8.2f} us   ireeabi is {t_cons / t_fc:6.1f}x faster "
          f"(target >= 20x)")
    print(f"  vm.call pack_arguments + release    {t_vm:8.2f} us   (heap buffer, 4 refs retained and released)")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    main()
