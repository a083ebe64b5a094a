"""Checkers for the house import rules, over any source tree (the repo or a test's copy).

Every checker returns what breaks a rule (file paths relative to the root, or a cycle), so
a test can both assert the repo is clean and show the checker flags a planted violation.
"""
from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

PARSER_MODULES = ("json", "orjson", "pyarrow", "loaders.parse", "loaders.index")
FILE_READERS = frozenset({"open", "read_text", "read_bytes"})  # os.open, Path.open, io.open...
EAGER_EXPORTS = "loaders"  # loaders/__init__.py re-exports serve.run; not a real dependency


def python_files(root: Path, *places: str) -> list[Path]:
    """The .py files under each folder (recursively) or the named files, sorted."""
    files: set[Path] = set()
    for place in places:
        path = root / place
        if path.is_dir():
            files |= set(path.rglob("*.py"))
        elif path.exists():
            files.add(path)
    return sorted(f for f in files if "__pycache__" not in f.parts)


def module_name(root: Path, path: Path) -> str:
    """loaders/serve/run.py -> loaders.serve.run; a package's __init__ is the package."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(root: Path, path: Path, node: ast.ImportFrom) -> str:
    """The module an ImportFrom names, with relative imports resolved from the file."""
    if not node.level:
        return node.module or ""
    package = module_name(root, path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    base = package[: len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(root: Path, path: Path) -> Iterator[tuple[str, str | None]]:
    """(module, name imported from it or None) for every import anywhere in a file."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from ((alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(root, path, node)
            yield from ((module, alias.name) for alias in node.names)


def imported_names(root: Path, path: Path) -> set[str]:
    """Every module a file may import: `from a import b` yields a and a.b, as b may be a
    submodule."""
    names: set[str] = set()
    for module, name in _imports(root, path):
        names |= {module} if name is None else {module, f"{module}.{name}"}
    return names


def _under(name: str, modules: Iterable[str]) -> bool:
    return any(name == m or name.startswith(f"{m}.") for m in modules)


def importers(root: Path, files: Iterable[Path], modules: Iterable[str]) -> list[str]:
    """The files that import any of `modules` or their submodules."""
    wanted = tuple(modules)
    return [str(f.relative_to(root)) for f in files
            if any(_under(name, wanted) for name in imported_names(root, f))]


def file_readers(root: Path, files: Iterable[Path]) -> list[str]:
    """The files that call open(), x.open(), x.read_text() or x.read_bytes()."""
    def reads(path: Path) -> bool:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            func = node.func if isinstance(node, ast.Call) else None
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name in FILE_READERS:
                return True
        return False
    return [str(f.relative_to(root)) for f in files if reads(f)]


def _imported_module(module: str, name: str | None, modules: set[str]) -> str:
    """The loaders module an import loads: module.name when that is a module, else the
    nearest enclosing module of `module` ('' outside loaders)."""
    if name is not None and f"{module}.{name}" in modules:
        return f"{module}.{name}"
    while module and module not in modules:
        module = module.rpartition(".")[0]
    return module


def loaders_import_graph(root: Path) -> dict[str, set[str]]:
    """loaders module -> the loaders modules it imports (import_graph of loaders alone)."""
    return import_graph(root, "loaders")


def import_graph(root: Path, *packages: str) -> dict[str, set[str]]:
    """module -> the modules of `packages` it imports. `from loaders.x import y` is an
    import of loaders.x.y when that is a module, else of loaders.x: a submodule taking a
    sibling through its package (collect.py's `from loaders.metrics import lines`) is no
    cycle with the package __init__ that re-exports it."""
    files = python_files(root, *packages)
    modules = {module_name(root, f) for f in files}
    graph: dict[str, set[str]] = {}
    for path in files:
        source = module_name(root, path)
        targets = {_imported_module(module, name, modules)
                   for module, name in _imports(root, path)}
        graph[source] = set() if source == EAGER_EXPORTS else targets - {"", source}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle as [a, b, ..., a], or [] when the graph is acyclic."""
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str]:
        if node in path:
            return path[path.index(node):] + [node]
        if node in done:
            return []
        for target in sorted(graph.get(node, ())):
            if cycle := visit(target, path + [node]):
                return cycle
        done.add(node)
        return []

    for start in sorted(graph):
        if cycle := visit(start, []):
            return cycle
    return []
