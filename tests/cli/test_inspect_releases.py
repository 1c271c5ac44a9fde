"""`ireeabi inspect` and `run` on modules of older IREE releases (tests/programs/releases: add16's
vmvx module compiled by iree-compile 3.9, 3.10 and 3.11, stripped): inspect lists any release's
module as iree-dump-module (3.13) lists it, then says whether this runtime takes it; refusals name
the releases whose runtimes take the module (the facts of facts.json, from the wheels), with
the status IREE's iree-run-module 3.13 ends with."""
import json
import re
from pathlib import Path

import pytest

from support import iree_tools
from ireeabi.cli.main import main

HERE = Path(__file__).parents[1] / "programs" / "releases"
FACTS = json.loads((HERE / "facts.json").read_text())["releases"]
FIXTURES = sorted(HERE.glob("add16_vmvx_*.vmfb"))
OLD_BYTECODE = [p for p in FIXTURES if "3.11.0" not in p.name]
M311 = HERE / "add16_vmvx_3.11.0.vmfb"


def _dump_listing(path: Path) -> dict[str, list[str]]:
    """iree-dump-module's `[  N] name(sig)` lines of its imported and exported functions (it lists
    them for any release's module, then fails at the disassembly of another ISA)."""
    out: dict[str, list[str]] = {"Imported Functions:": [], "Exported Functions:": []}
    section = None
    run = iree_tools.run_tool([iree_tools.find_tool("iree-dump-module"), str(path)], inputs=[path])
    for line in run.stdout.splitlines():
        if line in out:
            section = line
        elif not line.strip() or line.startswith("//"):
            section = None if not line.strip() else section
        elif section and re.match(r"  \[ *\d+\] ", line):
            out[section].append(line.strip())
    return out


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_inspect_lists_any_release_module_as_iree_dump_module(path, capsys):
    code = main(["inspect", str(path), "--json"])
    d = json.loads(capsys.readouterr().out)
    want = _dump_listing(path)
    assert want["Imported Functions:"], "iree-dump-module lists the module's imports"
    assert [f"[{x['ordinal']:3d}] {x['name']}{x['signature']}" for x in d["imports"]] \
        == want["Imported Functions:"]
    assert [f"[{x['ordinal']:3d}] {x['name']}{x['signature']}" for x in d["exports"]] \
        == want["Exported Functions:"]
    version = path.stem.rsplit("_", 1)[1]
    assert d["bytecode_version"] == FACTS[version]["modules"]["vmvx"]["bytecode_version"]
    # iree-run-module 3.13 runs none of the three: 3.9 and 3.10 by bytecode, 3.11 by a hal signature
    takes = "3.13.0" in FACTS[version]["modules"]["vmvx"]["runtimes"]["run"]
    assert d["runtime_takes"] is takes is False
    assert d["refusal_status"] == ("INTERNAL, import signature mismatch" if version == "3.11.0"
                                   else "INVALID_ARGUMENT, bytecode version mismatch")
    assert code == 1


@pytest.mark.parametrize("path", OLD_BYTECODE, ids=lambda p: p.stem)
def test_inspect_text_says_why_this_runtime_refuses(path, capsys):
    assert main(["inspect", str(path), "--disassemble"]) == 1
    out = capsys.readouterr().out
    version = path.stem.rsplit("_", 1)[1]
    facts = FACTS[version]["modules"]["vmvx"]
    assert "imported functions:" in out and "hal.command_buffer.dispatch(" in out
    assert "(no disassembly: bytecode" in out
    tail = " ".join(out.split("this runtime refuses the module", 1)[1].split())
    assert f"bytecode {facts['bytecode_version']}:" in tail
    assert "this runtime is IREE 3.13's, 17.0" in tail
    assert all(len(line) <= 100 for line in out.splitlines() if "iree.abi" not in line)


@pytest.mark.parametrize("path", OLD_BYTECODE, ids=lambda p: p.stem)
def test_run_refuses_as_iree_run_module_and_names_releases(path, capsys):
    real = iree_tools.run_tool([iree_tools.find_tool("iree-run-module"), "--device=local-sync",
                                f"--module={path}", "--function=add", "--input=16xf32=1",
                                "--input=16xf32=2"])
    assert real.returncode != 0 and "INVALID_ARGUMENT; bytecode version mismatch" in real.stderr
    assert main(["run", str(path), "--function", "add", "--input=16xf32=1", "--input=16xf32=2"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "bytecode version mismatch; runtime supports 17.0" in err
    assert "the runtimes of" in err and "this runtime is IREE 3.13's" in err


def test_311_module_dispatch_signature_says_why(capsys):
    """A 3.11 default-model module: bytecode 17.0 loads, hal.command_buffer.dispatch does not
    resolve (INTERNAL, as iree-run-module 3.13); the message says 3.11's runtime takes it and why."""
    real = iree_tools.run_tool([iree_tools.find_tool("iree-run-module"), "--device=local-sync",
                                f"--module={M311}", "--function=add", "--input=16xf32=1",
                                "--input=16xf32=2"])
    assert "INTERNAL; import function hal.command_buffer.dispatch signature mismatch" in real.stderr
    assert main(["run", str(M311), "--function", "add", "--input=16xf32=1", "--input=16xf32=2"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "import function hal.command_buffer.dispatch signature mismatch" in err
    assert FACTS["3.11.0"]["modules"]["vmvx"]["runtimes"]["run"] == ["3.11.0"]
    assert "the runtime of 3.11 takes this module" in err
    assert "i32 export ordinal (`i`) as IREE <= 3.11 passes it" in err
    assert main(["inspect", str(M311), "--check-imports"]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "BAD hal.command_buffer.dispatch 0rriiiiICiDCiirIID_v: mismatch" in out
    assert "the runtime of 3.11 takes this module" in out
    assert main(["inspect", str(M311)]) == 1  # without --check-imports: its last line says why
    out = " ".join(capsys.readouterr().out.split())
    assert "this runtime refuses the module (INTERNAL, import signature mismatch): " \
           "hal.command_buffer.dispatch 0rriiiiICiDCiirIID_v, this runtime's 0rrIiiiICiDCiirIID_v" in out
