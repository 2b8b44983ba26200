"""Each package root says what it exports, and exports only that (as httpx's
``test_exported_members`` does): an accidental public name is an API someone will depend on.

A lazy root (``providers.lazy_exports``) must also resolve every name it lists, which a typo in its
module map would otherwise hide until a caller's first use.
"""

from __future__ import annotations

import importlib
import re
import types
from pathlib import Path

import pytest

PACKAGES = [
    "providers",
    "providers.abstractions",
    "providers.transport",
    "providers.chat_completions",
    "providers.responses",
    "providers.layers",
    "providers.replay",
    "providers.config",
    "providers.text_tool_calls",
    "capabilities",
    "telemetry",
]

README = Path(__file__).resolve().parents[3] / "README.md"


@pytest.mark.parametrize("name", PACKAGES)
def test_package_exports_exactly_its_all(name: str) -> None:
    package = importlib.import_module(name)
    exported = package.__all__
    assert len(set(exported)) == len(exported), "a name is listed twice"
    for public in exported:
        assert getattr(package, public) is not None
    leaked = {
        attribute
        for attribute in dir(package)
        if not attribute.startswith("_")
        and attribute not in exported
        and not isinstance(getattr(package, attribute), types.ModuleType)
    }
    assert leaked == set()


def _readme_without_dotnet_names() -> str:
    """The README, with the MEAI table's left column (.NET's names, not ours) left out."""
    lines = README.read_text(encoding="utf-8").splitlines()
    kept: list[str] = []
    in_table = False
    for line in lines:
        if line.startswith("### Microsoft.Extensions.AI"):
            in_table = True
        elif in_table and line.startswith("|"):
            kept.append(line.split("|")[2])
            continue
        elif in_table and line.startswith("#"):
            in_table = False
        kept.append(line)
    return "\n".join(kept)


def test_every_name_the_readme_imports_from_providers_is_exported() -> None:
    import providers

    text = _readme_without_dotnet_names()
    shown = set()
    blocks = re.findall(r"^from providers import ([\w, ]+)$", text, re.MULTILINE)
    blocks += re.findall(r"^from providers import \(([^)]*)\)", text, re.MULTILINE)
    for block in blocks:
        shown |= {part.strip() for part in block.replace("\n", ",").split(",") if part.strip()}
    shown |= set(re.findall(r"`(\w+(?:ChatClient|Error|Policy|Timeouts))\b", text))
    assert shown, "the README shows no import from providers"
    missing = sorted(name for name in shown if not hasattr(providers, name))
    assert missing == []
    assert shown <= set(providers.__all__)
