"""Lazy re-exports for package roots: a name is imported from its module on first use.

A package root re-exports its public API, but importing everything eagerly would make the
lightest import pay for the heaviest module: ``import telemetry.extractors`` would load httpx
through its parent package. So roots whose modules are heavy map names to modules and resolve
them here, once, caching the value in the package's namespace.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, names: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``names`` maps a public name to the module
    (relative to ``package`` when it starts with a dot) that defines it."""
    namespace = importlib.import_module(package).__dict__

    def get(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def listing() -> list[str]:
        return sorted({*namespace, *names})

    return get, listing
