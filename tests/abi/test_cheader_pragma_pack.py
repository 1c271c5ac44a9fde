"""`#pragma pack` as real headers spell it, in `layout --header` (abi/cheader.py, abi/pragma_pack.py),
against the compilers: gcc (x86_64), gcc -m32 (i386), arm-linux-gnueabihf-gcc (armv7),
aarch64-linux-gnu-gcc (aarch64), riscv64-linux-gnu-gcc for rv32 (riscv32), each building an object
that holds sizeof, _Alignof and offsetof of every struct and member (test_cheader_features's probe).

The headers: `_Pragma("pack(...)")` produced by macros (a begin/end pair, a macro naming another,
a macro wrapping the struct it packs, the operator written in the text), a struct nested inside a
packed one, a header that pushes a pack and leaves it in force for what follows its #include, a
push header and a pop header included twice each (unguarded, as Windows' pshpack1.h / poppack.h), and
a guarded header included under its includer's pack. Before the preprocessor's state was followed
across macros and files, each of these was libclang's disagreement, not a layout.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from ireeabi.abi import cheader, pragma_pack
from ireeabi.abi.layout import Struct
from test_cheader_features import _object_bytes

TARGETS = ["x86_64", "i386", "armv7", "aarch64", "riscv32"]

FILES = {
    "leaves.h": "#pragma pack(push, 2)\nstruct in_leaves { char c; int i; };\n",
    "pshpack1.h": "#pragma pack(push, 1)\n",
    "poppack.h": "#pragma pack(pop)\n",
    "defs.h": "#ifndef DEFS_H\n#define DEFS_H\nstruct in_defs { char c; long long l; };\n#endif\n",
    "main.h": """\
#define PACK_BEGIN _Pragma("pack(push, 1)")
#define PACK_END _Pragma("pack(pop)")
#define BEGIN_ALL PACK_BEGIN
#define PACKED_STRUCT(decl) _Pragma("pack(push, 1)") decl _Pragma("pack(pop)")
PACK_BEGIN
struct m1 { char c; int i; struct inner { char d; long long l; } in; };
PACK_END
struct m2 { char c; int i; };
PACKED_STRUCT(struct m3 { char c; double d; };)
struct m4 { char c; double d; };
BEGIN_ALL
struct m5 { char c; short s; long long l; };
PACK_END
_Pragma("pack(push, 2)") struct m6 { char c; int i; }; _Pragma("pack(pop)")
#include "leaves.h"
struct after_leaves { char c; int i; };
#pragma pack(pop)
struct after_pop { char c; int i; };
#include "pshpack1.h"
struct p1 { char c; int i; };
#include "poppack.h"
struct p2 { char c; int i; };
#include "pshpack1.h"
struct p3 { char c; long long l; };
#include "poppack.h"
#pragma pack(push, 1)
#include "defs.h"
#pragma pack(pop)
#include "defs.h"
struct end { char c; int i; };
""",
}
# Every struct and the members C names in it (nested: through the member holding it).
MEMBERS = {
    "m1": ["c", "i", "in", "in.d", "in.l"], "inner": ["d", "l"], "m2": ["c", "i"], "m3": ["c", "d"],
    "m4": ["c", "d"], "m5": ["c", "s", "l"], "m6": ["c", "i"], "in_leaves": ["c", "i"],
    "after_leaves": ["c", "i"], "after_pop": ["c", "i"], "p1": ["c", "i"], "p2": ["c", "i"],
    "p3": ["c", "l"], "in_defs": ["c", "l"], "end": ["c", "i"],
}
# The pack value in force at each (None: none), for the record of what each construct does.
PACKS = {"m1": 1, "inner": 1, "m2": None, "m3": 1, "m4": None, "m5": 1, "m6": 2, "in_leaves": 2,
         "after_leaves": 2, "after_pop": None, "p1": 1, "p2": None, "p3": 1, "in_defs": 1, "end": None}


@pytest.fixture(scope="module")
def header(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("pragma_pack")
    for name, text in FILES.items():
        (d / name).write_text(text)
    return d / "main.h"


def _engine(structs: dict[str, Struct], target: str) -> dict[str, dict]:
    out = {}
    for name, members in MEMBERS.items():
        lay = structs[f"struct {name}"].layout(target)
        offsets = {}
        for path in members:
            at, base = lay, 0
            for part in path.split("."):
                f = at.field(part)
                base += f.offset
                at = f.type.layout(target) if isinstance(f.type, Struct) else at
            offsets[path] = base
        out[name] = {"size": lay.size, "align": lay.align, "offsets": offsets}
    return out


def _compiler_layouts(target: str, header: Path, tmp: Path) -> dict[str, dict]:
    exprs, keys = [], []
    for name, members in MEMBERS.items():
        exprs += [f"sizeof(struct {name})", f"_Alignof(struct {name})"]
        keys += [(name, "#size"), (name, "#align")]
        for path in members:
            exprs.append(f"__builtin_offsetof(struct {name}, {path})")
            keys.append((name, path))
    source = (f'#include "{header}"\n'
              f"unsigned long long ireeabi_probe[{len(exprs)}] = {{\n"
              + "".join(f"  (unsigned long long)({e}),\n" for e in exprs) + "};\n")
    data = _object_bytes(target, source, tmp)
    out: dict[str, dict] = {}
    for i, (name, what) in enumerate(keys):
        value = int.from_bytes(data[8 * i:8 * i + 8], "little")
        m = out.setdefault(name, {"offsets": {}})
        if what.startswith("#"):
            m[what[1:]] = value
        else:
            m["offsets"][what] = value
    return out


@pytest.mark.parametrize("target", TARGETS)
def test_packs_from_macros_and_includes_are_the_compilers(header, tmp_path, target):
    r = cheader.read_header(header, target)  # every record also agrees with libclang
    assert r.errors == {}
    assert {n: r.structs[f"struct {n}"].max_align for n in MEMBERS} == PACKS
    assert _engine(r.structs, target) == _compiler_layouts(target, header, tmp_path)


def test_the_packs_change_the_layouts(header):
    """The constructs matter: each packed struct is smaller than its unpacked twin on x86_64."""
    x86 = _engine(cheader.read_header(header, "x86_64").structs, "x86_64")
    assert (x86["m1"]["size"], x86["inner"]["size"], x86["m3"]["size"], x86["m5"]["size"]) == (14, 9, 9, 11)
    assert (x86["m2"]["size"], x86["m4"]["size"], x86["after_pop"]["size"], x86["end"]["size"]) == (8, 16, 8, 8)
    assert x86["in_defs"]["offsets"]["l"] == 1 and x86["p3"]["offsets"]["l"] == 1
    assert x86["after_leaves"]["offsets"]["i"] == 2 and x86["m6"]["offsets"]["i"] == 2


def test_a_bad_value_from_a_macro_names_the_expansion_line(tmp_path):
    path = tmp_path / "bad.h"
    path.write_text('#define ODD _Pragma("pack(push, 3)")\n#define END _Pragma("pack(pop)")\n'
                    "struct ok { char c; int i; };\nODD\nstruct f { char c; int i; };\nEND\n"
                    "struct g { char c; int i; };\n")
    r = cheader.read_header(path, "x86_64")
    assert r.errors == {"f": f"{path}:5: #pragma pack(3) at line 4 is not a power of two",
                        "struct f": f"{path}:5: #pragma pack(3) at line 4 is not a power of two"}
    assert r.structs["ok"].max_align is None and r.structs["g"].max_align is None


def test_the_walk_follows_the_preprocessor():
    """Unit rules of abi/pragma_pack.py: clang's argument forms, a pack left by an include, a file
    included twice acting twice, an operator inside a macro's definition acting only where the macro
    expands."""
    op = pragma_pack.operation
    assert op("push, lbl, 4", 1) == pragma_pack.Operation("push", 4, True, 1)
    assert op("", 2) == pragma_pack.Operation("set", None, True, 2)
    assert op("show", 3).kind == "show" and op("pop", 4) == pragma_pack.Operation("pop", None, False, 4)
    text = b'#define P _Pragma("pack(push, 8)")\n_Pragma ( "pack ( 2 )" )\n  #  pragma pack(pop)\n'
    found = pragma_pack.text_operations(text, skip=[(0, text.index(b"\n"))])
    assert [(o, x.kind, x.value, x.line) for o, x in found] == [(35, "set", 2, 2), (60, "pop", None, 3)]
    push = [(0, op("push, 1", 1))]
    ops = {"main": [(5, op("4", 1)), (50, op("pop", 3))], "push": push, "none": []}
    tree = pragma_pack.inclusion_tree("main", [("main", 10, "push", 1), ("push", 0, "none", 2),
                                               ("main", 20, "push", 1)])
    points = pragma_pack.checkpoints(tree, lambda name: ops[name])
    assert points["main"] == ([-1, 5, 10, 20, 50], [None, 4, 1, 1, 1])  # pushed twice, popped once
    assert points["push"] == ([-1, 0, 0], [4, 1, 1]) and points["none"] == ([-1], [1])
    macros = {"B": pragma_pack.MacroBody((), ("_Pragma", "(", '"pack(push, 1)"', ")")),
              "W": pragma_pack.MacroBody(("d",), ("B", "d", "_Pragma", "(", '"pack(pop)"', ")")),
              "R": pragma_pack.MacroBody((), ("R", "B"))}
    before, after = pragma_pack.macro_operations("W", macros, {}, 9)
    assert [(x.kind, x.value, x.line) for x in before + after] == [("push", 1, 9), ("pop", None, 9)]
    assert len(before) == 1 and len(after) == 1
    assert [x.kind for x in sum(pragma_pack.macro_operations("R", macros, {}, 1), [])] == ["push"]
