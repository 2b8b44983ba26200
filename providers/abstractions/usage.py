"""``UsageDetails``, read from a server's ``usage`` object and written back, for either family.

Chat completions and the Responses API report the same counts under different names
(``prompt_tokens`` / ``input_tokens``, details under ``prompt_tokens_details`` /
``input_tokens_details``), so one reader takes the names as data (``UsageNames``) instead of
each wire client keeping its own copy. Shapes differ by server too (docs/wire.md §2.4): a
details object may be absent, ``null`` or an object; reasoning tokens sit in the completion
details (vLLM, OpenAI) or at the top level (SGLang, always present there, default 0). Every other
integer is kept in ``additional_counts`` under its dotted path, so a server's own count is never
dropped; lists (vLLM's per-turn breakdowns) are not counts and stay in the raw payload.

``UsageDetails`` lives here, beside its reader, so that its own ``from_openai`` can call it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from providers.abstractions.records import value_class

__all__ = [
    "CHAT_USAGE",
    "RESPONSES_USAGE",
    "UsageDetails",
    "UsageNames",
    "collect_counts",
    "parse_responses_usage",
    "parse_usage",
    "usage_to_openai",
]


@value_class()
class UsageDetails:
    """Token counts for one request.

    Counts the server did not report stay ``None``: a missing ``cached_tokens`` (vLLM without
    ``--enable-prompt-tokens-details``) is unknown, not zero. ``additional_counts`` holds every
    other integer the server reported, keyed by its dotted path
    (``prompt_tokens_details.audio_tokens``).
    """

    input_token_count: int | None = None
    output_token_count: int | None = None
    total_token_count: int | None = None
    cached_input_token_count: int | None = None
    reasoning_token_count: int | None = None
    additional_counts: dict[str, int] | None = None

    def updated_with(self, newer: UsageDetails) -> UsageDetails:
        """Fields of ``newer`` win where it reports them.

        Servers report cumulative usage (vLLM's continuous usage repeats it on every chunk), so
        the latest report replaces the earlier one instead of being added to it.
        """
        counts = dict(self.additional_counts or {})
        counts.update(newer.additional_counts or {})
        return _combined(newer, self, _newer, counts)

    def __add__(self, other: UsageDetails) -> UsageDetails:
        """The usage of two separate requests together (an agent's tool loop): counts add up,
        and a count neither reports stays ``None``. Not ``updated_with``, which merges reports
        of one request."""
        counts = dict(self.additional_counts or {})
        for key, count in (other.additional_counts or {}).items():
            counts[key] = counts.get(key, 0) + count
        return _combined(self, other, _sum, counts)

    @classmethod
    def from_openai(cls, usage: Mapping[str, Any]) -> UsageDetails:
        """A chat-completions ``usage`` object, read as the wire client reads it (``parse_usage``);
        one that reports no token count at all gives empty details."""
        return parse_usage(usage) or cls()

    def to_openai(self) -> dict[str, Any]:
        """The chat-completions ``usage`` object; ``from_openai`` reads it back to equal details.

        Counts that are ``None`` are left out, not written as ``0``; ``additional_counts`` go
        back under their dotted paths.
        """
        return usage_to_openai(self, CHAT_USAGE)


def _newer(newer: int | None, older: int | None) -> int | None:
    return older if newer is None else newer


def _sum(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else a + b


def _combined(
    first: UsageDetails,
    second: UsageDetails,
    pick: Callable[[int | None, int | None], int | None],
    counts: dict[str, int],
) -> UsageDetails:
    """Each named count of ``first`` and ``second`` through ``pick``."""
    return UsageDetails(
        input_token_count=pick(first.input_token_count, second.input_token_count),
        output_token_count=pick(first.output_token_count, second.output_token_count),
        total_token_count=pick(first.total_token_count, second.total_token_count),
        cached_input_token_count=pick(
            first.cached_input_token_count, second.cached_input_token_count
        ),
        reasoning_token_count=pick(first.reasoning_token_count, second.reasoning_token_count),
        additional_counts=counts or None,
    )


@value_class(frozen=True, kw_only=True)
class UsageNames:
    """Where one endpoint family puts each count; a path is a tuple of keys. ``reasoning`` is
    tried in order, and the first integer found wins."""

    prompt: str
    completion: str
    total: str
    cached: tuple[str, str]
    reasoning: tuple[tuple[str, ...], ...]

    @property
    def mapped(self) -> frozenset[str]:
        """The dotted paths read into named fields, so ``additional_counts`` skips them."""
        paths = {self.prompt, self.completion, self.total, ".".join(self.cached)}
        return frozenset(paths | {".".join(path) for path in self.reasoning})


CHAT_USAGE = UsageNames(
    prompt="prompt_tokens",
    completion="completion_tokens",
    total="total_tokens",
    cached=("prompt_tokens_details", "cached_tokens"),
    reasoning=(("completion_tokens_details", "reasoning_tokens"), ("reasoning_tokens",)),
)

RESPONSES_USAGE = UsageNames(
    prompt="input_tokens",
    completion="output_tokens",
    total="total_tokens",
    cached=("input_tokens_details", "cached_tokens"),
    reasoning=(("output_tokens_details", "reasoning_tokens"),),
)


def _int(value: Any) -> int | None:
    return value if type(value) is int else None


def _at(usage: Mapping[str, Any], path: tuple[str, ...]) -> int | None:
    value: Any = usage
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return _int(value)


def parse_usage(usage: Mapping[str, Any], names: UsageNames = CHAT_USAGE) -> UsageDetails | None:
    """``None`` when the object reports no token count at all (an in-progress response)."""
    prompt = _int(usage.get(names.prompt))
    completion = _int(usage.get(names.completion))
    total = _int(usage.get(names.total))
    if prompt is None and completion is None and total is None:
        return None
    if total is None and prompt is not None and completion is not None:
        total = prompt + completion
    reasoning = None
    for path in names.reasoning:
        reasoning = _at(usage, path)
        if reasoning is not None:
            break
    extra: dict[str, int] = {}
    collect_counts(usage, names.mapped, "", extra)
    return UsageDetails(
        input_token_count=prompt,
        output_token_count=completion,
        total_token_count=total,
        cached_input_token_count=_at(usage, names.cached),
        reasoning_token_count=reasoning,
        additional_counts=extra or None,
    )


def parse_responses_usage(usage: Mapping[str, Any]) -> UsageDetails | None:
    """A Responses-API ``usage`` object (``input_tokens``, ``output_tokens``, …)."""
    return parse_usage(usage, RESPONSES_USAGE)


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


def usage_to_openai(details: UsageDetails, names: UsageNames) -> dict[str, Any]:
    """``details`` under ``names``, nested where the names are paths: ``parse_usage`` inverted.

    Reasoning goes under the first of ``names.reasoning`` (OpenAI's place). An additional count
    whose path runs through a key already holding a number is left out: no parsed usage has one.
    """
    usage: dict[str, Any] = {}
    named: tuple[tuple[tuple[str, ...], int | None], ...] = (
        ((names.prompt,), details.input_token_count),
        ((names.completion,), details.output_token_count),
        ((names.total,), details.total_token_count),
        (names.cached, details.cached_input_token_count),
        (names.reasoning[0], details.reasoning_token_count),
    )
    for path, count in named:
        if count is not None:
            _put(usage, path, count)
    for dotted, count in (details.additional_counts or {}).items():
        _put(usage, tuple(dotted.split(".")), count)
    return usage


def _put(usage: dict[str, Any], path: tuple[str, ...], count: int) -> None:
    target = usage
    for key in path[:-1]:
        inner = target.setdefault(key, {})
        if not isinstance(inner, dict):
            return
        target = inner
    target.setdefault(path[-1], count)
