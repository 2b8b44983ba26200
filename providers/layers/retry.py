"""Retries that are safe for LLM calls: ``RetryPolicy`` (on tenacity) and ``RetryingChatClient``.

What is retried is decided by ``isinstance`` and fields, never by message text::

    retried   ProviderConnectionError                       no answer started: nothing to repeat
              ProviderTimeoutError with phase "connect"     the server has seen nothing
              StreamInterruptedError                        only while no output reached the caller
              ApiStatusError with status 408 409 429 500 502 503 504
                                                            (an in-stream ServerError without a
                                                            status counts as 500)
    never     ContextLengthExceededError                    whatever its status (old llama.cpp
                                                            sends it as 500): the same prompt
                                                            cannot fit next time either
              400 401 403 404 422 and every other status    the request or the key is wrong
              first_token / idle / total timeouts           the server did the work; a retry would
                                                            repeat the prefill (openai-python
                                                            retries read timeouts: ogx-client #279)
              InvalidResponseError, ConfigurationError, anything not a ProviderError (a
              cancellation included)

Defaults, next to openai-python 3.3's::

                       here                                 openai-python
    attempts           3 (max_attempts)                     3 (DEFAULT_MAX_RETRIES = 2)
    backoff            full jitter: U(0, min(8, 0.5·2^n))   min(8, 0.5·2^n) · (1 - U(0, 0.25))
                       (n = retries already made)           (INITIAL 0.5 s, MAX 8 s)
    Retry-After        retry-after-ms, then seconds, then   the same order, the same cap; above
                       HTTP-date; waited exactly up to      it not retried (since v2.52)
                       120 s; above it: fail at once
    total waiting      300 s (max_total_delay)              unbounded
    streams            until the first substantive update   not once the headers arrived
                       (or 64 updates into a tool call)

Full jitter rather than openai-python's 0-25 % shortening: several clients that failed together
(a server restart) should not come back together, and a local server has no other guard against
that herd. The 300 s total never cuts the default schedule (two honoured 120 s waits are 240 s);
it bounds what a larger ``max_attempts`` can add. Waiting out a model that is still loading is
``capabilities.readiness``'s job, with its own budget, not this layer's.
"""

from __future__ import annotations

import asyncio
import math
import random as _random
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final, TypeVar

from providers.abstractions.chat_client import ChatClient, ChatInput
from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate
from providers.abstractions.delegating import DelegatingChatClient
from providers.abstractions.errors import (
    ApiStatusError,
    ConfigurationError,
    ContextLengthExceededError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    ServerError,
    StreamInterruptedError,
)
from providers.abstractions.limits import DEFAULT_LIMITS, Limits
from providers.abstractions.logs import get_logger
from providers.abstractions.options import ChatOptions
from providers.abstractions.properties import RETRY_ATTEMPTS, set_property
from providers.abstractions.records import value_class
from providers.abstractions.update_runs import UpdateRuns, close_stream, runs_of, updates_of
from providers.layers.retry_decision import RetryDecision
from providers.layers.stream_head import RunsHead, read_head_runs, replayable

if TYPE_CHECKING:
    import tenacity

__all__ = [
    "DEFAULT_RETRY_STATUSES",
    "RETRY_ATTEMPTS",
    "RETRY_EVENT",
    "RetryDecision",
    "RetryPolicy",
    "RetryingChatClient",
]

DEFAULT_RETRY_STATUSES: Final = frozenset({408, 409, 429, 500, 502, 503, 504})

RETRY_EVENT: Final = "llm.request.retry"
"""The event logged before each retry, with ``attempt``, ``wait`` and ``reason``."""

Sleep = Callable[[float], Awaitable[None]]
_T = TypeVar("_T")


@value_class(frozen=True)
class RetryPolicy:
    """Which failures are retried and how long to wait; see the module docstring.

    ``max_attempts`` counts the first call. ``base_delay`` and ``max_delay`` shape the backoff
    window, ``max_retry_after`` caps what a server may ask for, ``max_total_delay`` caps the sum
    of all waits of one call (seconds).
    """

    max_attempts: int = 3
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 120.0
    max_total_delay: float = 300.0
    retry_statuses: frozenset[int] = DEFAULT_RETRY_STATUSES

    def __post_init__(self) -> None:
        if isinstance(self.max_attempts, bool) or not isinstance(self.max_attempts, int):
            raise ConfigurationError(f"max_attempts must be an int: {self.max_attempts!r}")
        if self.max_attempts < 1:
            raise ConfigurationError(f"max_attempts must be at least 1: {self.max_attempts}")
        for name in ("base_delay", "max_delay", "max_retry_after", "max_total_delay"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
                raise ConfigurationError(f"{name} must be a finite number >= 0: {value!r}")

    def retry_reason(self, error: BaseException) -> str | None:
        """Why ``error`` may be retried (a short tag for the log), or ``None`` if it may not."""
        if not isinstance(error, ProviderError) or isinstance(error, ContextLengthExceededError):
            return None
        if isinstance(error, ProviderTimeoutError):
            return "connect_timeout" if error.phase == "connect" else None
        if isinstance(error, ProviderConnectionError):
            return "connection_error"
        if isinstance(error, StreamInterruptedError):
            return "stream_interrupted"
        if isinstance(error, ApiStatusError):
            status = error.status
            if status is None and isinstance(error, ServerError):
                status = 500
            if status in self.retry_statuses:
                return f"http_{status}"
        return None

    def backoff(self, retries_made: int, fraction: float) -> float:
        """Full jitter: ``fraction`` (in [0, 1)) of ``min(max_delay, base_delay · 2^retries)``."""
        window = min(self.max_delay, self.base_delay * 2.0 ** min(retries_made, 64))
        return window * fraction

    def decide(
        self, error: BaseException, *, retries_made: int, waited: float, fraction: float
    ) -> RetryDecision:
        """The decision after a failure, given the retries made and the time already waited.

        A server's ``retry_after`` (> 0) is waited exactly; above ``max_retry_after``, or where
        it would take the waiting past ``max_total_delay``, the call fails at once. A computed
        backoff is shortened to what the total budget has left instead.
        """
        reason = self.retry_reason(error)
        if reason is None:
            return RetryDecision(False)
        budget_left = self.max_total_delay - waited
        asked = getattr(error, "retry_after", None)
        if isinstance(asked, int | float) and asked > 0:
            if asked > self.max_retry_after:
                return RetryDecision(
                    False,
                    reason=reason,
                    refusal=f"not retried: the server asked to wait {asked:g} s, more than "
                    f"the {self.max_retry_after:g} s this policy allows (max_retry_after)",
                )
            if asked > budget_left:
                return RetryDecision(
                    False,
                    reason=reason,
                    refusal=f"not retried: waiting the {asked:g} s the server asked for would "
                    f"exceed the {self.max_total_delay:g} s retry budget (max_total_delay)",
                )
            return RetryDecision(True, float(asked), f"{reason}, retry-after")
        if budget_left <= 0:
            return RetryDecision(
                False,
                reason=reason,
                refusal=f"not retried: the {self.max_total_delay:g} s retry budget is spent",
            )
        return RetryDecision(True, min(self.backoff(retries_made, fraction), budget_left), reason)

    def retrying(
        self,
        *,
        sleep: Sleep = asyncio.sleep,
        random: Callable[[], float] = _random.random,
        on_retry: Callable[[int, float, str, BaseException], None] | None = None,
    ) -> tenacity.AsyncRetrying:
        """A fresh tenacity ``AsyncRetrying`` for one call (it keeps that call's state).

        ``on_retry(attempt, wait, reason, error)`` runs before each sleep; the last error is
        re-raised as is, with a note when a retryable one was refused.
        """
        return _Run(self, random, on_retry).retrying(sleep)


class _Run:
    """One call's decisions, glued to tenacity: decided once per failure, in ``retry``."""

    __slots__ = ("_decision", "_on_retry", "_policy", "_random")

    def __init__(
        self,
        policy: RetryPolicy,
        random: Callable[[], float],
        on_retry: Callable[[int, float, str, BaseException], None] | None,
    ) -> None:
        self._policy = policy
        self._random = random
        self._on_retry = on_retry
        self._decision = RetryDecision(False)

    def retrying(self, sleep: Sleep) -> tenacity.AsyncRetrying:
        # deferred: -X importtime: tenacity, needed only once a call failed (issue 21)
        import tenacity

        return tenacity.AsyncRetrying(
            retry=self._retry,
            wait=self._wait,
            stop=tenacity.stop_after_attempt(self._policy.max_attempts),
            sleep=sleep,
            before_sleep=self._before_sleep,
            reraise=True,
        )

    def _retry(self, state: tenacity.RetryCallState) -> bool:
        outcome = state.outcome
        error = outcome.exception() if outcome is not None and outcome.failed else None
        if error is None:
            return False
        decision = self._policy.decide(
            error,
            retries_made=state.attempt_number - 1,
            waited=state.idle_for,
            fraction=self._random(),
        )
        self._decision = decision
        if decision.refusal is not None:
            error.add_note(decision.refusal)
        return decision.retry

    def _wait(self, state: tenacity.RetryCallState) -> float:
        return self._decision.wait

    def _before_sleep(self, state: tenacity.RetryCallState) -> None:
        outcome = state.outcome
        error = outcome.exception() if outcome is not None else None
        if self._on_retry is not None and error is not None:
            self._on_retry(
                state.attempt_number, self._decision.wait, self._decision.reason or "", error
            )


class RetryingChatClient(DelegatingChatClient):
    """Retries failed calls per ``policy``; a stream only until its output starts.

    A stream is retried only before the first substantive update (text, reasoning, a tool call)
    reaches the caller. Updates before it (the role-only chunk, keepalives, prefill progress)
    are held back and released with it, so a retry repeats none of them either; an error after
    it surfaces with the inner client's ``partial_response``, never retried. A tool call is
    substantive only once complete, so a long one would be held whole: past
    ``HELD_OUTPUT_LIMIT`` (64) updates of output, the head ends anyway
    (``providers.layers.stream_head.read_head``). What is held before the output starts is
    bounded by ``limits.max_held_updates`` (``Limits``): past it, ``ResponseTooLargeError``.

    The count of retries is ``additional_properties["retry_attempts"]`` on the response (on the
    first update of a stream) and ``error.retry_attempts`` on a ``ProviderError``.

    ``sleep`` and ``random`` (the jitter source) are injectable so tests need not wait.
    """

    def __init__(
        self,
        inner: ChatClient,
        policy: RetryPolicy | None = None,
        *,
        sleep: Sleep = asyncio.sleep,
        random: Callable[[], float] = _random.random,
        logger: Any = None,
        limits: Limits | None = None,
    ) -> None:
        super().__init__(inner)
        self.policy = policy or RetryPolicy()
        self._max_held = (limits or DEFAULT_LIMITS).max_held_updates
        self._sleep = sleep
        self._random = random
        self._log = logger if logger is not None else get_logger(__name__)

    def _retrying(self) -> tenacity.AsyncRetrying:
        return self.policy.retrying(sleep=self._sleep, random=self._random, on_retry=self._logged)

    def _logged(self, attempt: int, wait: float, reason: str, error: BaseException) -> None:
        self._log.warning(
            RETRY_EVENT,
            attempt=attempt,
            max_attempts=self.policy.max_attempts,
            wait=round(wait, 3),
            reason=reason,
            error=type(error).__name__,
            status=getattr(error, "status", None),
            backend=getattr(error, "backend", None),
        )

    async def _after_first_failure(
        self, failed: BaseException, attempt: Callable[[], Awaitable[_T]]
    ) -> tuple[_T, int]:
        """Attempts 2 onwards, after attempt 1 (made without tenacity) failed with ``failed``.

        Returns the result and the number of attempts made in all; a ``ProviderError`` that
        ends it carries ``retry_attempts``.
        """
        attempts = 0
        pending: BaseException | None = failed
        result: _T | None = None
        try:
            async for state in self._retrying():
                with state:
                    attempts += 1
                    if pending is not None:  # tenacity judges attempt 1's failure first
                        error, pending = pending, None
                        raise error
                    result = await attempt()
        except ProviderError as exc:
            exc.retry_attempts = attempts - 1
            raise
        assert result is not None  # (tenacity re-raises the last failure: reraise=True)
        return result, attempts

    async def get_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> ChatResponse:
        messages = replayable(messages)
        attempts = 1
        failed: BaseException | None = None
        response: ChatResponse | None = None
        try:  # attempt 1, without the tenacity machinery: nearly every call ends here
            response = await self.inner.get_response(messages, options)
        except BaseException as exc:
            failed = exc
        if failed is not None:

            async def again() -> ChatResponse:
                return await self.inner.get_response(messages, options)

            response, attempts = await self._after_first_failure(failed, again)
        assert response is not None
        response.additional_properties[RETRY_ATTEMPTS] = attempts - 1
        return response

    def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        return updates_of(self.get_streaming_runs(messages, options))

    async def get_streaming_runs(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> UpdateRuns:
        messages = replayable(messages)
        attempts = 1
        stream: UpdateRuns | None = None
        failed: BaseException | None = None
        try:  # attempt 1, without the tenacity machinery: nearly every stream ends here
            stream = runs_of(self.inner, messages, options)
            head, more = await read_head_runs(stream, self._max_held)
        except BaseException as exc:  # (no yield in the try: never the caller's GeneratorExit)
            failed = exc
        if failed is not None:

            async def again() -> tuple[UpdateRuns, RunsHead]:
                attempt = runs_of(self.inner, messages, options)
                return attempt, await read_head_runs(attempt, self._max_held)

            (stream, (head, more)), attempts = await self._after_first_failure(failed, again)
        retries = attempts - 1
        first = next((run[0] for run in head if run), None)
        if first is not None:
            set_property(first, RETRY_ATTEMPTS, retries)
        if not more:  # it ended within its head: give the connection back before replaying
            await close_stream(stream)
        try:
            for run in head:
                yield run
            head = []  # (not kept for the rest of the stream)
            if more:
                assert stream is not None
                async for run in stream:
                    yield run
        except ProviderError as exc:  # after the head: never retried, but counted
            exc.retry_attempts = retries
            raise
        finally:
            await close_stream(stream)
