"""ireeabi.tooling: what IREE keeps in runtime/src/iree/tooling, over the emulated runtime.

- `program`: `Program` / `load_program`, a compiled module run on a HalRuntime of any data model
  and called with numpy values, as iree-run-module runs one;
- `function_io`: iree-run-module's `--input` syntax, result printing and `--output` targets
  (tooling/function_io.c), over the HAL's element and buffer view text (`ireeabi.hal.string_util`,
  `ireeabi.hal.buffer_view_util`);
- `numpy_io`: `.npy` reading and writing (tooling/numpy_io.c);
- `comparison`: its `--expected_output` comparison;
- `execution_model`: the iree-compile execution models ireeabi runs and their flags;
- `disassemble`: iree-dump-module's typed signatures and bytecode disassembly.
"""
from .comparison import Equality, compare_results
from .disassemble import disassembly, signature_text
from .execution_model import MODEL_FLAGS, ExecutionModelError, require_inline
from ireeabi.hal.string_util import InputParseError

from .function_io import OpaqueResult, format_results, parse_input, parse_inputs
from .program import KernelTargetError, Program, load_program

__all__ = ["Program", "KernelTargetError", "load_program", "InputParseError", "OpaqueResult",
           "format_results", "parse_input", "parse_inputs", "Equality", "compare_results",
           "disassembly", "signature_text", "MODEL_FLAGS", "ExecutionModelError", "require_inline"]
