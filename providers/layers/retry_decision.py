"""``RetryDecision``: what ``RetryPolicy.decide`` says after one failed attempt.

A record (``providers.abstractions.records``), not a dataclass: its class costs nothing to build
at import, and the first request, which nearly always succeeds, never makes one.
"""

from __future__ import annotations

from providers.abstractions.records import FrozenRecord

__all__ = ["RetryDecision"]


class RetryDecision(FrozenRecord):
    """What to do after one failed attempt. ``refusal`` says why a retryable error was not."""

    __slots__ = ("reason", "refusal", "retry", "wait")
    retry: bool
    wait: float
    reason: str | None
    refusal: str | None

    def __init__(
        self, retry: bool, wait: float = 0.0, reason: str | None = None, refusal: str | None = None
    ) -> None:
        setattr_ = object.__setattr__
        setattr_(self, "retry", retry)
        setattr_(self, "wait", wait)
        setattr_(self, "reason", reason)
        setattr_(self, "refusal", refusal)
