"""Nothing a module's kernel library runs at load or dispatch runs away (issue 41, item 1): its
initializers (ELF DT_INIT, wasm `__wasm_apply_data_relocs`), its query and its dispatches loop
forever (tests/support/hostile_kernels.py makes them from iree-compile's modules), and `run
--max-steps` / `--kernel-cpu-time` and `inspect --check-imports` (its default budget, and
`--max-steps`) end each one with DEADLINE_EXCEEDED, cleanly, in the words asserted here. Every ISA
and every place, and every file option given a file that is not regular, are the runaway
campaign's cases (tests/tooling/test_runaway_campaign.py); the tests here pin the messages. The
commands run in one child process under a CPU-time limit (tests/support/bounded_cli.py): a runaway
kills it with SIGXCPU.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from support import hostile_kernels as hk
from support import iree_tools as tools
from support.bounded_cli import run_bounded
from ireeabi.tooling.check_compile import KERNEL_TARGET_FLAGS

ADD16 = Path(__file__).resolve().parents[1] / "programs" / "add16.mlir"
INPUTS = ["--function", "add", "--input=16xf32=1", "--input=16xf32=2"]
STEPS = "200000"  # far more than a load of add16 needs (a few thousand), far less than a second
CPU_LIMIT = 60  # seconds of CPU for all the commands together (they need about 10)


@pytest.fixture(scope="module")
def loopers(tmp_path_factory) -> "dict[tuple[str, str], Path]":
    """(target, where) -> the add16 module whose library loops there."""
    out = tmp_path_factory.mktemp("loopers")
    found = {}
    for target, flags in KERNEL_TARGET_FLAGS.items():
        data = tools.compile_mlir(ADD16, None, "inline-dynamic", extra_flags=flags).read_bytes()
        for where in hk.WASM_WHERE if target == "wasm32" else hk.ELF_WHERE:
            path = out / f"loop.{target}.{where}.vmfb"
            path.write_bytes(hk.looping(data, where))
            found[target, where] = path
    return found


# The loops whose messages are pinned (the campaign runs every ISA and place).
RUN_LOOPS = [("wasm32", "data-relocs"), ("x86_64", "query"), ("x86_64", "initializer")]


def test_a_loop_a_run_reaches_ends_by_its_budget_named(loopers):
    """run --max-steps names the loader's call that ran past it; the host's native kernels
    (x86_64) by the budget --max-steps implies and by --kernel-cpu-time."""
    argvs, names = [], []
    for target, where in RUN_LOOPS:
        base = ["run", str(loopers[target, where]), "--target", target, *INPUTS, "--max-steps", STEPS]
        if target == "x86_64":
            argvs.append(base + ["--kernel-cpu-time", "0.05"])
            names.append(f"{target} {where} --kernel-cpu-time")
        argvs.append(base)
        names.append(f"{target} {where}")
    ends = run_bounded(argvs, CPU_LIMIT)
    bad = [f"{name}: exit {e.code}: {e.stderr.strip()[-300:]}" for name, e in zip(names, ends)
           if not (e.code == 1 and e.clean and "DEADLINE_EXCEEDED" in e.stderr)]
    assert not bad, "\n".join(bad)
    # the loader's calls are named as such: the two cases
    by_name = dict(zip(names, ends))
    assert "__wasm_apply_data_relocs ran past its budget of 200000" in \
        " ".join(by_name["wasm32 data-relocs"].stderr.split())
    assert "iree_hal_executable_library_query" in by_name["x86_64 query"].stderr
    assert "0.05 s of CPU" in " ".join(by_name["x86_64 query --kernel-cpu-time"].stderr.split())
    assert "ELF initializer DT_INIT" in by_name["x86_64 initializer"].stderr


def test_inspect_of_a_looping_load_ends_by_its_default_budget_or_max_steps(loopers):
    """inspect --check-imports loads every library (its initializers and query run, emulated or
    under wasmtime): a load that loops is refused with DEADLINE_EXCEEDED, by the default budget
    (library_loader.PLACE_MAX_INSTRUCTIONS) or by --max-steps."""
    argvs, names = [], []
    for target, where in [("x86_64", "initializer"), ("riscv64", "query")]:
        argvs.append(["inspect", str(loopers[target, where]), "--target", target, "--check-imports",
                      "--max-steps", STEPS])
        names.append(f"{target} {where}")
    wasm = loopers["wasm32", "data-relocs"]
    argvs.append(["inspect", str(wasm), "--target", "wasm32", "--check-imports"])
    names.append("wasm32 data-relocs, default budget")
    ends = run_bounded(argvs, CPU_LIMIT)
    bad = [f"{name}: exit {e.code}: {e.stdout.strip()[-300:]} {e.stderr.strip()[-300:]}"
           for name, e in zip(names, ends) if not (e.clean and "DEADLINE_EXCEEDED" in e.stdout)]
    assert not bad, "\n".join(bad)
    joined = " ".join(ends[-1].stdout.split())
    assert "__wasm_apply_data_relocs ran past its budget of 10000000" in joined, joined
    assert "more than 200000 instructions" in " ".join(ends[0].stdout.split())


def test_max_steps_takes_every_count_up_to_2_64_minus_1(loopers, capsys):
    """Item 4: 2**64 - 1 is read as an integer (no float: it once became a CPU-time budget of 1e+22
    s, refused at load); the native kernel's budget it implies is the helper's largest; past it the
    option is refused by argparse, naming the limit."""
    from ireeabi.cli.main import main
    from ireeabi.hal.local import native

    assert native.default_cpu_time(2**64 - 1) == native.MAX_CPU_TIME
    x86 = loopers["x86_64", "query"].parent / "add16.x86_64.vmfb"
    x86.write_bytes(tools.compile_mlir(ADD16, None, "inline-dynamic",
                                       extra_flags=KERNEL_TARGET_FLAGS["x86_64"]).read_bytes())
    assert main(["run", str(x86), *INPUTS, f"--max-steps={2**64 - 1}"]) == 0
    assert "16xf32=3 3 3" in capsys.readouterr().out
    assert main(["run", str(x86), *INPUTS, f"--max-steps={2**64}"]) == 2
    assert "past the largest instruction count, 2**64 - 1" in capsys.readouterr().err
    assert main(["run", str(x86), *INPUTS, "--max-steps=" + "9" * 5000]) == 2
    assert "past the largest instruction count" in capsys.readouterr().err


def test_no_file_option_blocks_on_or_reads_without_end_a_file_that_is_not_regular(loopers, tmp_path):
    """Item 2: /dev/zero, a FIFO no process opens the other end of, and a directory, given to the
    options whose messages are pinned: each command ends cleanly at once (before: `--dwarf
    /dev/zero` read gigabytes, a FIFO blocked `--dwarf`, `--input=@`, `--output=@`,
    `--trace-file`, `--svg`). Every option and such file: the runaway campaign's file cases."""
    import os

    module = loopers["x86_64", "query"].parent / "add16.vmfb"
    module.write_bytes(tools.compile_mlir(ADD16, None, "inline-dynamic",
                                          extra_flags=KERNEL_TARGET_FLAGS["x86_64"]).read_bytes())
    fifo, npy_fifo, toml_fifo = tmp_path / "fifo", tmp_path / "x.npy", tmp_path / "m.toml"
    for f in (fifo, npy_fifo, toml_fifo):
        os.mkfifo(f)
    zero_toml = tmp_path / "zero.toml"
    zero_toml.symlink_to("/dev/zero")
    run = ["run", str(module), "--function", "add", "--input=16xf32=1"]
    argvs = [["layout", "x", "--dwarf", "/dev/zero"], ["layout", "x", "--dwarf", str(fifo)],
             ["layout", "iree_byte_span_t", "--svg", str(fifo)],
             [*run, f"--input=@{npy_fifo}"],
             ["inspect", str(module), "--check-imports", "--native-module", str(toml_fifo)],
             ["inspect", str(module), "--check-imports", "--native-module", str(zero_toml)]]
    ends = run_bounded(argvs, CPU_LIMIT)
    bad_ends = [f"{e.argv}: {e.code} {e.stderr[-300:]}" for e in ends if not e.clean]
    assert not bad_ends, "\n".join(bad_ends)
    said = {" ".join(e.argv[:4]): " ".join(e.stderr.split()) for e in ends}
    assert "/dev/zero: not a readable ELF file (a device, not a regular file)" in said["layout x --dwarf /dev/zero"]
    assert f"{fifo}: not a readable ELF file (a FIFO, not a regular file)" in said[f"layout x --dwarf {fifo}"]
    assert "a FIFO with no reader" in said[f"layout iree_byte_span_t --svg {fifo}"]
    assert f"zero.toml: a declaration file larger than {64 << 20} bytes" in \
        said[f"inspect {module} --check-imports --native-module"]
