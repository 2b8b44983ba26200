"""``RetryDecision``: what ``RetryPolicy.decide`` says after one failed attempt."""

from __future__ import annotations

from providers.abstractions.records import value_class

__all__ = ["RetryDecision"]


@value_class(frozen=True)
class RetryDecision:
    """What to do after one failed attempt. ``refusal`` says why a retryable error was not."""

    retry: bool
    wait: float = 0.0
    reason: str | None = None
    refusal: str | None = None
