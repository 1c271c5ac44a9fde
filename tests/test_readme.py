"""The examples of README.md and of every docs/*.md page run as written.

- every ```python block executes, and the numbers its comments claim hold;
- every ```text block that starts with `$ ireeabi ...` is a transcript: each command runs (the cli's
  `main`, in-process) in a folder holding the modules the pages name, and prints what the page shows
  (a line `...` stands for any lines; gtest's millisecond times are the one part that varies);
- every ```python block runs in a folder holding the modules the pages name (the README's runs
  add16_armv7.vmfb on armv7);
- the README's quick start compiles its inline MLIR with the `ireeabi compile` commands it shows,
  into the modules the tests compile with their flags (`MODEL_FLAGS`, `KERNEL_TARGET_FLAGS`);
- the README is a front door of at most 10,000 bytes, and every relative link or repository path a
  page mentions exists.
"""
from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
from pathlib import Path

import pytest

from support import iree_tools as tools
from ireeabi.cli.main import main
from ireeabi.tooling.check_compile import KERNEL_TARGET_FLAGS

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
README_MAX_BYTES = 10_000

# The modules the pages' examples run, other than those the pages' own `ireeabi compile
# add16.mlir ...` commands build (add16.vmfb, add16_armv7.vmfb, add16_vmvx.vmfb): the source each
# is compiled from, its model, and the flags added to the model's (a target's kernels:
# KERNEL_TARGET_FLAGS).
MODULES = {
    "check_ops.vmfb": (ROOT / "tests" / "programs" / "native" / "check_ops.mlir", "inline-dynamic", ()),
}
# Modules checked in that the pages name (an older release's: docs/releases.md).
CHECKED_IN = {"add16_vmvx_3.9.0.vmfb": ROOT / "tests" / "programs" / "releases" / "add16_vmvx_3.9.0.vmfb"}
QUICK_START_MODULE = "add16.vmfb"
QUICK_START_SOURCE = ROOT / "tests" / "programs" / "add16.mlir"


def _rel(page: Path) -> str:
    return str(page.relative_to(ROOT))


def _blocks(page: Path, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", page.read_text(), re.S | re.M)


# -- python blocks ---------------------------------------------------------------------------------


def test_readme_has_examples():
    assert _blocks(README, "python"), "the README shows a Python example"
    assert sum(len(_blocks(p, "python")) for p in PAGES) >= 5


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_examples_run_and_comments_hold(page, workdir, monkeypatch):
    monkeypatch.chdir(workdir)  # where the modules the examples name are
    for block in _blocks(page, "python"):
        ns: dict = {}
        exec(compile(block, _rel(page), "exec"), ns)
        # Lines of the form `expr   # N...` or `expr  # [a, b]...`: the comment's leading value is
        # what the expression evaluates to.
        for line in block.splitlines():
            m = re.match(r"^(\S.*?)\s+#\s*(\[[\d, ]*\]|\d+\b|'[^']*'|True\b|False\b)", line)
            if m and "=" not in m.group(1).split("(")[0]:
                assert eval(m.group(1), ns) == eval(m.group(2)), f"{_rel(page)}: {line}"


# -- the quick start --------------------------------------------------------------------------------


def _quick_start_compiles() -> list[list[str]]:
    """The README's `ireeabi compile` commands (its ```sh blocks), each as argv."""
    joined = [block.replace("\\\n", " ") for block in _blocks(README, "sh")]  # `\` continuations
    return [shlex.split(line) for block in joined for line in block.splitlines()
            if line.startswith(f"ireeabi compile {QUICK_START_SOURCE.name} ")]


def _page_compiles() -> list[list[str]]:
    """Every page's `ireeabi compile add16.mlir ...` command (the README's first: the others'
    modules come from the same source)."""
    out = _quick_start_compiles()
    for page in PAGES[1:]:
        for block in _blocks(page, "sh"):
            out += [shlex.split(line) for line in block.replace("\\\n", " ").splitlines()
                    if line.startswith(f"ireeabi compile {QUICK_START_SOURCE.name} ")]
    return out


def test_quick_start_compiles_with_the_tests_flags(workdir):
    """The quick start builds its modules with `ireeabi compile` from the MLIR it shows
    (tests/programs/add16.mlir): byte for byte the modules the tests' compile helper makes with the
    model's and the target's flags (MODEL_FLAGS, KERNEL_TARGET_FLAGS)."""
    compiles = _quick_start_compiles()
    assert [c[-1] for c in compiles] == ["inline-dynamic", "add16_armv7.vmfb"]
    (mlir,) = _blocks(README, "mlir")
    assert mlir == QUICK_START_SOURCE.read_text()
    host = tools.compile_mlir(QUICK_START_SOURCE, model="inline-dynamic")
    armv7 = tools.compile_mlir(QUICK_START_SOURCE, model="inline-dynamic",
                               extra_flags=KERNEL_TARGET_FLAGS["armv7"])
    assert (workdir / QUICK_START_MODULE).read_bytes() == host.read_bytes()
    assert (workdir / "add16_armv7.vmfb").read_bytes() == armv7.read_bytes()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """A folder holding every module the examples name: those the pages' own `ireeabi compile`
    commands make from the README's MLIR, the others by the tests' compile helper or checked in."""
    work = tmp_path_factory.mktemp("pages")
    (mlir,) = _blocks(README, "mlir")
    (work / QUICK_START_SOURCE.name).write_text(mlir)
    with contextlib.chdir(work):
        for argv in _page_compiles():
            out = io.StringIO()
            assert main(argv[1:], stdout=out) == 0, out.getvalue()
    for name, (source, model, flags) in MODULES.items():
        shutil.copyfile(tools.compile_mlir(source, model=model, extra_flags=flags), work / name)
    for name, path in CHECKED_IN.items():
        shutil.copyfile(path, work / name)
    return work


# -- transcripts -----------------------------------------------------------------------------------


def _transcripts(page: Path) -> list[tuple[str, list[str]]]:
    """(command, shown output lines) of every `$ ireeabi ...` in the page's ```text transcripts."""
    found: list[tuple[str, list[str]]] = []
    for block in _blocks(page, "text"):
        if not block.startswith("$ ireeabi "):
            continue
        for line in block.splitlines():
            if line.startswith("$ "):
                found.append((line[2:], []))
            else:
                found[-1][1].append(line)
    return found


TRANSCRIPTS = [(page, cmd, shown) for page in PAGES for cmd, shown in _transcripts(page)]

# gtest prints the host's milliseconds; the one part of a transcript that varies between runs.
_MS = re.compile(r"\(\d+ ms( total)?\)")


def _normal(line: str) -> str:
    return _MS.sub(lambda m: f"(N ms{m.group(1) or ''})", line.rstrip())


def _matches(shown: list[str], printed: list[str]) -> bool:
    """True when `printed` is `shown` with each `...` line standing for any lines (none included)."""
    shown, printed = [_normal(s) for s in shown], [_normal(p) for p in printed]

    def at(i: int, j: int) -> bool:
        if i == len(shown):
            return j == len(printed)
        if shown[i] == "...":
            return any(at(i + 1, k) for k in range(j, len(printed) + 1))
        return j < len(printed) and shown[i] == printed[j] and at(i + 1, j + 1)

    return at(0, 0)


def test_pages_have_transcripts():
    assert _transcripts(README), "the README's quick start shows commands with their output"
    assert any(name == "ireeabi" and sub == "test"
               for _, cmd, _ in TRANSCRIPTS for name, sub, *_ in [shlex.split(cmd)])


@pytest.mark.parametrize("page,command,shown", TRANSCRIPTS,
                         ids=[f"{_rel(p)}: {c}" for p, c, _ in TRANSCRIPTS])
def test_transcript_prints_what_the_page_shows(page, command, shown, workdir, monkeypatch):
    argv = shlex.split(command)
    assert argv[0] == "ireeabi"
    for arg in argv:
        if arg.endswith(".vmfb"):
            assert (workdir / arg.split("=")[-1]).is_file(), f"{arg}: add it to MODULES"
    monkeypatch.chdir(workdir)
    out, err = io.StringIO(), io.StringIO()
    main(argv[1:], stdout=out, stderr=err)
    printed = (out.getvalue() + err.getvalue()).splitlines()
    assert _matches(shown, printed), "\n".join([f"{_rel(page)}: $ {command}", *printed])


def test_matcher_is_strict():
    """The transcript matcher fails a changed, missing or extra line (a check that can fail)."""
    assert _matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert _matches(["a", "...", "b"], ["a", "b"])
    assert not _matches(["a", "b"], ["a", "c"])
    assert not _matches(["a", "b"], ["a", "b", "c"])
    assert not _matches(["a", "...", "d"], ["a", "b", "c"])
    assert _matches(["x (31 ms)"], ["x (79 ms)"]) and not _matches(["x (31 ms)"], ["y (31 ms)"])


# -- the front door and the paths --------------------------------------------------------------------


def test_readme_is_a_front_door():
    size = len(README.read_bytes())
    assert size <= README_MAX_BYTES, f"README.md is {size} bytes; move detail to docs/"


def _test_command(text: str) -> str:
    commands = re.findall(r"^python -m pytest .*$", text, re.M)
    assert len(commands) == 1, commands
    return commands[0]


def test_ci_runs_the_readmes_test_command_in_parallel():
    """.ci/run and docs/install.md run the README's test command, which spreads the suite over
    pytest-xdist workers (grouped: tests/conftest.py keeps the memory-heavy ones on one worker) and
    which the test extra installs."""
    command = _test_command(README.read_text())
    assert command == _test_command((ROOT / ".ci" / "run").read_text())
    assert command == _test_command((ROOT / "docs" / "install.md").read_text())
    argv = shlex.split(command)
    assert argv[argv.index("-n") + 1] == "2" and argv[argv.index("--dist") + 1] == "loadgroup"
    assert '"pytest-xdist' in (ROOT / "pyproject.toml").read_text()


def test_readme_maps_every_page():
    text = README.read_text()
    for page in PAGES[1:]:
        assert f"]({_rel(page)})" in text, f"README.md does not link {_rel(page)}"


# A repository path: starts at one of the repository's top-level folders (IREE's own paths are
# written from runtime/src/iree/..., compiler/..., tools/..., so they never match).
_TOP = r"(?:abi|layouts|vm|hal|modules|tooling|cli|tests|examples|benchmarks|docs|\.ci)"
_PATH = re.compile(rf"(?<![\w/.\-]){_TOP}/[\w./*\-]*[\w*/]")
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _paths(page: Path) -> set[str]:
    text = page.read_text()
    return set(_PATH.findall(text))


def _links(page: Path) -> set[str]:
    return {t.split("#")[0] for t in _LINK.findall(page.read_text())
            if not re.match(r"[a-z]+:", t) and not t.startswith("#")}


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_every_path_and_link_exists(page):
    missing = [p for p in sorted(_paths(page)) if not list(ROOT.glob(p.rstrip("/")))]
    missing += [t for t in sorted(_links(page)) if not (page.parent / t).exists()]
    assert not missing, f"{_rel(page)} names paths that do not exist: {missing}"


def test_path_check_can_fail():
    """The path finder sees a repository path in prose and in code, and skips IREE's own."""
    sample = ("see `hal/local/elf_loader.py`, tests/base/test_heap.py and "
              "runtime/src/iree/hal/local/elf/elf_module.c.")
    assert set(_PATH.findall(sample)) == {"hal/local/elf_loader.py", "tests/base/test_heap.py"}
    retired = "the executables were in `hal/executable.py`"  # now hal/local/elf_executable.py
    assert [p for p in _PATH.findall(retired) if not list(ROOT.glob(p))] == ["hal/executable.py"]


# -- shell examples --------------------------------------------------------------------------------


def _shell_examples(page: Path) -> list[str]:
    """The `ireeabi ...` commands of a page's ```sh blocks that are examples, not synopses (no
    `[OPTION]` or `A|B` placeholders), `\\` continuations joined, trailing comments dropped."""
    lines = []
    for block in _blocks(page, "sh"):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("  #")[0].strip()
            if line.startswith("ireeabi ") and not re.search(r"[\[|]|\.\.\.", line):
                lines.append(line)
    return lines


SHELL_EXAMPLES = [(page, line) for page in PAGES for line in _shell_examples(page)]


@pytest.mark.parametrize("page,line", SHELL_EXAMPLES,
                         ids=[f"{_rel(p)}: {c}" for p, c in SHELL_EXAMPLES])
def test_shell_examples_are_valid_command_lines(page, line):
    """Each `ireeabi` example of a ```sh block parses as the command line parses it (the commands
    that run are in the transcripts and the quick start)."""
    from ireeabi.cli.main import build_parser, split_pass_through

    words, _ = split_pass_through(shlex.split(line)[1:])
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            build_parser(words).parse_args(words)
        except SystemExit:
            pytest.fail(f"{_rel(page)}: {line}: {err.getvalue()}")


def test_pages_have_shell_examples():
    assert {line.split()[1] for _, line in SHELL_EXAMPLES} >= {"compile", "run", "inspect"}
