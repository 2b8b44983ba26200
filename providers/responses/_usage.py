"""Reading a Responses-API ``usage`` object into ``UsageDetails``.

The names differ from chat completions (``input_tokens`` / ``output_tokens``, details under
``input_tokens_details`` and ``output_tokens_details``), the meaning does not. vLLM adds per-turn
lists and ``tool_output_tokens``, both servers ``cache_write_tokens``: every other integer is kept
in ``additional_counts`` under its dotted path, lists are not (they are per-turn breakdowns, still
in the raw response).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from providers.abstractions.contents import UsageDetails
from providers.abstractions.usage import collect_counts

__all__ = ["parse_responses_usage"]

_MAPPED = frozenset(
    {
        "input_tokens",
        "output_tokens",
        "total_tokens",
        "input_tokens_details.cached_tokens",
        "output_tokens_details.reasoning_tokens",
    }
)


def _int(value: Any) -> int | None:
    return value if type(value) is int else None


def _detail(details: Any, key: str) -> int | None:
    return _int(details.get(key)) if isinstance(details, Mapping) else None


def parse_responses_usage(usage: Mapping[str, Any]) -> UsageDetails | None:
    """``None`` when the object reports no token count at all (an in-progress response)."""
    prompt = _int(usage.get("input_tokens"))
    completion = _int(usage.get("output_tokens"))
    total = _int(usage.get("total_tokens"))
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
        cached_input_token_count=_detail(usage.get("input_tokens_details"), "cached_tokens"),
        reasoning_token_count=_detail(usage.get("output_tokens_details"), "reasoning_tokens"),
        additional_counts=extra or None,
    )
