"""Streams through the gateway: what the OpenAI SDK reads, and what a departing client frees."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import openai
import structlog

from providers.replay.server import ReplayServer
from tests.unit.providers.gateway.backends import HangingBackend, replying
from tests.unit.providers.gateway.serving import config_for, running_gateway

USER: list[Any] = [{"role": "user", "content": "weather in Paris?"}]
WEATHER: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'


async def _stream(url: str, **extra: Any) -> tuple[str, str, list[Any], Any]:
    """Text, reasoning, tool calls and usage the SDK's stream gave."""
    client = openai.AsyncOpenAI(base_url=url, api_key="unused")
    text, reasoning, usage = "", "", None
    calls: list[Any] = []
    stream = await client.chat.completions.create(
        model="main", messages=USER, stream=True, stream_options={"include_usage": True}, **extra
    )
    async for chunk in stream:
        usage = chunk.usage or usage
        for choice in chunk.choices:
            text += choice.delta.content or ""
            fields = choice.delta.model_extra or {}
            reasoning += fields.get("reasoning_content") or ""
            assert fields.get("reasoning") == fields.get("reasoning_content")
            calls.extend(choice.delta.tool_calls or ())
    await client.close()
    return text, reasoning, calls, usage


async def test_think_tags_and_a_text_call_arrive_structured() -> None:
    deltas = [{"content": "<think>Paris is"}, {"content": " in France</think>"}, {"content": CALL}]
    async with ReplayServer(replying(*deltas)) as backend:
        config = config_for({"local": backend.base_url}, {"main": "local"})
        async with running_gateway(config) as url:
            text, reasoning, calls, usage = await _stream(url, tools=WEATHER)
    assert (text, reasoning) == ("", "Paris is in France")
    assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    assert calls[0].id
    assert usage.completion_tokens == 3


async def test_a_call_to_a_tool_not_offered_arrives_as_its_text() -> None:
    async with ReplayServer(replying({"content": CALL})) as backend:
        config = config_for({"local": backend.base_url}, {"main": "local"})
        async with running_gateway(config) as url:
            text, _, calls, _ = await _stream(url)
    assert calls == []
    assert "get_weather" in text


async def test_a_client_that_leaves_mid_stream_frees_the_backend_at_once() -> None:
    async with HangingBackend() as backend:
        config = config_for({"local": backend.base_url}, {"main": "local"})
        body = {"model": "main", "messages": USER, "stream": True}
        async with running_gateway(config) as url, httpx.AsyncClient(timeout=10) as http:
            async with http.stream("POST", f"{url}/chat/completions", json=body) as answer:
                async for line in answer.aiter_lines():
                    if "Hel" in line:
                        break
            # the backend holds its stream open for ever: only the gateway can end it
            await asyncio.wait_for(backend.closed.wait(), 5)


async def test_the_access_log_is_one_event_per_request_without_secrets() -> None:
    async with ReplayServer(replying({"content": "Hi"})) as backend:
        config = config_for(
            {"local": backend.base_url}, {"main": "local"}, access_log=True, api_keys_env="K"
        )
        async with running_gateway(config, env={"K": "sekrit"}) as url:
            client = openai.AsyncOpenAI(base_url=url, api_key="sekrit")
            with structlog.testing.capture_logs() as logs:
                await client.chat.completions.create(model="main", messages=USER)
            await client.close()
    events = [e for e in logs if e["event"] == "oaicompat.gateway.request"]
    assert len(events) == 1
    assert events[0]["status"] == 200
    assert events[0]["model"] == "main"
    assert events[0]["path"] == "/v1/chat/completions"
    assert "sekrit" not in repr(logs)


async def test_the_responses_api_reads_the_same_pipeline() -> None:
    deltas = [{"content": "<think>sunny</think>"}, {"content": "It is sunny."}]
    async with ReplayServer(replying(*deltas)) as backend:
        config = config_for({"local": backend.base_url}, {"main": "local"})
        async with running_gateway(config) as url:
            client = openai.AsyncOpenAI(base_url=url, api_key="unused")
            async with client.responses.stream(model="main", input="weather?") as stream:
                final = await stream.get_final_response()
            await client.close()
    assert final.output_text == "It is sunny."
    kinds = [item.type for item in final.output]
    assert kinds == ["reasoning", "message"]
