"""Which of iree-compile's execution models ireeabi runs, and the flags that compile for them.

IREE's compiler emits one of several runtime shapes (`--iree-execution-model=`): the default
(async-internal) drives a full HAL device through the `hal` module (hal.devices.get,
hal.command_buffer.*, hal.fence.*), while the two inline models call only the small `hal_inline`
module (inline-static: kernels turned into VM bytecode by vmvx-inline) or `hal_inline` +
`hal_loader` (inline-dynamic: kernels as an embedded ELF). ireeabi runs all three: `needs_full_hal`
tells a program to add the full `hal` module (modules/hal/module.py, one local-sync device).
`require_inline` remains for callers that serve only the inline HAL: it refuses a module that
imports `hal` and names the flags of the inline models. MODEL_FLAGS is the one list of flags (the
tests compile their corpus with it): the two inline models, and the default model with llvm-cpu
kernels ("llvm-cpu") or vmvx kernels ("vmvx"). Flags checked with iree-compile 3.13.0.
"""
from __future__ import annotations

from typing import Iterable, Mapping

from ireeabi.abi.errors import IreeAbiError
from ireeabi.vm.bytecode.module_file import ModuleFile

# The models ireeabi runs and the iree-compile flags of each (in the order a reader tries them).
MODEL_FLAGS: Mapping[str, tuple[str, ...]] = {
    # hal_inline + hal_loader; kernels are an embedded ELF loaded by hal_loader (host CPU only).
    "inline-dynamic": (
        "--iree-execution-model=inline-dynamic",
        "--iree-hal-target-device=local",
        "--iree-hal-local-target-device-backends=llvm-cpu",
        "--iree-llvmcpu-target-cpu=generic",
    ),
    # hal_inline only; vmvx-inline turns kernels into VM bytecode inside the module itself.
    "inline-static": (
        "--iree-execution-model=inline-static",
        "--iree-hal-target-backends=vmvx-inline",
    ),
    # The default execution model (the full `hal` module), llvm-cpu kernels (host CPU only).
    "llvm-cpu": (
        "--iree-hal-target-device=local",
        "--iree-hal-local-target-device-backends=llvm-cpu",
        "--iree-llvmcpu-target-cpu=generic",
    ),
    # The default execution model, vmvx kernels (VM bytecode modules: any data model).
    "vmvx": (
        "--iree-hal-target-device=local",
        "--iree-hal-local-target-device-backends=vmvx",
    ),
}

# The models that need only the inline HAL (what require_inline's message offers).
INLINE_MODELS = ("inline-dynamic", "inline-static")
# The models of iree-compile's default execution model (the full `hal` module).
DEFAULT_MODELS = ("llvm-cpu", "vmvx")

# The native module of the full HAL that the default execution model's modules import.
FULL_HAL_MODULE = "hal"


class ExecutionModelError(IreeAbiError):
    """A module compiled for an execution model ireeabi does not run (it imports the full `hal`
    module); `imports` are the offending import names, and the message gives the iree-compile flags
    of the models that run."""

    def __init__(self, module_name: str, imports: tuple[str, ...]) -> None:
        self.module_name = module_name
        self.imports = imports
        more = f" and {len(imports) - 1} more" if len(imports) > 1 else ""
        super().__init__(
            f"module '{module_name}' was compiled for iree-compile's default execution model: it "
            f"imports the full HAL module `{FULL_HAL_MODULE}` ({imports[0]}{more}), which this "
            f"caller does not serve. {runs_text()}")


def runs_text() -> str:
    """One sentence: the inline execution models and the iree-compile flags of each."""
    models = "; ".join(f"{name}: iree-compile {' '.join(MODEL_FLAGS[name])}" for name in INLINE_MODELS)
    return f"only the inline execution models run here; recompile with one of them ({models})"


def full_hal_imports(module: ModuleFile) -> tuple[str, ...]:
    """The module's imports from the full `hal` module (empty for inline and host-only modules)."""
    return tuple(f.full_name for f in module.imported_functions if f.module == FULL_HAL_MODULE)


def needs_full_hal(module: ModuleFile, provided: Iterable[str] = ()) -> bool:
    """True when `module` imports the full `hal` module (the default execution model) and no
    native module of one's own named `hal` is among the `provided` ones."""
    return FULL_HAL_MODULE not in provided and bool(full_hal_imports(module))


def require_inline(module: ModuleFile, provided: Iterable[str] = ()) -> None:
    """Raise ExecutionModelError when `module` needs the full HAL (the default execution model),
    unless a native module named `hal` is among the `provided` ones (one's own)."""
    if FULL_HAL_MODULE in provided:
        return
    names = full_hal_imports(module)
    if names:
        raise ExecutionModelError(module.name, names)


__all__ = ["MODEL_FLAGS", "INLINE_MODELS", "DEFAULT_MODELS", "FULL_HAL_MODULE", "ExecutionModelError",
           "runs_text", "full_hal_imports", "needs_full_hal", "require_inline"]
