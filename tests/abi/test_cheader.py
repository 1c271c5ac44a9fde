"""Structs from C headers (abi/cheader.py) on all seven data models.

Oracles: libclang's record layout of the header itself for each target triple (parse_header refuses
any disagreement, and the test re-measures the engine's C text of the same declarations with libclang
again), the host's C compiler through cffi (x86_64) and `gcc -m32` (i386) on that C text.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from ireeabi.abi import cheader, oracles
from ireeabi.abi.layout import Array, FunctionPointer, Pointer, Scalar, Struct
from ireeabi.abi.targets import TARGETS, get

HEADERS = Path(__file__).parents[1] / "fixtures" / "headers"
CONSTRUCTS = HEADERS / "constructs.h"


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_every_construct_agrees_with_libclang(target):
    structs = cheader.parse_header(CONSTRUCTS, target)  # raises on any disagreement with the header
    s = structs["everything_t"]
    assert structs["struct everything"] is s and structs["everything"] is s
    t = get(target)
    # The engine's own C text of the declarations, measured by libclang for the triple.
    decls = [s, structs["wire"], structs["value_t"], structs["cacheline_t"]]
    assert oracles.disagreements(decls, oracles.measure_libclang(decls, t), t) == {}
    lay = s.layout(t)
    kinds = {f.name: f for f in s.fields}
    assert kinds["__anonymous0"].anonymous and kinds["__anonymous0"].type.is_union
    assert not kinds["point"].anonymous and isinstance(kinds["point"].type, Struct)
    assert isinstance(kinds["parts"].type, Array) and kinds["parts"].type.display() == "part[2][3]"
    assert isinstance(kinds["next"].type, Pointer) and isinstance(kinds["callback"].type, FunctionPointer)
    assert kinds["callback"].type.display() == "callback_t"
    assert kinds["mode"].type == Scalar("unsigned int", "mode_t_")
    assert kinds["aligned16"].align == 16 and kinds["aligned8"].align == 8
    assert kinds["packed_member"].packed and lay.field("packed_member").offset == \
        lay.field("aligned8").offset + 1
    assert structs["wire"].packed and structs["cacheline_t"].align == 32 and lay.align == 32
    assert lay.flexible is not None and lay.flexible.name == "data"
    assert lay.field("straddle").bits == 40 and lay.field("small").bits == 3


def test_the_host_compiler_and_gcc_m32_agree():
    for target, measure in (("x86_64", oracles.measure_host_cc), ("i386", oracles.measure_gcc_m32)):
        structs = cheader.parse_header(CONSTRUCTS, target)
        decls = [structs["everything_t"], structs["wire"]]
        assert oracles.disagreements(decls, measure(decls), get(target)) == {}, target


def test_include_dirs_and_defines_reach_the_parser(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "inner.h").write_text("typedef struct inner { char c; COUNT_T n; } inner_t;\n")
    (tmp_path / "top.h").write_text('#include "inner.h"\n'
                                    "#if __SIZEOF_POINTER__ == 4\ntypedef struct top { inner_t i; } top_t;\n"
                                    "#else\ntypedef struct top { inner_t i; void* p; } top_t;\n#endif\n")
    for target, fields in (("x86_64", ["i", "p"]), ("riscv32", ["i"])):
        s = cheader.header_struct(tmp_path / "top.h", "top_t", target, include_dirs=[str(tmp_path / "sub")],
                                  defines=["COUNT_T=long long"])
        assert [f.name for f in s.fields] == fields  # the triple's #if branch
        assert s.fields[0].type.fields[1].type.c_type == "long long"  # -D
    with pytest.raises(cheader.HeaderError, match=r"top\.h:1: 'inner\.h' file not found"):
        cheader.parse_header(tmp_path / "top.h", "x86_64")


@pytest.mark.parametrize("text,line,what", [
    ("struct e {};\nstruct s { struct e a; };", 1, "an empty struct has no C layout"),
    ("struct s {\n  char c;\n  __int128 big;\n};", 3, "type __int128"),
    ("typedef float v4 __attribute__((vector_size(16)));\nstruct s { v4 v; };", 2, "type v4"),
    ("struct s { _Complex double z; };", 1, "complex"),
    ("struct s { _Atomic struct { char x[3]; } a; };", 1, "_Atomic type of other than 1, 2, 4 or 8"),
    ("typedef int i8 __attribute__((aligned(8)));\nstruct s { i8 b : 3; };", 2, "alignment on a bit-field"),
])
def test_unsupported_constructs_name_their_line(tmp_path, text, line, what):
    path = tmp_path / "bad.h"
    path.write_text(text + "\n")
    with pytest.raises(cheader.HeaderError, match=rf"bad\.h:{line}: .*{what}"):
        cheader.parse_header(path, "x86_64")


# #pragma pack(2) in a block the preprocessor skips, which the reader does not tell apart (it
# reads the directives of the text): it packs, libclang does not.
PACK2 = '#if 0\n#pragma pack(2)\n#endif\n'


def test_a_disagreement_with_libclang_is_an_error(tmp_path):
    """A pack the reader sees where the compiler does not: the cross-check catches the difference."""
    path = tmp_path / "pragma.h"
    path.write_text(f"{PACK2}struct packed2 {{ char c; int i; }};\n")
    with pytest.raises(cheader.HeaderError, match=r"pragma\.h:4: packed2: the engine and libclang "
                                                  r"\(x86_64-linux-gnu\) disagree: sizeof: engine 6, oracle 8"):
        cheader.parse_header(path, "x86_64")


def test_any_file_name_is_read(tmp_path):
    """The probe parse includes the header by its path: quotes, spaces and newlines in it too."""
    path = tmp_path / 'we"ird\nname <x>.h'
    path.write_text("struct s { char c; long long v; };\n")
    s = cheader.header_struct(path, "s", "i386")
    assert s.layout("i386").field("v").offset == 4  # i386 aligns long long in structs to 4


def test_bad_input_is_named(tmp_path):
    with pytest.raises(cheader.HeaderError, match="no such header"):
        cheader.parse_header(tmp_path / "missing.h", "x86_64")
    path = tmp_path / "syntax.h"
    path.write_text("struct s {\n  int a b;\n};\n")
    with pytest.raises(cheader.HeaderError, match=r"syntax\.h:2: expected ';'"):
        cheader.parse_header(path, "x86_64")
    with pytest.raises(Exception, match="nope"):
        cheader.header_struct(CONSTRUCTS, "nope", "x86_64")


# Every way the offsetof probe reaches a record's members: a tag, a typedef of an unnamed struct,
# unnamed members' records through their member names (arrays of them through element 0), anonymous
# members' records through their parent's names, records of a function (libclang's own query).
REACHES = """\
struct outer { struct inner { char c; int x; } i; union { long a; struct { char b; double d; } bb; }; };
typedef struct { char c; struct { short q; long long w; } m[2][3]; struct { int k; }; } td_t;
static inline int f(void) { struct local { char c; double d; } l; l.c = 0; return l.c; }
"""


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_every_way_the_probe_reaches_a_member_agrees_with_libclang(tmp_path, target):
    path = tmp_path / "reach.h"
    path.write_text(REACHES)
    r = cheader.read_header(path, target)  # raises on any disagreement with libclang
    assert sorted(r.structs) == ["inner", "local", "outer", "struct inner", "struct local",
                                 "struct outer", "struct td_t", "td_t"]
    t = get(target)
    decls = [r.structs["outer"], r.structs["td_t"]]
    assert oracles.disagreements(decls, oracles.measure_libclang(decls, t), t) == {}
    # The probe: outer.i, inner's 2, the union's a and bb, bb's 2, td_t's c and m, m[0][0] itself
    # and its 2, the anonymous struct's k. libclang's query (which walks the whole record each
    # time): outer's anonymous member (8 fields: i, inner's 2, the union's, a, bb, bb's 2),
    # td_t's (4: c, m, the anonymous struct, k) and local's 2 fields (2 each).
    assert r.probes == 1 + 2 + 2 + 2 + 2 + 1 + 2 + 1
    assert r.offset_query_fields == 8 + 4 + 2 * 2


@pytest.mark.parametrize("text,line,name", [
    ("typedef struct {\n  struct { char c; int i; } inner[2];\n} t;", 2, "t_inner"),
    ("struct o {\n  union {\n    struct { char c; int i; } s;\n  };\n};", 3, "o_anonymous0_s"),
    ("void f(void) {\n  struct l { char c; int i; } v;\n}", 2, "l"),
])
def test_a_disagreement_in_any_reached_record_is_an_error(tmp_path, text, line, name):
    """A pack in a skipped block is read into the declarations, not libclang's: every way of
    measuring a record sees the difference."""
    path = tmp_path / "pack.h"
    path.write_text(PACK2 + text + "\n")
    with pytest.raises(cheader.HeaderError, match=rf"pack\.h:{line + 3}: {name}: the engine and libclang "
                                                  r"\(x86_64-linux-gnu\) disagree: .*i: engine bit 16, "
                                                  r"oracle bit 32"):
        cheader.parse_header(path, "x86_64")


_READ_STDINT = ("import sys; from ireeabi.abi import cheader; "
                "s = cheader.parse_header(sys.argv[1], 'i386')['t']; "
                "from ireeabi.abi.targets import get; print(s.layout(get('i386')).size)")


def test_the_freestanding_headers_leave_one_folder_behind(tmp_path):
    """Every process that reads a header shares one folder of the small headers: one made per
    process stayed in the temporary directory each time (1,875 of them after a day's tests). A
    folder of that name holding other bytes is not trusted: that process uses its own and removes it."""
    import os
    import subprocess
    import sys
    header = tmp_path / "t.h"
    header.write_text("#include <stdint.h>\n#include <stdbool.h>\ntypedef struct t { bool b; int64_t x; } t;\n")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp))
    run = [sys.executable, "-c", _READ_STDINT, str(header)]
    for _ in range(2):  # i386 aligns an int64_t member to 4 (libclang, for the triple)
        assert subprocess.run(run, env=env, capture_output=True, text=True, check=True).stdout == "12\n"
    left = sorted(tmp.iterdir())
    assert len(left) == 1 and sorted(p.name for p in left[0].iterdir()) == \
        ["limits.h", "stdalign.h", "stdbool.h", "stddef.h", "stdint.h"]  # the module's docstring names them
    (left[0] / "stdint.h").write_text("typedef char int64_t;\n")  # someone else's bytes
    assert subprocess.run(run, env=env, capture_output=True, text=True, check=True).stdout == "12\n"
    assert sorted(tmp.iterdir()) == left
