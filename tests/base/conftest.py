"""Fixtures of the base tests: a tracked heap per test that fails the test on leaks (ireeabi.vm.testing).

The modules below test the memory and IREE's base/ concepts themselves, every expectation derived
from the heap's data model: they run on every target (`target` parametrized), so each check is made
in every address space. The other modules compare against the host's IREE tools or measured host
values and run on the host.
"""
from ireeabi.abi import targets
from ireeabi.vm.testing import heap, target  # noqa: F401  (pytest fixtures)

EVERY_TARGET = {"test_heap", "test_allocator"}


def pytest_generate_tests(metafunc) -> None:  # noqa: ANN001
    if "target" in metafunc.fixturenames and metafunc.module.__name__.rpartition(".")[2] in EVERY_TARGET:
        metafunc.parametrize("target", targets.names())
