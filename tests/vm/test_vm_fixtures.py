"""The binary dispatch fixtures: regenerated and byte-compared, positions checked against cconv.layout
and against the fact sheet's worked examples."""
from __future__ import annotations

import json

import pytest

from ireeabi.abi import cconv
from ireeabi.abi.cconv import codec
from ireeabi.abi.cconv.codec import codec as fast_codec

from support import vm_fixture_gen as G

# Fact sheet §2.4, "Worked example" tables (4 constants, 3 bindings): byte offsets of the packer layout.
FACT_SHEET = {
    "x86_64": dict(size=160, executable=0, function_id=16, workgroup=(24, 28, 32), constant_count=36,
                   constants=(40, 44, 48, 52), binding_count=56, padding=(60, 4),
                   bindings=(64, 96, 128), binding_fields=(0, 16, 24)),
    "riscv32": dict(size=128, executable=0, function_id=8, workgroup=(16, 20, 24), constant_count=28,
                    constants=(32, 36, 40, 44), binding_count=48, padding=(52, 4),
                    bindings=(56, 80, 104), binding_fields=(0, 8, 16)),
}


@pytest.mark.parametrize("target", G.TARGETS)
def test_fixture_regenerates_byte_for_byte(target: str) -> None:
    data, sidecar = G.build(target)
    bin_path, json_path = G.paths(target)
    assert bin_path.read_bytes() == data
    assert json_path.read_text() == G.render(sidecar)
    lay = cconv.layout(G.FRAGMENT, target, G.SPANS)
    assert fast_codec(lay).pack([v for _, v in G.named_values(target)]) == data  # the vm hot path agrees


@pytest.mark.parametrize("target", G.TARGETS)
def test_sidecar_positions_are_the_engine_layout(target: str) -> None:
    data = G.paths(target)[0].read_bytes()
    sidecar = json.loads(G.paths(target)[1].read_text())
    lay = cconv.layout(G.FRAGMENT, target, G.SPANS)
    by_name = {f["name"]: f for f in sidecar["fields"]}
    values = [f for f in sidecar["fields"] if f["kind"] != "count"]
    assert [(f["offset"], f["size"], f["kind"]) for f in values] == [(v.offset, v.size, v.kind) for v in lay.values]
    assert [by_name[n]["offset"] for n in G.COUNT_NAMES] == [c.offset for c in lay.counts]
    assert sidecar["size"] == lay.size == len(data)
    word = sidecar["pointer_size"]
    assert word == lay.target.pointer_size and by_name["executable"]["size"] == 2 * word
    # Each named value really is at its offset: read back through an independent view (construct).
    parsed = codec.construct_of(lay).parse(data)
    for i, (f, v) in enumerate(zip(values, lay.values)):
        got = parsed[f"v{i}_{v.kind}"]
        want = f["value"]
        if v.kind == "ref":
            assert (hex(got.ptr), hex(got.type)) == (want["ptr"], want["type"])
        else:
            assert got == want
    assert [parsed[f"count{k}"] for k in range(2)] == list(G.SPANS)
    for gap in sidecar["padding"]:
        assert data[gap["offset"]:gap["offset"] + gap["size"]] == bytes(gap["size"])


@pytest.mark.parametrize("target", G.TARGETS)
def test_positions_match_the_fact_sheet(target: str) -> None:
    fs = FACT_SHEET[target]
    f = {x["name"]: x["offset"] for x in json.loads(G.paths(target)[1].read_text())["fields"]}
    sidecar = json.loads(G.paths(target)[1].read_text())
    assert sidecar["size"] == fs["size"]
    assert (f["executable"], f["function_id"]) == (fs["executable"], fs["function_id"])
    assert (f["workgroup_x"], f["workgroup_y"], f["workgroup_z"]) == fs["workgroup"]
    assert (f["constant_count"], f["binding_count"]) == (fs["constant_count"], fs["binding_count"])
    assert tuple(f[f"constants[{k}]"] for k in range(4)) == fs["constants"]
    assert {"offset": fs["padding"][0], "size": fs["padding"][1]} in sidecar["padding"]
    for k, base in enumerate(fs["bindings"]):
        got = tuple(f[f"bindings[{k}].{n}"] - base for n in ("buffer", "offset", "length"))
        assert (f[f"bindings[{k}].buffer"], got) == (base, fs["binding_fields"])
