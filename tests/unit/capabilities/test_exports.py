"""The package's ``__all__`` is exactly its public names, sorted (like httpx's check), and the
pure modules stay pure."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import capabilities
from tests.unit.exported import exported_names


def test_all_is_the_public_namespace_and_sorted() -> None:
    # The package root is lazy: a public name is either already bound or served on first use
    # (``tests/unit/architecture/test_exported_names.py`` compares the root's table with its
    # re-exports).
    public = {
        name
        for name, value in vars(capabilities).items()
        if not name.startswith("_") and not isinstance(value, type(capabilities))
    } | {name for name in dir(capabilities) if not name.startswith("_")} - {
        name for name, value in vars(capabilities).items() if isinstance(value, type(capabilities))
    }
    exported = exported_names(capabilities)
    assert set(exported) == public
    for name in exported:
        assert not isinstance(getattr(capabilities, name), type(capabilities)), name
    assert exported == sorted(exported, key=lambda n: (not n.isupper(), n))


PURE = [
    "backend",
    "budget",
    "events",
    "family_table",
    "findings",
    "merge",
    "model_id",
    "models",
    "native_payloads",
    "payloads",
]
"""Modules that take and return values: only probes, detect, readiness and the
resolver do I/O."""


@pytest.mark.parametrize("module", PURE)
def test_pure_modules_import_no_io(module: str) -> None:
    source = (Path(capabilities.__file__).parent / f"{module}.py").read_text("utf-8")
    imported: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
    assert not imported & {"httpx", "asyncio", "socket"}, module
