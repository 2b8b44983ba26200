"""The scenario matrix for plain openai-python over ``OaicompatTransport`` (httpx2 client).

``client.chat.completions.create`` (whole and streamed) against replayed traffic; what the
SDK's user gets, per scenario:

* text_call_in_content: llama.cpp's ``<tool_call>`` text arrives as a real ``tool_calls`` entry
  with an id, finish ``tool_calls``, no markup in ``content``.
* structured_call: the server's call arrives as sent (its id, name and arguments).
* reasoning_field: the reasoning is in ``message.reasoning_content`` (``delta.reasoning_content``
  streamed), the answer alone in ``content``.
* think_tags: ``<think>…</think>`` left in the content is moved to ``reasoning_content``.
* harmony: gpt-oss's channels left in the content become ``reasoning_content`` (analysis),
  ``content`` (the commentary preamble) and a ``tool_calls`` entry (the addressed call).
* unoffered_call: a call to a tool the request did not offer never arrives as ``tool_calls``:
  it is the ``content``, the call as the model wrote it, finish ``stop``.
* structured_output: ``chat.completions.parse`` with a pydantic model gives the parsed value;
  streamed, the content is the JSON document.
* mid_stream_error: the text before the break arrives, then ``openai.APIError`` (not a status
  error: the 200 was sent).
* per_request_header: ``extra_headers`` and ``default_headers`` (``X-Session-ID``, a tenant)
  reach the backend, ``extra_body`` keys its body; the SDK's ``Authorization``,
  ``X-Stainless-*`` and hop-by-hop headers do not.
* session_id: ``prompt_cache_key`` is the conversation's routing key, so two conversations
  opening with the same message are routed apart (``X-Session-ID`` under vllm-router).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import aclosing, asynccontextmanager
from typing import Any

import pytest
from pydantic import BaseModel

from providers import ChatClient
from tests.integrations.frameworks import require
from tests.integrations.openai_matrix import (
    CALL_IN_CONTENT,
    HARMONY_ARGUMENTS,
    QUESTION,
    MatrixServer,
    Reply,
    harmony_turn,
    matrix_pipeline,
    recorded,
)

openai = require("openai")
httpx2 = require("httpx2")

MESSAGES = [{"role": "user", "content": QUESTION}]
WEATHER: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
        },
    },
}
TIME = {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}
MODES = pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])


def sdk(pipeline: ChatClient, **client_options: Any) -> Any:
    from providers.integrations.openai_httpx2 import OaicompatHttpx2Transport

    transport = OaicompatHttpx2Transport(pipeline, owns_client=True)
    return openai.AsyncOpenAI(
        api_key="sk-the-sdks-own",
        base_url="http://oaicompat.invalid/v1",
        http_client=httpx2.AsyncClient(transport=transport),
        max_retries=0,
        **client_options,
    )


@asynccontextmanager
async def connected(
    turn: Reply, backend: str, **client_options: Any
) -> AsyncIterator[tuple[MatrixServer, Any]]:
    """The replay server answering with ``turn``, and an SDK client over the transport."""
    async with MatrixServer([turn]) as server:
        pipeline = matrix_pipeline(server, backend)
        async with sdk(pipeline, **client_options) as client:
            yield server, client


async def ask(
    turn: Reply, backend: str, stream: bool, **request: Any
) -> tuple[dict[str, Any], MatrixServer]:
    """One request; the assistant message the SDK's user reads (a stream's deltas merged)."""
    async with MatrixServer([turn]) as server, sdk(matrix_pipeline(server, backend)) as client:
        request = {"model": "any", "messages": MESSAGES, **request}
        if not stream:
            answer = await client.chat.completions.create(**request)
            choice = answer.choices[0]
            message = choice.message.model_dump(exclude_none=True)
            return {**message, "finish_reason": choice.finish_reason}, server
        chunks = await client.chat.completions.create(stream=True, **request)
        merged: dict[str, Any] = {"content": "", "reasoning_content": "", "tool_calls": []}
        async with aclosing(chunks) as events:
            async for chunk in events:
                for choice in chunk.choices:
                    delta = choice.delta.model_dump(exclude_none=True)
                    merged["content"] += delta.get("content") or ""
                    merged["reasoning_content"] += delta.get("reasoning_content") or ""
                    merged["tool_calls"] += delta.get("tool_calls") or []
                    merged["finish_reason"] = choice.finish_reason or merged.get("finish_reason")
        return {k: v for k, v in merged.items() if v}, server


def calls(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (c["function"]["name"], json.loads(c["function"]["arguments"]))
        for c in message.get("tool_calls") or ()
    ]


@MODES
async def test_text_call_in_content(stream: bool) -> None:
    message, _ = await ask(recorded(CALL_IN_CONTENT), "llamacpp", stream, tools=[WEATHER])
    assert calls(message) == [("get_weather", {"city": "Paris", "unit": "celsius"})]
    assert all(call["id"] for call in message["tool_calls"])
    assert "<tool_call>" not in (message.get("content") or "")
    assert message["finish_reason"] == "tool_calls"


@MODES
async def test_structured_call(stream: bool) -> None:
    turn = "stream-tool-call" if stream else "nonstream-tool-call"
    transcript = f"vllm/captured--qwen3-hermes--{turn}"
    message, _ = await ask(recorded(transcript), "vllm", stream, tools=[WEATHER])
    (call,) = message["tool_calls"]
    (sent,) = recorded_calls(transcript)
    assert (call["id"], call["function"]["name"]) == (sent["call_id"], "get_weather")
    assert json.loads(call["function"]["arguments"]) == sent["arguments"]
    assert message["finish_reason"] == "tool_calls"


def recorded_calls(transcript: str) -> list[dict[str, Any]]:
    from tests.integrations.exchanges import BY_ID

    calls: list[dict[str, Any]] = BY_ID[transcript].expected["tool_calls"]
    return calls


@MODES
async def test_reasoning_field(stream: bool) -> None:
    turn = "stream-reasoning" if stream else "nonstream-reasoning"
    message, _ = await ask(recorded(f"vllm/captured--qwen3-hermes--{turn}"), "vllm", stream)
    assert message["reasoning_content"].strip() == "The user asks for the weather in Paris."
    assert message["content"].strip() == "It is sunny in Paris."


@MODES
async def test_think_tags(stream: bool) -> None:
    turn = recorded("llamacpp/captured--qwen3-reasoning-none--stream-think-in-content")
    message, _ = await ask(turn, "llamacpp", stream)
    assert message["reasoning_content"].strip() == "The user asks for the weather in Paris."
    assert message["content"].strip() == "It is sunny in Paris."
    assert "<think>" not in message["content"]


@MODES
async def test_harmony(stream: bool) -> None:
    message, _ = await ask(harmony_turn(), "vllm", stream, tools=[WEATHER])
    assert message["reasoning_content"] == "Need the weather."
    assert message["content"] == "Let me check."
    assert calls(message) == [("get_weather", HARMONY_ARGUMENTS)]
    assert message["finish_reason"] == "tool_calls"


@MODES
async def test_unoffered_call(stream: bool) -> None:
    turn = "stream-tool-call" if stream else "nonstream-tool-call"
    message, _ = await ask(
        recorded(f"vllm/captured--qwen3-hermes--{turn}"), "vllm", stream, tools=[TIME]
    )
    assert "tool_calls" not in message
    assert message["finish_reason"] == "stop"
    written = message["content"]
    assert "get_weather" in written and "Paris" in written


class Thing(BaseModel):
    name: str
    n: int


@MODES
async def test_structured_output(stream: bool) -> None:
    turn = "stream-json-schema" if stream else "nonstream-json-schema"
    transcript = recorded(f"llamacpp/captured--qwen25-plain--{turn}")
    if not stream:
        async with connected(transcript, "llamacpp") as (server, client):
            parsed = await client.chat.completions.parse(
                model="any", messages=MESSAGES, response_format=Thing
            )
        value = parsed.choices[0].message.parsed
        assert isinstance(value, Thing) and value.n == 64
        assert server.bodies[0]["response_format"]["type"] == "json_schema"
        return
    schema = {
        "type": "json_schema",
        "json_schema": {"name": "thing", "schema": Thing.model_json_schema()},
    }
    message, server = await ask(transcript, "llamacpp", stream, response_format=schema)
    assert Thing.model_validate_json(message["content"]).n == 64
    assert server.bodies[0]["response_format"]["json_schema"]["name"] == "thing"


async def test_mid_stream_error() -> None:
    """Streamed only: a whole answer has no middle to break in."""
    async with connected(recorded("vllm/reconstructed--error-midstream"), "vllm") as (_, client):
        stream = await client.chat.completions.create(model="any", messages=MESSAGES, stream=True)
        text: list[str] = []
        with pytest.raises(openai.APIError) as caught:
            async for chunk in stream:
                text += [c.delta.content or "" for c in chunk.choices]
    assert "".join(text) == "Hello!"
    assert not isinstance(caught.value, openai.APIStatusError)
    assert "Internal server error" in caught.value.message


@MODES
async def test_per_request_header(stream: bool) -> None:
    turn = "stream-text" if stream else "nonstream-text"
    async with MatrixServer([recorded(f"vllm/captured--plain--{turn}")]) as server:
        pipeline = matrix_pipeline(server, "vllm")
        async with sdk(pipeline, default_headers={"X-Tenant": "acme"}) as client:
            answer = await client.chat.completions.create(
                model="any",
                messages=MESSAGES,
                stream=stream,
                extra_headers={"X-Session-ID": "thread-7", "traceparent": TRACEPARENT},
                extra_body={"chat_template_kwargs": {"enable_thinking": False}},
            )
            if stream:
                _ = [chunk async for chunk in answer]
    (got,) = server.headers
    assert got["x-tenant"] == "acme"
    assert got["x-session-id"] == "thread-7"
    assert got["traceparent"] == TRACEPARENT
    assert got["user-agent"].startswith("AsyncOpenAI/Python")
    assert "authorization" not in got  # the SDK's key; the configured backend has none
    assert not [name for name in got if name.startswith("x-stainless-")]
    assert got.get("accept") != "application/json" or not stream
    assert server.bodies[0]["chat_template_kwargs"] == {"enable_thinking": False}


TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


@MODES
async def test_session_id(stream: bool) -> None:
    turn = "stream-text" if stream else "nonstream-text"
    async with connected(recorded(f"vllm/captured--plain--{turn}"), "vllm") as (server, client):
        for thread in ("thread-a", "thread-b", None):
            extra = {"prompt_cache_key": thread} if thread else {}
            answer = await client.chat.completions.create(
                model="any", messages=MESSAGES, stream=stream, **extra
            )
            if stream:
                _ = [chunk async for chunk in answer]
    keys = [headers["x-session-id"] for headers in server.headers]
    assert keys[:2] == ["thread-a", "thread-b"]
    assert keys[2] not in keys[:2]  # no key: the hash of the conversation's opening
    assert [body.get("prompt_cache_key") for body in server.bodies] == [
        "thread-a",
        "thread-b",
        None,
    ]
