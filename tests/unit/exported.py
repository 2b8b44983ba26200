"""A package root's run-time ``__all__``, read with its type.

Every root follows ``providers/lazy_exports.py``: it writes no ``__all__``, ``lazy_exports``
derives one at run time. So a type checker rightly sees none (``telemetry.__all__`` is an
``attr-defined`` error), and the tests that hold a root to its ``__all__`` read it through this
one helper, which also checks that it is what it must be: a list of names.
"""

from __future__ import annotations

from types import ModuleType

__all__ = ["exported_names"]


def exported_names(package: ModuleType) -> list[str]:
    """``package.__all__`` as ``lazy_exports`` left it (order kept: tests compare it)."""
    names = vars(package)["__all__"]
    assert isinstance(names, list), f"{package.__name__}.__all__ is not a list"
    checked = [name for name in names if isinstance(name, str)]
    assert checked == names, f"{package.__name__}.__all__ holds a name that is not a str"
    return checked
