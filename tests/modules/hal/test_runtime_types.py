"""The ref type names a module is read against (`run_module_type_names`) are those iree-run-module's
instance registers (runtime/src/iree/modules/hal/types.c, iree_hal_module_register_all_types, and
the VM's vm.buffer): named without building a runtime, so they must stay what a runtime with the
full `hal` module actually registers."""
from __future__ import annotations

from ireeabi.modules.hal.runtime import RUN_MODULE_TYPE_NAMES, HalRuntime, run_module_type_names


def test_the_named_types_are_those_a_full_hal_runtime_registers() -> None:
    with HalRuntime(full_hal=True) as runtime:
        registered = runtime.types.names()
    assert run_module_type_names() == RUN_MODULE_TYPE_NAMES == registered


def test_an_inline_runtime_registers_a_part_of_them() -> None:
    with HalRuntime() as runtime:
        registered = runtime.types.names()
    assert registered < RUN_MODULE_TYPE_NAMES
    assert {"vm.buffer", "hal.buffer", "hal.buffer_view", "hal.executable"} <= registered
    assert "hal.device" not in registered  # the full module's types come with it
