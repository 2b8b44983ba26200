"""The base of every configuration model: unknown keys refused, values frozen, docs from code."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["Strict"]


class Strict(BaseModel):
    """Attribute docstrings become field descriptions: the README's configuration reference is
    generated from them (``providers.config.reference``), so code and docs cannot drift."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
