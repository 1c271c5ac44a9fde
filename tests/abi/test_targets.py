"""Data models against libclang for every target triple."""
import pytest

from ireeabi.abi import oracles, targets
from ireeabi.abi.errors import IreeAbiError
from support.catalog_sample import SCALARS


@pytest.mark.parametrize("name", targets.names())
def test_scalars_match_libclang(name):
    t = targets.get(name)
    measured = oracles.measure_scalars_libclang(t, SCALARS + ["void*"])
    for c_type, (size, member_align, gnu_align) in measured.items():
        info = t.scalar(c_type)
        assert (info.size, info.align, info.preferred_align) == (size, member_align, gnu_align), c_type


@pytest.mark.parametrize("name", targets.names())
def test_max_align_is_sizeof_long_double(name):
    t = targets.get(name)
    (size, _, _), = oracles.measure_scalars_libclang(t, ["long double"]).values()
    assert t.max_align == size
    assert t.max_align_is_pow2 == (size & (size - 1) == 0)


def test_i386_is_the_odd_one():
    # The data-model facts the rest of ireeabi leans on, as the oracle above confirmed them.
    i386 = targets.get("i386")
    assert not i386.max_align_is_pow2
    assert all(targets.get(n).max_align_is_pow2 for n in targets.names() if n != "i386")


def test_unknown_target_lists_valid_names():
    with pytest.raises(targets.UnknownTargetError) as e:
        targets.get("riscv33")
    msg = str(e.value)
    assert "riscv33" in msg and "riscv32" in msg and "x86_64" in msg
    assert e.value.closest[0] == "riscv32"
    assert isinstance(e.value, IreeAbiError)


def test_unknown_scalar():
    with pytest.raises(IreeAbiError, match="int128"):
        targets.get("x86_64").scalar("int128")


def test_the_runtime_refuses_a_big_endian_data_model() -> None:
    """Every codec of the runtime (base.machine) and the heap's int32 view are little-endian: a data
    model of the other order is refused by name, not run with its bytes swapped."""
    from dataclasses import replace

    from ireeabi.base.heap import Heap
    from ireeabi.base.machine import TargetError, machine
    big = replace(targets.get("armv7"), name="armv7be", endian="big")
    with pytest.raises(TargetError, match="armv7be.*little-endian data models only, not big-endian"):
        machine(big)
    with pytest.raises(TargetError, match="armv7be"):
        Heap(target=big)
    assert machine("armv7").target.endian == "little"
