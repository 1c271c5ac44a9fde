"""The house rules that can fail, read from the product's source with `ast`:

- every import resolves to a product module: `import` statements wherever they stand (module level,
  inside a function, under TYPE_CHECKING), the names a lazy package face exports
  (abi/lazy_face.py's `lazy_face(...)` tables) and the modules `importlib.import_module` loads by a
  string the source spells out;
- the layering abi <- layouts <- base <- vm <- hal <- modules <- tooling <- cli (an import only
  reaches down or sideways), and inside a layer its sub-layers (the VM's core knows no bytecode, the
  HAL's core no local executables);
- no module imports another module's private name, and none reads a private attribute another
  module defines (a library's underscore names only where listed below, with the reason);
- no cycle between modules, type-only and function-level imports included, nor between packages;
- inside the product, an import of another product module is relative (`from ..ref import Ref`):
  the repository root is the package, which a tool reading the source tree cannot know;
- docs/architecture.md's table names, for every product module, the IREE file it models or why it
  is ireeabi's own, and every file it names exists;
- an op is declared in one file: its fast-path writers (handlers.py's registries) in the module of
  its handler, no op symbol in the fast path's machinery (regions.py, blocks.py, region_plan.py),
  and the text the fast paths generate reaches no private attribute of another object.

Each rule is a function over what the readers found, run on the tree by one test and on a planted
violation by another (a rule that silently matches nothing fails there).
"""
from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("abi", "layouts", "base", "vm", "hal", "modules", "tooling", "cli")
# package -> its sub-package that the rest of the package may not import
SUBLAYERS = {"ireeabi.vm": "ireeabi.vm.bytecode", "ireeabi.hal": "ireeabi.hal.local"}
# Modules that are not Python files of the tree: the C helper setup.py builds (cffi).
EXTENSIONS = {"ireeabi.hal.local._native"}
# Where a module loads another by a name only known at run time (not a string of the source).
DYNAMIC_IMPORTS = {
    "ireeabi.abi.lazy_face": "the face's own loader: the names come from each face's table, read here",
    "ireeabi.layouts.module_sources": "native modules named by the user (--native-module) or by "
                                      "installed packages' entry points",
}
# Product modules that import ireeabi by its absolute name.
ABSOLUTE_IMPORTS = {
    "ireeabi.__main__": "the namespace's other portion (the folder ireeabi/): in the source tree it "
                        "is not beside the packages, so a relative import would name ireeabi/cli",
}
# Private attributes of other libraries the product reads, each for what their public API lacks.
LIBRARY_PRIVATES = {
    "_exit": "os._exit: the documented exit without cleanup (a forked child, a second Ctrl-C)",
    "_getframe": "sys._getframe: the documented frame access, for an allocation's stack",
    "_replace": "namedtuple's documented copy-with-changes (underscored against field clashes)",
    "_handle": "ctypes.CDLL._handle: the documented dlopen handle (dlinfo, dlvsym take it)",
    "_CFuncPtr": "the base class of every ctypes function pointer (ctypes names it nowhere else)",
    "_argtypes_": "a CFUNCTYPE prototype's argument types (ctypes keeps them only there)",
    "_restype_": "a CFUNCTYPE prototype's result type",
    "_uch": "unicorn's engine handle, for the C calls its Python binding does not wrap",
    "_from_ptr": "wasmtime's error and trap from the C API's pointer (a host call's trap)",
    "_func": "wasmtime's C function record, for calls without the binding's per-call checks",
}


class Module:
    def __init__(self, name: str, path: Path, is_package: bool) -> None:
        self.name, self.path, self.is_package = name, path, is_package

    @property
    def package(self) -> str:
        return self.name if self.is_package else self.name.rpartition(".")[0]


def _modules() -> dict[str, Module]:
    """Every product module by its dotted name."""
    out = {}
    for top in LAYERS + ("ireeabi",):
        for path in sorted((ROOT / top).rglob("*.py")):
            inner = list(path.relative_to(ROOT / top).parts)
            parts = ["ireeabi"] + ([] if top == "ireeabi" else [top]) + inner
            parts[-1] = parts[-1][:-3]
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            name = ".".join(parts)
            out[name] = Module(name, path, is_package)
    return out


MODULES = _modules()


@lru_cache(maxsize=None)
def _source(path: Path) -> str:
    return path.read_text()


@lru_cache(maxsize=None)
def _parse(source: str, filename: str) -> ast.Module:
    """Each source parsed once, whichever reader asks (the trees are only read)."""
    return ast.parse(source, filename)


class Import:
    def __init__(self, source: str, target: str, name: str | None, line: int, how: str = "import",
                 absolute: bool = False) -> None:
        self.source, self.target, self.name, self.line, self.how = source, target, name, line, how
        self.absolute = absolute  # an import statement naming ireeabi by its absolute name

    def __repr__(self) -> str:
        what = f"{self.target}.{self.name}" if self.name else self.target
        where = MODULES[self.source].path.relative_to(ROOT) if self.source in MODULES else self.source
        return f"{where}:{self.line} {self.how}s {what}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Import) and repr(self) == repr(other)


# ------------------------------------------------------------------------------------------- readers


def _constants(tree: ast.Module) -> dict[str, object]:
    """Module-level names bound once to a literal (a string, a tuple/list of strings, a dict)."""
    out: dict[str, object] = {}
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else \
            node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(target, ast.Name) and getattr(node, "value", None) is not None:
            out[target.id] = node.value
    return out


def _text(node: ast.AST, module: Module, loop: dict[str, list[str]]) -> list[str] | None:
    """The strings an expression can be: a constant, `__name__`, an f-string of those and of a loop
    variable over a literal list; None when the source does not spell it out."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Name) and node.id == "__name__":
        return [module.name]
    if isinstance(node, ast.Name) and node.id in loop:
        return loop[node.id]
    if isinstance(node, ast.JoinedStr):
        out = [""]
        for part in node.values:
            value = part.value if isinstance(part, ast.FormattedValue) else part
            texts = _text(value, module, loop)
            if texts is None:
                return None
            out = [a + b for a in out for b in texts]
        return out
    return None


def _strings(node: ast.AST | None, constants: dict[str, object]) -> list[str] | None:
    """A literal list/tuple of strings (or a module-level name bound to one)."""
    if isinstance(node, ast.Name) and isinstance(constants.get(node.id), ast.AST):
        node = constants[node.id]  # type: ignore[assignment]
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        values = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return values if len(values) == len(node.elts) else None
    if isinstance(node, ast.Dict):
        return _strings(ast.List(elts=list(node.keys)), constants)
    return None


_NO_LOOP: dict[str, list[str]] = {}


@lru_cache(maxsize=None)
def _nodes(source: str, filename: str) -> tuple[tuple[ast.AST, dict[str, list[str]]], ...]:
    """Every node of a source (one walk, which every reader shares), each with the loop variables
    bound to a literal list around it."""
    tree = _parse(source, filename)
    constants = _constants(tree)
    out = []
    stack: list[tuple[ast.AST, dict[str, list[str]]]] = [(tree, _NO_LOOP)]
    while stack:
        node, loop = stack.pop()
        out.append((node, loop))
        inner = loop
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name):
            values = _strings(node.iter, constants)
            if values is not None:
                inner = {**loop, node.target.id: values}
        children = list(ast.iter_child_nodes(node))
        for child in reversed(children):  # popped in source order
            stack.append((child, loop if child is getattr(node, "iter", None) else inner))
    return tuple(out)


def read_imports(module: Module, source: str) -> list[Import]:
    """Every import of one module's source, resolved to the module it loads (and the name it takes):
    import statements, lazy face tables and importlib strings. An importlib call whose name the
    source does not spell out is an Import with target "?"."""
    tree = _parse(source, str(module.path))
    constants = _constants(tree)
    out: list[Import] = []

    def add(target: str, name: str | None, line: int, how: str, absolute: bool) -> None:
        sub = f"{target}.{name}" if name else None
        if sub in MODULES or sub in EXTENSIONS:
            out.append(Import(module.name, sub, None, line, how, absolute))
        else:
            out.append(Import(module.name, target, name, line, how, absolute))

    for node, loop in _nodes(source, str(module.path)):
        if isinstance(node, ast.Import):
            out += [Import(module.name, a.name, None, node.lineno, absolute=True) for a in node.names
                    if a.name.startswith("ireeabi")]
        elif isinstance(node, ast.ImportFrom):
            target = _from_target(module, node)
            if target.startswith("ireeabi"):
                for a in node.names:
                    add(target, a.name, node.lineno, "import", node.level == 0)
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if called == "import_module" and node.args:
                names = _text(node.args[0], module, loop)
                if names is None and isinstance(node.args[0], ast.Name):
                    bound = constants.get(node.args[0].id) or _imported_constant(tree, module, node.args[0].id)
                    names = _text(bound, module, loop) if isinstance(bound, ast.AST) else None
                if names is None and isinstance(node.args[0], ast.Subscript) and \
                        isinstance(node.args[0].value, ast.Name):
                    # an entry of a module-level table of module names (cli/main.py's commands):
                    # any of its values
                    table = constants.get(node.args[0].value.id)
                    if isinstance(table, ast.Dict) and all(isinstance(v, ast.Constant) and isinstance(v.value, str)
                                                           for v in table.values):
                        names = [v.value for v in table.values]  # type: ignore[union-attr]
                for name in names if names is not None else ["?"]:
                    if name == "?" or name.startswith("ireeabi"):
                        out.append(Import(module.name, name, None, node.lineno, "importlib"))
            elif called == "lazy_face" and len(node.args) >= 3:
                out += _face_imports(module, node, constants)
    return out


def _from_target(module: Module, node: ast.ImportFrom) -> str:
    """The absolute name of the module a `from` import reads, relative (`from ..x`) or not."""
    if not node.level:
        return node.module or ""
    base = module.package.split(".")
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imported_constant(tree: ast.Module, module: Module, name: str) -> object:
    """The literal a name imported from another product module (`from ..x import NAME`) is bound
    to there, if any."""
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and _from_target(module, node) in MODULES and \
                any((a.asname or a.name) == name for a in node.names):
            original = next(a.name for a in node.names if (a.asname or a.name) == name)
            path = MODULES[_from_target(module, node)].path
            return _constants(_parse(_source(path), str(path))).get(original)
    return None


def _face_imports(module: Module, call: ast.Call, constants: dict[str, object]) -> list[Import]:
    """What a `lazy_face(package, globals(), exports, submodules=...)` call loads: each export's
    module (relative to the package, or absolute) and name, and each submodule."""
    out = []
    table = call.args[2]
    if isinstance(table, ast.Name):
        table = constants.get(table.id)  # type: ignore[assignment]
    if not isinstance(table, ast.Dict):
        return [Import(module.name, "?", None, call.lineno, "lazy face")]
    for key, value in zip(table.keys, table.values):
        targets = _text(key, module, {}) if key is not None else None
        names = _strings(value, constants)
        if targets is None or names is None:
            out.append(Import(module.name, "?", None, call.lineno, "lazy face"))
            continue
        target = targets[0] if targets[0].startswith("ireeabi.") else f"{module.name}.{targets[0]}"
        out += [Import(module.name, target, n, call.lineno, "lazy face") for n in names]
    for keyword in call.keywords:
        if keyword.arg == "submodules":
            for sub in _strings(keyword.value, constants) or ["?"]:
                out.append(Import(module.name, f"{module.name}.{sub}" if sub != "?" else "?", None,
                                  call.lineno, "lazy face"))
    return out


def _all_imports() -> list[Import]:
    return [i for m in MODULES.values() for i in read_imports(m, _source(m.path))]


@lru_cache(maxsize=None)
def imports() -> list[Import]:
    """Every import of the product (read once per process, when a test first asks: collecting the
    suite, which every xdist worker does, read none of it; it cost each worker 2.5 s of CPU)."""
    return _all_imports()


class Attribute:
    def __init__(self, source: str, attr: str, line: int, text: str) -> None:
        self.source, self.attr, self.line, self.text = source, attr, line, text

    def __repr__(self) -> str:
        where = MODULES[self.source].path.relative_to(ROOT) if self.source in MODULES else self.source
        return f"{where}:{self.line} reads {self.text}"


def _defined(source: str, filename: str) -> set[str]:
    """The names a module's source binds: functions, classes, assignments (to names and to
    attributes), arguments, keyword names, imports."""
    out: set[str] = set()
    for node, _ in _nodes(source, filename):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, ast.keyword) and node.arg:
            out.add(node.arg)  # setattr-like factories: dataclass fields by keyword
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update(a.asname or a.name.split(".")[0] for a in node.names)
    return out


def read_private_attributes(module: Module, source: str) -> list[Attribute]:
    """Private attributes (`x._name`, not dunder) a module reads on anything but self or cls that
    it does not define itself: another module's, or another library's."""
    defined = _defined(source, str(module.path))
    out = []
    for node, _ in _nodes(source, str(module.path)):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            if node.attr not in defined:
                out.append(Attribute(module.name, node.attr, node.lineno, ast.unparse(node)))
    return out


@lru_cache(maxsize=None)
def attributes() -> list[Attribute]:
    """Every private attribute read across modules (read once per process, as `imports`)."""
    return [a for m in MODULES.values() for a in read_private_attributes(m, _source(m.path))]


# --------------------------------------------------------------------------------------------- rules


def _layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in LAYERS:
        return LAYERS.index(parts[1])
    return len(LAYERS)  # ireeabi itself and ireeabi.__main__ sit on top


def unresolved(imports: list[Import]) -> list[Import]:
    return [i for i in imports if i.target not in MODULES and i.target not in EXTENSIONS
            and not (i.target == "?" and i.source in DYNAMIC_IMPORTS)]


def upward(imports: list[Import]) -> list[Import]:
    return [i for i in imports if i.target != "?" and _layer(i.target) > _layer(i.source)]


def absolute_imports(imports: list[Import]) -> list[Import]:
    return [i for i in imports if i.absolute and i.source not in ABSOLUTE_IMPORTS]


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def across_sublayers(imports: list[Import]) -> list[Import]:
    """Imports from a package's core (the package minus its sub-layer) into the sub-layer."""
    return [i for i in imports for package, sub in SUBLAYERS.items()
            if _inside(i.source, package) and not _inside(i.source, sub) and _inside(i.target, sub)]


def private_names(imports: list[Import]) -> list[Import]:
    return [i for i in imports if i.name and i.name.startswith("_") and not i.name.startswith("__")
            and i.target != i.source]


def private_attributes(reads: list[Attribute]) -> list[Attribute]:
    return [a for a in reads if a.attr not in LIBRARY_PRIVATES]


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (or a node importing itself), by
    Tarjan's algorithm, iteratively."""
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
                    work.append((child, iter(sorted(edges.get(child, ())))))
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
                    if len(component) > 1 or node in edges.get(node, ()):
                        found.append(sorted(component))
    return found


def module_graph(imports: list[Import]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {m: set() for m in MODULES}
    for i in imports:
        if i.target in MODULES and i.target != i.source:
            edges[i.source].add(i.target)
    # A package's face importing its own submodules is how a package is built, not a cycle of
    # concepts: the face's edges to modules inside it are left out.
    for module in MODULES.values():
        if module.is_package:
            edges[module.name] = {t for t in edges[module.name] if not t.startswith(module.name + ".")}
    return edges


def package_graph(imports: list[Import]) -> dict[str, set[str]]:
    """Package -> the packages its modules import (a face's imports of its own modules left out)."""
    edges: dict[str, set[str]] = {m.package: set() for m in MODULES.values()}
    for source, targets in module_graph(imports).items():
        for target in targets:
            a, b = MODULES[source].package, MODULES[target].package
            if a != b:
                edges[a].add(b)
    return edges


# ------------------------------------------------------------------------------ the rules, on the tree


def test_every_import_resolves_to_a_product_module() -> None:
    missing = unresolved(imports())
    assert not missing, "\n".join(map(repr, missing))


def test_imports_follow_the_layering() -> None:
    found = upward(imports())
    assert not found, "\n".join(map(repr, found))


def test_product_imports_are_relative() -> None:
    found = absolute_imports(imports())
    assert not found, "\n".join(map(repr, found))


def test_sublayers_are_kept() -> None:
    found = across_sublayers(imports())
    assert not found, "\n".join(map(repr, found))


def test_no_module_imports_another_modules_private_name() -> None:
    found = private_names(imports())
    assert not found, "\n".join(map(repr, found))


def test_no_module_reads_another_modules_private_attribute() -> None:
    found = private_attributes(attributes())
    assert not found, "\n".join(map(repr, found))
    # the library names listed are other libraries': no product module defines them
    ours = {a for m in MODULES.values() for a in _defined(_source(m.path), str(m.path))
            if a in LIBRARY_PRIVATES}
    assert not ours, ours


def test_the_import_graph_has_no_cycle() -> None:
    found = cycles(module_graph(imports()))
    assert not found, found


def test_the_package_graph_has_no_cycle() -> None:
    found = cycles(package_graph(imports()))
    assert not found, found


def test_the_readers_see_faces_and_importlib() -> None:
    """The tree's own lazy faces and importlib strings are read (a reader that finds none of them
    checks nothing)."""
    hows = {(i.source, i.how) for i in imports()}
    for face in ("ireeabi.abi.cconv", "ireeabi.vm.bytecode", "ireeabi.modules", "ireeabi.tooling"):
        assert (face, "lazy face") in hows, face
    assert ("ireeabi.layouts", "importlib") in hows
    catalog = {i.target for i in imports() if i.source == "ireeabi.layouts" and i.how == "importlib"}
    assert {"ireeabi.layouts.base", "ireeabi.layouts.hal_buffer"} <= catalog
    commands = {i.target for i in imports() if i.source == "ireeabi.cli.main" and i.how == "importlib"}
    assert {"ireeabi.cli.cmd_run", "ireeabi.cli.cmd_compare"} <= commands  # a table's entries


# -------------------------------------------------------------------- the rules, on planted violations


def _planted(name: str, source: str, is_package: bool = False) -> tuple[Module, str]:
    path = ROOT / (name.replace("ireeabi.", "").replace(".", "/") + ("/__init__.py" if is_package else ".py"))
    return Module(name, path, is_package), source


def test_a_planted_unresolved_import_is_found() -> None:
    """A module that is not in the tree, by an import, a face's table or importlib, and an importlib
    name the source does not spell out."""
    module, source = _planted("ireeabi.vm.planted", (
        "import ireeabi.vm.no_such_module\nimport importlib\nfrom ireeabi.abi.lazy_face import lazy_face\n"
        "__getattr__, __dir__ = lazy_face(__name__, globals(), {'ireeabi.vm.gone': ('x',)})\n"
        "importlib.import_module('ireeabi.vm.list')\nimportlib.import_module(name)\n"))
    found = unresolved(read_imports(module, source))
    assert [i.target for i in found] == ["ireeabi.vm.no_such_module", "ireeabi.vm.gone", "?"]


def test_a_planted_upward_import_is_found() -> None:
    module, source = _planted("ireeabi.abi.planted", "def f():\n    from ireeabi.cli import main\n")
    sideways = Import("ireeabi.hal.buffer", "ireeabi.hal.resource", None, 1)
    downward = Import("ireeabi.cli.main", "ireeabi.abi.cconv", None, 1)
    found = upward(read_imports(module, source) + [sideways, downward])
    assert [(i.source, i.target) for i in found] == [("ireeabi.abi.planted", "ireeabi.cli.main")]


def test_planted_relative_imports_are_read() -> None:
    """Relative imports of every depth, from a module and from a package's face, name the modules
    they load (a submodule by `from . import x`), and a constant imported relatively is read."""
    module, source = _planted("ireeabi.hal.local.planted", (
        "from . import native\nfrom .elf_loader import load\nfrom .. import buffer\n"
        "from ..buffer import Buffer\ndef f():\n    from ...abi import layout\n"
        "import importlib\nfrom ..local.native_build import INSTALLED_NAME\n"
        "importlib.import_module(INSTALLED_NAME)\n"))
    imports = read_imports(module, source)
    assert [(i.target, i.name, i.how, i.absolute) for i in imports] == [
        ("ireeabi.hal.local.native", None, "import", False),
        ("ireeabi.hal.local.elf_loader", "load", "import", False),
        ("ireeabi.hal.buffer", None, "import", False), ("ireeabi.hal.buffer", "Buffer", "import", False),
        ("ireeabi.abi.layout", None, "import", False),
        ("ireeabi.hal.local.native_build", "INSTALLED_NAME", "import", False),
        ("ireeabi.hal.local._native", None, "importlib", False)]
    face, source = _planted("ireeabi.hal.local", "from .native import run\nfrom ..buffer import x\n",
                            is_package=True)
    assert [i.target for i in read_imports(face, source)] == ["ireeabi.hal.local.native",
                                                              "ireeabi.hal.buffer"]


def test_a_planted_absolute_import_is_found() -> None:
    """`from ireeabi.x import`, `import ireeabi.x`, at module level or in a function, are found; a
    relative import, a string importlib loads, and the listed module's are not."""
    module, source = _planted("ireeabi.vm.planted", (
        "import importlib\nfrom ireeabi.vm import ref\nimport ireeabi.vm.list as vm_list\n"
        "from .ref import Ref\ndef f():\n    from ireeabi.abi.layout import Field\n"
        "importlib.import_module('ireeabi.vm.list')\n"))
    found = absolute_imports(read_imports(module, source))
    assert [(i.line, i.target) for i in found] == [(2, "ireeabi.vm.ref"), (3, "ireeabi.vm.list"),
                                                   (6, "ireeabi.abi.layout")]
    main, source = _planted("ireeabi.__main__", "from ireeabi.cli.__main__ import run\n")
    assert absolute_imports(read_imports(main, source)) == []


def test_a_planted_lazy_face_export_is_read() -> None:
    """A face's table, relative and absolute names, and its submodules, are imports."""
    module, source = _planted("ireeabi.abi.planted", (
        "from ireeabi.abi.lazy_face import lazy_face\n"
        "_TABLE = {'cconv': ('parse',), 'ireeabi.cli.main': ('main',), f'{__name__}.views': ('build',)}\n"
        "__getattr__, __dir__ = lazy_face(__name__, globals(), _TABLE, submodules=['layout'])\n"),
        is_package=True)
    imports = [i for i in read_imports(module, source) if i.how == "lazy face"]
    assert [(i.target, i.name) for i in imports] == [
        ("ireeabi.abi.planted.cconv", "parse"), ("ireeabi.cli.main", "main"),
        ("ireeabi.abi.planted.views", "build"), ("ireeabi.abi.planted.layout", None)]
    assert [i.target for i in upward(imports)] == ["ireeabi.cli.main"]


def test_a_planted_importlib_string_is_read() -> None:
    """importlib.import_module of a constant, a module-level name, and an f-string over a literal
    list are imports; a name the source does not spell out is not resolved."""
    module, source = _planted("ireeabi.layouts.planted", (
        "import importlib\nWHERE = 'ireeabi.cli.main'\nPARTS = ['cmd_run', 'render']\n"
        "importlib.import_module('ireeabi.tooling.program')\nimportlib.import_module(WHERE)\n"
        "for p in PARTS:\n    importlib.import_module(f'ireeabi.cli.{p}')\n"
        "importlib.import_module(input())\n"), is_package=True)
    imports = read_imports(module, source)
    assert [i.target for i in imports] == ["ireeabi.tooling.program", "ireeabi.cli.main",
                                            "ireeabi.cli.cmd_run", "ireeabi.cli.render", "?"]
    assert len(upward(imports)) == 4 and [i.target for i in unresolved(imports)] == ["?"]


def test_a_planted_sublayer_import_is_found() -> None:
    vm_core = Import("ireeabi.vm.ref", "ireeabi.vm.bytecode.isa", None, 1)
    hal_core = Import("ireeabi.hal.buffer", "ireeabi.hal.local.native", None, 1)
    allowed = [Import("ireeabi.vm.bytecode.dispatch", "ireeabi.vm.ref", None, 1),
               Import("ireeabi.hal.local.native", "ireeabi.hal.buffer", None, 1),
               Import("ireeabi.modules.hal.loader", "ireeabi.hal.local.native", None, 1)]
    assert across_sublayers([vm_core, hal_core] + allowed) == [vm_core, hal_core]


def test_a_planted_private_name_import_is_found() -> None:
    private = Import("ireeabi.vm.native_module", "ireeabi.vm.ref", "_release", 1)
    dunder = Import("ireeabi.vm.native_module", "ireeabi.vm.ref", "__all__", 1)
    public = Import("ireeabi.vm.native_module", "ireeabi.vm.ref", "Ref", 1)
    assert private_names([private, dunder, public]) == [private]


def test_a_planted_private_attribute_read_is_found() -> None:
    """Reading another module's private attribute is found; the module's own, through self, and a
    listed library's are not."""
    module, source = _planted("ireeabi.modules.hal.planted", (
        "class Mine:\n"
        "    def __init__(self, other):\n"
        "        self._mine = 1\n"
        "        self._length = other._length\n"  # defined here too: this module's own
        "    def peer(self, other):\n"
        "        return other._mine, self._theirs, Mine._mine\n"
        "def bind(inline, lib):\n"
        "    return inline._view_assert, lib._handle\n"))
    found = private_attributes(read_private_attributes(module, source))
    assert [a.text for a in found] == ["inline._view_assert"]


def test_a_planted_cycle_is_found() -> None:
    # a type-only import back from the runtime to the module API closes a module cycle
    type_only = Import("ireeabi.modules.hal.module_api", "ireeabi.modules.hal.runtime", "HalRuntime", 1)
    assert ["ireeabi.modules.hal.module_api", "ireeabi.modules.hal.runtime"] in \
        cycles(module_graph(imports() + [type_only]))
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]
    assert cycles({"a": {"a"}}) == [["a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_a_planted_package_cycle_is_found() -> None:
    """vm's core importing the bytecode package (which imports the core) is a package cycle even
    where no module cycle is."""
    back = Import("ireeabi.vm.testing", "ireeabi.vm.bytecode.isa", None, 1)
    assert not cycles(module_graph(imports() + [back]))
    assert ["ireeabi.vm", "ireeabi.vm.bytecode"] in cycles(package_graph(imports() + [back]))


# ------------------------------------------------------------------------- IREE's files and ireeabi's


ARCHITECTURE = ROOT / "docs" / "architecture.md"
OWN = "ireeabi's own:"


def read_table(text: str) -> list[tuple[str, list[str], list[str]]]:
    """The rows of the table under "## IREE's files and ireeabi's": (IREE cell, the IREE paths in
    it, the ireeabi paths of the second cell)."""
    section = text.split("## IREE's files and ireeabi's", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if len(cells) != 2 or set(cells[1]) <= set("-: ") or cells[1] == "ireeabi":
            continue
        rows.append((cells[0], re.findall(r"`([^`]+)`", cells[0]), re.findall(r"`([^`]+)`", cells[1])))
    return rows


def table_problems(rows: list[tuple[str, list[str], list[str]]], files: set[str], root: Path) -> list[str]:
    """What the table gets wrong: a row naming neither an IREE file nor why it is ireeabi's own, an
    ireeabi path that does not exist, a product file no row names (a package's __init__.py is named
    by its folder, `vm/`)."""
    problems = []
    named: set[str] = set()
    for iree, iree_paths, ours in rows:
        if not ours:
            problems.append(f"row {iree!r}: no ireeabi file")
        if iree.startswith(OWN):
            if len(iree) - len(OWN) < 10:
                problems.append(f"row of {ours}: ireeabi's own, but not why")
        elif not iree_paths or not all(p.startswith(("runtime/", "tools/", "compiler/")) for p in iree_paths):
            problems.append(f"row of {ours}: {iree!r} names no IREE file (or says why it is ireeabi's own)")
        for path in ours:
            if not (root / path.rstrip("/")).exists():
                problems.append(f"{path}: listed, but not in the tree")
            named.add(path[:-1] + "/__init__.py" if path.endswith("/") else path)
    problems += [f"{f}: in the tree, but in no row" for f in sorted(files - named)]
    return problems


def test_the_iree_table_names_every_module() -> None:
    files = {str(m.path.relative_to(ROOT)) for m in MODULES.values()}
    problems = table_problems(read_table(ARCHITECTURE.read_text()), files, ROOT)
    assert not problems, "\n".join(problems)


def test_a_planted_table_problem_is_found(tmp_path: Path) -> None:
    (tmp_path / "vm").mkdir()
    for name in ("__init__.py", "context.py", "heap.py", "ops.py"):
        (tmp_path / "vm" / name).write_text("")
    text = ("## IREE's files and ireeabi's\n\n| IREE | ireeabi |\n|---|---|\n"
            "| `runtime/src/iree/vm/` | `vm/` |\n"
            "| `runtime/src/iree/vm/context.c` | `vm/context.py` |\n"
            "| `runtime/src/iree/vm/invocation.c` | `vm/invocation.py` |\n"  # not in the tree
            "| ireeabi's own: | `vm/heap.py` |\n"  # no reason
            "| the VM's ops | `vm/ops.py` |\n"  # neither an IREE path nor own
            "\n## Next\n")
    files = {"vm/__init__.py", "vm/context.py", "vm/heap.py", "vm/ops.py", "vm/list.py"}
    problems = table_problems(read_table(text), files, tmp_path)
    assert problems == ["vm/invocation.py: listed, but not in the tree",
                        "row of ['vm/heap.py']: ireeabi's own, but not why",
                        "row of ['vm/ops.py']: \"the VM's ops\" names no IREE file (or says why it "
                        "is ireeabi's own)",
                        "vm/list.py: in the tree, but in no row"]



# ------------------------------------------------------------------------- the ops and the fast path

# The fast path's op-independent machinery: an op's fast path is declared beside its handler.
FAST_PATH_MACHINERY = ("vm/bytecode/regions.py", "vm/bytecode/blocks.py", "vm/bytecode/region_plan.py",
                       "vm/bytecode/value_ranges.py")
# A generated text's own object, bound under this name by the object that wrote the text (a planned
# call's `_self`): its private attributes are its own.
GENERATED_SELF = "_self"


def misplaced_writers(tables: dict[str, dict], home: Any) -> list[str]:
    """Fast-path declarations (per kind: op symbol -> function) written in another module than
    the op's handler (`home(symbol)`: what makes the handler, None for an op without one)."""
    out = []
    for kind, table in tables.items():
        for symbol, f in sorted(table.items()):
            maker = home(symbol)
            where = None if maker is None else maker.__module__
            if f.__module__ != where:
                out.append(f"{kind} of {symbol}: in {f.__module__}, its handler in {where}")
    return out


def op_literals(source: str, symbols: set[str]) -> list[str]:
    """The string constants of `source` that are op symbols of the ISA."""
    return [node.value for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in symbols]


def private_reaches(text: str) -> list[str]:
    """`x._name` in generated text where x is not the text's own object (GENERATED_SELF)."""
    return [ast.unparse(node) for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
            and not (isinstance(node.value, ast.Name) and node.value.id == GENERATED_SELF)]


def _op_symbols() -> set[str]:
    from ireeabi.vm.bytecode import isa  # noqa: PLC0415
    return {op.symbol for table in isa.OPCODES.values() for op in table.values()}


def test_every_op_declares_its_fast_path_beside_its_handler() -> None:
    from ireeabi.vm.bytecode.compile import handler_maker  # noqa: PLC0415 - the op modules registered
    from ireeabi.vm.bytecode.handlers import (BLOCK_WRITERS, CONDITION_RULES, CONSTANT_RULES,  # noqa: PLC0415
                                              INTERVAL_EDGES, INTERVAL_RULES, NONZERO_TESTS, REGION_ACCESSES,
                                              REGION_WRITERS)
    tables = {"region accesses": REGION_ACCESSES, "region writer": REGION_WRITERS, "block writer": BLOCK_WRITERS,
              "interval rule": INTERVAL_RULES, "condition rule": CONDITION_RULES, "interval edges": INTERVAL_EDGES}
    # the compilers inline something; the value ranges know results, compares and branches
    assert REGION_WRITERS and BLOCK_WRITERS and INTERVAL_RULES and CONDITION_RULES and INTERVAL_EDGES
    assert CONSTANT_RULES <= set(INTERVAL_RULES) and NONZERO_TESTS <= set(CONDITION_RULES)  # flags of rules
    problems = misplaced_writers(tables, handler_maker)
    assert not problems, "\n".join(problems)


def test_a_planted_misplaced_writer_is_found() -> None:
    from ireeabi.vm.bytecode.compile import handler_maker  # noqa: PLC0415
    from ireeabi.vm.bytecode.handlers import REGION_WRITERS  # noqa: PLC0415

    def planted(w: Any, i: int, end: int, lines: list, pad: str) -> None:
        """A writer of vm.add.i32 outside ops_scalar.py."""

    tables = {"region writer": {"AddI32": planted, "BufferLoadI32": REGION_WRITERS["BufferLoadI32"]},
              "block writer": {"NoSuchOp": planted}}
    assert misplaced_writers(tables, handler_maker) == [
        "region writer of AddI32: in test_architecture, its handler in ireeabi.vm.bytecode.ops_scalar",
        "block writer of NoSuchOp: in test_architecture, its handler in None"]


def test_the_fast_path_machinery_names_no_op() -> None:
    symbols = _op_symbols()
    found = {path: op_literals(_source(ROOT / path), symbols) for path in FAST_PATH_MACHINERY}
    assert not any(found.values()), found


def test_a_planted_op_literal_is_found() -> None:
    source = ('"""Names vm.cond_br\'s symbol in a docstring: CondBranch."""\n'
              'if symbol == "CondBranch" or symbol in {"Block", "Branchy"}:\n'
              '    text = f"{op}I32"\n')
    assert op_literals(source, _op_symbols()) == ["CondBranch", "Block"]


def test_generated_text_reaches_no_private_attribute() -> None:
    """The call-site text of the heap's scratch stack (both forms) and the region and block
    functions of a real module (loops with buffer loads and stores, selects, float ops)."""
    import linecache  # noqa: PLC0415

    from support import iree_tools  # noqa: PLC0415
    from ireeabi.base.heap import Heap  # noqa: PLC0415
    from ireeabi.vm.bytecode import Context  # noqa: PLC0415
    texts = []
    heap = Heap()
    for n in (16, 0):
        push, pop, _ = heap.scratch_source(n)
        texts.append("\n".join(push + pop))
    path = iree_tools.compile_with_flags(ROOT / "tests" / "programs" / "host" / "loops.vm.mlir",
                                         iree_tools.VM_INPUT_FLAGS)
    with Context(path) as ctx:
        files = {entry[0].__code__.co_filename for fn in ctx.compile_all() for entry in fn.code
                 if entry[0].__code__.co_filename.startswith("<block")}
        texts += ["".join(linecache.getlines(f)) for f in sorted(files)]
    assert any(f.startswith("<block") and "locals region" in f for f in files)
    assert all(texts)
    found = [reach for text in texts for reach in private_reaches(text)]
    assert not found, found


def test_a_planted_private_reach_is_found() -> None:
    text = ("def call(flat):\n"
            "    top = _scratch_heap._stack_top\n"
            "    ctx = _self._ctx\n"
            "    return flat.__len__(), _scratch_heap.stack_hi\n")
    assert private_reaches(text) == ["_scratch_heap._stack_top"]
