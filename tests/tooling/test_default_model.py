"""iree-compile's default execution model (the full `hal` module) against iree-run-module
--device=local-sync: the whole tests/programs/e2e corpus compiled with llvm-cpu kernels and with vmvx
kernels (tooling.execution_model.MODEL_FLAGS "llvm-cpu" / "vmvx"), run by iree-run-module and by
`ireeabi.tooling.Program` (the bytecode interpreter, every `hal.*` import packed and read by the
shims of modules/hal/module.py, every dispatch on the real kernel or, for vmvx, on the kernel's own
bytecode module). Output compared byte for byte; nothing may leak.
"""
from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pytest

from support import check_corpus as cc
from support import e2e_corpus as corpus
from support import iree_tools as tools
from support.e2e_corpus import CASES, F64, TESTS, ours
from ireeabi.cli.main import main
from ireeabi.tooling.execution_model import DEFAULT_MODELS, needs_full_hal
from ireeabi.tooling.program import KernelTargetError, Program, RunOptions
from ireeabi.base.heap import tracked_heap
from ireeabi.base.machine import host as host_machine
from ireeabi.vm.bytecode import VmStatusError, VmTrapError
from ireeabi.vm.bytecode.module_file import read_module


@pytest.fixture(scope="session")
def default_compiled() -> dict[tuple[str, str], Path]:
    """Every corpus program for both default-model kernel backends (compiled once per session)."""
    return corpus.compile_models(DEFAULT_MODELS)


@pytest.fixture(scope="module")
def default_programs(default_compiled):
    """One Program per (program, model) on one tracked heap; closing them must leave it empty."""
    yield from corpus.programs_on_one_heap(default_compiled)


def test_default_model_modules_import_the_full_hal(default_compiled):
    for (name, model), path in default_compiled.items():
        module = read_module(path)
        if name == "io_types":  # identity functions: no tensor work, no HAL at all
            assert not module.imported_functions
            continue
        assert needs_full_hal(module), (name, model)
        assert {"hal.command_buffer.dispatch", "hal.fence.await", "hal.devices.get"} <= \
            {f.full_name for f in module.imported_functions}, (name, model)


@pytest.mark.parametrize("model", DEFAULT_MODELS)
@pytest.mark.parametrize("name,function,inputs", CASES,
                         ids=[f"{n}.{f}.{i}" for i, (n, f, _) in enumerate(CASES)])
def test_output_matches_iree_run_module(default_compiled, default_programs, model, name, function, inputs):
    expected = corpus.iree_output(default_compiled[name, model], function, tuple(inputs))
    assert ours(default_programs(name, model), function, inputs) == expected


@pytest.mark.parametrize("model", DEFAULT_MODELS)
def test_mutable_globals_persist_across_calls(default_compiled, model):
    """counter.mlir: the globals live in the module state across calls, as in one iree-run-module
    context; the first value is iree-run-module's."""
    path = default_compiled["counter", model]
    steps = [5, -3, 1 << 40, 7]
    first = int(tools.run_module_results([path], "next", [str(steps[0])], 1)[0])
    start = first - steps[0]
    x = np.array([1, 2.5, -3, 0.125], np.float32)
    acc, = tools.run_module_results([path], "accumulate", ["4xf32=" + corpus._floats(x)], 1)
    with tracked_heap() as heap, Program(path, heap=heap) as p:
        values = [int(p.call("next", s)) for s in steps]
        assert values == [start + sum(steps[:k + 1]) for k in range(len(steps))]
        totals = [p.call("accumulate", x) for _ in range(3)]
        assert totals[0].tobytes() == acc.tobytes()
        np.testing.assert_array_equal(totals[2], 3 * x)


@pytest.mark.parametrize("model", DEFAULT_MODELS)
def test_cli_run_with_local_sync_and_local_task(default_compiled, model, capsys):
    """`ireeabi run --device=local-sync` (and local-task, the same single-threaded device) prints
    what iree-run-module --device=local-sync prints."""
    path = default_compiled["push_constants", model]
    inputs = ["5xf32=1,2,3,4,5", "2.5", "-1"]
    expected = tools.run_module(path, "affine", inputs)
    for device in ("local-sync", "local-task"):
        argv = ["run", f"--device={device}", f"--module={path}", "--function=affine",
                *(f"--input={i}" for i in inputs)]
        assert main(argv) == 0
        assert capsys.readouterr().out == expected


@pytest.mark.parametrize("model", DEFAULT_MODELS)
def test_division_by_zero(default_compiled, model):
    """trap.mlir with a zero divisor: iree-run-module crashes (SIGFPE in the kernel or the VM);
    ireeabi reports it and the program keeps working."""
    path = default_compiled["trap", model]
    proc = tools.run_module_failure([path], "div_scale", ["4xf32=1", "7", "0"])
    assert proc.stdout == "EXEC @div_scale\n"
    with tracked_heap() as heap, Program(path, heap=heap) as p:
        with pytest.raises((VmTrapError, VmStatusError)):
            p.call("div_scale", np.ones(4, np.float32), 7, 0)
        assert int(p.call("div_scale", np.ones(4, np.float32), 7, 2)[1]) == 3


def test_vmvx_runs_on_a_32_bit_data_model(default_compiled):
    """vmvx kernels are bytecode: the whole corpus runs on riscv32 (ILP32 structs and argument
    buffers) with iree-run-module's output, one program per file on one heap that ends empty."""
    with tracked_heap(target="riscv32") as heap:
        mark = heap.mark()
        programs: dict = {}
        try:
            for name, function, inputs in CASES:
                path = default_compiled[name, "vmvx"]
                p = programs.get(name) or programs.setdefault(name, Program(path, heap=heap))
                assert ours(p, function, inputs) == corpus.iree_output(path, function, tuple(inputs)), name
        finally:
            for p in programs.values():
                p.close()
        assert heap.leaks(mark) == []


def test_llvm_cpu_kernels_need_the_host(default_compiled):
    """Host machine code cannot run on another data model: the device's executable.format query
    answers no, the module's __init fails as IREE's does on a device without the format (no device
    matches), and Program adds which target runs the kernels."""
    path = default_compiled["elementwise", "llvm-cpu"]
    with tracked_heap(target="riscv32") as heap:
        with pytest.raises(KernelTargetError) as info:
            Program(path, heap=heap)
    text = str(info.value)
    assert "INCOMPATIBLE; HAL device `__device_0` not found or unavailable" in text
    assert f"it runs with --target {host_machine().name} (the host)" in text


def test_i386_hits_the_iI_results_hazard(default_compiled):
    """On i386, `iI` results are laid out with int64 4-aligned (sizeof 12) by the shim struct and
    8-aligned (16 bytes) by the VM's packing: device.query.i64 (`0rrr_iI`) fails with the generic
    shim's signature mismatch, as it would in IREE built for i386."""
    path = default_compiled["elementwise", "vmvx"]
    with tracked_heap(target="i386") as heap:
        with pytest.raises(VmStatusError, match="argument/result signature mismatch; while calling "
                                                "import hal.device.query.i64"):
            Program(path, heap=heap)


@pytest.mark.parametrize("model", DEFAULT_MODELS)
def test_reference_path(default_compiled, model):
    """The interpreter's reference path (per-instruction handlers, layered import calls, the
    yieldable fence.await among them) prints the same as the fast path and iree-run-module."""
    with tracked_heap() as heap:
        for name, function, inputs in [c for c in CASES if c[0] in ("multi_dispatch", "counter", "dynamic")]:
            path = default_compiled[name, model]
            with Program(path, RunOptions(reference=True), heap=heap) as p:
                assert ours(p, function, inputs) == corpus.iree_output(path, function, tuple(inputs))


@pytest.mark.parametrize("model", DEFAULT_MODELS)
def test_ireeabi_test_on_the_check_corpus(model):
    """`ireeabi test` on check-style modules of the default model (the check ops with their device
    argument): tests/programs/check's elementwise.mlir passes, and failing.mlir prints exactly what it
    prints in the inline-static model (the same seven failures and messages; times aside)."""
    check = TESTS / "programs" / "check"
    outputs = {}
    for stem, m in [("elementwise", model), ("failing", model), ("failing", "inline-static")]:
        # the module the plugin's runs of the corpus compile (one compile between them)
        path = cc.compile_check(check / f"{stem}.mlir", m)
        out = io.StringIO()
        code = main(["test", str(path)], stdout=out)
        outputs[stem, m] = (code, re.sub(r"\(\d+ ms( total)?\)", "", out.getvalue()))
    code, text = outputs["elementwise", model]
    assert code == 0 and "[  PASSED  ]" in text and "FAILED" not in text
    assert outputs["failing", model] == outputs["failing", "inline-static"]
    assert outputs["failing", model][0] == 1 and " 7 FAILED TESTS" in outputs["failing", model][1]
