"""The package's shape (STYLE.md §5 and §14): one registry imports the formats; a flat API."""

from __future__ import annotations

from pathlib import Path

import providers.text_tool_calls as package
from providers.text_tool_calls.registry import FORMATS
from tests.unit.exported import exported_names

PROVIDERS = Path(package.__file__).resolve().parents[1]


def test_public_names() -> None:
    assert exported_names(package) == [
        "ERROR_KEY",
        "FORMAT_NAMES",
        "TextToolCallParser",
        "not_offered",
        "offered_tool_names",
        "offered_tools",
    ]
    assert package.ERROR_KEY == "text_tool_call_error"


def test_only_the_registry_imports_format_modules() -> None:
    importers = {
        path.relative_to(PROVIDERS).as_posix()
        for path in PROVIDERS.rglob("*.py")
        if "text_tool_calls.formats" in path.read_text(encoding="utf-8")
        and "text_tool_calls/formats/" not in path.as_posix()
    }
    assert importers == {"text_tool_calls/registry.py"}


def test_one_module_per_format() -> None:
    modules = {p.stem for p in (PROVIDERS / "text_tool_calls" / "formats").glob("[!_]*.py")}
    assert modules == set(FORMATS)
