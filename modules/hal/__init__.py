"""ireeabi.modules.hal: the HAL's native modules on the emulated VM ABI, as IREE keeps them in
runtime/src/iree/modules/hal/{,inline,loader}, and the runtime that puts them on one heap.

- `module`: the full `hal` module of the default execution model (modules/hal/module.c);
- `inline`: the `hal_inline` module (modules/hal/inline/module.c);
- `loader`: the `hal_loader` module (modules/hal/loader/module.c);
- `module_api`: what a native module's implementation may do with the HAL objects it is passed;
- `runtime`: `HalRuntime`, a heap with the ref types and these modules on one data model.
"""

__all__ = ["module", "inline", "loader", "module_api", "runtime"]
