"""Structs from a C header, for any data model: libclang parses the header for the target's triple
and its records become the engine's declarations (`Struct`, `Field`, ...).

Every struct read this way is laid out by the engine and compared with libclang's own record layout
for the same triple (size, alignment and every field's bit offset, each record against its own
layout, nested ones included): a disagreement is a `HeaderError`, never a silent answer. Constructs
the engine does not model (zero-width or unnamed bit-fields, vectors, complex and atomic types,
128-bit integers, ...) are refused with the line that declares them.

The header is parsed freestanding (`-ffreestanding -nostdinc`): `<stdint.h>`, `<stddef.h>`,
`<stdbool.h>`, `<stdalign.h>` and `<limits.h>`-free code work from the small headers below, built
from the compiler's predefined macros, so no target's C library is needed.

libclang runs in a child process (`bounded.call_bounded`) under a memory and a time bound: a header
it crashes on (a macro expanding to a million terms), grows without end on (`#include "/dev/zero"`)
or spends forever on ends in one `HeaderError` naming the file. The work is linear in the header:
the declarations are walked once each (libclang's cursor tree reaches a nested record's definition
twice, once as a member of its parent and once through the declarator using it: a naive walk is
exponential in the nesting), expressions (array bounds, bit widths) are not walked, arrays are
laid out by count, and field offsets come from one probe parse of `__builtin_offsetof` expressions
(libclang's own offset query re-validates the whole record for every field: quadratic in the
member count), except for bit-fields and anonymous members, which offsetof cannot name, under a
budget of the work libclang's query does.
"""
from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any, Iterator, NamedTuple, Sequence

from .bounded import ChildCrashed, ChildOutOfMemory, ChildTimedOut, call_bounded
from .cdecl import PRELUDE
from .errors import IreeAbiError, UnknownNameError
from .layout import Array, CType, Field, FunctionPointer, Pointer, Scalar, Struct
from .oracles import Measured, OracleError, clang_index, diff
from .targets import Target, get as _get_target

MEMORY_BYTES = 2 << 30  # address space libclang may take above the caller's (IREE's headers: < 200 MiB)
SECONDS = 300.0  # a backstop: an ordinary header takes well under a second
MAX_NESTING = 128  # records inside records (C11 5.2.4.1 asks for 63)
# Fields libclang's offset query may re-validate in all (it walks the field's whole record, nested
# records included, on every call): bit-fields and anonymous members only; ~0.3 s of its time.
OFFSET_QUERY_BUDGET = 20_000_000
_PROBE = "__ireeabi_offset_"


class HeaderError(IreeAbiError):
    """A header that cannot be read into declarations, or whose layout the engine and libclang
    disagree on. The message names the file and line."""


class HeaderReading(NamedTuple):
    """`read_header`'s answer: the structs by name and the work reading them took."""

    structs: dict[str, Struct]
    cursors: int  # declaration cursors the walk visited
    records: int  # distinct records read into declarations
    offset_query_fields: int  # fields libclang's own offset queries validated (see OFFSET_QUERY_BUDGET)
    probes: int  # offsets measured by the probe parse


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
_NAMEABLE_RE = re.compile(r"(?:(?:struct|union) )?[A-Za-z_]\w*")
# libclang's CXTypeLayoutError codes.
_LAYOUT_ERRORS = {-1: "invalid", -2: "incomplete", -3: "dependent", -4: "not of constant size",
                  -5: "an invalid field name", -6: "undeduced"}


def read_header(path: "str | os.PathLike", target: "Target | str", *, include_dirs: Sequence[str] = (),
                defines: Sequence[str] = (), memory_bytes: int = MEMORY_BYTES,
                seconds: float = SECONDS) -> HeaderReading:
    """`parse_header`'s structs with the work counts, read in a child process bounded to
    `memory_bytes` of address space above this one's and `seconds` of wall time."""
    t = _get_target(target)
    p = Path(path)
    if not p.is_file():
        raise HeaderError(f"{p}: no such header file")
    _load_libclang()
    try:
        return call_bounded(_read, p, t, tuple(map(str, include_dirs)), tuple(defines),
                            _freestanding_dir(), memory_bytes=memory_bytes, seconds=seconds)
    except ChildOutOfMemory as e:
        raise HeaderError(f"{p}: libclang exceeded the memory bound of {e.limit_bytes >> 20} MiB "
                          "reading it") from None
    except ChildTimedOut as e:
        raise HeaderError(f"{p}: libclang ran past the time bound of {e.seconds:g} s reading it") from None
    except ChildCrashed as e:
        raise HeaderError(f"{p}: libclang crashed ({e.signal_name}) reading it") from None


def _load_libclang() -> None:
    """Map libclang into this process (nothing of it runs here): each child then inherits it instead
    of loading it again (15-60 ms a child on a loaded machine)."""
    try:
        clang_index().conf.lib
    except OracleError as e:
        raise HeaderError(str(e)) from None
    except Exception as e:  # noqa: BLE001 - the bindings' LibclangError and the loader's OSError
        raise HeaderError(f"libclang could not be loaded: {' '.join(str(e).split())}") from None


def parse_header(path: "str | os.PathLike", target: "Target | str", *,
                 include_dirs: Sequence[str] = (), defines: Sequence[str] = ()) -> dict[str, Struct]:
    """Every struct and union the header (and what it includes) defines, by name: typedef names,
    `struct TAG` / `union TAG` and the bare tag. Each is cross-checked against libclang for the
    target's triple."""
    return read_header(path, target, include_dirs=include_dirs, defines=defines).structs


def header_struct(path: "str | os.PathLike", name: str, target: "Target | str", *,
                  include_dirs: Sequence[str] = (), defines: Sequence[str] = ()) -> Struct:
    """The struct or union called `name` (a typedef name, `struct TAG` or a tag) in the header."""
    structs = parse_header(path, target, include_dirs=include_dirs, defines=defines)
    try:
        return structs[name]
    except KeyError:
        raise UnknownNameError(f"struct in {path}", name, sorted(structs)) from None


def _read(path: Path, target: Target, include_dirs: tuple[str, ...], defines: tuple[str, ...],
          freestanding: str) -> HeaderReading:
    """The child's side of `read_header`: every failure is a one-line `HeaderError`."""
    reader = None
    try:
        reader = _Reader(path, target, include_dirs, defines, freestanding)
        structs = reader.all()
        return HeaderReading(structs, reader.cursors, len(reader.made), reader.offset_query_fields,
                             reader.probe_count)
    except IreeAbiError:
        raise
    except MemoryError:
        raise
    except RecursionError:
        raise HeaderError(f"{_here(reader, path)}: nested too deeply to read") from None
    except Exception as e:  # noqa: BLE001 - libclang's bindings raise bare Exception, ValueError, ...
        detail = " ".join(str(e).split()) or type(e).__name__
        raise HeaderError(f"{_here(reader, path)}: libclang failed: {detail}") from None


def _here(reader: "_Reader | None", path: Path) -> str:
    try:
        return _where(reader.at.location) if reader is not None and reader.at is not None else str(path)
    except Exception:  # noqa: BLE001 - the location itself is what failed
        return str(path)


class _Reader:
    def __init__(self, path: Path, target: Target, include_dirs: Sequence[str],
                 defines: Sequence[str], freestanding: str) -> None:
        try:
            self.ci = clang_index()
        except OracleError as e:
            raise HeaderError(str(e)) from None
        self.path, self.target = path, target
        self.at: Any = None  # the cursor being read, for errors libclang's bindings raise
        self.args = ["-x", "c", "-std=gnu11", "-target", target.triple, "-ffreestanding", "-nostdinc",
                     "-I", freestanding]
        for d in include_dirs:
            self.args += ["-I", str(d)]
        for d in defines:
            self.args.append(f"-D{d}")
        self.tu = self._parse(str(path))
        self.made: dict[str, Struct] = {}  # record USR (or location) -> declaration
        self.decls: dict[int, Any] = {}  # id(declaration) -> libclang's record cursor
        self.field_cursors: dict[int, list[Any]] = {}  # id(declaration) -> its fields' cursors
        self.links: dict[int, tuple[str, Any, str | None]] = {}  # id -> (parent key, member, designator)
        self.typedef_names: dict[int, str] = {}  # id -> a file-scope typedef naming it
        self.checked: set[int] = set()
        self.depth = 0  # records being read inside one another now
        self.nesting: dict[int, int] = {}  # id(declaration) -> levels of records it holds, itself included
        self._lines: dict[str, list[str]] = {}
        self.cursors = self.offset_query_fields = self.probe_count = 0
        self._query_fields: dict[int, int] = {}  # id -> fields libclang's offset query walks
        self._access_memo: dict[int, tuple[str, str, tuple] | None] = {}
        self._probes: dict[tuple[str, str], int] = {}  # (type, designator) -> probe index
        self._queried: dict[Any, int] = {}  # member cursor -> libclang's offset query's answer

    def _parse(self, name: str, unsaved: list[tuple[str, bytes]] | None = None) -> Any:
        ci = self.ci
        try:
            tu = ci.Index.create().parse(name, args=self.args, unsaved_files=unsaved)
        except ci.TranslationUnitLoadError as e:
            raise HeaderError(f"{self.path}: libclang could not parse it ({e})") from None
        errors = [d for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
        if errors:
            raise HeaderError("; ".join(f"{_where(d.location)}: {d.spelling}" for d in errors[:3]))
        return tu

    def _declarations(self) -> Iterator[Any]:
        """The translation unit's cursors in preorder, without expressions (nothing there declares a
        record in a header, and a macro can make one a million nodes deep) and with each record
        definition once (it is also a child of the declarator that defines it)."""
        ci = self.ci
        records = (ci.CursorKind.STRUCT_DECL, ci.CursorKind.UNION_DECL)
        field = ci.CursorKind.FIELD_DECL
        seen: set[Any] = set()
        stack = [iter(self.tu.cursor.get_children())]
        while stack:
            c = next(stack[-1], None)
            if c is None:
                stack.pop()
                continue
            self.at = c
            self.cursors += 1
            kind = c.kind
            if kind.is_expression():
                continue
            if kind in records:
                if c in seen:
                    continue
                seen.add(c)
            yield c
            if kind != field:  # a member's own record definition is also its record's child
                stack.append(iter(c.get_children()))

    def all(self) -> dict[str, Struct]:
        ci = self.ci
        out: dict[str, Struct] = {}
        for c in self._declarations():
            if c.kind in (ci.CursorKind.STRUCT_DECL, ci.CursorKind.UNION_DECL) and c.is_definition() \
                    and c.spelling and not c.is_anonymous() and "(" not in c.spelling:
                s = self.record(c.type)
                keyword = "union" if c.kind == ci.CursorKind.UNION_DECL else "struct"
                out.setdefault(c.spelling, s)
                out[f"{keyword} {c.spelling}"] = s
            elif c.kind == ci.CursorKind.TYPEDEF_DECL:
                under = c.underlying_typedef_type.get_canonical()
                if under.kind == ci.TypeKind.RECORD and under.get_declaration().is_definition():
                    s = out[c.spelling] = self.record(under, c.spelling)
                    if c.semantic_parent.kind == ci.CursorKind.TRANSLATION_UNIT:
                        self.typedef_names.setdefault(id(s), c.spelling)
        self.cross_check(set(out.values()))
        return out

    # -- declarations ----------------------------------------------------------------------------

    def record(self, rtype: Any, name: str | None = None, hint: str = "",
               link: tuple[str, Any, str | None] | None = None) -> Struct:
        """The declaration of a record type: named by `name` (a typedef), else its tag, else `hint`
        (parent_member, for unnamed nested records: a C identifier, so its C text still compiles).
        `link`: the member of a record being read that reaches it (parent, member cursor, offsetof
        designator or None for an anonymous member), how offsetof names its fields."""
        ci = self.ci
        decl = rtype.get_canonical().get_declaration()
        key = decl.get_usr() or f"{_where(decl.location)}"
        if key in self.made:
            return self.made[key]
        self.at = decl
        if self.depth >= MAX_NESTING:
            raise HeaderError(f"{_where(decl.location)}: records nested more than {MAX_NESTING} deep "
                              "are not modelled")
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
        cursors = list(decl.type.get_fields())
        anon = 0
        self.depth += 1
        try:
            for f in cursors:
                self.at = f
                fname = f.spelling
                anonymous = not fname.isidentifier()
                if anonymous:
                    fname, anon = f"__anonymous{anon}", anon + 1
                fields.append(self.field(f, fname, anonymous, f"{name}_{fname.strip('_')}", key))
        finally:
            self.depth -= 1
        nesting = 1 + max((self.nesting[id(t)] for t in map(_record_in, fields) if t is not None), default=0)
        if nesting > MAX_NESTING:  # a chain of records declared one after the other
            raise HeaderError(f"{_where(decl.location)}: records nested more than {MAX_NESTING} deep "
                              "are not modelled")
        try:
            s = Struct(name, fields, is_union=is_union, packed=packed, align=align)
        except IreeAbiError as e:
            raise HeaderError(f"{_where(decl.location)}: {e}") from None
        self.nesting[id(s)] = nesting
        self.made[key] = s
        self.decls[id(s)] = decl
        self.field_cursors[id(s)] = cursors
        if link is not None:
            self.links[id(s)] = link
        return s

    def field(self, f: Any, name: str, anonymous: bool, hint: str, parent_key: str) -> Field:
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
            text = " ".join(t.spelling for c in (f, *attrs) for t in c.get_tokens()) + " " + self._source_lines(f)
            found = _ALIGN_RE.findall(text)
            if not found:
                raise HeaderError(f"{_where(f.location)}: {f.spelling}: only integer-literal alignments "
                                  f"(alignas(N), __attribute__((aligned(N)))) are modelled: {text!r}")
            align = max(int(v, 0) for v in found)
        ctype = self.ctype(f.type, f, hint, (parent_key, f, None if anonymous else f.spelling))
        return Field(name, ctype, bits, align=align, packed=packed, anonymous=anonymous)

    def ctype(self, t: Any, where: Any, hint: str = "",
              link: tuple[str, Any, str | None] | None = None) -> CType:
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
            if link is not None and link[2] is not None:
                link = (link[0], link[1], link[2] + "[0]")  # offsetof reaches an element's members
            count = self._array_count(canon, where) if k == K.CONSTANTARRAY else None
            return Array(self.ctype(arr.element_type, where, hint, link), count)
        if k == K.RECORD:
            alias = t.spelling if t.kind == K.TYPEDEF else None
            return self.record(canon, alias if alias and alias.isidentifier() else None, hint, link)
        raise HeaderError(f"{_where(where.location)}: {where.spelling}: type {t.spelling} "
                          f"({k.name.lower()}) is not modelled")

    def _array_count(self, canon: Any, where: Any) -> int:
        """The element count of a constant array, never its elements. libclang sign-extends a count
        that fills size_t (char[1u << 31] on a 32-bit triple reads -2^31), and its bindings then
        raise: the count is taken modulo size_t and checked against sizeof."""
        n = self.ci.conf.lib.clang_getArraySize(canon)
        width = 8 * self.target.pointer_size
        if n < 0:
            n += 1 << width
        size, elem = canon.get_size(), canon.element_type.get_size()
        if not 0 <= n < 1 << width or (size >= 0 and elem > 0 and size != n * elem):
            raise HeaderError(f"{_where(where.location)}: {where.spelling}: libclang gives the array "
                              f"{canon.spelling} {n} elements of {elem} B but {size} B")
        return n

    def _source_lines(self, cursor: Any) -> str:
        start, end = cursor.extent.start, cursor.extent.end
        if start.file is None:
            return ""
        name = start.file.name
        if name not in self._lines:  # read once per file: a header of many aligned members
            try:
                self._lines[name] = Path(name).read_text(errors="replace").splitlines()
            except OSError:
                self._lines[name] = []
        return " ".join(self._lines[name][start.line - 1:end.line])

    # -- the cross-check -------------------------------------------------------------------------

    def cross_check(self, tops: set[Struct]) -> None:
        """The engine's layout of every record against libclang's, for the triple: each record's
        size, alignment and direct fields' bit offsets (its nested records are checked the same
        way, first: dependencies before dependents, as before the probe existed)."""
        order: list[Struct] = []
        for s in tops:
            for n in (*s.nested(), s):
                if id(n) not in self.checked:
                    self.checked.add(id(n))
                    order.append(n)
        # Where each direct field's offset comes from: ("probe", index) or ("bits", value).
        plans = [self._offset_plan(n) for n in order]
        values = self._run_probe()
        for n, (base, fields) in zip(order, plans):
            decl = self.decls[id(n)]
            self.at = decl
            rtype = decl.type
            measured = Measured(self._layout_value(rtype.get_size(), decl, n.name, "sizeof"),
                                self._layout_value(rtype.get_align(), decl, n.name, "alignof"))
            base_bits = sum(8 * values[v] if kind == "probe" else v for kind, v in base)
            for fname, (kind, v) in fields.items():
                measured.bit_offsets[fname] = 8 * values[v] - base_bits if kind == "probe" else v
            lay = n.layout(self.target)
            engine = Measured(lay.size, lay.align,
                              {f.name: f.offset * 8 + (f.bit_offset or 0) for f in lay.fields})
            problems = diff(engine, measured)
            if problems:
                raise HeaderError(f"{_where(decl.location)}: {n.name}: the engine and libclang "
                                  f"({self.target.triple}) disagree: {'; '.join(problems[:4])}")

    def _layout_value(self, value: int, decl: Any, name: str, what: str) -> int:
        if value < 0:
            raise HeaderError(f"{_where(decl.location)}: {name}: libclang has no {what} for it "
                              f"(the type is {_LAYOUT_ERRORS.get(value, f'error {value}')})")
        return value

    def _access(self, s: Struct, memo: dict[int, Any]) -> tuple[str, str, tuple] | None:
        """How offsetof reaches `s`'s members: (a file-scope type, the designator prefix, the terms
        of `s`'s own offset in that type), or None (a record local to a function)."""
        if id(s) in memo:
            return memo[id(s)]
        decl = self.decls[id(s)]
        out = None
        spelled = self.typedef_names.get(id(s)) or decl.type.get_canonical().spelling
        if _NAMEABLE_RE.fullmatch(spelled) and self._file_scope(decl):
            out = (spelled, "", ())
        elif id(s) in self.links:
            parent_key, member, designator = self.links[id(s)]
            parent = self.made.get(parent_key)
            outer = self._access(parent, memo) if parent is not None else None
            if outer is not None:
                base, prefix, terms = outer
                if designator is None:  # an anonymous member: its fields are its parent's names
                    out = (base, prefix, terms + (("bits", self._clang_offset(member, parent)),))
                else:
                    out = (base, f"{prefix}{designator}.", (("probe", self._probe(base, prefix + designator)),))
        memo[id(s)] = out
        return out

    def _file_scope(self, decl: Any) -> bool:
        K = self.ci.CursorKind
        p = decl.semantic_parent
        while p is not None and p.kind in (K.STRUCT_DECL, K.UNION_DECL):
            p = p.semantic_parent
        return p is not None and p.kind == K.TRANSLATION_UNIT

    def _offset_plan(self, s: Struct) -> tuple[tuple, dict[str, tuple[str, int]]]:
        """(terms of `s`'s offset in its offsetof base, field name -> where its offset comes from)."""
        access = self._access(s, self._access_memo)
        fields: dict[str, tuple[str, int]] = {}
        for f, c in zip(s.fields, self.field_cursors[id(s)]):
            self.at = c
            if access is None or f.anonymous or f.bits is not None:
                fields[f.name] = ("bits", self._clang_offset(c, s))
            else:
                fields[f.name] = ("probe", self._probe(access[0], access[1] + c.spelling))
        return (access[2] if access is not None else ()), fields

    def _query_cost(self, s: Struct) -> int:
        """Fields libclang's offset query walks for a member of `s`: every field, and the fields of
        record-typed ones (not arrays), recursively (a count, not a walk: memoized per record)."""
        if id(s) not in self._query_fields:
            total = 0
            for f in s.fields:
                total += 1 + (self._query_cost(f.type) if isinstance(f.type, Struct) else 0)
            self._query_fields[id(s)] = total
        return self._query_fields[id(s)]

    def _clang_offset(self, member: Any, parent: Struct) -> int:
        if member in self._queried:  # an anonymous member: its parent's field, its record's base
            return self._queried[member]
        cost = self._query_cost(parent)
        if self.offset_query_fields + cost > OFFSET_QUERY_BUDGET:
            raise HeaderError(f"{_where(member.location)}: {parent.name}: too large to measure its "
                              f"bit-fields and anonymous members with libclang (each query walks "
                              f"{cost} fields; the budget is {OFFSET_QUERY_BUDGET} in all)")
        self.offset_query_fields += cost
        bits = member.get_field_offsetof()
        if bits < 0:
            raise HeaderError(f"{_where(member.location)}: {member.spelling or parent.name}: libclang "
                              f"has no offset for it ({_LAYOUT_ERRORS.get(bits, f'error {bits}')})")
        self._queried[member] = bits
        return bits

    def _probe(self, base: str, designator: str) -> int:
        return self._probes.setdefault((base, designator), len(self._probes))

    def _run_probe(self) -> list[int]:
        """Every requested offsetof, from one parse of the header and an enumeration of them after
        it (an enumerator's value is one query, walking no record)."""
        probes = self._probes
        self.probe_count = len(probes)
        if not probes:
            return []
        lines = [f"enum {_PROBE}enum {{"]
        lines += [f"  {_PROBE}{i} = __builtin_offsetof({base}, {designator}),"
                  for (base, designator), i in probes.items()]
        lines.append("};")
        # The header itself with the enumeration after its last line (given to libclang in memory
        # under its own name): the same main file, directory and lines as the first parse, and no
        # #include to spell a name that may hold quotes or newlines. The blank lines end a trailing
        # backslash continuation.
        name = str(self.path)
        try:
            text = self.path.read_bytes() + b"\n\n" + "\n".join(lines).encode() + b"\n"
        except OSError as e:
            raise HeaderError(f"{self.path}: cannot read it again: {e.strerror or e}") from None
        tu = self._parse(name, [(name, text)])
        values: list[int] = []
        for c in tu.cursor.get_children():  # the top level only: the enumeration is there
            if c.kind == self.ci.CursorKind.ENUM_DECL and c.spelling == f"{_PROBE}enum":
                # Zero-extended: offsets are never negative, and the signed reading turns 2^31 on
                # a 32-bit triple (an unsigned int enumerator) into -2^31.
                value = self.ci.conf.lib.clang_getEnumConstantDeclUnsignedValue
                values = [value(e) for e in c.get_children()]
        if len(values) != len(probes) or min(values) < 0:
            raise HeaderError(f"{self.path}: libclang gave {len(values)} of {len(probes)} offsets")
        return values


def _record_in(f: Field) -> Struct | None:
    t = f.type
    while isinstance(t, Array):
        t = t.elem
    return t if isinstance(t, Struct) else None


def _where(location: Any) -> str:
    file = location.file.name if location.file else "<header>"
    return f"{file}:{location.line}"


__all__ = ["HeaderError", "HeaderReading", "header_struct", "parse_header", "read_header"]
