"""Run the real IREE tools (iree-compile, iree-as-module, iree-dump-module) for tests.

The tools come from the `iree-base-compiler` / `iree-base-runtime` wheels. A missing tool is an
error (`IreeToolError`), never a skip: tests that need the compiler must fail loudly without it.

Compiled modules are cached in a directory under a name keyed by a hash of the source text, the
execution model, the flags and the compiler version, so each program compiles once per session
(pass the same `out_dir`, e.g. a session-scoped `tmp_path_factory` directory).
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Sequence

# Flags per execution model: the library's own list (one source of truth, also in its messages).
from ireeabi.tooling.execution_model import MODEL_FLAGS

_TIMEOUT_S = 600
_session_dir: Path | None = None


class IreeToolError(RuntimeError):
    """An IREE tool is missing or failed."""


def find_tool(name: str) -> str:
    """Absolute path of an IREE command-line tool; IreeToolError when it is not installed."""
    found = shutil.which(name)
    if found is None:
        candidate = Path(sys.executable).parent / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            found = str(candidate)
    if found is None:
        raise IreeToolError(
            f"{name} not found on PATH (nor next to {sys.executable}); these tests need the real IREE "
            f"tools: pip install iree-base-compiler==3.13.0 iree-base-runtime==3.13.0")
    return found


def _run(argv: Sequence[str]) -> subprocess.CompletedProcess:
    try:
        proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=_TIMEOUT_S)
    except FileNotFoundError as e:
        raise IreeToolError(f"cannot run {argv[0]}: {e}") from e
    except subprocess.TimeoutExpired as e:
        raise IreeToolError(f"{' '.join(argv)} timed out after {_TIMEOUT_S} s") from e
    if proc.returncode != 0:
        raise IreeToolError(
            f"{' '.join(argv)} exited with {proc.returncode}\n--- stderr ---\n{proc.stderr}"
            f"\n--- stdout ---\n{proc.stdout[-4000:]}")
    return proc


@lru_cache(maxsize=None)
def compiler_version() -> str:
    return _run([find_tool("iree-compile"), "--version"]).stdout.strip()


def session_dir() -> Path:
    """A cache directory shared by every call in this process (one per test session)."""
    global _session_dir
    if _session_dir is None:
        _session_dir = Path(tempfile.mkdtemp(prefix="ireeabi-vmfb-"))
    return _session_dir


def compile_flags(model: str) -> tuple[str, ...]:
    try:
        return MODEL_FLAGS[model]
    except KeyError:
        raise ValueError(f"unknown execution model {model!r}; valid: {', '.join(MODEL_FLAGS)}") from None


def compile_mlir(src_path: "str | os.PathLike", out_dir: "str | os.PathLike | None" = None,
                 model: str = "inline-dynamic", extra_flags: Sequence[str] = ()) -> Path:
    """Compile an MLIR file to a .vmfb with `model`'s flags; cached by source hash in `out_dir`."""
    src = Path(src_path)
    flags = compile_flags(model) + tuple(extra_flags)
    compiler = find_tool("iree-compile")
    key = hashlib.sha256()
    for part in (src.read_bytes(), model.encode(), "\0".join(flags).encode(),
                 compiler_version().encode()):
        key.update(part)
        key.update(b"\0")
    out = Path(out_dir) if out_dir is not None else session_dir()
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{src.stem}.{model}.{key.hexdigest()[:16]}.vmfb"
    if target.is_file():
        return target
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    _run([compiler, str(src), *flags, "-o", str(tmp)])
    os.replace(tmp, target)  # atomic: concurrent sessions never see half a file
    return target


def assemble_vmasm(src_path: "str | os.PathLike", out_dir: "str | os.PathLike | None" = None) -> Path:
    """Assemble VM assembly (.vmasm) to a .vmfb with iree-as-module; cached by source hash in
    `out_dir` (the session folder by default)."""
    src = Path(src_path)
    assembler = find_tool("iree-as-module")
    key = hashlib.sha256(src.read_bytes() + b"\0" + compiler_version().encode()).hexdigest()[:16]
    out = Path(out_dir) if out_dir is not None else session_dir()
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{src.stem}.vmasm.{key}.vmfb"
    if not target.is_file():
        tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        _run([assembler, f"--output={tmp}", str(src)])
        os.replace(tmp, target)  # atomic: concurrent sessions never see half a file
    return target


def dump_module(path: "str | os.PathLike", *flags: str) -> str:
    """iree-dump-module's stdout for `path` (default output: metadata + disassembly)."""
    return _run([find_tool("iree-dump-module"), *flags, str(path)]).stdout


# Inline modules need no HAL device of their own: iree-run-module adds the hal_inline/hal_loader
# modules they import. `--device=local-sync` (or no --device) both work for them.
RUN_DEVICE = "--device=local-sync"


def run_module(path: "str | os.PathLike", function: str, inputs: Sequence[str] = (),
               *flags: str) -> str:
    """iree-run-module's stdout for one call (inputs as `--input=` values: `16xf32=1`, `2.5`)."""
    argv = [find_tool("iree-run-module"), RUN_DEVICE, f"--module={path}", f"--function={function}",
            *(f"--input={i}" for i in inputs), *flags]
    return _run(argv).stdout


def compile_to_vm(src_path: "str | os.PathLike", model: str = "inline-dynamic") -> str:
    """The compiler's VM IR (`--compile-to=vm`) for an MLIR file; cached in the session folder."""
    src = Path(src_path)
    flags = compile_flags(model)
    key = hashlib.sha256(src.read_bytes() + "\0".join(flags).encode() + compiler_version().encode())
    target = session_dir() / f"{src.stem}.{model}.{key.hexdigest()[:16]}.vm.mlir"
    if not target.is_file():
        text = _run([find_tool("iree-compile"), str(src), *flags, "--compile-to=vm"]).stdout
        tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        tmp.write_text(text)
        os.replace(tmp, target)
    return target.read_text()


# --------------------------------------------------------------------------------------------------
# Host-only programs (no HAL) and exact results, for the bytecode interpreter tests.

# Host programs need no execution model: with no tensors there is no HAL and no kernels. f64 stays
# f64 (the default demotes it to f32). VM-dialect sources (`*.vm.mlir`) start at the VM phase.
HOST_FLAGS: tuple[str, ...] = (
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
    "--iree-llvmcpu-target-cpu=generic",
    "--iree-input-demote-f64-to-f32=false",
)
VM_INPUT_FLAGS: tuple[str, ...] = ("--compile-from=vm",)


def compile_with_flags(src_path: "str | os.PathLike", flags: Sequence[str],
                       out_dir: "str | os.PathLike | None" = None) -> Path:
    """Compile an MLIR file to a .vmfb with exactly `flags`; cached like `compile_mlir`."""
    src = Path(src_path)
    key = hashlib.sha256()
    for part in (src.read_bytes(), "\0".join(flags).encode(), compiler_version().encode()):
        key.update(part)
        key.update(b"\0")
    out = Path(out_dir) if out_dir is not None else session_dir()
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{src.name.split('.')[0]}.flags.{key.hexdigest()[:16]}.vmfb"
    if not target.is_file():
        tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        _run([find_tool("iree-compile"), str(src), *flags, "-o", str(tmp)])
        os.replace(tmp, target)
    return target


def _run_argv(modules: Sequence["str | os.PathLike"], function: str,
              inputs: Sequence[str]) -> list[str]:
    return [find_tool("iree-run-module"), RUN_DEVICE, *(f"--module={m}" for m in modules),
            f"--function={function}", *(f"--input={i}" for i in inputs)]


def run_module_results(modules: Sequence["str | os.PathLike"], function: str,
                       inputs: Sequence[str], result_count: int) -> list:
    """Exact results of one iree-run-module call (modules in dependency order) as 0-d numpy arrays:
    the tool writes each result to a .npy stream (`--output=@f`, then `--output=+f`)."""
    import numpy as np

    with tempfile.TemporaryDirectory(prefix="ireeabi-run-") as tmp:
        npy = Path(tmp) / "results.npy"
        outputs = [f"--output=@{npy}"] + [f"--output=+{npy}"] * (result_count - 1)
        _run(_run_argv(modules, function, inputs) + (outputs if result_count else []))
        results = []
        if result_count:
            with open(npy, "rb") as f:
                for _ in range(result_count):
                    results.append(np.load(f))
                if f.read(1):
                    raise IreeToolError(f"{function}: more than {result_count} result(s) written")
        return results


def run_module_failure(modules: Sequence["str | os.PathLike"], function: str,
                       inputs: Sequence[str]) -> subprocess.CompletedProcess:
    """An iree-run-module call expected to fail (status error or crash); IreeToolError if it works."""
    argv = _run_argv(modules, function, inputs)
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=_TIMEOUT_S)
    except FileNotFoundError as e:
        raise IreeToolError(f"cannot run {argv[0]}: {e}") from e
    if proc.returncode == 0:
        raise IreeToolError(f"{' '.join(argv)} succeeded but was expected to fail:\n{proc.stdout}")
    return proc


def assemble_vmasm(src_path: "str | os.PathLike", out_dir: "str | os.PathLike | None" = None) -> Path:
    """iree-as-module's .vmfb of a VM assembly file; cached by source hash in `out_dir` (the
    session folder by default)."""
    src = Path(src_path)
    key = hashlib.sha256(src.read_bytes()).hexdigest()[:16]
    out = Path(out_dir) if out_dir is not None else session_dir()
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{src.stem}.vmasm.{key}.vmfb"
    if not target.is_file():
        tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        _run([find_tool("iree-as-module"), f"--output={tmp}", str(src)])
        os.replace(tmp, target)
    return target


def run_module_status(path: "str | os.PathLike", function: str) -> subprocess.CompletedProcess:
    """One iree-run-module call of a function without inputs, whatever it exits with."""
    argv = _run_argv([path], function, ())
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=_TIMEOUT_S)
    except FileNotFoundError as e:
        raise IreeToolError(f"cannot run {argv[0]}: {e}") from e
