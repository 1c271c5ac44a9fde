"""IREE's own runtime on every data model it builds for, against `ireeabi run --target T`.

For each target of tests/support/iree_oracle.py (x86_64, the control; i386; armv7; riscv64; aarch64), every
case of the corpus (CORPUS: tests/programs' own programs, the e2e corpus of tests/e2e_corpus.py,
the small kernels of benchmarks/bench_kernels.py) is compiled for each model of MODELS with the
flags `tooling.check_compile.compile_flags(model, target, host)` gives (llvm-cpu kernels for that
target's triple; a program without kernels, io_types, once for every target: compiled()) and run
twice:

- by IREE's iree-run-module built for the target (qemu-user for the foreign ones; its answers are
  remembered by iree_tools.run_tool, keyed by the binary, the arguments and the module's bytes);
- by `ireeabi run --target T`, in-process.

inline-dynamic runs against both oracle variants: the shipped runtime (pre-#24827) against
`ireeabi run --legacy-loader`, the fixed one against plain `ireeabi run` (a module without
hal_loader dispatches asks both the same question: the shipped binary answers it, answering_variant).
Each pair must agree:
both succeed and print the same bytes, or both fail with the same status code at the same import
(and print the same, the `EXEC @f` line or nothing). Whatever else happens is a difference; each
one is in EXPLAINED, with its reason (docs/findings.md lists them), and asserted as exactly that
difference, so that a change on either side fails the test.
"""
from __future__ import annotations

import io
import re
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from support import e2e_corpus
from support import iree_oracle
from support import iree_tools as tools
from ireeabi.cli.main import main
from ireeabi.tooling.check_compile import compile_flags
from ireeabi.tooling.execution_model import legacy_loader_refusal
from ireeabi.vm.bytecode.module_file import read_module

HOST = "x86_64"
PROGRAMS = Path(__file__).resolve().parent.parent / "programs"
KERNELS = PROGRAMS / "kernels"

# iree-compile's models: the default one (llvm-cpu kernels for the target's triple, vmvx), the two
# inline ones, and async-external with either kernel kind.
MODELS = ("llvm-cpu", "vmvx", "inline-static", "inline-dynamic", "async-external-llvm-cpu",
          "async-external-vmvx")
# iree-compile 3.13 refuses these programs for async-external (test_async_external.py pins it).
ASYNC_NOT_COMPILED = {"results", "scalars", "trap"}


@dataclass(frozen=True)
class Case:
    source: Path
    function: str
    inputs: tuple[str, ...]
    flags: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.source.stem


def _corpus() -> list[Case]:
    own = [
        Case(PROGRAMS / "add16.mlir", "add", ("16xf32=1", "16xf32=2")),
        Case(PROGRAMS / "bindings.mlir", "muladd", ("64xf32=1.5", "64xf32=-2", "64xf32=0.25")),
        Case(PROGRAMS / "exp16.mlir", "expf", ("16xf32=-2 -1 0 0.5 1 2 3 10 -10 88 -88 0.1 -0.1 1e-3 20 -20",)),
        Case(PROGRAMS / "push_constants.mlir", "scale", ("5xf32=1 2 3 4 5", "2.5")),
    ]
    e2e = [Case(e2e_corpus.E2E / f"{n}.mlir", f, tuple(i), e2e_corpus.F64) for n, f, i in e2e_corpus.CASES]
    kernels = [
        Case(KERNELS / "argmax_small.mlir", "argmax", ("6x37xf32=0.5",)),
        Case(KERNELS / "conv2d_small.mlir", "conv2d", ("1x6x6x3xf32=0.5", "3x3x3x4xf32=0.25")),
        Case(KERNELS / "elementwise_small.mlir", "chain", ("48xf32=0.5", "48xf32=0.75")),
        Case(KERNELS / "matmul_small.mlir", "matmul", ("7x9xf32=0.5", "9x5xf32=0.25")),
        Case(KERNELS / "softmax_small.mlir", "softmax", ("5x37xf32=0.5",)),
    ]
    return own + e2e + kernels


CORPUS = _corpus()


def cases_for(model: str, target: str) -> list[Case]:
    """The corpus cases iree-compile compiles for `model` on `target`."""
    out = CORPUS
    if model.startswith("async-external"):
        out = [c for c in out if c.name not in ASYNC_NOT_COMPILED]
    if model in LLVM_CPU_MODELS:
        out = [c for c in out if (target, c.name) not in NOT_COMPILED]
    return out


def compiled(case: Case, model: str, target: str) -> Path:
    """`case`'s module for `model` on `target`. A program whose host compile is kernel-target free
    (e2e_corpus.kernel_target_free: io_types) is that compile on every target: the target's own
    compile is the same bytes (test_a_target_free_module_is_every_targets_compile), so the oracle
    is asked the same question about it, without a compile per target."""
    host = tools.compile_with_flags(case.source, compile_flags(model, HOST, HOST) + case.flags)
    if target == HOST or e2e_corpus.kernel_target_free(host):
        return host
    return tools.compile_with_flags(case.source, compile_flags(model, target, HOST) + case.flags)


@dataclass(frozen=True)
class Outcome:
    """How one run ended: "ok" (stdout), "status" (code, import or None, stdout), "signal" (IREE's
    process killed: code is the signal's name) or "fault" (ireeabi refuses where it says IREE's
    own runtime faults: no status, the import if it names one)."""

    kind: str
    stdout: str = ""
    code: str = ""
    where: str | None = None  # the import the status came from

    def __str__(self) -> str:
        if self.kind == "ok":
            return "ok"
        if self.kind == "signal":
            return f"killed by {self.code}"
        if self.kind == "fault":
            return f"refused as a fault at {self.where or '(no import)'}"
        return f"{self.code} at {self.where or '(no import)'}"


_IREE_STATUS = re.compile(r"^(?:\S+:\d+: )?([A-Z_]+); ")
_IREE_IMPORT = re.compile(r"while invoking native function ([\w.]+)")


_dispatching: dict[tuple[str, int, int], bool] = {}  # a memo: (path, size, mtime) -> the answer


def _dispatches(path: Path) -> bool:
    """Whether the module imports hal_loader.executable.dispatch: the one import that reaches the
    shim the two oracle variants differ in."""
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key not in _dispatching:
        _dispatching[key] = legacy_loader_refusal(read_module(path)) is None
    return _dispatching[key]


def answering_variant(variant: str, path: Path) -> str:
    """The oracle variant that answers `variant`'s question about the module at `path`. The fixed
    binary is the shipped one with loader/module.c rebuilt (test_fixed_variant_rebuilt_only_the_loader
    pins it), and the patch changes iree_vm_shim_dispatch_v only, which nothing but the
    hal_loader.executable.dispatch import calls: for a module without it, the two variants are
    asked the same question, and the shipped one answers it once for both (the answers matched for
    every such case of the corpus on every target: docs/findings.md)."""
    return variant if variant == "shipped" or _dispatches(path) else "shipped"


def iree_outcome(target: str, variant: str, path: Path, case: Case) -> Outcome:
    variant = answering_variant(variant, path)
    argv = [*iree_oracle.oracle_argv(target, variant), "--device=local-sync", f"--module={path}",
            f"--function={case.function}", *(f"--input={i}" for i in case.inputs)]
    run = tools.run_tool(argv, timeout=600)
    if run.returncode < 0:
        return Outcome("signal", run.stdout, signal.Signals(-run.returncode).name)
    if run.returncode == 0:
        return Outcome("ok", run.stdout)
    first = run.stderr.strip().splitlines()[0] if run.stderr.strip() else ""
    m = _IREE_STATUS.match(first)
    assert m, f"{argv}: exit {run.returncode} without a status:\n{run.stderr[-2000:]}"
    where = _IREE_IMPORT.search(first)
    return Outcome("status", run.stdout, m.group(1), where.group(1) if where else None)


_OURS_STATUS = re.compile(r"ireeabi:error:([A-Z_]+);")
_OURS_IMPORT = re.compile(r"whilecallingimport([\w.]+)")
_OURS_LEADING_IMPORT = re.compile(r"ireeabi:error:(\w+\.[\w.]+):")


def ireeabi_outcome(target: str, path: Path, case: Case, legacy: bool) -> tuple[Outcome, str]:
    """`ireeabi run --target T`'s outcome (and its stderr)."""
    # --legacy-loader only where it has a shim to switch (ireeabi refuses it elsewhere, and rightly:
    # a module without hal_loader dispatches runs the same on both runtime variants).
    legacy = legacy and _dispatches(path)
    argv = ["run", str(path), f"--target={target}", f"--function={case.function}",
            *(f"--input={i}" for i in case.inputs), *(["--legacy-loader"] if legacy else [])]
    out, err = io.StringIO(), io.StringIO()
    rc = main(argv, stdout=out, stderr=err)
    text = err.getvalue()
    assert "Traceback" not in text, text
    if rc == 0:
        return Outcome("ok", out.getvalue()), text
    squashed = "".join(text.split())
    assert rc == 1 and squashed.startswith("ireeabi:error:"), f"ireeabi {' '.join(argv)}: exit {rc}\n{text}"
    m = _OURS_STATUS.search(squashed)
    where = _OURS_IMPORT.search(squashed) or _OURS_LEADING_IMPORT.match(squashed)
    if m is None:  # no status: ireeabi refuses where IREE's own runtime faults (IreeFaultError),
        # and says what IREE does there
        assert "own runtime" in " ".join(text.split()), text
        return Outcome("fault", out.getvalue(), "", where.group(1) if where else None), text
    return Outcome("status", out.getvalue(), m.group(1), where.group(1) if where else None), text


def runs(model: str) -> list[tuple[str, bool]]:
    """(oracle variant, ireeabi's --legacy-loader) pairs a model runs with."""
    if model == "inline-dynamic":
        return [("shipped", True), ("fixed", False)]
    return [("shipped", False)]


def case_id(case: Case) -> str:
    """`program.function.N`: N counts the cases of the same function, in CORPUS order."""
    same = [c for c in CORPUS if (c.source, c.function) == (case.source, case.function)]
    return f"{case.name}.{case.function}.{same.index(case)}"


# --------------------------------------------------------------------------------------------------
# Where IREE's runtime and ireeabi differ, each difference with its reason (docs/findings.md lists
# them too). A difference is asserted as exactly itself: where a rule applies, the two outcomes
# must be what it says (a change on either side fails the test); everywhere else, they agree.

LLVM_CPU_MODELS = ("llvm-cpu", "inline-dynamic", "async-external-llvm-cpu")
# Models whose kernels ireeabi's interpreter computes on the host's FPU (VM bytecode, vmvx).
INTERPRETED_MODELS = ("vmvx", "inline-static", "async-external-vmvx")
ILP32 = ("i386", "armv7")

# iree-compile 3.13 cannot link these kernels for armv7 and i386 ("undefined symbol: fmaxf": the
# embedded ELF links no libm); test_not_compiled pins it, so a compiler that can leaves the list.
NOT_COMPILED = {(t, p): "fmaxf" for t in ("armv7", "i386") for p in ("elementwise_small", "softmax_small")}

# The pre-fix hal_loader dispatch shim (oracle variant "shipped", inline-dynamic) where its
# misreading does not end in IREE's own "argument/result signature mismatch": what IREE's runtime
# does instead, per (target, case). The shim reads the constant count at sizeof(rIiii) (32 on
# armv7, 28 = the packed 28 on i386) and the bindings at alignof(rII) (4 on i386): the counts and
# pointers it then hands the kernel are words of the argument buffer that are not what it takes
# them for. ireeabi (--legacy-loader) runs the dispatch as IREE does while what IREE reads lies in
# the argument buffer (a kernel reading more constants than it was handed reads the buffer's next
# words: `dynamic.transpose_inc` on armv7 prints IREE's zeros), and refuses with IreeFaultError
# where IREE's process dies: where the shim or the kernel reads past the buffer or the arrays IREE
# allocas, or where the kernel, run on the misread words, faults.
PRE_FIX: dict[tuple[str, str], str] = {
    ('aarch64', 'dynamic.transpose_inc.0'): 'crash',  # killed by SIGSEGV
    ('aarch64', 'push_constants.affine.0'): 'crash',  # killed by SIGSEGV
    ('aarch64', 'push_constants.affine.1'): 'crash',  # killed by SIGSEGV
    ('aarch64', 'push_constants.affine.2'): 'crash',  # killed by SIGSEGV
    ('aarch64', 'push_constants.scale.0'): 'crash',  # killed by SIGSEGV
    ('aarch64', 'scalars.wide.1'): 'crash',  # killed by SIGSEGV
    ('aarch64', 'trap.div_scale.0'): 'crash',  # killed by SIGSEGV
    ('armv7', 'add16.add.0'): 'crash',  # killed by SIGBUS
    ('armv7', 'bindings.muladd.0'): 'crash',  # killed by SIGBUS
    ('armv7', 'conv2d_small.conv2d.0'): 'crash',  # killed by SIGBUS
    ('armv7', 'dynamic.transpose_inc.0'): 'wrong results',  # ok
    ('armv7', 'elementwise.mul_add.0'): 'crash',  # killed by SIGBUS
    ('armv7', 'elementwise.mul_add.1'): 'crash',  # killed by SIGBUS
    ('armv7', 'int_ops.add64.0'): 'crash',  # killed by SIGSEGV
    ('armv7', 'int_ops.mix.0'): 'crash',  # killed by SIGBUS
    ('armv7', 'matmul.matmul.0'): 'crash',  # killed by SIGBUS
    ('armv7', 'matmul.matmul.1'): 'crash',  # killed by SIGBUS
    ('armv7', 'matmul_small.matmul.0'): 'crash',  # killed by SIGSEGV
    ('armv7', 'multi_dispatch.normalize.0'): 'crash',  # killed by SIGBUS
    ('armv7', 'multi_dispatch.normalize.1'): 'crash',  # killed by SIGBUS
    ('armv7', 'push_constants.affine.0'): 'crash',  # killed by SIGSEGV
    ('armv7', 'push_constants.affine.1'): 'crash',  # killed by SIGSEGV
    ('armv7', 'push_constants.affine.2'): 'crash',  # killed by SIGSEGV
    ('armv7', 'push_constants.scale.0'): 'crash',  # killed by SIGSEGV
    ('armv7', 'results.stats.0'): 'crash',  # killed by SIGBUS
    ('armv7', 'results.stats.1'): 'crash',  # killed by SIGBUS
    ('armv7', 'scalars.wide.0'): 'RESOURCE_EXHAUSTED at hal_loader.executable.dispatch',  # RESOURCE_EXHAUSTED at hal_loader.executable.dispatch
    ('riscv64', 'dynamic.transpose_inc.0'): 'crash',  # killed by SIGSEGV
    ('riscv64', 'push_constants.affine.0'): 'crash',  # killed by SIGSEGV
    ('riscv64', 'push_constants.affine.1'): 'crash',  # killed by SIGSEGV
    ('riscv64', 'push_constants.affine.2'): 'crash',  # killed by SIGSEGV
    ('riscv64', 'push_constants.scale.0'): 'crash',  # killed by SIGSEGV
    ('riscv64', 'scalars.wide.1'): 'crash',  # killed by SIGSEGV
    ('riscv64', 'trap.div_scale.0'): 'crash',  # killed by SIGSEGV
    ('x86_64', 'dynamic.transpose_inc.0'): 'crash',  # killed by SIGSEGV
    ('x86_64', 'push_constants.affine.0'): 'crash',  # killed by SIGSEGV
    ('x86_64', 'push_constants.affine.1'): 'crash',  # killed by SIGSEGV
    ('x86_64', 'push_constants.affine.2'): 'crash',  # killed by SIGSEGV
    ('x86_64', 'push_constants.scale.0'): 'crash',  # killed by SIGSEGV
    ('x86_64', 'scalars.wide.1'): 'crash',  # killed by SIGBUS
    ('x86_64', 'trap.div_scale.0'): 'crash',  # killed by SIGSEGV
}


# PRE_FIX cases whose status follows the argument buffer's address (see explain).
WRAPS_WITH_THE_ADDRESS = {("armv7", "scalars.wide.0")}


def explain(target: str, model: str, variant: str, case: Case, theirs: Outcome,
            ours: Outcome) -> str | None:
    """The name of the explained difference between the two outcomes (None: they agree); an
    AssertionError when they differ otherwise, or when a rule's difference is not what it says."""
    cid = case_id(case)
    if model == "inline-dynamic" and variant == "shipped" and (target, cid) in PRE_FIX:
        expected = PRE_FIX[target, cid]
        assert pre_fix_kind(theirs) == expected, (target, cid, str(theirs), expected)
        if theirs.kind == "signal":  # IREE's process dies: ireeabi refuses there, no status
            assert ours.kind == "fault" and ours.stdout == theirs.stdout, (target, cid, str(ours))
            return FAULT_REFUSED
        if (target, cid) in WRAPS_WITH_THE_ADDRESS:
            # The shim's bounds check (binding array + count x its size > end) wraps the 32-bit
            # address space for IREE's buffer on its VM stack and passes (then "too many
            # bindings"), not for ireeabi's buffer low in its heap: its error says both.
            assert theirs.where == ours.where == LOADER_DISPATCH and ours.code == "INVALID_ARGUMENT", \
                (str(theirs), str(ours))
            return "pre-fix bounds check wraps with the address"
        assert ours == theirs, (target, cid, str(theirs), str(ours))  # results, or the same status
        return None
    if theirs == ours:
        return None
    if theirs.kind == "signal" and ours.kind == "fault" and ours.stdout == theirs.stdout:
        if (target, case.name) == ("armv7", "exp16") and model in LLVM_CPU_MODELS:
            # The armv7 exp kernel of iree-compile 3.13 calls into nothing it links (pc 0xa1000,
            # the image's first page past its code): IREE's runtime dies by SIGSEGV; ireeabi's
            # emulated CPU traps the fetch and refuses with IreeFaultError naming the fault.
            assert theirs.code == "SIGSEGV", str(theirs)
            return FAULT_REFUSED
    if (model == "inline-dynamic" and variant == "shipped" and ours.kind == "fault"
            and ours.where == LOADER_DISPATCH):
        # The pre-fix shim reads a count out of bounds of the argument buffer, or takes half an
        # address for one (x86_64: a ref's type word; its value moves with ASLR), and IREE's own
        # bounds check then happens to fail on what it read: ireeabi refuses the read instead.
        assert theirs == Outcome("status", theirs.stdout, "INVALID_ARGUMENT", LOADER_DISPATCH), str(theirs)
        return "pre-fix loader reads out of bounds"
    if theirs.kind == ours.kind == "ok" and _only_nan_signs_differ(theirs.stdout, ours.stdout):
        # A NaN an invalid operation makes (inf - inf, 0 * inf): x86's default NaN has its sign
        # bit set (-NAN), ARM's not (NAN). IREE's VM and vmvx compute on the target's FPU,
        # ireeabi's interpreter on the host's.
        assert target in ("armv7", "aarch64") and model in INTERPRETED_MODELS, (target, model)
        return "default NaN sign"
    raise AssertionError(f"{target} {model} ({variant}) {cid}: IREE {theirs}, ireeabi {ours}\n"
                         f"IREE:\n{theirs.stdout[-1500:]}\nireeabi:\n{ours.stdout[-1500:]}")


def pre_fix_kind(theirs: Outcome) -> str:
    """What PRE_FIX records of IREE's outcome: "crash" for a fault signal (which one depends on
    the stack words the kernel takes for binding pointers: SIGBUS where one is misaligned for a
    vector load, SIGSEGV where it points nowhere), "wrong results" for a run that printed results
    (the fixed runtime's differ), else the status and import."""
    if theirs.kind == "signal" and theirs.code in ("SIGBUS", "SIGSEGV"):
        return "crash"
    return "wrong results" if theirs.kind == "ok" else str(theirs)


_TOKEN = re.compile(r"-?[\w.+]+|[^\w\s]")


def _only_nan_signs_differ(theirs: str, ours: str) -> bool:
    """True when the two texts differ, and only where IREE prints a NaN positive (`NAN`, `nan`)
    that ireeabi prints negative."""
    a, b = _TOKEN.findall(theirs), _TOKEN.findall(ours)
    pairs = [(x, y) for x, y in zip(a, b) if x != y]
    return len(a) == len(b) and bool(pairs) and all(
        x.lower() == "nan" and y.lower() == "-nan" for x, y in pairs)


LOADER_DISPATCH = "hal_loader.executable.dispatch"
# IREE's process dies by a signal where ireeabi refuses with IreeFaultError (its error says what
# IREE reads and where it faults): the project's model of a crash, counted apart from agreement.
FAULT_REFUSED = "IREE dies, ireeabi refuses"


# --------------------------------------------------------------------------------------------------
# The tests

@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("target", iree_oracle.TARGETS)
def test_ireeabi_runs_as_iree_runs(target, model):
    """Every corpus case on `target` in `model`: identical outcomes, or exactly an explained
    difference; every PRE_FIX entry of the target is met."""
    seen: dict[str, list[str]] = {}
    for variant, legacy in runs(model):
        for case in cases_for(model, target):
            path = compiled(case, model, target)
            theirs = iree_outcome(target, variant, path, case)
            ours, _ = ireeabi_outcome(target, path, case, legacy)
            why = explain(target, model, variant, case, theirs, ours)
            seen.setdefault(why or "identical", []).append(f"{variant} {case_id(case)}")
    if model == "inline-dynamic":
        listed = {cid for t, cid in PRE_FIX if t == target}
        met = {entry.split()[1] for why, entries in seen.items() for entry in entries
               if entry.startswith("shipped ")} & listed
        assert met == listed, f"PRE_FIX entries not met on {target}: {sorted(listed - met)}"
    assert "identical" in seen, seen


@pytest.mark.parametrize("target,program", sorted(NOT_COMPILED))
def test_not_compiled(target, program):
    """The kernels left out on a target: iree-compile 3.13 fails to link them there."""
    case = next(c for c in CORPUS if c.name == program)
    with pytest.raises(tools.IreeToolError, match=f"undefined symbol: {NOT_COMPILED[target, program]}"):
        compiled(case, "llvm-cpu", target)


@pytest.mark.parametrize("model", LLVM_CPU_MODELS)
def test_a_target_free_module_is_every_targets_compile(model):
    """compiled()'s premise, on armv7 (32-bit, the most flags of the targets): each corpus program
    whose host compile is kernel-target free compiles to the same bytes for armv7; the programs
    with kernels are not target free (their modules differ by target)."""
    free = {c.source: c for c in cases_for(model, HOST)
            if e2e_corpus.kernel_target_free(compiled(c, model, HOST))}
    # async-external's exports take fences: every module of it imports the hal module.
    expected = [] if model.startswith("async-external") else ["io_types"]
    assert [s.stem for s in free] == expected, sorted(s.stem for s in free)
    for case in free.values():
        armv7 = tools.compile_with_flags(case.source, compile_flags(model, "armv7", HOST) + case.flags)
        assert armv7.read_bytes() == compiled(case, model, HOST).read_bytes(), (model, case.name)
    add16 = CORPUS[0]
    assert add16.name == "add16"
    assert compiled(add16, model, "armv7").read_bytes() != compiled(add16, model, HOST).read_bytes()


def test_armv7_pre_fix_dispatch_dies_by_a_signal():
    """The issue's acceptance case: add16's inline-dynamic dispatch on armv7. IREE's shipped
    runtime dies by a signal (the kernel reads binding pointers from the empty array the misread
    count of 0 gave it); `ireeabi run --legacy-loader` refuses the dispatch with exit 1, naming the
    misread counts and the fault; the fixed
    runtime and plain `ireeabi run` print the same results."""
    case = CORPUS[0]
    assert case.name == "add16"
    path = compiled(case, "inline-dynamic", "armv7")
    theirs = iree_outcome("armv7", "shipped", path, case)
    assert theirs.kind == "signal" and theirs.code in ("SIGBUS", "SIGSEGV"), str(theirs)
    ours, err = ireeabi_outcome("armv7", path, case, legacy=True)
    assert ours.kind == "fault" and ours.where == LOADER_DISPATCH, err
    said = " ".join(err.split())
    assert "reads constant_count 3 at byte 32" in said and "binding_count 0" in said, said
    assert "IREE's own runtime faults there" in said, said
    assert ours.stdout == theirs.stdout == "EXEC @add\n"
    fixed = iree_outcome("armv7", "fixed", path, case)
    assert fixed.kind == "ok" and fixed == ireeabi_outcome("armv7", path, case, legacy=False)[0]
    assert fixed.stdout.endswith("16xf32=3 3 3 3 3 3 3 3 3 3 3 3 3 3 3 3\n")


# The e2e programs' extra cases below are compiled as the corpus compiles them (e2e_corpus.F64: f64
# stays f64): the same modules the corpus's cases run, no compile of their own.
F64 = e2e_corpus.F64

# Integer inputs IREE parses with strtol / strtoul, whose `long` is the target's: texts past 32 bits
# wrap on LP64 and are out of range on ILP32 (i386, armv7). The scalar path and both tensor paths
# (numpy's slices, the C library's tokens) of ireeabi's parser, against each target's runtime.
LONG_CASES = [
    Case(e2e_corpus.E2E / "io_types.mlir", "i32s", ("0xffffffff",), F64),
    Case(e2e_corpus.E2E / "io_types.mlir", "i32s", ("-2147483649",), F64),
    Case(e2e_corpus.E2E / "io_types.mlir", "ti8", ("2xi8=4294967295 1",), F64),
    Case(e2e_corpus.E2E / "io_types.mlir", "ti16", ("3xi16=-4294967295 7 0x10",), F64),
    Case(e2e_corpus.E2E / "int_ops.mlir", "mix", ("8xi32=4294967295", "8xi32=2147483647"), F64),
]


@pytest.mark.parametrize("target", ["x86_64", "armv7"])
def test_count_flag_reads_with_the_targets_long(target):
    """--output_max_element_count=4294967296: atoi (strtol) wraps it to 0 on LP64 (no element
    printed) and saturates it at LONG_MAX on ILP32 (all printed): ireeabi prints as each does."""
    case = Case(e2e_corpus.E2E / "io_types.mlir", "tf32", ("3xf32=1 2 3",), F64)
    path = compiled(case, "inline-static", target)
    flag = "--output_max_element_count=4294967296"
    run = tools.run_tool([*iree_oracle.oracle_argv(target, "shipped"), "--device=local-sync",
                          f"--module={path}", "--function=tf32", "--input=3xf32=1 2 3", flag], timeout=600)
    assert run.returncode == 0, run.stderr
    out, err = io.StringIO(), io.StringIO()
    rc = main(["run", str(path), f"--target={target}", "--function=tf32", "--input=3xf32=1 2 3", flag],
              stdout=out, stderr=err)
    assert (rc, out.getvalue()) == (0, run.stdout), err.getvalue()
    assert run.stdout.endswith("3xf32=1 2 3\n" if target == "armv7" else "3xf32=...\n"), run.stdout


# NaNs passed through and printed: IREE prints an f32 (and f16, widened to f32) through C's float ->
# double promotion, which on RISC-V (fcvt.d.s) makes every NaN the positive canonical one; x86 and
# ARM keep the sign; an f64 is printed as it is everywhere.
NAN_CASES = [
    Case(e2e_corpus.E2E / "io_types.mlir", "f32s", ("-nan",), F64),
    Case(e2e_corpus.E2E / "io_types.mlir", "f64s", ("-nan",), F64),
    Case(e2e_corpus.E2E / "io_types.mlir", "tf16", ("3xf16=-nan nan -inf",), F64),
    Case(e2e_corpus.E2E / "io_types.mlir", "tf32", ("2xf32=-nan 1",), F64),
]


@pytest.mark.parametrize("target", iree_oracle.TARGETS)
def test_nan_signs_print_as_the_target_prints_them(target):
    """Each NAN_CASES case (inline-static) prints what the target's own runtime prints (or fails
    as it does: i386's tensor functions stop at hal_inline.buffer_view.assert); the f32 -nan keeps
    its sign except on riscv64, the f64 one everywhere (an f64 as f64: the corpus's compile)."""
    for case in NAN_CASES:
        path = compiled(case, "inline-static", target)
        theirs = iree_outcome(target, "shipped", path, case)
        ours, err = ireeabi_outcome(target, path, case, legacy=False)
        assert ours == theirs, (target, case.function, case.inputs, str(theirs), str(ours), err)
        if case.function == "f32s":
            assert theirs.stdout.endswith("f32=nan\n" if target == "riscv64" else "f32=-nan\n"), theirs.stdout
        if case.function == "f64s":
            assert theirs.stdout.endswith("f64=-nan\n"), theirs.stdout


def test_pre_fix_bounds_check_that_wraps_says_so():
    """armv7 scalars.wide (first case), --legacy-loader: the shim reads constants[1]'s word
    0x3fe00000 as the binding count; IREE's runtime answers "too many bindings" (its check wrapped
    past 2^32); ireeabi's buffer lies low, the same check fails there, and its error says at which
    address IREE's would pass and what IREE then answers."""
    case = next(c for c in CORPUS if case_id(c) == "scalars.wide.0")
    path = compiled(case, "inline-dynamic", "armv7")
    theirs = iree_outcome("armv7", "shipped", path, case)
    assert (theirs.kind, theirs.code, theirs.where) == ("status", "RESOURCE_EXHAUSTED", LOADER_DISPATCH)
    ours, err = ireeabi_outcome("armv7", path, case, legacy=True)
    said = " ".join(err.split())
    assert (ours.code, ours.where) == ("INVALID_ARGUMENT", LOADER_DISPATCH), said
    assert "binding_count 1071644672 at byte 36" in said and "at or above 0x3000000" in said, said
    assert "RESOURCE_EXHAUSTED, too many bindings" in said, said


@pytest.mark.parametrize("target", iree_oracle.TARGETS)
def test_integer_inputs_parse_with_the_targets_long(target):
    """Each LONG_CASES case (inline-static) ends as the target's own runtime ends it: results, or
    the same status at the same import (i386 reaches hal_inline.buffer_view.assert when the inputs
    parse); the ILP32 targets refuse every text past 32 bits, the LP64 ones wrap them."""
    ends = []
    for case in LONG_CASES:
        path = compiled(case, "inline-static", target)
        theirs = iree_outcome(target, "shipped", path, case)
        ours, err = ireeabi_outcome(target, path, case, legacy=False)
        assert ours == theirs, (target, case.function, case.inputs, str(theirs), str(ours), err)
        ends.append(theirs.kind == "status" and theirs.where is None)  # a parse failure
    assert ends == [target in ILP32] * len(LONG_CASES), (target, ends)


@pytest.mark.parametrize("target", iree_oracle.TARGETS)
def test_fixed_variant_rebuilt_only_the_loader(target):
    """The fixed oracle differs from the shipped one by the loader patch only: its build compiled
    loader/module.c and nothing else, and the two binaries differ."""
    paths = iree_oracle.build(target)
    record = json_record(paths["fixed"])
    assert record["compiled"] == ["runtime/src/iree/modules/hal/loader/module.c"], record["compiled"]
    assert paths["fixed"].read_bytes() != paths["shipped"].read_bytes()


def test_fixed_variant_changes_only_the_dispatch_shim():
    """answering_variant's premise: every hunk of the loader fix lies inside iree_vm_shim_dispatch_v
    of the snapshot's loader/module.c, and the only export whose shim that is (exports.inl's
    EXPORT_FN(name, target, dispatch, ..., v)) is executable.dispatch."""
    folder = iree_oracle.source_tree("x86_64") / "runtime/src/iree/modules/hal/loader"
    lines = (folder / "module.c").read_text().splitlines()
    start = next(i for i, line in enumerate(lines, 1)
                 if line.startswith("static iree_status_t iree_vm_shim_dispatch_v("))
    end = next(i for i, line in enumerate(lines, 1) if i > start and line == "}")
    hunks = [(int(a), int(n)) for a, n in
             re.findall(r"^@@ -(\d+),(\d+) ", iree_oracle.FIX_PATCH.read_text(), re.M)]
    assert hunks and all(start < first and first + count <= end for first, count in hunks), \
        (start, end, hunks)
    exports = re.findall(r'^EXPORT_FN\("([\w.]+)",\s*\w+,\s*(\w+),\s*\w+,\s*(\w+)\)',
                         (folder / "exports.inl").read_text(), re.M)
    assert len(exports) > 1, exports
    assert [name for name, shim, ret in exports if (shim, ret) == ("dispatch", "v")] == \
        [LOADER_DISPATCH.split(".", 1)[1]], exports


def json_record(binary: Path) -> dict:
    import json
    return json.loads((binary.parent / "build.json").read_text())


# --------------------------------------------------------------------------------------------------
# The counts of docs/findings.md

def summary(targets: "tuple[str, ...]" = iree_oracle.TARGETS) -> dict:
    """{(target, model, variant): Counter of outcomes}: "identical" (both succeed, same bytes),
    "same failure" (same status at the same import), or the name of the explained difference;
    and the failing imports of the cases that fail on both sides."""
    from collections import Counter
    counts: dict = {}
    failing: dict = {}
    for target in targets:
        for model in MODELS:
            for variant, legacy in runs(model):
                c = counts.setdefault((target, model, variant), Counter())
                for case in cases_for(model, target):
                    path = compiled(case, model, target)
                    theirs = iree_outcome(target, variant, path, case)
                    ours, _ = ireeabi_outcome(target, path, case, legacy)
                    why = explain(target, model, variant, case, theirs, ours)
                    if why is None:
                        why = "identical" if theirs.kind == "ok" else "same failure"
                        if theirs.kind != "ok":
                            failing.setdefault((target, model, variant, str(theirs)), []).append(case_id(case))
                    c[why] += 1
    return {"counts": counts, "failing": failing}


if __name__ == "__main__":  # PYTHONPATH=tests python tests/tooling/test_oracle_differential.py [TARGET ...]
    result = summary(tuple(sys.argv[1:]) or iree_oracle.TARGETS)
    for key, c in result["counts"].items():
        print(*key, dict(c))
    for key, cases in result["failing"].items():
        print(*key, len(cases), " ".join(sorted(set(c.rsplit(".", 1)[0] for c in cases))))
