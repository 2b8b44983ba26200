"""Each entry's pipeline: built once, observed for /metrics, traced when asked."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from providers.replay.server import ReplayServer
from tests.unit.providers.gateway.backends import replying
from tests.unit.providers.gateway.serving import config_for, running_gateway

USER: list[Any] = [{"role": "user", "content": "hi"}]


async def test_serve_opentelemetry_gives_one_genai_span_per_request() -> None:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    async with ReplayServer(replying({"content": "Hi"})) as backend:
        config = config_for({"local": backend.base_url}, {"main": "local"}, opentelemetry=True)
        otel = {"tracer_provider": provider}
        async with running_gateway(config, otel_kwargs=otel) as url:
            client = openai.AsyncOpenAI(base_url=url, api_key="unused")
            await client.chat.completions.create(model="main", messages=USER)
            await client.chat.completions.create(model="main", messages=USER, stream=True)
            await client.close()
    finished = spans.get_finished_spans()
    assert [span.name for span in finished] == ["chat m-local", "chat m-local"]
    assert finished[0].attributes is not None
    assert finished[0].attributes["gen_ai.operation.name"] == "chat"


async def test_without_it_no_span_is_made() -> None:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    async with ReplayServer(replying({"content": "Hi"})) as backend:
        config = config_for({"local": backend.base_url}, {"main": "local"})
        async with running_gateway(config, otel_kwargs={"tracer_provider": provider}) as url:
            client = openai.AsyncOpenAI(base_url=url, api_key="unused")
            await client.chat.completions.create(model="main", messages=USER)
            await client.close()
    assert spans.get_finished_spans() == ()
