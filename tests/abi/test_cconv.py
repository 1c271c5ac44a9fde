"""cconv parsing and the per-rule layouts.

Expected numbers come from the fact sheet (shared/reference/iree-native-abi.md §2.4), where they were
measured by running IREE's real size computation and bytecode packer on x86_64 and i386; the ILP32
numbers hold for riscv32 because they depend only on sizeof/alignof(iree_vm_ref_t), which the oracle
tests check per target.
"""
import pytest

from ireeabi.abi import cconv, targets
from ireeabi.abi.errors import IreeAbiError

DISPATCH = "rIiiiCiDCrIID"


def test_parse_whole_signature():
    sig = cconv.parse("0rIiiiCiDCrIID_v")
    assert sig.arguments.text == DISPATCH
    assert sig.results.text == ""
    assert [type(i).__name__ for i in sig.arguments.items] == ["Value"] * 5 + ["Span", "Span"]
    span1 = sig.arguments.spans[1]
    assert span1.text == "rII" and span1.index == 9
    assert [v.kind for v in span1.values] == ["ref", "i64", "i64"]


@pytest.mark.parametrize("text, args, results", [
    ("", "", ""), ("0", "", ""), ("0ri", "ri", ""), ("0_ir", "", "ir"), ("0v_v", "", ""),
    ("0iCiD_rr", "iCiD", "rr"), ("0rr_iI", "rr", "iI"),
])
def test_fragment_split(text, args, results):
    # The splitting rules of iree_vm_function_call_get_cconv_fragments (fact sheet §1).
    sig = cconv.parse(text)
    assert (sig.arguments.text, sig.results.text) == (args, results)


@pytest.mark.parametrize("text, index, char, cls", [
    ("1rr_v", 0, "1", cconv.VersionError),
    ("rr_v", 0, "r", cconv.VersionError),
    ("0rx_v", 2, "x", cconv.UnknownTypeError),
    ("0rCiI_v", 2, "C", cconv.SpanSyntaxError),  # unterminated
    ("0rCiCiDD_v", 4, "C", cconv.SpanSyntaxError),  # nested
    ("0rCD_v", 2, "C", cconv.SpanSyntaxError),  # empty
    ("0riD_v", 3, "D", cconv.SpanSyntaxError),  # end without start
    ("0r_CiD", 3, "C", cconv.SpanSyntaxError),  # span in results
    ("0rv_v", 2, "v", cconv.UnknownTypeError),
    ("0r_i_i", 4, "_", cconv.UnknownTypeError),
    ("0rCi", 2, "C", cconv.SpanSyntaxError),
    ("0rCx", 3, "x", cconv.UnknownTypeError),
    ("0r\u00e9", 2, "\u00e9", cconv.UnknownTypeError),
])
def test_parse_errors_name_index_and_char(text, index, char, cls):
    with pytest.raises(cls) as e:
        cconv.parse(text)
    assert isinstance(e.value, cconv.CconvError)
    assert (e.value.index, e.value.char) == (index, char)
    assert f"index {index}" in str(e.value)


def test_parse_rejects_non_string():
    with pytest.raises(cconv.CconvError):
        cconv.parse(b"0r_v")


def test_fragment_api_rejects_whole_signature():
    with pytest.raises(cconv.CconvError, match="whole signature"):
        cconv.layout("0rI_v", targets.get("x86_64"))


def test_dispatch_layout_x86_64():
    lay = cconv.layout(DISPATCH, targets.get("x86_64"), spans=[4, 3])
    assert lay.size == 160 and lay.packed_size == 160
    constants = [v for v in lay.values if v.span == 0]
    refs = [v for v in lay.values if v.kind == "ref"]
    assert constants[0].offset == 40
    assert refs[1].offset == 64  # first binding ref
    assert [c.offset for c in lay.counts] == [36, 56]
    assert [(g.offset, g.size) for g in lay.gaps] == [(60, 4)]
    assert [v.offset for v in lay.values if v.span == 1] == [64, 80, 88, 96, 112, 120, 128, 144, 152]


def test_dispatch_layout_riscv32():
    lay = cconv.layout(DISPATCH, targets.get("riscv32"), spans=[4, 3])
    assert lay.size == 128
    refs = [v for v in lay.values if v.kind == "ref"]
    assert refs[1].offset == 56
    assert [c.offset for c in lay.counts] == [28, 48]


def test_dispatch_fixed_struct_finding():
    lay = cconv.layout(DISPATCH, targets.get("x86_64"), spans=[4, 3])
    assert lay.fixed_struct.name == "iree_vm_abi_rIiii_t"
    assert lay.fixed_struct.layout("x86_64").size == 40
    (f,) = [f for f in lay.findings if f.rule == "fixed-struct-sizeof"]
    assert "40" in f.message and "36" in f.message and f.offset == 36
    # i386: sizeof(rIiii) == 28 == packed fixed part, so no such finding there.
    assert not cconv.layout(DISPATCH, "i386", [4, 3]).findings


def test_loader_readers():
    for name, pre_fix_count in (("x86_64", 40), ("riscv32", 32)):
        lay = cconv.layout(DISPATCH, name, [4, 3])
        pre = cconv.compare_reader(lay, cconv.span_reader(DISPATCH, name, [4, 3], form="pre-fix"))
        assert len(pre) == 1 and f"count at {pre_fix_count}" in pre[0].message
        assert cconv.compare_reader(lay, cconv.span_reader(DISPATCH, name, [4, 3], form="fixed")) == ()
    # i386: the pre-fix reader aligns bindings to alignof(rII) = 4: 52 instead of 56 (fact sheet §2.4).
    lay = cconv.layout(DISPATCH, "i386", [4, 3])
    (f,) = cconv.compare_reader(lay, cconv.span_reader(DISPATCH, "i386", [4, 3], form="pre-fix"))
    assert "at 52" in f.message and "packs it at 56" in f.message


def test_zero_count_span_only_moves_the_tail():
    # Fact sheet §2.5.4: rIIiiCID with n=0 is 48 B allocated, 44 B packed on LP64: no finding.
    lay = cconv.layout("rIIiiCID", "x86_64", [0])
    assert (lay.size, lay.packed_size) == (48, 44)
    assert lay.findings == ()


def test_i386_int64_results_mismatch():
    # device.query.i64 returns `iI`: the VM aligns the i64 to 8 (16 B) where i386 C has 12 B.
    lay = cconv.layout("iI", "i386")
    rules = sorted(f.rule for f in lay.findings)
    assert rules == ["shim-length", "shim-offset"]
    assert cconv.layout("iI", "x86_64").findings == ()


def test_pack_overflow_is_found():
    # The size rule does not round span elements up to their alignment, the packer re-aligns every
    # field: elements `Ii` overflow the allocation from two elements on.
    lay = cconv.layout("CIiD", "x86_64", [2])
    assert any(f.rule == "pack-overflow" for f in lay.findings)
    assert lay.packed_size > lay.size


@pytest.mark.parametrize("spans, match", [
    (None, "1 span"), ([1, 2], "1 span"), ([-1], "outside"), ([70000], "outside"), (["3"], "integer"),
    ([True], "integer"),
])
def test_bad_span_counts(spans, match):
    with pytest.raises(cconv.SpanCountError, match=match):
        cconv.layout("rCiD", "x86_64", spans)


def test_unhashable_span_count_is_a_clear_error():
    with pytest.raises(IreeAbiError):
        cconv.layout("rCiD", "x86_64", [[1]])


def test_layout_is_cached():
    a = cconv.layout(DISPATCH, "x86_64", [4, 3])
    assert cconv.layout(DISPATCH, targets.get("x86_64"), (4, 3)) is a
