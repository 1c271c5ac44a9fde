"""vm.yield and yieldable calls as IREE's VM runs them (vm/bytecode/ops_control.py, context.py's
`Invocation`), and IREE's `yieldable_test` native module (modules/yieldable_test).

The programs are VM assembly written for these tests (tests/programs/vm/yield/*.vmasm), assembled by
iree-as-module. The expected values come from IREE's sources:

- runtime/src/iree/vm/bytecode/dispatch.c: vm.yield takes its branch (operands remapped), then the
  dispatch returns DEFERRED; a resume goes on in the innermost frame at that target. A
  vm.call.yieldable of an internal function continues the caller at the resume block when the
  callee returns (however many times the callee yielded); of an import, it begins the call, and
  while the import returns DEFERRED the instruction runs again on each resume, resuming the import;
  when it is done its results land and the caller goes on at the resume block. A plain vm.call of
  an import with results that yields is UNIMPLEMENTED ("yield in imports with results not
  supported").
- runtime/src/iree/vm/testing/yieldable_test_module.h: yield_n(a, n) sets counter = n and
  accumulator = a; the begin and every resume yield while counter > 0 (accumulator + 1, counter -
  1), else return the accumulator. So it yields max(n, 0) times and returns a + max(n, 0);
  yield_variadic_sum(v..., n) the same with accumulator = sum(v).
- runtime/src/iree/vm/testing/test_runner.h: the runner resumes until the status is not DEFERRED,
  at most 10000 times, then fails with RESOURCE_EXHAUSTED "resume limit (10000) exceeded for
  function '<name>'; possible infinite yield loop".

Each call that yields suspends the whole stack once, so `Invocation.resumes` (the resumes a call
took) is the number of yields the derivations count. iree-run-module is an oracle only for calls
that never yield at run time: it has no yieldable_test module, and it never finishes a call that
yields (iree_vm_invoke's resume returns DEFERRED again without running when no wait frame is on the
stack: it spins).

Every case runs on the host and on riscv32 (the data model of the argument buffers and shims), on
the reference path (per-instruction handlers) and the fast path (compiled blocks), and the two
paths must agree exactly (results, resume counts, error texts).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from support.iree_tools import assemble_vmasm, run_module
from ireeabi.abi.errors import IreeAbiError
from ireeabi.cli.main import main
from ireeabi.layouts import module_sources
from ireeabi.modules.yieldable_test import YIELDABLE_TEST_MODULE
from ireeabi.tooling.program import Program, RunOptions
from ireeabi.vm.errors import InvocationStateError, VmFailError, VmStatusError
from ireeabi.base.status import StatusCode, StatusError
from ireeabi.vm.invocation import TEST_RUNNER_MAX_RESUMES

PROGRAMS = Path(__file__).resolve().parents[2] / "programs" / "vm" / "yield"
TARGETS = [None, "riscv32"]
TARGET_IDS = ["host", "riscv32"]


@pytest.fixture(scope="module")
def vmfb(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("yield")
    return {name: assemble_vmasm(PROGRAMS / f"{name}.vmasm", out)
            for name in ("yield_loop", "yield_imports")}


def _plus(a: int, n: int) -> int:
    """What yield_n(a, n) returns: a + max(n, 0) (its yields add 1 each)."""
    return a + max(n, 0)


# (program, function, arguments, results, yields), each derived in its comment.
CASES = [
    # count_yields(n): one yield per loop iteration, n iterations for n > 0; returns n.
    ("yield_loop", "count_yields", (5,), [5], 5),
    ("yield_loop", "count_yields", (0,), [0], 0),
    ("yield_loop", "count_yields", (-3,), [0], 0),
    # triangle(n) = 1 + ... + n (i64), one yield per addition.
    ("yield_loop", "triangle", (6,), [21], 6),
    ("yield_loop", "triangle", (100000,), [100000 * 100001 // 2], 100000),
    # a stored value survives 3 yields.
    ("yield_loop", "buffer_across_yields", (-123456, 3), [-123456], 3),
    # inner(x) = x + 10 + 10 + 1 with two yields; outer_call = 2 * inner through a plain call.
    ("yield_loop", "outer_call", (1,), [2 * (1 + 21)], 2),
    # outer_yieldable = inner + 1000 (its resume block), never bb1's -1.
    ("yield_loop", "outer_yieldable", (7,), [7 + 21 + 1000], 2),
    # two_levels: a yield, outer_yieldable (2 yields), outer_call of that (2 yields).
    ("yield_loop", "two_levels", (1,), [2 * ((1 + 21 + 1000) + 21)], 1 + 2 + 2),
    ("yield_loop", "fail_after_yield", (0,), [0], 1),
    # skip_ahead = plus_one + 100 at the resume block (iree-run-module agrees: test below).
    ("yield_loop", "skip_ahead", (5,), [106], 0),
    ("yield_imports", "yield_n", (4, 3), [_plus(4, 3)], 3),
    ("yield_imports", "yield_n", (4, 0), [4], 0),
    ("yield_imports", "yield_n", (4, -3), [4], 0),
    ("yield_imports", "yield_n", (-50, 40), [_plus(-50, 40)], 40),
    # sums(a, b, c, n) = (a + b + c + n) + (0 + n), each sum yielding n times.
    ("yield_imports", "sums", (1, 2, 3, 4), [(1 + 2 + 3 + 4) + 4], 8),
    ("yield_imports", "sums", (10, 20, 30, 0), [60], 0),
    ("yield_imports", "sums", (-1, -2, -3, -2), [-6], 0),
    # chained(a, m, n) = yield_n(yield_n(a, m), n).
    ("yield_imports", "chained", (1, 2, 3), [_plus(_plus(1, 2), 3)], 5),
    # mixed(a, n) = yield_n(a + 100, n) + 100 between two yields of its own: a + n + 200, n + 2
    # yields; callee_mixed runs it twice (yieldable call, plain call) and adds the results.
    ("yield_imports", "callee_mixed", (5, 2), [2 * (5 + 2 + 200)], 2 * (2 + 2)),
    ("yield_imports", "callee_mixed", (-9, 0), [2 * (-9 + 200)], 2 * 2),
    # a plain vm.call of an import that does not yield: an ordinary call.
    ("yield_imports", "plain_call", (3, 0), [3], 0),
]
CASE_IDS = [f"{fn}{args}" for _, fn, args, _, _ in CASES]


def _outcome(path: Path, function: str, args: tuple, target, reference: bool) -> tuple:
    """(results, resumes, how the begin left the call) or (error type, text): all a path shows."""
    with Program(path, RunOptions(target=target, reference=reference)) as prog:
        try:
            inv = prog.context.begin(function, *args)
            began_deferred = inv.deferred
            results = inv.finish()
            return ("ok", results, inv.resumes, began_deferred)
        except IreeAbiError as e:
            return ("error", type(e).__name__, str(e))


@pytest.mark.parametrize("reference", [True, False], ids=["reference", "fast"])
@pytest.mark.parametrize("target", TARGETS, ids=TARGET_IDS)
@pytest.mark.parametrize("program, function, args, results, yields", CASES, ids=CASE_IDS)
def test_results_and_yields(vmfb, program, function, args, results, yields, target, reference):
    """Each call's results and the resumes it takes (its yields), through begin/resume and through
    Program.call (which resumes until done, as IREE's runner does)."""
    kind, got, resumes, began_deferred = _outcome(vmfb[program], function, args, target, reference)
    assert (kind, got, resumes, began_deferred) == ("ok", results, yields, yields > 0)
    with Program(vmfb[program], RunOptions(target=target, reference=reference)) as prog:
        assert [int(v) for v in prog.call_results(function, *args)] == results


@pytest.mark.parametrize("target", TARGETS, ids=TARGET_IDS)
def test_the_paths_agree(vmfb, target):
    """Reference and fast path: the same results, resume counts and failures, case by case (the
    failing ones included); the fast path does run compiled blocks."""
    extra = [("yield_loop", "fail_after_yield", (1,)), ("yield_imports", "plain_call", (3, 2))]
    for program, function, args in [c[:3] for c in CASES] + extra:
        seen = [_outcome(vmfb[program], function, args, target, reference)
                for reference in (True, False)]
        assert seen[0] == seen[1], (function, args)
    with Program(vmfb["yield_imports"], RunOptions(target=target)) as fast, \
            Program(vmfb["yield_imports"], RunOptions(target=target, reference=True)) as ref:
        def blocks(prog):
            return sum(entry[0].__code__.co_filename.startswith("<block")
                       for fn in prog.context.compile_all() for entry in fn.code)
        assert blocks(fast) > 0 and blocks(ref) == 0


def test_resume_step_by_step(vmfb):
    """begin runs to the first yield; each resume to the next; results only at the end; a resume
    of a finished call fails as IREE's dispatch_resume does on an empty stack."""
    with Program(vmfb["yield_loop"]) as prog:
        inv = prog.context.begin("count_yields", 3)
        assert inv.deferred and inv in prog.context.suspended
        with pytest.raises(InvocationStateError, match="'count_yields': the call has yielded"):
            inv.results
        assert [inv.resume() for _ in range(3)] == [False, False, True]
        assert not inv.deferred and inv.results == [3] and inv not in prog.context.suspended
        with pytest.raises(VmStatusError) as e:
            inv.resume()
        assert e.value.code == StatusCode.FAILED_PRECONDITION
        assert e.value.detail == "no frame at top of stack to resume"
        done = prog.context.begin("count_yields", 0)
        assert not done.deferred and done.results == [0] and done.resumes == 0


@pytest.mark.parametrize("reference", [True, False], ids=["reference", "fast"])
def test_a_failure_after_a_yield(vmfb, reference):
    """vm.fail after a resume: the program's status (9, its message), located at the fail; the
    call is over."""
    with Program(vmfb["yield_loop"], RunOptions(reference=reference)) as prog:
        inv = prog.context.begin("fail_after_yield", 1)
        assert inv.deferred
        with pytest.raises(VmFailError) as e:
            inv.resume()
        assert (e.value.code, e.value.detail, e.value.function) == (
            StatusCode.FAILED_PRECONDITION, "failed after a yield", "fail_after_yield")
        assert not inv.deferred and inv not in prog.context.suspended
        with pytest.raises(InvocationStateError, match="did not finish"):
            inv.results


def test_a_yielding_import_through_a_plain_call_is_unimplemented(vmfb):
    """dispatch.c's iree_vm_bytecode_issue_import_call: an import with results that yields under a
    plain vm.call cannot be resumed."""
    with Program(vmfb["yield_imports"], RunOptions(target="riscv32")) as prog:
        with pytest.raises(VmStatusError) as e:
            prog.call("plain_call", 3, 2)
        assert e.value.code == StatusCode.UNIMPLEMENTED
        assert e.value.detail.startswith("yield in imports with results not supported")


@pytest.mark.parametrize("reference", [True, False], ids=["reference", "fast"])
def test_a_step_budget_spans_the_resumes(vmfb, reference):
    """max_steps bounds the whole call, across its resumes: count_yields runs at least 4
    instructions per iteration and yield, so 1000 iterations exceed 2000 steps although each
    resume runs only a few; 10 iterations fit. A call that yields forever ends at its budget."""
    with Program(vmfb["yield_loop"], RunOptions(max_steps=2000, reference=reference)) as prog:
        assert int(prog.call("count_yields", 10)) == 10
        for function, args in (("count_yields", (1000,)), ("spin", ())):
            with pytest.raises(VmStatusError) as e:
                prog.call(function, *args)
            assert e.value.code == StatusCode.DEADLINE_EXCEEDED
            assert e.value.detail == "the call ran 2000 instructions, its max_steps budget"
        assert not prog.context.suspended


def test_the_test_runners_resume_limit(vmfb):
    """A call that yields forever, finished with IREE's VM test runner's bound: RESOURCE_EXHAUSTED
    after 10000 resumes, with the runner's message; the call is aborted."""
    assert TEST_RUNNER_MAX_RESUMES == 10000
    with Program(vmfb["yield_loop"]) as prog:
        inv = prog.context.begin("spin")
        with pytest.raises(VmStatusError) as e:
            inv.finish(TEST_RUNNER_MAX_RESUMES)
        assert e.value.code == StatusCode.RESOURCE_EXHAUSTED
        assert e.value.detail == ("resume limit (10000) exceeded for function 'spin'; possible "
                                  "infinite yield loop")
        assert inv.resumes == 10000 and not inv.deferred and not prog.context.suspended
        short = prog.context.begin("count_yields", 4)
        assert short.finish(4) == [4]  # exactly the limit: allowed


@pytest.mark.parametrize("target", TARGETS, ids=TARGET_IDS)
def test_suspended_calls_release_their_references(vmfb, target):
    """A call left suspended holds its frames' references (a vm.buffer here): abort releases them,
    and closing the program aborts what is still suspended; the program's own heap then finds no
    leak (close raises LeakError otherwise)."""
    prog = Program(vmfb["yield_loop"], RunOptions(target=target))
    aborted = prog.context.begin("buffer_across_yields", 1, 2)
    left = prog.context.begin("buffer_across_yields", 2, 5)
    assert aborted.deferred and left.deferred and len(prog.context.suspended) == 2
    aborted.abort()
    assert not aborted.deferred and prog.context.suspended == {left}
    aborted.abort()  # idempotent
    prog.close()
    assert not left.deferred


def test_the_module_resumes_through_its_shim(vmfb):
    """NativeModule.call_ordinal(yieldable=True) and resume_ordinal: the export's shim with the
    BEGIN flag and the arguments, then with RESUME and none; DEFERRED until the count is spent."""
    with Program(vmfb["yield_imports"],
                 RunOptions(target="riscv32", modules=[YIELDABLE_TEST_MODULE])) as prog:
        module = prog.runtime.modules["yieldable_test"]
        yield_n, variadic = module.lookup("yield_n"), module.lookup("yield_variadic_sum")
        with pytest.raises(StatusError) as e:
            module.call_ordinal(yield_n, 40, 2, yieldable=True)
        assert e.value.code == StatusCode.DEFERRED
        with pytest.raises(StatusError):
            module.resume_ordinal(yield_n)
        assert module.resume_ordinal(yield_n) == [42]
        assert module.call_ordinal(variadic, [1, 2, 3], 0, yieldable=True) == [6]
        assert module.call_ordinal(yield_n, 7, -1) == [7]
        with pytest.raises(StatusError) as e:  # not a yieldable call: the VM cannot resume it
            module.call_ordinal(yield_n, 7, 1)
        assert e.value.code == StatusCode.UNIMPLEMENTED


def test_the_module_is_installed_as_iree_declares_it(vmfb):
    """The entry point declares IREE's descriptor (name, version 0, the two exports and cconvs);
    a program importing it runs without `modules=`, and --native-module names it too."""
    found = [d for d in module_sources.installed() if d.name == "yieldable_test"]
    assert len(found) == 1
    d = found[0]
    assert d.version == 0 and d.runnable
    assert sorted((e.name, e.cconv) for e in d.exports) == [("yield_n", "0ii_i"),
                                                            ("yield_variadic_sum", "0CiDi_i")]
    assert module_sources.load("ireeabi.modules.yieldable_test") == [YIELDABLE_TEST_MODULE]
    with Program(vmfb["yield_imports"]) as prog:
        assert "yieldable_test" in prog.runtime.modules


@pytest.mark.parametrize("function, value", [("skip_ahead", 5), ("count_yields", 0), ("triangle", 0)])
def test_calls_that_never_yield_match_iree_run_module(vmfb, function, value):
    """Where iree-run-module can finish (no yield at run time): its printed results, both paths."""
    expected = run_module(vmfb["yield_loop"], function, [str(value)])
    for reference in (True, False):
        with Program(vmfb["yield_loop"], RunOptions(reference=reference)) as prog:
            got = [int(v) for v in prog.call_results(function, value)]
        assert expected.splitlines()[-1].split("=")[-1] == str(got[0]), (expected, got, reference)


@pytest.mark.parametrize("target", ["riscv32", None], ids=["riscv32", "host"])
def test_ireeabi_run_resumes_until_done(vmfb, target, capsys):
    """`ireeabi run` on a program that yields prints its results (sums(1, 2, 3, 4) = 14 after 8
    yields), where iree-run-module would spin."""
    argv = ["run", str(vmfb["yield_imports"]), "--function=sums",
            *(f"--input={v}" for v in (1, 2, 3, 4))]
    if target:
        argv.append(f"--target={target}")
    assert main(argv) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "result[0]: i32=14"
