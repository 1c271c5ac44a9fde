"""`ireeabi inspect --check-imports --target T`: where each executable of a module runs on T (issue 29).

For add16 compiled by iree-compile for each triple ireeabi runs (riscv32, armv7 without and with
debug symbols, aarch64, i686, wasm32, the host) and for vmvx, inspect's verdict on each target is
checked against what `ireeabi run` then does (runs and prints what iree-run-module prints on the
host build, or fails with the status inspect names), and the formats and images it lists against
iree-dump-module's listing of the module (its .rodata segments, and the formats its initializer's
failure message names): oracles nobody here wrote.
"""
from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from support import iree_tools as tools
from ireeabi.abi import targets
from ireeabi.cli.main import main
from ireeabi.tooling.check_compile import KERNEL_TARGET_FLAGS

ADD16 = Path(tools.__file__).parents[1] / "programs" / "add16.mlir"
INPUTS = ["16xf32=1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16", "16xf32=0.5"]

# The library's foreign kernel flags (docs/programs.md says why each is needed), and builds of
# their own: armv7 with its debug symbols, the host's three kinds of library.
TRIPLES = {
    "riscv32": KERNEL_TARGET_FLAGS["riscv32"],
    "armv7": KERNEL_TARGET_FLAGS["armv7"],
    "armv7-debug": ("--iree-llvmcpu-target-triple=armv7a-pc-linux-elf",
                    "--iree-llvmcpu-target-cpu-features=+hwdiv-arm"),
    "aarch64": KERNEL_TARGET_FLAGS["aarch64"],
    "i686": KERNEL_TARGET_FLAGS["i386"],
    "wasm32": KERNEL_TARGET_FLAGS["wasm32"],
    "host": (),
    "system-elf": ("--iree-llvmcpu-link-embedded=false",),  # dlopen on the host
    "static": ("--iree-llvmcpu-link-embedded=false", "--iree-llvmcpu-link-static",
               f"--iree-llvmcpu-static-library-output-path={tools.session_dir() / 'add16_static.o'}"),
}
FORMATS = {"riscv32": "embedded-elf-riscv_32", "armv7": "embedded-elf-arm_32", "armv7-debug": "embedded-elf-arm_32",
           "aarch64": "embedded-elf-arm_64", "i686": "embedded-elf-x86_32", "wasm32": "system-wasm-wasm_32",
           "host": "embedded-elf-x86_64", "vmvx": "vmvx-bytecode-fb", "system-elf": "system-elf-x86_64",
           "static": "static"}
# Both kernel variants in one module: iree-compile's initializer creates the first one the device takes.
BOTH = ("--iree-hal-target-backends=llvm-cpu", "--iree-hal-target-backends=vmvx", "--iree-llvmcpu-target-cpu=generic")
# (model, build): the default execution model for every build; the inline one (hal_loader) for two.
BUILDS = [("llvm-cpu", b) for b in TRIPLES] + [("vmvx", "vmvx"), ("llvm-cpu", "both"),
                                              ("inline-dynamic", "riscv32"), ("inline-dynamic", "armv7-debug")]


def _path(model: str, build: str) -> Path:
    if build == "both":
        return tools.compile_with_flags(ADD16, BOTH)
    return tools.compile_mlir(ADD16, model=model, extra_flags=TRIPLES.get(build, ()))


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = main(list(argv), stdout=out, stderr=err)
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def expected_output() -> str:
    """iree-run-module on the host build: what every run that works prints."""
    return tools.run_module(_path("llvm-cpu", "host"), "add", INPUTS)


def _dumped_rodata(path: Path) -> dict[int, tuple[str, int, str]]:
    """iree-dump-module's .rodata listing: ordinal -> (embedded | external, bytes, text shown)."""
    dumped = tools.dump_module(path, "--output=metadata")
    return {int(k): (kind, int(n), text) for k, kind, n, text in
            re.findall(r"^\s+\.rodata\[\s*(\d+)\] (embedded|external)\s+(\d+) bytes ?`?([^`\n]*)", dumped, re.M)}


@pytest.mark.parametrize("model,build", BUILDS, ids=[f"{m}-{b}" for m, b in BUILDS])
def test_formats_are_what_iree_dump_module_lists(model, build):
    path = _path(model, build)
    rc, out, _ = _cli("inspect", str(path), "--check-imports", "--json")
    exes = json.loads(out)["executables"]
    rodata = _dumped_rodata(path)
    wanted = [FORMATS["host"], FORMATS["vmvx"]] if build == "both" else [FORMATS[build]]
    assert [x["format"] for x in exes] == wanted
    for x in exes:
        (fmt,), (image,) = x["format_rodata"], x["image_rodata"]
        assert rodata[fmt] == ("embedded", len(x["format"]), x["format"])
        assert rodata[image][1] == x["image_bytes"]  # a static library's image is its name
        assert x["import"] == ("hal_loader.executable.load" if model == "inline-dynamic" else "hal.executable.create")
    if model != "inline-dynamic":  # the initializer's own failure names the formats of each executable
        listed = re.findall(r"does not support any variant of executable `\w+`; available formats: \[([^\]]*)\]",
                            tools.dump_module(path, "--output=disassembly"))
        assert listed == [", ".join(wanted)]
        assert len({x["executable"] for x in exes}) == 1


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("model,build", BUILDS, ids=[f"{m}-{b}" for m, b in BUILDS])
def test_verdict_is_what_run_does(model, build, expected_output):
    """On every target: inspect's verdict, then `ireeabi run` of the same module there. A run that
    fails stops at what inspect found: an incompatible import (i386's shims) or the executable's
    refusal, whichever the module reaches first."""
    path = str(_path(model, build))
    for name in targets.names():
        rc, out, _ = _cli("inspect", path, "--check-imports", "--json", "--target", name)
        d = json.loads(out)
        run_rc, run_out, run_err = _cli("run", path, "--function", "add", *(f"--input={i}" for i in INPUTS),
                                        "--target", name)
        said, err = f"{model} {build} on {name}", _flat(run_err)
        assert rc == (0 if d["compatible"] else 1), said
        if d["compatible"] and d["kernels_run"]:
            (chosen,) = [x for x in d["executables"] if x["selected"]]
            assert chosen["placement"] == _where(chosen["format"], name), said
            assert run_rc == 0 and run_out == expected_output, (said, run_err)
            continue
        assert run_rc == 1 and not run_out.strip().endswith(expected_output.strip()), said
        bad = [r["name"] for r in d["import_check"] if not r["compatible"]]
        at_import = any(f"while calling import {b}" in err for b in bad)
        assert at_import or (not d["kernels_run"] and _refusal_explains(d, err, model, name)), (said, err)


def _refusal_explains(d: dict, err: str, model: str, name: str) -> bool:
    """The run's failure is the refusal inspect predicts for the module's executable."""
    (chosen,) = [x for x in d["executables"] if x["selected"]] or [None]
    if chosen is not None:  # the load refuses the image: the run ends with the loader's status
        return f"{chosen['status']}; {_flat(chosen['message'])}; " in err and \
            f"while calling import {chosen['import']}" in err
    # no loader takes any variant: the module's own check stops it before any load
    (x,) = d["executables"]
    assert x["status"] == "NOT_FOUND" and not x["checked"] and x["runs_on"] != name
    own = "not found or unavailable" if model != "inline-dynamic" else \
        "none of the executable binaries in the module are supported by the runtime"
    if x["runs_on"] is None:  # no target runs it (a static library): the run names none either
        return own in err and "it runs with --target" not in err
    assert f"it runs with --target {x['runs_on']}" in x["reason"]
    return own in err and f"it runs with --target {x['runs_on']}" in err


def _where(fmt: str, target: str) -> str:
    """The place each format runs on its own target (docs/command-line.md's table)."""
    if fmt == FORMATS["vmvx"]:
        return "vmvx"
    if fmt == FORMATS["wasm32"]:
        return "wasmtime"
    return "native" if fmt in (FORMATS["host"], FORMATS["system-elf"]) and target == "x86_64" else "emulated"


def test_the_verdicts_cover_every_place():
    """The matrix above reaches each placement and both kinds of refusal."""
    seen = set()
    for model, build in BUILDS:
        for name in ("x86_64", "riscv32", "armv7", "wasm32", "aarch64"):
            _, out, _ = _cli("inspect", str(_path(model, build)), "--check-imports", "--json", "--target", name)
            seen |= {(x["placement"], x["status"]) for x in json.loads(out)["executables"]}
    assert seen >= {("native", None), ("emulated", None), ("wasmtime", None), ("vmvx", None),
                    ("refused", "NOT_FOUND"), ("refused", "UNAVAILABLE")}


def test_text_names_the_place_the_status_and_the_fix():
    path = str(_path("llvm-cpu", "armv7-debug"))
    rc, out, _ = _cli("inspect", path, "--check-imports", "--target", "armv7")
    text = _flat(out[out.index("executables on armv7"):])
    assert rc == 0 and text.startswith("executables on armv7: 1 of 1 refused BAD embedded-elf-arm_32: refused, "
                                       "UNAVAILABLE - ELF imports one or more symbols (trying '__aeabi_unwind_cpp_pr0')")
    assert "made by hal.executable.create in __init at pc 0x" in text and " from rodata 4 (" in text
    assert "--iree-llvmcpu-debug-symbols=false" in text
    rc, out, _ = _cli("inspect", path, "--check-imports", "--target", "riscv32")
    assert "embedded-elf-arm_32 holds armv7 machine code, not riscv32's: it runs with --target armv7" in _flat(out)
    rc, out, _ = _cli("inspect", str(_path("llvm-cpu", "static")), "--check-imports")
    assert "BAD static: refused, NOT_FOUND" in out and "the module holds only its name" in _flat(out)
    assert "from rodata 4 (15 bytes)" in _flat(out)
    rc, out, _ = _cli("inspect", str(_path("llvm-cpu", "both")), "--check-imports", "--target", "riscv32")
    text = _flat(out[out.index("executables on riscv32"):])
    assert text.startswith("executables on riscv32: 1 of 1 run - embedded-elf-x86_64")
    assert "ok vmvx-bytecode-fb" in text and "in the VM's vmvx interpreter" in text
    assert all(len(line) <= 100 for line in out.splitlines())


def test_emulate_kernels_moves_host_kernels_to_the_emulated_cpu():
    path = str(_path("llvm-cpu", "host"))
    for extra, place in (((), "native"), (("--emulate-kernels",), "emulated")):
        _, out, _ = _cli("inspect", path, "--check-imports", "--json", "--target", "x86_64", *extra)
        (x,) = json.loads(out)["executables"]
        assert x["placement"] == place and x["checked"] and x["runs"]
    rc, _, err = _cli("inspect", path, "--emulate-kernels")
    assert rc == 2 and "--emulate-kernels applies to --check-imports" in err


def test_an_inline_static_module_makes_no_executable():
    rc, out, _ = _cli("inspect", str(tools.compile_mlir(ADD16, model="inline-static")), "--check-imports")
    assert rc == 0 and "executables on x86_64: none (the module makes no executable)" in out
