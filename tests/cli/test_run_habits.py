"""`ireeabi run` takes iree-run-module's `--module=FILE` and `--device=local-sync|local-task`.

The oracle is iree-run-module itself: the same command line (module and device flags as the tool
takes them) prints the same text in both tools, for both local devices.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from support import iree_tools
from ireeabi.cli.main import main

PROGRAMS = Path(__file__).parents[1] / "programs"
INPUTS = ["16xf32=1.5", "16xf32=2"]


@pytest.fixture(scope="module")
def add16():
    return iree_tools.compile_mlir(PROGRAMS / "add16.mlir", model="inline-static")


def _tool(module: Path, device: str) -> str:
    argv = [iree_tools.find_tool("iree-run-module"), f"--device={device}", f"--module={module}",
            "--function=add", *(f"--input={i}" for i in INPUTS)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("device", ["local-sync", "local-task"])
def test_module_and_device_flags_as_iree_run_module(add16, device, capsys):
    expected = _tool(add16, device)
    argv = [f"--device={device}", f"--module={add16}", "--function=add",
            *(f"--input={i}" for i in INPUTS)]
    assert main(["run", *argv]) == 0
    assert capsys.readouterr().out == expected
    # the positional form and the flag form are one
    assert main(["run", str(add16), "--function=add", *(f"--input={i}" for i in INPUTS)]) == 0
    assert capsys.readouterr().out == expected


def test_device_with_a_path_is_accepted(add16, capsys):
    assert main(["run", "--device=local-task://", f"--module={add16}", "--function=add",
                 *(f"--input={i}" for i in INPUTS)]) == 0
    assert capsys.readouterr().out.startswith("EXEC @add\n")


def test_other_devices_are_refused(add16, capsys):
    assert main(["run", "--device=cuda", f"--module={add16}", "--function=add"]) == 2
    err = capsys.readouterr().err
    assert "argument --device: 'cuda': ireeabi emulates one single-threaded local CPU device" in err
    assert "local-sync and local-task" in err


def test_one_module(add16, capsys):
    assert main(["run", str(add16), f"--module={add16}", "--function=add"]) == 1
    assert "ireeabi runs one module; 2 given" in capsys.readouterr().err
    assert main(["run", "--function=add"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ireeabi: error: no module given") and "--module=FILE" in err
