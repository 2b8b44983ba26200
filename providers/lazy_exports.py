"""Package roots' exports: the one helper every root uses, its table grouped by module.

A root re-exports its package's public API, but importing all of it eagerly would make the
lightest import pay for the heaviest module (``import telemetry.extractors`` would load httpx
through its parent package). So a root imports at module level only what is cheap, and hands
the rest to ``lazy_exports`` as a table, module → names, each name written once; a name is
imported from its module on first use and cached in the root's namespace.

The convention, in every root (``tests/unit/architecture/test_exported_names.py`` holds it):

* a name is re-exported with ``from module import Name as Name``: PEP 484's explicit re-export,
  which strict mypy and pyright read for a ``py.typed`` package; at module level when it is
  imported eagerly, under ``if TYPE_CHECKING:`` when the table loads it. That import is the type
  checker's view of the table, which it cannot read; the test compares the two, so the one place
  a lazy name is written twice cannot drift.
* the root writes no ``__all__`` and no ``__getattr__``: ``lazy_exports`` derives ``__all__``
  (the public names bound so far, plus the table's) and installs ``__getattr__`` and ``__dir__``
  at run time only, so a type checker never sees a module ``__getattr__`` and a misspelt
  ``providers.Nmae`` is a type error rather than ``Any``.

A plain module with a lazy name of its own (``telemetry.timings``) uses the same call and keeps
its own ``__all__``. This module imports nothing of ours, so even ``providers.abstractions``
may use it.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from types import ModuleType
from typing import Any

__all__ = ["lazy_exports"]


def _export_order(name: str) -> tuple[bool, str]:
    # isort's order, as ruff's RUF022 keeps a written ``__all__``: constants first
    return not name.isupper(), name


def lazy_exports(module: str, table: Mapping[str, tuple[str, ...]]) -> None:
    """Give ``module`` (pass ``__name__``) its lazy names, ``__getattr__`` and ``__dir__``, and
    its ``__all__`` unless it wrote one.

    ``table`` maps a module (absolute, or relative to ``module``'s package when it starts with a
    dot) to the names it provides. Call it last in the root, after the eager imports.
    """
    namespace = sys.modules[module].__dict__
    package = namespace["__package__"]
    origin = {name: source for source, names in table.items() for name in names}

    def __getattr__(name: str) -> Any:
        source = origin.get(name)
        if source is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(source, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *origin})

    namespace["__getattr__"] = __getattr__
    namespace["__dir__"] = __dir__
    if "__all__" not in namespace:
        bound = [
            name
            for name, value in namespace.items()
            if not name.startswith("_") and not isinstance(value, ModuleType)
        ]
        namespace["__all__"] = sorted({*bound, *origin}, key=_export_order)
