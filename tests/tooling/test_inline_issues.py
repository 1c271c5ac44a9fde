"""What iree-compile 3.13 cannot compile, or compiles wrong, for the inline models: the facts the
check corpus works around (tests/programs/check/README.md), each pinned against the real tools.

The programs are tests/programs/check/inline_issues/*.mlir. A compile error is asserted by its
message; a miscompile by iree-run-module's printout, which ireeabi (running the same bytecode) must
print too. Should a newer iree-compile fix one, its test fails and the entry in docs/native-modules.md goes.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from support import iree_tools as tools
from support.check_corpus import CHECK_DIR, F64, MODELS
from support.e2e_corpus import ours
from ireeabi.tooling.program import Program
from ireeabi.vm.bytecode import VmStatusError

ISSUES = CHECK_DIR / "inline_issues"
STATIC = ("inline-static",)

# (program, the models it fails to compile for, the error iree-compile reports)
COMPILE_ERRORS = [
    ("nonsplat_constant", MODELS,
     "error: failed to legalize operation 'util.buffer.subspan' that was explicitly marked illegal"),
    ("tensor_check_op", MODELS,
     "error: failed to legalize unresolved source materialization from ('!hal.buffer_view') to "
     "('tensor<2xi32>') that remained live after conversion"),
    ("from_elements_2d", MODELS,
     "error: 'stream.async.fill' op has invalid Write access range [8 to 20 for 12] of resource"),
    ("f16_constant", MODELS,
     "error: failed to legalize operation 'arith.constant' that was explicitly marked illegal: "),
    ("f16_math", STATIC, "error: 'vm.add.f32' op operand #0 must be 32-bit float, but got 'i32'"),
    ("f16_truncf", STATIC,
     "error: failed to legalize operation 'arith.truncf' that was explicitly marked illegal"),
    ("bf16_math", STATIC, "error: 'vm.mul.f32' op operand #0 must be 32-bit float, but got 'i32'"),
]

# (function of miscompiles.mlir, model, iree-run-module's printout)
MISCOMPILES = [
    # Both tensors share one buffer: the second's values win (numpy: [1 2] and [3 4]).
    *[("alloc_cse", m, "EXEC @alloc_cse\nresult[0]: hal.buffer_view\n2xi32=3 4\n"
                       "result[1]: hal.buffer_view\n2xi32=3 4\n") for m in MODELS],
    # -0.0 comes back as +0, as a scalar and in a tensor.
    *[("negative_zero", m, "EXEC @negative_zero\nresult[0]: f32=0\nresult[1]: hal.buffer_view\n"
                           "2xf32=0 1\n") for m in MODELS],
    # fptosi of 2.7 -2.7 0.5: truncation in inline-dynamic, lroundf's rounding in inline-static.
    ("fptosi", "inline-dynamic", "EXEC @fptosi\nresult[0]: hal.buffer_view\n3xi32=2 -2 0\n"),
    ("fptosi", "inline-static", "EXEC @fptosi\nresult[0]: hal.buffer_view\n3xi32=3 -3 1\n"),
    # The dot's result overwrites its own input in inline-static: 8 instead of 23.
    ("dot_on_its_input", "inline-dynamic", "EXEC @dot_on_its_input\nresult[0]: hal.buffer_view\n"
                                           "f32=23\nresult[1]: hal.buffer_view\nf32=4\n"),
    ("dot_on_its_input", "inline-static", "EXEC @dot_on_its_input\nresult[0]: hal.buffer_view\n"
                                          "f32=8\nresult[1]: hal.buffer_view\nf32=4\n"),
]


def _compile(name: str, model: str) -> Path:
    return tools.compile_mlir(ISSUES / f"{name}.mlir", tools.session_dir(), model, F64)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("name,failing,message", COMPILE_ERRORS, ids=[c[0] for c in COMPILE_ERRORS])
def test_compile_errors(name, failing, message, model):
    if model in failing:
        with pytest.raises(tools.IreeToolError, match=re.escape(message)):
            _compile(name, model)
        return
    # Where it compiles it runs, and ireeabi prints what iree-run-module prints.
    vmfb = _compile(name, model)
    function = re.search(r"func\.func @(\w+)", (ISSUES / f"{name}.mlir").read_text()).group(1)
    with Program(vmfb) as program:
        assert ours(program, function, []) == tools.run_module(vmfb, function)


@pytest.mark.parametrize("function,model,printout", MISCOMPILES,
                         ids=[f"{f}-{m}" for f, m, _ in MISCOMPILES])
def test_miscompiles(function, model, printout):
    vmfb = _compile("miscompiles", model)
    assert tools.run_module(vmfb, function) == printout
    with Program(vmfb) as program:
        assert ours(program, function, []) == printout


def _vm_function(model: str, function: str) -> str:
    vm = tools.compile_to_vm(ISSUES / "miscompiles.mlir", model)
    return re.search(rf"vm\.func private @{function}\(.*?\n    }}\n", vm, re.S).group(0)


@pytest.mark.parametrize("model", MODELS)
def test_the_causes_in_the_vm_ir(model):
    """alloc_cse (and dot_on_its_input in inline-static): one allocation left for all the
    tensors, the import being `nosideeffects`; negative_zero: the constant became
    vm.const.f32.zero."""
    allocate = r"vm\.call @hal_inline\.buffer\.allocate\(.*\{nosideeffects\}"
    assert len(re.findall(allocate, _vm_function(model, "alloc_cse"))) == 1
    if model == "inline-static":
        assert len(re.findall(allocate, _vm_function(model, "dot_on_its_input"))) == 1
    zero = _vm_function(model, "negative_zero")
    assert "vm.const.f32.zero" in zero and "-0.0" not in zero


@pytest.mark.parametrize("model", MODELS)
def test_a_constant_rank2_tensor_fails_at_run_time(model):
    assert "@__hoisted_tensor_2x3xf32__offset" in tools.compile_to_vm(
        ISSUES / "const_eval_tensor.mlir", model)
    vmfb = _compile("const_eval_tensor", model)
    failure = tools.run_module_failure([vmfb], "iota_2d", [])
    assert "INVALID_ARGUMENT; source_buffer is null" in failure.stderr
    with Program(vmfb) as program, pytest.raises(VmStatusError,
                                                 match="INVALID_ARGUMENT; source_buffer is null"):
        program.call("iota_2d")
