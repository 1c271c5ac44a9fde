"""Constructs of real headers (tests/fixtures/headers/layout_features.h), laid out by the engine
from the header read by libclang, against the compilers of each data model: gcc (x86_64), gcc -m32 (i386),
arm-linux-gnueabihf-gcc (armv7), aarch64-linux-gnu-gcc (aarch64), riscv64-linux-gnu-gcc with
-march=rv32imafd -mabi=ilp32d (riscv32) and plain (riscv64), clang --target=wasm32-unknown-unknown
(wasm32).

Nothing of the target runs: each compiler builds an object holding one initialized global, read
back from the object file (pyelftools for ELF, the data section of a wasm object): sizeof, _Alignof
and offsetof of every struct and member, and for every bit-field an object of its struct with that
field set to -1, whose lowest set bit is the field's first bit.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from support.debian_tools import debian_file, debian_tool, suite_packages
from ireeabi.abi import cheader
from ireeabi.abi.layout import Struct
from ireeabi.abi.targets import TARGETS
from ireeabi.cli.main import main

HEADERS = Path(__file__).parents[1] / "fixtures" / "headers"
FEATURES = HEADERS / "layout_features.h"

COMPILERS = {
    "x86_64": ["gcc"],
    "i386": ["gcc", "-m32"],
    "armv7": ["arm-linux-gnueabihf-gcc"],
    "aarch64": ["aarch64-linux-gnu-gcc"],
    "riscv32": ["riscv64-linux-gnu-gcc", "-march=rv32imafd", "-mabi=ilp32d"],
    "riscv64": ["riscv64-linux-gnu-gcc"],
    "wasm32": ["clang", "--target=wasm32-unknown-unknown"],
}

# Every struct of layout_features.h, as C names it.
STRUCTS = ["td_align_t", "two_anon_t", "reg_map_t", "pte_t", "struct unnamed_small",
           "struct unnamed_wide", "struct zero_mid", "struct zero_end", "struct zero_first",
           "struct zero_wide", "struct zero_bits", "struct zero_packed", "struct macro_align",
           "struct atomics", "struct pack2", "struct pack2_aligned", "struct pack1",
           "struct pack2_again", "struct pack4", "struct unpacked", "struct holds_aligned_name",
           "struct straddle64", "reg_view_t", "union reserved_word", "union zero_in_union",
           "union wide_in_union", "struct packed_typedef", "struct pack16_typedef",
           "struct pack4_typedefs", "struct packed_member_typedef", "struct packed_atomic",
           "ring_desc_t", "struct ring"]


def _compiler(target: str) -> list[str]:
    argv = list(COMPILERS[target])
    argv[0] = debian_tool(argv[0])
    if target == "i386":
        debian_file(*next((path, package) for package, path in suite_packages().items()
                          if package.startswith("lib32gcc-")))
    return argv


def _leb(b: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        x = b[i]
        i += 1
        value |= (x & 0x7F) << shift
        shift += 7
        if x < 0x80:
            return value, i


def _wasm_data(b: bytes) -> bytes:
    """The one active data segment of a wasm object (the global), from its data section (id 11)."""
    assert b[:4] == b"\0asm"
    i, segments = 8, []
    while i < len(b):
        size, start = _leb(b, i + 1)
        if b[i] == 11:
            n, j = _leb(b, start)
            for _ in range(n):
                flags, j = _leb(b, j)
                assert flags == 0 and b[j] == 0x41  # active, memory 0, i32.const offset
                _, j = _leb(b, j + 1)
                assert b[j] == 0x0B
                length, j = _leb(b, j + 1)
                segments.append(b[j:j + length])
                j += length
        i = start + size
    assert len(segments) == 1
    return segments[0]


def _object_bytes(target: str, source: str, tmp: Path) -> bytes:
    """The bytes of `ireeabi_probe` in the object the target's compiler builds from `source`."""
    c = tmp / f"probe_{target}.c"
    c.write_text(source)
    o = tmp / f"probe_{target}.o"
    subprocess.run([*_compiler(target), "-std=gnu11", "-ffreestanding", "-O0", "-I", str(HEADERS), "-c",
                    str(c), "-o", str(o)], check=True, capture_output=True, text=True)
    if target == "wasm32":
        return _wasm_data(o.read_bytes())
    with open(o, "rb") as fh:
        elf = ELFFile(fh)
        sym = elf.get_section_by_name(".symtab").get_symbol_by_name("ireeabi_probe")[0]
        data = elf.get_section(sym["st_shndx"]).data()
        return data[sym["st_value"]:sym["st_value"] + sym["st_size"]]


def _c_members(s: Struct, prefix: str = "") -> list[tuple[str, str, bool]]:
    """(engine path, C designator, is bit-field) of every named member C can reach directly:
    direct members and, through anonymous members, theirs. Unnamed bit-fields are left out (C
    cannot name them; the members after them and sizeof show where they went)."""
    out = []
    for f in s.fields:
        if f.anonymous and f.bits is not None:
            continue
        if f.anonymous:
            for path, c, bits in _c_members(f.type, ""):
                out.append((f"{prefix}{f.name}.{path}", c, bits))
        else:
            out.append((prefix + f.name, f.name, f.bits is not None))
    return out


def compiler_layouts(target: str, structs: dict[str, Struct], tmp: Path) -> dict[str, dict]:
    """{C name: {"size", "align", "offsets": {engine path: bit offset}}} as the compiler laid out."""
    exprs: list[str] = []
    images: list[tuple[str, str]] = []  # (C type, designator set to -1)
    keys: list[tuple[str, str]] = []
    for name in STRUCTS:
        exprs += [f"sizeof({name})", f"_Alignof({name})"]
        keys += [(name, "#size"), (name, "#align")]
        for path, designator, bits in _c_members(structs[name]):
            if bits:
                exprs.append(f"offsetof(probe_t, img{len(images)})")
                images.append((name, designator))
            else:
                exprs.append(f"offsetof({name}, {designator}) * 8")
            keys.append((name, path))
    source = ('#include "layout_features.h"\ntypedef struct {\n  unsigned long long v[%d];\n%s} probe_t;\n'
              "probe_t ireeabi_probe = {\n  { %s },\n%s};\n") % (
        len(exprs), "".join(f"  {t} img{i};\n" for i, (t, _) in enumerate(images)),
        ", ".join(f"(unsigned long long)({e})" for e in exprs),
        "".join(f"  {{ .{d} = -1 }},\n" for _, d in images))
    data = _object_bytes(target, source, tmp)
    out: dict[str, dict] = {}
    image = 0
    for i, (name, what) in enumerate(keys):
        value = int.from_bytes(data[8 * i:8 * i + 8], "little")
        m = out.setdefault(name, {"offsets": {}})
        if what in ("#size", "#align"):
            m[what[1:]] = value
        elif any(p == what for p, _, bits in _c_members(structs[name]) if bits):
            size = m["size"]
            word = int.from_bytes(data[value:value + size], "little")
            assert word, (name, what)
            m["offsets"][what] = (word & -word).bit_length() - 1  # its lowest set bit
            image += 1
        else:
            m["offsets"][what] = value
    return out


def engine_layouts(structs: dict[str, Struct], target: str) -> dict[str, dict]:
    out = {}
    for name in STRUCTS:
        lay = structs[name].layout(target)
        offsets = {}
        for path, _, bits in _c_members(structs[name]):
            parts, lay_at, base = path.split("."), lay, 0
            for part in parts[:-1]:
                f = lay_at.field(part)
                base += f.offset
                lay_at = f.type.layout(target)
            f = lay_at.field(parts[-1])
            offsets[path] = (base + f.offset) * 8 + (f.bit_offset or 0)
        out[name] = {"size": lay.size, "align": lay.align, "offsets": offsets}
    return out


@pytest.fixture(scope="module")
def measured(tmp_path_factory) -> dict[str, dict[str, dict]]:
    tmp = tmp_path_factory.mktemp("features")
    out = {}
    for target in sorted(TARGETS):
        r = cheader.read_header(FEATURES, target)  # every struct agrees with libclang too...
        # ...but the typedef naming a struct with an alignment of its own (C: sizeof 1, alignof 16).
        assert list(r.errors) == ["aligned_name_t"] and r.errors["aligned_name_t"].startswith(
            f"{FEATURES}:77: aligned_name_t: a typedef with its own alignment (16; its struct's is 1, sizeof 1)")
        structs = r.structs
        out[target] = (engine_layouts(structs, target), compiler_layouts(target, structs, tmp))
    return out


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_every_struct_of_the_features_header_is_the_compilers(measured, target):
    engine, compiler = measured[target]
    for name in STRUCTS:
        assert engine[name] == compiler[name], (target, name)


def test_the_features_are_there_and_differ_by_target(measured):
    """Not vacuous: the constructs change layouts, and the per-target rules are told apart."""
    c = {t: compiler for t, (_, compiler) in measured.items()}
    arm, x86 = c["armv7"], c["x86_64"]
    # Zero-width and unnamed bit-fields give the struct their type's alignment on AAPCS only.
    for t in ("armv7", "aarch64"):
        assert c[t]["struct zero_mid"]["size"] == 8 and c[t]["struct zero_packed"]["align"] == 4
        assert c[t]["struct unnamed_wide"]["align"] == 8
    for t in ("x86_64", "i386", "riscv32", "riscv64", "wasm32"):
        assert c[t]["struct zero_mid"]["size"] == 5 and c[t]["struct zero_mid"]["align"] == 1
        assert c[t]["struct unnamed_small"]["size"] == 3
    assert c["i386"]["struct zero_wide"]["offsets"]["d"] == 32 and x86["struct zero_wide"]["offsets"]["d"] == 64
    assert arm["reg_map_t"]["offsets"]["mode"] == 4 and arm["pte_t"]["offsets"]["frame"] == 12
    # Alignments: a typedef's (raised and lowered), macros and expressions, _Atomic, #pragma pack.
    assert x86["td_align_t"]["offsets"]["raised"] == 64 and x86["td_align_t"]["offsets"]["lowered"] == 128  # 4-aligned, not 8
    assert x86["struct macro_align"]["align"] == 64 and x86["struct macro_align"]["offsets"]["sixteen"] == 80 * 8
    assert c["i386"]["struct atomics"]["offsets"]["counter"] == 64  # 8-aligned, not 4 as uint64_t
    assert x86["struct pack2"]["size"] == 20 and x86["struct pack1"]["size"] == 11
    assert x86["struct pack2_aligned"]["align"] == 2 and x86["struct pack4"]["offsets"]["l"] == 32
    assert x86["struct pack2_again"]["offsets"]["d"] == 64 and x86["struct unpacked"]["offsets"]["l"] == 64
    for t in ("armv7", "aarch64"):
        assert c[t]["union reserved_word"]["align"] == 8 and c[t]["union zero_in_union"]["size"] == 4
    assert x86["union reserved_word"]["align"] == 1 and x86["union zero_in_union"]["size"] == 1
    assert x86["union wide_in_union"]["size"] == 8 and x86["reg_view_t"]["align"] == 4
    assert x86["struct packed_typedef"]["offsets"]["x"] == 8 and x86["struct pack16_typedef"]["offsets"]["x"] == 64
    assert x86["struct pack4_typedefs"]["offsets"]["x"] == 32 and x86["struct packed_atomic"]["size"] == 9
    assert c["i386"]["ring_desc_t"]["align"] == 16 and c["i386"]["struct ring"]["offsets"]["desc"] == 128
    assert c["i386"]["struct straddle64"]["offsets"]["x"] == 40 and x86["struct straddle64"]["offsets"]["x"] == 64
    assert x86["struct holds_aligned_name"]["offsets"]["t"] == 128 and \
        x86["struct holds_aligned_name"]["size"] == 32
    # A union of two anonymous structs: both sets of members, at once.
    assert set(x86["two_anon_t"]["offsets"]) == {"__anonymous0.lo", "__anonymous0.hi", "__anonymous1.a",
                                                 "__anonymous1.b"}


MIXED = """\
struct good { char c; int i; };
struct bad {
  char c;
  __int128 big;
};
typedef struct { struct bad b; } uses_bad_t;
typedef struct { char c; int : 0; char d; } also_good_t;
struct broken { unknown_t x; };
"""


def test_one_bad_struct_concerns_only_itself(tmp_path):
    """Its error names its line (and the structs built on it fail with it); every other struct
    of the header lays out, as libclang does."""
    path = tmp_path / "mixed.h"
    path.write_text(MIXED)
    r = cheader.read_header(path, "x86_64")
    assert sorted(r.structs) == ["also_good_t", "good", "struct also_good_t", "struct good"]
    assert r.structs["also_good_t"].layout("x86_64").size == 5  # int : 0 on SysV
    assert r.errors["bad"] == r.errors["struct bad"] == r.errors["uses_bad_t"] == \
        f"{path}:4: big: type __int128 (int128) is not modelled"
    assert r.errors["broken"] == f"{path}:8: unknown type name 'unknown_t'"
    assert cheader.header_struct(path, "good", "x86_64").layout("x86_64").size == 8
    with pytest.raises(cheader.HeaderError, match=rf"mixed\.h:8: unknown type name"):
        cheader.header_struct(path, "broken", "x86_64")
    with pytest.raises(cheader.HeaderError, match=rf"mixed\.h:4: big: .* \(and 1 more structs\)$"):
        cheader.parse_header(path, "x86_64")


def test_layout_header_lists_every_struct_and_each_error(tmp_path, capsys):
    import json

    path = tmp_path / "mixed.h"
    path.write_text(MIXED)
    assert main(["layout", "--header", str(path), "--target", "i386"]) == 2
    text = capsys.readouterr().out
    assert "struct good on i386" in text and "struct also_good_t on i386" in text
    # i386 has no __int128: libclang's own error, charged to the struct holding it.
    assert f"error (i386): bad / struct bad / uses_bad_t / struct uses_bad_t: {path}:4: __int128 is not " \
        "supported on this target" in text
    assert f"error (i386): broken / struct broken: {path}:8: unknown type name 'unknown_t'" in text
    assert main(["layout", "--header", str(path), "--all-targets", "--json"]) == 2
    objs = json.loads(capsys.readouterr().out)
    assert [o["target"] for o in objs] == sorted(TARGETS, key=list(TARGETS).index)
    for o in objs:
        assert [s["name"] for s in o["structs"]] == ["good", "also_good_t"]
        sizes = {s["name"]: s["size"] for s in o["structs"]}
        assert sizes["also_good_t"] == (8 if o["target"] in ("armv7", "aarch64") else 5)
        assert {(e["line"], e["file"]) for e in o["errors"]} == {(4, str(path)), (8, str(path))}
    # layout_features.h: every struct but the typedef with an alignment of its own.
    assert main(["layout", "--header", str(FEATURES), "--target", "wasm32", "--json"]) == 2
    obj = json.loads(capsys.readouterr().out)
    assert [(e["names"], e["line"]) for e in obj["errors"]] == [(["aligned_name_t"], 77)]
    # (libclang spells an unnamed struct by its typedef's name: the struct itself, without the
    # typedef's alignment, is `struct aligned_name_t`.)
    assert {n for s in obj["structs"] for n in s["names"]} >= {*STRUCTS, "struct ring_desc"}
    assert [s["size"] for s in obj["structs"] if s["names"] == ["struct aligned_name_t"]] == [1]
    # One struct by name: the others' errors do not concern it.
    assert main(["layout", "good", "--header", str(path)]) == 0
    assert main(["layout", "bad", "--header", str(path)]) == 2
    # (the message wraps where the temporary path's length puts it: longer under pytest-xdist)
    assert f"{path}:4: big" in " ".join(capsys.readouterr().err.split())


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_the_engines_c_text_of_the_features_lays_out_the_same(target):
    """cdecl writes unnamed bit-fields unnamed and #pragma pack around the struct: libclang lays the
    engine's own C text out as the engine does (every member C can name)."""
    from ireeabi.abi import oracles

    t = TARGETS[target]
    r = cheader.read_header(FEATURES, t)
    decls = list({id(s): s for s in r.structs.values()}.values())
    measured = oracles.measure_libclang(decls, t)
    seen = 0
    for s in decls:
        for n in (*s.nested(), s):
            engine, clang = oracles.engine_view(n.layout(t)), measured[n.name]
            assert (engine.size, engine.align) == (clang.size, clang.align), n.name
            for path, bit in engine.bit_offsets.items():
                if "__unnamed" not in path:  # libclang names them "": the members after them show them
                    assert clang.bit_offsets[path] == bit, (n.name, path)
                    seen += 1
    assert seen > 60


ALIGNED_MEMBERS = """\
#define A 16
typedef struct { char c; _Alignas(A) int y; } anon_t;
struct outer {
  char c;
  struct { char d; _Alignas(A / 2) short s; } named;
  union { char u; struct { char e; int z __attribute__((aligned(A))); }; };
  struct { char f; _Alignas(A * 2) char g; } arr[2];
};
static inline int f(void) { struct local { char c; _Alignas(8) int x; } l; l.c = 0; return l.c; }
static inline int g(void) { struct local2 { char c; _Alignas(A) int x; } l; l.c = 0; return l.c; }
"""


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_every_way_an_alignment_is_measured_agrees_with_libclang(tmp_path, target):
    """__alignof__ of the member reaches it through a typedef, a named member, an anonymous one and
    an array's element; a record of a function is read from an integer literal, and one with an
    expression there is that struct's error alone."""
    path = tmp_path / "aligned.h"
    path.write_text(ALIGNED_MEMBERS)
    r = cheader.read_header(path, target)  # every struct laid out agrees with libclang
    sizes = {n: (r.structs[n].layout(target).size, r.structs[n].layout(target).align)
             for n in ("anon_t", "outer", "local")}
    assert sizes == {"anon_t": (32, 16), "outer": (192, 32), "local": (16, 8)}
    assert r.errors == {n: f"{path}:10: x: its alignment could not be measured: only integer-literal "
                           "alignments are read in a record C cannot name from outside"
                        for n in ("local2", "struct local2")}


PACKS = """\
#pragma pack(push, 1)
struct a { char c; int i; };
  #  pragma pack(push, lbl)
struct b { char c; int i; };
#pragma pack(pop)
#pragma pack(pop)
struct c { char c; int i; };
#pragma pack(2)
struct d { char c; int i; };
#pragma pack()
struct e { char c; int i; };
#pragma pack(3)
struct f { char c; int i; };
"""


@pytest.mark.parametrize("target", ["x86_64", "armv7"])
def test_pragma_pack_directives_are_followed(tmp_path, target):
    """Labels, spacing, pop back to none, pack() (libclang agrees with each: read_header checks);
    a value that is not a power of two is that struct's error, with the directive's line."""
    path = tmp_path / "packs.h"
    path.write_text(PACKS)
    r = cheader.read_header(path, target)
    assert {n: (r.structs[n].max_align, r.structs[n].layout(target).size) for n in "abcde"} == \
        {"a": (1, 5), "b": (1, 5), "c": (None, 8), "d": (2, 6), "e": (None, 8)}
    assert r.errors["f"] == f"{path}:13: #pragma pack(3) at line 12 is not a power of two"


def test_a_macro_named_like_a_member_does_not_rewrite_the_probe(tmp_path):
    """Headers alias members through macros (`#define pn_data pn_msg_u.base.pn_data`, as Linux's
    phonet.h does); the probe's designators name the real members (libclang checks every offset)."""
    path = tmp_path / "alias.h"
    path.write_text("struct msg { char id; union { struct { char sub; char data[5]; } base;\n"
                    "  struct { short res; _Alignas(4) char sub; } ext; } u; };\n"
                    "#define sub u.base.sub\n#define data u.base.data\n#define res u.ext.res\n")
    for target in ("x86_64", "i386"):
        r = cheader.read_header(path, target)
        assert r.errors == {}
        lay = r.structs["msg"].layout(target)
        assert (lay.size, lay.field("u").offset) == (12, 4)


LIMITS = """\
#include <limits.h>
struct limits_use {
  char bits[CHAR_BIT];
  char uint_top[UINT_MAX >> 28];
  char ulong_top[ULONG_MAX >> (sizeof(long) * CHAR_BIT - 3)];
  char schar[SCHAR_MAX - 120];
  char ushrt[USHRT_MAX >> 13];
  char llong[LLONG_MAX >> 60];
  char uchar[UCHAR_MAX - 250];
  char chars[CHAR_MAX - CHAR_MIN == UCHAR_MAX ? 3 : 1];
  int ints[INT_MIN == -INT_MAX - 1 && LONG_MIN < 0 && LLONG_MIN < 0 && SHRT_MIN == -32768 ? 2 : 1];
};
"""


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_limits_h_is_there(tmp_path, target):
    """The reader's freestanding <limits.h>: each bound is what C gives on the data model (8 +
    15 + 7 + 7 + 7 + 7 + 5 + 3 chars, then two ints), and libclang lays it out the same."""
    path = tmp_path / "limits_use.h"
    path.write_text(LIMITS)
    s = cheader.header_struct(path, "limits_use", target)
    assert [f.type.count for f in s.fields] == [8, 15, 7, 7, 7, 7, 5, 3, 2]
    assert s.layout(target).size == 68
