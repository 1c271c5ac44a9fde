"""`ireeabi run MODULE.vmfb --function F --input ...`: run a compiled inline module on the emulated
ABI.

The module runs in the bytecode interpreter on a HalRuntime (hal_inline, hal_loader as native
modules on a tracked heap; every import call through packed argument buffers and the shims, every
dispatch on the real kernel). Inputs use iree-run-module's `--input` syntax, parsed per the
function's calling convention; the output is what iree-run-module prints: `EXEC @F`, then one
`result[i]: ...` entry per result. Exit 0 on success; 2 on bad input or a failing call (traps name
the function and pc).
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from ireeabi.vm.heap import LeakError
from ireeabi.vm.interp.program import Program
from ireeabi.vm.interp.values import DEFAULT_MAX_ELEMENT_COUNT, format_results, parse_input

from .errors import CliError


def add_parser(sub: "argparse._SubParsersAction") -> None:
    p = sub.add_parser(
        "run", help="run a compiled inline module (like iree-run-module)",
        description="Runs FUNCTION of an inline-static or inline-dynamic module in the bytecode "
                    "interpreter on the emulated hal_inline/hal_loader modules and prints its "
                    "results exactly as iree-run-module does. Inputs use iree-run-module's syntax "
                    "(`5`, `2.5`, `4xf32=1 2 3 4`, `2x2xi32=[1 2][3 4]`, `8x16xf32=0.25`).")
    p.add_argument("module", metavar="MODULE.vmfb")
    p.add_argument("--function", "-f", required=True, metavar="F", help="exported function to run")
    p.add_argument("--input", "-i", action="append", default=[], metavar="VALUE",
                   help="one input value (repeat in argument order)")
    p.add_argument("--legacy-loader", action="store_true",
                   help="hal_loader's pre-fix dispatch shim (IREE #24827)")
    p.add_argument("--legacy-inline", action="store_true",
                   help="hal_inline's pre-fix storage wrapper (IREE #24827)")
    p.add_argument("--legacy-vm-buffer", action="store_true",
                   help="the pre-fix VM buffer destroy rule (IREE #24827)")
    p.add_argument("--output-max-element-count", type=int, default=DEFAULT_MAX_ELEMENT_COUNT,
                   metavar="N", help="elements printed per tensor result (iree-run-module's "
                                     "--output_max_element_count, default 1024)")


def command(args: argparse.Namespace, out: TextIO) -> int:
    path = Path(args.module)
    if not path.is_file():
        raise CliError(f"no module file at {args.module}")
    if args.output_max_element_count < 0:
        raise CliError(f"--output-max-element-count {args.output_max_element_count} is negative")
    program = Program(path.read_bytes(), legacy_loader=args.legacy_loader,
                      legacy_inline=args.legacy_inline, legacy_vm_buffer=args.legacy_vm_buffer)
    try:
        arg_chars, _ = program.signature(args.function)
        if len(args.input) > len(arg_chars):
            raise CliError(f"{args.function} takes {len(arg_chars)} input(s), "
                           f"{len(args.input)} given (function expected fewer input values)")
        if len(args.input) < len(arg_chars):
            raise CliError(f"{args.function} takes {len(arg_chars)} input(s), "
                           f"{len(args.input)} given")
        inputs = [parse_input(text, char) for text, char in zip(args.input, arg_chars)]
        results = program.call(args.function, *inputs)
    except BaseException:
        try:
            program.close()
        except Exception:  # noqa: BLE001 - the call's error is the one to report
            pass
        raise
    out.write(f"EXEC @{args.function}\n")
    out.write(format_results(results, args.output_max_element_count))
    try:
        program.close()
    except LeakError as e:  # e.g. the pre-fix storage wrapper (--legacy-inline)
        shown = "; ".join(a.describe() for a in e.leaks[:3])
        more = f"; and {len(e.leaks) - 3} more" if len(e.leaks) > 3 else ""
        raise CliError(f"the call returned, but {len(e.leaks)} allocation(s) of "
                       f"{sum(a.size for a in e.leaks)} bytes outlived the program: "
                       f"{shown}{more}") from None
    return 0
