"""ireeabi.tooling: what IREE keeps in runtime/src/iree/tooling, over the emulated runtime.

- `program`: `Program`, a compiled module run on a HalRuntime of any data model as `RunOptions` say,
  and called with numpy values, as iree-run-module runs one;
- `function_io`: iree-run-module's `--input` syntax, result printing and `--output` targets
  (tooling/function_io.c), over the HAL's element and buffer view text (`ireeabi.hal.string_util`,
  `ireeabi.hal.buffer_view_util`);
- `numpy_io`: `.npy` reading and writing (tooling/numpy_io.c);
- `comparison`: its `--expected_output` comparison;
- `execution_model`: the iree-compile execution models ireeabi runs and their flags;
- `disassemble`: iree-dump-module's typed signatures and bytecode disassembly.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..abi.lazy_face import lazy_face

if TYPE_CHECKING:  # what the face offers, for readers and type checkers; loaded on first use below
    from ..hal.string_util import InputParseError

    from .comparison import Equality, compare_results
    from .disassemble import disassembly, signature_text
    from .execution_model import MODEL_FLAGS, ExecutionModelError, require_inline
    from .function_io import OpaqueResult, format_results, parse_input, parse_inputs
    from .program import KernelTargetError, Program, RunOptions

# Each name the face re-exports -> the module holding it (PEP 562): importing the face, or one
# module of it (the execution models' flags, the disassembler), does not load the runtime.
_MODULES = {
    "ireeabi.hal.string_util": ("InputParseError",),
    f"{__name__}.comparison": ("Equality", "compare_results"),
    f"{__name__}.disassemble": ("disassembly", "signature_text"),
    f"{__name__}.execution_model": ("MODEL_FLAGS", "ExecutionModelError", "require_inline"),
    f"{__name__}.function_io": ("OpaqueResult", "format_results", "parse_input", "parse_inputs"),
    f"{__name__}.program": ("KernelTargetError", "Program", "RunOptions"),
}
__getattr__, __dir__ = lazy_face(__name__, globals(), _MODULES)


__all__ = ["Program", "RunOptions", "KernelTargetError", "InputParseError", "OpaqueResult",
           "format_results", "parse_input", "parse_inputs", "Equality", "compare_results",
           "disassembly", "signature_text", "MODEL_FLAGS", "ExecutionModelError", "require_inline"]
