"""Which of iree-compile's execution models ireeabi runs, and the flags that compile for them.

IREE's compiler emits one of several runtime shapes (`--iree-execution-model=`): the default
(async-internal) drives a full HAL device through the `hal` module (hal.devices.get,
hal.command_buffer.*, hal.fence.*), while the two inline models call only the small `hal_inline`
module (inline-static: kernels turned into VM bytecode by vmvx-inline) or `hal_inline` +
`hal_loader` (inline-dynamic: kernels as an embedded ELF). ireeabi runs all three: `needs_full_hal`
tells a program to add the full `hal` module (modules/hal/module.py, one local-sync device).
`require_inline` remains for callers that serve only the inline HAL: it refuses a module that
imports `hal` and names the flags of the inline models. MODEL_FLAGS is the one list of flags (the
tests compile their corpus with it): the two inline models, the default model with llvm-cpu
kernels ("llvm-cpu") or vmvx kernels ("vmvx"), and async-external with either
("async-external-llvm-cpu", "async-external-vmvx"). Flags checked with iree-compile 3.13.0.

async-external (`--iree-execution-model=async-external`) runs on the full `hal` module too, but its
exports are asynchronous: each takes a wait fence and a signal fence after its arguments and marks
itself with the reflection attribute `iree.abi.model = coarse-fences` (iree-dump-module shows it).
A caller appends the two fences and waits on the signal fence before it reads a result, as
iree-run-module does (IREE's runtime/src/iree/tooling/function_util.c,
iree_tooling_append_async_fences: a null wait fence, a new 0 -> 1 signal fence on the device);
`takes_fences` tells such an export from a synchronous one.

host-only (`--iree-execution-model=host-only`, HOST_ONLY_FLAGS) compiles programs without tensor
work: their exports are plain VM functions over scalars, lists and buffers and import no HAL module
(iree-compile 3.13 crashes on tensors in this model), so they run with nothing but the interpreter.
"""
from __future__ import annotations

from typing import Iterable, Mapping

from ..abi.errors import IreeAbiError
from ..vm.bytecode.module_file import ExportedFunction, ModuleFile

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
    # async-external: the full `hal` module, exports taking (wait, signal) fences; llvm-cpu kernels.
    "async-external-llvm-cpu": (
        "--iree-execution-model=async-external",
        "--iree-hal-target-device=local",
        "--iree-hal-local-target-device-backends=llvm-cpu",
        "--iree-llvmcpu-target-cpu=generic",
    ),
    # async-external with vmvx kernels (any data model).
    "async-external-vmvx": (
        "--iree-execution-model=async-external",
        "--iree-hal-target-device=local",
        "--iree-hal-local-target-device-backends=vmvx",
    ),
}

# host-only: programs without tensors (scalars, lists, buffers); no HAL module is imported.
HOST_ONLY_FLAGS: tuple[str, ...] = ("--iree-execution-model=host-only",)

# The models that need only the inline HAL (what require_inline's message offers).
INLINE_MODELS = ("inline-dynamic", "inline-static")
# The models of iree-compile's default execution model (the full `hal` module).
DEFAULT_MODELS = ("llvm-cpu", "vmvx")

# The async-external models (exports take a wait and a signal fence after their arguments).
ASYNC_MODELS = ("async-external-llvm-cpu", "async-external-vmvx")

# The reflection attribute naming an export's invocation model, and the value of async exports
# (iree_tooling_append_async_fences appends fences for exactly this value).
MODEL_ATTR = "iree.abi.model"
COARSE_FENCES = "coarse-fences"
# The fence arguments a coarse-fences export takes after its own: (wait fence, signal fence).
FENCE_ARGUMENTS = 2

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


def invocation_model(export: ExportedFunction) -> str:
    """The export's `iree.abi.model` reflection attribute ("coarse-fences" for async-external
    exports), or "" when it has none (a synchronous export)."""
    return next((a.value for a in export.attrs if a.key == MODEL_ATTR), "")


def takes_fences(export: ExportedFunction) -> bool:
    """True when the caller must append a wait and a signal fence to the export's arguments and
    wait on the signal fence before reading its results (iree.abi.model = coarse-fences)."""
    return invocation_model(export) == COARSE_FENCES


# The import whose shim `legacy_loader` (IREE #24827's pre-fix hal_loader) switches.
LOADER_DISPATCH = "hal_loader.executable.dispatch"


def legacy_loader_refusal(module: ModuleFile, provided: Iterable[str] = ()) -> str | None:
    """Why the pre-fix hal_loader dispatch shim (`legacy_loader`) has nothing to switch in
    `module`, or None when it dispatches through hal_loader. IREE #24827 changed hal_loader's
    reader only: the full `hal` module's command_buffer.dispatch shims read their spans at
    sizeof(iree_vm_abi_rrIiiiI_t) before and after it (layouts/hal_module_dispatch.py), so a
    default-model module has no pre-fix mode either."""
    if any(f.full_name == LOADER_DISPATCH for f in module.imported_functions):
        return None
    if needs_full_hal(module, provided):
        return (f"--legacy-loader switches hal_loader's pre-fix dispatch shim (IREE #24827), but "
                f"module '{module.name}' dispatches through the full `hal` module "
                f"(command_buffer.dispatch), whose shim #24827 left as it was: it reads the spans at "
                f"sizeof(iree_vm_abi_rrIiiiI_t) before and after the fix, as ireeabi does (`ireeabi "
                f"check 0rrIiiiICiDCiirIID_v` shows where that misreads). There is no pre-fix mode "
                f"to run: drop --legacy-loader, or compile for inline-dynamic")
    return (f"--legacy-loader switches hal_loader's pre-fix dispatch shim (IREE #24827), but module "
            f"'{module.name}' never calls {LOADER_DISPATCH} (its kernels, if any, are VM bytecode): "
            f"there is nothing to switch; drop --legacy-loader, or compile for inline-dynamic")


def require_inline(module: ModuleFile, provided: Iterable[str] = ()) -> None:
    """Raise ExecutionModelError when `module` needs the full HAL (the default execution model),
    unless a native module named `hal` is among the `provided` ones (one's own)."""
    if FULL_HAL_MODULE in provided:
        return
    names = full_hal_imports(module)
    if names:
        raise ExecutionModelError(module.name, names)


__all__ = ["MODEL_FLAGS", "HOST_ONLY_FLAGS", "INLINE_MODELS", "DEFAULT_MODELS", "ASYNC_MODELS",
           "MODEL_ATTR", "COARSE_FENCES", "FENCE_ARGUMENTS", "FULL_HAL_MODULE", "ExecutionModelError",
           "runs_text", "full_hal_imports", "needs_full_hal", "invocation_model", "takes_fences",
           "LOADER_DISPATCH", "legacy_loader_refusal", "require_inline"]
