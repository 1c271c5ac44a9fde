"""ireeabi.tooling: what IREE keeps in runtime/src/iree/tooling, over the emulated runtime.

- `program`: `Program` / `load_program`, a compiled module run on a HalRuntime of any data model
  and called with numpy values, as iree-run-module runs one;
- `function_io`: iree-run-module's `--input` syntax, result printing and `--output` targets;
- `comparison`: its `--expected_output` comparison.
"""
from .comparison import Equality, compare_results
from .function_io import InputParseError, OpaqueResult, format_results, parse_input, parse_inputs
from .program import KernelTargetError, Program, load_program

__all__ = ["Program", "KernelTargetError", "load_program", "InputParseError", "OpaqueResult",
           "format_results", "parse_input", "parse_inputs", "Equality", "compare_results"]
