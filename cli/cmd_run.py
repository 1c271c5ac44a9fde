"""`ireeabi run MODULE.vmfb --function F --input ...`: run a compiled inline module on the emulated
ABI.

The module runs in the bytecode interpreter on a HalRuntime (hal_inline, hal_loader as native
modules on a tracked heap; every import call through packed argument buffers and the shims, every
dispatch on the real kernel). Inputs use iree-run-module's `--input` syntax (scalars, tensors,
`@f.npy` / `+f.npy` / `*f.npy`, `4xf32=@f.bin`, `&tensor` for a bare hal.buffer), parsed against
the function's calling convention as the tool parses them; the output is what iree-run-module
prints: `EXEC @F`, then one `result[i]: ...` entry per result, or what `--output=` asks for (`-`,
empty, `@f.npy`, `+f.npy`, `@f.bin`). Exit 0 on success; 2 on bad input or a failing call (traps
name the function and pc; a rejected input names the offending text). Where iree-run-module exits 1
we exit 2, and a call that fails prints no `EXEC` line (the tool prints it before invoking): both
are this command's established contract.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

from ireeabi.vm import ref as _ref
from ireeabi.vm.heap import LeakError
from ireeabi.vm.interp.lists import VmList
from ireeabi.vm.interp.program import Program
from ireeabi.vm.interp.values import (DEFAULT_MAX_ELEMENT_COUNT, InputFiles, InputParseError,
                                      ListResult, OutputError, StorageInput, Value,
                                      format_results, list_item, parse_count_flag, parse_inputs,
                                      write_output)

from .errors import CliError


def add_parser(sub: "argparse._SubParsersAction") -> None:
    p = sub.add_parser(
        "run", help="run a compiled inline module (like iree-run-module)",
        description="Runs FUNCTION of an inline-static or inline-dynamic module in the bytecode "
                    "interpreter on the emulated hal_inline/hal_loader modules and prints its "
                    "results exactly as iree-run-module does. Inputs use iree-run-module's syntax "
                    "(`5`, `2.5`, `4xf32=1 2 3 4`, `2x2xi32=[1 2][3 4]`, `8x16xf32=0.25`, "
                    "`@in.npy`, `4xf32=@in.bin`).")
    p.add_argument("module", metavar="MODULE.vmfb")
    p.add_argument("--function", "-f", default="", metavar="F",
                   help="exported function to run (default: the module's only one)")
    p.add_argument("--input", "-i", action="append", default=[], metavar="VALUE",
                   help="one input value (repeat in argument order)")
    p.add_argument("--output", action="append", default=None, metavar="SPEC",
                   help="one per result, as iree-run-module's --output: `-` print, empty ignore, "
                        "`@f.npy`/`+f.npy` write/append an npy array, `@f.bin` raw contents")
    p.add_argument("--legacy-loader", action="store_true",
                   help="hal_loader's pre-fix dispatch shim (IREE #24827)")
    p.add_argument("--legacy-inline", action="store_true",
                   help="hal_inline's pre-fix storage wrapper (IREE #24827)")
    p.add_argument("--legacy-vm-buffer", action="store_true",
                   help="the pre-fix VM buffer destroy rule (IREE #24827)")
    p.add_argument("--output-max-element-count", "--output_max_element_count",
                   dest="output_max_element_count", type=parse_count_flag,
                   default=DEFAULT_MAX_ELEMENT_COUNT, metavar="N",
                   help="elements printed per tensor result (iree-run-module's "
                        "--output_max_element_count, default 1024; read as C's atoi, so a "
                        "negative count prints everything)")


class _RunProgram(Program):
    """A Program whose vm.list results keep their items (iree-run-module prints them)."""

    def _convert_ref(self, value: Any) -> Value:
        if isinstance(value, VmList):
            return ListResult(tuple(self._list_item(item) for item in value.items))
        return super()._convert_ref(value)

    def _list_item(self, item: Any) -> Value:
        if type(item) is tuple:  # a value slot: (value type, raw bits)
            return list_item(*item)
        return self._convert_ref(item)  # the list keeps its references: nothing to release


def _input_error(e: InputParseError) -> CliError:
    """IREE's status text, then what in the input is wrong (IREE's own text may not say)."""
    return CliError(f"{e} ({e.detail})" if e.detail else str(e))


def _storage_buffer(program: Program, array: Any) -> Any:
    """A hal.buffer ref holding `array` (an `&` input), made through hal_inline."""
    view = program.buffer_view(array)
    try:
        (buffer,) = program.runtime.call("hal_inline.buffer_view.buffer", view)
    finally:
        _ref.release_value(program.heap, view)
    return buffer


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


def command(args: argparse.Namespace, out: TextIO) -> int:
    path = Path(args.module)
    if not path.is_file():
        raise CliError(f"no module file at {args.module}")
    program = _RunProgram(path.read_bytes(), legacy_loader=args.legacy_loader,
                          legacy_inline=args.legacy_inline,
                          legacy_vm_buffer=args.legacy_vm_buffer)
    owned: list = []
    try:
        if not args.function:
            args.function = _single_export(program)
        arg_chars, _ = program.signature(args.function)
        try:
            # a tensor the program's heap cannot take is refused before numpy fills it
            with InputFiles(program.heap.limit - program.heap.live_bytes) as files:
                inputs = parse_inputs(args.input, arg_chars, files)
        except InputParseError as e:
            raise _input_error(e) from None
        if len(inputs) < len(arg_chars):
            # iree-run-module takes the short list, prints EXEC, and its invoke refuses it.
            out.write(f"EXEC @{args.function}\n")
            raise CliError(f"INVALID_ARGUMENT; input list and function mismatch; expected "
                           f"{len(arg_chars)} arguments but passed {len(inputs)} "
                           f"({args.function} takes {len(arg_chars)} input(s), {len(inputs)} "
                           f"given)")
        for i, value in enumerate(inputs):
            if isinstance(value, StorageInput):
                owned.append(_storage_buffer(program, value.array))
                inputs[i] = owned[-1]
        results = program.call(args.function, *inputs)
    except BaseException:
        for buffer in owned:
            _ref.release_value(program.heap, buffer)
        try:
            program.close()
        except Exception:  # noqa: BLE001 - the call's error is the one to report
            pass
        raise
    for buffer in owned:
        _ref.release_value(program.heap, buffer)
    out.write(f"EXEC @{args.function}\n")
    try:
        _process_results(results, args, out)
    except BaseException:
        try:
            program.close()
        except Exception:  # noqa: BLE001 - the output's error is the one to report
            pass
        raise
    try:
        program.close()
    except LeakError as e:  # e.g. the pre-fix storage wrapper (--legacy-inline)
        shown = "; ".join(a.describe() for a in e.leaks[:3])
        more = f"; and {len(e.leaks) - 3} more" if len(e.leaks) > 3 else ""
        raise CliError(f"the call returned, but {len(e.leaks)} allocation(s) of "
                       f"{sum(a.size for a in e.leaks)} bytes outlived the program: "
                       f"{shown}{more}") from None
    return 0


def _process_results(results: list, args: argparse.Namespace, out: TextIO) -> None:
    """Print every result, or route each to its --output target (iree-run-module's rules)."""
    if args.output is None:
        out.write(format_results(results, args.output_max_element_count))
        return
    if len(args.output) != len(results):
        raise CliError(f"OUT_OF_RANGE; {len(args.output)} outputs specified but the provided "
                       f"variant list only has {len(results)} elements")
    for value, spec in zip(results, args.output):
        try:
            write_output(value, spec, out, args.output_max_element_count)
        except OutputError as e:
            raise CliError(f"{e}; writing --output={spec}") from None
        except OSError as e:
            raise CliError(f"cannot write --output={spec}: {e.strerror or e}") from None
