"""atheris (libFuzzer) harness over every vm shim: `python -m support.vm_fuzz_atheris -runs=N -seed=S`
(with tests/ on the import path: run in tests/, or with PYTHONPATH=tests).

Each input picks a signature, optionally starts from the buffer the VM packer produces for it (real
refs) and mutates it with forged pointer words and span counts, or is used raw; the bytes then go
through the shim into a target that dereferences every ref. Anything but success or an ireeabi
exception, a moved counter, or a leak is a crash libFuzzer reports.
"""
from __future__ import annotations

import sys
from pathlib import Path

import atheris
import construct  # noqa: F401  - third-party imports outside the instrumented block: only ireeabi is traced
import numpy  # noqa: F401

# ireeabi's packages whose code no input of this harness runs: the bytecode interpreter and the HAL,
# imported along with the shims' modules (a profile of the test's 3000 runs called no function in
# them). Instrumenting them was half the harness' start-up (6.0 -> 2.8 s of CPU) for edges no input
# reaches.
_CHECKOUT = Path(__file__).resolve().parents[2]
NOT_RUN = [f"ireeabi.{'.'.join(p.with_suffix('').relative_to(_CHECKOUT).parts)}".removesuffix(".__init__")
           for tree in ("vm/bytecode", "hal") for p in sorted((_CHECKOUT / tree).rglob("*.py"))]

with atheris.instrument_imports(include=["ireeabi", "support.vm_fuzz_common"], exclude=NOT_RUN):
    from ireeabi.abi.errors import IreeAbiError
    from ireeabi.base.machine import host as _host_machine
    from . import vm_fuzz_common as F

HOST_M = _host_machine()  # the data model of the default (host) heap


def test_one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    sig, form = F.SIGNATURES[fdp.ConsumeIntInRange(0, len(F.SIGNATURES) - 1)]
    mode = fdp.ConsumeIntInRange(0, 2)
    world = F.World()
    before = world.counters()
    try:
        try:
            if mode == 0:
                world.feed(sig, form, fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 256)))
            else:
                counts = [fdp.ConsumeIntInRange(0, 4), fdp.ConsumeIntInRange(0, 4)][:F.span_count(sig)]
                args, lay = world.valid_arguments(sig, counts, fdp.ConsumeIntInRange(0, 1 << 20))
                buf = bytearray(args)
                words = world.forged_words()
                for _ in range(fdp.ConsumeIntInRange(0, 4)):
                    what = fdp.ConsumeIntInRange(0, 3)
                    pos = fdp.ConsumeIntInRange(0, max(len(buf) - 1, 0))
                    if what == 0:
                        F.put_word(buf, pos - pos % HOST_M.pointer_size, words[fdp.ConsumeIntInRange(0, len(words) - 1)])
                    elif what == 1 and lay.counts:
                        F.put_i32(buf, lay.counts[pos % len(lay.counts)].offset, fdp.ConsumeInt(4))
                    elif what == 2:
                        del buf[pos:]
                    elif buf:
                        buf[pos] ^= fdp.ConsumeIntInRange(1, 255)
                world.feed(sig, form, bytes(buf))
        except IreeAbiError:
            pass
        if world.counters() != before:
            raise AssertionError(f"{sig}: counters moved {before} -> {world.counters()}")
    finally:
        world.close()


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
