"""Hang parity: a mutant the campaign found, a u32 set to 0xFFFFFFFE inside an i64 constant of
push_constants' bytecode, makes the dispatch's workgroup count about 2**32. iree-run-module walks every
workgroup and returns (the kernel skips those past its data); so must ireeabi, with the same output.

What makes that possible is that the workgroup loop runs in C, not in Python: the verdict counts
the Python function calls of the run (sys.setprofile in the child), which must be the same, within
a few, for one workgroup and for four billion. A regression to a Python loop per workgroup shows as
billions of calls; the child's CPU limit (RLIMIT_CPU, generous, CPU seconds rather than the wall
clock) only ends such a run instead of waiting for it."""
from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

from support import e2e_corpus
from support import iree_tools as tools
from ireeabi.vm.bytecode import decoder
from ireeabi.vm.bytecode.module_file import read_module

INPUTS = ["--function=affine", "--input=5xf32=1,2,3,4,5", "--input=2.5", "--input=-1"]


# The child: count Python function calls while `ireeabi run` runs, print the count on stderr last.
_COUNTING = """
import sys
from ireeabi.cli.main import main
calls = 0
def count(frame, event, arg):
    global calls
    if event == "call":
        calls += 1
sys.setprofile(count)
status = main(sys.argv[1:])
sys.setprofile(None)
print(f"python-calls {calls}", file=sys.stderr)
sys.exit(status)
"""
CPU_LIMIT_S = 600  # ends a regressed run (a Python loop over 2**32 workgroups); never the verdict
IREE_BACKSTOP_S = 3600  # iree-run-module's own run: a wedged one ends; ~24 s of CPU when it runs


def _limit_cpu() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_LIMIT_S, CPU_LIMIT_S))


def _run(argv: list[str], env: "dict[str, str] | None" = None) -> subprocess.CompletedProcess:
    proc = subprocess.run(argv, capture_output=True, text=True, preexec_fn=_limit_cpu, env=env)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    return proc


def _python_calls(module: Path) -> tuple[int, str]:
    # Both runs without the generated code's disk cache: the first run would write what the second
    # reads, thousands of calls apart that have nothing to do with the workgroups.
    proc = _run([sys.executable, "-c", _COUNTING, "run", str(module), *INPUTS],
                env=dict(os.environ, IREEABI_CODE_CACHE=""))
    return int(proc.stderr.rsplit("python-calls ", 1)[1].split()[0]), proc.stdout


def test_four_billion_workgroups_return_as_in_iree(tmp_path):
    # The corpus's own build of the program (its flags: one compile with the e2e and foreign-kernel tests').
    path = tools.compile_mlir(e2e_corpus.E2E / "push_constants.mlir", None, "inline-dynamic", e2e_corpus.F64)
    data = bytearray(path.read_bytes())
    m = read_module(bytes(data))
    code = decoder.decode_module(m)
    # The first `vm.const.i64 1` of @affine: the workgroup count's "+ 1" (value bytes after the opcode).
    ordinal = next(i for i, e in enumerate(m.function_descriptors)
                   if any(inst.op.symbol == "ConstI64" for inst in code.get(i, [])))
    inst = next(i for i in code[ordinal] if i.op.symbol == "ConstI64" and i.operands["value"] == 1)
    at = m.function_descriptors[ordinal].file_offset + inst.pc + 2
    assert data[at - 1:at + 7] == (1).to_bytes(8, "little")
    data[at:at + 4] = (0xFFFFFFFE).to_bytes(4, "little")
    mutant = tmp_path / "mutant.vmfb"
    mutant.write_bytes(bytes(data))
    # IREE's own walk of the ~2**32 workgroups (~24 s of CPU) is remembered with the module's bytes
    # (run_tool): the same binary, arguments and module give the same answer in every run.
    iree = tools.run_tool([tools.find_tool("iree-run-module"), tools.RUN_DEVICE,
                           f"--module={mutant}", *INPUTS], timeout=IREE_BACKSTOP_S)
    assert iree.returncode == 0, (iree.returncode, iree.stderr[-2000:])
    iree_out = iree.stdout
    few, few_out = _python_calls(path)
    many, many_out = _python_calls(mutant)
    assert many_out == iree_out
    assert few_out.splitlines()[:2] == many_out.splitlines()[:2]  # EXEC @affine, the result's type
    # the same Python work for 1 workgroup and for ~2**32 of them: the loop over them is in C
    assert abs(many - few) <= 100, (few, many)
