"""Issue 32 item 12: ``Limits.max_json_depth`` bounds a tool call's arguments too.

Its documented scope is "any JSON the server sends (events, arguments, error bodies)". Before,
only events and bodies were measured: arguments nested past the limit parsed into a call an
agent would run, whose arguments break the next deep walk (``json.dumps``, a validator). Now
such a call is flagged, its arguments empty and its text kept, on every way a call arrives: a
server's structured call (chat, streamed and whole; the Responses API) and a recovered one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import aclosing
from typing import Any

import httpx
import pytest

from providers import ChatOptions, FunctionCallContent, ToolDeclaration, create_chat_client
from providers.abstractions.limits import Limits
from providers.responses import OpenAiCompatibleResponsesClient

DEPTH = 24
LIMITS = Limits(max_json_depth=DEPTH)
WEATHER = ToolDeclaration("get_weather", parameters={"type": "object", "properties": {}})
OFFERED = ChatOptions(tools=[WEATHER])


def arguments(depth: int) -> str:
    """An object whose one member nests ``depth - 1`` lists: ``depth`` levels in all."""
    return '{"city": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"


Shape = Callable[[str], tuple[bytes, str]]
"""How a server sends a call: raw arguments → (body, content type)."""


def completion(raw: str) -> tuple[bytes, str]:
    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": raw}}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    body = {"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}
    return json.dumps(body).encode(), "application/json"


def stream(raw: str) -> tuple[bytes, str]:
    half = len(raw) // 2
    pieces = [
        {"index": 0, "id": "c1", "function": {"name": "get_weather", "arguments": raw[:half]}},
        {"index": 0, "function": {"arguments": raw[half:]}},
    ]
    events = [{"choices": [{"index": 0, "delta": {"tool_calls": [p]}}]} for p in pieces]
    events.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    text = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
    return text.encode(), "text/event-stream"


def recovered(raw: str) -> tuple[bytes, str]:
    text = f'<tool_call>\n{{"name": "get_weather", "arguments": {raw}}}\n</tool_call>'
    message = {"role": "assistant", "content": text}
    body = {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
    return json.dumps(body).encode(), "application/json"


def http_for(body: bytes, kind: str) -> httpx.AsyncClient:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": kind}, content=body)

    return httpx.AsyncClient(transport=httpx.MockTransport(answer))


async def calls_of(body: bytes, kind: str, limits: Limits) -> list[FunctionCallContent]:
    client = create_chat_client(
        "http://llm.test/v1", "m", http_client=http_for(body, kind), limits=limits
    )
    async with aclosing(client):
        if kind == "text/event-stream":
            updates = [u async for u in client.get_streaming_response("hi", OFFERED)]
            contents: list[Any] = [c for u in updates for c in u.contents]
        else:
            contents = (await client.get_response("hi", OFFERED)).messages[-1].contents
    return [c for c in contents if isinstance(c, FunctionCallContent)]


@pytest.mark.parametrize("shape", [completion, stream], ids=["whole", "streamed"])
async def test_a_structured_calls_arguments_past_the_depth_limit_flag_it(shape: Shape) -> None:
    raw = arguments(DEPTH + 1)
    (call,) = await calls_of(*shape(raw), LIMITS)
    assert call.error is not None and "max_json_depth" in call.error
    assert call.arguments == {}
    assert call.raw_arguments == raw
    (within,) = await calls_of(*shape(arguments(DEPTH)), LIMITS)
    assert within.error is None and within.arguments != {}


async def test_a_recovered_calls_arguments_past_the_default_depth_flag_it() -> None:
    raw = arguments(Limits().max_json_depth + 1)
    (call,) = await calls_of(*recovered(raw), Limits())
    assert call.error is not None and "max_json_depth" in call.error
    assert call.arguments == {}


async def test_a_responses_call_past_the_depth_limit_is_flagged() -> None:
    raw = arguments(DEPTH + 1)
    item = {
        "type": "function_call",
        "id": "fc1",
        "call_id": "c1",
        "name": "get_weather",
        "arguments": raw,
        "status": "completed",
    }
    body = {"id": "r1", "object": "response", "status": "completed", "output": [item]}
    http = http_for(json.dumps(body).encode(), "application/json")
    async with OpenAiCompatibleResponsesClient(
        "http://llm.test/v1", "m", http_client=http, limits=LIMITS
    ) as client:
        response = await client.get_response("hi", OFFERED)
    (call,) = response.tool_calls
    assert call.error is not None and "max_json_depth" in call.error
    assert call.arguments == {}
