"""The full HAL's dispatch shims in IREE 3.13's own machine code: iree-run-module of the
iree-base-runtime 3.13.0 wheel (not stripped) disassembled with objdump, read against the x86_64
model of layouts/hal_module_dispatch.py.

What each shim's code shows (runtime/src/iree/modules/hal/module.c,
iree_hal_module_command_buffer_dispatch_shim / ..._dispatch_indirect_shim): the bytes copied into
the args union, the minimum length (`cmp $N,%rcx`: the fixed part + two counts), where the constant
count is loaded, the binding array's alignment mask and its stride (`lea (%rsi,%rsi,4)` then
`lea (%rax,%rsi,8)`: 40 bytes). hal_loader's shim (iree_vm_shim_dispatch_v, fixed by #24827 in this
runtime) is the control: its count sits at the packed 36, not at sizeof(iree_vm_abi_rIiii_t) 40, and
it checks the length before it copies; the full HAL's shims copy first, as the sizeof code does.
"""
import os
import re
import subprocess
from functools import lru_cache
from pathlib import Path

import pytest

from ireeabi.abi import cconv
from ireeabi.layouts import hal_loader, hal_module_dispatch as H

_HEX = r"0x[0-9a-f]+"


def _binary() -> Path:
    import iree._runtime_libs as libs  # the wheel's own directory; the PATH entry is a pyenv shim
    return Path(os.path.dirname(libs.__file__)) / "iree-run-module"


@lru_cache(maxsize=None)
def _disassembly(symbol: str) -> list[str]:
    path = str(_binary())
    syms = subprocess.run(["nm", path], capture_output=True, text=True, check=True).stdout
    found = re.search(rf"^([0-9a-f]+) t {re.escape(symbol)}$", syms, re.M)
    assert found, f"{symbol} not in {path}"
    start = int(found.group(1), 16)
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", f"--start-address={start:#x}",
                          f"--stop-address={start + 0x100:#x}", path],
                         capture_output=True, text=True, check=True).stdout
    body = out.split(f"<{symbol}>:", 1)[1].splitlines()
    # one function: stop at the first ret
    insns = [line.split("\t", 1)[1].strip() for line in body if "\t" in line]
    return insns[:next(i for i, x in enumerate(insns) if x.startswith("ret")) + 1]


def _facts(symbol: str) -> dict:
    insns = _disassembly(symbol)
    check = next(i for i, x in enumerate(insns) if re.match(rf"cmp\s+\${_HEX},%rcx", x))
    copied = 0
    for x in insns[:check]:  # loads from the argument buffer before the length check
        m = re.match(rf"movups\s+(?:({_HEX}))?\(%rdx\),%xmm\d", x)
        if m:
            copied = max(copied, int(m.group(1) or "0", 16) + 16)
    after = insns[check:]
    count0 = next(int(m.group(1), 16) for x in after
                  if (m := re.match(rf"movslq\s+({_HEX})\(%rdx\),%rax", x)))
    mask = next(int(m.group(1), 16) for x in after if (m := re.match(rf"and\s+\$({_HEX}),%rax", x)))
    return {"copied_before_check": copied,
            "min_length": int(re.search(rf"\$({_HEX})", insns[check]).group(1), 16),
            "count0": count0, "align": (1 << 64) - mask,
            "stride_40": any(re.match(r"lea\s+\(%rsi,%rsi,4\),%rsi", x) for x in after)
                         and any(re.match(r"lea\s+\(%rax,%rsi,8\),%rax", x) for x in after)}


@pytest.mark.parametrize("shim", H.SHIMS, ids=lambda s: s.export)
def test_full_hal_shim_code_is_the_model_on_x86_64(shim):
    f = _facts(shim.function)
    site = H.sizeof_site(shim, "x86_64")
    elem = shim.element.layout("x86_64")
    reader = H.reader(shim, "x86_64", (0, 0))
    assert f["copied_before_check"] == site.sizeof == shim.params.layout("x86_64").size
    assert f["min_length"] == site.sizeof + 8
    assert f["count0"] == reader.count_reads[0] == site.packed  # latent: sizeof and packed agree
    assert f["align"] == elem.align == 8
    assert f["stride_40"] and elem.size == 40


def test_control_hal_loader_reads_at_the_packed_size():
    """The same reading of hal_loader's fixed shim finds the packed fixed part (36), which differs
    from sizeof(iree_vm_abi_rIiii_t) (40) on x86_64, and no copy before the length check."""
    insns = _disassembly("iree_vm_shim_dispatch_v")
    check = next(i for i, x in enumerate(insns) if re.match(rf"cmp\s+\${_HEX},%rcx", x))
    assert not any("(%rdx)" in x for x in insns[:check])
    count0 = next(int(m.group(1), 16) for x in insns[check:]
                  if (m := re.match(rf"movslq\s+({_HEX})\(%rdx\),%rax", x)))
    frag = cconv.parse(hal_loader.DISPATCH_CCONV).arguments
    fixed = cconv.span_reader(frag, "x86_64", (0, 0), form="fixed").count_reads[0]
    prefix = cconv.span_reader(frag, "x86_64", (0, 0), form="pre-fix").count_reads[0]
    assert (count0, fixed, prefix) == (36, 36, 40)
    assert int(re.search(rf"\$({_HEX})", insns[check]).group(1), 16) == 36 + 8
