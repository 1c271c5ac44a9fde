"""A bit-field means one thing in the Python API (`FieldLayout`) and in `ireeabi layout --json`.

The definition (abi/layout.py, FieldLayout): `offset`, `size` are the storage unit's; the field is
`bits` bits from bit `bit_offset` on, counting from the least significant bit of the byte at `offset`;
`first_bit` counts that bit from the struct's start; `byte_span` is the bytes its bits touch. The JSON
has the same keys with the same numbers (offsets from the start of the struct shown).

Oracles: libclang's bit offset of every bit-field on all seven targets, and on the host, C itself: a
field set to all ones by compiled C code sets exactly bits first_bit .. first_bit + bits - 1.
"""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from ireeabi import layouts
from ireeabi.abi import cdecl, cheader, oracles, views
from ireeabi.abi.layout import Struct, StructLayout
from ireeabi.abi.targets import TARGETS, get
from ireeabi.cli.main import main

HEADER = Path(__file__).parents[1] / "fixtures" / "headers" / "constructs.h"
STRUCTS = ["everything_t", "wire"]  # plain, straddling and packed bit-fields
CATALOG = ["iree_hal_buffer_mapping_t"]


def _layout_json(capsys, *argv: str) -> dict:
    assert main(["layout", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _api_bitfields(lay: StructLayout) -> dict[str, dict]:
    """Every bit-field of `lay` (nested ones too) in the JSON's form, from FieldLayout alone."""
    out = {}
    for path, f, offset, _ in lay.walk():
        if f.bits is not None:
            base = offset - f.offset  # where the struct holding it starts
            lo, hi = f.byte_span
            out[path] = {"offset": offset, "size": f.size, "bit_offset": f.bit_offset,
                         "bits": f.bits, "first_bit": base * 8 + f.first_bit,
                         "byte_span": [base + lo, base + hi]}
    return out


def _json_bitfields(d: dict) -> dict[str, dict]:
    return {f["name"]: {k: f[k] for k in ("offset", "size", "bit_offset", "bits", "first_bit",
                                          "byte_span")}
            for f in d["fields"] if "bits" in f}


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_json_bitfields_are_the_apis_and_libclangs(capsys, target):
    t = get(target)
    cases = [(layouts.get(n), ["--target", target, n]) for n in CATALOG]
    cases += [(cheader.header_struct(HEADER, n, t), ["--header", str(HEADER), "--target", target, n])
              for n in STRUCTS]
    seen = 0
    for decl, argv in cases:
        lay = decl.layout(t)
        api = _api_bitfields(lay)
        assert _json_bitfields(_layout_json(capsys, *argv)) == api
        clang = oracles.measure_libclang([decl], t)[decl.name].bit_offsets
        for path, f in api.items():
            assert f["first_bit"] == clang[path], (decl.name, path)
            assert f["offset"] * 8 + f["bit_offset"] == f["first_bit"]
        seen += len(api)
    assert seen == 2 + 7 + 4  # mapping: 2; everything_t: 3, and 4 in its member wire; wire: 4


def test_the_bits_are_where_c_writes_them(tmp_path):
    """On the host: compiled C sets one bit-field to all ones; the set bits are the field's."""
    import cffi

    t = get(oracles.host_target_name())
    parsed = cheader.parse_header(HEADER, t)  # one parse: everything_t's member wire is `wire`
    decls = [parsed[n] for n in STRUCTS] + [layouts.get(n) for n in CATALOG]
    bodies = []
    cases: list[tuple[Struct, str, int]] = []
    for d in decls:
        for path, f, _, _ in d.layout(t).walk():
            if f.bits is not None:
                bodies.append(f"  case {len(cases)}: {{ {d.name} s; memset(&s, 0, sizeof s); "
                              f"s.{path} = -1; memcpy(out, &s, sizeof s); return sizeof s; }}")
                cases.append((d, path, len(cases)))
    src = (cdecl.c_source(decls) + "#include <string.h>\n"
           "int ireeabi_ones(int which, unsigned char* out) {\n  switch (which) {\n"
           + "\n".join(bodies) + "\n  }\n  return -1;\n}\n")
    ffi = cffi.FFI()
    ffi.cdef("int ireeabi_ones(int which, unsigned char* out);")
    ffi.set_source("_ireeabi_bitfield_probe", src)
    spec = importlib.util.spec_from_file_location("_ireeabi_bitfield_probe",
                                                  ffi.compile(tmpdir=str(tmp_path), verbose=False))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for decl, path, which in cases:
        lay = decl.layout(t)
        buf = ffi.new("unsigned char[]", lay.size)
        assert mod.lib.ireeabi_ones(which, buf) == lay.size
        word = int.from_bytes(bytes(ffi.buffer(buf)), "little")
        f = _api_bitfields(lay)[path]
        assert word == ((1 << f["bits"]) - 1) << f["first_bit"], (decl.name, path)
        lo, hi = f["byte_span"]
        touched = [i for i, b in enumerate(bytes(ffi.buffer(buf))) if b]
        assert (touched[0], touched[-1] + 1) == (lo, hi)
        # The construct view reads the same bits back as the field's value.
        assert _get(views.parse(decl, t, bytes(ffi.buffer(buf))), path) in (
            (1 << f["bits"]) - 1, -1)


def _get(obj: dict, path: str):
    for part in path.split("."):
        obj = obj[part]
    return obj
