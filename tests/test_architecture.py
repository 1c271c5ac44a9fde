"""The house rules that can fail: every import in the product, read with `ast`, follows the layering
abi <- layouts <- vm <- hal <- modules <- tooling <- cli (an import only reaches down or sideways),
no module imports another module's private name, and the import graph has no cycle, type-only and
function-level imports included."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("abi", "layouts", "base", "vm", "hal", "modules", "tooling", "cli")


def _modules() -> dict[str, tuple[Path, bool]]:
    """Every product module: its dotted name -> (file, is a package's __init__)."""
    out = {}
    for top in LAYERS + ("ireeabi",):
        for path in sorted((ROOT / top).rglob("*.py")):
            inner = list(path.relative_to(ROOT / top).parts)
            parts = ["ireeabi"] + ([] if top == "ireeabi" else [top]) + inner
            parts[-1] = parts[-1][:-3]
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            out[".".join(parts)] = (path, is_package)
    return out


MODULES = _modules()


class Import:
    def __init__(self, source: str, target: str, name: str | None, line: int) -> None:
        self.source, self.target, self.name, self.line = source, target, name, line

    def __repr__(self) -> str:
        what = f"{self.target}.{self.name}" if self.name else self.target
        return f"{MODULES[self.source][0].relative_to(ROOT)}:{self.line} imports {what}"


def _imports() -> list[Import]:
    """Every import statement of every product module, wherever it stands (module level, inside
    a function, under TYPE_CHECKING), resolved to the product module it loads and the name it
    takes."""
    out = []
    for module, (path, is_package) in MODULES.items():
        package = module if is_package else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                out += [Import(module, a.name, None, node.lineno) for a in node.names
                        if a.name.startswith("ireeabi")]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if not target.startswith("ireeabi"):
                    continue
                for a in node.names:
                    sub = f"{target}.{a.name}"
                    out.append(Import(module, sub, None, node.lineno) if sub in MODULES
                               else Import(module, target, a.name, node.lineno))
    return out


IMPORTS = _imports()


def _layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in LAYERS:
        return LAYERS.index(parts[1])
    return len(LAYERS)  # ireeabi itself and ireeabi.__main__ sit on top


def test_every_import_resolves_to_a_product_module() -> None:
    missing = [i for i in IMPORTS if i.target not in MODULES]
    assert not missing, missing


def _upward(imports: list[Import]) -> list[Import]:
    return [i for i in imports if _layer(i.target) > _layer(i.source)]


def _private(imports: list[Import]) -> list[Import]:
    return [i for i in imports if i.name and i.name.startswith("_") and not i.name.startswith("__")
            and i.target != i.source]


def test_imports_follow_the_layering() -> None:
    upward = _upward(IMPORTS)
    assert not upward, "\n".join(map(repr, upward))


def test_no_module_imports_another_modules_private_name() -> None:
    private = _private(IMPORTS)
    assert not private, "\n".join(map(repr, private))


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (or a module importing itself),
    by Tarjan's algorithm, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in edges[node]:
                        found.append(sorted(component))
    return found


def _graph(imports: list[Import]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {m: set() for m in MODULES}
    for i in imports:
        if i.target in MODULES and i.target != i.source:
            edges[i.source].add(i.target)
    # A package's face importing its own submodules is how a package is built, not a cycle of
    # concepts: the face's edges to modules inside it are left out.
    for module, (_, is_package) in MODULES.items():
        if is_package:
            edges[module] = {t for t in edges[module] if not t.startswith(module + ".")}
    return edges


def test_the_import_graph_has_no_cycle() -> None:
    cycles = _cycles(_graph(IMPORTS))
    assert not cycles, cycles


def test_the_rules_catch_a_violation() -> None:
    """Each rule fails on a made-up violation of it (so a rule that silently matches nothing fails
    here)."""
    upward = Import("ireeabi.abi.cconv", "ireeabi.cli.main", None, 1)
    sideways = Import("ireeabi.hal.buffer", "ireeabi.hal.resource", None, 1)
    downward = Import("ireeabi.cli.main", "ireeabi.abi.cconv", None, 1)
    assert _upward([upward, sideways, downward]) == [upward]
    private = Import("ireeabi.base.heap", "ireeabi.vm.ref", "_release", 1)
    dunder = Import("ireeabi.base.heap", "ireeabi.vm.ref", "__all__", 1)
    assert _private([private, dunder, sideways]) == [private]
    # a type-only import back from the runtime to the API closes a cycle
    type_only = Import("ireeabi.modules.hal.module_api", "ireeabi.modules.hal.runtime",
                       "HalRuntime", 1)
    cycle = ["ireeabi.modules.hal.module_api", "ireeabi.modules.hal.runtime"]
    assert cycle in _cycles(_graph(IMPORTS + [type_only]))
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]
    assert _cycles({"a": {"a"}}) == [["a"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
