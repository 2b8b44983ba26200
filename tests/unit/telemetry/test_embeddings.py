"""``TelemetryEmbeddingGenerator``: one event per call with counts, never texts; observers."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from providers.abstractions.embeddings import EmbeddingGenerationOptions
from providers.abstractions.errors import ServerError
from providers.abstractions.event_names import EMBEDDINGS_COMPLETED, EMBEDDINGS_FAILED
from providers.embeddings import OpenAiCompatibleEmbeddingGenerator
from providers.layers.embedding_cache import CachingEmbeddingGenerator
from providers.layers.embedding_retry import RetryingEmbeddingGenerator
from telemetry.embeddings import EmbeddingRecord, TelemetryEmbeddingGenerator, described
from tests.unit.providers.layers.embedding_fakes import FakeEmbedder


class Clock:
    def __init__(self) -> None:
        self.now = 10.0

    def __call__(self) -> float:
        self.now += 0.25
        return self.now


async def test_a_completed_call_is_one_event_with_its_counts() -> None:
    records: list[EmbeddingRecord] = []
    inner = CachingEmbeddingGenerator(RetryingEmbeddingGenerator(FakeEmbedder()))
    layer = TelemetryEmbeddingGenerator(
        inner, backend="vllm", observers=[records.append], clock=Clock()
    )
    await layer.generate(["secret text"])
    with capture_logs() as logs:
        await layer.generate(["secret text", "other"])
    assert logs == [
        {
            "event": EMBEDDINGS_COMPLETED,
            "log_level": "info",
            "backend": "vllm",
            "model": "fake-embed",
            "inputs": 2,
            "dimensions": 2,
            "input_tokens": 5,
            "duration_ms": 250.0,
            "retry_attempts": 0,
            "cache_hits": 1,
        }
    ]
    assert "secret" not in repr(logs)
    assert [record.inputs for record in records] == [1, 2]


async def test_a_failed_call_logs_its_class_and_status_and_raises() -> None:
    records: list[EmbeddingRecord] = []
    inner = FakeEmbedder(ServerError("boom", status=503))
    layer = TelemetryEmbeddingGenerator(inner, observers=[records.append])
    with capture_logs() as logs, pytest.raises(ServerError):
        await layer.generate(["x"], EmbeddingGenerationOptions(model_id="asked"))
    assert logs[0]["event"] == EMBEDDINGS_FAILED
    assert logs[0]["log_level"] == "warning"
    assert (logs[0]["error_type"], logs[0]["status"], logs[0]["model"]) == (
        "ServerError",
        503,
        "asked",
    )
    assert isinstance(records[0].error, ServerError)


def test_the_backend_and_model_are_read_through_the_layers() -> None:
    wire = OpenAiCompatibleEmbeddingGenerator("http://x.test", "bge", backend="llamacpp")
    stack = CachingEmbeddingGenerator(RetryingEmbeddingGenerator(wire))
    assert described(stack, None) == ("llamacpp", "bge")
    assert described(stack, "vllm") == ("vllm", "bge")
    assert described(FakeEmbedder(), None) == ("generic", "fake-embed")
