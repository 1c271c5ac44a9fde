"""Every catalog struct against the compilers, on every target."""
import pytest

from ireeabi import layouts
from ireeabi.abi import oracles, targets


def _check(measured, target):
    assert oracles.disagreements(layouts.all_structs(), measured, target) == {}


@pytest.mark.parametrize("name", targets.names())
def test_catalog_matches_libclang(name):
    t = targets.get(name)
    _check(oracles.measure_libclang(layouts.all_structs(), t), t)


def test_catalog_matches_host_compiler():
    _check(oracles.measure_host_cc(layouts.all_structs()), targets.get(oracles.host_target_name()))


def test_catalog_matches_gcc_m32():
    _check(oracles.measure_gcc_m32(layouts.all_structs()), targets.get("i386"))


def test_derived_shim_struct_by_name():
    s = layouts.get("iree_vm_abi_rIiii_t")
    assert [f.name for f in s.fields] == ["r0", "i1", "i2", "i3", "i4"]


def test_unknown_struct_names_closest():
    with pytest.raises(layouts.UnknownNameError) as e:
        layouts.get("iree_vm_bufer_t")
    assert "iree_vm_buffer_t" in e.value.closest
