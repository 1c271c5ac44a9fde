"""ireeabi.modules.vmvx: IREE's `vmvx` native module (runtime/src/iree/modules/vmvx), the
microkernels of vmvx kernels compiled with `--iree-vmvx-enable-microkernels`.

- `module`: the export table (exports.inl's names and cconvs) and `create_vmvx_module`;
- `strided`: module.c's 2-D operand checks and mappings (BUFFER_2D_DECLS, MAP_BUFFER_2D_*);
- `elementwise`: the x32b / x32u ukernels, the copies and the fill;
- `mmt4d`, `pack` (pack and unpack), `tile_sizes` (query_tile_sizes.2d): the ukernels of
  runtime/src/iree/builtins/ukernel the module calls.
"""
from .module import VMVX_MODULE_NAME, VMVX_MODULE_VERSION, VmvxState, create_vmvx_module, exports
from .pack import KernelArgumentError
from .strided import KernelAccessError, KernelLimitError
from .tile_sizes import TileQueryError

__all__ = ["VMVX_MODULE_NAME", "VMVX_MODULE_VERSION", "VmvxState", "create_vmvx_module", "exports",
           "KernelAccessError", "KernelArgumentError", "KernelLimitError", "TileQueryError"]
