"""`ireeabi run MODULE.vmfb --function F --input ...`: run a compiled module (any execution model
ireeabi runs: inline-static, inline-dynamic, the default async-internal, async-external, host-only)
on the emulated ABI.

The module runs in the bytecode interpreter on a HalRuntime (hal_inline, hal_loader as native
modules on a tracked heap, and the full `hal` module for the default and async-external models;
every import call through packed argument buffers and the shims, every dispatch on the real
kernel). An async-external export (`iree.abi.model` coarse-fences) gets a null wait fence and a new
signal fence after its inputs, and its results are read once the signal fence is reached, as
iree-run-module calls it (tooling/function_util.c). It is laid out for `--target` (the host by default: x86_64, aarch64, riscv64,
riscv32, armv7, wasm32 or i386; kernels of host machine code run only on the host). Inputs use iree-run-module's `--input` syntax (scalars, tensors,
`@f.npy` / `+f.npy` / `*f.npy`, `4xf32=@f.bin`, `&tensor` for a bare hal.buffer), parsed against
the function's calling convention as the tool parses them. The output is what iree-run-module 3.13
prints: `EXEC @F` once the inputs parsed (before the call, so a call that fails prints it too), then
one `result[i]: ...` entry per result, or what `--output=` asks for (`-`, empty, `@f.npy`, `+f.npy`,
`@f.bin`), or, with `--expected_output=` (which then takes over from `--output=`), the comparison:
one `[FAILED] ...` entry per mismatching result or `[SUCCESS] all function outputs matched their
expected values.`, with the tool's tolerance flags (`--expected_f16_threshold`,
`--expected_f32_threshold`, `--expected_f64_threshold`, `--expected_bf16_threshold`,
`--expected_rtol`, `--equality_mode`).

Exit status: 0 on success, 1 when results do not match their expected values (as the tool). A
failing call or bad input (traps name the function and pc; a rejected input names the offending
text) is reported through the command line's error path, which exits 1 for `run`, as
iree-run-module does on every failed load, parse or call.

`--native-module PKG.MOD[:FACTORY]` (repeatable) runs the program with native modules of one's own
(`layouts.module_sources.load`, the current directory searched first as `python -m` does;
modules installed packages declare are found by themselves).
`--heap-limit SIZE` (bytes, or with K/M/G/T: 64M) bounds the program's live heap bytes; by default it
is the host's memory within the target's address window, and only past it do allocations fail with
RESOURCE_EXHAUSTED.

`--max-steps N` bounds the instructions of the call (DEADLINE_EXCEEDED naming the function and pc);
`--reference` runs the interpreter's per-instruction handlers instead of its compiled blocks (the
same results, slower; for cross-checking the fast path).

`--trace[=imports|calls|instructions]` writes an execution trace to stderr (tooling/trace.py): every
import call's packed argument buffer byte by byte, the shim's reading of it with each disagreement
marked, results and status; `calls` adds the VM's calls and returns, `instructions` every executed
instruction in the format of IREE's execution tracing. `--trace-file FILE` writes it as JSON lines.
"""
from __future__ import annotations

import argparse
from typing import Any, TextIO

from ..vm import ref as _ref
from ..vm.errors import VmStatusError
from ..vm.shims import SIGNATURE_MISMATCH
from ..base.heap import LeakError, available_memory
from ..base.internal.fpu_state import promotes_nan_canonically
from ..tooling.execution_model import FENCE_ARGUMENTS, legacy_loader_refusal
from ..tooling.program import Program, RunOptions
from ..tooling.comparison import (DEFAULT_BF16_ATOL, DEFAULT_F16_ATOL, DEFAULT_F32_ATOL,
                                        DEFAULT_F64_ATOL, DEFAULT_RTOL, SUCCESS_LINE, ComparisonAbortError,
                                        Equality, compare_results, parse_double_flag, parse_equality_mode,
                                        parse_float_flag)
from ..hal.buffer_view_util import DEFAULT_MAX_ELEMENT_COUNT
from ..hal.string_util import InputParseError
from ..tooling.function_io import (InputFiles, StorageInput, format_results, parse_count_flag,
                                         parse_inputs, write_output)
from ..tooling.numpy_io import OutputError

from .errors import CliError
from .loading import (DEFAULT_TARGET, add_module_arguments, load_module, load_native_modules,
                      module_path, parse_cpu_seconds, parse_heap_limit, parse_max_steps, resolve_target)

# iree-run-module exits 1 on every failed load, parse or call: so does `run` on bad input.
ERROR_STATUS = 1


def add_parser(sub: "argparse._SubParsersAction") -> None:
    p = sub.add_parser(
        "run", help="run a compiled module's function (like iree-run-module)",
        description="Runs FUNCTION of a compiled module (inline-static, inline-dynamic, the "
                    "default execution model, async-external or host-only) in the bytecode "
                    "interpreter on the emulated HAL modules and prints its results exactly as "
                    "iree-run-module does; an async-external function gets its wait and signal "
                    "fences as the tool appends them. Inputs use iree-run-module's syntax "
                    "(`5`, `2.5`, `4xf32=1 2 3 4`, `2x2xi32=[1 2][3 4]`, `8x16xf32=0.25`, "
                    "`@in.npy`, `4xf32=@in.bin`).")
    add_module_arguments(p)
    p.add_argument("--target", "-t", metavar="T", default=None,
                   help="data model to run on (default: the host's; `ireeabi targets` lists them): "
                        "every struct, argument buffer and shim is laid out for it")
    p.add_argument("--function", "-f", default="", metavar="F",
                   help="exported function to run (default: the module's only one)")
    p.add_argument("--input", "-i", action="append", default=[], metavar="VALUE",
                   help="one input value (repeat in argument order)")
    p.add_argument("--output", action="append", default=None, metavar="SPEC",
                   help="one per result, as iree-run-module's --output: `-` print, empty ignore, "
                        "`@f.npy`/`+f.npy` write/append an npy array, `@f.bin` raw contents")
    p.add_argument("--max-steps", "--max_steps", dest="max_steps", type=parse_max_steps,
                   default=None, metavar="N",
                   help="fail the call with DEADLINE_EXCEEDED after N instructions (an ireeabi "
                        "bound; iree-run-module has none): a hung module ends instead. Also bounds "
                        "each emulated kernel call, and each native kernel dispatch in CPU time "
                        "(N / 1e8 s, at least 1 s) unless --kernel-cpu-time says otherwise")
    p.add_argument("--kernel-cpu-time", dest="kernel_cpu_time", type=parse_cpu_seconds,
                   default=None, metavar="SECONDS",
                   help="fail a dispatch of a native (host) kernel with DEADLINE_EXCEEDED once it "
                        "used SECONDS of CPU time (native code cannot be bounded in instructions "
                        "here). Without a bound, Ctrl-C still stops a kernel (CANCELLED)")
    p.add_argument("--reference", action="store_true",
                   help="run the interpreter's per-instruction handlers instead of its compiled "
                        "basic blocks (same results, slower)")
    p.add_argument("--trace", nargs="?", const="imports", default=None,
                   choices=("imports", "calls", "instructions"),
                   help="trace to stderr every import call: the packed argument buffer byte by "
                        "byte, the shim's reading of it (disagreements marked), results and "
                        "status; `calls` adds the VM's calls and returns, `instructions` every "
                        "executed instruction as IREE's --trace_execution prints it (runs the "
                        "reference path)")
    p.add_argument("--trace-file", dest="trace_file", default=None, metavar="FILE",
                   help="write the trace as JSON lines to FILE (the level of --trace, else imports)")
    p.add_argument("--native-module", action="append", default=[], metavar="PKG.MOD[:FACTORY]",
                   help="run with a native module of one's own: a ModuleDescriptor (or a factory "
                        "of them) named FACTORY, default `native_module`, in module PKG.MOD "
                        "(repeatable)")
    p.add_argument("--heap-limit", type=parse_heap_limit, default=None, metavar="SIZE",
                   help="bound the program's live heap bytes (e.g. 64M, 2G; default: the host's "
                        "memory within the target's address window)")
    p.add_argument("--emulate-kernels", action="store_true",
                   help="run host kernels in the emulated CPU too, as foreign kernels always run")
    p.add_argument("--legacy-loader", action="store_true",
                   help="hal_loader's pre-fix dispatch shim (IREE #24827); inline-dynamic modules "
                        "only (refused for others: the full `hal` module's dispatch shim was not "
                        "changed by the fix)")
    p.add_argument("--legacy-inline", action="store_true",
                   help="hal_inline's pre-fix storage wrapper (IREE #24827)")
    p.add_argument("--legacy-vm-buffer", action="store_true",
                   help="the pre-fix VM buffer destroy rule (IREE #24827)")
    p.add_argument("--output-max-element-count", "--output_max_element_count",
                   dest="output_max_element_count", default=str(DEFAULT_MAX_ELEMENT_COUNT), metavar="N",
                   help="elements printed per tensor result (iree-run-module's "
                        "--output_max_element_count, default 1024; read as C's atoi, so a "
                        "negative count prints everything)")
    p.add_argument("--expected-output", "--expected_output", dest="expected_output",
                   action="append", default=[], metavar="VALUE",
                   help="one per result, in --input's syntax (`(ignored)` skips a ref result): "
                        "compare the results instead of printing them, as iree-run-module "
                        "--expected_output; exit 1 when any differs")
    for name, default, parse, what in (
            ("f16", DEFAULT_F16_ATOL, parse_float_flag, "float"),
            ("f32", DEFAULT_F32_ATOL, parse_float_flag, "float"),
            ("f64", DEFAULT_F64_ATOL, parse_double_flag, "double"),
            ("bf16", DEFAULT_BF16_ATOL, parse_float_flag, "float")):
        p.add_argument(f"--expected-{name}-threshold", f"--expected_{name}_threshold",
                       dest=f"expected_{name}_threshold", type=parse, default=default,
                       metavar="ATOL",
                       help=f"absolute tolerance for {name} elements in approximate mode "
                            f"(default {default:.3g}; read as C's atof into a {what})")
    p.add_argument("--expected-rtol", "--expected_rtol", dest="expected_rtol",
                   type=parse_double_flag, default=DEFAULT_RTOL, metavar="RTOL",
                   help="relative tolerance of every float type in approximate mode: "
                        "|actual - expected| <= atol + rtol * |expected| (default 1e-05)")
    p.add_argument("--equality-mode", "--equality_mode", dest="equality_mode",
                   type=parse_equality_mode, default="approximate", metavar="MODE",
                   help="`approximate` (floats within the tolerances, NaN equals NaN) or `exact` "
                        "(byte equality); any other text is exact, as in iree-run-module")


def input_bytes_bound(program: Program) -> int:
    """The largest tensor an `--input` may give: what the heap still allows, and half the memory
    the host has available now (a parsed input is held twice, as its array and then in its heap
    buffer): past it the parse is RESOURCE_EXHAUSTED, before numpy fills gigabytes that the OOM
    killer would end."""
    return min(program.heap.limit - program.heap.live_bytes, available_memory() // 2)


def _input_error(e: InputParseError) -> CliError:
    """IREE's status text, then what in the input is wrong (IREE's own text may not say)."""
    return CliError(f"{e} ({e.detail})" if e.detail else str(e))


def _storage_buffer(program: Program, array: Any) -> Any:
    """A hal.buffer ref holding `array` (an `&` input): the buffer of a new view, as the tool takes
    it with iree_hal_buffer_view_buffer (retained)."""
    view = program.buffer_view(array)
    try:
        views = program.runtime.views
        return program.runtime.hal_buffers.resources.retain_ref(views.buffer(views.deref(view)))
    finally:
        _ref.release_value(program.heap, view)


def _single_export(program: Program) -> str:
    """The function iree-run-module runs without --function: the one export that is neither
    internal (`__init`...) nor special (a `$` in its name)."""
    names = [e.name for e in program.module.exported_functions
             if not e.name.startswith("__") and "$" not in e.name]
    if not names:
        raise CliError("INVALID_ARGUMENT; no exported functions found in module; at least one "
                       "must be present")
    if len(names) > 1:
        raise CliError(f"INVALID_ARGUMENT; more than one exported function present; --function= "
                       f"must be specified explicitly ({', '.join(names)})")
    return names[0]


def _predicted_mismatch(error: BaseException, module: Any, target: str, modules: list) -> str:
    """For a shim's signature mismatch at an import whose layout on `target` the import check
    already finds wrong (in a call, or in the module's initializer as the program starts: a module
    of the default model calls hal.device.query.i64 there): the words that say so and the command
    that shows it (import_check.hazard_hint); else ''."""
    text = str(error)
    if SIGNATURE_MISMATCH not in text:
        return ""
    # start-up: the import checker only on a signature mismatch
    from ..layouts import module_sources
    from ..vm.bytecode import import_check

    try:
        reports = import_check.check_imports(module, module_sources.checked_against(module, modules),
                                             target)
    except Exception:  # noqa: BLE001 - the call's error is the one to report
        return ""
    return import_check.hazard_hint(text, reports, target)


def command(args: argparse.Namespace, out: TextIO) -> int:
    # Arguments first (an empty --target is an error, not the default), then the file: its header
    # is checked on a memory map before it is read whole.
    target = resolve_target(args.target) if args.target is not None else None
    modules = load_native_modules(args.native_module)
    module = load_module(module_path(args))
    if args.legacy_loader:  # never silently ignored: say why it does not apply
        refusal = legacy_loader_refusal(module, [d.name for d in modules])
        if refusal is not None:
            raise CliError(refusal)
    if args.trace is None and args.trace_file is None:  # the tracer is imported only to trace
        return _run(args, out, target, modules, module, None)
    from ..tooling.trace import close_trace, open_trace
    trace = open_trace(args.trace, args.trace_file, out)
    try:
        return _run(args, out, target, modules, module, trace)
    finally:
        close_trace(trace)


def _run(args: argparse.Namespace, out: TextIO, target: Any, modules: list, module: Any,
         trace: Any) -> int:
    options = RunOptions(target=target, modules=modules, heap_limit=args.heap_limit,
                         max_steps=args.max_steps, kernel_cpu_time=args.kernel_cpu_time,
                         reference=args.reference, emulate_kernels=args.emulate_kernels,
                         legacy_loader=args.legacy_loader, legacy_inline=args.legacy_inline,
                         legacy_vm_buffer=args.legacy_vm_buffer, trace=trace)
    try:
        try:
            program = Program(module, options)  # runs the module's initializer
        except VmStatusError as e:
            hint = _predicted_mismatch(e, module, target.name if target else DEFAULT_TARGET, modules)
            if hint:
                raise CliError(f"{e}; {hint}") from e
            raise
        with program:  # a failed call's or output's error wins
            results = _call(program, args, out, module, modules)
            return _process_results(program, results, args, out)
    except LeakError as e:  # (only the program's close raises it) e.g. the pre-fix storage wrapper
        shown = "; ".join(a.describe() for a in e.leaks[:3])
        more = f"; and {len(e.leaks) - 3} more" if len(e.leaks) > 3 else ""
        raise CliError(f"the call returned, but {len(e.leaks)} allocation(s) of "
                       f"{sum(a.size for a in e.leaks)} bytes outlived the program: "
                       f"{shown}{more}") from None


def long_bits(program: Program) -> int:
    """The width of the C `long` of the program's data model: the tool's strtol parses with it."""
    return 8 * program.heap.machine.target.scalar("long").size


def _call(program: Program, args: argparse.Namespace, out: TextIO, module: Any, modules: list) -> list:
    """Parse the inputs against the function's cconv, print EXEC, call; the results."""
    owned: list = []
    try:
        if not args.function:
            args.function = _single_export(program)
        arg_chars, _ = program.signature(args.function)
        try:
            # a tensor the program's heap cannot take is refused before numpy fills it
            with InputFiles(input_bytes_bound(program)) as files:
                inputs = parse_inputs(args.input, arg_chars, files, long_bits=long_bits(program))
        except InputParseError as e:
            raise _input_error(e) from None
        for i, value in enumerate(inputs):
            if isinstance(value, StorageInput):
                owned.append(_storage_buffer(program, value.array))
                inputs[i] = owned[-1]
        # Inputs parsed: the tool prints EXEC before it invokes (so before the call can fail).
        out.write(f"EXEC @{args.function}\n")
        # An async-external export gets a wait and a signal fence after the inputs, as the tool
        # appends them (the program makes them in `call`).
        fences = FENCE_ARGUMENTS if program.takes_fences(args.function) else 0
        if len(inputs) + fences != len(arg_chars):
            # iree-run-module takes the short (or, with fences, long) list; its invoke refuses it.
            takes = (f"{len(arg_chars) - fences} input(s) and the wait and signal fences the tool "
                     f"appends (iree.abi.model coarse-fences)" if fences
                     else f"{len(arg_chars)} input(s)")
            raise CliError(f"INVALID_ARGUMENT; input list and function mismatch; expected "
                           f"{len(arg_chars)} arguments but passed {len(inputs) + fences} "
                           f"({args.function} takes {takes}, {len(inputs)} given)")
        return program.call_results(args.function, *inputs)
    except BaseException as e:
        hint = _predicted_mismatch(e, module, program.heap.machine.name, modules)
        if hint:
            raise CliError(f"{e}; {hint}") from e
        raise
    finally:
        for buffer in owned:
            _ref.release_value(program.heap, buffer)


def _process_results(program: Program, results: list, args: argparse.Namespace,
                     out: TextIO) -> int:
    """Compare the results with --expected_output, or print every result, or route each to its
    --output target (iree-run-module's rules); the exit status."""
    # atoi on the target's long (the data model is known once the program is)
    args.output_max_element_count = parse_count_flag(args.output_max_element_count,
                                                     long_bits=long_bits(program))
    if args.expected_output:
        return _check_results(program, results, args, out)
    if args.output is None:
        out.write(format_results(results, args.output_max_element_count,
                                 canonical_nan=promotes_nan_canonically(program.heap.machine.name)))
        return 0
    if len(args.output) != len(results):
        raise CliError(f"OUT_OF_RANGE; {len(args.output)} outputs specified but the provided "
                       f"variant list only has {len(results)} elements")
    for value, spec in zip(results, args.output):
        try:
            write_output(value, spec, out, args.output_max_element_count,
                         canonical_nan=promotes_nan_canonically(program.heap.machine.name))
        except OutputError as e:
            raise CliError(f"{e}; writing --output={spec}") from None
        except OSError as e:
            raise CliError(f"cannot write --output={spec}: {e.strerror or e}") from None
    return 0


def _check_results(program: Program, results: list, args: argparse.Namespace,
                   out: TextIO) -> int:
    """--expected_output: parse the expected values against the results' cconv (as inputs are
    parsed against the arguments'), compare, print the tool's text; 1 when any differs."""
    _, result_chars = program.signature(args.function)
    try:
        with InputFiles(input_bytes_bound(program)) as files:
            expected = parse_inputs(args.expected_output, result_chars, files,
                                    long_bits=long_bits(program))
    except InputParseError as e:
        detail = e.detail
        if e.reason.endswith("function expected fewer input values"):
            detail = (f"more expected outputs than the {len(result_chars)} result(s) "
                      f"{args.function} returns")
        raise CliError(f"{e}; parsing expected function outputs" +
                       (f" ({detail})" if detail else "")) from None
    equality = Equality(args.equality_mode, args.expected_f16_threshold,
                        args.expected_f32_threshold, args.expected_f64_threshold,
                        args.expected_bf16_threshold, args.expected_rtol)
    try:
        matched, text = compare_results(expected, results, equality)
    except ComparisonAbortError as e:
        raise CliError(str(e)) from None
    out.write(text + (SUCCESS_LINE if matched else ""))
    return 0 if matched else 1


__all__ = ["add_parser", "command", "input_bytes_bound", "ERROR_STATUS"]
