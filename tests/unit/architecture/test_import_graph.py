"""Imports run one way: abstractions ← transport ← wire clients ← layers ← composition.

The ranks below are the architecture; README's "Layout" section draws the same picture. A module
may import its own package's modules and any package of a lower rank, never one of the same
rank or higher. ``capabilities`` sits under the wire clients, which ask it for the context
window and a wrong model id's diagnosis; ``telemetry`` sits beside the layers (its clients are
layers); only the composition top sees all of them.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.unit.architecture.import_graph import ROOT, Edge, cycles, edges, module_files

RANKS: dict[str, int] = {
    "providers.lazy_exports": -1,
    "providers.abstractions": 0,
    "providers.backends": 1,
    "providers.reasoning": 1,
    "providers.text_tool_calls": 1,
    "providers.transport": 2,
    "capabilities": 3,
    "providers.chat_completions": 4,
    "providers.responses": 5,
    "providers.embeddings": 5,
    "providers.rerank": 5,
    "providers.layers": 6,
    "telemetry": 6,
    "providers.replay": 7,
    "providers.builder": 8,
    "providers.factory": 9,
    "providers.config": 10,
    "providers.integrations": 11,
    "providers.gateway": 12,
    "providers.cli": 13,
    "providers.__main__": 14,
    "providers": 14,
}
"""Package (or module) → rank. The longest matching prefix decides a module's package."""


def package_of(module: str) -> str:
    best = ""
    for name in RANKS:
        if (module == name or module.startswith(name + ".")) and len(name) > len(best):
            best = name
    assert best, f"{module} belongs to no package of the layout: add it to RANKS"
    return best


GRAPH = edges()


def _describe(edge: Edge) -> str:
    kind = "deferred import" if edge.deferred else "import"
    return f"{edge.source}:{edge.line} {kind} of {edge.target}"


def test_every_module_has_a_place_in_the_layout() -> None:
    for module in module_files():
        package_of(module)


def test_no_import_cycle_between_modules() -> None:
    assert cycles(GRAPH) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    ring = [Edge("a", "b", 1, False, None), Edge("b", "c", 1, False, None)]
    assert cycles(ring) == []
    assert cycles([*ring, Edge("c", "a", 1, True, None)]) == [["a", "b", "c"]]


def test_imports_point_down_only() -> None:
    upward = []
    for edge in GRAPH:
        source, target = package_of(edge.source), package_of(edge.target)
        if source == target or edge.source == "providers":
            continue  # a package's own modules; the root re-exports the public API
        if RANKS[target] >= RANKS[source]:
            upward.append(_describe(edge) + f" ({source} may not import {target})")
    assert upward == []


def test_deferred_imports_say_why() -> None:
    """A deferred import is for an optional extra or a measured cold-start saving, and the
    comment above it says which."""
    unexplained = [_describe(edge) for edge in GRAPH if edge.deferred and not edge.reason]
    assert unexplained == []


@pytest.mark.parametrize(
    "module",
    ["telemetry.extractors", "capabilities.detect", "providers", "providers.abstractions"],
)
def test_low_modules_do_not_load_the_wire_client_or_the_layers(module: str) -> None:
    code = (
        f"import sys, {module}\n"
        "loaded = [m for m in sys.modules if m.startswith(('providers.chat_completions',"
        " 'providers.responses', 'providers.layers'))]\n"
        "print(','.join(sorted(loaded)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""


def test_a_pure_extractor_does_not_load_httpx() -> None:
    code = "import sys, telemetry.extractors\nprint('httpx' in sys.modules)\n"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"
