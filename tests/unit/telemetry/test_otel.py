"""``OpenTelemetryChatClient`` against the SDK's in-memory span exporter and metric reader."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from structlog.testing import capture_logs

from providers import (
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    RateLimitError,
)
from tests.unit.telemetry.helpers import FakeChatClient, serving, streaming, text, transcript

pytest.importorskip(
    "opentelemetry.sdk", reason="opentelemetry-sdk is not installed (the `otel` extra + SDK)"
)

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry.trace import SpanKind, StatusCode

from telemetry import OpenTelemetryChatClient


class Otel:
    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    def wrap(self, inner: Any, **kwargs: Any) -> OpenTelemetryChatClient:
        return OpenTelemetryChatClient(
            inner,
            tracer_provider=self.tracer_provider,
            meter_provider=self.meter_provider,
            **kwargs,
        )

    def finished(self) -> list[ReadableSpan]:
        return list(self.spans.get_finished_spans())

    def metrics(self) -> dict[str, list[Any]]:
        """Metric name → its data points."""
        data = self.reader.get_metrics_data()
        out: dict[str, list[Any]] = {}
        assert data is not None
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    out.setdefault(metric.name, []).extend(metric.data.data_points)
        return out


@pytest.fixture
def otel() -> Otel:
    return Otel()


async def test_a_streamed_llamacpp_request_is_one_span_with_genai_attributes(otel: Otel) -> None:
    served = [transcript("llamacpp", "captured--qwen25-plain--cache-turn2")]
    async with serving(served) as (inner, _):
        client = otel.wrap(inner)
        options = ChatOptions(max_output_tokens=6, temperature=0.0)
        updates = [
            u async for u in client.get_streaming_response([ChatMessage.user("Turn 2?")], options)
        ]
    assert ChatResponse.from_updates(updates).text == "Answer "
    (span,) = otel.finished()
    assert span.name == "chat test-model"
    assert span.kind == SpanKind.CLIENT
    attributes = dict(span.attributes or {})
    assert attributes["gen_ai.operation.name"] == "chat"
    assert attributes["gen_ai.provider.name"] == "llamacpp"
    assert attributes["gen_ai.system"] == "llamacpp"
    assert attributes["gen_ai.request.model"] == "test-model"
    assert attributes["gen_ai.request.max_tokens"] == 6
    assert attributes["gen_ai.request.temperature"] == 0.0
    assert attributes["gen_ai.response.model"] == "rig/tiny.gguf"
    assert attributes["gen_ai.response.id"] == "chatcmpl-2fu9k9Vmo1T8i5iXUzU3Ye6xEenkP4cd"
    assert attributes["gen_ai.response.finish_reasons"] == ("length",)
    assert attributes["gen_ai.usage.input_tokens"] == 195
    assert attributes["gen_ai.usage.output_tokens"] == 6
    assert attributes["gen_ai.usage.cache_read.input_tokens"] == 177
    assert attributes["oaicompat.timings.prompt_ms_server"] == 23.824
    ttft_attribute = attributes["oaicompat.timings.ttft_ms_client"]
    assert isinstance(ttft_attribute, float) and ttft_attribute > 0
    assert span.status.status_code == StatusCode.UNSET

    metrics = otel.metrics()
    usage = {p.attributes["gen_ai.token.type"]: p.sum for p in metrics["gen_ai.client.token.usage"]}
    assert usage == {"input": 195, "output": 6}
    (duration,) = metrics["gen_ai.client.operation.duration"]
    assert duration.count == 1 and duration.sum > 0
    assert duration.attributes["gen_ai.response.model"] == "rig/tiny.gguf"
    (ttft,) = metrics["gen_ai.client.operation.time_to_first_chunk"]
    assert ttft.count == 1 and ttft.sum > 0


async def test_a_non_streamed_request_has_no_time_to_first_chunk(otel: Otel) -> None:
    served = [transcript("vllm", "captured--plain--nonstream-text")]
    async with serving(served) as (inner, _):
        response = await otel.wrap(inner).get_response("weather?")
    assert response.text == "It is sunny in Paris."
    (span,) = otel.finished()
    assert dict(span.attributes or {})["gen_ai.provider.name"] == "vllm"
    assert "gen_ai.usage.cache_read.input_tokens" not in (span.attributes or {})
    metrics = otel.metrics()
    assert "gen_ai.client.operation.time_to_first_chunk" not in metrics
    assert len(metrics["gen_ai.client.operation.duration"]) == 1


async def test_a_failure_sets_error_type_and_status(otel: Otel) -> None:
    error = RateLimitError("busy: sk-SECRET", status=429)
    inner = FakeChatClient(stream=streaming([text("a")], error=error))
    client = otel.wrap(inner, backend="vllm")
    with pytest.raises(RateLimitError):
        async for _ in client.get_streaming_response("hi"):
            pass
    (span,) = otel.finished()
    assert span.status.status_code == StatusCode.ERROR
    assert dict(span.attributes or {})["error.type"] == "RateLimitError"
    assert "sk-SECRET" not in repr(span.to_json())
    (duration,) = otel.metrics()["gen_ai.client.operation.duration"]
    assert duration.attributes["error.type"] == "RateLimitError"


async def test_an_error_while_sending_is_not_recorded_with_its_message(otel: Otel) -> None:
    def respond(messages: object, options: object) -> ChatResponse:
        raise RateLimitError("busy: sk-SECRET", status=429)

    client = otel.wrap(FakeChatClient(respond=respond), backend="sglang")
    with pytest.raises(RateLimitError):
        await client.get_response("hi")
    (span,) = otel.finished()
    assert not span.events  # no exception event carrying the message
    assert span.status.status_code == StatusCode.ERROR
    assert "sk-SECRET" not in span.to_json()


async def test_the_span_is_current_while_the_request_is_sent_only(otel: Otel) -> None:
    from opentelemetry import trace

    seen: list[bool] = []

    def stream(messages: object, options: object) -> AsyncIterator[ChatResponseUpdate]:
        async def generate() -> AsyncIterator[ChatResponseUpdate]:
            seen.append(trace.get_current_span().is_recording())  # sending: inside the span
            yield text("a")
            yield text("b")

        return generate()

    client = otel.wrap(FakeChatClient(stream=stream), backend="vllm")
    async for _ in client.get_streaming_response("hi"):
        seen.append(trace.get_current_span().is_recording())  # the caller: never inside it
    assert seen == [True, False, False]
    assert len(otel.finished()) == 1


async def test_telemetry_failures_never_fail_the_request(otel: Otel) -> None:
    client = otel.wrap(FakeChatClient(stream=streaming([text("a")])), backend="vllm")
    client._duration = None  # type: ignore[assignment]  # break the reporting on purpose
    with capture_logs() as logs:
        updates = [u async for u in client.get_streaming_response("hi")]
    assert len(updates) == 1
    assert [e["event"] for e in logs] == ["oaicompat.telemetry.failed"]
