"""``RetryPolicy`` decisions and ``RetryingChatClient`` over a fake inner client (no sockets, no
real sleeping: the sleep and the jitter source are injected)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from structlog.testing import capture_logs

from providers import (
    ApiStatusError,
    AuthenticationError,
    BackendUnavailableError,
    ChatInput,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    ChatRole,
    ContextLengthExceededError,
    InvalidRequestError,
    InvalidResponseError,
    ModelNotFoundError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    ServerError,
    StreamInterruptedError,
)
from providers.abstractions.errors import ConfigurationError
from providers.builder import ChatClientBuilder
from providers.layers.retry import (
    DEFAULT_RETRY_STATUSES,
    RETRY_ATTEMPTS,
    RETRY_EVENT,
    RetryDecision,
    RetryingChatClient,
    RetryPolicy,
)
from providers.transport.error_classification import error_from_response
from tests.unit.scripted_client import (
    ScriptedClient,
    answer,
    collect,
    keepalive,
    role,
    text,
    unavailable,
)

# --- the fake inner client ---------------------------------------------------------------------


class Waits(list[float]):
    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def retrying(inner: Any, policy: RetryPolicy | None = None) -> tuple[RetryingChatClient, Waits]:
    waits = Waits()
    return RetryingChatClient(inner, policy, sleep=waits, random=lambda: 0.5), waits


# --- which errors are retried ----------------------------------------------------------------


def retried() -> Iterator[ProviderError]:
    yield ProviderConnectionError("refused")
    yield ProviderTimeoutError("connect", phase="connect")
    yield StreamInterruptedError("reset")
    for status in sorted(DEFAULT_RETRY_STATUSES):
        yield error_from_response(status, b'{"error": {"message": "x"}}')
    yield ServerError("in-stream error without a status")


def never_retried() -> Iterator[BaseException]:
    for status in (400, 401, 403, 404, 422, 413, 501, 505):
        yield error_from_response(status, b'{"error": {"message": "x"}}')
    yield ProviderTimeoutError("first token", phase="first_token")
    yield ProviderTimeoutError("idle", phase="idle")
    yield ProviderTimeoutError("total", phase="total")
    yield ContextLengthExceededError("too long", status=400)
    yield ContextLengthExceededError("too long, old llama.cpp", status=500)
    yield InvalidResponseError("not the protocol")
    yield ConfigurationError("misuse")
    yield ValueError("not ours")
    yield asyncio.CancelledError()
    yield KeyboardInterrupt()


@pytest.mark.parametrize("error", list(retried()), ids=repr)
def test_retried(error: ProviderError) -> None:
    assert RetryPolicy().retry_reason(error) is not None


@pytest.mark.parametrize("error", list(never_retried()), ids=repr)
def test_never_retried(error: BaseException) -> None:
    assert RetryPolicy().retry_reason(error) is None


def test_decisions_use_fields_not_message_text() -> None:
    policy = RetryPolicy()
    looks_retryable = InvalidRequestError("HTTP 503 Service Unavailable, retry", status=400)
    assert policy.retry_reason(looks_retryable) is None
    assert policy.retry_reason(ApiStatusError("", status=503)) == "http_503"
    assert policy.retry_reason(ServerError("", status=None)) == "http_500"
    assert policy.retry_reason(ApiStatusError("", status=None)) is None


def test_overflow_from_a_500_body_is_classified_and_not_retried() -> None:
    error = error_from_response(
        500,
        b'{"error":{"code":500,"message":"request (3030 tokens) exceeds the available context '
        b'size (2048 tokens), try increasing it","type":"server_error"}}',
    )
    assert isinstance(error, ContextLengthExceededError)
    assert RetryPolicy().retry_reason(error) is None


def test_retry_statuses_are_configurable() -> None:
    policy = RetryPolicy(retry_statuses=frozenset({503}))
    assert policy.retry_reason(ApiStatusError("", status=503)) == "http_503"
    assert policy.retry_reason(RateLimitError("", status=429)) is None


# --- waits -----------------------------------------------------------------------------------


def test_backoff_is_full_jitter_over_a_doubling_capped_window() -> None:
    policy = RetryPolicy()
    windows = [policy.backoff(n, 0.999999) for n in range(7)]
    assert windows == pytest.approx([0.5, 1, 2, 4, 8, 8, 8], rel=1e-5)
    assert [policy.backoff(n, 0.0) for n in range(7)] == [0.0] * 7
    assert policy.backoff(3, 0.5) == 2.0
    assert policy.backoff(10_000, 0.5) == 4.0  # no overflow for absurd retry counts


def test_defaults_match_the_documented_ones() -> None:
    policy = RetryPolicy()
    assert (
        policy.max_attempts,
        policy.base_delay,
        policy.max_delay,
        policy.max_retry_after,
        policy.max_total_delay,
    ) == (3, 0.5, 8.0, 120.0, 300.0)
    assert policy.retry_statuses == {408, 409, 429, 500, 502, 503, 504}


def test_retry_after_is_waited_exactly_without_jitter() -> None:
    error = RateLimitError("slow", status=429, retry_after=7.0)
    decision = RetryPolicy().decide(error, retries_made=0, waited=0.0, fraction=0.9)
    assert decision == RetryDecision(True, 7.0, "http_429, retry-after")


def test_retry_after_on_a_503_is_honoured_too() -> None:
    error = BackendUnavailableError("loading", status=503, retry_after=2.0)
    assert RetryPolicy().decide(error, retries_made=0, waited=0.0, fraction=0.1).wait == 2.0


def test_zero_retry_after_falls_back_to_backoff() -> None:
    error = RateLimitError("slow", status=429, retry_after=0.0)
    decision = RetryPolicy().decide(error, retries_made=1, waited=0.0, fraction=0.5)
    assert decision == RetryDecision(True, 0.5, "http_429")


def test_retry_after_longer_than_the_cap_is_refused_with_the_wait() -> None:
    error = RateLimitError("slow", status=429, retry_after=121.0)
    decision = RetryPolicy().decide(error, retries_made=0, waited=0.0, fraction=0.5)
    assert not decision.retry
    assert decision.refusal is not None
    assert "121 s" in decision.refusal and "120 s" in decision.refusal


def test_retry_after_beyond_the_total_budget_is_refused() -> None:
    policy = RetryPolicy(max_total_delay=10.0)
    error = RateLimitError("slow", status=429, retry_after=8.0)
    decision = policy.decide(error, retries_made=1, waited=5.0, fraction=0.5)
    assert not decision.retry
    assert decision.refusal is not None and "10 s retry budget" in decision.refusal


def test_backoff_is_shortened_to_what_the_total_budget_has_left() -> None:
    policy = RetryPolicy(max_total_delay=1.0, max_attempts=10)
    decision = policy.decide(unavailable(), retries_made=4, waited=0.75, fraction=0.9)
    assert decision == RetryDecision(True, 0.25, "http_503")
    spent = policy.decide(unavailable(), retries_made=5, waited=1.0, fraction=0.9)
    assert not spent.retry and spent.refusal is not None


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_attempts": 0},
        {"max_attempts": 1.5},
        {"max_attempts": True},
        {"base_delay": -1},
        {"max_delay": float("inf")},
        {"max_retry_after": float("nan")},
        {"max_total_delay": -0.1},
    ],
)
def test_invalid_policies_are_configuration_errors(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError):
        RetryPolicy(**kwargs)
    with pytest.raises(ValueError, match="must"):  # ConfigurationError is a ValueError too
        RetryPolicy(**kwargs)


async def test_run_can_drive_any_coroutine() -> None:
    waits = Waits()
    calls = 0

    async def flaky() -> str:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise ProviderConnectionError("refused")
        return "done"

    result = await RetryPolicy().run(flaky, sleep=waits, random=lambda: 0.5)
    assert (result, calls, waits) == ("done", 3, [0.25, 0.5])


async def test_run_raises_the_last_error_once_the_attempts_are_spent() -> None:
    waits = Waits()
    told: list[tuple[int, float, str]] = []
    errors = [ProviderConnectionError("refused"), ProviderConnectionError("reset")]

    async def failing() -> str:
        raise errors.pop(0)

    with pytest.raises(ProviderConnectionError, match="reset") as raised:
        await RetryPolicy(max_attempts=2).run(
            failing,
            sleep=waits,
            random=lambda: 0.5,
            on_retry=lambda n, wait, reason, error: told.append((n, wait, reason)),
        )
    assert raised.value.retry_attempts == 1
    assert told == [(1, 0.25, "connection_error")]
    assert waits == [0.25]


# --- RetryingChatClient, non-streamed --------------------------------------------------------


async def test_non_streamed_succeeds_after_retries_and_records_the_count() -> None:
    inner = ScriptedClient(unavailable(), ProviderConnectionError("reset"), answer("hi"))
    client, waits = retrying(inner)
    with capture_logs() as logs:
        response = await client.get_response("hello")
    assert response.text == "hi"
    assert response.additional_properties[RETRY_ATTEMPTS] == 2
    assert waits == [0.25, 0.5]
    assert [(e["event"], e["attempt"], e["wait"], e["reason"]) for e in logs] == [
        (RETRY_EVENT, 1, 0.25, "http_503"),
        (RETRY_EVENT, 2, 0.5, "connection_error"),
    ]
    assert logs[0]["log_level"] == "warning"
    assert logs[0]["error"] == "BackendUnavailableError"


async def test_first_try_success_records_zero_retries() -> None:
    client, waits = retrying(ScriptedClient(answer()))
    response = await client.get_response("hello")
    assert response.additional_properties[RETRY_ATTEMPTS] == 0
    assert waits == []


async def test_gives_up_after_max_attempts_with_the_last_error() -> None:
    last = unavailable()
    inner = ScriptedClient(unavailable(), unavailable(), last, answer())
    client, waits = retrying(inner)
    with pytest.raises(BackendUnavailableError) as caught:
        await client.get_response("hello")
    assert caught.value is last
    assert caught.value.retry_attempts == 2
    assert len(inner.calls) == 3
    assert waits == [0.25, 0.5]


@pytest.mark.parametrize(
    "error",
    [
        AuthenticationError("no", status=401),
        PermissionDeniedError("no", status=403),
        ModelNotFoundError("no", status=404),
        InvalidRequestError("no", status=422),
        ContextLengthExceededError("too long", status=400, prompt_tokens=3030),
        ProviderTimeoutError("idle", phase="idle"),
    ],
    ids=lambda e: type(e).__name__,
)
async def test_terminal_errors_fail_at_once(error: ProviderError) -> None:
    inner = ScriptedClient(error, answer())
    client, waits = retrying(inner)
    with capture_logs() as logs, pytest.raises(ProviderError) as caught:
        await client.get_response("hello")
    assert caught.value is error
    assert error.retry_attempts == 0
    assert len(inner.calls) == 1
    assert waits == []
    assert logs == []


async def test_refused_retry_after_adds_a_note() -> None:
    error = RateLimitError("HTTP 429", status=429, retry_after=600.0)
    client, waits = retrying(ScriptedClient(error, answer()))
    with pytest.raises(RateLimitError) as caught:
        await client.get_response("hello")
    assert waits == []
    assert "600 s" in caught.value.__notes__[0]


async def test_non_provider_errors_propagate_untouched() -> None:
    inner = ScriptedClient(KeyError("bug"), answer())
    client, _ = retrying(inner)
    with pytest.raises(KeyError):
        await client.get_response("hello")
    assert len(inner.calls) == 1


async def test_a_one_shot_message_iterable_is_replayed_whole() -> None:
    inner = ScriptedClient(unavailable(), answer())
    client, _ = retrying(inner)
    messages = (ChatMessage.user(m) for m in ["a", "b"])
    await client.get_response(messages)
    assert [[m.text for m in call] for call in inner.calls] == [["a", "b"], ["a", "b"]]


async def test_cancellation_during_a_wait_is_not_swallowed() -> None:
    async def cancelled_sleep(seconds: float) -> None:
        raise asyncio.CancelledError

    inner = ScriptedClient(unavailable(), answer())
    client = RetryingChatClient(inner, sleep=cancelled_sleep)
    with pytest.raises(asyncio.CancelledError):
        await client.get_response("hello")
    assert len(inner.calls) == 1


async def test_works_in_a_builder_pipeline() -> None:
    waits = Waits()
    inner = ScriptedClient(unavailable(), answer("built"))
    client = (
        ChatClientBuilder(inner)
        .use(lambda c: RetryingChatClient(c, sleep=waits, random=lambda: 0.5))
        .build()
    )
    assert (await client.get_response("x")).text == "built"
    assert waits == [0.25]


# --- RetryingChatClient, streamed --------------------------------------------------------------


async def test_stream_retried_before_output_without_repeating_held_updates() -> None:
    inner = ScriptedClient(
        [role(), keepalive(), unavailable()],
        [role(), keepalive(), StreamInterruptedError("reset")],
        [role(), keepalive(), text("Hel"), text("lo")],
    )
    client, waits = retrying(inner)
    seen, error = await collect(client.get_streaming_response("hello"))
    assert error is None
    assert len(seen) == 4  # one role, one keepalive, two texts: nothing from failed attempts
    assert [u.role for u in seen].count(ChatRole.ASSISTANT) == 1
    assert "".join(u.text for u in seen) == "Hello"
    assert seen[0].additional_properties == {RETRY_ATTEMPTS: 2}
    assert ChatResponse.from_updates(seen).additional_properties[RETRY_ATTEMPTS] == 2
    assert waits == [0.25, 0.5]
    assert inner.closed_streams == 3


async def test_held_updates_are_released_with_the_first_substantive_one() -> None:
    release_order: list[str] = []

    class Watching(ScriptedClient):
        async def get_streaming_response(
            self, messages: ChatInput, options: ChatOptions | None = None
        ) -> AsyncIterator[ChatResponseUpdate]:
            async for update in super().get_streaming_response(messages, options):
                release_order.append(f"inner:{update.text or 'empty'}")
                yield update

    client, _ = retrying(Watching([role(), keepalive(), text("a"), text("b")]))
    async for update in client.get_streaming_response("x"):
        release_order.append(f"caller:{update.text or 'empty'}")
    assert release_order == [
        "inner:empty",
        "inner:empty",
        "inner:a",
        "caller:empty",
        "caller:empty",
        "caller:a",
        "inner:b",
        "caller:b",
    ]


async def test_error_after_output_surfaces_with_partial_and_is_not_retried() -> None:
    inner = ScriptedClient(
        [role(), text("Hel"), StreamInterruptedError("reset")], [role(), text("Hello")]
    )
    client, waits = retrying(inner)
    seen, error = await collect(client.get_streaming_response("hello"))
    assert isinstance(error, StreamInterruptedError)
    assert "".join(u.text for u in seen) == "Hel"
    assert error.partial_response is not None and error.partial_response.text == "Hel"
    assert error.retry_attempts == 0
    assert len(inner.calls) == 1
    assert waits == []


async def test_error_after_output_reports_the_retries_made_before_it() -> None:
    inner = ScriptedClient([unavailable()], [text("a"), ServerError("boom", status=500)])
    client, waits = retrying(inner)
    _, error = await collect(client.get_streaming_response("hello"))
    assert isinstance(error, ServerError)
    assert error.retry_attempts == 1
    assert waits == [0.25]


async def test_stream_without_substantive_output_is_flushed_at_its_end() -> None:
    done = ChatResponseUpdate(finish_reason=None, role=ChatRole.ASSISTANT)
    client, _ = retrying(ScriptedClient([done, keepalive()]))
    seen, error = await collect(client.get_streaming_response("x"))
    assert error is None
    assert len(seen) == 2
    assert seen[0].additional_properties == {RETRY_ATTEMPTS: 0}


async def test_empty_stream_is_fine() -> None:
    client, _ = retrying(ScriptedClient([]))
    assert await collect(client.get_streaming_response("x")) == ([], None)


async def test_stream_gives_up_with_the_last_attempts_partial() -> None:
    inner = ScriptedClient([role(), unavailable()])
    client, waits = retrying(inner)
    seen, error = await collect(client.get_streaming_response("x"))
    assert isinstance(error, BackendUnavailableError)
    assert seen == []
    assert error.retry_attempts == 2
    assert waits == [0.25, 0.5]
    assert len(inner.calls) == 3


async def test_caller_stopping_early_closes_the_inner_stream() -> None:
    inner = ScriptedClient([role(), text("a"), text("b"), text("c")])
    client, _ = retrying(inner)
    stream = client.get_streaming_response("x")
    async for update in stream:
        if update.text == "a":
            break
    await stream.aclose()  # type: ignore[attr-defined]
    assert inner.closed_streams == 1


async def test_first_token_timeout_on_a_stream_is_not_retried() -> None:
    inner = ScriptedClient([role(), ProviderTimeoutError("no token", phase="first_token")])
    client, waits = retrying(inner)
    seen, error = await collect(client.get_streaming_response("x"))
    assert isinstance(error, ProviderTimeoutError)
    assert seen == []
    assert len(inner.calls) == 1
    assert waits == []
