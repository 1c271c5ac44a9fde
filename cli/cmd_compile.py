"""`ireeabi compile`: iree-compile with the flags ireeabi's tests use for a data model and an
execution model, so that a module built by hand runs where the tests' modules run.

The flags are the one list the tests and the pytest plugin compile with
(tooling/check_compile.py's `compile_flags`: `execution_model.MODEL_FLAGS` for the execution
model, plus `KERNEL_TARGET_FLAGS` when its kernels are llvm-cpu machine code for another data
model than the host's: the triple, the cpu features riscv and armv7 need, no debug symbols on
armv7). The command prints the command line it runs (a shell command, continued with a backslash
within 100 columns), then runs it (iree-compile from PATH, else the
`iree.compiler` package's); iree-compile's own diagnostics go to stderr as it writes them.
`--print-flags` prints the flags alone, one per line, and compiles nothing.
"""
from __future__ import annotations

import argparse
import errno
import os
import shlex
import stat
import subprocess
import sys
from pathlib import Path
from typing import TextIO

from ..abi import targets
from ..tooling.check_compile import (COMPILE_TIMEOUT_S, MODEL_ALIASES, compile_flags,
                                           find_compiler)
from ..tooling.execution_model import MODEL_FLAGS

from .errors import CliError
from .loading import resolve_target
from .output import report

# The words after `--` are iree-compile's (cli/main.py passes them through unparsed).
PASS_THROUGH = True
# iree-compile's failures are its own (its diagnostics name the line); a bad option of ours is 2.
EXIT_COMPILE_FAILED = 1


def add_parser(sub: "argparse._SubParsersAction") -> None:
    models = ", ".join([*MODEL_ALIASES, *MODEL_FLAGS])
    p = sub.add_parser(
        "compile", help="iree-compile with the flags ireeabi's tests use for a target and model",
        usage="%(prog)s FILE [--target T] [--model M] [-o OUT] [-- FLAGS...]\n"
              "       %(prog)s --print-flags [--target T] [--model M]",
        description="Run iree-compile on FILE with the flags ireeabi's tests use for the data model "
                    "T and the execution model M, printing the command line first. Flags after "
                    "`--` are passed to iree-compile after ireeabi's.",
        epilog="e.g. ireeabi compile add16.mlir --target armv7 --model inline-dynamic "
               "-o add16_armv7.vmfb -- --iree-opt-level=O2")
    p.add_argument("source", metavar="FILE", nargs="?",
                   help="the MLIR source (.mlir); more iree-compile flags may follow `--`")
    p.set_defaults(pass_through=[])  # the flags after `--` (cli/main.py's split_pass_through)
    p.add_argument("--target", "-t", metavar="T", default=None,
                   help="data model the module is to run on (default: the host's; a name, triple "
                        "or alias, as `ireeabi targets` lists)")
    p.add_argument("--model", "-m", metavar="M", default=None,
                   help=f"execution model: {models} (default: iree-compile's default model, "
                        f"llvm-cpu kernels)")
    p.add_argument("-o", "--output", metavar="OUT", default=None,
                   help="the module to write (default: FILE's name with .vmfb, in the current "
                        "directory)")
    p.add_argument("--print-flags", action="store_true",
                   help="print the flags for T and M, one per line, and compile nothing")


def command(args: argparse.Namespace, out: TextIO) -> int:
    target = resolve_target(args.target) if args.target is not None else targets.host()
    model = args.model if args.model is not None else "default"
    flags = compile_flags(model, target.name, targets.host().name)
    if args.print_flags:
        out.write("".join(f"{f}\n" for f in flags))
        return 0
    if args.source is None:
        raise CliError("compile: FILE is missing (the MLIR source to compile)")
    source = Path(args.source)
    if not source.is_file():
        raise CliError(f"compile: {args.source!r} is not a file")
    output = args.output if args.output is not None else source.with_suffix(".vmfb").name
    held = _hold_fifo(output)
    cmd = [find_compiler(), str(source), *flags, *args.pass_through, "-o", output]
    out.write("".join(f"{line}\n" for line in shell_lines(["iree-compile", *cmd[1:]])))
    out.flush()  # before iree-compile's own diagnostics
    try:
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, timeout=COMPILE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise CliError(f"compile: iree-compile ran past {COMPILE_TIMEOUT_S} s and was stopped") \
            from None
    finally:
        if held is not None:
            os.close(held)
    if proc.returncode != 0:
        report([f"ireeabi: error: compile: iree-compile exited with {proc.returncode} (its "
                f"errors above)"], sys.stderr)
        return EXIT_COMPILE_FAILED
    return 0


def _hold_fifo(output: str) -> "int | None":
    """When OUT is a FIFO: a descriptor held on it while iree-compile runs (a reader then sees no
    end of file between our open and iree-compile's), or a CliError if no process reads it:
    iree-compile opens its output blocking, and would wait there for a reader until the backstop."""
    try:
        if not stat.S_ISFIFO(os.stat(output).st_mode):
            return None
    except OSError:  # missing (iree-compile creates it) or unreadable (iree-compile says why)
        return None
    try:
        return os.open(output, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        if e.errno == errno.ENXIO:
            raise CliError(f"compile: -o {output}: a FIFO with no reader (iree-compile would block "
                           "opening it until one opens it)") from None
        raise


def shell_lines(argv: list[str], width: int = 100) -> list[str]:
    """`argv` as a shell command within `width` columns: continued with ` \\` and two spaces
    before a word that would pass it (a word longer than a line stays whole)."""
    words = [shlex.quote(w) for w in argv]
    lines, line = [], words[0]
    for w in words[1:]:
        if len(line) + 1 + len(w) + 2 > width:  # room for the ` \\`
            lines.append(line + " \\")
            line = "  " + w
        else:
            line += " " + w
    return lines + [line]


__all__ = ["add_parser", "command", "shell_lines", "PASS_THROUGH", "EXIT_COMPILE_FAILED"]
