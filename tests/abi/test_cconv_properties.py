"""Random fragments and span counts on every target: aligned, non-overlapping, round-tripping."""
import struct

from hypothesis import given, settings, strategies as st

from ireeabi.abi import cconv, targets
from ireeabi.abi.cconv import codec

SCALAR = st.sampled_from("iIfFr")
SPAN = st.lists(SCALAR, min_size=1, max_size=4).map(lambda cs: "C" + "".join(cs) + "D")
ITEM = st.one_of(SCALAR, SPAN)
FRAGMENT = st.lists(ITEM, min_size=0, max_size=7).map("".join)
TARGET = st.sampled_from(targets.names())


@st.composite
def instances(draw):
    frag = draw(FRAGMENT)
    n = frag.count("C")
    spans = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    return frag, draw(TARGET), spans


def _value(kind, draw):
    if kind == "i32":
        return draw(st.integers(-2**31, 2**31 - 1))
    if kind == "i64":
        return draw(st.integers(-2**63, 2**63 - 1))
    if kind == "f32":
        return struct.unpack("<f", struct.pack("<f", draw(st.floats(width=32, allow_nan=False))))[0]
    if kind == "f64":
        return draw(st.floats(allow_nan=False))
    return (draw(st.integers(0, 2**32 - 1)), draw(st.integers(0, 2**32 - 1)))


@settings(max_examples=400, deadline=None, derandomize=True)
@given(instances())
def test_values_aligned_and_disjoint(inst):
    frag, tname, spans = inst
    t = targets.get(tname)
    lay = cconv.layout(frag, t, spans)
    ref_align = 8 if t.pointer_size == 8 else 4
    slots = sorted([(v.offset, v.end) for v in lay.values] + [(c.offset, c.end) for c in lay.counts])
    for (a0, a1), (b0, _) in zip(slots, slots[1:]):
        assert a1 <= b0
    for v in lay.values:
        align = {"i32": 4, "f32": 4, "i64": 8, "f64": 8, "ref": ref_align}[v.kind]
        assert v.offset % align == 0
    assert lay.packed_size == (slots[-1][1] if slots else 0)
    assert lay.size % 4 == 0
    assert (lay.packed_size > lay.size) == any(f.rule == "pack-overflow" for f in lay.findings)
    parsed = cconv.parse_fragment(frag)
    fixed = sum(1 for i in parsed.items if isinstance(i, cconv.Value))
    spanned = sum(len(sp.values) * n for sp, n in zip(parsed.spans, spans))
    assert len(lay.values) == fixed + spanned


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.data())
def test_pack_unpack_round_trip(data):
    frag, tname, spans = data.draw(instances())
    lay = cconv.layout(frag, tname, spans)
    if any(f.rule == "pack-overflow" for f in lay.findings):
        return  # the packer would write past the allocation: no codec of that size exists
    c = codec.codec(lay)
    values = [_value(v.kind, data.draw) for v in lay.values]
    buf = c.pack(values)
    assert len(buf) == lay.size
    assert c.unpack(buf) == values
    assert c.counts(buf) == list(spans)
    # construct sees the same bytes and rebuilds them exactly
    k = codec.construct_of(lay)
    assert k.build(k.parse(buf)) == buf
    # every gap stays zero
    for g in lay.gaps:
        assert buf[g.offset:g.offset + g.size] == bytes(g.size)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(alphabet="0_vCDiIfFrx ", max_size=12))
def test_parse_raises_only_cconv_errors(text):
    try:
        cconv.parse(text)
    except cconv.CconvError as e:
        assert 0 <= e.index <= len(text)
