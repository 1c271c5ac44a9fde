"""The pytest plugin of ireeabi: fixtures for testing native modules and shims on packed memory.

Installed with ireeabi and registered through the `pytest11` entry point, so any test in the
environment can ask for these fixtures by name (nothing runs unless a test does):

- `target`: the data model (None: the host). Parametrize it to run a test on several:
  `@pytest.mark.parametrize("target", ["x86_64", "riscv32"])`.
- `heap`: a fresh tracked heap on `target`; the test errors at teardown with LeakError (every live
  allocation with its size and the stack that made it, and any failing status nobody consumed).
- `types`, `buffers`: the heap's ref type registry and its vm.buffer type (`ireeabi.vm.testing`).
- `native_modules`: the native modules of one's own to put on the runtime (default none); a test
  module overrides this fixture to return its `ModuleDescriptor`s.
- `runtime`: a `HalRuntime` on `heap` with hal_inline, hal_loader and `native_modules`, closed
  before the leak check. `runtime.call("module.function", *args)` runs a whole import call as the
  bytecode VM does (arguments packed into tracked memory as the VM packs them, the export's shim
  reading them, results written and read back, argument references released whatever the status);
  `runtime.api` makes and reads buffer views and buffers (`ireeabi.modules.hal.module_api`).

See examples/custom_module for a complete native module tested this way.

It also collects check programs (`.mlir` sources and compiled `.vmfb` modules calling IREE's `check`
module, as iree-check-module runs them) as test items, one per test function, execution model and
data model, when asked to: `--ireeabi-collect` or ini `ireeabi_collect = true`
(tooling/check_items.py; docs/pytest-plugin.md).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator, Sequence

import pytest

from ..layouts.modules import ModuleDescriptor
from ..base.heap import Heap
from ..vm.testing import buffers, heap, target, types  # noqa: F401  (the plugin's fixtures)

from ..modules.hal.runtime import HalRuntime

from . import check_items


def pytest_addoption(parser: pytest.Parser) -> None:
    check_items.add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    check_items.configure(config)


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: absent without it
def pytest_configure_node(node: Any) -> None:
    check_items.configure_node(node)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> "pytest.Collector | None":
    return check_items.collect_file(file_path, parent)


@pytest.fixture
def native_modules() -> Sequence[ModuleDescriptor]:
    """The native modules of one's own the `runtime` fixture runs (override it in a test module)."""
    return ()


@pytest.fixture
def runtime(heap: Heap, native_modules: Sequence[ModuleDescriptor]) -> Iterator[HalRuntime]:
    with HalRuntime(heap, modules=native_modules) as rt:
        yield rt


__all__ = ["buffers", "heap", "native_modules", "runtime", "target", "types"]
