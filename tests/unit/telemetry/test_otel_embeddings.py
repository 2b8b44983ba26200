"""``OpenTelemetryEmbeddingGenerator`` against the SDK's in-memory exporter and reader."""

from __future__ import annotations

from typing import Any

import pytest

from providers.abstractions.errors import RateLimitError
from tests.unit.providers.layers.embedding_fakes import FakeEmbedder

pytest.importorskip(
    "opentelemetry.sdk", reason="opentelemetry-sdk is not installed (the `otel` extra + SDK)"
)

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from telemetry.otel_embeddings import OpenTelemetryEmbeddingGenerator


class Otel:
    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.reader = InMemoryMetricReader()
        self.layer_kwargs: dict[str, Any] = {
            "tracer_provider": tracer_provider,
            "meter_provider": MeterProvider(metric_readers=[self.reader]),
        }

    def metrics(self) -> dict[str, list[Any]]:
        data = self.reader.get_metrics_data()
        assert data is not None
        out: dict[str, list[Any]] = {}
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    out.setdefault(metric.name, []).extend(metric.data.data_points)
        return out


async def test_a_call_is_an_embeddings_span_with_the_genai_attributes() -> None:
    otel = Otel()
    layer = OpenTelemetryEmbeddingGenerator(FakeEmbedder(), backend="vllm", **otel.layer_kwargs)
    await layer.generate(["abc", "de"])
    (span,) = otel.spans.get_finished_spans()
    assert span.name == "embeddings fake-embed"
    assert span.kind is SpanKind.CLIENT
    attributes = dict(span.attributes or {})
    assert attributes["gen_ai.operation.name"] == "embeddings"
    assert attributes["gen_ai.provider.name"] == "vllm"
    assert attributes["gen_ai.request.model"] == "fake-embed"
    assert attributes["gen_ai.response.model"] == "fake-embed"
    assert attributes["gen_ai.usage.input_tokens"] == 5
    assert attributes["gen_ai.embeddings.dimension.count"] == 2
    metrics = otel.metrics()
    (duration,) = metrics["gen_ai.client.operation.duration"]
    assert duration.attributes["gen_ai.operation.name"] == "embeddings"
    (tokens,) = metrics["gen_ai.client.token.usage"]
    assert tokens.sum == 5
    assert tokens.attributes["gen_ai.token.type"] == "input"


async def test_a_failure_sets_the_error_type_only() -> None:
    otel = Otel()
    inner = FakeEmbedder(RateLimitError("slow down, key sk-1", status=429))
    layer = OpenTelemetryEmbeddingGenerator(inner, **otel.layer_kwargs)
    with pytest.raises(RateLimitError):
        await layer.generate(["x"])
    (span,) = otel.spans.get_finished_spans()
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == "RateLimitError"
    assert dict(span.attributes or {})["error.type"] == "RateLimitError"
    assert "sk-1" not in repr(span.to_json())
    assert "gen_ai.client.token.usage" not in otel.metrics()
