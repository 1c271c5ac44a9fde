"""C data models of the targets IREE runs on.

One factory builds every target from the few parameters that distinguish data models (pointer
width, in-struct alignment of 64-bit scalars, long double), the way pyelftools builds its structs
from word size and endianness. Every number here is checked against clang and gcc in the tests.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

from .errors import IreeAbiError, UnknownNameError


@dataclass(frozen=True)
class ScalarInfo:
    """One C scalar type on one target."""

    size: int
    align: int  # alignment as a struct member (C11 _Alignof)
    preferred_align: int  # GNU __alignof__, which IREE's iree_alignof uses
    kind: str  # "sint", "uint", "float", "bytes" (opaque, e.g. x87 long double)


@dataclass(frozen=True, eq=False)  # one object per data model; identity hash
class Target:
    name: str
    triple: str  # clang target triple used by the oracle
    pointer_size: int
    scalars: Mapping[str, ScalarInfo] = field(repr=False)
    endian: str = "little"
    description: str = ""

    def scalar(self, c_type: str) -> ScalarInfo:
        try:
            return self.scalars[c_type]
        except KeyError:
            raise UnknownNameError("C scalar type", c_type, self.scalars) from None

    @property
    def max_align(self) -> int:
        """IREE's iree_max_align_t: sizeof(long double) off Windows (base/alignment.h)."""
        return self.scalars["long double"].size

    @property
    def max_align_is_pow2(self) -> bool:
        n = self.max_align
        return n & (n - 1) == 0

    @property
    def is_lp64(self) -> bool:
        return self.pointer_size == 8


# C spellings of every scalar the catalog uses; the fixed-width ones map to these.
_FIXED_WIDTH = {
    "int8_t": "signed char", "uint8_t": "unsigned char",
    "int16_t": "short", "uint16_t": "unsigned short",
    "int32_t": "int", "uint32_t": "unsigned int",
    "int64_t": "long long", "uint64_t": "unsigned long long",
}


def _make_target(
    name: str,
    triple: str,
    *,
    pointer_size: int,
    int64_member_align: int,
    long_double: tuple[int, int],
    description: str,
) -> Target:
    p = pointer_size
    s: dict[str, ScalarInfo] = {}

    def put(names: tuple[str, ...], size: int, align: int, kind: str, preferred: int | None = None) -> None:
        for n in names:
            s[n] = ScalarInfo(size, align, preferred or align, kind)

    put(("_Bool",), 1, 1, "uint")
    put(("char", "signed char"), 1, 1, "sint")
    put(("unsigned char",), 1, 1, "uint")
    put(("short",), 2, 2, "sint")
    put(("unsigned short",), 2, 2, "uint")
    put(("int",), 4, 4, "sint")
    put(("unsigned int",), 4, 4, "uint")
    put(("long",), p, p, "sint")
    put(("unsigned long",), p, p, "uint")
    # i386 SysV: 64-bit scalars are 4-aligned as members, 8 by GNU __alignof__.
    put(("long long",), 8, int64_member_align, "sint", 8)
    put(("unsigned long long",), 8, int64_member_align, "uint", 8)
    put(("float",), 4, 4, "float")
    put(("double",), 8, int64_member_align, "float", 8)
    ld_size, ld_align = long_double
    put(("long double",), ld_size, ld_align, "float" if ld_size == 8 else "bytes")
    put(("intptr_t", "ptrdiff_t"), p, p, "sint")
    put(("uintptr_t", "size_t"), p, p, "uint")
    put(("void*",), p, p, "uint")
    for alias, base in _FIXED_WIDTH.items():
        s[alias] = s[base]
    return Target(name, triple, p, MappingProxyType(s), description=description)


_LP64: dict[str, Any] = dict(pointer_size=8, int64_member_align=8, long_double=(16, 16))
_ILP32: dict[str, Any] = dict(pointer_size=4, int64_member_align=8, long_double=(16, 16))

TARGETS: Mapping[str, Target] = MappingProxyType({
    t.name: t
    for t in (
        _make_target("x86_64", "x86_64-linux-gnu", description="LP64, x87 long double", **_LP64),
        _make_target("aarch64", "aarch64-linux-gnu", description="LP64, binary128 long double", **_LP64),
        _make_target("riscv64", "riscv64-unknown-elf", description="LP64, binary128 long double", **_LP64),
        _make_target("riscv32", "riscv32-unknown-elf", description="ILP32, 64-bit scalars 8-aligned",
                     **_ILP32),
        _make_target("armv7", "armv7-none-eabi", pointer_size=4, int64_member_align=8,
                     long_double=(8, 8), description="ILP32 AAPCS, long double = double"),
        _make_target("wasm32", "wasm32-unknown-unknown", description="ILP32, 64-bit scalars 8-aligned",
                     **_ILP32),
        _make_target("i386", "i386-linux-gnu", pointer_size=4, int64_member_align=4,
                     long_double=(12, 4), description="ILP32 SysV, 64-bit scalars 4-aligned in structs"),
    )
})


class UnknownTargetError(UnknownNameError):
    def __init__(self, name: str) -> None:
        super().__init__("target", name, TARGETS)


# Other spellings of the data models: platform.machine() names and common aliases. Triples (the ones
# `ireeabi targets` prints) are accepted too; every spelling is matched without regard to case.
ALIASES: Mapping[str, str] = MappingProxyType({
    "amd64": "x86_64", "x64": "x86_64",
    "arm64": "aarch64",
    "x86": "i386", "i486": "i386", "i586": "i386", "i686": "i386",
    "armv7l": "armv7",
    "wasm": "wasm32",
})
_SPELLINGS: Mapping[str, str] = MappingProxyType({
    **{a: n for a, n in ALIASES.items()},
    **{t.triple: n for n, t in TARGETS.items()},
    **{n: n for n in TARGETS},
})


# The architecture field of a target triple (arch[-vendor][-os][-env], what clang and
# iree-compile's --iree-llvmcpu-target-triple take) names the data model, on the ELF/Linux-like
# systems it models (linux, none, unknown, elf, eabi, wasi...). Two OS families lay out C
# differently (clang shows it) and are refused by name: Windows (LLP64 `long`, 8-byte long double,
# IREE's iree_max_align_t rule) and Apple's 64-bit Arm (long double = double).
TRIPLE_ARCHES: Mapping[str, str] = MappingProxyType({
    "x86_64": "x86_64", "amd64": "x86_64", "x86_64h": "x86_64",
    "i386": "i386", "i486": "i386", "i586": "i386", "i686": "i386",
    "aarch64": "aarch64", "arm64": "aarch64",
    "riscv32": "riscv32", "riscv64": "riscv64",
    "wasm32": "wasm32",
})
# 32-bit Arm in any sub-architecture (arm, armv7a, armv7l, armv6, thumbv7m, armv8l...): the AAPCS
# data model ireeabi calls armv7. Big-endian spellings (armeb, aarch64_be...) are not modelled.
_ARM32 = re.compile(r"(arm|thumb)(v[5-9][a-z0-9.]*)?")
_BIG_ENDIAN = re.compile(r"(armeb|thumbeb|aarch64_be|arm64_be|armv[0-9a-z.]*eb|thumbv[0-9a-z.]*eb|"
                         r"mips|mips64|ppc|ppc64|powerpc|powerpc64|sparc|sparcv9|s390x)")


class TripleError(IreeAbiError):
    """A target triple whose architecture (or system) is not one of the modelled data models."""

    def __init__(self, triple: str, arch: str, why: str, suggest: bool = True,
                 field: str = "architecture") -> None:
        self.triple = triple
        self.arch = arch
        known = sorted(set(TRIPLE_ARCHES) | {"arm", "armv7a", "thumbv7"})
        # the whole text may be a misspelt name ("x86-64"), the first field a misspelt arch
        closest = difflib.get_close_matches(triple.lower(), sorted(_SPELLINGS), n=2, cutoff=0.6)
        closest += [a for a in difflib.get_close_matches(arch, known, n=3, cutoff=0.5)
                    if a not in closest]
        hint = f"; closest: {', '.join(closest[:3])}" if closest and suggest else ""
        super().__init__(f"unknown target {triple!r}: its {field} {arch!r} {why}{hint}; "
                         f"valid: {', '.join(names())}, or a triple whose architecture maps to one "
                         f"({triple_arches_text()})")


def triple_model(triple: str) -> str | None:
    """The data model a triple's (or a bare architecture's) first field names, or None."""
    arch = triple.split("-", 1)[0].lower()
    model = TRIPLE_ARCHES.get(arch)
    if model is None and _ARM32.fullmatch(arch):
        model = "armv7"
    return model


def _other_c_layout(triple: str, model: str) -> str:
    """Why the vendor/OS fields of `triple` give C another layout than `model`'s ("" if not)."""
    fields = triple.split("-")[1:]
    if any(f.startswith(("windows", "win32", "msvc", "mingw", "cygwin", "uefi")) for f in fields):
        return ("lays out C for Windows (LLP64 long, long double = double, IREE's Windows "
                "iree_max_align_t), which ireeabi does not model")
    if model == "aarch64" and any(f.startswith(("apple", "darwin", "macos", "ios", "tvos", "watchos",
                                                "xros")) for f in fields):
        return ("lays out C for Apple's arm64 (long double = double), not aarch64's data model "
                "(binary128 long double)")
    return ""


def triple_arches_text() -> str:
    """One line: which triple architectures map to which data model."""
    by_model: dict[str, list[str]] = {}
    for arch, model in TRIPLE_ARCHES.items():
        by_model.setdefault(model, []).append(arch)
    by_model.setdefault("armv7", []).extend(["arm", "armv5..armv8*", "thumbv5..thumbv8*"])
    return "; ".join(f"{'/'.join(arches)} -> {model}" for model, arches in
                     sorted(by_model.items(), key=lambda kv: list(TARGETS).index(kv[0])))


def get(name: "str | Target") -> Target:
    """The data model called `name`: its name, an alias, or a target triple (any triple
    iree-compile takes: its architecture field picks the data model, see TRIPLE_ARCHES); a
    Target passes through."""
    if isinstance(name, Target):
        return name
    if not isinstance(name, str):
        raise IreeAbiError(f"target must be a name, got {type(name).__name__}")
    canonical = _SPELLINGS.get(name.lower()) or triple_model(name)
    if canonical is not None and "-" in name:
        why = _other_c_layout(name.lower(), canonical)
        if why:
            raise TripleError(name, name.split("-", 1)[1], why, suggest=False, field="system")
    if canonical is None:
        arch = name.split("-", 1)[0].lower()
        if "-" not in name:
            raise UnknownTargetError(name)
        if _BIG_ENDIAN.fullmatch(arch):
            raise TripleError(name, arch, "is big-endian (ireeabi models little-endian data models "
                                          "only)", suggest=False)
        raise TripleError(name, arch, "is not one of the modelled data models")
    return TARGETS[canonical]


def names() -> list[str]:
    return list(TARGETS)


class HostError(IreeAbiError):
    """This Python runs on a data model ireeabi does not model."""


def host() -> Target:
    """The data model of the machine this Python runs on (checked against ctypes' pointer size)."""
    import ctypes
    import platform
    import sys

    machine = platform.machine().lower()
    name = _SPELLINGS.get(machine)
    pointer = ctypes.sizeof(ctypes.c_void_p)
    if name in ("x86_64", "i386") and pointer == 4:
        name = "i386"  # a 32-bit Python on a 64-bit kernel
    if name is None:
        raise HostError(f"host machine {machine!r} is not one of the modelled data models")
    t = TARGETS[name]
    if t.pointer_size != pointer or sys.byteorder != t.endian:
        raise HostError(f"host {machine!r}: ctypes pointer size {pointer} / {sys.byteorder} endian does "
                        f"not match target {t.name}")
    return t

