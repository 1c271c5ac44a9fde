"""One pattern for every command: a module `cli/cmd_<name>.py` with `add_parser(subparsers)` and
`command(args, out)`, registered by one line in `main.COMMAND_MODULES`; `main.py` declares no
command's options; no command module uses another one as a library (what they share is in
`cli/loading.py`)."""
from __future__ import annotations

import argparse
import ast
import importlib
import inspect
from pathlib import Path

import pytest

from ireeabi.cli import main as cli_main

CLI = Path(cli_main.__file__).parent


def _command_files() -> set[str]:
    return {p.stem.removeprefix("cmd_") for p in CLI.glob("cmd_*.py")}


def _imported_modules(path: Path) -> set[str]:
    """The `ireeabi.cli` modules a file imports, wherever the import stands."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:
                out |= {node.module} if node.module else {a.name for a in node.names}
            elif (node.module or "").startswith("ireeabi.cli"):
                out |= {node.module.removeprefix("ireeabi.cli.")} if node.module != "ireeabi.cli" \
                    else {a.name for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {a.name.removeprefix("ireeabi.cli.") for a in node.names if a.name.startswith("ireeabi.cli.")}
    return out


def test_every_command_module_is_registered_and_every_registration_is_a_command_module():
    assert set(cli_main.COMMAND_MODULES) == _command_files()
    for name, module in cli_main.COMMAND_MODULES.items():
        assert module == f"ireeabi.cli.cmd_{name}"


@pytest.mark.parametrize("name", sorted(_command_files()))
def test_a_command_module_declares_its_parser_and_runs_its_command(name):
    module = importlib.import_module(f"ireeabi.cli.cmd_{name}")
    assert list(inspect.signature(module.add_parser).parameters) == ["sub"]
    assert list(inspect.signature(module.command).parameters) == ["args", "out"]
    assert {"add_parser", "command"} <= set(module.__all__)
    sub = argparse.ArgumentParser(prog="ireeabi").add_subparsers(dest="command")
    module.add_parser(sub)
    assert list(sub.choices) == [name]  # its own parser, under its own name, and nothing else


@pytest.mark.parametrize("name", sorted(_command_files()))
def test_no_command_module_imports_another(name):
    imported = _imported_modules(CLI / f"cmd_{name}.py")
    assert not {m for m in imported if m.startswith("cmd_")}, imported


def test_main_declares_no_command_and_no_option_but_version():
    tree = ast.parse((CLI / "main.py").read_text())
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)]
    added = [ast.literal_eval(n.args[0]) for n in calls if n.func.attr == "add_argument"]
    assert added == ["--version"]
    assert not [n for n in calls if n.func.attr == "add_parser" and isinstance(n.func.value, ast.Name)
                and n.func.value.id == "sub"]
    assert not {m for m in _imported_modules(CLI / "main.py") if m.startswith("cmd_")}
