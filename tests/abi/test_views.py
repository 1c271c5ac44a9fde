"""The layout engine's own guarantees: explicit padding, three agreeing views, clear errors."""
import ctypes

import pytest

from ireeabi.abi import layout as L
from ireeabi.abi import views
from ireeabi.abi.errors import LayoutError
from support.catalog_sample import ALL, bits, flex, outer


@pytest.mark.parametrize("target", ["x86_64", "i386", "armv7"])
@pytest.mark.parametrize("decl", ALL, ids=lambda d: d.name)
def test_every_byte_is_a_field_or_padding(decl, target):
    lay = decl.layout(target)
    owner = [None] * lay.size
    for f in lay.fields:
        lo, hi = f.byte_span
        for i in range(lo, min(hi, lay.size)):
            if f.bits is None:
                assert owner[i] is None or decl.is_union, (f.name, i)
            owner[i] = f.name
    for p in lay.padding:
        for i in range(p.offset, p.end):
            assert owner[i] is None
            owner[i] = "pad"
    assert all(o is not None for o in owner)


@pytest.mark.parametrize("target", ["x86_64", "riscv32", "i386"])
@pytest.mark.parametrize("decl", ALL, ids=lambda d: d.name)
def test_construct_round_trip_and_ctypes_bytes(decl, target):
    v = views.views(decl, target)
    values = views.pattern(v.layout)
    data = views.build(decl, target, values)
    assert len(data) == v.size
    inst = v.ctype.from_buffer_copy(data)
    assert bytes(inst) == data
    parsed = views.parse(decl, target, data)
    # Unions parse every member; the pattern set only the first.
    assert views.project(parsed, values) == values


def test_bitfield_shares_unit_with_preceding_member():
    # C puts a uint32 bit-field into the unused bytes of the unit that holds the uint16 before it.
    lay = bits.layout("x86_64")
    f = lay.field("is_persistent")
    assert f.byte_span == (2, 3)
    ct = views.ctypes_class(bits, "x86_64")
    inst = ct()
    inst.is_persistent = 1
    assert bytes(inst)[2] == 1
    inst.reserved = (1 << 30) - 1
    assert inst.reserved == (1 << 30) - 1 and inst.is_persistent == 1


def test_flexible_array_excluded_from_sizeof():
    lay = flex.layout("x86_64")
    assert lay.flexible is not None and lay.flexible.name == "items"
    assert ctypes.sizeof(views.ctypes_class(flex, "x86_64")) == lay.size


def test_offsetof_nested_path():
    lay = outer.layout("x86_64")
    assert lay.offsetof("inner.b") == lay.field("inner").offset + lay.field("inner").type.layout("x86_64").field("b").offset


@pytest.mark.parametrize("fields, message", [
    ([("a", L.Array(L.Scalar("int32_t"), None)), ("b", L.Scalar("int32_t"))], "flexible array"),
    ([("a", L.Scalar("int32_t")), ("a", L.Scalar("int32_t"))], "declared twice"),
    ([("1a", L.Scalar("int32_t"))], "valid C name"),
    ([], "empty struct"),
    ([("p", L.Pointer(), 3)], "bit-field"),
])
def test_bad_declarations(fields, message):
    with pytest.raises(LayoutError, match=message):
        L.Struct("bad", fields)


def test_bitfield_wider_than_type():
    s = L.Struct("too_wide", [("x", L.Scalar("uint8_t"), 9)])
    with pytest.raises(LayoutError, match="wider"):
        s.layout("x86_64")


def test_build_with_missing_value_names_struct():
    with pytest.raises(LayoutError, match="t_inner"):
        views.build(ALL[1], "x86_64", {"a": 1})


def test_parse_short_buffer():
    with pytest.raises(LayoutError, match="need"):
        views.parse(ALL[1], "x86_64", b"\0" * 3)


def test_a_union_ctypes_view_on_python_3_10s_ctypes(monkeypatch):
    """Python 3.10's ctypes has no LittleEndianUnion (3.11 added it; ireeabi supports 3.10): a
    union's ctypes view is built all the same, the bytes of its construct view."""
    monkeypatch.delattr(ctypes, "LittleEndianUnion", raising=False)
    # a declaration of its own: views are made once per declaration and data model
    decl = L.Union("t_planted_number", [("i", L.Scalar("int32_t")), ("d", L.Scalar("double"))])
    v = views.views(decl, "x86_64")
    data = views.build(decl, "x86_64", views.pattern(v.layout))
    assert ctypes.sizeof(v.ctype) == v.size == len(data)
    assert bytes(v.ctype.from_buffer_copy(data)) == data
