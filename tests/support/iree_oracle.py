"""IREE's own iree-run-module, built from source for each data model: the oracle of the tests.

    cd tests && python -m support.iree_oracle build [--target T ...]   # what .ci/run runs first
    cd tests && python -m support.iree_oracle where                      # each binary and its command line

The sources are the snapshot of IREE before #24827 and the flatcc it needs
(shared/oracles/iree-runtime beside the checkout, or $IREEABI_ORACLE_SOURCES: `iree-*.tar.xz` and
`flatcc-*.tar.xz`), unpacked into the build cache, never into the repository. Each target of
TARGETS (x86_64, the control, natively; i386 with `gcc -m32`; armv7, riscv64 and aarch64 with
Debian's cross compilers, run by qemu-user with Debian's sysroots) is built in two variants:

- `shipped`: the snapshot as it is (the pre-fix hal_loader dispatch shim);
- `fixed`: the same build tree with tests/oracle_patches/loader-dispatch-fix.patch applied (the
  project's own fix of the shim's read, written from #24827's description): ninja rebuilds
  loader/module.c and relinks, nothing else; the patch is reverted afterwards.

i386 does not build as shipped: tests/oracle_patches/i386-build.patch (nothing in vm/ or
modules/hal/) and `-msse2` make it build; riscv64 does not run under Debian 12's qemu-riscv64 as
shipped (it exits when the riscv_hwprobe system call fails): tests/oracle_patches/riscv64-hwprobe.patch.
Every target takes tests/oracle_patches/no-unified-runtime-library.patch (CMake only: it drops an
archive nothing here builds, a third of the configure step's CPU; the binaries stay byte for byte
the same). The runtime is IREE_BUILD_COMPILER=OFF, driver
local-sync only (local-task does not build on 32-bit targets), loaders embedded-ELF and
vmvx-module; a cross build takes iree-flatcc-cli and iree-c-embed-data from the x86_64 build
(IREE_HOST_BIN_DIR).

The cache is the folder $IREEABI_ORACLE_CACHE (default ~/.cache/ireeabi/oracles), keyed by
content: the tarballs' SHA-256, the patches' bytes, the compilers' `--version`, the CMake
arguments and flags. Builds run under one file lock (`build.lock`) that every process takes,
pytest-xdist workers included: a worker that needs a binary being built waits for it. Binaries
land in `bin/<target>-<variant>-<key>/iree-run-module` whole (copied, then renamed), with a
`build.json` of what made them; `README.txt` names each and its command line.
"""
from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

HERE = Path(__file__).resolve().parent
PATCHES = HERE.parent / "oracle_patches"
FIX_PATCH = PATCHES / "loader-dispatch-fix.patch"
I386_PATCH = PATCHES / "i386-build.patch"
RISCV64_PATCH = PATCHES / "riscv64-hwprobe.patch"
# Every target's: CMake only, it drops a library the runtime-only build never uses, whose generator
# expressions took a third of the configure step's CPU.
RUNTIME_ONLY_PATCH = PATCHES / "no-unified-runtime-library.patch"

CACHE_ENV = "IREEABI_ORACLE_CACHE"
SOURCES_ENV = "IREEABI_ORACLE_SOURCES"
# Where the sources are when $IREEABI_ORACLE_SOURCES does not say: the shared/ folder beside the
# checkout (as CI lays it), else the workplace's.
SOURCE_FOLDERS = (HERE.parents[2] / "shared" / "oracles" / "iree-runtime",
                  Path("/work/shared/oracles/iree-runtime"))

TARGETS = ("x86_64", "i386", "armv7", "riscv64", "aarch64")
VARIANTS = ("shipped", "fixed")
# Bumped when the recipe changes in a way the key does not see (the steps, not their inputs).
RECIPE = "1"
CMAKE_MIN = (3, 26)
_BUILD_TIMEOUT_S = 3 * 3600  # a backstop for a wedged build; a cold one takes minutes

# The runtime only, local-sync, the two loaders the tests use (the shared README's build facts).
CMAKE_ARGS: tuple[str, ...] = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DIREE_BUILD_COMPILER=OFF",
    "-DIREE_BUILD_TESTS=OFF",
    "-DIREE_BUILD_SAMPLES=OFF",
    "-DIREE_BUILD_BENCHMARKS=OFF",
    "-DIREE_BUILD_PYTHON_BINDINGS=OFF",
    "-DIREE_BUILD_BINDINGS_TFLITE=OFF",
    "-DIREE_BUILD_BINDINGS_TFLITE_JAVA=OFF",
    "-DIREE_ENABLE_LIBBACKTRACE=OFF",
    # gcc's warnings differ by target (-Wshift-count-overflow on 32-bit ones): not build failures.
    "-DIREE_ENABLE_WERROR_FLAG=OFF",
    "-DIREE_HAL_DRIVER_DEFAULTS=OFF",
    "-DIREE_HAL_DRIVER_LOCAL_SYNC=ON",
    "-DIREE_HAL_EXECUTABLE_LOADER_DEFAULTS=OFF",
    "-DIREE_HAL_EXECUTABLE_LOADER_EMBEDDED_ELF=ON",
    "-DIREE_HAL_EXECUTABLE_LOADER_VMVX_MODULE=ON",
    "-DIREE_HAL_EXECUTABLE_PLUGIN_DEFAULTS=OFF",
)
HOST_TOOLS = ("iree-flatcc-cli", "iree-c-embed-data")
TOOL = "iree-run-module"


class OracleBuildError(RuntimeError):
    """The oracle could not be built (a missing tool, a failed configure or build): the step, its
    command and the end of its output."""


@dataclass(frozen=True)
class Toolchain:
    """How one target's runtime is built and run."""

    target: str
    cc: str
    cxx: str
    processor: str | None  # CMAKE_SYSTEM_PROCESSOR of a cross build; None: the host's own build
    flags: tuple[str, ...] = ()  # C and C++ flags
    sysroot: str | None = None  # Debian's sysroot (find root, and qemu's -L)
    qemu: str | None = None  # the qemu-user that runs it; None: runs natively
    loader: str | None = None  # a file of the sysroot the binary needs (its dynamic loader)
    loader_package: str | None = None
    patches: tuple[Path, ...] = ()  # source changes it needs to build (both variants)
    cmake: tuple[str, ...] = ()  # CMake arguments of its own


def _m32_flags() -> tuple[str, ...]:
    from .debian_tools import m32_include_dir
    # -msse2: base/internal/fpu_state.c reads MXCSR (_mm_getcsr) on x86_32; -mfpmath=sse keeps the
    # runtime's own float code (vmvx's kernels) in SSE registers, as on x86_64, rather than x87's
    # 80-bit ones.
    return ("-m32", "-msse2", "-mfpmath=sse", "-isystem", str(m32_include_dir()))


def toolchain(target: str) -> Toolchain:
    """The Toolchain of `target` (one of TARGETS)."""
    if target == "x86_64":
        return Toolchain(target, "gcc", "g++", None, patches=(RUNTIME_ONLY_PATCH,))
    if target == "i386":
        return Toolchain(target, "gcc", "g++", "i686", _m32_flags(), loader="/usr/lib32/libc.so",
                         loader_package="libc6-dev-i386", patches=(RUNTIME_ONLY_PATCH, I386_PATCH))
    cross = {"armv7": ("arm-linux-gnueabihf", "armv7", "qemu-arm", "ld-linux-armhf.so.3",
                       "libc6-armhf-cross"),
             "riscv64": ("riscv64-linux-gnu", "riscv64", "qemu-riscv64", "ld-linux-riscv64-lp64d.so.1",
                         "libc6-riscv64-cross"),
             "aarch64": ("aarch64-linux-gnu", "aarch64", "qemu-aarch64", "ld-linux-aarch64.so.1",
                         "libc6-arm64-cross")}
    if target not in cross:
        raise ValueError(f"unknown oracle target {target!r}; valid: {', '.join(TARGETS)}")
    triple, processor, qemu, loader, package = cross[target]
    # riscv64: gcc 12 takes -march=rv64gv (so IREE's probe turns the RVV ukernels on) but has no
    # <riscv_vector.h>; the ukernels' generic C serves (vmvx's kernels use them, not the tests'
    # llvm-cpu ones).
    extra = ("-DIREE_UK_BUILD_RISCV_64_V=OFF",) if target == "riscv64" else ()
    # riscv64 also needs a change to run under Debian 12's qemu-riscv64 (no riscv_hwprobe).
    patches = (RUNTIME_ONLY_PATCH, *((RISCV64_PATCH,) if target == "riscv64" else ()))
    return Toolchain(target, f"{triple}-gcc", f"{triple}-g++", processor, sysroot=f"/usr/{triple}",
                     qemu=qemu, loader=f"/usr/{triple}/lib/{loader}", loader_package=package,
                     patches=patches, cmake=extra)


# --------------------------------------------------------------------------------------------------
# The cache and its keys

def cache_dir() -> Path:
    folder = Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "ireeabi" / "oracles")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _sources() -> tuple[Path, Path]:
    named = os.environ.get(SOURCES_ENV)
    folder = Path(named) if named else next((f for f in SOURCE_FOLDERS if f.is_dir()), SOURCE_FOLDERS[0])
    found = [sorted(folder.glob(f"{name}-*.tar.xz")) for name in ("iree", "flatcc")]
    if not all(len(f) == 1 for f in found):
        raise OracleBuildError(
            f"{folder} should hold one iree-*.tar.xz and one flatcc-*.tar.xz (IREE's sources before "
            f"#24827 and its flatcc; ${SOURCES_ENV} names another folder): found "
            f"{[p.name for f in found for p in f] or 'nothing'}")
    return found[0][0], found[1][0]


def _file_sha(path: Path) -> str:
    # Keyed by name, size and mtime too: the tarballs' hash is worked out once per process.
    return _sha_memo(str(path), path.stat().st_size, path.stat().st_mtime_ns)


_memo: dict[tuple, str] = {}


def _sha_memo(path: str, size: int, mtime: int) -> str:
    key = (path, size, mtime)
    if key not in _memo:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        _memo[key] = h.hexdigest()
    return _memo[key]


def _version_text(command: str) -> str:
    if command not in _memo:
        path = shutil.which(command)
        if path is None:
            return ""
        _memo[command] = subprocess.run([path, "--version"], capture_output=True, text=True,
                                        timeout=120).stdout.strip()
    return _memo[command]


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


def _source_key(tc: Toolchain) -> str:
    iree, flatcc = _sources()
    return _digest(RECIPE, _file_sha(iree), _file_sha(flatcc),
                   *(p.name + "\0" + p.read_text() for p in tc.patches))


def _configure_args(tc: Toolchain, host_bin: "Path | None") -> list[str]:
    args = ["-G", "Ninja", *CMAKE_ARGS, f"-DCMAKE_C_COMPILER={tc.cc}", f"-DCMAKE_CXX_COMPILER={tc.cxx}"]
    if tc.flags:
        args += [f"-DCMAKE_C_FLAGS={' '.join(tc.flags)}", f"-DCMAKE_CXX_FLAGS={' '.join(tc.flags)}"]
    if tc.processor:  # a cross build: IREE then imports the host tools instead of building them
        args += ["-DCMAKE_SYSTEM_NAME=Linux", f"-DCMAKE_SYSTEM_PROCESSOR={tc.processor}",
                 f"-DIREE_HOST_BIN_DIR={host_bin}"]
    args += tc.cmake
    if tc.sysroot:
        args += [f"-DCMAKE_FIND_ROOT_PATH={tc.sysroot}", "-DCMAKE_FIND_ROOT_PATH_MODE_PROGRAM=NEVER",
                 "-DCMAKE_FIND_ROOT_PATH_MODE_LIBRARY=ONLY", "-DCMAKE_FIND_ROOT_PATH_MODE_INCLUDE=ONLY"]
    return args


def build_key(target: str) -> str:
    """The content key of `target`'s shipped build: sources, patches, compilers, arguments."""
    tc = toolchain(target)
    host = build_key("x86_64") if tc.processor else ""
    return _digest(_source_key(tc), _version_text(tc.cc), _version_text(tc.cxx),
                   "\0".join(_configure_args(tc, Path("HOST"))), host)


def variant_key(target: str, variant: str) -> str:
    if variant not in VARIANTS:
        raise ValueError(f"unknown oracle variant {variant!r}; valid: {', '.join(VARIANTS)}")
    key = build_key(target)
    return key if variant == "shipped" else _digest(key, FIX_PATCH.read_text())


def binary_path(target: str, variant: str) -> Path:
    """Where `target`'s `variant` iree-run-module is (or will be, once built)."""
    return cache_dir() / "bin" / f"{target}-{variant}-{variant_key(target, variant)}" / TOOL


# --------------------------------------------------------------------------------------------------
# Building

def _tool(command: str) -> str:
    """cmake, ninja (pip's, beside this Python or on PATH), or a Debian tool (installed if missing)."""
    if command in ("cmake", "ninja"):
        found = shutil.which(command) or next(
            (str(p) for p in [Path(sys.executable).parent / command] if p.is_file()), None)
        if found is None:
            raise OracleBuildError(f"{command} not found: pip install 'cmake>=3.26' ninja "
                                   f"(the test extra has them)")
        if command == "cmake":
            m = re.search(r"(\d+)\.(\d+)", _version_text(found))
            if not m or (int(m[1]), int(m[2])) < CMAKE_MIN:
                raise OracleBuildError(f"{found} is too old for IREE (needs >= 3.26): "
                                       f"pip install 'cmake>=3.26'")
        return found
    from .debian_tools import debian_tool
    return debian_tool(command)


def _run(argv: Sequence[str], step: str, cwd: "Path | None" = None, log: "Path | None" = None) -> str:
    proc = subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True,
                          timeout=_BUILD_TIMEOUT_S)
    if log is not None:
        with open(log, "a") as f:
            f.write(f"$ {' '.join(map(str, argv))}\n{proc.stdout}{proc.stderr}\n")
    if proc.returncode != 0:
        out = (proc.stdout + proc.stderr).strip()
        raise OracleBuildError(f"{step}: {' '.join(map(str, argv))} exited with {proc.returncode}"
                               f"\n{out[-6000:]}")
    return proc.stdout


_COMPILED = re.compile(r"Building C(?:XX)? object (\S+)/CMakeFiles/[^/]+\.dir/(\S+)\.o$", re.M)


def compiled_sources(ninja_output: str) -> list[str]:
    """The source files a ninja run compiled (`runtime/src/iree/.../module.c`), from its output."""
    return sorted(f"{m[1]}/{m[2]}" for m in _COMPILED.finditer(ninja_output))


def _unpacked(tc: Toolchain, log: Path) -> Path:
    """IREE's source folder for `tc` (its patches applied), unpacked once into the cache."""
    root = cache_dir() / "src" / _source_key(tc)
    tree = root / "iree"
    if (root / "complete").is_file():
        return tree
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    for tarball in _sources():
        _run(["tar", "-xJf", tarball, "-C", root], f"unpacking {tarball.name}")
    for patch in tc.patches:
        _run([_tool("patch"), "-p1", "--forward", "-i", patch], f"applying {patch.name}", tree, log)
    (root / "complete").write_text("")
    return tree


def source_tree(target: str) -> Path:
    """IREE's source folder `target`'s oracle builds from (its patches applied; the loader fix not):
    unpacked into the cache unless there, under the build lock."""
    tc = toolchain(target)
    root = cache_dir() / "src" / _source_key(tc)
    if (root / "complete").is_file():
        return root / "iree"
    with open(cache_dir() / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        return _unpacked(tc, cache_dir() / "src" / "unpack.log")


def _fix_marker(tree: Path) -> Path:
    return tree.parent / "fix-applied"


def _revert_fix(tree: Path, log: Path) -> None:
    """Take the loader fix out of `tree` if a build left it in (one that died between the two)."""
    marker = _fix_marker(tree)
    if marker.is_file():
        patch = marker.read_text()
        _run([_tool("patch"), "-p1", "-R", "-i", patch], "reverting the loader fix", tree, log)
        marker.unlink()


def _copy_out(built: Path, dest: Path, record: dict) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f"{dest.name}.{os.getpid()}.tmp")
    shutil.copy2(built, tmp)
    (dest.parent / "build.json").write_text(json.dumps(record, indent=1) + "\n")
    os.replace(tmp, dest)  # whole or absent


class _Clock:
    """Wall and CPU seconds (this process's children: the compilers) of one step."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.monotonic(), self._cpu()

    @staticmethod
    def _cpu() -> float:
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    def read(self) -> tuple[float, float]:
        return time.monotonic() - self.wall, self._cpu() - self.cpu


def _jobs() -> str:
    return str(max(1, min(2, os.cpu_count() or 1)))


def _build_locked(target: str, variants: Sequence[str], say: Callable[[str], None]) -> dict[str, Path]:
    tc = toolchain(target)
    wanted = {v: binary_path(target, v) for v in variants}
    if all(p.is_file() for p in wanted.values()):
        return wanted
    from .debian_tools import PACKAGES, debian_file, debian_tool
    for command in (tc.cc, tc.cxx):
        if command in PACKAGES:
            debian_tool(command)  # the cross compilers: installed when missing
        elif shutil.which(command) is None:
            raise OracleBuildError(f"{command} not found (it builds the {target} oracle)")
    if tc.loader:
        debian_file(tc.loader, tc.loader_package or "")
    host_bin = None
    if tc.processor:  # a cross build needs the host's flatcc and embed-data tools
        host_bin = _host_tools(say)
    key = build_key(target)
    build = cache_dir() / "build" / f"{target}-{key}"
    build.mkdir(parents=True, exist_ok=True)
    log = build / "build.log"
    tree = _unpacked(tc, log)
    _revert_fix(tree, log)
    # Other keys' build folders of this target are stale (their binaries stay in bin/).
    for old in (cache_dir() / "build").glob(f"{target}-*"):
        if old != build:
            shutil.rmtree(old, ignore_errors=True)
    cmake, ninja = _tool("cmake"), _tool("ninja")
    record = {"target": target, "key": key, "recipe": RECIPE, "cc": _version_text(tc.cc).splitlines()[0],
              "patches": [p.name for p in tc.patches], "configure": _configure_args(tc, host_bin)}
    clock = _Clock()
    configure = (0.0, 0.0)
    if not (build / "build.ninja").is_file():
        _run([cmake, "-S", tree, "-B", build, f"-DCMAKE_MAKE_PROGRAM={ninja}",
              *_configure_args(tc, host_bin)], f"configuring {target}", log=log)
        configure = clock.read()
    targets = [TOOL, *HOST_TOOLS] if target == "x86_64" else [TOOL]
    _run([ninja, "-C", build, "-j", _jobs(), *targets], f"building {target}", log=log)
    wall, cpu = clock.read()
    say(f"{target} shipped: {wall:.0f} s wall, {cpu:.0f} s CPU (configure {configure[0]:.0f} s wall, "
        f"{configure[1]:.0f} s CPU)")
    if not wanted.get("shipped", binary_path(target, "shipped")).is_file():
        _copy_out(build / "tools" / TOOL, binary_path(target, "shipped"),
                  {**record, "variant": "shipped", "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
                   "configure_wall_s": round(configure[0], 1), "configure_cpu_s": round(configure[1], 1)})
    if "fixed" in wanted and not wanted["fixed"].is_file():
        clock = _Clock()
        _fix_marker(tree).write_text(str(FIX_PATCH))
        _run([_tool("patch"), "-p1", "--forward", "-i", FIX_PATCH], "applying the loader fix", tree, log)
        try:
            output = _run([ninja, "-C", build, "-j", _jobs(), TOOL], f"building {target} (fixed)", log=log)
        finally:
            _revert_fix(tree, log)
        wall, cpu = clock.read()
        say(f"{target} fixed: {wall:.0f} s wall, {cpu:.0f} s CPU (rebuilt what the fix touches)")
        _copy_out(build / "tools" / TOOL, wanted["fixed"],
                  {**record, "variant": "fixed", "key": variant_key(target, "fixed"),
                   "patches": [*record["patches"], FIX_PATCH.name], "wall_s": round(wall, 1),
                   "cpu_s": round(cpu, 1), "compiled": compiled_sources(output)})
    _write_readme()
    return wanted


def _host_tools(say: Callable[[str], None]) -> Path:
    """A folder with the x86_64 build's iree-flatcc-cli and iree-c-embed-data (built if needed)."""
    folder = cache_dir() / "host-tools" / build_key("x86_64")
    if all((folder / t).is_file() for t in HOST_TOOLS):
        return folder
    build = cache_dir() / "build" / f"x86_64-{build_key('x86_64')}" / "tools"
    if not all((build / t).is_file() for t in HOST_TOOLS):
        _build_locked("x86_64", ("shipped",), say)
    folder.mkdir(parents=True, exist_ok=True)
    for t in HOST_TOOLS:
        tmp = folder / f"{t}.{os.getpid()}.tmp"
        shutil.copy2(build / t, tmp)
        os.replace(tmp, folder / t)
    return folder


def build(target: str, variants: Sequence[str] = VARIANTS,
          say: Callable[[str], None] = lambda s: None) -> dict[str, Path]:
    """`target`'s iree-run-module in each of `variants`: {variant: path}, built unless cached.
    Takes the cache's build lock (other processes wait, then find the binaries)."""
    for v in variants:
        variant_key(target, v)  # checks the name
    wanted = {v: binary_path(target, v) for v in variants}
    if all(p.is_file() for p in wanted.values()):
        return wanted
    with open(cache_dir() / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        return _build_locked(target, variants, say)


# --------------------------------------------------------------------------------------------------
# Running

def runner(target: str) -> list[str]:
    """The argv prefix that runs a program built for `target` here: [] natively, else qemu-user
    with Debian's sysroot."""
    tc = toolchain(target)
    if tc.qemu is None:
        return []
    return [_tool(tc.qemu), "-L", str(tc.sysroot)]


def oracle_argv(target: str, variant: str = "shipped") -> list[str]:
    """The argv prefix of `target`'s `variant` iree-run-module (built first if needed), run as the
    tests run it: under `prlimit --core=0`, so that a crash (the pre-fix shim's) leaves no core
    file; under `setarch -R` (no address randomization), since what the pre-fix shim misreads
    includes pointers, and natively its outcome changes from run to run with ASLR (x86_64's
    add16 ends in a signature mismatch, SIGBUS or SIGSEGV); then qemu-user for a foreign target."""
    path = build(target, (variant,))[variant]
    return [shutil.which("prlimit") or "/usr/bin/prlimit", "--core=0",
            shutil.which("setarch") or "/usr/bin/setarch", "-R", *runner(target), str(path)]


def command_line(target: str, variant: str) -> str:
    """A shell line that runs `target`'s `variant` binary (as README.txt gives it)."""
    tc = toolchain(target)
    prefix = f"{tc.qemu} -L {tc.sysroot} " if tc.qemu else ""
    return f"{prefix}{binary_path(target, variant)}"


def _write_readme() -> None:
    lines = ["IREE's own iree-run-module (the snapshot before IREE #24827), built from source by",
             "ireeabi's tests/support/iree_oracle.py for each data model, in two variants: `shipped` (the",
             "pre-fix hal_loader dispatch shim) and `fixed` (tests/oracle_patches/loader-dispatch-fix.patch).",
             "Driver local-sync only; loaders embedded-elf and vmvx-module. Each folder's build.json",
             "says what made it. The tests run each under `setarch -R`: what the pre-fix shim misreads",
             "includes pointers, so natively its outcome changes with address randomization.",
             "Command lines (add --device=local-sync --module=M.vmfb --function=F ...):",
             ""]
    for target in TARGETS:
        for variant in VARIANTS:
            try:
                path = binary_path(target, variant)
            except OracleBuildError:
                return
            if path.is_file():
                lines.append(f"{target:8} {variant:8} {command_line(target, variant)}")
    text = "\n".join(lines) + "\n"
    tmp = cache_dir() / f"README.txt.{os.getpid()}.tmp"
    tmp.write_text(text)
    os.replace(tmp, cache_dir() / "README.txt")


def main(argv: "Sequence[str] | None" = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m support.iree_oracle", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build the oracles that are not in the cache")
    b.add_argument("--target", action="append", choices=TARGETS, help="default: every target")
    b.add_argument("--variant", action="append", choices=VARIANTS, help="default: both")
    sub.add_parser("where", help="print each built binary's command line")
    args = parser.parse_args(argv)
    if args.command == "where":
        _write_readme()
        print((cache_dir() / "README.txt").read_text(), end="")
        return 0
    clock = _Clock()
    for target in args.target or TARGETS:
        t0 = _Clock()
        try:
            paths = build(target, args.variant or VARIANTS, say=lambda s: print(f"  {s}", flush=True))
        except OracleBuildError as e:
            print(f"iree_oracle: {e}", file=sys.stderr)
            return 1
        wall, cpu = t0.read()
        print(f"{target}: {wall:.0f} s wall, {cpu:.0f} s CPU: "
              + ", ".join(f"{v} {p}" for v, p in paths.items()), flush=True)
    wall, cpu = clock.read()
    print(f"oracles: {wall:.0f} s wall, {cpu:.0f} s CPU (cache {cache_dir()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
