"""The check-style corpus (tests/programs/check): its functions, their check calls, and the returning
twins derived from them, shared by tests/modules/test_check_corpus.py.

The .mlir files are the one source of truth. They follow a strict convention so that a small text
transform turns every check function into a twin that iree-run-module (which has no `check`
module) can run:

- the check imports are declared on buffer views, one per line, as `util.func private @check.NAME(...)`;
- a check function is `func.func @NAME() {` at column 0 and ends with `}` at column 0;
- its check calls are top-level statements of its body (two-space indent), one per line:
  `util.call @check.NAME(%a, %b, ...) : (T1, T2, ...) -> ()`;
- its body's last statement is a bare `return` (two-space indent).

The twin drops the declarations and the calls, returns every call's operands in call order and
declares them as the function's results. Anything else is a `CorpusFormatError` naming the line.

The check programs as written (calling `check`) compile as the pytest plugin compiles them
(`compile_check`: its compiler, its flags, its cache in the suite's shared cache), so that a run
compiles each once, whether a test or a plugin item of a nested pytest run asks first.
"""
from __future__ import annotations

import functools
import os
import re
import tempfile
from pathlib import Path
from typing import NamedTuple

from ireeabi.abi import targets
from ireeabi.tooling.check_compile import Compiler, compile_flags

from . import iree_tools as tools

TESTS = Path(__file__).resolve().parents[1]
CHECK_DIR = TESTS / "programs" / "check"
MODELS = ("inline-dynamic", "inline-static")
# f64 stays f64 (the default demotes it to f32), as in the e2e corpus.
F64 = ("--iree-input-demote-f64-to-f32=false",)

HOST = targets.host().name

# The operands of each check import, without the leading device argument: the inline models have
# no device. Names and order from IREE's compiler/src/iree/compiler/Modules/Check/check.imports.mlir
# (expect_almost_eq: lhs, rhs, atol, rtol).
CHECK_OPERANDS: dict[str, tuple[str, ...]] = {
    "expect_true": ("i32",),
    "expect_false": ("i32",),
    "expect_all_true": ("!hal.buffer_view",),
    "expect_eq": ("!hal.buffer_view", "!hal.buffer_view"),
    "expect_almost_eq": ("!hal.buffer_view", "!hal.buffer_view", "f32", "f32"),
}

_DECL = re.compile(r"^util\.func private @check\.(\w+)\(")
_FUNC = re.compile(r"^func\.func @(\w+)\(\) \{$")
_CALL = re.compile(r"^  util\.call @check\.(\w+)\(([^()]*)\) : \(([^()]*)\) -> \(\)$")
_RETURN = "  return"


class CorpusFormatError(ValueError):
    """A corpus file breaks the convention the twin transform relies on."""


class CheckCall(NamedTuple):
    """One `util.call @check.NAME(...)` statement of a check function."""
    check: str
    operands: tuple[str, ...]
    types: tuple[str, ...]


class CheckFunction(NamedTuple):
    """A zero-argument function of the corpus and its check calls, in order."""
    name: str
    calls: tuple[CheckCall, ...]

    @property
    def result_types(self) -> tuple[str, ...]:
        return tuple(t for call in self.calls for t in call.types)


def _where(path: str, number: int, line: str) -> str:
    return f"{path}:{number}: {line.strip()!r}"


def _call(path: str, number: int, line: str) -> CheckCall:
    m = _CALL.match(line)
    if m is None:
        raise CorpusFormatError(f"{_where(path, number, line)}: a check call must be a top-level "
                                f"`util.call @check.NAME(%a, ...) : (T, ...) -> ()` on one line")
    check, operands, types = m.group(1), m.group(2), m.group(3)
    if check not in CHECK_OPERANDS:
        raise CorpusFormatError(f"{_where(path, number, line)}: unknown check function {check!r}")
    ops = tuple(o.strip() for o in operands.split(","))
    tys = tuple(t.strip() for t in types.split(","))
    if tys != CHECK_OPERANDS[check] or len(ops) != len(tys):
        raise CorpusFormatError(f"{_where(path, number, line)}: check.{check} takes "
                                f"({', '.join(CHECK_OPERANDS[check])})")
    return CheckCall(check, ops, tys)


def parse(text: str, path: str = "<corpus>") -> list[CheckFunction]:
    """The check functions of a corpus file, validated against the convention."""
    functions: list[CheckFunction] = []
    current: str | None = None
    calls: list[CheckCall] = []
    last = ""
    for number, line in enumerate(text.splitlines(), 1):
        if current is None:
            if line.startswith("func.func"):
                m = _FUNC.match(line)
                if m is None:
                    raise CorpusFormatError(f"{_where(path, number, line)}: a corpus function "
                                            f"takes no arguments and returns nothing")
                current, calls, last = m.group(1), [], ""
            elif "@check." in line:
                m = _DECL.match(line)
                if m is None or m.group(1) not in CHECK_OPERANDS:
                    raise CorpusFormatError(f"{_where(path, number, line)}: not a check import "
                                            f"declaration")
            continue
        if line == "}":
            if last != _RETURN:
                raise CorpusFormatError(f"{path}:{number}: @{current} must end with a bare "
                                        f"`return` before its closing brace")
            if not calls:
                raise CorpusFormatError(f"{path}:{number}: @{current} calls no check function")
            functions.append(CheckFunction(current, tuple(calls)))
            current = None
            continue
        if "@check." in line:
            calls.append(_call(path, number, line))
        elif line.strip() == "return" and line != _RETURN:
            raise CorpusFormatError(f"{_where(path, number, line)}: only the body's last "
                                    f"statement may return")
        if line.strip() and not line.lstrip().startswith("//"):
            last = line
    if current is not None:
        raise CorpusFormatError(f"{path}: @{current} has no closing brace at column 0")
    names = [f.name for f in functions]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise CorpusFormatError(f"{path}: functions defined twice: {', '.join(duplicates)}")
    return functions


def twin_source(text: str, path: str = "<corpus>") -> str:
    """The returning twin of a corpus file: each function returns its check calls' operands."""
    functions = {f.name: f for f in parse(text, path)}
    out: list[str] = []
    current: CheckFunction | None = None
    for line in text.splitlines():
        if current is None:
            m = _FUNC.match(line)
            if m is not None:
                current = functions[m.group(1)]
                out.append(f"func.func @{current.name}() -> ({', '.join(current.result_types)}) {{")
            elif not _DECL.match(line):
                out.append(line)
            continue
        if line == "}":
            current = None
        elif _CALL.match(line):
            continue
        elif line == _RETURN:
            operands = [o for call in current.calls for o in call.operands]
            line = f"  return {', '.join(operands)} : {', '.join(current.result_types)}"
        out.append(line)
    return "\n".join(out) + "\n"


def corpus_files() -> list[Path]:
    """The check-style corpus files (the deliberately failing one is not part of the corpus)."""
    return sorted(p for p in CHECK_DIR.glob("*.mlir") if p.stem != "failing")


def plugin_cache() -> Path:
    """The pytest plugin's module cache for the nested pytest runs of the tests (`ireeabi_cache_dir`
    handed to them): a folder of the suite's shared compile cache, so that every process of a run,
    and a later run, finds each module there."""
    return tools.shared_cache_dir("plugin")


@functools.cache
def _compiler(cache: Path) -> Compiler:
    return Compiler(cache)  # one `iree-compile --version` per cache folder and process


def compile_check(path: "str | os.PathLike", model: str, target: str = HOST) -> Path:
    """The module the plugin's items of `path` run for `model` on `target` with the corpus's flags
    (`ireeabi_compile_flags = F64`): its compiler, key and cache (`plugin_cache()`), so that a test
    asking for it and a plugin run of the same file compile it once between them."""
    return _compiler(plugin_cache()).compile(path, compile_flags(model, target, HOST) + F64)


_RESULT = re.compile(r"^result\[(\d+)\]: (.*)$")


def result_headers(stdout: str) -> list[tuple[str, tuple[int, ...] | None]]:
    """(element type, shape) of each result iree-run-module printed; shape None for a scalar
    (`result[i]: i32=7`), a tuple for a buffer view (the next line's `2x3xf32=...`)."""
    lines = stdout.splitlines()
    headers: list[tuple[str, tuple[int, ...] | None]] = []
    for i, line in enumerate(lines):
        m = _RESULT.match(line)
        if m is None:
            continue
        if int(m.group(1)) != len(headers):
            raise ValueError(f"result {m.group(1)} out of order in:\n{stdout}")
        if m.group(2) == "hal.buffer_view":
            *dims, type_name = lines[i + 1].split("=", 1)[0].split("x")
            headers.append((type_name, tuple(int(d) for d in dims)))
        else:
            headers.append((m.group(2).split("=", 1)[0], None))
    return headers


def run_module_raw(vmfb: "str | Path", function: str, count: int) -> list[bytes]:
    """Each result's bytes as iree-run-module writes them with `--output=@file` (a name without
    .npy: the raw contents, whatever the element type; numpy_io refuses bf16)."""
    with tempfile.TemporaryDirectory(prefix="ireeabi-check-") as tmp:
        files = [Path(tmp) / f"r{i}.bin" for i in range(count)]
        argv = [tools.find_tool("iree-run-module"), tools.RUN_DEVICE, f"--module={vmfb}",
                f"--function={function}", *(f"--output=@{f}" for f in files)]
        proc = tools.run_tool(argv, files)
        if proc.returncode != 0:
            raise tools.IreeToolError(f"{' '.join(argv)} exited with {proc.returncode}\n"
                                      f"{proc.stderr}")
        return [f.read_bytes() for f in files]
