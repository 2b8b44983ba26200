"""The import graph of ``providers``, ``capabilities`` and ``telemetry``, read with ``ast``.

Nothing is imported to build it, so a test over it cannot be fooled by what happens to be in
``sys.modules`` already. An edge is one ``import`` statement; those under ``if TYPE_CHECKING``
are left out (they never run), those inside a function are kept and marked, since a deferred
import is still a dependency.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ("providers", "capabilities", "telemetry")


@dataclass(frozen=True, slots=True)
class Edge:
    source: str
    target: str
    line: int
    deferred: bool
    """Inside a function: loaded on first call, not at import."""
    reason: str | None
    """The ``# deferred: …`` comment on the line above a deferred import, if any."""


def module_files() -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def _owner(name: str, modules: dict[str, Path]) -> str | None:
    """The module of ours that ``name`` (a module, or a name inside one) resolves to."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        parts = module.split(".")
        if not is_package:
            parts = parts[:-1]
        parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join([*parts, *([node.module] if node.module else [])])
    return [f"{base}.{alias.name}" for alias in node.names]


def _is_type_checking(node: ast.If) -> bool:
    return "TYPE_CHECKING" in ast.unparse(node.test)


def _deferral_reason(lines: list[str], lineno: int) -> str | None:
    above = lines[lineno - 2].strip() if lineno > 1 else ""
    if not above.startswith("# deferred:"):
        return None
    return above.removeprefix("# deferred:").strip() or None


def _module_edges(module: str, path: Path, modules: dict[str, Path]) -> list[Edge]:
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    is_package = path.name == "__init__.py"
    found: list[Edge] = []
    pending: list[tuple[ast.AST, bool]] = [(ast.parse(source), False)]
    while pending:
        node, deferred = pending.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                pending.extend((orelse, deferred) for orelse in child.orelse)
                continue
            if isinstance(child, ast.Import | ast.ImportFrom):
                reason = _deferral_reason(lines, child.lineno)
                for name in _targets(child, module, is_package):
                    target = _owner(name, modules)
                    if target is not None and target != module:
                        found.append(Edge(module, target, child.lineno, deferred, reason))
            inner = deferred or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            pending.append((child, inner))
    return found


def edges() -> list[Edge]:
    modules = module_files()
    return [
        edge for module, path in modules.items() for edge in _module_edges(module, path, modules)
    ]


def cycles(graph_edges: list[Edge]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    graph: dict[str, set[str]] = {}
    for edge in graph_edges:
        graph.setdefault(edge.source, set()).add(edge.target)
        graph.setdefault(edge.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, list[str]]] = [(start, sorted(graph[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, pending = work[-1]
            if pending:
                nxt = pending.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph[nxt])))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components
