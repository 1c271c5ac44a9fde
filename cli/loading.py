"""What the commands load from their arguments, and the options several of them share: module files
(`load_module`; `run`'s `--module=FILE` and `--device` as iree-run-module names them), targets
(`resolve_target`, `select_targets`), native modules (`load_native_modules`), a struct of a C header or of DWARF
(`own_struct`), and the run bounds (`--heap-limit`, `--max-steps`, `--kernel-cpu-time`).

Start-up: every command's parser imports this module, so its own imports are the command line's
(argparse, the data models); what loads a module file or a header is imported by the function
that loads it.
"""
from __future__ import annotations

import argparse
import importlib
import mmap
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, NoReturn, Sequence

from ..abi import targets

from .errors import CliError

if TYPE_CHECKING:
    from ..abi.layout import Struct
    from ..abi.targets import Target
    from ..layouts.modules import ModuleDescriptor
    from ..vm.bytecode.module_file import ModuleFile

DEFAULT_TARGET = "x86_64"

# --------------------------------------------------------------------------------------------------
# Targets


def resolve_target(name: str) -> Target:
    """A `--target` value: a data model name (an empty one is an error, not the default)."""
    if not name.strip():
        raise CliError(f"--target is empty; valid targets: {', '.join(targets.names())}")
    return targets.get(name)


def select_targets(name: str | None, all_targets: bool) -> list[Target]:
    """`--target NAME` (default x86_64) or every target with `--all-targets`."""
    if all_targets:
        return [targets.get(n) for n in targets.names()]
    return [resolve_target(name) if name is not None else targets.get(DEFAULT_TARGET)]


def explain_dash_values(parser: argparse.ArgumentParser, option: str, example: str) -> None:
    """argparse reads a value that starts with '-' (`--spans -1,3`) as another option and reports
    only "expected one argument": say how to pass such a value (`--spans=-1,3`)."""
    plain = parser.error

    def error(message: str) -> NoReturn:
        if message == f"argument {option}: expected one argument":
            message = (f"{option} needs a value after it (e.g. {option} 4,3); a value that starts "
                       f"with '-' reads as another option, so write it in one word: "
                       f"{option}={example}")
        plain(message)

    parser.error = error  # type: ignore[method-assign]


def add_target_options(p: argparse.ArgumentParser) -> None:
    """`--target`/`--all-targets`, `--spans` and `--json` of `layout` and `check`."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("--target", "-t", metavar="T",
                   help=f"data model (default {DEFAULT_TARGET}; `ireeabi targets` lists them)")
    g.add_argument("--all-targets", "-a", action="store_true", help="every data model side by side")
    p.add_argument("--spans", metavar="N,N", help="element count of each span, e.g. 4,3")
    explain_dash_values(p, "--spans", "-1,3")
    p.add_argument("--json", action="store_true", help="machine-readable output (see docs/command-line.md)")


def add_svg_option(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--svg", metavar="FILE", help=f"also draw a picture as SVG into FILE: {what}")


# --------------------------------------------------------------------------------------------------
# Structs of one's own: a C header's or an object's DWARF (`layout` and `check`)


def add_struct_source_options(p: argparse.ArgumentParser, what: str) -> None:
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


MAX_TABLE_ROWS = 1_000_000  # fields of a header's struct, nested ones repeated, `layout` lists


def table_rows(decl: Struct) -> int:
    """The fields a table of `decl` lists, nested records' fields once per member of their type: a
    count memoized per record, as 100 lines of a header can nest 2^100 fields."""
    from ..abi.layout import Struct

    memo: dict[int, int] = {}

    def rows(s: Struct) -> int:  # as deep as the header nests (cheader.MAX_NESTING at most)
        if id(s) not in memo:
            memo[id(s)] = sum(1 + (rows(f.type) if isinstance(f.type, Struct) else 0) for f in s.fields)
        return memo[id(s)]

    return rows(decl)


def own_struct(args: argparse.Namespace, name: str) -> tuple[list[Target], Callable[[Target], Struct], str]:
    """(targets, target -> declaration, where it comes from) of `--header`/`--dwarf` NAME: a header is
    read for each target's triple; an object's DWARF once, on its own model (the default target and
    the first column)."""
    from ..abi import cheader, dwarf

    if args.header:
        tgts = select_targets(args.target, args.all_targets)

        def from_header(t: Target) -> Struct:
            decl = cheader.header_struct(args.header, name, t, include_dirs=args.include_dirs,
                                         defines=args.defines)
            rows = table_rows(decl)
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


# --------------------------------------------------------------------------------------------------
# Module files (`inspect`, `run`, `test`)


def load_module(path: str, any_version: bool = False) -> ModuleFile:
    """Read a module file. The file is memory-mapped (read-only) and its header and FlatBuffer are
    checked there first, so a large file that is no module is refused without being read; only a
    file that passes is read whole. OS errors (permissions...) propagate as OSError (the command
    line reports them). `any_version`: read a module of any IREE release's bytecode version
    (`inspect`; see read_module)."""
    from ..modules.hal.runtime import run_module_type_names
    from ..vm.bytecode import module_file as mf

    p = Path(path)
    if not p.exists():
        raise CliError(f"no module file at {path}")
    if not p.is_file():
        raise CliError(f"{path} is not a regular file (a module file is needed)")
    try:
        # resolved against the types of the runtime `run` would make (iree-run-module's)
        return mf.read_module(_read_checked(p), ref_types=run_module_type_names(),
                              any_version=any_version)
    except OSError as e:
        if e.filename is not None:
            raise
        raise OSError(e.errno, e.strerror or str(e), path) from None  # a read names no path


def _read_checked(p: Path) -> bytes:
    from ..vm.bytecode.archive import MIN_MODULE_BYTES, check_framing
    from ..vm.bytecode.flatbuffer import verify_flatbuffer
    from ..vm.bytecode.module_errors import ModuleFileError

    with open(p, "rb") as f:
        view = None
        if os.fstat(f.fileno()).st_size >= MIN_MODULE_BYTES:
            try:
                view = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError):  # a file that cannot be mapped is read as it is
                view = None
        if view is not None:
            with view:
                # The module reader's own first two steps (vm/bytecode/archive.py, flatbuffer.py):
                # the archive and FlatBuffer header checks, then flatcc's verification of the
                # FlatBuffer. Both read only the bytes they check, so on a memory map they touch a
                # few pages, not the file.
                try:
                    # (an mmap: read by slices and unpack_from, as bytes are)
                    _, fb, length = check_framing(view)  # type: ignore[arg-type]
                    verify_flatbuffer(view, fb, length)  # type: ignore[arg-type]
                except ModuleFileError:
                    raise
                except Exception:  # noqa: BLE001 - left to the full read, which reports it
                    pass
        return f.read()


LOCAL_DEVICES = ("local-sync", "local-task")


def parse_device(text: str) -> str:
    """`--device`: a local driver name (`local-sync`, `local-task`, optionally `://` + a path).

    iree-run-module names the HAL device with `--device=URI` (runtime/src/iree/tooling/
    device_util.c): inline modules carry their own HAL (hal_inline, hal_loader) and need no device;
    a module of the default execution model gets the one local-sync device of the full `hal` module
    (modules/hal/module.py), and `local-task` names the same device (ireeabi runs single-threaded).
    Any other device is an error: ireeabi emulates no other driver."""
    driver = text.split("://", 1)[0]
    if driver not in LOCAL_DEVICES:
        raise argparse.ArgumentTypeError(
            f"{text!r}: ireeabi emulates one single-threaded local CPU device; only "
            f"{' and '.join(LOCAL_DEVICES)} are accepted (both name it)")
    return text


def add_module_arguments(p: argparse.ArgumentParser) -> None:
    """The module of `run`, positional or as iree-run-module takes it (`--module=FILE`,
    runtime/src/iree/tooling/context_util.c), and `--device`."""
    p.add_argument("module", metavar="MODULE.vmfb", nargs="?", default=None)
    p.add_argument("--module", dest="module_flag", action="append", default=[], metavar="FILE",
                   help="the module, as iree-run-module takes it (instead of the positional form)")
    p.add_argument("--device", type=parse_device, default=None, metavar="local-sync|local-task",
                   help="iree-run-module's device: both name ireeabi's one single-threaded local "
                        "device (used by modules of the default execution model; inline modules "
                        "need none)")


def module_path(args: argparse.Namespace) -> str:
    """The one module file given, positionally or with --module."""
    given = ([args.module] if args.module is not None else []) + list(args.module_flag)
    if not given:
        raise CliError("no module given: name MODULE.vmfb, or --module=FILE as iree-run-module "
                       "takes it")
    if len(given) > 1:
        raise CliError(f"ireeabi runs one module; {len(given)} given ({', '.join(given)})")
    return given[0]


# --------------------------------------------------------------------------------------------------
# Native modules


def load_native_modules(specs: Sequence[str]) -> list[Any]:
    """The ModuleDescriptors of `--native-module` values, found as `python -m` finds modules: with
    the current directory first on the import path while they load (the `ireeabi` script puts its
    own directory there instead, so `--native-module mystats` would miss ./mystats.py)."""
    if not specs:
        return []
    from ..layouts import module_sources  # noqa: PLC0415 - only the commands that take it

    cwd = os.getcwd()
    added = not any(os.path.abspath(entry or os.curdir) == cwd for entry in sys.path)
    if added:
        sys.path.insert(0, cwd)
        importlib.invalidate_caches()  # a module written since the last import looked here
    try:
        return [d for spec in specs for d in module_sources.load(spec)]
    finally:
        if added:
            try:
                sys.path.remove(cwd)
            except ValueError:  # a module took it out itself
                pass


# --------------------------------------------------------------------------------------------------
# Run bounds (`run`, `test`)


def parse_cpu_seconds(text: str) -> float:
    """`--kernel-cpu-time`: a positive decimal number of CPU seconds (argparse reports anything
    else)."""
    s = text.strip()
    try:
        value = float(s) if s.isascii() and (s[:1].isdigit() or s[:1] == ".") else -1.0
    except ValueError:
        value = -1.0
    if not 0 < value < 2**63 / 1e9:  # (NaN and inf fail too)
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of CPU seconds")
    return value


def parse_max_steps(text: str) -> int:
    """`--max-steps`: tooling.program.instruction_count's count; argparse reports anything else."""
    from ..tooling.program import instruction_count  # here: the CLI's start-up stays light
    try:
        return instruction_count(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


_SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_heap_limit(text: str) -> int:
    """`--heap-limit`: a positive byte count, optionally with a binary unit (K, M, G, T; KB/KiB...
    spellings too): 64M is 64 MiB."""
    s = text.strip().upper()
    for suffix in ("IB", "B"):
        if s.endswith(suffix) and s[:-len(suffix)][-1:] in "KMGT" and len(s) > len(suffix):
            s = s[:-len(suffix)]
            break
    unit = s[-1:] if s[-1:] in "KMGT" and s[-1:] else ""
    number = s[:-1] if unit else s
    if not number.isascii() or not number.isdigit() or int(number) * _SIZE_UNITS[unit] <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive size (bytes, or e.g. 64M, 2G)")
    return int(number) * _SIZE_UNITS[unit]


__all__ = ["DEFAULT_TARGET", "resolve_target", "select_targets", "explain_dash_values",
           "add_target_options", "add_svg_option", "add_struct_source_options", "MAX_TABLE_ROWS",
           "table_rows", "own_struct", "load_module", "LOCAL_DEVICES", "parse_device",
           "add_module_arguments", "module_path", "load_native_modules",
           "parse_cpu_seconds", "parse_max_steps", "parse_heap_limit"]
