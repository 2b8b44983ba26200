"""``RetryingEmbeddingGenerator``: the chat retry policy's decisions around ``generate``."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from providers.abstractions.embedding_errors import (
    EmbeddingInputTooLargeError,
    EmbeddingResponseError,
    EmbeddingsUnavailableError,
)
from providers.abstractions.errors import (
    ProviderConnectionError,
    ProviderError,
    RateLimitError,
    ServerError,
)
from providers.abstractions.event_names import REQUEST_RETRY
from providers.layers.embedding_retry import RetryingEmbeddingGenerator
from providers.layers.retry import RetryPolicy
from tests.unit.providers.layers.embedding_fakes import FakeEmbedder


class Waits:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


async def test_a_transient_failure_is_retried_and_counted() -> None:
    inner = FakeEmbedder(ProviderConnectionError("down"), ServerError("boom", status=500))
    waits = Waits()
    layer = RetryingEmbeddingGenerator(inner, sleep=waits, random=lambda: 0.5)
    with capture_logs() as logs:
        result = await layer.generate(["ab", "c"])
    assert [e.vector[0] for e in result] == [2.0, 1.0]
    assert result.additional_properties == {"retry_attempts": 2}
    assert len(inner.calls) == 3
    assert inner.calls[0] == inner.calls[2] == ["ab", "c"]
    assert waits.waits == [0.25, 0.5]
    assert [log["event"] for log in logs] == [REQUEST_RETRY, REQUEST_RETRY]


async def test_a_generator_of_values_is_sent_whole_each_attempt() -> None:
    inner = FakeEmbedder(ProviderConnectionError("down"))
    layer = RetryingEmbeddingGenerator(inner, sleep=Waits())
    await layer.generate(text for text in ("a", "b"))  # type: ignore[arg-type]
    assert inner.calls == [["a", "b"], ["a", "b"]]


async def test_the_servers_retry_after_is_waited() -> None:
    inner = FakeEmbedder(RateLimitError("slow", status=429, retry_after=3.0))
    waits = Waits()
    await RetryingEmbeddingGenerator(inner, sleep=waits).generate(["x"])
    assert waits.waits == [3.0]


@pytest.mark.parametrize(
    "error",
    [
        EmbeddingInputTooLargeError("big", fix="f", status=500),
        EmbeddingsUnavailableError("no", fix="f", status=501),
        EmbeddingResponseError("bad", problem="wrong count"),
    ],
)
async def test_what_would_fail_again_is_not_retried(error: ProviderError) -> None:
    inner = FakeEmbedder(error)
    with pytest.raises(type(error)) as caught:
        await RetryingEmbeddingGenerator(inner, sleep=Waits()).generate(["x"])
    assert len(inner.calls) == 1
    assert caught.value.retry_attempts == 0


async def test_the_last_error_carries_the_retries_made() -> None:
    errors = [ServerError("boom", status=503) for _ in range(3)]
    inner = FakeEmbedder(*errors)
    layer = RetryingEmbeddingGenerator(inner, RetryPolicy(max_attempts=3), sleep=Waits())
    with pytest.raises(ServerError) as caught:
        await layer.generate(["x"])
    assert caught.value.retry_attempts == 2


async def test_closing_closes_the_inner_generator() -> None:
    inner = FakeEmbedder()
    async with RetryingEmbeddingGenerator(inner):
        pass
    assert inner.closed
