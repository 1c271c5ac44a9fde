"""Host CPU data as IREE exposes it: `iree_cpu_read_data` words and `iree_cpu_lookup_data_by_key`.

IREE packs CPU feature bits into processor data words (runtime/src/iree/schemas/cpu_feature_bits.inl:
arch, word, bit, LLVM feature name). Kernels receive the words in environment_v0.processor.data and
`hal_inline.device.query.i64("hal.cpu", key)` answers a feature's bit by its LLVM name. IREE reads the
bits with cpuid; here they come from the kernel's view of the CPU (/proc/cpuinfo flags), which also
reflects OS support for the wider registers.
"""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from ...layouts import executable_library as X
from ..machine import Machine, machine as _machine


class FeatureBit(NamedTuple):
    word: int
    bit: int
    key: str  # the LLVM feature name IREE looks up
    linux_flag: str  # the /proc/cpuinfo flag that reports it


# x86-64 rows of cpu_feature_bits.inl (IREE_ARCH_X86_64): data word 0.
X86_64_FEATURES: tuple[FeatureBit, ...] = tuple(FeatureBit(0, b, k, f) for b, k, f in [
    (0, "sse3", "pni"), (1, "ssse3", "ssse3"), (2, "sse4.1", "sse4_1"), (3, "sse4.2", "sse4_2"),
    (4, "sse4a", "sse4a"), (10, "avx", "avx"), (11, "fma", "fma"), (12, "fma4", "fma4"), (13, "xop", "xop"),
    (14, "f16c", "f16c"), (15, "avx2", "avx2"), (20, "avx512f", "avx512f"), (21, "avx512cd", "avx512cd"),
    (22, "avx512vl", "avx512vl"), (23, "avx512dq", "avx512dq"), (24, "avx512bw", "avx512bw"),
    (25, "avx512ifma", "avx512ifma"), (26, "avx512vbmi", "avx512vbmi"),
    (27, "avx512vpopcntdq", "avx512_vpopcntdq"), (28, "avx512vnni", "avx512_vnni"),
    (29, "avx512vbmi2", "avx512_vbmi2"), (30, "avx512bitalg", "avx512_bitalg"),
    (31, "avx512bf16", "avx512_bf16"), (32, "avx512fp16", "avx512_fp16"), (50, "amx-tile", "amx_tile"),
    (51, "amx-int8", "amx_int8"), (52, "amx-bf16", "amx_bf16"),
])

FEATURES = {"x86_64": X86_64_FEATURES}


def _linux_flags(cpuinfo: str) -> set[str]:
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def read_data(cpuinfo: str | None = None, target: "Machine | str | None" = None) -> list[int]:
    """The processor data words (IREE_HAL_PROCESSOR_DATA_CAPACITY_V0 of them) of a runtime on
    `target` (the host by default): the host CPU's features when the target is the host's data model
    (or `cpuinfo` is given), none for an emulated target, whose CPU there is none to read."""
    words = [0] * X.IREE_HAL_PROCESSOR_DATA_CAPACITY_V0
    m = _machine(target)
    if cpuinfo is None and not m.is_host:
        return words
    table = FEATURES.get(m.name, ())
    if cpuinfo is None:
        path = Path("/proc/cpuinfo")
        cpuinfo = path.read_text() if path.is_file() else ""
    flags = _linux_flags(cpuinfo)
    for f in table:
        if f.linux_flag in flags:
            words[f.word] |= 1 << f.bit
    return words


def lookup(words: list[int], key: str, target: "Machine | str | None" = None) -> int | None:
    """iree_cpu_lookup_data_by_key on `target`'s architecture (the host by default): the feature
    bit's value, or None (NOT_FOUND) for keys that architecture does not know."""
    for f in FEATURES.get(_machine(target).name, ()):
        if f.key == key:
            return (words[f.word] >> f.bit) & 1
    return None
