"""Reading a server's ``usage`` object into ``UsageDetails``.

Shapes differ (docs/wire.md §2.4): ``prompt_tokens_details`` may be absent, ``null`` or an
object; reasoning tokens sit in ``completion_tokens_details`` (vLLM, OpenAI) or at the top level
(SGLang, always present there, default 0). Every other integer is kept in ``additional_counts``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from providers.abstractions.contents import UsageDetails

__all__ = ["collect_counts", "parse_usage"]

_MAPPED = frozenset(
    {
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",
        "reasoning_tokens",
        "prompt_tokens_details.cached_tokens",
        "completion_tokens_details.reasoning_tokens",
    }
)


def _int(value: Any) -> int | None:
    return value if type(value) is int else None


def parse_usage(usage: Mapping[str, Any]) -> UsageDetails | None:
    """``None`` when the object reports no token count at all."""
    prompt = _int(usage.get("prompt_tokens"))
    completion = _int(usage.get("completion_tokens"))
    total = _int(usage.get("total_tokens"))
    prompt_details = usage.get("prompt_tokens_details")
    completion_details = usage.get("completion_tokens_details")
    cached = (
        _int(prompt_details.get("cached_tokens")) if isinstance(prompt_details, Mapping) else None
    )
    reasoning = (
        _int(completion_details.get("reasoning_tokens"))
        if isinstance(completion_details, Mapping)
        else None
    )
    if reasoning is None:
        reasoning = _int(usage.get("reasoning_tokens"))
    if prompt is None and completion is None and total is None:
        return None
    if total is None and prompt is not None and completion is not None:
        total = prompt + completion
    extra: dict[str, int] = {}
    collect_counts(usage, _MAPPED, "", extra)
    return UsageDetails(
        input_token_count=prompt,
        output_token_count=completion,
        total_token_count=total,
        cached_input_token_count=cached,
        reasoning_token_count=reasoning,
        additional_counts=extra or None,
    )


def collect_counts(
    obj: Mapping[str, Any], mapped: frozenset[str], prefix: str, out: dict[str, int]
) -> None:
    """Every integer count under ``obj`` not already in a named field (``mapped``), by dotted
    path: servers add their own (SGLang's ``reasoning_tokens``), and none is dropped."""
    for key, value in obj.items():
        path = prefix + key
        if type(value) is int:
            if path not in mapped:
                out[path] = value
        elif isinstance(value, Mapping):
            collect_counts(value, mapped, path + ".", out)
