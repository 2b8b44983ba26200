"""The error an adapter raises when its framework is not installed.

A bare ``ModuleNotFoundError: No module named 'langchain_core'`` names a package the user never
asked for; the adapter knows which oaicompat extra brings it, so it says so. The error stays a
``ModuleNotFoundError`` (with ``name`` set), so code that probes for an optional adapter with
``except ImportError`` keeps working.
"""

from __future__ import annotations

__all__ = ["missing_extra"]


def missing_extra(error: ModuleNotFoundError, adapter: str, extra: str) -> ModuleNotFoundError:
    """The error to raise from ``error`` (an import of the adapter's framework that failed):
    which module is missing, which adapter needs it and the command that installs it."""
    missing = error.name or "a framework module"
    message = (
        f"{adapter} needs {missing!r}, which is not installed: pip install 'oaicompat[{extra}]'"
    )
    return ModuleNotFoundError(message, name=error.name, path=error.path)
