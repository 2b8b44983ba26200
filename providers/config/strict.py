"""The base of every configuration model: unknown keys refused, values frozen, docs from code."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["Strict"]


class Strict(BaseModel):
    """Attribute docstrings become field descriptions: the README's configuration reference is
    generated from them (``providers.config.reference``), so code and docs cannot drift.

    ``protected_namespaces=()``: ``model_id`` and ``model_family`` are the file's own keys, and
    pydantic before 2.10 warned on every load that they shadow its ``model_`` namespace."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, use_attribute_docstrings=True, protected_namespaces=()
    )
