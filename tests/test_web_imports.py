"""The layout of the web layer: no import circle among the modules of webapp/ and workers/, imports
in the direction webapp -> workers -> scheduling only, and no module of scheduling/, webapp/ or
workers/ over 600 lines.

The import graph is read from the source with ``ast`` (nothing is imported). Every import counts:
at module level, inside functions and methods, and under ``if TYPE_CHECKING:`` alike, since an
import deferred into a function only hides a circle that is still there. ``from package import
name`` is an edge to ``package.name`` when that is a module of the tree, else to ``package``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GRAPH_PACKAGES = ("webapp", "workers")
SIZE_PACKAGES = ("scheduling", "webapp", "workers")
MAX_LINES = 600


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(packages: tuple[str, ...]) -> dict[str, Path]:
    found = {}
    for package in packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" not in path.parts:
                found[module_name(path)] = path
    return found


def imported(tree: ast.AST, name: str, is_package: bool, known: set[str]) -> set[str]:
    """The modules of ``known`` that the module ``name`` imports anywhere in its source."""
    out: set[str] = set()
    here = name if is_package else name.rpartition(".")[0]  # what a relative import starts from
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = alias.name
                while target and target not in known:  # "import a.b.c" runs a.b.c (and its parents)
                    target = target.rpartition(".")[0]
                if target:
                    out.add(target)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            for alias in node.names:
                if f"{base}.{alias.name}" in known:
                    out.add(f"{base}.{alias.name}")
                elif base in known:
                    out.add(base)
    out.discard(name)
    return out


def import_graph(packages: tuple[str, ...] = GRAPH_PACKAGES) -> dict[str, set[str]]:
    found = modules(packages)
    known = set(found)
    graph = {}
    for name, path in found.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        graph[name] = imported(tree, name, path.name == "__init__.py", known)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan): sets of modules each of
    which imports, directly or not, every other one of its set."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return components


def circle_in(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A shortest circle through the first module of ``component`` (breadth-first inside it)."""
    start = min(component)
    parents: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & component):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(parents[path[-1]])
                    return [*reversed(path), start]
                if w not in parents:
                    parents[w] = v
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"no circle in the component {sorted(component)}")


def test_no_import_circle_in_webapp_and_workers():
    graph = import_graph()
    found = circles(graph)
    assert not found, "import circles:\n" + "\n".join(
        f"{', '.join(c)}: e.g. {' -> '.join(circle_in(graph, set(c)))}" for c in found
    )


def test_dependencies_point_one_way():
    """webapp -> workers -> scheduling (DESIGN section 2): workers/ imports nothing of webapp/, and
    scheduling/ nothing of either."""
    graph = import_graph(("scheduling", "webapp", "workers"))
    upward = sorted(
        f"{a} -> {b}"
        for a, targets in graph.items()
        for b in targets
        if (a.startswith("workers") and b.startswith("webapp"))
        or (a.startswith("scheduling") and b.startswith(("webapp", "workers")))
    )
    assert not upward, "imports against the direction webapp -> workers -> scheduling: " + ", ".join(upward)


def test_the_circle_finder_finds_circles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert circles(graph) == [["a", "b", "c"]]
    assert circle_in(graph, {"a", "b", "c"}) == ["a", "b", "c", "a"]
    tree = ast.parse("from webapp import models, charts\nimport webapp.charts.safe\ndef f():\n from . import x\n")
    known = {"webapp", "webapp.models", "webapp.charts", "webapp.charts.safe", "webapp.x"}
    assert imported(tree, "webapp.views", False, known) == {
        "webapp.models", "webapp.charts", "webapp.charts.safe", "webapp.x"
    }  # fmt: skip
    assert imported(ast.parse("from webapp.models import Run"), "webapp.a", False, known) == {"webapp.models"}
    assert imported(ast.parse("from . import safe"), "webapp.charts", True, known) == {"webapp.charts.safe"}


def test_no_module_over_600_lines():
    long = {
        str(path.relative_to(ROOT)): n
        for path in modules(SIZE_PACKAGES).values()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines: " + ", ".join(f"{p} ({n})" for p, n in sorted(long.items()))
