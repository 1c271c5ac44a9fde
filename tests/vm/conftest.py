"""Fixtures of the vm tests: a tracked heap per test that fails the test on leaks (ireeabi.vm.testing)."""
from ireeabi.vm.testing import buffers, heap, target, types  # noqa: F401  (pytest fixtures)
