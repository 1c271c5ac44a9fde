"""Fixtures of the vm tests: a tracked heap per test that fails the test on leaks (ireeabi.vm.testing).

The modules below test the VM model itself, every expectation derived from the heap's data model:
they run on every target (`target` parametrized), so each check is made in every address space. The
other modules compare against the host's IREE tools or measured host values and run on the host.
"""
from ireeabi.abi import targets
from ireeabi.vm.testing import buffers, heap, target, types  # noqa: F401  (pytest fixtures)

EVERY_TARGET = {"test_vm_ref", "test_vm_buffer", "test_vm_call"}


def pytest_generate_tests(metafunc) -> None:  # noqa: ANN001
    if "target" in metafunc.fixturenames and metafunc.module.__name__.rpartition(".")[2] in EVERY_TARGET:
        metafunc.parametrize("target", targets.names())
