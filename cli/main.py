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
import errno
import os
import sys
from typing import TYPE_CHECKING, Any, Callable, Sequence, TextIO

# Start-up: only what parsing the command line needs is imported here (`cconv` is a lazy face: its
# help text reads the cconv syntax alone); each command imports its own modules when it runs, so
# `ireeabi --version` or `ireeabi targets` loads no interpreter, HAL, numpy or libclang.
from ireeabi.abi import cconv
from ireeabi.abi.errors import IreeAbiError, UnknownNameError
from ireeabi.abi.printable import printable_text

from . import render
from .errors import CliError
from .interrupt import CANCELLED_LINE, report_cancelled  # noqa: F401 - the statuses it prints
from .resolve import (DEFAULT_TARGET, explain_dash_values, load_native_modules, parse_spans,
                      require_cconv, resolve, select_targets)

if TYPE_CHECKING:
    from ireeabi.abi.layout import Struct
    from ireeabi.abi.targets import Target

EXIT_OK, EXIT_FINDINGS, EXIT_BAD_INPUT = 0, 1, 2
EXIT_RUN_FAILED = 1


def _target_options(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--target", "-t", metavar="T",
                   help=f"data model (default {DEFAULT_TARGET}; `ireeabi targets` lists them)")
    g.add_argument("--all-targets", "-a", action="store_true", help="every data model side by side")
    p.add_argument("--spans", metavar="N,N", help="element count of each span, e.g. 4,3")
    explain_dash_values(p, "--spans", "-1,3")
    p.add_argument("--json", action="store_true", help="machine-readable output (see docs/command-line.md)")


def _struct_source_options(p: argparse.ArgumentParser, what: str) -> None:
    src = p.add_mutually_exclusive_group()
    src.add_argument("--header", metavar="FILE.h",
                     help=f"{what} a struct, union or typedef of this C header, parsed by libclang for "
                          "each target's triple and cross-checked with libclang's own layout")
    src.add_argument("--dwarf", metavar="FILE",
                     help=f"{what} a struct of this object's DWARF, as the compiler that built it laid "
                          "it out (its own data model by default; --all-targets re-lays it everywhere)")
    p.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                   help="header search directory (with --header; repeatable)")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=V]",
                   help="preprocessor definition (with --header; repeatable)")


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


# The commands whose parsers other modules declare (`add_parser`): their option defaults import the
# runtime's tables and numpy, so each is built only when the command line may use or show it.
MODULE_PARSERS = ("run", "test", "compare")
OWN_PARSERS = ("layout", "check", "targets", "list", "fixtures", "inspect")  # built here, always


def module_parsers(argv: Sequence[str]) -> tuple[str, ...]:
    """Which of `MODULE_PARSERS` parsing `argv` may use or show: the command the first argument that
    is not an option names (only `--version` before it); none for `--version` alone; all of them for
    help, no arguments, or an unknown command or option, where argparse lists every command."""
    for arg in argv:
        if not arg.startswith("-"):
            if arg in MODULE_PARSERS:
                return (arg,)
            return () if arg in OWN_PARSERS else MODULE_PARSERS
        if not (len(arg) > 2 and "--version".startswith(arg)):  # argparse takes --vers for --version
            return MODULE_PARSERS
    return () if argv else MODULE_PARSERS


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command line's parser; given the arguments it is to parse, with only the parsers of
    `MODULE_PARSERS` that it may need (`module_parsers`), so that a command starts without
    importing what another one runs on."""
    parser = argparse.ArgumentParser(
        prog="ireeabi",
        description="Inspect IREE's runtime native ABI: struct layouts and calling conventions "
                    "per data model.",
        epilog=cconv_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="store_true", help="print the installed version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    p = sub.add_parser("layout", help="struct table or cconv instance layout",
                       description="A catalog struct (pahole-style table) or a calling convention "
                                   "(`0...` signature or a bare fragment such as rIiiiCiDCrIID). "
                                   "Without --spans every span has 1 element.")
    p.add_argument("name", metavar="NAME_OR_CCONV", nargs="?",
                   help="without it, --header lays out every struct of the header")
    _target_options(p)
    _struct_source_options(p, "NAME is")
    _svg_option(p, "the struct's bytes on each target (a cell per byte, fields coloured and named, "
                   "padding hatched), or the cconv's packing")
    p = sub.add_parser("check", help="every disagreement between IREE's layout rules for a cconv",
                       description="Findings of the cconv rules and of the hand-written span readers, "
                                   "with the bytes involved. Without --spans, counts 0..3 per span are "
                                   "swept. Exit 0: no finding, 1: findings, 2: bad input.")
    p.add_argument("cconv", metavar="CCONV")
    _target_options(p)
    _struct_source_options(p, "--struct names")
    p.add_argument("--struct", metavar="NAME",
                   help="with --header or --dwarf: the struct a native shim reads the buffer through "
                        "(the whole buffer, or the fixed part before the first span), checked against "
                        "the VM's packing instead of IREE's generic shim struct")
    p.add_argument("--side", choices=["arguments", "results"], default="arguments",
                   help="which buffer of a whole signature --struct describes (default arguments)")
    _svg_option(p, "each instance's packing against the struct its shim reads, disagreements "
                   "outlined in red")
    p = sub.add_parser("targets", help="the data models and their ABI numbers")
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("list", help="the catalog's struct names")
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("fixtures", help="build or verify golden packed-buffer fixtures",
                       description="Packed argument/result buffers of every hal_inline, hal_loader and "
                                   "variadic hal signature on every data model, with JSON sidecars. "
                                   "verify exits 1 naming the first differing offset and field.")
    p.add_argument("action", choices=["build", "verify"])
    p.add_argument("directory", metavar="DIR")
    p = sub.add_parser("inspect", help="a compiled .vmfb module's imports, exports and rodata",
                       description="Reads a .vmfb. --check-imports resolves every import against the "
                                   "emulated native modules (hal_inline, hal_loader, and any registered): "
                                   "missing functions, cconv mismatches, versions and layout findings on "
                                   "the target. Exit 1 when an import is incompatible.")
    p.add_argument("module", metavar="MODULE.vmfb")
    p.add_argument("--target", "-t", metavar="T", help=f"data model (default {DEFAULT_TARGET})")
    p.add_argument("--check-imports", action="store_true",
                   help="check every import, and say where each executable of the module runs on the "
                        "target (natively, emulated CPU, wasmtime, vmvx interpreter) or why it is refused")
    p.add_argument("--emulate-kernels", action="store_true",
                   help="with --check-imports: place host kernels in the emulated CPU, as `run "
                        "--emulate-kernels` runs them")
    p.add_argument("--native-module", action="append", default=[], metavar="PKG.MOD[:FACTORY]|FILE",
                   help="with --check-imports: resolve against this native module too (a "
                        "declaration in Python, or a .toml/.json file of its exports; repeatable)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--disassemble", action="store_true",
                   help="append the bytecode disassembly, as iree-dump-module --output=disassembly "
                        "prints it (with --json: each function's lines)")
    p.add_argument("--bytecode-offsets", "--bytecode_offsets", dest="bytecode_offsets",
                   action="store_true", help="with --disassemble: prefix each op's [offset]")
    wanted = MODULE_PARSERS if argv is None else module_parsers(argv)
    for name in MODULE_PARSERS:  # each declared by its module, cmd_NAME (add_parser, command)
        if name in wanted:
            _command_module(name).add_parser(sub)
    return parser


def _command_module(name: str) -> Any:
    import importlib

    return importlib.import_module(f"{__package__}.cmd_{name}")


def _emit(lines: Sequence[str], out: TextIO) -> None:
    for line in lines:
        out.write(line + "\n")


def _emit_json(obj: Any, out: TextIO) -> None:
    import json

    out.write(json.dumps(obj, indent=2) + "\n")


def _svg_option(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--svg", metavar="FILE", help=f"also draw a picture as SVG into FILE: {what}")


def _picture() -> Any:
    from . import picture  # drawsvg is imported only to draw
    return picture


def _write_svg(path: str | None, make: Callable[[], str]) -> None:
    """`make()`'s picture into `path` (nothing without --svg); the text output goes on as usual."""
    if path is None:
        return
    text = make()
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise CliError(f"--svg {path}: {e.strerror or e}") from None


def _cmd_layout(args: argparse.Namespace, out: TextIO) -> int:
    from ireeabi.abi.layout import Struct

    from . import cmd_layout

    if args.header or args.dwarf:
        return _layout_foreign_struct(args, out)
    if args.include_dirs or args.defines:
        raise CliError("-I and -D apply to --header")
    if args.name is None:
        raise CliError("layout needs NAME_OR_CCONV (usage: ireeabi layout NAME_OR_CCONV [options], or "
                       "ireeabi layout --header FILE.h [options] for every struct of a header)")
    tgts = select_targets(args.target, args.all_targets)
    spans = parse_spans(args.spans)
    what = resolve(args.name)
    if isinstance(what, Struct):
        if spans is not None:
            raise CliError(f"--spans applies to calling conventions, not to struct {what.name}")
        _write_svg(args.svg, lambda: _picture().struct_svg(what, tgts))
        if args.json:
            _emit_json(cmd_layout.struct_data(what, tgts, args.all_targets), out)
        elif args.all_targets:
            _emit(cmd_layout.struct_all_text(what, tgts), out)
        else:
            _emit(cmd_layout.struct_text(what, tgts[0]), out)
        return EXIT_OK
    insts = cmd_layout.instances(what, tgts, spans)  # validates span counts before any output
    _write_svg(args.svg, lambda: _picture().cconv_svg(what.text, insts))
    if args.json:
        _emit_json(cmd_layout.cconv_data(what, tgts, spans), out)
    elif args.all_targets:
        _emit(cmd_layout.cconv_all_text(what, tgts, spans), out)
    else:
        _emit(cmd_layout.cconv_text(what, tgts[0], spans), out)
    return EXIT_OK


def _layout_foreign_struct(args: argparse.Namespace, out: TextIO) -> int:
    """`layout --header FILE.h NAME` / `layout --dwarf FILE NAME`."""
    from . import cmd_layout

    if args.spans is not None:
        raise CliError("--spans applies to calling conventions, not to structs")
    if args.name is None:
        if not args.header:
            raise CliError("layout --dwarf needs the NAME of a struct")
        return _layout_header(args, out)
    tgts, struct_for, source = _own_struct(args, args.name)
    decls = [struct_for(t) for t in tgts]
    _write_svg(args.svg, lambda: _picture().struct_svg(decls[0], tgts, decls))
    if args.json:
        _emit_json(cmd_layout.struct_data(decls[0], tgts, args.all_targets, decls), out)
    elif args.all_targets:
        _emit(cmd_layout.struct_all_text(decls[0], tgts, source, decls), out)
    else:
        _emit(cmd_layout.struct_text(decls[0], tgts[0], source), out)
    return EXIT_OK


def _layout_header(args: argparse.Namespace, out: TextIO) -> int:
    """`layout --header FILE.h`: every struct of the header on each target; a struct that cannot be
    laid out is listed with its line and concerns no other (exit 2 when there is one)."""
    from ireeabi.abi import cheader

    from . import cmd_layout

    if args.svg:
        raise CliError("--svg draws one struct: give its NAME with --header")
    tgts = select_targets(args.target, args.all_targets)
    readings = [cheader.read_header(args.header, t, include_dirs=args.include_dirs, defines=args.defines)
                for t in tgts]
    for r in readings:
        for s in {id(s): s for s in r.structs.values()}.values():
            if _table_rows(s) > MAX_TABLE_ROWS:
                raise CliError(f"{args.header}: {s.name}: its table would have more than {MAX_TABLE_ROWS} rows")
    if args.json:
        objs = [cmd_layout.header_data(args.header, t, r) for t, r in zip(tgts, readings)]
        _emit_json(objs if args.all_targets else objs[0], out)
    else:
        _emit(cmd_layout.header_text(args.header, tgts, readings), out)
    return EXIT_BAD_INPUT if any(r.errors for r in readings) else EXIT_OK


def _own_struct(args: argparse.Namespace, name: str) -> tuple[list[Target], Callable[[Target], Struct], str]:
    """(targets, target -> declaration, where it comes from) of `--header`/`--dwarf` NAME: a header is
    read for each target's triple; an object's DWARF once, on its own model (the default target and
    the first column)."""
    from ireeabi.abi import cheader, dwarf

    if args.header:
        tgts = select_targets(args.target, args.all_targets)

        def from_header(t: Target) -> Struct:
            decl = cheader.header_struct(args.header, name, t, include_dirs=args.include_dirs,
                                         defines=args.defines)
            rows = _table_rows(decl)
            if rows > MAX_TABLE_ROWS:
                raise CliError(f"{args.header}: {name}: its table would have {rows} rows (nested records "
                               f"repeat for each member of their type); at most {MAX_TABLE_ROWS} are shown")
            return decl
        return tgts, from_header, f"{args.header}, checked with libclang"
    if args.include_dirs or args.defines:
        raise CliError("-I and -D apply to --header")
    own, decl = dwarf.dwarf_struct(args.dwarf, name)
    tgts = select_targets(args.target, args.all_targets) if args.target or args.all_targets else [own]
    tgts = sorted(tgts, key=lambda t: t is not own)  # cells are marked against the file's own model
    return tgts, lambda t: decl, f"DWARF of {args.dwarf} ({own.name})"


MAX_TABLE_ROWS = 1_000_000  # fields of a header's struct, nested ones repeated, `layout` lists


def _table_rows(decl: Struct) -> int:
    """The fields a table of `decl` lists, nested records' fields once per member of their type: a
    count memoized per record, as 100 lines of a header can nest 2^100 fields."""
    from ireeabi.abi.layout import Struct

    memo: dict[int, int] = {}

    def rows(s: Struct) -> int:  # as deep as the header nests (cheader.MAX_NESTING at most)
        if id(s) not in memo:
            memo[id(s)] = sum(1 + (rows(f.type) if isinstance(f.type, Struct) else 0) for f in s.fields)
        return memo[id(s)]

    return rows(decl)


def _cmd_check(args: argparse.Namespace, out: TextIO) -> int:
    from . import cmd_check

    inp = require_cconv(args.cconv)
    spans = parse_spans(args.spans)
    if args.header or args.dwarf:
        if not args.struct:
            raise CliError("--header and --dwarf name the file of --struct NAME; give the struct")
        tgts, struct_for, source = _own_struct(args, args.struct)
        for t in tgts:
            struct_for(t)  # a bad header or name is reported before any output
        res = cmd_check.run(inp, tgts, spans, struct_for, args.side)
        side = args.side if inp.signature is not None else "the fragment"
        res.read_through = f"{side} read through {args.struct} ({source})"
    else:
        if args.struct or args.include_dirs or args.defines:
            raise CliError("--struct, -I and -D need --header FILE.h or --dwarf FILE")
        res = cmd_check.run(inp, select_targets(args.target, args.all_targets), spans)
    _write_svg(args.svg, lambda: _picture().check_svg(res))
    if args.json:
        _emit_json(cmd_check.data(res), out)
    else:
        _emit(cmd_check.text(res, inp), out)
    return res.exit_code


def _cmd_targets(args: argparse.Namespace, out: TextIO) -> int:
    from . import cmd_targets

    if args.json:
        _emit_json(cmd_targets.data(), out)
    else:
        _emit(cmd_targets.text(), out)
    return EXIT_OK


def _cmd_list(args: argparse.Namespace, out: TextIO) -> int:
    from ireeabi import layouts

    names = layouts.names()
    if args.json:
        _emit_json([{"name": n, "module": layouts.module_of(n)} for n in names], out)
        return EXIT_OK
    cols = [render.Column("struct"), render.Column("declared in")]
    rows = [(n, layouts.module_of(n)) for n in names]
    _emit(render.table(cols, rows) + ["plus iree_vm_abi_<fragment>_t for any fragment a generic "
                                      "shim can express"], out)
    return EXIT_OK


def _cmd_fixtures(args: argparse.Namespace, out: TextIO) -> int:
    from . import cmd_fixtures

    if args.action == "build":
        _emit(cmd_fixtures.build(args.directory), out)
        return EXIT_OK
    lines, ok = cmd_fixtures.verify(args.directory)
    _emit(lines, out)
    return EXIT_OK if ok else EXIT_FINDINGS


def _cmd_inspect(args: argparse.Namespace, out: TextIO) -> int:
    from . import cmd_inspect

    (target,) = select_targets(args.target, False)
    native = load_native_modules(args.native_module)
    if native and not args.check_imports:
        raise CliError("--native-module applies to --check-imports")
    if args.emulate_kernels and not args.check_imports:
        raise CliError("--emulate-kernels applies to --check-imports")
    result, status = cmd_inspect.command(cmd_inspect.load(args.module), target, args.check_imports,
                                         args.json, args.disassemble, args.bytecode_offsets, native,
                                         args.emulate_kernels)
    if args.json:
        _emit_json(result, out)
    else:
        out.write(result)
    return status


def _cmd_run(args: argparse.Namespace, out: TextIO) -> int:
    from . import cmd_run

    return cmd_run.command(args, out)


def _cmd_test(args: argparse.Namespace, out: TextIO) -> int:
    from . import cmd_test

    return cmd_test.command(args, out)


COMMANDS = {"inspect": _cmd_inspect, "layout": _cmd_layout, "check": _cmd_check, "targets": _cmd_targets, "list": _cmd_list,
            "fixtures": _cmd_fixtures, "run": _cmd_run, "test": _cmd_test}


def error_lines(e: IreeAbiError) -> list[str]:
    """One readable message (fitting the width) for bad input. Whatever it echoes of a module (a
    function, import or type name) is shown escaped (`abi.printable`): no control character or
    byte that is not UTF-8 reaches the terminal raw."""
    if isinstance(e, UnknownNameError):
        msg = f"unknown {e.what} {e.name!r}"
        if e.closest:
            msg += f"; closest: {', '.join(e.closest)}"
        if len(e.valid) <= 10:
            msg += f"; valid: {', '.join(e.valid)}"
        elif e.what == "struct":
            msg += f" (`ireeabi list` shows all {len(e.valid)})"
        return render.wrap("ireeabi: error: " + printable_text(msg), subsequent=4)
    if isinstance(e, cconv.CconvError):
        lines = render.wrap(f"ireeabi: error: malformed cconv: {printable_text(str(e))}", subsequent=4)
        if len(e.text) < render.WIDTH - 4 and e.text.isprintable():
            lines += ["    " + e.text, "    " + " " * e.index + "^"]
        return lines
    return render.wrap(f"ireeabi: error: {printable_text(str(e))}", subsequent=4)


def os_error_line(e: OSError, output_failed: bool = False) -> str:
    """One line for an OS error: the path(s) involved and the system's reason."""
    reason = e.strerror or str(e) or type(e).__name__
    name = errno.errorcode.get(e.errno, "") if e.errno is not None else ""
    reason += f" ({name})" if name else ""
    paths = [os.fsdecode(p) if isinstance(p, (str, bytes)) else str(p)
             for p in (e.filename, e.filename2) if p is not None]
    if paths:
        return f"ireeabi: error: {' -> '.join(paths)}: {reason}"
    if output_failed:
        return f"ireeabi: error: cannot write the output: {reason}"
    return f"ireeabi: error: {reason}"


def _terminal_safe(text: str) -> str:
    """Output text with every character a module's name may carry that is not printable (NUL, ESC,
    a byte that is not UTF-8, ...) escaped as `abi.printable` shows it, except the newlines and
    tabs of the output's own layout: whatever a command echoes, no control sequence reaches the
    terminal. (Escaped text passes unchanged.)"""
    if text.replace("\n", "").replace("\t", "").isprintable():  # the usual case, at C speed
        return text
    return "\n".join("\t".join(printable_text(part) for part in line.split("\t"))
                     for line in text.split("\n"))


class _Output:
    """The commands' output stream (control characters escaped: `_terminal_safe`), remembering
    the OS error a write or flush of it raised (so the report can say the output failed, which
    such an error does not name)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.error: OSError | None = None

    def write(self, text: str) -> int:
        try:
            return self.stream.write(_terminal_safe(text))
        except OSError as e:
            self.error = e
            raise

    def flush(self) -> None:
        try:
            self.stream.flush()
        except OSError as e:
            self.error = e
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def _silence_failed_stdout(out: _Output) -> None:
    """After a failed write to the process's standard output, point it at the null device, so
    the interpreter's flush at exit cannot fail a second time (with a traceback of its own)."""
    if out.error is not None and out.stream is sys.stdout:
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, out.fileno())
            finally:
                os.close(null)
        except (OSError, ValueError, AttributeError):
            pass


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        handler = COMMANDS.get(args.command) or _command_module(args.command).command
        status = handler(args, out)
        out.flush()  # a full disk or a closed pipe shows here, not at exit
        return status
    except IreeAbiError as e:
        _emit(error_lines(e), err)
        # `run` stands in for iree-run-module, which exits 1 on every failed load, parse or call.
        return EXIT_RUN_FAILED if args.command in ("run", "test") else EXIT_BAD_INPUT


def main(argv: list[str] | None = None, *, stdout: TextIO | None = None,
         stderr: TextIO | None = None, parser: argparse.ArgumentParser | None = None) -> int:
    """The command line; `parser`: `build_parser(argv)` made already (cli/__main__.py makes it while
    a Ctrl-C is only recorded: its imports, numpy's among them, turn an interrupt into ImportError)."""
    out = _Output(stdout or sys.stdout)
    err = stderr or sys.stderr
    try:
        if parser is None:
            parser = build_parser(sys.argv[1:] if argv is None else argv)
        try:
            args = parser.parse_args(argv)
        except SystemExit as e:  # argparse reports usage errors itself (exit 2) and --help (0)
            return e.code if isinstance(e.code, int) else EXIT_BAD_INPUT
        if args.version:
            out.write(f"ireeabi {version()}\n")
            return EXIT_OK
        if args.command is None:
            parser.print_help(out)
            return EXIT_OK
        return _run(args, out, err)
    except KeyboardInterrupt:
        # IREE's status for a cancelled operation, in one line instead of a traceback (once: the
        # process entry, cli/__main__.py, may have recorded the same Ctrl-C).
        return report_cancelled(err)
    except MemoryError:
        return _report(["ireeabi: error: RESOURCE_EXHAUSTED; out of memory: the host refused an "
                        "allocation"], err)
    except OSError as e:
        _silence_failed_stdout(out)
        return _report([os_error_line(e, e is out.error)], err)


def _report(lines: list[str], err: TextIO) -> int:
    """Write a failure's lines to `err` (if it can still take them); exit status 1."""
    try:
        _emit(lines, err)
        err.flush()
    except (OSError, ValueError):
        pass
    return EXIT_RUN_FAILED


if __name__ == "__main__":
    sys.exit(main())
