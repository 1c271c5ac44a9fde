"""Run the real IREE tools (iree-compile, iree-as-module, iree-dump-module) for tests.

The tools come from the `iree-base-compiler` / `iree-base-runtime` wheels. A missing tool is an
error (`IreeToolError`), never a skip: tests that need the compiler must fail loudly without it.

Compiled modules are cached on disk under a name keyed by the source's file name and text, the
execution model, the flags and the compiler's version (with its commit), so each program compiles once: the
cache is the folder $IREEABI_VMFB_CACHE, which tests/conftest.py names before pytest-xdist starts its
workers, so that every worker shares it (pytest's cache folder, kept between runs; without it, a
folder of this process's own). Workers that want the same module at once take a lock file per
module: one compiles, the others wait and read its result; a module appears under its name only
whole (written, then renamed). Callers get a copy in `out_dir`, by default `session_dir()`: a
folder of this process's own, where tests may also write files under fixed names without racing
other workers.
"""
from __future__ import annotations

import atexit
import fcntl
import hashlib
import itertools
import importlib.util
import os
import pickle
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from functools import lru_cache
from pathlib import Path
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Sequence, TypeVar

# Flags per execution model: the library's own list (one source of truth, also in its messages).
from ireeabi.tooling.execution_model import MODEL_FLAGS

_TIMEOUT_S = 600
T = TypeVar("T")
_session_dir: Path | None = None
# The compile cache shared by the processes of one test run (see the module docstring).
CACHE_ENV = "IREEABI_VMFB_CACHE"


class IreeToolError(RuntimeError):
    """An IREE tool is missing or failed."""


@lru_cache(maxsize=None)
def find_tool(name: str) -> str:
    """Absolute path of an IREE command-line tool; IreeToolError when it is not installed. The
    binary itself where the wheels have it (iree-base-compiler's iree-compile, iree-base-runtime's
    tools): the command PATH names is a Python console script that starts an interpreter, imports
    the package and only then runs that binary with the same arguments (under pyenv a shell shim
    runs first too): its start costs ~0.4 s of CPU for iree-compile and ~0.2 s for
    iree-run-module against ~0.01 s for the binary's own (benchmarks/RESULTS.md), on each of a
    cold suite's compiles and tool runs. The binary's own exit status, too: the script passes a
    death by signal on as exit status 256-N, the binary's is -N (a crash then is not remembered
    unless it ran without ASLR, run_tool)."""
    wheel = wheel_binary(name)
    if wheel is not None:
        return wheel
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


def wheel_binary(name: str) -> "str | None":
    """The binary the wheel's console script `name` runs (the same file, the same arguments), or
    None when the wheel is not importable here or has no such binary."""
    try:
        if name == "iree-compile":
            path = _compiler_package_binary(name)
        else:
            from iree._runtime import libs
            path = os.path.join(libs.library_path, name)
    except Exception:  # not installed, or a layout of another version: PATH's command then
        return None
    if not path or not os.path.isfile(path) or not os.access(path, os.X_OK):
        return None
    return os.path.normpath(path)


def _compiler_package_binary(name: str) -> "str | None":
    """Where iree-base-compiler keeps its built-in tool `name` (iree.compiler.tools.binaries'
    `_get_builtin_tool`: the package's `_mlir_libs` folder, after IREE_TOOL_PATH's folders), found
    without importing the package:
    its __init__ loads libIREECompiler.so, 56 MB resident in every test process that asked (each
    xdist worker, RESULTS.md session 51) and its CPU to map. None when the package is not there."""
    for folder in filter(None, os.environ.get("IREE_TOOL_PATH", "").split(os.pathsep)):
        candidate = os.path.join(folder, name)  # the lookup's first place, as it takes it
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    spec = importlib.util.find_spec("iree.compiler")
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.join(list(spec.submodule_search_locations)[0], "_mlir_libs", name)


# The wheels' tools the suite runs by name, itself or through ireeabi and its pytest plugin.
WHEEL_TOOLS = ("iree-compile", "iree-run-module", "iree-as-module", "iree-dump-module",
               "iree-benchmark-module")


def link_wheel_binaries(folder: Path) -> list[str]:
    """A symbolic link in `folder` to each binary of WHEEL_TOOLS the wheels have; their names.
    Put first on PATH, they stand in for the console scripts (find_tool) in every process of the
    run: the plugin's compiles and `--version`s, `ireeabi` commands that run IREE's tools."""
    folder.mkdir(parents=True, exist_ok=True)
    linked = []
    for name in WHEEL_TOOLS:
        binary = wheel_binary(name)
        if binary is not None:
            (folder / name).symlink_to(binary)
            linked.append(name)
    return linked


def _run(argv: Sequence[str], cwd: "Path | None" = None) -> subprocess.CompletedProcess:
    try:
        proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=_TIMEOUT_S, cwd=cwd)
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
    """A folder of this process's own, shared by every call in it (one per test session and
    worker), removed when the process ends: compiled modules are copied here, and tests may write
    their own files here under fixed names without racing other workers."""
    global _session_dir
    if _session_dir is None:
        _session_dir = Path(tempfile.mkdtemp(prefix="ireeabi-vmfb-"))
        owner = os.getpid()  # a forked child that exits must not remove its parent's folder
        atexit.register(lambda: os.getpid() == owner and shutil.rmtree(_session_dir, True))
    return _session_dir


def _shared_cache() -> Path:
    """$IREEABI_VMFB_CACHE (every process of the run shares it), else this process's folder."""
    shared = os.environ.get(CACHE_ENV)
    if not shared:
        return session_dir()
    Path(shared).mkdir(parents=True, exist_ok=True)
    return Path(shared)


def shared_cache_dir(name: str) -> Path:
    """A folder `name` of the shared compile cache: for caches of other tools (the pytest plugin's
    own module cache, iree-run-module's answers) that every process of the run, and a later run,
    finds again."""
    folder = _shared_cache() / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _cached(name: str, make: "Callable[[Path], None]") -> Path:
    """_shared_cache()/name, made by `make(temporary path)` unless another call (of any process)
    made it first: under a lock per name, so that concurrent workers compile it once."""
    cache = _shared_cache()
    target = cache / name
    if target.is_file():
        os.utime(target)  # in use: prune_cache keeps it
        return target
    with open(cache / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not target.is_file():
            tmp = target.with_name(f"{name}.{os.getpid()}.tmp")
            make(tmp)
            os.replace(tmp, target)  # atomic: no process ever sees half a file
    return target


def prune_cache(days: float = 14) -> None:
    """Remove what the shared cache has not used for `days` (modules of sources written to
    temporary folders, of older compilers), so that a cache kept between runs stays small."""
    cutoff = time.time() - days * 86400
    for path in _shared_cache().rglob("*"):
        try:
            if path.is_file() and path.stat().st_mtime < cutoff:
                path.unlink()
        except OSError:
            pass  # another process removed or replaced it


def _deliver(cached: Path, out_dir: "str | os.PathLike | None", name: str | None = None) -> Path:
    """A copy of the cached file in `out_dir` (default session_dir()), named `name` (default the
    cached file's): a test may change its own copy without changing what other workers read."""
    out = Path(out_dir) if out_dir is not None else session_dir()
    if out.resolve() == cached.parent.resolve() and name in (None, cached.name):
        return cached
    out.mkdir(parents=True, exist_ok=True)
    target = out / (name or cached.name)
    if not target.is_file():
        tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        shutil.copyfile(cached, tmp)
        os.replace(tmp, target)
    return target


def compile_workers() -> int:
    """How many iree-compile runs a test may start at once: the machine's cores shared by the
    run's pytest-xdist workers (two compilers per worker would double the run's peak memory)."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    return max(1, min(2, (os.cpu_count() or 1) // workers))


def map_compiles(compile_one: "Callable[[T], Path]", jobs: Sequence[T]) -> list[Path]:
    """[compile_one(job) for job in jobs], compile_workers() at a time. Each xdist worker starts at
    its own place in the list: workers that need the same modules then compile different ones at
    once, instead of queueing on the lock of the same first module in turn."""
    jobs = list(jobs)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    start = len(jobs) * (int(worker[2:]) % count) // count if worker[2:].isdigit() else 0
    order = list(range(start, len(jobs))) + list(range(start))
    with ThreadPoolExecutor(compile_workers()) as pool:
        built = dict(zip(order, pool.map(lambda i: compile_one(jobs[i]), order)))
    return [built[i] for i in range(len(jobs))]


def shared_source(name: str, text: str) -> Path:
    """`text` as a source file every process of the run finds at the same path (so that the
    compile cache, keyed by path and contents, compiles it once for all the workers)."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    folder = _shared_cache() / f"sources-{digest}"
    folder.mkdir(exist_ok=True)
    path = folder / name
    if not path.is_file():
        tmp = folder / f"{name}.{os.getpid()}.tmp"
        tmp.write_text(text)
        os.replace(tmp, path)
    return path


def compile_flags(model: str) -> tuple[str, ...]:
    try:
        return MODEL_FLAGS[model]
    except KeyError:
        raise ValueError(f"unknown execution model {model!r}; valid: {', '.join(MODEL_FLAGS)}") from None


def compile_mlir(src_path: "str | os.PathLike", out_dir: "str | os.PathLike | None" = None,
                 model: str = "inline-dynamic", extra_flags: Sequence[str] = ()) -> Path:
    """Compile an MLIR file to a .vmfb with `model`'s flags; cached by source hash in `out_dir`."""
    # The model is its flags: the same compile as compile_with_flags(src, those flags), one cache
    # entry for both (a module is compiled once whichever helper a test asks with); the copy is
    # named after the model (`add16.inline-static.<key>.vmfb`: tests pick modules by it).
    cached = _compiled(Path(src_path), compile_flags(model) + tuple(extra_flags))
    key = cached.name.split(".")[-2]
    return _deliver(cached, out_dir, f"{Path(src_path).stem}.{model}.{key}.vmfb")


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
    return _checked(run_tool([find_tool("iree-dump-module"), *flags, str(path)],
                             inputs=[Path(path)])).stdout


# Inline modules need no HAL device of their own: iree-run-module adds the hal_inline/hal_loader
# modules they import. `--device=local-sync` (or no --device) both work for them.
RUN_DEVICE = "--device=local-sync"


def run_module(path: "str | os.PathLike", function: str, inputs: Sequence[str] = (),
               *flags: str) -> str:
    """iree-run-module's stdout for one call (inputs as `--input=` values: `16xf32=1`, `2.5`)."""
    argv = [find_tool("iree-run-module"), RUN_DEVICE, f"--module={path}", f"--function={function}",
            *(f"--input={i}" for i in inputs), *flags]
    return _checked(run_tool(argv)).stdout


def compile_to_vm(src_path: "str | os.PathLike", model: str = "inline-dynamic") -> str:
    """The compiler's VM IR (`--compile-to=vm`) for an MLIR file; cached in the session folder."""
    src = Path(src_path)
    flags = compile_flags(model)
    key = hashlib.sha256(src.name.encode() + b"\0" + src.read_bytes() + "\0".join(flags).encode()
                         + compiler_version().encode())
    name = f"{src.stem}.{model}.{key.hexdigest()[:16]}.vm.mlir"
    return _cached(name, lambda tmp: tmp.write_text(
        _run(*compile_argv(src, flags, "--compile-to=vm")).stdout)).read_text()


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
    return _deliver(_compiled(Path(src_path), tuple(flags)), out_dir)


def compile_argv(src: Path, flags: Sequence[str], *out: str) -> tuple[list[str], Path]:
    """(iree-compile's argv, its working folder) for `src`: run in the source's folder and given
    its file name only. The compiler writes the path it is given into the module (source
    locations, byte 15 on), so a module compiled from an absolute path differs with the folder of
    the checkout; from the name alone it is the same bytes in every folder and on every machine,
    and so are the seeded mutants drawn over it. `out`: the output flags."""
    return [find_tool("iree-compile"), src.name, *flags, *out], src.resolve().parent


def canonical_flags(flags: Sequence[str]) -> tuple[str, ...]:
    """`flags` in one order: sorted when each is a `--name=value` or `--name` of its own name (the
    compiler's options are then independent of their order, and two orders compile the same bytes:
    tests/test_compile_cache.py compares them), else as given (a repeated list option, or a value in
    the next argument, where order can matter). Tests that build the same flags in two orders then
    share one compile."""
    names = [f.split("=", 1)[0] for f in flags]
    if all(f.startswith("--") for f in flags) and len(set(names)) == len(names):
        return tuple(sorted(flags))
    return tuple(flags)


def _compiled(src: Path, flags: tuple[str, ...]) -> Path:
    """The shared cache's module of `src` compiled with `flags` (compiled unless there)."""
    flags = canonical_flags(flags)
    key = hashlib.sha256()
    # The file name, not the path: the module holds the name (compile_argv), not the folder.
    for part in (src.name.encode(), src.read_bytes(), "\0".join(flags).encode(),
                 compiler_version().encode(), b"fixed_wasm_names"):
        key.update(part)
        key.update(b"\0")
    name = f"{src.name.split('.')[0]}.flags.{key.hexdigest()[:16]}.vmfb"

    def make(tmp: Path) -> None:
        t0, cpu0 = time.monotonic(), _children_cpu()
        _run(*compile_argv(src, flags, "-o", str(tmp.resolve())))
        tmp.write_bytes(fixed_wasm_names(tmp.read_bytes()))
        _log_compile(name, time.monotonic() - t0, _children_cpu() - cpu0)
    return _cached(name, make)


# IREEABI_COMPILE_LOG=FILE: append one line per module compiled (not read from the cache): its
# cache name, wall and CPU seconds, and the test that asked (benchmarks/bench_suite.py's way to
# tell a cold run's compiles from its tests).
COMPILE_LOG_ENV = "IREEABI_COMPILE_LOG"


def _children_cpu() -> float:
    """User and system seconds of the children this process has waited for. map_compiles runs
    compiles on threads, whose children's times all land here: per compile an estimate then,
    their sum over a run exact."""
    import resource
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _log_compile(name: str, wall: float, cpu: float) -> None:
    log = os.environ.get(COMPILE_LOG_ENV)
    if log:
        test = os.environ.get("PYTEST_CURRENT_TEST", "-").split(" ")[0]
        with open(log, "a") as f:
            f.write(f"{cpu:.3f}\t{wall:.3f}\t{name}\t{test}\n")


# IREEABI_TOOL_LOG=FILE: append one line per run_tool call: "run" (the tool ran: its CPU and wall
# seconds) or "hit" (answered from the cache), the answer's cache key, the exit status, the test
# that asked and the command (benchmarks/RESULTS.md's counts of a cold run's oracle questions).
TOOL_LOG_ENV = "IREEABI_TOOL_LOG"


def _log_tool_run(how: str, argv: Sequence[str], key: "Path | None", wall: float, cpu: float,
                  returncode: int) -> None:
    log = os.environ.get(TOOL_LOG_ENV)
    if log:
        test = os.environ.get("PYTEST_CURRENT_TEST", "-").split(" ")[0]
        command = " ".join(os.path.basename(a) if os.path.isabs(a) else a for a in argv)
        with open(log, "a") as f:
            f.write(f"{how}\t{cpu:.3f}\t{wall:.3f}\t{key.stem if key else '-'}\t{returncode}\t{test}"
                    f"\t{command}\n")


# LLVM's name for the temporary file iree-compile links a wasm32 side module into
# (`add_dispatch_0-3715db.wasm`): random on every compile, and written into the side module's name
# section (its module name), so the zip's CRC-32 of that file changes too.
_WASM_TEMP_NAME = re.compile(rb"(\x04name\x00..[!-~]*?-)([0-9a-f]{6})(\.wasm)", re.S)


def fixed_wasm_names(data: bytes) -> bytes:
    """`data` with the random part of each wasm32 side module's temporary name set to 000000 and
    the CRC-32s the module's zip directory keeps of that file brought up to date: the only bytes
    of iree-compile 3.13's output that differ from one compile to the next (two compiles of the
    same source, checked by test_compile_reproducible). Other modules are returned as they are."""
    from ireeabi.vm.bytecode.module_file import read_module

    if b"\x04name" not in data:
        return data
    out = bytearray(data)
    for segment in read_module(data).rodata_segments:
        start, end = segment.offset, segment.offset + segment.length
        blob = data[start:end]
        if not blob.startswith(b"\0asm"):
            continue
        fixed = _WASM_TEMP_NAME.sub(lambda m: m[1] + b"000000" + m[3], blob, count=1)
        old_crc, new_crc = (struct.pack("<I", zlib.crc32(b)) for b in (blob, fixed))
        out[start:end] = fixed
        # the CRC sits at byte 14 of the file's local header and byte 16 of its directory entry
        for at in [i for i in range(len(data) - 3) if data.startswith(old_crc, i)]:
            if data[at - 14:at - 10] == b"PK\x03\x04" or data[at - 16:at - 12] == b"PK\x01\x02":
                out[at:at + 4] = new_crc
    return bytes(out)


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
        _checked(run_tool(_run_argv(modules, function, inputs) + (outputs if result_count else []),
                          [npy]))
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
    proc = run_tool(argv)
    if proc.returncode == 0:
        raise IreeToolError(f"{' '.join(argv)} succeeded but was expected to fail:\n{proc.stdout}")
    return proc


def run_module_status(path: "str | os.PathLike", function: str) -> subprocess.CompletedProcess:
    """One iree-run-module call of a function without inputs, whatever it exits with."""
    return run_tool(_run_argv([path], function, ()))


class ToolRun(subprocess.CompletedProcess):
    """One run of an IREE tool as `subprocess.run(..., capture_output=True, text=True)` gives it,
    and the bytes of the files it wrote (`outputs`, in order; None where it wrote none)."""

    def __init__(self, argv: Sequence[str], returncode: int, stdout: str, stderr: str,
                 files: "list[bytes | None]") -> None:
        super().__init__(list(argv), returncode, stdout, stderr)
        self.files = files


@lru_cache(maxsize=None)
def _runtime_version() -> str:
    """The installed IREE runtime wheel's version (its tools are launchers into it)."""
    from importlib import metadata
    try:
        return metadata.version("iree-base-runtime")
    except metadata.PackageNotFoundError:
        return ""


def _tool_identity(tool: str) -> str:
    st = os.stat(tool)
    return f"{os.path.realpath(tool)}\0{st.st_size}\0{st.st_mtime_ns}"


def run_tool(argv: Sequence[str], outputs: Sequence[Path] = (), cwd=None,
             timeout: float = _TIMEOUT_S, inputs: Sequence[Path] = ()) -> ToolRun:
    """`argv` run (an IREE tool, or qemu running one: deterministic, its answer a function of its
    arguments and the bytes of the modules it loads), remembered in the shared cache: the same call
    (the same binaries and runtime wheel, arguments and module bytes) in another test, worker, the
    reference path's child run (tests/tooling/test_reference_path.py) or a later run reads the
    answer instead of running the tool again; a module's path is kept out of the key and put back
    into the texts. The files it writes (`outputs`, named in `argv`) are kept with it and written
    again; `inputs` names other files it reads (keyed by their bytes, as modules are). Not
    remembered: a run with `cwd` or reading other files (an argument with `@`), one a signal
    ended (unless it ran under `setarch -R`: without address randomization a crash is as
    deterministic as an exit, iree_oracle.oracle_argv), one that timed out or did not start."""
    argv = [str(a) for a in argv]
    outs = [str(o) for o in outputs]
    modules = [a.split("=", 1)[1] for a in argv if a.startswith("--module=")]
    modules += [str(i) for i in inputs]

    def placeholders(text: str, back: bool = False) -> str:
        for i, path in enumerate([*modules, *outs]):
            mark = f"\0path{i}\0"
            text = text.replace(mark, path) if back else text.replace(path, mark)
        return text

    key = None
    if cwd is None and all("@" not in placeholders(a).replace("@\0path", "") for a in argv[1:]) \
            and all(os.path.isfile(m) for m in modules):
        h = hashlib.sha256(f"{_tool_identity(argv[0])}\0{_runtime_version()}".encode())
        for a in argv[1:]:
            h.update(b"\0" + placeholders(a).encode())
            if a not in modules and os.path.isfile(a):  # a program run by the first (qemu)
                h.update(b"\0" + _tool_identity(a).encode())
        for m in modules:
            h.update(b"\0" + hashlib.sha256(Path(m).read_bytes()).digest())
        key = shared_cache_dir("tool-runs") / f"{h.hexdigest()[:32]}.pickle"
        try:
            returncode, stdout, stderr, files = pickle.loads(key.read_bytes())
        except (OSError, EOFError, pickle.UnpicklingError, ValueError):
            pass
        else:
            os.utime(key)  # in use: prune_cache keeps it
            _log_tool_run("hit", argv, key, 0.0, 0.0, returncode)
            for path, data in zip(outs, files):
                if data is not None:
                    Path(path).write_bytes(data)
            return ToolRun(argv, returncode, placeholders(stdout, True),
                           placeholders(stderr, True), files)
    t0, cpu0 = time.monotonic(), _children_cpu()
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    except FileNotFoundError as e:
        raise IreeToolError(f"cannot run {argv[0]}: {e}") from e
    except subprocess.TimeoutExpired as e:
        raise IreeToolError(f"{' '.join(argv)} timed out after {timeout} s") from e
    _log_tool_run("run", argv, key, time.monotonic() - t0, _children_cpu() - cpu0, proc.returncode)
    files = [Path(o).read_bytes() if os.path.isfile(o) else None for o in outs]
    if key is not None and (proc.returncode >= 0 or without_aslr(argv)):
        tmp = key.with_name(f"{key.name}.{os.getpid()}.tmp")
        tmp.write_bytes(pickle.dumps((proc.returncode, placeholders(proc.stdout),
                                      placeholders(proc.stderr), files)))
        os.replace(tmp, key)
    return ToolRun(argv, proc.returncode, proc.stdout, proc.stderr, files)


def without_aslr(argv: Sequence[str]) -> bool:
    """Whether `argv` runs its program under `setarch ... -R` (address randomization off): what
    it misreads (the pre-fix shim reads pointers) is then the same on every run, so a run a signal
    ends is as much its answer as an exit status (run natively, IREE's x86_64 runtime crashes
    differently from run to run with ASLR on)."""
    for i, arg in enumerate(argv):
        if os.path.basename(arg) == "setarch":
            # setarch [ARCH] [OPTIONS] PROGRAM ...: the options come before the program
            rest = list(argv[i + 1:])
            if rest and not rest[0].startswith("-"):
                rest = rest[1:]
            options = list(itertools.takewhile(lambda a: a.startswith("-"), rest))
            return "-R" in options or "--addr-no-randomize" in options
    return False


def _checked(run: ToolRun) -> ToolRun:
    if run.returncode != 0:
        raise IreeToolError(
            f"{' '.join(run.args)} exited with {run.returncode}\n--- stderr ---\n{run.stderr}"
            f"\n--- stdout ---\n{run.stdout[-4000:]}")
    return run


def aarch64_iree_run_module() -> list[str]:
    """IREE's own aarch64 iree-run-module (the 3.13 aarch64 wheel's) under qemu-aarch64 with the
    Debian aarch64 sysroot: the argv prefix that runs it. The wheel is fetched once into
    $IREEABI_TEST_CACHE (else this process's session folder)."""
    import zipfile
    from .debian_tools import debian_file, debian_tool
    qemu = debian_tool("qemu-aarch64")
    sysroot = Path("/usr/aarch64-linux-gnu")
    debian_file(str(sysroot / "lib" / "ld-linux-aarch64.so.1"), "libc6-arm64-cross")
    cache = Path(os.environ.get("IREEABI_TEST_CACHE", session_dir())) / "aarch64-runtime"
    tool = cache / "iree" / "_runtime_libs" / "iree-run-module"
    if not tool.exists():
        cache.mkdir(parents=True, exist_ok=True)
        # Under a lock, and put in place whole: the workers of a cold run share the folder, and
        # one that ran the binary while another was still writing it died by SIGBUS under qemu.
        with open(cache / "fetch.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            if not tool.exists():
                subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                                "--only-binary=:all:", "--platform", "manylinux_2_28_aarch64",
                                "--python-version", "3.11", "iree-base-runtime==3.13.0", "-d", str(cache)],
                               check=True, timeout=600)
                (wheel,) = cache.glob("iree_base_runtime-3.13.0-*aarch64*.whl")
                part = Path(tempfile.mkdtemp(prefix="extract-", dir=cache))
                extracted = Path(zipfile.ZipFile(wheel).extract("iree/_runtime_libs/iree-run-module", part))
                extracted.chmod(0o755)
                tool.parent.mkdir(parents=True, exist_ok=True)
                os.replace(extracted, tool)  # atomic: no process sees half a binary
                shutil.rmtree(part, True)
    return [qemu, "-L", str(sysroot), str(tool)]
