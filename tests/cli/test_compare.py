"""`ireeabi compare`: a real iree-run-module and `ireeabi run` on one call, side by side.

The real tools are the x86_64 iree-run-module of the runtime wheel and IREE's own runtime built from
source for armv7 (tests/support/iree_oracle.py: as shipped, before IREE #24827, and with the loader's fix),
run by qemu-arm. Every verdict is the tools' own: what each printed, its status, its signal.
"""
from __future__ import annotations

import io
import shlex
import signal
from pathlib import Path

import pytest

from support import iree_tools as tools
from ireeabi.cli.main import main
from ireeabi.tooling.check_compile import KERNEL_TARGET_FLAGS

PROGRAMS = Path(__file__).resolve().parent.parent / "programs"
ADD16_INPUTS = ["--input=16xf32=1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16", "--input=16xf32=0.5"]


def compare(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["compare", *argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def _flat(text: str) -> str:
    """The report with its column wrapping undone, cell by cell (for phrases split over lines)."""
    return " ".join(text.split())


@pytest.fixture(scope="module")
def add16() -> str:
    return str(tools.compile_mlir(PROGRAMS / "add16.mlir", model="inline-dynamic"))


@pytest.fixture(scope="module")
def wheel_tool() -> str:
    return shlex.quote(tools.find_tool("iree-run-module"))


def test_results_agree_with_the_wheels_tool(add16, wheel_tool):
    code, out, err = compare(add16, "--tool", wheel_tool, "--function", "add", *ADD16_INPUTS)
    assert code == 0 and not err, err
    assert "16xf32=1.5 2.5 3.5" in out
    lines = out.splitlines()
    assert lines[-1] == "agree: both print the same results"
    assert any(line.startswith("outcome    exit 0: results") and line.endswith("| exit 0: results")
               for line in lines), out


def test_a_status_agrees_at_the_same_import_and_trace_shows_the_call(add16, wheel_tool):
    """A wrong input shape: iree-run-module fails with INVALID_ARGUMENT in
    hal_inline.buffer_view.assert, and so does ireeabi; --trace prints that call's trace."""
    code, out, err = compare(add16, "--tool", wheel_tool, "--function", "add", "--input=8xf32=1",
                             "--input=16xf32=2", "--trace")
    assert code == 0, out + err
    assert "agree: both fail with INVALID_ARGUMENT at hal_inline.buffer_view.assert" in out
    assert "ireeabi's trace of hal_inline.buffer_view.assert, where they part:" in out
    assert "[import] hal_inline.buffer_view.assert 0rriiCID_v from @add" in out
    assert "status: INVALID_ARGUMENT: input0 shape dimension 0 mismatch" in out


def test_the_first_different_output_line(add16, wheel_tool):
    """The tool told to print at most 4 elements per tensor (its --output_max_element_count):
    the result line is the first that differs."""
    code, out, _ = compare(add16, "--tool", f"{wheel_tool} --output_max_element_count=4",
                           "--function", "add", *ADD16_INPUTS)
    assert code == 1
    assert "differ: output line 3: the tool prints '16xf32=1.5 2.5 3.5 4.5...', ireeabi " \
           "'16xf32=1.5 2.5 3.5 4.5 5.5 6.5" in out, out


def test_the_pre_fix_loader_differs_from_the_wheel(add16, wheel_tool):
    """The wheel's runtime reads the dispatch as fixed; ireeabi --legacy-loader does not."""
    code, out, _ = compare(add16, "--tool", wheel_tool, "--function", "add", *ADD16_INPUTS,
                           "--legacy-loader")
    assert code == 1
    assert "differ: outcome: the tool's exit 0: results; ireeabi's exit 1: " in out, out
    assert "hal_loader.executable.dispatch" in out


@pytest.mark.parametrize("tool, error", [
    ("no-such-iree-tool", "--tool: cannot run no-such-iree-tool: No such file or directory"),
    ("echo", "--tool: echo printed no `EXEC @function` line (not iree-run-module's output); its first "
             "line: --module="),
    ("head -c 300 /dev/urandom", "--tool: head printed no `EXEC @function` line"),
    ("sh -c 'while :; do :; done'", "--tool: sh ran past its 1 s of CPU time (--cpu-seconds)"),
    ("sh -c 'sleep 600' --backstop", "--tool: sh was still running after 2 s (--backstop; blocked: it used "
                                     "less than its 1 s of CPU time)"),
    ("'unbalanced", "--tool \"'unbalanced\": No closing quotation"),
])
def test_a_tool_that_cannot_be_compared_is_an_error(add16, tool, error):
    """A spinning tool meets its CPU bound (1 s) long before the default backstop (60 s), however
    loaded the machine; a blocked one (its own --backstop of 2 s here) uses no CPU at all."""
    backstop = ["--backstop", "2"] if tool.endswith("--backstop") else []
    tool = tool.removesuffix(" --backstop")
    code, out, err = compare(add16, "--tool", tool, "--function", "add", "--cpu-seconds", "1", *backstop)
    assert code == 2 and not out
    assert error in _flat(err) and err.startswith("ireeabi: error: ")
    assert "Traceback" not in err


def test_usage_errors_exit_2(add16, tmp_path):
    assert compare(add16)[0] == 2  # --tool is required
    code, _, err = compare(str(tmp_path / "none.vmfb"), "--tool", "true")
    assert code == 2 and "no module file at" in err
# -- IREE's own armv7 runtime, as shipped and fixed -----------------------------------------------


@pytest.fixture(scope="module")
def armv7() -> tuple[str, dict[str, str]]:
    """add16 built for armv7, and each armv7 oracle's command line (qemu-arm)."""
    from support import iree_oracle

    module = str(tools.compile_mlir(PROGRAMS / "add16.mlir", model="inline-dynamic",
                                    extra_flags=KERNEL_TARGET_FLAGS["armv7"]))
    return module, {v: shlex.join(iree_oracle.oracle_argv("armv7", v)) for v in ("shipped", "fixed")}


def test_armv7_shipped_dies_where_the_legacy_loader_refuses(armv7):
    module, tools_ = armv7
    code, out, _ = compare(module, "--tool", tools_["shipped"], "--function", "add", *ADD16_INPUTS,
                           "--device", "local-sync", "--target", "armv7", "--legacy-loader")
    assert code == 0, out
    flat = _flat(out)
    assert f"died by signal {int(signal.SIGBUS)} (SIGBUS)" in flat
    assert "agree: the tool dies by SIGBUS where ireeabi refuses, saying IREE's runtime faults " \
           "(hal_loader.executable.dispatch)" in flat


def test_armv7_shipped_differs_from_the_fixed_model(armv7):
    """The shipped runtime dies; ireeabi's fixed loader runs the dispatch: --trace shows that call,
    the last import ireeabi made, with nothing misread."""
    module, tools_ = armv7
    code, out, _ = compare(module, "--tool", tools_["shipped"], "--function", "add", *ADD16_INPUTS,
                           "--device", "local-sync", "--target", "armv7", "--trace")
    assert code == 1
    assert "differ: outcome: the tool's died by signal 7 (SIGBUS); ireeabi's exit 0: results" in _flat(out)
    assert "ireeabi's trace of hal_loader.executable.dispatch, where they part:" in out
    assert "0 field(s) of the shim where the VM did not pack them" in out


def test_armv7_fixed_agrees_with_ireeabi_run(armv7):
    module, tools_ = armv7
    code, out, _ = compare(module, "--tool", tools_["fixed"], "--function", "add", *ADD16_INPUTS,
                           "--device", "local-sync", "--target", "armv7")
    assert code == 0 and "agree: both print the same results" in out, out
