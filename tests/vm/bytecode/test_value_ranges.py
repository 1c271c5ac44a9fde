"""The loop regions' value ranges (vm/bytecode/value_ranges.py) and the code they let regions.py
write: integer ops without masks, divisions by divisors known positive with Python's operators,
values known negative held signed, i32 arguments speculated nonnegative (checked on entry),
loop-invariant adds hoisted.

Every fact is checked against what the reference path's registers hold when each instruction runs
(programs of index arithmetic, loops and the kernels of bench_kernels.py's index class); every
result of the fast path against the reference path's, on the host's data model and riscv32's
(errors with their text), and against iree-run-module's (test_interpreter.py runs
index_math.vm.mlir's calls against it; the kernels here). The structural tests name the code each
fact removes: they fail where the facts are not used.
"""
from __future__ import annotations

import linecache
import math
import re
import struct
from pathlib import Path

import numpy as np
import pytest

from support import iree_tools as tools
from ireeabi.abi.errors import IreeAbiError
from ireeabi.tooling.program import Program, RunOptions
from ireeabi.vm.bytecode import Context
from ireeabi.vm.bytecode import value_ranges
from ireeabi.vm.bytecode.buffer_factory import BufferFactory
from ireeabi.vm.bytecode.value_ranges import ValueRanges, speculated
from test_interpreter import host

KERNELS = Path(__file__).resolve().parents[2] / "programs" / "kernels"

# index_math.vm.mlir's calls: results (test_interpreter.py checks them against iree-run-module)
# and failures (division by zero, INT_MIN / -1, windows out of range and below IREE's bounds check)
CALLS = [("divs", (-50, 100)), ("divs", (5, 200)), ("divs", (2147483600, 100)), ("divs", (-2147483648, 60)),
         ("div_min", (-2147483648, 40)), ("div_min", (123456, 100)), ("div_min", (-7, 0)),
         ("div_steps", (-7, 1, 4)), ("div_steps", (2147483647, 3, 5)), ("div_steps", (5, -2, 5)),
         ("div_steps", (-2147483648, -1, 1)), ("div_steps", (-2147483648, -3, 2)), ("div_steps", (9, 0, 1)),
         ("edges", (3,)), ("edges", (-2147483648,)),
         ("window", (2, 10)), ("window", (0, 16)), ("window", (-5, 10)), ("window", (10, 10)),
         ("window32", (3, 4)), ("window32", (-1, 3)), ("window32", (-2147483648, 1)),
         ("strided", (7, 13)), ("strided", (-3, 5)), ("strided", (3, -5)),
         ("join", (-30, 20)), ("join", (30, 20)), ("join", (-2147483648, 3))]


def _outcome(call) -> tuple:
    try:
        return ("ok", call())
    except IreeAbiError as e:
        return ("error", type(e).__name__, str(e))


@pytest.mark.parametrize("target", [None, "riscv32"], ids=["host", "riscv32"])
def test_index_math_agrees_on_both_paths(target):
    """Fast path against reference path, the results or the error (type and text, function and
    pc): on riscv32, the index an i32 or i64 offset gives wraps at 2^32 (its size_t)."""
    path = host("index_math.vm.mlir")
    errors = {}
    with Context(path, reference=True, buffers=BufferFactory(target=target)) as ref, \
            Context(path, buffers=BufferFactory(target=target)) as fast:
        for function, args in CALLS:
            want = _outcome(lambda: ref.invoke(function, *args))
            got = errors[(function, args)] = _outcome(lambda: fast.invoke(function, *args))
            assert got == want, (function, args)
    errors = {k: v[1:2] for k, v in errors.items()}
    assert errors[("div_steps", (5, -2, 5))] == ("VmTrapError",)  # 5 / 0
    assert errors[("div_steps", (-2147483648, -1, 1))] == ("VmTrapError",)  # INT_MIN / -1
    assert errors[("window", (-5, 10))] == ("VmStatusError",)  # OUT_OF_RANGE, as IREE
    assert errors[("window32", (-1, 3))] == ("VmTrapError",)  # IREE reads before the buffer


# -- the facts hold where the reference path runs -------------------------------------------------

def _slot_value(regs: bytearray, first: int, n: int) -> int:
    return struct.unpack_from("<i" if n == 1 else "<q", regs, 4 * first)[0]


def _checked_run(ctx: Context, facts: dict, checked: list) -> None:
    """Wrap every handler of `ctx` (reference path: one per instruction) to check, before it runs,
    that each integer slot it reads holds a value in its interval, and after, its result."""
    for fn in ctx.compile_all():
        if fn.name not in facts or not fn.code:
            continue
        ranges = facts[fn.name]
        for i, (handler, payload, inst) in enumerate(fn.code):
            reads, result = ranges.reads.get(i, {}), ranges.result.get(i)
            out = None
            if result is not None:
                w = next(f for f in inst.op.fields if f.access == "write")
                out = (inst.operands[w.name].ordinal, 2 if w.kind in ("i64", "f64") else 1)

            def run(c, frame, p, _h=handler, _reads=reads, _result=result, _out=out, _i=i, _f=fn.name):
                for (first, n), (lo, hi) in _reads.items():
                    v = _slot_value(frame.regs, first, n)
                    assert lo <= v <= hi, (_f, _i, (first, n), v, (lo, hi))
                    checked[0] += 1
                got = _h(c, frame, p)
                if _result is not None and frame.fn.name == _f:
                    v = _slot_value(frame.regs, *_out)
                    assert _result[0] <= v <= _result[1], (_f, _i, _out, v, _result)
                    checked[0] += 1
                return got
            fn.code[i] = (run, payload, inst)


@pytest.mark.parametrize("program, calls", [
    ("index_math.vm.mlir", CALLS),
    ("loops.vm.mlir", [("nested", (-3, 4)), ("nested", (5, 2)), ("widths", (9, 30000)), ("widths", (300, -77)),
                       ("handlers", (6, 250)), ("oob", (3,)), ("select_loop", (-1082130432, -65536, 0.5, 6))]),
    ("control.mlir", [("sum_squares", (10,)), ("sum_squares", (-3,)), ("collatz", (27,))]),
    ("divrem.mlir", [("div_i32", (-7, 2)), ("div_i64", (-9223372036854775808, 3)), ("floor_ceil", (-7, 2))]),
    ("buffer_ops.mlir", [("itoa", (1234567,)), ("itoa", (-1,)), ("switches", (-1, 9))])])
def test_facts_hold_where_the_reference_path_runs(program, calls):
    """Each fact, sound (any arguments) or speculated (i32 arguments nonnegative, for calls whose
    i32 arguments are), holds for the value each instruction reads and writes on the reference
    path: the interval contains it."""
    path = host(program)
    for function, args in calls:
        for assume in (False, True):
            with Context(path, reference=True) as ctx:
                fn = next(f for f in ctx.compile_all() if f.name == function)
                if assume:
                    i32_args = [a for a, c in zip(args, [c for c in fn.cconv_args if c in "iIfFr"]) if c == "i"]
                    if any(a < 0 for a in i32_args):
                        continue
                facts = {}
                for f in ctx.compile_all():
                    if f.code:
                        sound, spec, _ = speculated(f, f.code)
                        facts[f.name] = spec if assume else sound
                checked = [0]
                _checked_run(ctx, facts, checked)
                _outcome(lambda: ctx.invoke(function, *args))
                assert checked[0] > 0 or not facts[function].reads, (function, args)


def test_the_facts_are_tight_enough_to_use():
    """What the analysis must know for the kernels' index math: loop counters within their bounds,
    a remainder by a constant within its magnitude, a trunc of a counter exact, the address of a
    store within the buffer (index_reduce's 64x1024x256 generator, inline-static)."""
    path = tools.compile_mlir(KERNELS / "index_reduce.mlir", tools.session_dir(), "inline-static")
    with Program(path.read_bytes(), RunOptions(reference=True)) as prog:
        fn = next(f for f in prog.context.compile_all() if f.name == "index_reduce")
        ranges = ValueRanges(fn, fn.code)
        assert not ranges.given_up
        by_op: dict[str, list] = {}
        for i, (_, _, inst) in enumerate(fn.code):
            if i in ranges.result:
                by_op.setdefault(inst.op.symbol, []).append(ranges.result[i])
        assert (0, 255) in by_op["RemI64S"] and (0, 12) in by_op["RemI64S"]  # x % 256, x % 13
        assert (-14, 22) in by_op["DivI32S"]  # (k - 100) / 7 for k in [0, 255]
        stores = [ranges.reads[i] for i, (_, _, inst) in enumerate(fn.code) if inst.op.symbol == "BufferStoreF32"]
        assert any(max(hi for _, hi in s.values()) == 64 * 1024 * 256 - 1 for s in stores)


def test_over_budget_the_analysis_gives_no_facts_and_the_region_still_agrees(monkeypatch):
    """The analysis stops after a number of instruction visits proportional to the function's
    length: past it, no facts (every op masked and converted, as without the analysis)."""
    monkeypatch.setattr(value_ranges, "_BUDGET", 0)
    monkeypatch.setattr(value_ranges, "_MIN_BUDGET", 0)
    path = host("index_math.vm.mlir")
    with Context(path, reference=True) as ctx:
        fn = next(f for f in ctx.compile_all() if f.name == "divs")
        assert ValueRanges(fn, fn.code).given_up
    with Context(path, reference=True) as ref, Context(path) as fast:
        for function, args in CALLS[:8]:
            assert _outcome(lambda: fast.invoke(function, *args)) == _outcome(lambda: ref.invoke(function, *args))


# -- the code the facts remove ---------------------------------------------------------------------

def _region_sources(ctx: Context, function: str) -> list[str]:
    out = []
    for fn in ctx.compile_all():
        if fn.name != function:
            continue
        for run, _, _ in fn.code:
            if "locals region" in run.__code__.co_filename:
                # the generated text (abi/generated.py registers it; inspect.getsource would tokenize it)
                text = "".join(linecache.getlines(run.__code__.co_filename))
                if text not in out:
                    out.append(text)
    return out


def _tagged(sources: list[str], symbol: str) -> list[str]:
    return [line for text in sources for line in text.splitlines() if re.search(rf"  # \d+ {symbol}$", line)]


def test_divisions_by_known_positive_divisors_are_operators():
    """divs divides by 7, 13 and (i & 15) + 1, div_min by k + 1: no call of the division's
    function is left in their regions (a remainder of a negative dividend is the magnitude's,
    signed); div_steps divides by e + k, which may be 0 or -1: its function (which traps) stays."""
    with Context(host("index_math.vm.mlir")) as ctx:
        for function in ("divs", "div_min"):
            lines = [x for s in ("DivI32S", "RemI32S", "DivI64S", "RemI64S") for x in _tagged(_region_sources(ctx, function), s)]
            assert lines and not any(re.search(r"\bf\d+\(", x) for x in lines), (function, lines)
            assert any(" // " in x for x in lines) and any(" % " in x for x in lines)
        steps = _tagged(_region_sources(ctx, "div_steps"), "DivI32S")
        assert steps and all(re.search(r"\bf\d+\(", x) for x in steps if "= " in x and "k =" not in x)


def test_ops_known_not_to_wrap_have_no_mask():
    """edges' counters stop below the 64- and 32-bit maxima: their increments and the offsets from
    the start are written without a mask; the products (* 3) that wrap keep theirs."""
    with Context(host("index_math.vm.mlir")) as ctx:
        sources = _region_sources(ctx, "edges")
    adds = _tagged(sources, "AddI64")
    muls = _tagged(sources, "MulI64") + _tagged(sources, "MulI32")
    assert any("&" not in x for x in adds), adds
    assert muls and all("& " in x for x in muls), muls


def _count(ctx: Context, prefix: str) -> list:
    """Wrap every name bound with `prefix` in the region functions' namespaces with a counter."""
    calls = [0]
    seen = set()
    for fn in ctx.compile_all():
        for run, _, _ in fn.code:
            if "locals region" not in run.__code__.co_filename or id(run.__globals__) in seen:
                continue
            seen.add(id(run.__globals__))
            namespace = run.__globals__
            for key, value in list(namespace.items()):
                if key.startswith(prefix) and key[len(prefix):].isdigit() and callable(value):
                    def counted(*a, _f=value):
                        calls[0] += 1
                        return _f(*a)
                    namespace[key] = counted
    return calls


def test_negative_arguments_run_the_region_made_without_the_assumption():
    """divs' region assumes its i32 arguments nonnegative (value_ranges.speculated): entered with a
    negative start, its check sends the call to the region made without that assumption (made
    then), with the reference path's results; a nonnegative start stays in the first region."""
    path = host("index_math.vm.mlir")
    for start, other in ((5, 0), (-50, 1), (2147483600, 0), (-2147483648, 1)):
        with Context(path) as fast, Context(path, reference=True) as ref:
            assert "ua" in "".join(_region_sources(fast, "divs"))
            calls = _count(fast, "ua")
            assert fast.invoke("divs", start, 40) == ref.invoke("divs", start, 40)
            assert calls[0] == other, start


def test_a_block_only_a_negative_argument_reaches_runs_without_the_assumption():
    """join's negative argument goes through a call, after which the region is entered again at a
    block that nonnegative arguments never reach, and the loop it leads to divides the argument's
    value by 7: entered there, the region made without the assumption runs (the one made with it
    would divide a negative value with Python's floor division), as the reference path gives."""
    path = host("index_math.vm.mlir")
    with Context(path) as fast, Context(path, reference=True) as ref:
        calls = _count(fast, "ua")
        for args, entries in (((30, 20), 0), ((-30, 20), 2)):
            calls[0] = 0
            assert fast.invoke("join", *args) == ref.invoke("join", *args) == \
                [sum(int(args[0] / 7) + int(math.fmod(args[0], 7)) + k for k in range(args[1]))]
            assert calls[0] == entries, args  # the entry at the function's start, and after the call


def test_invariant_address_adds_leave_the_loop():
    """strided's inner loop computes (base + c) + offset with base and offset invariant in it: one
    add of c and their sum, the sum computed where the loop is entered (vmvx-inline's address
    arithmetic has this shape: iota_max's stores at (row + tile) + j)."""
    with Context(host("index_math.vm.mlir")) as fast, Context(host("index_math.vm.mlir"), reference=True) as ref:
        for args in ((7, 13), (1, 1), (0, 5), (-3, 5), (100, 3)):
            assert fast.invoke("strided", *args) == ref.invoke("strided", *args)
        sources = _region_sources(fast, "strided")
    hoisted = [x for text in sources for x in text.splitlines() if re.match(r"\s+H\d+_\d+ = ", x)]
    assert hoisted, "no invariant expression computed at a loop's entry"
    names = {x.split("=")[0].strip() for x in hoisted}
    assert any(name in x for x in _tagged(sources, "AddI64") for name in names)


# -- the index kernels -----------------------------------------------------------------------------

def _ints(n: int, dtype: str, k: int) -> np.ndarray:
    """n integers: the type's extremes and their neighbours first, then a ramp of both signs."""
    info = np.iinfo(dtype)
    edges = [info.min, info.max, info.min + 1, info.max - 1, -1, 0, 1]
    x = ((np.arange(n, dtype=np.int64) * (37 + 2 * k)) % 200 - 100).astype(dtype)
    x[:min(n, len(edges))] = np.roll(np.array(edges, dtype=dtype), k)[:n]
    return x


INDEX_KERNELS = [("index_reduce_small", "index_reduce", [((4,), "float32")]),
                 ("index_i64_small", "index_i64", [((3,), "int64"), ((40,), "int32")]),
                 ("iota_max_small", "iota_max", [((40,), "int32")])]


def _kernel_inputs(shapes: list, edges: bool) -> list:
    out = []
    for k, (shape, dtype) in enumerate(shapes):
        n = int(np.prod(shape))
        if dtype == "float32":
            out.append((np.arange(n, dtype=np.float32) * 0.75 - 1.5).reshape(shape))
        else:
            x = _ints(n, dtype, k)
            out.append((x if edges else np.clip(x, -100, 100).astype(dtype)).reshape(shape))
    return out


@pytest.mark.parametrize("model", ["inline-static", "vmvx"])
@pytest.mark.parametrize("target", [None, "riscv32"], ids=["host", "riscv32"])
@pytest.mark.parametrize("kernel, function, shapes", INDEX_KERNELS, ids=[k[0] for k in INDEX_KERNELS])
def test_index_kernels_agree(kernel, function, shapes, target, model, tmp_path):
    """bench_kernels.py's index class, small: fast path, reference path and (host) iree-run-module
    give the same bits; inputs with the types' extremes make the products and sums wrap. In their
    loop regions no division calls its function (the divisors are constants or an index + 1)."""
    path = tools.compile_mlir(KERNELS / f"{kernel}.mlir", tools.session_dir(), model)
    for edges in (False, True):
        inputs = _kernel_inputs(shapes, edges)
        outs = []
        for reference in (True, False):
            with Program(path.read_bytes(), RunOptions(target=target, reference=reference)) as prog:
                results = prog.call_results(function, *inputs)
                outs.append([r.tobytes() for r in results])
                if not reference:
                    sources = _region_sources(prog.context, function)
        assert outs[0] == outs[1]
        if target is None:
            files = []
            for k, x in enumerate(inputs):
                np.save(tmp_path / f"x{k}.npy", x)
                files.append(f"@{tmp_path / f'x{k}.npy'}")
            theirs = tools.run_module_results([path], function, files, len(outs[0]))
            assert [t.tobytes() for t in theirs] == outs[0]
    if model == "inline-static":
        divisions = [x for s in ("DivI32S", "RemI32S", "DivI64S", "RemI64S") for x in _tagged(sources, s)]
        assert divisions and not any(re.search(r"\bf\d+\(", x) for x in divisions), divisions
