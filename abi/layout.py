"""Struct layout engine: declare a C struct once, lay it out on any data model.

A declaration is target-independent (`Struct`, `Union`, `Field`, `Scalar`, `Pointer`, ...); `layout(t)`
computes offsets, holes and tail padding with the C rules of target `t` (SysV-style, which all seven
targets follow, with the AAPCS difference for unnamed bit-fields on armv7 and aarch64: see
`UNNAMED_BITFIELDS_ALIGN`). Padding is never implied: every byte of `size` is a field, a hole or tail padding.
The ctypes and construct views of the same layout live in `views.py`; C text for the oracles in
`cdecl.py`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Final, Iterator, Literal, NamedTuple, Sequence

from .errors import LayoutError
from .targets import Target, get as _get_target


def align_up(value: int, alignment: int) -> int:
    """Round `value` up to a multiple of `alignment` (any positive integer, as C's layout does)."""
    return -(-value // alignment) * alignment


# --------------------------------------------------------------------------------------------------
# Declarations


class CType:
    """A C type in a declaration. Subclasses are immutable and hashable."""

    def c_spelling(self) -> str:
        raise NotImplementedError

    def display(self) -> str:
        return self.c_spelling()


@dataclass(frozen=True)
class Scalar(CType):
    """A C scalar (`int32_t`, `size_t`, `double`, ...). `alias` is the IREE name shown to people."""

    c_type: str
    alias: str | None = None

    def c_spelling(self) -> str:
        return self.c_type

    def display(self) -> str:
        return self.alias or self.c_type


@dataclass(frozen=True)
class Pointer(CType):
    """A data pointer; `pointee` is C text used for C generation and display only."""

    pointee: str = "void"

    def c_spelling(self) -> str:
        return f"{self.pointee}*"


@dataclass(frozen=True)
class FunctionPointer(CType):
    """A function pointer: `ret (*)(params)`."""

    ret: str = "void"
    params: str = "void"
    alias: str | None = None

    def c_spelling(self) -> str:
        return f"{self.ret} (*)({self.params})"

    def display(self) -> str:
        return self.alias or self.c_spelling()


@dataclass(frozen=True)
class Array(CType):
    """`elem[count]`; `count=None` is a C99 flexible array member (last field only)."""

    elem: CType
    count: int | None

    def _dims(self) -> tuple[CType, str]:
        """The innermost element and the dimensions outermost first (C writes `T x[2][3]` for an
        array of 2 arrays of 3)."""
        dims = ""
        t: CType = self
        while isinstance(t, Array):
            dims += f"[{'' if t.count is None else t.count}]"
            t = t.elem
        return t, dims

    def c_spelling(self) -> str:
        elem, dims = self._dims()
        return f"{elem.c_spelling()}{dims}"

    def display(self) -> str:
        elem, dims = self._dims()
        return f"{elem.display()}{dims}"


REST_OF_UNIT: Final = "rest"  # bit-field width: the rest of its storage unit (C: sizeof(T) * 8 - used)

# Data models whose unnamed bit-fields (`int : 3;`, `int : 0;`) raise the struct's alignment to
# their type's, as named ones do: AAPCS and AAPCS64 give every bit-field's container type a say.
# Elsewhere (SysV x86, i386, RISC-V, wasm32) an unnamed bit-field places bits but adds no alignment.
# Measured with gcc and the cross compilers (tests/abi/test_cheader_features.py).
UNNAMED_BITFIELDS_ALIGN = frozenset({"armv7", "aarch64"})


class Field(NamedTuple):
    name: str
    type: CType
    bits: "int | Literal['rest'] | None" = None  # bit-field width (or REST_OF_UNIT); needs an integer Scalar
    doc: str = ""
    align: int | None = None  # _Alignas(N) / __attribute__((aligned(N))): at least N-aligned
    packed: bool = False  # __attribute__((packed)) on the member: 1-aligned (before `align`)
    # A member C declares without a name; `name` is the engine's own: a C11 anonymous struct/union
    # member, or an unnamed bit-field (`int : 3;` reserved bits, or `int : 0;`, which holds no bits:
    # it only moves the next bit-field to a new unit of its type and is no field of the layout).
    anonymous: bool = False


@dataclass(frozen=True, eq=False)
class Struct(CType):
    """A named C struct (or union with `is_union=True`). Identity-hashed: one object per declaration."""

    name: str
    fields: tuple[Field, ...]
    is_union: bool = False
    doc: str = ""
    packed: bool = False  # __attribute__((packed)): every member 1-aligned, bit-fields back to back
    align: int | None = None  # __attribute__((aligned(N))) / alignas on the type: at least N-aligned
    # `#pragma pack(N)` in force at the definition: every member at most N-aligned, explicit
    # alignments included, and bit-fields back to back (zero-width ones keep their type's alignment).
    max_align: int | None = None

    def __init__(self, name: str, fields: Sequence[Field | tuple], *, is_union: bool = False,
                 doc: str = "", packed: bool = False, align: int | None = None,
                 max_align: int | None = None) -> None:
        fs = tuple(f if isinstance(f, Field) else Field(*f) for f in fields)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "fields", fs)
        object.__setattr__(self, "is_union", is_union)
        object.__setattr__(self, "doc", doc)
        object.__setattr__(self, "packed", packed)
        object.__setattr__(self, "align", align)
        object.__setattr__(self, "max_align", max_align)
        _validate_decl(self)

    @property
    def keyword(self) -> str:
        return "union" if self.is_union else "struct"

    def c_spelling(self) -> str:
        return self.name

    def display(self) -> str:
        return self.name

    def layout(self, target: "Target | str") -> "StructLayout":
        return layout_of(self, _get_target(target))

    def nested(self) -> Iterator["Struct"]:
        """Every struct this one contains (depth first, dependencies before dependents)."""
        seen: set[int] = set()

        def walk(s: Struct) -> Iterator[Struct]:
            for f in s.fields:
                t = f.type
                while isinstance(t, Array):
                    t = t.elem
                if isinstance(t, Struct) and id(t) not in seen:
                    seen.add(id(t))
                    yield from walk(t)
                    yield t

        return walk(self)


def Union(name: str, fields: Sequence[Field | tuple], *, doc: str = "", packed: bool = False,  # noqa: N802
          align: int | None = None, max_align: int | None = None) -> Struct:
    return Struct(name, fields, is_union=True, doc=doc, packed=packed, align=align, max_align=max_align)


def _is_alignment(value: object) -> bool:
    return type(value) is int and value > 0 and not value & (value - 1)


def _validate_decl(s: Struct) -> None:
    names = set()
    for i, f in enumerate(s.fields):
        if not f.name or not f.name.isidentifier():
            raise LayoutError(f"{s.name}: field {i} has no valid C name ({f.name!r})")
        if f.name in names:
            raise LayoutError(f"{s.name}: field {f.name!r} declared twice")
        names.add(f.name)
        if isinstance(f.type, Array) and f.type.count is None:
            if i != len(s.fields) - 1 or s.is_union:
                raise LayoutError(f"{s.name}.{f.name}: a flexible array must be the last struct field")
        if isinstance(f.type, Array) and f.type.count is not None and f.type.count < 0:
            raise LayoutError(f"{s.name}.{f.name}: negative array length")
        if f.bits is not None:
            ok_width = f.bits == REST_OF_UNIT or (isinstance(f.bits, int) and f.bits > 0) \
                or (f.bits == 0 and f.anonymous)  # C: only an unnamed bit-field may be 0 wide
            if not isinstance(f.type, Scalar) or not ok_width:
                raise LayoutError(f"{s.name}.{f.name}: a bit-field needs an integer scalar and a width "
                                  "> 0 (0 for an unnamed one)")
        if f.align is not None and (not _is_alignment(f.align) or f.bits is not None):
            raise LayoutError(f"{s.name}.{f.name}: an explicit alignment must be a power of two on a "
                              f"member that is not a bit-field, got {f.align!r}")
    if s.align is not None and not _is_alignment(s.align):
        raise LayoutError(f"{s.name}: an explicit alignment must be a power of two, got {s.align!r}")
    if s.max_align is not None and not _is_alignment(s.max_align):
        raise LayoutError(f"{s.name}: a #pragma pack value must be a power of two, got {s.max_align!r}")
    if not s.fields:
        raise LayoutError(f"{s.name}: an empty struct has no C layout")


# --------------------------------------------------------------------------------------------------
# Layouts


class FieldLayout(NamedTuple):  # NamedTuple: cheap to build on the cconv first-layout path
    """One member of a struct layout: `offset` (bytes from the struct's start), `size` and `align` of
    its type.

    A bit-field (`bits` is its width) is its declared type's storage unit plus a bit range in it:
    `offset`, `size`, `align` are the unit's (for a packed struct or member, `offset` is the byte
    holding its first bit), and the field's bits are `bits` bits from bit `bit_offset` on, counting
    from bit 0 = the least significant bit of the byte at `offset` (every modelled target is little
    endian); `first_bit` is that bit counted from the struct's start, `byte_span` the bytes the bits
    touch. `ireeabi layout --json` gives bit-fields the same keys with the same meaning.
    """

    name: str
    offset: int
    size: int  # bytes; for a bit-field, its storage unit's size
    align: int
    type: CType
    bit_offset: int | None = None  # bit-fields: from the least significant bit at `offset`
    bits: int | None = None
    flexible: bool = False

    @property
    def end(self) -> int:
        return self.offset + self.size

    @property
    def first_bit(self) -> int | None:
        """A bit-field's first (least significant) bit, counted from the struct's start (None for
        other fields)."""
        return None if self.bits is None or self.bit_offset is None else self.offset * 8 + self.bit_offset

    @property
    def byte_span(self) -> tuple[int, int]:
        """[first, end) bytes holding this field's bits (for a bit-field, not its whole unit)."""
        if self.bits is None or self.bit_offset is None:
            return self.offset, self.end
        first_bit = self.offset * 8 + self.bit_offset
        return first_bit // 8, -(-(first_bit + self.bits) // 8)

    @property
    def type_name(self) -> str:
        return self.type.display() + (f":{self.bits}" if self.bits is not None else "")


class Padding(NamedTuple):
    offset: int
    size: int
    kind: str  # "hole" (between fields) or "tail"

    @property
    def end(self) -> int:
        return self.offset + self.size


@dataclass(frozen=True)
class StructLayout:
    decl: Struct
    target: Target
    size: int
    align: int
    fields: tuple[FieldLayout, ...]
    padding: tuple[Padding, ...]

    @property
    def name(self) -> str:
        return self.decl.name

    def field(self, name: str) -> FieldLayout:
        for f in self.fields:
            if f.name == name:
                return f
        from .errors import UnknownNameError
        raise UnknownNameError(f"field of {self.name}", name, [f.name for f in self.fields])

    def offsetof(self, path: str) -> int:
        """Offset of a dotted field path (`mapping.contents.data`)."""
        lay: StructLayout = self
        total = 0
        parts = path.split(".")
        for i, part in enumerate(parts):
            f = lay.field(part)
            total += f.offset
            if i < len(parts) - 1:
                if not isinstance(f.type, Struct):
                    raise LayoutError(f"{self.name}.{'.'.join(parts[:i + 1])} is not a struct")
                lay = f.type.layout(self.target)
        return total

    def walk(self, prefix: str = "", base: int = 0) -> Iterator[tuple[str, FieldLayout, int, int]]:
        """Depth-first (path, field, absolute offset, depth) over nested structs."""
        depth = prefix.count(".") if prefix else 0
        for f in self.fields:
            path = f"{prefix}{f.name}"
            yield path, f, base + f.offset, depth
            if isinstance(f.type, Struct):
                yield from f.type.layout(self.target).walk(path + ".", base + f.offset)

    @property
    def flexible(self) -> FieldLayout | None:
        return self.fields[-1] if self.fields and self.fields[-1].flexible else None


def _member_align(decl: Struct, f: Field, natural: int) -> int:
    """A member's alignment in `decl`: 1 when packed (the struct or the member), raised to an
    explicit alignment (which packing does not lower), capped by `#pragma pack` (which caps explicit
    alignments too)."""
    a = 1 if decl.packed or f.packed else natural
    a = a if f.align is None or f.align <= a else f.align
    return a if decl.max_align is None or a <= decl.max_align else decl.max_align


def size_align(t: CType, target: Target) -> tuple[int, int]:
    """sizeof and in-struct alignment of a type (a flexible array has size 0)."""
    if isinstance(t, Scalar):
        info = target.scalar(t.c_type)
        return info.size, info.align
    if isinstance(t, (Pointer, FunctionPointer)):
        return target.pointer_size, target.pointer_size
    if isinstance(t, Array):
        es, ea = size_align(t.elem, target)
        return es * (t.count or 0), ea
    if isinstance(t, Struct):
        lay = layout_of(t, target)
        return lay.size, lay.align
    raise LayoutError(f"cannot lay out {t!r}")


@lru_cache(maxsize=None)
def layout_of(decl: Struct, target: Target) -> StructLayout:
    """Lay out `decl` on `target` (cached per declaration and target)."""
    fields: list[FieldLayout] = []
    align = 1
    if decl.is_union:
        size = 0
        unnamed_align = target.name in UNNAMED_BITFIELDS_ALIGN
        for f in decl.fields:
            fs, natural = size_align(f.type, target)
            fa = _member_align(decl, f, natural)
            if f.bits is None:
                fields.append(FieldLayout(f.name, 0, fs, fa, f.type))
                size = max(size, fs)
                align = max(align, fa)
                continue
            width = fs * 8 if f.bits == REST_OF_UNIT else f.bits
            if width > fs * 8:
                raise LayoutError(f"{decl.name}.{f.name}: bit-field wider than {f.type.display()}")
            if width == 0:  # holds no bits; its type's alignment counts on AAPCS only
                if unnamed_align:
                    align = max(align, natural)
                continue
            # A union's bit-field takes the bytes its bits touch (its unit's alignment aside).
            fields.append(FieldLayout(f.name, 0, fs, fa, f.type, 0, width))
            size = max(size, -(-width // 8))
            if not f.anonymous or unnamed_align:
                align = max(align, fa)
    else:
        bit = 0  # current position in bits; bit-fields share storage units
        unnamed_align = target.name in UNNAMED_BITFIELDS_ALIGN
        for f in decl.fields:
            fs, natural = size_align(f.type, target)
            fa = _member_align(decl, f, natural)
            if f.bits is not None:
                unit = fs * 8
                width = unit - bit % unit if f.bits == REST_OF_UNIT else f.bits
                if width > unit:
                    raise LayoutError(f"{decl.name}.{f.name}: bit-field wider than {f.type.display()}")
                if width == 0:
                    # Starts a new unit of its type, whatever packs the struct; holds no bits.
                    bit = align_up(bit, natural * 8)
                    if unnamed_align and natural > align:
                        align = natural
                    continue
                if decl.packed or f.packed or decl.max_align is not None:
                    # Back to back, located from the byte of its first bit (#pragma pack: its unit
                    # still counts, capped, for the struct's alignment).
                    fields.append(FieldLayout(f.name, bit // 8, fs, 1, f.type, bit % 8, width))
                    bit += width
                else:
                    # A bit-field may not span more units of its type's alignment than its type
                    # does (gcc's PCC_BITFIELD_TYPE_MATTERS; 4-aligned 64-bit units on i386).
                    if bit % (fa * 8) + width > unit:
                        bit = align_up(bit, fa * 8)
                    unit_offset = (bit // unit) * fs  # the naturally aligned unit holding it...
                    if bit + width > (unit_offset + fs) * 8:  # ...or i386's 4-aligned 64-bit one
                        unit_offset = bit // (fa * 8) * fa
                    fields.append(FieldLayout(f.name, unit_offset, fs, fa, f.type, bit - unit_offset * 8, width))
                    bit += width
                if f.anonymous and not unnamed_align:
                    continue  # reserved bits: no say in the struct's alignment here
            else:
                offset = align_up(-(-bit // 8), fa)
                flexible = isinstance(f.type, Array) and f.type.count is None
                fields.append(FieldLayout(f.name, offset, fs, fa, f.type, None, None, flexible))
                bit = (offset + fs) * 8
            if fa > align:
                align = fa
        size = -(-bit // 8)
    if decl.align is not None and decl.align > align:
        align = decl.align
    size = align_up(size, align)
    return StructLayout(decl, target, size, align, tuple(fields), _padding(fields, size, decl.is_union))


def _padding(fields: Sequence[FieldLayout], size: int, is_union: bool) -> tuple[Padding, ...]:
    """Every byte range that holds no bit of any field."""
    spans = sorted(f.byte_span for f in fields)
    last_end = max((hi for _, hi in spans), default=0)
    out: list[Padding] = []
    pos = 0
    for lo, hi in spans + [(size, size)]:
        if lo > pos:
            out.append(Padding(pos, lo - pos, "tail" if pos >= last_end or is_union else "hole"))
        pos = max(pos, hi)
    return tuple(out)
