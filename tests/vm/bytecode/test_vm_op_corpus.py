"""The VM op corpus (tests/programs/vm/*.vmasm) under `ireeabi test` and under iree-run-module.

Each corpus module is assembled by IREE's own assembler (iree-as-module 3.13). Every `test_`
function must return and every `fail_` function must end in a failing status, as IREE's
bytecode_module_test judges them: under `ireeabi test` on the host and on riscv32, on the fast and
the reference interpreter path (IREEABI_REFERENCE=1), and under iree-run-module function by
function (the oracle: exit 0 for a `test_`, non-zero for a `fail_`, and the same status code
where both print one). The expectations in the .vmasm come from IREE's op definitions and
runtime/src/iree/vm/ops.h; where they disagreed with the tools the tools won (each such place is
commented in the corpus).
"""
from __future__ import annotations

import io
import re
import subprocess
from pathlib import Path

import pytest

from support import iree_tools as tools
from ireeabi.cli.main import main
from ireeabi.tooling.vm_test_module import VmTest, run_vm_test, gtest_name
from ireeabi.vm.bytecode.module_file import read_module

CORPUS = Path(__file__).resolve().parents[2] / "programs" / "vm"
FILES = sorted(CORPUS.glob("*.vmasm"))
# Modules iree-run-module cannot run, and why (its own error text).
RUN_MODULE_REFUSES = {
    # The assembler writes no module dependencies, and iree-run-module registers hal_inline only
    # for a module that declares it.
    "variadic_native": "NOT_FOUND; module 'hal_inline' required for import "
                       "'hal_inline.buffer.allocate' not registered with the context",
}
STATUS = re.compile(r"\b([A-Z][A-Z_]+); ")


def _exports(vmfb: Path) -> list[str]:
    """The exported functions, as iree-dump-module lists them (the oracle)."""
    text = tools.dump_module(vmfb, "--output=metadata")
    return re.findall(r"^\s*\[\s*\d+\] (\w+)\(", text.split("Exported Functions:")[1], re.M)


@pytest.fixture(scope="module")
def assembled() -> dict[str, Path]:
    return {p.stem: tools.assemble_vmasm(p) for p in FILES}


def test_corpus_covers_every_op_family():
    """Each family the interpreter handles has a module, and a module with fail_ functions."""
    assert {p.stem for p in FILES} >= {"arith_i32", "arith_i64", "arith_f32", "arith_f64",
                                       "compare_convert", "globals", "buffers", "lists_refs",
                                       "control_calls", "variadic_native", "debug_ops"}
    text = "\n".join(p.read_text() for p in FILES)
    for op in ("vm.br_table", "vm.call.variadic", "vm.import.resolved", "vm.import optional",
               "vm.buffer.hash", "vm.list.get.ref", "vm.cast.any.ref", "vm.global.load.indirect",
               "vm.shr.i64.u", "vm.cast.f64.ui64", "vm.cmp.nan.f32", "vm.fail", "vm.trace",
               "vm.print", "vm.break", "vm.cond_break"):
        assert op in text, op


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = main(list(argv), stdout=out, stderr=err)
    return rc, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
@pytest.mark.parametrize("target", ["host", "riscv32"])
@pytest.mark.parametrize("reference", [False, True], ids=["fast", "reference"])
def test_ireeabi_test_passes_the_corpus(assembled, path, target, reference, monkeypatch):
    if reference:
        monkeypatch.setenv("IREEABI_REFERENCE", "1")
    else:
        monkeypatch.delenv("IREEABI_REFERENCE", raising=False)
    argv = [str(path)] + (["--target", target] if target != "host" else [])
    rc, out, err = _cli("test", *argv)
    exports = _exports(assembled[path.stem])
    assert (rc, err) == (0, ""), out
    for f in exports:
        name = f"bytecode/VMBytecodeTest.Check/{gtest_name(path.stem + '.vmfb', f)}"
        assert f"[ RUN      ] {name}\n[       OK ] {name} (" in out
    passed = f"{len(exports)} test" + ("s" if len(exports) != 1 else "")
    assert f"[  PASSED  ] {passed}.\n" in out and "FAILED" not in out
    assert any(f.startswith("test_") for f in exports) and any(f.startswith("fail_") for f in exports) \
        or path.stem == "variadic_native"


@pytest.mark.parametrize("path", [p for p in FILES if p.stem not in RUN_MODULE_REFUSES],
                         ids=[p.stem for p in FILES if p.stem not in RUN_MODULE_REFUSES])
def test_agrees_with_iree_run_module_function_by_function(assembled, path):
    vmfb = assembled[path.stem]
    module = read_module(vmfb.read_bytes())
    for f in _exports(vmfb):
        proc = tools.run_module_status(vmfb, f)
        outcome = run_vm_test(module, VmTest(f, gtest_name(vmfb.name, f)))
        if f.startswith("fail_"):
            assert proc.returncode != 0, f"{f}: iree-run-module returned\n{proc.stdout}"
            assert outcome.status is not None, f"{f}: ireeabi returned"
            iree_code = STATUS.search(proc.stderr)
            assert iree_code is not None, proc.stderr
            assert outcome.status.code.name == iree_code.group(1), (f, proc.stderr, str(outcome.status))
        else:
            assert proc.returncode == 0, f"{f}: iree-run-module failed\n{proc.stderr}"
            assert outcome.status is None, f"{f}: {outcome.status}"


@pytest.mark.parametrize("stem", sorted(RUN_MODULE_REFUSES))
def test_iree_run_module_refuses_what_it_cannot_register(assembled, stem):
    for f in _exports(assembled[stem]):
        proc = tools.run_module_status(assembled[stem], f)
        assert proc.returncode != 0 and RUN_MODULE_REFUSES[stem] in proc.stderr, proc.stderr


def test_debug_ops_print_what_iree_run_module_prints(assembled):
    """vm.trace and vm.print write nothing in IREE's interpreter (dispatch.c): `ireeabi run`'s stdout
    is iree-run-module's, byte for byte, for every function of debug_ops, and both exit alike."""
    vmfb = assembled["debug_ops"]
    for f in _exports(vmfb):
        proc = tools.run_module_status(vmfb, f)
        rc, out, _ = _cli("run", f"--module={vmfb}", f"--function={f}")
        assert out == proc.stdout and (rc == 0) == (proc.returncode == 0), (f, out, proc.stdout)


def test_switch_ref_has_no_assembler_syntax(tmp_path):
    """iree-as-module 3.13 refuses vm.switch.ref with a result register (the variadic values must
    come last in its generic field walk) and without one (the op writes a result): the op cannot be
    in the corpus. `ireeabi test` reports the refusal with the line it names."""
    src = CORPUS / "invalid" / "switch_ref.vmasm"
    line = next(i for i, t in enumerate(src.read_text().splitlines(), 1) if "= vm.switch.ref" in t)
    assembler = tools.find_tool("iree-as-module")
    proc = subprocess.run([assembler, f"--output={tmp_path / 'a.vmfb'}", str(src)],
                                capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0
    assert f"INVALID_ARGUMENT; variadic operand instruction has a result; at line {line}" \
        in proc.stderr
    no_result = tmp_path / "no_result.vmasm"
    no_result.write_text(src.read_text().replace("%r2 = vm.switch.ref", "vm.switch.ref"))
    proc = subprocess.run([assembler, f"--output={tmp_path / 'b.vmfb'}", str(no_result)],
                                capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0
    assert f"INVALID_ARGUMENT; instruction requires a result register; at line {line}" \
        in proc.stderr
    rc, out, err = _cli("test", str(src))
    assert rc != 0 and out == "" and f"switch_ref.vmasm:{line}:" in err and "Traceback" not in err


def test_a_callee_declaring_no_registers_for_its_arguments_is_refused_by_both():
    """iree-as-module writes i32_register_count 0 for a function that never uses its two i32
    argument registers (frames.py sizes frames as IREE does); IREE's verifier refuses the module when
    it loads, and so does ireeabi, with the same message."""
    src = CORPUS / "invalid" / "zero_register_args.vmasm"
    vmfb = tools.assemble_vmasm(src)
    assert '"i32_register_count":0' in tools.dump_module(vmfb, "--output=flatbuffer-json")
    proc = tools.run_module_status(vmfb, "test_call_it")
    message = "insufficient register storage for function arguments/results"
    assert proc.returncode != 0 and f"INVALID_ARGUMENT; {message}" in proc.stderr
    rc, out, err = _cli("test", str(src))
    assert rc != 0 and out == "" and message in " ".join(err.split())
