"""`views.build`: every key must name a field and every field must have a value; one error lists all
that are missing and all that are unknown. And the views of every construct a header can declare
(nested arrays, anonymous members, packed bit-fields) build and parse back on all seven targets."""
from __future__ import annotations

from pathlib import Path

import pytest

from ireeabi import layouts
from ireeabi.abi import cheader, views
from ireeabi.abi.errors import LayoutError
from ireeabi.abi.layout import Array, Field, Pointer, Scalar, Struct, Union
from ireeabi.abi.targets import TARGETS
from ireeabi.abi.views import FieldValuesError

HEADER = Path(__file__).parents[1] / "fixtures" / "headers" / "constructs.h"
SPAN = Struct("iree_byte_span_t", [("data", Pointer("uint8_t")), ("data_length", Scalar("size_t"))])


def _error(decl: Struct, values: object, target: str = "x86_64") -> FieldValuesError:
    with pytest.raises(FieldValuesError) as e:
        views.build(decl, target, values)  # type: ignore[arg-type]
    assert isinstance(e.value, LayoutError)
    return e.value


def test_unknown_keys_are_rejected_and_all_named():
    e = _error(SPAN, {"data": 0x1000, "data_length": 16, "datalength": 16, "size": 1})
    assert (e.missing, e.unknown, e.wrong) == ([], ["datalength", "size"], [])
    assert str(e) == "iree_byte_span_t: cannot build: unknown datalength, size"


def test_every_missing_key_is_named_at_every_depth():
    mapping = layouts.get("iree_hal_buffer_mapping_t")
    e = _error(mapping, {})
    assert e.missing == [f.name for f in mapping.fields] and e.unknown == []
    values = views.parse(mapping, "riscv32", bytes(mapping.layout("riscv32").size))
    del values["contents"]["data_length"], values["impl"]["is_persistent"], values["buffer"]
    values["impl"]["persistent"] = 1
    e = _error(mapping, values, "riscv32")
    assert e.missing == ["contents.data_length", "buffer", "impl.is_persistent"]
    assert e.unknown == ["impl.persistent"]
    assert str(e) == ("iree_hal_buffer_mapping_t: cannot build: missing contents.data_length, buffer, "
                      "impl.is_persistent; unknown impl.persistent")


def test_wrong_shapes_are_named():
    outer = Struct("outer_t", [("span", SPAN), ("ids", Array(Scalar("int32_t"), 3)),
                               ("spans", Array(SPAN, 2))])
    e = _error(outer, {"span": 5, "ids": [1, 2], "spans": [{"data": 0, "data_length": 1}, {"data": 0}]})
    assert e.wrong == ["span (a dict of struct iree_byte_span_t's fields, got int)",
                       "ids (a list of 3 elements, got 2 elements)"]
    assert e.missing == ["spans[1].data_length"]
    assert _error(SPAN, [1, 2]).wrong == ["iree_byte_span_t (a dict of struct iree_byte_span_t's "
                                          "fields, got list)"]


def test_a_union_needs_one_member_and_builds_the_first_given():
    u = Union("value_t", [Field("f", Scalar("float")), Field("i", Scalar("int64_t"))])
    assert _error(u, {}).missing == ["{f | i}"]
    assert _error(u, {"i": 1, "j": 2}).unknown == ["j"]
    assert views.build(u, "x86_64", {"i": 258}) == (258).to_bytes(8, "little")
    assert views.build(u, "x86_64", {"i": 258, "f": 1.0}) == views.build(u, "x86_64", {"f": 1.0})


def test_a_flexible_array_is_optional_and_its_elements_follow_from_its_offset():
    flex = Struct("flex_t", [("a", Scalar("uint64_t")), ("n", Scalar("uint32_t")),
                             ("items", Array(Scalar("uint32_t"), None))])
    lay = flex.layout("x86_64")
    assert (lay.size, lay.field("items").offset) == (16, 12)  # the elements start in tail padding
    head = (1).to_bytes(8, "little") + (2).to_bytes(4, "little")
    assert views.build(flex, "x86_64", {"a": 1, "n": 2}) == head + bytes(4)
    assert views.build(flex, "x86_64", {"a": 1, "n": 2, "items": []}) == head + bytes(4)
    assert views.build(flex, "x86_64", {"a": 1, "n": 2, "items": [7, 8]}) == \
        head + (7).to_bytes(4, "little") + (8).to_bytes(4, "little")
    assert _error(flex, {"a": 1, "n": 2, "items": 3}).wrong == ["items (a list of elements, got int)"]
    assert _error(flex, {"n": 2, "item": [1]}).missing == ["a"]


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_every_header_construct_builds_and_parses_back(target):
    for name, decl in cheader.parse_header(HEADER, target).items():
        if name.startswith(("struct ", "union ")) or not isinstance(decl, Struct):
            continue
        lay = decl.layout(target)
        values = views.pattern(lay)
        data = views.build(decl, target, values)
        assert len(data) == lay.size
        back = views.parse(decl, target, data)
        assert views.project(back, values) == values, name
        if not decl.is_union:
            assert views.build(decl, target, back) == data  # parse output is valid build input
