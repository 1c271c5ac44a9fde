"""The table of IREE releases (vm/releases.py) against the facts read from the releases' wheels
(tests/programs/releases/facts.json, written by derive.py beside it: each release's iree-compile
run on add16.mlir, its runtime's `hal` exports, and every release's iree-run-module run on every
release's module), and the modules of three releases checked in beside it."""
import json
import re
from pathlib import Path

import pytest

from ireeabi.layouts import hal_module
from ireeabi.vm import releases
from ireeabi.vm.bytecode import isa
from ireeabi.vm.bytecode import module_file as mf
from ireeabi.vm.bytecode.module_errors import ModuleFileError

HERE = Path(__file__).parents[1] / "programs" / "releases"
FACTS = json.loads((HERE / "facts.json").read_text())["releases"]
FIXTURES = sorted(HERE.glob("add16_vmvx_*.vmfb"))


def _version(text: str) -> tuple[int, int]:
    major, minor = text.split(".")
    return int(major), int(minor)


def test_every_release_of_the_wheels_is_in_the_table():
    assert {r.name for r in releases.RELEASES} == set(FACTS)
    names = [r.name for r in releases.RELEASES]
    assert names == sorted(names, key=lambda v: tuple(int(x) for x in v.split(".")))


@pytest.mark.parametrize("release", releases.RELEASES, ids=lambda r: r.name)
def test_release_facts_match_the_wheels(release):
    facts = FACTS[release.name]
    versions = {x["bytecode_version"] for x in facts["modules"].values() if x["compiles"]}
    assert versions == {"{}.{}".format(*release.bytecode_version)}
    assert release.hal_version == facts["hal"]["version"]
    assert dict(release.hal_differs) == facts["hal"]["differs_from_newest"]
    assert release.hal_lacks == frozenset(facts["hal"]["newest_only"])
    assert facts["hal"]["missing_from_newest"] == []  # no release has a hal export 3.13 dropped


def test_this_runtime_is_the_newest_release():
    own = releases.RELEASES[-1]
    assert own.name == releases.RUNTIME_RELEASE
    assert own.bytecode_version == (isa.BYTECODE_VERSION_MAJOR, isa.BYTECODE_VERSION_MINOR)
    assert own.hal_version == hal_module.IREE_HAL_MODULE_VERSION_LATEST
    assert not own.hal_differs and not own.hal_lacks


def _modules():
    for v, facts in FACTS.items():
        for model, x in facts["modules"].items():
            if x["compiles"]:
                yield pytest.param(v, model, x, id=f"{model}-{v}")


@pytest.mark.parametrize("version,model,module", list(_modules()))
def test_which_runtimes_take_each_release_module(version, model, module):
    """The runtimes the table says load a module's bytecode and resolve its hal imports are
    exactly those iree-run-module of each release ran it on, for the modules whose executables
    every runtime takes (vmvx, inline-static); inline-dynamic's ELF libraries have versions of
    their own (3.8 changed it), so there the table's runtimes include those that ran it."""
    major, minor = _version(module["bytecode_version"])
    hal = {n.split(".", 1)[1]: c for n, c in module["imports"].items() if n.startswith("hal.")}
    minimum = module["dependencies"].get("hal")
    predicted = {r.name for r in releases.RELEASES
                 if releases.loads(r, major, minor) and releases.resolves_hal(r, minimum, hal)}
    ran = set(module["runtimes"]["run"])
    if model == "inline-dynamic":
        assert ran <= predicted
    else:
        assert predicted == ran
    if version == releases.RUNTIME_RELEASE:
        assert releases.RUNTIME_RELEASE in ran


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_fixtures_carry_their_release_facts(path):
    version = path.stem.rsplit("_", 1)[1]
    facts = FACTS[version]["modules"]["vmvx"]
    m = mf.read_module(path, any_version=True)
    assert f"{m.bytecode_version_major}.{m.bytecode_version_minor}" == facts["bytecode_version"]
    assert {f.full_name: f.cconv for f in m.imported_functions} == facts["imports"]


@pytest.mark.parametrize("path", [p for p in FIXTURES if "3.11.0" not in p.name], ids=lambda p: p.stem)
def test_refusal_names_the_releases_that_take_the_module(path):
    """A module of another bytecode version: IREE's message, then which releases make the module,
    load it, and resolve its hal imports (as facts.json measured)."""
    version = path.stem.rsplit("_", 1)[1]
    facts = FACTS[version]["modules"]["vmvx"]
    with pytest.raises(ModuleFileError) as e:
        mf.read_module(path)
    text = str(e.value)
    assert f"bytecode version mismatch; runtime supports 17.0, module has {facts['bytecode_version']}" in text
    ran = [r for r in releases.RELEASES if r.name in facts["runtimes"]["run"]]
    assert f"and of those {releases.release_span(ran)} resolve its hal imports" in text
    assert "this runtime is IREE 3.13's, 17.0" in text


def test_release_span():
    by = {r.name: r for r in releases.RELEASES}
    assert releases.release_span([by["3.11.0"]]) == "3.11"
    assert releases.release_span([by[v] for v in ("2.9.0", "3.0.0", "3.1.0")]) == "2.9-3.1"
    assert releases.release_span([by["2.9.0"], by["3.1.0"]]) == "2.9, 3.1"


def _span(names: list[str]) -> str:
    return releases.release_span([r for r in releases.RELEASES if r.name in names]) or "none"


def test_docs_table_is_the_facts():
    """docs/releases.md's table row by row from facts.json."""
    rows = []
    for r in releases.RELEASES:
        facts = FACTS[r.name]
        hal = facts["hal"]
        dispatch = hal["differs_from_newest"].get("command_buffer.dispatch", "0rrIiiiICiDCiirIID_v")
        runs = [_span(facts["modules"][m]["runtimes"]["run"]) if facts["modules"][m]["compiles"]
                else "does not compile" for m in ("vmvx", "inline-static", "inline-dynamic")]
        version = {x["bytecode_version"] for x in facts["modules"].values() if x["compiles"]}.pop()
        rows.append(f"| {r.short} | {version} | {hal['version']} | {len(hal['differs_from_newest'])} / "
                    f"{len(hal['newest_only'])} | `{dispatch}` | {' | '.join(runs)} |")
    page = (Path(__file__).parents[2] / "docs" / "releases.md").read_text()
    shown = [line for line in page.splitlines() if re.match(r"\| \d", line)]
    assert shown == rows
