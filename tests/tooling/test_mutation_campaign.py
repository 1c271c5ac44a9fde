"""The mutation campaign of tests/mutation_campaign.py in the suite: 2,000 deterministic mutants of
real modules of both inline models and of riscv32, aarch64 and wasm32 builds (FlatBuffer, bytecode,
embedded ELF, wasm side module), each through `ireeabi inspect` and `ireeabi run` in a process of
its own. No traceback, no death by signal, no hang that
iree-run-module does not share. The counts are printed."""
from __future__ import annotations

import time

import mutation_campaign as mc

MUTANTS = 2000
SEED = 20261203


def test_no_mutant_ends_in_a_traceback_a_signal_or_a_hang(capsys):
    t0 = time.monotonic()
    result = mc.campaign(MUTANTS, SEED, timeout=20.0)
    took = time.monotonic() - t0
    with capsys.disabled():
        print(f"\nmutation campaign (seed {SEED}): {result.summary()} in {took:.0f} s")
    assert sum(result.counts.values()) == MUTANTS
    regions = {m.region for m in mc.mutants(mc.modules(), MUTANTS, SEED)}
    assert regions == {"flatbuffer", "bytecode", "elf", "wasm"}
    assert {m.target for m in mc.modules()} == {"", "riscv32", "aarch64", "wasm32"}
    assert result.failures == 0, "\n".join(f"{o}: {what}\n{detail[-1500:]}" for o, what, detail in result.bad[:5])
