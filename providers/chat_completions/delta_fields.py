"""Reading the delta fields that need more than one line: reasoning under several names, and
the mapping check every level of a chunk makes. Split from ``normalize`` (its full path calls
these; the common chunk never reaches them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard

from providers.abstractions.contents import AIContent, TextReasoningContent

__all__ = ["is_mapping", "read_reasoning"]

_new = object.__new__


def read_reasoning(
    delta: Mapping[str, Any], fields: tuple[str, ...], contents: list[AIContent]
) -> dict[str, Any] | None:
    """Append the reasoning (the first present field holding text); return the extras.

    A reasoning field holding something else than the reasoning read (a second, *different*
    text; not null, not empty) is kept in the extras; the same text under a second name is not
    counted twice.
    """
    reasoning = None
    for name in fields:
        value = delta[name]
        if value and type(value) is str:
            reasoning = value
            text = _new(TextReasoningContent)  # TextReasoningContent(value), see _new
            text.text = value
            text.raw = text.additional_properties = None
            contents.append(text)
            break
    if reasoning is not None and len(fields) == 1:
        return None
    extras: dict[str, Any] | None = None
    for name in fields:
        value = delta[name]
        if value is not None and value not in (reasoning, ""):
            if extras is None:
                extras = {}
            extras[name] = value
    return extras


def is_mapping(value: object) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(x, Mapping)`` goes through the ABC machinery (0.19 us); parsed JSON is a
    plain dict, so check that first (0.03 us)."""
    return type(value) is dict or isinstance(value, Mapping)
