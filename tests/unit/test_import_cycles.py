"""No two modules of the package import each other, directly or round a longer circle, not
even from inside a function (a circle there only hides until the function runs)."""

from __future__ import annotations

import ast
from graphlib import CycleError
from graphlib import TopologicalSorter
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "sota_casino"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The package's modules that ``path`` imports, wherever in the file."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            target = ".".join([*base, node.module] if node.module else base)
            if not node.level:
                target = node.module or ""
            found |= {
                f"{target}.{alias.name}" if f"{target}.{alias.name}" in modules else target
                for alias in node.names
            }
    return (found & modules) - {name}


def import_graph() -> dict[str, set[str]]:
    paths = [p for p in PACKAGE.rglob("*.py") if "migrations" not in p.parts]
    modules = {_module_name(p) for p in paths}
    return {_module_name(p): _imports(p, modules) for p in paths}


def test_the_graph_is_read() -> None:
    graph = import_graph()
    assert "sota_casino.core.merkle" in graph["sota_casino.core.audit_chain"]
    assert "sota_casino.services.tx" in graph["sota_casino.services.money"]
    assert "sota_casino.cli" in graph["sota_casino.factory"]  # imported inside create_app


def test_no_import_cycles() -> None:
    try:
        TopologicalSorter(import_graph()).prepare()
    except CycleError as error:
        raise AssertionError(f"import cycle: {' -> '.join(error.args[1])}") from None
