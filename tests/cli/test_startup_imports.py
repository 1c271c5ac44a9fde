"""What each `ireeabi` command imports: start-up is imports, so a command loads only what it runs on.

Each command runs in a fresh interpreter through the process entry (`ireeabi.cli.__main__.run`,
what the console script calls); at exit the launcher writes the names in `sys.modules` to a file.
The table commands (`--version`, `targets`, `layout`, `check`) load no interpreter, HAL, numpy,
libclang or emulator; `run` of an inline program loads the interpreter and the inline HAL but not
the full `hal` module, libclang, Unicorn or wasmtime, which a program of the default execution model
(the full `hal` module) does load. Not timed: benchmarks/bench_startup.py measures the time.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from support import iree_tools
from support.recorded_imports import RECORD_IMPORTS

PROGRAMS = Path(__file__).parents[1] / "programs"
ADD_INPUTS = ["--function=add", "--input=16xf32=1.5", "--input=16xf32=2"]

# What a command that does not run a program has no use for.
RUNTIME = ["ireeabi.vm.bytecode", "ireeabi.base.heap", "ireeabi.hal", "ireeabi.modules", "ireeabi.tooling"]
FOREIGN = ["numpy", "clang", "unicorn", "wasmtime", "elftools", "construct", "cffi", "flatbuffers",
           "ireeabi.abi.cheader", "ireeabi.abi.dwarf", "ireeabi.abi.oracles"]


def imported(tmp_path: Path, *argv: str, status: int = 0) -> set[str]:
    """The modules a fresh `ireeabi ARGV` process has imported when it exits."""
    record = tmp_path / "modules.json"
    proc = subprocess.run([sys.executable, "-c", RECORD_IMPORTS, str(record), *argv], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == status, proc.stderr
    return set(json.loads(record.read_text()))


def loaded(modules: set[str], packages: list[str]) -> list[str]:
    """The modules of `packages` (each a package or module name) among `modules`."""
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in packages))


@pytest.fixture(scope="module")
def add16_inline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return iree_tools.compile_mlir(PROGRAMS / "add16.mlir", tmp_path_factory.mktemp("vmfb"),
                                   model="inline-dynamic")


@pytest.mark.parametrize("argv, status", [
    (["--version"], 0),
    (["targets"], 0),
    (["targets", "--json"], 0),
    (["layout", "iree_vm_buffer_t"], 0),
    (["layout", "iree_hal_executable_dispatch_state_v0_t", "--all-targets"], 0),
    (["layout", "0rIiiiCiDCrIID_v", "--spans", "2,3"], 0),
    (["check", "0rIiiiCiDCrIID_v"], 1),  # it has findings: their bytes are shown
    (["check", "0iI_i", "--json"], 0),
    (["list"], 0),
], ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_table_commands_load_no_runtime(tmp_path, argv, status):
    modules = imported(tmp_path, *argv, status=status)
    assert "ireeabi.cli.main" in modules  # the launcher ran the command line
    assert loaded(modules, RUNTIME + FOREIGN) == []
    assert loaded(modules, ["ireeabi.cli.cmd_run", "ireeabi.cli.cmd_test", "ireeabi.cli.cmd_inspect"]) == []


def test_version_loads_no_command(tmp_path):
    modules = imported(tmp_path, "--version")
    assert loaded(modules, ["ireeabi.layouts", "ireeabi.abi.cconv.findings", "ireeabi.abi.layout",
                            "ireeabi.cli.cmd_layout", "ireeabi.cli.cmd_check",
                            "ireeabi.cli.cmd_targets"]) == []


def test_layout_of_a_struct_loads_no_cconv_rules_beyond_its_own(tmp_path):
    # a catalog struct's table needs the catalog and the layout engine, not the checker's findings
    modules = imported(tmp_path, "layout", "iree_vm_buffer_t")
    assert "ireeabi.layouts.buffer" in modules and "ireeabi.cli.cmd_layout" in modules
    assert loaded(modules, ["ireeabi.cli.cmd_check", "ireeabi.layouts.fixtures", "ireeabi.abi.cconv.codec",
                            "ireeabi.abi.views"]) == []


def test_a_sampled_check_loads_numpy_only_then(tmp_path):
    # six spans: 4**6 instances, past the sweep's cap, so the sample is drawn (resolve.Sweep)
    modules = imported(tmp_path, "check", "CiDCiDCiDCiDCiDCiD", "--json")
    assert "numpy" in modules  # the detection sees what a command does load
    assert loaded(modules, ["ireeabi.vm.bytecode", "ireeabi.hal", "ireeabi.modules", "clang"]) == []


def test_help_lists_every_command(tmp_path):
    # help shows run and test, whose parsers their own modules declare
    proc = subprocess.run([sys.executable, "-m", "ireeabi", "--help"], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    for command in ("layout", "check", "targets", "list", "fixtures", "inspect", "run", "test", "compare",
                    "compile"):
        assert f"\n    {command} " in proc.stdout


def test_run_of_an_inline_program_loads_only_its_path(tmp_path, add16_inline):
    modules = imported(tmp_path, "run", str(add16_inline), *ADD_INPUTS)
    # what it runs on
    assert {"ireeabi.vm.bytecode.dispatch", "ireeabi.vm.context", "ireeabi.modules.hal.inline",
            "ireeabi.modules.hal.loader", "ireeabi.hal.local.elf_executable", "numpy", "elftools"} <= modules
    # what it does not: the full `hal` module, libclang and the C header machinery, the emulators,
    # the check module and the test command, the import checker, the disassembler
    assert loaded(modules, [
        "ireeabi.modules.hal.module", "ireeabi.hal.device", "ireeabi.hal.command_buffer",
        "ireeabi.layouts.hal_module", "ireeabi.layouts.hal_module_dispatch",
        "clang", "ireeabi.abi.cheader", "ireeabi.abi.oracles", "ireeabi.abi.dwarf", "cffi.api",
        "unicorn", "wasmtime", "ireeabi.hal.local.emulated_cpu", "ireeabi.hal.local.wasm_loader",
        "ireeabi.modules.check", "ireeabi.cli.cmd_test", "ireeabi.vm.bytecode.import_check",
        "ireeabi.tooling.disassemble",
        "ireeabi.layouts.module_sources", "ireeabi.layouts.fixtures", "importlib.metadata"]) == []


def test_run_of_a_default_model_program_loads_the_full_hal(tmp_path, tmp_path_factory):
    vmfb = iree_tools.compile_mlir(PROGRAMS / "add16.mlir", tmp_path_factory.mktemp("vmfb"),
                                   model="llvm-cpu")
    modules = imported(tmp_path, "run", str(vmfb), *ADD_INPUTS)
    assert {"ireeabi.modules.hal.module", "ireeabi.hal.device", "ireeabi.hal.command_buffer"} <= modules
    assert loaded(modules, ["clang", "ireeabi.abi.cheader", "unicorn", "wasmtime"]) == []


@pytest.mark.parametrize("argv", [
    ["--version"], ["--vers"], ["--version", "targets"], ["targets", "--bogus"], ["layout"],
    ["layout", "-h"], ["check", "0v_v", "--target"], ["inspect"], ["bogus"], [], ["-h"], ["--he"],
    ["--", "targets"], ["run", "-h"], ["test", "--bogus"], ["--version", "run", "x.vmfb"],
    ["--version", "layout", "x"], ["fixtures"], ["list", "--bogus"],
    ["compile", "x.mlir", "--", "--iree-flag"], ["compile", "--print-flags", "--", "-x"],
], ids=lambda v: " ".join(v) or "(none)")
def test_the_parser_built_for_a_command_line_parses_it_as_the_whole_parser(argv, monkeypatch, capsys):
    # the other commands' parsers are left out only where they cannot change what argparse does
    from ireeabi.cli import main as cli_main

    def outcome() -> tuple[int, str, str]:
        status = cli_main.main(list(argv))
        out = capsys.readouterr()
        return status, out.out, out.err

    partial = outcome()
    monkeypatch.setattr(cli_main, "parsers_for", lambda argv: tuple(cli_main.COMMAND_MODULES))
    assert partial == outcome()


EVERY = ("layout", "check", "targets", "list", "fixtures", "inspect", "run", "test", "compare",
         "compile")


@pytest.mark.parametrize("argv, wanted", [
    (["--version"], ()), (["targets"], ("targets",)), (["--version", "layout", "x"], ("layout",)),
    (["run", "m"], ("run",)), (["test", "m"], ("test",)), (["compare", "m"], ("compare",)), ([], EVERY),
    (["-h", "targets"], EVERY),
    (["bogus"], EVERY), (["--bogus", "targets"], EVERY),
])
def test_which_parsers_a_command_line_needs(argv, wanted):
    from ireeabi.cli.main import parsers_for

    assert parsers_for(argv) == wanted


# A command that imports numpy, then the process's threads (Linux's /proc/self/task).
THREADS = """
import os, sys
from ireeabi.cli.__main__ import run
status = run(sys.argv[1:])
print(len(os.listdir("/proc/self/task")), os.environ.get("OPENBLAS_NUM_THREADS"), file=sys.stderr)
sys.exit(status)
"""


@pytest.mark.parametrize("given", [None, "2"])
def test_run_starts_no_blas_threads(add16_inline: Path, given: str | None) -> None:
    """numpy's OpenBLAS would start a thread per core at import and spin them for some 0.1 s of CPU
    time: the process entry asks for one (unless the environment says otherwise), so `run` ends
    with the interpreter's own thread alone on any machine, and a user's setting is kept."""
    import os
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    proc = subprocess.run([sys.executable, "-c", THREADS, "run", str(add16_inline), *ADD_INPUTS],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr
    threads, setting = proc.stderr.split()[-2:]
    assert setting == (given or "1")
    if given is None:
        assert int(threads) == 1
