"""A test costs the same whatever the size of its module (issue 41, item 3).

`ireeabi test` (both runners, and the pytest plugin's items, which call the same
tooling/vm_test_module.py and check_tests.py functions) makes a fresh context per test, as IREE's
runners do. What the interpreter derives from the module alone (its functions decoded and verified)
is done once per module; what a context compiles is what it runs, past the first context (which
compiles every function, as IREE's load refuses what compiling finds). Before that, each test
decoded, verified and compiled every function of the module: N tests cost N * N (a module of 1,000
trivial tests took 246 s of CPU). The work is counted here (decodes, compiled instructions), not
timed; benchmarks/bench_test_scaling.py shows the CPU curve.
"""
from __future__ import annotations

import io
import weakref
from pathlib import Path

import pytest

from support import iree_tools as tools
from ireeabi.cli.main import main
from ireeabi.vm.bytecode import module as bytecode_module

N = 120  # tests of the module: N * N decodes would be 14,400
FAILING = [i for i in range(N) if i % 10 == 3]  # fail_ tests


def _many_tests(path: Path, n: int) -> Path:
    """A VM test module of `n` tests, each calling one internal helper (a frame entered past load)
    and `fail_` tests failing in it."""
    lines = ["vm.module @many version 0", "vm.type i32", "",
             "vm.func @helper(%i0: i32) -> () {", "^bb0:", "  vm.cond_br %i0, ^bb1(), ^bb2()",
             "^bb1:", "  vm.return", "^bb2:", "  %i1 = vm.const.i32 9", '  vm.fail %i1, "helper"', "}", ""]
    for i in range(n):
        name = f"fail_{i}" if i in FAILING else f"test_{i}"
        flag = 0 if name.startswith("fail_") else 1
        lines += [f"vm.export @{name}", f"vm.func @{name}() -> () {{", "^bb0:",
                  f"  %i0 = vm.const.i32 {flag}", "  vm.call @helper(%i0)",
                  "  vm.return", "}", ""]
    path.write_text("\n".join(lines))
    return tools.assemble_vmasm(path)


@pytest.fixture(scope="module")
def many(tmp_path_factory) -> Path:
    return _many_tests(tmp_path_factory.mktemp("many") / "many.vmasm", N)


@pytest.mark.usefixtures("fresh_module_reads")  # counts what a module's first context compiles
@pytest.mark.parametrize("runner", ["vm", "check"])
def test_a_test_decodes_and_compiles_what_it_runs_not_the_whole_module(many, runner, monkeypatch):
    """Every function is decoded once for the run (N + 1 functions), and the instructions compiled
    are the first context's (the whole module) plus what each later test runs: its own function
    and the helper, a few instructions each, never the module again."""
    counts = {"decoded": 0, "compiled": 0}
    sizes: dict[str, int] = {}  # function -> instructions decoded (block markers included)
    decode, compile_instruction = bytecode_module.decode_function, bytecode_module.compile_instruction

    def decoding(code, name):
        counts["decoded"] += 1
        sizes[name] = len(found := decode(code, name))
        return found

    def compiling(*args, **kwargs):
        counts["compiled"] += 1
        return compile_instruction(*args, **kwargs)

    monkeypatch.setattr(bytecode_module, "decode_function", decoding)
    monkeypatch.setattr(bytecode_module, "compile_instruction", compiling)
    out, err = io.StringIO(), io.StringIO()
    rc = main(["test", str(many), "--runner", runner], stdout=out, stderr=err)
    # iree-check-module has no fail_ convention: those fail there (and end in the helper's fail)
    failing = 0 if runner == "vm" else len(FAILING)
    assert (rc, err.getvalue()) == (int(failing > 0), ""), out.getvalue()[-2000:]
    assert f"[  PASSED  ] {N - failing} tests." in out.getvalue()
    assert counts["decoded"] == N + 1 == len(sizes)  # once each (N + 1 per test before)
    # The first context compiles the module (the vm runner's load check, as bytecode_module_test
    # creates the module while it lists its tests; the check runner's first test); each later
    # test's context compiles its function and the helper. The helper is no export: the module
    # names it by its ordinal.
    (helper,) = [name for name in sizes if not name.startswith(("test_", "fail_"))]
    assert len({size for name, size in sizes.items() if name != helper}) == 1  # the tests alike
    later = N if runner == "vm" else N - 1
    each = (sum(sizes.values()) - sizes[helper]) // N + sizes[helper]
    assert counts["compiled"] == sum(sizes.values()) + later * each  # N * the module before



def test_the_layout_memo_keeps_a_bounded_weight_of_layouts():
    """`cconv.layout` memoizes instances; the memo kept 16,384 of any size (`check` of 2,000 spans on
    every target held 2.2 GB). Layouts of 300 spans laid out 500 times: those still alive once the
    caller dropped them are the memo's, within its weight of spans and values (all 500 before)."""
    from ireeabi.abi import cconv
    from ireeabi.abi.cconv import findings

    cconv.clear_caches()
    alive = []
    try:
        for k in range(500):
            counts = [(k >> (i % 9)) & 3 for i in range(300)]  # 500 distinct instances
            alive.append(weakref.ref(cconv.layout("CiD" * 300, "x86_64", counts)))
        kept = [r() for r in alive if r() is not None]
        assert 0 < len(kept) < 500
        assert sum(1 + len(lay.counts) + len(lay.findings) + len(lay.fragment.items) for lay in kept) \
            <= findings.MEMO_WEIGHT
    finally:
        cconv.clear_caches()


def test_check_keeps_the_layouts_of_its_findings_and_pictures_only():
    """`check` keeps one layout per finding's instance and the first of each target and side (the
    picture's fallback): the others are dropped as they are checked."""
    from ireeabi.abi.targets import TARGETS
    from ireeabi.cli import cmd_check
    from ireeabi.cli.resolve import require_cconv

    res = cmd_check.run(require_cconv("0CiDCiD_v"), list(TARGETS.values()), None)
    assert len(res.instances) > 2 * len(TARGETS)
    firsts = {}
    for inst in res.instances:
        firsts.setdefault((inst.target.name, inst.side), inst)
    for inst in res.instances:
        kept = inst.findings or firsts[inst.target.name, inst.side] is inst
        assert (inst.layout is not None) == bool(kept), (inst.target.name, inst.readers)


def test_main_in_process_makes_its_parser_once(monkeypatch):
    """`main` called again in one process (tests, tools) parses with the parser it made the first
    time for the same commands: no argparse parser is made again, and each call parses its own
    arguments (a usage error stays that call's)."""
    import argparse
    made = []
    real = argparse.ArgumentParser.__init__
    monkeypatch.setattr(argparse.ArgumentParser, "__init__",
                        lambda self, *a, **k: made.append(1) or real(self, *a, **k))
    out, err = io.StringIO(), io.StringIO()
    assert main(["layout", "iree_byte_span_t", "--target", "i386"], stdout=out, stderr=err) == 0
    first = len(made)
    out2, err2 = io.StringIO(), io.StringIO()
    assert main(["layout", "iree_byte_span_t", "--target", "x86_64"], stdout=out2, stderr=err2) == 0
    assert len(made) == first and out.getvalue() != out2.getvalue()
    assert main(["layout", "--no-such-option"], stdout=io.StringIO(), stderr=io.StringIO()) == 2
    assert main(["layout", "iree_byte_span_t", "--target", "i386"], stdout=(o := io.StringIO()),
                stderr=io.StringIO()) == 0 and o.getvalue() == out.getvalue()
