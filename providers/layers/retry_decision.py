"""``RetryDecision``: what ``RetryPolicy.decide`` says after one failed attempt."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RetryDecision"]


@dataclass(frozen=True, slots=True)
class RetryDecision:
    """What to do after one failed attempt. ``refusal`` says why a retryable error was not."""

    retry: bool
    wait: float = 0.0
    reason: str | None = None
    refusal: str | None = None
