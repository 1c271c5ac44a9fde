"""The tests' own house rules: the helpers shared by the test folders are the package `support`
(tests/support, imported as `from support import iree_tools`: tests/ is on the import path as the
folder of pytest's rootdir conftest.py); every other module under tests/ is a `test_*.py` or a
`conftest.py` (tests/programs holds the test programs and their generators, not Python the tests
import); and no test module edits sys.path (pytest's `monkeypatch.syspath_prepend`, which undoes
itself, is how a test puts a made-up installed package on the path)."""
from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SUPPORT = TESTS / "support"
PATH_EDITS = ("insert", "append", "extend", "remove", "pop", "clear", "__setitem__", "__delitem__")


def _modules() -> list[Path]:
    """Every Python file under tests/ but the test programs' own folder."""
    return sorted(p for p in TESTS.rglob("*.py")
                  if p.relative_to(TESTS).parts[0] != "programs" and "__pycache__" not in p.parts)


def _sys_path_edits(source: str, name: str) -> list[str]:
    """Where `source` (a module, or the text of a script it runs) changes sys.path: a call of a
    mutating method of it, an assignment to it or to an item of it, an augmented assignment."""
    out = []
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in PATH_EDITS and ast.unparse(node.func.value) == "sys.path":
            out.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        for t in targets:
            if ast.unparse(t.value if isinstance(t, ast.Subscript) else t) == "sys.path":
                out.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "sys.path" in node.value:
            try:  # a script the test runs in a child process
                out += _sys_path_edits(node.value, f"{name}:{node.lineno} (script)")
            except SyntaxError:
                pass
    return out


def test_support_is_a_package_of_helpers():
    assert (SUPPORT / "__init__.py").is_file()
    assert not [p.name for p in SUPPORT.glob("test_*.py")], "tests belong in the test folders"


def test_no_helper_module_sits_loose_in_tests():
    loose = [str(p.relative_to(TESTS)) for p in _modules()
             if p.parent != SUPPORT and not p.name.startswith("test_") and p.name != "conftest.py"]
    assert loose == [], f"helpers belong in tests/support: {loose}"


def test_no_test_module_edits_sys_path():
    probes = Path(__file__).resolve()  # its scripts below are the checker's probes
    edits = [e for p in _modules() if p != probes
             for e in _sys_path_edits(p.read_text(), str(p.relative_to(TESTS)))]
    assert edits == []


def test_the_check_sees_each_kind_of_edit():
    """The checker itself, on each way of changing sys.path (it must not pass by seeing nothing)."""
    for code in ("import sys\nsys.path.insert(0, 'x')", "import sys\nsys.path.append('x')",
                 "import sys\nsys.path = ['x']", "import sys\nsys.path[0] = 'x'",
                 "import sys\nsys.path += ['x']", "run('import sys\\nsys.path.insert(0, 1)')"):
        assert _sys_path_edits(code, "probe"), code
    assert _sys_path_edits("import sys\nprint(sys.path)\nmonkeypatch.syspath_prepend('x')", "ok") == []
