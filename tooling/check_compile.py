"""iree-compile run for an execution model and a data model (and iree-as-module for VM assembly),
its modules kept in a cache by content.

The pytest plugin (tooling/check_items.py) compiles each check program once per (execution model,
data model) and reuses the module across runs, processes and xdist workers:

- `compile_flags(model, target)`: the model's flags (`execution_model.MODEL_FLAGS`; `default` is
  iree-compile's default execution model with llvm-cpu kernels) plus, when its kernels are llvm-cpu
  machine code and the data model is not the host's, the flags that make them that target's
  (`KERNEL_TARGET_FLAGS`: run in the runtime's emulated CPU, or under wasmtime for wasm32). Models
  whose kernels are VM bytecode (inline-static, vmvx) run on every data model from one compile.
- `Compiler`: iree-compile from PATH, else from the `iree.compiler` package (iree-base-compiler).
  `compile` names its output by a SHA-256 of the source bytes, the flags and the compiler's
  `--version` text; it writes a temporary file in the cache and renames it into place (a reader
  never sees half a module), under an exclusive lock on the key (fcntl) so that concurrent workers
  compile a module once and the others wait for it. A compile that fails with an error is cached
  too (its stderr), so each worker reports it without compiling again.
- `Assembler`: iree-as-module (iree-base-runtime's VM assembler, from PATH), the same cache for
  `.vmasm` files (tooling/vm_test_module.py's `assemble`, used by `ireeabi test` and the plugin);
  the tool has no `--version`, so its version is the distribution whose console script it is and
  the SHA-256 of the file PATH names.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

from ..abi.errors import IreeAbiError

from .execution_model import MODEL_FLAGS

# Other names for MODEL_FLAGS' models: iree-compile's default execution model, llvm-cpu kernels.
MODEL_ALIASES = {"default": "llvm-cpu"}
# The flag that marks a model whose kernels are llvm-cpu machine code.
LLVM_CPU = "--iree-hal-local-target-device-backends=llvm-cpu"

# llvm-cpu kernels for a data model other than the host's, as iree-compile 3.13 builds them to run:
# riscv has no soft-float runtime to link (+f, and +d for f64); armv7 divides in hardware only with
# +hwdiv-arm and its debug symbols import an unwinder the embedded loader refuses
# (tests/tooling/test_foreign_kernels.py runs each).
KERNEL_TARGET_FLAGS: dict[str, tuple[str, ...]] = {
    "x86_64": ("--iree-llvmcpu-target-triple=x86_64-pc-linux-elf",),
    "riscv32": ("--iree-llvmcpu-target-triple=riscv32-pc-linux-elf",
                "--iree-llvmcpu-target-cpu-features=+m,+f,+d"),
    "riscv64": ("--iree-llvmcpu-target-triple=riscv64-pc-linux-elf",
                "--iree-llvmcpu-target-cpu-features=+m,+f,+d"),
    "armv7": ("--iree-llvmcpu-target-triple=armv7a-pc-linux-elf",
              "--iree-llvmcpu-target-cpu-features=+hwdiv-arm",
              "--iree-llvmcpu-debug-symbols=false"),
    "aarch64": ("--iree-llvmcpu-target-triple=aarch64-pc-linux-elf",),
    "i386": ("--iree-llvmcpu-target-triple=i686-pc-linux-elf",),
    "wasm32": ("--iree-llvmcpu-target-triple=wasm32-unknown-unknown",),
}

COMPILE_TIMEOUT_S = 3600  # a backstop for a wedged compiler, far above any real compile
ASSEMBLER = "iree-as-module"
ASSEMBLE_TIMEOUT_S = 600  # a generous backstop; the tool takes milliseconds


class UnknownModelError(IreeAbiError):
    """An execution model name that is neither in MODEL_FLAGS nor an alias."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"unknown execution model {name!r}; valid: "
                         f"{', '.join([*MODEL_ALIASES, *MODEL_FLAGS])}")


class CompilerNotFoundError(IreeAbiError):
    """iree-compile is neither on PATH nor in an installed `iree.compiler` package."""


class AssemblerNotFoundError(IreeAbiError):
    """iree-as-module (iree-base-runtime's VM assembler) is not on PATH."""


class CompileError(IreeAbiError):
    """iree-compile (or iree-as-module: `tool`) refused a source: the source, the flags, its exit
    status and stderr."""

    def __init__(self, source: Path, flags: Sequence[str], returncode: int, stderr: str, *,
                 tool: str = "iree-compile") -> None:
        self.source, self.flags, self.tool = source, tuple(flags), tool
        self.returncode, self.stderr = returncode, stderr
        shown = " ".join([tool, str(source), *flags])
        super().__init__(f"{shown} exited with {returncode}:\n{stderr.rstrip()}")


def canonical_model(name: str) -> str:
    """The MODEL_FLAGS name of a model name or alias (UnknownModelError otherwise)."""
    name = MODEL_ALIASES.get(name, name)
    if name not in MODEL_FLAGS:
        raise UnknownModelError(name)
    return name


def compile_flags(model: str, target: str, host: str) -> tuple[str, ...]:
    """iree-compile's flags for `model`'s modules to run on data model `target` (`host`: the host's
    data model, whose llvm-cpu kernels need no triple)."""
    flags = MODEL_FLAGS[canonical_model(model)]
    if LLVM_CPU in flags and target != host:
        if target not in KERNEL_TARGET_FLAGS:
            raise UnknownModelError(f"{model} (llvm-cpu kernels) on data model {target}")
        flags += KERNEL_TARGET_FLAGS[target]
    return flags


def find_compiler() -> str:
    """The iree-compile to run: PATH's, else the `iree.compiler` package's."""
    found = shutil.which("iree-compile")
    if found:
        return found
    try:
        from iree.compiler.tools.binaries import find_tool  # iree-base-compiler's own lookup
        return find_tool("iree-compile")
    except Exception as e:  # not installed, or installed without its binary
        raise CompilerNotFoundError(
            f"iree-compile is not on PATH and the iree.compiler package cannot give it ({e}); "
            f"pip install iree-base-compiler") from None


def find_assembler() -> str:
    """The path of iree-as-module on PATH; AssemblerNotFoundError when it is not installed."""
    found = shutil.which(ASSEMBLER)
    if found is None:
        raise AssemblerNotFoundError(
            f"{ASSEMBLER} not found on PATH: it assembles .vmasm files and ships with IREE's "
            f"runtime (pip install iree-base-runtime); or pass an assembled .vmfb")
    return found


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on `path` (a lock file beside the cache entry) while the block runs."""
    try:
        import fcntl
    except ImportError:  # no fcntl (Windows): the rename alone keeps every entry whole
        yield
        return
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


class _CachedTool:
    """A tool that turns one source (on stdin) into one module, its outputs kept in a cache folder
    by a key of the source's bytes, the flags and the tool's version (`version`, by subclasses)."""

    name = ""
    timeout_s = COMPILE_TIMEOUT_S

    def __init__(self, cache_dir: "str | os.PathLike", path: str) -> None:
        self.cache_dir = Path(cache_dir)
        self.path = path
        self._version: str | None = None

    @property
    def version(self) -> str:
        """The tool's version text (part of every cache key)."""
        if self._version is None:
            self._version = self._identify()
        return self._version

    def _identify(self) -> str:
        raise NotImplementedError

    def _argv(self, flags: Sequence[str], out: str) -> list[str]:
        raise NotImplementedError

    def key(self, source: bytes, flags: Sequence[str] = ()) -> str:
        """The cache key of `source` made with `flags` by this tool."""
        h = hashlib.sha256()
        for part in (source, "\0".join(flags).encode(), self.version.encode()):
            h.update(len(part).to_bytes(8, "little"))
            h.update(part)
        return h.hexdigest()[:32]

    def _cached(self, source: "str | os.PathLike", flags: Sequence[str]) -> Path:
        """The module of `source` with `flags`, from the cache or made into it; CompileError when
        the tool refuses it (cached too)."""
        src = Path(source)
        text = src.read_bytes()
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        stem = f"{src.name.split('.')[0]}.{self.key(text, flags)}"
        out, err = self.cache_dir / f"{stem}.vmfb", self.cache_dir / f"{stem}.err"
        if not out.is_file() and not err.is_file():
            with _locked(self.cache_dir / f"{stem}.lock"):
                if not out.is_file() and not err.is_file():  # another worker may have made it
                    self._make(src, text, flags, out, err)
        if err.is_file():
            returncode, _, stderr = err.read_text().partition("\n")
            raise CompileError(src, flags, int(returncode), stderr, tool=self.name)
        return out

    def _make(self, src: Path, text: bytes, flags: Sequence[str], out: Path, err: Path) -> None:
        fd, tmp = tempfile.mkstemp(dir=self.cache_dir, prefix=out.name + ".", suffix=".tmp")
        os.close(fd)
        try:
            # the source on stdin: its bytes are the key, whatever happens to the file meanwhile
            proc = subprocess.run(self._argv(flags, tmp), input=text, capture_output=True,
                                  timeout=self.timeout_s)
            stderr = proc.stderr.decode(errors="replace").replace("<stdin>", str(src))
            if proc.returncode > 0:  # the tool's own verdict: cache it
                _write_atomic(err, f"{proc.returncode}\n{stderr}".encode())
                return
            if proc.returncode < 0:  # killed: say so, cache nothing
                raise CompileError(src, flags, proc.returncode, stderr, tool=self.name)
            os.replace(tmp, out)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)


class Compiler(_CachedTool):
    """One iree-compile (`path`, found by `find_compiler` when None) and its module cache."""

    name = "iree-compile"

    def __init__(self, cache_dir: "str | os.PathLike", path: str | None = None) -> None:
        super().__init__(cache_dir, path or find_compiler())

    def _identify(self) -> str:
        """`iree-compile --version`'s text."""
        proc = subprocess.run([self.path, "--version"], capture_output=True, text=True,
                              timeout=COMPILE_TIMEOUT_S)
        if proc.returncode != 0:
            raise CompilerNotFoundError(f"{self.path} --version exited with {proc.returncode}: "
                                        f"{proc.stderr.strip()}")
        return proc.stdout.strip()

    def _argv(self, flags: Sequence[str], out: str) -> list[str]:
        return [self.path, "-", *flags, "-o", out]

    def compile(self, source: "str | os.PathLike", flags: Sequence[str]) -> Path:
        """The module `source` compiles to with `flags`, from the cache or compiled into it;
        CompileError when iree-compile refuses it."""
        return self._cached(source, flags)


class Assembler(_CachedTool):
    """One iree-assembler, `iree-as-module` (`path`, from PATH when None: AssemblerNotFoundError
    when it is not there), and its module cache (the same scheme as `Compiler`'s)."""

    name = ASSEMBLER
    timeout_s = ASSEMBLE_TIMEOUT_S

    def __init__(self, cache_dir: "str | os.PathLike", path: str | None = None) -> None:
        super().__init__(cache_dir, path or find_assembler())

    def _identify(self) -> str:
        """iree-as-module has no --version: the Python distribution whose console script it is
        (iree-base-runtime and its version), and the SHA-256 of the file PATH names (a build of
        one's own has no distribution; its bytes are its version)."""
        from importlib.metadata import entry_points
        dists = sorted({f"{ep.dist.name} {ep.dist.version}"
                        for ep in entry_points(group="console_scripts", name=self.name)
                        if ep.dist is not None})
        try:
            digest = hashlib.sha256(Path(self.path).read_bytes()).hexdigest()
        except OSError as e:
            raise AssemblerNotFoundError(f"cannot read {self.path}: {e.strerror}") from None
        return "; ".join([*dists, f"sha256:{digest}"])

    def _argv(self, flags: Sequence[str], out: str) -> list[str]:
        return [self.path, f"--output={out}", *flags, "-"]

    def assemble(self, source: "str | os.PathLike") -> Path:
        """The module iree-as-module makes of the VM assembly `source`, from the cache or
        assembled into it; CompileError when the tool refuses it."""
        return self._cached(source, ())


def user_cache_dir() -> Path:
    """ireeabi's cache folder of the user ($XDG_CACHE_HOME/ireeabi, else ~/.cache/ireeabi)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ireeabi"


__all__ = ["MODEL_ALIASES", "KERNEL_TARGET_FLAGS", "COMPILE_TIMEOUT_S", "ASSEMBLER",
           "ASSEMBLE_TIMEOUT_S", "UnknownModelError", "CompilerNotFoundError",
           "AssemblerNotFoundError", "CompileError", "canonical_model", "compile_flags",
           "find_compiler", "find_assembler", "Compiler", "Assembler", "user_cache_dir"]
