"""The `ireeabi` command line.

    ireeabi layout NAME_OR_CCONV [--target T | --all-targets] [--spans 4,3] [--json] [--svg FILE]
    ireeabi layout [NAME] --header FILE.h [-I DIR] [-D NAME[=V]] [--target T | --all-targets] [--json]
    ireeabi layout NAME --dwarf FILE.o|.so [--target T | --all-targets] [--json]
    ireeabi check CCONV [--target T | --all-targets] [--spans 4,3] [--json] [--svg FILE]
    ireeabi targets [--json]
    ireeabi list [--json]
    ireeabi fixtures build|verify DIR
    ireeabi inspect MODULE.vmfb [--target T] [--check-imports] [--json] [--disassemble]
    ireeabi run MODULE.vmfb --function F [--input V ...] [--max-steps N] [--kernel-cpu-time S] [--reference] [--legacy-*]
    ireeabi test MODULE.vmfb [--function F]... [--native-module PKG.MOD[:FACTORY]]... [--heap-limit SIZE]

Exit status: 0 success (for `check`: no finding), 1 `check` found disagreements, 2 bad input.
Bad input is reported in one message naming the offending value; never with a traceback.
`run` exits 1 on every failure, as iree-run-module does. For every command, an OS error (a path
that cannot be read or written, a full disk, a closed output) is one line naming the path and the
system's reason, out of memory is RESOURCE_EXHAUSTED, and Ctrl-C is IREE's CANCELLED; all exit 1.
"""
from __future__ import annotations

import argparse
import importlib
import sys
import threading
from typing import Callable, Sequence, TextIO

# Start-up: only what parsing the command line needs is imported here (`cconv` is a lazy face: its
# help text reads the cconv syntax alone); the parser of a command is built, and its module
# imported, only when the command line can use or show it, so `ireeabi --version` or `ireeabi
# targets` loads no interpreter, HAL, numpy or libclang.
from ..abi import cconv
from ..abi.errors import IreeAbiError

from .errors import CliError
from .interrupt import CANCELLED_LINE, report_cancelled  # noqa: F401 - the statuses it prints
from .output import Output, error_lines, os_error_line, report, silence_failed_stdout
from .render import emit

EXIT_OK, EXIT_BAD_INPUT = 0, 2
EXIT_FAILED = 1  # an OS error or out of memory, in any command

# The commands, in the order `ireeabi --help` lists them. Each is a module with
# `add_parser(subparsers)`, declaring its parser, and `command(args, out) -> int`, running it (its
# exit status); `ERROR_STATUS`, if it declares one, is its exit status on bad input (else 2).
# A command is one line here.
COMMAND_MODULES = {
    "layout": "ireeabi.cli.cmd_layout",
    "check": "ireeabi.cli.cmd_check",
    "targets": "ireeabi.cli.cmd_targets",
    "list": "ireeabi.cli.cmd_list",
    "fixtures": "ireeabi.cli.cmd_fixtures",
    "inspect": "ireeabi.cli.cmd_inspect",
    "run": "ireeabi.cli.cmd_run",
    "test": "ireeabi.cli.cmd_test",
    "compare": "ireeabi.cli.cmd_compare",
    "compile": "ireeabi.cli.cmd_compile",
}


def version() -> str:
    """The installed distribution's version (package metadata), as `ireeabi --version` prints it."""
    import importlib.metadata

    try:
        return importlib.metadata.version("ireeabi")
    except importlib.metadata.PackageNotFoundError:
        raise CliError("ireeabi has no package metadata: install it (pip install -e .)") from None


def cconv_help() -> str:
    """What the characters of a calling convention mean (runtime/src/iree/vm/module.h:
    iree_vm_function_signature_t and the IREE_VM_CCONV_TYPE_* characters), for --help."""
    c, d, w = cconv.SPAN_START, cconv.SPAN_END, 11
    types = ", ".join(cconv.KINDS.values())
    return "\n".join([
        "calling conventions (CCONV), as IREE's runtime/src/iree/vm/module.h defines them:",
        f"  {cconv.VERSION:<{w}}version prefix: a whole signature starts with it (the only version)",
        f"  {' '.join(cconv.KINDS):<{w}}one value each: {types} (iree_vm_ref_t); f, F pack as i, I",
        f"  {c + '...' + d:<{w}}a span: a count, then that many tuples of the values between {c} and {d}",
        f"  {'':<{w}}(variadic; arguments only)",
        f"  {cconv.VOID:<{w}}no values: a side that has none (0v_v)",
        f"  {cconv.SPLIT:<{w}}ends the arguments; the results follow (without it: all arguments)",
        "  e.g. 0rIiiiCiDCrIID_v is hal_loader's executable.dispatch; a bare fragment such as",
        "  rIiiiCiDCrIID (no 0, no _) is one side alone.",
        "targets (T): a name, triple or alias: x86_64, x86_64-linux-gnu and amd64 are one target;",
        "  any triple iree-compile takes names the data model of its architecture",
        "  (riscv32-pc-linux-elf: riscv32); `ireeabi targets` lists them.",
    ])


def parsers_for(argv: Sequence[str]) -> tuple[str, ...]:
    """The commands whose parsers parsing `argv` may use or show (each parser is its command's
    module's, whose imports are the command's: the catalog, the runtime's tables, numpy): the
    command the first argument that is not an option names (only `--version` before it); none for
    `--version` alone; every command for help, no arguments, or an unknown command or option,
    where argparse lists them all."""
    every = tuple(COMMAND_MODULES)
    for arg in argv:
        if not arg.startswith("-"):
            return (arg,) if arg in COMMAND_MODULES else every
        if not (len(arg) > 2 and "--version".startswith(arg)):  # argparse takes --vers for --version
            return every
    return () if argv else every


def split_pass_through(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """`argv` without what follows its first `--`, and that, for a command whose module declares
    `PASS_THROUGH = True` (`compile`: flags for iree-compile; argparse would take them as
    positionals, and cannot put them after an optional positional); else `argv` and None."""
    if "--" not in argv:
        return argv, None
    cut = argv.index("--")
    words = [a for a in argv[:cut] if not a.startswith("-")]  # the top level takes no values
    if not words or words[0] not in COMMAND_MODULES:
        return argv, None
    if not getattr(importlib.import_module(COMMAND_MODULES[words[0]]), "PASS_THROUGH", False):
        return argv, None
    return argv[:cut], argv[cut + 1:]


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command line's parser; given the arguments it is to parse, with only the commands'
    parsers that it may need (`parsers_for`), so that a command starts without importing what
    another one runs on. Made once per set of commands in a process (parsing does not change a
    parser): `main` called in-process, as tests and tools do, built the parser at every call, ~5 ms."""
    wanted = tuple(COMMAND_MODULES) if argv is None else parsers_for(argv)
    with _PARSERS_LOCK:
        parser = _PARSERS.get(wanted)
        if parser is None:
            parser = _PARSERS[wanted] = _new_parser(wanted)
    return parser


_PARSERS: dict[tuple[str, ...], argparse.ArgumentParser] = {}
_PARSERS_LOCK = threading.Lock()


def _new_parser(wanted: tuple[str, ...]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ireeabi",
        description="Inspect IREE's runtime native ABI: struct layouts and calling conventions "
                    "per data model.",
        epilog=cconv_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="store_true", help="print the installed version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        if name in wanted:
            importlib.import_module(COMMAND_MODULES[name]).add_parser(sub)
    return parser


def _command(name: str) -> Callable[[argparse.Namespace, TextIO], int]:
    def run(args: argparse.Namespace, out: TextIO) -> int:
        return importlib.import_module(COMMAND_MODULES[name]).command(args, out)
    return run


# The command each name runs (its module's `command`).
COMMANDS = {name: _command(name) for name in COMMAND_MODULES}


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        status = COMMANDS[args.command](args, out)
        out.flush()  # a full disk or a closed pipe shows here, not at exit
        return status
    except IreeAbiError as e:
        emit(error_lines(e), err)
        return getattr(importlib.import_module(COMMAND_MODULES[args.command]), "ERROR_STATUS",
                       EXIT_BAD_INPUT)


def main(argv: list[str] | None = None, *, stdout: TextIO | None = None,
         stderr: TextIO | None = None, parser: argparse.ArgumentParser | None = None) -> int:
    """The command line; `parser`: `build_parser(argv)` made already (cli/__main__.py makes it while
    a Ctrl-C is only recorded: its imports, numpy's among them, turn an interrupt into ImportError)."""
    out = Output(stdout or sys.stdout)
    err = stderr or sys.stderr
    try:
        if parser is None:
            parser = build_parser(sys.argv[1:] if argv is None else argv)
        words = list(sys.argv[1:] if argv is None else argv)
        words, passed = split_pass_through(words)
        try:
            args = parser.parse_args(words)
            if passed is not None:
                args.pass_through = passed
        except SystemExit as e:  # argparse reports usage errors itself (exit 2) and --help (0)
            return e.code if isinstance(e.code, int) else EXIT_BAD_INPUT
        if args.version:
            out.write(f"ireeabi {version()}\n")
            return EXIT_OK
        if args.command is None:
            parser.print_help(out)
            return EXIT_OK
        return _run(args, out, err)  # type: ignore[arg-type]  # Output writes as a TextIO does
    except KeyboardInterrupt:
        # IREE's status for a cancelled operation, in one line instead of a traceback (once: the
        # process entry, cli/__main__.py, may have recorded the same Ctrl-C).
        return report_cancelled(err)
    except MemoryError:
        report(["ireeabi: error: RESOURCE_EXHAUSTED; out of memory: the host refused an allocation"], err)
        return EXIT_FAILED
    except OSError as e:
        silence_failed_stdout(out)
        report([os_error_line(e, e is out.error)], err)
        return EXIT_FAILED


__all__ = ["main", "build_parser", "parsers_for", "split_pass_through", "COMMAND_MODULES", "COMMANDS",
           "version", "cconv_help"]


if __name__ == "__main__":
    sys.exit(main())
