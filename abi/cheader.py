"""Structs from a C header, for any data model: libclang parses the header for the target's triple
and its records become the engine's declarations (`Struct`, `Field`, ...).

Every struct read this way is laid out by the engine and compared with libclang's own record layout
for the same triple (size, alignment and every field's bit offset, nested records included): a
disagreement is a `HeaderError`, never a silent answer. Constructs the engine does not model (zero-width
or unnamed bit-fields, vectors, complex and atomic types, 128-bit integers, ...) are refused with the
line that declares them.

The header is parsed freestanding (`-ffreestanding -nostdinc`): `<stdint.h>`, `<stddef.h>`,
`<stdbool.h>`, `<stdalign.h>` and `<limits.h>`-free code work from the small headers below, built
from the compiler's predefined macros, so no target's C library is needed.
"""
from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any, Sequence

from .cdecl import PRELUDE
from .errors import IreeAbiError, UnknownNameError
from .layout import Array, CType, Field, FunctionPointer, Pointer, Scalar, Struct
from .oracles import Measured, OracleError, clang_index, diff, engine_view
from .targets import Target, get as _get_target


class HeaderError(IreeAbiError):
    """A header that cannot be read into declarations, or whose layout the engine and libclang
    disagree on. The message names the file and line."""


# Freestanding headers: the fixed-width and size types as the compiler defines them for the triple.
_HEADERS = {
    "stdint.h": PRELUDE.split("#ifndef offsetof")[0],
    "stddef.h": PRELUDE.split("#ifndef offsetof")[0] + "#define NULL ((void*)0)\n"
                "#define offsetof(t, m) __builtin_offsetof(t, m)\n",
    "stdbool.h": "#define bool _Bool\n#define true 1\n#define false 0\n",
    "stdalign.h": "#define alignas _Alignas\n#define alignof _Alignof\n",
}
_include_dir: str | None = None


def _freestanding_dir() -> str:
    global _include_dir
    if _include_dir is None:
        d = tempfile.mkdtemp(prefix="ireeabi-freestanding-")
        for name, text in _HEADERS.items():
            guard = "IREEABI_" + re.sub(r"\W", "_", name.upper())
            Path(d, name).write_text(f"#ifndef {guard}\n#define {guard}\n{text}#endif\n")
        _include_dir = d
    return _include_dir


# libclang's canonical scalar kinds -> the engine's C scalar names.
_SCALARS = {
    "BOOL": "_Bool", "CHAR_S": "char", "SCHAR": "signed char", "CHAR_U": "unsigned char",
    "UCHAR": "unsigned char", "SHORT": "short", "USHORT": "unsigned short", "INT": "int",
    "UINT": "unsigned int", "LONG": "long", "ULONG": "unsigned long", "LONGLONG": "long long",
    "ULONGLONG": "unsigned long long", "FLOAT": "float", "DOUBLE": "double",
    "LONGDOUBLE": "long double",
}
_ALIGN_RE = re.compile(r"(?:_Alignas|alignas|aligned)\s*\(\s*(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\s*\)")


def parse_header(path: "str | os.PathLike", target: "Target | str", *,
                 include_dirs: Sequence[str] = (), defines: Sequence[str] = ()) -> dict[str, Struct]:
    """Every struct and union the header (and what it includes) defines, by name: typedef names,
    `struct TAG` / `union TAG` and the bare tag. Each is cross-checked against libclang for the
    target's triple."""
    t = _get_target(target)
    reader = _Reader(Path(path), t, include_dirs, defines)
    return reader.all()


def header_struct(path: "str | os.PathLike", name: str, target: "Target | str", *,
                  include_dirs: Sequence[str] = (), defines: Sequence[str] = ()) -> Struct:
    """The struct or union called `name` (a typedef name, `struct TAG` or a tag) in the header."""
    structs = parse_header(path, target, include_dirs=include_dirs, defines=defines)
    try:
        return structs[name]
    except KeyError:
        raise UnknownNameError(f"struct in {path}", name, sorted(structs)) from None


class _Reader:
    def __init__(self, path: Path, target: Target, include_dirs: Sequence[str],
                 defines: Sequence[str]) -> None:
        try:
            self.ci = ci = clang_index()
        except OracleError as e:
            raise HeaderError(str(e)) from None
        if not path.is_file():
            raise HeaderError(f"{path}: no such header file")
        self.path, self.target = path, target
        args = ["-x", "c", "-std=gnu11", "-target", target.triple, "-ffreestanding", "-nostdinc",
                "-I", _freestanding_dir()]
        for d in include_dirs:
            args += ["-I", str(d)]
        for d in defines:
            args.append(f"-D{d}")
        try:
            self.tu = ci.Index.create().parse(str(path), args=args)
        except ci.TranslationUnitLoadError as e:
            raise HeaderError(f"{path}: libclang could not parse it ({e})") from None
        errors = [d for d in self.tu.diagnostics if d.severity >= ci.Diagnostic.Error]
        if errors:
            raise HeaderError("; ".join(f"{_where(d.location)}: {d.spelling}" for d in errors[:3]))
        self.made: dict[str, Struct] = {}  # record USR (or location) -> declaration
        self.cursors: dict[int, Any] = {}  # id(declaration) -> libclang's record cursor
        self.checked: set[int] = set()

    def all(self) -> dict[str, Struct]:
        ci = self.ci
        out: dict[str, Struct] = {}
        for c in self.tu.cursor.walk_preorder():
            if c.kind in (ci.CursorKind.STRUCT_DECL, ci.CursorKind.UNION_DECL) and c.is_definition() \
                    and c.spelling and not c.is_anonymous() and "(" not in c.spelling:
                s = self.record(c.type)
                keyword = "union" if c.kind == ci.CursorKind.UNION_DECL else "struct"
                out.setdefault(c.spelling, s)
                out[f"{keyword} {c.spelling}"] = s
            elif c.kind == ci.CursorKind.TYPEDEF_DECL:
                under = c.underlying_typedef_type.get_canonical()
                if under.kind == ci.TypeKind.RECORD and under.get_declaration().is_definition():
                    out[c.spelling] = self.record(under, c.spelling)
        for s in set(out.values()):
            self.cross_check(s)
        return out

    # -- declarations ----------------------------------------------------------------------------

    def record(self, rtype: Any, name: str | None = None, hint: str = "") -> Struct:
        """The declaration of a record type: named by `name` (a typedef), else its tag, else `hint`
        (parent_member, for unnamed nested records: a C identifier, so its C text still compiles)."""
        ci = self.ci
        decl = rtype.get_canonical().get_declaration()
        key = decl.get_usr() or f"{_where(decl.location)}"
        if key in self.made:
            return self.made[key]
        is_union = decl.kind == ci.CursorKind.UNION_DECL
        children = list(decl.get_children())
        packed = any(c.kind == ci.CursorKind.PACKED_ATTR for c in children)
        align = None
        if any(c.kind == ci.CursorKind.ALIGNED_ATTR for c in children):
            # aligned(N) on the type only raises its alignment: libclang's is the explicit one.
            align = rtype.get_canonical().get_align()
        if name is None:
            name = decl.spelling if decl.spelling and "(" not in decl.spelling else hint or "anonymous"
        fields: list[Field] = []
        anon = 0
        for f in decl.type.get_fields():
            fname = f.spelling
            anonymous = not fname.isidentifier()
            if anonymous:
                fname, anon = f"__anonymous{anon}", anon + 1
            fields.append(self.field(f, fname, anonymous, f"{name}_{fname.strip('_')}"))
        try:
            s = Struct(name, fields, is_union=is_union, packed=packed, align=align)
        except IreeAbiError as e:
            raise HeaderError(f"{_where(decl.location)}: {e}") from None
        self.made[key] = s
        self.cursors[id(s)] = decl
        return s

    def field(self, f: Any, name: str, anonymous: bool, hint: str) -> Field:
        ci = self.ci
        bits = None
        if f.is_bitfield():
            bits = f.get_bitfield_width()
            if bits == 0 or not f.spelling:
                raise HeaderError(f"{_where(f.location)}: unnamed and zero-width bit-fields are not modelled")
        attrs = [c for c in f.get_children() if c.kind.is_attribute()]
        packed = any(c.kind == ci.CursorKind.PACKED_ATTR for c in attrs)
        align = None
        if any(c.kind == ci.CursorKind.ALIGNED_ATTR for c in attrs):
            # _Alignas is in the member's own tokens, a trailing __attribute__ in the attribute's; a
            # macro (stdalign.h's alignas) leaves no tokens, so the declaring lines are read too.
            text = " ".join(t.spelling for c in (f, *attrs) for t in c.get_tokens()) + " " + _source_lines(f)
            found = _ALIGN_RE.findall(text)
            if not found:
                raise HeaderError(f"{_where(f.location)}: {f.spelling}: only integer-literal alignments "
                                  f"(alignas(N), __attribute__((aligned(N)))) are modelled: {text!r}")
            align = max(int(v, 0) for v in found)
        ctype = self.ctype(f.type, f, hint)
        return Field(name, ctype, bits, align=align, packed=packed, anonymous=anonymous)

    def ctype(self, t: Any, where: Any, hint: str = "") -> CType:
        ci = self.ci
        K = ci.TypeKind
        canon = t.get_canonical()
        k = canon.kind
        spelled = t.spelling
        if spelled in self.target.scalars and k.name in _SCALARS:  # uint64_t, size_t...: as named
            return Scalar(spelled)
        if k.name in _SCALARS:
            return Scalar(_SCALARS[k.name], spelled if spelled != _SCALARS[k.name] else None)
        if k == K.ENUM:
            under = canon.get_declaration().enum_type.get_canonical()
            if under.kind.name not in _SCALARS:
                raise HeaderError(f"{_where(where.location)}: enum {t.spelling}: underlying type "
                                  f"{under.spelling} is not modelled")
            return Scalar(_SCALARS[under.kind.name], t.spelling)
        if k == K.POINTER:
            pointee = canon.get_pointee()
            if pointee.kind in (K.FUNCTIONPROTO, K.FUNCTIONNOPROTO):
                ret = pointee.get_result().spelling
                params = ", ".join(a.spelling for a in pointee.argument_types()) \
                    if pointee.kind == K.FUNCTIONPROTO else ""
                alias = t.spelling if t.kind in (K.TYPEDEF, K.ELABORATED) else None
                return FunctionPointer(ret, params or "void", alias)
            return Pointer(t.get_pointee().spelling if t.kind == K.POINTER else pointee.spelling)
        if k in (K.CONSTANTARRAY, K.INCOMPLETEARRAY):
            arr = t if t.kind == k else canon  # the element as spelled (its typedef) where visible
            return Array(self.ctype(arr.element_type, where, hint),
                         canon.element_count if k == K.CONSTANTARRAY else None)
        if k == K.RECORD:
            alias = t.spelling if t.kind == K.TYPEDEF else None
            return self.record(canon, alias if alias and alias.isidentifier() else None, hint)
        raise HeaderError(f"{_where(where.location)}: {where.spelling}: type {t.spelling} "
                          f"({k.name.lower()}) is not modelled")

    # -- the cross-check -------------------------------------------------------------------------

    def cross_check(self, s: Struct) -> None:
        """The engine's layout of `s` and its nested records against libclang's, for the triple."""
        for n in (*s.nested(), s):
            if id(n) in self.checked:
                continue
            self.checked.add(id(n))
            decl = self.cursors[id(n)]
            rtype = decl.type
            measured = Measured(rtype.get_size(), rtype.get_align())
            _clang_fields(self.ci, rtype, "", 0, measured)
            problems = diff(engine_view(n.layout(self.target)), measured)
            if problems:
                raise HeaderError(f"{_where(decl.location)}: {n.name}: the engine and libclang "
                                  f"({self.target.triple}) disagree: {'; '.join(problems[:4])}")


def _clang_fields(ci: Any, rtype: Any, prefix: str, base_bits: int, m: Measured) -> None:
    """libclang's bit offsets under the engine's field names (anonymous members numbered as
    `_Reader.record` numbers them)."""
    anon = 0
    for f in rtype.get_fields():
        name = f.spelling
        if not name.isidentifier():
            name, anon = f"__anonymous{anon}", anon + 1
        path = prefix + name
        bits = base_bits + f.get_field_offsetof()
        m.bit_offsets[path] = bits
        ft = f.type.get_canonical()
        if ft.kind == ci.TypeKind.RECORD:
            _clang_fields(ci, ft, path + ".", bits, m)


def _source_lines(cursor: Any) -> str:
    start, end = cursor.extent.start, cursor.extent.end
    if start.file is None:
        return ""
    try:
        lines = Path(start.file.name).read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return " ".join(lines[start.line - 1:end.line])


def _where(location: Any) -> str:
    file = location.file.name if location.file else "<header>"
    return f"{file}:{location.line}"


__all__ = ["HeaderError", "header_struct", "parse_header"]
