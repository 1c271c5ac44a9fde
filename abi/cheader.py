"""Structs from a C header, for any data model: libclang parses the header for the target's triple
and its records become the engine's declarations (`Struct`, `Field`, ...).

Every struct read this way is laid out by the engine and compared with libclang's own record layout
for the same triple (size, alignment and every field's bit offset, each record against its own
layout, nested ones included): a disagreement is an error, never a silent answer. Constructs the
engine does not model (vectors, complex types, 128-bit integers, _Atomic types of other than 1, 2, 4
or 8 bytes, ...) are refused with the line that declares them. An error concerns only its struct
(and the structs built on it): `read_header` gives every other struct and each failing one's
message, `file:line: ...`; a libclang error outside every struct fails the header.

Alignments are libclang's where the header says them: an alignment attribute or `alignas` (any
integer constant expression, macros included) is measured by `__alignof__` of the member in a probe
parse; a typedef's alignment and `_Atomic`'s are the declared type's. `#pragma pack` (push/pop,
pack(N), pack()) is followed as the preprocessor carries it (abi/pragma_pack.py): directives and
`_Pragma("pack(...)")` operators, spelled in the text or produced by a macro's expansion, in the
record's file and in the files included before it (a header that leaves a pack in force packs what
follows its #include).

The header is parsed freestanding (`-ffreestanding -nostdinc`): `<stdint.h>`, `<stddef.h>`,
`<stdbool.h>`, `<stdalign.h>` and `<limits.h>` come from the small headers below, built from the
compiler's predefined macros, so no target's C library is needed.

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

import atexit
import bisect
import hashlib
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Any, Iterator, NamedTuple, Sequence

from .bounded import ChildBlocked, ChildCrashed, ChildOutOfMemory, ChildTimedOut, call_bounded
from .cdecl import PRELUDE
from .errors import IreeAbiError, LayoutError, UnknownNameError
from .files import file_kind
from .layout import Array, CType, Field, FunctionPointer, Pointer, Scalar, Struct, size_align
from . import pragma_pack
from .oracles import Measured, OracleError, clang_index, diff, new_clang_index
from .targets import Target, get as _get_target

MEMORY_BYTES = 768 << 20  # address space libclang may take above the caller's (IREE's headers: < 200 MiB;
# 100,000 members: < 512 MiB); resident, the child then stays under the 1 GB a command may peak at
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
    """`read_header`'s answer: the structs by name, the ones that could not be laid out (by name: the
    message, starting with the file and line at fault) and the work reading them took."""

    structs: dict[str, Struct]
    cursors: int  # declaration cursors the walk visited
    records: int  # distinct records read into declarations
    offset_query_fields: int  # fields libclang's own offset queries validated (see OFFSET_QUERY_BUDGET)
    probes: int  # offsets and alignments measured by the probe parses
    errors: dict[str, str]  # struct name -> why it has no layout ("file:line: ...")

    def check(self) -> dict[str, Struct]:
        """`structs`, or the first struct's error as a `HeaderError` when any struct has one."""
        if self.errors:
            messages = sorted(set(self.errors.values()), key=_line_key)  # one per record, by line
            more = f" (and {len(messages) - 1} more structs)" if len(messages) > 1 else ""
            raise HeaderError(f"{messages[0]}{more}")
        return self.structs


def _line_key(message: str) -> tuple[str, int]:
    m = re.match(r"(.*?):(\d+): ", message)
    return (m.group(1), int(m.group(2))) if m else (message, 0)


# Freestanding headers: the fixed-width and size types as the compiler defines them for the triple.
_HEADERS = {
    "stdint.h": PRELUDE.split("#ifndef offsetof")[0],
    "stddef.h": PRELUDE.split("#ifndef offsetof")[0] + "#define NULL ((void*)0)\n"
                "#define offsetof(t, m) __builtin_offsetof(t, m)\n",
    "stdbool.h": "#define bool _Bool\n#define true 1\n#define false 0\n",
    "stdalign.h": "#define alignas _Alignas\n#define alignof _Alignof\n",
    "limits.h": "#define CHAR_BIT __CHAR_BIT__\n"
                "#define SCHAR_MAX __SCHAR_MAX__\n#define SCHAR_MIN (-__SCHAR_MAX__ - 1)\n"
                "#define UCHAR_MAX (__SCHAR_MAX__ * 2 + 1)\n"
                "#ifdef __CHAR_UNSIGNED__\n#define CHAR_MIN 0\n#define CHAR_MAX UCHAR_MAX\n"
                "#else\n#define CHAR_MIN SCHAR_MIN\n#define CHAR_MAX SCHAR_MAX\n#endif\n"
                "#define SHRT_MAX __SHRT_MAX__\n#define SHRT_MIN (-__SHRT_MAX__ - 1)\n"
                "#define USHRT_MAX (__SHRT_MAX__ * 2 + 1)\n"
                "#define INT_MAX __INT_MAX__\n#define INT_MIN (-__INT_MAX__ - 1)\n"
                "#define UINT_MAX (__INT_MAX__ * 2U + 1U)\n"
                "#define LONG_MAX __LONG_MAX__\n#define LONG_MIN (-__LONG_MAX__ - 1L)\n"
                "#define ULONG_MAX (__LONG_MAX__ * 2UL + 1UL)\n"
                "#define LLONG_MAX __LONG_LONG_MAX__\n#define LLONG_MIN (-__LONG_LONG_MAX__ - 1LL)\n"
                "#define ULLONG_MAX (__LONG_LONG_MAX__ * 2ULL + 1ULL)\n",
}
_include_dir: str | None = None


def _freestanding_files() -> dict[str, str]:
    files = {}
    for name, text in _HEADERS.items():
        guard = "IREEABI_" + re.sub(r"\W", "_", name.upper())
        files[name] = f"#ifndef {guard}\n#define {guard}\n{text}#endif\n"
    return files


def _holds(d: str, files: dict[str, str]) -> bool:
    """Whether folder d is ours alone (this user's, not a link, no one else may write it) and
    holds exactly these headers."""
    try:
        st = os.lstat(d)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
            return False
        if sorted(os.listdir(d)) != sorted(files):
            return False
        for name, text in files.items():
            f = os.path.join(d, name)
            fs = os.lstat(f)
            if not stat.S_ISREG(fs.st_mode) or fs.st_uid != os.getuid() or fs.st_mode & 0o022 \
                    or Path(f).read_text() != text:
                return False
        return True
    except OSError:
        return False


def _freestanding_dir() -> str:
    """The folder of the small headers: one per user and per text of the headers, shared by every
    process (a folder per process left one behind in the temporary directory each time), put in
    place whole by a rename. A folder of that name that is not ours alone or holds other bytes is
    not used: this process then writes its own and removes it at exit."""
    global _include_dir
    if _include_dir is not None:
        return _include_dir
    files = _freestanding_files()
    digest = hashlib.sha256(repr(sorted(files.items())).encode()).hexdigest()[:16]
    final = os.path.join(tempfile.gettempdir(), f"ireeabi-freestanding-{os.getuid()}-{digest}")
    if _holds(final, files):
        _include_dir = final
        return final
    d = tempfile.mkdtemp(prefix="ireeabi-freestanding-")
    for name, text in files.items():
        Path(d, name).write_text(text)
        os.chmod(os.path.join(d, name), 0o644)  # whatever the umask: _holds refuses a writable file
    try:
        os.rename(d, final)  # fails when another process put it in place first (or someone else's)
    except OSError:
        pass
    else:
        d = final
    if d != final and _holds(final, files):
        shutil.rmtree(d, ignore_errors=True)
        d = final
    elif d != final:
        atexit.register(shutil.rmtree, d, True)
    _include_dir = d
    return d


# libclang's canonical scalar kinds -> the engine's C scalar names.
_SCALARS = {
    "BOOL": "_Bool", "CHAR_S": "char", "SCHAR": "signed char", "CHAR_U": "unsigned char",
    "UCHAR": "unsigned char", "SHORT": "short", "USHORT": "unsigned short", "INT": "int",
    "UINT": "unsigned int", "LONG": "long", "ULONG": "unsigned long", "LONGLONG": "long long",
    "ULONGLONG": "unsigned long long", "FLOAT": "float", "DOUBLE": "double",
    "LONGDOUBLE": "long double",
}
_ALIGN_RE = re.compile(r"(?:_Alignas|alignas|aligned)\s*\(\s*(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\s*\)")
_IDENTIFIER_RE = re.compile(r"[A-Za-z_]\w*")
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
        try:
            kind = file_kind(p.stat().st_mode)
        except OSError:
            raise HeaderError(f"{p}: no such header file") from None
        # libclang would read /dev/zero to its memory bound and wait on a FIFO for a writer
        raise HeaderError(f"{p}: not a header file ({kind}, not a regular file)")
    _load_libclang()
    try:
        return call_bounded(_read, p, t, tuple(map(str, include_dirs)), tuple(defines),
                            _freestanding_dir(), memory_bytes=memory_bytes, seconds=seconds)
    except ChildOutOfMemory as e:
        raise HeaderError(f"{p}: libclang exceeded the memory bound of {e.limit_bytes >> 20} MiB "
                          "reading it") from None
    except ChildBlocked as e:
        raise HeaderError(f"{p}: libclang blocked opening {e.path or 'an included file'}, a FIFO no process "
                          "writes to (an include of a named pipe waits for a writer)") from None
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
    target's triple. A struct that cannot be laid out is a `HeaderError` (`read_header` gives the
    others and each one's error instead)."""
    return read_header(path, target, include_dirs=include_dirs, defines=defines).check()


def header_struct(path: "str | os.PathLike", name: str, target: "Target | str", *,
                  include_dirs: Sequence[str] = (), defines: Sequence[str] = ()) -> Struct:
    """The struct or union called `name` (a typedef name, `struct TAG` or a tag) in the header: its
    own error, if it has one, is a `HeaderError`; other structs' errors do not concern it."""
    r = read_header(path, target, include_dirs=include_dirs, defines=defines)
    if name in r.errors:
        raise HeaderError(r.errors[name])
    try:
        return r.structs[name]
    except KeyError:
        raise UnknownNameError(f"struct in {path}", name, sorted({*r.structs, *r.errors})) from None


def _read(path: Path, target: Target, include_dirs: tuple[str, ...], defines: tuple[str, ...],
          freestanding: str) -> HeaderReading:
    """The child's side of `read_header`: every failure is a one-line `HeaderError`."""
    reader = None
    try:
        reader = _Reader(path, target, include_dirs, defines, freestanding)
        structs, errors = reader.all()
        return HeaderReading(structs, reader.cursors, len(reader.made), reader.offset_query_fields,
                             reader.probe_count, errors)
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
        self.tu, errors = self._parse(str(path))
        # libclang's errors, each to be charged to the records whose text holds it (or the header).
        self.diagnostics = [(_file_of(d.location), d.location.offset, f"{_where(d.location)}: {d.spelling}")
                            for d in errors]
        self.made: dict[str, Struct] = {}  # record key (see _key) -> declaration
        self.failed: dict[str, HeaderError] = {}  # record key -> why it cannot be read
        self.decls: dict[int, Any] = {}  # id(declaration) -> libclang's record cursor
        self.field_cursors: dict[int, list[Any]] = {}  # id(declaration) -> its fields' cursors
        self.links: dict[int, tuple[str, Any, str | None]] = {}  # id -> (parent key, member, designator)
        self.typedef_names: dict[int, str] = {}  # id -> a file-scope typedef naming it
        self.typedef_of: dict[Any, str] = {}  # record cursor -> a file-scope typedef naming it
        self.measure_types: dict[int, Any] = {}  # id -> the type libclang measures, where not its record
        self.member_aligns: dict[Any, "int | str"] = {}  # aligned member cursor -> alignment or why not
        self._paths: dict[Any, tuple[str, str] | None] = {}  # record cursor -> how C names its members
        self._holders: dict[Any, dict[Any, str]] = {}  # record cursor -> {nested record: designator step}
        self.checked: set[int] = set()
        self.depth = 0  # records being read inside one another now
        self.nesting: dict[int, int] = {}  # id(declaration) -> levels of records it holds, itself included
        self._lines: dict[str, list[str]] = {}
        # file -> (offsets where the #pragma pack value changes, the value from each on); made once
        self._packs: dict[str, tuple[list[int], list["int | str | None"]]] | None = None
        self.cursors = self.offset_query_fields = self.probe_count = 0
        self._query_fields: dict[int, int] = {}  # id -> fields libclang's offset query walks
        self._access_memo: dict[int, tuple[str, str, tuple] | None] = {}
        self._probes: dict[tuple[str, str], int] = {}  # (type, designator) -> probe index
        self._queried: dict[Any, int] = {}  # member cursor -> libclang's offset query's answer

    def _parse(self, name: str, unsaved: list[tuple[str, bytes]] | None = None) -> tuple[Any, list[Any]]:
        """The translation unit and its error diagnostics (a fatal one fails the header)."""
        ci = self.ci
        try:
            tu = new_clang_index(ci).parse(name, args=self.args, unsaved_files=unsaved)
        except ci.TranslationUnitLoadError as e:
            raise HeaderError(f"{self.path}: libclang could not parse it ({e})") from None
        errors = [d for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
        fatal = [d for d in errors if d.severity >= ci.Diagnostic.Fatal]
        if fatal:
            raise HeaderError("; ".join(f"{_where(d.location)}: {d.spelling}" for d in fatal[:3]))
        return tu, errors

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

    def all(self) -> tuple[dict[str, Struct], dict[str, str]]:
        """(struct by name, error by name): a struct that cannot be read or laid out has an error,
        naming its line, and concerns no other struct."""
        ci = self.ci
        K = ci.CursorKind
        records = (K.STRUCT_DECL, K.UNION_DECL)
        entries: list[tuple[Any, Any]] = []  # (record or typedef cursor, the record's type)
        aligned: list[Any] = []  # members with an alignment attribute
        charged: set[int] = set()  # diagnostics inside some record
        # Each error charged to the records whose text holds it (found by bisection: a header of
        # many records and many errors costs their sum, not their product).
        where = sorted((file, offset, i) for i, (file, offset, _) in enumerate(self.diagnostics))
        for c in self._declarations():
            if c.kind in records and c.is_definition():
                start, end = c.extent.start, c.extent.end
                if where and start.file is not None:
                    name = start.file.name
                    j = bisect.bisect_left(where, (name, start.offset, -1))
                    while j < len(where) and where[j][0] == name and where[j][1] <= end.offset:
                        i = where[j][2]
                        self.failed.setdefault(_key(c), HeaderError(self.diagnostics[i][2]))
                        charged.add(i)
                        j += 1
                if c.spelling and not c.is_anonymous() and "(" not in c.spelling:
                    entries.append((c, c.type))
            elif c.kind == K.TYPEDEF_DECL:
                under = c.underlying_typedef_type.get_canonical()
                if under.kind == ci.TypeKind.RECORD and under.get_declaration().is_definition():
                    entries.append((c, under))
                    if c.semantic_parent.kind == K.TRANSLATION_UNIT:
                        self.typedef_of.setdefault(under.get_declaration(), c.spelling)
            elif c.kind == K.FIELD_DECL and any(a.kind == K.ALIGNED_ATTR for a in c.get_children()):
                aligned.append(c)
        loose = [m for i, (_, _, m) in enumerate(self.diagnostics) if i not in charged]
        if loose:  # outside every struct: nothing of the header can be trusted
            raise HeaderError("; ".join(loose[:3]))
        self._measure_alignments(aligned)
        out: dict[str, Struct] = {}
        errors: dict[str, str] = {}
        for c, rtype in entries:
            names = [c.spelling] if c.kind == K.TYPEDEF_DECL else \
                [c.spelling, f"{'union' if c.kind == K.UNION_DECL else 'struct'} {c.spelling}"]
            if c.kind == K.TYPEDEF_DECL and c.type.get_align() != rtype.get_align() > 0:
                out.pop(c.spelling, None)  # libclang spells an unnamed struct by its typedef too
                try:
                    out[c.spelling] = self.aligned_typedef(c, rtype)
                except HeaderError as e:
                    errors[c.spelling] = str(e)
                continue
            try:
                s = self.record(rtype, c.spelling if c.kind == K.TYPEDEF_DECL else None)
            except HeaderError as e:
                for n in names:
                    errors.setdefault(n, str(e))
                continue
            if c.kind == K.TYPEDEF_DECL:
                out[c.spelling] = s
                if c.semantic_parent.kind == K.TRANSLATION_UNIT:
                    self.typedef_names.setdefault(id(s), c.spelling)
            else:
                out.setdefault(names[0], s)
                out[names[1]] = s
        bad = self.cross_check(set(out.values()))
        for n, s in list(out.items()):
            why = next((bad[id(r)] for r in (*s.nested(), s) if id(r) in bad), None)  # the cause first
            if why is not None:
                errors[n] = why
                del out[n]
        return out, errors

    # -- declarations ----------------------------------------------------------------------------

    def aligned_typedef(self, typedef: Any, rtype: Any) -> Struct:
        """A typedef giving its struct an alignment of its own (`typedef struct vring_desc
        __attribute__((aligned(16))) vring_desc_t;`): C keeps the struct's size, so where that size
        is a multiple of a raised alignment the typedef is the struct with that alignment (checked
        against libclang's layout of the typedef); a lowered one, or sizeof 1 with alignof 16, has no
        struct layout (as a member's type it is modelled)."""
        wanted, size = typedef.type.get_align(), rtype.get_size()
        base = self.record(rtype)
        if wanted < rtype.get_align() or size < 0 or size % wanted:
            raise HeaderError(f"{_where(typedef.location)}: {typedef.spelling}: a typedef with its own "
                              f"alignment ({wanted}; its struct's is {rtype.get_align()}, sizeof "
                              f"{size}) is not modelled as a struct (as a member's type it is)")
        try:
            s = Struct(typedef.spelling, base.fields, is_union=base.is_union, packed=base.packed,
                       align=wanted, max_align=base.max_align)
        except IreeAbiError as e:
            raise HeaderError(f"{_where(typedef.location)}: {e}") from None
        tables: tuple[dict[int, Any], ...] = (self.decls, self.field_cursors, self.nesting, self.links)
        for table in tables:
            if id(base) in table:
                table[id(s)] = table[id(base)]
        self.typedef_names[id(s)] = typedef.spelling
        self.measure_types[id(s)] = typedef.type
        return s

    def record(self, rtype: Any, name: str | None = None, hint: str = "",
               link: tuple[str, Any, str | None] | None = None) -> Struct:
        """The declaration of a record type: named by `name` (a typedef), else its tag, else `hint`
        (parent_member, for unnamed nested records: a C identifier, so its C text still compiles).
        `link`: the member of a record being read that reaches it (parent, member cursor, offsetof
        designator or None for an anonymous member), how offsetof names its fields. A record that
        failed once fails again at once (a record used by many others costs its reading once)."""
        decl = rtype.get_canonical().get_declaration()
        key = _key(decl)
        if key in self.made:
            return self.made[key]
        if key in self.failed:
            raise self.failed[key]
        try:
            return self._record(decl, key, rtype, name, hint, link)
        except LayoutError as e:
            self.failed[key] = HeaderError(f"{_where(decl.location)}: {e}")
        except HeaderError as e:
            self.failed[key] = e
        raise self.failed[key]

    def _record(self, decl: Any, key: str, rtype: Any, name: str | None, hint: str,
                link: tuple[str, Any, str | None] | None) -> Struct:
        ci = self.ci
        self.at = decl
        if self.depth >= MAX_NESTING:
            raise HeaderError(f"{_where(decl.location)}: records nested more than {MAX_NESTING} deep "
                              "are not modelled")
        is_union = decl.kind == ci.CursorKind.UNION_DECL
        children = list(decl.get_children())
        packed = any(c.kind == ci.CursorKind.PACKED_ATTR for c in children)
        align = None
        if any(c.kind == ci.CursorKind.ALIGNED_ATTR for c in children):
            # An aligned attribute on a record type only raises its alignment: libclang's is the explicit one.
            align = rtype.get_canonical().get_align()
        max_align = self._pack_at(decl)
        if name is None:
            name = decl.spelling if decl.spelling and "(" not in decl.spelling else hint or "anonymous"
        fields: list[Field] = []
        cursors = list(decl.type.get_fields())
        anon = unnamed = 0
        self.depth += 1
        try:
            for f in cursors:
                self.at = f
                fname = f.spelling
                anonymous = not fname.isidentifier()
                if anonymous and f.is_bitfield():  # reserved bits, or a zero-width unit break
                    fname, unnamed = f"__unnamed{unnamed}", unnamed + 1
                elif anonymous:
                    fname, anon = f"__anonymous{anon}", anon + 1
                fields.append(self.field(f, fname, anonymous, f"{name}_{fname.strip('_')}", key, packed))
        finally:
            self.depth -= 1
        nesting = 1 + max((self.nesting[id(t)] for t in map(_record_in, fields) if t is not None), default=0)
        if nesting > MAX_NESTING:  # a chain of records declared one after the other
            raise HeaderError(f"{_where(decl.location)}: records nested more than {MAX_NESTING} deep "
                              "are not modelled")
        try:
            s = Struct(name, fields, is_union=is_union, packed=packed, align=align, max_align=max_align)
        except IreeAbiError as e:
            raise HeaderError(f"{_where(decl.location)}: {e}") from None
        self.nesting[id(s)] = nesting
        self.made[key] = s
        self.decls[id(s)] = decl
        self.field_cursors[id(s)] = cursors
        if link is not None:
            self.links[id(s)] = link
        return s

    def field(self, f: Any, name: str, anonymous: bool, hint: str, parent_key: str,
              in_packed: bool) -> Field:
        """One member. Its alignment is the engine's unless the member or its declared type says
        otherwise: an alignment attribute (any constant expression: measured by libclang), a typedef
        with one, `_Atomic` (both from libclang's alignment of the declared type)."""
        ci = self.ci
        bits = None
        if f.is_bitfield():
            bits = f.get_bitfield_width()
        attrs = [c for c in f.get_children() if c.kind.is_attribute()]
        packed = any(c.kind == ci.CursorKind.PACKED_ATTR for c in attrs)
        ctype = self.ctype(f.type, f, hint, (parent_key, f, None if anonymous else f.spelling))
        natural = size_align(ctype, self.target)[1]
        declared = f.type.get_align()  # the declared type's: a typedef's alignment, _Atomic's
        explicit = any(c.kind == ci.CursorKind.ALIGNED_ATTR for c in attrs)
        if bits is not None:
            if explicit or (declared > 0 and declared != natural):
                raise HeaderError(f"{_where(f.location)}: {f.spelling or 'an unnamed bit-field'}: an "
                                  "alignment on a bit-field or its type is not modelled")
            return Field(name, ctype, bits, packed=packed, anonymous=anonymous)
        if explicit:
            wanted = self.member_aligns.get(f)
            if not isinstance(wanted, int):
                raise HeaderError(f"{_where(f.location)}: {f.spelling}: its alignment could not be "
                                  f"measured: {wanted or 'no way to name it in C'}")
        elif packed or in_packed:
            wanted = None  # packing wins over a type's alignment (#pragma pack only caps it, later)
        else:
            wanted = declared if declared > 0 and declared != natural else None
        align = None
        if wanted is not None:
            align = wanted
            if wanted < natural:  # below the type's own: as packed, aligned(N) writes it
                packed = True
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
        if k.name == "ATOMIC":
            # _Atomic T lays out as T, aligned as libclang says (the member's declared alignment).
            # gcc and clang agree on that only where the size is a power of two up to 8 bytes.
            value = _value_type(self.ci, canon)
            size = canon.get_size()
            if size != value.get_size() or size not in (1, 2, 4, 8):
                raise HeaderError(f"{_where(where.location)}: {where.spelling}: {canon.spelling} is "
                                  f"{size} B to libclang, {value.get_size()} B without _Atomic: an "
                                  "_Atomic type of other than 1, 2, 4 or 8 bytes is not modelled (gcc "
                                  "and clang lay it out differently)")
            inner = self.ctype(value, where, hint, None)  # offsetof cannot reach into an _Atomic record
            return Scalar(inner.c_type, spelled) if isinstance(inner, Scalar) else inner
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

    # -- alignments and #pragma pack ---------------------------------------------------------------

    def _measure_alignments(self, members: list[Any]) -> None:
        """Each aligned member's alignment as libclang computes it (`__alignof__` of the member:
        the attribute's constant expression, macros and all, with its type's), from one probe parse.
        A member offsetof cannot name (in a function's record) is read from an integer literal."""
        exprs: list[str] = []
        designators: list[str] = []
        which: list[Any] = []
        for m in members:
            self.at = m
            path = self._member_path(m)
            if path is None:
                text = " ".join(t.spelling for t in m.get_tokens()) + " " + self._source_lines(m)
                found = _ALIGN_RE.findall(text)
                self.member_aligns[m] = max(int(v, 0) for v in found) if found else \
                    "only integer-literal alignments are read in a record C cannot name from outside"
                continue
            which.append(m)
            exprs.append(f"__alignof__(((({path[0]}*)0)->{path[1]}))")
            designators.append(path[1])
        for m, v in zip(which, self._probe_values(exprs, designators)):
            self.member_aligns[m] = v if isinstance(v, int) and v > 0 else f"libclang: {v}"

    def _member_path(self, member: Any) -> tuple[str, str] | None:
        """(a file-scope type, the designator) by which C names `member`, or None."""
        at = self._record_path(member.semantic_parent, 0)
        return None if at is None else (at[0], at[1] + member.spelling)

    def _record_path(self, rec: Any, depth: int) -> tuple[str, str] | None:
        """(a file-scope type, the designator prefix of `rec`'s members), memoized per record: a
        record's members are reached from its parent's by the member holding it (none for an
        anonymous one), found in one pass over each parent's fields."""
        if rec in self._paths:
            return self._paths[rec]
        K, T = self.ci.CursorKind, self.ci.TypeKind
        records = (K.STRUCT_DECL, K.UNION_DECL)
        out = None
        parent = rec.semantic_parent if rec is not None and rec.kind in records else None
        if parent is not None and parent.kind == K.TRANSLATION_UNIT:
            spelled = self.typedef_of.get(rec)
            if spelled is None and rec.spelling and not rec.is_anonymous() and "(" not in rec.spelling:
                spelled = f"{'union' if rec.kind == K.UNION_DECL else 'struct'} {rec.spelling}"
            out = (spelled, "") if spelled else None
        elif parent is not None and parent.kind in records and depth <= MAX_NESTING:
            if parent not in self._holders:
                holders: dict[Any, str] = {}
                for m in parent.type.get_fields():
                    t, dims = m.type.get_canonical(), 0
                    while t.kind in (T.CONSTANTARRAY, T.INCOMPLETEARRAY):
                        t, dims = t.element_type.get_canonical(), dims + 1
                    if t.kind == T.RECORD:  # an anonymous member adds no name
                        holders.setdefault(t.get_declaration(), f"{m.spelling}{'[0]' * dims}."
                                           if m.spelling.isidentifier() else "")
                self._holders[parent] = holders
            step = self._holders[parent].get(rec)
            outer = self._record_path(parent, depth + 1) if step is not None else None
            out = None if outer is None or step is None else (outer[0], outer[1] + step)
        self._paths[rec] = out
        return out

    def _pack_at(self, decl: Any) -> int | None:
        """The `#pragma pack` value in force where the record is defined (None: none), as the
        preprocessor carries it through the translation unit (abi/pragma_pack.py): directives and
        `_Pragma` operators of the record's file, of macros expanded there, and of the files
        included before it; a value C does not spell as a literal is the record's error."""
        loc = decl.location
        if loc.file is None:
            return None
        if self._packs is None:
            self._packs = self._pack_timeline()
        offsets, values = self._packs.get(loc.file.name, ((), ()))
        i = bisect.bisect_right(offsets, loc.offset) - 1
        value = values[i] if i >= 0 else None
        if isinstance(value, str):
            raise HeaderError(f"{_where(loc)}: {value}")
        return value

    def _pack_timeline(self) -> dict[str, tuple[list[int], list["int | str | None"]]]:
        """Per file (its first reading): the offsets where the pack value changes and the value from
        each on, from libclang's inclusions (in the order it entered the files) and each file's text;
        macros are looked at only where some file spells `_Pragma`."""
        inclusions = [(i.source.name, i.location.offset, i.include.name, i.depth) for i in self.tu.get_includes()]
        main = self.tu.spelling
        texts: dict[str, bytes] = {}
        for name in {main, *(i[2] for i in inclusions)}:
            try:  # only regular files: libclang read the rest (a device) already, whatever it held
                texts[name] = Path(name).read_bytes() if os.path.isfile(name) else b""
            except OSError:
                texts[name] = b""
        macros: dict[str, pragma_pack.MacroBody] = {}
        definitions: dict[str, list[tuple[int, int]]] = {}
        expansions: dict[str, list[tuple[int, int, str, int]]] = {}
        if any(b"_Pragma" in t for t in texts.values()):
            macros, definitions, expansions = self._pack_macros()
        memo: dict = {}

        def operations_of(name: str) -> list[tuple[int, pragma_pack.Operation]]:
            ops = pragma_pack.text_operations(texts.get(name, b""), definitions.get(name, ()))
            for start, end, macro, line in expansions.get(name, ()):
                before, after = pragma_pack.macro_operations(macro, macros, memo, line)
                ops += [(start, op) for op in before] + [(end, op) for op in after]
            ops.sort(key=lambda e: e[0])  # stable: a macro's operations stay in order
            return ops

        return pragma_pack.checkpoints(pragma_pack.inclusion_tree(main, inclusions), operations_of)

    def _pack_macros(self) -> tuple[dict[str, "pragma_pack.MacroBody"], dict[str, list[tuple[int, int]]],
                                    dict[str, list[tuple[int, int, str, int]]]]:
        """From a parse keeping the preprocessing record: every macro's parameters and body tokens,
        the byte ranges of each file's macro definitions, and each file's macro expansions (start
        and end offsets, the macro, the line) of the macros whose expansion does pack operations."""
        ci = self.ci
        try:
            tu = new_clang_index(ci).parse(str(self.path), args=self.args,
                                         options=ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD)
        except ci.TranslationUnitLoadError as e:
            raise HeaderError(f"{self.path}: libclang could not parse it ({e})") from None
        macros: dict[str, pragma_pack.MacroBody] = {}
        definitions: dict[str, list[tuple[int, int]]] = {}
        uses: list[tuple[str, int, int, str, int]] = []
        for c in tu.cursor.get_children():
            kind = c.kind
            if kind == ci.CursorKind.MACRO_DEFINITION:
                ext = c.extent
                if ext.start.file is None:
                    continue  # a predefined macro
                toks = list(c.get_tokens())
                params: tuple[str, ...] = ()
                body = toks[1:]
                if len(toks) > 1 and toks[1].spelling == "(" and \
                        toks[1].extent.start.offset == toks[0].extent.end.offset:  # function-like
                    close = next((k for k, t in enumerate(toks) if t.spelling == ")"), len(toks) - 1)
                    params = tuple(t.spelling for t in toks[2:close] if t.spelling not in (",", "..."))
                    body = toks[close + 1:]
                macros[c.spelling] = pragma_pack.MacroBody(params, tuple(t.spelling for t in body))
                definitions.setdefault(ext.start.file.name, []).append((ext.start.offset, ext.end.offset))
            elif kind == ci.CursorKind.MACRO_INSTANTIATION:
                ext = c.extent
                if ext.start.file is not None:
                    uses.append((ext.start.file.name, ext.start.offset, ext.end.offset, c.spelling, ext.start.line))
        memo: dict = {}
        expansions: dict[str, list[tuple[int, int, str, int]]] = {}
        for file, start, end, name, line in uses:
            before, after = pragma_pack.macro_operations(name, macros, memo, line)
            if before or after:
                expansions.setdefault(file, []).append((start, end, name, line))
        return macros, definitions, expansions

    # -- the cross-check -------------------------------------------------------------------------

    def cross_check(self, tops: set[Struct]) -> dict[int, str]:
        """The engine's layout of every record against libclang's, for the triple: each record's
        size, alignment and direct fields' bit offsets (its nested records are checked the same
        way, first: dependencies before dependents). Returns the records that disagree (or could
        not be measured), by id, with the message."""
        order: list[Struct] = []
        for s in tops:
            for n in (*s.nested(), s):
                if id(n) not in self.checked:
                    self.checked.add(id(n))
                    order.append(n)
        bad: dict[int, str] = {}
        # Where each direct field's offset comes from: ("probe", index) or ("bits", value).
        plans: list[Any] = []
        for n in order:
            try:
                plans.append(self._offset_plan(n))
            except HeaderError as e:
                plans.append(None)
                bad[id(n)] = str(e)
        values = self._run_probe()
        for n, plan in zip(order, plans):
            if plan is None:
                continue
            try:
                self._check_one(n, plan, values)
            except (HeaderError, LayoutError) as e:
                bad[id(n)] = str(e)
        return bad

    def _check_one(self, n: Struct, plan: tuple, values: list["int | str"]) -> None:
        base, fields = plan
        decl = self.decls[id(n)]
        self.at = decl

        def probed(kind: str, v: int) -> int:
            if kind != "probe":
                return v
            value = values[v]
            if not isinstance(value, int):
                raise HeaderError(f"{_where(decl.location)}: {n.name}: libclang could not measure an "
                                  f"offset in it: {value}")
            return 8 * value

        rtype = self.measure_types.get(id(n), decl.type)
        measured = Measured(self._layout_value(rtype.get_size(), decl, n.name, "sizeof"),
                            self._layout_value(rtype.get_align(), decl, n.name, "alignof"))
        base_bits = sum(probed(kind, v) for kind, v in base)
        for fname, (kind, v) in fields.items():
            measured.bit_offsets[fname] = probed(kind, v) - (base_bits if kind == "probe" else 0)
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
        out: tuple[str, str, tuple[tuple[str, int], ...]] | None = None
        spelled = self.typedef_names.get(id(s)) or decl.type.get_canonical().spelling
        if _NAMEABLE_RE.fullmatch(spelled) and self._file_scope(decl):
            out = (spelled, "", ())
        elif id(s) in self.links:
            parent_key, member, designator = self.links[id(s)]
            parent = self.made.get(parent_key)
            outer = self._access(parent, memo) if parent is not None else None
            if outer is not None and parent is not None:
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
            if f.bits == 0:
                continue  # a zero-width bit-field holds no bits: no field of the layout
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

    def _run_probe(self) -> list["int | str"]:
        """Every requested offsetof (or why libclang could not measure it)."""
        probes = sorted(self._probes.items(), key=lambda kv: kv[1])
        return self._probe_values([f"__builtin_offsetof({base}, {designator})" for (base, designator), _ in probes],
                                  [designator for (_, designator), _ in probes])

    def _probe_values(self, exprs: list[str], designators: list[str]) -> list["int | str"]:
        """Each integer constant expression's value, from one parse of the header with an
        enumeration of them after it (an enumerator's value is one query, walking no record); an
        expression libclang rejects has its message instead (it concerns only its record). The
        member names in `designators` are #undef'd first: a header may define a macro of a member's
        name (`#define pn_data pn_msg_u.base.pn_data`), which would rewrite the designator."""
        self.probe_count += len(exprs)
        if not exprs:
            return []
        # The header itself with the enumeration after its last line (given to libclang in memory
        # under its own name): the same main file, directory and lines as the first parse, and no
        # #include to spell a name that may hold quotes or newlines. The blank lines end a trailing
        # backslash continuation.
        name = str(self.path)
        try:
            original = self.path.read_bytes()
        except OSError as e:
            raise HeaderError(f"{self.path}: cannot read it again: {e.strerror or e}") from None
        first_line = original.count(b"\n") + 4  # the first enumerator's line
        members = sorted({n for d in designators for n in _IDENTIFIER_RE.findall(d)})
        lines = [f"#undef {n}" for n in members]
        first_line += len(lines)
        lines.append(f"enum {_PROBE}enum {{")
        lines += [f"  {_PROBE}{i} = {e}," for i, e in enumerate(exprs)]
        lines.append("};")
        text = original + b"\n\n" + "\n".join(lines).encode() + b"\n"
        tu, errors = self._parse(name, [(name, text)])
        rejected: dict[int, str] = {}
        for d in errors:
            if _file_of(d.location) == name and d.location.offset >= len(original):
                rejected.setdefault(d.location.line - first_line, d.spelling)
        values: list[int | str] = []
        for c in tu.cursor.get_children():  # the top level only: the enumeration is there
            if c.kind == self.ci.CursorKind.ENUM_DECL and c.spelling == f"{_PROBE}enum":
                # Zero-extended: offsets are never negative, and the signed reading turns 2^31 on
                # a 32-bit triple (an unsigned int enumerator) into -2^31.
                value = self.ci.conf.lib.clang_getEnumConstantDeclUnsignedValue
                values = [value(e) for e in c.get_children()]
        if len(values) != len(exprs):
            raise HeaderError(f"{self.path}: libclang gave {len(values)} of {len(exprs)} probe values")
        return [rejected.get(i, v) for i, v in enumerate(values)]


def _key(decl: Any) -> str:
    """A record's identity: its USR and where it is defined (two anonymous records in one parent
    can share a USR)."""
    loc = decl.location
    return f"{decl.get_usr()}@{_file_of(loc)}:{loc.offset}"


def _file_of(location: Any) -> str:
    return location.file.name if location.file else ""


def _value_type(ci: Any, atomic: Any) -> Any:
    """T of `_Atomic(T)` (clang_Type_getValueType, which the bindings do not declare)."""
    fn = ci.conf.lib.clang_Type_getValueType
    fn.argtypes, fn.restype = [ci.Type], ci.Type
    value = fn(atomic)
    value._tu = atomic._tu
    return value


def _record_in(f: Field) -> Struct | None:
    t = f.type
    while isinstance(t, Array):
        t = t.elem
    return t if isinstance(t, Struct) else None


def _where(location: Any) -> str:
    file = location.file.name if location.file else "<header>"
    return f"{file}:{location.line}"


__all__ = ["HeaderError", "HeaderReading", "header_struct", "parse_header", "read_header"]
