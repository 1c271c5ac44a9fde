"""Hang parity: a mutant the campaign found, a u32 set to 0xFFFFFFFE inside an i64 constant of
push_constants' bytecode, makes the dispatch's workgroup count about 2**32. iree-run-module walks every
workgroup and returns (the kernel skips those past its data); so must ireeabi, with the same output
and in comparable time (its workgroup loop runs in C, not in Python)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from support import iree_tools as tools
from ireeabi.vm.bytecode import decoder
from ireeabi.vm.bytecode.module_file import read_module

HERE = Path(__file__).parents[1]
INPUTS = ["--function=affine", "--input=5xf32=1,2,3,4,5", "--input=2.5", "--input=-1"]


def _timed(argv: list[str], timeout: float) -> tuple[float, str]:
    t = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise AssertionError(f"{argv[0]} did not return within {timeout} s")
    assert proc.returncode == 0, err
    return time.monotonic() - t, out


def test_four_billion_workgroups_return_as_in_iree(tmp_path):
    path = tools.compile_mlir(HERE / "programs" / "e2e" / "push_constants.mlir", None, "inline-dynamic")
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
    iree_s, iree_out = _timed([tools.find_tool("iree-run-module"), tools.RUN_DEVICE,
                               f"--module={mutant}", *INPUTS], 300)
    ours_s, ours_out = _timed([sys.executable, "-m", "ireeabi.cli.main", "run", str(mutant), *INPUTS],
                              max(60.0, 3 * iree_s))
    assert ours_out == iree_out
    assert ours_s <= max(1.5 * iree_s, iree_s + 5), (ours_s, iree_s)
