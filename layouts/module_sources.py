"""Where native module declarations come from, besides the code that makes them.

- `load(spec)`: a command line's `--native-module`: `PKG.MOD[:FACTORY]` imports PKG.MOD and takes
  FACTORY from it (default `native_module`); a path ending in .toml or .json is an exports-only
  file (for import checking alone).
- `checked_against(module)`: what `inspect --check-imports` resolves a program's imports against
  (with IREE's full `hal` module, `hal_declaration()`, for a program that imports it).
- `installed()`: the modules of installed packages, through the entry-point group
  `ireeabi.native_modules` (each entry point names a ModuleDescriptor or a factory of them);
  `installed_names()`: their entry points' names alone, without importing anything, for a run that
  only needs to know whether an installed package declares a module of a name (kept on disk too).
- `from_file(path)`: the exports-only file format:

      name = "mymod"            # TOML; JSON has the same keys
      version = 1
      [[exports]]
      name = "compute"
      cconv = "0rr_r"

The object a spec or entry point names is a `ModuleDescriptor`, or a callable taking no arguments
that returns one or a sequence of them.
"""
from __future__ import annotations

import hashlib
import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any, Sequence

from ..abi.files import InputTooLarge, read_bounded
from ..abi.generated import cache_directory

from .modules import ModuleDeclarationError, ModuleDescriptor, ModuleExport, registered

ENTRY_POINT_GROUP = "ireeabi.native_modules"
DEFAULT_FACTORY = "native_module"
FILE_SUFFIXES = (".toml", ".json")


def _descriptors(obj: Any, where: str) -> list[ModuleDescriptor]:
    """A ModuleDescriptor, or what a zero-argument factory returns (one or a sequence)."""
    if not isinstance(obj, ModuleDescriptor):
        if not callable(obj):
            raise ModuleDeclarationError(f"{where} is neither a ModuleDescriptor nor a factory of "
                                         f"them: {obj!r}")
        try:
            obj = obj()
        except ModuleDeclarationError:
            raise
        except Exception as e:  # noqa: BLE001 - a third party's factory: report it on one line
            raise ModuleDeclarationError(f"{where} failed: {type(e).__name__}: {e}") from e
    found = [obj] if isinstance(obj, ModuleDescriptor) else obj
    try:
        found = list(found)
    except TypeError:
        found = [found]
    for d in found:
        if not isinstance(d, ModuleDescriptor):
            raise ModuleDeclarationError(f"{where} gave {d!r}, not a ModuleDescriptor")
    return found


def load(spec: str) -> list[ModuleDescriptor]:
    """The declarations a `--native-module` value names (see the module docstring)."""
    if not isinstance(spec, str) or not spec.strip():
        raise ModuleDeclarationError(f"--native-module needs PKG.MOD[:FACTORY] or a .toml/.json "
                                     f"file, got {spec!r}")
    if spec.lower().endswith(FILE_SUFFIXES):
        return [from_file(spec)]
    module_name, _, attr = spec.partition(":")
    attr = attr or DEFAULT_FACTORY
    if not all(part.isidentifier() for part in module_name.split(".")) or not attr.isidentifier():
        raise ModuleDeclarationError(f"native module spec {spec!r} is not PKG.MOD[:FACTORY] (nor a "
                                     f".toml/.json file)")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise ModuleDeclarationError(f"native module spec {spec!r}: cannot import {module_name}: "
                                     f"{e}") from None
    try:
        obj = getattr(module, attr)
    except AttributeError:
        raise ModuleDeclarationError(f"native module spec {spec!r}: {module_name} has no "
                                     f"{attr!r}") from None
    return _descriptors(obj, f"{module_name}:{attr}")


def installed() -> list[ModuleDescriptor]:
    """The declarations installed packages add through the `ireeabi.native_modules` entry points,
    in entry-point name order."""
    found: list[ModuleDescriptor] = []
    for ep in _entry_points():
        where = f"entry point {ep.name} = {ep.value} ({ENTRY_POINT_GROUP})"
        try:
            obj = ep.load()
        except Exception as e:  # noqa: BLE001 - an installed package's bug: one line naming it
            raise ModuleDeclarationError(f"{where} cannot be loaded: {type(e).__name__}: {e}") from None
        found += _descriptors(obj, where)
    return found


# The group's entry points, by the import path they were read from: reading them walks every
# installed distribution's metadata (tens of ms), and a process making one Program per test read
# them thousands of times. An install or removal changes the folder's modification time, and so
# the key.
_ENTRY_POINTS: dict[tuple, list] = {}
_NAMES: dict[tuple, frozenset[str]] = {}  # the same key -> the entry points' names


def _path_state() -> tuple:
    """The import path and the modification time of each of its folders: what the group's entry
    points are read from, and what an install or removal changes."""
    return tuple((p, _mtime(p)) for p in sys.path)


def _entry_points() -> list:
    """The `ireeabi.native_modules` entry points in name order, read again when the import path or
    the modification time of one of its folders changed."""
    key = _path_state()
    found = _ENTRY_POINTS.get(key)
    if found is None:
        from importlib import metadata  # start-up: its import (email, csv, zipfile...) only here

        found = sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name)
        _ENTRY_POINTS.clear()  # one path state is current
        _ENTRY_POINTS[key] = found
        _NAMES.clear()
        _NAMES[key] = frozenset(e.name for e in found)
        _write_names(key, _NAMES[key])
    return found


def installed_names() -> frozenset[str]:
    """The names of the `ireeabi.native_modules` entry points, nothing imported: this process's
    memo, else the file the last process on the same import path wrote, when the path's folders are
    as they were then (the start-up cache folder, abi/generated.py's: `entry-points/names-<SHA-256 of
    the path>`, one file per import path, rewritten when its state changes), else read through
    importlib.metadata (and written there). A run whose program imports only modules the runtime
    makes itself asks this instead of `installed()`: only an installed module of such a name
    changes its outcome."""
    key = _path_state()
    names = _NAMES.get(key)
    if names is None:
        names = _read_names(key)
        if names is None:
            _entry_points()
            names = _NAMES[key]
        else:
            _NAMES.clear()
            _NAMES[key] = names
    return names


_NAMES_FORMAT = "ireeabi native module entry point names 1"
_MAX_NAMES_BYTES = 1 << 20


def _names_file(key: tuple) -> Path | None:
    """The file of an import path (the folders of `key`, not their times: a run in a folder that
    changes between runs replaces its file rather than adding one per run)."""
    folder = cache_directory()
    if folder is None:
        return None
    path = [p for p, _ in key]
    digest = hashlib.sha256(repr((_NAMES_FORMAT, ENTRY_POINT_GROUP, sys.version, path)).encode())
    return folder / "entry-points" / f"names-{digest.hexdigest()}"


def _state_line(key: tuple) -> str:
    """The line that says which state of the import path a file's names were read in."""
    return hashlib.sha256(repr(key).encode()).hexdigest()


def _read_names(key: tuple) -> frozenset[str] | None:
    """The names a file of `_write_names` holds for `key` (None: no such file, or not one whole)."""
    path = _names_file(key)
    if path is None:
        return None
    try:
        with open(path, "rb") as f:  # its size, not the bound: read(n) allocates n bytes first
            raw = f.read(min(os.fstat(f.fileno()).st_size, _MAX_NAMES_BYTES) + 1)
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if len(raw) > _MAX_NAMES_BYTES:  # not a file of ours: not read whole
        return None
    lines = text.split("\n")
    if lines[:2] != [_NAMES_FORMAT, _state_line(key)] or lines[-2:] != [".", ""]:
        return None  # another state of the path, or not a whole file (the last line marks one)
    return frozenset(lines[2:-2])


def _write_names(key: tuple, names: frozenset[str]) -> None:
    """Keep the names for later processes (a temporary file renamed: seen whole or not at all); a
    folder that cannot be written only costs those processes the read."""
    path = _names_file(key)
    if path is None:
        return
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text("".join(f"{line}\n" for line in (_NAMES_FORMAT, _state_line(key), *sorted(names),
                                                          ".")), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass


def _mtime(path: str) -> int:
    try:
        return os.stat(path or ".").st_mtime_ns
    except OSError:
        return -1


def checked_against(module: Any, given: Sequence[ModuleDescriptor] = ()) -> list[ModuleDescriptor]:
    """The modules `inspect --check-imports` resolves a program's imports against: the registered
    ones (hal_inline, hal_loader...), then those installed packages declare, then `given` (a later
    one replaces an earlier one of the same name), each with the overloads the program's imports
    ask for; a program that imports `hal` with none of them named so is checked against IREE's
    full `hal` module (`hal_declaration`). `module` is a ModuleFile (anything with
    `imported_functions`)."""
    wanted: dict[str, dict[str, "str | None"]] = {}
    for imp in module.imported_functions:
        mod, _, fn = imp.full_name.partition(".")
        wanted.setdefault(mod, {})[fn] = imp.cconv
    by_name: dict[str, ModuleDescriptor] = {}
    for d in [*registered(), *installed(), *given]:
        by_name[d.name] = d
    if "hal" in wanted and "hal" not in by_name:  # hal_module.IREE_HAL_MODULE_NAME
        by_name["hal"] = hal_declaration()
    return [d.select(wanted.get(d.name, {})) for d in by_name.values()]


def hal_declaration() -> ModuleDescriptor:
    """The full `hal` module as IREE declares it (hal_module's export table), for import checking
    only."""
    from . import hal_module  # start-up: a run of an inline program never needs the full hal's table

    return ModuleDescriptor(hal_module.IREE_HAL_MODULE_NAME, hal_module.IREE_HAL_MODULE_VERSION_LATEST,
                            tuple(hal_module.EXPORTS), source="IREE's exports.inl (layouts.hal_module)")


MAX_DECLARATION_BYTES = 64 << 20  # a declaration file's largest size (a few KiB in practice)


def from_file(path: "str | Path") -> ModuleDescriptor:
    """An exports-only declaration from a TOML or JSON file (for import checking)."""
    p = Path(path)
    try:
        raw = read_bounded(p, MAX_DECLARATION_BYTES, "a declaration file")
    except InputTooLarge as e:
        raise ModuleDeclarationError(str(e)) from None
    except OSError as e:
        raise ModuleDeclarationError(f"{p}: {e.strerror or e}") from None
    try:
        if p.suffix.lower() == ".json":
            data = json.loads(raw)
        else:
            try:
                import tomllib  # type: ignore[import-not-found,unused-ignore]  # Python 3.11+; 3.10 is answered below
            except ImportError:  # Python 3.10
                raise ModuleDeclarationError(f"{p}: TOML needs Python 3.11 (tomllib); use a .json "
                                             f"file") from None
            data = tomllib.loads(raw.decode())
    except ModuleDeclarationError:
        raise
    except (ValueError, UnicodeDecodeError) as e:
        raise ModuleDeclarationError(f"{p}: not valid {p.suffix[1:].upper()}: {e}") from None
    if not isinstance(data, dict):
        raise ModuleDeclarationError(f"{p}: expected a table with name, version and exports")
    if "name" not in data:  # an empty file (or a FIFO whose writer closed) reads as an empty table
        raise ModuleDeclarationError(f"{p}: no module name: a declaration file needs name, version and "
                                     f"exports{' (the file is empty)' if not raw.strip() else ''}")
    unknown = sorted(set(data) - {"name", "version", "exports"})
    if unknown:
        raise ModuleDeclarationError(f"{p}: unknown key(s) {', '.join(unknown)}; a module has name, "
                                     f"version and exports")
    exports = data.get("exports", [])
    if not isinstance(exports, list):
        raise ModuleDeclarationError(f"{p}: exports must be a list of tables with name and cconv")
    table = []
    for i, entry in enumerate(exports):
        if not isinstance(entry, dict) or set(entry) != {"name", "cconv"}:
            raise ModuleDeclarationError(f"{p}: exports[{i}] must have exactly name and cconv, got "
                                         f"{entry!r}")
        table.append(ModuleExport(entry["name"], entry["cconv"], ""))
    # ModuleDescriptor refuses a missing or wrong name, naming it
    return ModuleDescriptor(data.get("name"), data.get("version", 0), tuple(table),  # type: ignore[arg-type]
                            source=str(p))


__all__ = ["ENTRY_POINT_GROUP", "DEFAULT_FACTORY", "load", "installed", "installed_names", "checked_against",
           "hal_declaration", "from_file"]
