"""Settings given in ``defaults`` and again in a backend, merged field by field."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

__all__ = ["overlay"]


def overlay(base: BaseModel | None, top: BaseModel | None) -> dict[str, Any] | None:
    """The fields set in ``base``, then those set in ``top`` over them; ``None`` if neither is
    given."""
    if base is None and top is None:
        return None
    merged: dict[str, Any] = {}
    for part in (base, top):
        if part is not None:
            merged.update(part.model_dump(exclude_unset=True))
    return merged
