"""C text for declarations: what the oracles compile and what the docs show.

The output is self-contained: the fixed-width and pointer-sized types are typedef'd from the
compiler's predefined macros (`__INT64_TYPE__`, `__UINTPTR_TYPE__`, ...), so it parses with
`-ffreestanding -nostdinc` for any target triple and needs no C library headers.
"""
from __future__ import annotations

from typing import Iterable

from .layout import REST_OF_UNIT, Array, CType, FunctionPointer, Pointer, Scalar, Struct

PRELUDE = """\
typedef __INT8_TYPE__ int8_t;
typedef __UINT8_TYPE__ uint8_t;
typedef __INT16_TYPE__ int16_t;
typedef __UINT16_TYPE__ uint16_t;
typedef __INT32_TYPE__ int32_t;
typedef __UINT32_TYPE__ uint32_t;
typedef __INT64_TYPE__ int64_t;
typedef __UINT64_TYPE__ uint64_t;
typedef __INTPTR_TYPE__ intptr_t;
typedef __UINTPTR_TYPE__ uintptr_t;
typedef __SIZE_TYPE__ size_t;
typedef __PTRDIFF_TYPE__ ptrdiff_t;
#ifndef offsetof
#define offsetof(t, m) __builtin_offsetof(t, m)
#endif
"""


def declarator(t: CType, name: str) -> str:
    """`T name` for any declaration type, arrays and function pointers included."""
    if isinstance(t, Array):
        return declarator(t.elem, f"{name}[{'' if t.count is None else t.count}]")
    if isinstance(t, FunctionPointer):
        # Parameter types may name IREE types unknown here; any function pointer lays out the same.
        return f"void (*{name})(void)"
    if isinstance(t, Pointer):
        # Pointee text may name a type C doesn't know here; layout only needs "a pointer".
        return f"void* {name}" if not _known(t.pointee) else f"{t.pointee}* {name}"
    if isinstance(t, Scalar):
        return f"{t.c_type} {name}"
    if isinstance(t, Struct):
        return f"{t.name} {name}"
    raise TypeError(f"no C declarator for {t!r}")


def _known(pointee: str) -> bool:
    base = pointee.replace("const", "").replace("*", "").strip()
    return base in {"void", "char", "uint8_t", "int8_t", "uint32_t", "int32_t", "uint64_t", "size_t",
                    "uintptr_t"}


def struct_definition(s: Struct) -> str:
    attrs = [a for a in ("packed" if s.packed else "", f"aligned({s.align})" if s.align is not None else "") if a]
    attr = f" __attribute__(({', '.join(attrs)}))" if attrs else ""
    lines = [f"typedef {s.keyword}{attr} {s.name} {{"]
    used = 0  # bits of the current run of bit-fields, for REST_OF_UNIT widths
    for f in s.fields:
        if f.bits is None:
            bits, used = "", 0
        elif f.bits == REST_OF_UNIT:
            bits, used = f" : (sizeof({f.type.c_spelling()}) * 8 - {used})", 0
        else:
            bits, used = f" : {f.bits}", used + f.bits
        attrs = [a for a in ("packed" if f.packed else "",
                             f"aligned({f.align})" if f.align is not None else "") if a]
        attr = f" __attribute__(({', '.join(attrs)}))" if attrs else ""
        if f.anonymous and f.bits is not None:
            # An unnamed bit-field stays unnamed: a name would give it a say in the alignment.
            lines.append(f"  {f.type.c_spelling()}{bits}{attr};")
        else:
            # An anonymous member is written as a named one: the layout is the same.
            lines.append(f"  {declarator(f.type, f.name)}{bits}{attr};")
    lines.append(f"}} {s.name};")
    if s.max_align is not None:
        lines = [f"#pragma pack(push, {s.max_align})", *lines, "#pragma pack(pop)"]
    return "\n".join(lines)


def c_source(decls: Iterable[Struct], *, prelude: bool = True) -> str:
    """Definitions of `decls` and everything they contain, each once, dependencies first."""
    done: set[int] = set()
    out: list[str] = [PRELUDE] if prelude else []
    for d in decls:
        for s in (*d.nested(), d):
            if id(s) not in done:
                done.add(id(s))
                out.append(struct_definition(s))
    return "\n".join(out) + "\n"
