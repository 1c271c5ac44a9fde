"""Every engine layout against real compilers: libclang for all seven triples, the host compiler
through cffi, and gcc -m32 for i386."""
import pytest

from ireeabi.abi import cconv, oracles, targets
from ireeabi.abi.views import views
from support import catalog_sample

# Every fragment the hal_inline / hal_loader / hal modules' shims use, plus odd ones.
SHIM_FRAGMENTS = ["i", "I", "f", "F", "r", "iI", "Ii", "iIi", "ir", "rr", "rI", "rII", "rrr", "irII",
                  "rIiii", "rIIiiCID", "rriiCID", "rCrD", "rIIiiiCID", "iCiD", "rrCirIID", "fFif"]


def _shim_structs():
    out = []
    for f in SHIM_FRAGMENTS:
        s = cconv.shim_struct(f)
        assert s is not None, f
        out.append(s)
    return out


def _all_structs():
    return catalog_sample.ALL + _shim_structs()


def _compare(measured, target):
    assert oracles.disagreements(_all_structs(), measured, target) == {}


@pytest.mark.parametrize("name", targets.names())
def test_engine_matches_libclang(name):
    t = targets.get(name)
    _compare(oracles.measure_libclang(_all_structs(), t), t)


def test_engine_matches_host_compiler_via_cffi():
    t = targets.get(oracles.host_target_name())
    _compare(oracles.measure_host_cc(_all_structs()), t)


def test_engine_matches_gcc_m32():
    _compare(oracles.measure_gcc_m32(_all_structs()), targets.get("i386"))


@pytest.mark.parametrize("name", targets.names())
def test_views_agree_for_every_struct(name):
    # views() raises unless layout, ctypes and construct describe the same bytes.
    for s in _all_structs():
        v = views(s, name)
        assert v.size == s.layout(name).size


@pytest.mark.parametrize("name", [n for n in targets.names() if n != "i386"])
def test_packer_equals_c_struct_where_int64_is_8_aligned(name):
    # With 8-aligned 64-bit members the VM's packer lays a fixed fragment out exactly as the C
    # compiler lays out its shim struct (fields only; the packer writes no tail padding), and the
    # VM's allocation size equals sizeof. Checked against libclang, not against the engine.
    t = targets.get(name)
    fixed = [f for f in SHIM_FRAGMENTS if "C" not in f]
    measured = oracles.measure_libclang([cconv.shim_struct(f) for f in fixed], t)
    for f in fixed:
        m = measured[f"iree_vm_abi_{f}_t"]
        values, _, _ = cconv.vm_pack(f, t)
        top = [m.bit_offsets[fl.name] // 8 for fl in cconv.shim_struct(f).fields]
        assert [v.offset for v in values] == top, f
        assert cconv.vm_size(f, t) == m.size, f


def test_oracle_catches_a_wrong_data_model():
    # A data model that 8-aligns int64 on i386 (as the VM's packer does, but not the C ABI) must be
    # caught by libclang: the oracle comparison is not vacuous.
    import dataclasses
    from types import MappingProxyType

    from ireeabi.abi.targets import ScalarInfo

    t = targets.get("i386")
    scalars = dict(t.scalars)
    for name in ("long long", "int64_t", "unsigned long long", "uint64_t"):
        info = scalars[name]
        scalars[name] = ScalarInfo(info.size, 8, info.preferred_align, info.kind)
    wrong = dataclasses.replace(t, scalars=MappingProxyType(scalars))
    problems = oracles.disagreements([catalog_sample.i64_after_i32], oracles.measure_libclang(
        [catalog_sample.i64_after_i32], t), wrong)
    assert "t_i64_after_i32" in problems and any("b:" in p for p in problems["t_i64_after_i32"])
